"""A compiled float-safe Gaussian lattice release, bit for bit numpy's, in one pass per draw kind.

:func:`~privaudit.mechanisms.gaussian.float_safe_gaussian` draws every normal with numpy's
``Generator.standard_normal``, then every offset u with ``Generator.random``, then runs the
lattice arithmetic of :func:`~privaudit.mechanisms.lattice.round_onto_lattice` as ten
array passes. On a DP-SGD gradient (10⁵ parameters) the draws go through a function
pointer per 64-bit word and the passes through memory: ≈ 3 ms per step, more than the
clipped gradient sum itself. This module does the same thing compiled (numba), with the
PCG64 generator inlined: the same words (PCG64, XSL-RR output, O'Neill 2014, as numpy
implements it), the same ziggurat (Marsaglia & Tsang 2000, 256 layers, numpy's tables and
its tail and wedge code), the same offsets u = (w >> 11)·2⁻⁵³ and the same roundings in the
same order. Its output and the generator's state afterwards are therefore *identical* to
numpy's path (tested over many seeds and sizes, tails and wedges included): no stream,
report or float-error bound changes, so the float analysis of
:mod:`privaudit.mechanisms.lattice` applies unchanged.

Callers opt in (``float_safe_gaussian(..., compiled=True)``: DP-SGD's per-step noise), since
compiling costs a few seconds once per process and pays off only over repeated releases.
It then applies when numba imports, the generator's bit generator is a PCG64 (numpy's
default) and the release has at least :data:`KERNEL_MIN_SIZE` elements; everything else
takes numpy's path. The compiled code keeps no state of its own: the generator's state is
read before and written back after each call, and nothing is cached on disk (a numba cache
file would be code loaded from the file system).
"""

from __future__ import annotations

import functools

import numpy as np

#: Smallest release (elements) sent to the compiled kernel; below it numpy's path is as fast.
KERNEL_MIN_SIZE = 1 << 15

_MASK64 = (1 << 64) - 1


