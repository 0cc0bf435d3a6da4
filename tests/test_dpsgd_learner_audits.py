"""The DP-SGD audit methods applied to Cond-DP, Opacus' variants, FedAvg, the modulated transcript and IWP (issue 26)."""

import math

import numpy as np
import pytest
from scipy.stats import chi2, norm

from privaudit.audit.dpsgd.learner_canaries import (
    conddp_canary_steps,
    fedavg_canary_steps,
    poisson_scores,
    release_view_scores,
    shuffled_pair_epsilon,
    shuffled_scores,
)
from privaudit.audit.dpsgd.learner_methods import audit_dpsgd_learner, check_learner_options
from privaudit.audit.dpsgd.whitebox import random_signs
from privaudit.audit.verdicts import Verdict
from privaudit.mechanisms.accounting import gdp_epsilon, zcdp_rho
from privaudit.mechanisms.validation import InvalidInputError, InvalidParameterError

#: Two-sided level of the statistical checks below (each at a fixed seed).
Z = norm.ppf(1 - 1e-4 / 2)


def _shift_and_noise(steps, signs):
    """(half the mean difference of the two signs, pooled within-sign std, its number of observations)."""
    pos, neg = steps[:, signs > 0].ravel(), steps[:, signs < 0].ravel()
    shift = (pos.mean() - neg.mean()) / 2
    pooled = np.concatenate([pos - pos.mean(), neg - neg.mean()])
    return shift, pooled.std(ddof=2), pos.size, neg.size


def _check_gaussian_step(obs, z):
    """The observations are ±1 + N(0, z²): the shift within Z standard errors, the variance in its χ² interval."""
    shift, sd, n1, n0 = _shift_and_noise(obs.steps, obs.signs)
    se = z * math.sqrt(1 / n1 + 1 / n0) / 2
    assert abs(shift - 1.0) <= Z * se
    dof = n1 + n0 - 2
    assert chi2.ppf(1e-4 / 2, dof) / dof <= (sd / z) ** 2 <= chi2.ppf(1 - 1e-4 / 2, dof) / dof


# --- canary observations ------------------------------------------------------------------------
def test_conddp_label_canaries_see_a_unit_shift_and_the_claimed_noise():
    signs = random_signs(400, 3)
    obs = conddp_canary_steps(signs, epsilon=2.0, epochs=10, rng=4)
    assert obs.steps.shape == (10, 400) and obs.adjacency == "label" and obs.sampling_rate == 1.0
    assert obs.noise_multiplier == obs.claim_noise_multiplier
    # The learner's claim for T label-DP steps of z is exact (PLD): the target ε.
    assert obs.epsilon_exact == pytest.approx(2.0, abs=1e-6)
    _check_gaussian_step(obs, obs.noise_multiplier)


def test_conddp_canaries_stay_dirac_under_conditioning():
    # Ĉ of the public matrix [data | identity block of the canaries] keeps the canaries' block diagonal:
    # conditioned canary i is a multiple of e_{dim+i}, so its clipped gradient stays on its own coordinate.
    from privaudit.learners.conditioning import conditioning_matrix

    X = np.zeros((20 + 30, 3 + 30))
    X[:20, :3] = np.random.default_rng(0).standard_normal((20, 3))
    X[20 + np.arange(30), 3 + np.arange(30)] = 1.0
    C = conditioning_matrix(X).matrix
    canary_rows = (X @ C)[20:]
    off = canary_rows.copy()
    off[np.arange(30), 3 + np.arange(30)] = 0.0
    assert np.abs(off).max() <= 1e-9 * np.abs(canary_rows).max()


def test_conddp_noise_scale_trains_with_less_noise_under_the_same_claim():
    obs = conddp_canary_steps(random_signs(300, 5), epsilon=2.0, epochs=10, noise_scale=0.25, rng=6)
    assert obs.noise_multiplier == pytest.approx(0.25 * obs.claim_noise_multiplier)
    _check_gaussian_step(obs, obs.noise_multiplier)


