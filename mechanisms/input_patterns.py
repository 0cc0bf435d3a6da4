"""The StatDP / DP-Sniper input patterns, as neighbouring pairs of a claim's neighbourhood inside a domain.

StatDP (Ding et al. 2018) and DP-Sniper (Bichsel et al. 2021) screen a fixed set of
query-answer patterns, because the bugs of the classic algorithms (sparse vector,
noisy max, histograms) sit where many answers move at once, in chosen directions:

=============================  ===================================================
``"one up"`` / ``"one down"``  the first answer moves by +1 / −1
``"one up, rest down"``        the first +1, every other −1 (and the reverse)
``"half up, half down"``       the first ⌈d/2⌉ +1, the rest −1
``"all up"`` / ``"all down"``  every answer +1 / −1
``"alternating"``              +1, −1, +1, …
=============================  ===================================================

:func:`input_patterns` turns each pattern into a true neighbour of a point x for
the claim's neighbourhood: the pattern is a *direction*, scaled to one step of
the neighbourhood (``linf<=1``: every moved answer by exactly ±1; ``l1<=r``: the
direction scaled to ℓ1 norm r; an integer lattice: the integer move along it;
``keys(k=K,c=C)``: the K first moved keys by ±C; a histogram: one count) and
clamped into the domain. For datasets the analogues are: add a record at each
bound, at the centre, at the mean, an outlier; remove the lowest, the highest, the
record nearest the mean, the outlying one; replace them by those records; for
labels, set a label to its bounds. For ``"any"`` (local DP) the pattern points to
the farthest point of the domain in that direction, or to every other category.

Each returned :class:`~privaudit.mechanisms.neighbourhoods.CandidatePair` is a true
neighbour inside the domain (checked before it is returned), labelled by its
origin; patterns that coincide (e.g. in one dimension) are merged, their origins
joined by " / ". These are the candidates a search screens.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .domains import Box, Categorical, Domain
from .neighbourhoods import (
    AnyPair,
    CandidatePair,
    Neighbourhood,
    _DatasetNeighbourhood,
    _VectorNeighbourhood,
    parse_neighbourhood,
)
from .validation import InvalidParameterError, ParameterTypeError, check_int


def sign_patterns(d: int) -> list[tuple[str, np.ndarray]]:
    """The StatDP/DP-Sniper sign patterns of d answers, as (name, vector in {−1, 0, 1}^d).

    Parameters
    ----------
    d : int
        Number of answers (≥ 1).

    Returns
    -------
    list of (str, ndarray of shape (d,))
        Named patterns; the mixed ones only where d allows them.
    """
    d = check_int("d", d)
    idx = np.arange(d)
    one = (idx == 0).astype(float)
    half = np.where(idx < (d + 1) // 2, 1.0, -1.0)
    pats = [("one up", one), ("one down", -one)]
    if d >= 2:
        pats += [("one up, rest down", np.where(idx == 0, 1.0, -1.0)),
                 ("one down, rest up", np.where(idx == 0, -1.0, 1.0)),
                 ("half up, half down", half)]
    pats += [("all up", np.ones(d)), ("all down", -np.ones(d))]
    if d >= 3:
        pats.append(("alternating", np.where(idx % 2 == 0, 1.0, -1.0)))
    return pats


def input_patterns(neighbourhood: str | Neighbourhood, domain: Domain | None, x: Any) -> list[CandidatePair]:
    """The labelled pattern pairs (x, x′) of a neighbourhood inside a domain (see the module docstring).

    Parameters
    ----------
    neighbourhood : str or Neighbourhood
        The claim's neighbourhood (``claim.neighbourhood``) or its shorthand.
    domain : Domain or None
        A :class:`~privaudit.mechanisms.domains.Box` for vector neighbourhoods (None:
        unbounded reals), a :class:`~privaudit.mechanisms.domains.DatasetDomain` for
        dataset neighbourhoods, a Box or a :class:`~privaudit.mechanisms.domains.Categorical`
        for ``"any"``.
    x : array-like or category
        The base point, inside ``domain``.

    Returns
    -------
    list of CandidatePair
        Every x′ is a neighbour of x and a point of the domain, x′ ≠ x.
    """
    nb = parse_neighbourhood(neighbourhood)
    if isinstance(nb, _VectorNeighbourhood):
        d = int(np.size(np.asarray(x, dtype=float)))
        return nb.propose(x, sign_patterns(d), domain)
    if isinstance(nb, _DatasetNeighbourhood):
        return nb.neighbours(x, domain, n_random=0)  # the deterministic proposals are the dataset analogues
    if isinstance(nb, AnyPair):
        return _any_patterns(nb, domain, x)
    raise ParameterTypeError(f"no input patterns for neighbourhood {nb!r}")


def _any_patterns(nb: AnyPair, domain: Domain | None, x: Any) -> list[CandidatePair]:
    """Local DP: the farthest point of a box along each pattern; every other category of a categorical domain."""
    if isinstance(domain, Categorical):
        i = domain.index(x)
        return [CandidatePair(x, c, f"category {c!r}") for j, c in enumerate(domain.categories) if j != i]
    if not isinstance(domain, Box):
        raise InvalidParameterError(f"'any' patterns need a Box or a Categorical domain, got domain={domain!r}")
    domain.check("x", x)
    a = np.asarray(x, dtype=float)
    lo, hi = domain.lower.ravel(), domain.upper.ravel()
    out: dict[bytes, CandidatePair] = {}
    for name, u in sign_patterns(a.size):
        xp = np.where(u > 0, hi, np.where(u < 0, lo, a.ravel())).reshape(a.shape)
        if np.array_equal(xp, a):
            continue
        key = xp.tobytes()
        out[key] = CandidatePair(a, xp, f"{out[key].origin} / {name}" if key in out else name)
    return list(out.values())


__all__ = ["input_patterns", "sign_patterns"]
