"""Catalogue of bias checks behind the ``bias`` preset (issue 8).

Every check is a function returning a :class:`~privaudit.audit.engines.bias.BiasAudit`, an
:class:`~privaudit.audit.results.ExperimentResult` or a list of them.
:func:`run_bias_checks` runs them all:

* :func:`modulated_checks` — seed 000's Σ_x, Z and G for m = 1, 3 with the derived
  correction (λ²/(2m²))P_V + σ²I and the seed's printed (λ²/(2m))P_V + σ²I, and the
  server without debiasing (negative control);
* :func:`modulated_correction_summary` — exact bias of the two corrections against m,
  beside the audits (the report's answer to "which correction is unbiased");
* :func:`modulated_variance_checks` — Theorem 8.1's E‖G − ∇L‖² against its mean;
* :func:`iwp_checks` — seed 001's B⁻¹, W⁻¹ per loss, the IWP loss and gradient (and the
  App. E.2 regression pair); the NoisySGD gradient (negative control);
* :func:`truncation_checks` — the logistic W⁻¹ truncation bias against K and σ, and
  its detection at large σ (negative controls);
* :func:`modulated_convergence`, :func:`iwp_convergence` — excess risk against the
  sample size (unbiased learners → 0, NoisySGD/ridge plateau);
* :func:`clipping_checks` — DP-SGD's clipping bias against the clip norm (info);
* :func:`rr_on_bins_checks` — the RR-on-Bins label estimator's bias (info) and its
  exact conditional bias curve.

Sample sizes
------------
An estimator claimed unbiased is audited at a number of draws large enough to
detect a relative bias of 1 % (of the target's ℓ₂ norm, in the worst direction)
with power 0.9: a pilot audit estimates the covariance, ``n_required`` follows
(see :mod:`privaudit.audit.engines.bias`), and the final audit runs on fresh draws with
n = max(1.15·n_required, pilot), capped at ``cap·n_scale``. A capped audit says so in
its note and its ``min_detectable_relative_bias`` then exceeds 1 %.

Known-biased estimators are negative controls (``expect="biased"``): their verdict
is "pass" when the audit detects the bias.

Every audit runs at confidence 0.999 (:data:`CONFIDENCE`): the preset holds about 50
audits, so by Bonferroni a run falsely flags any unbiased estimator with probability
≤ 5 %. The stated minimum detectable biases are at that level.

Seeds: each check's seed is derived from ``random_state`` and a CRC of the check's
name, so checks are reproducible one by one and adding a check moves no other.

Length: the modulated and IWP checks live here (~480 lines of setups whose formulas are
derived in their docstrings); the learner-output checks are in
:mod:`privaudit.audit.studies.learner_bias_checks` and the sample-size policy in
:mod:`privaudit.audit.studies.bias_budget`. Names of both are re-exported here.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from privaudit.audit.engines.bias import BiasAudit, audit_bias
from privaudit.audit.studies.bias_budget import (  # re-exported: the preset's policy
    CONFIDENCE,
    POWER,
    RELATIVE_RESOLUTION,
    SAFETY,
    _Budget,
    _chunk,
    negative_control,
    powered_audit,
)
from privaudit.audit.studies.learner_bias_checks import (  # re-exported
    ClippingSetup,
    clipping_checks,
    iwp_convergence,
    modulated_convergence,
    rr_on_bins_checks,
)
from privaudit.audit.results import ExperimentResult
from privaudit.mechanisms import GaussianMechanism, RandomizedResponse
from privaudit.mechanisms.modulated import ModulatedMechanism
from privaudit.mechanisms.randomness import RandomLike


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
    (λ²/(2m))P_V + σ²I, or none (C = 0: the naive server). The statistics are those of
    :func:`privaudit.learners.modulated_server.server_statistics`, vectorised over rounds.
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

    def releases(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """n rounds of K releases, shape (n, K, d) (vectorised over rounds and clients).

        Parameters
        ----------
        n : int
            Number of independent draws.
        rng : Generator
            Source of the release noise.

        Returns
        -------
        ndarray of shape (n, K, d)
        """
        return self.mechanism.release(np.tile(self.X, (n, 1)), rng).reshape(n, self.K, self.d)

    def sampler(self, what: str, correction: str) -> Callable:
        """Draws of Σ_x (upper triangle), Z or G from the learner's own server statistics.

        Parameters
        ----------
        what : {"sigma_x", "z", "G"}
            Which statistic.
        correction : {"derived", "seed", "none"}
            The server's covariance correction.

        Returns
        -------
        callable
            ``draw(n, rng)`` returning n draws of the statistic, one row each.
        """
        from privaudit.learners.modulated_server import server_gradient, server_statistics

        def draw(n, rng):
            stats = server_statistics(self.releases(n, rng), self.y, self.mechanism, correction=correction)
            if what == "sigma_x":
                return stats.Sigma_x[:, self.iu[0], self.iu[1]]
            if what == "z":
                return stats.Z
            return server_gradient(stats, self.beta)

        return draw

    def target(self, what: str) -> np.ndarray:
        """The exact Σ_x (upper triangle), Z or G of the fixed data.

        Parameters
        ----------
        what : {"sigma_x", "z", "G"}
            Which statistic.

        Returns
        -------
        ndarray
            The exact value the statistic is unbiased for.
        """
        return {"sigma_x": self.sigma_x[self.iu], "z": self.z, "G": self.gradient}[what]


_MOD_LABEL = {"sigma_x": "Σ_x (upper triangle)", "z": "Z", "G": "G = Σ_x β − Z"}


def modulated_checks(budget: _Budget) -> list[BiasAudit]:
    """Σ_x, Z and G for m = 1 and m = 3 with the derived and the seed's correction, plus the naive server.

    For m = 1 both corrections coincide (λ²/2·vvᵀ + σ²I) and both must pass. For
    m = 3 the seed's λ²/(2m)P_V over-subtracts λ²(m − 1)/(2m²)P_V/(1 − α)² from Σ_x
    (and biases G along P_Vβ): it must be flagged, the derived λ²/(2m²)P_V must pass.
    Z involves no correction. The server without debiasing (Σ_g and (1/K)Σ y_i g̃_i
    used as if they were Σ_x and Z) must be flagged.

    Parameters
    ----------
    budget : Budget
        The preset's sampling budget (caps, ``small``) and per-check seeds.

    Returns
    -------
    list of BiasAudit
    """
    out = []
    for m in (1, 3):
        setup = ModulatedSetup(n_vectors=m, seed=budget.seed(f"modulated data m={m}"))
        per = setup.K * setup.d
        for what in ("sigma_x", "z", "G"):
            corrections = ("derived",) if what == "z" else ("derived", "seed")
            for corr in corrections:
                name = f"modulated m={m}: {_MOD_LABEL[what]}" + ("" if what == "z" else f", {corr} correction")
                sampler, target = setup.sampler(what, corr), setup.target(what)
                if corr == "seed" and m > 1:
                    # Exact bias: (C_derived − C_seed)/(1 − α)² on Σ_x, times β on G.
                    dc = (setup.mechanism.second_moment_correction() - setup.mechanism.seed_correction()) \
                        / (1 - setup.mechanism.alpha) ** 2
                    exact = dc[setup.iu] if what == "sigma_x" else dc @ setup.beta
                    out.append(negative_control(
                        sampler, target, name=name, budget=budget, n=20_000, small_n=3_000, per_draw=per,
                        known_bias=exact,
                        note="seed 000 §7 prints λ²/(2m)P_V; the map's λ/m scaling gives λ²/(2m²)P_V",
                    ))
                else:
                    note = "seed's printed correction; equals the derived one for m = 1" if corr == "seed" else ""
                    out.append(powered_audit(sampler, target, name=name, budget=budget, cap=800_000,
                                             small_cap=8_000, per_draw=per, note=note, pilot=5000))
        out.append(negative_control(
            setup.sampler("G", "none"), setup.target("G"), name=f"modulated m={m}: G without debiasing (naive server)",
            budget=budget, n=5_000, small_n=1_000, per_draw=per,
            note="correction='none': Σ_g/(1−α)² without subtracting (λ²/(2m²))P_V + σ²I",
        ))
    return out


def modulated_correction_summary(audits: list[BiasAudit]) -> ExperimentResult:
    """Which multi-vector correction is unbiased: exact and audited bias of Σ_x against m.

    The seed's (λ²/(2m))P_V over-subtracts λ²(m − 1)/(2m²)P_V, so each diagonal entry of
    Σ_x along V is biased by −λ²(m − 1)/(2m²(1 − α)²) (0 for m = 1); the derived
    (λ²/(2m²))P_V is exact for every m. The curve is that exact bias for m = 1..6 with
    the parameters of :class:`ModulatedSetup`; the table joins the audits of m = 1, 3.

    Parameters
    ----------
    audits : list of BiasAudit
        The audits of :func:`modulated_checks`.

    Returns
    -------
    ExperimentResult
    """
    mech = ModulatedSetup(n_vectors=1).mechanism
    ms = list(range(1, 7))
    exact = [0.0 if m == 1 else -(mech.lam**2) * (m - 1) / (2 * m**2 * (1 - mech.alpha) ** 2) for m in ms]
    table = []
    for a in audits:
        if a.target.endswith(" correction"):
            table.append({"audit": a.target, "expect": a.expect, "detected": a.detected,
                          "relative bias": a.relative_bias, "p_value": a.p_value, "verdict": a.verdict})
    return ExperimentResult(
        name="modulated_corrections", target="Modulated Σ_x: seed's λ²/(2m) vs derived λ²/(2m²) correction",
        xlabel="modulation vectors m", ylabel="bias of Σ_x along each v_j",
        series={"seed's λ²/(2m)P_V (exact)": {"x": ms, "y": exact},
                "derived λ²/(2m²)P_V (exact)": {"x": ms, "y": [0.0] * len(ms)}},
        table=table,
        notes=[f"α = {mech.alpha:g}, λ = {mech.lam:g}. The map scales the cosines by λ/m, so E[g̃g̃ᵀ] carries "
               "(λ²/(2m²))P_V; the seed prints λ²/(2m)P_V, correct only for m = 1.",
               "Audits flagging a bias: " + (", ".join(r["audit"] for r in table if r["detected"]) or "none") + "."],
    )


def modulated_variance_checks(budget: _Budget) -> list[BiasAudit]:
    """Theorem 8.1: the mean of ‖G − ∇L(β)‖² over rounds against σ_g²(β) (v ⊥ β).

    m = 1 is the seed's statement; m = 3 uses the λ²/2 → λ²/(2m) extension of
    :func:`privaudit.learners.modulated_theory.theorem81_variance`.

    Parameters
    ----------
    budget : Budget
        The preset's sampling budget (caps, ``small``) and per-check seeds.

    Returns
    -------
    list of BiasAudit
    """
    from privaudit.learners.modulated_theory import theorem81_variance

    out = []
    for m in (1, 3):
        setup = ModulatedSetup(n_vectors=m, clients=10, beta_perp=True,
                               seed=budget.seed(f"modulated variance m={m}"))
        grad, base, mech = setup.gradient, setup.sampler("G", "derived"), setup.mechanism

        def sampler(n, rng, base=base, grad=grad):
            e = base(n, rng) - grad
            return np.einsum("ni,ni->n", e, e)

        target = theorem81_variance(setup.X, setup.y, setup.beta, alpha=mech.alpha, lam=mech.lam, sigma=mech.sigma,
                                    n_vectors=m)
        out.append(powered_audit(
            sampler, target, name=f"modulated m={m}: Theorem 8.1 variance E‖G − ∇L‖²", budget=budget, cap=800_000,
            small_cap=8_000, per_draw=setup.K * setup.d, pilot=5000,
            note="mean squared error of G against the closed form (V ⊥ β)"
                 + ("" if m == 1 else "; m > 1: λ²/2 → λ²/(2m), derived (the seed states m = 1 only)"),
        ))
    return out


# =============================================================================================
# Seed 001: inverse Weierstrass / Bernoulli transforms and IWP estimators
# =============================================================================================
class IWPSetup:
    """Fixed examples (x_i, y_i), a fixed model θ and the seed-001 local releases.

    Features are released once through the Gaussian mechanism x̃ = x + N(0, σ²I),
    labels through binary randomised response ỹ = y w.p. S(ε_y) = e^ε/(1+e^ε). For a
    GLM loss ℓ(θ, x, y) = f(θᵀxy), the inverse transforms act on the margin with
    variance v = σ²‖θ‖² (seed 001, §5.2):

    * W⁻¹: E[W⁻¹_v[f](θᵀx̃y)] = f(θᵀxy) (labels clean);
    * B⁻¹: E[B⁻¹_ε[g](ỹ)] = g(y) (features clean);
    * IWP loss ℓ̃ = S̃ W⁻¹_v[f](θᵀx̃ỹ) + (1 − S̃) W⁻¹_v[f](−θᵀx̃ỹ): E ℓ̃ = ℓ(θ, x, y).

    One draw is the vector of the estimator over the fixed examples.
    """

    def __init__(self, *, sigma: float = 1.0, epsilon_y: float = 1.0, n_examples: int = 4, dim: int = 3,
                 seed: int = 0) -> None:
        rng = np.random.default_rng(seed)
        x = rng.standard_normal((n_examples, dim))
        self.X = x / np.linalg.norm(x, axis=1, keepdims=True) * rng.uniform(0.3, 1.0, (n_examples, 1))
        self.y = np.where(np.arange(n_examples) % 2 == 0, 1.0, -1.0)
        self.theta = np.linspace(0.8, -0.6, dim)
        self.sigma, self.epsilon_y = float(sigma), float(epsilon_y)
        self.features = GaussianMechanism(sigma=sigma)
        self.labels = RandomizedResponse(epsilon=epsilon_y, categories=(-1, 1))
        self.variance = self.sigma**2 * float(self.theta @ self.theta)

    @property
    def margins(self) -> np.ndarray:
        return self.X @ self.theta * self.y

    def release_x(self, n: int, rng: np.random.Generator | int | None) -> np.ndarray:
        """(n, examples, p) feature releases (one mechanism call per fixed example).

        Parameters
        ----------
        n : int
            Number of independent draws.
        rng : Generator, int or None
            Source of the feature noise.

        Returns
        -------
        ndarray of shape (n, examples, p)
        """
        return np.stack([self.features.sample(x, n, rng) for x in self.X], axis=1)

    def release_y(self, n: int, rng: np.random.Generator | int | None) -> np.ndarray:
        """(n, examples) randomised-response releases of the fixed labels.

        Parameters
        ----------
        n : int
            Number of independent draws.
        rng : Generator, int or None
            Source of the label flips.

        Returns
        -------
        ndarray of shape (n, examples)
        """
        return self.labels.release(np.broadcast_to(self.y, (n, self.y.size)), rng)


def iwp_checks(budget: _Budget) -> list[BiasAudit]:
    """B⁻¹, W⁻¹ for each loss, the IWP loss and gradient; the NoisySGD gradient as a negative control.

    Quadratic ½(z − 1)² and exponential e^{−z} have exact inverses and must pass; the
    logistic inverse is a truncated asymptotic series (K = 2 terms here, v = σ²‖θ‖² = 1),
    whose exact truncation bias (Gauss–Hermite) is stated in the note and audited as
    "info". The estimators are the learner's own per-sample functions
    (:mod:`privaudit.learners.iwp`); one draw is their value (loss) or mean (gradient)
    over the fixed examples.

    Parameters
    ----------
    budget : Budget
        The preset's sampling budget (caps, ``small``) and per-check seeds.

    Returns
    -------
    list of BiasAudit
    """
    from privaudit.learners import iwp_losses
    from privaudit.learners import weierstrass_transforms as W

    setup = IWPSetup(seed=budget.seed("iwp data"))
    n_ex, p = setup.X.shape
    per = setup.X.size
    out = []
    z0 = setup.margins

    # B⁻¹ of g(y) = f(θᵀx y) (logistic f): features clean, labels randomised.
    def g_of(y):
        return np.logaddexp(0.0, -(setup.X @ setup.theta) * y)

    out.append(powered_audit(
        lambda n, rng: W.inverse_bernoulli(g_of, setup.release_y(n, rng), epsilon=setup.epsilon_y),
        g_of(setup.y), name=f"IWP: B⁻¹ (RR labels, ε_y={setup.epsilon_y:g}) of the logistic loss",
        budget=budget, cap=8_000_000, small_cap=100_000, per_draw=per,
    ))

    def flat(n, rng, labels=True):
        xt = setup.release_x(n, rng).reshape(n * n_ex, p)
        yt = setup.release_y(n, rng) if labels else np.broadcast_to(setup.y, (n, n_ex))
        return xt, np.ascontiguousarray(yt).reshape(n * n_ex)

    for loss in W.LOSSES:
        k = 2 if loss == "logistic" else None
        f = W.get_loss(loss)
        loss_target = f.derivative(z0)
        grad_target = np.einsum("i,ip->p", f.derivative(z0, 1) * setup.y, setup.X) / n_ex

        def w_inv(n, rng, loss=loss, k=k):
            zt = np.einsum("nip,p->ni", setup.release_x(n, rng), setup.theta) * setup.y
            return W.inverse_weierstrass(loss, 0, zt, setup.variance, k)

        def iwp_loss(n, rng, loss=loss, k=k):
            xt, yt = flat(n, rng)
            return iwp_losses.iwp_loss(setup.theta, xt, yt, loss=loss, sigma=setup.sigma, epsilon_y=setup.epsilon_y,
                                n_terms=k).reshape(n, n_ex)

        def iwp_grad(n, rng, loss=loss, k=k):
            xt, yt = flat(n, rng)
            g = iwp_losses.iwp_gradient(setup.theta, xt, yt, loss=loss, sigma=setup.sigma, epsilon_y=setup.epsilon_y,
                                 n_terms=k)
            return g.reshape(n, n_ex, p).mean(axis=1)

        tag = f"σ={setup.sigma:g}, ε_y={setup.epsilon_y:g}"
        for label, sampler, target, order in (
            (f"W⁻¹ of the {loss} loss (Gaussian features, σ={setup.sigma:g})", w_inv, loss_target, 0),
            (f"IWP loss ℓ̃, {loss} ({tag})", iwp_loss, loss_target, 0),
            (f"IWP gradient ∇ℓ̃, {loss} ({tag})", iwp_grad, grad_target, 1),
        ):
            name = "IWP: " + label
            if k is None:
                out.append(powered_audit(sampler, target, name=name, budget=budget, cap=8_000_000,
                                         small_cap=100_000, per_draw=per))
                continue
            if order == 0:
                exact = W.truncation_bias(loss, z0, setup.variance, k)
                exact_txt = f"exact loss bias per example {np.array2string(exact, precision=3)}"
            else:
                exact_txt = "exact bias not in closed form (gradient of the truncated series)"
            out.append(audit_bias(
                sampler, target, n=budget.cap(200_000, 20_000), rng=budget.seed(name), chunk_size=_chunk(per),
                name=name + f", truncated at K={k}", expect="unknown", power=POWER, confidence=CONFIDENCE,
                relative_resolution=RELATIVE_RESOLUTION,
                note=f"truncated series, v = σ²‖θ‖² = {setup.variance:.3g}: {exact_txt} (Gauss–Hermite)",
            ))

    # Regression (App. E.2): Gaussian labels ỹ = y + N(0, σ_y²); exact inverse for ½(θᵀx − y)².
    reg = IWPSetup(sigma=0.5, seed=budget.seed("iwp data"))
    sigma_y = 0.5
    y_reg = reg.X @ np.array([0.3, -0.2, 0.5]) + 1.0
    res = reg.X @ reg.theta - y_reg

    def reg_draw(n, rng, what):
        xt = reg.release_x(n, rng).reshape(n * n_ex, p)
        yt = (y_reg + sigma_y * rng.standard_normal((n, n_ex))).reshape(n * n_ex)
        if what == "loss":
            return iwp_losses.iwp_regression_loss(reg.theta, xt, yt, sigma=reg.sigma, sigma_y=sigma_y).reshape(n, n_ex)
        return iwp_losses.iwp_regression_gradient(reg.theta, xt, yt, sigma=reg.sigma).reshape(n, n_ex, p).mean(axis=1)

    for what, target in (("loss", 0.5 * res**2), ("gradient", (res[:, None] * reg.X).mean(axis=0))):
        out.append(powered_audit(lambda n, rng, w=what: reg_draw(n, rng, w), target,
                                 name=f"IWP regression {what} (App. E.2; σ={reg.sigma:g}, σ_y={sigma_y:g})",
                                 budget=budget, cap=8_000_000, small_cap=100_000, per_draw=per))

    # The NoisySGD gradient: the plain logistic gradient on the released example.
    def naive_gradient(n, rng):
        xt, yt = flat(n, rng)
        return iwp_losses.glm_gradient(setup.theta, xt, yt, loss="logistic").reshape(n, n_ex, p).mean(axis=1)

    logistic = W.get_loss("logistic")
    true_grad = np.einsum("i,ip->p", setup.y * logistic.derivative(z0, 1), setup.X) / n_ex
    out.append(negative_control(
        naive_gradient, true_grad, name="NoisySGD gradient ∇f(θᵀx̃ỹ) (logistic, no correction)", budget=budget,
        n=20_000, small_n=5_000, per_draw=per,
        note=f"the gradient of the loss on released data (σ={setup.sigma:g}, ε_y={setup.epsilon_y:g}): "
             "RR shrinks it by about 2S(ε_y) − 1 and feature noise smooths f'",
    ))
    return out


def truncation_checks(budget: _Budget, sigmas: object = None, n_terms: tuple[int, ...] = (1, 2, 3)) -> list:
    """Logistic W⁻¹ truncation bias against K and σ (curve) and its detection at large σ.

    The curve is the exact bias W_v[W⁻¹_{v,K}[f]](z) − f(z) at the margin z of one
    example, v = σ²‖θ‖², over the σ where the truncated series is defined
    (v < v_K, :func:`privaudit.learners.weierstrass_transforms.series_variance_limit`). The
    audits run the truncated estimator at 90 % of that limit for each K: the bias
    must be flagged (``expect="biased"``).

    Parameters
    ----------
    budget : Budget
        The preset's sampling budget (caps, ``small``) and per-check seeds.
    sigmas : object
        Unused (the σ grid is derived from each v_K).
    n_terms : tuple of int
        Truncation orders K of the logistic series.

    Returns
    -------
    list
        One BiasAudit per K, then the bias curve (ExperimentResult).
    """
    from privaudit.learners import weierstrass_transforms as W

    base = IWPSetup(seed=budget.seed("iwp data"))
    tn2 = float(base.theta @ base.theta)
    z = float(base.margins[0])
    series, table, out = {}, [], []
    for k in n_terms:
        vmax = W.series_variance_limit("logistic", k)
        grid = np.sqrt(np.linspace(0.0, 0.95 * vmax, 12 if budget.small else 25) / tn2)
        bias = W.truncation_bias("logistic", np.full(grid.size, z), grid**2 * tn2, k)
        series[f"K={k}"] = {"x": grid.tolist(), "y": bias.tolist()}
        sigma = float(np.sqrt(0.9 * vmax / tn2))
        setup = IWPSetup(sigma=sigma, seed=budget.seed("iwp data"))
        exact = W.truncation_bias("logistic", setup.margins, setup.variance, k)

        def sampler(n, rng, setup=setup, k=k):
            zt = np.einsum("nip,p->ni", setup.release_x(n, rng), setup.theta) * setup.y
            return W.inverse_weierstrass("logistic", 0, zt, setup.variance, k)

        audit = negative_control(
            sampler, W.get_loss("logistic").derivative(setup.margins),
            name=f"IWP: truncated logistic W⁻¹, K={k}, large σ={sigma:.3g} (v={setup.variance:.3g})",
            budget=budget, n=2_000_000, small_n=2_000_000, per_draw=setup.X.size, known_bias=exact,
            note=f"exact truncation bias per example {np.array2string(exact, precision=4)}",
        )
        out.append(audit)
        table.append({"K": k, "sigma": sigma, "variance": setup.variance, "exact_bias": exact.tolist(),
                      "audited_bias": audit.bias, "detected": audit.detected})
    curve = ExperimentResult(
        name="iwp_logistic_truncation_bias", target="IWP: logistic W⁻¹ truncation bias vs σ and K",
        xlabel="feature noise σ", ylabel=f"W_v[W⁻¹_(v,K) f](z) − f(z) at z = {z:.3g}", series=series, table=table,
        notes=["Exact (Gauss–Hermite) bias of the truncated inverse; each curve stops at 95 % of the largest "
               "variance where the truncated series' terms still decrease (v_1 = 8, v_2 = 3, v_3 ≈ 1.88).",
               "Seed 001 App. D.7: for small variance K ∈ {2, 3} is better, for large variance K = 1."],
        seed=budget.random_state,
    )
    return [*out, curve]


# =============================================================================================
# The preset
# =============================================================================================
def run_bias_checks(*, n_scale: float = 1.0, random_state: RandomLike = 0, small: bool = False) -> list:
    """Run every check of the ``bias`` preset; returns BiasAudit and ExperimentResult objects.

    Parameters
    ----------
    n_scale : float
        Multiplies every cap on the number of draws (the CLI's ``--samples``).
    random_state : int, Generator, SeedSequence or None
        Root seed (the CLI's ``--seed``); resolved by :mod:`privaudit.mechanisms.randomness`
        and recorded as every result's ``seed``.
    small : bool
        Smaller caps and curves, for tests and smoke runs (audits may then be
        under-powered for a 1 % relative bias; their notes say so).
    """
    budget = _Budget(n_scale, random_state, small)
    out: list = []
    mod = modulated_checks(budget)
    out += mod
    out.append(modulated_correction_summary(mod))
    out += modulated_variance_checks(budget)
    out += iwp_checks(budget)
    out += truncation_checks(budget)
    out.append(modulated_convergence(budget))
    out.append(iwp_convergence(budget))
    out += clipping_checks(budget)
    out += rr_on_bins_checks(budget)
    return out


__all__ = [
    "CONFIDENCE", "POWER", "RELATIVE_RESOLUTION", "SAFETY", "ClippingSetup", "IWPSetup", "ModulatedSetup",
    "clipping_checks", "iwp_checks", "iwp_convergence", "modulated_checks", "modulated_convergence",
    "modulated_correction_summary", "modulated_variance_checks", "negative_control", "powered_audit",
    "rr_on_bins_checks", "run_bias_checks", "truncation_checks",
]
