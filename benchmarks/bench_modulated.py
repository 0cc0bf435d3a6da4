"""Benchmark of the modulated learners (seed 000).

Prints three figures, each against an anchor measured in the same run:

1. fit time of ``ModulatedRegressor`` (K = 1e6 clients, d = 10, T = 10 rounds) divided by
   scikit-learn ``LinearRegression`` on the same data (target ≤ 3), for both simulation
   paths (``"sufficient"``, the default: exact draws of each round's sums from AᵀA;
   ``"clients"``: every release drawn), with and without the inference pass (which
   regenerates the last two rounds' releases; on the sufficient path from their exact
   conditional law, two streaming passes per round), and the floor of the clients path
   (T·K·d Gaussian draws alone);
2. peak RSS of the streaming path at K = 1e7, T = 1 (target ≤ 1 GiB). The data are
   written chunk-wise to a temporary file (never held in memory) and the fit runs in a
   fresh subprocess that reads them through a minimal array-like (``shape`` + slicing
   with ``np.fromfile``), so file pages are not mapped into the process; the same fit
   through ``np.memmap`` is also reported, whose RSS includes the clean file-backed
   pages the kernel may reclaim. Peak RSS is the subprocess's VmHWM (Linux; getrusage's
   ru_maxrss is printed too but inherits the parent's high-water mark across exec). The
   anchor is the RSS of the same subprocess after imports, before fitting;
3. optionally (``--coverage N``) the coverage of 95 % Wald intervals over N seeded
   repetitions (see tests/test_learners_modulated_inference.py).

Usage: ``python benchmarks/bench_modulated.py [--clients 1000000] [--dim 10] [--rounds 10]
[--stream-clients 10000000] [--chunk 65536] [--coverage 0] [--skip-stream] [--skip-fit]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import timeit
import warnings

import numpy as np

_CHILD = r"""
import json, resource, sys, warnings
import numpy as np
warnings.simplefilter("ignore")
from privaudit.learners import ModulatedRegressor

class FileArray:
    '''Row-major float64 file read with np.fromfile per slice (no mmap).'''
    def __init__(self, path, shape):
        self.path, self.shape = path, tuple(shape)
    def __getitem__(self, key):
        start, stop, _ = key.indices(self.shape[0])
        row = int(np.prod(self.shape[1:], dtype=int))
        out = np.fromfile(self.path, dtype=np.float64, count=(stop - start) * row, offset=start * row * 8)
        return out.reshape((stop - start,) + self.shape[1:])

def peak_kib():
    # VmHWM is the high-water RSS of this process's own address space. ru_maxrss is
    # reported too, but on Linux it keeps the parent's high-water mark across
    # fork/vfork + exec, so it can overstate the child's peak.
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

xpath, ypath, K, d, chunk, mode = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
base = peak_kib()
if mode == "file":
    X, y = FileArray(xpath, (K, d)), FileArray(ypath, (K,))
else:
    X, y = np.memmap(xpath, dtype=np.float64, mode="r", shape=(K, d)), np.memmap(ypath, dtype=np.float64, mode="r", shape=(K,))
