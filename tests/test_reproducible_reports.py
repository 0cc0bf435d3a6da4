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


class UserLaplace:
    """A user's mechanism without a ``__repr__`` (Python's default repr shows its address)."""

    def __init__(self, scale: float = 1.0):
        from privaudit.mechanisms import PrivacyClaim

        self.scale = scale
        self.claim = PrivacyClaim(1.0 / scale, 0.0, "l1<=1")

    def sample(self, x, n, rng=None):
        import numpy as np

        rng = np.random.default_rng(rng)
        x = np.asarray(x, dtype=float)
        return x + rng.laplace(scale=self.scale, size=(n, *x.shape))


def test_a_user_object_is_recorded_by_class_path_and_parameters_never_by_address():
    from privaudit.audit import audit_tradeoff
    from privaudit.audit.results import stable_repr

    assert " at 0x" in object.__repr__(UserLaplace())  # what used to be recorded
    runs = [audit_tradeoff(UserLaplace(2.0), [0.0], [1.0], n=300, attacker="projection", rng=0) for _ in range(2)]
    assert runs[0].target == runs[1].target == f"{UserLaplace.__module__}.UserLaplace(scale=2.0)"
    assert "0x" not in json.dumps(runs[0].to_dict(), default=str)

    class WithAddressInside:
        def __repr__(self):
            return f"Wrapper({object.__repr__(UserLaplace())})"

    assert " at 0x" not in stable_repr(WithAddressInside())
    from privaudit.mechanisms import GaussianMechanism

    mech = GaussianMechanism(epsilon=1.0, delta=1e-5)
    assert stable_repr(mech) == repr(mech)  # an object's own repr is kept: built-in targets are unchanged


def test_report_json_floats_have_12_significant_digits_so_one_ulp_vanishes():
    import math

    import numpy as np

    x = 0.1 + 0.2
    doc = {"a": x, "b": [1 / 3, {"c": np.float64(2.0) / 3}], "n": 7, "t": (1e-300,), "s": "0.30000000000000004"}
    twin = {**doc, "a": float(np.nextafter(x, 1.0))}
    assert render.report_json(doc) == render.report_json(twin)
    data = json.loads(render.report_json(doc))
    assert data == {"a": 0.3, "b": [0.333333333333, {"c": 0.666666666667}], "n": 7, "t": [1e-300],
                    "s": "0.30000000000000004"}
    assert render.significant(math.inf) == math.inf and render.significant(data) == data  # idempotent


@pytest.mark.slow
def test_quickstart_in_a_fresh_clone_leaves_git_status_clean(tmp_path):
    """README command 1 (``privaudit run quickstart``) in a fresh clone of this checkout rewrites the committed
    reports/quickstart with the same bytes and leaves nothing else behind: ``git status`` stays clean.

    The clone is imported through a ``privaudit`` link placed first on ``PYTHONPATH`` (the shared
    environment's editable install is left alone); the run is the console script's ``main``."""
    import os
    import pathlib
    import subprocess
    import sys

    repo = pathlib.Path(__file__).resolve().parents[1]
    clone, shim = tmp_path / "clone", tmp_path / "shim"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True, timeout=300)
    shim.mkdir()
    (shim / "privaudit").symlink_to(clone)
    env = {**os.environ, "PYTHONPATH": str(shim)}
    where = subprocess.run([sys.executable, "-c", "import privaudit.audit as a; print(a.__file__)"], cwd=clone,
                           env=env, capture_output=True, text=True, check=True).stdout.strip()
    assert where.startswith(str(shim)), where  # the clone's code runs, not the installed checkout
    run = subprocess.run([sys.executable, "-m", "privaudit.audit.app.cli", "run", "quickstart"], cwd=clone, env=env,
                         capture_output=True, text=True, timeout=1800)
    assert run.returncode == 0, run.stderr[-2000:]
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=clone,
                            capture_output=True, text=True, check=True).stdout
    assert status == "", f"the run changed the checkout (regenerate reports/quickstart?):\n{status}"
