"""Regenerate every preset's report screenshots at 1400 and 400 px: ``docs/screenshots/<preset>-{desktop,phone}.png``.

Each preset's committed ``reports/<preset>/report.json`` is rendered again with the current
renderers (so the screenshots show today's report, not the committed HTML) and drawn by
headless Chromium: desktop 1400 × 2000 CSS px; phone 400 × 2000, through an iframe of that
size because Chromium's headless window is at least 500 px wide (the page's media queries
follow the iframe), cropped to the iframe.

Usage (Chromium on PATH, e.g. Debian's ``chromium``)::

    python3 docs/screenshots/make.py [--reports reports] [--out docs/screenshots] [--height 2000] [PRESET ...]

Run it after regenerating ``reports/``; it prints each PNG it wrote.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from privaudit.audit.app.report_store import load_report, write_report
from privaudit.audit.presets import available_presets
from privaudit.audit.testing.browser import _run, screenshot

ROOT = Path(__file__).resolve().parents[2]
DESKTOP_WIDTH, PHONE_WIDTH = 1400, 400
#: The phone page in an iframe of the phone's size (the window itself cannot be narrower than 500 px).
_FRAME = ("<!DOCTYPE html><html><body style='margin:0;background:#fff'><iframe src='{page}' width='{w}' height='{h}' "
          "style='border:0;display:block'></iframe></body></html>")


def phone_screenshot(page: Path, out: Path, width: int, height: int) -> Path:
    """PNG of ``page`` in a ``width`` × ``height`` CSS px viewport (an iframe), cropped to it.

    Parameters
    ----------
    page : Path
        The report.html.
    out : Path
        The PNG to write.
    width, height : int
        The viewport.

    Returns
    -------
    Path
        ``out``.
    """
    from PIL import Image

    with tempfile.TemporaryDirectory() as tmp:
        frame = Path(tmp) / "frame.html"
        frame.write_text(_FRAME.format(page=page.resolve().as_uri(), w=width, h=height), encoding="utf-8")
        shot = Path(tmp) / "shot.png"
        done = _run([f"--screenshot={shot}", f"--window-size={max(width, 500) + 20},{height}", frame.as_uri(),
                     "--allow-file-access-from-files"])
        if done.returncode != 0 or not shot.is_file():
            raise RuntimeError(f"chromium could not screenshot {page}: {done.stderr[-1000:]}")
        with Image.open(shot) as img:
            img.crop((0, 0, width, height)).save(out, optimize=True)
    return out


def make(presets: list[str], reports: Path, out: Path, height: int) -> list[Path]:
    """Re-render each preset's report from its JSON and screenshot it at desktop and phone width.

    Parameters
    ----------
    presets : list of str
        Preset names (their reports are ``reports/<preset>/report.json``).
    reports, out : Path
        Folder of the committed reports; folder of the PNGs.
    height : int
        Screenshot height in CSS px.

    Returns
    -------
    list of Path
        The PNGs written.

    Raises
    ------
    FileNotFoundError
        A preset has no report.json (run ``privaudit run PRESET`` first), or Chromium is missing.
    """
    missing = [p for p in presets if not (reports / p / "report.json").is_file()]
    if missing:
        raise FileNotFoundError(f"no report.json under {reports} for {missing}: run `privaudit run PRESET` first")
    out.mkdir(parents=True, exist_ok=True)
    written = []
    with tempfile.TemporaryDirectory() as tmp:
        for preset in presets:
            folder = write_report(load_report(reports / preset / "report.json"), Path(tmp) / preset)
            page = folder / "report.html"
            written.append(screenshot(page, out / f"{preset}-desktop.png", (DESKTOP_WIDTH, height)))
            written.append(phone_screenshot(page, out / f"{preset}-phone.png", PHONE_WIDTH, height))
            print(*written[-2:], sep="\n", flush=True)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("presets", nargs="*", help="presets to shoot (default: every preset)")
    parser.add_argument("--reports", type=Path, default=ROOT / "reports", help="folder of the committed reports")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots", help="folder of the PNGs")
    parser.add_argument("--height", type=int, default=2000, help="screenshot height in CSS px (default 2000)")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.presets) - set(available_presets()))
    if unknown:
        parser.error(f"unknown presets {unknown}; presets: {', '.join(available_presets())}")
    presets = args.presets
    if not presets:  # every preset with a report (a preset added since reports/ was made is named, not fatal)
        presets = [p for p in available_presets() if (args.reports / p / "report.json").is_file()]
        for p in sorted(set(available_presets()) - set(presets)):
            print(f"make.py: no report for preset {p!r} under {args.reports}: skipped (run `privaudit run {p}`)",
                  file=sys.stderr)
    make(presets, args.reports, args.out, args.height)
    return 0


if __name__ == "__main__":
    sys.exit(main())
