"""DP-SGD engine: per-sample clipping vs loop and Opacus, calibration vs dp_accounting, noise, optimisers."""

import math

import numpy as np
import pytest
import torch
from conftest import assert_within_se

from privaudit.learners.dpsgd import (
    DPSGDEngine,
    clipped_sum,
    linear_clipped_grad_sum,
    per_sample_grad_fn,
    train_linear_dpsgd_runs,
    _Optimizer,
)
from privaudit.mechanisms.accounting import calibrate_noise_multiplier, dpsgd_epsilon
from privaudit.mechanisms.validation import InvalidParameterError


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    # Tiny tensors: intra-op threads only contend with other processes on a 2-core box.
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)


def _loop_reference(model_fn, params, X, y, clip):
    """Σ_i clip(∇ℓ_i) by one autograd call per sample (the slow reference)."""
    total = [torch.zeros_like(p) for p in params]
    for i in range(X.shape[0]):
        ps = [p.detach().clone().requires_grad_(True) for p in params]
        loss = (model_fn(ps, X[i : i + 1])[0] - y[i]) ** 2
        gs = torch.autograd.grad(loss, ps)
        norm = torch.sqrt(sum((g**2).sum() for g in gs))
        s = min(1.0, clip / float(norm))
        for t, g in zip(total, gs, strict=True):
            t += s * g
    return total


def test_linear_closed_form_equals_loop():
    g = torch.Generator().manual_seed(0)
    X = torch.randn(30, 5, generator=g, dtype=torch.float64)
    y = torch.randn(30, generator=g, dtype=torch.float64)
    theta = torch.randn(1, 5, generator=g, dtype=torch.float64)
    clip = torch.tensor([5.0], dtype=torch.float64)
    got, norms = linear_clipped_grad_sum(theta, X, y[None], clip)
    ref = _loop_reference(lambda ps, x: x @ ps[0], [theta[0]], X, y, 5.0)[0]
    torch.testing.assert_close(got[0], ref, rtol=1e-12, atol=1e-12)
    # some but not all samples were clipped, so the test exercises both branches
    assert 0 < int((norms > 5.0).sum()) < 30


def _mlp_params(g, d=6, h=(8, 4)):
    p, width = {}, d
    for i, k in enumerate([*h, 1]):
        p[f"W{i}"] = torch.randn(k, width, generator=g) * 0.5
        p[f"b{i}"] = torch.randn(k, generator=g) * 0.1
        width = k
    return p


def _mlp(p, x):
    n = len(p) // 2
    for i in range(n):
        x = x @ p[f"W{i}"].T + p[f"b{i}"]
        if i < n - 1:
            x = torch.relu(x)
    return x[..., 0]


def test_vmap_clipped_sum_equals_loop():
    g = torch.Generator().manual_seed(1)
    p = _mlp_params(g)
    X, y = torch.randn(20, 6, generator=g), torch.randn(20, generator=g)
    names = list(p)
    grads = per_sample_grad_fn(lambda q, x, t: (_mlp(q, x) - t) ** 2)(p, X, y)
    got = clipped_sum(grads, names, torch.tensor([0.5]))
    ref = _loop_reference(lambda ps, x: _mlp(dict(zip(names, ps, strict=True)), x), [p[k] for k in names], X, y, 0.5)
    torch.testing.assert_close(got, torch.cat([r.reshape(-1) for r in ref]), rtol=1e-5, atol=1e-6)


def _opacus_clipped_sum(module, X, y, clip, per_sample=None):
    from opacus import GradSampleModule
    from opacus.optimizers import DPOptimizer

    gsm = GradSampleModule(module, loss_reduction="sum")
    opt = DPOptimizer(torch.optim.SGD(gsm.parameters(), lr=0.0), noise_multiplier=0.0, max_grad_norm=clip,
                      expected_batch_size=X.shape[0], loss_reduction="sum")
    opt.zero_grad()
    loss = ((gsm(X)[:, 0] - y) ** 2).sum()
    loss.backward()
    if per_sample is not None:  # Opacus' per-sample gradients, before clipping
        per_sample.extend(p.grad_sample.detach().clone() for p in module.parameters())
    opt.pre_step()  # clip per sample, sum, add (zero) noise: p.grad = Σ clip(g_i)
    return [p.grad.detach().clone() for p in module.parameters()]


