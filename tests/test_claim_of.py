"""claim_of: the one reader of an object's ``.claim``, and the four places that use it."""

from __future__ import annotations

import types

import numpy as np
import pytest

from privaudit.audit.engines.calibration import audit_calibration
from privaudit.audit.engines.tradeoff import audit_tradeoff
from privaudit.audit.testing import assert_private
from privaudit.mechanisms import (
    ClaimTypeError,
    GaussianMechanism,
    InvalidParameterError,
    ParameterTypeError,
    PrivacyClaim,
    claim_of,
)


def test_claim_of_returns_the_claim_or_none():
    g = GaussianMechanism(epsilon=1.0, delta=1e-5)
    assert claim_of(g) is g.claim
    assert claim_of(object()) is None
    assert claim_of(None) is None
    assert claim_of(types.SimpleNamespace(claim=None)) is None


def test_claim_of_refuses_a_claim_that_is_not_a_privacy_claim():
    fake = types.SimpleNamespace(claim=(1.0, 1e-5))
    with pytest.raises(ClaimTypeError, match=r"mechanism must expose a PrivacyClaim as \.claim, got "
                                             r"mechanism\.claim=\(1\.0, 1e-05\) \(tuple\) on SimpleNamespace"):
        claim_of(fake)
    with pytest.raises(ClaimTypeError, match=r"^view must expose"):
        claim_of(fake, name="view")
    # Both a TypeError and a ValueError: the callers caught one or the other.
    assert issubclass(ClaimTypeError, ParameterTypeError) and issubclass(ClaimTypeError, InvalidParameterError)
    assert issubclass(ClaimTypeError, TypeError) and issubclass(ClaimTypeError, ValueError)


def test_claim_of_required_refuses_an_object_without_one():
    with pytest.raises(ClaimTypeError, match=r"got mechanism=<object object at .*> \(object\), which has none"):
        claim_of(object(), required=True)
    claim = PrivacyClaim(1.0, 0.0, "l2<=1")
    assert claim_of(types.SimpleNamespace(claim=claim), required=True) is claim


@pytest.mark.parametrize("mechanism", [object(), types.SimpleNamespace(claim="eps=1", sample=None)])
def test_the_audits_and_the_plugin_refuse_a_mechanism_without_a_claim(mechanism):
    with pytest.raises(InvalidParameterError, match="PrivacyClaim as .claim"):
        audit_tradeoff(mechanism, 0, 1, n=1000)
    with pytest.raises(InvalidParameterError, match="PrivacyClaim as .claim"):
        audit_calibration(mechanism)
    with pytest.raises(ParameterTypeError, match="PrivacyClaim as .claim"):
        assert_private(mechanism, np.zeros(1), np.ones(1))


def test_an_explicit_claim_must_be_a_privacy_claim():
    g = GaussianMechanism(epsilon=1.0, delta=1e-5)
    with pytest.raises(InvalidParameterError, match=r"claim must be a PrivacyClaim, got claim='eps=1' \(str\)"):
        audit_calibration(g, claim="eps=1")
    with pytest.raises(InvalidParameterError, match=r"claim must be a PrivacyClaim, got claim='eps=1' \(str\)"):
        audit_tradeoff(g, 0, 1, n=1000, claim="eps=1")
    assert audit_calibration(g, claim=g.claim).verdict == "pass"


def test_the_tradeoff_kind_leaves_a_bad_claim_to_the_task():
    from privaudit.audit.kinds.tradeoff import check_adjacent

    params = {"x": [0.0], "x_prime": [5.0], "adjacency": "check"}
    # A claim that is not a PrivacyClaim, or no mechanism built yet: nothing to check at load.
    assert check_adjacent("audits[0]", params, {"mechanism": types.SimpleNamespace(claim="eps=1")}) is None
    assert check_adjacent("audits[0]", params, {}) is None
