"""Reconstruction audit: run an attacker against a release and hold its error against the bounds.

:func:`audit_reconstruction` draws n releases (of one fixed x, or of x ~ prior), lets an
attacker reconstruct x from each, and reports the MSE with a confidence interval, its
bias/variance split, its split along / orthogonal to the modulation vectors, and the
ratio MSE/bound for every bound that can be computed:

========================  ===================================  ===========================
bound (key in ``ratio``)  value                                 applies to
========================  ===================================  ===========================
``crb``                   tr(I⁻¹), I = information the          unbiased attackers
                          attacker can use (see ``information``)
``crb_phase_conditional`` E_φ tr(I(x | φ)⁻¹) (fresh known          reference only: attackers
                          phases; ≥ ``crb`` by convexity)        unbiased at every phase
``seed_bound``            d²/tr(I): seed 000 eq. (18)            unbiased attackers
``hcr``                   Hammersley–Chapman–Robbins             unbiased attackers
``van_trees``             tr((E_π I + J_π)⁻¹) (prior given)      every attacker
========================  ===================================  ===========================

A bound for unbiased attackers "applies" when the attacker is *exactly* unbiased in
the configuration (``is_unbiased``: e.g. naive inversion under fresh phases, any MLE
on a linear release) *and* a Hotelling test does not detect a bias at the audit's
confidence; van Trees applies to all. ``crb_phase_conditional`` is reported for
reference only (it binds attackers unbiased at every fixed phase, which a marginal
test cannot establish). The
verdict is ``"violation"`` when an applicable bound exceeds the upper confidence limit
of the MSE (the attacker does better than the theory allows), ``"pass"`` otherwise. A
bound beaten by an attacker it does not apply to (a biased attacker below the unbiased
CRB) is recorded in ``notes`` and in ``beaten``, never hidden.

With a :class:`~privaudit.attacks.priors.DiscretePrior` the audit measures exact
reconstruction instead (``rero``): the success rate with a Clopper–Pearson interval
against the ReRo bound 1 − f(κ).

Pipeline. :func:`audit_reconstruction` runs named stages, each a function that can be
tested alone: :func:`plan_setting` (what is audited), :func:`prepare_attacker` (select and
fit the attacker), :func:`draw_releases` (draw), :func:`reconstruct` (attack),
:func:`error_statistics` (measure), :func:`compute_bounds` or, under a finite prior,
:func:`exact_reconstruction` (bound) and :func:`judge` (verdict). The two curve
experiments built from the audit (:func:`mse_crb_curve`, :func:`composition_curve`) follow;
the bounds, the Fisher information and the attackers live in their own modules.

Capabilities. Releases, Fisher information and closed forms come from what a mechanism
declares (:mod:`privaudit.mechanisms.protocol`: ``ClosedFormRelease`` through
``closed_form_release``, ``HasBatchRelease``, ``HasFisherInformation``, ``HasExactTradeoff``), priors and
attackers from :mod:`privaudit.attacks.protocol` (``FinitePrior``, ``Reconstructor``,
:func:`~privaudit.attacks.protocol.declares_unbiased`): never from a concrete class, so a
third-party mechanism that implements a protocol gets the built-in's audit.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import ndtri

from privaudit.attacks.protocol import FinitePrior, Reconstructor, declares_unbiased
from privaudit.attacks.registry import available_attacks, get_attack
from privaudit.mechanisms.protocol import HasBatchRelease, HasExactTradeoff, closed_form_release, release_law
from privaudit.mechanisms.randomness import RandomLike, draw_seed, resolve_seed
from privaudit.mechanisms.validation import (
    InvalidInputError,
    InvalidParameterError,
    check_array,
    check_int,
    check_interval,
    check_positive,
)

from privaudit.audit.stats.estimation_bounds import crb as crb_of
from privaudit.audit.stats.estimation_bounds import hammersley_chapman_robbins, rero_bound, rero_mu, seed_trace_bound, van_trees
from privaudit.attacks.reconstruction import as_rounds

from privaudit.audit.stats.epsilon_bounds import clopper_pearson_lower, clopper_pearson_upper
from privaudit.audit.stats.fisher import release_fisher
from privaudit.audit.stats.hotelling import hotelling_test
from privaudit.audit.results import AuditResult, ExperimentResult, ItemAccess, from_jsonable, stable_repr, to_jsonable
from privaudit.audit.verdicts import Verdict

#: Bounds that hold only for unbiased attackers.
UNBIASED_BOUNDS = ("crb", "seed_bound", "hcr")
#: Bounds reported for reference only: E_φ tr(I(x | φ)⁻¹) holds for attackers unbiased at
#: *every* fixed phase, which a marginal bias test cannot establish (naive inversion is
#: unbiased only on average over φ and legitimately goes below it).
REFERENCE_BOUNDS = ("crb_phase_conditional",)
#: Draws of (x, φ) used to average x- or phase-dependent CRBs.
_N_BOUND_MC = 2000


@dataclasses.dataclass(frozen=True)
class AuditedSetting:
    """What a reconstruction audit ran on, as its report states it.

    Attributes
    ----------
    dim : int
        Input dimension d.
    rounds : int
        Number T of releases per client.
    information : str
        What the attacker saw of the phases: ``"known"`` (fresh, revealed), ``"hidden"``
        (marginalised) or ``"fixed"`` (one known phase for all releases).
    side_info : bool
        Whether the public response y was given to the attacker.
    prior : str or None
        The prior x was drawn from (``repr``; None: a fixed x, stored in ``x``).
    x : list of float or None
        The fixed input.
    """

    dim: int
    rounds: int
    information: str
    side_info: bool
    prior: str | None
    x: list | None

    @classmethod
    def of(cls, setting: Setting) -> AuditedSetting:
        """The report's description of the stage's :class:`Setting`.

        Parameters
        ----------
        setting : Setting
            What :func:`plan_setting` resolved.

        Returns
        -------
        AuditedSetting
        """
        return cls(setting.dim, len(setting.rounds), setting.information, setting.side_info,
                   None if setting.prior is None else repr(setting.prior),
                   None if setting.x is None else setting.x.tolist())


def _entry_value(owner: str, data: Mapping[str, Any], key: str, default: Any = dataclasses.MISSING) -> Any:
    """``data[key]``, or ``default``; a missing key without one is named."""
    if key in data:
        return data[key]
    if default is dataclasses.MISSING:
        raise ValueError(f"{owner}.from_dict: missing field {key!r}")
    return default


def _built(owner: str, name: str, make: Callable[[], Any]) -> Any:
    """``make()``, its refusal (a value a sub-result's checks reject) named as the entry's field ``name``."""
    try:
        return make()
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{owner}.from_dict: field {name!r}: {exc}") from None


@dataclasses.dataclass(frozen=True)
class ReconstructionAudit(AuditResult):
    """Result of :func:`audit_reconstruction` (``kind = "reconstruction"``), built from its stages' sub-results.

    All errors are *total* squared errors E‖x̂ − x‖² (sum over the d coordinates). The report
    entry is flat and its keys are stable: :meth:`to_dict` writes them, in order, and
    :meth:`from_dict` rebuilds the sub-results from them. The flat names are properties written
    out below: ``dim``, ``rounds``, ``information``, ``side_info``, ``prior``, ``x`` (of
    :attr:`setting`); ``mse``, ``mse_ci``, ``bias`` (a list), ``bias_sq``, ``variance``,
    ``bias_p_value``, ``mse_along``, ``mse_orth`` (of :attr:`error`); ``crb``,
    ``crb_phase_conditional``, ``seed_bound``, ``hcr``, ``van_trees``, ``crb_along``,
    ``crb_orth`` (of :attr:`bounds`); ``ratio``, ``ratio_ci``, ``applies``, ``beaten`` (of
    :attr:`comparison`).

    Attributes
    ----------
    target, attacker : str
        Mechanism description and registered attacker name.
    n, seed, confidence : int, int | None, float
        Audited releases, root seed (always an int that reproduces the audit), two-sided CI level.
    setting : AuditedSetting
        The input dimension, the number of rounds, what the attacker saw of the phases, whether
        it had the public response, and the prior or the fixed input.
    error : ErrorStatistics
        The attacker's MSE with its interval, its bias and the bias test, its split along the
        modulation vectors.
    bounds : Bounds
        The bounds computed (see the module table; ``None`` when not computed).
    comparison : BoundComparison
        MSE/bound with its interval for every computed bound, whether each applies to this
        attacker, and which the attacker beats.
    attacker_unbiased : bool
        Whether the attacker is exactly unbiased in this configuration.
    rero : ExactReconstruction or None
        Exact-reconstruction audit under a discrete prior.
    verdict : str
        ``"violation"`` if an applicable bound is beaten, else ``"pass"``.
    notes : list of str
        Plain-language findings (e.g. a biased attacker below the unbiased CRB).
    """

    kind: ClassVar[str] = "reconstruction"
    target: str
    attacker: str
    n: int
    seed: int | None
    confidence: float
    setting: AuditedSetting
    error: ErrorStatistics
    bounds: Bounds
    comparison: BoundComparison
    attacker_unbiased: bool
    rero: ExactReconstruction | None
    verdict: Verdict
    notes: list

    # --- the report entry (stable keys: reports, caches and their readers rely on them) ------------
    def to_dict(self) -> dict[str, Any]:
        """The report entry, flat.

        Returns
        -------
        dict
            JSON-safe: ``kind``, ``target``, ``attacker``, ``n``, ``seed``, ``confidence``, ``dim``,
            ``rounds``, ``information``, ``side_info``, ``prior``, ``x``, ``mse``, ``mse_ci``, ``bias``,
            ``bias_sq``, ``variance``, ``bias_p_value``, ``mse_along``, ``mse_orth``, ``crb_along``,
            ``crb_orth``, ``crb``, ``crb_phase_conditional``, ``seed_bound``, ``hcr``, ``van_trees``,
            ``ratio``, ``ratio_ci``, ``applies``, ``beaten``, ``attacker_unbiased``, ``rero``, ``verdict``,
            ``notes`` (:func:`to_dict_fields`).
        """
        s, e, b, c = self.setting, self.error, self.bounds, self.comparison
        entry = {
            "kind": self.kind, "target": self.target, "attacker": self.attacker, "n": self.n, "seed": self.seed,
            "confidence": self.confidence, "dim": s.dim, "rounds": s.rounds, "information": s.information,
            "side_info": s.side_info, "prior": s.prior, "x": s.x, "mse": e.mse, "mse_ci": e.mse_ci, "bias": e.bias,
            "bias_sq": e.bias_sq, "variance": e.variance, "bias_p_value": e.bias_p_value, "mse_along": e.mse_along,
            "mse_orth": e.mse_orth, "crb_along": b.crb_along, "crb_orth": b.crb_orth, "crb": b.crb,
            "crb_phase_conditional": b.crb_phase_conditional, "seed_bound": b.seed_bound, "hcr": b.hcr,
            "van_trees": b.van_trees, "ratio": c.ratio, "ratio_ci": c.ratio_ci, "applies": c.applies,
            "beaten": c.beaten, "attacker_unbiased": self.attacker_unbiased, "rero": self.rero,
            "verdict": self.verdict, "notes": self.notes,
        }
        return {key: to_jsonable(value) for key, value in entry.items()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ReconstructionAudit:
        """The result whose :meth:`to_dict` is ``data`` (extra keys, e.g. a report entry's, are ignored).

        Parameters
        ----------
        data : mapping
            A result's :meth:`to_dict` (or a report entry). A bound's key may be left out (not computed).

        Returns
        -------
        ReconstructionAudit

        Raises
        ------
        ValueError
            Another kind, a missing key (named), or a value a sub-result refuses (named by the
            sub-result: ``'error'``, ``'comparison'``, ``'rero'``, ...).
        """
        name = cls.__name__
        if not isinstance(data, Mapping):
            raise TypeError(f"{name}.from_dict needs a mapping, got {type(data).__name__}")
        if data.get("kind", cls.kind) != cls.kind:
            raise ValueError(f"{name}.from_dict needs kind {cls.kind!r}, got kind={data.get('kind')!r}")

        def get(key: str, default: Any = dataclasses.MISSING) -> Any:
            return _entry_value(name, data, key, default)

        def number(key: str, default: Any = dataclasses.MISSING) -> Any:
            value = get(key, default)
            return _built(name, key, lambda: from_jsonable(float | None, value))

        setting = AuditedSetting(get("dim"), get("rounds"), get("information"), get("side_info"), get("prior"),
                                 get("x"))
        mse, mse_ci, bias = number("mse"), get("mse_ci"), get("bias")
        parts = [number(key) for key in ("bias_sq", "variance", "bias_p_value", "mse_along", "mse_orth")]
        error = _built(name, "error", lambda: ErrorStatistics(mse, from_jsonable(tuple, mse_ci),
                                                              from_jsonable(np.ndarray, bias), *parts))
        bounds = Bounds(*(number(key, None) for key in ("crb_along", "crb_orth", "crb", "crb_phase_conditional",
                                                         "seed_bound", "hcr", "van_trees")))
        compared = [get(key) for key in ("ratio", "ratio_ci", "applies", "beaten")]
        comparison = _built(name, "comparison", lambda: BoundComparison(*compared))
        exact = get("rero")
        rero = _built(name, "rero", lambda: from_jsonable(ExactReconstruction | None, exact))
        return cls(target=get("target"), attacker=get("attacker"), n=get("n"), seed=get("seed"),
                   confidence=number("confidence"), setting=setting, error=error, bounds=bounds,
                   comparison=comparison, attacker_unbiased=get("attacker_unbiased"), rero=rero,
                   verdict=get("verdict"), notes=get("notes"))

    # --- the flat names of the entry, read from the sub-results ----------------------------------------
    @property
    def dim(self) -> int:
        """Input dimension d (``setting.dim``)."""
        return self.setting.dim

    @property
    def rounds(self) -> int:
        """Releases per client T (``setting.rounds``)."""
        return self.setting.rounds

    @property
    def information(self) -> str:
        """What the attacker saw of the phases: known, hidden or fixed (``setting.information``)."""
        return self.setting.information

    @property
    def side_info(self) -> bool:
        """Whether the public response was given to the attacker (``setting.side_info``)."""
        return self.setting.side_info

    @property
    def prior(self) -> str | None:
        """The prior x was drawn from, None for a fixed x (``setting.prior``)."""
        return self.setting.prior

    @property
    def x(self) -> list | None:
        """The fixed input, None under a prior (``setting.x``)."""
        return self.setting.x

    @property
    def mse(self) -> float:
        """Mean of ‖x̂ − x‖² (``error.mse``)."""
        return self.error.mse

    @property
    def mse_ci(self) -> tuple:
        """The MSE's two-sided interval (``error.mse_ci``)."""
        return self.error.mse_ci

    @property
    def bias(self) -> list[float]:
        """Mean error E[x̂ − x] per coordinate (``error.bias`` as a list, as the report writes it)."""
        return self.error.bias.tolist()

    @property
    def bias_sq(self) -> float:
        """Unbiased estimate of ‖E[x̂ − x]‖² (``error.bias_sq``)."""
        return self.error.bias_sq

    @property
    def variance(self) -> float:
        """The variance part of the MSE (``error.variance``)."""
        return self.error.variance

    @property
    def bias_p_value(self) -> float:
        """Hotelling T² p-value of no bias (``error.bias_p_value``)."""
        return self.error.bias_p_value

    @property
    def mse_along(self) -> float | None:
        """Error along the shared modulation vectors (``error.mse_along``)."""
        return self.error.mse_along

    @property
    def mse_orth(self) -> float | None:
        """Error orthogonal to the shared modulation vectors (``error.mse_orth``)."""
        return self.error.mse_orth

    @property
    def crb_along(self) -> float | None:
        """tr(I⁻¹) along the shared modulation vectors (``bounds.crb_along``)."""
        return self.bounds.crb_along

    @property
    def crb_orth(self) -> float | None:
        """tr(I⁻¹) orthogonal to the shared modulation vectors (``bounds.crb_orth``)."""
        return self.bounds.crb_orth

    @property
    def crb(self) -> float | None:
        """The unbiased Cramér–Rao bound tr(I⁻¹) (``bounds.crb``)."""
        return self.bounds.crb

    @property
    def crb_phase_conditional(self) -> float | None:
        """E_φ tr(I(x | φ)⁻¹), reference only (``bounds.crb_phase_conditional``)."""
        return self.bounds.crb_phase_conditional

    @property
    def seed_bound(self) -> float | None:
        """Seed 000's trace form d²/tr(I) (``bounds.seed_bound``)."""
        return self.bounds.seed_bound

    @property
    def hcr(self) -> float | None:
        """The Hammersley–Chapman–Robbins bound (``bounds.hcr``)."""
        return self.bounds.hcr

    @property
    def van_trees(self) -> float | None:
        """The van Trees bound, under a prior (``bounds.van_trees``)."""
        return self.bounds.van_trees

    @property
    def ratio(self) -> dict:
        """Bound → MSE/bound (``comparison.ratio``)."""
        return self.comparison.ratio

    @property
    def ratio_ci(self) -> dict:
        """Bound → interval of MSE/bound (``comparison.ratio_ci``)."""
        return self.comparison.ratio_ci

    @property
    def applies(self) -> dict:
        """Bound → whether it binds this attacker (``comparison.applies``)."""
        return self.comparison.applies

    @property
    def beaten(self) -> list:
        """Bounds above the MSE's upper confidence limit (``comparison.beaten``)."""
        return self.comparison.beaten


#: The keys of a reconstruction audit's report entry after ``kind``, in order (:meth:`ReconstructionAudit.to_dict`).
_ENTRY_KEYS = ("target", "attacker", "n", "seed", "confidence", "dim", "rounds", "information", "side_info", "prior",
               "x", "mse", "mse_ci", "bias", "bias_sq", "variance", "bias_p_value", "mse_along", "mse_orth",
               "crb_along", "crb_orth", "crb", "crb_phase_conditional", "seed_bound", "hcr", "van_trees", "ratio",
               "ratio_ci", "applies", "beaten", "attacker_unbiased", "rero", "verdict", "notes")


# --- helpers ----------------------------------------------------------------------------------------
def _resolve_attacker(attacker, rounds, prior, phase_known, side_info):
    """(name, instance-or-class) for ``attacker`` (None → strongest applicable)."""
    mech = rounds if len(rounds) > 1 else rounds[0]
    if attacker is None:
        cands = [
            (cls.strength, name, cls) for name, cls in available_attacks("reconstruction").items()
            if cls.applicable(mech, prior=prior, phase_known=phase_known, side_info=side_info)
        ]
        if not cands:
            raise InvalidParameterError(f"no registered reconstruction attacker applies to {mech!r}")
        _, name, cls = max(cands, key=lambda c: (c[0], c[1]))
        return name, cls
    if isinstance(attacker, str):
        cls = get_attack(attacker)
        if cls.kind != "reconstruction":
            raise InvalidParameterError(f"attacker {attacker!r} is a {cls.kind!r} attack, not a reconstruction attack")
        return attacker, cls
    if isinstance(attacker, type):
        return getattr(attacker, "__name__", "attacker"), attacker
    if isinstance(attacker, Reconstructor):
        names = [n for n, c in available_attacks("reconstruction").items() if type(attacker) is c]
        return (names[0] if names else type(attacker).__name__), attacker
    raise InvalidParameterError(f"attacker must be None, a registered name, a class or an object with reconstruct; got {attacker!r}")


def _release(rounds, X, phases, rng) -> np.ndarray:
    """Outputs (n, T, k): one release per row of X and per round, dispatched on what each round declares."""
    n, d = X.shape
    outs = []
    for t, m in enumerate(rounds):
        release = closed_form_release(m)
        if release is not None:
            outs.append(release.release_batch(X, rng, phase=phases[:, t, : release.release_law().n_vectors]))
        elif isinstance(m, HasBatchRelease):
            outs.append(np.asarray(m.release(X, rng), dtype=float))
        elif np.all(X == X[0]):
            outs.append(np.asarray(m.sample(X[0], n, rng), dtype=float).reshape(n, -1))
        else:  # generic mechanism without a vectorised release: one call per client.
            outs.append(np.concatenate([np.asarray(m.sample(x, 1, rng), dtype=float).reshape(1, -1) for x in X]))
    return np.stack(outs, axis=1)


def _shared_basis(rounds) -> np.ndarray | None:
    """The modulation vectors when every round has the same ones (None otherwise, or without any)."""
    laws = [release_law(m) for m in rounds]
    mods = [law for law in laws if law is not None and law.n_vectors > 0]
    if not mods or len(mods) != len(rounds):
        return None
    b = mods[0].basis
    return b if all(np.allclose(law.basis, b) for law in mods) else None


def _target_name(rounds) -> str:
    return stable_repr(rounds[0]) if len(rounds) == 1 else f"{len(rounds)} rounds of {stable_repr(rounds[0])}"


# --- the stages of the audit ---------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Setting:
    """What is audited: the rounds, the input (fixed x or a prior), the side information and the phases.

    Attributes
    ----------
    rounds : list
        The T releases per client.
    dim : int
        Input dimension d.
    x : ndarray (d,) or None
        The fixed input (None under a prior).
    prior : object or None
        The prior x is drawn from.
    beta, sigma_y : ndarray, float or None
        The public response y = xᵀβ + N(0, σ_y²), when given.
    information : {"known", "hidden", "fixed"}
        What the attacker sees of the phases.
    fixed : ndarray (T, m) or None
        The fixed phases (``information == "fixed"``).
    m_max : int
        Largest number of modulation vectors of a round (0 without modulation).
    """

    rounds: list
    dim: int
    x: np.ndarray | None
    prior: object
    beta: np.ndarray | None
    sigma_y: float | None
    information: str
    fixed: np.ndarray | None
    m_max: int

    @property
    def side_info(self) -> bool:
        """Whether the public response is given to the attacker."""
        return self.beta is not None

    @property
    def phase_known(self) -> bool:
        return self.information != "hidden"

    @property
    def mechanism(self) -> Any:
        """The release as attackers take it: one mechanism, or the list of rounds.
        """
        return self.rounds if len(self.rounds) > 1 else self.rounds[0]


def plan_setting(mechanism: Any, x: ArrayLike | None = None, prior: Any = None, phase: Any = "known",
                 beta: ArrayLike | None = None, sigma_y: float | None = None) -> Setting:
    """Stage *setting*: validate what is audited and resolve the dimension, the input and the phases.

    Parameters
    ----------
    mechanism, x, prior, phase, beta, sigma_y
        As in :func:`audit_reconstruction`.

    Returns
    -------
    Setting

    Raises
    ------
    InvalidParameterError
        When the dimension cannot be inferred, when both x and a prior are given, or for
        an unknown ``phase``.
    InvalidInputError
        When fixed phases have the wrong shape.
    """
    rounds = as_rounds(mechanism)
    dims = {m.dim for m in rounds if hasattr(m, "dim")}
    if prior is not None:
        d = prior.dim
    elif x is not None:
        d = np.asarray(x).size
    elif dims:
        d = dims.pop()
    else:
        raise InvalidParameterError("cannot infer the input dimension: pass x or prior")
    if x is not None and prior is not None:
        raise InvalidParameterError("pass either a fixed x or a prior, not both")
    if x is None and prior is None:
        x = np.full(d, 1 / math.sqrt(d))
    if x is not None:
        x = check_array("x", x, ndim=1, dim=d)
    if beta is not None:
        beta = check_array("beta", beta, ndim=1, dim=d)
        sigma_y = check_positive("sigma_y", sigma_y)

    m_max = max([law.n_vectors for law in map(release_law, rounds) if law is not None], default=0)
    if isinstance(phase, str):
        if phase not in ("known", "hidden"):
            raise InvalidParameterError(f"phase must be 'known', 'hidden' or an array, got phase={phase!r}")
        information, fixed = phase, None
    else:
        fixed = check_array("phase", phase, ndim=(1, 2))
        fixed = np.broadcast_to(fixed, (len(rounds), fixed.shape[-1])) if fixed.ndim == 1 else fixed
        if fixed.shape != (len(rounds), m_max):
            raise InvalidInputError(f"phase must have shape ({m_max},) or ({len(rounds)}, {m_max}), got {np.shape(phase)}")
        information = "fixed"
    return Setting(rounds, d, x, prior, beta, sigma_y, information, fixed, m_max)


def _phases(setting: Setting, n: int, gen: np.random.Generator) -> np.ndarray:
    """Phases (n, T, m): the fixed ones broadcast, else fresh uniform draws."""
    shape = (n, len(setting.rounds), setting.m_max)
    return np.broadcast_to(setting.fixed[None], shape) if setting.fixed is not None else gen.random(shape) * (2 * np.pi)


def prepare_attacker(attacker: Any, setting: Setting, n: int, gen: np.random.Generator) -> tuple[str, object]:
    """Stage *select*: resolve the attacker; build a class and fit it on a population split of its own.

    Parameters
    ----------
    attacker : None, str, class or instance
        As in :func:`audit_reconstruction`.
    setting : Setting
        What is audited.
    n : int
        Size of the population split of an attacker that learns (``fit``).
    gen : Generator
        Randomness of the attacker and of its population split.

    Returns
    -------
    name : str
        Registered name (or class name).
    attacker : Reconstructor
        Ready to reconstruct.
    """
    name, att = _resolve_attacker(attacker, setting.rounds, setting.prior, setting.phase_known, setting.side_info)
    if isinstance(att, type):
        att = att(setting.mechanism, prior=setting.prior, beta=setting.beta, sigma_y=setting.sigma_y,
                  random_state=draw_seed(gen))
        if hasattr(att, "fit"):
            if setting.prior is None:
                raise InvalidParameterError(f"attacker {name!r} learns from a population split and needs a prior")
            xf = setting.prior.sample(n, gen)
            pf = setting.fixed[None] if setting.fixed is not None else \
                gen.random((n, len(setting.rounds), setting.m_max)) * 2 * np.pi
            of = _release(setting.rounds, xf, np.broadcast_to(pf, (n, len(setting.rounds), setting.m_max)), gen)
            att.fit(of[:, 0] if len(setting.rounds) == 1 else of)
    return name, att


@dataclasses.dataclass(frozen=True)
class Draws:
    """The audited releases: inputs ``X`` (n, d), phases (n, T, m), outputs (n, T, k), responses ``y``."""

    X: np.ndarray
    phases: np.ndarray
    outputs: np.ndarray
    y: np.ndarray | None


def draw_releases(setting: Setting, n: int, gen: np.random.Generator) -> Draws:
    """Stage *draw*: n inputs (fixed, or from the prior), their phases, releases and public responses.

    Parameters
    ----------
    setting : Setting
        What is audited.
    n : int
        Audited releases (transcripts).
    gen : Generator
        Randomness, consumed in this order: inputs, phases, releases, responses.

    Returns
    -------
    Draws
    """
    X = setting.prior.sample(n, gen) if setting.prior is not None else np.broadcast_to(setting.x, (n, setting.dim)).copy()
    phases = _phases(setting, n, gen)
    outs = _release(setting.rounds, X, phases, gen)
    y = X @ setting.beta + setting.sigma_y * gen.standard_normal(n) if setting.side_info else None
    return Draws(X, phases, outs, y)


def reconstruct(name: str, attacker: Any, setting: Setting, draws: Draws) -> np.ndarray:
    """Stage *attack*: the attacker's estimates (n, d), given what it may see of the phases.

    Parameters
    ----------
    name : str
        The attacker's name (for errors).
    attacker : Reconstructor
        The attacker.
    setting : Setting
        What is audited.
    draws : Draws
        The releases.

    Returns
    -------
    ndarray (n, d)

    Raises
    ------
    InvalidInputError
        When the estimates do not have the inputs' shape.
    """
    single = len(setting.rounds) == 1
    given_phase = None if (setting.information == "hidden" or setting.m_max == 0) else (
        draws.phases[:, 0] if single else draws.phases)
    est = np.asarray(attacker.reconstruct(draws.outputs[:, 0] if single else draws.outputs, phase=given_phase,
                                          y=draws.y), dtype=float)
    if est.shape != draws.X.shape:
        raise InvalidInputError(f"attacker {name!r} returned shape {est.shape}, expected {draws.X.shape}")
    return est


@dataclasses.dataclass(frozen=True)
class ErrorStatistics:
    """The attacker's total squared error with its interval, and its parts.

    Attributes
    ----------
    mse : float
        Mean of ‖x̂ − x‖².
    mse_ci : (float, float)
        Its two-sided normal-approximation interval.
    bias : ndarray (d,)
        Mean error per coordinate.
    bias_sq : float
        Unbiased estimate of ‖E[x̂ − x]‖².
    variance : float
        ``mse − bias_sq``, the variance part of the MSE (kept as computed: a report's rounded
        ``mse`` and ``bias_sq`` need not give it back).
    bias_p_value : float
        Hotelling T² p-value of no bias (NaN when n ≤ d + 1 or the covariance is singular).
    mse_along, mse_orth : float or None
        Error along the shared modulation vectors and orthogonal to them.

    Raises
    ------
    InvalidInputError
        An interval that is not (low, high), or a bias that is not a vector.
    """

    mse: float
    mse_ci: tuple
    bias: np.ndarray
    bias_sq: float
    variance: float
    bias_p_value: float
    mse_along: float | None
    mse_orth: float | None

    def __post_init__(self) -> None:
        if len(self.mse_ci) != 2 or self.mse_ci[0] > self.mse_ci[1]:
            raise InvalidInputError(f"mse_ci must be (low, high) with low <= high, got mse_ci={self.mse_ci!r}")
        if np.ndim(self.bias) != 1:
            raise InvalidInputError(f"bias must be a vector (one mean error per coordinate), got shape "
                                    f"{np.shape(self.bias)}")


def error_statistics(est: np.ndarray, X: np.ndarray, confidence: float, basis: np.ndarray | None) -> ErrorStatistics:
    """Stage *measure*: MSE with its interval, the bias and its test, the split along the modulation vectors.

    Parameters
    ----------
    est, X : ndarray (n, d)
        Estimates and true inputs.
    confidence : float
        Two-sided level of the MSE interval.
    basis : ndarray (d, m) or None
        The modulation vectors shared by every round.

    Returns
    -------
    ErrorStatistics
    """
    n, d = X.shape
    err = est - X
    sq = np.einsum("nd,nd->n", err, err)
    z = float(ndtri(0.5 + confidence / 2))
    mse = float(sq.mean())
    half = z * float(sq.std(ddof=1)) / math.sqrt(n)
    mse_ci = (max(0.0, mse - half), mse + half)
    bias = err.mean(axis=0)
    bias_sq = float(bias @ bias - np.trace(np.cov(err, rowvar=False).reshape(d, d)) / n)
    p_bias = hotelling_test(err).p_value  # NaN when n ≤ d + 1 or S is singular
    mse_along = mse_orth = None
    if basis is not None:
        along = err @ basis
        mse_along = float(np.einsum("nm,nm->n", along, along).mean())
        mse_orth = mse - mse_along
    return ErrorStatistics(mse, mse_ci, bias, bias_sq, mse - bias_sq, p_bias, mse_along, mse_orth)


#: The bounds a reconstruction audit may compute, in the order they are computed (and reported).
BOUND_NAMES = ("crb", "seed_bound", "crb_phase_conditional", "hcr", "van_trees")


@dataclasses.dataclass(frozen=True)
class Bounds:
    """The MSE bounds computed for a setting (see the module table); ``None`` for a bound not computed.

    Attributes
    ----------
    crb_along, crb_orth : float or None
        tr(I⁻¹) along the shared modulation vectors and orthogonal to them (fixed x only).
    crb : float or None
        The unbiased Cramér–Rao bound tr(I⁻¹).
    crb_phase_conditional : float or None
        E_φ tr(I(x | φ)⁻¹) with fresh known phases (reference only).
    seed_bound : float or None
        Seed 000's trace form d²/tr(I).
    hcr : float or None
        The Hammersley–Chapman–Robbins bound.
    van_trees : float or None
        The van Trees bound tr((E_π I + J_π)⁻¹) (under a prior).
    """

    crb_along: float | None = None
    crb_orth: float | None = None
    crb: float | None = None
    crb_phase_conditional: float | None = None
    seed_bound: float | None = None
    hcr: float | None = None
    van_trees: float | None = None

    @property
    def values(self) -> dict[str, float]:
        """Bound name → value of every computed bound, in :data:`BOUND_NAMES` order."""
        return {b: getattr(self, b) for b in BOUND_NAMES if getattr(self, b) is not None}


def compute_bounds(setting: Setting, draws: Draws, basis: np.ndarray | None, gen: np.random.Generator, *,
                   hcr: bool = True, n_mc: int = 20_000) -> tuple[Bounds, tuple[str, ...]]:
    """Stage *bound*: Cramér–Rao (and its phase-conditional form), the seed's trace form, HCR and van Trees.

    The Fisher information comes from what each round declares
    (:func:`privaudit.audit.stats.fisher.release_fisher`); a mechanism that declares none
    gets no bounds, and a note says so.

    Parameters
    ----------
    setting : Setting
        What is audited.
    draws : Draws
        The releases (their inputs and phases average x- or phase-dependent bounds).
    basis : ndarray (d, m) or None
        The shared modulation vectors (for the split of tr(I⁻¹)).
    gen : Generator
        Monte Carlo randomness of van Trees.
    hcr : bool
        Compute the Hammersley–Chapman–Robbins bound (fixed x only).
    n_mc : int
        Monte Carlo draws of van Trees with a non-Gaussian prior.

    Returns
    -------
    bounds : Bounds
        The bounds computed.
    notes : tuple of str
        Why bounds are missing, when they are.
    """
    rounds, prior, fixed, information = setting.rounds, setting.prior, setting.fixed, setting.information
    X, phases = draws.X, draws.phases
    n = X.shape[0]
    bounds: dict[str, float] = {}
    crb_along = crb_orth = None
    fisher_kw = dict(beta=setting.beta, sigma_y=setting.sigma_y)
    try:
        if fixed is not None:
            pts = X[: _N_BOUND_MC] if prior is not None else X[:1]
            infos = np.stack([release_fisher(rounds, p, phase=fixed, **fisher_kw) for p in pts])
            bounds["crb"] = float(np.mean(crb_of(infos)))
            bounds["seed_bound"] = float(np.mean(seed_trace_bound(infos)))
            info = infos.mean(axis=0)
        else:
            info = release_fisher(rounds, X[0], information=information, **fisher_kw)
            bounds["crb"] = float(crb_of(info))
            bounds["seed_bound"] = float(seed_trace_bound(info))
            if information == "known" and any(law is not None and law.modulated for law in map(release_law, rounds)):
                k = min(n, _N_BOUND_MC)
                cond = [release_fisher(rounds, X[i], phase=phases[i, :, :], **fisher_kw) if setting.m_max else None
                        for i in range(k)]
                bounds["crb_phase_conditional"] = float(np.mean(crb_of(np.stack(cond))))
        if basis is not None and prior is None:
            inv = np.linalg.pinv(info)
            crb_along = float(np.trace(basis.T @ inv @ basis))
            crb_orth = float(np.trace(inv)) - crb_along
        if hcr and prior is None:
            bounds["hcr"] = hammersley_chapman_robbins(
                rounds, setting.x, phase=fixed, information="hidden" if information == "hidden" else "known",
                **fisher_kw,
            )
        if prior is not None:
            if fixed is not None:
                def fisher_fn(P):
                    return np.stack([release_fisher(rounds, p, phase=fixed, **fisher_kw) for p in P[:_N_BOUND_MC]])
                bounds["van_trees"] = van_trees(fisher_fn, prior, n_mc=n_mc, rng=gen)
            elif all(closed_form_release(m) is not None for m in rounds):
                # A closed-form release's information does not depend on x: closed form in E_π I.
                bounds["van_trees"] = van_trees(info, prior, n_mc=n_mc, rng=gen)
            else:
                def fisher_fn(P):
                    return np.stack([release_fisher(rounds, p, information=information, **fisher_kw)
                                     for p in P[:_N_BOUND_MC]])
                bounds["van_trees"] = van_trees(fisher_fn, prior, n_mc=n_mc, rng=gen)
    except InvalidParameterError as exc:  # e.g. a user mechanism without Fisher information
        return Bounds(crb_along, crb_orth, **bounds), (f"bounds not computed: {exc}",)
    return Bounds(crb_along, crb_orth, **bounds), ()


@dataclasses.dataclass(frozen=True)
class ExactReconstruction(ItemAccess):
    """Exact reconstruction under a finite prior: the attacker's success rate against the ReRo bound.

    Item access reads the fields too (``rero["success"]``), as for the dict it replaced.

    Attributes
    ----------
    success : float
        Fraction of releases whose input the attacker recovered exactly.
    success_ci : (float, float)
        Its two-sided Clopper–Pearson interval.
    bound : float
        The ReRo bound 1 − f(κ) on the success probability.
    kappa : float
        The prior's baseline success κ (the best guess without the release).
    mu : float or None
        The GDP μ the bound comes from (None when it comes from the mechanism's exact trade-off curve).

    Raises
    ------
    InvalidParameterError
        A probability outside [0, 1], or an interval that is not (low, high).
    """

    success: float
    success_ci: tuple
    bound: float
    kappa: float
    mu: float | None

    def __post_init__(self) -> None:
        for name in ("success", "bound", "kappa"):
            check_interval(name, getattr(self, name), 0.0, 1.0, closed="both")
        if len(self.success_ci) != 2 or not 0 <= self.success_ci[0] <= self.success_ci[1] <= 1:
            raise InvalidParameterError(f"success_ci must be (low, high) with 0 <= low <= high <= 1, got "
                                        f"success_ci={self.success_ci!r}")


def exact_reconstruction(est: np.ndarray, X: np.ndarray, setting: Setting, confidence: float) -> ExactReconstruction:
    """Stage *bound* under a finite prior: exact-reconstruction success against the ReRo bound.

    Parameters
    ----------
    est, X : ndarray (n, d)
        Estimates and true inputs.
    setting : Setting
        What is audited (its prior is a :class:`~privaudit.attacks.protocol.FinitePrior`).
    confidence : float
        Two-sided level of the Clopper–Pearson interval of the success rate.

    Returns
    -------
    ExactReconstruction
    """
    n = X.shape[0]
    prior = setting.prior
    success = np.all(np.isclose(est, X), axis=1)
    k = int(success.sum())
    # Two-sided Clopper–Pearson interval: two one-sided bounds at level (1 + c)/2.
    ci_lo = float(clopper_pearson_lower(k, n, (1 + confidence) / 2))
    ci_hi = float(clopper_pearson_upper(k, n, (1 + confidence) / 2))
    try:
        mu = rero_mu(setting.rounds, prior, information=setting.information)
        bound = rero_bound(prior.kappa, mu=mu)
    except InvalidParameterError:
        if len(setting.rounds) == 1 and isinstance(setting.rounds[0], HasExactTradeoff):
            mu, bound = None, rero_bound(prior.kappa, setting.rounds[0].tradeoff)
        else:
            raise
    return ExactReconstruction(k / n, (ci_lo, ci_hi), bound, prior.kappa, mu)


@dataclasses.dataclass(frozen=True)
class BoundComparison:
    """The attacker's MSE held against each computed bound.

    Attributes
    ----------
    ratio, ratio_ci : dict
        Bound → MSE/bound, and its interval (the MSE's interval over the bound).
    applies : dict
        Bound → whether it binds this attacker.
    beaten : list of str
        Bounds above the MSE's upper confidence limit.

    Raises
    ------
    InvalidParameterError
        ``ratio``, ``ratio_ci`` and ``applies`` not about the same bounds, or a beaten bound among none of them.
    """

    ratio: dict
    ratio_ci: dict
    applies: dict
    beaten: list

    def __post_init__(self) -> None:
        if not set(self.ratio) == set(self.ratio_ci) == set(self.applies) >= set(self.beaten):
            raise InvalidParameterError(
                f"ratio, ratio_ci and applies must name the same bounds, and beaten some of them; got ratio "
                f"{sorted(self.ratio)}, ratio_ci {sorted(self.ratio_ci)}, applies {sorted(self.applies)}, beaten "
                f"{sorted(self.beaten)}")


@dataclasses.dataclass(frozen=True)
class Judgement:
    """The MSE against every bound, and the verdict.

    Attributes
    ----------
    comparison : BoundComparison
        Which bounds apply to the attacker and which it beats.
    verdict : {"pass", "violation"}
        "violation" when an applicable bound (or ReRo) is beaten.
    notes : list of str
        Plain-language findings.
    """

    comparison: BoundComparison
    verdict: str
    notes: list


def judge(name: str, stats: ErrorStatistics, bounds: dict, rero: ExactReconstruction | None, unbiased: bool,
          confidence: float) -> Judgement:
    """Stage *judge*: hold the MSE (or the ReRo success) against every bound that applies.

    A bound for unbiased attackers applies when the attacker declares itself exactly
    unbiased *and* the Hotelling test does not detect a bias at ``confidence``; van Trees
    applies to all; reference bounds to none. A bound beaten by an attacker it does not
    bind is recorded in the notes, never hidden.

    Parameters
    ----------
    name : str
        The attacker's name (for the notes).
    stats : ErrorStatistics
        Its error.
    bounds : dict
        Bound name → value.
    rero : ExactReconstruction or None
        The exact-reconstruction audit, under a finite prior.
    unbiased : bool
        Whether the attacker declares itself exactly unbiased here.
    confidence : float
        Level of the bias test.

    Returns
    -------
    Judgement
    """
    mse, mse_ci, p_bias = stats.mse, stats.mse_ci, stats.bias_p_value
    notes: list[str] = []
    bias_ok = not (p_bias < 1 - confidence)
    applies = {b: False if b in REFERENCE_BOUNDS else (unbiased and bias_ok) if b in UNBIASED_BOUNDS else True
               for b in bounds}
    ratio = {b: (mse / v if v > 0 else math.inf) for b, v in bounds.items()}
    ratio_ci = {b: ((mse_ci[0] / v, mse_ci[1] / v) if v > 0 else (math.inf, math.inf)) for b, v in bounds.items()}
    beaten = [b for b, v in bounds.items() if mse_ci[1] < v]
    violated = [b for b in beaten if applies[b]]
    for b in beaten:
        if b in REFERENCE_BOUNDS:
            notes.append(f"attacker {name!r} goes below {b} (MSE/{b} = {ratio[b]:.4g}); that bound holds only for "
                         "attackers unbiased at every fixed phase, so this is information, not a violation")
        elif not applies[b]:
            why = "is not exactly unbiased here" if not unbiased else f"is measurably biased (p = {p_bias:.2g})"
            notes.append(
                f"attacker {name!r} ({why}) beats the {b} bound, which holds only for unbiased attackers: "
                f"MSE/{b} = {ratio[b]:.4g} (CI upper {ratio_ci[b][1]:.4g})"
            )
    for b in violated:
        notes.append(f"VIOLATION: attacker {name!r} beats the {b} bound: MSE/{b} upper confidence limit "
                     f"{ratio_ci[b][1]:.4g} < 1")
    if rero is not None and rero.success_ci[0] > rero.bound:
        violated.append("rero")
        notes.append(f"VIOLATION: exact-reconstruction success {rero.success:.4g} (lower limit "
                     f"{rero.success_ci[0]:.4g}) exceeds the ReRo bound {rero.bound:.4g}")
    if "seed_bound" in bounds and "crb" in bounds:
        notes.append(f"seed 000 eq. (18) trace form d²/tr(I) = {bounds['seed_bound']:.4g} ≤ tr(I⁻¹) = "
                     f"{bounds['crb']:.4g} (looser unless I ∝ identity)")
    return Judgement(BoundComparison(ratio, ratio_ci, applies, beaten), "violation" if violated else "pass", notes)


# --- the audit --------------------------------------------------------------------------------------
def audit_reconstruction(mechanism: Any, attacker: Any = None, x: ArrayLike | None = None, prior: Any = None, *,
                         n: int = 10_000, rng: RandomLike = None, phase: Any = "known", beta: ArrayLike | None = None,
                         sigma_y: float | None = None, confidence: float = 0.95, hcr: bool = True,
                         n_mc: int = 20_000) -> ReconstructionAudit:
    """Measure a reconstruction attacker against Cramér–Rao, HCR, van Trees and ReRo bounds.

    The audit is the pipeline :func:`plan_setting` → :func:`prepare_attacker` →
    :func:`draw_releases` → :func:`reconstruct` → :func:`error_statistics` →
    :func:`compute_bounds` (or :func:`exact_reconstruction` under a finite prior) →
    :func:`judge`.

    Parameters
    ----------
    mechanism : mechanism or sequence of mechanisms
        One release per client, or the T rounds of a transcript (each round's release
        is independent; their Fisher information adds).
    attacker : None, str, class or instance
        ``None`` picks the strongest applicable registered attacker; a string picks
        from the registry; a class is instantiated like the built-ins; an instance is
        used as is.
    x : array (d,), optional
        The client's input (fixed for all n releases). Default: if no prior,
        the unit vector (1, …, 1)/√d.
    prior : GaussianPrior, DiscretePrior or other prior, optional
        Draw x ~ prior for each release (Bayesian audit). Enables van Trees (and
        ReRo for a finite prior, :class:`~privaudit.attacks.protocol.FinitePrior`) and
        is handed to the attacker.
    n : int
        Number of audited releases (transcripts).
    rng : int, Generator, SeedSequence or None
        Root randomness, resolved by :func:`privaudit.mechanisms.randomness.resolve_seed`;
        the integer seed that reproduces the audit is recorded as ``seed``.
    phase : {"known", "hidden"} or array (m,) / (T, m)
        Modulation phases: fresh and revealed to the attacker (``"known"``, the
        worst case and the seed's §6 setting), fresh and hidden (``"hidden"``), or one
        fixed phase, revealed (array).
    beta, sigma_y : optional
        Public response y = xᵀβ + N(0, σ_y²), given to the attacker and to the bounds.
    confidence : float
        Two-sided level of every interval.
    hcr : bool
        Compute the Hammersley–Chapman–Robbins bound (fixed x only).
    n_mc : int
        Monte Carlo draws for van Trees with non-Gaussian priors.

    Returns
    -------
    ReconstructionAudit
    """
    as_rounds(mechanism)  # an empty transcript is refused before anything else
    n = check_int("n", n)
    conf = check_interval("confidence", confidence, 0.0, 1.0)
    root, seed = resolve_seed(rng)
    gen = np.random.default_rng(root.spawn(1)[0])
    setting = plan_setting(mechanism, x, prior, phase, beta, sigma_y)
    rounds = setting.rounds

    name, att = prepare_attacker(attacker, setting, n, gen)
    draws = draw_releases(setting, n, gen)
    est = reconstruct(name, att, setting, draws)
    basis = _shared_basis(rounds)
    stats = error_statistics(est, draws.X, conf, basis)

    if isinstance(setting.prior, FinitePrior):
        (found, missing), rero = (Bounds(), ()), exact_reconstruction(est, draws.X, setting, conf)
    else:
        (found, missing), rero = compute_bounds(setting, draws, basis, gen, hcr=hcr, n_mc=n_mc), None
    unbiased = declares_unbiased(att, setting.mechanism, information=setting.information)
    verdict = judge(name, stats, found.values, rero, unbiased, conf)

    return ReconstructionAudit(
        target=_target_name(rounds), attacker=name, n=n, seed=seed, confidence=conf,
        setting=AuditedSetting.of(setting), error=stats, bounds=found,
        comparison=verdict.comparison, attacker_unbiased=unbiased, rero=rero, verdict=verdict.verdict,
        notes=list(missing) + verdict.notes,
    )


# --- curves for reports ----------------------------------------------------------------------------------
def _with_sigma(mechanism, sigma: float):
    """The template ``mechanism`` with noise σ (a factory ``sigma -> mechanism`` is called instead)."""
    if callable(mechanism) and not hasattr(mechanism, "sample"):
        return mechanism(sigma)
    if isinstance(mechanism, list | tuple):
        return [_with_sigma(m, sigma) for m in mechanism]
    release = closed_form_release(mechanism)
    if release is not None:
        return release.with_sigma(sigma)
    raise InvalidParameterError(f"cannot change σ of {mechanism!r}; pass a factory sigma -> mechanism")


def mse_crb_curve(mechanism: Any, sigmas: ArrayLike, *,
                  attackers: tuple[str, ...] = ("split-mle", "autodiff-mle", "naive"), x: ArrayLike | None = None,
                  phase: Any = "known", bound: str = "crb", n: int = 20_000, rng: RandomLike = None,
                  confidence: float = 0.95) -> ExperimentResult:
    """MSE/bound against the noise σ, one series per attacker (the low-noise limit).

    For efficient (MLE) attackers MSE/CRB → 1 as σ → 0: the likelihood becomes locally
    linear-Gaussian. ``mechanism`` is a template whose σ is replaced (or a factory
    ``sigma -> mechanism``). With fresh known phases use ``bound="crb_phase_conditional"``
    (the split MLE is unbiased at each phase), or pass a fixed ``phase`` array.

    Parameters
    ----------
    mechanism : mechanism or callable
        A template whose σ is replaced, or a factory ``sigma -> mechanism``.
    sigmas : array-like
        Noise levels σ > 0.
    attackers : tuple of str
        Registered reconstruction attackers, one series each.
    x : array-like, optional
        The client input (default: the audit's).
    phase : {"known", "hidden"} or array
        What the attacker sees of the phases, or fixed known phases.
    bound : str
        Which bound the MSE is divided by (a key of the audit's ``ratio``: ``"crb"``, ``"crb_phase_conditional"``, ``"van_trees"`` …).
    n : int
        Releases per audit.
    rng : int, Generator, SeedSequence or None
        Root randomness (one child stream per audit).
    confidence : float
        Level of the MSE/bound confidence intervals.

    Returns
    -------
    ExperimentResult
        ``series[attacker] = {"x": σ, "y": MSE/bound, "yerr": CI half-widths}`` on a log
        σ axis, a reference line at 1, and a table of every (σ, attacker) audit.
    """
    sig = [check_positive("sigma", s) for s in np.atleast_1d(np.asarray(sigmas, dtype=float))]
    root, seed = resolve_seed(rng)
    series: dict[str, dict[str, list]] = {a: {"x": [], "y": [], "yerr": []} for a in attackers}
    table = []
    children = root.spawn(len(sig) * len(attackers))
    for i, s in enumerate(sig):
        mech = _with_sigma(mechanism, s)
        for j, a in enumerate(attackers):
            res = audit_reconstruction(mech, a, x=x, n=n, rng=children[i * len(attackers) + j],
                                       phase=phase, confidence=confidence, hcr=False)
            r = res.comparison.ratio.get(bound)
            if r is None:
                continue
            lo, hi = res.comparison.ratio_ci[bound]
            series[a]["x"].append(s)
            series[a]["y"].append(r)
            series[a]["yerr"].append((hi - lo) / 2)
            table.append({"sigma": s, "attacker": a, "mse": res.error.mse, bound: getattr(res.bounds, bound),
                          "ratio": r, "ratio_ci": [lo, hi], "verdict": res.verdict})
    return ExperimentResult(
        name="reconstruction-low-noise", target=_target_name(as_rounds(_with_sigma(mechanism, sig[0]))),
        xlabel="noise σ", ylabel=f"MSE / {bound}", series={k: v for k, v in series.items() if v["x"]},
        reference={"MSE = bound": 1.0}, table=table,
        notes=[f"MSE/{bound} of each attacker vs σ; efficient attackers approach 1 as σ → 0."],
        seed=seed, xscale="log",
    )


def composition_curve(mechanism: Any, rounds: tuple[int, ...] = (1, 2, 4, 8), *,
                      attackers: tuple[str, ...] = ("split-mle", "naive"), x: ArrayLike | None = None,
                      phase: Any = "known", bound: str = "crb", n: int = 10_000, rng: RandomLike = None,
                      confidence: float = 0.95) -> ExperimentResult:
    """MSE and the CRB over T rounds of the iterative protocol (fresh random basis per round).

    Fisher information adds over rounds, so for λ = 0 the CRB is tr(I₁⁻¹)/T exactly and
    ≈ 1/T with modulation; transcript attackers should track it (MSE/CRB ≈ 1).
    ``series`` holds T·crb (flat when the CRB falls like 1/T; also T·bound for another
    ``bound``) and, per attacker, MSE/bound. With fresh known phases the per-round split
    MLE is unbiased at each phase, so ``bound="crb_phase_conditional"`` is the one it
    tracks; the joint CRB is the smaller, attacker-independent bound.

    Parameters
    ----------
    mechanism : mechanism
        One round's release (each round gets a fresh random basis).
    rounds : tuple of int
        Numbers T of rounds.
    attackers : tuple of str
        Registered reconstruction attackers, one series each.
    x : array-like, optional
        The client input (default: the audit's).
    phase : {"known", "hidden"} or array
        What the attacker sees of the phases, or fixed known phases.
    bound : str
        Which bound the MSE is divided by (a key of the audit's ``ratio``: ``"crb"``, ``"crb_phase_conditional"``, ``"van_trees"`` …).
    n : int
        Releases per audit.
    rng : int, Generator, SeedSequence or None
        Root randomness (one child stream per audit).
    confidence : float
        Level of the MSE/bound confidence intervals.
    """
    from privaudit.mechanisms import random_orthonormal_basis

    ts = [check_int("rounds", int(t)) for t in rounds]
    root, seed = resolve_seed(rng)
    series: dict[str, dict[str, list]] = {"T·crb": {"x": [], "y": []}}
    if bound != "crb":
        series[f"T·{bound}"] = {"x": [], "y": []}
    series.update({f"MSE/bound ({a})": {"x": [], "y": [], "yerr": []} for a in attackers})
    table = []
    for t, child in zip(ts, root.spawn(len(ts))):
        g = np.random.default_rng(child)
        law = release_law(mechanism)
        if law is not None and law.n_vectors > 0:  # a fresh random basis per round (``with_basis``)
            seq = [mechanism.with_basis(random_orthonormal_basis(law.dim, law.n_vectors, g)) for _ in range(t)]
        else:
            seq = [mechanism] * t
        for a in attackers:
            res = audit_reconstruction(seq, a, x=x, n=n, rng=g, phase=phase, confidence=confidence, hcr=False)
            b = getattr(res.bounds, bound)
            if a == attackers[0]:
                for key in {"crb", bound}:
                    series[f"T·{key}"]["x"].append(t)
                    series[f"T·{key}"]["y"].append(t * getattr(res.bounds, key))
            lo, hi = res.comparison.ratio_ci[bound]
            series[f"MSE/bound ({a})"]["x"].append(t)
            series[f"MSE/bound ({a})"]["y"].append(res.comparison.ratio[bound])
            series[f"MSE/bound ({a})"]["yerr"].append((hi - lo) / 2)
            table.append({"T": t, "attacker": a, "mse": res.error.mse, bound: b, "ratio": res.comparison.ratio[bound]})
    return ExperimentResult(
        name="reconstruction-composition", target=stable_repr(mechanism), xlabel="rounds T", ylabel=f"T·{bound}, MSE/{bound}",
        series=series, reference={"MSE = bound": 1.0}, table=table,
        notes=["Fisher information adds over rounds: T·CRB is flat when the CRB falls like 1/T."],
        seed=seed, xscale="log",
    )


def to_dict_fields() -> list[str]:
    """Stable keys of a :class:`ReconstructionAudit`'s report entry, in order (for report writers).

    Returns
    -------
    list of str
    """
    return list(_ENTRY_KEYS)


__all__ = ["AuditedSetting", "ReconstructionAudit", "audit_reconstruction", "composition_curve", "mse_crb_curve", "to_dict_fields"]
