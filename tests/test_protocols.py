"""Capabilities as Protocols: every mechanism states its dp_accounting event, and engines dispatch on protocols.

The dp_event of each mechanism is checked against an independent computation of its privacy
(a closed form, or the mechanism's own exact profile computed without dp_accounting's event
machinery). Tolerances: dp_accounting's PLD rounds privacy losses pessimistically to a grid of
``PLD_DISCRETIZATION``, so ε read from it exceeds the exact ε by at most that grid step.
"""

from __future__ import annotations

import dataclasses

import ast
import inspect
import math
import pathlib
import textwrap

import dp_accounting as dpa
import numpy as np
import pytest

from privaudit.attacks.protocol import (
    Distinguisher,
    DistinguisherTraits,
    FinitePrior,
    Reconstructor,
    declares_unbiased,
    distinguisher_traits,
)
from privaudit.attacks.priors import DiscretePrior, GaussianPrior
from privaudit.audit.engines.reconstruction import audit_reconstruction
from privaudit.audit.engines.tradeoff import audit_tradeoff, default_attackers
from privaudit.audit.stats.estimation_bounds import hammersley_chapman_robbins, rero_mu
from privaudit.audit.stats.fisher import release_fisher
from privaudit.mechanisms import (
    ExponentialMechanism,
    GaussianMechanism,
    LaplaceMechanism,
    ModulatedMechanism,
    SnappingLaplaceMechanism,
    gdp_epsilon,
)
from privaudit.mechanisms.accounting import PLD_DISCRETIZATION, privacy_loss_distribution, pure_dp_event
from privaudit.mechanisms.protocol import (
    AccountableMechanism,
    HasDensity,
    HasExactTradeoff,
    IsotropicGaussianRelease,
    Mechanism,
    ModulatedRelease,
)
from privaudit.mechanisms.validation import InvalidParameterError

ROOT = pathlib.Path(__file__).resolve().parents[1]
TOL = PLD_DISCRETIZATION  # pessimistic rounding of the PLD: ε from it is within one grid step above


def _pld_epsilon(mech, delta: float, distance=None) -> float:
    return float(privacy_loss_distribution(mech, distance).get_epsilon_for_delta(delta))


def _on_grid_above(value: float, exact: float, steps: int = 1) -> bool:
    """ε read from a pessimistic PLD: at least the exact ε, at most ``steps`` grid steps above it."""
    return exact - 1e-12 <= value <= exact + steps * TOL + 1e-12


# --- pure ε-DP event ------------------------------------------------------------------------------
@pytest.mark.parametrize("eps", [0.5, 1.0, 4.0])
def test_pure_dp_event_has_binary_randomized_responses_profile(eps):
    # Binary RR at ε: δ(ε′) = (e^ε − e^ε′)/(1 + e^ε) for ε′ ≤ ε (closed form of the hockey-stick divergence).
    pld = privacy_loss_distribution(pure_dp_event(eps))
    assert _on_grid_above(pld.get_epsilon_for_delta(0.0), eps)

    def delta(e2):
        return max(0.0, (math.exp(eps) - math.exp(e2)) / (1 + math.exp(eps)))

    for e2 in (0.0, eps / 3, eps / 2):  # losses rounded up by at most one step: δ(ε′) ≤ δ_pld ≤ δ(ε′ − step)
        assert delta(e2) - 1e-12 <= pld.get_delta_for_epsilon(e2) <= delta(e2 - TOL) + 1e-12


def test_pure_dp_event_edges():
    assert isinstance(pure_dp_event(0.0), dpa.NoOpDpEvent)
    assert isinstance(pure_dp_event(math.inf), dpa.NonPrivateDpEvent)
    with pytest.raises(InvalidParameterError, match="epsilon"):
        pure_dp_event(-1.0)