est = ModulatedRegressor(epsilon=4.0, rounds=1, chunk_size=chunk, random_state=0).fit(X, y)
peak = peak_kib()
ru = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"base_kib": base, "peak_kib": peak, "ru_maxrss_kib": ru, "coef0": float(est.coef_[0])}))
"""


def bench_fit_time(K: int, d: int, T: int, repeats: int) -> None:
    from sklearn.linear_model import LinearRegression

    from privaudit.learners import ModulatedRegressor

    rng = np.random.default_rng(0)
    X = rng.standard_normal((K, d)) / np.sqrt(d)
    y = X @ np.linspace(1, -1, d) + 0.5 * rng.standard_normal(K)

    def best(fn):
        return min(timeit.repeat(fn, number=1, repeat=repeats))

    t_ols = best(lambda: LinearRegression().fit(X, y))
    print(f"[fit] K={K:.0e} d={d} T={T}: LinearRegression {t_ols:.3f} s (anchor)")
    # The floor of the clients path: T·K·d Gaussian draws (numpy, float64).
    t_rng = best(lambda: [rng.standard_normal((K, d)) for _ in range(T)])
    print(f"[fit] raw T*K*d normal draws alone {t_rng:.3f} s  ratio {t_rng / t_ols:.2f}  (floor of 'clients')")
    for sim in ("sufficient", "clients"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t_mod = best(lambda: ModulatedRegressor(rounds=T, inference=False, simulation=sim, random_state=0).fit(X, y))
            t_inf = best(lambda: ModulatedRegressor(rounds=T, inference=True, simulation=sim, random_state=0).fit(X, y))
        print(f"[fit] ModulatedRegressor simulation={sim!r:12s} no inference {t_mod:.3f} s  ratio {t_mod / t_ols:.2f}  "
              f"(target <= 3)")
        print(f"[fit] ModulatedRegressor simulation={sim!r:12s} + inference  {t_inf:.3f} s  ratio {t_inf / t_ols:.2f}")


def bench_stream(K: int, d: int, chunk: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        xpath, ypath = os.path.join(tmp, "X.f64"), os.path.join(tmp, "y.f64")
        rng = np.random.default_rng(1)
        beta = np.linspace(1, -1, d)
        t = time.perf_counter()
        with open(xpath, "wb") as fx, open(ypath, "wb") as fy:
            for start in range(0, K, 1 << 18):
                n = min(1 << 18, K - start)
                Xc = rng.standard_normal((n, d)) / np.sqrt(d)
                fx.write(Xc.tobytes())
                fy.write((Xc @ beta + 0.5 * rng.standard_normal(n)).tobytes())
        print(f"[stream] wrote K={K:.0e} x d={d} ({K * d * 8 / 2**30:.2f} GiB) in {time.perf_counter() - t:.1f} s")
        for mode in ("file", "memmap"):
            t = time.perf_counter()
            out = subprocess.run([sys.executable, "-c", _CHILD, xpath, ypath, str(K), str(d), str(chunk), mode],
                                 capture_output=True, text=True, check=True)
            res = json.loads(out.stdout.strip().splitlines()[-1])
            peak, base = res["peak_kib"] / 2**20, res["base_kib"] / 2**20
            print(f"[stream] {mode:6s} T=1 chunk={chunk}: peak RSS (VmHWM) {peak:.3f} GiB (after imports {base:.3f} GiB; "
                  f"fit adds {peak - base:.3f} GiB); ratio to 1 GiB target {peak:.3f}; getrusage ru_maxrss "
                  f"{res['ru_maxrss_kib'] / 2**20:.3f} GiB; {time.perf_counter() - t:.1f} s")


def bench_coverage(reps: int) -> None:
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))
    from test_learners_modulated_inference import CASES, coverage

    for cls, kw in CASES:
        t = time.perf_counter()
        cov = coverage(cls, reps, seed=2, **kw)
        print(f"[coverage] {cls.__name__}: 95% interval coverage per coefficient {np.round(cov, 3)} over {reps} reps "
              f"(target [0.93, 0.97]); {time.perf_counter() - t:.1f} s")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--clients", type=int, default=1_000_000, help="K, clients of the fit-time figure (1)")
    p.add_argument("--dim", type=int, default=10, help="d, features per client (both figures)")
    p.add_argument("--rounds", type=int, default=10, help="T, rounds of ModulatedRegressor in the fit-time figure")
    p.add_argument("--repeats", type=int, default=2, help="timed fits per configuration; the best time is reported")
    p.add_argument("--stream-clients", type=int, default=10_000_000,
                   help="K of the streaming peak-RSS figure (2), fitted with T = 1 from a file on disk")
    p.add_argument("--chunk", type=int, default=65536, help="chunk_size (rows read at a time) of the streaming fit")
    p.add_argument("--coverage", type=int, default=0, help="repetitions of the coverage check (0: skip)")
    p.add_argument("--skip-stream", action="store_true", help="skip the streaming peak-RSS figure (2)")
    p.add_argument("--skip-fit", action="store_true", help="skip the fit-time figure (1)")
    a = p.parse_args(argv)
    if not a.skip_stream:  # first, while this process is small
        bench_stream(a.stream_clients, a.dim, a.chunk)
    if not a.skip_fit:
        bench_fit_time(a.clients, a.dim, a.rounds, a.repeats)
    if a.coverage:
        bench_coverage(a.coverage)


if __name__ == "__main__":
    main()
