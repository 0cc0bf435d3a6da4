"""A registry of attackers, keyed by name.

Names are unique: registering a taken name raises unless ``force=True``
(as Opacus' registries do). Third-party packages add attackers through the
``privaudit.attacks`` entry-point group; each entry point loads to an attacker
class, registered under the entry point's name the first time the registry is read.

Every attacker class declares ``kind``: ``"distinguisher"`` (``score(outputs)``),
``"reconstruction"`` (``reconstruct(outputs)``) or ``"label"``.
"""

from __future__ import annotations

from importlib.metadata import entry_points

from privaudit.mechanisms import InvalidParameterError

KINDS = ("distinguisher", "reconstruction", "label")
_REGISTRY: dict[str, type] = {}
_ENTRY_POINTS_LOADED = False


class AttackRegistryError(InvalidParameterError):
    """A name clash, an unknown name or a malformed attacker class."""


def register_attack(name: str, cls: type | None = None, *, force: bool = False):
    """Register ``cls`` under ``name``; usable as a decorator when ``cls`` is omitted."""
    if cls is None:
        return lambda c: register_attack(name, c, force=force)
    if not isinstance(name, str) or not name:
        raise AttackRegistryError(f"attack name must be a non-empty string, got {name!r}")
    kind = getattr(cls, "kind", None)
    if kind not in KINDS:
        raise AttackRegistryError(f"attack class {cls!r} must declare kind in {KINDS}, got kind={kind!r}")
    if name in _REGISTRY and _REGISTRY[name] is not cls and not force:
        raise AttackRegistryError(
            f"attack name {name!r} is already registered to {_REGISTRY[name].__qualname__}; pass force=True to replace it"
        )
    _REGISTRY[name] = cls
    return cls


def _load_entry_points() -> None:
    global _ENTRY_POINTS_LOADED
    if _ENTRY_POINTS_LOADED:
        return
    _ENTRY_POINTS_LOADED = True
    for ep in entry_points(group="privaudit.attacks"):
        register_attack(ep.name, ep.load())


def get_attack(name: str) -> type:
    """The attacker class registered under ``name``."""
    _load_entry_points()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise AttackRegistryError(f"unknown attack {name!r}; registered: {sorted(_REGISTRY)}") from None


def available_attacks(kind: str | None = None) -> dict[str, type]:
    """Registered attackers (optionally of one ``kind``), by name."""
    _load_entry_points()
    if kind is not None and kind not in KINDS:
        raise AttackRegistryError(f"kind must be one of {KINDS}, got kind={kind!r}")
    return {n: c for n, c in sorted(_REGISTRY.items()) if kind is None or c.kind == kind}
