"""A report as a reader's browser shows it: headless Chromium screenshots and an above-the-fold check.

Used by the browser test (``tests/test_html_browser.py``) and to refresh the screenshots
of the reference reports in ``docs/screenshots/``::

    python3 -m privaudit.audit.testing.browser reports/*/report.html --out docs/screenshots

Layout is measured on a *copy* of the page with a small script appended (the report
itself carries no script), shown in an iframe of the viewport's size: the script sends
the bottom of the verdict banner, the top and bottom of the first summary table (the ε
table) and the page's scroll width, in CSS pixels, to the frame page, which stores them
in a ``data-`` attribute that Chromium's ``--dump-dom`` serialises.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

#: Widths checked: a desktop window and a phone.
DESKTOP, PHONE = (1400, 900), (400, 850)
_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--hide-scrollbars",
          "--force-device-scale-factor=1", "--virtual-time-budget=3000"]
_PROBE = """<script>
(function(){var v=document.getElementById('verdict'),t=document.querySelector('#table-0 + div table')
||document.querySelector('table');var r=v?v.getBoundingClientRect():null,q=t?t.getBoundingClientRect():null;
parent.postMessage([innerWidth,innerHeight,r?r.bottom:-1,q?q.top:-1,q?q.bottom:-1,
document.documentElement.scrollWidth].join(','),'*');})();
</script>"""
#: The page in an iframe of the viewport's size: Chromium's headless window is at least 500 px wide,
#: an iframe can be a phone's 400 px (media queries follow the iframe's viewport).
_FRAME = """<!DOCTYPE html><html><body style='margin:0'>
<iframe src='page.html' width='{w}' height='{h}' style='border:0;display:block'></iframe>
<script>addEventListener('message',function(e){{document.body.setAttribute('data-layout',e.data);}});</script>
</body></html>"""


def chromium() -> str | None:
    """Path of a Chromium binary on PATH, or None."""
    return next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)


def _run(args: list[str], timeout: float = 120) -> subprocess.CompletedProcess:
    binary = chromium()
    if binary is None:
        raise FileNotFoundError("no chromium binary on PATH (Debian: apt-get install chromium)")
    return subprocess.run([binary, *_FLAGS, *args], capture_output=True, text=True, timeout=timeout)


def screenshot(page: str | Path, out: str | Path, size: tuple[int, int]) -> Path:
    """PNG of the first screen of ``page`` at ``size`` = (width, height) CSS pixels.

    Parameters
    ----------
    page : str or Path
        A ``report.html`` file.
    out : str or Path
        The PNG to write.
    size : (int, int)
        (width, height) of the viewport, CSS pixels.

    Returns
    -------
    Path
        ``out``.
    """
    out = Path(out)
    done = _run([f"--screenshot={out}", f"--window-size={size[0]},{size[1]}", Path(page).resolve().as_uri()])
    if done.returncode != 0 or not out.is_file():
        raise RuntimeError(f"chromium could not screenshot {page}: {done.stderr[-1000:]}")
    return out


def layout(page: str | Path, size: tuple[int, int]) -> dict[str, float]:
    """Viewport, verdict bottom, first table's top/bottom and page scroll width (CSS px) at ``size``.

    Parameters
    ----------
    page : str or Path
        A ``report.html`` file.
    size : (int, int)
        (width, height) of the viewport, CSS pixels.

    Returns
    -------
    dict of str to float
    """
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "page.html").write_text(Path(page).read_text().replace("</body>", _PROBE + "</body>"))
        frame = Path(tmp) / "frame.html"
        frame.write_text(_FRAME.format(w=size[0], h=size[1]))
        window = f"--window-size={max(size[0], 500) + 20},{size[1] + 20}"
        done = _run(["--dump-dom", window, frame.as_uri()])
    m = re.search(r'data-layout="([^"]+)"', done.stdout)
    if done.returncode != 0 or m is None:
        raise RuntimeError(f"chromium did not lay out {page}: {done.stderr[-1000:]}")
    keys = ("width", "height", "verdict_bottom", "table_top", "table_bottom", "scroll_width")
    return dict(zip(keys, (float(v) for v in m.group(1).split(","))))


def main(argv: list[str] | None = None) -> int:
    """Screenshot each report page at desktop and phone width into ``--out``.

    Parameters
    ----------
    argv : list of str, optional
        Command-line arguments: report pages and ``--out`` (default ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit status, 0.
    """
    parser = argparse.ArgumentParser(description="Screenshots of report.html files at desktop and phone width.")
    parser.add_argument("pages", nargs="+", help="report.html files (the report's folder names the screenshot)")
    parser.add_argument("--out", default="docs/screenshots", help="folder of the PNGs (default: docs/screenshots)")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for page in map(Path, args.pages):
        for label, size in (("desktop", DESKTOP), ("phone", PHONE)):
            shot = screenshot(page, out / f"{page.parent.name}-{label}.png", size)
            fold = layout(page, size)
            print(f"{shot}: verdict ends at {fold['verdict_bottom']:.0f} px, ε table at "
                  f"{fold['table_top']:.0f}–{fold['table_bottom']:.0f} px of a {size[1]} px screen")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