# --- built-in mechanisms without a native event -----------------------------------------------------
@pytest.mark.parametrize("monotonic", [False, True])
def test_exponential_event_gives_the_claimed_epsilon_and_bounds_every_pair(monotonic):
    mech = ExponentialMechanism(epsilon=1.3, monotonic=monotonic)
    assert isinstance(mech, AccountableMechanism)
    assert _on_grid_above(_pld_epsilon(mech, 0.0), mech.claim.epsilon)
    # Independent: the exact ε(δ) of concrete pairs (from the two pmfs) never exceeds the event's.
    rng = np.random.default_rng(0)
    for _ in range(5):
        x = rng.normal(size=4)
        step = rng.uniform(-1, 1, size=4)
        x_prime = x + (np.abs(step) * np.sign(step[0]) if monotonic else step) / np.abs(step).sum()  # ℓ₁ distance 1
        for delta in (0.0, 1e-3, 0.05):
            assert mech.exact_epsilon(delta, x, x_prime) <= _pld_epsilon(mech, delta) + TOL


def test_exponential_event_scales_with_the_score_distance():
    mech = ExponentialMechanism(epsilon=2.0, sensitivity=2.0)
    assert _on_grid_above(_pld_epsilon(mech, 0.0, distance=1.0), 1.0)
    assert isinstance(mech.dp_event(0.0), dpa.NoOpDpEvent)


def test_snapping_event_gives_the_claimed_epsilon_and_group_privacy():
    mech = SnappingLaplaceMechanism(epsilon=0.7, sensitivity=1.0, bound=20.0)
    assert _on_grid_above(_pld_epsilon(mech, 0.0), 0.7)
    assert _on_grid_above(_pld_epsilon(mech, 0.0, distance=0.5), 0.7)
    assert _on_grid_above(_pld_epsilon(mech, 0.0, distance=2.5), 2.1)  # ⌈2.5⌉ = 3 neighbours
    # Independent: the ideal snapping's log-pmf ratio on its support never exceeds the claim.
    x, x_prime = np.array([0.3]), np.array([1.3])
    grid = np.arange(-20, 21, dtype=float)[:, None] * mech.output_step
    grid = np.clip(grid, -20.0, 20.0)
    llr = mech.log_density(grid, x) - mech.log_density(grid, x_prime)
    assert np.max(np.abs(llr[np.isfinite(llr)])) <= mech.claim.epsilon + 1e-9


# --- external adapters --------------------------------------------------------------------------------
def test_opendp_adapters_events_match_their_exact_profiles():
    pytest.importorskip("opendp")
    from privaudit.mechanisms.external.opendp_mechanisms import (
        OpenDPDiscreteLaplace,
        OpenDPGaussian,
        OpenDPGaussianComposition,
        OpenDPLaplace,
        OpenDPLaplaceThreshold,
    )

    lap = OpenDPLaplace(scale=2.0, sensitivity=1.0)
    for delta in (1e-6, 1e-3):  # closed form Δ/b + 2 ln(1 − δ) (at δ = 0 the PLD's truncated tail gives ∞)
        assert _on_grid_above(_pld_epsilon(lap, delta), 0.5 + 2 * math.log1p(-delta))
    broken = OpenDPLaplace(scale=2.0, noise_scale=1.0)  # the event describes the noise drawn, not the claim
    assert _on_grid_above(_pld_epsilon(broken, 1e-6), 1.0 + 2 * math.log1p(-1e-6))
    assert broken.claim.epsilon == pytest.approx(0.5)

    gauss = OpenDPGaussian(scale=1.5, sensitivity=1.0)
    assert _on_grid_above(_pld_epsilon(gauss, 1e-5), gdp_epsilon(1 / 1.5, 1e-5), steps=2)
    assert _pld_epsilon(gauss, 1e-5) <= gauss.claim.epsilon + TOL  # OpenDP's zCDP conversion is not tighter

    dlap = OpenDPDiscreteLaplace(scale=2.0, sensitivity=1)
    # Independent: the hockey-stick divergence of P(k) ∝ exp(−|k|/b) against its shift by 1, summed directly.
    k = np.arange(-400, 401)
    p, q = np.exp(-np.abs(k) / 2.0), np.exp(-np.abs(k - 1) / 2.0)
    p, q = p / p.sum(), q / q.sum()
    pld = privacy_loss_distribution(dlap)
    for eps in (0.0, 0.2, 0.4):
        exact = max(np.maximum(p - math.exp(eps) * q, 0).sum(), np.maximum(q - math.exp(eps) * p, 0).sum())
        looser = max(np.maximum(p - math.exp(eps - TOL) * q, 0).sum(), np.maximum(q - math.exp(eps - TOL) * p, 0).sum())
        assert exact - 1e-12 <= pld.get_delta_for_epsilon(eps) <= looser + 1e-12

    comp = OpenDPGaussianComposition(scales=[1.0, 2.0], sensitivity=1.0)
    mu = math.sqrt(1 / 1.0**2 + 1 / 2.0**2)  # k Gaussians of one x are one Gaussian with μ² = Σ Δ²/σ_i²
    assert _on_grid_above(_pld_epsilon(comp, 1e-5), gdp_epsilon(mu, 1e-5), steps=3)

    threshold = OpenDPLaplaceThreshold(scale=1.0, threshold=5.0)
    assert isinstance(threshold.dp_event(), dpa.UnsupportedDpEvent)
    with pytest.raises(InvalidParameterError):
        privacy_loss_distribution(threshold)


