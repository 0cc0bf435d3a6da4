"""Registration of the third-party adapters by name, and the ``thirdparty`` preset's tables."""

from __future__ import annotations

import inspect
import tomllib
from importlib import resources

import numpy as np
import pytest

from privaudit.mechanisms import InvalidParameterError, Mechanism
from privaudit.mechanisms.external import (
    EXTERNAL_MECHANISMS,
    EXTERNAL_PARAMETERS,
    external_constraints,
    external_mechanism_class,
    register_external_mechanisms,
)


def _keywords(cls) -> set[str]:
    return {n for n, p in inspect.signature(cls).parameters.items() if p.kind is p.KEYWORD_ONLY}


@pytest.mark.parametrize("name", sorted(EXTERNAL_MECHANISMS))
def test_parameter_specification_names_exactly_the_constructor_keywords(name):
    assert set(EXTERNAL_PARAMETERS[name]) == _keywords(external_mechanism_class(name))
    assert set(external_constraints(name)) == set(EXTERNAL_PARAMETERS[name])


def test_mapping_registration_refuses_clashes():
    reg = register_external_mechanisms({"gaussian": "privaudit.mechanisms:GaussianMechanism"})
    assert set(EXTERNAL_MECHANISMS) <= set(reg) and "gaussian" in reg
    register_external_mechanisms(reg)  # same references again: not a clash
    with pytest.raises(InvalidParameterError, match="opendp-laplace"):
        register_external_mechanisms({"opendp-laplace": "somewhere:Else"})
    assert register_external_mechanisms({"opendp-laplace": "somewhere:Else"}, force=True)["opendp-laplace"] == \
        EXTERNAL_MECHANISMS["opendp-laplace"]


def test_unknown_name_lists_the_known_ones():
    with pytest.raises(InvalidParameterError, match="opendp-laplace"):
        external_mechanism_class("opendp-laplce")


def _preset() -> dict:
    return tomllib.loads(resources.files("privaudit.audit.presets").joinpath("thirdparty.toml").read_text("utf-8"))


def test_thirdparty_preset_audits_at_least_six_targets_of_three_libraries():
    audits = _preset()["audits"]
    names = {a["mechanism"]["name"] for a in audits if a["kind"] == "tradeoff" and a.get("expect") != "violation"}
    libraries = {n.split("-")[0] for n in names} | ({"opacus"} if any(a["kind"] == "opacus" for a in audits) else set())
    assert len(names) + sum(a["kind"] == "opacus" for a in audits) >= 6
    assert libraries == {"opendp", "pydp", "opacus"}
    statistical = [a for a in audits if a["kind"] in ("tradeoff", "opacus")]
    # Bonferroni over the statistical audits: together they hold at 0.95.
    assert all(a["confidence"] == pytest.approx(1 - 0.05 / len(statistical), abs=1e-6) for a in statistical)


def test_every_preset_mechanism_table_builds_and_samples_its_pair():
    for entry in _preset()["audits"]:
        table = entry.get("mechanism")
        if table is None:
            continue
        kwargs = {k: (np.asarray(v, float) if isinstance(v, list) else v) for k, v in table.items() if k != "name"}
        mech = external_mechanism_class(table["name"])(**kwargs)
        assert isinstance(mech, Mechanism)
        if entry["kind"] == "tradeoff" and table["name"] != "opacus-dpsgd-canary":
            if isinstance(entry.get("domain"), dict):  # a domain table (datasets): two of its points
                from privaudit.mechanisms.domains import domain_from_spec

                x, x_prime = domain_from_spec(entry["domain"]).boundary_points()[:2]
            else:
                x, x_prime = entry["domain"] if "domain" in entry else (entry["x"], entry["x_prime"])
            out0 = mech.sample(np.asarray(x), 3)
            out1 = mech.sample(np.asarray(x_prime), 3)
            assert out0.shape == out1.shape and out0.shape[0] == 3
        if entry["kind"] == "calibration":
            assert callable(getattr(mech, "exact_epsilon", None)), table["name"]
