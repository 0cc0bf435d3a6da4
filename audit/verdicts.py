"""What a report entry's verdict means to a reader: its outcome, label and the report's overall status.

An entry's ``verdict`` (``report.json``) is what the audit decided about the *claim*; its
*outcome* is what the reader should conclude, which also depends on whether the entry
is a negative control (``expect = "violation"`` or ``"biased"``: a target known to be
broken) and on whether any bound or test applied at all:

=================================  =========================================================
outcome                            entry
=================================  =========================================================
``pass``                           a bound or test applied and found no evidence against the claim
``violation``                      the claim is refuted at the stated confidence
``fail``                           a check failed (e.g. an estimator claimed unbiased is biased)
``expected-violation-caught``      a negative control whose known violation the audit caught
``expected-violation-missed``      a negative control the audit did not catch (a failure of the audit)
``inconclusive``                   no bound or test applied, or the evidence is only partial
``info``                           informational: nothing was claimed (utility curves, open questions)
``error``                          the task raised
=================================  =========================================================

The overall status (:func:`overall_status`) is the most severe outcome present:
``violation`` > ``expected-violation-missed`` = ``fail`` > ``error``; otherwise ``pass``,
also when some audits were inconclusive (they are counted and named in the report's
status line), unless *no* audit tested anything and some were inconclusive, in which
case the status is ``inconclusive``. The CLI exits 0 exactly when the status is
``pass``.
"""

from __future__ import annotations

from collections import Counter

#: Outcomes in display order, with the label a reader sees.
OUTCOME_LABELS = {
    "violation": "violation",
    "expected-violation-missed": "violation expected — MISSED",
    "fail": "fail",
    "error": "error",
    "inconclusive": "inconclusive",
    "pass": "pass",
    "expected-violation-caught": "violation expected — caught",
    "info": "informational",
}
#: Severity of an outcome for the overall status (0: does not change a ``pass``).
SEVERITY = {"violation": 4, "expected-violation-missed": 3, "fail": 3, "error": 2, "inconclusive": 0, "pass": 0,
            "expected-violation-caught": 0, "info": 0}
#: Outcomes that mean a bound or test applied and agreed with what was expected.
TESTED_OK = ("pass", "expected-violation-caught")
#: ``expect`` values of negative controls.
NEGATIVE_CONTROLS = ("violation", "biased")


def is_negative_control(entry: dict) -> bool:
    """True for an entry whose target is known to violate its claim (``expect`` violation/biased)."""
    return entry.get("expect") in NEGATIVE_CONTROLS


def outcome(entry: dict) -> str:
    """The outcome of a report entry (one of :data:`OUTCOME_LABELS`).

    Unknown verdicts of third-party kinds map to ``"error"`` only if they say so;
    any other unknown verdict is ``"inconclusive"`` (never a silent pass).
    """
    verdict = entry.get("verdict", "info")
    if verdict in ("error", "violation", "inconclusive", "info"):
        return verdict
    if is_negative_control(entry):
        return "expected-violation-caught" if verdict == "pass" else "expected-violation-missed"
    if verdict in ("pass", "fail"):
        return verdict
    return "inconclusive"


def outcome_label(entry: dict) -> str:
    """The human label of an entry's outcome ("violation expected — caught", "bias expected — detected", ...)."""
    out = outcome(entry)
    if entry.get("expect") == "biased" and out.startswith("expected-violation"):
        return "bias expected — detected" if out.endswith("caught") else "bias expected — MISSED"
    return OUTCOME_LABELS[out]


def outcome_counts(entries: list[dict]) -> dict[str, int]:
    """Number of entries of each outcome present, in :data:`OUTCOME_LABELS` order."""
    counts = Counter(outcome(e) for e in entries)
    return {k: counts[k] for k in OUTCOME_LABELS if counts[k]}


def overall_status(counts: dict[str, int]) -> str:
    """``pass``, ``inconclusive`` or the most severe outcome present (see the module docstring)."""
    worst = max(counts, key=lambda k: SEVERITY.get(k, 2), default="pass")
    if SEVERITY.get(worst, 2) > 0:
        return "fail" if worst == "expected-violation-missed" else worst
    if counts.get("inconclusive") and not any(counts.get(k) for k in TESTED_OK):
        return "inconclusive"
    return "pass"


#: Labels of the outcome counts in a report's status line.
COUNT_LABELS = {**OUTCOME_LABELS, "expected-violation-missed": "negative controls MISSED",
                "expected-violation-caught": "negative controls caught", "inconclusive": "inconclusive (no bound or "
                "test applied)"}


def status_sentence(counts: dict[str, int], n_audits: int) -> str:
    """``"12 audits: 7 pass, 3 negative controls caught, 1 inconclusive (...), 1 informational"``."""
    parts = ", ".join(f"{n} {COUNT_LABELS.get(k, k)}" for k, n in counts.items())
    return f"{n_audits} audit{'s' if n_audits != 1 else ''}" + (f": {parts}" if parts else "")


__all__ = ["COUNT_LABELS", "NEGATIVE_CONTROLS", "OUTCOME_LABELS", "SEVERITY", "is_negative_control", "outcome", "outcome_counts",
           "outcome_label", "overall_status", "status_sentence"]
