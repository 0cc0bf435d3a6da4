"""Resource limits checked before any task runs: memory estimates and the time budget.

Memory
    A task holds its releases as float64 arrays: per sample-size field ``n`` (a field
    declared ``samples=True``) about ``n × width × rounds`` numbers, where ``width`` is
    the widest input dimension the task names (``dim``, a component table's ``dim``, the
    length of ``x``, ``x_prime``, ``target_value``, ``beta``), and :data:`WORKING_COPIES`
    of them exist at once (two hypotheses, scores, sorting, temporaries). A component
    table with a ``dim`` allocates ``dim × dim`` matrices (the modulated mechanism's basis
    and covariances) when it is *built*, which happens while the configuration is
    validated, so :func:`check_components` runs on the raw document first.

    The estimate is compared with a limit: ``--max-memory`` when given, else the memory
    this machine has available (``MemAvailable`` of ``/proc/meminfo``, or the physical
    memory). A task over the limit is refused with exit code 2, naming the key, its
    value, the estimate and the limit, instead of swapping or being killed an hour in.

Time
    ``--budget SECONDS`` bounds a run's wall time (:class:`Budget`): past it, the running
    task is interrupted (a ``SIGALRM`` in the main thread; between results otherwise),
    finished tasks stay cached, and the run ends with exit code 2 naming the budget.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from privaudit.mechanisms.validation import InvalidParameterError

from privaudit.audit.schema.fields import ConfigError

#: Float64 arrays of the sample size alive at once in a task (hypotheses, scores, sort buffers).
WORKING_COPIES = 8
#: Matrices of size dim × dim a component with a ``dim`` builds (basis, covariance, factor, work).
MATRIX_COPIES = 4
#: Entry keys holding a component table (built from its parameters, possibly with dim × dim matrices).
COMPONENT_KEYS = ("mechanism", "prior", "learner")
#: Tables of an entry handed to code as keyword arguments: component tables and an experiment's ``params``.
PARAMETER_TABLES = (*COMPONENT_KEYS, "params")
#: Loop counts and sizes of components and experiments, with the largest value any audit needs. A table's
#: own constraints say only "a positive integer"; beyond these caps a run loops for days or allocates
#: per iteration until memory runs out (``epochs = 10**15`` asked for petabytes).
COUNT_LIMITS = {
    **dict.fromkeys(("epochs", "rounds", "switch_epoch", "n_repeats", "n_tune", "n_runs", "n_terms", "n_points",
                     "trace_every", "n_vectors", "embed_dim", "cat_embed_dim", "n_buckets", "n_support", "hidden",
                     "p"), 10**6),
    **dict.fromkeys(("n", "n_test", "n_train", "batch_size", "chunk_size", "bag_size", "n_public"), 10**8),
}
#: Keys whose (array) values set a task's input width.
WIDTH_KEYS = ("x", "x_prime", "target_value", "beta", "mean")
_UNITS = {"": 1, "b": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}


class ResourceLimitError(ConfigError, InvalidParameterError):
    """A task would need more memory than the limit, or the run exceeded its time budget (exit code 2)."""


class BudgetExceeded(BaseException):
    """Raised into a running task when the budget is spent (a BaseException: tasks must not catch it)."""


def available_memory() -> int:
    """Bytes of memory available to a new allocation on this machine."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
        return 2**34


def parse_size(text: str) -> int:
    """``"512M"``, ``"4G"``, ``"1.5GiB"``, ``"1000000"`` → bytes (powers of 1024).

    Parameters
    ----------
    text : str
        The size: a number with an optional k/M/G/T suffix and optional (i)B.

    Returns
    -------
    int
        Bytes (powers of 1024).

    Raises
    ------
    ValueError
        For text that is not a size, or a size below 1 byte.
    """
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:e[0-9]+)?)\s*([kmgt]?)(?:i?b)?\s*", str(text).lower())
    if not m:
        raise ValueError(f"must be a size such as 512M, 4G or 1.5GiB, got {text!r}")
    value = float(m.group(1)) * _UNITS[m.group(2)]
    if not math.isfinite(value) or value < 1:
        raise ValueError(f"must be a size of at least 1 byte, got {text!r}")
    return int(value)


