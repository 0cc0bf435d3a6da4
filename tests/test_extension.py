"""Extending privaudit from outside: a mechanism, a learner, an attacker and an audit kind, all defined here.

None of them needs an edit to a privaudit module. They run end to end through a TOML
configuration, the CLI and the report:

* :class:`ToyMechanism` — randomized response on one bit; ``leak`` > 1 draws the noise
  of a larger ε than it claims. Named in the configuration by its module reference
  (``test_extension:ToyMechanism``, allowed with ``--allow-import``) and registered as
  ``toy-rr``. It states its worst-case pair (the two bits) through the ``worst_case_pair``
  capability (:class:`privaudit.mechanisms.protocol.HasWorstCasePair`), so a ``tradeoff``
  audit needs no ``x``/``x_prime``.
* :class:`ToyLearner` — a scikit-learn estimator releasing each record's bit through that
  mechanism; its ``release_view`` declares its worst-case pair, attacker and report note
  (:class:`privaudit.learners.release_view.TradeoffSetup`).
* :class:`ToyBitAttack` — a distinguisher scoring the released bit itself.
* the ``toy-flip-rate`` kind — a bound on how often the mechanism flips the bit, against
  the smallest flip rate its claim allows.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
from numbers import Real
from typing import ClassVar

import numpy as np
import pytest
from scipy.stats import beta
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import Interval

from privaudit.attacks.registry import ATTACKS, register_attack
from privaudit.audit import kinds
from privaudit.audit.schema import components
from privaudit.audit.app.cli import main
from privaudit.audit.schema.fields import Field
from privaudit.audit.kinds import AuditKind, register_kind, result_type
from privaudit.audit.kinds.base import CONFIDENCE, MECHANISM
from privaudit.audit.results import AuditEntry, AuditResult, apply_expectation
from privaudit.learners.release_view import TradeoffSetup, fit_on_synthetic
from privaudit.mechanisms import PrivacyClaim
from privaudit.mechanisms.protocol import NeighbouringPair

POSITIVE = [Interval(Real, 0, None, closed="neither")]


# --------------------------------------------------------------------------- a mechanism
class ToyMechanism:
    """Randomized response on a bit x ∈ {0, 1}: keeps it with probability e^(leak·ε)/(1 + e^(leak·ε)).

    Claims ε-DP between the two bits (exact when ``leak = 1``).
    """

    _parameter_constraints = {"epsilon": POSITIVE, "leak": POSITIVE}

    def __init__(self, epsilon: float = 1.0, leak: float = 1.0) -> None:
        self.epsilon, self.leak = float(epsilon), float(leak)
        self.keep_probability = 1 / (1 + math.exp(-self.leak * self.epsilon))
        self.claim = PrivacyClaim(self.epsilon, 0.0, "any")

    def __repr__(self) -> str:
        return f"ToyMechanism(epsilon={self.epsilon:g}, leak={self.leak:g})"

    def sample(self, x, n: int, rng=None) -> np.ndarray:
        rng = np.random.default_rng(rng)
        bit = float(np.ravel(x)[0])
        keep = rng.random((n, 1)) < self.keep_probability
        return np.where(keep, bit, 1.0 - bit)

    def worst_case_pair(self, *, dim: int = 1) -> NeighbouringPair:
        """The two bits (the only pair); ``dim`` is ignored."""
        return NeighbouringPair(np.zeros(1), np.ones(1), self, "toy: the two bits")


# --------------------------------------------------------------------------- a learner and its release view
class ToyBitRelease(ToyMechanism):
    """One record's released bit: the learner's view, which knows its worst-case pair and attacker."""

    note = "toy learner: one record's bit through randomized response, the two bits as the pair"

    def tradeoff_setup(self, *, phase: str = "known") -> TradeoffSetup:
        return TradeoffSetup(self, np.zeros(1), np.ones(1), target="toy learner, one record's bit",
                             attacker="toy-bit", note=self.note)


class ToyLearner(BaseEstimator):
    """Learns the majority label from bits each record releases through :class:`ToyMechanism`."""

    _parameter_constraints = {"epsilon": POSITIVE, "leak": POSITIVE, "random_state": ["random_state"]}

    def __init__(self, epsilon: float = 1.0, leak: float = 1.0, random_state=None) -> None:
        self.epsilon, self.leak, self.random_state = epsilon, leak, random_state

    def fit(self, X, y) -> ToyLearner:
        bits = (np.asarray(y) > 0).astype(float)
        released = ToyMechanism(self.epsilon, self.leak)
        rng = np.random.default_rng(self.random_state)
        noisy = np.array([released.sample(b, 1, rng)[0, 0] for b in bits])
        self.majority_ = float(noisy.mean() >= 0.5)
        self.claim_ = released.claim
        return self

    def release_view(self, *, n_train: int, dim: int, mode: str, rng) -> ToyBitRelease:
        fitted = fit_on_synthetic(self, n_train=n_train, dim=dim, rng=np.random.default_rng(rng))
        return ToyBitRelease(fitted.epsilon, fitted.leak)


# --------------------------------------------------------------------------- an attacker
class ToyBitAttack:
    """Scores a release by its bit (x′ = 1 releases 1 more often): needs no training and no density."""

    kind = "distinguisher"
    requires_training = False
    handles_nonfinite = False
    requires_density = False
    llr_scores = False

    def __init__(self, random_state=None) -> None:
        self.random_state = random_state

    def fit(self, outputs0=None, outputs1=None, *, mechanism=None, x=None, x_prime=None) -> ToyBitAttack:
        return self

    def score(self, outputs) -> np.ndarray:
        return np.asarray(outputs, dtype=float).reshape(len(outputs), -1)[:, 0]


# --------------------------------------------------------------------------- an audit kind
@dataclasses.dataclass(frozen=True)
class FlipRateAudit(AuditResult):
    """Flips of the bit x = 0 in n releases, against the smallest flip rate the claim allows."""

    kind: ClassVar[str] = "toy-flip-rate"
    target: str
    n: int
    flips: int
    flip_rate_upper: float
    floor: float
    verdict: str


def run_flip_rate(params: dict, rng: np.random.Generator) -> AuditEntry:
    """Clopper–Pearson upper bound on the flip rate; below 1/(1 + e^ε) the claim is violated."""
    mech = components.MECHANISMS.build(params["mechanism"], "mechanism")
    n = params["n"]
    flips = int(mech.sample(np.zeros(1), n, rng).sum())
    upper = float(beta.ppf(params["confidence"], flips + 1, n - flips)) if flips < n else 1.0
    floor = 1 / (1 + math.exp(mech.claim.epsilon))
    res = FlipRateAudit(target=repr(mech), n=n, flips=flips, flip_rate_upper=upper, floor=floor,
                        verdict="violation" if upper < floor else "pass")
    return apply_expectation(res, params["expect"], caught="violation")


def flip_rate_headline(entry: AuditEntry) -> str:
    res = entry.result
    return f"toy flip rate: {res.flips} flips in {res.n} releases (upper {res.flip_rate_upper:.4f}, floor {res.floor:.4f})"


def flip_rate_figures(entry: AuditEntry):
    from privaudit.audit.display.plotting import new_figure

    res = entry.result
    fig, ax = new_figure()
    ax[0, 0].bar(["upper bound", "claim's floor"], [res.flip_rate_upper, res.floor])
    return [("rates", fig, "flip rate bound against the claim's floor")]


FLIP_RATE = AuditKind(
    "toy-flip-rate", run_flip_rate,
    {"mechanism": MECHANISM, "n": Field("int", 5000, low=100, samples=True), "confidence": CONFIDENCE,
     "expect": Field("str", "private", choices=("private", "violation"))},
    result=FlipRateAudit, doc="toy: flip rate of a bit mechanism", headline=flip_rate_headline,
    figures=flip_rate_figures,
)

CONFIG = """
name = "extension"
seed = 7

