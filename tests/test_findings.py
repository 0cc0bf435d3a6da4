"""Findings a user can act on (issue 25): leak families, figures that agree with the outcome, reports from Python.

* A trade-off audit reports the best certified ε̲ of each leak family (floating point,
  distribution, degenerate outputs), so numpy's textbook Laplace at half its scale shows
  both the float leak and the wrong calibration.
* Stamps and captions follow the entry's outcome; the operating point that certified ε̲
  is drawn; no ε̲ exceeds the table's maximum certifiable ε. Checked on built entries,
  on every committed report and on freshly generated ones.
* ``result.plot()``, ``_repr_html_`` and ``privaudit.audit.write_report``.
"""

from __future__ import annotations

import json
import math
import pathlib

import numpy as np
import pytest

from privaudit.attacks.protocol import LEAK_FAMILIES, leak_family
from privaudit.attacks.distinguishers import AtomAttack, LikelihoodRatioAttack, ProjectionAttack
from privaudit.attacks.floating_point import BitPatternAttack, LatticeAttack
from privaudit.attacks.reachability import NumpyLaplaceReachability
from privaudit.audit import audit_tradeoff, results_report, write_report
from privaudit.audit.app.report_store import load_report
from privaudit.audit.engines import tradeoff as T
from privaudit.audit.kinds import entry_from_dict, renderer
from privaudit.audit.kinds.tradeoff import certifiable_ceiling, certifying_point, family_lines, verdict_text
from privaudit.audit.reporting.render import report_entries, report_files
from privaudit.audit.results import AuditEntry, apply_expectation
from privaudit.audit.verdicts import Outcome, count_label, outcome, status_sentence
from privaudit.mechanisms.unsafe import UnsafeFloatLaplaceMechanism
from result_factories import tradeoff_result

ROOT = pathlib.Path(__file__).resolve().parents[1]
COMMITTED = sorted((ROOT / "reports").glob("*/report.json"))


# --------------------------------------------------------------------------- leak families
def test_attackers_declare_their_leak_family():
    assert [leak_family(a) for a in (BitPatternAttack, LatticeAttack, NumpyLaplaceReachability)] == \
        ["floating-point"] * 3
    assert leak_family(AtomAttack) == "degenerate"
    assert leak_family(LikelihoodRatioAttack) == leak_family(ProjectionAttack) == "distribution"
    assert leak_family(object()) == "distribution"  # an attacker declaring nothing
    assert set(LEAK_FAMILIES) == {"floating-point", "distribution", "degenerate"}

    class Odd:
        leak_family = "timing"

    with pytest.raises(ValueError, match="Odd.leak_family must be one of .* got leak_family='timing'"):
        leak_family(Odd)


def test_each_family_with_evidence_is_certified_and_a_family_without_is_not():
    # ranked: 1 (float), 0 (float), 3 (distribution, crit > 0), 2 (degenerate, crit 0)
    families = ["floating-point", "floating-point", "degenerate", "distribution"]
    crits = [2.0, 3.0, 0.0, 0.5]
    assert T._certified(crits, None, families) == [1, 0, 3]
    assert T._certified(crits, None) == [1, 0]  # without families: the two best-ranked, as before
    # the forced likelihood ratio keeps its place; the family it covers adds nothing
    assert T._certified([1.0, 3.0, 0.2], 0, ["distribution", "floating-point", "distribution"]) == [0, 1]


@pytest.fixture(scope="module")
def textbook_laplace():
    """numpy's x + laplace(0, b) claimed ε = 1, at the right scale (b = 1) and at half of it."""
    return {b: audit_tradeoff(UnsafeFloatLaplaceMechanism(epsilon=1.0, scale=b), np.zeros(1), np.ones(1), n=20_000,
                              rng=3) for b in (1.0, 0.5)}


