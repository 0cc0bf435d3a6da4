"""Sampling speed of the mechanisms against raw numpy normal sampling, measured in one run.

Prints time(GaussianMechanism.sample) / time(rng.standard_normal((n, d))) and the
same for ModulatedMechanism.sample, for n = 10⁶ and d = 10 (targets ≤ 1.5 and ≤ 3).

    python benchmarks/bench_mechanisms.py [--n 1000000] [--d 10] [--repeats 7]
"""

from __future__ import annotations

import argparse
import timeit

import numpy as np

from privaudit.mechanisms import GaussianMechanism, ModulatedMechanism


def min_time(fn, repeats: int) -> float:
    """Best wall time of ``repeats`` calls (the least noisy estimate on a shared machine)."""
    return min(timeit.repeat(fn, number=1, repeat=repeats))

def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--d", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
    n, d = args.n, args.d
    rng = np.random.default_rng(0)
    x = np.linspace(-0.5, 0.5, d)
    gauss = GaussianMechanism(epsilon=1.0, delta=1e-5)
    mod = ModulatedMechanism(alpha=0.3, lam=0.5, omega=1.0, n_vectors=3, dim=d, epsilon=1.0, delta=1e-5)

    anchor = min_time(lambda: rng.standard_normal((n, d)), args.repeats)
    t_gauss = min_time(lambda: gauss.sample(x, n, rng), args.repeats)
    t_mod = min_time(lambda: mod.sample(x, n, rng), args.repeats)
    print(f"anchor rng.standard_normal(({n}, {d})): {anchor * 1e3:.1f} ms")
    print(f"GaussianMechanism.sample   ratio {t_gauss / anchor:.2f}  (target <= 1.5)")
    print(f"ModulatedMechanism.sample  ratio {t_mod / anchor:.2f}  (target <= 3, m=3)")


if __name__ == "__main__":
    main()
