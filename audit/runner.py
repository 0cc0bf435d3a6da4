"""Run the tasks of a configuration, locally (joblib) or on a Dask cluster, with a cache.

Execution
    ``jobs=1`` runs tasks in this process, in order. ``jobs > 1`` (or ``-1`` for every
    core) runs them in joblib's ``loky`` process pool. ``scheduler="tcp://HOST:PORT"``
    submits them to a running ``dask.distributed`` scheduler through a
    :class:`distributed.Client`; results stream back as they finish.

Reproducibility
    Each task owns a generator spawned from the root seed by its index
    (:class:`privaudit.audit.tasks.Task`), so the report's numbers depend on the seed
    only, never on ``jobs``, the scheduler, or completion order.

Failures
    A task that raises is recorded with its error (verdict ``"error"``) and the
    others still run (:func:`privaudit.audit.tasks.execute_task`).

Cache and resumption
    Every successful task is written, as soon as it returns, to
    ``<out>/<name>/cache/<index>-<key>.json`` where ``key`` is the content hash of the task
    (kind, target, scaled parameters, seed, index, privaudit version). A rerun,
    e.g. after an interruption, loads those files and runs only the missing tasks.
    Failed tasks are not cached, so a rerun retries them. Every file is written to a
    temporary file in the same folder and moved into place with :func:`os.replace`,
    so an interrupted write never leaves a truncated cache entry or report.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

from .config import Config, ConfigError
from .report import atomic_write, build_report, write_report
from .tasks import Task, execute_task, get_task_kind, plan_tasks

CACHE_DIR = "cache"
#: Seconds before a progress bar appears: short runs print nothing.
PROGRESS_DELAY = 2.0


class SchedulerError(ConfigError, ValueError):
    """The Dask scheduler address is malformed or unreachable (a usage error: exit code 2)."""


@dataclasses.dataclass
class RunResult:
    """What a run produced.

    Attributes
    ----------
    report : dict
        The ``privaudit.report/1`` document (also written to ``out_dir/report.json``).
    out_dir : Path
    executed : list of int
        Indices of the tasks run now.
    cached : list of int
        Indices of the tasks loaded from the cache.
    seconds : float
        Wall time of the run.
    """

    report: dict
    out_dir: Path
    executed: list[int]
    cached: list[int]
    seconds: float

    @property
    def status(self) -> str:
        return self.report["summary"]["status"]

    @property
    def exit_code(self) -> int:
        """0 when every audit passed (or is informational), 1 otherwise."""
        return 0 if self.status == "pass" else 1


def _cache_path(cache_dir: Path, task: Task) -> Path:
    return cache_dir / f"{task.index:03d}-{task.key}.json"


def load_cached(cache_dir: Path, task: Task) -> dict | None:
    """The cached outcome of ``task``, or None (missing, unreadable or from another task)."""
    path = _cache_path(cache_dir, task)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if data.get("key") != task.key or not data.get("ok") or not isinstance(data.get("results"), list):
        return None
    return data


def store_cached(cache_dir: Path, task: Task, outcome: dict) -> None:
    atomic_write(_cache_path(cache_dir, task), json.dumps(outcome, sort_keys=True, indent=1))


def _local_outcomes(tasks: list[Task], jobs: int) -> Iterator[dict]:
    if jobs == 1 or len(tasks) <= 1:
        for task in tasks:
            yield execute_task(task)
        return
    from joblib import Parallel, delayed

    yield from Parallel(n_jobs=jobs, return_as="generator_unordered")(
        delayed(execute_task)(t, get_task_kind(t.kind).run) for t in tasks
    )


def _dask_outcomes(tasks: list[Task], scheduler: str, timeout: float) -> Iterator[dict]:
    try:
        from distributed import Client, as_completed
    except ImportError as exc:  # pragma: no cover - dask is a declared optional dependency
        raise SchedulerError(
            f"--scheduler {scheduler} needs dask.distributed: pip install 'privaudit[distributed]' ({exc})"
        ) from exc
    try:
        client = Client(scheduler, timeout=timeout, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        raise SchedulerError(f"cannot connect to the Dask scheduler at --scheduler {scheduler}: {exc}") from exc
    # as_current: as_completed finds this client without making it the process-wide default.
    with client, client.as_current():
        runs = [get_task_kind(t.kind).run for t in tasks]
        futures = client.map(
            execute_task, tasks, runs, key=[f"privaudit-{t.index}-{t.key}" for t in tasks], pure=False
        )
        by_key = {f.key: t for f, t in zip(futures, tasks)}
        for fut in as_completed(futures):
            try:
                yield fut.result()
            except Exception as exc:  # noqa: BLE001 - a lost worker: record it, keep the others
                task = by_key[fut.key]
                yield {"key": task.key, "index": task.index, "ok": False, "results": [{
                    "kind": task.kind, "target": task.target, "verdict": "error",
                    "error": f"{type(exc).__name__}: {exc}",
                }]}


def check_scheduler(scheduler: str) -> str:
    """Validate a Dask scheduler address of the form ``scheme://host:port``."""
    if not isinstance(scheduler, str) or "://" not in scheduler or scheduler.endswith("://"):
        raise SchedulerError(f"--scheduler must look like tcp://HOST:PORT, got --scheduler {scheduler!r}")
    return scheduler


