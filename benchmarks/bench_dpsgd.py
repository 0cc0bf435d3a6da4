"""Benchmark: our DP-SGD engine against Opacus and against non-private torch, plus RR-on-Bins at 1e6 labels.

Prints time per epoch of our engine divided by Opacus' (same model, data, expected batch
size, clip, Poisson sampling, fixed noise multiplier so that no accountant runs), for

* linear regression with d = 1000 (closed-form per-sample gradients), and
* an MLP 200-256-256-1 at batch 256 (ghost-norm clipped sums, the path CondDPRegressor
  uses; the generic torch.func vmap path is printed too),

targets ≤ 0.5; then our engine divided by plain non-private torch training (same MLP,
same batches, Adam), and the wall time of RR-on-Bins (prior, DP binning and release)
on 10⁶ labels (target ≤ 10 s). Every ratio's numerator and denominator are measured in
the same run. torch is pinned to one thread (``--threads``, default 1) for both sides:
the machine is shared and small kernels gain nothing from intra-op threads.

Usage: ``python benchmarks/bench_dpsgd.py [--small] [--threads N] [--repeats R]``.
"""

from __future__ import annotations

import argparse
import time
import timeit
import warnings

import numpy as np
import torch


def min_time(fn, repeats: int) -> float:
    """Best wall time of ``repeats`` calls (the least noisy estimate on a shared machine)."""
    return min(timeit.repeat(fn, number=1, repeat=repeats))


def _opacus_epoch(model, X, y, batch, clip, z, lr=1e-3):
    from opacus import PrivacyEngine

    data = torch.utils.data.TensorDataset(X, y)
    loader = torch.utils.data.DataLoader(data, batch_size=batch)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    pe = PrivacyEngine(accountant="rdp")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m, o, dl = pe.make_private(module=model, optimizer=opt, data_loader=loader, noise_multiplier=z,
                                   max_grad_norm=clip, poisson_sampling=True)

    def epoch():
        for xb, yb in dl:
            o.zero_grad()
            if xb.shape[0] == 0:
                continue
            loss = ((m(xb)[:, 0] - yb) ** 2).sum()
            loss.backward()
            o.step()

    return epoch


def _plain_epoch(model, X, y, batch, lr=1e-3):
    gen = torch.Generator().manual_seed(0)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    n = X.shape[0]

    def epoch():
        perm = torch.randperm(n, generator=gen)
        for i in range(0, n, batch):
            idx = perm[i : i + batch]
            opt.zero_grad()
            ((model(X[idx])[:, 0] - y[idx]) ** 2).sum().backward()
            opt.step()

    return epoch


def _mlp_module(sizes, gen):
    layers = []
    for a, b in zip(sizes[:-1], sizes[1:], strict=True):
        layers += [torch.nn.Linear(a, b), torch.nn.ReLU()]
    net = torch.nn.Sequential(*layers[:-1])
    with torch.no_grad():
        for p in net.parameters():
            p.copy_((torch.rand(p.shape, generator=gen) * 2 - 1) * 0.05)
    return net


def bench_linear(n, d, batch, repeats):
    from privaudit.learners.dpsgd import DPSGDEngine

    gen = torch.Generator().manual_seed(0)
    X = torch.randn(n, d, generator=gen)
    y = X @ torch.randn(d, generator=gen) + torch.randn(n, generator=gen)
    Xa = torch.cat([X, torch.ones(n, 1)], dim=1)
    eng = DPSGDEngine(epsilon=1.0, clip=1.0, epochs=1, lr=1e-3, batch_size=batch, noise_multiplier=1.0,
                      optimizer="adam", random_state=0)
    theta0 = torch.zeros(1, d + 1, dtype=torch.float32)
    ours = min_time(lambda: eng.train_linear(Xa, y[None], theta0, dtype=torch.float32), repeats)
    opac = min_time(_opacus_epoch(torch.nn.Linear(d, 1), X, y, batch, 1.0, 1.0), repeats)
    return ours, opac


