"""Adapters turning third-party DP mechanisms into privaudit mechanisms (optional extra ``external``).

``pip install -e ".[external]"`` installs OpenDP and Google's python-dp; Opacus comes
with the ``test`` extra. Importing this package imports none of them: each adapter
imports its library when constructed, and a missing library raises an ImportError
naming the extra.

Every adapter has ``claim`` (taken from the library's own accounting) and a
vectorised ``sample(x, n, rng)``; where privaudit can compute the exact privacy of
the noise the library draws, also ``exact_epsilon(delta)`` and ``tradeoff(alpha)``,
so :func:`~privaudit.audit.engines.calibration.audit_calibration` checks the library's
claim exactly. OpenDP and pydp cannot be seeded (their CSPRNGs are internal): their
``sample`` accepts ``rng`` and ignores it, and their audits are not reproducible bit
for bit. Opacus is seeded through torch generators.

Names. :data:`EXTERNAL_MECHANISMS` maps a configuration name to ``"module:Class"``, and
:data:`EXTERNAL_PARAMETERS` each adapter's parameters (scikit-learn constraints); importing
this package declares every adapter in the mechanism registry
(:func:`~privaudit.mechanisms.registry.register_mechanism`, by reference: no adapter module is
imported), and :func:`register_external_mechanisms` adds them to another name registry,
refusing clashes.
diffprivlib is not wrapped: it does not import with scikit-learn 1.9 (the version
privaudit runs on), and pinning an older scikit-learn for it is not worth it.
"""

from __future__ import annotations

from typing import Any

from ..parameter_constraints import COUNT, DELTA, POSITIVE, RATE, SIZE, Real, StrOptions
from ..registry import register_mechanism
from ..validation import InvalidParameterError

_OPENDP = "privaudit.mechanisms.external.opendp_mechanisms"
_PYDP = "privaudit.mechanisms.external.pydp_mechanisms"
_OPACUS = "privaudit.mechanisms.external.opacus_canary"

#: Configuration name -> "module:Class" of every shipped third-party adapter.
EXTERNAL_MECHANISMS: dict[str, str] = {
    "opendp-laplace": f"{_OPENDP}:OpenDPLaplace",
    "opendp-gaussian": f"{_OPENDP}:OpenDPGaussian",
    "opendp-discrete-laplace": f"{_OPENDP}:OpenDPDiscreteLaplace",
    "opendp-gaussian-composition": f"{_OPENDP}:OpenDPGaussianComposition",
    "opendp-laplace-threshold": f"{_OPENDP}:OpenDPLaplaceThreshold",
    "pydp-laplace": f"{_PYDP}:PyDPLaplace",
    "pydp-gaussian": f"{_PYDP}:PyDPGaussian",
    "pydp-bounded-sum": f"{_PYDP}:PyDPBoundedSum",
    "pydp-bounded-mean": f"{_PYDP}:PyDPBoundedMean",
    "opacus-dpsgd-canary": f"{_OPACUS}:OpacusCanaryRuns",
}


#: Parameter specification of each adapter, in scikit-learn's vocabulary (the ``_parameter_constraints``
#: language of the built-in mechanisms and the learners, :mod:`privaudit.mechanisms.parameter_constraints`).
#: They stay here, not on the adapter classes, so that declaring the adapters imports none of their modules.
EXTERNAL_PARAMETERS: dict[str, dict[str, list]] = {
    "opendp-laplace": {"scale": [POSITIVE], "sensitivity": [POSITIVE], "noise_scale": [POSITIVE, None]},
    "opendp-gaussian": {"scale": [POSITIVE], "sensitivity": [POSITIVE], "delta": [DELTA],
                        "noise_scale": [POSITIVE, None]},
    "opendp-discrete-laplace": {"scale": [POSITIVE], "sensitivity": [COUNT],
                                "constructor": [StrOptions({"laplace", "geometric"})], "noise_scale": [POSITIVE, None]},
    "opendp-gaussian-composition": {"scales": ["array-like"], "sensitivity": [POSITIVE], "delta": [DELTA],
                                    "noise_scales": ["array-like", None]},
    "opendp-laplace-threshold": {"scale": [POSITIVE], "threshold": [POSITIVE], "linf": [POSITIVE],
                                 "absent": [Real, None], "noise_scale": [POSITIVE, None],
                                 "noise_threshold": [POSITIVE, None]},
    "pydp-laplace": {"epsilon": [POSITIVE], "sensitivity": [POSITIVE], "noise_epsilon": [POSITIVE, None]},
    "pydp-gaussian": {"epsilon": [POSITIVE], "delta": [DELTA], "sensitivity": [POSITIVE],
                      "noise_epsilon": [POSITIVE, None]},
    **{name: {"epsilon": [POSITIVE], "lower": [Real], "upper": [Real], "absent": [Real, None],
              "noise_epsilon": [POSITIVE, None], "records_low": [Real, None], "records_high": [Real, None],
              "min_size": [SIZE], "max_size": [COUNT]} for name in ("pydp-bounded-sum", "pydp-bounded-mean")},
    "opacus-dpsgd-canary": {"epsilon": [POSITIVE], "delta": [DELTA], "epochs": [COUNT], "n_data": [COUNT],
                            "dim": [COUNT], "clip": [POSITIVE], "lr": [POSITIVE], "sample_rate": [RATE],
                            "grad_sample_mode": [StrOptions({"hooks", "functorch", "ghost"})],
                            "mode": [StrOptions({"white-box", "black-box"})],
                            "accountant": [StrOptions({"rdp", "prv", "gdp"})], "noise_multiplier": [POSITIVE, None]},
}


