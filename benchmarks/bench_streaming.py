"""Benchmark of streamed trade-off audits: peak memory and time against n (issue 36).

The audit of issue 36: ``audit_tradeoff(GaussianMechanism(epsilon=1, delta=1e-5), zeros(10), e0, n=n,
rng=0)`` with the default suite, at n = 10⁶ and 10⁷ (and 10⁸ with ``--full``). Each run is a fresh
child process, so its peak RSS (``resource.getrusage``: ``ru_maxrss`` of the child, and of its own
children when it runs joblib workers) is the audit's alone, imports included. n = 10⁶ runs in
memory (below :data:`~privaudit.audit.engines.streaming.STREAM_BYTES`), 10⁷ and 10⁸ are streamed.

Printed: mode, seconds, peak RSS, ε̲ and n_eval per n; then the issue's targets, time(10⁸)/time(10⁷)
≤ 13 and peak RSS at 10⁸ ≤ 2 GB, and ε̲(10⁸) ≥ ε̲(10⁷). ``--workers 1 2`` also times n = 10⁷ (or the
largest n below it) over that many joblib workers (the ε̲ must not change).

Usage: ``python benchmarks/bench_streaming.py [--full] [--workers 1 2] [--n 1000000 10000000]``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import textwrap

CHILD = textwrap.dedent("""
    import json, resource, sys, time
    import numpy as np
    from privaudit.audit.engines.tradeoff import audit_tradeoff
    from privaudit.audit.engines.streaming import stream_needed
    from privaudit.mechanisms import GaussianMechanism
    n, jobs = int(sys.argv[1]), int(sys.argv[2])
    x = np.zeros(10)
    e0 = np.zeros(10)
    e0[0] = 1.0
    t = time.perf_counter()
    r = audit_tradeoff(GaussianMechanism(epsilon=1, delta=1e-5), x, e0, n=n, rng=0, n_jobs=jobs, progress=False)
    seconds = time.perf_counter() - t
    kib = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    print(json.dumps({"n": n, "jobs": jobs, "streamed": stream_needed(n, x), "seconds": seconds,
                      "peak_rss_gb": kib * 1024 / 1e9, "epsilon_lb": r.epsilon_lb, "n_eval": r.n_eval,
                      "attacker": r.attacker}))
""")


def run(n: int, jobs: int = 1) -> dict:
    """One audit in a fresh process: its time, peak RSS and ε̲."""
    out = subprocess.run([sys.executable, "-c", CHILD, str(n), str(jobs)], check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="also n = 1e8 (minutes)")
    parser.add_argument("--n", type=float, nargs="*", help="the sizes (default 1e6 1e7 [1e8])")
    parser.add_argument("--workers", type=int, nargs="*", default=[], help="also time n = 1e7 over these workers")
    args = parser.parse_args()
    sizes = [int(v) for v in args.n] if args.n else [10**6, 10**7] + ([10**8] if args.full else [])
    print(f"{'n':>11} {'jobs':>4} {'mode':>9} {'seconds':>9} {'peak RSS':>9} {'eps_lb':>8} {'n_eval':>11}")
    rows = {}
    for n in sizes:
        r = run(n)
        rows[n] = r
        print(f"{n:>11.0e} {1:>4} {'streamed' if r['streamed'] else 'memory':>9} {r['seconds']:>9.1f} "
              f"{r['peak_rss_gb']:>7.2f}GB {r['epsilon_lb']:>8.4f} {r['n_eval']:>11}", flush=True)
    for jobs in args.workers:
        n = max([m for m in sizes if m <= 10**7] or sizes)
        r = run(n, jobs)
        print(f"{n:>11.0e} {jobs:>4} {'streamed' if r['streamed'] else 'memory':>9} {r['seconds']:>9.1f} "
              f"{r['peak_rss_gb']:>7.2f}GB {r['epsilon_lb']:>8.4f} {r['n_eval']:>11}", flush=True)
    if 10**7 in rows and 10**8 in rows:
        a, b = rows[10**7], rows[10**8]
        ratio = b["seconds"] / a["seconds"]
        print(f"time(1e8)/time(1e7) = {ratio:.2f} (target <= 13): {'met' if ratio <= 13 else 'MISSED'}")
        print(f"peak RSS at 1e8 = {b['peak_rss_gb']:.2f} GB (target <= 2 GB): "
              f"{'met' if b['peak_rss_gb'] <= 2 else 'MISSED'}")
        print(f"eps_lb(1e8) = {b['epsilon_lb']:.4f} >= eps_lb(1e7) = {a['epsilon_lb']:.4f}: "
              f"{'yes' if b['epsilon_lb'] >= a['epsilon_lb'] else 'NO'}")


if __name__ == "__main__":
    main()