def test_pydp_adapters_events_match_their_exact_profiles():
    pytest.importorskip("pydp")
    from privaudit.mechanisms.external.pydp_mechanisms import PyDPBoundedSum, PyDPGaussian, PyDPLaplace

    lap = PyDPLaplace(epsilon=1.0)
    assert _on_grid_above(_pld_epsilon(lap, 1e-6), lap.true_epsilon + 2 * math.log1p(-1e-6))
    gauss = PyDPGaussian(epsilon=1.0, delta=1e-5)
    assert _on_grid_above(_pld_epsilon(gauss, 1e-5), gdp_epsilon(gauss._exact.mu, 1e-5), steps=2)
    assert isinstance(PyDPBoundedSum(epsilon=1.0, lower=0.0, upper=1.0).dp_event(), dpa.UnsupportedDpEvent)


def test_opacus_adapter_event_is_the_gdp_of_its_steps():
    pytest.importorskip("opacus")
    from privaudit.mechanisms.accounting import event_epsilon
    from privaudit.mechanisms.external.opacus_canary import OpacusCanaryRuns

    runs = OpacusCanaryRuns(epsilon=2.0, delta=1e-5, epochs=4, sample_rate=1.0)
    # Full batch: T Gaussian steps of multiplier z are exactly √T/z-GDP (Dong, Roth & Su 2019, Cor. 3.3).
    assert _on_grid_above(event_epsilon(runs.dp_event(), 1e-5), gdp_epsilon(runs.exact_mu, 1e-5), steps=5)
    assert isinstance(runs.dp_event(0), dpa.NoOpDpEvent)
    with pytest.raises(InvalidParameterError, match="distance"):
        runs.dp_event(2)


def test_every_mechanism_class_states_a_dp_event():
    # AST scan: each public class in mechanisms/ that has a sample method and sets self.claim (a mechanism)
    # defines or inherits dp_event.
    import importlib

    missing, found = [], 0
    for path in sorted((ROOT / "mechanisms").rglob("*.py")):
        module = ".".join(("privaudit",) + path.relative_to(ROOT).with_suffix("").parts)
        source = path.read_text()
        for node in ast.parse(source).body:
            if not isinstance(node, ast.ClassDef) or node.name.startswith("_"):
                continue
            cls = getattr(importlib.import_module(module), node.name)
            sets_claim = any(isinstance(n, ast.Attribute) and n.attr == "claim" and isinstance(n.ctx, ast.Store)
                             for c in cls.__mro__ if c.__module__.startswith("privaudit")
                             for n in ast.walk(ast.parse(textwrap.dedent(inspect.getsource(c)))))
            if callable(getattr(cls, "sample", None)) and sets_claim:
                found += 1
                if not callable(getattr(cls, "dp_event", None)):
                    missing.append(f"{module}.{node.name}")
    assert found >= 20 and not missing, (found, missing)


# --- engines dispatch on protocols -----------------------------------------------------------------
class ThirdPartyGaussian:
    """A user's Gaussian mechanism: no privaudit base class, only the members of the protocols."""

    def __init__(self, sigma: float, sensitivity: float = 1.0) -> None:
        self._inner = GaussianMechanism(sigma=sigma, sensitivity=sensitivity)
        self.sigma, self.sensitivity, self.claim = self._inner.sigma, sensitivity, self._inner.claim

    def sample(self, x, n, rng=None):
        return self._inner.sample(x, n, rng)

    def log_density(self, outputs, x):
        return self._inner.log_density(outputs, x)

    def fisher_information(self, x):
        return self._inner.fisher_information(x)

    def tradeoff(self, alpha):
        return self._inner.tradeoff(alpha)

    def exact_epsilon(self, delta):
        return self._inner.exact_epsilon(delta)

    def dp_event(self, distance=None):
        return self._inner.dp_event(distance)


