"""Every option of the benchmark scripts has ``--help`` text (issue 16).

Each script's ``main`` is run with argument parsing intercepted: the parser it builds is
captured and inspected, so no benchmark runs. Scripts owned by other work streams are
added to SCRIPTS when their options are documented.
"""

from __future__ import annotations

import argparse
import runpy
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
SCRIPTS = ["bench_dpsgd.py", "bench_modulated.py", "bench_iwp.py", "bench_reconstruction.py", "bench_bias.py"]


class _Captured(Exception):
    def __init__(self, parser):
        self.parser = parser


def _parser_of(script: str, monkeypatch) -> argparse.ArgumentParser:
    def capture(self, *args, **kwargs):
        raise _Captured(self)

    namespace = runpy.run_path(str(BENCHMARKS / script), run_name="bench")
    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", capture)
    monkeypatch.setattr(sys, "argv", [script])
    with pytest.raises(_Captured) as info:
        namespace["main"]()
    return info.value.parser


@pytest.mark.parametrize("script", SCRIPTS)
def test_every_option_has_help_text(script, monkeypatch):
    parser = _parser_of(script, monkeypatch)
    options = [a for a in parser._actions if a.option_strings and not isinstance(a, argparse._HelpAction)]
    assert options and parser.description
    undocumented = [a.option_strings[0] for a in options if not (a.help and a.help.strip())]
    assert not undocumented, f"{script}: options without help text: {undocumented}"