def bench_mlp(n, sizes, batch, repeats):
    from privaudit.learners.dpsgd import DPSGDEngine

    gen = torch.Generator().manual_seed(1)
    X = torch.randn(n, sizes[0], generator=gen)
    y = torch.randn(n, generator=gen)
    net = _mlp_module(sizes, gen)
    params = {f"{i}.{k}": v.detach().clone() for i, layer in enumerate(net) if isinstance(layer, torch.nn.Linear)
              for k, v in layer.named_parameters()}
    n_lin = len(params) // 2
    lin_idx = [i for i, layer in enumerate(net) if isinstance(layer, torch.nn.Linear)]

    def loss(p, x, t):
        h = x
        for j, i in enumerate(lin_idx):
            h = h @ p[f"{i}.weight"].T + p[f"{i}.bias"]
            if j < n_lin - 1:
                h = torch.relu(h)
        return (h[0] - t) ** 2

    eng = DPSGDEngine(epsilon=1.0, clip=1.0, epochs=1, lr=1e-3, batch_size=batch, noise_multiplier=1.0,
                      optimizer="adam", random_state=0)
    layers = [(params[f"{i}.weight"], params[f"{i}.bias"]) for i in lin_idx]
    ours = min_time(lambda: eng.train_mlp(layers, X, y), repeats)  # ghost-norm path (used by CondDPRegressor)
    ours_vmap = min_time(lambda: eng.train_functional(loss, params, X, y), 1)  # generic torch.func path
    opac = min_time(_opacus_epoch(_mlp_module(sizes, torch.Generator().manual_seed(1)), X, y, batch, 1.0, 1.0),
                    repeats)
    plain = min_time(_plain_epoch(_mlp_module(sizes, torch.Generator().manual_seed(1)), X, y, batch), repeats)
    return ours, ours_vmap, opac, plain


def bench_rr_on_bins(n_labels, n_support):
    from privaudit.learners.rr_on_bins import RROnBinsRegressor

    rng = np.random.default_rng(0)
    y = np.clip(rng.lognormal(3.0, 1.0, size=n_labels), 0, 400)  # Criteo-like conversion values, clipped at 400
    r = RROnBinsRegressor(epsilon=1.0, label_bounds=(0, 400), n_support=n_support)
    t = time.perf_counter()
    r.privatize(y, rng=1)
    return time.perf_counter() - t, r.binning_.m


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="reduced sizes (seconds)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    n_lin, n_mlp, n_rr = (4096, 2048, 10**5) if args.small else (16384, 8192, 10**6)
    print(f"torch threads = {torch.get_num_threads()}, repeats = {args.repeats} (best of)")
    ours, opac = bench_linear(n_lin, 1000, 256, args.repeats)
    print(f"linear d=1000, n={n_lin}, batch 256: ours {ours:.3f} s/epoch, Opacus {opac:.3f} s/epoch, "
          f"ratio ours/Opacus = {ours / opac:.3f} (target <= 0.5)")
    ours, ours_vmap, opac, plain = bench_mlp(n_mlp, (200, 256, 256, 1), 256, args.repeats)
    print(f"MLP 200-256-256-1, n={n_mlp}, batch 256: ours {ours:.3f} s/epoch, Opacus {opac:.3f} s/epoch, "
          f"ratio ours/Opacus = {ours / opac:.3f} (target <= 0.5)")
    print(f"MLP, generic torch.func vmap path: {ours_vmap:.3f} s/epoch, ratio vmap/Opacus = {ours_vmap / opac:.3f}")
    print(f"MLP: ours / non-private torch (Adam, same batches) = {ours / plain:.2f} (plain {plain:.3f} s/epoch)")
    for k in (256, 1024):
        secs, m = bench_rr_on_bins(n_rr, k)
        print(f"RR-on-Bins on {n_rr:.0e} labels ({k}-point support, {m} bins): {secs:.2f} s (target <= 10 s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
