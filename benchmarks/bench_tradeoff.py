"""Benchmark of trade-off audits: tightness of ε̲ and speed against raw sampling.

Tightness: for a Gaussian mechanism calibrated (analytic) to ε ∈ {0.5, 1, 2, 4} at
δ = 1e−5, the ratio ε̲/ε_exact of a whole ``audit_tradeoff`` (exact-LR attacker) for
each estimator: GDP (Nasr et al. 2023), Clopper–Pearson with a threshold chosen
on a split, and Clopper–Pearson with Bonferroni over thresholds.

The CP columns compare the Clopper–Pearson ε̲ of the exact-LR audit with the
*ceiling* Clopper–Pearson reaches when the true error rates of every threshold test
are plugged in as expected counts, at the audit's evaluation size ("cp-ceiling") and
at the whole n ("ceiling@n"): the gap to the first is the cost of selection noise,
the gap to the second also that of the split.

Speed: one whole ``audit_tradeoff`` of a d = 10 Gaussian and of a d = 10 Laplace pair with n
releases per hypothesis, with the exact-LR attacker alone and with the full default suite,
against two anchors timed in the same repeat: raw numpy sampling of the same 2·n·d values
and the 2·n releases themselves (the mechanism's float-safe ``sample``); the issue-23 target
is the full suite at ≤ 2× the releases. Then a d = 10 pair search (:func:`search_pairs` on
[0, 1]^d) against one full audit at the same n (target ≤ 3×). Load on the machine slows
every part of a repeat alike: compare ratios, not seconds, and report ``uptime``.

Null calibration: the violation rate over seeded audits of correct mechanisms
(Laplace, k-RR, discrete Laplace, Gaussian, exponential) for every estimator option,
with the exact 95% Clopper–Pearson interval of the rate.

Usage: ``python benchmarks/bench_tradeoff.py [--n 1000000] [--seeds 12] [--null 1000] [--null-n 1000]``;
``--speed-only`` for the speed runs alone.
"""

from __future__ import annotations

import argparse
import contextlib
import time
import warnings

import numpy as np

from privaudit.audit import audit_tradeoff
from privaudit.audit.stats import epsilon_bounds as eb
from privaudit.audit.testing.negative_controls import CORRECT
from privaudit.audit.stats.power import cp_ceiling
from privaudit.mechanisms import GaussianMechanism, LaplaceMechanism, gaussian_tradeoff


def cp_oracle(mu: float, n_eval: int, delta: float = 1e-5, confidence: float = 0.95) -> float:
    """Best Clopper–Pearson ε̲ any single or pooled threshold test could give at this n_eval.

    Plugs the *true* rates (α, G_μ(α)) of every threshold in as expected counts
    (:func:`privaudit.audit.stats.power.cp_ceiling`), so it is the ceiling of the split
    estimator without selection noise: it shows how much of the gap to ε_exact is
    statistical (binomial tails at this n) and not the implementation.
    """
    a = np.geomspace(1e-8, 0.5, 20000)
    b = gaussian_tradeoff(mu, a)
    # One direction (n_eval trials per rate), or both directions pooled (symmetric pair: 2·n_eval).
    return max(cp_ceiling(b, a, m, delta, confidence) for m in (n_eval, 2 * n_eval))


def tightness(n: int, seeds: int) -> None:
    print(f"tightness: eps_lb / eps_exact, Gaussian, delta=1e-5, n={n:.0e} per hypothesis, confidence 0.95, "
          f"median over {seeds} seeds")
    print(f"{'eps':>5} {'gdp':>7} {'cp-split':>9} {'cp-bonf':>8} {'cp-ceiling':>11} {'ceiling@n':>10} "
          f"{'cp/ceiling':>11} {'(min)':>6}")
    for eps in (0.5, 1.0, 2.0, 4.0):
        g = GaussianMechanism(epsilon=eps, delta=1e-5)
        exact = g.exact_epsilon(1e-5)
        runs = {}
        for est, sel in (("gdp", "split"), ("clopper-pearson", "split"), ("clopper-pearson", "bonferroni")):
            runs[est, sel] = [audit_tradeoff(g, np.zeros(1), np.ones(1), n=n, estimator=est, selection=sel, rng=s,
                                             attacker="likelihood-ratio") for s in range(seeds)]
        split = runs["clopper-pearson", "split"]
        ceiling = cp_oracle(g.mu, split[0].n_eval)
        to_ceiling = [r.epsilon_lb / ceiling for r in split]
        med = {k: float(np.median([r.epsilon_lb for r in v])) / exact for k, v in runs.items()}
        print(f"{eps:5.1f} {med['gdp', 'split']:7.3f} {med['clopper-pearson', 'split']:9.3f} "
              f"{med['clopper-pearson', 'bonferroni']:8.3f} {ceiling / exact:11.3f} {cp_oracle(g.mu, n) / exact:10.3f} "
              f"{np.median(to_ceiling):11.3f} {min(to_ceiling):6.3f}")