def fmt_bytes(n: float) -> str:
    """``1536`` -> ``'1.5 KiB'`` (powers of 1024).

    Parameters
    ----------
    n : float
        A number of bytes.

    Returns
    -------
    str
    """
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1024
    return f"{n:.1f} PiB"  # pragma: no cover


@dataclasses.dataclass(frozen=True)
class Estimate:
    """Peak memory of a task (bytes), the key that drives it, and how it was computed."""

    bytes: float
    key: str
    value: Any
    formula: str


def _width(params: Mapping[str, Any]) -> int:
    width = 1
    for key, value in params.items():
        if key == "dim" and isinstance(value, int) and not isinstance(value, bool):
            width = max(width, value)
        elif key in WIDTH_KEYS and isinstance(value, list):
            width = max(width, _flat_len(value))
        elif isinstance(value, dict):
            width = max(width, _width(value))
    return width


def _flat_len(value: list) -> int:
    n, stack = 0, [value]
    while stack:
        v = stack.pop()
        if isinstance(v, list):
            stack.extend(v)
        else:
            n += 1
    return n


def estimate_task(params: Mapping[str, Any], sample_keys: tuple[str, ...]) -> Estimate | None:
    """Memory estimate of a task from its (scaled) parameters; None when it has no sample size.

    Parameters
    ----------
    params : mapping
        The task's parameters, sample sizes already scaled.
    sample_keys : tuple of str
        The task kind's sample-size keys.

    Returns
    -------
    Estimate or None
        The largest sample key's estimate.
    """
    width = _width(params)
    rounds = params.get("rounds", 1) if isinstance(params.get("rounds", 1), int) else 1
    best = None
    for key in sample_keys:
        n = params.get(key)
        if not isinstance(n, int | float) or isinstance(n, bool):
            continue
        size = float(n) * width * max(rounds, 1) * 8 * WORKING_COPIES
        if best is None or size > best.bytes:
            best = Estimate(size, key, n, f"{key} × width {width} × rounds {max(rounds, 1)} × 8 bytes × "
                                           f"{WORKING_COPIES} working copies")
    return best


def _limit_text(limit: int, explicit: bool) -> str:
    source = "--max-memory" if explicit else "this machine's available memory; set --max-memory to change it"
    return f"the memory limit {fmt_bytes(limit)} ({source})"


def check_tasks(tasks: Iterable[Any], sample_keys: Mapping[str, tuple[str, ...]], *, limit: int | None = None,
                kind_estimates: Mapping[str, Callable[[Mapping[str, Any]], Estimate | None]] | None = None) -> None:
    """Refuse, naming ``audits[i].key = value``, any task whose estimate exceeds the limit.

    Parameters
    ----------
    tasks : iterable of Task
        The planned tasks (``index``, ``kind`` and scaled ``params``).
    sample_keys : mapping of str to tuple of str
        A task kind's sample-size fields (the generic estimate, :func:`estimate_task`).
    limit : int, optional
        Bytes; default :func:`available_memory`.
    kind_estimates : mapping of str to callable(params) -> Estimate or None, optional
        A kind's own estimate where its memory is not linear in a sample size (the
        one-run audit's m × m canary features); the larger of the two is checked.

    Raises
    ------
    ResourceLimitError
        Naming the key, its value, the estimate and the limit.
    """
    explicit = limit is not None
    limit = available_memory() if limit is None else limit
    for task in tasks:
        est = estimate_task(task.params, sample_keys.get(task.kind, ()))
        own = (kind_estimates or {}).get(task.kind)
        if own is not None and (mine := own(task.params)) is not None and (est is None or mine.bytes > est.bytes):
            est = mine
        if est is not None and est.bytes > limit:
            raise ResourceLimitError(
                f"audits[{task.index}].{est.key} = {est.value!r} needs about {fmt_bytes(est.bytes)} "
                f"({est.formula}), more than {_limit_text(limit, explicit)}; lower it or --samples"
            )


