"""Run the tasks of a configuration, locally (joblib) or on a Dask cluster, with a verified cache.

Preflight
    :func:`preflight` runs before any task: it plans the tasks, checks that ``--out`` can
    take the report set (:func:`privaudit.audit.app.report_store.check_destination`) and that
    every task fits the memory limit (:mod:`privaudit.audit.schema.limits`). Each problem is a
    :class:`~privaudit.audit.app.config.ConfigError` (exit code 2) naming the key and the value.

Execution
    ``jobs=1`` runs tasks in this process, in order. ``jobs > 1`` (or ``-1`` for every
    core) runs them in joblib's ``loky`` process pool. ``scheduler="tcp://HOST:PORT"``
    submits them to a running ``dask.distributed`` scheduler; the address is parsed and
    probed first (:func:`probe_scheduler`: a connect and the scheduler's handshake,
    decoded without deserialising anything), so a bad one fails in seconds with exit code 2.

Trusting a Dask cluster
    Dask's protocol ships pickles both ways: the scheduler and its workers run code in
    this process when it reads their messages, and see every task and result. The
    probe decodes only the listener's handshake, as plain msgpack data (it never
    deserialises objects), and a
    scheduler that is not on this machine (not loopback) must use TLS (``tls://``,
    ``wss://``) unless the user opts in with ``--insecure-scheduler``: on a plain TCP
    link anyone on the path could answer in the scheduler's name.

Reproducibility
    Each task owns a generator spawned from the root seed by its index, so the numbers
    depend on the seed only. Every outcome passes through strict JSON as soon as it is
    computed (in the worker), exactly as a cached one does, so a report is byte-identical
    whether its results were computed now, by one or several processes, on Dask, or
    loaded from the cache. Wall times go to the run log only.

Failures
    A task that raises is recorded with its error (verdict ``"error"``) and the others
    still run; a result that is not JSON data (a NaN in a plain dict) is such an error.

Cache and resumption
    Every successful task is written, as soon as it returns, to the verified cache
    (:mod:`privaudit.audit.app.cache`: keyed by configuration and code, authenticated with a
    per-user key). A rerun, e.g. after Ctrl-C, a kill or an exhausted ``budget``, loads
    the verified entries and runs only the missing tasks. A rejected entry (tampered,
    malformed, stale) is recomputed with a :class:`~privaudit.audit.app.cache.CacheWarning`.
    A task using code from outside privaudit (:func:`~privaudit.audit.app.cache.outside_code`)
    is neither read from nor written to the cache: the fingerprint does not cover that code.
    The cache folder is opened without following links (a linked ``cache/`` is exit 2).
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import ipaddress
import json
import socket
import sys
import time
import warnings
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from urllib.parse import urlsplit

from privaudit.audit.app.cache import (
    CacheUnavailable,
    CacheWarning,
    cache_secret,
    load_entry,
    outside_code,
    store_entry,
)
from privaudit.audit.app.config import Config, ConfigError
from privaudit.audit.schema.limits import COMPONENT_KEYS, Budget, BudgetExceeded, check_tasks
from privaudit.audit.app.provenance import code_fingerprint
from privaudit.audit.reporting.render import build_report, report_files, report_json
from privaudit.audit.app.report_store import (
    check_destination,
    config_identity,
    open_set_folder,
    recover_set,
    write_set,
)
from privaudit.audit.app.tasks import Task, execute_task, get_task_kind, plan_tasks

CACHE_DIR = "cache"
#: Seconds before a progress bar appears: short runs print nothing.
PROGRESS_DELAY = 2.0
#: Dask address schemes accepted by --scheduler.
SCHEDULER_SCHEMES = ("tcp", "tls", "ws", "wss", "ucx")
#: Schemes whose traffic is encrypted and authenticated (TLS): accepted for any host.
ENCRYPTED_SCHEMES = ("tls", "wss")


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
        Indices of the tasks whose results came from the verified cache.
    seconds : float
        Wall time of the run.
    cache_warnings : list of str
        Rejected cache entries (recomputed) and why.
    rewritten : bool
        False when the report set on disk was already identical (only the run log changed).
    not_cached : dict of int to str
        Tasks kept out of the cache (they use code outside privaudit), and why.
    """

    report: dict
    out_dir: Path
    executed: list[int]
    cached: list[int]
    seconds: float
    cache_warnings: list[str] = dataclasses.field(default_factory=list)
    rewritten: bool = True
    not_cached: dict[int, str] = dataclasses.field(default_factory=dict)

    @property
    def status(self) -> str:
        """The report's overall status (``pass``, ``violation``, ``fail``, ``error``, ...)."""
        return self.report["summary"]["status"]

    @property
    def exit_code(self) -> int:
        """0 when every audit passed (or is informational), 1 otherwise."""
        return 0 if self.status == "pass" else 1


