"""A registry of attackers, keyed by name (a :class:`~privaudit.mechanisms.registry.Registry`).

Names are unique: registering a different class under a taken name raises, naming both
sources, unless ``force=True``. Third-party packages add attackers through the
``privaudit.attacks`` entry-point group; each entry point loads to an attacker class,
registered under the entry point's name the first time the registry is listed or a name
it does not hold is looked up. An entry point that fails to load is skipped with a
:class:`~privaudit.mechanisms.registry.PluginWarning`.

Every attacker class declares ``kind`` and is registered next to its code
(``@register_attack("name")`` on the class):

``"distinguisher"``
    satisfies :class:`~privaudit.attacks.protocol.Distinguisher` (``fit``, ``score``; its traits
    and ``leak_family`` optional, with documented defaults);
``"reconstruction"``
    satisfies :class:`~privaudit.attacks.protocol.ReconstructionAttackerClass` (``strength``,
    ``applicable()``, the constructor ``cls(mechanism, *, prior, beta, sigma_y, random_state)``)
    and its instances :class:`~privaudit.attacks.protocol.Reconstructor` (``reconstruct``);
``"label"``
    a label-inference attacker.

Registration checks the name and ``kind`` only (a malformed class fails where it is used).
"""

from __future__ import annotations

from collections.abc import Callable

from privaudit.mechanisms.registry import Registry, RegistryError

KINDS = ("distinguisher", "reconstruction", "label")
#: Entry-point group of third-party attackers.
ENTRY_POINT_GROUP = "privaudit.attacks"


class AttackRegistryError(RegistryError):
    """A name clash, an unknown name or a malformed attacker class."""


def _check_attack_class(name: str, cls: object) -> None:
    kind = getattr(cls, "kind", None)
    if not isinstance(cls, type) or kind not in KINDS:
        raise AttackRegistryError(f"attack {name!r}: {cls!r} must be a class declaring kind in {KINDS}, "
                                  f"got kind={kind!r}")


#: Every attacker class, by name.
ATTACKS: Registry[type] = Registry("attack", ENTRY_POINT_GROUP, error=AttackRegistryError,
                                   validate=_check_attack_class)


def register_attack(name: str, cls: type | None = None, *, force: bool = False) -> type | Callable[[type], type]:
    """Register the attacker class ``cls`` under ``name``; a decorator when ``cls`` is omitted.

    Parameters
    ----------
    name : str
        Non-empty, without ``":"``.
    cls : type, optional
        A class declaring ``kind`` in :data:`KINDS`.
    force : bool
        Replace another class registered under ``name``.

    Returns
    -------
    type or callable
        ``cls``, or the decorator registering the class it decorates.

    Raises
    ------
    AttackRegistryError
        A malformed name or class, or a clash (naming both sources) without ``force``.
    """
    if cls is None:
        return lambda c: register_attack(name, c, force=force)
    return ATTACKS.register(name, cls, force=force)


def get_attack(name: str) -> type:
    """The attacker class registered under ``name``.

    Parameters
    ----------
    name : str

    Returns
    -------
    type

    Raises
    ------
    AttackRegistryError
        Unknown name (the message lists the registered ones).
    """
    return ATTACKS.get(name)


def available_attacks(kind: str | None = None) -> dict[str, type]:
    """Registered attackers (optionally of one ``kind``), by name, sorted.

    Parameters
    ----------
    kind : {"distinguisher", "reconstruction", "label"}, optional

    Returns
    -------
    dict of str to type

    Raises
    ------
    AttackRegistryError
        ``kind`` is not one of :data:`KINDS`.
    """
    if kind is not None and kind not in KINDS:
        raise AttackRegistryError(f"kind must be one of {KINDS}, got kind={kind!r}")
    return {n: c for n, c in sorted(ATTACKS.items().items()) if kind is None or c.kind == kind}


__all__ = ["ATTACKS", "AttackRegistryError", "ENTRY_POINT_GROUP", "KINDS", "available_attacks", "get_attack",
           "register_attack"]