def test_mlp_matches_opacus_clipped_gradients():
    g = torch.Generator().manual_seed(2)
    net = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.ReLU(), torch.nn.Linear(8, 4), torch.nn.ReLU(),
                              torch.nn.Linear(4, 1))
    with torch.no_grad():
        for prm in net.parameters():
            prm.copy_(torch.randn(prm.shape, generator=g) * 0.5)
    X, y = torch.randn(64, 6, generator=g), torch.randn(64, generator=g)
    p = {}
    for i, layer in enumerate([net[0], net[2], net[4]]):
        p[f"W{i}"], p[f"b{i}"] = layer.weight.detach().clone(), layer.bias.detach().clone()
    names = list(p)
    per = per_sample_grad_fn(lambda q, x, t: (_mlp(q, x) - t) ** 2)(p, X, y)
    ours = clipped_sum(per, names, torch.tensor([0.3]))
    opacus_per = []
    ref = _opacus_clipped_sum(net, X, y, 0.3, per_sample=opacus_per)
    # per-sample gradients agree one by one, and so do the clipped sums
    for k, g in zip(names, opacus_per, strict=True):
        torch.testing.assert_close(per[k], g, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(ours, torch.cat([r.reshape(-1) for r in ref]), rtol=1e-4, atol=1e-5)


def test_linear_matches_opacus_clipped_gradients():
    g = torch.Generator().manual_seed(3)
    lin = torch.nn.Linear(10, 1)
    X, y = torch.randn(50, 10, generator=g), torch.randn(50, generator=g)
    ref = _opacus_clipped_sum(lin, X, y, 0.8)
    theta = torch.cat([lin.weight.detach()[0], lin.bias.detach()])[None].double()
    Xa = torch.cat([X, torch.ones(50, 1)], dim=1).double()
    ours = linear_clipped_grad_sum(theta, Xa, y.double()[None], torch.tensor([0.8], dtype=torch.float64))[0][0]
    torch.testing.assert_close(ours.float(), torch.cat([ref[0][0], ref[1]]), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("batch_size, epochs", [(None, 3), pytest.param(25, 3, marks=pytest.mark.slow), pytest.param(50, 1, marks=pytest.mark.slow)])
def test_calibration_matches_dp_accounting(batch_size, epochs):
    eng = DPSGDEngine(epsilon=1.0, delta=1e-5, epochs=epochs, batch_size=batch_size, adjacency="label")
    q, _, steps = eng.schedule(100)
    z = eng.calibrate(100)
    ref = calibrate_noise_multiplier(1.0, 1e-5, steps, sampling_rate=q, adjacency="label")
    assert z == pytest.approx(ref, rel=1e-3)
    # the claim is dp_accounting's ε of the z in use, at most the target
    eps = dpsgd_epsilon(z, steps, 1e-5, sampling_rate=q, adjacency="label")
    assert eng.claim(100).epsilon == pytest.approx(eps, rel=1e-6)
    assert eps <= 1.0 + 1e-6
    assert eng.claim(100).adjacency == "label"


def test_replace_one_needs_more_noise_than_add_remove():
    full = [DPSGDEngine(epsilon=1.0, delta=1e-5, epochs=4, adjacency=a).calibrate(10) for a in ("label", "add-remove")]
    # full batch: replace-one doubles the sensitivity, hence exactly twice the noise
    assert full[0] == pytest.approx(2 * full[1], rel=1e-3)
    # Poisson sampling: at the same z replace-one spends more ε, so (ε being decreasing
    # in z) it needs a larger z for the same ε
    e_rep, e_add = (dpsgd_epsilon(2.0, 4, 1e-5, sampling_rate=0.2, adjacency=a) for a in ("replace-one", "add-remove"))
    assert e_rep > e_add


def test_noise_has_calibrated_std_and_infinite_epsilon_has_none():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(40, 8)), rng.normal(size=40)
    seen = []
    train_linear_dpsgd_runs(X, y, epsilon=1.0, clip=0.5, epochs=50, lr=0.01, n_runs=4, noise_multiplier=3.0,
                            callback=lambda s: seen.append((s.noisy_sum - s._clipped_sum).numpy()), rng=1)
    noise = np.concatenate([s.ravel() for s in seen])
    # sample variance of N iid N(0, 1.5²): relative s.e. sqrt(2/N); 5 s.e. tolerance
    assert abs(noise.var() / 1.5**2 - 1) < 5 * math.sqrt(2 / noise.size)
    seen.clear()
    train_linear_dpsgd_runs(X, y, epsilon=math.inf, clip=None, epochs=3, lr=0.01, n_runs=2,
                            callback=lambda s: seen.append(s), rng=1)
    assert all(torch.equal(s.noisy_sum, s._clipped_sum) for s in seen)


def test_vectorised_runs_equal_separate_runs():
    rng = np.random.default_rng(1)
    X, Y = rng.normal(size=(30, 4)), rng.normal(size=(3, 30))
    together = train_linear_dpsgd_runs(X, Y, epsilon=math.inf, clip=[0.3, 1.0, 5.0], epochs=20, lr=[0.1, 0.05, 0.01],
                                       optimizer="adam", fit_intercept=True, rng=0)
    for r, (c, lr) in enumerate([(0.3, 0.1), (1.0, 0.05), (5.0, 0.01)]):
        alone = train_linear_dpsgd_runs(X, Y[r], epsilon=math.inf, clip=c, epochs=20, lr=lr, optimizer="adam",
                                        fit_intercept=True, n_runs=1, rng=0)
        np.testing.assert_allclose(together[r], alone[0], rtol=1e-10, atol=1e-12)


def test_nonprivate_sgd_converges_to_ols():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(200, 3))
    y = X @ [1.0, -2.0, 0.5] + 0.7 + 0.1 * rng.normal(size=200)
    theta = train_linear_dpsgd_runs(X, y, epsilon=math.inf, clip=None, epochs=2000, lr=0.1, n_runs=1,
                                    fit_intercept=True, rng=0)[0]
    ols = np.linalg.lstsq(np.hstack([X, np.ones((200, 1))]), y, rcond=None)[0]
    np.testing.assert_allclose(theta, ols, atol=1e-8)


