"""The HTML report of a real (small) run in a real browser: headless Chromium renders it, figures included.

CI installs Debian's ``chromium`` (``.ci/run``); the test skips, saying why, only when
no Chromium binary is on PATH.

Checks
------
* ``--dump-dom``: the page Chromium parsed embeds every figure as a ``data:image/png``
  URI (no network or file access needed).
* Above the fold (:func:`privaudit.audit.testing.browser.layout`, a probe script on a copy of the
  page): at 1400 px the verdict banner and the whole ε table are on the first screen; at
  phone width (400 px) the verdict and the start of the ε table are, and the page does
  not scroll sideways (wide tables scroll inside their own box).
* ``--screenshot`` at both widths: the page as drawn. The trade-off figure's confidence
  band and curves are drawn in matplotlib's ``tab:blue`` (31, 119, 180) and ``tab:red``
  (214, 39, 40); the page's own CSS uses neither colour, so finding many pixels of both
  in the desktop screenshot shows that the embedded PNGs were decoded and painted. The
  screenshots are saved under pytest's temporary folder and their paths printed.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from privaudit.audit.testing.browser import DESKTOP, PHONE, chromium, layout, screenshot
from privaudit.audit.app.config import parse_config
from privaudit.audit.app.runner import run_config

pytestmark = pytest.mark.skipif(chromium() is None, reason="no chromium binary on PATH (CI installs Debian's chromium)")


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


def test_html_report_renders_in_headless_chromium(tmp_path_factory):
    result = run_config(parse_config(CONFIG), out=tmp_path_factory.mktemp("reports"), use_cache=False)
    out = result.out_dir
    on_disk = {p.read_bytes() for p in (out / "figures").glob("[0-9]*.png")}
    assert len(on_disk) == 3  # trade-off curve, ROC, reconstruction MSE (the ε table is an HTML table in the page)
    page = out / "report.html"

    import base64
    import subprocess

    dom = subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom",
                          page.resolve().as_uri()], capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    srcs = re.findall(r'<img[^>]*src="(data:image/png;base64,[^"]+)"', dom.stdout)
    assert {base64.b64decode(s.split(",", 1)[1]) for s in srcs} == on_disk

    desk, phone = layout(page, DESKTOP), layout(page, PHONE)
    print(f"layout at {DESKTOP}: {desk}; at {PHONE}: {phone}")
    assert desk["width"] == DESKTOP[0] and 0 < desk["verdict_bottom"] < desk["table_top"]
    assert desk["table_bottom"] <= DESKTOP[1], "the ε table does not fit on the first screen at 1400 px"
    assert 0 < phone["verdict_bottom"] < phone["table_top"] < PHONE[1] * 0.6
    assert phone["scroll_width"] <= PHONE[0] + 1, "the page scrolls sideways at phone width"

    shot_dir = tmp_path_factory.mktemp("screenshots")
    shots = {label: screenshot(page, shot_dir / f"report-{label}.png", size)
             for label, size in (("desktop", DESKTOP), ("phone", PHONE))}
    print(f"screenshots saved to {shot_dir}")

    import matplotlib.image as mpimg

    rgb = (mpimg.imread(shots["desktop"])[..., :3] * 255).round().astype(int)
    assert rgb.shape[:2] == (DESKTOP[1], DESKTOP[0])
    assert rgb.std() > 10  # not a blank page
    assert mpimg.imread(shots["phone"]).shape[:2] == (PHONE[1], PHONE[0])

    def count(color, tol=12):
        return int((np.abs(rgb - np.array(color)).max(axis=-1) <= tol).sum())

    blue, red = count((31, 119, 180)), count((214, 39, 40))
    assert blue > 500, f"only {blue} tab:blue pixels: the figures did not render"
    assert red > 200, f"only {red} tab:red pixels: the claim curve did not render"
