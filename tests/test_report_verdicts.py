"""Verdicts that mean what they say, and a report that reads at a glance (issue 16).

* outcomes: negative controls caught / missed, inconclusive audits, honest counts and status;
* a reconstruction audit in which no bound applies is inconclusive, not a pass, and its headline
  does not list bounds as if they had been compared;
* the report opens with the verdict and the ε table (estimator named per row), details collapse,
  empty fields and repeated notes are not shown, Markdown escapes HTML from the configuration;
* generated trend sentences follow the numbers.
"""

from __future__ import annotations

import dataclasses
import html
import re

import numpy as np
import pytest

from privaudit.audit.app.config import parse_config
from privaudit.audit.reporting.figures import headline, summary_tables
from privaudit.audit.kinds.reconstruction import applied_bounds, judge
from privaudit.audit.kinds.reconstruction import run as run_reconstruction
from privaudit.audit.reporting.render import (build_report, render_html, render_markdown, report_entries,
                                              scalar_rows, summarize)
from privaudit.audit.results import AuditEntry, FailedTask, UntypedResult, apply_expectation
from privaudit.audit.stats.trend import loglog_slope, trend_sentence
from privaudit.audit.verdicts import Outcome, Verdict, outcome, outcome_label, overall_status
from result_factories import bias_result, experiment_result, tradeoff_result


def _entry(verdict: str, expect: str | None = None) -> AuditEntry:
    """A trade-off entry with this verdict; with ``expect``, a negative control whose entry verdict it is."""
    if expect == "biased":
        return AuditEntry(bias_result(verdict=verdict, expect="biased"))
    if expect is not None:
        return AuditEntry(tradeoff_result(verdict="violation"), verdict=verdict, expect=expect)
    return AuditEntry(tradeoff_result(verdict=verdict))


# --------------------------------------------------------------------------- outcomes and status
@pytest.mark.parametrize("entry, want", [
    (_entry("pass"), "pass"),
    (_entry("pass", "violation"), "expected-violation-caught"),
    (_entry("fail", "violation"), "expected-violation-missed"),
    (_entry("pass", "biased"), "expected-violation-caught"),
    (_entry("fail", "biased"), "expected-violation-missed"),
    (_entry("inconclusive"), "inconclusive"),
    (AuditEntry(UntypedResult({"kind": "x", "target": "t", "verdict": "something-new"})), "inconclusive"),
    (AuditEntry(experiment_result()), "info"),
    (AuditEntry(FailedTask("tradeoff", "t", "ValueError: boom")), "error"),
    (_entry("violation"), "violation"),
])
def test_outcome_of_entries(entry, want):
    assert outcome(entry) == want and isinstance(outcome(entry), Outcome)


def test_negative_control_labels():
    assert outcome_label(_entry("pass", "violation")) == "violation expected — caught"
    assert outcome_label(_entry("fail", "violation")) == "violation expected — MISSED"
    assert outcome_label(_entry("pass", "biased")) == "bias expected — detected"


def test_status_counts_outcomes_honestly():
    entries = [_entry("pass"), _entry("pass", "violation"), _entry("inconclusive"), AuditEntry(experiment_result())]
    s = summarize(entries)
    assert s == {"status": "pass", "n_audits": 4,
                 "counts": {"inconclusive": 1, "pass": 1, "expected-violation-caught": 1, "info": 1}}
    # a missed negative control is a failure of the audit
    assert summarize([_entry("pass"), _entry("fail", "violation")])["status"] == "fail"
    # nothing tested at all: not a pass
    assert summarize([_entry("inconclusive"), AuditEntry(experiment_result())])["status"] == "inconclusive"
    assert overall_status({"violation": 1, "error": 1, "fail": 2}) == "violation"
    assert overall_status({}) is Verdict.PASS


# --------------------------------------------------------------------------- reconstruction: inconclusive
def _recon(params: dict):
    from privaudit.audit.kinds import get_kind

    kind = get_kind("reconstruction")
    full = {k: f.default for k, f in kind.fields.items()}
    return run_reconstruction({**full, **params}, np.random.default_rng(7))