def test_adam_matches_torch_adam():
    g = torch.Generator().manual_seed(4)
    grads = [torch.randn(2, 5, generator=g, dtype=torch.float64) for _ in range(10)]
    ours = _Optimizer("adam", torch.tensor([0.01, 0.01], dtype=torch.float64))
    theta = torch.zeros(2, 5, dtype=torch.float64)
    ref = torch.zeros(2, 5, dtype=torch.float64, requires_grad=True)
    topt = torch.optim.Adam([ref], lr=0.01)
    for gr in grads:
        theta = ours.step(theta, gr)
        ref.grad = gr.clone()
        topt.step()
    torch.testing.assert_close(theta, ref.detach(), rtol=1e-12, atol=1e-14)


def test_poisson_batches_have_rate_q():
    rng = np.random.default_rng(3)
    X, y = rng.normal(size=(500, 2)), rng.normal(size=500)
    sizes = []
    train_linear_dpsgd_runs(X, y, epsilon=math.inf, clip=1.0, epochs=4, lr=0.01, batch_size=50, n_runs=3,
                            callback=lambda s: sizes.append(s.batch_size.numpy()), rng=0)
    sizes = np.concatenate(sizes)
    assert len(sizes) == 3 * 4 * 10  # runs × epochs × round(n / b) steps
    # Binomial(500, 0.1): mean 50, s.e. of the mean sqrt(45/120)
    assert abs(sizes.mean() - 50) < 5 * math.sqrt(45 / sizes.size)


@pytest.mark.parametrize("kwargs, match", [
    ({"clip": 0.0}, "clip"), ({"clip": -1.0}, "clip"), ({"clip": None}, "clip"),
    ({"adjacency": "bogus"}, "adjacency"), ({"optimizer": "rmsprop"}, "optimizer"),
])
def test_bad_parameters_raise(kwargs, match):
    rng = np.random.default_rng(0)
    base = dict(epsilon=1.0, clip=1.0, epochs=2, lr=0.1, n_runs=1, noise_multiplier=1.0, rng=0)
    with pytest.raises(InvalidParameterError, match=match):
        train_linear_dpsgd_runs(rng.normal(size=(5, 2)), rng.normal(size=5), **{**base, **kwargs})


