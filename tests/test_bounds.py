"""Bounds: CRB, seed eq. (18), van Trees (closed form vs Monte Carlo), HCR (vs brute force), ReRo."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, stats

from privaudit.attacks.priors import DiscretePrior, GaussianPrior
from privaudit.audit.stats.estimation_bounds import crb, hammersley_chapman_robbins, rero_bound, rero_mu, seed_trace_bound, van_trees
from privaudit.audit.stats.fisher import release_fisher
from privaudit.audit.engines.reconstruction import audit_reconstruction
from privaudit.mechanisms import GaussianMechanism, InvalidParameterError, ModulatedMechanism, gaussian_tradeoff


def test_crb_and_singular():
    info = np.diag([4.0, 1.0, 0.25])
    assert crb(info) == pytest.approx(0.25 + 1 + 4)
    assert crb(np.diag([1.0, 0.0])) == math.inf
    np.testing.assert_allclose(crb(np.stack([np.eye(2), 2 * np.eye(2)])), [2.0, 1.0])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0.01, 100.0), min_size=2, max_size=6), st.integers(0, 10_000))
def test_seed_trace_form_is_looser(eigs, seed):
    q, _ = np.linalg.qr(np.random.default_rng(seed).normal(size=(len(eigs), len(eigs))))
    info = (q * eigs) @ q.T
    assert seed_trace_bound(info) <= crb(info) * (1 + 1e-9)
    assert seed_trace_bound(np.eye(3) * 2.0) == pytest.approx(crb(np.eye(3) * 2.0))


def test_seed_eq18_formula():
    # Seed 000 eq. (18): (1/d)E‖x̂ − x‖² ≥ 1/([(1 − α)² + c₁/d]/σ² + ‖β‖²/(dσ_y²)),
    # c₁ = −2λω(1 − α) sin θ + λ²ω² sin² θ, θ = ω⟨x, v⟩ + φ.
    a, lam, om, d, s, sy = 0.3, 0.5, 0.4, 5, 0.6, 1.5
    mech = ModulatedMechanism(alpha=a, lam=lam, omega=om, dim=d, sigma=s)
    x, phi, beta = np.linspace(-1, 1, d), 0.8, np.arange(1.0, d + 1)
    th = om * x[0] + phi
    c1 = -2 * lam * om * (1 - a) * math.sin(th) + lam**2 * om**2 * math.sin(th) ** 2
    per_coord = 1 / (((1 - a) ** 2 + c1 / d) / s**2 + beta @ beta / (d * sy**2))
    info = release_fisher(mech, x, phase=[phi], beta=beta, sigma_y=sy)
    assert seed_trace_bound(info) / d == pytest.approx(per_coord, rel=1e-12)


class _NoClosedForm:
    """A Gaussian prior seen only through sample / grad_log_density (forces Monte Carlo)."""

    def __init__(self, prior):
        self.p = prior
        self.dim = prior.dim

    def sample(self, n, rng=None):
        return self.p.sample(n, rng)

    def grad_log_density(self, X):
        return self.p.grad_log_density(X)


def test_van_trees_closed_form_vs_monte_carlo():
    prior = GaussianPrior(np.zeros(3), [0.5, 1.0, 2.0])
    mech = ModulatedMechanism(alpha=0.4, lam=0.7, omega=0.5, dim=3, sigma=0.8)
    info = mech.fisher_information(np.zeros(3))
    closed = van_trees(info, prior)
    assert closed == pytest.approx(np.trace(np.linalg.inv(info + prior.precision)))
    # MC over the prior for both E_π I (per-phase information at random phases) and J_π.
    rng = np.random.default_rng(5)

    def fisher_fn(X):
        ph = rng.random((X.shape[0], 1)) * 2 * np.pi
        return np.stack([mech.fisher_information(x, p) for x, p in zip(X[:4000], ph)])

    mc = van_trees(fisher_fn, _NoClosedForm(prior), n_mc=4000, rng=6)
    assert mc == pytest.approx(closed, rel=0.03)
    with pytest.raises(InvalidParameterError):
        van_trees(info, DiscretePrior([[0.0] * 3, [1.0] * 3]))


def test_hcr_linear_equals_crb_and_regular_case_above():
    g = GaussianMechanism(sigma=0.7)
    # The t → 0 limit is the CRB tr(I⁻¹) of what is released (4σ² up to the dithered release's O((γ/σ)²)).
    assert hammersley_chapman_robbins(g, np.zeros(4)) == pytest.approx(crb(g.fisher_information(np.zeros(4))), rel=1e-9)
    assert crb(g.fisher_information(np.zeros(4))) == pytest.approx(4 * 0.49, rel=1e-6)
    mech = ModulatedMechanism(alpha=0.3, lam=0.5, omega=0.5, dim=4, sigma=0.5)
    x = np.full(4, 0.5)
    for kw in ({"information": "known"}, {"information": "hidden"}, {"phase": [1.0]}):
        info = release_fisher(mech, x, **kw)
        assert hammersley_chapman_robbins(mech, x, **kw) >= crb(info) * (1 - 1e-9)


@pytest.mark.filterwarnings("ignore::privaudit.mechanisms.NonContractiveWarning")
def test_hcr_nonlinear_matches_brute_force_and_beats_crb():
    # λω = 1 − α: at sin θ = 1 the map is locally flat, J is singular and both the CRB
    # and HCR (its t → 0 limit) are infinite. Near there (sin θ = 0.9) the CRB is finite
    # but only local; HCR takes its sup at a finite step and is strictly larger.
    a, lam, om, s = 0.5, 1.0, 0.5, 0.3
    mech = ModulatedMechanism(alpha=a, lam=lam, omega=om, dim=1, sigma=s)
    x = np.array([0.0])
    assert crb(mech.fisher_information(x, [math.pi / 2])) == math.inf
    assert hammersley_chapman_robbins(mech, x, phase=[math.pi / 2]) == math.inf
    phi = math.asin(0.9)
    ts = np.linspace(0.05, 4.0, 80)
    h = lambda z: (1 - a) * z + lam * math.cos(om * z + phi)  # noqa: E731

    def chi2(t):  # direct integration of p_t²/p_0 − 1 over the release
        m0, m1 = h(0.0), h(t)
        f = lambda r: math.exp(2 * stats.norm.logpdf(r, m1, s) - stats.norm.logpdf(r, m0, s))  # noqa: E731
        lo, hi = min(m0, 2 * m1 - m0) - 12 * s, max(m0, 2 * m1 - m0) + 12 * s
        return integrate.quad(f, lo, hi, points=[m0, m1, 2 * m1 - m0], limit=200, epsabs=0, epsrel=1e-12)[0] - 1

    local = crb(mech.fisher_information(x, [phi]))
    brute = max(max(t**2 / chi2(t) for t in np.concatenate([ts, -ts])), local)
    ours = hammersley_chapman_robbins(mech, x, phase=[phi], t_grid=ts)
    assert ours == pytest.approx(brute, rel=1e-6)
    assert ours > 1.05 * local


def test_rero_bound_closed_form_and_tradeoff():
    for kappa in (0.01, 0.25, 0.5):
        for mu in (0.0, 0.5, 2.0):
            via_curve = rero_bound(kappa, lambda a, m=mu: gaussian_tradeoff(m, a))
            assert rero_bound(kappa, mu=mu) == pytest.approx(via_curve, abs=1e-12)
        assert rero_bound(kappa, mu=0.0) == pytest.approx(kappa)
    with pytest.raises(InvalidParameterError):
        rero_bound(0.5)


def test_rero_audit_two_points():
    # Two equiprobable points at distance D: the MAP attacker succeeds with Φ(D/2σ) exactly,
    # below the ReRo bound Φ(Φ⁻¹(1/2) + D/σ) = Φ(D/σ).
    sigma, D = 1.0, 1.5
    prior = DiscretePrior([[0.0, 0.0], [D, 0.0]])
    mech = GaussianMechanism(sigma=sigma)
    assert rero_mu(mech, prior) == pytest.approx(D / sigma)
    res = audit_reconstruction(mech, None, prior=prior, n=20_000, rng=7)
    assert res.attacker == "discrete-map"
    lo, hi = res.rero["success_ci"]
    assert lo <= stats.norm.cdf(D / (2 * sigma)) <= hi
    assert res.rero["bound"] == pytest.approx(stats.norm.cdf(D / sigma))
    assert res.verdict == "pass"
