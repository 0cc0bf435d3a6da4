"""Wall time of every command whose duration the README states, printed beside the README's figure.

Each command runs once, in a fresh temporary folder (``--out`` there, ``--no-cache``
for runs, so nothing is reused), and its wall and CPU time are printed beside the
figure the README gives for it. That figure is read from README.md itself (every
duration on the lines that show the command), so the table always compares against
the text a user reads. The load average before and after each command is printed
too: on a loaded machine wall times are longer than on the quiet 2-core machine the
README's figures are for, and the CPU time (of the command and of the workers it waits for) is
the closer estimate; a command that keeps both cores busy (``--jobs 2``, torch threads) finishes
in less wall time than its CPU time on a quiet machine.

    python benchmarks/bench_durations.py                  # every command but the test suite
    python benchmarks/bench_durations.py --only quickstart thirdparty
    python benchmarks/bench_durations.py --only tests-not-slow tests   # the suite: 5-15 min each

Commands that need an optional extra (thirdparty: ``pip install -e ".[external]"``)
fail without it; the failure is printed, the other commands still run.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from command_timing import load_average, privaudit_command, time_command

ROOT = Path(__file__).resolve().parents[1]
#: A duration as the README writes it: "≈ 3 min", "≈ 12–15 min", "< 1 s", "37 s of CPU", "218 s wall".
DURATION = re.compile(r"(?:[≈<]\s*)?[0-9][0-9.]*(?:\s*[–-]\s*[0-9][0-9.]*)?\s*(?:s|min)\b(?: of CPU| wall)?")


@dataclass(frozen=True)
class Command:
    """A command of the README and how to find its stated duration.

    Attributes
    ----------
    name : str
        Short name (``--only``).
    argv : tuple of str
        The command after ``privaudit`` (or after the interpreter, for ``python=True``).
    readme : tuple of str
        Texts that mark the README lines stating its duration (every duration on them is printed).
    python : bool
        ``argv`` is run by this interpreter rather than by the ``privaudit`` script.
    out : bool
        Append ``--out <temporary folder>``.
    """

    name: str
    argv: tuple[str, ...]
    readme: tuple[str, ...]
    python: bool = False
    out: bool = True


COMMANDS = (
    Command("help", ("--help",), ("privaudit --help",), out=False),
    Command("list", ("list",), ("privaudit list  ",), out=False),
    Command("quickstart", ("run", "quickstart", "--no-cache"), ("privaudit run quickstart", "run the main job")),
    Command("thirdparty", ("run", "thirdparty", "--jobs", "2", "--no-cache"), ("privaudit run thirdparty --jobs 2",)),
    Command("bench-attackers", ("bench", "attackers", "--samples", "20000"), ("privaudit bench attackers --samples",)),
    Command("tests-not-slow", ("-m", "pytest", "-q", "-m", "not slow", "tests"),
            ('pytest -q -m "not slow" tests',), python=True, out=False),
    Command("tests", ("-m", "pytest", "-q", "tests"), ("Install and run the tests", "the wheel) included"), python=True, out=False),
)
#: Commands run by default: the test suite takes 5-15 minutes and is asked for by name.
DEFAULT = ("help", "list", "quickstart", "thirdparty", "bench-attackers")


def readme_figures(command: Command, readme: str) -> list[str]:
    """The durations the README states on the lines that show ``command``.

    Parameters
    ----------
    command : Command
    readme : str
        Text of README.md.

    Returns
    -------
    list of str
        Each duration once, in order of appearance (empty: the README gives none).
    """
    found: list[str] = []
    for line in readme.splitlines():
        if any(marker in line for marker in command.readme):
            found += [m.group(0) for m in DURATION.finditer(line) if m.group(0) not in found]
    return found


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    names = [c.name for c in COMMANDS]
    ap.add_argument("--only", nargs="+", choices=names, default=list(DEFAULT), metavar="NAME",
                    help=f"commands to time, among {', '.join(names)} (default: {' '.join(DEFAULT)})")
    args = ap.parse_args()
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    cli = privaudit_command()
    rows = []
    for command in (c for c in COMMANDS if c.name in args.only):
        with tempfile.TemporaryDirectory(prefix=f"bench-{command.name}-") as tmp:
            argv = [sys.executable, *command.argv] if command.python else [*cli, *command.argv]
            if command.out:
                argv += ["--out", tmp]
            before = load_average()
            timing = time_command(argv, cwd=ROOT if command.python else tmp)
            after = load_average()
        status = "ok" if timing.returncode in (0, 1) else f"exit {timing.returncode}"  # 1: an audit found a violation
        stated = ", ".join(readme_figures(command, readme)) or "(none)"
        rows.append((command.name, stated, timing, status))
        print(f"{command.name}: wall {timing.wall:.1f} s, cpu {timing.cpu:.1f} s, {status}; README: {stated}\n"
              f"  {before} (before)\n  {after} (after)", flush=True)
    print(f"\n{'command':<16} {'README':<28} {'wall s':>8} {'cpu s':>8}  status")
    for name, stated, timing, status in rows:
        print(f"{name:<16} {stated:<28} {timing.wall:>8.1f} {timing.cpu:>8.1f}  {status}")


if __name__ == "__main__":
    main()
