"""Tests of audit_bias: level, power, shapes, chunked moments, fallbacks and validation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from privaudit.audit import BiasAudit, audit_bias
from privaudit.audit.engines.bias import _Moments, holm_reject, required_draws
from privaudit.mechanisms.validation import InvalidInputError, InvalidParameterError, ParameterTypeError

# Binomial acceptance bands for 200 seeded runs: a correct implementation fails one
# of them with probability 1e-3.
RUNS = 200
BAND = 1e-3


def gaussian_sampler(mean, cov):
    mean = np.asarray(mean, float)
    chol = np.linalg.cholesky(np.asarray(cov, float))

    def sampler(n, rng):
        return mean + rng.standard_normal((n, mean.size)) @ chol.T

    return sampler


def test_unbiased_gaussian_passes_and_fields_are_consistent():
    cov = [[1.0, 0.5, 0.0], [0.5, 2.0, 0.3], [0.0, 0.3, 0.5]]
    a = audit_bias(gaussian_sampler([1.0, -2.0, 0.5], cov), [1.0, -2.0, 0.5], n=20_000, rng=3, name="g")
    assert isinstance(a, BiasAudit) and a.kind == "bias"
    assert a.test == "hotelling-T2" and a.verdict == "pass" and not a.detected
    assert a.target == "g" and a.n == 20_000 and a.seed == 3 and a.shape == (3,)
    # The CI brackets the estimate and is Bonferroni-wide: half-width t_{1-α/6}·s/√n.
    half = stats.t.isf(0.05 / 6, 19_999) * np.asarray(a.std) / math.sqrt(20_000)
    ci = np.asarray(a.bias_ci)
    np.testing.assert_allclose(ci[:, 1] - ci[:, 0], 2 * half, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(a.std) ** 2, np.diag(cov), rtol=0.05)  # 5% ≈ 7 s.e. of a variance at n=2e4
    d = a.to_dict()
    assert d["kind"] == "bias" and d["verdict"] == "pass" and len(d["bias_ci"]) == 3


def test_planted_bias_is_detected_and_localised():
    a = audit_bias(gaussian_sampler([0, 0, 0.05], np.eye(3)), np.zeros(3), n=20_000, rng=1)
    # 0.05 = 7 standard errors: detection is certain for practical purposes.
    assert a.detected and a.verdict == "fail" and a.rejected_coordinates == [2]
    assert a.p_value < 1e-6


def test_expectation_sets_verdict():
    s = gaussian_sampler([0.1], [[1.0]])
    assert audit_bias(s, [0.0], n=5000, rng=0, expect="biased").verdict == "pass"  # 7 s.e.: caught
    assert audit_bias(s, [0.1], n=5000, rng=0, expect="biased").verdict == "fail"  # missed
    assert audit_bias(s, [0.0], n=5000, rng=0, expect="unknown").verdict == "info"


def test_scalar_and_matrix_shapes():
    a = audit_bias(lambda n, r: r.normal(2.0, 1.0, n), 2.0, n=4000, rng=0)
    assert a.shape == () and len(a.bias) == 1 and a.verdict == "pass"
    m = audit_bias(lambda n, r: r.normal(size=(n, 2, 3)), np.zeros((2, 3)), n=4000, rng=0)
    assert m.shape == (2, 3) and len(m.bias) == 6


def test_symmetric_matrix_falls_back_to_holm():
    # Both triangles of a symmetric matrix: a singular covariance; Hotelling is undefined.
    def sampler(n, rng):
        a = rng.normal(size=(n, 2, 2))
        return a + a.transpose(0, 2, 1)

    a = audit_bias(sampler, np.zeros((2, 2)), n=4000, rng=0)
    assert a.test == "holm-t" and a.verdict == "pass"
    b = audit_bias(lambda n, r: sampler(n, r) + 0.3, np.zeros((2, 2)), n=4000, rng=0)
    assert b.verdict == "fail" and b.rejected_coordinates == [0, 1, 2, 3]


def test_constant_coordinates_are_exact():
    def sampler(n, rng):
        return np.column_stack([rng.normal(size=n), np.full(n, 1.5)])

    assert audit_bias(sampler, [0.0, 1.5], n=1000, rng=0).verdict == "pass"
    bad = audit_bias(sampler, [0.0, 1.5 + 1e-6], n=1000, rng=0)
    assert bad.verdict == "fail" and bad.p_value == 0.0 and 1 in bad.rejected_coordinates


def test_reproducible_and_generator_accepted():
    s = gaussian_sampler([0, 0], np.eye(2))
    a = audit_bias(s, [0, 0], n=3000, chunk_size=700, rng=11)
    b = audit_bias(s, [0, 0], n=3000, chunk_size=700, rng=11)
    assert a.to_dict() == b.to_dict()
    g1 = audit_bias(s, [0, 0], n=3000, rng=np.random.default_rng(5))
    g2 = audit_bias(s, [0, 0], n=3000, rng=np.random.default_rng(5))
    assert g1.bias == g2.bias and g1.seed == g2.seed and type(g1.seed) is int  # issue 13: always an int


def test_result_does_not_depend_on_workers():
    s = gaussian_sampler([0.0, 1.0, 2.0], np.diag([1.0, 2.0, 3.0]))
    serial = audit_bias(s, [0.0, 1.0, 2.0], n=9_000, chunk_size=1000, rng=4)
    threaded = audit_bias(s, [0.0, 1.0, 2.0], n=9_000, chunk_size=1000, rng=4, n_jobs=2)
    assert serial.to_dict() == threaded.to_dict()


def test_chunked_moments_merge_exactly():
    x = np.random.default_rng(0).normal(3.0, 2.0, size=(1003, 4))
    full, diag = _Moments(full=True), _Moments(full=False)
    for lo in range(0, 1003, 97):
        full.update(x[lo : lo + 97])
        diag.update(x[lo : lo + 97])
    np.testing.assert_allclose(full.mean, x.mean(0), rtol=1e-13)
    np.testing.assert_allclose(full.covariance(), np.cov(x.T), rtol=1e-12)
    np.testing.assert_allclose(diag.m2 / 1002, np.var(x, 0, ddof=1), rtol=1e-12)


def test_chunked_shape_statistics_match_scipy():
    x = np.random.default_rng(1).lognormal(0.0, 0.7, size=(1003, 3))
    mom = _Moments(full=False)
    for lo in range(0, 1003, 97):
        mom.update(x[lo : lo + 97])
    g1, g2 = mom.shape_statistics()
    np.testing.assert_allclose(g1, stats.skew(x, axis=0), rtol=1e-10)
    np.testing.assert_allclose(g2, stats.kurtosis(x, axis=0), rtol=1e-10)


def test_heavy_tails_are_reported():
    light = audit_bias(gaussian_sampler([0.0], [[1.0]]), [0.0], n=2000, rng=0)
    assert light.normality_error < 0.01 and "heavy tails" not in light.note
    # Lognormal(0, 1.5): excess kurtosis in the hundreds, so the O(1/n) term is large at n = 2000.
    heavy = audit_bias(lambda n, r: r.lognormal(0.0, 1.5, n), np.exp(1.5**2 / 2), n=2000, rng=0)
    assert heavy.normality_error > 0.01 and "heavy tails" in heavy.note


def test_hotelling_matches_statsmodels_and_is_the_audits_statistic():
    from statsmodels.stats.multivariate import test_mvmean

    from privaudit.audit.stats.hotelling import hotelling_test

    x = np.random.default_rng(0).normal(size=(50, 3)) + 0.2
    ref = test_mvmean(x, np.zeros(3))
    got = hotelling_test(x)
    assert got.f == pytest.approx(ref.statistic, rel=1e-12) and got.p_value == pytest.approx(ref.pvalue, rel=1e-10)
    assert math.isnan(hotelling_test(x[:3]).p_value)               # n ≤ p: undefined, not an error
    # audit_bias's Hotelling statistic on the same draws (one chunk: the sampler returns x).
    a = audit_bias(lambda k, r: x[:k], np.zeros(3), n=50, chunk_size=50, rng=0, test="hotelling")
    assert a.test == "hotelling-T2" and a.statistic == pytest.approx(got.t2, rel=1e-10)
    assert a.p_value == pytest.approx(got.p_value, rel=1e-8)


def test_holm_flags_match_statsmodels_on_independent_t_tests():
    from statsmodels.stats.multitest import multipletests

    x = np.random.default_rng(1).normal(size=(400, 5)) + np.array([0.0, 0.3, 0.0, 0.12, -0.2])
    a = audit_bias(lambda k, r: x[:k], np.zeros(5), n=400, chunk_size=400, rng=0, test="holm")
    p = stats.ttest_1samp(x, 0.0).pvalue
    assert a.rejected_coordinates == [int(j) for j in np.flatnonzero(multipletests(p, alpha=0.05, method="holm")[0])]
    assert a.rejected_coordinates  # the shifted coordinates are found
    # holm_reject is statsmodels' Holm, on random p-value vectors with ties and boundary values
    # (few calls: each multipletests(method="holm") runs gc.collect()).
    rng = np.random.default_rng(3)
    for m in (1, 2, 5, 40):
        for _ in range(4):
            p = np.round(rng.random(m) ** 3, 3)
            np.testing.assert_array_equal(holm_reject(p, 0.05), multipletests(p, alpha=0.05, method="holm")[0])


@pytest.mark.parametrize("make", [lambda: 3, lambda: None, lambda: np.random.default_rng(2),
                                  lambda: np.random.SeedSequence(4)])
def test_every_rng_form_records_an_integer_seed_that_reproduces(make):
    sampler = gaussian_sampler([0.0, 1.0], [[1.0, 0.2], [0.2, 2.0]])
    a = audit_bias(sampler, [0.0, 1.0], n=3000, chunk_size=1000, rng=make())
    assert type(a.seed) is int
    b = audit_bias(sampler, [0.0, 1.0], n=3000, chunk_size=1000, rng=a.seed)
    assert a.bias == b.bias and a.p_value == b.p_value


def test_min_detectable_bias_one_dimensional_matches_noncentral_t():
    # p = 1: T² = t², so the power at the stated bias b must be `power` for the two-sided
    # t-test, computed independently from the non-central t distribution.
    n = 2000
    a = audit_bias(gaussian_sampler([0.0], [[4.0]]), [0.0], n=n, rng=0)
    s = a.std[0]
    nc = a.min_detectable_bias[0] * math.sqrt(n) / s
    crit = stats.t.isf(0.025, n - 1)
    pw = stats.nct.sf(crit, n - 1, nc) + stats.nct.cdf(-crit, n - 1, nc)
    assert pw == pytest.approx(0.9, abs=1e-6)
    # Holm (p = 1: a plain t-test) states (t + z)·s/√n.
    h = audit_bias(gaussian_sampler([0.0], [[4.0]]), [0.0], n=n, rng=0, test="holm")
    assert h.min_detectable_bias[0] == pytest.approx((crit + stats.norm.ppf(0.9)) * s / math.sqrt(n))


def test_required_draws_scale():
    a = audit_bias(gaussian_sampler([10.0, 0.0], np.eye(2)), [10.0, 0.0], n=5000, rng=0)
    # Worst direction: λ*(χ², 2 df) λ_max / (0.01·10)².
    crit = stats.chi2.isf(0.05, 2)
    from scipy.optimize import brentq

    lam = brentq(lambda l: stats.ncx2.sf(crit, 2, l) - 0.9, 0, 100)
    lmax = max(np.asarray(a.std) ** 2)  # the covariance is ~diagonal; λ_max ≈ max variance
    assert a.n_required == pytest.approx(lam * lmax / 0.1**2, rel=0.05)
    assert required_draws(a, 0.02) == pytest.approx(a.n_required / 4, abs=1)


@pytest.mark.parametrize(
    "kwargs, match, error",
    [
        ({"n": 1}, "n must be >= 2", InvalidParameterError),
        ({"confidence": 1.0}, "confidence", InvalidParameterError),
        ({"expect": "maybe"}, "expect", InvalidParameterError),
        ({"test": "wald"}, "test", InvalidParameterError),
        ({"rng": "seed"}, "rng", ParameterTypeError),       # a wrong type (mechanisms.randomness)
        ({"rng": -1}, "rng", InvalidParameterError),
    ],
)
def test_bad_parameters_raise(kwargs, match, error):
    with pytest.raises(error, match=match):
        audit_bias(lambda n, r: r.normal(size=n), 0.0, **{"n": 100, **kwargs})


def test_bad_sampler_output_raises():
    with pytest.raises(InvalidInputError, match="shape"):
        audit_bias(lambda n, r: r.normal(size=(n, 2)), 0.0, n=100)
    with pytest.raises(InvalidInputError, match="non-finite"):
        audit_bias(lambda n, r: np.full(n, np.nan), 0.0, n=100)
    with pytest.raises(InvalidInputError, match="target"):
        audit_bias(lambda n, r: r.normal(size=n), np.nan, n=100)


@pytest.mark.parametrize("kind", ["gaussian", "exponential"])
def test_null_false_alarm_rate(kind):
    """Level: ≤ 1 − confidence over 200 seeded runs (exact for Gaussian, CLT for skewed draws)."""
    if kind == "gaussian":
        sampler, target = gaussian_sampler([1.0, 2.0, 3.0], [[1, 0.3, 0], [0.3, 1, 0.2], [0, 0.2, 2]]), [1.0, 2.0, 3.0]
    else:
        def sampler(n, rng):
            return rng.exponential(1.0, size=(n, 3)) * [1.0, 2.0, 0.5]

        target = [1.0, 2.0, 0.5]
    seeds = np.random.SeedSequence(2024).spawn(RUNS)
    alarms = sum(audit_bias(sampler, target, n=3000, rng=s).detected for s in seeds)
    rate = alarms / RUNS
    print(f"null false-alarm rate ({kind}, 200 runs, level 0.05): {rate:.3f}")
    assert alarms <= stats.binom.isf(BAND, RUNS, 0.05)


@pytest.mark.parametrize("test", ["hotelling", "holm"])
def test_power_at_reported_min_detectable_bias(test):
    """A bias equal to the reported min detectable bias is caught ≈ 90% of the time."""
    cov = np.array([[1.0, 0.4], [0.4, 2.0]])
    ref = audit_bias(gaussian_sampler([0.0, 0.0], cov), [0.0, 0.0], n=4000, rng=0, test=test)
    assert ref.test == {"hotelling": "hotelling-T2", "holm": "holm-t"}[test]
    planted = np.array([ref.min_detectable_bias[0], 0.0])
    seeds = np.random.SeedSequence(7).spawn(RUNS)
    hits = sum(audit_bias(gaussian_sampler(planted, cov), [0.0, 0.0], n=4000, rng=s, test=test).detected
               for s in seeds)
    print(f"power at the reported min detectable bias ({test}, 200 runs): {hits / RUNS:.3f} (nominal 0.9)")
    lo, hi = stats.binom.ppf(BAND / 2, RUNS, 0.9), stats.binom.isf(BAND / 2, RUNS, 0.9)
    assert lo <= hits <= hi


def test_shape_statistics_do_not_carry_the_last_bits_of_a_vectorised_sum():
    """Issue 37: 0.000396183303813 on one CPU and …814 on another; both are written as the same number."""
    from privaudit.audit.engines.bias import SHAPE_DIGITS, _significant

    a, b = _significant(np.array([0.000396183303813, -4.2e7 + 1e-3])), _significant(np.array([0.000396183303814, -4.2e7]))
    assert np.array_equal(a, b) and SHAPE_DIGITS == 6
    assert _significant(np.array([0.0]))[0] == 0.0 and np.isnan(_significant(np.array([np.nan]))[0])
