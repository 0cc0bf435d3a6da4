"""TradeoffAudit, BiasAudit and ReconstructionAudit: at most 14 fields, built from their stages' sub-results, with an explicit flat entry.

Their report entries are written by explicit ``to_dict``/``from_dict`` (no generated properties): every field of
every sub-result reaches the entry once, the flat names are properties written out in the class (visible to IDEs
and type checkers), and ``from_dict(to_dict(r))`` is ``r`` again.
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from privaudit.audit.engines.bias import BiasAudit, audit_bias
from privaudit.audit.engines.reconstruction import (AuditedSetting, ExactReconstruction, ReconstructionAudit,
                                                    audit_reconstruction, to_dict_fields)
from privaudit.audit.engines.tradeoff import TradeoffAudit
from privaudit.audit.results import AuditResult
from result_factories import bias_result, reconstruction_result, tradeoff_result

CLASSES = [TradeoffAudit, BiasAudit, ReconstructionAudit]
#: The flat names DESIGN.md's public API lists for each result.
PUBLIC = {TradeoffAudit: ["epsilon_lb", "claim", "epsilon_exact", "verdict", "fpr", "fnr", "band", "n", "confidence"],
          BiasAudit: ["bias", "bias_ci", "p_value", "verdict"],
          ReconstructionAudit: ["mse", "mse_ci", "bias", "crb", "van_trees", "ratio"]}


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_at_most_14_fields_and_no_generated_properties(cls):
    assert len(dataclasses.fields(cls)) <= 14
    assert not hasattr(AuditResult, "entry_layout") and not hasattr(cls, "entry_layout")  # no generated layout
    assert "to_dict" in cls.__dict__ and "from_dict" in cls.__dict__  # the entry is written by explicit code
    for name in PUBLIC[cls]:  # each public name is a field or a property written in the class itself
        assert name in {f.name for f in dataclasses.fields(cls)} or isinstance(cls.__dict__.get(name), property), name


def _leaves(value, path=""):
    """(path, value) of every leaf field of a dataclass and of its sub-results."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type) and not isinstance(value, AuditResult) \
            or isinstance(value, AuditResult) and not path:
        out = []
        for f in dataclasses.fields(value):
            out += _leaves(getattr(value, f.name), f"{path}.{f.name}" if path else f.name)
        return out
    return [(path, value)]


def _with_rero():
    return reconstruction_result(rero=ExactReconstruction(0.4, (0.3, 0.5), 0.6, 0.25, 1.0))


@pytest.mark.parametrize("make", [tradeoff_result, bias_result, reconstruction_result, _with_rero],
                         ids=["tradeoff", "bias", "reconstruction", "reconstruction-rero"])
def test_every_field_of_every_sub_result_is_in_the_entry_once(make):
    r = make()
    entry = json.dumps(r.to_dict())
    leaves = [(p, v) for p, v in _leaves(r) if p not in ("claim",) and not p.startswith("claim.")]
    for path, value in leaves:
        if path in ("attackers.families",):
            continue  # empty here: left out of the entry (an older result's layout)
        name = path.rsplit(".", 1)[-1]
        key = {"tried": "attackers_tried", "lower": "band", "upper": "band", "method": "band", "curve": "fpr"}.get(
            name, name)
        assert f'"{key}"' in entry or name in ("fpr", "fnr", "alpha"), path
    assert type(r).from_dict(json.loads(entry)).to_dict() == r.to_dict()


def test_fresh_bias_audit_round_trips_and_reads_flat():
    r = audit_bias(lambda k, rng: rng.normal(1.0, 1.0, size=(k, 2)), [1.0, 1.0], n=2000, rng=3)
    back = BiasAudit.from_dict(json.loads(json.dumps(r.to_dict())))
    assert back.to_dict() == r.to_dict()
    assert r.p_value == r.global_test.p_value and r.bias == r.estimate.bias and r.power == r.detectable.power
    assert r.n_coordinates == 2 and r.skewness == r.normality.skewness
    with pytest.raises(AttributeError):
        r.p_value = 0.5