def test_fedavg_transcript_is_the_exact_claim():
    signs = random_signs(400, 7)
    obs = fedavg_canary_steps(signs, epsilon=2.0, rounds=10, rng=8)
    assert obs.adjacency == "replace-one" and obs.steps.shape == (10, 400)
    # Gaussian conversion is exact: μ = sqrt(2ρ) = 2√T/z and the claimed ε is that μ's.
    mu = math.sqrt(2 * zcdp_rho(2.0, 1e-5, "gaussian"))
    assert 2 * math.sqrt(10) / obs.claim_noise_multiplier == pytest.approx(mu, rel=1e-9)
    assert obs.epsilon_exact == pytest.approx(gdp_epsilon(mu, 1e-5), abs=1e-6)
    _check_gaussian_step(obs, obs.noise_multiplier)


def test_fedavg_noise_scale_scales_sigma_exactly():
    honest = fedavg_canary_steps(random_signs(50, 1), epsilon=2.0, rng=2)
    broken = fedavg_canary_steps(random_signs(50, 1), epsilon=2.0, noise_scale=0.25, rng=2)
    assert broken.claim_noise_multiplier == pytest.approx(honest.claim_noise_multiplier, rel=1e-9)
    assert broken.noise_multiplier == pytest.approx(0.25 * honest.noise_multiplier, rel=1e-9)


# --- likelihood-ratio scores against brute force --------------------------------------------------
def test_shuffled_scores_are_the_per_epoch_likelihood_ratio():
    rng = np.random.default_rng(0)
    epochs, k, m, z = 3, 4, 5, 0.7
    o = rng.standard_normal((epochs * k, m))
    brute = np.zeros(m)
    for i in range(m):
        for e in range(epochs):
            brute[i] += math.log(sum(math.exp((o[e * k + t, i] - 0.5) / z**2) for t in range(k)) / k)
    got = shuffled_scores(o, z, epochs)
    # Constants dropped: the scores differ from the log-ratio by the same amount for every canary.
    assert np.allclose(got - brute, (got - brute)[0], atol=1e-9)
    with pytest.raises(InvalidInputError, match="epochs"):
        shuffled_scores(o[:-1], z, epochs)


def test_shuffled_pair_epsilon_is_the_gaussian_one_with_one_batch():
    # k = 1 batch per epoch: the canary is in every step, E epochs of N(1, z²) against N(0, z²): exactly √E/z-GDP.
    delta = 1e-3
    eps, tail = shuffled_pair_epsilon(1.0, 1, 4, delta, n=200_000, rng=0)
    # Monte Carlo error of δ̂ at the returned ε is ~ δ/√tail: the exact ε must lie within ±5 such errors of δ.
    rel = 5 / math.sqrt(tail)
    assert gdp_epsilon(2.0, delta * (1 + rel)) <= eps <= gdp_epsilon(2.0, delta * (1 - rel))


def test_shuffled_pair_is_less_distinguishable_than_full_participation():
    # Hiding the canary's step among k = 10 (one epoch) can only lower its ε below one Gaussian step's.
    eps, _ = shuffled_pair_epsilon(0.7, 10, 1, 1e-5, n=100_000, rng=1)
    assert eps < gdp_epsilon(1 / 0.7, 1e-5)


def test_poisson_scores_are_the_subsampled_likelihood_ratio():
    rng = np.random.default_rng(1)
    o = 3 * rng.standard_normal((6, 4))
    q, z = 0.2, 0.5
    brute = [sum(math.log(1 - q + q * math.exp((o[t, i] - 0.5) / z**2)) for t in range(6)) for i in range(4)]
    assert np.allclose(poisson_scores(o, z, q), brute, rtol=1e-12)
    assert np.allclose(poisson_scores(o, z, 1.0), ((o - 0.5) / z**2).sum(0))