def test_ghost_norm_mlp_equals_vmap_and_opacus():
    from privaudit.learners.dpsgd import mlp_clipped_grad_sum

    g = torch.Generator().manual_seed(5)
    net = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.ReLU(), torch.nn.Linear(8, 4), torch.nn.ReLU(),
                              torch.nn.Linear(4, 1))
    with torch.no_grad():
        for prm in net.parameters():
            prm.copy_(torch.randn(prm.shape, generator=g) * 0.5)
    X, y = torch.randn(64, 6, generator=g), torch.randn(64, generator=g)
    layers = [(net[i].weight.detach().clone(), net[i].bias.detach().clone()) for i in (0, 2, 4)]
    grads, norms = mlp_clipped_grad_sum(layers, X, y, torch.tensor([1.0]))
    assert 0 < int((norms > 1.0).sum()) < 64
    ours = torch.cat([t.reshape(-1) for t in grads])
    ref = torch.cat([r.reshape(-1) for r in _opacus_clipped_sum(net, X, y, 1.0)])
    torch.testing.assert_close(ours, ref, rtol=1e-4, atol=1e-5)
    p = {f"{k}{j}": t for j, (W, b) in enumerate(layers) for k, t in (("W", W), ("b", b))}
    vm = clipped_sum(per_sample_grad_fn(lambda q, x, t: (_mlp(q, x) - t) ** 2)(p, X, y), list(p), torch.tensor([1.0]))
    torch.testing.assert_close(ours, vm, rtol=1e-4, atol=1e-5)


def test_train_mlp_equals_train_functional():
    g = torch.Generator().manual_seed(6)
    p = _mlp_params(g)
    X, y = torch.randn(60, 6, generator=g), torch.randn(60, generator=g)
    eng = dict(epsilon=1.0, clip=0.5, epochs=3, lr=0.01, batch_size=20, noise_multiplier=1.0, random_state=0)
    a = DPSGDEngine(**eng).train_functional(lambda q, x, t: (_mlp(q, x) - t) ** 2, p, X, y)
    b = DPSGDEngine(**eng).train_mlp([(p["W0"], p["b0"]), (p["W1"], p["b1"]), (p["W2"], p["b2"])], X, y)
    torch.testing.assert_close(torch.cat([a[k].reshape(-1) for k in a]),
                               torch.cat([t.reshape(-1) for W, bb in b for t in (W, bb)]), rtol=1e-4, atol=1e-5)


def test_ghost_norm_respects_relu_flags():
    """A linear embedding layer (no ReLU) below a ReLU head: ghost norms equal vmap of that model."""
    from privaudit.learners.dpsgd import mlp_clipped_grad_sum, mlp_forward

    g = torch.Generator().manual_seed(7)
    layers = [(torch.randn(4, 6, generator=g), None), (torch.randn(5, 4, generator=g), torch.randn(5, generator=g)),
              (torch.randn(1, 5, generator=g), torch.randn(1, generator=g))]
    relu = (False, True, False)
    X, y = torch.randn(30, 6, generator=g), torch.randn(30, generator=g)
    grads, _ = mlp_clipped_grad_sum(layers, X, y, None, relu)
    names = ["W0", "W1", "b1", "W2", "b2"]

    def loss(q, x, t):
        ls = [(q["W0"], None), (q["W1"], q["b1"]), (q["W2"], q["b2"])]
        return (mlp_forward(ls, x[None], relu)[0] - t) ** 2

    p = dict(zip(names, [layers[0][0], layers[1][0], layers[1][1], layers[2][0], layers[2][1]], strict=True))
    ref = clipped_sum(per_sample_grad_fn(loss)(p, X, y), names, None)
    torch.testing.assert_close(torch.cat([t.reshape(-1) for t in grads]), ref, rtol=1e-4, atol=1e-5)