@functools.cache
def _kernel():
    """Compile the kernel on first use (None when numba is not importable)."""
    try:
        from numba import njit, uint64
        from numba.extending import intrinsic
        from numba.np.random._constants import fi_double, ki_double, wi_double, ziggurat_nor_inv_r, ziggurat_nor_r
        from llvmlite import ir
    except ImportError:  # pragma: no cover - numba is a dependency; numpy's path stays correct without it
        return None

    mult_hi = np.uint64(2549297995355413924)  # PCG's default 128-bit multiplier, high and low words
    mult_lo = np.uint64(4865540595714422341)
    one, b8, b11, b58, b63, b64 = (np.uint64(v) for v in (1, 8, 11, 58, 63, 64))
    byte, mant52 = np.uint64(0xFF), np.uint64(0x000FFFFFFFFFFFFF)

    @intrinsic
    def mulhi(typingctx, a, b):
        # The high word of a 64×64 → 128-bit product: one multiplication where the four
        # 32-bit partial products numba would otherwise emit cost a third of each word.
        def codegen(context, builder, signature, args):
            wide = ir.IntType(128)
            prod = builder.mul(builder.zext(args[0], wide), builder.zext(args[1], wide))
            return builder.trunc(builder.lshr(prod, ir.Constant(wide, 64)), ir.IntType(64))
        return uint64(uint64, uint64), codegen

    @njit(inline="always")
    def pcg64(hi, lo, inc_hi, inc_lo):
        # state ← state·mult + inc (mod 2¹²⁸), then XSL-RR of the new state: numpy's pcg64_next64.
        new_lo = lo * mult_lo
        new_hi = mulhi(lo, mult_lo) + lo * mult_hi + hi * mult_lo
        lo2 = new_lo + inc_lo
        hi2 = new_hi + inc_hi + (one if lo2 < new_lo else np.uint64(0))
        x = hi2 ^ lo2
        rot = hi2 >> b58
        return hi2, lo2, (x >> rot) | (x << ((b64 - rot) & b63))

    @njit(inline="always")
    def unit(word):
        # numpy's next_double: the top 53 bits over 2⁵³ (exact through int64: < 2⁵³).
        return np.float64(np.int64(word >> b11)) * (1.0 / 9007199254740992.0)

    @njit(inline="always")
    def normal(hi, lo, inc_hi, inc_lo):
        # numpy's random_standard_normal (distributions.c), word for word.
        while True:
            hi, lo, r = pcg64(hi, lo, inc_hi, inc_lo)
            idx = np.intp(r & byte)
            r >>= b8
            rabs = (r >> one) & mant52
            # The sign as a product by ±1 (exact) rather than a branch taken half the time at random.
            x = np.float64(np.int64(rabs)) * wi_double[idx] * (1.0 - 2.0 * np.float64(np.int64(r & one)))
            if rabs < ki_double[idx]:
                return hi, lo, x
            if idx == 0:
                while True:
                    hi, lo, w = pcg64(hi, lo, inc_hi, inc_lo)
                    xx = -ziggurat_nor_inv_r * np.log1p(-unit(w))
                    hi, lo, w = pcg64(hi, lo, inc_hi, inc_lo)
                    yy = -np.log1p(-unit(w))
                    if yy + yy > xx * xx:
                        if (rabs >> b8) & one:
                            return hi, lo, -(ziggurat_nor_r + xx)
                        return hi, lo, ziggurat_nor_r + xx
            else:
                hi, lo, w = pcg64(hi, lo, inc_hi, inc_lo)
                if (fi_double[idx - 1] - fi_double[idx]) * unit(w) + fi_double[idx] < np.exp(-0.5 * x * x):
                    return hi, lo, x

    @njit(nogil=True)
    def release(values, sigma, step, state, out):
        hi, lo, inc_hi, inc_lo = state[0], state[1], state[2], state[3]
        for i in range(values.size):  # every normal first, as Generator.standard_normal(shape) draws them
            hi, lo, out[i] = normal(hi, lo, inc_hi, inc_lo)
        ratio = sigma / step
        for i in range(values.size):
            # round_onto_lattice's operations, one rounding each and in its order.
            v = values[i] / step  # exact: γ is a power of two
            k0 = np.rint(v)
            f = v - k0
            hi, lo, w = pcg64(hi, lo, inc_hi, inc_lo)
            u = unit(w)
            t = out[i] * ratio
            t += f
            t -= u
            t = np.rint(t)
            t += k0
            t += u
            out[i] = t * step
        state[0], state[1] = hi, lo

    return release


def compiled_release(values: np.ndarray, sigma: float, step: float, rng: np.random.Generator) -> np.ndarray | None:
    """numpy's float-safe Gaussian lattice release of ``values``, compiled; None when it does not apply.

    Returns None (the caller takes numpy's path) when ``values`` is smaller than
    :data:`KERNEL_MIN_SIZE`, the generator is not PCG64-based, or numba is unavailable.
    Otherwise returns exactly what numpy's path returns, and leaves ``rng`` in the state
    numpy's path leaves it in.

    Parameters
    ----------
    values : ndarray of float64 or float32
        Values to noise (any shape), already checked against the lattice's range.
    sigma : float
        Noise std σ > 0.
    step : float
        Lattice step γ = grid_step(σ), a power of two.
    rng : Generator
        Source of the normals and offsets; advanced as numpy's path would advance it.

    Returns
    -------
    ndarray of float64 or None
        Shaped like ``values``.
    """
    if values.size < KERNEL_MIN_SIZE or type(rng.bit_generator) is not np.random.PCG64:
        return None
    release = _kernel()
    if release is None:
        return None
    full = rng.bit_generator.state
    s, inc = full["state"]["state"], full["state"]["inc"]
    state = np.array([s >> 64, s & _MASK64, inc >> 64, inc & _MASK64], dtype=np.uint64)
    out = np.empty(values.shape)
    release(np.ascontiguousarray(values).reshape(-1), float(sigma), float(step), state, out.reshape(-1))
    full["state"]["state"] = (int(state[0]) << 64) | int(state[1])
    rng.bit_generator.state = full
    return out
