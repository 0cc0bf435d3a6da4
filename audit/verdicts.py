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

Verdicts are :class:`Verdict` members and outcomes :class:`Outcome` members, both
:class:`str` enums whose members read, compare and serialise as their values.

The overall status (:func:`overall_status`) is the most severe outcome present:
``violation`` > ``expected-violation-missed`` = ``fail`` > ``error``; otherwise ``pass``,
also when some audits were inconclusive (they are counted and named in the report's
status line), unless *no* audit tested anything and some were inconclusive, in which
case the status is ``inconclusive``. The CLI exits 0 exactly when the status is
``pass``.
"""

from __future__ import annotations

import enum
from collections import Counter
from typing import Protocol


class Verdict(enum.StrEnum):
    """What an audit decided about its claim (an entry's ``verdict`` in ``report.json``).

    A :class:`str` enum: a member equals, hashes, formats, prints and serialises to JSON
    exactly as its value, so reports and string comparisons read as before.
    """

    PASS = "pass"
    VIOLATION = "violation"
    FAIL = "fail"
    INCONCLUSIVE = "inconclusive"
    INFO = "info"
    ERROR = "error"

    def __repr__(self) -> str:
        # The value's repr, so that notes and reprs quoting a verdict ({v!r}) read 'pass' as before.
        return repr(self.value)


class Outcome(enum.StrEnum):
    """What a reader should conclude from an entry: its verdict, read against its expectation (display order)."""

    VIOLATION = "violation"
    EXPECTED_VIOLATION_MISSED = "expected-violation-missed"
    FAIL = "fail"
    ERROR = "error"
    INCONCLUSIVE = "inconclusive"
    PASS = "pass"
    EXPECTED_VIOLATION_CAUGHT = "expected-violation-caught"
    INFO = "info"

    def __repr__(self) -> str:
        return repr(self.value)


class Judged(Protocol):
    """What the outcome of an entry depends on (:class:`~privaudit.audit.results.AuditEntry` has both)."""

    @property
    def final_verdict(self) -> str: ...

    @property
    def expectation(self) -> str | None: ...


#: Outcomes in display order, with the label a reader sees.
OUTCOME_LABELS = {
    Outcome.VIOLATION: "violation",
    Outcome.EXPECTED_VIOLATION_MISSED: "violation expected — MISSED",
    Outcome.FAIL: "fail",
    Outcome.ERROR: "error",
    Outcome.INCONCLUSIVE: "inconclusive",
    Outcome.PASS: "pass",
    Outcome.EXPECTED_VIOLATION_CAUGHT: "violation expected — caught",
    Outcome.INFO: "informational",
}
#: Severity of an outcome for the overall status (0: does not change a ``pass``).
SEVERITY = {Outcome.VIOLATION: 4, Outcome.EXPECTED_VIOLATION_MISSED: 3, Outcome.FAIL: 3, Outcome.ERROR: 2,
            Outcome.INCONCLUSIVE: 0, Outcome.PASS: 0, Outcome.EXPECTED_VIOLATION_CAUGHT: 0, Outcome.INFO: 0}
#: Outcomes that mean a bound or test applied and agreed with what was expected.
TESTED_OK = (Outcome.PASS, Outcome.EXPECTED_VIOLATION_CAUGHT)
#: ``expect`` values of negative controls.
NEGATIVE_CONTROLS = ("violation", "biased")


def is_negative_control(entry: Judged) -> bool:
    """True for an entry whose target is known to violate its claim (``expect`` violation/biased).

    Parameters
    ----------
    entry : AuditEntry
        A report entry.

    Returns
    -------
    bool
    """
    return entry.expectation in NEGATIVE_CONTROLS


def outcome(entry: Judged) -> Outcome:
    """The outcome of a report entry (one of :data:`OUTCOME_LABELS`).

    Unknown verdicts (a plain-dict result of a third-party kind) are ``"inconclusive"``,
    never a silent pass.

    Parameters
    ----------
    entry : AuditEntry
        A report entry: its final verdict and its expectation decide.

    Returns
    -------
    Outcome
    """
    verdict = entry.final_verdict
    if verdict in (Verdict.ERROR, Verdict.VIOLATION, Verdict.INCONCLUSIVE, Verdict.INFO):
        return Outcome(verdict)
    if is_negative_control(entry):
        return Outcome.EXPECTED_VIOLATION_CAUGHT if verdict == Verdict.PASS else Outcome.EXPECTED_VIOLATION_MISSED
    if verdict in (Verdict.PASS, Verdict.FAIL):
        return Outcome(verdict)
    return Outcome.INCONCLUSIVE


def outcome_label(entry: Judged) -> str:
    """The human label of an entry's outcome ("violation expected — caught", "bias expected — detected", ...).

    Parameters
    ----------
    entry : AuditEntry
        A report entry.

    Returns
    -------
    str
    """
    out = outcome(entry)
    if entry.expectation == "biased" and out.startswith("expected-violation"):
        return "bias expected — detected" if out.endswith("caught") else "bias expected — MISSED"
    return OUTCOME_LABELS[out]


def outcome_counts(entries: list[Judged]) -> dict[str, int]:
    """Number of entries of each outcome present, in :data:`OUTCOME_LABELS` order.

    Parameters
    ----------
    entries : list of AuditEntry
        The report's entries.

    Returns
    -------
    dict of str to int
        Keys are plain strings (the JSON summary's ``counts``).
    """
    counts = Counter(outcome(e) for e in entries)
    return {str(k): counts[k] for k in OUTCOME_LABELS if counts[k]}


def overall_status(counts: dict[str, int]) -> Verdict:
    """``pass``, ``inconclusive`` or the most severe outcome present (see the module docstring).

    Parameters
    ----------
    counts : dict of str to int
        Entries per outcome (:func:`outcome_counts`); an unknown key counts as an error.

    Returns
    -------
    Verdict
        ``fail`` for a missed negative control.
    """
    worst = max(counts, key=lambda k: SEVERITY.get(k, 2), default=Outcome.PASS)
    if SEVERITY.get(worst, 2) > 0:
        if worst == Outcome.EXPECTED_VIOLATION_MISSED:
            return Verdict.FAIL
        return Verdict(worst) if worst in set(Verdict) else Verdict.ERROR
    if counts.get(Outcome.INCONCLUSIVE) and not any(counts.get(k) for k in TESTED_OK):
        return Verdict.INCONCLUSIVE
    return Verdict.PASS


#: Labels of the outcome counts in a report's status line.
COUNT_LABELS = {**OUTCOME_LABELS, Outcome.EXPECTED_VIOLATION_MISSED: "negative controls MISSED",
                Outcome.EXPECTED_VIOLATION_CAUGHT: "negative controls caught",
                Outcome.INCONCLUSIVE: "inconclusive (no bound or test applied)"}
#: The singular of the count labels that have a plural noun ("1 negative control caught").
_SINGULAR = {Outcome.EXPECTED_VIOLATION_MISSED: "negative control MISSED",
             Outcome.EXPECTED_VIOLATION_CAUGHT: "negative control caught"}


def count_label(outcome_key: str, n: int) -> str:
    """``"3 negative controls caught"``, ``"1 negative control caught"``, ``"2 pass"``: a count with its label.

    Parameters
    ----------
    outcome_key : str
        An outcome (:class:`Outcome` value); an unknown one is shown as it is.
    n : int
        How many entries have it.

    Returns
    -------
    str
    """
    label = _SINGULAR.get(outcome_key) if n == 1 else None
    return f"{n} {label or COUNT_LABELS.get(outcome_key, outcome_key)}"


def status_sentence(counts: dict[str, int], n_audits: int) -> str:
    """``"12 audits: 7 pass, 3 negative controls caught, 1 inconclusive (...), 1 informational"``.

    Parameters
    ----------
    counts : dict of str to int
        Entries per outcome (:func:`outcome_counts`).
    n_audits : int
        Entries in the report.

    Returns
    -------
    str
    """
    parts = ", ".join(count_label(k, n) for k, n in counts.items())
    return f"{n_audits} audit{'s' if n_audits != 1 else ''}" + (f": {parts}" if parts else "")


__all__ = ["COUNT_LABELS", "NEGATIVE_CONTROLS", "count_label", "OUTCOME_LABELS", "SEVERITY", "Judged", "Outcome", "Verdict",
           "is_negative_control", "outcome", "outcome_counts", "outcome_label", "overall_status", "status_sentence"]
