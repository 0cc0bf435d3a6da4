"""Benchmark of trade-off audits: tightness of ε̲ and speed against raw sampling.

Tightness: for a Gaussian mechanism calibrated (analytic) to ε ∈ {0.5, 1, 2, 4} at
δ = 1e−5, the ratio ε̲/ε_exact of a whole ``audit_tradeoff`` (exact-LR attacker) for
each estimator: GDP (Nasr et al. 2023), Clopper–Pearson with a threshold chosen
on a split, and Clopper–Pearson with Bonferroni over thresholds.

Speed: one whole ``audit_tradeoff`` of a d = 10 Gaussian with n releases per
hypothesis, divided by the time to draw the same 2·n·d standard normals with
numpy in the same run (the anchor).

Null calibration: the violation rate over seeded audits of correct mechanisms.

Usage: ``python benchmarks/bench_tradeoff.py [--n 1000000] [--null 200] [--null-n 20000]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from privaudit.audit import audit_tradeoff
from privaudit.audit import epsilon_bounds as eb
from privaudit.mechanisms import GaussianMechanism, LaplaceMechanism, RandomizedResponse, gaussian_tradeoff


def cp_oracle(mu: float, n_eval: int, delta: float = 1e-5, confidence: float = 0.95) -> float:
    """Best Clopper–Pearson ε̲ any single or pooled threshold test could give at this n_eval.

    Plugs the *true* rates (α, G_μ(α)) of every threshold in as expected counts, so it
    is the ceiling of the split estimator without selection noise: it shows how much
    of the gap to ε_exact is statistical (binomial tails at this n) and not the
    implementation.
    """
    a = np.geomspace(1e-8, 0.5, 20000)
    b = gaussian_tradeoff(mu, a)
    level = 1 - (1 - confidence) / 2
    best = 0.0
    for m in (n_eval, 2 * n_eval):  # one direction, or both directions pooled (symmetric pair)
        au = eb.clopper_pearson_upper(a * m, m, level)
        bu = eb.clopper_pearson_upper(b * m, m, level)
        best = max(best, float(np.max(np.log(np.maximum(1 - delta - bu, 1e-300)) - np.log(au))))
    return best


def tightness(n: int) -> None:
    print(f"tightness: eps_lb / eps_exact, Gaussian, delta=1e-5, n={n:.0e} per hypothesis, confidence 0.95")
    print(f"{'eps':>5} {'gdp':>7} {'cp-split':>9} {'cp-bonf':>8} {'cp-ceiling':>11}")
    for eps in (0.5, 1.0, 2.0, 4.0):
        g = GaussianMechanism(epsilon=eps, delta=1e-5)
        row = []
        for est, sel in (("gdp", "split"), ("clopper-pearson", "split"), ("clopper-pearson", "bonferroni")):
            r = audit_tradeoff(g, np.zeros(1), np.ones(1), n=n, estimator=est, selection=sel, rng=0)
            row.append(r.epsilon_lb / r.epsilon_exact)
        ceiling = cp_oracle(g.mu, r.n_eval) / g.exact_epsilon(1e-5)
        print(f"{eps:5.1f} {row[0]:7.3f} {row[1]:9.3f} {row[2]:8.3f} {ceiling:11.3f}")


def speed(n: int, d: int = 10, repeats: int = 3) -> None:
    g = GaussianMechanism(epsilon=1.0, delta=1e-5)
    x, xp = np.zeros(d), np.eye(d)[0]
    anchor, audit = [], []
    for r in range(repeats):
        t = time.perf_counter()
        rng = np.random.default_rng(r)
        rng.standard_normal((n, d))
        rng.standard_normal((n, d))
        anchor.append(time.perf_counter() - t)
        t = time.perf_counter()
        audit_tradeoff(g, x, xp, n=n, rng=r)
        audit.append(time.perf_counter() - t)
    a, b = min(anchor), min(audit)
    print(f"speed: audit_tradeoff d={d}, n={n:.0e}: {b:.3f} s; raw sampling {a:.3f} s; ratio {b / a:.2f} (target <= 3)")


def null_rate(audits: int, n: int) -> None:
    cases = [
        ("Gaussian eps=1 cp", GaussianMechanism(epsilon=1.0, delta=1e-5), np.zeros(1), np.ones(1), "clopper-pearson"),
        ("Gaussian eps=1 gdp", GaussianMechanism(epsilon=1.0, delta=1e-5), np.zeros(1), np.ones(1), "gdp"),
        ("Laplace eps=1 cp", LaplaceMechanism(epsilon=1.0), np.zeros(1), np.ones(1), "clopper-pearson"),
        ("RR eps=1 cp", RandomizedResponse(epsilon=1.0), -1.0, 1.0, "clopper-pearson"),
    ]
    for name, mech, x, xp, est in cases:
        v = [audit_tradeoff(mech, x, xp, n=n, estimator=est, rng=s).verdict == "violation" for s in range(audits)]
        print(f"null calibration {name}: violation rate {np.mean(v):.3f} over {audits} audits (n={n}; bound 0.05)")


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=1_000_000)
    p.add_argument("--null", type=int, default=200)
    p.add_argument("--null-n", type=int, default=20_000)
    args = p.parse_args()
    speed(args.n)
    tightness(args.n)
    if args.null > 0:
        null_rate(args.null, args.null_n)
