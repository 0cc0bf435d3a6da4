"""The ``privaudit`` command line.

Commands
--------
``privaudit run CONFIG|PRESET [--out reports] [--seed S] [--samples X] [--jobs J] [--scheduler ADDR] [--json]``
    Run every audit of a configuration file (or a shipped preset) and write
    ``<out>/<name>/`` (report.json, report.md, report.html, figures/, run.log.json).
``privaudit list [presets|kinds|mechanisms|learners|attackers]``
    What can be audited and with what.
``privaudit bench attackers ...``
    Benchmark attackers against each other (:mod:`privaudit.audit.app.bench`).
``privaudit bench mia ...``
    Rank the membership-inference attacks at equal reference budgets (:mod:`privaudit.audit.app.bench_mia`).

Resolving CONFIG|PRESET: a bare name of a shipped preset is the preset, even when a
file or folder of that name exists in the current folder; ``./name``, a path with a
separator or a name ending in ``.toml`` is a file. The command loads through
:func:`privaudit.audit.app.config.load_config`, the Python API's loader (same rule, same
guards), and checks ``--out``, memory and components once (:func:`~privaudit.audit.app.runner.preflight`).

Exit-code contract: 0 when every audit passed (or is informational); 1 when an audit
found a violation, a failed check, or a task crashed; 2 on a usage, configuration,
input or resource error — the message names the key and the value, and it comes
before any task runs (the time budget, ``--budget``, is the one limit met during a
run); 130 when interrupted (finished tasks are cached: rerun the same command to
resume). No input produces a traceback: an unexpected exception while a configuration
is validated is still exit 2, reported as a validation bug with the file it came from.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
#: Prefix of the message for an exception the validators did not anticipate (still exit 2).
UNEXPECTED = "unexpected error while validating"


def _positive_float(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number > 0, got {text!r}") from None
    if not v > 0 or v == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {text!r}")
    return v


def _seed(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer >= 0, got {text!r}") from None
    if not 0 <= v < 2**63:
        raise argparse.ArgumentTypeError(f"must be an integer in [0, 2**63), got {text!r}")
    return v


def _jobs(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1 or -1 (every core), got {text!r}") from None
    if v < 1 and v != -1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1 or -1 (every core), got {text!r}")
    return v


def _size(text: str) -> int:
    from privaudit.audit.schema.limits import parse_size

    try:
        return parse_size(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


_EXIT_EPILOG = ("Exit codes: 0 all audits passed, 1 a violation / failed check / crashed task, "
                "2 usage, configuration, input or resource error (before any task runs; --budget during the run), "
                "130 interrupted.")


def build_parser() -> argparse.ArgumentParser:
    """The ``privaudit`` parser: ``run``, ``list`` and ``bench`` (whose options its own parser owns)."""
    parser = argparse.ArgumentParser(
        prog="privaudit",
        description="Audit private machine learning: run a configuration's attacks and audits, get a report.",
        epilog=_EXIT_EPILOG,
    )
    from privaudit.audit.app.provenance import privaudit_version

    parser.add_argument("--version", action="version", version=f"privaudit {privaudit_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    run = sub.add_parser(
        "run", help="run a configuration file or preset and write its report",
        description="Run every audit of CONFIG (a TOML file) or PRESET (see `privaudit list presets`) and write "
                    "OUT/NAME/report.{json,md,html}, OUT/NAME/figures/*.png and OUT/NAME/run.log.json. A bare preset "
                    "name is the preset even if a file or folder has that name; write ./NAME for the file. Finished "
                    "tasks are cached (verified) in OUT/NAME/cache, so an interrupted run resumes where it stopped.",
        epilog=_EXIT_EPILOG,
    )
    run.add_argument("config", metavar="CONFIG|PRESET", help="path to a TOML configuration, or a preset name")
    run.add_argument("--out", default="reports", metavar="DIR", help="parent folder of the report (default: reports)")
    run.add_argument("--seed", type=_seed, default=None, metavar="S", help="root seed (overrides the config's seed)")
    run.add_argument("--samples", type=_positive_float, default=None, metavar="X",
                     help="multiply every sample size by X (overrides the config's samples factor)")
    run.add_argument("--jobs", type=_jobs, default=1, metavar="J",
                     help="local worker processes (joblib; -1 = every core; default 1)")
    run.add_argument("--scheduler", default=None, metavar="ADDR",
                     help="run on a Dask distributed cluster at ADDR, e.g. tcp://127.0.0.1:8786 or tls://HOST:8786 "
                          "(see docs/cli.md for TLS)")
    run.add_argument("--insecure-scheduler", action="store_true",
                     help="accept a plain tcp:// scheduler on another machine (no TLS): whoever answers at that "
                          "address runs code in this process (see docs/cli.md, Trust boundary)")
    run.add_argument("--json", action="store_true", help="print a machine-readable summary on stdout (no progress bar)")
    run.add_argument("--no-cache", action="store_true", help="ignore and do not write the task cache")
    run.add_argument("--overwrite", action="store_true",
                     help="replace OUT/NAME even when another configuration with the same name wrote it")
    run.add_argument("--budget", type=_positive_float, default=None, metavar="SECONDS",
                     help="stop after SECONDS of wall time (finished tasks stay cached; exit code 2)")
    run.add_argument("--max-memory", type=_size, default=None, metavar="SIZE",
                     help="memory one task may need, e.g. 4G (default: this machine's available memory)")
    run.add_argument("--allow-import", action="append", default=[], metavar="MODULE",
                     help="let the configuration name components as 'MODULE:attr' (repeatable); off by default, "
                          "since importing a module runs its code")
    run.add_argument("--check", action="store_true",
                     help="validate the configuration, --out and the memory estimates, run nothing")
    run.set_defaults(func=cmd_run)

    ls = sub.add_parser(
        "list", help="list presets, task kinds, mechanisms, learners and attackers",
        description="List what privaudit can run: presets, audit kinds, mechanisms, learners and attackers.",
    )
    ls.add_argument("what", nargs="?", default="all",
                    choices=("all", "presets", "kinds", "mechanisms", "learners", "attackers"),
                    help="one section only (default: all)")
    ls.add_argument("--json", action="store_true", help="print JSON instead of text")
    ls.add_argument("--keys", nargs="*", metavar="KIND",
                    help="with kinds: every key of each kind (or of the KINDs named), its type, default, "
                         "admissible values and meaning (the reference of docs/cli.md)")
    ls.set_defaults(func=cmd_list)

    search = sub.add_parser(
        "search", help="search a mechanism's input domain for its worst neighbouring pair and certify it",
        description="Find the neighbouring pair on which MECHANISM (a registered name, or MODULE:attr with "
                    "--allow-import) leaks most, from its claim's neighbourhood and an input domain alone "
                    "(privaudit.audit.search_pairs), and certify it. Prints the pair by its origin and coordinates, "
                    "the certified epsilon lower bound and the runners-up.",
        epilog=_EXIT_EPILOG,
    )
    search.add_argument("mechanism", metavar="MECHANISM", help="registered mechanism name or MODULE:attr")
    search.add_argument("--params", default="{}", metavar="JSON", help="mechanism parameters as a JSON object")
    search.add_argument("--domain", default=None, metavar="JSON",
                        help='input domain as JSON: [low, high], {"kind": "box", "low": [...], "high": [...], '
                             '"integer": true}, {"kind": "datasets", ...}, {"kind": "categorical", ...}; '
                             "default: the domain the mechanism declares")
    search.add_argument("--neighbourhood", default=None, metavar="NB",
                        help="override the claim's neighbourhood, e.g. linf<=1, histogram, add-remove")
    search.add_argument("--group", action="store_true",
                        help="also search pairs several neighbour steps apart, against their group-privacy claim")
    search.add_argument("-n", type=int, default=100_000, metavar="N",
                        help="releases per hypothesis of each certification (default 100000)")
    search.add_argument("--confidence", type=float, default=0.95, metavar="C", help="confidence (default 0.95)")
    search.add_argument("--seed", type=_seed, default=0, metavar="S", help="root seed (default 0)")
    search.add_argument("--allow-import", action="append", default=[], metavar="MODULE",
                        help="let MECHANISM be 'MODULE:attr' (repeatable)")
    search.add_argument("--json", action="store_true", help="print a machine-readable result on stdout")
    search.set_defaults(func=cmd_search)

    bench = sub.add_parser("bench", help="benchmark attackers against each other",
                           description="Benchmarks. `privaudit bench attackers --help` for the attackers benchmark, "
                                       "`privaudit bench mia --help` for the membership-inference leaderboard.")
    bsub = bench.add_subparsers(dest="bench_command", metavar="BENCH")
    bsub.required = True
    # add_help=False: every option, --help included, goes to the benchmark's own parser.
    att = bsub.add_parser("attackers", help="compare attackers on the same mechanisms and samples", add_help=False,
                          description="Compare registered attackers on the same mechanisms and samples.")
    att.add_argument("args", nargs=argparse.REMAINDER, help="options of the attackers benchmark")
    att.set_defaults(func=cmd_bench_attackers)
    mia = bsub.add_parser("mia", help="rank membership-inference attacks at equal reference budgets", add_help=False,
                          description="Rank the membership-inference attacks at equal reference budgets.")
    mia.add_argument("args", nargs=argparse.REMAINDER, help="options of the membership-inference leaderboard")
    mia.set_defaults(func=cmd_bench_mia)
    return parser


# --------------------------------------------------------------------------- output
class _UsageExit(int):
    """Exit code 2 carrying its message, so that ``--json`` can print it as a JSON object too."""

    message: str

    def __new__(cls, message: str) -> "_UsageExit":
        code = super().__new__(cls, EXIT_USAGE)
        code.message = message
        return code


def _error(message: str) -> int:
    print(f"privaudit: error: {message}", file=sys.stderr)
    return _UsageExit(message)


def _json_error(message: str, code: int = EXIT_USAGE) -> None:
    """``{"error": ..., "exit_code": 2}`` on stdout: a ``--json`` reader gets an object whatever went wrong."""
    _emit(json.dumps({"status": "error", "error": message, "exit_code": int(code)}, indent=2))


def _emit(text: str) -> None:
    """Print to stdout; a reader that went away (``| head``) is not an error."""
    try:
        print(text, flush=True)
    except BrokenPipeError:
        # Point stdout at /dev/null so the interpreter's final flush does not complain either.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


@contextlib.contextmanager
def _plugin_warnings() -> Iterator[None]:
    """Print each :class:`~privaudit.mechanisms.registry.PluginWarning` raised inside as one
    ``privaudit: warning:`` line (a skipped plugin is news, not a traceback); other warnings pass on."""
    from privaudit.mechanisms.registry import PluginWarning

    caught: list[warnings.WarningMessage] = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", PluginWarning)
            yield
    finally:  # also when loading fails: the skipped plugin may be why
        for w in caught:
            if issubclass(w.category, PluginWarning):
                print(f"privaudit: warning: {w.message}", file=sys.stderr)
            else:
                warnings.showwarning(w.message, w.category, w.filename, w.lineno)


# --------------------------------------------------------------------------- loading
def _usage_errors() -> tuple[type[BaseException], ...]:
    from privaudit.mechanisms.validation import InvalidInputError, InvalidParameterError, ParameterTypeError

    from privaudit.audit.schema.fields import ConfigError

    return ConfigError, InvalidParameterError, InvalidInputError, ParameterTypeError


def _prepare(args: argparse.Namespace):
    """Load, re-seed and preflight the configuration; every problem is exit 2 (returns (config, preflight))."""
    from privaudit.audit.app.config import load_config
    from privaudit.audit.app.runner import check_scheduler, preflight, probe_scheduler

    if args.scheduler is not None:
        check_scheduler(args.scheduler, insecure=args.insecure_scheduler)
    config = load_config(args.config, allow_imports=args.allow_import, max_memory=args.max_memory)
    config = config.replace(seed=args.seed, samples=args.samples)
    checked = preflight(config, out=args.out, overwrite=args.overwrite, max_memory=args.max_memory)
    if args.scheduler is not None:
        probe_scheduler(args.scheduler, insecure=args.insecure_scheduler)
    return config, checked


def cmd_run(args: argparse.Namespace) -> int:
    """``privaudit run``: load and preflight (every problem exit 2), then run and summarise.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.

    Returns
    -------
    int
        The exit code: 0 success, 1 a failed audit or violation, 2 bad input.
    """
    usage = _usage_errors()
    try:
        with _plugin_warnings():
            config, checked = _prepare(args)
    except usage as exc:
        return _error(str(exc))
    except RecursionError:
        return _error(f"{args.config} nests values too deeply to validate")
    except Exception as exc:  # noqa: BLE001 - the contract: bad input never gives a traceback
        return _error(f"{UNEXPECTED} {args.config!r} (a privaudit bug, please report it): "
                      f"{type(exc).__name__}: {exc}")
    if args.check:
        _emit(f"{config.name}: configuration valid, {len(checked.tasks)} tasks, "
              f"report -> {Path(args.out) / config.name}")
        return EXIT_OK
    return _run(args, config, checked)


def _run(args: argparse.Namespace, config, checked) -> int:
    from privaudit.audit.app.cache import CacheWarning
    from privaudit.audit.app.runner import run_config

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CacheWarning)  # printed below, once, in the CLI's format
            result = run_config(
                config, out=args.out, jobs=args.jobs, scheduler=args.scheduler,
                progress=None if not args.json else False, use_cache=not args.no_cache,
                overwrite=args.overwrite, max_memory=args.max_memory, budget=args.budget, checked=checked,
                insecure_scheduler=args.insecure_scheduler,
            )
    except _usage_errors() as exc:
        return _error(str(exc))
    except KeyboardInterrupt:
        print("privaudit: interrupted; finished tasks are cached, rerun the same command to resume",
              file=sys.stderr)
        return EXIT_INTERRUPTED
    except OSError as exc:
        return _error(f"cannot write the report under --out {args.out!r}: {exc}")
    for message in result.cache_warnings:
        print(f"privaudit: warning: {message}", file=sys.stderr)
    for index, reason in sorted(result.not_cached.items()):
        print(f"privaudit: note: task {index} not cached: it {reason}", file=sys.stderr)
    _print_summary(args, result)
    return result.exit_code


def _print_summary(args: argparse.Namespace, result) -> None:
    from privaudit.audit.reporting.figures import headline
    from privaudit.audit.reporting.render import report_entries

    report = result.report
    cached = set(result.cached)
    audits = [{"index": i, "task": a.task, "kind": a.kind, "target": a.label, "verdict": str(a.final_verdict),
               "from_cache": a.task in cached, "headline": headline(a)}
              for i, a in enumerate(report_entries(report))]
    n_tasks = len(result.executed) + len(result.cached)
    if args.json:
        summary = {
            "schema": "privaudit.run/1", "name": report["name"], "out": str(result.out_dir),
            "report": str(result.out_dir / "report.json"), "run_log": str(result.out_dir / "run.log.json"),
            "status": result.status, "exit_code": result.exit_code,
            "counts": report["summary"]["counts"], "seed": report["seed"], "samples": report["samples"],
            "tasks": n_tasks, "executed": result.executed, "cached": result.cached,
            "cache_warnings": result.cache_warnings,
            "not_cached": [{"index": i, "reason": r} for i, r in sorted(result.not_cached.items())],
            "seconds": round(result.seconds, 3), "audits": audits,
        }
        _emit(json.dumps(summary, indent=2))
        return
    width = max((len(a["target"]) for a in audits), default=10)
    lines = [f"  {a['verdict']:<9} {a['kind']:<14} {a['target']:<{width}}  {a['headline']}" for a in audits]
    from_cache = sum(a["from_cache"] for a in audits)
    provenance = (f"{len(audits)} audits from {n_tasks} tasks; {len(result.cached)} of the tasks "
                  f"({from_cache} audits) from the cache" if result.cached else
                  f"{len(audits)} audits from {n_tasks} tasks")
    lines.append(f"{report['name']}: {result.status.upper()} ({provenance}, {result.seconds:.1f} s) "
                 f"-> {result.out_dir}/report.html")
    _emit("\n".join(lines))


# --------------------------------------------------------------------------- list
def cmd_list(args: argparse.Namespace) -> int:
    """``privaudit list``: presets, kinds, mechanisms, learners, attackers (text or ``--json``).

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.

    Returns
    -------
    int
        The exit code (0).
    """
    from privaudit.audit.app.catalogue import listing, plugin_sections

    if args.keys is not None:
        return _list_keys(args)
    # Only plugins warn; without them the listing comes from the snapshot and imports no registry
    # (_plugin_warnings' own import of the registry module would load dp_accounting).
    with _plugin_warnings() if plugin_sections() else contextlib.nullcontext():
        sections = listing(args.what)
    if args.json:
        _emit(json.dumps(sections, indent=2))
        return EXIT_OK
    lines = []
    for title, items in sections.items():
        lines.append(f"{title}:")
        width = max((len(k) for k in items), default=0)
        lines += [f"  {k:<{width}}  {v}" for k, v in items.items()]
        if not items:
            lines.append("  (none)")
    _emit("\n".join(lines))
    return EXIT_OK


def _list_keys(args: argparse.Namespace) -> int:
    """``privaudit list [kinds] --keys [KIND ...]``: the keys reference of the kinds named (all when none).

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line (``what`` must be ``all`` or ``kinds``).

    Returns
    -------
    int
        0, or 2 for an unknown kind or another section.
    """
    from privaudit.audit.app.keys_reference import text_reference
    from privaudit.audit.kinds import audit_kinds

    if args.what not in ("all", "kinds"):
        print(f"privaudit: error: --keys lists the keys of audit kinds, not {args.what}", file=sys.stderr)
        return EXIT_USAGE
    unknown = [k for k in args.keys if k not in audit_kinds()]
    if unknown:
        print(f"privaudit: error: unknown kind {unknown[0]!r} (known: {', '.join(sorted(audit_kinds()))})",
              file=sys.stderr)
        return EXIT_USAGE
    _emit(text_reference(args.keys or None))
    return EXIT_OK


# --------------------------------------------------------------------------- bench
def cmd_search(args: argparse.Namespace) -> int:
    """``privaudit search``: search_pairs on one mechanism; exit 1 on a certified violation, 2 on bad input.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.

    Returns
    -------
    int
        The exit code: 0 success, 1 a failed audit or violation, 2 bad input.
    """
    import numpy as np

    from privaudit.audit.engines.pair_search import search_pairs
    from privaudit.audit.schema.components import MECHANISMS, imports_allowed

    try:
        params = json.loads(args.params)
        domain = None if args.domain is None else json.loads(args.domain)
        if not isinstance(params, dict):
            return _error(f"--params must be a JSON object, got --params {args.params!r}")
        table = {"name": args.mechanism, **params}
        with imports_allowed(args.allow_import):
            table = MECHANISMS.validate("mechanism", table)
        mech = MECHANISMS.build(table, "mechanism")
        found = search_pairs(mech, domain, n=args.n, confidence=args.confidence, rng=args.seed,
                             neighbourhood=args.neighbourhood, group=args.group)
    except json.JSONDecodeError as exc:
        return _error(f"--params and --domain must be JSON: {exc}")
    except _usage_errors() as exc:
        return _error(str(exc))
    best, pair = found.best, found.best_pair
    if args.json:
        _emit(json.dumps({
            "verdict": str(found.verdict), "epsilon_lb": best.epsilon_lb, "claim_epsilon": best.claim.epsilon,
            "attacker": best.attacker, "origin": pair.origin, "x": np.asarray(pair.x, dtype=float).tolist(),
            "x_prime": np.asarray(pair.x_prime, dtype=float).tolist(), "neighbourhood": found.neighbourhood,
            "domain": found.domain, "group": found.group, "candidates": len(found.candidates),
            "runners_up": [c.describe() for c in found.runners_up], "seed": found.seed,
            "confidence": found.confidence}))
    else:
        _emit(f"{found.verdict}: {found.summary()}")
    return EXIT_FAILED if found.verdict == "violation" else EXIT_OK


def cmd_bench_attackers(args: argparse.Namespace) -> int:
    """``privaudit bench attackers`` through argparse (``main`` usually short-cuts to :func:`bench_attackers`).

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.

    Returns
    -------
    int
        The exit code: 0 success, 1 a failed audit or violation, 2 bad input.
    """
    return bench_attackers(args.args)


def bench_attackers(argv: list[str]) -> int:
    """``privaudit bench attackers ARGS``: check ``--out`` first, run the benchmark, print its leaderboard.

    Parameters
    ----------
    argv : list of str
        The arguments after ``bench attackers``.

    Returns
    -------
    int
        The exit code: 0 success, 1 a failed audit or violation, 2 bad input.
    """
    try:
        from privaudit.audit.app.bench import _parser as bench_parser
        from privaudit.audit.app.bench import main as bench_main
    except ImportError:
        if "-h" in argv or "--help" in argv:
            _emit("usage: privaudit bench attackers [options]\n\n(not available in this version of privaudit)")
            return EXIT_OK
        return _error("`privaudit bench attackers` is not available in this version of privaudit")
    from privaudit.audit.app.report_store import check_destination

    known, _ = bench_parser().parse_known_args(argv)
    if not ("-h" in argv or "--help" in argv):
        try:
            check_destination(known.out, "attackers", "", overwrite=True)
        except _usage_errors() as exc:
            return _error(str(exc))
    code = int(bench_main(["attackers", *argv]) or 0)
    table = Path(known.out) / "attackers" / "leaderboard.md"
    if code == EXIT_OK and not known.json and not ("-h" in argv or "--help" in argv) and table.is_file():
        _emit(table.read_text(encoding="utf-8"))
    return code


def cmd_bench_mia(args: argparse.Namespace) -> int:
    """``privaudit bench mia`` through argparse (``main`` usually short-cuts to :func:`bench_mia`).

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.

    Returns
    -------
    int
        The exit code: 0 success, 2 bad input.
    """
    return bench_mia(args.args)


def bench_mia(argv: list[str]) -> int:
    """``privaudit bench mia ARGS``: check ``--out`` first, run the leaderboard, print its Markdown.

    Parameters
    ----------
    argv : list of str
        The arguments after ``bench mia``.

    Returns
    -------
    int
        The exit code: 0 success, 2 bad input.
    """
    try:
        from privaudit.audit.app.bench_mia import _parser as mia_parser
        from privaudit.audit.app.bench_mia import main as mia_main
    except ImportError:
        if "-h" in argv or "--help" in argv:
            _emit("usage: privaudit bench mia [options]\n\n(not available in this version of privaudit)")
            return EXIT_OK
        return _error("`privaudit bench mia` is not available in this version of privaudit")
    from privaudit.audit.app.report_store import check_destination

    try:
        known, _ = mia_parser().parse_known_args(argv)
    except SystemExit as exc:  # argparse printed the usage error (or the help): its code, not an exception
        return int(exc.code or 0)
    if not ("-h" in argv or "--help" in argv):
        try:
            check_destination(known.out, "mia", "", overwrite=True)
        except _usage_errors() as exc:
            return _error(str(exc))
    code = int(mia_main(["mia", *argv]) or 0)
    table = Path(known.out) / "mia" / "leaderboard.md"
    if code == EXIT_OK and not known.json and not ("-h" in argv or "--help" in argv) and table.is_file():
        _emit(table.read_text(encoding="utf-8"))
    return code


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``privaudit`` console script; returns the exit code.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments (default ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit code: 0 success, 1 a failed audit or violation, 2 bad input.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:2] == ["bench", "attackers"]:  # its options (and --help) belong to the benchmark
        return bench_attackers(argv[2:])
    if argv[:2] == ["bench", "mia"]:
        return bench_mia(argv[2:])
    parser = build_parser()
    if "--json" not in argv:
        args = parser.parse_args(argv)
    else:  # argparse's own errors (exit 2) become a JSON object too
        err = io.StringIO()
        try:
            with contextlib.redirect_stderr(err):
                args = parser.parse_args(argv)
        except SystemExit as exc:
            sys.stderr.write(err.getvalue())
            if exc.code not in (0, None):
                lines = err.getvalue().strip().splitlines()
                _json_error(lines[-1].split("error: ", 1)[-1] if lines else "invalid arguments", exc.code)
            raise
        sys.stderr.write(err.getvalue())
    try:
        code = args.func(args)
    except KeyboardInterrupt:  # while loading or listing (a run reports its own interruption)
        print("privaudit: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    if isinstance(code, _UsageExit) and getattr(args, "json", False):
        _json_error(code.message)
    return int(code)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
