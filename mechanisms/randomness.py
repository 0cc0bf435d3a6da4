"""One randomness policy for every public entry point of privaudit.

Every audit, learner and attacker accepts ``rng`` (or, for scikit-learn style
estimators, ``random_state``) as an ``int``, a :class:`numpy.random.Generator`, a
:class:`numpy.random.SeedSequence` or ``None``, and resolves it with
:func:`resolve_seed`, which returns a root :class:`~numpy.random.SeedSequence`
together with the integer seed that reproduces it:

* ``int`` s: the root is ``SeedSequence(s)`` and the recorded seed is ``s``;
* ``None``: a fresh seed is drawn from OS entropy and recorded;
* a ``Generator`` or a ``SeedSequence``: a seed is drawn *from it* and recorded.

In every case ``resolve_seed(seed)`` returns a root equal to the original one, so
a report that records ``seed`` is reproduced by passing that integer back.
Independent child streams are derived with :meth:`SeedSequence.spawn`
(:func:`spawn_generators`), never by adding offsets to seeds.

Seeds are non-negative integers below :data:`SEED_BOUND` = 2⁶³, so that they fit
in a signed 64-bit integer (TOML, JSON readers, numpy ``int64``).
"""

from __future__ import annotations

import numpy as np

from .validation import InvalidParameterError, ParameterTypeError

#: Exclusive upper bound of every seed privaudit draws (fits in a signed int64).
SEED_BOUND = 2**63

#: What the ``rng`` / ``random_state`` arguments accept.
RandomLike = int | np.integer | np.random.Generator | np.random.SeedSequence | None


def draw_seed(rng: RandomLike = None, name: str = "rng") -> int:
    """An integer seed in [0, 2⁶³) drawn from ``rng`` (OS entropy for ``None``).

    An ``int`` is returned unchanged (after validation): drawing from an integer
    seed would hide it. Use this to pass an integer ``random_state`` on to a
    library that takes only integers (scikit-learn, torch).
    """
    if isinstance(rng, bool):
        raise ParameterTypeError(f"{name} must be an int, a numpy Generator, a SeedSequence or None, got {name}={rng!r}")
    if isinstance(rng, int | np.integer):
        seed = int(rng)
        if not 0 <= seed < SEED_BOUND:
            raise InvalidParameterError(f"{name} must be an integer in [0, 2**63), got {name}={rng!r}")
        return seed
    if rng is None:
        rng = np.random.SeedSequence()
    if isinstance(rng, np.random.SeedSequence):
        # 64 random bits shifted right by one so the seed fits in a signed int64.
        return int(rng.generate_state(1, np.uint64)[0] >> np.uint64(1))
    if isinstance(rng, np.random.Generator):
        return int(rng.integers(0, SEED_BOUND))
    raise ParameterTypeError(
        f"{name} must be an int, a numpy Generator, a SeedSequence or None, got {name}={rng!r} ({type(rng).__name__})"
    )


def resolve_seed(rng: RandomLike = None, name: str = "rng") -> tuple[np.random.SeedSequence, int]:
    """The root SeedSequence of a run and the integer seed that reproduces it.

    Parameters
    ----------
    rng : int, Generator, SeedSequence or None
        The caller's randomness. A Generator or SeedSequence is *consumed*: one
        seed is drawn from it, so two calls with the same generator give
        independent runs, while the same integer always gives the same run.
    name : str
        Parameter name used in error messages (``"rng"`` or ``"random_state"``).

    Returns
    -------
    root : numpy.random.SeedSequence
        ``SeedSequence(seed)``; derive child streams with ``root.spawn(k)``.
    seed : int
        Integer in [0, 2⁶³) to record in results; ``resolve_seed(seed)`` gives an equal root.
    """
    seed = draw_seed(rng, name)
    return np.random.SeedSequence(seed), seed


def spawn_generators(root: np.random.SeedSequence, k: int) -> list[np.random.Generator]:
    """``k`` independent generators, children ``0..k-1`` of ``root`` (by :meth:`SeedSequence.spawn`).

    Note that ``spawn`` advances ``root``'s child counter: a second call gives new children.
    """
    return [np.random.default_rng(child) for child in root.spawn(k)]


__all__ = ["SEED_BOUND", "RandomLike", "draw_seed", "resolve_seed", "spawn_generators"]
