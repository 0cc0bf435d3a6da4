"""The ``privaudit`` command line.

Commands
--------
``privaudit run CONFIG|PRESET [--out reports] [--seed S] [--samples X] [--jobs J] [--scheduler ADDR] [--json]``
    Run every audit of a configuration file (or a shipped preset) and write
    ``<out>/<name>/`` (report.json, report.md, report.html, figures/).
``privaudit list [presets|kinds|mechanisms|learners|attackers]``
    What can be audited and with what.
``privaudit bench attackers ...``
    Benchmark attackers against each other (reserved; provided by
    ``privaudit.audit.bench`` when installed).

Exit codes: 0 when every audit passed (or is informational); 1 when an audit found
a violation, a failed check, or a task crashed; 2 on a usage, configuration or input
error (the message names the key and the value); 130 when interrupted (finished tasks
are cached: rerun the same command to resume).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


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
    if v < 0:
        raise argparse.ArgumentTypeError(f"must be an integer >= 0, got {text!r}")
    return v


def _jobs(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1 or -1 (every core), got {text!r}") from None
    if v < 1 and v != -1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1 or -1 (every core), got {text!r}")
    return v


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="privaudit",
        description="Audit private machine learning: run a configuration's attacks and audits, get a report.",
        epilog="Exit codes: 0 all audits passed, 1 a violation / failed check / crashed task, "
               "2 usage or configuration error.",
    )
    from .tasks import privaudit_version

    parser.add_argument("--version", action="version", version=f"privaudit {privaudit_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    run = sub.add_parser(
        "run", help="run a configuration file or preset and write its report",
        description="Run every audit of CONFIG (a TOML file) or PRESET (see `privaudit list presets`) and write "
                    "OUT/NAME/report.{json,md,html} and OUT/NAME/figures/*.png. Finished tasks are cached in "
                    "OUT/NAME/cache, so an interrupted run resumes where it stopped.",
        epilog="Exit codes: 0 all audits passed, 1 a violation / failed check / crashed task, "
               "2 usage or configuration error, 130 interrupted.",
    )
    run.add_argument("config", metavar="CONFIG|PRESET", help="path to a TOML configuration, or a preset name")
    run.add_argument("--out", default="reports", metavar="DIR", help="parent folder of the report (default: reports)")
    run.add_argument("--seed", type=_seed, default=None, metavar="S", help="root seed (overrides the config's seed)")
    run.add_argument("--samples", type=_positive_float, default=None, metavar="X",
                     help="multiply every sample size by X (overrides the config's samples factor)")
    run.add_argument("--jobs", type=_jobs, default=1, metavar="J",
                     help="local worker processes (joblib; -1 = every core; default 1)")
    run.add_argument("--scheduler", default=None, metavar="ADDR",
                     help="run on a Dask distributed cluster at ADDR, e.g. tcp://127.0.0.1:8786")
    run.add_argument("--json", action="store_true", help="print a machine-readable summary on stdout (no progress bar)")
    run.add_argument("--no-cache", action="store_true", help="ignore and do not write the task cache")
    run.set_defaults(func=cmd_run)

    ls = sub.add_parser(
        "list", help="list presets, task kinds, mechanisms, learners and attackers",
        description="List what privaudit can run: presets, audit kinds, mechanisms, learners and attackers.",
    )
    ls.add_argument("what", nargs="?", default="all",
                    choices=("all", "presets", "kinds", "mechanisms", "learners", "attackers"),
                    help="one section only (default: all)")
    ls.add_argument("--json", action="store_true", help="print JSON instead of text")
    ls.set_defaults(func=cmd_list)

    bench = sub.add_parser("bench", help="benchmark attackers against each other",
                           description="Benchmarks. `privaudit bench attackers --help` for the attackers benchmark.")
    bsub = bench.add_subparsers(dest="bench_command", metavar="BENCH")
    bsub.required = True
    # add_help=False: every option, --help included, goes to the benchmark's own parser.
    att = bsub.add_parser("attackers", help="compare attackers on the same mechanisms and samples", add_help=False,
                          description="Compare registered attackers on the same mechanisms and samples.")
    att.add_argument("args", nargs=argparse.REMAINDER, help="options of the attackers benchmark")
    att.set_defaults(func=cmd_bench_attackers)
    return parser


# --------------------------------------------------------------------------- commands
def _error(message: str) -> int:
    print(f"privaudit: error: {message}", file=sys.stderr)
    return EXIT_USAGE


def cmd_run(args: argparse.Namespace) -> int:
    from .config import ConfigError, load_config
    from .figures import headline
    from .runner import run_config
    from privaudit.mechanisms.validation import InvalidInputError, InvalidParameterError, ParameterTypeError

    try:
        config = load_config(args.config).replace(seed=args.seed, samples=args.samples)
        result = run_config(
            config, out=args.out, jobs=args.jobs, scheduler=args.scheduler,
            progress=None if not args.json else False, use_cache=not args.no_cache,
        )
    except (ConfigError, InvalidParameterError, InvalidInputError, ParameterTypeError) as exc:
        return _error(str(exc))
    except KeyboardInterrupt:
        print("privaudit: interrupted; finished tasks are cached, rerun the same command to resume",
              file=sys.stderr)
        return EXIT_INTERRUPTED
    except OSError as exc:
        return _error(f"cannot write the report under --out {args.out!r}: {exc}")
    report = result.report
    audits = [{"index": i, "task": a.get("task"), "kind": a["kind"], "target": a["target"], "verdict": a["verdict"],
               "headline": headline(a)} for i, a in enumerate(report["audits"])]
    if args.json:
        summary = {
            "schema": "privaudit.run/1", "name": report["name"], "out": str(result.out_dir),
            "report": str(result.out_dir / "report.json"), "status": result.status, "exit_code": result.exit_code,
            "counts": report["summary"]["counts"], "seed": report["seed"], "samples": report["samples"],
            "executed": result.executed, "cached": result.cached, "seconds": round(result.seconds, 3),
            "audits": audits,
        }
        print(json.dumps(summary, indent=2))
    else:
        width = max((len(a["target"]) for a in audits), default=10)
        for a in audits:
            print(f"  {a['verdict']:<9} {a['kind']:<14} {a['target']:<{width}}  {a['headline']}")
        cached = f", {len(result.cached)} from cache" if result.cached else ""
        print(f"{report['name']}: {result.status.upper()} ({len(audits)} audits{cached}, "
              f"{result.seconds:.1f} s) -> {result.out_dir}/report.html")
    return result.exit_code


def _presets() -> dict[str, str]:
    import tomllib

    from .config import available_presets, preset_text

    out = {}
    for name in available_presets():
        try:
            out[name] = str(tomllib.loads(preset_text(name)).get("description", ""))
        except tomllib.TOMLDecodeError as exc:  # a broken preset is listed, not fatal
            out[name] = f"(invalid TOML: {exc})"
    return out


def _first_line(obj) -> str:
    import inspect

    return (inspect.getdoc(obj) or "").split("\n")[0]


def _listing(what: str) -> dict[str, dict[str, str]]:
    from . import tasks

    sections: dict[str, dict[str, str]] = {}
    if what in ("all", "presets"):
        sections["presets"] = _presets()
    if what in ("all", "kinds"):
        sections["kinds"] = {k: v.doc for k, v in tasks.task_kinds().items()}
    if what in ("all", "mechanisms"):
        sections["mechanisms"] = {k: _first_line(tasks.mechanism_class(k)) for k in tasks.MECHANISMS}
    if what in ("all", "learners"):
        from privaudit import learners

        # the estimators (capitalised public names), and which of them the learner-* kinds audit
        sections["learners"] = {
            name: f"privaudit.learners.{mod}" + (" (learner-tradeoff, learner-reconstruction)"
                                                 if name in tasks.LEARNER_FAMILY else "")
            for name, mod in sorted(learners._LAZY.items()) if name[:1].isupper()
        }
    if what in ("all", "attackers"):
        from privaudit import attacks

        try:
            attacks.load_all()
        except ImportError as exc:  # an attack module still being written must not break `list`
            print(f"privaudit: warning: some attack modules failed to import: {exc}", file=sys.stderr)
        sections["attackers"] = {n: f"{c.kind}: {_first_line(c)}" for n, c in attacks.available_attacks().items()}
    return sections


def cmd_list(args: argparse.Namespace) -> int:
    sections = _listing(args.what)
    if args.json:
        print(json.dumps(sections, indent=2))
        return EXIT_OK
    for title, items in sections.items():
        print(f"{title}:")
        width = max((len(k) for k in items), default=0)
        for k, v in items.items():
            print(f"  {k:<{width}}  {v}")
        if not items:
            print("  (none)")
    return EXIT_OK


def cmd_bench_attackers(args: argparse.Namespace) -> int:
    return bench_attackers(args.args)


def bench_attackers(argv: list[str]) -> int:
    """Hand ``privaudit bench attackers ARGS`` to the benchmark's own parser (``privaudit.audit.bench``)."""
    try:
        from .bench import main as bench_main
    except ImportError:
        if "-h" in argv or "--help" in argv:
            print("usage: privaudit bench attackers [options]\n\n(not available in this version of privaudit)")
            return EXIT_OK
        return _error("`privaudit bench attackers` is not available in this version of privaudit")
    return int(bench_main(["attackers", *argv]) or 0)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``privaudit`` console script; returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:2] == ["bench", "attackers"]:  # its options (and --help) belong to the benchmark
        return bench_attackers(argv[2:])
    parser = build_parser()
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
