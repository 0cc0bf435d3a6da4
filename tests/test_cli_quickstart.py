"""The main job: `privaudit run quickstart` audits all three learners with every audit family.

Slow (about two minutes on two cores): run with ``pytest -m slow tests/test_cli_quickstart.py``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

#: Which audits of the quickstart belong to which learner: target prefixes (trade-off,
#: reconstruction, utility) and bias-check name fragments.
LEARNERS = {"modulated": ("modulated",), "iwp": ("iwp",), "conddp": ("dp-sgd", "rr-on-bins")}


@pytest.mark.slow
def test_quickstart_covers_every_learner_and_audit_family(tmp_path):
    exe = shutil.which("privaudit")
    cmd = [exe] if exe else [sys.executable, "-m", "privaudit.audit.app.cli"]
    done = subprocess.run([*cmd, "run", "quickstart", "--out", str(tmp_path), "--jobs", "2", "--json"],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads(done.stdout)
    assert summary["status"] == "pass" and summary["cached"] == []
    out = tmp_path / "quickstart"
    for name in ("report.json", "report.md", "report.html"):
        assert (out / name).is_file()
    report = json.loads((out / "report.json").read_text())
    assert report["schema"] == "privaudit.report/1"
    audits = report["audits"]
    assert not [a for a in audits if a["verdict"] in ("error", "violation", "fail")]

    def has(kind, learner):
        prefix = f"{learner}:"
        return any(a["kind"] == kind and a["target"].startswith(prefix) for a in audits)

    for learner in LEARNERS:
        assert has("tradeoff", learner), learner
        assert has("reconstruction", learner), learner
    assert has("utility", "modulated") and has("utility", "iwp")
    try:
        import privaudit.audit.studies.experiments.conddp  # noqa: F401
    except ImportError:
        pass  # the Cond-DP experiments have not landed: the preset does not run them yet
    else:
        assert has("utility", "conddp")
    bias = [a["target"].lower() for a in audits if a["kind"] == "bias"]
    for learner, fragments in LEARNERS.items():
        assert any(f in t for t in bias for f in fragments), learner
    # figures exist for every kind that has them, and the HTML embeds them all
    figures = sorted(p.name for p in (out / "figures").glob("*.png"))
    for kind in ("tradeoff", "roc", "mse", "bias", "utility"):
        assert any(f.endswith(f"-{kind}.png") for f in figures), kind
    per_audit = [f for f in figures if f[0].isdigit()]  # the summary tables are HTML tables in the page
    page = (out / "report.html").read_text()
    import base64

    # every per-audit figure is embedded (the page may show some twice: headline figures open the report)
    missing = [f for f in per_audit
               if base64.b64encode((out / "figures" / f).read_bytes()).decode("ascii") not in page]
    assert missing == [] and page.count("data:image/png;base64,") >= len(per_audit)
    assert "epsilon-table.png" in figures and "bias-table.png" in figures

    # A rerun takes every result from the verified cache and leaves every report file byte-identical
    # (the set on disk is already what it would write: nothing is rendered again).
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*")
              if p.is_file() and "cache" not in p.parts and p.name != "run.log.json"}
    again = subprocess.run([*cmd, "run", "quickstart", "--out", str(tmp_path), "--json"],
                           capture_output=True, text=True, timeout=900)
    assert again.returncode == 0, again.stderr[-3000:]
    rerun = json.loads(again.stdout)
    assert rerun["executed"] == [] and rerun["cached"] == summary["executed"] and rerun["cache_warnings"] == []
    after = {p.relative_to(out): p.read_bytes() for p in out.rglob("*")
             if p.is_file() and "cache" not in p.parts and p.name != "run.log.json"}
    assert after == before
    log = json.loads((out / "run.log.json").read_text())
    assert all(t["from_cache"] for t in log["tasks"]) and len(log["tasks"]) == rerun["tasks"]
