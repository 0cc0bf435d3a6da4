"""The configuration presets shipped with privaudit: one ``<name>.toml`` file each in this package.

Listing and reading them imports nothing beyond the standard library, so that
``privaudit list presets`` stays fast; :mod:`privaudit.audit.app.config` loads them.
"""

from __future__ import annotations

from importlib import resources


def available_presets() -> list[str]:
    """Names of the presets shipped in ``privaudit.audit.presets``.

    Returns
    -------
    list of str
        Sorted preset names (file names without ``.toml``).
    """
    files = resources.files(__name__)
    return sorted(p.name[: -len(".toml")] for p in files.iterdir() if p.name.endswith(".toml"))


def preset_text(name: str) -> str:
    """The TOML text of preset ``name``.

    Parameters
    ----------
    name : str
        A name from :func:`available_presets`.

    Returns
    -------
    str

    Raises
    ------
    privaudit.audit.schema.fields.ConfigFileError
        ``name`` is not a shipped preset (the message suggests the closest and lists them).
    """
    presets = available_presets()
    if name not in presets:
        from privaudit.audit.schema.fields import ConfigFileError, did_you_mean

        raise ConfigFileError(f"unknown preset {name!r}{did_you_mean(name, presets)} (presets: {', '.join(presets)})")
    return (resources.files(__name__) / f"{name}.toml").read_text(encoding="utf-8")


__all__ = ["available_presets", "preset_text"]