def test_textbook_laplace_at_half_scale_shows_both_leak_classes(textbook_laplace):
    right, half = textbook_laplace[1.0].epsilon_lb_by_family, textbook_laplace[0.5].epsilon_lb_by_family
    for fam in (right, half):
        assert fam["floating-point"]["certified"] and fam["floating-point"]["attacker"] == "reach-numpy-laplace"
        assert fam["floating-point"]["epsilon_lb"] > 5  # exact ε is ∞: outputs reachable under one input only
    # the distribution: exact ε 1 at the right scale, 2 at half of it
    assert right["distribution"]["certified"] and 0.7 < right["distribution"]["epsilon_lb"] <= 1.0
    assert half["distribution"]["certified"] and 1.5 < half["distribution"]["epsilon_lb"] <= 2.0
    # the headline ε̲ is the worst family's, and the verdict is that of the worst
    for res in textbook_laplace.values():
        assert res.epsilon_lb == max(f["epsilon_lb"] for f in res.epsilon_lb_by_family.values())
        assert res.verdict == "violation"
    lines = family_lines(textbook_laplace[0.5])
    assert lines[0].startswith("floating-point leak: ε̲ ") and "(reach-numpy-laplace)" in lines[0]
    assert lines[1].startswith("distribution: ε̲ 1.") and "> 1 (" in lines[1]


def test_families_hold_together_at_the_bonferroni_level(textbook_laplace):
    res = textbook_laplace[0.5]
    k = sum(f["certified"] for f in res.epsilon_lb_by_family.values())
    # one certified attacker per certified family here, each at 1 − (1 − c)/k: the assumptions say k
    assert any(f"{k} evaluated on held-out releases" in a and f"1 - (1 - c)/{k}" in a for a in res.assumptions)
    d = res.to_dict()
    assert d["epsilon_lb_by_family"] == res.epsilon_lb_by_family
    assert type(res).from_dict(d).to_dict() == d


def test_a_result_without_families_writes_no_field():
    res = tradeoff_result()
    assert res.epsilon_lb_by_family == {} and "epsilon_lb_by_family" not in res.to_dict()


# --------------------------------------------------------------------------- stamps, captions, ceiling
def _captions(entry: AuditEntry) -> list[str]:
    kind = renderer(entry.kind)
    return [caption for _, _, caption in kind.figures(entry)]


def test_a_caught_negative_control_says_caught_in_stamp_and_captions():
    res = tradeoff_result(epsilon_lb=10.04, verdict="violation",
                          operating_point={"direction": "reverse", "fpr": 0.0, "fnr": 0.896})
    entry = apply_expectation(res, "violation", caught="violation")
    assert outcome(entry) == Outcome.EXPECTED_VIOLATION_CAUGHT
    stamp, why = verdict_text(entry)
    assert "caught" in stamp and "10.04 > claimed ε = 1" in stamp
    for caption in _captions(entry):
        assert "caught" in caption and "does not exceed" not in caption and "sampling noise" not in caption
    # a missed one says missed
    missed = apply_expectation(tradeoff_result(epsilon_lb=0.5), "violation", caught="violation")
    assert "MISSED" in verdict_text(missed)[0] and all("MISSED" in c for c in _captions(missed))
    # an ordinary pass and a refuted claim
    assert "does not exceed the claimed ε = 1" in verdict_text(AuditEntry(tradeoff_result()))[1]
    refuted = AuditEntry(tradeoff_result(epsilon_lb=1.5, verdict="violation"))
    assert "claim refuted" in verdict_text(refuted)[0] and "1.5 exceeds the claimed ε = 1" in _captions(refuted)[1]


