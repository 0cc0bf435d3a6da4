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

Every other derivation of a seed or a generator lives here too, so that there is one
place to read how a number was drawn:

* keyed streams, determined by (root, key) and not by the order of draws:
  :func:`keyed_seed_sequence`, :func:`keyed_rng`, and :func:`uint32_seed` for an API that
  takes a 32-bit integer;
* named streams, determined by (root seed, name), e.g. one per check of a catalogue or one
  per pytest node: :func:`named_seed_sequence` (the name enters the SeedSequence's entropy
  through a stable hash);
* integer seeds drawn from a running generator for libraries that take only integers
  (scikit-learn's ``random_state``): :func:`int_seed`, :func:`int_seeds`;
* torch: :func:`torch_generator` and :func:`torch_seed` (torch is imported only when they are
  called, so importing this module stays cheap).

The integer draws keep the bounds they always had (``2**31 - 1`` in :func:`int_seed`,
``2**31`` in :func:`int_seeds`, ``2**62`` in :func:`torch_seed`): a new bound would change
every number drawn downstream at the same seed.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

import numpy as np

from .validation import InvalidParameterError, ParameterTypeError

if TYPE_CHECKING:
    import torch

#: Exclusive upper bound of every seed privaudit draws (fits in a signed int64).
SEED_BOUND = 2**63

#: What the ``rng`` / ``random_state`` arguments accept.
RandomLike = int | np.integer | np.random.Generator | np.random.SeedSequence | None


def draw_seed(rng: RandomLike = None, name: str = "rng") -> int:
    """An integer seed in [0, 2⁶³) drawn from ``rng`` (OS entropy for ``None``).

    An ``int`` is returned unchanged (after validation): drawing from an integer
    seed would hide it. Use this to pass an integer ``random_state`` on to a
    library that takes only integers (scikit-learn, torch).

    Parameters
    ----------
    rng : int, Generator, SeedSequence or None
        Where the seed comes from (None: OS entropy).
    name : str
        Parameter name used in error messages.

    Returns
    -------
    int
        A seed in [0, 2⁶³).

    Raises
    ------
    ParameterTypeError
        For a bool or an unsupported type.
    InvalidParameterError
        For an integer outside [0, 2⁶³).
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

    Parameters
    ----------
    root : SeedSequence
        The parent sequence (its child counter advances).
    k : int
        Number of generators.

    Returns
    -------
    list of Generator
    """
    return [np.random.default_rng(child) for child in root.spawn(k)]


def keyed_seed_sequence(root: np.random.SeedSequence, *key: int) -> np.random.SeedSequence:
    """The child of ``root`` at ``key``, built directly rather than by spawning in order.

    ``SeedSequence(root.entropy, spawn_key=root.spawn_key + key)``: for a root without a
    spawn key this is ``root.spawn(k)[key[0]]`` for any ``k > key[0]`` (and recursively for
    longer keys), so the stream of (t, b) does not depend on how many others were drawn
    before it, e.g. on ``chunk_size``.

    Parameters
    ----------
    root : numpy.random.SeedSequence
        The stream this one derives from (its own spawn key is kept).
    *key : int
        Non-negative integers naming the child (e.g. round and block).

    Returns
    -------
    numpy.random.SeedSequence
    """
    if not isinstance(root, np.random.SeedSequence):
        raise ParameterTypeError(f"root must be a numpy SeedSequence, got root={root!r} ({type(root).__name__})")
    words = []
    for k in key:
        if isinstance(k, bool) or not isinstance(k, int | np.integer):
            raise ParameterTypeError(f"key entries must be integers, got {k!r} ({type(k).__name__}) in key={key!r}")
        if k < 0:
            raise InvalidParameterError(f"key entries must be non-negative, got {k!r} in key={key!r}")
        words.append(int(k))
    return np.random.SeedSequence(root.entropy, spawn_key=tuple(root.spawn_key) + tuple(words))


def keyed_rng(root: np.random.SeedSequence, *key: int) -> np.random.Generator:
    """A generator determined by (``root``, ``key``) only: ``default_rng(keyed_seed_sequence(root, *key))``.

    Parameters
    ----------
    root : numpy.random.SeedSequence
        The stream this one derives from.
    *key : int
        Non-negative integers naming the child.

    Returns
    -------
    numpy.random.Generator
    """
    return np.random.default_rng(keyed_seed_sequence(root, *key))


def uint32_seed(seq: np.random.SeedSequence) -> int:
    """The first 32-bit word of ``seq``'s state, as an ``int`` in [0, 2³²).

    For an API whose integer seed must fit in 32 bits (scikit-learn's ``random_state``
    goes to a legacy ``RandomState``); distinct SeedSequences give independent words.

    Parameters
    ----------
    seq : numpy.random.SeedSequence

    Returns
    -------
    int
    """
    if not isinstance(seq, np.random.SeedSequence):
        raise ParameterTypeError(f"seq must be a numpy SeedSequence, got seq={seq!r} ({type(seq).__name__})")
    return int(seq.generate_state(1)[0])


def name_entropy(name: str) -> int:
    """A stable 64-bit integer of ``name``: the first 8 bytes of its SHA-256, little-endian.

    Unlike ``hash()`` it does not change between processes. Among ~77,000 names a 32-bit
    hash such as CRC-32 has a 50 % chance of some collision (two names, one stream); 64 bits
    reach that chance only at ~5·10⁹ names.

    Parameters
    ----------
    name : str

    Returns
    -------
    int
        In [0, 2⁶⁴).
    """
    if not isinstance(name, str):
        raise ParameterTypeError(f"name must be a str, got name={name!r} ({type(name).__name__})")
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "little")


