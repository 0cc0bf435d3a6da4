"""Audits and their statistics, configurations, presets, runner, reports, CLI and pytest plugin.

Names are loaded lazily from their submodules.
"""

from importlib import import_module

from privaudit.mechanisms.tradeoff import gaussian_tradeoff, tradeoff_curve

#: Public name -> submodule defining it.
_LAZY = {
    "audit_tradeoff": "tradeoff",
    "TradeoffAudit": "tradeoff",
    "audit_reconstruction": "reconstruction",
    "ReconstructionAudit": "reconstruction",
    "audit_bias": "bias",
    "BiasAudit": "bias",
}


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_LAZY))


__all__ = ["gaussian_tradeoff", "tradeoff_curve", *_LAZY]
