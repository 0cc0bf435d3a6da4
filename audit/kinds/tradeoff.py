"""Kind ``tradeoff``: the empirical trade-off curve of a mechanism on a neighbouring pair vs. its claim.

Runs :func:`~privaudit.audit.engines.tradeoff.audit_tradeoff` (a
:class:`~privaudit.audit.engines.tradeoff.TradeoffAudit`) on the given pair (``x``,
``x_prime``) or on the mechanism's worst-case pair
(:func:`~privaudit.attacks.pairs.worst_case_pair`, whose own exact curve and ε are
reported). ``expect = "violation"`` marks a negative control, which passes when the
audit catches it.

Report: the headline ε̲ vs. the claimed (and exact) ε; figures of the trade-off
curve with its confidence band over f_{ε,δ}(α) = max{0, 1 − δ − e^ε α, e^{−ε}(1 − δ − α)}
of the claim and the exact curve, and the ROC on log-log axes (the low-FPR corner
certifies large ε); a row of the ε summary table with the largest ε the sample
size could certify (:func:`~privaudit.audit.stats.certifiable.max_certifiable_epsilon`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from privaudit.attacks.pairs import worst_case_pair
from privaudit.mechanisms.adjacency import NonAdjacentPairError, adjacent_claim
from privaudit.mechanisms.claim import ClaimTypeError, claim_of
from privaudit.mechanisms.domains import domain_from_spec
from privaudit.mechanisms.neighbourhoods import parse_neighbourhood
from privaudit.mechanisms.tradeoff import tradeoff_curve

from privaudit.audit.stats.certifiable import max_certifiable_epsilon
from privaudit.audit.schema.components import MECHANISMS, registered_attackers
from privaudit.audit.stats.epsilon_bounds import gdp_epsilon
from privaudit.audit.schema.fields import ConfigKeyError, ConfigValueError, Field
from privaudit.audit.display.formatting import fnum, num
from privaudit.audit.engines.pair_search import search_pairs
from privaudit.audit.display.displays import RocDisplay, TradeoffDisplay, band_of, certifying_point
from privaudit.audit.results import AuditEntry, apply_expectation
from privaudit.audit.engines.tradeoff import MIN_N, TradeoffAudit, audit_tradeoff
from privaudit.audit.engines.tradeoff import judge as judge_epsilon
from privaudit.audit.verdicts import Outcome, Verdict, outcome
from privaudit.audit.kinds.base import (CONFIDENCE, EXPECT_PRIVATE, LEGEND_PT, MECHANISM, AuditKind, epsilon_table_row,
                                        mechanism_target)

FIELDS = {
    "mechanism": MECHANISM,
    "x": Field("array", None, doc="input x (the null hypothesis); default: the worst-case pair"),
    "x_prime": Field("array", None, doc="neighbouring input x'; default: the worst-case pair"),
    "dim": Field("int", 1, low=1, high=10_000, doc="input dimension of the worst-case pair (Gaussian, Laplace)"),
    "domain": Field("array-or-table", None, validate=lambda path, v: _domain_spec(path, v),
                    doc="input domain to search for the worst neighbouring pair under the claim's neighbourhood "
                        "(search_pairs: input patterns, axis, diagonal, corner, random and refined moves, screened "
                        "then certified with Bonferroni) instead of auditing x, x': [low, high] (a real box), or a "
                        "table {kind = 'box', low = [...], high = [...], integer = true}, {kind = 'datasets', "
                        "records = {low = [...], high = [...]}, min_size = 1, max_size = 20}, {kind = "
                        "'categorical', categories = [...]}, {kind = 'declared'} (the mechanism's own domain)"),
    "n": Field("int", 20000, low=MIN_N, samples=True, doc="releases per hypothesis"),
    "attacker": Field("names", None, validate=registered_attackers("distinguisher"),
                      doc="registered distinguisher, or a list of them (default: strongest applicable)"),
    "confidence": CONFIDENCE,
    "estimator": Field("str", "clopper-pearson", choices=("clopper-pearson", "gdp"),
                       doc="bound on ε: Clopper–Pearson on the error rates, or GDP (Gaussian trade-off; needs μ or assume_gaussian)"),
    "assume_gaussian": Field("bool", False, doc="assert the release's trade-off curve is Gaussian, allowing "
                                                "estimator = 'gdp' on a claim without μ"),
    "selection": Field("str", "split", choices=("split", "bonferroni"),
                       doc="choose the test on a held-out split, or over all candidates with a Bonferroni correction"),
    "delta": Field("float", None, low=0.0, high=1.0, closed="left", doc="δ of the bound (default: the claim's)"),
    "expect": EXPECT_PRIVATE,
    "adjacency": Field("str", "check", validate=lambda path, v: _adjacency(path, v),
                       doc="a pair x, x_prime farther than one neighbour step: 'check' refuses it, 'group' audits it "
                           "against the group-privacy claim of its distance; with a domain search, 'group' also "
                           "searches pairs several steps apart (each against its group claim), and a neighbourhood "
                           "(e.g. 'linf<=1', 'histogram', 'add-remove') overrides the claim's for the search"),
}


def check_pair(path: str, params: dict) -> None:
    """``x`` and ``x_prime`` come together, or not at all (then the worst-case pair or a ``domain`` search).

    Parameters
    ----------
    path : str
        Key path of the entry (``audits[0]``), named in errors.
    params : dict
        The entry's parameters, each field already valid.

    Raises
    ------
    ConfigKeyError
        Naming ``path``: only one of ``x``, ``x_prime``; a pair together with ``domain``; a
        ``domain`` that is not [low, high]; a neighbourhood ``adjacency`` without a search; or
        ``adjacency = "group"`` with neither a pair nor a search.
    ConfigValueError
        A ``domain`` with low > high.
    """
    if (params["x"] is None) != (params["x_prime"] is None):
        missing = "x_prime" if params["x_prime"] is None else "x"
        raise ConfigKeyError(f"missing key {path}.{missing}: give both x and x_prime, or neither (worst-case pair)")
    if params.get("adjacency") not in (None, "check", "group") and not _searching(params):
        raise ConfigKeyError(f"{path}.adjacency = {params['adjacency']!r} (a neighbourhood) overrides the claim's for "
                             f"a pair search: give domain too, or use 'check' or 'group' for a given pair")
    if params.get("domain") is not None:
        if params["x"] is not None:
            raise ConfigKeyError(f"{path}: give either x and x_prime or domain (a pair search), not both")
    if isinstance(params.get("domain"), list):
        box = np.asarray(params["domain"], dtype=float)
        if box.ndim not in (1, 2) or box.shape[0] != 2:
            raise ConfigKeyError(f"{path}.domain must be [low, high] (two numbers or two arrays), "
                                 f"got {params['domain']!r}")
        if np.any(box[0] > box[1]):  # (finiteness is checked by the array field)
            raise ConfigValueError(f"{path}.domain must have low <= high, got {params['domain']!r}")
    if params.get("adjacency") == "group" and params["x"] is None and not _searching(params):
        raise ConfigKeyError(f"{path}.adjacency = 'group' applies to a given pair: give x and x_prime, or drop it "
                             f"(the worst-case pair and a domain search audit adjacent pairs)")


def check_adjacent(path: str, params: dict, components: Mapping[str, Any]) -> None:
    """A given pair (``x``, ``x_prime``) must be adjacent under the built mechanism's claim, unless
    ``adjacency = "group"`` (then it must be connected by a chain of neighbours): checked before any task runs.

    Parameters
    ----------
    path : str
        Key path of the entry (``audits[2]``).
    params : dict
        The entry's validated fields.
    components : mapping
        The entry's built registered components; without a ``"mechanism"`` (an opted-in
        ``module:attr`` one is not built before the run) the task checks the pair itself.

    Raises
    ------
    ConfigValueError
        Naming ``x``, ``x_prime`` and their values, and the key that would audit the group claim.
    """
    try:
        claim = claim_of(components.get("mechanism"))
    except ClaimTypeError:
        return  # not a claim: the task's audit_tradeoff reports it
    if params["x"] is None or claim is None:
        return
    try:
        adjacent_claim(claim, np.asarray(params["x"]), np.asarray(params["x_prime"]), mode=params["adjacency"])
    except NonAdjacentPairError as exc:
        hint = f'set {path}.adjacency = "group"'
        raise ConfigValueError(
            f"{path}.x = {params['x']!r} and {path}.x_prime = {params['x_prime']!r}: "
            + str(exc).replace("pass adjacency='group'", hint)
        ) from None


def run(params: dict, rng: np.random.Generator) -> AuditEntry:
    """Empirical trade-off curve of a mechanism on one neighbouring pair vs. its claim (audit_tradeoff).

    Parameters
    ----------
    params : dict
        The entry's validated parameters, sample sizes scaled by ``samples``.
    rng : Generator
        The task's randomness (derived from the run's seed and the entry).

    Returns
    -------
    AuditEntry
        The audit of the given pair, the worst-case pair, or the best pair a ``domain`` search certifies.
    """
    mech = MECHANISMS.build(params["mechanism"], "mechanism")
    if _searching(params):
        return apply_expectation(judge(_searched(mech, params, rng)), params["expect"], caught="violation")
    extra = {}
    if params["x"] is None:
        pair = worst_case_pair(mech, dim=params["dim"])
        mech, x, x_prime = pair.mechanism, pair.x, pair.x_prime
        if pair.exact_mu is not None:
            # This pair's own exact curve and ε (D ≤ L for a modulated pair), not the worst case over pairs.
            delta = mech.claim.delta if params["delta"] is None else params["delta"]
            extra = {"exact_curve": pair.exact_curve, "epsilon_exact": gdp_epsilon(pair.exact_mu, delta)}
    else:
        x, x_prime = np.asarray(params["x"]), np.asarray(params["x_prime"])
        extra = {"adjacency": params.get("adjacency", "check")}
    res = audit_tradeoff(
        mech, x, x_prime, n=params["n"], attacker=params["attacker"], confidence=params["confidence"],
        estimator=params["estimator"], assume_gaussian=params["assume_gaussian"], selection=params["selection"],
        delta=params["delta"], rng=rng, **extra,
    )
    return apply_expectation(judge(res), params["expect"], caught="violation")


def _searching(params: dict) -> bool:
    return params.get("domain") is not None


def _domain_spec(path: str, value: list | dict) -> list | dict:
    """A ``domain`` table must describe a domain (checked at load, naming the key); arrays are checked in check_pair."""
    if not isinstance(value, dict):
        return value
    if value.get("kind") == "declared":
        if len(value) > 1:
            raise ConfigValueError(f"{path}: {{kind = 'declared'}} takes no other keys, got {path} = {value!r}")
        return value
    try:
        domain_from_spec(value)
    except (TypeError, ValueError) as exc:
        raise ConfigValueError(f"{path} = {value!r}: {exc}") from None
    return value


def _adjacency(path: str, value: str) -> str:
    """'check', 'group', or a neighbourhood shorthand (checked at load, naming the key)."""
    if value in ("check", "group"):
        return value
    try:
        parse_neighbourhood(value)
    except (TypeError, ValueError) as exc:
        raise ConfigValueError(f"{path} = {value!r}: {exc}") from None
    return value


def _searched(mech, params: dict, rng) -> TradeoffAudit:
    """The certified audit of the worst pair that :func:`~privaudit.audit.engines.pair_search.search_pairs` finds."""
    spec = params["domain"]
    if isinstance(spec, dict):
        domain = None if spec.get("kind") == "declared" else spec
    else:
        domain = tuple(np.asarray(b, dtype=float) for b in spec)
    adjacency = params.get("adjacency", "check")
    found = search_pairs(mech, domain, n=params["n"], attacker=params["attacker"],
                         confidence=params["confidence"], estimator=params["estimator"], rng=rng,
                         neighbourhood=None if adjacency in ("check", "group") else adjacency,
                         group=adjacency == "group")
    b = found.best
    return dataclasses.replace(b, notes=(*b.notes, found.summary()))


def judge(result: TradeoffAudit) -> TradeoffAudit:
    """``"inconclusive"`` instead of ``"pass"`` when the audit could not have refuted the claim at its size.

    ``min_detectable_ratio`` is the smallest ε′/ε_claim for which the expected ε̲ exceeds
    the claim (:func:`privaudit.audit.stats.power.min_detectable_ratio`); ``inf`` means even a
    perfect distinguisher could not lift ε̲ above the claim with this many releases,
    so a pass would say nothing. The verdict is decided by
    :func:`privaudit.audit.engines.tradeoff.judge` (the one place that decides a trade-off verdict),
    given the audit's stated power.

    Parameters
    ----------
    result : TradeoffAudit
        A finished audit.

    Returns
    -------
    TradeoffAudit
        ``result`` with its verdict replaced when it is an uninformative pass.
    """
    if not isinstance(result, TradeoffAudit) or result.verdict != Verdict.PASS:
        return result
    verdict, note = judge_epsilon(result.claim, result.epsilon_lb, result.delta,
                                  getattr(result, "min_detectable_ratio", None), n_eval=result.n_eval,
                                  confidence=result.confidence)
    if verdict == result.verdict:
        return result
    return dataclasses.replace(result, verdict=Verdict(verdict), notes=(*result.notes, note))


#: How each estimator's ε̲ is obtained, and what it assumes (the ε table's "estimator" column).
ESTIMATOR_LABELS = {
    "clopper-pearson": "Clopper–Pearson (exact binomial; no assumption)",
    "gdp": "GDP fit (assumes a Gaussian trade-off curve)",
}


def estimator_label(result: TradeoffAudit) -> str:
    """The estimator of a result's ε̲ with its assumption (unknown estimators are shown as they are).

    Parameters
    ----------
    result : TradeoffAudit

    Returns
    -------
    str
    """
    est = str(result.estimator or "clopper-pearson")
    return ESTIMATOR_LABELS.get(est, est)


def headline(entry: AuditEntry) -> str:
    """``ε̲ = … (Clopper–Pearson) vs claimed ε = …, exact …, δ = …``.

    Parameters
    ----------
    entry : AuditEntry
        An entry whose result is a :class:`TradeoffAudit`.

    Returns
    -------
    str
    """
    res: TradeoffAudit = entry.result
    est = "GDP, assumes Gaussian" if res.estimator == "gdp" else "Clopper–Pearson"
    lb, claimed = _distinct(res.epsilon_lb, res.claim.epsilon)
    parts = [f"ε̲ = {lb} ({est}) vs claimed ε = {claimed}"]
    if res.epsilon_exact is not None:
        parts.append(f"exact {fnum(res.epsilon_exact)}")
    if res.claim.delta is not None:
        parts.append(f"δ = {fnum(res.claim.delta)}")
    families = family_lines(res)
    return ", ".join(parts) + (" — " + "; ".join(families) if len(families) > 1 else "")


#: How a report names each leak family (:data:`privaudit.attacks.protocol.LEAK_FAMILIES`).
FAMILY_LABELS = {"floating-point": "floating-point leak", "distribution": "distribution",
                 "degenerate": "degenerate outputs"}


def family_lines(result: TradeoffAudit) -> list[str]:
    """One line per leak family: ``"floating-point leak: ε̲ 10.7 > 1 (reach-numpy-laplace)"``.

    Parameters
    ----------
    result : TradeoffAudit

    Returns
    -------
    list of str
        In the order of ``result.families``; empty for a result without families
        (one read from an older report).
    """
    eps = num(result.claim.epsilon)
    lines = []
    for family, rec in result.families.items():
        label = FAMILY_LABELS.get(family, family)
        if not rec.certified:
            lines.append(f"{label}: no evidence on the selection split (not tested; ε̲ = 0)")
            continue
        value = num(rec.epsilon_lb)
        cmp = "" if value is None or eps is None or not math.isfinite(eps) else (" > " if value > eps else " ≤ ")
        shown, claimed = _distinct(value, eps)
        lines.append(f"{label}: ε̲ {shown}{cmp + claimed if cmp else ''} ({rec.attacker})")
    return lines


def epsilon_row(entry: AuditEntry) -> list[str]:
    """Row of the ε table: claimed, exact, certified ε with its estimator and n, max certifiable ε, outcome.

    Parameters
    ----------
    entry : AuditEntry
        An entry whose result is a :class:`TradeoffAudit`.

    Returns
    -------
    list of str
    """
    res: TradeoffAudit = entry.result
    return epsilon_table_row(entry, exact=fnum(res.epsilon_exact), certified=_distinct(res.epsilon_lb,
                                                                                        res.claim.epsilon)[0],
                             estimator=estimator_label(res), n=fnum(res.n_eval or res.n),
                             ceiling=fnum(certifiable_ceiling(res)))


def certifiable_ceiling(result: TradeoffAudit) -> float | None:
    """The largest ε̲ any test of this audit could certify at its evaluation size (Clopper–Pearson only).

    With ``selection = "split"`` the certified test may be the *pooled* one (forward and
    reverse thresholds, their errors counted over n₀ + n₁ = 2·n_eval trials), whose zero-error
    bound reaches further than a one-sided test's: the ceiling is
    :func:`~privaudit.audit.stats.certifiable.max_certifiable_epsilon` at 2·n_eval. With
    ``"bonferroni"`` each test counts n_eval trials (at a stricter level, so the ceiling at
    n_eval is an upper bound). The GDP estimator has no ceiling of this form (None).

    Parameters
    ----------
    result : TradeoffAudit

    Returns
    -------
    float or None
    """
    n_eval, conf = num(result.n_eval) or num(result.n), num(result.confidence)
    if result.estimator != "clopper-pearson" or not n_eval or not conf:
        return None
    trials = 2 * int(n_eval) if result.selection == "split" else int(n_eval)
    return max_certifiable_epsilon(trials, conf, num(result.claim.delta) or 0.0)


def tradeoff_figures(entry: AuditEntry) -> list[tuple[str, Any, str]]:
    """Trade-off curve with band over f_{ε,δ} of the claim and the exact curve; log-scale ROC.

    Parameters
    ----------
    entry : AuditEntry
        An entry whose result is a :class:`TradeoffAudit`.

    Returns
    -------
    list of (suffix, matplotlib figure, caption)
    """
    res: TradeoffAudit = entry.result
    stamp, why = verdict_text(entry)
    display = TradeoffDisplay.from_result(res, label=entry.label, stamp=stamp,
                                          stamp_colour=_STAMP_COLOUR[_stamp_kind(entry)]).plot(legend_pt=LEGEND_PT)
    out = [("tradeoff", display.figure_, "Empirical trade-off curve with its confidence band, over the claim's "
                                         f"f_{{ε,δ}} and the exact curve; {why}")]
    if display.has_curve:
        exact = display.has_exact
        out.append(roc_figure(entry, display.fpr, display.fnr, display.band, display.exact_alpha if exact else None,
                              display.exact_curve if exact else None))
    return out


def _crossings(fpr: np.ndarray, tpr: np.ndarray, eps: float | None, delta: float) -> np.ndarray:
    """The FPRs of the empirical ROC's vertices that lie above the claim's TPR bound 1 − f_{ε,δ}(FPR)."""
    if eps is None or not math.isfinite(eps):
        return np.empty(0)
    above = tpr > 1 - tradeoff_curve(eps, delta, fpr) + 1e-12
    return fpr[above]


#: Colour of a figure's stamp by what it says.
_STAMP_COLOUR = {"refuted": "tab:red", "caught": "tab:green", "missed": "tab:red", "holds": "black"}


def _stamp_kind(entry: AuditEntry) -> str:
    """``"caught"``/``"missed"`` for a negative control, else ``"refuted"`` or ``"holds"`` (ε̲ vs the claim)."""
    res: TradeoffAudit = entry.result
    exceeds = _exceeds(res)
    if entry.expectation == "violation":
        return "caught" if outcome(entry) == Outcome.EXPECTED_VIOLATION_CAUGHT else "missed"
    return "refuted" if exceeds and entry.final_verdict == Verdict.VIOLATION else "holds"


def _exceeds(res: TradeoffAudit) -> bool:
    eps, lb = num(res.claim.epsilon), num(res.epsilon_lb)
    return eps is not None and lb is not None and math.isfinite(eps) and lb > eps


def _distinct(a, b) -> tuple[str, str]:
    """``a`` and ``b`` formatted with as many digits as it takes to show they differ (10.0004 vs 10, not 10 vs 10)."""
    x, y = num(a), num(b)
    for digits in (4, 6, 8, 12):
        sa, sb = (fnum(v) if v is None or not math.isfinite(v) else f"{v:.{digits}g}" for v in (x, y))
        if sa != sb or x == y:
            return sa, sb
    return sa, sb


def verdict_text(entry: AuditEntry) -> tuple[str, str]:
    """(stamp, caption clause) of a trade-off figure, computed from the entry's outcome and ε̲.

    A caught negative control says caught, a missed one says missed; a refuted claim names
    ε̲ and the claim; otherwise ε̲ does not exceed the claim. Never the other way round.

    Parameters
    ----------
    entry : AuditEntry
        An entry whose result is a :class:`TradeoffAudit`.

    Returns
    -------
    (str, str)
    """
    res: TradeoffAudit = entry.result
    lb, eps = _distinct(res.epsilon_lb, res.claim.epsilon)
    kind = _stamp_kind(entry)
    if kind == "caught":
        return (f"negative control caught:\nε̲ = {lb} > claimed ε = {eps}",
                f"negative control: the certified ε̲ = {lb} exceeds the claimed ε = {eps}, so the known violation "
                "was caught")
    if kind == "missed":
        return (f"negative control MISSED:\nε̲ = {lb} ≤ claimed ε = {eps}" if not _exceeds(res) else
                f"negative control MISSED:\nε̲ = {lb} (verdict {res.verdict})",
                f"negative control MISSED: the audit's verdict is {res.verdict} (certified ε̲ = {lb}, claimed ε = "
                f"{eps})")
    if kind == "refuted":
        return (f"claim refuted:\nε̲ = {lb} > claimed ε = {eps}",
                f"the certified ε̲ = {lb} exceeds the claimed ε = {eps}: the claim is refuted")
    if _exceeds(res):  # above the claim but not a violation (ε̲ computed at a smaller δ)
        return (f"ε̲ = {lb} > ε = {eps} at a smaller δ:\nnot a violation ({res.verdict})",
                f"the certified ε̲ = {lb} exceeds the claimed ε = {eps} only at δ = {fnum(res.delta)} < the claim's "
                f"δ, where a larger ε is allowed: verdict {res.verdict}")
    return (f"ε̲ = {lb} ≤ claimed ε = {eps}",
            f"the certified ε̲ = {lb} does not exceed the claimed ε = {eps}")


def roc_figure(entry: AuditEntry, fpr: np.ndarray, fnr: np.ndarray, band: Any, alpha: np.ndarray | None,
               exact: np.ndarray | None) -> tuple[str, Any, str]:
    """ROC on log–log axes with the confidence band and the region the claim forbids.

    TPR above the claim's bound 1 − f_{ε,δ}(FPR) refutes the claim *if the band's lower
    edge goes there*; the empirical curve alone may cross it at tiny FPR, where a handful
    of releases decide the point estimate. That case is explained on the figure, drawn with
    :class:`~privaudit.audit.display.displays.RocDisplay` (the stamp and its colour decided here).

    Parameters
    ----------
    entry : AuditEntry
        An entry whose result is a :class:`TradeoffAudit`.
    fpr, fnr : ndarray
        The empirical trade-off curve.
    band : tuple of three ndarray, or None
        :func:`band_of` the result.
    alpha, exact : ndarray or None
        The exact curve on its grid, when known.

    Returns
    -------
    (suffix, matplotlib figure, caption)
    """
    res: TradeoffAudit = entry.result
    eps, delta = num(res.claim.epsilon), num(res.claim.delta) or 0.0
    caption = ("ROC of the attack on log–log axes with its confidence band; the shaded red region is what the claim "
               "forbids (the low-FPR corner certifies large ε); the circle is the test that certified ε̲")
    stamp, why = verdict_text(entry)
    kind = _stamp_kind(entry)
    order = np.argsort(fpr, kind="stable")
    f_sorted, t_sorted = fpr[order], 1 - fnr[order]
    cross = _crossings(f_sorted, t_sorted, eps, delta)
    if kind in ("holds", "missed") and not _exceeds(res) and cross.size:
        # Point estimates above the bound while the certified ε̲ is not: the crossing is sampling noise.
        why += (f"; the empirical curve's point estimates lie above the claim's bound at {cross.size} of its "
                f"{f_sorted.size} vertices (FPR {cross.min():.2g} to {cross.max():.2g}): sampling noise, which "
                "the certified ε̲ accounts for")
        stamp += "\ncurve above the bound in places: sampling noise"
    display = RocDisplay(fpr, fnr, band, num(res.confidence), eps, delta, alpha, exact,
                         max(int(num(res.n_eval) or num(res.n) or 10), 10), certifying_point(res), entry.label,
                         stamp.replace(":\n", ": "), _STAMP_COLOUR[kind]).plot(legend_pt=LEGEND_PT)
    return ("roc", display.figure_, caption + "; " + why)


KIND = AuditKind(
    "tradeoff", run, FIELDS, result=TradeoffAudit, doc=run.__doc__.split("\n")[0], target=mechanism_target,
    check=check_pair, check_built=check_adjacent, headline=headline, figures=tradeoff_figures, table_rows={"epsilon": epsilon_row},
)