def external_constraints(name: str) -> dict[str, list]:
    """scikit-learn parameter constraints (``sklearn.utils._param_validation``) of adapter ``name`` (a copy).

    Parameters
    ----------
    name : str
        A key of :data:`EXTERNAL_MECHANISMS`.

    Returns
    -------
    dict of str to list
        Parameter name → allowed constraints.
    """
    return {key: list(allowed) for key, allowed in EXTERNAL_PARAMETERS[name].items()}


# Every adapter is declared by reference (its module is imported when a configuration names it).
for _name, _ref in EXTERNAL_MECHANISMS.items():
    register_mechanism(_name, _ref, constraints=EXTERNAL_PARAMETERS[_name],
                       doc=f"third-party adapter {_ref.rpartition(':')[2]}")


def register_external_mechanisms(registry: Any, *, force: bool = False) -> Any:
    """Register every adapter of :data:`EXTERNAL_MECHANISMS` in ``registry``; returns it.

    ``registry`` is a plain mapping (name -> "module:Class") or a component registry
    with ``register(name, ref, *, constraints=..., doc=..., force=...)`` (then each
    adapter is registered with its parameter specification). A name already bound
    to a different reference raises
    :class:`~privaudit.mechanisms.validation.InvalidParameterError` (mapping) or the
    registry's own clash error, unless ``force``.

    Parameters
    ----------
    registry : mapping or component registry
        Where the adapters are registered.
    force : bool
        Replace names already bound to other references.

    Returns
    -------
    mapping or component registry
        ``registry`` itself.

    Raises
    ------
    InvalidParameterError
        For a clash in a plain mapping without ``force``.
    """
    if callable(getattr(registry, "register", None)):
        for name, ref in EXTERNAL_MECHANISMS.items():
            registry.register(name, ref, constraints=external_constraints(name), force=force,
                              doc=f"third-party adapter {ref.rpartition(':')[2]}")
        return registry
    clashes = [k for k, v in EXTERNAL_MECHANISMS.items() if k in registry and registry[k] != v]
    if clashes and not force:
        raise InvalidParameterError(f"mechanism names already registered to other classes: {clashes}; "
                                    "pass force=True to replace them")
    registry.update(EXTERNAL_MECHANISMS)
    return registry


def external_mechanism_class(name: str) -> type:
    """The adapter class registered as ``name`` (imports its module, not its library).

    Parameters
    ----------
    name : str
        A key of :data:`EXTERNAL_MECHANISMS`.

    Returns
    -------
    type

    Raises
    ------
    InvalidParameterError
        For an unknown name.
    """
    import importlib

    try:
        module, _, attr = EXTERNAL_MECHANISMS[name].partition(":")
    except KeyError:
        raise InvalidParameterError(
            f"unknown external mechanism {name!r}; known: {', '.join(EXTERNAL_MECHANISMS)}") from None
    return getattr(importlib.import_module(module), attr)


__all__ = ["EXTERNAL_MECHANISMS", "EXTERNAL_PARAMETERS", "external_constraints", "external_mechanism_class",
           "register_external_mechanisms"]
