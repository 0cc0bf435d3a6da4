"""What ``privaudit list`` shows: presets, audit kinds, mechanisms, learners and attackers, one line each.

The exact listing (:func:`exact_listing`) reads the registries, and filling them imports
every built-in component: the kinds' engines (scipy.stats, dp_accounting), the
learners (torch), scikit-learn's parameter validation — seconds of imports for a
page of text. The built-in part of that listing is therefore kept in
:mod:`privaudit.audit.app.catalogue_snapshot`, written by::

    python -m privaudit.audit.app.catalogue --write

and compared with the exact listing by ``tests/test_cli_catalogue.py`` (which fails,
naming this command, when a built-in is added, renamed or re-documented without it).
:func:`listing` serves a section from the snapshot unless an installed package adds
entries to it through an entry point: then the section comes from the registries, which
load the plugins and warn about broken ones exactly as a run would. Presets are always
read from their files (that is cheap).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import inspect
import pprint
import sys
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: Sections of ``privaudit list``, in the order they are printed.
SECTIONS = ("presets", "kinds", "mechanisms", "learners", "attackers")
#: Entry-point groups that add entries to a section. They repeat the registries' own
#: constants (importing those modules is what this module avoids); a test checks they agree.
ENTRY_POINT_GROUPS = {
    "kinds": ("privaudit.audit_kinds",),
    "mechanisms": ("privaudit.mechanisms",),
    "learners": ("privaudit.learners",),
    "attackers": ("privaudit.attacks",),
}

Listing = dict[str, dict[str, str]]


def _sections(what: str) -> tuple[str, ...]:
    if what == "all":
        return SECTIONS
    if what not in SECTIONS:
        raise ValueError(f"what must be 'all' or one of {SECTIONS}, got what={what!r}")
    return (what,)


# --------------------------------------------------------------------------- exact listing
def presets_listing() -> dict[str, str]:
    """Every shipped preset with its ``description`` (a preset that is not valid TOML is listed with the error).

    Returns
    -------
    dict of str to str
    """
    from privaudit.audit.presets import available_presets, preset_text

    out = {}
    for name in available_presets():
        try:
            out[name] = str(tomllib.loads(preset_text(name)).get("description", ""))
        except tomllib.TOMLDecodeError as exc:  # a broken preset is listed, not fatal
            out[name] = f"(invalid TOML: {exc})"
    return out


def _first_line(obj: Any) -> str:
    return (inspect.getdoc(obj) or "").split("\n")[0]


def _components(registry: Any) -> dict[str, str]:
    out = {}
    for name in registry.names():
        comp = registry.get(name)
        try:
            out[name] = comp.doc or _first_line(comp.load(name))
        except Exception as exc:  # noqa: BLE001 - a broken plugin is listed with its error, not fatal
            out[name] = f"(cannot load: {type(exc).__name__}: {exc})"
    return out


def exact_listing(what: str = "all") -> Listing:
    """The listing read from the registries (imports every built-in component and every plugin).

    Parameters
    ----------
    what : {"all", "presets", "kinds", "mechanisms", "learners", "attackers"}
        One section, or all of them.

    Returns
    -------
    dict of str to dict of str to str
        Section -> name -> one line.

    Raises
    ------
    ValueError
        ``what`` is not a section.
    """
    out: Listing = {}
    for section in _sections(what):
        if section == "presets":
            out[section] = presets_listing()
        elif section == "kinds":
            from privaudit.audit.kinds import audit_kinds

            out[section] = {k: v.doc for k, v in audit_kinds().items()}
        elif section in ("mechanisms", "learners"):
            from privaudit.audit.schema import components

            out[section] = _components(components.MECHANISMS if section == "mechanisms" else components.LEARNERS)
        else:
            from privaudit import attacks

            out[section] = {n: f"{c.kind}: {_first_line(c)}" for n, c in attacks.available_attacks().items()}
    return out


# --------------------------------------------------------------------------- fast listing
def plugin_sections() -> set[str]:
    """The sections an installed distribution adds to through an entry point.

    Returns
    -------
    set of str
        Keys of :data:`ENTRY_POINT_GROUPS`; all of them when the entry points cannot be
        read (the registries then report why).
    """
    try:
        found = importlib.metadata.entry_points()  # one scan of the installed metadata for every group
        return {s for s, groups in ENTRY_POINT_GROUPS.items() if any(found.select(group=g) for g in groups)}
    except Exception:  # noqa: BLE001 - unreadable metadata: let the registries warn about it
        return set(ENTRY_POINT_GROUPS)


def listing(what: str = "all") -> Listing:
    """The listing of ``privaudit list``: built-ins from the snapshot, sections with plugins from the registries.

    Parameters
    ----------
    what : {"all", "presets", "kinds", "mechanisms", "learners", "attackers"}
        One section, or all of them.

    Returns
    -------
    dict of str to dict of str to str
        Section -> name -> one line; equal to :func:`exact_listing` (tests/test_cli_catalogue.py).

    Raises
    ------
    ValueError
        ``what`` is not a section.
    """
    from privaudit.audit.app.catalogue_snapshot import BUILTINS

    plugged = plugin_sections()
    out: Listing = {}
    for section in _sections(what):
        if section == "presets":
            out[section] = presets_listing()
        elif section in plugged:
            out[section] = exact_listing(section)[section]
        else:
            out[section] = dict(BUILTINS[section])
    return out


# --------------------------------------------------------------------------- snapshot
def snapshot_text(builtins: Listing) -> str:
    """The source of :mod:`privaudit.audit.app.catalogue_snapshot` holding ``builtins``.

    Parameters
    ----------
    builtins : dict
        Section -> name -> one line, for every section but presets.

    Returns
    -------
    str
    """
    body = pprint.pformat(builtins, width=120, sort_dicts=False)
    return ('"""Built-in kinds, mechanisms, learners and attackers with their one-line docs, for `privaudit list`.\n\n'
            "Generated by `python -m privaudit.audit.app.catalogue --write` from the registries; do not edit\n"
            '(tests/test_cli_catalogue.py fails when it no longer matches them)."""\n\n'
            f"BUILTINS = {body}\n")


def builtin_listing() -> Listing:
    """The exact listing of every section but presets, without plugins (what the snapshot holds).

    Returns
    -------
    dict
        Section -> name -> one line.

    Raises
    ------
    RuntimeError
        An installed plugin adds to a section: its entries would end up in the snapshot.
    """
    plugged = plugin_sections()
    if plugged:
        raise RuntimeError(f"installed plugins add to {', '.join(sorted(plugged))}: write the snapshot where none "
                           "is installed")
    return {s: exact_listing(s)[s] for s in ENTRY_POINT_GROUPS}


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m privaudit.audit.app.catalogue [--write]``: print or rewrite the snapshot.

    Parameters
    ----------
    argv : sequence of str, optional
        Command-line arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        Exit code (0).
    """
    parser = argparse.ArgumentParser(prog="python -m privaudit.audit.app.catalogue",
                                     description="Print (or --write) the built-in listing of `privaudit list`.")
    parser.add_argument("--write", action="store_true", help="rewrite audit/app/catalogue_snapshot.py")
    args = parser.parse_args(argv)
    text = snapshot_text(builtin_listing())
    if args.write:
        path = Path(__file__).with_name("catalogue_snapshot.py")
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path}")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())


__all__ = ["ENTRY_POINT_GROUPS", "SECTIONS", "builtin_listing", "exact_listing", "listing", "plugin_sections",
           "presets_listing", "snapshot_text"]