def _mechanism(name: str):
    return GaussianMechanism(epsilon=1.0, delta=1e-5) if name == "gaussian" else LaplaceMechanism(epsilon=1.0)


class _Clock:
    """Wall-clock and CPU time (all threads of the process) of a block: ``with clock.time("key"): ...``."""

    def __init__(self) -> None:
        self.wall: dict = {}
        self.cpu: dict = {}

    def time(self, key: str):
        clock = self

        class _Block:
            def __enter__(self):
                self.w, self.c = time.perf_counter(), time.process_time()

            def __exit__(self, *exc):
                clock.wall.setdefault(key, []).append(time.perf_counter() - self.w)
                clock.cpu.setdefault(key, []).append(time.process_time() - self.c)

        return _Block()


def _ratios(m: dict) -> str:
    return (f"full/releases {m['full'] / m['releases']:.2f} (target <= 2), full/raw {m['full'] / m['raw']:.2f}, "
            f"LR/releases {m['lr'] / m['releases']:.2f}, LR/raw {m['lr'] / m['raw']:.2f}, "
            f"releases/raw {m['releases'] / m['raw']:.2f}")


def speed(n: int, d: int = 10, repeats: int = 3, mechanisms: tuple = ("gaussian", "laplace")) -> dict:
    """Times of one audit against anchors measured in the same repeat, for d-dimensional Gaussian and Laplace pairs.

    Each repeat times, back to back: raw numpy sampling of the 2·n·d values (``standard_normal``
    or ``laplace``), the 2·n releases themselves (``mechanism.sample``, float-safe), one audit with
    the exact likelihood ratio alone and one with the full default suite. The ratios are of the
    minima over the repeats (load slows every part of a repeat alike, and the minimum is the
    least disturbed), in wall-clock time and in CPU time (all threads of the process: on a
    machine shared with other work, CPU time is what the audit itself spends). Target (issue
    23): the full suite ≤ 2× the releases.
    """
    out = {}
    x, xp = np.zeros(d), np.eye(d)[0]
    for name in mechanisms:
        mech = _mechanism(name)
        audit_tradeoff(mech, x, xp, n=2000, rng=0)  # warm-up: imports (scikit-learn) are not the audit's cost
        clock = _Clock()
        for r in range(repeats):
            rng = np.random.default_rng(r)
            with clock.time("raw"):
                if name == "gaussian":
                    rng.standard_normal((n, d)), rng.standard_normal((n, d))
                else:
                    rng.laplace(size=(n, d)), rng.laplace(size=(n, d))
            with clock.time("releases"):
                mech.sample(x, n, rng), mech.sample(xp, n, rng)
            with clock.time("lr"):
                audit_tradeoff(mech, x, xp, n=n, rng=r, attacker="likelihood-ratio")
            with clock.time("full"), _timing_draws(clock):
                audit_tradeoff(mech, x, xp, n=n, rng=r)
        own = [f / d for f, d in zip(clock.cpu["full"], clock.cpu["own draws"])]
        wall = {k: min(v) for k, v in clock.wall.items()}
        cpu = {k: min(v) for k, v in clock.cpu.items()}
        out[name] = {"wall": wall, "cpu": cpu, "full/own draws": own}
        print(f"speed {name} d={d} n={n:.0e} (min of {repeats}), wall s: raw numpy {wall['raw']:.2f}, releases "
              f"{wall['releases']:.2f}, exact LR audit {wall['lr']:.2f}, full default suite {wall['full']:.2f}; CPU s: "
              f"{cpu['raw']:.2f}, {cpu['releases']:.2f}, {cpu['lr']:.2f}, {cpu['full']:.2f}", flush=True)
        print(f"       wall ratios: {_ratios(wall)}", flush=True)
        print(f"       CPU ratios:  {_ratios(cpu)}", flush=True)
        print(f"       full audit / its own draws (CPU, per repeat; the same memory and load): "
              f"{', '.join(f'{v:.2f}' for v in own)} (target <= 2)", flush=True)
    return out


