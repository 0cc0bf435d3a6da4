"""The HTML report of a real (small) run in a real browser: headless Chromium renders it, figures included.

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

from privaudit.audit.config import parse_config
from privaudit.audit.runner import run_config

CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium binary on PATH (CI installs Debian's chromium)")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--hide-scrollbars", "--force-device-scale-factor=1"]


CONFIG = {
    "name": "browser", "seed": 4, "description": "A small real run rendered in Chromium.",
    "audits": [
        {"kind": "tradeoff", "target": "Gaussian ε=1", "mechanism": {"name": "gaussian", "epsilon": 1.0, "delta": 1e-5},
         "n": 4000},
        {"kind": "reconstruction", "target": "Gaussian, prior", "mechanism": {"name": "gaussian", "sigma": 1.0},
         "prior": {"name": "gaussian", "mean": [0.0, 0.0], "cov": [[1.0, 0.0], [0.0, 1.0]]}, "n": 2000},
        {"kind": "calibration", "mechanism": {"name": "gaussian", "epsilon": 1.0, "delta": 1e-5,
                                              "calibration": "classical"}},
    ],
}


def chromium(*args, timeout=120) -> subprocess.CompletedProcess:
    return subprocess.run([CHROMIUM, *FLAGS, *args], capture_output=True, text=True, timeout=timeout)


def test_html_report_renders_in_headless_chromium(tmp_path_factory):
    result = run_config(parse_config(CONFIG), out=tmp_path_factory.mktemp("reports"), use_cache=False)
    out = result.out_dir
    n_figures = len(list((out / "figures").glob("[0-9]*.png")))
    assert n_figures == 3  # trade-off curve, ROC, reconstruction MSE (the ε table is an HTML table in the page)
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
