"""Power figures of issue 23: ε̲ must not fall as n grows, and weak multi-coordinate signals must be seen.

Parts (``--part``):

``selection``
    The threshold selection alone, on the scores of a projection attacker (Laplace and Gaussian
    location pairs). The selection sample is that of the engine at n (capped at ``MAX_SELECT``),
    the chosen test is scored by the Clopper–Pearson ε̲ of its *true* rates at the engine's
    evaluation size, so only the selection's noise varies; the mean over ``--seeds`` is printed
    at n = 10⁶ and 10⁷ with and without the evaluation cap
    (:data:`privaudit.attacks.threshold_selection.MAX_EVAL_PER_SELECT`), and the noise margin
    is 2 standard errors of the paired difference.
``engine``
    Whole audits (default suite) of a black-box Laplace (no declared density: counted rates)
    at each ``--sizes``, seed 0.
``coordinates``
    20-coordinate Laplace, scale 200 per coordinate, pair 0 → 1 in every coordinate (claim
    ε = 0.1 under ℓ∞ ≤ 1; the issue's Clopper–Pearson ceilings are 0.029 at 10⁶ and 0.049 at
    10⁷): ε̲ of each attacker audited alone at ``--sizes``.

Usage: ``python benchmarks/bench_power.py --part selection --seeds 30``.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from scipy.stats import laplace, norm

from privaudit.attacks import threshold_selection as ts
from privaudit.audit.engines.tradeoff import MAX_SELECT, MAX_TRAIN, audit_tradeoff
from privaudit.mechanisms import LaplaceMechanism, PrivacyClaim

CONFIDENCE = 0.9
#: (distribution, loc under x, loc under x′, scale, δ)
SCORE_CASES = {
    "Laplace eps=0.1": (laplace, 1.0, 2.0, 10.0, 0.0),
    "Laplace eps=1": (laplace, 0.0, 1.0, 1.0, 0.0),
    "Gaussian mu=1": (norm, 0.0, 1.0, 1.0, 1e-5),
}


def _engine_sizes(n: int) -> tuple[int, int]:
    """(selection, evaluation) releases per hypothesis of the engine's default splits with a trained attacker."""
    n_train = min(round(0.2 * n), MAX_TRAIN)
    n_select = min(round(0.2 * n), MAX_SELECT)
    return n_select, n - n_train - n_select


def _expected_epsilon(case: str, sel: ts.Selection, n_eval: int) -> float:
    dist, a, b, scale, delta = SCORE_CASES[case]
    t, r = sel.threshold, sel.reverse_threshold
    fp, fn = dist.sf(t, a, scale), dist.cdf(t, b, scale)
    rfp, rfn = dist.cdf(r, b, scale), dist.sf(r, a, scale)
    if sel.direction == "forward":
        k = (fp * n_eval, fn * n_eval, n_eval, n_eval)
    elif sel.direction == "reverse":
        k = (rfp * n_eval, rfn * n_eval, n_eval, n_eval)
    else:
        k = ((fp + rfp) * n_eval, (fn + rfn) * n_eval, 2 * n_eval, 2 * n_eval)
    return float(ts._value(*k, 1 - (1 - CONFIDENCE) / 2, delta, "clopper-pearson")[0])


def part_selection(seeds: int) -> None:
    sizes = (10**6, 10**7)
    print(f"{'case':18s} {'cap':>6s} " + " ".join(f"{'n=%.0e' % n:>10s}" for n in sizes) + "   diff ± 2 SE")
    for case, (dist, a, b, scale, delta) in SCORE_CASES.items():
        for cap in (ts.MAX_EVAL_PER_SELECT, None):
            saved = ts.MAX_EVAL_PER_SELECT
            ts.MAX_EVAL_PER_SELECT = saved if cap else 10**12
            try:
                eps = np.zeros((seeds, len(sizes)))
                for s in range(seeds):
                    for k, n in enumerate(sizes):
                        m_sel, m_eval = _engine_sizes(n)
                        g = np.random.default_rng([s, k])
                        s0 = dist.rvs(a, scale, size=m_sel, random_state=g)
                        s1 = dist.rvs(b, scale, size=m_sel, random_state=g)
                        sel = ts.select_threshold(s0, s1, m_eval, m_eval, delta=delta, confidence=CONFIDENCE,
                                                  estimator="clopper-pearson")
                        eps[s, k] = _expected_epsilon(case, sel, m_eval)
            finally:
                ts.MAX_EVAL_PER_SELECT = saved
            d = eps[:, 1] - eps[:, 0]
            margin = 2 * d.std(ddof=1) / np.sqrt(seeds)
            label = "on" if cap else "off"
            print(f"{case:18s} {label:>6s} " + " ".join(f"{v:10.4f}" for v in eps.mean(axis=0))
                  + f"   {d.mean():+.4f} ± {margin:.4f}")


class _BlackBoxLaplace:
    """Laplace releases without a declared density (only counted-rate attackers apply)."""

    def __init__(self, epsilon: float, dim: int = 1, scale: float | None = None, claim: PrivacyClaim | None = None):
        self._m = LaplaceMechanism(epsilon=epsilon, scale=scale) if scale else LaplaceMechanism(epsilon=epsilon)
        self.claim = claim or PrivacyClaim(epsilon, 0.0, "l1<=1")

    def sample(self, x, n, rng=None):
        return self._m.sample(np.asarray(x, dtype=float), n, rng)


def part_engine(sizes: list[int]) -> None:
    mech = _BlackBoxLaplace(0.1)
    for n in sizes:
        t = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = audit_tradeoff(mech, np.ones(1), np.full(1, 2.0), n=n, confidence=CONFIDENCE, rng=0)
        op = r.operating_point
        print(f"black-box Laplace eps=0.1  n={n:.0e}  eps_lb={r.epsilon_lb:.4f}  attacker={r.attacker}  "
              f"fpr={op['fpr']:.2g} ({op['direction']})  stated ratio={r.min_detectable_ratio:.3g}  "
              f"{time.perf_counter() - t:.0f} s")


def part_coordinates(sizes: list[int], attackers: list[str]) -> None:
    mech = _BlackBoxLaplace(1.0, scale=200.0, claim=PrivacyClaim(0.1, 0.0, "linf<=1"))
    x, xp = np.zeros(20), np.ones(20)
    for n in sizes:
        for att in attackers:
            t = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r = audit_tradeoff(mech, x, xp, n=n, confidence=CONFIDENCE, rng=0, attacker=att, adjacency="ignore")
            print(f"20 x Laplace(200)  n={n:.0e}  {att:20s} eps_lb={r.epsilon_lb:.4f}  {time.perf_counter() - t:.0f} s")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--part", choices=["selection", "engine", "coordinates"], default="selection")
    p.add_argument("--seeds", type=int, default=20, help="seeds of the selection part")
    p.add_argument("--sizes", type=float, nargs="+", default=[1e6], help="releases per hypothesis")
    p.add_argument("--attackers", nargs="+", default=["projection", "whitened-projection", "coordinate-llr", "logistic"])
    a = p.parse_args()
    sizes = [int(s) for s in a.sizes]
    if a.part == "selection":
        part_selection(a.seeds)
    elif a.part == "engine":
        part_engine(sizes)
    else:
        part_coordinates(sizes, a.attackers)


if __name__ == "__main__":
    main()