@contextlib.contextmanager
def _timing_draws(clock: _Clock):
    """Time the audit's own ``draw_releases`` (key "own draws"), inside the audit being timed."""
    from privaudit.audit.engines import tradeoff

    draw = tradeoff.draw_releases

    def timed(*args, **kwargs):
        with clock.time("own draws"):
            return draw(*args, **kwargs)

    tradeoff.draw_releases = timed
    try:
        yield
    finally:
        tradeoff.draw_releases = draw


def search_speed(n: int, d: int = 10, repeats: int = 1, mechanisms: tuple = ("gaussian", "laplace")) -> None:
    """A d-dimensional pair search from the box [0, 1]^d against one full audit at the same n, in the same repeat.

    Target (issue 23): the search ≤ 3× one audit.
    """
    from privaudit.audit import search_pairs

    dom = (np.zeros(d), np.ones(d))
    for name in mechanisms:
        mech = _mechanism(name)
        audit_tradeoff(mech, np.zeros(d), np.eye(d)[0], n=2000, rng=0)  # warm-up, as in speed()
        clock = _Clock()
        for r in range(repeats):
            with clock.time("one"):
                audit_tradeoff(mech, np.zeros(d), np.eye(d)[0], n=n, rng=r)
            with clock.time("search"):
                res = search_pairs(mech, dom, n=n, rng=r)
        w = {k: min(v) for k, v in clock.wall.items()}
        c = {k: min(v) for k, v in clock.cpu.items()}
        print(f"search {name} d={d} n={n:.0e}: one audit {w['one']:.2f} s ({c['one']:.2f} s CPU), search "
              f"{w['search']:.2f} s ({c['search']:.2f} s CPU; {len(res.candidates)} pairs screened, eps_lb "
              f"{res.epsilon_lb:.4f}); ratio {w['search'] / w['one']:.2f} wall, {c['search'] / c['one']:.2f} CPU "
              f"(target <= 3)", flush=True)


def _rate_ci(k: int, m: int) -> tuple[float, float]:
    lo = 0.0 if k == 0 else float(eb.clopper_pearson_lower(k, m, 0.975))
    return lo, float(eb.clopper_pearson_upper(k, m, 0.975))


def null_rate(audits: int, n: int, confidence: float = 0.95) -> None:
    """Violation rate of correct mechanisms over ``audits`` seeded default audits per (mechanism, estimator)."""
    print(f"null calibration: {audits} audits per row, n={n}, confidence {confidence} (allowed rate "
          f"{1 - confidence:.2f}); exact 95% CI on the rate")
    for c in CORRECT:
        mech = c.make()
        options = [("clopper-pearson", "split"), ("clopper-pearson", "bonferroni")]
        if mech.claim.mu is not None:
            options.append(("gdp", "split"))
        for est, sel in options:
            t = time.perf_counter()
            seeds = np.random.SeedSequence(20261130).spawn(audits)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                k = sum(audit_tradeoff(mech, c.x, c.x_prime, n=n, estimator=est, selection=sel, rng=ss,
                                       confidence=confidence).verdict == "violation" for ss in seeds)
            lo, hi = _rate_ci(k, audits)
            print(f"  {c.name:17s} {est:16s} {sel:10s} violations {k:4d}/{audits} = {k / audits:.4f} "
                  f"[{lo:.4f}, {hi:.4f}]  ({time.perf_counter() - t:.0f} s)", flush=True)


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=1_000_000, help="releases per hypothesis of the speed and tightness runs")
    p.add_argument("--null", type=int, default=1000, help="seeded audits per (mechanism, estimator) row; 0 skips")
    p.add_argument("--null-n", type=int, default=1000, help="releases per hypothesis of each null audit")
    p.add_argument("--seeds", type=int, default=12, help="seeded audits per row of the tightness table")
    p.add_argument("--repeats", type=int, default=3, help="repeats of each speed measurement (minimum reported)")
    p.add_argument("--skip-speed", action="store_true", help="skip the speed and tightness runs")
    p.add_argument("--skip-search", action="store_true", help="skip the search-speed run")
    p.add_argument("--speed-only", action="store_true", help="only the speed runs (audit, then search)")
    args = p.parse_args()
    if not args.skip_speed:
        speed(args.n, repeats=args.repeats)
        if not args.skip_search:
            search_speed(args.n)
        if not args.speed_only:
            tightness(args.n, args.seeds)
    if args.null > 0 and not args.speed_only:
        null_rate(args.null, args.null_n)
