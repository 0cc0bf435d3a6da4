"""The attacker leaderboard's pages: one colour per attacker, attackers that do not apply in their own
section (not under errors), and a self-contained HTML page in the style of the audit reports."""

from __future__ import annotations

import re

import numpy as np
import pytest

from privaudit.attacks import available_attacks, registry
from privaudit.audit.app import bench
from privaudit.audit.reporting.render import _CSS
from privaudit.mechanisms.validation import InvalidParameterError


def _ok(setting, attacker, eps):
    return {"setting": setting, "attacker": attacker, "kind": "distinguisher", "status": "ok", "epsilon_lb": eps,
            "epsilon_lb_sd": 0.01, "epsilon_claim": 1.0, "epsilon_exact": 1.0, "tpr_at_fpr_1e-3": 0.01,
            "tpr_at_fpr_1e-2": 0.05, "auc": 0.7, "seconds_per_1e5": 1.0}


@pytest.fixture()
def board():
    """A leaderboard with two ok cells, two refusals sharing a reason, one other refusal and one crash."""
    return {
        "schema": bench.SCHEMA, "seed": 0, "samples": 1000, "repeats": 1, "confidence": 0.95,
        "settings": ["a", "b"], "attackers": ["lr", "reach", "boom"],
        "rows": [
            _ok("a", "lr", 0.9), _ok("b", "lr", 0.8),
            {"setting": "a", "attacker": "reach", "kind": "distinguisher", "status": "n/a",
             "reason": "needs the noise <scale> | sigma"},
            {"setting": "b", "attacker": "reach", "kind": "distinguisher", "status": "n/a",
             "reason": "needs the noise <scale> | sigma"},
            {"setting": "a", "attacker": "boom", "kind": "distinguisher", "status": "n/a", "reason": "needs log_density"},
            {"setting": "b", "attacker": "boom", "kind": "distinguisher", "status": "error",
             "error": "ZeroDivisionError: <b>division by zero</b>"},
        ],
    }


# --------------------------------------------------------------------------- colours
def test_every_registered_attacker_gets_its_own_colour():
    names = [*available_attacks("distinguisher"), *available_attacks("reconstruction")]
    assert len(names) > 10  # more than matplotlib's default cycle, which repeated a colour
    colours = bench.attacker_colours(names)
    assert list(colours) == names
    assert len(set(colours.values())) == len(names)


@pytest.mark.parametrize("n", [1, 10, 11, 20, 21, 40])
def test_colours_stay_distinct_beyond_the_palette(n):
    colours = bench.attacker_colours([f"attacker-{i}" for i in range(n)])
    assert len(set(colours.values())) == n


def test_the_bars_of_a_figure_have_one_distinct_colour_per_attacker(monkeypatch):
    import matplotlib.axes

    used: list[tuple[str, tuple]] = []
    real_bar = matplotlib.axes.Axes.bar

    def spy(self, *args, label=None, color=None, **kwargs):
        used.append((label, tuple(color)))
        return real_bar(self, *args, label=label, color=color, **kwargs)

    monkeypatch.setattr(matplotlib.axes.Axes, "bar", spy)
    names = sorted(available_attacks("distinguisher"))
    board = {"schema": bench.SCHEMA, "seed": 0, "samples": 1000, "repeats": 1, "confidence": 0.95,
             "settings": ["a"], "attackers": names, "rows": [_ok("a", n, 0.1 * i) for i, n in enumerate(names)]}
    assert set(bench.render_figures(board)) == {"distinguishers.png"}
    assert [label for label, _ in used] == names
    assert len({colour for _, colour in used}) == len(names)


# --------------------------------------------------------------------------- not applicable vs errors
def test_an_attacker_that_refuses_the_mechanism_is_not_applicable_and_a_crash_is_an_error():
    class Refuses:
        """Refuses every mechanism, as reachability attackers refuse one without a noise scale."""

        kind = "distinguisher"
        requires_training = False

        def fit(self, *args, **kwargs):
            raise InvalidParameterError("Refuses needs the noise scale")

        def score(self, outputs):  # pragma: no cover - never reached
            return np.zeros(len(outputs))

    class Crashes(Refuses):
        """Crashes: a bug, not a refusal."""

        def fit(self, *args, **kwargs):
            raise ZeroDivisionError("division by zero")

    with registry.ATTACKS.isolated():
        registry.register_attack("test-refuses", Refuses)
        registry.register_attack("test-crashes", Crashes)
        board = bench.run_attacker_benchmark(settings=["rr-eps1-k4"], attackers=["test-refuses", "test-crashes"],
                                             samples=500, repeats=1)
    cells = {r["attacker"]: r for r in board["rows"]}
    assert cells["test-refuses"]["status"] == "n/a"
    assert cells["test-refuses"]["reason"] == "Refuses needs the noise scale"
    assert cells["test-crashes"]["status"] == "error"
    assert cells["test-crashes"]["error"] == "ZeroDivisionError: division by zero"


def test_markdown_lists_inapplicable_attackers_in_their_own_section(board):
    md = bench.render_markdown(board)
    na = md[md.index("## Not applicable"):md.index("## Errors")]
    errors = md[md.index("## Errors"):]
    # one row per attacker and reason, with every setting it does not apply to
    assert "| reach | a, b | needs the noise <scale> \\| sigma |" in na
    assert "| boom | a | needs log_density |" in na
    assert "reach" not in errors and "needs log_density" not in errors
    assert "| b | boom | ZeroDivisionError: <b>division by zero</b> |" in errors
    assert md.index("## Distinguishers") < md.index("## Not applicable") < md.index("## Errors")


def test_sections_without_rows_are_left_out(board):
    board["rows"] = board["rows"][:2]
    titles = [t for t, _, _ in bench.leaderboard_tables(board)]
    assert titles == ["Distinguishers"]
    assert "## Not applicable" not in bench.render_markdown(board) and "## Errors" not in bench.render_markdown(board)


# --------------------------------------------------------------------------- HTML
def test_leaderboard_html_is_self_contained_and_in_the_report_style(board, tmp_path):
    out = bench.write_leaderboard(board, tmp_path)
    page = (out / "leaderboard.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert _CSS in page  # the audit report's stylesheet, not a copy of it
    for title in ("Distinguishers", "Not applicable", "Errors"):
        assert f">{title}</h2>" in page
    # the figure is embedded, and nothing is fetched from elsewhere
    assert page.count("src='data:image/png;base64,") == 1
    assert not re.search(r"(src|href)=['\"](https?:|//)", page)
    # text from attackers is escaped
    assert "<b>division by zero</b>" not in page and "&lt;b&gt;division by zero&lt;/b&gt;" in page
    assert "&lt;scale&gt;" in page
    assert "is <em>not</em> ROC-equivalent" in page and "*not*" not in page
    assert (out / "leaderboard.md").is_file() and (out / "leaderboard.json").is_file()
    assert (out / "figures" / "distinguishers.png").is_file()


def test_cli_writes_the_html_leaderboard(tmp_path, capsys):
    code = bench.main(["attackers", "--mechanisms", "rr-eps1-k4", "--attackers", "likelihood-ratio",
                       "reach-numpy-laplace", "--samples", "500", "--repeats", "1", "--out", str(tmp_path)])
    assert code == 0
    page = (tmp_path / "attackers" / "leaderboard.html").read_text(encoding="utf-8")
    assert "likelihood-ratio" in page
    # reach-numpy-laplace needs a noise scale that randomised response does not have
    na = page[page.index(">Not applicable</h2>"):]
    assert "reach-numpy-laplace" in na and "Errors" not in page
