"""Accounting adapters against closed forms and dp_accounting."""

import math

import dp_accounting as dpa
import pytest

from privaudit.mechanisms import (
    InvalidParameterError,
    calibrate_noise_multiplier,
    dpsgd_delta,
    dpsgd_epsilon,
    gaussian_rho,
    sigma_for_rho,
    zcdp_compose,
    zcdp_epsilon,
    zcdp_rho,
)


def test_gaussian_rho_round_trip():
    assert gaussian_rho(2.0, 3.0) == pytest.approx(9 / 8)
    assert sigma_for_rho(gaussian_rho(1.7, 0.4), 0.4) == pytest.approx(1.7)
    assert zcdp_compose([0.1, 0.2, 0.3]) == pytest.approx(0.6)


@pytest.mark.parametrize("rho,delta", [(0.01, 1e-5), (0.5, 1e-6), (3.0, 1e-3)])
def test_zcdp_conversions_are_ordered(rho, delta):
    seed = zcdp_epsilon(rho, delta, "seed")
    assert seed == pytest.approx(rho + 2 * math.sqrt(rho * math.log(1 / delta)))
    rdp = zcdp_epsilon(rho, delta, "rdp")
    exact = zcdp_epsilon(rho, delta, "gaussian")
    assert exact <= rdp <= seed
    # "gaussian" is the exact profile of sqrt(2ρ)-GDP.
    assert exact == pytest.approx(dpa.get_epsilon_gaussian(1 / math.sqrt(2 * rho), delta))


@pytest.mark.parametrize("conversion", ["seed", "rdp", "gaussian"])
def test_zcdp_rho_inverts_zcdp_epsilon(conversion):
    rho = zcdp_rho(1.0, 1e-5, conversion)
    assert zcdp_epsilon(rho, 1e-5, conversion) == pytest.approx(1.0, rel=1e-6)


def test_full_batch_steps_are_exact_gdp():
    z, steps = 3.0, 16
    eps = dpsgd_epsilon(z, steps, 1e-5)
    assert eps == pytest.approx(dpa.get_epsilon_gaussian(z / math.sqrt(steps), 1e-5), rel=1e-3)
    # Replace-one doubles the sensitivity: the same as add/remove with half the noise.
    assert dpsgd_epsilon(z, steps, 1e-5, adjacency="label") == pytest.approx(dpsgd_epsilon(z / 2, steps, 1e-5), rel=1e-3)
    assert dpsgd_delta(z, steps, eps) == pytest.approx(1e-5, rel=1e-2)


def test_rdp_and_pld_agree_roughly_and_rdp_is_looser():
    pld = dpsgd_epsilon(1.1, 200, 1e-5, sampling_rate=0.01)
    rdp = dpsgd_epsilon(1.1, 200, 1e-5, sampling_rate=0.01, accountant="rdp")
    assert pld <= rdp <= 1.5 * pld


def test_calibration_round_trip_and_replace_one_needs_more_noise():
    z_ar = calibrate_noise_multiplier(1.0, 1e-5, 10)
    assert dpsgd_epsilon(z_ar, 10, 1e-5) <= 1.0 + 1e-3
    assert dpsgd_epsilon(z_ar * 0.98, 10, 1e-5) > 1.0
    z_ro = calibrate_noise_multiplier(1.0, 1e-5, 10, adjacency="replace-one")
    assert z_ro == pytest.approx(2 * z_ar, rel=2e-3)


def test_subsampled_calibration_uses_the_accountant():
    z = calibrate_noise_multiplier(2.0, 1e-5, 50, sampling_rate=0.05)
    assert dpsgd_epsilon(z, 50, 1e-5, sampling_rate=0.05) == pytest.approx(2.0, abs=5e-3)
    assert z < calibrate_noise_multiplier(2.0, 1e-5, 50)  # subsampling amplifies privacy


def test_unsupported_accountant_combination_is_a_clear_error():
    with pytest.raises(InvalidParameterError, match="does not support"):
        dpsgd_epsilon(1.0, 10, 1e-5, sampling_rate=0.1, adjacency="replace-one", accountant="rdp")
    with pytest.raises(InvalidParameterError, match="accountant"):
        dpsgd_epsilon(1.0, 10, 1e-5, accountant="moments")


# --- self-describing mechanisms and calibration checks ------------------------------------------
from privaudit.mechanisms import (  # noqa: E402
    GaussianMechanism,
    LaplaceMechanism,
    ModulatedMechanism,
    RandomizedResponse,
    classical_sigma,
)
from privaudit.mechanisms.accounting import (  # noqa: E402
    CalibrationWarning,
    check_calibration,
    dp_event_of,
    event_epsilon,
    gdp_epsilon,
    privacy_loss_distribution,
)


