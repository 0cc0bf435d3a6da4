"""Figures that read (issue 16): ranges respected, log axes where values span decades, no offset axes,
no empty grid slots, human titles, readable legends, per-panel axis labels, ROC band and claim region,
and byte-identical PNGs without dates or software versions."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from privaudit.audit.kinds.base import LEGEND_PT
from privaudit.audit.kinds.tradeoff import tradeoff_figures
from privaudit.audit.kinds.utility import _grid, utility_figures
from privaudit.audit.display.plotting import png
from privaudit.audit.results import AuditEntry, ExperimentResult
from privaudit.mechanisms import gaussian_tradeoff
from result_factories import tradeoff_result


def _axes(fig):
    return [ax for ax in fig.axes if ax.get_visible()]


def _whiskers(ax) -> np.ndarray:
    """(low, high) of every error bar drawn on ``ax``."""
    out = []
    for container in ax.containers:
        bars = getattr(container, "lines", (None, None, ()))[2]
        for coll in bars:
            for seg in coll.get_segments():
                out.append((seg[:, 1].min(), seg[:, 1].max()))
    return np.asarray(out)


def _entry(**kw) -> AuditEntry:
    base = dict(name="conddp_internal_id", target="", xlabel="ε", ylabel="validation MSE", xscale="log")
    return AuditEntry(ExperimentResult(**{**base, **kw}), target="Cond-DP: validation MSE vs ε")


def test_mse_error_bars_stay_above_zero_and_wide_ranges_get_a_log_axis():
    panels = {"p=0": {"A": {"x": [0.5, 4], "y": [0.3, 0.2], "yerr": [0.5, 0.1]}},
              "p=1": {"A": {"x": [0.5, 4], "y": [9349.0, 0.6], "yerr": [1500.0, 0.1]},
                      "B": {"x": [0.5, 4], "y": [0.9, 0.4], "yerr": [0.05, 0.05]}},
              "singular spectra": {"p=1": {"x": [1, 2, 3], "y": [14.1, 7.1, 4.7]}}}
    axes_meta = {"singular spectra": {"xlabel": "index i", "ylabel": "singular value σᵢ", "xscale": "linear"}}
    [(_, fig, caption)] = utility_figures(_entry(panels=panels, panel_axes=axes_meta))
    ax0, ax1, ax2 = _axes(fig)
    assert _whiskers(ax0).min() >= 0 and "cut" in caption
    assert ax1.get_yscale() == "log" and ax0.get_yscale() == "linear"  # 9349 vs 0.4: four decades
    assert _whiskers(ax1).min() > 0
    assert (ax2.get_xlabel(), ax2.get_ylabel(), ax2.get_xscale()) == ("index i", "singular value σᵢ", "linear")
    assert ax0.get_xlabel() == "ε"
    assert fig._suptitle.get_text() == "Cond-DP: validation MSE vs ε"  # not the internal id
    assert all(t.get_fontsize() >= LEGEND_PT for ax in (ax0, ax1) for t in ax.get_legend().get_texts())


def test_r2_error_bars_do_not_exceed_one_nor_squash_the_means():
    panels = {"co2": {"iterative": {"x": [2, 8, 64], "y": [0.5, 0.8, 0.95], "yerr": [12.0, 0.05, 0.01]}}}
    [(_, fig, _)] = utility_figures(_entry(panels=panels, ylabel="test R²"))
    [ax] = _axes(fig)
    assert _whiskers(ax).max() <= 1.0
    low, high = ax.get_ylim()
    assert low > -2 and high < 2  # a ±12 bar would have squashed 0.5…0.95 into a line


def test_no_offset_axis_and_no_empty_slots():
    panels = {f"panel {k}": {"A": {"x": [15, 30, 45], "y": [1.0002, 1.0001, 0.9996]}} for k in range(4)}
    [(_, fig, _)] = utility_figures(_entry(panels=panels, ylabel="test risk", xscale="linear"))
    assert len(_axes(fig)) == 4 and len(fig.axes) == 4  # 2×2, no hidden slot
    fig.canvas.draw()
    for ax in _axes(fig):
        assert ax.yaxis.get_offset_text().get_text() == ""
    assert [_grid(k) for k in (1, 2, 3, 4, 6)] == [(1, 1), (1, 2), (1, 3), (2, 2), (2, 3)]
    # five panels on a 2×3 grid: the sixth slot holds the one shared legend
    panels["panel 4"] = {"A": {"x": [1, 2], "y": [1.0, 2.0]}, "B": {"x": [1, 2], "y": [2.0, 1.0]}}
    [(_, fig, _)] = utility_figures(_entry(panels=panels, ylabel="test risk", xscale="linear"))
    visible = _axes(fig)
    assert len(visible) == 6 and [ax.get_legend() is not None for ax in visible] == [False] * 5 + [True]
    assert [t.get_text() for t in visible[5].get_legend().get_texts()] == ["A", "B"]


def _tradeoff_entry(n=4000):
    alpha = np.linspace(0, 1, 201)
    exact = gaussian_tradeoff(1.0, alpha)
    rng = np.random.default_rng(0)
    fpr = np.sort(np.concatenate([[0.0, 2 / n], rng.uniform(0, 1, 300)]))
    fnr = np.clip(gaussian_tradeoff(1.0, fpr), 0, 1)
    fnr[1] = 0.9  # the curve crosses the claim at FPR = 2/n: a couple of releases
    return AuditEntry(tradeoff_result(
        target="gauss", epsilon_lb=0.4, n=n, n_eval=n, confidence=0.95, fpr=fpr, fnr=fnr, alpha=alpha,
        exact_curve=exact, band={"lower": np.clip(exact - 0.03, 0, 1), "upper": np.clip(exact + 0.03, 0, 1)}))


def test_roc_has_band_claim_region_and_explains_a_crossing_at_tiny_fpr():
    figs = {suffix: (fig, caption) for suffix, fig, caption in tradeoff_figures(_tradeoff_entry())}
    fig, caption = figs["roc"]
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any("confidence band" in s for s in labels) and "region the claim forbids" in labels
    assert "lie above the claim's bound at" in caption and "sampling noise" in caption
    assert "does not exceed the claimed ε = 1" in caption  # the stamp and caption follow ε̲ ≤ the claim
    assert ax.get_xscale() == ax.get_yscale() == "log" and "gauss" in ax.get_title()


def _png_chunks(data: bytes) -> list[bytes]:
    pos, out = 8, []
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        out.append(kind)
        pos += 12 + length
    return out


def test_figures_are_byte_identical_and_carry_no_metadata():
    a = [png(f) for _, f, _ in tradeoff_figures(_tradeoff_entry())]
    b = [png(f) for _, f, _ in tradeoff_figures(_tradeoff_entry())]
    assert a == b
    for data in a:
        chunks = _png_chunks(data)
        assert not {b"tEXt", b"iTXt", b"zTXt", b"tIME"} & set(chunks), chunks


@pytest.mark.parametrize("size", [(4.0, 3.0)])
def test_fixed_dpi(size):
    from privaudit.audit.display.plotting import DPI, new_figure

    fig, ax = new_figure(size=size)
    ax[0, 0].plot([0, 1], [0, 1])
    w, h = struct.unpack(">II", png(fig)[16:24])
    assert DPI == 100 and abs(w - 400) <= 40 and abs(h - 300) <= 40  # bbox 'tight' trims a little


def test_tradeoff_legend_never_covers_the_square():
    """The legend sits below the axes: every curve, band and point inside [0, 1]² stays visible, whatever
    corner the empirical curve runs through (a weak mechanism's hugs the diagonal, a strong one's the axes)."""
    for eps in (0.1, 4.0):
        fig = tradeoff_figures(AuditEntry(tradeoff_result(epsilon_lb=eps)))[0][1]
        fig.canvas.draw()
        ax = _axes(fig)[0]
        renderer = fig.canvas.get_renderer()
        legend, square = ax.get_legend().get_window_extent(renderer), ax.get_window_extent(renderer)
        assert legend.y1 <= square.y0, (eps, legend, square)
