"""Reconstruction attacker throughput (d = 10), against the naive inverse measured in the same run.

Usage::

    python benchmarks/bench_reconstruction.py            # n = 20 000 releases per attacker
    python benchmarks/bench_reconstruction.py --quick    # n = 2 000 (autodiff-mle: n/10 always)

Setting: seed 000's modulated release with d = 10, m = 2 vectors, α = 0.4, λ = 0.7,
ω = 0.5, σ = 0.4, fresh phases shown to the attacker, a Gaussian prior N(0, 0.5 I) for
the Bayesian attackers; IWP attackers (``identity``, ``iwp-denoiser``) attack a
Gaussian release x + N(0, 0.8² I). For each registered reconstruction attacker the
script prints reconstructions per second (best of ``--repeats``) and the slowdown
relative to the naive inverse g̃/(1 − α) on the same releases (IWP attackers: relative
to the naive inverse of the Gaussian release). ``y-aided`` also gets the public
responses y = xᵀβ + N(0, 0.5²). Every attacker is warmed up on 10 releases first;
fitting (``iwp-denoiser``) is excluded from the timing. torch runs with one intra-op
thread: on the shared 2-core machine more threads oversubscribe the cores (about 4×
slower for ``autodiff-mle``).
"""

from __future__ import annotations

import argparse
import timeit

import numpy as np
import torch

from privaudit.attacks import available_attacks
from privaudit.attacks.priors import GaussianPrior
from privaudit.mechanisms import GaussianMechanism, ModulatedMechanism, random_orthonormal_basis

D = 10


def min_time(fn, repeats: int) -> float:
    """Best wall time of ``repeats`` calls (the least noisy estimate on a shared machine)."""
    return min(timeit.repeat(fn, number=1, repeat=repeats))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--n", type=int, default=20_000, help="releases reconstructed per attacker (autodiff-mle: n/10)")
    ap.add_argument("--quick", action="store_true", help="n = 2000, overriding --n")
    ap.add_argument("--repeats", type=int, default=3, help="timed runs per attacker; the best time is reported")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    n = 2000 if args.quick else args.n
    rng = np.random.default_rng(0)
    prior = GaussianPrior(np.zeros(D), 0.5)
    mod = ModulatedMechanism(alpha=0.4, lam=0.7, omega=0.5, n_vectors=2, dim=D, sigma=0.4,
                             basis=random_orthonormal_basis(D, 2, rng))
    gauss = GaussianMechanism(sigma=0.8)
    X = prior.sample(n, rng)
    phase = rng.random((n, 2)) * 2 * np.pi
    out_mod = mod.release(X, rng, phase=phase)
    out_gauss = X + gauss.sample(np.zeros(D), n, rng)
    fit_split = prior.sample(n, rng) + gauss.sample(np.zeros(D), n, rng)
    beta, sigma_y = np.ones(D) / np.sqrt(D), 0.5
    y = X @ beta + sigma_y * rng.standard_normal(n)

    naive_cls = available_attacks("reconstruction")["naive"]
    naive, naive_g = naive_cls(mod), naive_cls(gauss)
    naive.reconstruct(out_mod[:10], phase=phase[:10])
    naive_g.reconstruct(out_gauss[:10])
    t_anchor = min_time(lambda: naive.reconstruct(out_mod, phase=phase), args.repeats)
    t_anchor_g = min_time(lambda: naive_g.reconstruct(out_gauss), args.repeats)
    print(f"n = {n}, d = {D}; anchor naive inverse: {n / t_anchor:,.0f} rec/s (modulated), "
          f"{n / t_anchor_g:,.0f} rec/s (Gaussian)")
    print(f"{'attacker':22s} {'target':10s} {'rec/s':>12s} {'× slower than naive':>20s} {'MSE':>8s}")
    for name, cls in available_attacks("reconstruction").items():
        side = name == "y-aided"
        if cls.applicable(mod, prior=prior, side_info=side):
            mech, out, ph, anchor = mod, out_mod, phase, t_anchor
        elif cls.applicable(gauss, prior=prior):
            mech, out, ph, anchor = gauss, out_gauss, None, t_anchor_g
        else:
            print(f"{name:22s} (not applicable to a continuous prior)")
            continue
        att = cls(mech, prior=prior, beta=beta, sigma_y=sigma_y, random_state=1)
        if hasattr(att, "fit"):
            att.fit(fit_split)
        m = n if name != "autodiff-mle" else max(200, n // 10)
        sl = slice(0, m)

        def run(s=sl):
            return att.reconstruct(out[s], phase=None if ph is None else ph[s], y=y[s] if side else None)

        run(slice(0, 10))
        t = min_time(run, 1 if name == "autodiff-mle" else args.repeats)
        est = run()
        mse = float(np.mean(np.sum((est - X[sl]) ** 2, axis=1)))
        rate = m / t
        print(f"{name:22s} {'modulated' if mech is mod else 'Gaussian':10s} {rate:12,.0f} "
              f"{(n / anchor) / rate:20.3g} {mse:8.3f}")


if __name__ == "__main__":
    main()