def test_release_view_scores_match_the_closed_form_for_iwp():
    from privaudit.learners import IWPSGDClassifier

    view = IWPSGDClassifier(epsilon=2.0, bounds=(-np.ones(3), np.ones(3))).release_view(dim=3, rng=0)
    setup = view.tradeoff_setup()
    signs = random_signs(200, 2)
    scores = release_view_scores(setup, signs, 3)
    # Against the closed-form law of the score: the Gaussian features' log-ratio plus randomized response's.
    fm, lm = view.feature_mechanism, view.label_mechanism
    x0, x1 = setup.x[:-1], setup.x_prime[:-1]
    d2 = float(np.sum((x1 - x0) ** 2))
    llr_label = math.log(lm.keep_probability / (1 - lm.keep_probability))
    # E[score | x′] = ‖Δ‖²/(2σ²) + (2p − 1)·llr_label, E[score | x] its negative; Var = ‖Δ‖²/σ² + label part.
    mean1 = d2 / (2 * fm.sigma**2) + (2 * lm.keep_probability - 1) * llr_label
    var = d2 / fm.sigma**2 + llr_label**2 * (1 - (2 * lm.keep_probability - 1) ** 2)
    for side, mean in ((1, mean1), (-1, -mean1)):
        s = scores[signs == side]
        assert abs(s.mean() - mean) <= Z * math.sqrt(var / s.size)


# --- Opacus variants ------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["functorch", "ghost"])
def test_opacus_grad_samplers_release_the_same_steps_as_hooks(mode):
    pytest.importorskip("opacus")
    from privaudit.mechanisms.external.opacus_canary import train_opacus_canaries

    include = np.array([True, False, True, True, False])
    kw = dict(noise_multiplier=1.3, n_data=6, epochs=3, sample_rate=0.5, rng=11)
    hooks = train_opacus_canaries(include, grad_sample_mode="hooks", **kw)
    other = train_opacus_canaries(include, grad_sample_mode=mode, **kw)
    assert np.allclose(hooks.steps, other.steps, atol=1e-9) and np.allclose(hooks.final, other.final, atol=1e-9)


def test_opacus_spec_runs_are_the_calibrating_runs():
    pytest.importorskip("opacus")
    from privaudit.audit.dpsgd.whitebox import opacus_canary_steps
    from privaudit.audit.dpsgd.learner_canaries import opacus_spec_canary_steps
    from privaudit.mechanisms.external.opacus_canary import OpacusCanaryRuns

    signs = random_signs(12, 0)
    spec = OpacusCanaryRuns(epsilon=4.0, epochs=2, sample_rate=0.5, grad_sample_mode="ghost")
    ours = opacus_spec_canary_steps(spec, signs, noise_scale=0.5, rng=9)
    theirs = opacus_canary_steps(signs, epsilon=4.0, epochs=2, sample_rate=0.5, grad_sample_mode="ghost",
                                 noise_scale=0.5, rng=9)
    assert np.array_equal(ours.steps, theirs.steps)
    assert (ours.noise_multiplier, ours.claim_noise_multiplier) == (theirs.noise_multiplier,
                                                                    theirs.claim_noise_multiplier)
    assert ours.epsilon_exact == pytest.approx(theirs.epsilon_exact, rel=1e-12)


def test_opacus_shuffled_batches_hold_each_included_canary_once_per_epoch():
    pytest.importorskip("opacus")
    from privaudit.mechanisms.external.opacus_canary import train_opacus_canaries

    include = np.array([True, False] * 6)
    run = train_opacus_canaries(include, noise_multiplier=1e-9, n_data=8, epochs=3, sample_rate=0.25,
                                sampling="shuffle", rng=5)
    N = 8 + include.sum()
    k = math.ceil(N / round(0.25 * N))
    per_epoch = np.round(run.steps).reshape(3, k, include.size)
    assert np.all(per_epoch[:, :, include].sum(axis=1) == 1) and np.all(per_epoch[:, :, ~include] == 0)
    with pytest.raises(InvalidParameterError, match="sampling"):
        train_opacus_canaries(include, noise_multiplier=1.0, sampling="fixed")


# --- the audits -----------------------------------------------------------------------------------
def test_fedavg_negative_control_is_caught_and_the_honest_learner_passes():
    honest = audit_dpsgd_learner(learner="fedavg", epsilon=2.0, canaries=400, whitebox_runs=3, cp_runs=200, rng=0)
    broken = audit_dpsgd_learner(learner="fedavg", epsilon=2.0, canaries=400, whitebox_runs=3, cp_runs=200,
                                 noise_scale=0.25, rng=0)
    assert honest.verdict == Verdict.PASS and broken.verdict == Verdict.VIOLATION
    names = [m["method"] for m in honest.methods]
    assert names[:2] == ["per-step composed (claim's PLD/GDP)", "black box: final model, Clopper–Pearson"]
    assert sum(m["certified"] for m in honest.methods) == 4
    # The per-step estimate of the broken run sees its real noise: far above the claim (exact ε of z/4 ≈ 9.7).
    assert broken.methods[0]["epsilon_hat"] > 6.0