@pytest.mark.parametrize("mech", [
    GaussianMechanism(sigma=2.0, sensitivity=1.5),
    LaplaceMechanism(epsilon=0.7, sensitivity=2.0),
    RandomizedResponse(epsilon=1.3, categories=(0, 1, 2, 3)),
    ModulatedMechanism(alpha=0.3, lam=0.5, omega=0.4, dim=3, sigma=1.0),
])
def test_every_builtin_mechanism_has_a_pld_matching_its_exact_profile(mech):
    # Independent reference: each mechanism's closed-form exact δ(ε) / ε(δ).
    pld = privacy_loss_distribution(mech, value_discretization_interval=1e-4)
    for eps in (0.1, 0.5, 1.0):
        exact = mech.exact_delta(eps)
        got = pld.get_delta_for_epsilon(eps)
        assert exact - 1e-9 <= got <= exact + 2e-3 * max(exact, 1e-6)  # pessimistic rounding: never below
    assert dp_event_of(mech) == mech.dp_event()


def test_discrete_laplace_event_has_its_pure_epsilon():
    from privaudit.mechanisms.discrete import DiscreteLaplaceMechanism

    mech = DiscreteLaplaceMechanism(epsilon=0.8, sensitivity=2)
    assert privacy_loss_distribution(mech).get_epsilon_for_delta(1e-12) == pytest.approx(0.8, abs=2e-3)


def test_distance_scales_the_event_and_zero_distance_is_free():
    g = GaussianMechanism(sigma=2.0, sensitivity=1.5)
    assert dp_event_of(g, 3.0) == dpa.GaussianDpEvent(2.0 / 3.0)
    assert privacy_loss_distribution(g, 0.0).get_delta_for_epsilon(0.0) == 0.0
    with pytest.raises(InvalidParameterError, match="dp_event"):
        dp_event_of(object())


def test_randomized_response_event_is_its_pure_epsilon():
    rr = RandomizedResponse(epsilon=1.3, categories=(0, 1, 2))
    assert event_epsilon(rr.dp_event(), 0.0, adjacency="replace-one") == pytest.approx(1.3, abs=1e-3)


def test_classical_calibration_at_large_epsilon_is_flagged_false():
    sigma = classical_sigma(10.0, 1e-5)
    with pytest.warns(CalibrationWarning, match="does NOT hold"):
        check = check_calibration(10.0, 1e-5, gdp_epsilon(1 / sigma, 1e-5), method="classical", owner="test")
    assert check.status == "false" and check.exact_epsilon == pytest.approx(10.39, abs=5e-3)
    # At ε = 1 the classical σ is valid but loose (exact ε ≈ 0.78).
    sigma = classical_sigma(1.0, 1e-5)
    with pytest.warns(CalibrationWarning, match="loose"):
        assert check_calibration(1.0, 1e-5, gdp_epsilon(1 / sigma, 1e-5), method="classical",
                                 owner="test").status == "loose"
    exact = check_calibration(1.0, 1e-5, gdp_epsilon(GaussianMechanism(epsilon=1.0, delta=1e-5).mu, 1e-5),
                              method="analytic", owner="test", warn=False)
    assert exact.status == "exact"


def test_check_claim_reads_the_mechanisms_own_claim():
    from privaudit.mechanisms.accounting import check_claim

    with pytest.warns(CalibrationWarning, match="GaussianMechanism.*does NOT hold"):
        bad = check_claim(GaussianMechanism(epsilon=10.0, delta=1e-5, calibration="classical"))
    assert bad.status == "false" and bad.method == "classical"
    for mech in (GaussianMechanism(epsilon=1.0, delta=1e-5), LaplaceMechanism(epsilon=1.0),
                 RandomizedResponse(epsilon=1.0),
                 ModulatedMechanism(alpha=0.3, lam=0.5, omega=0.4, dim=3, epsilon=2.0, delta=1e-5)):
        assert check_claim(mech, warn=False).status == "exact", mech
    # A stated claim looser than the noise: valid, reported as loose.
    assert check_claim(GaussianMechanism(sigma=3.0, epsilon=2.0, delta=1e-5), warn=False).status == "loose"


def test_classical_modulated_mechanism_warns_at_construction():
    with pytest.warns(CalibrationWarning, match="ModulatedMechanism.*does NOT hold") as rec:
        mech = ModulatedMechanism(alpha=0.4, lam=0.3, omega=0.5, dim=6, epsilon=10.0, delta=1e-5,
                                  calibration="classical")
    assert mech.calibration_check.status == "false"
    assert rec[0].filename == __file__                    # the warning names the line that built it
    with pytest.warns(CalibrationWarning, match="loose"):
        ModulatedMechanism(alpha=0.4, lam=0.3, omega=0.5, dim=6, epsilon=0.5, delta=1e-5, calibration="classical")
