"""The compiled float-safe Gaussian release is numpy's, bit for bit (mechanisms/lattice_kernel.py).

The reference is numpy's own path written out independently: every normal from
``Generator.standard_normal``, then every offset from ``Generator.random``, then
:func:`round_onto_lattice`. Equality of the outputs *and* of the generator states after
the call means the kernel draws the same words in the same order, so the float analysis
of :mod:`privaudit.mechanisms.lattice` (about numpy's ziggurat) covers it unchanged.
"""

from __future__ import annotations

import numpy as np
import pytest

from privaudit.mechanisms.gaussian import float_safe_gaussian
from privaudit.mechanisms.lattice import grid_step, round_onto_lattice, split_input
from privaudit.mechanisms.lattice_kernel import KERNEL_MIN_SIZE, compiled_release

pytest.importorskip("numba")


def numpy_release(values: np.ndarray, sigma: float, rng: np.random.Generator) -> np.ndarray:
    step = grid_step(sigma)
    noise = rng.standard_normal(values.shape)
    u = rng.random(values.shape)
    k0, f = split_input(np.asarray(values, dtype=float), step)
    return round_onto_lattice(noise, k0, f, u, sigma, step).copy()


def states_equal(a: np.random.Generator, b: np.random.Generator) -> bool:
    return a.bit_generator.state == b.bit_generator.state


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("size", [KERNEL_MIN_SIZE, 117_505])
def test_kernel_matches_numpy_bit_for_bit(seed, size):
    values = np.random.default_rng(100 + seed).normal(0, 3, size)
    sigma = [0.37, 1.0, 2.5, 7.3, 0.011, 40.0][seed]
    mine, ref = np.random.default_rng(seed), np.random.default_rng(seed)
    out = float_safe_gaussian(values, sigma, mine, compiled=True)
    assert np.array_equal(out, numpy_release(values, sigma, ref))
    assert states_equal(mine, ref)
    assert mine.random() == ref.random()  # and the stream goes on identically


def test_kernel_matches_numpy_in_the_ziggurat_tail_and_wedges():
    """2·10⁶ normals: the tail (|N| > 3.654, the idx = 0 branch) and wedge branches run many times."""
    values = np.zeros(2_000_000)
    mine, ref = np.random.default_rng(7), np.random.default_rng(7)
    out = float_safe_gaussian(values, 1.0, mine, compiled=True)
    expected = numpy_release(values, 1.0, ref)
    assert np.array_equal(out, expected)
    assert states_equal(mine, ref)
    # P(|N| > 3.6542) ≈ 2.6e-4: ≈ 520 tail draws expected; far more than 100 with overwhelming probability.
    assert np.count_nonzero(np.abs(out) > 3.6542) > 100


def test_float32_two_dimensional_and_strided_inputs():
    base = np.random.default_rng(3).normal(0, 1, (4, 2 * KERNEL_MIN_SIZE // 4 + 2))
    for values in (base.astype(np.float32), base[:, ::2], base):
        mine, ref = np.random.default_rng(11), np.random.default_rng(11)
        out = float_safe_gaussian(values, 0.5, mine, compiled=True)
        assert out.shape == values.shape and out.dtype == np.float64
        assert np.array_equal(out, numpy_release(values.astype(float), 0.5, ref))
        assert states_equal(mine, ref)


def test_nan_stays_nan_as_in_numpy():
    values = np.zeros(KERNEL_MIN_SIZE)
    values[[5, 77]] = np.nan
    mine, ref = np.random.default_rng(2), np.random.default_rng(2)
    out = float_safe_gaussian(values, 1.0, mine, compiled=True)
    assert np.array_equal(out, numpy_release(values, 1.0, ref), equal_nan=True)
    assert np.isnan(out[[5, 77]]).all() and np.isfinite(np.delete(out, [5, 77])).all()


def test_kernel_declines_small_releases_and_other_bit_generators():
    rng = np.random.default_rng(0)
    assert compiled_release(np.zeros(KERNEL_MIN_SIZE - 1), 1.0, grid_step(1.0), rng) is None
    sfc = np.random.Generator(np.random.SFC64(0))
    assert compiled_release(np.zeros(KERNEL_MIN_SIZE), 1.0, grid_step(1.0), sfc) is None
    # ... and float_safe_gaussian then takes numpy's path, which is the reference itself.
    a, b = np.random.Generator(np.random.SFC64(4)), np.random.Generator(np.random.SFC64(4))
    values = np.linspace(-5, 5, KERNEL_MIN_SIZE)
    assert np.array_equal(float_safe_gaussian(values, 0.8, a, compiled=True), numpy_release(values, 0.8, b))