def test_the_certifying_point_is_drawn_forward_reverse_and_at_fpr_zero():
    fwd = tradeoff_result(operating_point={"direction": "forward", "fpr": 0.1, "fnr": 0.6})
    rev = tradeoff_result(operating_point={"direction": "reverse", "fpr": 0.0, "fnr": 0.896})
    assert certifying_point(fwd)[:2] == (0.1, 0.6)
    assert certifying_point(rev)[:2] == (0.896, 0.0)  # a reverse test's errors swap on the forward axes
    entry = AuditEntry(tradeoff_result(operating_point={"direction": "forward", "fpr": 0.0, "fnr": 0.9}))
    kind = renderer("tradeoff")
    figs = {suffix: fig for suffix, fig, _ in kind.figures(entry)}
    for suffix, fig in figs.items():
        ax = fig.axes[0]
        labels = [t.get_text() for t in ax.get_legend().get_texts()]
        assert any(s.startswith("certifying test (forward test, FPR 0, FNR 0.9") for s in labels), (suffix, labels)
    roc = figs["roc"].axes[0]
    [marker] = [ln for ln in roc.get_lines() if ln.get_label().startswith("certifying test")]
    x, y = marker.get_data()
    lo, _ = roc.get_xlim()
    assert x[0] == pytest.approx(lo) and y[0] == pytest.approx(0.1)  # FPR = 0 drawn on the axis, TPR 1 − 0.9


def test_the_ceiling_of_a_split_audit_is_its_pooled_test():
    # The issue's row: ε̲ 10.04 certified by a pooled test beside a one-sided ceiling of 9.697.
    from privaudit.audit.stats.certifiable import max_certifiable_epsilon

    res = tradeoff_result(n_eval=1_200_000, delta=0.0, claim=tradeoff_result().claim.__class__(1.0, 0.0, "l2<=1"))
    assert certifiable_ceiling(res) == max_certifiable_epsilon(2_400_000, 0.95, 0.0)
    assert certifiable_ceiling(tradeoff_result(selection="bonferroni")) == max_certifiable_epsilon(4500, 0.95, 1e-5)
    assert certifiable_ceiling(tradeoff_result(estimator="gdp")) is None


def _tradeoff_problems(entry: AuditEntry) -> list[str]:
    """What contradicts the outcome in an entry's figures, or ε̲ above its ceiling."""
    res, problems = entry.result, []
    eps, lb = res.claim.epsilon, res.epsilon_lb
    ceiling = certifiable_ceiling(res)
    if ceiling is not None and lb > ceiling + 1e-9:
        problems.append(f"ε̲ {lb} above the max certifiable {ceiling}")
    out = outcome(entry)
    for caption in _captions(entry):
        if out == Outcome.EXPECTED_VIOLATION_CAUGHT and ("does not exceed" in caption or "not a violation" in caption):
            problems.append(f"caught control captioned as a pass: {caption}")
        if out == Outcome.PASS and ("refuted" in caption or "caught" in caption):
            problems.append(f"a pass captioned as a refutation: {caption}")
        if math.isfinite(eps) and lb <= eps and "exceeds the claimed" in caption:
            problems.append(f"ε̲ {lb} ≤ {eps} captioned as exceeding: {caption}")
    return problems


def _scan(report: dict) -> list[str]:
    problems = []
    for i, entry in enumerate(report_entries(report)):
        if entry.kind == "tradeoff" and renderer("tradeoff").renders(entry):
            problems += [f"audit {i} ({entry.label}): {p}" for p in _tradeoff_problems(entry)]
    md = report_files(report, figures=False)["report.md"].decode()
    problems += [f"duplicated outcome: {line}" for line in md.splitlines()
                 if line.startswith("Outcome:") and line.count("violation expected") > 1]
    problems += [f"singular count: {line}" for line in md.splitlines() if " 1 negative controls" in line]
    return problems


@pytest.mark.parametrize("path", COMMITTED, ids=[p.parent.name for p in COMMITTED])
def test_no_committed_report_contradicts_its_outcome(path):
    # Rendered again from its JSON with today's renderers (the record is what the Markdown is made from).
    assert _scan(load_report(path)) == []


