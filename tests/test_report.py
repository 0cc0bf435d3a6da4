"""Report writer: JSON schema, Markdown, self-contained HTML, figures, ε table."""

from __future__ import annotations

import base64
import json
import math
import re

import numpy as np
import pytest
from scipy import stats

from privaudit.audit.app.config import parse_config
from privaudit.audit.stats.certifiable import max_certifiable_epsilon
from privaudit.audit.reporting.figures import summary_tables
from privaudit.audit.app.report_store import load_report, write_report
from privaudit.audit.reporting.render import SCHEMA, build_report, report_entries, summarize
from privaudit.audit.results import AuditEntry, FailedTask, UntypedResult
from result_factories import bias_result, experiment_result, reconstruction_result, tradeoff_result


def tradeoff_entry(verdict="pass") -> AuditEntry:
    """A trade-off entry from the exact Gaussian curve (μ = 0.5)."""
    return AuditEntry(tradeoff_result(verdict=verdict))


def entries() -> list:
    """Typed entries of every built-in rendering, an unknown kind's plain data and a failed task."""
    return [
        tradeoff_entry(),
        AuditEntry(reconstruction_result()),
        AuditEntry(bias_result()),
        AuditEntry(experiment_result()),
        AuditEntry(UntypedResult({"kind": "mystery", "target": "new kind", "verdict": "info", "answer": 42,
                                  "score": "inf", "pair": [1, 2], "long": list(range(50))})),
        AuditEntry(FailedTask("tradeoff", "crashed", "ValueError: boom", "Traceback ...\nValueError: boom")),
    ]


def _judged(*pairs) -> list[AuditEntry]:
    """Entries with the given (verdict, expect) pairs."""
    return [AuditEntry(tradeoff_result(verdict="pass"), verdict=v, expect=x) if x else
            AuditEntry(tradeoff_result(verdict=v)) for v, x in pairs]


class FakeTask:
    def __init__(self, index, seed):
        self.index, self.seed, self.key = index, seed, f"key{index}"


@pytest.fixture(scope="module")
def report():
    cfg = parse_config({"name": "rep", "seed": 3, "audits": [
        {"kind": "tradeoff", "mechanism": {"name": "gaussian", "sigma": 1.0}, "x": [0.0], "x_prime": [1.0]}]})
    tasks = [FakeTask(i, 3) for i in range(len(entries()))]
    return build_report(cfg, tasks, {i: {"results": [e]} for i, e in enumerate(entries())})


@pytest.fixture(scope="module")
def written(report, tmp_path_factory):
    """The report written once (figures are the slow part); tests only read it."""
    return write_report(report, tmp_path_factory.mktemp("report"))


def test_report_json_schema_and_contents(written):
    tmp_path = written
    data = json.loads((tmp_path / "report.json").read_text())  # strict JSON: no NaN/Infinity tokens
    assert data["schema"] == SCHEMA == "privaudit.report/1"
    assert {"privaudit", "numpy", "scipy", "scikit-learn", "torch", "dp-accounting", "python"} <= set(data["versions"])
    assert data["seed"] == 3 and data["config"]["name"] == "rep" and data["seeds"][0]["spawn_key"] == [0]
    assert [a["kind"] for a in data["audits"]] == ["tradeoff", "reconstruction", "bias", "utility", "mystery",
                                                   "tradeoff"]
    for a in data["audits"]:
        assert {"kind", "target", "verdict", "task"} <= set(a)
    assert data["summary"] == {"status": "fail", "counts": {"error": 1, "fail": 1, "info": 2, "pass": 2},
                               "n_audits": 6}
    assert load_report(tmp_path)["audits"] == data["audits"]
    assert "Infinity" not in (tmp_path / "report.json").read_text()


def test_summary_status_severity():
    failed = AuditEntry(FailedTask("tradeoff", "t", "boom"))
    info = AuditEntry(experiment_result())
    assert summarize([*_judged(("pass", None)), info])["status"] == "pass"
    assert summarize([*_judged(("pass", None)), failed])["status"] == "error"
    assert summarize([failed, AuditEntry(bias_result(verdict="fail"))])["status"] == "fail"
    assert summarize(_judged(("violation", None), ("inconclusive", None)))["status"] == "violation"
    assert summarize([])["status"] == "pass"
    assert type(summarize([failed])["status"]) is str  # plain JSON data in the document


def test_figures_for_known_kinds_and_markdown_links(written):
    tmp_path = written
    names = sorted(p.name for p in (tmp_path / "figures").glob("*.png"))
    assert names == ["00-tradeoff-gauss-roc.png", "00-tradeoff-gauss-tradeoff.png", "01-reconstruction-recon-mse.png",
                     "02-bias-est-bias.png", "03-utility-utility-demo-utility.png", "bias-table.png",
                     "epsilon-table.png"]
    for n in names:
        assert (tmp_path / "figures" / n).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    md = (tmp_path / "report.md").read_text()
    links = set(re.findall(r"\]\((figures/[^)]+)\)", md))
    assert links == {f"figures/{n}" for n in names}
    # unknown kinds still render their scalar fields (short lists, "inf"), long arrays are left to the JSON
    assert "| answer | 42 |" in md and "| score | inf |" in md and "| pair | [1, 2] |" in md and "| long |" not in md
    assert "ValueError: boom" in md and "a finding" in md


