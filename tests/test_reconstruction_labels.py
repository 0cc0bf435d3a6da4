"""Label attacks: RR posterior, RR-on-Bins recovery, white-box DP-SGD label inference.

Monte Carlo checks follow conftest's tolerance policy (binomial standard errors); seeds are fixed.
"""

import math

import numpy as np
import pytest
import torch
from conftest import assert_within_se, binomial_se
from scipy.stats import norm

from privaudit.attacks.labels import DPSGDLabelInference, RRLabelPosterior, RROnBinsLabelAttack
from privaudit.audit.stats.estimation_bounds import rero_bound
from privaudit.learners.dpsgd import DPSGDEngine
from privaudit.learners.rr_on_bins import RROnBinsRegressor
from privaudit.mechanisms import InvalidInputError, RandomizedResponse


def test_rr_posterior_bayes_rule_and_accuracy():
    mech = RandomizedResponse(epsilon=1.0, categories=(-1, 1))
    rng = np.random.default_rng(1)
    n = 40_000
    pi_pos = rng.uniform(0.05, 0.95, n)  # feature prior π(y = +1 | x)
    prior = np.stack([1 - pi_pos, pi_pos], 1)
    y = np.where(rng.random(n) < pi_pos, 1.0, -1.0)
    released = mech.release(y, rng)
    att = RRLabelPosterior(mech)
    post = att.predict_proba(released, prior)
    p, q = mech.keep_probability, mech.flip_probability
    lik_pos = np.where(released == 1, p, q)
    lik_neg = np.where(released == -1, p, q)
    np.testing.assert_allclose(post[:, 1], pi_pos * lik_pos / (pi_pos * lik_pos + (1 - pi_pos) * lik_neg), rtol=1e-12)
    acc = np.mean(att.predict(released, prior) == y)
    # Exact Bayes accuracy: Σ_ỹ max_y π(y)P(ỹ | y), averaged over the feature priors.
    exact = np.mean(np.maximum(pi_pos * p, (1 - pi_pos) * q) + np.maximum(pi_pos * q, (1 - pi_pos) * p))
    assert_within_se(acc, exact, binomial_se(exact, n))
    # ReRo per sample: success ≤ 1 − f(κ(x)) with f the RR trade-off curve.
    kappa = np.maximum(pi_pos, 1 - pi_pos)[:500]
    per_sample = (np.maximum(pi_pos * p, (1 - pi_pos) * q) + np.maximum(pi_pos * q, (1 - pi_pos) * p))[:500]
    bound = np.array([rero_bound(k, mech.tradeoff) for k in kappa])
    assert np.all(per_sample <= bound + 1e-12)
    with pytest.raises(InvalidInputError):
        att.predict_proba(released[:3], np.ones((3, 3)))


def test_rr_on_bins_posterior_mean_is_the_representative_and_features_help():
    rng = np.random.default_rng(2)
    n = 20_000
    x = rng.normal(size=n)
    y = np.clip(0.5 + 0.2 * x + 0.05 * rng.normal(size=n), 0, 1)
    learner = RROnBinsRegressor(epsilon=2.0, label_bounds=(0, 1), n_support=64, random_state=3)
    noisy = learner.privatize(y, rng=3)
    att = RROnBinsLabelAttack(learner)
    # With the learner's own prior, E[y | output] is exactly the optimal representative.
    np.testing.assert_allclose(att.predict(noisy), noisy, atol=1e-9)
    # A feature prior (public model of y given x) improves recovery beyond the release.
    s = learner.support_
    feat = norm.pdf(s[None, :], loc=(0.5 + 0.2 * x)[:, None], scale=0.06)
    rec = att.predict(noisy, feat)
    mse_rel, mse_att = np.mean((noisy - y) ** 2), np.mean((rec - y) ** 2)
    assert mse_att < 0.5 * mse_rel
    with pytest.raises(InvalidInputError):
        att.predict(np.array([0.123456]))


def test_dpsgd_white_box_label_inference_matches_likelihood_ratio():
    rng = np.random.default_rng(4)
    n, d, runs, steps, z = 30, 3, 400, 4, 2.0
    X = np.c_[rng.normal(size=(n, d)) / math.sqrt(d), np.ones(n)]
    y_base = X[:, :d] @ np.array([0.5, -0.3, 0.2]) + 0.1 * rng.normal(size=n)
    target, cands = 0, np.array([-1.0, 1.0])
    truth = rng.integers(0, 2, runs)
    Y = np.tile(y_base, (runs, 1))
    Y[:, target] = cands[truth]
    log = []

    def keep(info):
        log.append(type(info)(**{**info.__dict__, "params": info.params.clone(), "noisy_sum": info.noisy_sum.clone()}))

    eng = DPSGDEngine(noise_multiplier=z, clip=1.0, epochs=steps, lr=0.5, optimizer="sgd", callback=keep,
                      random_state=5)
    eng.train_linear(X, Y, np.zeros((runs, d + 1)))
    assert len(log) == steps
    att = DPSGDLabelInference(candidates=cands, clip=1.0)
    success = att.predict(log, X, Y, target) == cands[truth]
    # Independent check: the two-point likelihood-ratio test succeeds w.p. Φ(Δ/2), with
    # Δ² = Σ_t ‖clip(g(y₁)) − clip(g(y₂))‖²/(zc)² computed from the same iterates.
    xi = X[target]
    delta2 = np.zeros(runs)
    for st in log:
        pred = st.params.numpy() @ xi
        g = 2 * (pred[:, None] - cands[None, :]) * np.linalg.norm(xi)
        g = np.sign(g) * np.minimum(np.abs(g), 1.0)
        delta2 += (g[:, 0] - g[:, 1]) ** 2 / z**2
    expected = np.mean(norm.cdf(np.sqrt(delta2) / 2))
    assert_within_se(success.mean(), expected, binomial_se(expected, runs))
    # ReRo under label DP: T full-batch Gaussian steps of sensitivity 2c: μ = 2√T/z.
    assert 0.6 < expected <= rero_bound(0.5, mu=2 * math.sqrt(steps) / z) < 1
    post = att.predict_proba(log, X, Y, target)
    np.testing.assert_allclose(post.sum(1), 1.0)
    assert torch.is_tensor(log[0].params)


def test_clipped_gradient_sum_matches_autograd():
    # mechanisms.clipping (used by the dpsgd-label attacker) against per-example autograd gradients.
    import torch

    from privaudit.mechanisms.clipping import linear_clipped_grad_sum

    rng = np.random.default_rng(7)
    X = torch.as_tensor(rng.normal(size=(9, 4)))
    Y = torch.as_tensor(rng.normal(size=(2, 9)))
    theta = torch.as_tensor(rng.normal(size=(2, 4)))
    clip = torch.tensor([0.5, 3.0], dtype=torch.float64)
    mask = torch.as_tensor((rng.random((2, 9)) < 0.7).astype(float))
    got, norms = linear_clipped_grad_sum(theta, X, Y, clip, mask)
    for r in range(2):
        total = torch.zeros(4, dtype=torch.float64)
        for i in range(9):
            th = theta[r].clone().requires_grad_(True)
            ((th @ X[i] - Y[r, i]) ** 2).backward()
            g = th.grad
            assert float(norms[r, i]) == pytest.approx(float(g.norm()), rel=1e-12)
            total += mask[r, i] * g * min(1.0, float(clip[r] / g.norm()))
        np.testing.assert_allclose(got[r].numpy(), total.numpy(), rtol=1e-12, atol=1e-12)
