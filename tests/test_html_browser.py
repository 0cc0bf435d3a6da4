"""The HTML report in a real browser: headless Chromium renders it, figures included.

CI installs Debian's ``chromium`` (``.ci/run``); the test skips, saying why, only when
no Chromium binary is on PATH.

Checks
------
* ``--dump-dom``: the page Chromium parsed has one ``<img>`` per figure, each a
  ``data:image/png`` URI (no network or file access needed).
* ``--screenshot``: the page as drawn. The trade-off figure's confidence band and
  curves are drawn in matplotlib's ``tab:blue`` (31, 119, 180) and ``tab:red``
  (214, 39, 40); the page's own CSS uses neither colour, so finding many pixels of
  both in the screenshot shows that the embedded PNGs were decoded and painted.
  The screenshot is saved under pytest's temporary folder and its path printed.
"""

from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pytest

from privaudit.audit.report import write_report
from privaudit.mechanisms import gaussian_tradeoff, tradeoff_curve

CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium binary on PATH (CI installs Debian's chromium)")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--hide-scrollbars", "--force-device-scale-factor=1"]


def report() -> dict:
    alpha = np.linspace(0, 1, 101)
    exact = gaussian_tradeoff(0.8, alpha)
    trade = {
        "kind": "tradeoff", "target": "Gaussian", "verdict": "pass", "epsilon_lb": 0.5, "epsilon_exact": 1.0,
        "claim": {"epsilon": 1.0, "delta": 1e-5, "adjacency": "l2<=1"}, "n": 10000, "n_eval": 9000,
        "confidence": 0.95, "fpr": alpha.tolist(), "fnr": exact.tolist(), "alpha": alpha.tolist(),
        "band": {"lower": np.clip(exact - 0.1, 0, 1).tolist(), "upper": np.clip(exact + 0.1, 0, 1).tolist()},
        "claim_curve": tradeoff_curve(1.0, 1e-5, alpha).tolist(), "exact_curve": exact.tolist(),
    }
    return {
        "schema": "privaudit.report/1", "name": "browser", "description": "", "source": "test", "config": {},
        "seed": 0, "samples": 1.0, "seeds": [], "versions": {"privaudit": "test"},
        "summary": {"status": "pass", "counts": {"pass": 1}, "n_audits": 1}, "audits": [trade],
    }


def chromium(*args, timeout=120) -> subprocess.CompletedProcess:
    return subprocess.run([CHROMIUM, *FLAGS, *args], capture_output=True, text=True, timeout=timeout)


def test_html_report_renders_in_headless_chromium(tmp_path_factory):
    out = tmp_path_factory.mktemp("html-report")
    write_report(report(), out)
    n_figures = len(list((out / "figures").glob("[0-9]*.png")))
    assert n_figures == 2  # trade-off curve and ROC (the ε table is an HTML table in the page)
    url = (out / "report.html").resolve().as_uri()

    dom = chromium("--dump-dom", url)
    assert dom.returncode == 0, dom.stderr[-2000:]
    imgs = re.findall(r"<img[^>]*>", dom.stdout)
    assert len(imgs) == n_figures
    assert all('src="data:image/png;base64,' in i for i in imgs)

    shot_dir = tmp_path_factory.mktemp("screenshots")
    shot = shot_dir / "report.png"
    done = chromium(f"--screenshot={shot}", "--window-size=1200,1600", url)
    assert done.returncode == 0 and shot.is_file(), done.stderr[-2000:]
    print(f"screenshot saved to {shot}")

    import matplotlib.image as mpimg

    rgb = (mpimg.imread(shot)[..., :3] * 255).round().astype(int)
    assert rgb.shape[0] >= 1000 and rgb.shape[1] >= 1000
    assert rgb.std() > 10  # not a blank page

    def count(color, tol=12):
        return int((np.abs(rgb - np.array(color)).max(axis=-1) <= tol).sum())

    blue, red = count((31, 119, 180)), count((214, 39, 40))
    assert blue > 500, f"only {blue} tab:blue pixels: the figures did not render"
    assert red > 200, f"only {red} tab:red pixels: the claim curve did not render"