@pytest.mark.parametrize("path", COMMITTED, ids=[p.parent.name for p in COMMITTED])
def test_no_committed_markdown_contradicts_its_outcome(path):
    md = (path.parent / "report.md").read_text(encoding="utf-8")
    bad = [line for line in md.splitlines()
           if ("violation expected — caught" in line and "does not exceed the claim" in line)
           or (line.startswith("Outcome:") and line.count("violation expected") > 1)
           or " 1 negative controls" in line]
    assert bad == []


def test_a_fresh_report_with_controls_contradicts_nothing(tmp_path, textbook_laplace):
    entries = [AuditEntry(textbook_laplace[1.0], target="textbook Laplace"),
               apply_expectation(textbook_laplace[0.5], "violation", caught="violation")]
    out = write_report(entries, tmp_path / "fresh", name="fresh")
    report = load_report(out / "report.json")
    assert _scan(report) == []
    md = (out / "report.md").read_text(encoding="utf-8")
    assert "1 violation, 1 negative control caught" in md
    assert "Outcome: **violation expected — caught** — ε̲ = " in md


# --------------------------------------------------------------------------- wording
def test_counts_are_singular_for_one():
    assert count_label("expected-violation-caught", 1) == "1 negative control caught"
    assert count_label("expected-violation-caught", 2) == "2 negative controls caught"
    assert count_label("expected-violation-missed", 1) == "1 negative control MISSED"
    assert count_label("pass", 1) == "1 pass"
    assert status_sentence({"pass": 2, "expected-violation-caught": 1}, 3) == "3 audits: 2 pass, 1 negative control caught"


# --------------------------------------------------------------------------- Python API
def test_result_plot_returns_a_figure_by_position_or_name():
    from matplotlib.figure import Figure

    res = tradeoff_result()
    fig = res.plot()
    assert isinstance(fig, Figure) and "Trade-off" in fig.axes[0].get_title()
    assert "ROC" in res.plot("roc").axes[0].get_title() and "ROC" in AuditEntry(res).plot(1).axes[0].get_title()
    with pytest.raises(ValueError, match="which='nope': this tradeoff result has the figures \\['tradeoff', 'roc'\\]"):
        res.plot("nope")


def test_repr_html_shows_outcome_headline_and_escapes_strings():
    html = AuditEntry(tradeoff_result(), target="<b>gauss</b>")._repr_html_()
    assert "&lt;b&gt;gauss&lt;/b&gt;" in html and "<b>gauss</b>" not in html
    assert "class=\"o-pass\"" in html and "vs claimed ε = 1" in html and "data:image/png;base64," in html


def test_write_report_writes_what_the_cli_writes_and_reads_back(tmp_path):
    entries = [tradeoff_result(), AuditEntry(tradeoff_result(epsilon_lb=1.5, verdict="violation"), target="bad")]
    out = write_report(entries, tmp_path / "py", name="from python", description="two results")
    assert {p.name for p in out.iterdir()} >= {"report.json", "report.md", "report.html", "figures"}
    report = json.loads((out / "report.json").read_text())
    assert report["schema"] == "privaudit.report/1" and report["summary"]["status"] == "violation"
    assert [entry_from_dict(a).label for a in report["audits"]] == ["gauss", "bad"]
    # the same bytes as the renderers give for the document
    assert (out / "report.md").read_bytes() == report_files(report)["report.md"]
    # report.json holds the floats at 12 significant digits (render.significant)
    from privaudit.audit.reporting.render import significant

    assert significant(results_report(entries, name="from python", description="two results")["audits"]) == \
        report["audits"]
    with pytest.raises(TypeError, match=r"results\[1\] must be an audit result .* got dict"):
        results_report([tradeoff_result(), {"kind": "tradeoff"}])
    with pytest.raises(ValueError, match="results is empty"):
        results_report([])


