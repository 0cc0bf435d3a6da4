"""Bias audit benchmark: null false-alarm rate, power at the stated detectable bias, speed.

Usage::

    python benchmarks/bench_bias.py            # 200 runs per estimator
    python benchmarks/bench_bias.py --quick    # 200 runs, smaller n (a minute on 2 cores)

1. **Level.** ``audit_bias`` at confidence 0.95 is run on ``--runs`` seeded replicates of
   estimators that are unbiased by construction — the modulated server gradient G
   (m = 3, derived correction), the IWP exponential loss and a skewed exponential
   sampler — and the fraction of runs that reject (the null false-alarm rate) is
   printed with its Clopper–Pearson 95 % interval. It must not exceed 1 − confidence.
2. **Power.** A bias equal to the ``min_detectable_bias`` reported by a reference
   audit is planted in one coordinate; the detection rate must be ≈ 0.9.
3. **Speed.** ``audit_bias`` on 10⁶ Gaussian draws of dimension 10 against the raw
   numpy anchor (the same draws, ``mean`` and ``np.cov`` in one go), as a ratio.
"""

from __future__ import annotations

import argparse
import time
import zlib

import numpy as np
from scipy import stats

from privaudit.audit.engines.bias import audit_bias
from privaudit.audit.studies.bias_checks import IWPSetup, ModulatedSetup


def clopper_pearson(k: int, n: int, conf: float = 0.95) -> tuple[float, float]:
    a = 1 - conf
    lo = stats.beta.ppf(a / 2, k, n - k + 1) if k > 0 else 0.0
    hi = stats.beta.isf(a / 2, k + 1, n - k) if k < n else 1.0
    return float(lo), float(hi)


def samplers():
    mod = ModulatedSetup(n_vectors=3)
    iwp_setup = IWPSetup()

    from privaudit.learners.iwp_losses import iwp_loss

    n_ex, p = iwp_setup.X.shape

    def iwp_exp(n, rng):
        xt = iwp_setup.release_x(n, rng).reshape(n * n_ex, p)
        yt = iwp_setup.release_y(n, rng).reshape(n * n_ex)
        return iwp_loss(iwp_setup.theta, xt, yt, loss="exponential", sigma=iwp_setup.sigma,
                        epsilon_y=iwp_setup.epsilon_y).reshape(n, n_ex)

    def skewed(n, rng):
        return rng.exponential(1.0, size=(n, 3)) * np.array([1.0, 2.0, 0.5])

    return {
        "modulated G (m=3, derived)": (mod.sampler("G", "derived"), mod.target("G"), 2000),
        "IWP exponential loss": (iwp_exp, np.exp(-iwp_setup.margins), 20000),
        "exponential draws (skewed)": (skewed, np.array([1.0, 2.0, 0.5]), 3000),
    }


def level_and_power(runs: int, scale: float) -> None:
    print(f"{'estimator':32s} {'n':>7s} {'false alarms':>13s} {'rate':>6s} {'CP 95% CI':>16s}  "
          f"{'power at MDB':>12s} {'CP 95% CI':>16s}")
    for name, (sampler, target, n) in samplers().items():
        n = max(500, int(n * scale))
        roots = np.random.SeedSequence(zlib.crc32(name.encode())).spawn(2 * runs + 1)
        alarms = sum(audit_bias(sampler, target, n=n, rng=s).detected for s in roots[:runs])
        ref = audit_bias(sampler, target, n=n, rng=roots[-1])
        shift = np.zeros(np.size(target))
        shift[0] = ref.min_detectable_bias[0]  # the stated detectable bias, in the first coordinate alone
        shift = shift.reshape(np.shape(target))

        def planted(k, rng, sampler=sampler, shift=shift):
            return sampler(k, rng) + shift

        hits = sum(audit_bias(planted, target, n=n, rng=s).detected for s in roots[runs:2 * runs])
        lo, hi = clopper_pearson(alarms, runs)
        plo, phi = clopper_pearson(hits, runs)
        print(f"{name:32s} {n:7d} {alarms:6d}/{runs:<6d} {alarms / runs:6.3f} [{lo:.3f}, {hi:.3f}]  "
              f"{hits / runs:12.3f} [{plo:.3f}, {phi:.3f}]")
    print("nominal: false-alarm rate <= 0.050, power 0.900")


def speed(n: int) -> None:
    p = 10

    def sampler(k, rng):
        return rng.standard_normal((k, p))

    t0 = time.perf_counter()
    x = np.random.default_rng(0).standard_normal((n, p))
    x.mean(axis=0)
    np.cov(x.T)
    anchor = time.perf_counter() - t0
    t0 = time.perf_counter()
    audit_bias(sampler, np.zeros(p), n=n, rng=0, chunk_size=100_000)
    ours = time.perf_counter() - t0
    print(f"audit_bias, n={n}, p={p}: {ours:.3f} s; raw numpy anchor {anchor:.3f} s; ratio {ours / anchor:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--runs", type=int, default=200,
                        help="seeded audit_bias replicates per estimator for the level and power figures")
    parser.add_argument("--quick", action="store_true",
                        help="quarter sample sizes per audit and 250 000 draws in the speed figure")
    args = parser.parse_args()
    level_and_power(args.runs, 0.25 if args.quick else 1.0)
    speed(250_000 if args.quick else 1_000_000)


if __name__ == "__main__":
    main()
