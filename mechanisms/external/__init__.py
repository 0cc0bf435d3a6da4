"""Adapters turning third-party DP mechanisms into privaudit mechanisms (optional extra ``external``).

``pip install -e ".[external]"`` installs OpenDP and Google's python-dp; Opacus comes
with the ``test`` extra. Importing this package imports none of them: each adapter
imports its library when constructed, and a missing library raises an ImportError
naming the extra.

Every adapter has ``claim`` (taken from the library's own accounting) and a
vectorised ``sample(x, n, rng)``; where privaudit can compute the exact privacy of
the noise the library draws, also ``exact_epsilon(delta)`` and ``tradeoff(alpha)``,
so :func:`~privaudit.audit.calibration.audit_calibration` checks the library's
claim exactly. OpenDP and pydp cannot be seeded (their CSPRNGs are internal): their
``sample`` accepts ``rng`` and ignores it, and their audits are not reproducible bit
for bit. Opacus is seeded through torch generators.

Names. :data:`EXTERNAL_MECHANISMS` maps a configuration name to ``"module:Class"``;
:func:`register_external_mechanisms` adds them to a name registry, refusing clashes.
diffprivlib is not wrapped: it does not import with scikit-learn 1.9 (the version
privaudit runs on), and pinning an older scikit-learn for it is not worth it.
"""

from __future__ import annotations

from collections.abc import MutableMapping

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


def register_external_mechanisms(registry: MutableMapping[str, str], *, force: bool = False) -> MutableMapping[str, str]:
    """Add :data:`EXTERNAL_MECHANISMS` to ``registry`` (name -> "module:Class"); returns it.

    A name already bound to a different reference raises
    :class:`~privaudit.mechanisms.validation.InvalidParameterError` unless ``force``.
    """
    clashes = [k for k, v in EXTERNAL_MECHANISMS.items() if k in registry and registry[k] != v]
    if clashes and not force:
        raise InvalidParameterError(f"mechanism names already registered to other classes: {clashes}; "
                                    "pass force=True to replace them")
    registry.update(EXTERNAL_MECHANISMS)
    return registry


def external_mechanism_class(name: str):
    """The adapter class registered as ``name`` (imports its module, not its library)."""
    import importlib

    try:
        module, _, attr = EXTERNAL_MECHANISMS[name].partition(":")
    except KeyError:
        raise InvalidParameterError(
            f"unknown external mechanism {name!r}; known: {', '.join(EXTERNAL_MECHANISMS)}") from None
    return getattr(importlib.import_module(module), attr)


__all__ = ["EXTERNAL_MECHANISMS", "external_mechanism_class", "register_external_mechanisms"]