def test_a_powered_bias_audit_names_the_pilots_n_required_not_a_number_beside_its_own():
    from privaudit.audit.engines.bias import audit_bias
    from privaudit.audit.studies.bias_budget import (CONFIDENCE, POWER, RELATIVE_RESOLUTION, SAFETY, _Budget,
                                                     powered_audit)

    def sampler(n, rng):
        return rng.normal(1.0, 3.0, (n, 2))

    budget = _Budget(1.0, 0, small=True)
    res = powered_audit(sampler, np.ones(2), name="normal mean", budget=budget, cap=5000, small_cap=5000, pilot=2000)
    pre = audit_bias(sampler, np.ones(2), n=2000, rng=budget.seed("normal mean (pilot)"), chunk_size=20_000,
                     name="normal mean", power=POWER, confidence=CONFIDENCE, relative_resolution=RELATIVE_RESOLUTION)
    want = math.ceil(SAFETY * pre.n_required)
    assert f"the pilot (2000 draws) estimated that a relative bias of 1% needs n_required = {pre.n_required}" in res.note
    assert f"so n = {want} with 15% head-room" in res.note and "own n_required is re-estimated" in res.note


# --------------------------------------------------------------------------- the pytest marker
pytest_plugins = ["pytester"]

TYPO_TESTS = '''
import numpy as np
import pytest
from privaudit.audit.testing import assert_private
from privaudit.mechanisms import GaussianMechanism


@pytest.mark.privacy(eps=1.0)
def test_typo():
    assert_private(GaussianMechanism(epsilon=1.0, delta=1e-5), np.zeros(1), np.ones(1), n=2000)


@pytest.mark.privacy(1.0)
def test_positional():
    pass


@pytest.mark.privacy(epsilon=1.0, n=2000)
def test_fine():
    pass
'''


def test_a_misspelt_privacy_marker_key_is_an_error_naming_it(pytester):
    pytester.makepyfile(test_user=TYPO_TESTS)
    result = pytester.runpytest("-q", "-rf", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=2, passed=1)
    out = result.stdout.str()
    assert "PrivacyMarkerError: @pytest.mark.privacy: unknown key 'eps' (did you mean 'epsilon'?)" in out
    assert "takes keywords only" in out and "(1.0,)" in out


# --------------------------------------------------------------------------- --json on exit 2
def test_json_prints_an_error_object_for_exit_2(tmp_path, capsys):
    from privaudit.audit.app.cli import main

    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\n[[audits]]\nkind = "tradeoff"\nmechanism = { name = "Nope" }\n')
    assert main(["run", str(bad), "--json", "--out", str(tmp_path / "out")]) == 2
    got = json.loads(capsys.readouterr().out)
    assert got["status"] == "error" and got["exit_code"] == 2 and "unknown audits[0].mechanism.name = 'Nope'" in got["error"]
    with pytest.raises(SystemExit) as exc:  # argparse's own refusal
        main(["run", str(bad), "--json", "--samples", "-1"])
    assert exc.value.code == 2
    got = json.loads(capsys.readouterr().out)
    assert got["exit_code"] == 2 and "argument --samples" in got["error"]
    # without --json stdout stays empty
    assert main(["run", str(bad), "--out", str(tmp_path / "out")]) == 2 and capsys.readouterr().out == ""


# --------------------------------------------------------------------------- reconstruction bars, narrow screens
def test_a_bound_that_does_not_apply_does_not_tower_over_the_attacker():
    from result_factories import reconstruction_result

    from privaudit.audit.kinds.reconstruction import reconstruction_figures

    # CRB 3 (not applicable: a biased attacker), MSE 0.5, van Trees 0.3: within a decade of each other, so on
    # a linear axis, where the inapplicable bar was 6x the attacker's
    res = reconstruction_result(crb=3.0, applies={"crb": False, "van_trees": True}, attacker_unbiased=False)
    [(_, fig, _)] = reconstruction_figures(AuditEntry(res))
    ax = fig.axes[0]
    assert ax.get_yscale() == "linear"
    assert ax.get_ylim()[1] == pytest.approx(1.25 * 0.56)  # the attacker's CI, not the inapplicable bound
    assert any(t.get_text() == "3 ↑" for t in ax.texts)
    crb_bar = ax.patches[1]
    assert crb_bar.get_facecolor()[3] == 0 and crb_bar.get_hatch() == "//"  # unfilled, hatched
    # far apart: a log axis shows every bar
    [(_, fig, _)] = reconstruction_figures(AuditEntry(reconstruction_result(crb=60.0)))
    assert fig.axes[0].get_yscale() == "log"


