"""Hypothesis-test trade-off audits against f_{ε,δ}.

:func:`audit_tradeoff` draws ``n`` releases of a mechanism under each of two
neighbouring inputs x (null) and x′ (alternative), scores them with a
distinguisher, and returns a :class:`TradeoffAudit`: the empirical trade-off
curve with a simultaneous (DKW) band, a lower confidence bound ε̲ on the ε of
the mechanism at the claimed δ, and the theory curves to plot against it.

Splits. The releases of each hypothesis are cut into contiguous, independent
blocks: *train* (only for attackers that must be fitted), *select* (choice of
the attacker of a suite and of its threshold) and *eval* (the bound and the
curve). The bound is therefore valid at the stated confidence whatever the
selection did (DESIGN.md, "Standards for audits").

Theory curves. :func:`pld_tradeoff` turns any dp_accounting privacy loss
distribution into a trade-off curve through its *whole* privacy profile δ(ε):
T ≥ sup_ε f_{ε,δ(ε)} (Dong, Roth & Su 2019, Prop. 2.12), evaluated on a fine ε
grid with :func:`privaudit.mechanisms.tradeoff.tradeoff_from_profile`.
:func:`composed_tradeoff` does so for T (Poisson-subsampled) Gaussian steps,
e.g. DP-SGD or T rounds of a Gaussian release; for T full Gaussian rounds it
reproduces G_{μ√T}.

Pipeline. :func:`audit_tradeoff` runs named stages, each a function that can be tested
alone: :func:`plan_splits` (split), :func:`draw_releases` (draw), :func:`fit_attackers`
(fit), :func:`select_attackers` (select: rank a suite on the selection block),
:func:`certify` (Bonferroni certification on held-out releases), :func:`trace_curves`
(curve and band) and :func:`judge` (verdict). The statistics live in
:mod:`privaudit.audit.stats.epsilon_bounds` and :mod:`privaudit.audit.stats.power`; the
search for the worst pair in :mod:`privaudit.audit.engines.pair_search`.

Streaming. Above a memory threshold (or with ``chunk_size``) the *certify* stage is
:func:`certify_streamed`: the train and selection blocks are drawn in memory as before (capped),
the evaluation block in keyed blocks that are scored and counted at thresholds fixed on the
selection split, then dropped (:mod:`privaudit.audit.engines.streaming`; ``docs/streaming.md``).
The bound is read from the counts by the function the in-memory path uses
(:func:`~privaudit.audit.stats.epsilon_bounds.bound_from_counts`), so equal counts give equal
numbers; below the threshold nothing changes, so the committed reports keep their numbers.

Capabilities. The engine reads what a mechanism declares through the protocols of
:mod:`privaudit.mechanisms.protocol` (``HasDensity``, ``HasExactTradeoff``,
``HasExactEpsilon``, ``HasLaplaceScale``) and what an attacker declares through
:func:`privaudit.attacks.protocol.distinguisher_traits`, never through its class.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike

from privaudit.attacks.distinguishers import GENERIC_SUITE, attacker_name, make_attacker
from privaudit.attacks.protocol import LEAK_FAMILIES, distinguisher_traits, leak_family
from privaudit.mechanisms.adjacency import adjacent_claim
from privaudit.mechanisms.claim import ClaimTypeError, PrivacyClaim, claim_of
# The theory curves of compositions describe mechanisms (release views use them), so they are defined
# there; privaudit.audit re-exports composed_tradeoff and pld_tradeoff from here.
from privaudit.mechanisms.accounting import composed_tradeoff
from privaudit.mechanisms.tradeoff import pld_tradeoff, tradeoff_curve
from privaudit.mechanisms.domains import DatasetDomain, domain_of, short_repr
from privaudit.mechanisms.protocol import HasDensity, HasExactEpsilon, HasExactTradeoff, HasLaplaceScale
from privaudit.mechanisms.randomness import RandomLike, resolve_seed
from privaudit.mechanisms.validation import (
    InvalidInputError,
    InvalidParameterError,
    check_delta,
    check_int,
    check_size,
    check_interval,
)

from privaudit.audit.engines.attack_scores import ScoreBook, single_threaded_blas
from privaudit.audit.engines.streaming import (
    CURVE_POINTS,
    DEFAULT_CHUNK_BLOCKS,
    STREAM_BLOCK,
    ChunkCounts,
    GridCounts,
    StreamPlan,
    check_chunk_size,
    stream_counts,
    stream_needed,
)
from privaudit.audit.stats import epsilon_bounds as eb
from privaudit.audit.stats.power import certified_test_ratio
from privaudit.audit.results import AuditResult, ItemAccess, from_jsonable, stable_repr, to_jsonable
from privaudit.audit.verdicts import Verdict

ESTIMATORS = ("clopper-pearson", "gdp")
#: α grid on which theory curves and the band are reported: dense near 0, where ε is decided.
ALPHA_GRID = np.unique(np.concatenate([[0.0], np.geomspace(1e-6, 1e-2, 41), np.linspace(0.01, 1.0, 100)]))


# --- the result --------------------------------------------------------------------------------
#: Directions of a certified test (:class:`OperatingPoint`).
DIRECTIONS = ("forward", "reverse", "pooled")


@dataclasses.dataclass(frozen=True)
class EpsilonBound:
    """The certified lower bound on ε: its value, the δ it holds at, how it was computed and its confidence.

    Attributes
    ----------
    estimator : {"clopper-pearson", "gdp"}
        How ε̲ was computed (see :mod:`privaudit.audit.stats.epsilon_bounds`).
    selection : {"split", "bonferroni"}
        How the test's threshold was chosen.
    epsilon_lb : float
        Lower confidence bound on ε at ``delta``: P(ε̲ ≤ ε_true) ≥ ``confidence``.
    mu_lb : float or None
        Lower bound on μ (GDP estimator only).
    delta : float
        δ at which ε̲ holds.
    confidence : float
        Confidence level of ε̲ (and of the audit's band).

    Raises
    ------
    InvalidParameterError
        An unknown estimator or selection, δ outside [0, 1), or a confidence outside (0, 1).
    """

    estimator: str
    selection: str
    epsilon_lb: float
    mu_lb: float | None
    delta: float
    confidence: float

    def __post_init__(self) -> None:
        if self.estimator not in ESTIMATORS:
            raise InvalidParameterError(f"estimator must be one of {ESTIMATORS}, got estimator={self.estimator!r}")
        if self.selection not in eb.SELECTIONS:
            raise InvalidParameterError(f"selection must be one of {eb.SELECTIONS}, got selection={self.selection!r}")
        check_delta(self.delta, allow_zero=True)
        check_interval("confidence", self.confidence, 0.0, 1.0)


@dataclasses.dataclass(frozen=True)
class OperatingPoint(ItemAccess):
    """The test ε̲ was read from, with its error rates on the evaluation releases (``point["fpr"]`` reads too).

    Attributes
    ----------
    threshold : float
        The forward test rejects x when the score exceeds it.
    reverse_threshold : float or None
        The reverse test rejects x′ when the score is below it (reverse and pooled tests).
    direction : {"forward", "reverse", "pooled"}
        Which test (:class:`~privaudit.attacks.threshold_selection.RateBound`).
    fpr, fnr : float
        Its empirical error rates.
    fpr_upper, fnr_upper : float
        Their joint upper confidence bounds, from which ε̲ was computed.

    Raises
    ------
    InvalidParameterError
        An unknown direction, or a rate outside [0, 1].
    """

    threshold: float
    reverse_threshold: float | None
    direction: str
    fpr: float
    fnr: float
    fpr_upper: float
    fnr_upper: float

    def __post_init__(self) -> None:
        if self.direction not in DIRECTIONS:
            raise InvalidParameterError(f"direction must be one of {DIRECTIONS}, got direction={self.direction!r}")
        for name in ("fpr", "fnr", "fpr_upper", "fnr_upper"):
            check_interval(name, getattr(self, name), 0.0, 1.0, closed="both")

    @classmethod
    def of(cls, bound: Any) -> OperatingPoint:
        """The operating point of a certified bound.

        Parameters
        ----------
        bound : RateBound
            :func:`privaudit.audit.stats.epsilon_bounds.epsilon_bound`'s result.

        Returns
        -------
        OperatingPoint
        """
        return cls(bound.threshold, bound.reverse_threshold, bound.direction, bound.fpr, bound.fnr, bound.fpr_upper,
                   bound.fnr_upper)


def _check_same_size(owner: str, **arrays: np.ndarray) -> None:
    """The 1-d arrays of a curve must have one size (a curve whose parts disagree cannot be drawn)."""
    shapes = {name: np.shape(a) for name, a in arrays.items()}
    if len({*shapes.values()}) != 1 or len(next(iter(shapes.values()))) != 1:
        raise InvalidInputError(f"{owner} needs 1-d arrays of one size, got shapes {shapes}")


@dataclasses.dataclass(frozen=True)
class TradeoffCurve:
    """The empirical trade-off curve of the certified attacker's threshold tests on the evaluation releases.

    Attributes
    ----------
    fpr, fnr : ndarray
        Its vertices (type I and type II errors), by increasing FPR.

    Raises
    ------
    InvalidInputError
        Arrays that are not 1-d of one size.
    """

    fpr: np.ndarray
    fnr: np.ndarray

    def __post_init__(self) -> None:
        _check_same_size("TradeoffCurve", fpr=self.fpr, fnr=self.fnr)


@dataclasses.dataclass(frozen=True)
class Band(ItemAccess):
    """A simultaneous confidence band for a trade-off curve on a grid of type-I errors (``band["lower"]`` reads too).

    Attributes
    ----------
    alpha : ndarray
        The grid of type-I errors.
    lower, upper : ndarray
        The band's edges on ``alpha``.
    method : str
        How it was computed (``"DKW"``: :func:`~privaudit.audit.stats.epsilon_bounds.dkw_band`).

    Raises
    ------
    InvalidInputError
        Arrays that are not 1-d of one size.
    """

    alpha: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    method: str = "DKW"

    def __post_init__(self) -> None:
        _check_same_size("Band", alpha=self.alpha, lower=self.lower, upper=self.upper)


@dataclasses.dataclass(frozen=True)
class FamilyBound(ItemAccess):
    """The best certified ε̲ of one leak family (``family["epsilon_lb"]`` reads too).

    Attributes
    ----------
    epsilon_lb : float
        Its ε̲ (0, the trivial bound, when not certified).
    attacker : str or None
        The attacker it was read from (None when not certified).
    certified : bool
        Whether an attacker of the family was tested on held-out releases: one whose
        attackers showed no evidence on the selection split is not.

    Raises
    ------
    InvalidParameterError
        A family that was not certified but names an attacker or a positive ε̲.
    """

    epsilon_lb: float
    attacker: str | None
    certified: bool

    def __post_init__(self) -> None:
        if not self.certified and (self.attacker is not None or self.epsilon_lb != 0):
            raise InvalidParameterError(f"a family that was not certified has no attacker and epsilon_lb 0, got "
                                        f"attacker={self.attacker!r}, epsilon_lb={self.epsilon_lb!r}")


@dataclasses.dataclass(frozen=True)
class SampleSizes:
    """Releases per hypothesis: drawn in all, and in the train, select and evaluation blocks of the reported test.

    The planned blocks are :class:`Splits`; the reported evaluation size is the certified test's
    (the forced likelihood ratio is also evaluated on the training block, so its ``n_eval`` is
    ``n - n_select``).

    Attributes
    ----------
    n : int
        Releases drawn per hypothesis.
    n_train, n_select, n_eval : int
        Releases per hypothesis that trained the attackers, chose the test, and evaluated the reported test.
    """

    n: int
    n_train: int
    n_select: int
    n_eval: int

    @classmethod
    def of(cls, splits: Splits, n_eval: int) -> SampleSizes:
        """The sizes of ``splits`` with the certified test's evaluation size ``n_eval``.

        Parameters
        ----------
        splits : Splits
            The planned blocks (:func:`plan_splits`).
        n_eval : int
            Releases per hypothesis behind the reported test (:attr:`Certificate.n_eval`).

        Returns
        -------
        SampleSizes
        """
        return cls(splits.n, splits.n_train, splits.n_select, n_eval)


@dataclasses.dataclass(frozen=True)
class AttackerChoice:
    """The attackers an audit ran: the one whose ε̲ is reported, every one compared, and each leak family's best.

    Attributes
    ----------
    attacker : str
        Registered name of the distinguisher whose ε̲ is reported (the one chosen, for a suite).
    tried : tuple of str
        Every attacker compared on the selection split.
    families : dict of str to FamilyBound
        The best certified ε̲ of each leak family the audit ran (see :attr:`TradeoffAudit.families`).
    """

    attacker: str
    tried: tuple
    families: dict[str, FamilyBound] = dataclasses.field(default_factory=dict)


def _entry_value(owner: str, data: Mapping[str, Any], key: str, default: Any = dataclasses.MISSING) -> Any:
    """``data[key]`` (``key`` may be dotted: ``"band.lower"``), or ``default``; a missing key without one is named."""
    value: Any = data
    for part in key.split("."):
        value = value.get(part, dataclasses.MISSING) if isinstance(value, Mapping) else dataclasses.MISSING
    if value is dataclasses.MISSING:
        if default is dataclasses.MISSING:
            raise ValueError(f"{owner}.from_dict: missing field {key!r}")
        return default
    return value


def _built(owner: str, name: str, make: Callable[[], Any]) -> Any:
    """``make()``, its refusal (a value a sub-result's checks reject) named as the entry's field ``name``."""
    try:
        return make()
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{owner}.from_dict: field {name!r}: {exc}") from None


def _optional_array(value: Any) -> np.ndarray | None:
    return None if value is None else from_jsonable(np.ndarray, value)


@dataclasses.dataclass(frozen=True)
class TradeoffAudit(AuditResult):
    """Result of a trade-off audit (``kind = "tradeoff"``), built from its stages' sub-results.

    The report entry is flat and its keys are stable: :meth:`to_dict` writes them, in order, and
    :meth:`from_dict` rebuilds the sub-results from them. The flat names are properties written out
    below: ``estimator``, ``selection``, ``epsilon_lb``, ``mu_lb``, ``delta`` and ``confidence`` (of
    :attr:`bound`), ``n``, ``n_train``, ``n_select`` and ``n_eval`` (of :attr:`sizes`), ``curve``,
    ``band``, ``claim_curve``, ``exact_curve``, ``fpr``, ``fnr``, ``alpha``, ``band_lower`` and
    ``band_upper`` (of :attr:`curves`), and ``attacker``, ``attackers_tried``, ``families`` and
    ``epsilon_lb_by_family`` (of :attr:`attackers`).

    Attributes
    ----------
    target : str
        Name of the audited mechanism (``repr`` by default).
    attackers : AttackerChoice
        The attacker whose ε̲ is reported, every attacker compared on the selection split, and the
        best certified ε̲ of each leak family (:data:`~privaudit.attacks.protocol.LEAK_FAMILIES`:
        ``"floating-point"``, ``"distribution"``, ``"degenerate"``). Every certified attacker is
        tested on held-out releases at 1 − (1 − c)/k (Bonferroni over the k certified), so all
        families' ε̲ hold together at confidence c and ``epsilon_lb`` is their maximum. A family
        whose attackers showed no evidence on the selection split is not tested (``certified``
        False, ε̲ 0, no attacker). No families for results made before them (the entry then has no
        ``epsilon_lb_by_family``).
    claim : PrivacyClaim
        The claim under test.
    bound : EpsilonBound
        ε̲ with the δ it holds at (the claim's δ by default), its estimator, selection and confidence.
    epsilon_exact : float or None
        Exact ε of the mechanism at ``delta`` (worst-case pair), when known.
    verdict : {"pass", "violation", "inconclusive"}
        "violation" iff ``epsilon_lb > claim.epsilon`` and ε̲ was computed at a
        δ ≥ the claim's δ; "inconclusive" when ε̲ exceeds the claim at a smaller δ
        (not comparable: a smaller δ allows a larger ε). See :func:`judge`.
    sizes : SampleSizes
        Releases drawn per hypothesis (``n``) and those that trained the attackers, chose the test,
        and evaluated the reported test. The exact likelihood ratio of a suite (certified
        whatever the ranking, trained on nothing) is evaluated on the training and
        held-out releases together, so when it is reported n_eval = n − n_select;
        otherwise n_eval = n − n_train − n_select.
    seed : int
        Root seed: rerunning with ``rng=seed`` reproduces the audit.
    operating_point : OperatingPoint
        The test ε̲ was read from: threshold, direction, empirical and upper-bound
        FPR/FNR on the evaluation split.
    curves : Curves
        Empirical trade-off curve (vertices, increasing FPR) on the evaluation split; simultaneous
        (DKW) band, on ``band.alpha``, for the trade-off curve of the attacker's threshold tests, at
        the bound's confidence; f_{ε,δ} of the claim on ``band.alpha``; the exact trade-off curve of
        the mechanism (worst-case pair) there, when known.
    notes : tuple of str
        Assumptions and caveats (e.g. the Gaussian-trade-off assumption of "gdp").
    assumptions : tuple of str
        What ε̲ rests on (estimator, selection, any distributional assumption).
    min_detectable_ratio : float
        Stated power: the smallest ε′/ε_claim at which the certified test (its false-positive
        rate, evaluation size and Bonferroni level) refutes the claim at expected counts, i.e.
        about half the time (:func:`privaudit.audit.stats.power.certified_test_ratio`); ``inf`` if none.
    leaks : dict
        Degenerate outputs seen: fraction of non-finite rows under each input,
        whether the output shapes differ.
    """

    kind: ClassVar[str] = "tradeoff"
    target: str
    attackers: AttackerChoice
    claim: PrivacyClaim
    bound: EpsilonBound
    epsilon_exact: float | None
    verdict: Verdict
    sizes: SampleSizes
    seed: int
    operating_point: OperatingPoint
    curves: Curves
    notes: tuple = ()
    assumptions: tuple = ()
    min_detectable_ratio: float = math.inf
    leaks: dict = dataclasses.field(default_factory=dict)

    # --- the report entry (stable keys: reports, caches and their readers rely on them) ------------
    def to_dict(self) -> dict[str, Any]:
        """The report entry, flat; ``epsilon_lb_by_family`` is left out when there are no families (an older result).

        Returns
        -------
        dict
            JSON-safe: ``kind``, ``target``, ``attacker``, ``attackers_tried``, ``claim``, ``estimator``,
            ``selection``, ``epsilon_lb``, ``mu_lb``, ``delta``, ``epsilon_exact``, ``verdict``, ``n``,
            ``n_train``, ``n_select``, ``n_eval``, ``confidence``, ``seed``, ``operating_point``, ``fpr``,
            ``fnr``, ``alpha``, ``band`` (``lower``, ``upper``, ``method``), ``claim_curve``,
            ``exact_curve``, ``notes``, ``assumptions``, ``min_detectable_ratio``, ``leaks``
            [, ``epsilon_lb_by_family``].
        """
        b, s, c = self.bound, self.sizes, self.curves
        entry = {
            "kind": self.kind, "target": self.target, "attacker": self.attackers.attacker,
            "attackers_tried": self.attackers.tried, "claim": self.claim, "estimator": b.estimator,
            "selection": b.selection, "epsilon_lb": b.epsilon_lb, "mu_lb": b.mu_lb, "delta": b.delta,
            "epsilon_exact": self.epsilon_exact, "verdict": self.verdict, "n": s.n, "n_train": s.n_train,
            "n_select": s.n_select, "n_eval": s.n_eval, "confidence": b.confidence, "seed": self.seed,
            "operating_point": self.operating_point, "fpr": c.curve.fpr, "fnr": c.curve.fnr, "alpha": c.band.alpha,
            "band": {"lower": c.band.lower, "upper": c.band.upper, "method": c.band.method},
            "claim_curve": c.claim_curve, "exact_curve": c.exact_curve, "notes": self.notes,
            "assumptions": self.assumptions, "min_detectable_ratio": self.min_detectable_ratio, "leaks": self.leaks,
        }
        if self.attackers.families:
            entry["epsilon_lb_by_family"] = self.epsilon_lb_by_family
        return {key: to_jsonable(value) for key, value in entry.items()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TradeoffAudit:
        """The result whose :meth:`to_dict` is ``data`` (extra keys, e.g. a report entry's, are ignored).

        Parameters
        ----------
        data : mapping
            A result's :meth:`to_dict` (or a report entry).

        Returns
        -------
        TradeoffAudit

        Raises
        ------
        ValueError
            Another kind, a missing key (named, e.g. ``'band.lower'``), or a value a sub-result refuses
            (named by the sub-result: ``'bound'``, ``'operating_point'``, ...).
        """
        name = cls.__name__
        if not isinstance(data, Mapping):
            raise TypeError(f"{name}.from_dict needs a mapping, got {type(data).__name__}")
        if data.get("kind", cls.kind) != cls.kind:
            raise ValueError(f"{name}.from_dict needs kind {cls.kind!r}, got kind={data.get('kind')!r}")

        def get(key: str, default: Any = dataclasses.MISSING) -> Any:
            return _entry_value(name, data, key, default)

        def number(key: str, default: Any = dataclasses.MISSING) -> Any:
            return from_jsonable(float | None, get(key, default))

        families = get("epsilon_lb_by_family", {})
        attackers = _built(name, "attackers", lambda: AttackerChoice(
            get("attacker"), from_jsonable(tuple, get("attackers_tried")),
            from_jsonable(dict[str, FamilyBound], families)))
        bound = _built(name, "bound", lambda: EpsilonBound(
            get("estimator"), get("selection"), number("epsilon_lb"), number("mu_lb"), number("delta"),
            number("confidence")))
        sizes = SampleSizes(get("n"), get("n_train"), get("n_select"), get("n_eval"))
        point = _built(name, "operating_point", lambda: from_jsonable(OperatingPoint, get("operating_point")))
        curve = _built(name, "curve", lambda: TradeoffCurve(_optional_array(get("fpr")), _optional_array(get("fnr"))))
        band = _built(name, "band", lambda: Band(_optional_array(get("alpha")), _optional_array(get("band.lower")),
                                                 _optional_array(get("band.upper")), get("band.method", "DKW")))
        curves = Curves(curve, band, _optional_array(get("claim_curve")), _optional_array(get("exact_curve")))
        claim = _built(name, "claim", lambda: from_jsonable(PrivacyClaim, get("claim")))
        return cls(
            target=get("target"), attackers=attackers, claim=claim, bound=bound,
            epsilon_exact=number("epsilon_exact"), verdict=get("verdict"), sizes=sizes, seed=get("seed"),
            operating_point=point, curves=curves, notes=from_jsonable(tuple, get("notes", ())),
            assumptions=from_jsonable(tuple, get("assumptions", ())),
            min_detectable_ratio=number("min_detectable_ratio", math.inf), leaks=get("leaks", {}),
        )

    # --- the flat names of the entry, read from the sub-results ----------------------------------------
    @property
    def attacker(self) -> str:
        """The distinguisher whose ε̲ is reported (``attackers.attacker``)."""
        return self.attackers.attacker

    @property
    def attackers_tried(self) -> tuple:
        """Every attacker compared on the selection split (``attackers.tried``)."""
        return self.attackers.tried

    @property
    def families(self) -> dict[str, FamilyBound]:
        """The best certified ε̲ of each leak family (``attackers.families``)."""
        return self.attackers.families

    @property
    def epsilon_lb_by_family(self) -> dict[str, dict]:
        """:attr:`families` as the report writes them: ``{family: {"epsilon_lb", "attacker", "certified"}}``."""
        return {family: dataclasses.asdict(b) for family, b in self.families.items()}

    @property
    def estimator(self) -> str:
        """How ε̲ was computed (``bound.estimator``)."""
        return self.bound.estimator

    @property
    def selection(self) -> str:
        """How the test's threshold was chosen (``bound.selection``)."""
        return self.bound.selection

    @property
    def epsilon_lb(self) -> float:
        """The certified lower confidence bound on ε (``bound.epsilon_lb``)."""
        return self.bound.epsilon_lb

    @property
    def mu_lb(self) -> float | None:
        """Lower bound on μ, GDP estimator only (``bound.mu_lb``)."""
        return self.bound.mu_lb

    @property
    def delta(self) -> float:
        """δ at which ε̲ holds (``bound.delta``)."""
        return self.bound.delta

    @property
    def confidence(self) -> float:
        """Confidence of ε̲ and of the band (``bound.confidence``)."""
        return self.bound.confidence

    @property
    def n(self) -> int:
        """Releases drawn per hypothesis (``sizes.n``)."""
        return self.sizes.n

    @property
    def n_train(self) -> int:
        """Releases per hypothesis that trained the attackers (``sizes.n_train``)."""
        return self.sizes.n_train

    @property
    def n_select(self) -> int:
        """Releases per hypothesis that chose the test (``sizes.n_select``)."""
        return self.sizes.n_select

    @property
    def n_eval(self) -> int:
        """Releases per hypothesis behind the reported test (``sizes.n_eval``)."""
        return self.sizes.n_eval

    @property
    def curve(self) -> TradeoffCurve:
        """The empirical trade-off curve (``curves.curve``)."""
        return self.curves.curve

    @property
    def band(self) -> Band:
        """The simultaneous confidence band (``curves.band``)."""
        return self.curves.band

    @property
    def claim_curve(self) -> np.ndarray:
        """f_{ε,δ} of the claim on ``alpha`` (``curves.claim_curve``)."""
        return self.curves.claim_curve

    @property
    def exact_curve(self) -> np.ndarray | None:
        """The mechanism's exact trade-off curve on ``alpha``, when known (``curves.exact_curve``)."""
        return self.curves.exact_curve

    @property
    def fpr(self) -> np.ndarray:
        """The empirical curve's type I errors (``curves.curve.fpr``)."""
        return self.curves.curve.fpr

    @property
    def fnr(self) -> np.ndarray:
        """The empirical curve's type II errors (``curves.curve.fnr``)."""
        return self.curves.curve.fnr

    @property
    def alpha(self) -> np.ndarray:
        """The band's grid of type I errors (``curves.band.alpha``)."""
        return self.curves.band.alpha

    @property
    def band_lower(self) -> np.ndarray:
        """The band's lower edge on ``alpha``."""
        return self.curves.band.lower

    @property
    def band_upper(self) -> np.ndarray:
        """The band's upper edge on ``alpha``."""
        return self.curves.band.upper

    def __repr__(self) -> str:
        exact = "None" if self.epsilon_exact is None else f"{self.epsilon_exact:.4g}"
        return (f"TradeoffAudit(target={self.target!r}, attacker={self.attacker!r}, estimator={self.estimator!r}, "
                f"epsilon_lb={self.epsilon_lb:.4g}, claim_epsilon={self.claim.epsilon:.4g}, epsilon_exact={exact}, "
                f"verdict={self.verdict!r}, n={self.n}, confidence={self.confidence}, "
                f"min_detectable_ratio={self.min_detectable_ratio:.3g})")


# --- capabilities the mechanism declares -----------------------------------------------------------
def _exact_curve(mechanism, x, x_prime, alpha) -> np.ndarray | None:
    """The mechanism's exact trade-off curve on ``alpha`` (:class:`HasExactTradeoff`), else None."""
    if not isinstance(mechanism, HasExactTradeoff):
        return None
    fn = mechanism.tradeoff
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        params = {}
    if "x" in params and "x_prime" in params:
        return np.asarray(fn(alpha, x=x, x_prime=x_prime), dtype=float)
    return np.asarray(fn(alpha), dtype=float)


def _exact_epsilon(mechanism, delta: float) -> float | None:
    """The mechanism's exact ε at ``delta`` (:class:`HasExactEpsilon`), else None (also when it cannot say)."""
    if not isinstance(mechanism, HasExactEpsilon):
        return None
    try:
        return float(mechanism.exact_epsilon(delta)) if delta > 0 else float(mechanism.exact_epsilon(0.0))
    except (ValueError, TypeError):
        return None


#: Smallest n accepted: every split keeps enough releases per hypothesis for the attackers to run.
MIN_N = 200
#: At most this many releases per hypothesis are spent on training (the classifiers use ≤ 20 000).
MAX_TRAIN = 100_000
#: At most this many releases per hypothesis choose the threshold: beyond it the choice barely
#: improves, while every release moved to the evaluation split tightens ε̲.
MAX_SELECT = 250_000
#: The best-ranked attackers of a suite certified on the evaluation split, before the best of each other
#: leak family with evidence is added (:func:`_certified`; Bonferroni over all of them).
CERTIFIED_ATTACKERS = 2
#: Attackers of a suite are ranked on at most this many selection releases per hypothesis.
RANK_ROWS = 100_000


def default_attackers(mechanism: Any) -> list:
    """The default (black-box first) suite for ``mechanism``.

    Always the generic suite (:data:`~privaudit.attacks.distinguishers.GENERIC_SUITE`:
    point masses, lattices and near-atoms, bit patterns, projection, classifiers),
    plus the exact likelihood ratio when the mechanism declares ``log_density``
    (:class:`~privaudit.mechanisms.protocol.HasDensity`) and the numpy-Laplace
    reachability attacker when it declares a positive Laplace ``scale``
    (:class:`~privaudit.mechanisms.protocol.HasLaplaceScale`). The declared density is
    *one* candidate, never trusted alone: a bug in ``sample`` that the density does not
    describe must still be caught.

    Parameters
    ----------
    mechanism : Mechanism
        The audited mechanism.

    Returns
    -------
    list of str
        Registered attacker names.
    """
    specs = []
    if isinstance(mechanism, HasDensity):
        specs.append("likelihood-ratio")
    specs += list(GENERIC_SUITE)
    # A dataset mechanism's release is not "input + noise" coordinate by coordinate: nothing to invert.
    if isinstance(mechanism, HasLaplaceScale) and _positive_number(mechanism.scale) \
            and not isinstance(domain_of(mechanism), DatasetDomain):
        specs.append("reach-numpy-laplace")
    return specs


def _positive_number(v) -> bool:
    return isinstance(v, int | float | np.floating) and not isinstance(v, bool) and v > 0


def _check_gdp(estimator: str, claim: PrivacyClaim, assume_gaussian: bool) -> None:
    if estimator == "gdp" and claim.mu is None and not assume_gaussian:
        raise InvalidParameterError(
            "estimator='gdp' assumes the mechanism's trade-off curve is Gaussian (G_mu); the claim "
            f"{claim} carries no mu. Pass assume_gaussian=True if the release is known to be Gaussian, "
            "or use estimator='clopper-pearson' (valid for every mechanism)."
        )


# --- degenerate outputs -------------------------------------------------------------------------
def _as_rows(out, n: int, which: str) -> np.ndarray:
    """Releases as a float (n, k) array; a wrong number of releases is a protocol error, not a leak."""
    try:
        a = np.asarray(out, dtype=float)
    except (TypeError, ValueError) as err:
        raise InvalidInputError(f"mechanism.sample({which}, n) must return numbers; got {type(out).__name__}") from err
    if a.ndim == 0 or a.shape[0] != n:
        raise InvalidInputError(f"mechanism.sample({which}, n={n}) must return n releases (leading axis n), "
                                f"got shape {a.shape}")
    return a.reshape(n, -1)


def _nonfinite_fraction(out: np.ndarray) -> float:
    """Fraction of rows with a NaN or ±inf (0 without the row-wise pass when every value is finite, the usual case)."""
    finite = np.isfinite(out)
    return 0.0 if finite.all() else float(np.mean(~finite.all(axis=1)))


def _harmonise(out0: np.ndarray, out1: np.ndarray) -> tuple[np.ndarray, np.ndarray, dict]:
    """Pad rows of different widths with NaN (a shape that depends on the input is a perfect leak)."""
    leaks = {
        "nonfinite_fraction_x": _nonfinite_fraction(out0),
        "nonfinite_fraction_x_prime": _nonfinite_fraction(out1),
        "shape_differs": out0.shape[1] != out1.shape[1],
    }
    w = max(out0.shape[1], out1.shape[1], 1)
    pad = [np.hstack([o, np.full((o.shape[0], w - o.shape[1]), np.nan)]) if o.shape[1] < w else o
           for o in (out0, out1)]
    return pad[0], pad[1], leaks


# --- the stages of the audit ------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Splits:
    """Contiguous blocks of the n releases per hypothesis: train, then select, then evaluate.

    Attributes
    ----------
    n_train, n_select, n_eval : int
        Releases per hypothesis in each block (``n_eval`` is the planned evaluation block;
        the forced likelihood ratio is also evaluated on the training block).
    """

    n_train: int
    n_select: int
    n_eval: int

    @property
    def n(self) -> int:
        """Releases per hypothesis in all."""
        return self.n_train + self.n_select + self.n_eval

    @property
    def train(self) -> slice:
        return slice(0, self.n_train)

    @property
    def select(self) -> slice:
        return slice(self.n_train, self.n_train + self.n_select)

    @property
    def evaluate(self) -> slice:
        return slice(self.n_train + self.n_select, self.n)

    @property
    def rank(self) -> slice:
        """The prefix of the selection block (at most :data:`RANK_ROWS`) on which a suite is ranked."""
        return slice(self.n_train, self.n_train + min(self.n_select, RANK_ROWS))


def plan_splits(n: int, needs_training: bool, selection_fraction: float, train_fraction: float) -> Splits:
    """Stage *split*: sizes of the train/select/eval blocks of ``n`` releases per hypothesis.

    Parameters
    ----------
    n : int
        Releases per hypothesis.
    needs_training : bool
        Whether an attacker must be fitted (otherwise no training block is spent).
    selection_fraction, train_fraction : float
        Shares of ``n`` for the selection block (at most :data:`MAX_SELECT`) and the
        training block (at most :data:`MAX_TRAIN`).

    Returns
    -------
    Splits

    Raises
    ------
    InvalidParameterError
        If no release is left for the evaluation block.
    """
    n_train = min(int(round(train_fraction * n)), MAX_TRAIN) if needs_training else 0
    n_select = max(1, min(int(round(selection_fraction * n)), MAX_SELECT))
    n_eval = n - n_train - n_select
    if n_eval < 1:
        raise InvalidParameterError(f"n={n} is too small for the train/select/eval splits")
    return Splits(n_train, n_select, n_eval)


@dataclasses.dataclass(frozen=True)
class Releases:
    """The releases under x (``out0``) and x′ (``out1``) as (n, k) float rows, and what they leak.

    Attributes
    ----------
    out0, out1 : ndarray (n, k)
        Rows padded with NaN to one width when the shape depends on the input.
    leaks : dict
        ``nonfinite_fraction_x``, ``nonfinite_fraction_x_prime``, ``shape_differs``.
    shape : tuple
        The shape the attackers see a batch in: ``(-1, *x.shape)`` for releases of the
        input's shape, else ``(-1, k)``.
    """

    out0: np.ndarray
    out1: np.ndarray
    leaks: dict
    shape: tuple


def _score_book(releases: Releases) -> ScoreBook:
    """An empty :class:`~privaudit.audit.engines.attack_scores.ScoreBook` of ``releases``, told which side is all finite.

    The draw stage counted the non-finite rows of each side before padding; with rows of one
    width (no padding) a side with none is finite, and no score call checks it again.
    """
    leaks = releases.leaks
    finite = None if leaks["shape_differs"] else tuple(
        leaks[k] == 0 for k in ("nonfinite_fraction_x", "nonfinite_fraction_x_prime"))
    return ScoreBook(releases.out0, releases.out1, releases.shape, finite=finite)


def draw_releases(mechanism: Any, x: ArrayLike, x_prime: ArrayLike, n: int, seed0: RandomLike,
                  seed1: RandomLike) -> Releases:
    """Stage *draw*: n releases of each input, each from its own generator.

    Parameters
    ----------
    mechanism : Mechanism
        The audited mechanism.
    x, x_prime : array-like
        The pair.
    n : int
        Releases per input.
    seed0, seed1 : SeedSequence, int or Generator
        Randomness of the releases under x and under x′.

    Returns
    -------
    Releases
    """
    out0 = _as_rows(mechanism.sample(x, n, np.random.default_rng(seed0)), n, "x")
    out1 = _as_rows(mechanism.sample(x_prime, n, np.random.default_rng(seed1)), n, "x_prime")
    out0, out1, leaks = _harmonise(out0, out1)
    shape = (-1, *np.shape(np.asarray(x, dtype=float))) if out0.shape[1] == max(np.size(x), 1) and \
        not leaks["shape_differs"] else (-1, out0.shape[1])
    return Releases(out0, out1, leaks, shape)


def fit_attackers(attackers: list, releases: Releases, splits: Splits, mechanism: Any, x: ArrayLike,
                  x_prime: ArrayLike) -> list:
    """Stage *fit*: fit each attacker on the training block (attackers that need no training on it too, if any).

    Attackers that need the mechanism's density are dropped when the output shape depends
    on the input: a density for the declared shape no longer applies.

    Parameters
    ----------
    attackers : list of Distinguisher
        Unfitted attackers.
    releases : Releases
        The drawn releases.
    splits : Splits
        The blocks; only ``splits.train`` is read.
    mechanism, x, x_prime
        Handed to each attacker's ``fit``.

    Returns
    -------
    list of Distinguisher
        The fitted attackers, in the given order.
    """
    if releases.leaks["shape_differs"]:
        attackers = [a for a in attackers if not distinguisher_traits(a).requires_density]
    fitted = []
    for a in attackers:  # a handful of attackers, each vectorised over samples
        traits = distinguisher_traits(a)
        # An attacker that needs no training still gets the training block when the audit drew one
        # for the others (it may use it: the projection, when the releases do not live in the input
        # space, projects on the difference of their means instead of refusing). Not a density
        # attacker: the forced likelihood ratio is also evaluated on these releases (_forced).
        if traits.requires_training or (splits.n_train and not traits.requires_density):
            t0, t1 = releases.out0[splits.train], releases.out1[splits.train]
            if not traits.handles_nonfinite:
                t0, t1 = (np.where(np.isfinite(t), t, 0.0) for t in (t0, t1))
            a.fit(t0.reshape(releases.shape), t1.reshape(releases.shape), mechanism=mechanism, x=x, x_prime=x_prime)
        else:
            a.fit(None, None, mechanism=mechanism, x=x, x_prime=x_prime)
        fitted.append(a)
    return fitted


def _certified(crits: list, forced: int | None, families: list[str] | None = None) -> list[int]:
    """Indices of the attackers certified on the evaluation split.

    ``forced`` (the exact likelihood ratio, :func:`_forced`), when there is one, always takes one
    of the first two places: for a mechanism that implements its density it is the most powerful test,
    but at small ε the ranking (on at most :data:`RANK_ROWS` releases) cannot tell it from near-equivalent
    attackers (measured: Laplace ε = 0.1 ranked an MLP first and the ratio third, costing 2 % of
    ε̲ at n = 5e6). The other place goes to the best-ranked generic attacker, so a bug in
    ``sample`` that the density does not describe is still certified.

    With ``families`` (each attacker's leak family), the best-ranked attacker of every family
    not yet among those two is certified as well when its selection criterion is positive (some
    evidence on the selection split), so each family's ε̲ is a tested bound: a floating-point
    leak (ε̲ ≈ 10 for numpy's Laplace) must not hide whether the distribution is right. A family
    without evidence costs no Bonferroni share; its ε̲ is the trivial 0.
    """
    ranked = [int(i) for i in np.argsort(crits)[::-1]]
    first = [] if forced is None else [forced]
    chosen = (first + [i for i in ranked if i != forced])[:CERTIFIED_ATTACKERS]
    if families is not None:
        covered = {families[i] for i in chosen}
        for i in ranked:
            if families[i] not in covered and crits[i] > 0:
                chosen.append(i)
                covered.add(families[i])
    return chosen


def _forced(fitted: list) -> int | None:
    """Index of the attacker certified whatever the ranking (the first exact likelihood ratio), if any.

    Neither its fit nor its being certified depends on the training split, so it is also
    evaluated on the training releases (:func:`certify`).
    """
    return next((i for i, a in enumerate(fitted) if attacker_name(a) == "likelihood-ratio"
                 and not distinguisher_traits(a).requires_training), None)


def select_attackers(fitted: list, releases: Releases, splits: Splits, *, delta: float, confidence: float,
                     estimator: str, n_thresholds: int,
                     book: ScoreBook | None = None) -> tuple[list[int], int | None]:
    """Stage *select*: rank a suite on the selection block and pick the attackers to certify.

    The evaluation block is never read. A single attacker is certified as is.

    Parameters
    ----------
    fitted : list of Distinguisher
        Fitted attackers.
    releases : Releases
        The drawn releases.
    splits : Splits
        The blocks; only ``splits.rank`` is read.
    delta, confidence, estimator, n_thresholds
        As in :func:`audit_tradeoff`; the criterion is that of a test evaluated on
        ``splits.n_eval`` releases.
    book : ScoreBook, optional
        Keeps the ranking scores, which :func:`certify` reuses for the selection block
        (default: a book of its own, discarded).

    Returns
    -------
    order : list of int
        Indices into ``fitted`` of the attackers to certify (:func:`_certified`: the forced
        ratio and the best-ranked other attacker, plus the best of each other leak family
        that showed evidence).
    forced : int or None
        Index of the exact likelihood ratio certified whatever the ranking (:func:`_forced`).
    """
    if len(fitted) <= 1:
        return [0], None
    forced = _forced(fitted)
    rk = splits.rank
    book = _score_book(releases) if book is None else book
    crits = []
    for i, a in enumerate(fitted):
        s0, s1 = (book.scores(i, a, side, rk.start, rk.stop) for side in (0, 1))
        crits.append(eb.select_threshold(s0, s1, splits.n_eval, splits.n_eval, delta=delta, confidence=confidence,
                                         estimator=estimator, n_thresholds=n_thresholds,
                                         select_level=eb.RANK_LEVEL, cross_validate=False,
                                         log_likelihood_ratio=distinguisher_traits(a).llr_scores).criterion)
    return _certified(crits, forced, [leak_family(a) for a in fitted]), forced


@dataclasses.dataclass(frozen=True)
class Certificate:
    """The certified test: the attacker whose ε̲ is reported, its bound, and its sorted evaluation scores.

    Attributes
    ----------
    index : int
        Index of the attacker in the fitted list.
    bound : RateBound
        Its bound and the test it was read from (:func:`privaudit.audit.stats.epsilon_bounds.epsilon_bound`).
    scores0, scores1 : ndarray
        Its sorted scores on the evaluation releases under x and x′.
    epsilons : dict
        ε̲ of every certified attacker (index into the fitted list → ε̲), each at the
        Bonferroni level: they hold together at the audit's confidence.
    size : int or None
        Releases per hypothesis behind the reported test, when its scores are not kept (a
        streamed certification, :func:`certify_streamed`); None: the size of ``scores0``.
    vertices : (ndarray, ndarray) or None
        The empirical curve's (FPR, FNR) vertices counted by a streamed certification, by
        increasing FPR; None: traced from the scores (:func:`trace_curves`).
    """

    index: int
    bound: object
    scores0: np.ndarray
    scores1: np.ndarray
    epsilons: dict = dataclasses.field(default_factory=dict)
    size: int | None = None
    vertices: tuple | None = None

    @property
    def n_eval(self) -> int:
        """Releases per hypothesis behind the reported test."""
        return self.scores0.size if self.size is None else self.size


def certify(fitted: list, order: list[int], forced: int | None, releases: Releases, splits: Splits, *,
            delta: float, confidence: float, selection: str, estimator: str, n_thresholds: int,
            book: ScoreBook | None = None) -> Certificate:
    """Stage *certify*: bound ε for each selected attacker on held-out releases; report the largest.

    Each of the k selected attackers is certified at 1 − (1 − c)/k (Bonferroni), so the
    reported maximum holds at confidence c. Two guard against a ranking error between a
    rare but perfect leak (an atom, a NaN) and a bulk shift, whose selection-split criteria
    are close. The forced likelihood ratio is evaluated on the training releases too: they
    are independent of its test (chosen on the selection block) and of its being
    certified, so no release is wasted.

    Parameters
    ----------
    fitted, order, forced
        From :func:`fit_attackers` and :func:`select_attackers`.
    releases : Releases
        The drawn releases.
    splits : Splits
        The blocks.
    delta, confidence, selection, estimator, n_thresholds
        As in :func:`audit_tradeoff`.
    book : ScoreBook, optional
        Scores already computed (the ranking prefix of the selection block, from
        :func:`select_attackers`); default: none.

    Returns
    -------
    Certificate
        The attacker with the largest ε̲ (the first of equals).
    """
    level_each = 1 - (1 - confidence) / len(order)
    book = _score_book(releases) if book is None else book
    sel, ev = splits.select, splits.evaluate
    epsilons, best = {}, None
    for idx in order:
        a = fitted[idx]
        sel0, sel1 = (book.scores(idx, a, side, sel.start, sel.stop) for side in (0, 1))
        e0, e1 = (book.scores(idx, a, side, ev.start, ev.stop) for side in (0, 1))
        if idx == forced and splits.n_train:
            e0, e1 = (np.concatenate([book.scores(idx, a, side, 0, splits.n_train), e])
                      for side, e in ((0, e0), (1, e1)))
        # The evaluation scores are left unsorted: the split test's two error counts are counted
        # directly (epsilon_bound), and only the reported attacker's scores are sorted, for its curve.
        b = eb.epsilon_bound(sel0, sel1, e0, e1, delta=delta, confidence=level_each, selection=selection,
                             estimator=estimator, n_thresholds=n_thresholds,
                             log_likelihood_ratio=distinguisher_traits(a).llr_scores)
        epsilons[idx] = float(b.epsilon)
        if best is None or b.epsilon > best[1].epsilon:
            best = (idx, b, e0, e1)
    idx, bound, ev0, ev1 = best
    return Certificate(idx, bound, np.sort(ev0), np.sort(ev1), epsilons)


def certify_streamed(fitted: list, order: list[int], forced: int | None, releases: Releases, splits: Splits, *,
                     mechanism: Any, x: ArrayLike, x_prime: ArrayLike, seeds: tuple, delta: float,
                     confidence: float, selection: str, estimator: str, n_thresholds: int, chunk_size: int,
                     book: ScoreBook | None = None, n_jobs: int | None = 1, progress: bool | None = None,
                     chunk_counter: Callable | None = None) -> tuple[Certificate, ChunkCounts]:
    """Stage *certify*, streamed: the tests of :func:`certify` counted on evaluation releases drawn chunk by chunk.

    ``releases`` holds the train and selection blocks only (``splits.n_train + splits.n_select``
    releases per input). For each attacker of ``order`` the test is chosen on the selection
    block exactly as :func:`certify` chooses it
    (:func:`~privaudit.audit.stats.epsilon_bounds.plan_test`, at the same Bonferroni level and
    evaluation size); the ``splits.n_eval`` evaluation releases are then drawn in keyed blocks
    (:mod:`privaudit.audit.engines.streaming`), scored and counted at the tests' thresholds and at
    the curve's grid, and the bound is read from the counts
    (:func:`~privaudit.audit.stats.epsilon_bounds.bound_from_counts`). The forced likelihood ratio's
    counts include the training block, as in :func:`certify`.

    Parameters
    ----------
    fitted, order, forced
        From :func:`fit_attackers` and :func:`select_attackers`.
    releases : Releases
        The train and selection blocks.
    splits : Splits
        The blocks (the evaluation block is streamed).
    mechanism, x, x_prime
        Drawn from for the evaluation blocks.
    seeds : (SeedSequence, SeedSequence)
        The release streams of x and x′ (block b is drawn from ``keyed_rng(seeds[side], b)``).
    delta, confidence, selection, estimator, n_thresholds
        As in :func:`audit_tradeoff`.
    chunk_size : int
        Releases per input per chunk (:func:`~privaudit.audit.engines.streaming.check_chunk_size`).
    book : ScoreBook, optional
        Scores already computed on ``releases``.
    n_jobs : int or None
        joblib workers for the chunks (the counts do not depend on it).
    progress : bool or None
        A progress bar (None: when standard error is a terminal).
    chunk_counter : callable, optional
        Counts one chunk (default :func:`~privaudit.audit.engines.streaming.count_chunk`).

    Returns
    -------
    certificate : Certificate
        Without scores: its ``size`` and its curve's ``vertices`` are counted.
    counts : ChunkCounts
        The streamed counts (non-finite rows included).
    """
    level_each = 1 - (1 - confidence) / len(order)
    book = _score_book(releases) if book is None else book
    sel = splits.select
    plans, grids, sizes = [], [], []
    for idx in order:
        a = fitted[idx]
        sel0, sel1 = (book.scores(idx, a, side, sel.start, sel.stop) for side in (0, 1))
        n_ev = splits.n_eval + (splits.n_train if idx == forced else 0)
        chosen = eb.plan_test(sel0, sel1, n_ev, n_ev, delta=delta, confidence=level_each, selection=selection,
                              estimator=estimator, n_thresholds=n_thresholds,
                              log_likelihood_ratio=distinguisher_traits(a).llr_scores)
        curve_t = eb.empirical_curve(sel0, sel1, max_points=CURVE_POINTS)[2]
        grids.append(np.unique(np.concatenate([[-np.inf, np.inf], curve_t, chosen.forward, chosen.reverse])))
        plans.append(chosen)
        sizes.append(n_ev)
    differs = bool(releases.leaks["shape_differs"])
    plan = StreamPlan(mechanism, x, x_prime, tuple(seeds), splits.n_eval, releases.out0.shape[1], releases.shape,
                      tuple(fitted[i] for i in order), tuple(grids), chunk_size, (differs, differs))
    counts = stream_counts(plan, n_jobs=n_jobs, progress=progress,
                           **({} if chunk_counter is None else {"chunk_counter": chunk_counter}))
    epsilons, best = {}, None
    for j, idx in enumerate(order):
        grid, chosen, n_ev = grids[j], plans[j], sizes[j]
        pair = counts.counts[j]
        if idx == forced and splits.n_train:  # the forced ratio is evaluated on the training block too
            for side in (0, 1):
                extra = GridCounts.empty(grid.size)
                extra.add_scores(grid, book.scores(idx, fitted[idx], side, 0, splits.n_train))
                pair[side].add(extra)
        le0, le1 = pair[0].at_most(), pair[1].at_most()
        lt0, lt1 = pair[0].less(), pair[1].less()
        kf, kr = np.searchsorted(grid, chosen.forward), np.searchsorted(grid, chosen.reverse)
        b = eb.bound_from_counts(chosen, n_ev - le0[kf], le1[kf], lt1[kr], n_ev - lt0[kr], n_ev, n_ev)
        epsilons[idx] = float(b.epsilon)
        if best is None or b.epsilon > best[1].epsilon:
            best = (idx, b, j)
    idx, bound, j = best
    n_ev = sizes[j]
    fpr, fnr = (n_ev - counts.counts[j][0].at_most()) / n_ev, counts.counts[j][1].at_most() / n_ev
    by = np.lexsort((fnr, fpr))
    return Certificate(idx, bound, np.empty(0), np.empty(0), epsilons, size=n_ev,
                       vertices=(fpr[by], fnr[by])), counts


@dataclasses.dataclass(frozen=True)
class Curves:
    """The curves of a trade-off audit on :data:`ALPHA_GRID`.

    Attributes
    ----------
    curve : TradeoffCurve
        Empirical trade-off curve of the certified attacker's threshold tests.
    band : Band
        Simultaneous DKW band on the grid.
    claim_curve : ndarray
        f_{ε,δ} of the claim.
    exact_curve : ndarray or None
        The mechanism's exact curve, when known.
    """

    curve: TradeoffCurve
    band: Band
    claim_curve: np.ndarray
    exact_curve: np.ndarray | None


def trace_curves(certificate: Certificate, claim: PrivacyClaim, confidence: float, mechanism: Any, x: ArrayLike,
                 x_prime: ArrayLike, exact_curve: Callable | ArrayLike | None = None) -> Curves:
    """Stage *curves*: the empirical curve with its band, the claim's curve and the exact one.

    Parameters
    ----------
    certificate : Certificate
        The certified test (its evaluation scores give the empirical curve).
    claim : PrivacyClaim
        The claim (its f_{ε,δ}).
    confidence : float
        Level of the simultaneous band.
    mechanism, x, x_prime
        For the exact curve (:class:`~privaudit.mechanisms.protocol.HasExactTradeoff`).
    exact_curve : callable or array, optional
        Overrides the mechanism's curve.

    Returns
    -------
    Curves
    """
    n_eval = certificate.n_eval
    if certificate.vertices is not None:  # a streamed certification counted its vertices
        fpr, fnr = certificate.vertices
    else:
        fpr, fnr, _ = eb.empirical_curve(certificate.scores0, certificate.scores1, presorted=True)
    lower, upper = eb.dkw_band(fpr, fnr, n_eval, n_eval, ALPHA_GRID, confidence)
    claim_curve = tradeoff_curve(claim.epsilon, claim.delta, ALPHA_GRID)
    if exact_curve is None:
        exact = _exact_curve(mechanism, x, x_prime, ALPHA_GRID)
    else:
        exact = np.asarray(exact_curve(ALPHA_GRID) if callable(exact_curve) else exact_curve, dtype=float)
    return Curves(TradeoffCurve(fpr, fnr), Band(ALPHA_GRID.copy(), lower, upper, "DKW"), claim_curve, exact)


def _number(value: Any) -> float | None:
    """A float from a number or a JSON ``"inf"``/``"nan"`` string, else None (as the report reads numbers)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float | np.floating | np.integer):
        return float(value)
    return float(value) if isinstance(value, str) and value in ("inf", "-inf", "nan") else None


def _fnum(value: Any) -> str:
    """A scalar as the report writes it (4 significant digits, ∞, — for None)."""
    if value is None:
        return "—"
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    x = _number(value)
    if x is None:
        return str(value)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    return f"{x:.4g}"


def judge(claim: PrivacyClaim, epsilon_lb: float, delta: float, min_detectable_ratio: float | None = None, *,
          n_eval: int | None = None, confidence: float | None = None) -> tuple[str, str | None]:
    """Stage *judge*: the verdict of ε̲ (computed at ``delta``) against the claim: the one place it is decided.

    The audit (:func:`audit_tradeoff`) judges ε̲ alone; the ``tradeoff`` kind also passes the audit's
    stated power, so that a pass that could not have refuted the claim is ``"inconclusive"``.

    Parameters
    ----------
    claim : PrivacyClaim
        The claim under test.
    epsilon_lb : float
        The certified lower bound on ε.
    delta : float
        The δ at which ``epsilon_lb`` holds.
    min_detectable_ratio : float, optional
        The audit's stated power (:attr:`TradeoffAudit.min_detectable_ratio`); ``inf`` means even a perfect
        distinguisher could not lift ε̲ above the claim with this many releases, so a pass says nothing.
        None (or not a number): not considered.
    n_eval : int, optional
        Releases per hypothesis behind the test (quoted in the note of an uninformative pass).
    confidence : float, optional
        The bound's confidence (quoted in that note).

    Returns
    -------
    verdict : {"pass", "violation", "inconclusive"}
        "violation" iff ε̲ exceeds the claimed ε at a δ ≥ the claim's; "inconclusive" when it
        exceeds it at a smaller δ (not comparable: a smaller δ allows a larger ε), or when the
        pass is uninformative (``min_detectable_ratio`` infinite).
    note : str or None
        Why the verdict is not the plain comparison, when it is not.
    """
    exceeds = claim.is_private and epsilon_lb > claim.epsilon
    verdict = ("violation" if delta >= claim.delta else "inconclusive") if exceeds else "pass"
    note = None
    if exceeds and delta < claim.delta:
        note = (f"epsilon_lb was computed at delta={delta:g} < the claim's delta={claim.delta:g}: a smaller "
                "delta allows a larger epsilon, so exceeding the claimed epsilon there is not a violation")
    ratio = _number(min_detectable_ratio)
    if verdict == "pass" and ratio is not None and not math.isfinite(ratio):
        verdict = "inconclusive"
        note = (f"inconclusive: with n_eval = {n_eval} releases per hypothesis no ε̲ can exceed the claimed "
                f"ε = {_fnum(claim.epsilon)} at confidence {_fnum(confidence)}; the audit could not have "
                "refuted the claim (raise n)")
    return verdict, note


# --- the audit -----------------------------------------------------------------------------------
def _check_distinct(x: Any, x_prime: Any) -> None:
    """Refuse a pair of equal inputs: its releases share one law, and ε̲ = 0 would say nothing."""
    try:
        a, b = np.asarray(x), np.asarray(x_prime)
        same = a.dtype != object and b.dtype != object and a.shape == b.shape and \
            bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc" and b.dtype.kind in "fc"))
    except (TypeError, ValueError):  # inputs that are not arrays (a transcript, a dataset object)
        return
    if same:
        raise InvalidInputError(f"x and x_prime are the same input (x={short_repr(x)}, x_prime={short_repr(x_prime)}): "
                                "a trade-off audit needs two different inputs")


def audit_tradeoff(mechanism: Any, x: ArrayLike, x_prime: ArrayLike, *, n: int = 100_000, attacker: Any = None,
                   confidence: float = 0.95, estimator: str = "clopper-pearson", selection: str = "split",
                   rng: RandomLike = None, delta: float | None = None, claim: PrivacyClaim | None = None,
                   target: str | None = None, selection_fraction: float = 0.2, train_fraction: float = 0.2,
                   n_thresholds: int = 256, exact_curve: Callable | ArrayLike | None = None,
                   epsilon_exact: float | None = None, assume_gaussian: bool = False,
                   adjacency: str = "check", chunk_size: int | None = None, n_jobs: int | None = 1,
                   progress: bool | None = None) -> TradeoffAudit:
    """Audit ``mechanism`` on the pair (x, x′) by hypothesis testing.

    The audit is the pipeline :func:`plan_splits` → :func:`draw_releases` →
    :func:`fit_attackers` → :func:`select_attackers` → :func:`certify` →
    :func:`trace_curves` → :func:`judge`.

    Large audits are streamed (:func:`certify_streamed`, :mod:`privaudit.audit.engines.streaming`):
    when the releases of both inputs would exceed
    :data:`~privaudit.audit.engines.streaming.STREAM_BYTES` in memory (n × size(x) × 16 bytes), or
    when ``chunk_size`` is given, only the train and selection blocks are drawn in memory; the
    evaluation block is drawn in keyed blocks of
    :data:`~privaudit.audit.engines.streaming.STREAM_BLOCK` releases, scored and counted chunk by
    chunk, so peak memory does not grow with ``n``. A streamed audit's numbers depend on its seed
    only (not on ``chunk_size`` nor ``n_jobs``), but they are not the in-memory audit's at the same
    seed: the in-memory path draws all ``n`` releases of an input in one call, and keeps doing so
    below the threshold so that every committed report stays as it is (``docs/streaming.md``).

    Parameters
    ----------
    mechanism : object with ``claim`` and ``sample(x, n, rng)``
        Anything satisfying :class:`privaudit.mechanisms.Mechanism`.
    x, x_prime : array-like
        The neighbouring inputs (null and alternative).
    n : int
        Releases per hypothesis (split into train/select/eval); at least :data:`MIN_N`.
    attacker : str, class, instance, list of those, or None
        None runs the black-box-first default suite (:func:`default_attackers`): the
        exact likelihood ratio when the mechanism has ``log_density`` *together with*
        the generic suite (atoms, lattices and near-atoms, bit patterns, projection,
        classifiers) and, for a declared Laplace ``scale``, the numpy-Laplace
        reachability attacker. An implementation bug that the declared density does
        not describe is therefore still caught. With several attackers the best on the
        selection split is certified on the held-out evaluation split: one test is
        evaluated, so no multiplicity correction is needed.
    confidence : float
        Confidence c of ε̲ and of the band.
    estimator : {"clopper-pearson", "gdp"}
        ``"gdp"`` assumes the mechanism's trade-off curve is Gaussian (Nasr et al.
        2023); it is accepted only when the claim carries ``mu`` or
        ``assume_gaussian=True``.
    selection : {"split", "bonferroni"}
        Threshold chosen on the selection split, or best of the candidates with a
        Bonferroni correction.
    rng : int, Generator, SeedSequence or None
        Root randomness; the result records the integer seed that reproduces the audit.
    delta : float, optional
        δ at which ε is bounded; default the claim's δ. A "violation" needs δ ≥ the claim's δ.
    claim : PrivacyClaim, optional
        Claim to test; default ``mechanism.claim``.
    target : str, optional
        Name shown in reports; default ``repr(mechanism)``.
    selection_fraction, train_fraction : float
        Shares of the n releases per hypothesis used to choose the attacker and
        threshold (default 0.2, at most :data:`MAX_SELECT` releases) and, only when an
        attacker must be fitted, to fit it (default 0.2, at most :data:`MAX_TRAIN`
        releases); the rest is the evaluation
        split. Attackers that need no training never cost a training split.
    n_thresholds : int
        Candidate thresholds (pooled-score quantiles of the selection split).
    exact_curve : callable or array, optional
        Exact trade-off curve (callable of α, or values on :data:`ALPHA_GRID`),
        overriding ``mechanism.tradeoff``.
    epsilon_exact : float, optional
        Exact ε at δ, overriding ``mechanism.exact_epsilon(delta)``.
    assume_gaussian : bool
        The caller asserts the release's trade-off curve is Gaussian (allows "gdp").
    adjacency : {"check", "group", "ignore"}
        ``"check"``: a pair that is not adjacent under ``claim.adjacency`` is an error;
        ``"group"``: it is audited against the group-privacy claim of its distance;
        ``"ignore"``: no check (pairs of a derived release, e.g. a transcript).
    chunk_size : int, optional
        Stream the evaluation split in chunks of this many releases per input (a positive multiple
        of :data:`~privaudit.audit.engines.streaming.STREAM_BLOCK`). Default: stream only above the
        memory threshold, in chunks of ``DEFAULT_CHUNK_BLOCKS`` blocks.
    n_jobs : int or None
        joblib workers over the streamed chunks (1: this process; -1: every core); the counts are
        integers added exactly, so the result does not depend on it. Ignored in memory.
    progress : bool or None
        A tqdm bar over the streamed chunks; None: when standard error is a terminal.

    Returns
    -------
    TradeoffAudit
    """
    if claim is None:
        claim = claim_of(mechanism, required=True)
    elif not isinstance(claim, PrivacyClaim):
        raise ClaimTypeError(f"claim must be a PrivacyClaim, got claim={claim!r:.200} ({type(claim).__name__})")
    if not callable(getattr(mechanism, "sample", None)):
        raise InvalidParameterError(f"mechanism must have a sample(x, n, rng) method, got {type(mechanism).__name__}")
    n = check_size("n", n, minimum=MIN_N)
    confidence = check_interval("confidence", confidence, 0.0, 1.0)
    if estimator not in ESTIMATORS:
        raise InvalidParameterError(f"estimator must be one of {ESTIMATORS}, got estimator={estimator!r}")
    if selection not in eb.SELECTIONS:
        raise InvalidParameterError(f"selection must be one of {eb.SELECTIONS}, got selection={selection!r}")
    claim, pair_note = adjacent_claim(claim, x, x_prime, mode=adjacency)
    _check_distinct(x, x_prime)
    _check_gdp(estimator, claim, assume_gaussian)
    delta = claim.delta if delta is None else check_delta(delta, allow_zero=True)
    check_interval("selection_fraction", selection_fraction, 0.0, 1.0)
    check_interval("train_fraction", train_fraction, 0.0, 1.0, closed="left")
    streamed = chunk_size is not None or stream_needed(n, x)
    chunk_size = STREAM_BLOCK * DEFAULT_CHUNK_BLOCKS if chunk_size is None else check_chunk_size(chunk_size)
    root, seed = resolve_seed(rng)
    ss_sample0, ss_sample1, ss_attack = root.spawn(3)

    specs = default_attackers(mechanism) if attacker is None else (
        list(attacker) if isinstance(attacker, list | tuple) else [attacker])
    if not specs:
        raise InvalidParameterError(f"attacker must be None (the default suite), an attacker or a non-empty list of "
                                    f"them, got attacker={attacker!r}")
    attackers = [make_attacker(s, random_state=np.random.default_rng(child))
                 for s, child in zip(specs, ss_attack.spawn(len(specs)))]
    splits = plan_splits(n, any(distinguisher_traits(a).requires_training for a in attackers),
                         selection_fraction, train_fraction)
    # Streamed: the train and selection blocks only, in memory (the evaluation block is drawn in keyed chunks).
    releases = draw_releases(mechanism, x, x_prime, splits.n_train + splits.n_select if streamed else n,
                             ss_sample0, ss_sample1)
    with single_threaded_blas():  # the classifiers' products are too small to pay for BLAS threads
        fitted = fit_attackers(attackers, releases, splits, mechanism, x, x_prime)
    book = _score_book(releases)  # every attacker scores a row at most once
    order, forced = select_attackers(fitted, releases, splits, delta=delta, confidence=confidence,
                                     estimator=estimator, n_thresholds=n_thresholds, book=book)
    if streamed:
        cert, counts = certify_streamed(fitted, order, forced, releases, splits, mechanism=mechanism, x=x,
                                        x_prime=x_prime, seeds=(ss_sample0, ss_sample1), delta=delta,
                                        confidence=confidence, selection=selection, estimator=estimator,
                                        n_thresholds=n_thresholds, chunk_size=chunk_size, book=book,
                                        n_jobs=n_jobs, progress=progress)
        leaks = _streamed_leaks(releases.leaks, splits, counts)
    else:
        cert = certify(fitted, order, forced, releases, splits, delta=delta, confidence=confidence,
                       selection=selection, estimator=estimator, n_thresholds=n_thresholds, book=book)
        leaks = releases.leaks
    del releases, book  # the releases can be large; only the certified scores are needed from here on
    curves = trace_curves(cert, claim, confidence, mechanism, x, x_prime, exact_curve)
    eps_exact = _exact_epsilon(mechanism, delta) if epsilon_exact is None else float(epsilon_exact)
    rate = cert.bound

    notes, assumptions = _notes(estimator, selection, claim, delta, len(fitted), len(order), assume_gaussian, leaks)
    if pair_note:
        notes.append(pair_note)
    if streamed:
        assumptions.append(f"evaluation releases streamed: drawn in keyed blocks of {STREAM_BLOCK} per input and "
                           "counted at thresholds fixed on the selection split (the curve's vertices are the "
                           "evaluation rates at those thresholds)")
    if forced is not None:
        assumptions.append("the exact likelihood ratio takes one certified place whatever the ranking and trains on "
                           "nothing, so it is evaluated on the training releases as well as the held-out ones")
    verdict, note = judge(claim, rate.epsilon, delta)
    if note:
        notes.append(note)
    return TradeoffAudit(
        target=target or stable_repr(mechanism),
        attackers=AttackerChoice(attacker_name(fitted[cert.index]), tuple(attacker_name(a) for a in fitted),
                                 by_family(fitted, cert)),
        claim=claim, bound=EpsilonBound(estimator, selection, rate.epsilon, rate.mu, delta, confidence),
        epsilon_exact=eps_exact, verdict=verdict, sizes=SampleSizes.of(splits, cert.n_eval), seed=seed,
        operating_point=OperatingPoint.of(rate), curves=curves, notes=tuple(notes), assumptions=tuple(assumptions),
        min_detectable_ratio=certified_test_ratio(claim.epsilon, delta, rate, mu=claim.mu), leaks=leaks,
    )


def _streamed_leaks(head: dict, splits: Splits, counts: ChunkCounts) -> dict:
    """The leaks of all ``n`` releases from those of the train and selection blocks and the streamed counts."""
    m = splits.n_train + splits.n_select
    out = dict(head)
    for side, key in enumerate(("nonfinite_fraction_x", "nonfinite_fraction_x_prime")):
        rows = int(round(head[key] * m)) + counts.nonfinite[side]  # head[key] is k/m: the round trip is exact
        out[key] = rows / splits.n if rows else 0.0
    return out


def by_family(fitted: list, certificate: Certificate) -> dict[str, FamilyBound]:
    """The best certified ε̲ of each leak family among ``fitted`` (:attr:`TradeoffAudit.families`).

    Parameters
    ----------
    fitted : list of Distinguisher
        The attackers the audit ran.
    certificate : Certificate
        Their certification (:func:`certify`): ε̲ of each certified attacker.

    Returns
    -------
    dict of str to FamilyBound
        The bound of each family among ``fitted``, in the order of
        :data:`~privaudit.attacks.protocol.LEAK_FAMILIES`; a family none of whose attackers was
        certified has ε̲ 0 (the trivial bound) and no attacker.
    """
    out = {}
    for family in LEAK_FAMILIES:
        members = [i for i, a in enumerate(fitted) if leak_family(a) == family]
        if not members:
            continue
        tested = [(certificate.epsilons[i], -i) for i in members if i in certificate.epsilons]
        if tested:
            eps, neg = max(tested)
            out[family] = FamilyBound(eps, attacker_name(fitted[-neg]), True)
        else:
            out[family] = FamilyBound(0.0, None, False)
    return out


def _notes(estimator, selection, claim, delta, n_attackers, n_certified, assume_gaussian, leaks):
    """Caveats (notes) and what ε̲ rests on (assumptions)."""
    notes, assumptions = [], []
    if estimator == "gdp":
        why = "the claim carries mu" if claim.mu is not None and not assume_gaussian else "assume_gaussian=True"
        assumptions.append(f"GDP estimator: assumes the trade-off curve is Gaussian (G_mu) ({why}); "
                           "for a non-Gaussian mechanism epsilon_lb may exceed the true epsilon")
    else:
        assumptions.append("Clopper-Pearson bounds on both error rates (exact binomial, no distributional assumption)")
    if selection == "split":
        k = n_certified
        assumptions.append(f"attackers ranked (of {n_attackers}) and thresholds chosen on a separate selection "
                           f"split; {k} evaluated on held-out releases (the top ones and the best of each other leak "
                           f"family with evidence), each at confidence 1 - (1 - c)/{k} (Bonferroni), so the reported "
                           "maximum and each family's epsilon_lb hold together at confidence c")
    else:
        assumptions.append("Bonferroni correction over the candidate thresholds of the attacker chosen on the "
                           "selection split")
    if not claim.is_private:
        notes.append("the claim is epsilon = inf: nothing to violate")
    if leaks["shape_differs"]:
        notes.append("the output shape depends on the input: a perfect leak (padded with NaN for the attackers)")
    if leaks["nonfinite_fraction_x"] != leaks["nonfinite_fraction_x_prime"]:
        notes.append(f"non-finite outputs: {leaks['nonfinite_fraction_x']:.3g} of releases under x, "
                     f"{leaks['nonfinite_fraction_x_prime']:.3g} under x_prime")
    return notes, assumptions
