"""Catalogue of bias checks behind the ``bias`` preset (issue 8).

Every check is a function returning a :class:`~privaudit.audit.bias.BiasAudit`, an
:class:`~privaudit.audit.results.ExperimentResult` or a list of them.
:func:`run_bias_checks` runs them all.

Sample sizes
------------
An estimator claimed unbiased is audited at a number of draws large enough to
detect a relative bias of 1 % (of the target's ℓ₂ norm, in the worst direction)
with power 0.9: a pilot audit estimates the covariance, ``n_required`` follows
(see :mod:`privaudit.audit.bias`), and the final audit runs on fresh draws with
n = max(1.15·n_required, pilot), capped at ``cap·n_scale``. A capped audit says so in
its note and its ``min_detectable_relative_bias`` then exceeds 1 %.

Known-biased estimators are negative controls (``expect="biased"``): their verdict
is "pass" when the audit detects the bias.

Seeds: each check's seed is derived from ``random_state`` and a CRC of the check's
name, so checks are reproducible one by one and adding a check moves no other.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable

import numpy as np

from privaudit.audit.bias import BiasAudit, audit_bias
from privaudit.audit.results import ExperimentResult
from privaudit.mechanisms.modulated import ModulatedMechanism
from privaudit.mechanisms.validation import check_positive

#: Relative bias the unbiased claims are powered for, and the power.
RELATIVE_RESOLUTION = 0.01
POWER = 0.9
CONFIDENCE = 0.95
#: Head-room on the pilot's n_required (its covariance estimate has sampling error).
SAFETY = 1.15


class _Budget:
    """Sample-size policy shared by the checks of one run."""

    def __init__(self, n_scale: float, random_state: int, small: bool) -> None:
        self.n_scale = check_positive("n_scale", n_scale)
        self.random_state = int(random_state)
        self.small = bool(small)

    def seed(self, name: str) -> int:
        ss = np.random.SeedSequence([self.random_state, zlib.crc32(name.encode())])
        return int(ss.generate_state(1, dtype=np.uint64)[0] >> 1)

    def cap(self, full: int, small: int) -> int:
        return max(200, int((small if self.small else full) * self.n_scale))


def _chunk(per_draw: int) -> int:
    """Draws per chunk so that one chunk holds ~2·10⁵ floats of intermediate data."""
    return int(max(64, min(20_000, 200_000 // max(per_draw, 1))))


def powered_audit(
    sampler: Callable, target, *, name: str, budget: _Budget, cap: int, small_cap: int, per_draw: int = 1,
    pilot: int = 2000, note: str = "",
) -> BiasAudit:
    """Audit an estimator claimed unbiased at the n that detects a 1 % relative bias with power 0.9.

    A pilot audit (``pilot`` draws, its own seed) gives ``n_required``; the final audit
    draws n = max(pilot, n_required) capped at ``budget.cap(cap, small_cap)``.
    """
    seed = budget.seed(name)
    chunk = _chunk(per_draw)
    pilot = min(pilot, budget.cap(cap, small_cap))
    pre = audit_bias(sampler, target, n=pilot, rng=seed + 1, chunk_size=chunk, name=name, power=POWER,
                     confidence=CONFIDENCE, relative_resolution=RELATIVE_RESOLUTION)
    # 15 % head-room: the pilot's covariance is itself an estimate.
    want = int(math.ceil(SAFETY * pre.n_required)) if pre.n_required is not None else pilot
    limit = budget.cap(cap, small_cap)
    n = int(min(max(want, pilot), limit))
    sized = (
        f"n = {n} draws: a relative bias of {RELATIVE_RESOLUTION:.0%} needs n = {want} for power {POWER} "
        f"(pilot of {pilot} draws)" + ("; capped, so the audit is under-powered for 1 %" if want > limit else "")
    )
    return audit_bias(sampler, target, n=n, rng=seed, chunk_size=chunk, name=name, power=POWER,
                      confidence=CONFIDENCE, relative_resolution=RELATIVE_RESOLUTION,
                      note=(note + " " if note else "") + sized)


def negative_control(sampler: Callable, target, *, name: str, budget: _Budget, n: int, small_n: int,
                     per_draw: int = 1, note: str = "") -> BiasAudit:
    """Audit a known-biased estimator (``expect="biased"``): it must be flagged."""
    return audit_bias(sampler, target, n=budget.cap(n, small_n), rng=budget.seed(name), chunk_size=_chunk(per_draw),
                      name=name, expect="biased", power=POWER, confidence=CONFIDENCE,
                      relative_resolution=RELATIVE_RESOLUTION, note=note)


# =============================================================================================
# Seed 000: modulated regression
# =============================================================================================
class ModulatedSetup:
    """A fixed regression dataset of K clients and the server's per-round statistics.

    One draw of an estimator is one round: every client releases
    g̃_i = (1 − α)x_i + (λ/m) Σ_j cos(ω⟨x_i, v_j⟩ + φ_ij) v_j + ξ_i (seed 000, §3.1, §7),
    and the server forms (§3.1.4, §8)

        Σ_x = (Σ_g − C)/(1 − α)²,   Σ_g = (1/K) Σ_i g̃_i g̃_iᵀ,
        Z = (1/(K(1 − α))) Σ_i y_i g̃_i,   G = Σ_x β − Z,

    with C the derived correction (λ²/(2m²))P_V + σ²I, the seed's printed
    (λ²/(2m))P_V + σ²I, or none (C = 0, no debiasing at all: Σ_g β − (1/K)Σ y_i g̃_i).
    The dataset is fixed, so the targets are the empirical (1/K)XᵀX, (1/K)Xᵀy and
    ∇L(β) = (1/K)Xᵀ(Xβ − y).
    """

    def __init__(self, *, n_vectors: int, dim: int = 4, clients: int = 40, alpha: float = 0.5, lam: float = 1.0,
                 omega: float = 0.3, sigma: float = 0.5, beta_perp: bool = False, seed: int = 0) -> None:
        rng = np.random.default_rng(seed)
        self.mechanism = ModulatedMechanism(alpha=alpha, lam=lam, omega=omega, n_vectors=n_vectors, dim=dim,
                                            sigma=sigma)
        x = rng.standard_normal((clients, dim))
        self.X = x / np.maximum(1.0, np.linalg.norm(x, axis=1, keepdims=True))  # ‖x‖ ≤ 1
        beta_true = np.linspace(1.0, -0.5, dim)
        self.y = self.X @ beta_true + 0.1 * rng.standard_normal(clients)
        # The point β at which G is evaluated: generic, or ⊥ the basis (Theorem 8.1's assumption).
        beta = np.linspace(0.5, 1.5, dim)
        if beta_perp:
            V = self.mechanism.basis
            beta = beta - V @ (V.T @ beta)
        self.beta = beta
        self.K, self.d = clients, dim
        self.iu = np.triu_indices(dim)

    # targets
    @property
    def sigma_x(self) -> np.ndarray:
        return self.X.T @ self.X / self.K

    @property
    def z(self) -> np.ndarray:
        return self.X.T @ self.y / self.K

    @property
    def gradient(self) -> np.ndarray:
        return self.sigma_x @ self.beta - self.z

    def correction(self, kind: str) -> np.ndarray:
        if kind == "derived":
            return self.mechanism.second_moment_correction()
        if kind == "seed":
            return self.mechanism.seed_correction()
        return np.zeros((self.d, self.d))

    def releases(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """n rounds of K releases, shape (n, K, d) (vectorised over rounds and clients)."""
        return self.mechanism.release(np.tile(self.X, (n, 1)), rng).reshape(n, self.K, self.d)

    def statistics(self, g: np.ndarray, correction: str) -> tuple[np.ndarray, np.ndarray]:
        """(Σ_x, Z) per round from releases (n, K, d); ``correction="none"`` skips every debiasing step."""
        a = 1 - self.mechanism.alpha
        sigma_g = np.einsum("nki,nkj->nij", g, g) / self.K
        zz = np.einsum("k,nki->ni", self.y, g) / self.K
        if correction == "none":
            return sigma_g, zz
        return (sigma_g - self.correction(correction)) / a**2, zz / a

    def sampler(self, what: str, correction: str) -> Callable:
        def draw(n, rng):
            s, z = self.statistics(self.releases(n, rng), correction)
            if what == "sigma_x":
                return s[:, self.iu[0], self.iu[1]]
            if what == "z":
                return z
            return s @ self.beta - z

        return draw

    def target(self, what: str) -> np.ndarray:
        return {"sigma_x": self.sigma_x[self.iu], "z": self.z, "G": self.gradient}[what]


def theorem_8_1_variance(setup: ModulatedSetup) -> float:
    """Seed 000, Theorem 8.1: E‖G − ∇L(β)‖² for m = 1, v ⊥ β, fixed data.

    σ_g² = [S_r²(λ²/2 + dσ²) + 2σ² βᵀΣ_rx + σ²‖β‖² tr Σ_x]/(K(1 − α)²)
           + ‖β‖²(λ²σ²/2 + (d + 1)σ⁴)/(K(1 − α)⁴),
    with r = Xβ − y, S_r² = ‖r‖²/K, βᵀΣ_rx = βᵀXᵀr/K, tr Σ_x = ‖X‖_F²/K.
    """
    mech = setup.mechanism
    a, lam, s2, d, K = 1 - mech.alpha, mech.lam, mech.sigma**2, setup.d, setup.K
    r = setup.X @ setup.beta - setup.y
    b2 = setup.beta @ setup.beta
    first = (r @ r / K) * (lam**2 / 2 + d * s2) + 2 * s2 * (setup.beta @ setup.X.T @ r) / K \
        + s2 * b2 * np.sum(setup.X**2) / K
    return float(first / (K * a**2) + b2 * (lam**2 * s2 / 2 + (d + 1) * s2**2) / (K * a**4))


_MOD_LABEL = {"sigma_x": "Σ_x (upper triangle)", "z": "Z", "G": "G = Σ_x β − Z"}


def modulated_checks(budget: _Budget) -> list[BiasAudit]:
    """Σ_x, Z and G for m = 1 and m = 3 with the derived and the seed's correction, plus the naive server.

    For m = 1 both corrections coincide (λ²/2·vvᵀ + σ²I) and both must pass. For
    m = 3 the seed's λ²/(2m)P_V over-subtracts λ²(m − 1)/(2m²)P_V/(1 − α)² from Σ_x
    (and biases G along P_Vβ): it must be flagged, the derived λ²/(2m²)P_V must pass.
    Z involves no correction. The server without debiasing (Σ_g and (1/K)Σ y_i g̃_i
    used as if they were Σ_x and Z) must be flagged.
    """
    out = []
    for m in (1, 3):
        setup = ModulatedSetup(n_vectors=m, seed=budget.seed(f"modulated data m={m}") % 2**32)
        per = setup.K * setup.d
        for what in ("sigma_x", "z", "G"):
            corrections = ("derived",) if what == "z" else ("derived", "seed")
            for corr in corrections:
                name = f"modulated m={m}: {_MOD_LABEL[what]}" + ("" if what == "z" else f", {corr} correction")
                sampler, target = setup.sampler(what, corr), setup.target(what)
                if corr == "seed" and m > 1:
                    out.append(negative_control(
                        sampler, target, name=name, budget=budget, n=20_000, small_n=3_000, per_draw=per,
                        note="seed 000 §7 prints λ²/(2m)P_V; the map's λ/m scaling gives λ²/(2m²)P_V",
                    ))
                else:
                    note = "seed's printed correction; equals the derived one for m = 1" if corr == "seed" else ""
                    out.append(powered_audit(sampler, target, name=name, budget=budget, cap=400_000,
                                             small_cap=20_000, per_draw=per, note=note))
        out.append(negative_control(
            setup.sampler("G", "none"), setup.target("G"), name=f"modulated m={m}: G without debiasing (naive server)",
            budget=budget, n=5_000, small_n=1_000, per_draw=per,
            note="Σ_g β − (1/K)Σ y_i g̃_i: no (1−α) rescaling and no second-moment correction",
        ))
    return out


def modulated_variance_check(budget: _Budget) -> BiasAudit:
    """Theorem 8.1: the mean of ‖G − ∇L(β)‖² over rounds against σ_g²(β) (m = 1, v ⊥ β)."""
    setup = ModulatedSetup(n_vectors=1, clients=10, beta_perp=True, seed=budget.seed("modulated variance") % 2**32)
    grad = setup.gradient
    base = setup.sampler("G", "derived")

    def sampler(n, rng):
        e = base(n, rng) - grad
        return np.einsum("ni,ni->n", e, e)

    return powered_audit(sampler, theorem_8_1_variance(setup), name="modulated m=1: Theorem 8.1 variance E‖G − ∇L‖²",
                         budget=budget, cap=400_000, small_cap=20_000, per_draw=setup.K * setup.d,
                         note="the squared error's mean is the variance; target is the theorem's closed form")


# =============================================================================================
# DP-SGD: clipping bias (seed 002's baselines)
# =============================================================================================
class ClippingSetup:
    """One DP-SGD gradient step on a fixed least-squares dataset.

    The noisy gradient with Poisson sampling at rate q and noise multiplier z is

        ĝ = (1/(qN)) [Σ_{i∈B} clip_C(g_i) + N(0, z²C² I)],   clip_C(g) = g·min(1, C/‖g‖),

    with per-sample gradients g_i = (x_iᵀθ − y_i)x_i. E[ĝ] = (1/N)Σ clip_C(g_i), so
    its bias against ∇L(θ) = (1/N)Σ g_i is (1/N)Σ (clip_C(g_i) − g_i), exactly (and 0
    once C ≥ max‖g_i‖). Heavy-tailed label noise makes a few gradients large.
    """

    def __init__(self, *, n_examples: int = 200, dim: int = 3, rate: float = 0.1, noise_multiplier: float = 1.0,
                 seed: int = 0) -> None:
        rng = np.random.default_rng(seed)
        self.X = rng.standard_normal((n_examples, dim))
        self.y = self.X @ np.linspace(1, -1, dim) + rng.standard_t(2.5, n_examples)
        self.theta = np.zeros(dim)
        self.rate, self.z, self.N = rate, noise_multiplier, n_examples
        self.grads = (self.X @ self.theta - self.y)[:, None] * self.X

    @property
    def gradient(self) -> np.ndarray:
        return self.grads.mean(axis=0)

    def clipped(self, clip: float) -> np.ndarray:
        norms = np.linalg.norm(self.grads, axis=1, keepdims=True)
        return self.grads * np.minimum(1.0, clip / np.maximum(norms, 1e-300))

    def exact_bias(self, clip: float) -> np.ndarray:
        return self.clipped(clip).mean(axis=0) - self.gradient

    def sampler(self, clip: float) -> Callable:
        cg = self.clipped(clip)

        def draw(n, rng):
            mask = rng.random((n, self.N)) < self.rate
            noise = rng.standard_normal((n, cg.shape[1])) * (self.z * clip)
            return (mask @ cg + noise) / (self.rate * self.N)

        return draw


def clipping_checks(budget: _Budget, clips=(0.3, 1.0, 3.0, 10.0, 100.0)) -> list:
    """Bias of the DP-SGD mean gradient against the clip norm (informational).

    One audit per clip norm (``expect="unknown"``, verdict "info"), plus an
    :class:`ExperimentResult` of the audited bias norm beside the exact one.
    """
    setup = ClippingSetup(seed=budget.seed("dpsgd clipping data") % 2**32)
    audits = []
    for c in clips:
        name = f"DP-SGD mean gradient, clip C={c:g}"
        audits.append(audit_bias(setup.sampler(c), setup.gradient, n=budget.cap(50_000, 5_000), rng=budget.seed(name),
                                 chunk_size=_chunk(setup.N), name=name, expect="unknown", power=POWER,
                                 confidence=CONFIDENCE, relative_resolution=RELATIVE_RESOLUTION,
                                 note=f"exact bias norm {np.linalg.norm(setup.exact_bias(c)):.4g}; "
                                      f"max per-sample gradient norm {np.linalg.norm(setup.grads, axis=1).max():.3g}"))
    curve = ExperimentResult(
        name="dpsgd_clipping_bias", target="DP-SGD mean gradient: clipping bias vs clip norm",
        xlabel="clip norm C", ylabel="‖E ĝ − ∇L(θ)‖₂", xscale="log",
        series={
            "audited (mean of draws)": {"x": list(clips), "y": [a.bias_norm for a in audits],
                                        "yerr": [a.min_detectable_bias_norm for a in audits]},
            "exact (1/N)Σ(clip_C(g_i) − g_i)": {"x": list(clips),
                                                 "y": [float(np.linalg.norm(setup.exact_bias(c))) for c in clips]},
        },
        table=[{"clip": c, "audited_bias_norm": a.bias_norm, "exact_bias_norm": float(np.linalg.norm(setup.exact_bias(c))),
                "p_value": a.p_value, "detected": a.detected} for c, a in zip(clips, audits, strict=True)],
        notes=["Clipping biases the gradient towards small-gradient examples; the bias vanishes once C exceeds "
               "every per-sample gradient norm, at the price of noise std z·C/(qN) per coordinate.",
               "yerr is the audit's minimum detectable bias norm at power 0.9."],
        seed=budget.random_state,
    )
    return [*audits, curve]


# =============================================================================================
# The preset
# =============================================================================================
def run_bias_checks(*, n_scale: float = 1.0, random_state: int = 0, small: bool = False) -> list:
    """Run every check of the ``bias`` preset; returns BiasAudit and ExperimentResult objects.

    Parameters
    ----------
    n_scale : float
        Multiplies every cap on the number of draws (the CLI's ``--samples``).
    random_state : int
        Root seed (the CLI's ``--seed``).
    small : bool
        Smaller caps and curves, for tests and smoke runs (audits may then be
        under-powered for a 1 % relative bias; their notes say so).
    """
    budget = _Budget(n_scale, random_state, small)
    out: list = []
    out += modulated_checks(budget)
    out.append(modulated_variance_check(budget))
    out += clipping_checks(budget)
    return out
