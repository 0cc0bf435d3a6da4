"""Reports reproduce on any machine of one kind (issue 24): the same versions block, floats at 12 significant
digits, user objects by a stable description, and a fresh clone's run leaves the checkout clean."""

from __future__ import annotations

import json
from importlib.metadata import PackageNotFoundError

import pytest

from privaudit.audit.reporting import render


def test_versions_list_every_key_dependency_installed_or_not(monkeypatch):
    real = render.version

    def fake_version(dist: str) -> str:
        if dist in ("opacus", "dask", "distributed"):
            raise PackageNotFoundError(dist)
        return real(dist)

    monkeypatch.setattr(render, "version", fake_version)
    versions = render.dependency_versions()
    assert list(versions) == ["python", *render.KEY_DEPENDENCIES]
    assert versions["opacus"] == versions["dask"] == versions["distributed"] == render.NOT_INSTALLED
    assert all(isinstance(v, str) and v for v in versions.values())