def test_reconstruction_without_applicable_bound_is_inconclusive():
    """A biased attacker (MAP with a prior) on a Gaussian release *with* a prior: van Trees applies -> pass;
    the same audit with every bound marked inapplicable -> inconclusive, and the headline lists no bound."""
    res = _recon({"mechanism": {"name": "gaussian", "sigma": 1.0}, "n": 400,
                  "prior": {"name": "gaussian", "mean": [0.0, 0.0], "cov": [[1.0, 0.0], [0.0, 1.0]]}})
    assert "van_trees" in applied_bounds(res) and res.verdict == "pass"
    assert "van Trees" in headline(AuditEntry(res))

    none_apply = dataclasses.replace(res, comparison=dataclasses.replace(
        res.comparison, applies={k: False for k in res.comparison.applies}), verdict="pass")
    judged = judge(none_apply)
    assert judged.verdict == "inconclusive" and any("nothing was tested" in n for n in judged.notes)
    text = headline(AuditEntry(judged))
    assert "no bound applies" in text
    assert "van Trees" not in text and "CRB" not in text
    # a violation or an applicable bound is left alone
    assert judge(dataclasses.replace(none_apply, verdict="violation")).verdict == "violation"
    assert judge(res) is res


# --------------------------------------------------------------------------- layout
def _report(entries: list[AuditEntry], description: str = "demo"):
    cfg = parse_config({"name": "layout", "seed": 1, "description": description, "audits": [
        {"kind": "tradeoff", "mechanism": {"name": "gaussian", "sigma": 1.0}, "x": [0.0], "x_prime": [1.0]}]})

    class Task:
        def __init__(self, i):
            self.index, self.seed, self.key = i, 1, f"k{i}"

    tasks = [Task(i) for i in range(len(entries))]
    return build_report(cfg, tasks, {i: {"results": [e]} for i, e in enumerate(entries)})


def _tradeoff(estimator: str, **extra) -> AuditEntry:
    res = tradeoff_result(target=f"gauss {estimator}", epsilon_lb=0.7, epsilon_exact=1.0, estimator=estimator, n=5000,
                          n_eval=4000, mu_lb=None, notes=("same note", "same note"), **extra)
    return AuditEntry(res)


def test_epsilon_table_names_estimator_and_assumption():
    rep = _report([_tradeoff("clopper-pearson"), _tradeoff("gdp"),
                   apply_expectation(_tradeoff("clopper-pearson", verdict="violation"), "violation",
                                     caught="violation")])
    title, header, rows, _ = summary_tables(report_entries(rep))[0]
    col = header.index("estimator (assumption)")
    assert rows[0][col].startswith("Clopper–Pearson") and "no assumption" in rows[0][col]
    assert rows[1][col].startswith("GDP") and "assumes a Gaussian" in rows[1][col]
    assert rows[1][header.index("max certifiable ε")] == "—"  # no Clopper–Pearson ceiling for the GDP fit
    assert rows[2][header.index("outcome")] == "violation expected — caught"
    assert "(GDP, assumes Gaussian)" in headline(report_entries(rep)[1])


def _html(rep: dict) -> str:
    entries = report_entries(rep)
    return render_html(rep, entries, {}, summary_tables(entries))


def test_html_opens_with_verdict_then_epsilon_table_then_details():
    rep = _report([_tradeoff("clopper-pearson"), AuditEntry(experiment_result(series={}, panels={}),
                                                            target="curves")])
    page = _html(rep)
    i_verdict = page.index("id='verdict'")
    i_table = page.index("Privacy: claimed, exact and certified ε")
    i_details = page.index("<details class='audit'")
    assert i_verdict < i_table < i_details
    assert "PASS" in page[i_verdict:i_table] and "1 pass, 1 informational" in page[i_verdict:i_table]
    assert page.count("same note") == 1  # notes once
    assert "mu_lb" not in page  # empty fields are not listed
    assert "<meta name='viewport'" in page


def test_markdown_escapes_html_from_the_configuration():
    evil = "<script>alert(1)</script> & <b>bold</b>"
    rep = _report([AuditEntry(tradeoff_result(target=evil, notes=(evil,)))], description=evil)
    entries = report_entries(rep)
    md = render_markdown(rep, entries, {}, summary_tables(entries))
    assert "<script>" not in md and "<b>" not in md
    assert html.escape(evil, quote=False) in md
    assert "<script>" not in _html(rep)


def test_scalar_rows_skip_empty_and_shown_elsewhere():
    rows = dict(scalar_rows(AuditEntry(UntypedResult({
        "kind": "x", "a": None, "b": [], "c": {}, "d": {"u": None}, "e": 1.5, "notes": ["n"], "error": None,
        "expect": "violation"}))))
    assert rows == {"e": "1.5"}


