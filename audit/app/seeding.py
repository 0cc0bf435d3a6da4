"""Integer seeds handed from a task's generator to APIs that take an ``int`` (``random_state``, ``seed``).

The draw is ``rng.integers(2**31 - 1)``, as it always was here: changing it to
:func:`privaudit.mechanisms.randomness.draw_seed` (64-bit) would change every
preset's numbers at the same seed. Everything else derives streams with
:meth:`numpy.random.SeedSequence.spawn` (see :class:`privaudit.audit.app.tasks.Task`).
"""

from __future__ import annotations

import numpy as np


def int_seed(rng: np.random.Generator) -> int:
    """An integer seed in [0, 2³¹ − 1) drawn from ``rng`` (one draw)."""
    return int(rng.integers(2**31 - 1))


__all__ = ["int_seed"]