# --------------------------------------------------------------------------- one task
def run_task(task: Task, run: Callable | None = None) -> dict:
    """:func:`~privaudit.audit.app.tasks.execute_task`, timed, with its results passed through strict JSON.

    Runs in the worker, so every execution mode returns exactly what the cache returns.

    Parameters
    ----------
    task : Task
        The task.
    run : callable, optional
        The kind's function, shipped with the task (default: looked up in the registry).

    Returns
    -------
    dict
        ``{"key", "index", "ok", "results", "seconds"}``; results that are not strict JSON become one error result.
    """
    start = time.perf_counter()
    outcome = execute_task(task, run)
    try:
        outcome["results"] = json.loads(json.dumps(outcome["results"], allow_nan=False))
    except (TypeError, ValueError) as exc:
        outcome = {"key": task.key, "index": task.index, "ok": False, "results": [{
            "kind": task.kind, "target": task.target, "verdict": "error",
            "error": f"the task's result is not JSON data: {exc}",
        }]}
    outcome["seconds"] = time.perf_counter() - start
    return outcome


def _local_outcomes(tasks: list[Task], jobs: int) -> Iterator[dict]:
    if jobs == 1 or len(tasks) <= 1:
        for task in tasks:
            yield run_task(task)
        return
    from joblib import Parallel, delayed

    yield from Parallel(n_jobs=jobs, return_as="generator_unordered")(
        delayed(run_task)(t, get_task_kind(t.kind).run) for t in tasks
    )


# --------------------------------------------------------------------------- Dask
def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a host name: it may resolve anywhere
        return False


def check_scheduler(scheduler: str, *, insecure: bool = False) -> str:
    """Validate a Dask address ``scheme://host:port``, and refuse plain TCP to another machine.

    Parameters
    ----------
    scheduler : str
        The address given to ``--scheduler``.
    insecure : bool
        Accept an unencrypted scheme (``tcp``, ``ws``, ``ucx``) to a host that is not
        loopback (``--insecure-scheduler``).

    Returns
    -------
    str
        ``scheduler``.

    Raises
    ------
    SchedulerError
        Naming the address and what is wrong with it.
    """
    shape = "must look like tcp://HOST:PORT (or tls://HOST:PORT)"
    if not isinstance(scheduler, str) or "://" not in scheduler:
        raise SchedulerError(f"--scheduler {shape}, got --scheduler {scheduler!r}")
    try:
        parts = urlsplit(scheduler)
        port = parts.port
    except ValueError as exc:
        raise SchedulerError(f"--scheduler {shape}, got --scheduler {scheduler!r} ({exc})") from None
    if parts.scheme not in SCHEDULER_SCHEMES:
        raise SchedulerError(f"--scheduler {shape}; scheme {parts.scheme!r} is not one of "
                             f"{list(SCHEDULER_SCHEMES)}, got --scheduler {scheduler!r}")
    if not parts.hostname or port is None or parts.path not in ("", "/") or parts.query:
        raise SchedulerError(f"--scheduler {shape}, got --scheduler {scheduler!r}")
    if parts.scheme not in ENCRYPTED_SCHEMES and not _loopback(parts.hostname) and not insecure:
        raise SchedulerError(
            f"--scheduler {scheduler} is not on this machine and {parts.scheme}:// is not encrypted: whoever "
            f"answers there runs code in this process (Dask ships pickles); use TLS (tls://{parts.netloc}, "
            f"see docs/cli.md), or pass --insecure-scheduler if this network is trusted"
        )
    return scheduler


#: Largest handshake accepted from a listener (a Dask handshake is ~100 bytes).
MAX_HANDSHAKE_BYTES = 64 * 2**10
#: Keys of the handshake a Dask peer sends first on every connection (``Comm.handshake_info``).
HANDSHAKE_KEYS = ("compression", "python", "pickle-protocol")