[[audits]]
kind = "tradeoff"
mechanism = { name = "test_extension:ToyMechanism", epsilon = 1.0 }
x = [0.0]
x_prime = [1.0]
attacker = "toy-bit"
n = 4000

[[audits]]
kind = "tradeoff"
mechanism = { name = "toy-rr", epsilon = 1.0, leak = 3.0 }
x = [0.0]
x_prime = [1.0]
attacker = "toy-bit"
n = 4000
expect = "violation"

[[audits]]
kind = "learner-tradeoff"
learner = { name = "ToyLearner", epsilon = 1.0 }
n_train = 50
n = 4000

[[audits]]
kind = "learner-tradeoff"
learner = { name = "ToyLearner", epsilon = 1.0, leak = 3.0 }
n_train = 50
n = 4000
expect = "violation"

[[audits]]
kind = "toy-flip-rate"
mechanism = { name = "toy-rr", epsilon = 1.0 }

[[audits]]
kind = "toy-flip-rate"
mechanism = { name = "test_extension:ToyMechanism", epsilon = 1.0, leak = 3.0 }
expect = "violation"
"""


@contextlib.contextmanager
def registered_toys():
    """The toy kind, attacker, mechanism and learner registered in-process, and unregistered on exit."""
    with kinds.KINDS.isolated(), ATTACKS.isolated():
        register_kind(FLIP_RATE)
        register_attack("toy-bit", ToyBitAttack)
        components.MECHANISMS.register("toy-rr", ToyMechanism)
        components.LEARNERS.register("ToyLearner", ToyLearner)
        try:
            yield
        finally:
            components.MECHANISMS.unregister("toy-rr")
            components.LEARNERS.unregister("ToyLearner")


@pytest.fixture()
def toys():
    with registered_toys():
        yield


def test_toy_mechanism_learner_attacker_and_kind_run_end_to_end(toys, tmp_path, capsys):
    conf = tmp_path / "extension.toml"
    conf.write_text(CONFIG)
    out = tmp_path / "reports"
    # Without the opt-in the module reference is refused before anything runs.
    assert main(["run", str(conf), "--out", str(out), "--no-cache"]) == 2
    assert "--allow-import test_extension" in capsys.readouterr().err and not out.exists()

    code = main(["run", str(conf), "--out", str(out), "--no-cache", "--allow-import", "test_extension"])
    assert code == 0, capsys.readouterr()  # every audit passed, or caught the violation it expected
    folder = out / "extension"
    assert {"report.json", "report.md", "report.html"} <= {p.name for p in folder.iterdir()}
    audits = json.loads((folder / "report.json").read_text())["audits"]
    assert [a["kind"] for a in audits] == ["tradeoff"] * 4 + ["toy-flip-rate"] * 2

    honest, leaky, learner, leaky_learner, rate, leaky_rate = audits
    # the toy mechanism, by module reference and by registered name, with the toy attacker
    assert honest["verdict"] == "pass" and honest["attacker"] == "toy-bit" and honest["epsilon_lb"] <= 1.0
    assert leaky["audit_verdict"] == "violation" and leaky["verdict"] == "pass" and leaky["epsilon_lb"] > 1.0
    # the toy learner, audited on the pair, attacker and note its release view declares
    for entry in (learner, leaky_learner):
        assert entry["attackers_tried"] == ["toy-bit"]
        assert ToyBitRelease.note in entry["notes"]
    assert learner["verdict"] == "pass" and learner["epsilon_lb"] <= 1.0
    assert leaky_learner["audit_verdict"] == "violation" and leaky_learner["epsilon_lb"] > 1.0
    # the toy kind: a true claim passes; ε = 3 drawn under a claim of 1 flips 4.7 % < the 26.9 % floor
    assert rate["verdict"] == "pass" and rate["flip_rate_upper"] >= rate["floor"]
    assert leaky_rate["audit_verdict"] == "violation" and leaky_rate["flip_rate_upper"] < leaky_rate["floor"]
    back = AuditEntry.from_dict(rate, result_type("toy-flip-rate"))
    assert isinstance(back.result, FlipRateAudit) and back.result.flips == rate["flips"]

    headline = flip_rate_headline(back)
    assert headline in (folder / "report.md").read_text() and headline in (folder / "report.html").read_text()
    figures = {p.name for p in (folder / "figures").glob("*.png")}
    assert any("toy-flip-rate" in name and name.endswith("-rates.png") for name in figures), figures


PAIR_CONFIG = """
name = "extension-pair"
seed = 7

