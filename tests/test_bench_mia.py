"""`privaudit bench mia`: the membership-inference leaderboard (quick mode), its files, determinism and usage errors."""

from __future__ import annotations

import contextlib
import io
import json
import re

import numpy as np
import pytest

from privaudit.audit.app import bench_mia
from privaudit.audit.app.cli import main as cli_main
from privaudit.audit.engines.membership import DEFAULT_ATTACKS
from privaudit.audit.reporting.render import _CSS

QUICK = ["--quick", "--seed", "3", "--jobs", "1"]


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    """One quick run through the CLI: (exit code, stdout, OUT/mia, the board read back)."""
    out = tmp_path_factory.mktemp("mia-a")
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = cli_main(["bench", "mia", *QUICK, "--out", str(out)])
    folder = out / "mia"
    return code, buf.getvalue(), folder, json.loads((folder / "leaderboard.json").read_text(encoding="utf-8"))


def test_quick_mode_writes_the_three_files_with_the_schema(quick_run):
    code, stdout, folder, board = quick_run
    assert code == 0
    for name in ("leaderboard.json", "leaderboard.md", "leaderboard.html"):
        assert (folder / name).is_file(), name
    assert board["schema"] == "privaudit.mia-leaderboard/1"
    assert board["quick"] is True and board["budgets"] == list(bench_mia.QUICK_BUDGETS)
    assert board["settings"] == list(bench_mia.quick_settings())
    # the Markdown table is printed on stdout, as written
    assert (folder / "leaderboard.md").read_text(encoding="utf-8") in stdout
    assert "| budget | rank | attack | AUC ± sd |" in stdout


def test_every_budget_and_attack_has_one_row_with_valid_numbers(quick_run):
    _, _, _, board = quick_run
    keys = [(r["setting"], r["budget"], r["attack"]) for r in board["rows"]]
    expected = {(s, b, a) for s in board["settings"] for b in board["budgets"] for a in DEFAULT_ATTACKS}
    assert len(keys) == len(set(keys)) and set(keys) == expected
    for r in board["rows"]:
        for field in ("auc", "tpr_at_1e-3", "tpr_at_1e-2"):
            assert 0.0 <= r[field] <= 1.0, (r, field)
        assert r["auc_std"] >= 0 and r["fit_seconds"] > 0
        assert r["targets"] == board["info"][r["setting"]]["n_fits"] == max(board["budgets"]) + 1


def test_rows_are_ranked_best_first_per_setting_and_budget(quick_run):
    _, _, _, board = quick_run
    for s in board["settings"]:
        for b in board["budgets"]:
            rows = sorted((r for r in board["rows"] if r["setting"] == s and r["budget"] == b), key=lambda r: r["rank"])
            assert [r["rank"] for r in rows] == list(range(1, len(DEFAULT_ATTACKS) + 1))
            assert [r["auc"] for r in rows] == sorted((r["auc"] for r in rows), reverse=True)
            # and the Markdown lists them in that order
            table = bench_mia.ranking_rows(board, s)
            assert [c[2] for c in table if c[0] == str(b)] == [r["attack"] for r in rows]


def test_loss_needs_no_reference_so_its_row_is_the_same_at_every_budget(quick_run):
    _, _, _, board = quick_run
    for s in board["settings"]:
        loss = [bench_mia.without_timing({k: v for k, v in r.items() if k not in ("budget", "rank")})
                for r in board["rows"] if r["setting"] == s and r["attack"] == "loss"]
        assert len(loss) == len(board["budgets"]) and all(row == loss[0] for row in loss)


def test_deterministic_at_a_seed_except_timing(quick_run, tmp_path, capsys):
    _, _, _, board = quick_run
    assert bench_mia.main(["mia", *QUICK, "--out", str(tmp_path)]) == 0
    again = json.loads((tmp_path / "mia" / "leaderboard.json").read_text(encoding="utf-8"))
    assert bench_mia.without_timing(again) == bench_mia.without_timing(board)  # timing fields alone may differ
    stripped = json.dumps(bench_mia.without_timing(board))
    assert not any(f'"{k}"' in stripped for k in bench_mia.TIMING_FIELDS)