def probe_scheduler(scheduler: str, timeout: float = 5.0, *, insecure: bool = False) -> None:
    """Check within ``timeout`` seconds that a Dask peer answers at ``scheduler``, deserialising nothing it sends.

    A TCP connect (and, for ``tls://`` and ``wss://``, the TLS handshake with the
    certificates of the Dask configuration, ``distributed.comm.tls.*``), then the one
    message a Dask scheduler sends first on every connection, its handshake: at most
    :data:`MAX_HANDSHAKE_BYTES`, framed as Dask frames it, whose first frame is decoded
    with plain :func:`msgpack.unpackb` (no object hook, so no ``__Pickled__`` or
    ``__Serialized__`` value is ever turned into an object) and must be a mapping with
    the handshake's keys. Nothing is written to the listener. ``ws://`` and ``ucx://``
    frame differently: for them the connect is the whole probe.

    Parameters
    ----------
    scheduler : str
        The address.
    timeout : float
        Seconds for the connect and the handshake.
    insecure : bool
        As in :func:`check_scheduler`.

    Raises
    ------
    SchedulerError
        A malformed or refused address, nothing listening, a failed TLS handshake, or a
        listener that does not answer as a Dask scheduler.
    """
    check_scheduler(scheduler, insecure=insecure)
    parts = urlsplit(scheduler)
    try:
        with socket.create_connection((parts.hostname, parts.port), timeout=timeout) as sock:
            if parts.scheme in ENCRYPTED_SCHEMES:
                with _tls_context().wrap_socket(sock, server_hostname=parts.hostname) as tls:
                    reply = _read_handshake(tls) if parts.scheme == "tls" else None
            else:
                reply = _read_handshake(sock) if parts.scheme == "tcp" else None
    except (OSError, ValueError) as exc:
        raise SchedulerError(f"cannot connect to the Dask scheduler at --scheduler {scheduler}: "
                             f"{type(exc).__name__}: {exc}") from None
    if reply is not None and not (isinstance(reply, dict) and all(k in reply for k in HANDSHAKE_KEYS)):
        raise SchedulerError(f"cannot connect to the Dask scheduler at --scheduler {scheduler}: it answers, but not "
                             f"as a Dask scheduler (got {reply!r:.80})")


def _recv_exactly(sock: socket.socket, n: int) -> bytes:
    data = bytearray()
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError(f"the listener closed the connection after {len(data)} of {n} bytes")
        data += chunk
    return bytes(data)


def _read_handshake(sock: socket.socket) -> object:
    """The first frame of the first Dask message on ``sock``, as plain msgpack data (or the reason it is not one).

    Dask's TCP framing: 8 bytes (little-endian) giving the message size, then the number of
    frames (8 bytes), each frame's size (8 bytes each) and the frames. Every size is
    checked against :data:`MAX_HANDSHAKE_BYTES` before anything is read.
    """
    import msgpack

    size = int.from_bytes(_recv_exactly(sock, 8), "little")
    if not 16 <= size <= MAX_HANDSHAKE_BYTES:
        return f"a first message of {size} bytes"
    body = _recv_exactly(sock, size)
    n_frames = int.from_bytes(body[:8], "little")
    if not 1 <= n_frames <= (size - 8) // 8:
        return f"{n_frames} frames"
    first = int.from_bytes(body[8:16], "little")
    start = 8 * (1 + n_frames)
    if start + first > size:
        return "frames longer than the message"
    try:
        # Plain msgpack: no object_hook, no ext_hook, so nothing is unpickled or constructed.
        return msgpack.unpackb(body[start:start + first], raw=False, strict_map_key=False, use_list=True)
    except (ValueError, TypeError, msgpack.UnpackException) as exc:  # TypeError: an unhashable map key
        return f"not msgpack ({exc})"


