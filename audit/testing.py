"""pytest plugin: privacy assertions, seeded fixtures and options.

Registered through the ``pytest11`` entry point, so installing privaudit is enough.

Assertions
----------
:func:`assert_private`, :func:`assert_unbiased` and
:func:`assert_reconstruction_bounded` run an audit and raise
:class:`PrivacyAssertionError` (an ``AssertionError``) with a message that states
the certified bound, the claim, n, the confidence and the seed.

False failures
--------------
An assertion fails only when the audit's *lower* confidence bound exceeds the
claim (or a bias test rejects). With the default confidence 0.999 a correct
mechanism therefore fails an assertion with probability at most 1 − 0.999 = 1e−3
(the Clopper–Pearson bounds are exact-coverage-conservative, and thresholds are
chosen on a separate split). ``benchmarks/bench_plugin.py`` measures the rate.

Options
-------
``--privacy-seed S``
    Root seed of every ``privacy_rng`` and of every assertion that is not given
    an ``rng`` (default 0). It is printed in the session header so that any
    failure can be reproduced.
``--privacy-samples X``
    Multiplies the sample size of every assertion (default 1.0).

Marker
------
``@pytest.mark.privacy(epsilon=..., delta=..., n=..., confidence=...)`` sets the
defaults of the assertions made inside one test.

Fixtures
--------
``privacy_rng``
    A ``numpy.random.Generator`` derived from the root seed and the test's node id,
    so that tests draw independent, reproducible streams whatever their order.
"""

from __future__ import annotations

import contextvars
import dataclasses
import hashlib
from typing import Any

import numpy as np
import pytest

DEFAULT_CONFIDENCE = 0.999
DEFAULT_SAMPLES = {"private": 200_000, "unbiased": 100_000, "reconstruction": 20_000}


@dataclasses.dataclass(frozen=True)
class _Context:
    """What the running test contributes to assertion defaults."""

    seed: int = 0
    scale: float = 1.0
    nodeid: str = ""
    marker: dict = dataclasses.field(default_factory=dict)


_CONTEXT: contextvars.ContextVar[_Context] = contextvars.ContextVar("privaudit_context", default=_Context())


class PrivacyAssertionError(AssertionError):
    """A privacy assertion failed: the audit found evidence against the claim."""


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("privaudit", "privacy assertions (privaudit)")
    group.addoption("--privacy-seed", type=int, default=0, help="root seed of privacy assertions and privacy_rng (default 0)")
    group.addoption(
        "--privacy-samples", type=float, default=1.0,
        help="multiply the sample size of every privacy assertion by this factor (default 1.0)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "privacy(epsilon=None, delta=None, n=None, confidence=None): per-test privacy budget and audit size"
    )


def pytest_report_header(config: pytest.Config) -> str:
    return (
        f"privaudit: --privacy-seed={config.getoption('--privacy-seed')} "
        f"--privacy-samples={config.getoption('--privacy-samples')}"
    )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item):
    marker = item.get_closest_marker("privacy")
    token = _CONTEXT.set(_Context(
        seed=item.config.getoption("--privacy-seed"),
        scale=item.config.getoption("--privacy-samples"),
        nodeid=item.nodeid,
        marker=dict(marker.kwargs) if marker else {},
    ))
    try:
        return (yield)
    finally:
        _CONTEXT.reset(token)


def node_seed(root: int, nodeid: str) -> np.random.SeedSequence:
    """SeedSequence of one test: the root seed plus a stable hash of its node id."""
    digest = int.from_bytes(hashlib.sha256(nodeid.encode()).digest()[:8], "little")
    return np.random.SeedSequence([root, digest])


@pytest.fixture
def privacy_rng(request: pytest.FixtureRequest) -> np.random.Generator:
    """A Generator seeded from ``--privacy-seed`` and the test's node id."""
    return np.random.default_rng(node_seed(request.config.getoption("--privacy-seed"), request.node.nodeid))


def _setting(name: str, given: Any, default: Any) -> Any:
    """An explicit argument, else the test's ``privacy`` marker, else the default."""
    if given is not None:
        return given
    return _CONTEXT.get().marker.get(name, default)


def _samples(given: int | None, kind: str) -> int:
    ctx = _CONTEXT.get()
    n = _setting("n", given, DEFAULT_SAMPLES[kind])
    return max(1, int(round(n * ctx.scale)))


