"""Sampling speed of the mechanisms against raw numpy sampling, measured in one run.

Each line prints time(mechanism.sample) / time(anchor) for n releases of a d-vector:

* GaussianMechanism (float-safe lattice release) against ``rng.standard_normal((n, d))``;
* LaplaceMechanism (float-safe lattice release, full-precision exponential) against
  ``rng.laplace(0, b, (n, d))``;
* DiscreteLaplaceMechanism and DiscreteGaussianMechanism (CKS sampler, scalar) against the
  same numpy anchors;
* Mironov's snapping mechanism and the textbook (unsafe) float variants, for reference;
* ModulatedMechanism.sample against ``rng.standard_normal((n, d))``.

Target (issue 14): the float-safe Laplace and Gaussian within 3x of raw numpy sampling.

    python benchmarks/bench_mechanisms.py [--n 1000000] [--d 10] [--repeats 7]
"""

from __future__ import annotations

import argparse
import timeit

import numpy as np

from privaudit.mechanisms import GaussianMechanism, LaplaceMechanism, ModulatedMechanism
from privaudit.mechanisms.discrete import DiscreteGaussianMechanism, DiscreteLaplaceMechanism
from privaudit.mechanisms.snapping import SnappingLaplaceMechanism
from privaudit.mechanisms.unsafe import UnsafeFloatGaussianMechanism, UnsafeFloatLaplaceMechanism


def min_time(fn, repeats: int) -> float:
    """Best wall time of ``repeats`` calls (the least noisy estimate on a shared machine)."""
    return min(timeit.repeat(fn, number=1, repeat=repeats))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--d", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
    n, d, reps = args.n, args.d, args.repeats
    rng = np.random.default_rng(0)
    x = np.linspace(-0.5, 0.5, d)
    gauss = GaussianMechanism(epsilon=1.0, delta=1e-5)
    lap = LaplaceMechanism(epsilon=1.0)
    mod = ModulatedMechanism(alpha=0.3, lam=0.5, omega=1.0, n_vectors=3, dim=d, epsilon=1.0, delta=1e-5)
    dlap = DiscreteLaplaceMechanism(epsilon=0.1)
    dgauss = DiscreteGaussianMechanism(sigma=3.0)

    normal = min_time(lambda: rng.standard_normal((n, d)), reps)
    laplace = min_time(lambda: rng.laplace(0.0, lap.scale, (n, d)), reps)
    normal_1 = min_time(lambda: rng.standard_normal((n * d, 1)), reps)
    laplace_1 = min_time(lambda: rng.laplace(0.0, dlap.scale, (n * d, 1)), reps)
    rows = [
        ("GaussianMechanism.sample (lattice)", gauss.sample, x, normal, "rng.standard_normal", "<= 3"),
        ("LaplaceMechanism.sample (lattice)", lap.sample, x, laplace, "rng.laplace", "<= 3"),
        ("SnappingLaplaceMechanism.sample (B=100)", SnappingLaplaceMechanism(epsilon=1.0, bound=100.0).sample, x,
         laplace, "rng.laplace", "reference"),
        ("UnsafeFloatGaussianMechanism.sample", UnsafeFloatGaussianMechanism(epsilon=1.0, delta=1e-5).sample, x,
         normal, "rng.standard_normal", "reference"),
        ("UnsafeFloatLaplaceMechanism.sample", UnsafeFloatLaplaceMechanism(epsilon=1.0).sample, x, laplace,
         "rng.laplace", "reference"),
        ("ModulatedMechanism.sample (m=3)", mod.sample, x, normal, "rng.standard_normal", "<= 3"),
    ]
    print(f"n = {n}, d = {d}; anchors: standard_normal {normal * 1e3:.1f} ms, laplace {laplace * 1e3:.1f} ms")
    for name, fn, inp, anchor, anchor_name, target in rows:
        t = min_time(lambda fn=fn, inp=inp: fn(inp, n, rng), reps)
        print(f"{name:40s} ratio {t / anchor:5.2f} vs {anchor_name:20s} (target {target})")
    for name, mech, anchor, anchor_name in [
        ("DiscreteLaplaceMechanism.sample (t=10)", dlap, laplace_1, "rng.laplace"),
        ("DiscreteGaussianMechanism.sample (s=3)", dgauss, normal_1, "rng.standard_normal"),
    ]:
        t = min_time(lambda mech=mech: mech.sample(np.array([0.0]), n * d, rng), reps)
        print(f"{name:40s} ratio {t / anchor:5.2f} vs {anchor_name:20s} (n*d scalar draws; reference)")


if __name__ == "__main__":
    main()