def _tls_context():
    """The client TLS context of the Dask configuration (``distributed.comm.tls.*``), as a Client would use."""
    try:
        from distributed.security import Security
    except ImportError as exc:  # pragma: no cover - dask is a declared optional dependency
        raise SchedulerError(f"a tls:// scheduler needs dask.distributed: pip install 'privaudit[distributed]' "
                             f"({exc})") from None
    context = Security().get_connection_args("client").get("ssl_context")
    if context is None:
        raise SchedulerError("a tls:// scheduler needs the client certificates of the Dask configuration "
                             "(distributed.comm.tls.ca-file, .client.cert, .client.key; see docs/cli.md)")
    return context


def _dask_outcomes(tasks: list[Task], scheduler: str, timeout: float, insecure: bool = False) -> Iterator[dict]:
    probe_scheduler(scheduler, min(timeout, 5.0), insecure=insecure)
    from distributed import Client, as_completed

    try:
        client = Client(scheduler, timeout=timeout, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        raise SchedulerError(f"cannot connect to the Dask scheduler at --scheduler {scheduler}: {exc}") from None
    # as_current: as_completed finds this client without making it the process-wide default.
    with client, client.as_current():
        runs = [get_task_kind(t.kind).run for t in tasks]
        futures = client.map(run_task, tasks, runs, key=[f"privaudit-{t.index}-{t.key}" for t in tasks], pure=False)
        by_key = {f.key: t for f, t in zip(futures, tasks)}
        try:
            for fut in as_completed(futures):
                try:
                    yield fut.result()
                except Exception as exc:  # noqa: BLE001 - a lost worker: record it, keep the others
                    task = by_key[fut.key]
                    yield {"key": task.key, "index": task.index, "ok": False, "seconds": 0.0, "results": [{
                        "kind": task.kind, "target": task.target, "verdict": "error",
                        "error": f"{type(exc).__name__}: {exc}",
                    }]}
        finally:
            client.cancel([f for f in futures if not f.done()])


# --------------------------------------------------------------------------- cache
def _progress(total: int, enabled: bool, desc: str):
    from tqdm.auto import tqdm

    # delay: no bar at all for runs shorter than a couple of seconds.
    return tqdm(total=total, disable=not enabled, delay=PROGRESS_DELAY, desc=desc, unit="task", file=sys.stderr,
                leave=False)


def _cache_warning(message: str, sink: list[str]) -> None:
    sink.append(message)
    warnings.warn(message, CacheWarning, stacklevel=3)


def _load_cached(tasks: list[Task], cache_dir: Path | int, secret: bytes, sink: list[str]) -> dict[int, dict]:
    hits = {}
    for t in tasks:
        outcome, problem = load_entry(cache_dir, t.index, t.key, secret)
        if outcome is not None:
            hits[t.index] = outcome
        elif problem is not None:
            _cache_warning(f"cache entry of task {t.index} ({t.target}) rejected and recomputed: {problem}", sink)
    return hits


def uncacheable(tasks: list[Task]) -> dict[int, str]:
    """Tasks that must not be cached, by index, with the reason: those using code outside privaudit.

    Parameters
    ----------
    tasks : list of Task
        The planned tasks.

    Returns
    -------
    dict of int to str
        Task index → the reason.
    """
    from privaudit.audit.kinds import KINDS

    out = {}
    for t in tasks:
        modules = outside_code(t.params)
        source = KINDS.source(t.kind) if t.kind in KINDS.names() else ""
        if source.startswith("entry point "):  # the kind itself is a plugin's code
            modules = [source, *modules]
        if modules:
            out[t.index] = (f"uses code from {', '.join(repr(m) for m in modules)}, outside privaudit: that code can "
                            f"change without the cache noticing, so the task is run every time, never cached")
    return out


def load_secret(sink: list[str]) -> bytes | None:
    """The per-user cache key, or None with a warning in ``sink`` (the run then goes on without the cache).

    Parameters
    ----------
    sink : list of str
        Where warnings are collected for the report.

    Returns
    -------
    bytes or None
    """
    try:
        return cache_secret()
    except CacheUnavailable as exc:
        _cache_warning(f"cache disabled: {exc}", sink)
        return None


def run_tasks(
    tasks: list[Task], *, cache_dir: Path | int | None, jobs: int = 1, scheduler: str | None = None,
    progress: bool = False, desc: str = "", timeout: float = 10.0, budget: Budget | None = None,
    cache_warnings: list[str] | None = None, seconds: dict[int, float] | None = None,
    secret: bytes | None = None, not_cached: dict[int, str] | None = None, insecure_scheduler: bool = False,
) -> tuple[dict[int, dict], list[int], list[int]]:
    """Run ``tasks`` (skipping verified cached ones); return outcomes by index, executed and cached indices.

    Parameters
    ----------
    tasks : list of Task
    cache_dir : Path, int or None
        The cache folder (a path, opened without following links, or a descriptor); None: no cache.
    jobs, scheduler, progress, desc, timeout, budget
        As in :func:`run_config`.
    cache_warnings : list of str, optional
        Receives the cache warnings.
    seconds : dict, optional
        Receives each executed task's wall time.
    secret : bytes, optional
        The cache key (default: :func:`load_secret` when ``cache_dir`` is given).
    not_cached : dict, optional
        Receives the tasks kept out of the cache and why (:func:`uncacheable`).
    insecure_scheduler : bool
        Accept a plain-TCP scheduler that is not on this machine.

    Returns
    -------
    tuple
        Outcomes by index, executed indices, cached indices.

    Raises
    ------
    ResourceLimitError
        ``budget`` ran out (finished tasks are cached).
    """
    budget = budget or Budget(None)
    sink = [] if cache_warnings is None else cache_warnings
    seconds = {} if seconds is None else seconds
    skipped = {} if not_cached is None else not_cached
    if cache_dir is None:
        secret = None
    elif secret is None:
        secret = load_secret(sink)
    if secret is not None:
        skipped.update(uncacheable(tasks))
    cacheable = [t for t in tasks if t.index not in skipped]
    outcomes = _load_cached(cacheable, cache_dir, secret, sink) if secret is not None else {}
    cached = sorted(outcomes)
    pending = [t for t in tasks if t.index not in outcomes]
    stream: Iterable[dict]
    if scheduler is not None:
        stream = _dask_outcomes(pending, check_scheduler(scheduler, insecure=insecure_scheduler), timeout,
                                insecure_scheduler)
    else:
        stream = _local_outcomes(pending, jobs)
    executed = []
    with _progress(len(pending), progress, desc) as bar, budget.alarm():
        try:
            for outcome in stream:
                idx = outcome["index"]
                seconds[idx] = outcome.pop("seconds", 0.0)
                outcomes[idx] = outcome
                executed.append(idx)
                # Write each result as it arrives, so an interruption loses only running tasks.
                if secret is not None and outcome["ok"] and idx not in skipped:
                    _store(cache_dir, idx, outcome, secret, sink)
                bar.update(1)
                if budget.remaining() <= 0:
                    raise BudgetExceeded
        except BudgetExceeded:
            raise budget.error(len(executed) + len(cached), len(tasks), cached=secret is not None) from None
    return outcomes, sorted(executed), cached


def _store(cache_dir: Path | int, idx: int, outcome: dict, secret: bytes, sink: list[str]) -> None:
    """Cache a result; a file in the way (a folder where the entry goes) is a warning, not a failed run."""
    try:
        store_entry(cache_dir, idx, outcome["key"], outcome["results"], secret)
    except OSError as exc:
        _cache_warning(f"result of task {idx} not cached: {exc}", sink)


# --------------------------------------------------------------------------- a configuration
def sample_keys(tasks: list[Task]) -> dict[str, tuple[str, ...]]:
    """Sample-size fields of each task kind in ``tasks`` (the fields declared ``samples=True``).

    Parameters
    ----------
    tasks : list of Task
        The planned tasks.

    Returns
    -------
    dict of str to tuple of str
        Kind → its sample-size keys.
    """
    out = {}
    for t in tasks:
        fields = getattr(get_task_kind(t.kind), "fields", {}) or {}
        out[t.kind] = tuple(n for n, f in fields.items() if getattr(f, "samples", False))
    return out


def kind_estimates(tasks: list[Task]) -> dict[str, object]:
    """The memory estimates the kinds of ``tasks`` declare (``AuditKind.memory``), by kind.

    Parameters
    ----------
    tasks : list of Task
        The planned tasks.

    Returns
    -------
    dict of str to callable
        Kind → its ``memory(params)`` estimate.
    """
    out = {}
    for t in tasks:
        memory = getattr(get_task_kind(t.kind), "memory", None)
        if memory is not None:
            out[t.kind] = memory
    return out


@dataclasses.dataclass(frozen=True)
class Preflight:
    """What :func:`preflight` checked, for :func:`run_config` (which then does not check it again).

    Attributes
    ----------
    config : Config
    out : Path
    overwrite : bool
    max_memory : int or None
    tasks : list of Task
        The planned tasks.
    """

    config: Config
    out: Path
    overwrite: bool
    max_memory: int | None
    tasks: list[Task]

    def covers(self, config: Config, out: str | Path, overwrite: bool, max_memory: int | None) -> bool:
        """Whether these checks were made for this configuration, ``out``, ``overwrite`` and ``max_memory``.

        Parameters
        ----------
        config : Config
        out : path
        overwrite : bool
        max_memory : int or None

        Returns
        -------
        bool
        """
        return (self.config == config and self.out == Path(out) and self.overwrite == overwrite
                and self.max_memory == max_memory)


def preflight(config: Config, *, out: str | Path = "reports", overwrite: bool = False,
              max_memory: int | None = None) -> Preflight:
    """Everything checked before a task runs: plan the tasks, check ``--out``, memory, and build each component once.

    Parameters
    ----------
    config : Config
    out : path
        Parent folder of the report set.
    overwrite : bool
        Allow replacing a set another configuration of the same name wrote.
    max_memory : int, optional
        Bytes a task may need (default: this machine's available memory).

    Returns
    -------
    Preflight
        The planned tasks, with what they were checked for (pass it to :func:`run_config`).

    Raises
    ------
    OutDirError
        ``--out`` is a file, unwritable, or holds another configuration's set of this name.
    ResourceLimitError
        A task's memory estimate exceeds ``max_memory`` (default: this machine's available memory).
    ConfigValueError
        A registered component's constructor refuses its table (see :func:`check_buildable`).
        Messages about an entry name the configuration's source.
    """
    tasks = plan_tasks(config)
    check_destination(out, config.name, config.source, overwrite=overwrite)
    try:
        check_tasks(tasks, sample_keys(tasks), limit=max_memory, kind_estimates=kind_estimates(tasks))
        check_buildable(tasks)
    except ConfigError as exc:
        where = f" (in {config.source})" if config.source else ""
        if where and where not in str(exc):
            exc.args = (f"{exc.args[0]}{where}",)
        raise
    return Preflight(config, Path(out), overwrite, max_memory, tasks)


def check_buildable(tasks: list[Task]) -> None:
    """Build every *registered* component of every task once, so a parameter its constructor refuses
    (an ε whose arithmetic overflows, a scale below the float-safe range) is exit 2 now, not an error
    in the report later.

    Only components of the registries (built-ins and installed entry points) are built, after the
    memory check; ``"module:attr"`` references are not (nothing of an imported module is called
    before the run). Raises a :class:`~privaudit.audit.app.config.ConfigValueError` naming the key path
    and the table.

    Parameters
    ----------
    tasks : list of Task
        The planned tasks.
    """
    from privaudit.audit.schema import components
    from privaudit.audit.schema.fields import ConfigValueError

    registries = {"mechanism": components.MECHANISMS, "prior": components.PRIORS, "learner": components.LEARNERS}
    for task in tasks:
        built = {}
        for key in COMPONENT_KEYS:
            table = task.params.get(key)
            if not isinstance(table, dict) or table.get("name") not in registries[key]:
                continue
            path = f"audits[{task.index}].{key}"
            try:
                with warnings.catch_warnings():  # warnings are for the run, not for this check
                    warnings.simplefilter("ignore")
                    built[key] = registries[key].build(table, path)
            except ConfigError as exc:
                if f"{path} = " not in str(exc):
                    exc.args = (f"{exc.args[0]} (got {path} = {table!r})",)
                raise
            except (ArithmeticError, ValueError, TypeError) as exc:
                raise ConfigValueError(f"{path}: {type(exc).__name__}: {exc} (got {path} = {table!r})") from None
        kind = get_task_kind(task.kind)
        if getattr(kind, "check_built", None) is not None:
            kind.check_built(f"audits[{task.index}]", task.params, built)


def run_config(
    config: Config, *, out: str | Path = "reports", jobs: int = 1, scheduler: str | None = None,
    progress: bool | None = None, use_cache: bool = True, figures: bool = True, timeout: float = 10.0,
    overwrite: bool = False, max_memory: int | None = None, budget: float | None = None,
    checked: Preflight | None = None,
    insecure_scheduler: bool = False,
) -> RunResult:
    """Run every audit of ``config`` and write ``<out>/<config.name>/`` (report.json, .md, .html, figures, run log).

    Parameters
    ----------
    config : Config
    out : path
        Parent folder of the report folder.
    jobs : int
        Local worker processes (``-1``: every core). Ignored with ``scheduler``.
    scheduler : str, optional
        Address of a Dask distributed scheduler, ``tcp://HOST:PORT`` or ``tls://HOST:PORT``.
    progress : bool, optional
        Show a tqdm bar (after 2 s); default: only when stdout and stderr are terminals.
    use_cache : bool
        Reuse verified finished tasks from ``<out>/<name>/cache`` (and write new ones).
    figures : bool
        Render figures (matplotlib) into the report.
    timeout : float
        Seconds to wait when connecting to the scheduler.
    overwrite : bool
        Replace a report set written from another configuration with the same name.
    max_memory : int, optional
        Bytes a task may need (default: the machine's available memory).
    budget : float, optional
        Wall-time budget of the run in seconds.
    checked : Preflight, optional
        What :func:`preflight` returned for this configuration with the same ``out``,
        ``overwrite`` and ``max_memory`` (the CLI checks before it runs): the checks, which
        build every component, are not repeated. Otherwise (or if it was made for other
        arguments) preflight runs here.
    insecure_scheduler : bool
        Accept a ``tcp://`` scheduler that is not on this machine (no TLS): ``--insecure-scheduler``.

    Returns
    -------
    RunResult

    Raises
    ------
    OutDirError
        ``--out``, the set, its ``cache/`` or ``figures/`` is a symbolic link or a file
        (nothing is written in a link's target), or see :func:`preflight`.
    SchedulerError
        ``scheduler`` is malformed, unreachable, or plain TCP to another machine.
    """
    start = time.perf_counter()
    started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    clock = Budget(budget)
    if progress is None:
        progress = sys.stdout.isatty() and sys.stderr.isatty()
    if checked is None or not checked.covers(config, out, overwrite, max_memory):
        checked = preflight(config, out=out, overwrite=overwrite, max_memory=max_memory)
    tasks = checked.tasks
    if scheduler is not None:  # refused before anything is created under --out
        check_scheduler(scheduler, insecure=insecure_scheduler)
    out_dir = Path(out) / config.name
    recover_set(out_dir)  # a killed writer may have left the cache in its temporary folder
    warned: list[str] = []
    seconds: dict[int, float] = {}
    not_cached: dict[int, str] = {}
    secret = load_secret(warned) if use_cache else None
    with contextlib.ExitStack() as stack:
        # The cache folder as a descriptor: --out, the set and cache/ each opened without following a link.
        cache_fd = stack.enter_context(open_set_folder(out_dir, CACHE_DIR)) if secret is not None else None
        outcomes, executed, cached = run_tasks(
            tasks, cache_dir=cache_fd, jobs=jobs, scheduler=scheduler, progress=progress, desc=config.name,
            timeout=timeout, budget=clock, cache_warnings=warned, seconds=seconds, secret=secret,
            not_cached=not_cached, insecure_scheduler=insecure_scheduler,
        )
    report = build_report(config, tasks, outcomes)
    run_log = {
        "config": config_identity(config.source), "name": config.name, "started": started,
        "seconds": round(time.perf_counter() - start, 3), "jobs": jobs, "scheduler": scheduler,
        "code": code_fingerprint(), "executed": executed, "cached": cached, "cache_warnings": warned,
        "not_cached": [{"index": i, "reason": r} for i, r in sorted(not_cached.items())],
        "tasks": [{"index": t.index, "target": t.target, "from_cache": t.index in cached,
                   "seconds": round(seconds.get(t.index, 0.0), 3)} for t in tasks],
    }
    rewritten = write_set(out_dir, report_json(report), lambda: report_files(report, figures=figures), figures=figures,
                          run_log=run_log, secret=secret)
    return RunResult(report, out_dir, executed, cached, time.perf_counter() - start, warned, rewritten, not_cached)
