"""Exact-reachability checks shared by the float-safety tests of learners and mechanisms (issue 14, Mironov 2012).

A release is float-safe when the set of doubles it can output does not depend on the input.
Each predicate below is exact for the sampler it describes:

* :func:`lattice_reachable` — y = γ·fl(K + u) for an integer K and a 53-bit uniform u: the doubles
  the dithered lattice release of :mod:`privaudit.mechanisms.lattice` can output. The predicate
  never looks at the input, so an output of x′ is reachable under x whenever it lies within the
  noise support of x (:func:`assert_float_safe`).
* :func:`one_sided_counts` — the textbook release ``fl(mean + noise)`` with numpy's normal or
  Laplace sampler, inverted by :mod:`privaudit.attacks.reachability`: the number of outputs
  reachable under one mean and not the other. For a textbook release of x′ every output is
  reachable under x′ and some are not under x: each of those proves the input was x′ (ε = ∞).
  numpy's normal is inverted on its ziggurat fast path only: an output whose draw took the
  slow path (0.7 % per coordinate) is judged unreachable under both means, so the tests ask
  for a one-sided fraction far above that rate (> 10 %) rather than for zero the other way.
  numpy's Laplace inversion is complete: there the other count must be 0.
"""

from __future__ import annotations

import numpy as np

from privaudit.attacks.reachability import NumpyLaplaceReachability, NumpyNormalReachability

SAMPLERS = {"normal": NumpyNormalReachability, "laplace": NumpyLaplaceReachability}


def lattice_reachable(y, step: float) -> np.ndarray:
    """Whether each y equals γ·fl(K + u) for an integer K and a 53-bit uniform u (a set independent of x)."""
    z = np.asarray(y, dtype=float) / step
    frac = z - np.floor(z)  # exact
    on_grid = (frac * 2.0**53) == np.rint(frac * 2.0**53)
    return (np.abs(z) >= 1) | on_grid  # any double of magnitude ≥ γ is γ·fl(K + u) for some K, u


def assert_float_safe(outputs, means, step: float, scale: float, support: float) -> None:
    """Every output lies in the input-independent lattice set and within ``support`` scales of every mean."""
    y = np.asarray(outputs, dtype=float)
    assert np.all(np.isfinite(y)) and np.all(lattice_reachable(y, step))
    for m in means:
        assert np.all(np.abs(y - np.asarray(m, dtype=float)) / scale < support)


def one_sided_counts(outputs, mean, mean_prime, scale: float, sampler: str = "normal") -> tuple[int, int]:
    """(# outputs reachable as fl(mean′ + noise) but not fl(mean + noise), # the other way round), per row."""
    att = SAMPLERS[sampler](scale=scale).fit(x=np.ravel(mean), x_prime=np.ravel(mean_prime))
    o = np.asarray(outputs, dtype=float).reshape(len(outputs), -1)
    r, rp = att.reachable(o, np.ravel(mean)), att.reachable(o, np.ravel(mean_prime))
    return int(np.sum(rp & ~r)), int(np.sum(r & ~rp))


def capture(monkeypatch, module, name: str, replacement=None) -> list:
    """Record every output of ``module.name`` (optionally replaced by ``replacement``) into the returned list."""
    real = replacement or getattr(module, name)
    seen: list = []

    def spy(*args, **kwargs):
        out = real(*args, **kwargs)
        seen.append(np.array(out, copy=True))
        return out

    monkeypatch.setattr(module, name, spy)
    return seen


def textbook_gaussian(values, sigma, rng=None):
    """The previous, leaky release fl(values + σ·z), with the same normals as float_safe_gaussian."""
    values = np.asarray(values, dtype=float)
    return values + sigma * np.random.default_rng(rng).standard_normal(values.shape)