[[audits]]
kind = "tradeoff"
mechanism = { name = "toy-rr", epsilon = 1.0 }
attacker = "toy-bit"
n = 4000

[[audits]]
kind = "tradeoff"
mechanism = { name = "toy-rr", epsilon = 1.0, leak = 3.0 }
attacker = "toy-bit"
n = 4000
expect = "violation"
"""


def test_toy_mechanism_states_its_worst_case_pair_through_the_capability(toys, tmp_path, capsys):
    """No x, x_prime in the configuration: the audits run on the pair the mechanism states (no privaudit edit)."""
    conf = tmp_path / "pair.toml"
    conf.write_text(PAIR_CONFIG)
    out = tmp_path / "reports"
    assert main(["run", str(conf), "--out", str(out), "--no-cache"]) == 0, capsys.readouterr()
    honest, leaky = json.loads((out / "extension-pair" / "report.json").read_text())["audits"]
    assert honest["verdict"] == "pass" and 0 < honest["epsilon_lb"] <= 1.0
    assert leaky["audit_verdict"] == "violation" and leaky["verdict"] == "pass" and leaky["epsilon_lb"] > 1.0
    # the same numbers as the pair given explicitly (same position and seed)
    explicit = tmp_path / "explicit.toml"
    explicit.write_text(PAIR_CONFIG.replace('name = "extension-pair"', 'name = "explicit"').replace(
        'attacker = "toy-bit"', 'attacker = "toy-bit"\nx = [0.0]\nx_prime = [1.0]'))
    assert main(["run", str(explicit), "--out", str(out), "--no-cache"]) == 0, capsys.readouterr()
    given = json.loads((out / "explicit" / "report.json").read_text())["audits"]
    assert [a["epsilon_lb"] for a in given] == [honest["epsilon_lb"], leaky["epsilon_lb"]]


def test_registering_the_toys_is_undone():
    with registered_toys():
        assert "toy-flip-rate" in kinds.audit_kinds() and "toy-bit" in ATTACKS
        assert "toy-rr" in components.MECHANISMS and "ToyLearner" in components.LEARNERS
    assert "toy-flip-rate" not in kinds.audit_kinds() and "toy-bit" not in ATTACKS
    assert "toy-rr" not in components.MECHANISMS and "ToyLearner" not in components.LEARNERS