def _counts(value: Any) -> Iterator[int]:
    """The integers of a count value: the value itself, or the elements of an array of them (``hidden``)."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, list):
            stack.extend(v)
        elif isinstance(v, int | float) and not isinstance(v, bool):
            yield v


def check_counts(data: Mapping[str, Any], *, where: str = "") -> None:
    """Refuse a loop count or size of a component table or experiment ``params`` above :data:`COUNT_LIMITS`.

    Parameters
    ----------
    data : mapping
        The configuration document.
    where : str
        Appended to the message (the file).

    Raises
    ------
    ResourceLimitError
        Naming ``audits[i].table.key``, its value and the cap.
    """
    audits = data.get("audits")
    for i, entry in enumerate(audits if isinstance(audits, list) else []):
        if not isinstance(entry, dict):
            continue
        for key in PARAMETER_TABLES:
            table = entry.get(key)
            if not isinstance(table, dict):
                continue
            for name, value in table.items():
                cap = COUNT_LIMITS.get(name)
                if cap is not None and any(v > cap for v in _counts(value)):
                    raise ResourceLimitError(
                        f"audits[{i}].{key}.{name} = {value!r} is above {cap:.0e}, the largest {name} any audit "
                        f"needs: a larger one runs for days or exhausts memory{where}")


def check_components(data: Mapping[str, Any], *, limit: int | None = None, where: str = "") -> None:
    """Refuse a component table whose ``dim`` would allocate more than the limit when it is built, and
    (:func:`check_counts`) a loop count or size of a component or an experiment above its cap.

    Parameters
    ----------
    data : mapping
        The parsed configuration.
    limit : int, optional
        Bytes (default: :func:`available_memory`).
    where : str
        Suffix of the messages (e.g. the configuration file).

    Raises
    ------
    ResourceLimitError
        Naming the key: a component ``dim`` too large for the limit, or a count above its cap.
    """
    check_counts(data, where=where)
    explicit = limit is not None
    limit = available_memory() if limit is None else limit
    audits = data.get("audits")
    for i, entry in enumerate(audits if isinstance(audits, list) else []):
        if not isinstance(entry, dict):
            continue
        for key, table in entry.items():
            dim = table.get("dim") if isinstance(table, dict) and key in COMPONENT_KEYS else None
            if isinstance(dim, int) and not isinstance(dim, bool) and dim > 0:
                size = float(dim) ** 2 * 8 * MATRIX_COPIES
                if size > limit:
                    raise ResourceLimitError(
                        f"audits[{i}].{key}.dim = {dim!r} builds {dim} × {dim} matrices, about {fmt_bytes(size)} "
                        f"(dim² × 8 bytes × {MATRIX_COPIES}), more than {_limit_text(limit, explicit)}{where}"
                    )


class Budget:
    """Wall-time budget of a run: ``remaining()``, ``check()`` and ``alarm()`` around blocking work."""

    def __init__(self, seconds: float | None):
        if seconds is not None and not (isinstance(seconds, int | float) and math.isfinite(seconds) and seconds > 0):
            raise ResourceLimitError(f"--budget must be a finite number of seconds > 0, got --budget {seconds!r}")
        self.seconds = seconds
        self.start = time.monotonic()

    def remaining(self) -> float:
        """Seconds left (``inf`` without a budget)."""
        return math.inf if self.seconds is None else self.seconds - (time.monotonic() - self.start)

    def error(self, done: int, total: int, *, cached: bool = True) -> ResourceLimitError:
        """The exit-2 error of a spent budget, naming ``--budget`` and how far the run got.

        Parameters
        ----------
        done : int
            Tasks finished.
        total : int
            Tasks planned.
        cached : bool
            Whether finished tasks are cached (the message then says how to resume).

        Returns
        -------
        ResourceLimitError
            To be raised by the caller.
        """
        then = ("finished tasks are cached: rerun with a larger --budget to resume" if cached else
                "rerun with a larger --budget")
        return ResourceLimitError(f"--budget {self.seconds:g} s spent after {done} of {total} tasks; {then}")

    @contextmanager
    def alarm(self) -> Iterator[None]:
        """Raise :class:`BudgetExceeded` in the main thread when the budget runs out (no-op elsewhere)."""
        usable = (self.seconds is not None and hasattr(signal, "setitimer")
                  and threading.current_thread() is threading.main_thread())
        if not usable:
            yield
            return

        def _fire(signum, frame):
            raise BudgetExceeded

        previous = signal.signal(signal.SIGALRM, _fire)
        signal.setitimer(signal.ITIMER_REAL, max(self.remaining(), 1e-3))
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