def test_phone_width_keeps_the_certified_and_ceiling_columns(tmp_path):
    html = write_report([AuditEntry(tradeoff_result())], tmp_path / "narrow", figures=False) / "report.html"
    text = html.read_text(encoding="utf-8")
    assert "table.summary .wide-only{display:none}" in text
    header = text.split("<table class='summary'>", 1)[1].split("</tr>", 1)[0]
    assert "<th class=wide-only>estimator (assumption)</th>" in header
    assert "<th>certified ε̲</th>" in header and "<th>max certifiable ε</th>" in header


def test_each_family_has_its_own_row_in_the_details(textbook_laplace):
    from privaudit.audit.reporting.render import scalar_rows

    rows = dict(scalar_rows(AuditEntry(textbook_laplace[0.5])))
    fam = textbook_laplace[0.5].epsilon_lb_by_family
    assert rows["epsilon_lb_by_family.floating-point"].startswith("epsilon_lb=") and \
        "attacker=reach-numpy-laplace, certified=true" in rows["epsilon_lb_by_family.floating-point"]
    assert rows["epsilon_lb_by_family.distribution"] == \
        f"epsilon_lb={fam['distribution']['epsilon_lb']:.4g}, attacker=likelihood-ratio, certified=true"


def test_log_axes_keep_their_number_labels_while_user_text_stays_plain():
    # A log axis' tick labels are mathtext written by matplotlib's formatter ($10^{-3}$); drawn as plain
    # text they read '$\mathdefault{10^{-3}}$' in every ROC. A user's '$' stays a dollar sign.
    from privaudit.audit.display.plotting import new_figure, png

    fig, ax = new_figure()
    ax = ax[0, 0]
    ax.plot([1e-3, 1], [1e-3, 1], label="costs $x^{$ per query")
    ax.set(xscale="log", yscale="log", title="a $title$")
    ax.legend()
    png_bytes = png(fig)  # draws without a mathtext error
    assert png_bytes[:8] == b"\x89PNG\r\n\x1a\n"
    labels = [t for t in ax.xaxis.get_ticklabels() if t.get_text()]
    assert labels and all(t.get_parse_math() for t in labels)
    assert not ax.title.get_parse_math() and not ax.get_legend().get_texts()[0].get_parse_math()
    # labels set by hand are user text: plain
    fig, ax = new_figure()
    ax = ax[0, 0]
    ax.bar([0, 1], [1, 2])
    ax.set_xticks([0, 1], ["$a", "b$"])
    png(fig)
    assert not any(t.get_parse_math() for t in ax.xaxis.get_ticklabels())


def test_long_labels_wrap_into_the_figure_title_instead_of_being_cut():
    from privaudit.audit.display.formatting import title_lines
    from result_factories import reconstruction_result

    from privaudit.audit.kinds.reconstruction import reconstruction_figures

    label = "Modulated release, d=3, x ~ N(0, I/3) prior (Bayesian attacker vs van Trees), a long label indeed"
    t = title_lines("Reconstruction", label, width=60)
    assert t.count("\n") == 1 and all(len(line) <= 60 for line in t.split("\n")) and t.endswith("indeed")
    long = title_lines("ROC", label * 2, width=60)
    assert long.count("\n") == 1 and long.endswith("…")  # at most two lines, an ellipsis for the rest
    assert title_lines("ROC", "short") == "ROC: short"
    [(_, fig, _)] = reconstruction_figures(AuditEntry(reconstruction_result(), target=label))
    assert fig.axes[0].get_title() == t