def test_tradeoff_flat_names_read_the_sub_results():
    t = tradeoff_result()
    assert t.n == t.sizes.n and t.n_eval == t.sizes.n_eval and t.claim_curve is t.curves.claim_curve
    assert t.attacker == t.attackers.attacker and t.attackers_tried == ("llr",) and t.families == {}
    assert t.fpr is t.curves.curve.fpr and np.array_equal(t.band_lower, t.curves.band.lower)
    assert "epsilon_lb_by_family" not in t.to_dict()


def test_reconstruction_entry_keys_and_flat_names():
    r = reconstruction_result()
    assert list(r.to_dict()) == ["kind", *to_dict_fields()]
    assert isinstance(r.setting, AuditedSetting) and (r.dim, r.rounds, r.information, r.x) == (2, 1, "known", [0.7, 0.7])
    assert r.mse == r.error.mse and r.crb == r.bounds.crb and r.ratio is r.comparison.ratio and r.hcr is None
    assert r.bias == [0.0, 0.01] and isinstance(r.bias, list)


def test_fresh_reconstruction_audit_round_trips_and_reads_flat():
    from privaudit.mechanisms import GaussianMechanism

    r = audit_reconstruction(GaussianMechanism(sigma=1.0), "naive", x=[0.5, -0.5], n=300, rng=4)
    back = ReconstructionAudit.from_dict(json.loads(json.dumps(r.to_dict())))
    assert back.to_dict() == r.to_dict() and back.setting == r.setting
    assert (r.mse, r.mse_ci, r.crb, r.van_trees) == (r.error.mse, r.error.mse_ci, r.bounds.crb, None)
    assert r.ratio == r.comparison.ratio and r.x == [0.5, -0.5] and r.prior is None and r.rounds == 1
    with pytest.raises(AttributeError):
        r.mse = 0.0


# --------------------------------------------------------------------------- displays
def test_displays_draw_on_given_axes_and_set_ax_and_figure(tmp_path):
    from privaudit.audit.display.displays import BiasDisplay, TradeoffDisplay
    from privaudit.audit.display.plotting import new_figure

    fig, axes = new_figure(1, 2)
    t = TradeoffDisplay.from_result(tradeoff_result()).plot(ax=axes[0, 0])
    b = BiasDisplay.from_result(bias_result()).plot(ax=axes[0, 1])
    assert t.ax_ is axes[0, 0] and b.ax_ is axes[0, 1] and t.figure_ is fig and b.figure_ is fig
    assert t.ax_.get_legend() is not None and t.has_curve
    alone = TradeoffDisplay.from_result(tradeoff_result()).plot()
    assert alone.figure_ is not fig and alone.ax_ in alone.figure_.axes


def test_reconstruction_and_roc_displays_draw_on_given_axes():
    from privaudit.audit.display.displays import ExactReconstructionDisplay, ReconstructionDisplay, RocDisplay
    from privaudit.audit.display.plotting import new_figure

    fig, axes = new_figure(1, 3)
    r = ReconstructionDisplay.from_result(reconstruction_result(), label="mine").plot(ax=axes[0, 0])
    e = ExactReconstructionDisplay.from_result(_with_rero()).plot(ax=axes[0, 1])
    roc = RocDisplay.from_result(tradeoff_result()).plot(ax=axes[0, 2])
    assert (r.ax_, e.ax_, roc.ax_) == (axes[0, 0], axes[0, 1], axes[0, 2]) and r.figure_ is e.figure_ is fig
    assert [b[0] for b in r.bounds] == ["crb", "van_trees"] and r.mse == 0.5 and "mine" in r.ax_.get_title()
    assert len(r.ax_.patches) == 3 and e.success == 0.4 and e.bound == 0.6
    assert roc.ax_.get_xscale() == "log" and roc.floor == 0.5 / 4500 and roc.ax_.get_legend() is not None
    assert ExactReconstructionDisplay.from_result(reconstruction_result()) is None
    alone = ReconstructionDisplay.from_result(reconstruction_result()).plot()
    assert alone.figure_ is not fig and alone.ax_ in alone.figure_.axes


def test_savefig_without_bbox_inches_keeps_the_legend_below_the_axes(tmp_path):
    from matplotlib.image import imread

    fig = tradeoff_result().plot()
    height = fig.get_size_inches()[1] * fig.dpi
    fig.savefig(tmp_path / "x.png")
    assert imread(tmp_path / "x.png").shape[0] > height  # the legend below the canvas is kept
