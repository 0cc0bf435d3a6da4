"""Bayesian attackers read a prior through methods (gaussian_moments, WeightedFinitePrior), not its class."""

from __future__ import annotations

import numpy as np
import pytest

from privaudit.attacks.bayesian_reconstruction import DiscreteMAP, MAPAttack, PosteriorMean
from privaudit.attacks.priors import DiscretePrior, GaussianPrior
from privaudit.attacks.protocol import (GaussianMoments, HasGaussianMoments, WeightedFinitePrior,
                                        gaussian_moments)
from privaudit.mechanisms import GaussianMechanism, InvalidParameterError, ModulatedMechanism


class UserGaussianPrior:
    """A third-party Gaussian prior: only dim, sample and gaussian_moments."""

    def __init__(self, mean, cov) -> None:
        self._m = GaussianMoments(np.asarray(mean, float), np.asarray(cov, float), np.linalg.inv(cov))
        self.dim = self._m.dim

    def sample(self, n, rng=None):
        return np.random.default_rng(rng).multivariate_normal(self._m.mean, self._m.cov, n)

    def gaussian_moments(self) -> GaussianMoments:
        return self._m


class UserFinitePrior:
    """A third-party finite prior: support, probs and kappa."""

    def __init__(self, support, probs) -> None:
        self.support, self.probs = np.asarray(support, float), np.asarray(probs, float)
        self.kappa, self.dim = float(self.probs.max()), self.support.shape[1]

    def sample(self, n, rng=None):
        return self.support[np.random.default_rng(rng).choice(len(self.probs), n, p=self.probs)]


class Opaque:
    """A prior that says nothing about its form."""

    dim = 2

    def sample(self, n, rng=None):
        return np.zeros((n, 2))


def test_the_shipped_priors_say_what_they_are():
    g = GaussianPrior(np.ones(2), [0.5, 0.2])
    m = gaussian_moments(g)
    assert isinstance(g, HasGaussianMoments) and m.dim == 2
    np.testing.assert_array_equal(m.precision, g.precision)
    d = DiscretePrior([[0.0, 0.0], [1.0, 1.0]])
    assert gaussian_moments(d) is None and isinstance(d, WeightedFinitePrior)
    assert gaussian_moments(None) is None and gaussian_moments(Opaque()) is None


@pytest.mark.parametrize("mech", [GaussianMechanism(sigma=0.7),
                                  ModulatedMechanism(alpha=0.4, lam=0.5, omega=1.2, dim=2, sigma=0.8)])
@pytest.mark.parametrize("attacker", [PosteriorMean, MAPAttack])
def test_a_user_gaussian_prior_gets_the_conjugate_attackers(mech, attacker):
    cov = np.array([[0.5, 0.0], [0.0, 0.3]])
    ours, theirs = GaussianPrior(np.zeros(2), cov), UserGaussianPrior(np.zeros(2), cov)
    assert attacker.applicable(mech, prior=theirs) and attacker.applicable(mech, prior=ours)
    assert not attacker.applicable(mech, prior=Opaque())
    assert not attacker.applicable(mech, prior=DiscretePrior([[0.0, 0.0], [1.0, 1.0]]))
    rng = np.random.default_rng(0)
    phase = rng.uniform(0, 2 * np.pi, (50, 1))
    out = mech.release(np.tile([0.3, -0.2], (50, 1)), rng, phase=phase) if hasattr(mech, "basis") else \
        mech.sample(np.array([0.3, -0.2]), 50, rng)
    kw = {"phase": phase} if hasattr(mech, "basis") else {}
    np.testing.assert_array_equal(attacker(mech, prior=theirs).reconstruct(out, **kw),
                                  attacker(mech, prior=ours).reconstruct(out, **kw))
    with pytest.raises(InvalidParameterError, match="needs a GaussianPrior"):
        attacker(mech, prior=Opaque()).reconstruct(out, **kw)


def test_a_user_finite_prior_gets_the_discrete_map():
    support, probs = [[0.0, 0.0], [1.0, -1.0], [2.0, 0.5]], [0.2, 0.5, 0.3]
    mech = GaussianMechanism(sigma=0.7)
    theirs, ours = UserFinitePrior(support, probs), DiscretePrior(support, probs)
    assert DiscreteMAP.applicable(mech, prior=theirs) and not DiscreteMAP.applicable(mech, prior=Opaque())
    out = mech.sample(np.array([1.0, -1.0]), 100, 1)
    np.testing.assert_array_equal(DiscreteMAP(mech, prior=theirs).reconstruct(out),
                                  DiscreteMAP(mech, prior=ours).reconstruct(out))
