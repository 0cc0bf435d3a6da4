"""Results reach their renderers through privaudit.audit.display.hooks, registered by the package."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from privaudit.audit.display import hooks

_PROBE = """
import json, sys
from privaudit.audit.engines.calibration import audit_calibration
from privaudit.mechanisms import GaussianMechanism
before = "privaudit.audit.reporting.render" in sys.modules
res = audit_calibration(GaussianMechanism(epsilon=1.0, delta=1e-5))
html = res._repr_html_()
print(json.dumps({"before": before, "after": "privaudit.audit.reporting.render" in sys.modules,
                  "html": "privaudit-result" in html}))
"""


def test_a_result_from_an_engine_alone_shows_itself():
    # Only an engine imported: the package registered the renderers, which load on first use.
    proc = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"before": False, "after": True, "html": True}


def test_results_call_the_registered_renderers(monkeypatch):
    from privaudit.audit.results import AuditEntry
    from privaudit.audit.engines.calibration import audit_calibration
    from privaudit.mechanisms import GaussianMechanism

    monkeypatch.setattr(hooks, "_RENDERERS", {})
    res = audit_calibration(GaussianMechanism(epsilon=1.0, delta=1e-5))
    with pytest.raises(LookupError, match="no 'html' renderer registered"):
        res._repr_html_()
    calls = []
    hooks.register_renderers(plot=lambda r, which: calls.append(("plot", r, which)) or "fig",
                             html=lambda r: calls.append(("html", r)) or "<p/>")
    entry = AuditEntry(res)
    assert res.plot("roc") == "fig" and entry._repr_html_() == "<p/>" and entry.plot() == "fig"
    assert calls == [("plot", res, "roc"), ("html", entry), ("plot", entry, 0)]
