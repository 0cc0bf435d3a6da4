"""Committed small references: a preset's small run must still give the numbers it gave when committed.

Each reference (``tests/data/reference-small/<preset>.json``) is the fingerprint of a
preset run at a small ``samples`` factor and a fixed seed: every scalar of every audit
entry exactly (floats to 1e-9 relative: the same code on another BLAS may differ in the
last bits), and every long array by its length, sum, minimum and maximum. A change of
any number an audit reports, of a verdict, or of a note fails the test, naming the
audit and the field.

When the change is intended (new code, new defaults), regenerate the references and
commit them with the change::

    PRIVAUDIT_UPDATE_REFERENCE=1 python3 -m pytest -q tests/test_reference_small.py

The whole preset runs (about 20 s for quickstart at samples = 0.05 on two cores; no
figures are drawn). A reference is never written from a run in which an audit raised,
and a run with an error fails even if the reference had one.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest

from privaudit.audit.app.config import load_config
from privaudit.audit.app.runner import run_config

REFERENCES = Path(__file__).parent / "data" / "reference-small"
#: (preset, samples factor, seed) of each committed reference.
CASES = [("reconstruction", 0.05, 0), ("quickstart", 0.05, 0), ("tradeoff", 0.05, 0), ("bias", 0.02, 0)]
UPDATE = os.environ.get("PRIVAUDIT_UPDATE_REFERENCE") == "1"
#: Lists longer than this are fingerprinted, not stored.
MAX_LIST = 8


def fingerprint(value):
    """JSON value -> the same with long numeric lists replaced by ``{"len", "sum", "min", "max"}``."""
    if isinstance(value, dict):
        return {k: fingerprint(v) for k, v in value.items()}
    if isinstance(value, list):
        flat = _numbers(value)
        if len(value) > MAX_LIST and flat is not None:
            finite = [v for v in flat if math.isfinite(v)]
            return {"len": len(flat), "n_finite": len(finite), "sum": math.fsum(finite),
                    "min": min(finite, default=None), "max": max(finite, default=None)}
        return [fingerprint(v) for v in value]
    return value


def _numbers(value) -> list[float] | None:
    """The numbers of a (nested) list, ``"inf"``/``"nan"`` strings included, or None if anything else is in it."""
    out = []
    for v in value:
        if isinstance(v, list):
            inner = _numbers(v)
            if inner is None:
                return None
            out += inner
        elif isinstance(v, bool) or not (isinstance(v, int | float) or v in ("inf", "-inf", "nan")):
            return None
        else:
            out.append(float(v))
    return out


def differences(want, got, path: str = "") -> list[str]:
    """Where ``got`` differs from ``want`` (floats to 1e-9 relative), as ``path: want != got`` lines."""
    if isinstance(want, dict) and isinstance(got, dict):
        out = [f"{path}.{k}: missing" for k in want if k not in got]
        out += [f"{path}.{k}: new field" for k in got if k not in want]
        for k in want:
            if k in got:
                out += differences(want[k], got[k], f"{path}.{k}")
        return out
    if isinstance(want, list) and isinstance(got, list):
        if len(want) != len(got):
            return [f"{path}: length {len(want)} != {len(got)}"]
        return [d for i, (a, b) in enumerate(zip(want, got)) for d in differences(a, b, f"{path}[{i}]")]
    if isinstance(want, float) and isinstance(got, int | float) and not isinstance(got, bool):
        same = math.isclose(want, got, rel_tol=1e-9, abs_tol=1e-12) or (math.isnan(want) and math.isnan(got))
        return [] if same else [f"{path}: {want!r} != {got!r}"]
    return [] if want == got else [f"{path}: {want!r} != {got!r}"]


def small_run(preset: str, samples: float, seed: int, out: Path) -> dict:
    """The preset at ``samples`` and ``seed``: ``{"preset", "samples", "seed", "summary", "audits": [fingerprints]}``."""
    config = load_config(preset).replace(seed=seed, samples=samples)
    report = run_config(config, out=out, use_cache=False, figures=False).report
    return {"preset": preset, "samples": samples, "seed": seed, "summary": report["summary"],
            "audits": [fingerprint(a) for a in report["audits"]]}


@pytest.mark.parametrize("preset, samples, seed", CASES)
def test_small_run_matches_committed_reference(preset, samples, seed, tmp_path):
    got = json.loads(json.dumps(small_run(preset, samples, seed, tmp_path), allow_nan=False))
    errors = [f"audit {i} ({a['kind']}: {a['target']}): {a.get('error')}" for i, a in enumerate(got["audits"])
              if a.get("verdict") == "error"]
    assert not errors, "the small run raised:\n" + "\n".join(errors)
    path = REFERENCES / f"{preset}.json"
    if UPDATE:
        path.write_text(json.dumps(got, indent=1, ensure_ascii=False) + "\n")
        pytest.skip(f"reference {path} regenerated")
    assert path.is_file(), f"no committed reference {path}: run with PRIVAUDIT_UPDATE_REFERENCE=1 and commit it"
    want = json.loads(path.read_text())
    diff = differences(want, got)
    assert not diff, (f"{preset} at samples={samples}, seed={seed} no longer matches {path} "
                      f"({len(diff)} differences; regenerate with PRIVAUDIT_UPDATE_REFERENCE=1 if intended):\n"
                      + "\n".join(diff[:25]))


def test_differences_catch_a_changed_number_verdict_and_curve():
    """The comparison itself can fail: a changed ε̲, verdict or curve is reported with its path."""
    entry = {"verdict": "pass", "epsilon_lb": 0.5, "fpr": fingerprint([i / 10 for i in range(20)])}
    assert differences(entry, dict(entry)) == []
    assert differences(entry, {**entry, "epsilon_lb": 0.5 + 1e-6}) == [".epsilon_lb: 0.5 != 0.500001"]
    assert differences(entry, {**entry, "verdict": "violation"}) == [".verdict: 'pass' != 'violation'"]
    moved = {**entry, "fpr": fingerprint([i / 10 + 1e-3 for i in range(20)])}
    assert differences(entry, moved) and all(d.startswith(".fpr.") for d in differences(entry, moved))
    assert differences(entry, {**entry, "note": "x"}) == [".note: new field"]