def test_local_releases_report_the_pair_exact_epsilon_and_drop_gaussian_for_iwp():
    iwp = audit_dpsgd_learner(learner="iwp", epsilon=2.0, canaries=200, cp_runs=2000, rng=1)
    assert [m["method"] for m in iwp.methods][0] == "Clopper–Pearson over clients"
    # Randomized response makes the curve non-Gaussian: the f-DP GDP row is labelled, not certified, and no
    # Gaussian estimate is shown; the three certified methods share the confidence.
    certified = {m["method"]: m["certified"] for m in iwp.methods}
    assert certified == {"Clopper–Pearson over clients": True, "one run: Steinke et al.": True,
                         "one run: f-DP, (ε, δ) curve": True, "one run: f-DP, GDP curve": False}
    assert iwp.epsilon_lb == max(m["epsilon_lb"] for m in iwp.methods if m["certified"])
    assert all(m["confidence"] == pytest.approx(1 - 0.05 / 3) for m in iwp.methods)
    assert iwp.epsilon_exact <= iwp.claim.epsilon + 1e-9
    mod = audit_dpsgd_learner(learner="modulated", epsilon=2.0, epochs=5, canaries=200, cp_runs=2000, rng=1)
    assert any(not m["certified"] for m in mod.methods)
    assert mod.epsilon_exact < mod.claim.epsilon and mod.verdict == Verdict.PASS


@pytest.mark.parametrize("kw, match", [
    (dict(learner="conddp", cp_runs=10), "cp_runs"),
    (dict(learner="fedavg", sampling="poisson"), "sampling"),
    (dict(learner="iwp", grad_sample_mode="ghost"), "grad_sample_mode"),
    (dict(learner="modulated", noise_scale=0.5), "noise_scale"),
    (dict(learner="sgd"), "learner"),
])
def test_options_that_do_not_suit_the_learner_are_refused(kw, match):
    with pytest.raises(InvalidParameterError, match=match):
        check_learner_options(**kw)


def test_kind_check_names_the_entry():
    from privaudit.audit.kinds.dpsgd import LEARNERS_FIELDS, check_learners
    from privaudit.audit.schema.fields import ConfigValueError

    params = {k: f.default for k, f in LEARNERS_FIELDS.items()} | {"learner": "opacus", "cp_runs": 5}
    with pytest.raises(ConfigValueError, match=r"audits\[3\].*cp_runs"):
        check_learners("audits[3]", params)
    params = {k: f.default for k, f in LEARNERS_FIELDS.items()} | {"canaries": 100, "one_run_canaries": 200}
    with pytest.raises(ConfigValueError, match=r"audits\[3\]: one_run_canaries \(200\) must be <= canaries \(100\)"):
        check_learners("audits[3]", params)


def test_every_uncertified_method_is_starred_in_the_committed_dpsgd_report():
    """A method's star is read from its own `certified` flag: f-DP GDP is certified on a Gaussian curve and
    only an estimate on IWP's or a Poisson-sampled one, and the row must say which."""
    import json
    import pathlib

    from privaudit.audit.kinds import entry_from_dict
    from privaudit.audit.kinds.dpsgd import _SHORT, headline

    report = json.loads((pathlib.Path(__file__).parents[1] / "reports" / "dpsgd" / "report.json").read_text())
    checked = 0
    for raw in report["audits"]:
        entry = entry_from_dict(raw)
        text = headline(entry)
        for m in entry.result.methods:
            name = _SHORT.get(m["method"], m["method"])
            starred = f"{name}* " in text
            assert starred == (not m["certified"]), (entry.label, name, text)
            checked += not m["certified"] and m["method"] == "one run: f-DP, GDP curve"
    assert checked >= 2  # the IWP rows' f-DP GDP is uncertified: the case this test is for