class ThirdPartyModulated:
    """A user's implementation of seed 000's modulated release (delegating the arithmetic, not the class)."""

    def __init__(self, **kw) -> None:
        self._inner = ModulatedMechanism(**kw)
        for k in ("dim", "alpha", "lam", "omega", "n_vectors", "sigma", "basis", "claim"):
            setattr(self, k, getattr(self._inner, k))

    lipschitz = property(lambda self: self._inner.lipschitz)

    def __repr__(self) -> str:
        return repr(self._inner)

    def sample(self, x, n, rng=None, *, phase=None):
        return self._inner.sample(x, n, rng, phase=phase)

    def release(self, X, rng=None, *, phase=None):
        return self._inner.release(X, rng, phase=phase)

    def fisher_information(self, x, phase=None):
        return self._inner.fisher_information(x, phase)

    def marginal_fisher_information(self, x=None):
        return self._inner.marginal_fisher_information(x)

    def with_basis(self, basis):
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        new._inner = self._inner.with_basis(basis)
        new.basis = new._inner.basis
        return new

    def tradeoff(self, alpha):
        return self._inner.tradeoff(alpha)

    def dp_event(self, distance=None):
        return self._inner.dp_event(distance)


def test_builtins_satisfy_their_protocols():
    g = GaussianMechanism(sigma=1.0)
    m = ModulatedMechanism(alpha=0.3, lam=0.5, omega=2.0, dim=3, sigma=1.0)
    assert isinstance(g, IsotropicGaussianRelease) and not isinstance(g, ModulatedRelease)
    assert isinstance(m, ModulatedRelease) and not isinstance(m, IsotropicGaussianRelease)
    assert isinstance(g, Mechanism) and isinstance(g, HasDensity) and isinstance(g, HasExactTradeoff)
    assert not isinstance(LaplaceMechanism(epsilon=1.0), IsotropicGaussianRelease)
    assert isinstance(ThirdPartyGaussian(1.0), IsotropicGaussianRelease)
    assert isinstance(ThirdPartyModulated(alpha=0.3, lam=0.5, omega=2.0, dim=3, sigma=1.0), ModulatedRelease)
    assert isinstance(DiscretePrior(np.eye(2)), FinitePrior) and not isinstance(GaussianPrior(np.zeros(2), np.eye(2)), FinitePrior)


def _same(va, vb, where):
    if dataclasses.is_dataclass(va) and not isinstance(va, type):  # a sub-result (bound, curve, band, ...)
        assert type(va) is type(vb), (where, type(va), type(vb))
        for f in dataclasses.fields(va):
            _same(getattr(va, f.name), getattr(vb, f.name), f"{where}.{f.name}")
    elif isinstance(va, dict):
        assert va.keys() == vb.keys(), where
        for k in va:
            _same(va[k], vb[k], f"{where}[{k}]")
    elif isinstance(va, np.ndarray) or isinstance(vb, np.ndarray):
        assert np.array_equal(np.asarray(va), np.asarray(vb), equal_nan=True), where
    else:
        assert va == vb or (va != va and vb != vb), (where, va, vb)


def _same_fields(a, b, skip=("target",)):
    for f in a.__dataclass_fields__:
        if f not in skip:
            _same(getattr(a, f), getattr(b, f), f)


def test_third_party_gaussian_gets_the_builtins_tradeoff_audit():
    # Same suite, same exact curve and exact ε. The likelihood ratio is left out of the comparison: for the
    # built-in class it uses an algebraically equal closed form whose last bits differ.
    assert default_attackers(ThirdPartyGaussian(1.0)) == default_attackers(GaussianMechanism(sigma=1.0))
    x, xp = np.zeros(1), np.ones(1)
    suite = ["projection", "atom", "lattice"]
    ours = audit_tradeoff(GaussianMechanism(sigma=1.0), x, xp, n=3000, rng=4, attacker=suite)
    theirs = audit_tradeoff(ThirdPartyGaussian(1.0), x, xp, n=3000, rng=4, attacker=suite)
    assert theirs.exact_curve is not None and theirs.epsilon_exact is not None
    _same_fields(ours, theirs)