def _progress(total: int, enabled: bool, desc: str):
    from tqdm.auto import tqdm

    # delay: no bar at all for runs shorter than a couple of seconds.
    return tqdm(total=total, disable=not enabled, delay=PROGRESS_DELAY, desc=desc, unit="task", file=sys.stderr,
                leave=False)


def run_tasks(
    tasks: list[Task], *, cache_dir: Path | None, jobs: int = 1, scheduler: str | None = None,
    progress: bool = False, desc: str = "", timeout: float = 30.0,
) -> tuple[dict[int, dict], list[int], list[int]]:
    """Run ``tasks`` (skipping cached ones); return outcomes by index, executed and cached indices."""
    outcomes: dict[int, dict] = {}
    cached = []
    if cache_dir is not None:
        for t in tasks:
            hit = load_cached(cache_dir, t)
            if hit is not None:
                outcomes[t.index] = hit
                cached.append(t.index)
    pending = [t for t in tasks if t.index not in outcomes]
    by_index = {t.index: t for t in pending}
    stream: Iterable[dict]
    if scheduler is not None:
        stream = _dask_outcomes(pending, check_scheduler(scheduler), timeout)
    else:
        stream = _local_outcomes(pending, jobs)
    executed = []
    with _progress(len(pending), progress, desc) as bar:
        for outcome in stream:
            idx = outcome["index"]
            outcomes[idx] = outcome
            executed.append(idx)
            # Write each result as it arrives, so an interruption loses only running tasks.
            if cache_dir is not None and outcome["ok"]:
                store_cached(cache_dir, by_index[idx], outcome)
            bar.update(1)
    return outcomes, sorted(executed), sorted(cached)


def run_config(
    config: Config, *, out: str | Path = "reports", jobs: int = 1, scheduler: str | None = None,
    progress: bool | None = None, use_cache: bool = True, figures: bool = True, timeout: float = 30.0,
) -> RunResult:
    """Run every audit of ``config`` and write ``<out>/<config.name>/`` (report.json, .md, .html, figures).

    Parameters
    ----------
    config : Config
    out : path
        Parent folder of the report folder.
    jobs : int
        Local worker processes (``-1``: every core). Ignored with ``scheduler``.
    scheduler : str, optional
        Address of a Dask distributed scheduler, ``tcp://HOST:PORT``.
    progress : bool, optional
        Show a tqdm bar (after 2 s); default: only when stdout and stderr are terminals.
    use_cache : bool
        Reuse finished tasks from ``<out>/<name>/cache`` (and write new ones).
    figures : bool
        Render figures (matplotlib) into the report.
    timeout : float
        Seconds to wait when connecting to the scheduler.
    """
    start = time.perf_counter()
    if progress is None:
        progress = sys.stdout.isatty() and sys.stderr.isatty()
    out_dir = Path(out) / config.name
    cache_dir = out_dir / CACHE_DIR if use_cache else None
    tasks = plan_tasks(config)
    outcomes, executed, cached = run_tasks(
        tasks, cache_dir=cache_dir, jobs=jobs, scheduler=scheduler, progress=progress, desc=config.name,
        timeout=timeout,
    )
    report = build_report(config, tasks, outcomes)
    write_report(report, out_dir, figures=figures)
    return RunResult(report, out_dir, executed, cached, time.perf_counter() - start)
