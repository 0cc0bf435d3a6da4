"""Wall and CPU time of a command run in a subprocess, and the machine's load, for the benchmark scripts.

CPU time (user + system of the child) is printed beside wall time because it moves much
less than wall time when other processes share the cores: on a loaded machine it is the
better estimate of what the command costs on a quiet one.
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Timing:
    """One run of a command.

    Attributes
    ----------
    wall : float
        Elapsed seconds.
    cpu : float
        User + system seconds of the child and its children.
    returncode : int
    """

    wall: float
    cpu: float
    returncode: int


def privaudit_command() -> list[str]:
    """The ``privaudit`` console script of this interpreter (not a shell shim that adds its own start-up).

    Returns
    -------
    list of str
        ``[path]`` of the script beside ``sys.executable``, else the one on ``PATH``, else
        ``[sys.executable, "-m", "privaudit.audit.app.cli"]``.
    """
    beside = Path(sys.executable).with_name("privaudit")
    if beside.is_file():
        return [str(beside)]
    found = shutil.which("privaudit")
    return [found] if found else [sys.executable, "-m", "privaudit.audit.app.cli"]


def time_command(argv: Sequence[str], *, cwd: str | Path | None = None, timeout: float | None = None) -> Timing:
    """Run ``argv`` once (output discarded) and time it.

    Parameters
    ----------
    argv : sequence of str
        The command.
    cwd : path, optional
        Working folder.
    timeout : float, optional
        Seconds before the command is killed (``subprocess.TimeoutExpired`` propagates).

    Returns
    -------
    Timing
    """
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(list(argv), cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                          timeout=timeout, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Timing(wall, cpu, proc.returncode)


def load_average() -> str:
    """``"load 1/5/15 min: a / b / c on N cores"`` (``os.getloadavg``).

    Returns
    -------
    str
    """
    one, five, fifteen = os.getloadavg()
    return f"load 1/5/15 min: {one:.2f} / {five:.2f} / {fifteen:.2f} on {os.cpu_count()} cores"