def test_html_is_self_contained(written):
    tmp_path = written
    page = (tmp_path / "report.html").read_text()
    assert "<script" not in page and "<link" not in page
    srcs = re.findall(r"src='([^']+)'", page)
    assert srcs and all(s.startswith("data:image/png;base64,") for s in srcs)
    embedded = sorted(base64.b64decode(s.split(",", 1)[1]) for s in srcs)
    # every per-audit figure is embedded; the summary tables are HTML tables, not images
    on_disk = sorted(p.read_bytes() for p in (tmp_path / "figures").glob("[0-9]*.png"))
    # every figure embedded exactly once: the headline figures at the top, the others in their audit's details
    assert embedded == on_disk
    assert re.search(r"<div class='verdict s-fail' id='verdict'><span class='word'>FAIL</span>", page)


def test_rerender_from_json_is_identical(written, tmp_path):
    (tmp_path / "b/figures").mkdir(parents=True)
    (tmp_path / "b/figures/99-stale.png").write_bytes(b"x")  # a figure of an earlier run
    write_report(load_report(written), tmp_path / "b")
    assert not (tmp_path / "b/figures/99-stale.png").exists()
    for name in ("report.json", "report.md", "report.html"):
        assert (written / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    assert sorted(p.name for p in (tmp_path / "b/figures").glob("*.png")) == sorted(
        p.name for p in (written / "figures").glob("*.png"))
    for p in (written / "figures").glob("*.png"):
        assert p.read_bytes() == (tmp_path / "b/figures" / p.name).read_bytes()


def test_max_certifiable_epsilon_matches_clopper_pearson():
    for n, c, delta in [(100, 0.95, 0.0), (4500, 0.95, 1e-5), (10**6, 0.99, 1e-6)]:
        a = (1 - c) / 2
        u = stats.beta.ppf(1 - a, 1, n)  # CP upper bound at 0 errors, one-sided level 1 − (1 − c)/2
        assert u == pytest.approx(1 - a ** (1 / n), rel=1e-9)
        want = math.log((1 - delta - u) / u)
        assert max_certifiable_epsilon(n, c, delta) == pytest.approx(want, rel=1e-9)
        # the rule of thumb ln(n / ln(2/(1 − c))): error O(u)
        assert max_certifiable_epsilon(n, c, delta) == pytest.approx(math.log(n / math.log(1 / a)), abs=3 * u + 1e-5)


def test_epsilon_and_bias_tables(report):
    tables = dict((t[0], t) for t in summary_tables(report_entries(report)))
    title, header, rows, note = tables["Privacy: claimed, exact and certified ε"]
    assert len(rows) == 1 and rows[0][1:7] == ["gauss", "pass", "1", "1e-05", "1.2", "0.8"]
    # A split audit may certify the pooled test, which counts both thresholds' errors over 2·n_eval trials.
    assert rows[0][header.index("max certifiable ε")] == f"{max_certifiable_epsilon(2 * 4500, 0.95, 1e-5):.4g}"
    assert "ln(m/ln(2/(1−c)))" in note and "m = 2n" in note and rows[0][header.index("n (eval, per hypothesis)")] == "4500"
    assert tables["Bias checks"][2][0][1] == "est"


def test_render_figures_skips_errors_and_unknown_kinds(written):
    indices = {int(p.name[:2]) for p in (written / "figures").glob("[0-9]*.png")}
    assert indices == {0, 1, 2, 3}  # not 4 (unknown kind) nor 5 (error)


def test_malformed_entry_loses_its_figure_not_the_report(tmp_path):
    import dataclasses

    from privaudit.audit.kinds import get_kind, register_kind
    from privaudit.audit.kinds.tradeoff import tradeoff_figures

    # odd values render what they can without raising (a curve or band whose arrays differ in size is
    # refused when the result is built) ...
    empty = tradeoff_result(fpr=np.zeros(0), fnr=np.zeros(0), alpha=np.zeros(0), band={"lower": np.zeros(0),
                                                                                       "upper": np.zeros(0)})
    assert [f[0] for f in tradeoff_figures(AuditEntry(empty))] == ["tradeoff"]
    nan = tradeoff_result(fpr=np.array([0.0, 0.5]), fnr=np.array([1.0, np.nan]))
    assert [f[0] for f in tradeoff_figures(AuditEntry(nan))] == ["tradeoff", "roc"]

    # ... and a renderer that raises costs its figure only
    def broken(audit):
        raise KeyError("band")

    original = get_kind("tradeoff")
    register_kind(dataclasses.replace(original, figures=broken), force=True)
    try:
        _write_with_broken_figures(tmp_path)
    finally:
        register_kind(original, force=True)


def _write_with_broken_figures(tmp_path):
    cfg = parse_config({"name": "bad", "audits": [
        {"kind": "tradeoff", "mechanism": {"name": "gaussian", "sigma": 1.0}, "x": [0.0], "x_prime": [1.0]}]})
    rep = build_report(cfg, [FakeTask(0, 0)], {0: {"results": [tradeoff_entry()]}})
    with pytest.warns(RuntimeWarning, match="no figure for audit 0"):
        write_report(rep, tmp_path)
    assert json.loads((tmp_path / "report.json").read_text())["audits"][0]["epsilon_lb"] == 0.8
    assert "0.8" in (tmp_path / "report.html").read_text()
    assert sorted(p.name for p in (tmp_path / "figures").glob("*.png")) == ["epsilon-table.png"]