def _rng(rng) -> tuple[Any, str]:
    """The generator to use and how to reproduce it, for the failure message."""
    if rng is not None:
        return rng, f"rng={rng!r}"
    ctx = _CONTEXT.get()
    return np.random.default_rng(node_seed(ctx.seed, ctx.nodeid)), f"--privacy-seed={ctx.seed} (test {ctx.nodeid or '?'})"


def assert_private(
    mechanism, x, x_prime, *, epsilon: float | None = None, delta: float | None = None, n: int | None = None,
    confidence: float | None = None, attacker=None, rng=None,
):
    """Assert that no attack certifies more privacy loss than (ε, δ) between ``x`` and ``x_prime``.

    (ε, δ) default to ``mechanism.claim``; ``n`` is the number of releases per
    hypothesis. Returns the :class:`~privaudit.audit.tradeoff.TradeoffAudit` on success.
    """
    from privaudit.audit.tradeoff import audit_tradeoff
    from privaudit.mechanisms import PrivacyClaim

    claim = mechanism.claim
    epsilon = _setting("epsilon", epsilon, claim.epsilon)
    delta = _setting("delta", delta, claim.delta)
    n = _samples(n, "private")
    confidence = _setting("confidence", confidence, DEFAULT_CONFIDENCE)
    generator, how = _rng(rng)
    stated = PrivacyClaim(epsilon, delta, claim.adjacency)
    result = audit_tradeoff(mechanism, x, x_prime, n=n, attacker=attacker, confidence=confidence,
                            rng=generator, claim=stated)
    if result.verdict == "violation":
        raise PrivacyAssertionError(
            f"privacy violation: certified epsilon >= {result.epsilon_lb:.4g} at {confidence:.4%} confidence, "
            f"but the claim is (epsilon={epsilon:g}, delta={delta:g}) under {claim.adjacency!r}; "
            f"attack {getattr(result, 'attacker', attacker)!r}, n={n} releases per hypothesis, seed {how}."
            + (f" Exact epsilon of the mechanism: {result.epsilon_exact:.4g}." if result.epsilon_exact is not None else "")
        )
    return result


def assert_unbiased(sampler, target, *, n: int | None = None, confidence: float | None = None, rng=None, name: str = "estimator"):
    """Assert that ``sampler(n, rng)`` draws have expectation ``target``. Returns the BiasAudit."""
    from privaudit.audit.bias import audit_bias

    n = _samples(n, "unbiased")
    confidence = _setting("confidence", confidence, DEFAULT_CONFIDENCE)
    generator, how = _rng(rng)
    result = audit_bias(sampler, target, n=n, confidence=confidence, rng=generator, name=name)
    if result.verdict == "fail":
        worst = int(np.argmax(np.abs(np.asarray(result.bias, dtype=float))))
        lo, hi = np.asarray(result.bias_ci, dtype=float).reshape(-1, 2)[worst]
        raise PrivacyAssertionError(
            f"{name} is biased: {result.test} p-value {result.p_value:.3g} at confidence {confidence:.4%}; "
            f"largest bias {result.bias[worst]:.4g} at coordinate {worst} (simultaneous CI [{lo:.4g}, {hi:.4g}]), "
            f"relative bias {result.relative_bias:.3g}; n={n}, seed {how}."
        )
    return result


def assert_reconstruction_bounded(mechanism, attacker=None, x=None, prior=None, *, n: int | None = None, rng=None):
    """Assert that no attacker reconstructs below the bounds that apply to it. Returns the ReconstructionAudit."""
    from privaudit.audit.reconstruction import audit_reconstruction

    n = _samples(n, "reconstruction")
    generator, how = _rng(rng)
    result = audit_reconstruction(mechanism, attacker, x=x, prior=prior, n=n, rng=generator)
    if result.verdict == "violation":
        raise PrivacyAssertionError(
            f"reconstruction below its bound: MSE {result.mse:.4g} (CI {result.mse_ci}) against "
            f"CRB {result.crb!r} / van Trees {result.van_trees!r}; ratios {result.ratio}; "
            f"attacker {getattr(result, 'attacker', attacker)!r}, n={n}, seed {how}."
        )
    return result

