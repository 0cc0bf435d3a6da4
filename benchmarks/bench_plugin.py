"""False-failure rate of the pytest plugin's assert_private on correct mechanisms.

The plugin's default confidence is 0.999, so a correct mechanism should fail an
assertion with probability at most 1e−3. This script runs R independent seeded
assertions on correct mechanisms and prints the observed failure count, the rate,
and its exact 95% Clopper–Pearson upper bound.

    python benchmarks/bench_plugin.py [--runs 3000] [--n 2000]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy import stats

from privaudit.audit.testing import DEFAULT_CONFIDENCE, PrivacyAssertionError, assert_private
from privaudit.mechanisms import GaussianMechanism, RandomizedResponse

CASES = {
    "gaussian eps=1": (GaussianMechanism(epsilon=1.0, delta=1e-5), [0.0], [1.0]),
    "rr eps=1": (RandomizedResponse(epsilon=1.0), -1, 1),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3000, help="assertions per mechanism")
    ap.add_argument("--n", type=int, default=2000, help="releases per hypothesis per assertion")
    args = ap.parse_args()
    seeds = np.random.SeedSequence(20261129).spawn(args.runs)
    for name, (mech, x, xp) in CASES.items():
        t0 = time.perf_counter()
        failures = 0
        for ss in seeds:
            try:
                assert_private(mech, x, xp, n=args.n, rng=np.random.default_rng(ss))
            except PrivacyAssertionError:
                failures += 1
        upper = stats.beta.ppf(0.95, failures + 1, args.runs - failures)
        print(f"{name:16s} failures {failures}/{args.runs} = {failures / args.runs:.2e} "
              f"(95% upper bound {upper:.2e}; allowed {1 - DEFAULT_CONFIDENCE:.0e}) "
              f"in {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