def test_the_largest_budget_is_the_engines_audit_at_the_settings_seed():
    """Budget-fair reuse of one design: at its largest budget it is exactly audit_membership's result."""
    from privaudit.audit.engines.membership import audit_membership

    setting = bench_mia.quick_settings()["breast-cancer-300-mlp64"]
    X, y = setting.load()
    seed = bench_mia.setting_seed(3, setting.name)
    design = bench_mia.fit_design(setting.build(), X, y, 3, seed=seed, n_jobs=1)
    mine = bench_mia.evaluate_budget(design, DEFAULT_ATTACKS, 2)
    ref = audit_membership(setting.build(), X, y, n_reference=2, rng=seed, n_jobs=1)
    for a in DEFAULT_ATTACKS:
        assert mine[a].auc == ref.attacks[a].auc and mine[a].auc_std == ref.attacks[a].auc_std, a
        np.testing.assert_array_equal(mine[a].tpr, ref.attacks[a].tpr)


@pytest.mark.parametrize("budget", [1, 2, 4, 16])
def test_a_reference_window_is_the_target_and_the_next_fits_cyclically(budget):
    k = 17
    for t in range(k):
        window = bench_mia.reference_window(t, budget, k)
        assert window.size == budget + 1 and t in window and np.all(np.diff(window) > 0)
        assert set(window) == {(t + j) % k for j in range(budget + 1)}
    assert bench_mia.reference_window(5, k - 1, k).tolist() == list(range(k))


def test_a_settings_seed_does_not_depend_on_the_others_run():
    a = bench_mia.setting_seed(0, "digits-600-mlp64")
    assert a == bench_mia.setting_seed(0, "digits-600-mlp64") != bench_mia.setting_seed(1, "digits-600-mlp64")
    assert a != bench_mia.setting_seed(0, "breast-cancer-300-mlp64")


def test_html_is_self_contained_in_the_report_style(quick_run):
    _, _, folder, board = quick_run
    page = (folder / "leaderboard.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert _CSS in page  # the audit report's stylesheet, not a copy of it
    assert page.count("src='data:image/png;base64,") == len(board["settings"])
    assert not re.search(r"(src|href)=['\"](https?:|//)", page)
    for s in board["settings"]:
        assert f">Ranking: {s}</h2>" in page and (folder / "figures" / f"{s}.png").is_file()
    assert ">Mean rank over settings</h2>" in page


@pytest.mark.parametrize("value", ["0", "x", "", "1,,2", "-1", "1,0", "100000"])
def test_bad_budgets_exit_2_with_a_clear_message(value, tmp_path, capsys):
    code = cli_main(["bench", "mia", "--quick", "--budgets", value, "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2
    assert "--budgets" in err and "comma-separated integers in [1, 256]" in err and repr(value) in err
    assert not (tmp_path / "mia").exists()


def test_an_out_that_is_a_file_is_refused_before_any_fit(tmp_path, capsys, monkeypatch):
    ran = []
    monkeypatch.setattr(bench_mia, "run_mia_benchmark", lambda **kw: ran.append(kw))
    target = tmp_path / "file"
    target.write_text("not a folder")
    assert cli_main(["bench", "mia", "--quick", "--out", str(target)]) == 2
    assert not ran
    assert "is a file" in capsys.readouterr().err
    assert target.read_text() == "not a folder"
    # the module's own entry point refuses it too
    assert bench_mia.main(["--quick", "--out", str(target)]) == 2
    assert not ran


def test_unknown_setting_or_attack_exits_2(tmp_path, capsys):
    assert cli_main(["bench", "mia", "--settings", "nope", "--out", str(tmp_path)]) == 2
    assert "unknown setting(s) ['nope']" in capsys.readouterr().err
    assert cli_main(["bench", "mia", "--quick", "--attacks", "lira", "--out", str(tmp_path)]) == 2
    assert "unknown attack(s) ['lira']" in capsys.readouterr().err


def test_help_exits_0_and_names_the_options(capsys):
    assert cli_main(["bench", "mia", "--help"]) == 0
    out = capsys.readouterr().out
    for option in ("--out", "--seed", "--jobs", "--quick", "--budgets"):
        assert option in out


def test_a_record_only_the_target_predicts_gets_a_finite_rmia_score_ranked_first():
    """Two fits: the reference gives record 0 probability 0 (log p floored at -690.8), the target does not."""
    log_prob = np.array([[-0.5, -0.1, -0.2, -0.3], [-690.7755278982137, -0.2, -0.1, -0.4]])
    inside = np.array([[True, False, True, False], [False, True, False, True]])
    design = bench_mia.FittedDesign(inside, log_prob.copy(), log_prob, 0.0)
    raw = bench_mia.budget_scores(design, "rmia", 1)
    assert np.all(np.isfinite(raw)) and raw[0, 0] == raw[0].max()
    result = bench_mia.evaluate_budget(design, ["rmia"], 1)["rmia"]
    assert 0.0 <= result.auc <= 1.0
