"""The DP-SGD engine's fast paths give the same bits as the computations they replaced (issue 26).

* :func:`mlp_clipped_grad_sum` (backward pass by hand) against the autograd computation it replaced;
* the Adam step (workspaces) against the out-of-place formula;
* float_safe_gaussian (chunked) against lattice_release on the whole array;
* the engine's noisy sums are float_safe_gaussian releases on its own noise Generator: on γ(ℤ + u)
  with offsets u that are that Generator's draws, the same whatever the data.
"""

import numpy as np
import pytest
import torch

from privaudit.learners.dpsgd import DPSGDEngine, _Optimizer, _relu_flags, float_safe_noisy_sum, mlp_clipped_grad_sum
from privaudit.mechanisms.gaussian import float_safe_gaussian
from privaudit.mechanisms.lattice import grid_step


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)


def _same_bits(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a.view(np.uint8), b.view(np.uint8))


def test_noisy_sums_lie_on_a_lattice_whose_offsets_do_not_depend_on_the_data():
    """y = γ·fl(K + u) with K an integer and u the Generator's draws after the normals, for any data.

    Replaying the Generator gives the offsets u of every step; they are the same for two
    datasets (clipped sums moved by one clipped gradient), and each release minus γu is γ times
    an integer up to the one rounding of fl(K + u).
    """
    sigma, P = 1.5, 1000
    step = grid_step(sigma)
    base = torch.randn(P, generator=torch.Generator().manual_seed(1), dtype=torch.float64) * 4
    releases = {}
    for name, clipped in (("D", base), ("D'", base + torch.cat([torch.tensor([2.0]), torch.zeros(P - 1)]))):
        rng = np.random.default_rng(9)
        releases[name] = [(clipped, float_safe_noisy_sum(clipped, np.array([sigma]), rng).numpy()) for _ in range(3)]
    replay = np.random.default_rng(9)
    for t in range(3):
        replay.standard_normal(P)
        u = replay.random(P)
        for name in releases:
            clipped, y = releases[name][t]
            k = y / step - u  # fl(K + u) − u: K up to the rounding of K + u
            assert np.all(np.abs(k - np.rint(k)) <= 2.0**-52 * np.maximum(np.abs(y / step), 1.0))
            assert np.all(np.abs(y - clipped.numpy()) < 12 * sigma)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_chunked_float_safe_gaussian_is_lattice_release_bit_for_bit(dtype):
    """float_safe_gaussian (chunked) = normals, then lattice_release on the whole array, on one Generator."""
    from privaudit.mechanisms.gaussian import _CHUNK
    from privaudit.mechanisms.lattice import lattice_release

    g = np.random.default_rng(0)
    for shape in [(), (0,), (7,), (_CHUNK,), (_CHUNK + 1,), (3, _CHUNK // 2 + 5), (2, 3, 4)]:
        for scale, sigma in [(1e-4, 0.3), (10.0, 2.5), (1e4, 1e-3)]:
            x = (g.normal(size=shape) * scale).astype(dtype)
            rng, ref_rng = np.random.default_rng(7), np.random.default_rng(7)
            got = float_safe_gaussian(x, sigma, rng)
            ref = lattice_release(np.asarray(x, dtype=float), ref_rng.standard_normal(np.shape(x)), sigma,
                                  grid_step(sigma), ref_rng)
            assert _same_bits(got.reshape(-1), ref.reshape(-1)) and got.shape == ref.shape
            assert rng.random() == ref_rng.random()


def test_engine_noise_is_the_replayed_lattice_release():
    """Each noisy sum the engine exposes is float_safe_gaussian(clipped sum) on the engine's own noise Generator."""
    from privaudit.mechanisms.randomness import torch_generator, torch_seed

    g = torch.Generator().manual_seed(2)
    X, y = torch.randn(64, 5, generator=g, dtype=torch.float64), torch.randn(64, generator=g, dtype=torch.float64)
    seen = []
    eng = DPSGDEngine(epsilon=1.0, clip=1.0, epochs=3, lr=0.1, batch_size=16, noise_multiplier=1.5, optimizer="sgd",
                      callback=lambda s: seen.append((s._clipped_sum.clone(), s.noisy_sum.clone())), random_state=4)
    eng.train_linear(X, y[None], torch.zeros(1, 5, dtype=torch.float64))
    # The engine draws the noise seed from its torch Generator before any batch.
    replay = np.random.default_rng(torch_seed(torch_generator(4)))
    assert len(seen) == 12
    for clipped, noisy in seen:
        assert _same_bits(noisy.numpy(), float_safe_gaussian(clipped.numpy(), 1.5, replay))


def _autograd_clipped_sum(layers, X, y, clip, relu=None):
    """The autograd version mlp_clipped_grad_sum used before its backward pass was written out."""
    relu = _relu_flags(relu, len(layers))
    acts, pre = [], []
    h = X
    for i, (W, b) in enumerate(layers):
        acts.append(h)
        z = h @ W.detach().T if b is None else h @ W.detach().T + b.detach()
        z.requires_grad_(True)
        pre.append(z)
        h = torch.relu(z) if relu[i] else z
    deltas = torch.autograd.grad(((h[:, 0] - y) ** 2).sum(), pre)
    with torch.no_grad():
        sq = sum((d * d).sum(1) * ((a * a).sum(1) + (0.0 if b is None else 1.0))
                 for d, a, (_, b) in zip(deltas, acts, layers, strict=True))
        norms = sq.sqrt()
        scale = torch.ones_like(norms) if clip is None else torch.clamp(
            clip.to(norms.dtype)[0] / norms.clamp_min(1e-30), max=1.0)
        out = []
        for d, a, (_, b) in zip(deltas, acts, layers, strict=True):
            sd = d * scale[:, None]
            out.append(sd.T @ a.detach())
            if b is not None:
                out.append(sd.sum(0))
    return out, norms


def test_mlp_clipped_sum_is_the_autograd_one_bit_for_bit():
    g = torch.Generator().manual_seed(0)
    for trial in range(120):
        dtype = (torch.float32, torch.float64)[trial % 2]
        depth = 1 + trial % 4
        widths = [int(torch.randint(1, 40, (1,), generator=g)) for _ in range(depth)] + [1 if trial % 5 else 3]
        layers = [(torch.randn(k, j, generator=g, dtype=dtype) * 0.5,
                   None if trial % 3 == 0 else torch.randn(k, generator=g, dtype=dtype))
                  for j, k in zip(widths[:-1], widths[1:], strict=True)]
        n = int(torch.randint(1, 200, (1,), generator=g))
        X, y = torch.randn(n, widths[0], generator=g, dtype=dtype), torch.randn(n, generator=g, dtype=dtype)
        relu = None if trial % 2 else tuple(bool(int(torch.randint(0, 2, (1,), generator=g))) for _ in range(depth))
        clip = None if trial % 7 == 0 else torch.tensor([float(torch.rand(1, generator=g)) * 3 + 0.01],
                                                          dtype=torch.float64)
        got, norms = mlp_clipped_grad_sum(layers, X, y, clip, relu)
        ref, ref_norms = _autograd_clipped_sum(layers, X, y, clip, relu)
        assert _same_bits(norms.numpy(), ref_norms.numpy()) and len(got) == len(ref)
        assert all(_same_bits(a.numpy(), b.numpy()) for a, b in zip(got, ref, strict=True))


def test_adam_step_is_the_out_of_place_formula_bit_for_bit():
    g = torch.Generator().manual_seed(1)
    for dtype, lr_dtype, shape in [(torch.float32, torch.float32, (300,)), (torch.float64, torch.float32, (4, 50)),
                                   (torch.float32, torch.float64, (4, 50)), (torch.float64, torch.float64, (500,))]:
        lr = torch.rand(shape[0] if len(shape) == 2 else 1, generator=g, dtype=lr_dtype) * 0.1
        lr = lr if len(shape) == 2 else lr[0]
        opt, (m, v) = _Optimizer("adam", lr), (torch.zeros(shape, dtype=dtype), torch.zeros(shape, dtype=dtype))
        theta = ref = torch.randn(shape, generator=g, dtype=dtype)
        for t in range(1, 13):
            grad = torch.randn(shape, generator=g, dtype=dtype) * 10.0 ** float(torch.randint(-8, 2, (1,), generator=g))
            previous, before = theta, theta.clone()
            theta = opt.step(previous, grad)
            assert _same_bits(previous.numpy(), before.numpy())  # the step returns a new tensor
            m.mul_(0.9).add_(grad, alpha=1 - 0.9)  # not 0.1: the optimiser uses 1 − β₁ as computed
            v.mul_(0.999).addcmul_(grad, grad, value=1 - 0.999)
            lr_b = lr.reshape(-1, 1) if lr.ndim else lr
            ref = ref - lr_b * (m / (1 - 0.9**t)) / ((v / (1 - 0.999**t)).sqrt() + 1e-8)
            assert _same_bits(theta.numpy(), ref.numpy())
