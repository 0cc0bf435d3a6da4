"""One Distinguisher (the Protocol is the base class), the reconstruction attacker class Protocol, every attacker registered."""

from __future__ import annotations

import importlib
import inspect

import numpy as np
import pytest

import privaudit.attacks as attacks
from privaudit.attacks import available_attacks
from privaudit.attacks.protocol import (
    DISTINGUISHER_DEFAULTS,
    Distinguisher,
    ReconstructionAttackerClass,
    Reconstructor,
    distinguisher_traits,
    leak_family,
)
from privaudit.attacks.registry import KINDS


def test_there_is_one_distinguisher_class():
    from privaudit.attacks import distinguishers

    assert distinguishers.Distinguisher is Distinguisher
    for name in attacks.BUILTIN_MODULES:
        module = importlib.import_module(f"privaudit.attacks.{name}")
        assert getattr(module, "Distinguisher", Distinguisher) is Distinguisher, name


def test_a_bare_object_is_a_distinguisher_and_a_subclass_gets_the_defaults():
    class Bare:
        def fit(self, *a, **k):
            return self

        def score(self, outputs):
            return np.zeros(len(outputs))

    class Sub(Distinguisher):
        def fit(self, *a, **k):
            return self

        def score(self, outputs):
            return np.zeros(len(outputs))

    class Incomplete(Distinguisher):
        def fit(self, *a, **k):
            return self

    assert isinstance(Bare(), Distinguisher) and isinstance(Sub(), Distinguisher)
    assert not isinstance(object(), Distinguisher)
    assert {k: getattr(Sub, k) for k in DISTINGUISHER_DEFAULTS} == DISTINGUISHER_DEFAULTS
    assert distinguisher_traits(Sub) == distinguisher_traits(Bare) and leak_family(Sub) == leak_family(Bare)
    assert repr(Sub()) == "Sub()"
    with pytest.raises(TypeError, match="abstract"):
        Incomplete()


def test_every_registered_distinguisher_satisfies_the_protocol():
    for name, cls in available_attacks("distinguisher").items():
        assert issubclass(cls, Distinguisher), name
        assert leak_family(cls) in ("floating-point", "distribution", "degenerate")


def test_every_registered_reconstruction_attacker_satisfies_the_class_protocol():
    found = available_attacks("reconstruction")
    assert found
    for name, cls in found.items():
        assert isinstance(cls, ReconstructionAttackerClass), name
        assert isinstance(cls.strength, int) and callable(cls.applicable)
        params = inspect.signature(cls).parameters
        assert list(params)[0] == "mechanism" and {"prior", "beta", "sigma_y", "random_state"} <= set(params), name
        assert callable(getattr(cls, "reconstruct", None)) and issubclass(cls, Reconstructor), name


def _attacker_classes():
    for name in attacks.BUILTIN_MODULES:
        module = importlib.import_module(f"privaudit.attacks.{name}")
        for attr, obj in vars(module).items():
            if inspect.isclass(obj) and obj.__module__ == module.__name__ and not attr.startswith("_") \
                    and getattr(obj, "kind", None) in KINDS and not inspect.isabstract(obj):
                yield f"{name}.{attr}", obj


def test_every_public_attacker_class_is_registered():
    registered = set(available_attacks().values())
    classes = dict(_attacker_classes())
    assert len(classes) >= 20
    assert [n for n, c in classes.items() if c not in registered] == []
    exported = [n for n in attacks.__all__ if inspect.isclass(getattr(attacks, n))
                and getattr(getattr(attacks, n), "kind", None) in KINDS and not inspect.isabstract(getattr(attacks, n))]
    assert [n for n in exported if getattr(attacks, n) not in registered] == []
