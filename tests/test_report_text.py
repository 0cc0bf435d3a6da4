"""Strings from a configuration are shown as written in every figure and in report.md (issue 24).

A target such as ``"costs $x^{$ per query"`` used to kill the report after every task ran
(matplotlib read it as mathtext), although ``--check`` said the configuration was valid;
report.md rendered links, remote images and emphasis taken from configuration strings.
"""

from __future__ import annotations

import json
import re

import pytest

from privaudit.audit.app.cli import main
from privaudit.audit.display.plotting import new_figure, png
from privaudit.audit.reporting.render import _fence, _md

HOSTILE_TARGET = "costs $x^{$ per query"
DESCRIPTION = "see [link](javascript:alert(1)) ![pixel](https://tracker.example/p.png) *bold* _em_ `code` ~~gone~~"


def test_mathtext_and_latex_are_never_parsed_in_a_figure():
    import matplotlib

    fig, axes = new_figure()
    ax = axes[0, 0]
    ax.set_title(HOSTILE_TARGET)
    ax.plot([0, 1], [0, 1], label=r"$\frac{$ attacker")
    ax.legend()
    ax.text(0.5, 0.5, r"$\alpha$")
    ax.table(cellText=[[HOSTILE_TARGET, "1"]], colLabels=["target", r"$\epsilon$"], bbox=[0, 0, 1, 0.3])
    with matplotlib.rc_context({"text.usetex": False}):
        fig.tight_layout()
        assert png(fig).startswith(b"\x89PNG")
    texts = fig.findobj(matplotlib.text.Text)
    # matplotlib's own number labels (ticks, offset) stay mathtext ($10^{-3}$ on a log axis); no other text
    from privaudit.audit.display.plotting import _number_labels

    numbers = _number_labels(fig)
    assert texts and not any(t.get_parse_math() for t in texts if t not in numbers)
    assert r"$\alpha$" in [t.get_text() for t in texts if t not in numbers]


def test_a_plain_matplotlib_figure_would_fail_on_the_target():
    """The reproduction: without the plain-text figure the same title raises when drawn."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.set_title(HOSTILE_TARGET)
    try:
        with pytest.raises(ValueError):
            fig.savefig(__import__("io").BytesIO(), format="png")
    finally:
        plt.close(fig)


@pytest.mark.parametrize("text, shown", [
    ("[link](javascript:alert(1))", r"[link\](javascript:alert(1))"),
    ("![x](https://remote.example/i.png)", r"![x\](https://remote.example/i.png)"),
    ("[x][ref] and [ref]: https://evil", r"[x\][ref] and [ref\]: https://evil"),
    ("MSE 91.96 [58.01, 125.9] n_eval = 3", "MSE 91.96 [58.01, 125.9] n_eval = 3"),
    ("Σ_x β and __init__", r"Σ_x β and \_\_init\_\_"),
    ("-0.5 and 2.5 stay", "-0.5 and 2.5 stay"),
    ("---", r"\---"),
    ("*bold* and _em_ but n_eval", r"\*bold\* and \_em\_ but n_eval"),
    ("`code` ~~strike~~ $x$", r"\`code\` \~\~strike\~\~ \$x\$"),
    ("# heading", r"\# heading"),
    ("1. item", r"1\. item"),
    ("- item", r"\- item"),
    ("back\\slash", "back\\\\slash"),
    ("<img src=x onerror=alert(1)>", "&lt;img src=x onerror=alert(1)&gt;"),
    ("two\nlines", "two lines"),
])
def test_markdown_is_escaped(text, shown):
    assert _md(text) == shown


def test_a_code_fence_is_longer_than_any_backtick_run_inside():
    assert _fence("no ticks") == "```"
    assert _fence("a ```` b") == "`````"


def test_a_hostile_target_and_description_run_to_a_report(tmp_path, capsys):
    conf = tmp_path / "hostile.toml"
    conf.write_text(f'description = "{DESCRIPTION}"\n[[audits]]\nkind = "tradeoff"\ntarget = "{HOSTILE_TARGET}"\n'
                    'mechanism = { name = "gaussian", epsilon = 1.0, delta = 1e-5 }\nn = 300\n', encoding="utf-8")
    assert main(["run", str(conf), "--out", str(tmp_path), "--check"]) == 0
    # exit 0, or 1 when n = 300 leaves the audit inconclusive; the report is written either way
    assert main(["run", str(conf), "--out", str(tmp_path), "--no-cache"]) in (0, 1), capsys.readouterr().err
    out = tmp_path / "hostile"
    assert "error" not in json.loads((out / "report.json").read_text(encoding="utf-8"))["audits"][0]
    assert list((out / "figures").glob("*.png"))
    md = (out / "report.md").read_text(encoding="utf-8")
    # no link, image, emphasis, code span or strikethrough made of the configuration's strings
    assert "](javascript:" not in md.replace(r"\](javascript:", "")
    assert not re.search(r"(?<!\\)\]\(https://tracker", md)
    assert r"\*bold\*" in md and r"\_em\_" in md and r"\`code\`" in md and r"\~\~gone\~\~" in md
    assert r"costs \$x^{\$ per query" in md