def named_seed_sequence(seed: int, name: str) -> np.random.SeedSequence:
    """The stream called ``name`` under the root ``seed``: ``SeedSequence([seed, name_entropy(name)])``.

    Both enter the SeedSequence's entropy, so the stream depends on the name and the seed
    only, not on the order in which named streams are made (checks run in any order, one
    test node among many).

    Parameters
    ----------
    seed : int
        The root seed, in [0, 2⁶³).
    name : str
        The stream's name (a check's name, a pytest node id).

    Returns
    -------
    numpy.random.SeedSequence
    """
    return np.random.SeedSequence([_check_int_seed(seed), name_entropy(name)])


def _check_int_seed(seed: int) -> int:
    """``seed`` validated as an integer seed (a Generator here would hide the root)."""
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
        raise ParameterTypeError(f"seed must be an integer, got seed={seed!r} ({type(seed).__name__})")
    return draw_seed(seed, "seed")


def int_seed(rng: np.random.Generator) -> int:
    """One integer seed in [0, 2³¹ − 1) drawn from ``rng``: ``rng.integers(2**31 - 1)``.

    For libraries that take only integers (scikit-learn's ``random_state``, a learner's
    seed in a task). The bound is the one this draw always had; :func:`draw_seed` (64 bits)
    would give other numbers at the same seed.

    Parameters
    ----------
    rng : numpy.random.Generator
        Consumed by one draw.

    Returns
    -------
    int
    """
    return int(_check_generator(rng).integers(2**31 - 1))


def int_seeds(rng: np.random.Generator, size: int) -> np.ndarray:
    """``size`` integer seeds in [0, 2³¹) drawn from ``rng``: ``rng.integers(0, 2**31, size=size)``.

    One per repetition of an experiment whose learners take integer seeds.

    Parameters
    ----------
    rng : numpy.random.Generator
        Consumed by one vector draw.
    size : int
        Number of seeds.

    Returns
    -------
    numpy.ndarray
        ``int64`` array of shape ``(size,)``.
    """
    return _check_generator(rng).integers(0, 2**31, size=size)


def _check_generator(rng: np.random.Generator) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise ParameterTypeError(f"rng must be a numpy Generator, got rng={rng!r} ({type(rng).__name__})")
    return rng


def torch_generator(random_state: RandomLike | torch.Generator, name: str = "random_state") -> torch.Generator:
    """A CPU :class:`torch.Generator` seeded from ``random_state``.

    The seed is :func:`draw_seed`'s: an int is used as is, a numpy Generator or SeedSequence
    gives one draw, ``None`` fresh OS entropy; the generator records it (``initial_seed()``).
    A torch Generator is returned as given.

    Parameters
    ----------
    random_state : int, numpy Generator, SeedSequence, torch.Generator or None
    name : str
        Parameter name used in error messages.

    Returns
    -------
    torch.Generator
    """
    import torch

    if isinstance(random_state, torch.Generator):
        return random_state
    return torch.Generator().manual_seed(draw_seed(random_state, name))


def torch_seed(gen: torch.Generator) -> int:
    """One integer seed in [0, 2⁶²) drawn from the torch generator ``gen``.

    Seeds a second stream (a numpy Generator of noise, a data generator) from a torch
    generator; drawing it, rather than reusing ``gen.initial_seed()``, keeps two uses of
    one generator independent.

    Parameters
    ----------
    gen : torch.Generator
        Consumed by one draw.

    Returns
    -------
    int
    """
    import torch

    if not isinstance(gen, torch.Generator):
        raise ParameterTypeError(f"gen must be a torch.Generator, got gen={gen!r} ({type(gen).__name__})")
    return int(torch.randint(0, 2**62, (1,), generator=gen, dtype=torch.int64))


__all__ = [
    "SEED_BOUND", "RandomLike", "draw_seed", "int_seed", "int_seeds", "keyed_rng", "keyed_seed_sequence",
    "name_entropy", "named_seed_sequence", "resolve_seed", "spawn_generators", "torch_generator", "torch_seed",
    "uint32_seed",
]
