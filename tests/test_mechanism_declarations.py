"""Mechanisms declare themselves next to their code (``@register_mechanism``) and the configuration registry reads them."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import privaudit.mechanisms as mechanisms
from privaudit.audit.schema import components
from privaudit.audit.schema.fields import ConfigKeyError, ConfigValueError
from privaudit.mechanisms.registry import (
    DECLARED_MECHANISMS,
    MissingParameterError,
    RegistryError,
    register_mechanism,
)

#: Exported classes that are not mechanisms: ArcsineGaussian is the law of A cos φ + σZ (no claim,
#: ``sample(n, rng)``), the noise of a modulated release, not something a configuration audits.
NOT_MECHANISMS = {"ArcsineGaussian"}


def _exported_mechanism_classes() -> dict[str, type]:
    return {name: obj for name in mechanisms.__all__ if inspect.isclass(obj := getattr(mechanisms, name))
            and callable(getattr(obj, "sample", None)) and name not in NOT_MECHANISMS
            and not getattr(obj, "_is_protocol", False)}


def test_every_exported_mechanism_class_is_declared_under_its_config_name():
    declared = {decl.cls: name for name, decl in DECLARED_MECHANISMS.items().items()}
    classes = _exported_mechanism_classes()
    assert len(classes) == 10
    assert {name: name in {c.__name__ for c in declared if isinstance(c, type)} for name in classes} == \
        dict.fromkeys(classes, True)
    for cls in classes.values():
        name = declared[cls]
        assert components.MECHANISMS.get(name).ref == f"privaudit.mechanisms:{cls.__name__}"


def test_the_historical_names_keep_their_references_and_order():
    assert components.MECHANISMS.names()[:4] == ["gaussian", "laplace", "randomized-response", "modulated"]
    assert components.MECHANISMS.get("opendp-laplace").ref == \
        "privaudit.mechanisms.external.opendp_mechanisms:OpenDPLaplace"


@pytest.mark.parametrize("name", [n for n, d in DECLARED_MECHANISMS.items().items() if isinstance(d.cls, type)])
def test_parameter_constraints_name_exactly_the_constructor_keywords(name):
    cls = DECLARED_MECHANISMS.get(name).cls
    assert set(cls._parameter_constraints) == set(components.keyword_names(cls))


@pytest.mark.parametrize("table", [
    {"name": "discrete-laplace", "epsilon": 1.0}, {"name": "discrete-gaussian", "sigma": 2.0},
    {"name": "snapping-laplace", "epsilon": 1.0, "bound": 10.0}, {"name": "unsafe-float-laplace", "epsilon": 1.0},
    {"name": "unsafe-float-gaussian", "sigma": 1.0}, {"name": "exponential", "epsilon": 1.0},
])
def test_the_newly_named_mechanisms_validate_build_and_sample(table):
    components.MECHANISMS.validate("mechanism", table)
    mech = components.MECHANISMS.build(table, "mechanism")
    x = np.array([1.0, 0.0, 2.0]) if table["name"] == "exponential" else np.array([1.0])
    assert len(mech.sample(x, 4, np.random.default_rng(0))) == 4


def test_checks_raise_the_configuration_errors():
    with pytest.raises(ConfigKeyError, match=r"missing required key m\.bound"):
        components.MECHANISMS.validate("m", {"name": "snapping-laplace", "epsilon": 1.0})
    with pytest.raises(ConfigValueError, match=r"m\.sigma must be"):
        components.MECHANISMS.validate("m", {"name": "discrete-gaussian", "sigma": 0.01})
    with pytest.raises(ConfigKeyError, match=r"m needs sigma, or epsilon and delta"):
        components.MECHANISMS.validate("m", {"name": "unsafe-float-gaussian", "epsilon": 1.0})


def test_a_class_declared_after_import_is_configurable_and_clashes_name_both():
    def needs_p(path, p):
        if "p" not in p:
            raise MissingParameterError(f"missing required key {path}.p")

    @register_mechanism("toy-coin", check=needs_p)
    class Coin:
        """A toy coin."""

        _parameter_constraints = {"p": [mechanisms.parameter_constraints.UNIT]}

        def __init__(self, *, p):
            self.p = p

    try:
        assert "toy-coin" in components.MECHANISMS
        components.MECHANISMS.validate("m", {"name": "toy-coin", "p": 0.5})
        with pytest.raises(ConfigKeyError, match=r"missing required key m\.p"):
            components.MECHANISMS.validate("m", {"name": "toy-coin"})
        with pytest.raises(ConfigValueError, match=r"m\.p must be"):
            components.MECHANISMS.validate("m", {"name": "toy-coin", "p": 2.0})
        with pytest.raises(RegistryError, match="already registered"):
            register_mechanism("gaussian", Coin)
    finally:
        DECLARED_MECHANISMS.unregister("toy-coin")
        components.MECHANISMS.unregister("toy-coin")


def test_a_subclass_with_fewer_keywords_is_offered_only_its_own():
    class MyLaplace(mechanisms.LaplaceMechanism):
        def __init__(self, *, epsilon):
            super().__init__(epsilon=epsilon)

    assert list(components.MECHANISMS.constraints(MyLaplace, None)) == ["epsilon"]
