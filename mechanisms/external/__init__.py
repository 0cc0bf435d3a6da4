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

Names. :data:`EXTERNAL_MECHANISMS` maps a configuration name to ``"module:Class"``;
:func:`register_external_mechanisms` adds them to a name registry, refusing clashes.
diffprivlib is not wrapped: it does not import with scikit-learn 1.9 (the version
privaudit runs on), and pinning an older scikit-learn for it is not worth it.
"""

from __future__ import annotations

from typing import Any

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


#: Parameter specification of each adapter, as plain data (turned into scikit-learn constraints by
#: :func:`external_constraints`): "positive" (> 0), "delta" (in (0, 1)), "rate" (in (0, 1]), "count"
#: (integer >= 1), "size" (integer >= 0), "real", "array", a tuple of allowed strings; a trailing "?"
#: admits None.
EXTERNAL_PARAMETERS: dict[str, dict[str, str | tuple]] = {
    "opendp-laplace": {"scale": "positive", "sensitivity": "positive", "noise_scale": "positive?"},
    "opendp-gaussian": {"scale": "positive", "sensitivity": "positive", "delta": "delta", "noise_scale": "positive?"},
    "opendp-discrete-laplace": {"scale": "positive", "sensitivity": "count", "constructor": ("laplace", "geometric"),
                                "noise_scale": "positive?"},
    "opendp-gaussian-composition": {"scales": "array", "sensitivity": "positive", "delta": "delta",
                                    "noise_scales": "array?"},
    "opendp-laplace-threshold": {"scale": "positive", "threshold": "positive", "linf": "positive",
                                 "absent": "real?", "noise_scale": "positive?", "noise_threshold": "positive?"},
    "pydp-laplace": {"epsilon": "positive", "sensitivity": "positive", "noise_epsilon": "positive?"},
    "pydp-gaussian": {"epsilon": "positive", "delta": "delta", "sensitivity": "positive", "noise_epsilon": "positive?"},
    "pydp-bounded-sum": {"epsilon": "positive", "lower": "real", "upper": "real", "absent": "real?",
                         "noise_epsilon": "positive?", "records_low": "real?", "records_high": "real?",
                         "min_size": "size", "max_size": "count"},
    "pydp-bounded-mean": {"epsilon": "positive", "lower": "real", "upper": "real", "absent": "real?",
                          "noise_epsilon": "positive?", "records_low": "real?", "records_high": "real?",
                          "min_size": "size", "max_size": "count"},
    "opacus-dpsgd-canary": {"epsilon": "positive", "delta": "delta", "epochs": "count", "n_data": "count",
                            "dim": "count", "clip": "positive", "lr": "positive", "sample_rate": "rate",
                            "grad_sample_mode": ("hooks", "functorch", "ghost"), "mode": ("white-box", "black-box"),
                            "accountant": ("rdp", "prv", "gdp"), "noise_multiplier": "positive?"},
}


def external_constraints(name: str) -> dict[str, list]:
    """scikit-learn parameter constraints (``sklearn.utils._param_validation``) of adapter ``name``.

    Parameters
    ----------
    name : str
        A key of :data:`EXTERNAL_MECHANISMS`.

    Returns
    -------
    dict of str to list
        Parameter name → allowed constraints.
    """
    from numbers import Integral, Real

    from sklearn.utils._param_validation import Interval, StrOptions

    base = {
        "positive": Interval(Real, 0, None, closed="neither"), "delta": Interval(Real, 0, 1, closed="neither"),
        "rate": Interval(Real, 0, 1, closed="right"), "count": Interval(Integral, 1, None, closed="left"),
        "size": Interval(Integral, 0, None, closed="left"),
        "real": Real, "array": "array-like",
    }
    out = {}
    for key, kind in EXTERNAL_PARAMETERS[name].items():
        if isinstance(kind, tuple):
            out[key] = [StrOptions(set(kind))]
        else:
            out[key] = [base[kind.rstrip("?")]] + ([None] if kind.endswith("?") else [])
    return out


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