@pytest.mark.parametrize("kw", [{}, {"phase": "hidden"}, {"phase": np.array([0.4])},
                                {"prior": GaussianPrior(np.zeros(3), np.eye(3))},
                                {"prior": DiscretePrior(np.array([[0.0, 0.0, 0.0], [1.0, 1.0, 0.0]]))}])
def test_third_party_modulated_gets_the_builtins_reconstruction_audit(kw):
    params = dict(alpha=0.3, lam=0.5, omega=2.0, dim=3, sigma=0.8)
    ours = audit_reconstruction(ModulatedMechanism(**params), "naive", n=500, rng=2, **kw)
    theirs = audit_reconstruction(ThirdPartyModulated(**params), "naive", n=500, rng=2, **kw)
    _same_fields(ours, theirs)
    assert theirs.crb is not None or theirs.rero is not None


def test_third_party_gaussian_gets_the_builtins_bounds():
    ours, theirs = GaussianMechanism(sigma=0.7), ThirdPartyGaussian(0.7)
    x = np.array([0.2, -0.1])
    assert np.array_equal(release_fisher(ours, x), release_fisher(theirs, x))
    assert hammersley_chapman_robbins(ours, x) == hammersley_chapman_robbins(theirs, x)
    prior = DiscretePrior(np.array([[0.0, 0.0], [1.0, 0.0]]))
    assert rero_mu(ours, prior) == rero_mu(theirs, prior) == pytest.approx(1 / 0.7)
    a = audit_reconstruction(ours, "naive", x=x, n=400, rng=1)
    b = audit_reconstruction(theirs, "naive", x=x, n=400, rng=1)
    _same_fields(a, b)


def test_distinguisher_traits_defaults_and_declarations():
    class Bare:
        def fit(self, *a, **k):
            return self

        def score(self, outputs):
            return np.zeros(len(outputs))

    assert isinstance(Bare(), Distinguisher) and not isinstance(Bare(), Reconstructor)
    assert distinguisher_traits(Bare()) == DistinguisherTraits()
    from privaudit.attacks.distinguishers import LikelihoodRatioAttack

    t = distinguisher_traits(LikelihoodRatioAttack())
    assert (t.requires_training, t.requires_density, t.llr_scores) == (False, True, True)


def test_declares_unbiased_reads_the_method_then_the_attribute():
    class Flag:
        unbiased = True

    class Method:
        unbiased = True

        @classmethod
        def is_unbiased(cls, mechanism, *, information="known"):
            return information == "hidden"

    assert declares_unbiased(Flag, None) and not declares_unbiased(object(), None)
    assert declares_unbiased(Method, None, "hidden") and not declares_unbiased(Method, None, "known")


CONCRETE = {"GaussianMechanism", "ModulatedMechanism", "LaplaceMechanism", "RandomizedResponse", "DiscretePrior",
            "ExponentialMechanism", "SnappingLaplaceMechanism", "DiscreteGaussianMechanism",
            "DiscreteLaplaceMechanism", "UnsafeFloatGaussianMechanism", "UnsafeFloatLaplaceMechanism"}


@pytest.mark.parametrize("rel", ["audit/engines/tradeoff.py", "audit/engines/reconstruction.py",
                                 "audit/engines/bias.py", "audit/engines/calibration.py",
                                 "audit/engines/pair_search.py", "audit/dpsgd/opacus.py",
                                 "audit/stats/estimation_bounds.py", "audit/stats/fisher.py"])
def test_engines_never_dispatch_on_a_concrete_mechanism_class(rel):
    tree = ast.parse((ROOT / rel).read_text())
    bad = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("isinstance", "issubclass"):
            names = {n.id for n in ast.walk(node.args[1]) if isinstance(n, ast.Name)}
            bad += sorted(names & CONCRETE)
    assert not bad, f"{rel}: isinstance on {bad}"