# --------------------------------------------------------------------------- generated sentences
def test_trend_sentence_follows_the_numbers():
    # the values behind issue 16's "keeps decreasing with K (slope ≈ −1)"
    s = trend_sentence("excess risk", "K", [500, 2000, 8000], [0.2453, 0.1769, 0.3323])
    assert "is not monotone" in s and "decreas" not in s and "0.245 → 0.177 → 0.332" in s
    k = np.array([500.0, 2000, 8000, 32000])
    s = trend_sentence("excess risk", "K", k, 3.0 / k)
    assert "decreases" in s and "log–log slope -1.00" in s
    assert loglog_slope(k, 3.0 / k) == pytest.approx(-1.0, abs=1e-12)
    assert loglog_slope([1, 2], [1.0, -1.0]) is None
    # differences inside two standard errors are noise, not a trend
    assert "flat within noise" in trend_sentence("r", "n", [1, 2, 3], [1.0, 1.01, 0.995], [0.02, 0.02, 0.02])
    assert "increases" in trend_sentence("r", "n", [1, 2, 3], [1.0, 2.0, 3.0])


def test_no_hard_coded_trend_claims_in_generated_notes():
    """Notes of the shipped experiments state measured values, not a trend fixed in advance."""
    from pathlib import Path

    import privaudit.audit as audit_pkg

    root = Path(audit_pkg.__file__).parent
    claims = re.compile(r"keeps (de|in)creasing|slope ≈|drive[s]? the excess risk to 0|stalls at")
    offenders = [f"{p.name}:{i + 1}" for p in sorted(root.rglob("*.py")) if p.name != "trend.py"
                 for i, line in enumerate(p.read_text().splitlines())
                 if claims.search(line) and '"' in line and not line.lstrip().startswith("#")]
    assert offenders == []


def test_tradeoff_that_could_not_refute_its_claim_is_inconclusive():
    """ε = 12 with 120 evaluation releases: no Clopper–Pearson ε̲ can exceed 12, so a pass would be vacuous.
    The same mechanism at ε = 1 with enough releases passes, and an under-noised one is caught."""
    from privaudit.audit.kinds import get_kind

    kind = get_kind("tradeoff")
    full = {k: f.default for k, f in kind.fields.items()}

    def run(mechanism, n, **extra):
        return kind.run({**full, "mechanism": mechanism, "n": n, **extra}, np.random.default_rng(0))

    vacuous = run({"name": "gaussian", "epsilon": 12.0, "delta": 1e-5}, 200)
    assert vacuous.result.verdict is Verdict.INCONCLUSIVE and vacuous.result.min_detectable_ratio == float("inf")
    assert any("could not have refuted" in n for n in vacuous.result.notes)
    fine = run({"name": "gaussian", "epsilon": 1.0, "delta": 1e-5}, 2000)
    assert fine.final_verdict == "pass" and outcome(fine) == "pass"
    broken = run({"name": "gaussian", "sigma": 0.3, "epsilon": 1.0, "delta": 1e-5}, 2000, expect="violation")
    assert outcome(broken) == "expected-violation-caught", broken.result.epsilon_lb


def test_exit_code_with_inconclusive_audits(tmp_path):
    """Documented CLI contract: inconclusive audits are counted but do not turn a pass into exit 1, unless
    nothing at all was tested; a missed negative control is exit 1."""
    from privaudit.audit.app.runner import run_config

    vacuous = {"kind": "tradeoff", "target": "vacuous", "n": 200,
               "mechanism": {"name": "gaussian", "epsilon": 12.0, "delta": 1e-5}}
    tested = {"kind": "tradeoff", "target": "tested", "n": 2000,
              "mechanism": {"name": "gaussian", "epsilon": 1.0, "delta": 1e-5}}
    missed = {**tested, "target": "missed control", "expect": "violation"}  # a correct mechanism: nothing to catch

    def run(name, audits):
        return run_config(parse_config({"name": name, "seed": 2, "audits": audits}), out=tmp_path,
                          use_cache=False, figures=False)

    mixed = run("mixed", [vacuous, tested])
    assert mixed.report["summary"]["counts"] == {"inconclusive": 1, "pass": 1} and mixed.exit_code == 0
    assert "1 inconclusive (no bound or test applied)" in (tmp_path / "mixed" / "report.md").read_text()
    nothing = run("nothing", [vacuous])
    assert nothing.status == "inconclusive" and nothing.exit_code == 1
    control = run("control", [missed])
    assert control.report["summary"]["counts"] == {"expected-violation-missed": 1}
    assert control.status == "fail" and control.exit_code == 1
    assert "violation expected — MISSED" in (tmp_path / "control" / "report.md").read_text()