# --- float safety of the noisy gradient sum (issue 14) ----------------------------------------------------------
def test_noisy_sum_is_float_safe_and_the_textbook_one_is_not(monkeypatch):
    """float_safe_noisy_sum on 3000 runs of one clipped sum, under D and D′ (a sum moved by 2c).

    The previous code released fl(Σ ḡ + zc·torch.randn): torch's Box–Muller leaks like any textbook float
    sampler, but privaudit inverts numpy's samplers, so the textbook release shown leaking here is the same
    expression with numpy's normal (``float_safe_gaussian`` replaced by ``textbook_gaussian``).
    """
    from float_safety import assert_float_safe, one_sided_counts, textbook_gaussian

    import privaudit.learners.dpsgd as dpsgd
    from privaudit.mechanisms.lattice import grid_step

    R, std = 3000, torch.tensor([1.7])
    c = torch.tensor([0.3, -1.2, 0.05], dtype=torch.float64)
    c2 = c + torch.tensor([1.0, 0.0, 0.0], dtype=torch.float64)            # one clipped gradient moved: ‖Δ‖ ≤ 2c
    new = dpsgd.float_safe_noisy_sum(c2.repeat(R, 1), std, np.random.default_rng(0)).numpy()
    for out in (new, dpsgd.float_safe_noisy_sum(c.repeat(R, 1), std, np.random.default_rng(1)).numpy()):
        assert_float_safe(out, [c.numpy(), c2.numpy()], grid_step(1.7), 1.7, 13.0)
    resid = new - c2.numpy()
    assert_within_se(resid.var(axis=0, ddof=1), 1.7**2 + grid_step(1.7) ** 2 / 12, math.sqrt(2 / (R - 1)) * 1.7**2)
    monkeypatch.setattr(dpsgd, "float_safe_gaussian", lambda values, sigma, rng, **_: textbook_gaussian(values, sigma, rng))
    old = dpsgd.float_safe_noisy_sum(c2.repeat(R, 1), std, np.random.default_rng(0)).numpy()
    only2, only = one_sided_counts(old, c.numpy(), c2.numpy(), 1.7)
    assert only2 > 0.05 * R  # 7× the 0.7 % slow-path draws, the only ones the inversion can misjudge
    assert np.max(np.abs(new - old)) <= grid_step(1.7)


def test_noisy_sum_per_run_scales_and_dtype():
    from float_safety import lattice_reachable

    from privaudit.learners.dpsgd import float_safe_noisy_sum
    from privaudit.mechanisms.lattice import grid_step

    clipped = torch.zeros((4, 2000), dtype=torch.float32)
    std = torch.tensor([0.5, 3.0, 0.5, 3.0], dtype=torch.float32)
    out = float_safe_noisy_sum(clipped, std, np.random.default_rng(2))
    assert out.dtype == torch.float32 and out.shape == clipped.shape
    out64 = float_safe_noisy_sum(clipped.double(), std, np.random.default_rng(2)).numpy()
    np.testing.assert_array_equal(out.numpy(), out64.astype(np.float32))   # the cast back is the only change
    for r, s in enumerate([0.5, 3.0, 0.5, 3.0]):
        assert np.all(lattice_reachable(out64[r], grid_step(s)))
        assert_within_se(out64[r].std(ddof=1), s, s / math.sqrt(2 * 1999), n_tests=4)


def test_engine_releases_the_float_safe_sum():
    """Every noisy_sum the engine exposes is on the lattice of its noise scale zc = 1.5 (the noise law: see
    test_noise_has_calibrated_std_and_infinite_epsilon_has_none)."""
    from float_safety import lattice_reachable

    from privaudit.mechanisms.lattice import grid_step

    rng = np.random.default_rng(3)
    X, y = rng.normal(size=(40, 3)), rng.normal(size=40)
    seen = []
    train_linear_dpsgd_runs(X, y, epsilon=1.0, clip=0.5, epochs=30, lr=0.01, n_runs=4, noise_multiplier=3.0,
                            callback=lambda s: seen.append(s.noisy_sum.numpy()), rng=4)
    assert len(seen) == 30 and np.all(lattice_reachable(np.array(seen), grid_step(1.5)))
