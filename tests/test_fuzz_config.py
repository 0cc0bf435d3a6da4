"""Fuzzing the exit-code contract: generated configurations and API calls never end in a traceback.

Configuration loader
    Hypothesis generates TOML documents — plausible ones (known kinds, their keys,
    registered component names and parameters) mixed with hostile values (NaN, ±inf,
    5e-324, 1e308, integers of hundreds of digits, empty and nested arrays, NUL and
    other control characters, ``module:attr`` references, deep tables) — and raw text.
    ``privaudit run FILE --check`` must answer exit 2 with a one-line
    ``privaudit: error:`` message, or exit 0 (a valid configuration); never a traceback,
    never another code, and never the catch-all "unexpected error while validating",
    which would mean a validator did not anticipate the input. The first few valid
    configurations are then run for real (tiny samples, a budget): exit 0, 1 or 2.

Public API
    The mechanisms' constructors and ``audit_tradeoff`` get the same hostile values:
    they must succeed or raise a ``TypeError``/``ValueError`` (privaudit's validation
    errors subclass them), never ``OverflowError``, ``IndexError``, ``ZeroDivisionError``…

Derandomised (a fixed sequence of examples), sized to stay well under a minute.
"""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from privaudit.audit.app.cli import UNEXPECTED, main  # noqa: E402

KINDS = ["tradeoff", "calibration", "reconstruction", "bias", "bias-checks", "learner-tradeoff",
         "learner-reconstruction", "one-run-label", "utility", "tradof", ""]
KEYS = ["n", "x", "x_prime", "dim", "rounds", "confidence", "expect", "attacker", "estimator", "selection", "delta",
        "phase", "prior", "beta", "sigma_y", "target_value", "sampler", "small", "n_scale", "m", "epsilon", "epochs",
        "experiment", "params", "learner", "n_train", "mechanism", "prior_std", "target", "adjacency", "domain", "lr",
        "clip", "views", "n_runs", "assume_gaussian", "mode", "sample_rate"]
COMPONENT_NAMES = ["gaussian", "laplace", "randomized-response", "modulated", "IWPSGDClassifier", "ModulatedRegressor",
                   "CondDPRegressor", "discrete", "builtins:int", ":", "os:system", "numpy:mean", "a\x00b", "gausian",
                   "IWPSGDRegressor", "iwp-figure1", "modulated-figure1", "conddp-mlp", "group", "check"]
PARAMS = ["epsilon", "delta", "sigma", "sensitivity", "scale", "calibration", "categories", "alpha", "lam", "omega",
          "dim", "n_vectors", "mean", "cov", "bounds", "keep_probability", "rounds", "clip", "command", "epochs", "lr",
          "label_bounds", "hidden", "tasks", "small", "n", "n_repeats"]

HOSTILE_FLOATS = [math.nan, math.inf, -math.inf, 5e-324, 1e308, -1.0, 0.0, 1e-5, 0.5, 1.0, 2.0, 700.5]
HOSTILE_INTS = [0, -1, 1, 2, 10, 10**9, 2**63, -(2**63) - 1, 10**400]
scalars = st.one_of(
    st.sampled_from(HOSTILE_FLOATS), st.sampled_from(HOSTILE_INTS),
    st.floats(allow_nan=True, allow_infinity=True), st.integers(min_value=-10**6, max_value=10**6),
    st.booleans(), st.sampled_from(COMPONENT_NAMES + ["", "violation", "private", "known", "hidden", "a" * 300,
                                                      "costs $x^{$ per query", "[l](javascript:x)"]),
    st.text(max_size=8),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.sampled_from(PARAMS + ["name"]), inner, max_size=4)),
    max_leaves=12,
)
components = st.fixed_dictionaries(
    {"name": st.sampled_from(COMPONENT_NAMES)},
    optional={p: values for p in PARAMS[:12] + ["bounds", "epochs", "small", "tasks"]},
)
audit_entries = st.builds(
    lambda kind, fields, comps: {**({"kind": kind} if kind else {}), **fields, **comps},
    st.sampled_from(KINDS),
    st.dictionaries(st.sampled_from(KEYS), values, max_size=5),
    st.dictionaries(st.sampled_from(["mechanism", "learner", "prior"]), components, max_size=2),
)
documents = st.fixed_dictionaries(
    {"audits": st.lists(audit_entries, max_size=3)},
    optional={"name": st.one_of(st.sampled_from(["ok", "a/b", ".x", "", "a\x00b", "con"]), st.text(max_size=6)),
              "seed": st.one_of(st.sampled_from(HOSTILE_INTS), values), "samples": values, "description": values,
              "extra": values},
)


# --------------------------------------------------------------------------- TOML writer
def _key(k: str) -> str:
    return json.dumps(str(k), ensure_ascii=False)


def toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        return ("inf" if v > 0 else "-inf") if math.isinf(v) else repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    return "{" + ", ".join(f"{_key(k)} = {toml_value(x)}" for k, x in v.items()) + "}"


def to_toml(doc: dict) -> str:
    lines = [f"{_key(k)} = {toml_value(v)}" for k, v in doc.items() if k != "audits"]
    for entry in doc["audits"]:
        lines.append("[[audits]]")
        lines += [f"{_key(k)} = {toml_value(v)}" for k, v in entry.items()]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- the contract
COUNTS = {"exit 0": 0, "exit 2": 0, "ran": 0}
#: Valid configurations run for real (tiny samples, a budget), at most this many.
REAL_RUNS = 2


def check_file(path, out, capsys, *extra) -> int:
    code = main(["run", str(path), "--out", str(out), *extra])
    captured = capsys.readouterr()
    assert code in (0, 2), (code, captured.err[-2000:], path.read_text()[:2000])
    assert "Traceback" not in captured.err and UNEXPECTED not in captured.err, (captured.err, path.read_text()[:2000])
    if code == 2:
        assert captured.err.startswith("privaudit: error: ") and captured.err.count("\n") == 1, captured.err
    return code


@settings(max_examples=200, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.data_too_large])
@given(doc=documents)
def test_generated_configs_exit_2_or_validate(tmp_path, capsys, doc):
    path = tmp_path / "fuzz.toml"
    path.write_text(to_toml(doc), encoding="utf-8")
    code = check_file(path, tmp_path / "out", capsys, "--check", "--overwrite")
    COUNTS[f"exit {code}"] += 1
    if code == 0 and COUNTS["ran"] < REAL_RUNS:
        COUNTS["ran"] += 1
        real = main(["run", str(path), "--out", str(tmp_path / "real"), "--samples", "0.01", "--budget", "10",
                     "--overwrite", "--no-cache"])
        captured = capsys.readouterr()
        assert real in (0, 1, 2) and "Traceback" not in captured.err, captured.err[-2000:]


@settings(max_examples=150, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.one_of(st.text(max_size=200),
                      st.builds(lambda a, b: a + b, st.sampled_from(["[[audits]]\n", "x = ", "a.b.c = ", "[t]\n"]),
                                st.text(alphabet="[]{}=,.\"'\n \\ux0a1-+einf", max_size=300))))
def test_raw_text_exits_2_or_validates(tmp_path, capsys, text):
    path = tmp_path / "raw.toml"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    check_file(path, tmp_path / "out", capsys, "--check", "--overwrite")


# --------------------------------------------------------------------------- public API
api_values = st.one_of(scalars, st.lists(scalars, max_size=3), st.none())


@settings(max_examples=200, derandomize=True, deadline=None, database=None)
@given(which=st.sampled_from(["gaussian", "laplace", "randomized-response", "modulated"]),
       kwargs=st.dictionaries(st.sampled_from(["epsilon", "delta", "sigma", "sensitivity", "scale", "categories",
                                               "keep_probability", "alpha", "lam", "omega", "n_vectors"]),
                              api_values, max_size=4),
       dim=st.integers(min_value=-2, max_value=20))
def test_mechanism_constructors_raise_only_validation_errors(which, kwargs, dim):
    from privaudit import mechanisms as m

    cls = {"gaussian": m.GaussianMechanism, "laplace": m.LaplaceMechanism,
           "randomized-response": m.RandomizedResponse, "modulated": m.ModulatedMechanism}[which]
    if which == "modulated":
        kwargs = {"alpha": 0.2, "lam": 0.1, "omega": 1.0, "dim": dim, **kwargs}
    try:
        cls(**kwargs)
    except (TypeError, ValueError):
        pass


@settings(max_examples=120, derandomize=True, deadline=None, database=None)
@given(n=st.one_of(st.sampled_from([-1, 0, 5, 300]), st.floats(allow_nan=True)),
       confidence=st.sampled_from([math.nan, -0.1, 0.0, 0.95, 1.0, 2.0, True]),
       attacker=st.sampled_from([None, [], "", "no-such-attacker", 3, {}]),
       rng=st.sampled_from([None, 0, -1, True, 1.5, "seed", 2**70]),
       x=st.sampled_from([[0.0], [], [math.nan], [[0.0]], "a", 0.0]))
def test_audit_tradeoff_raises_only_validation_errors(n, confidence, attacker, rng, x):
    from privaudit.audit.engines.tradeoff import audit_tradeoff
    from privaudit.mechanisms import GaussianMechanism

    mech = GaussianMechanism(epsilon=1.0, delta=1e-5)
    try:
        audit_tradeoff(mech, x, [1.0], n=n, confidence=confidence, attacker=attacker, rng=rng)
    except (TypeError, ValueError):
        pass


def test_audit_tradeoff_refuses_an_infinite_input():
    from privaudit.audit.engines.tradeoff import audit_tradeoff
    from privaudit.mechanisms import GaussianMechanism

    with pytest.raises(ValueError, match="x"):
        audit_tradeoff(GaussianMechanism(epsilon=1.0, delta=1e-5), [math.inf], [1.0], n=300, rng=0)


# --------------------------------------------------------------------------- public API, a fixed grid (issue 24)
#: Values no size, count or scale can take: each call below must refuse them with a TypeError or ValueError
#: naming the value, before allocating anything (these gave MemoryError, OverflowError, IndexError or
#: AttributeError, or ran past a minute).
GRID_VALUES = [10**9, 10**12, 2**63, 1e9, -1, 0, math.nan, math.inf, -math.inf, 1e308, 5e-324, None, "a", [], True]


def _api_calls():
    import numpy as np

    from privaudit import mechanisms as m
    from privaudit.audit import audit_bias, audit_tradeoff
    from privaudit.audit.testing import assert_private

    g = m.GaussianMechanism(epsilon=1.0, delta=1e-5)

    def sampler(k, rng):
        return rng.standard_normal(k)

    return {
        "audit_tradeoff(n=v)": lambda v: audit_tradeoff(g, [0.0], [1.0], n=v, rng=0),
        "audit_tradeoff(x=[v])": lambda v: audit_tradeoff(g, [v], [1.0], n=300, rng=0),
        "audit_tradeoff(attacker=v)": lambda v: audit_tradeoff(g, [0.0], [1.0], n=300, attacker=v, rng=0),
        "audit_bias(n=v)": lambda v: audit_bias(sampler, 0.0, n=v, rng=0),
        "GaussianMechanism.sample(n=v)": lambda v: g.sample([0.0], v, rng=0),
        "LaplaceMechanism.sample(n=v)": lambda v: m.LaplaceMechanism(epsilon=1.0).sample([0.0], v, rng=0),
        "DiscreteLaplaceMechanism(sensitivity=v)": lambda v: m.DiscreteLaplaceMechanism(epsilon=1.0, sensitivity=v),
        "DiscreteLaplaceMechanism(epsilon=v)": lambda v: m.DiscreteLaplaceMechanism(epsilon=v),
        "assert_private(v)": lambda v: assert_private(v),
        "RandomizedResponse.sample(n=v)": lambda v: m.RandomizedResponse(epsilon=1.0).sample(np.asarray(0.0), v, rng=0),
    }


#: Calls for which some grid values are legitimate parameters (a huge sensitivity or ε): those may succeed.
MAY_ACCEPT = {"DiscreteLaplaceMechanism(sensitivity=v)": [10**9, 10**12, 2**63, 1e9],
              "DiscreteLaplaceMechanism(epsilon=v)": [10**9, 10**12, 2**63, 1e9, 1e308],
              "audit_tradeoff(attacker=v)": [None], "audit_tradeoff(x=[v])": [0, 5e-324]}
#: Calls whose refusal may name the pair or the claim rather than the value (x = [-1] is "at distance 2").
NAMES_THE_PAIR = {"audit_tradeoff(x=[v])"}


@pytest.mark.parametrize("call", sorted(_api_calls()))
def test_public_api_refuses_hostile_sizes_with_validation_errors_only(call):
    """Every (call, value) pair raises a TypeError/ValueError naming the value (or, for a legitimate
    parameter, succeeds), within seconds; never MemoryError, OverflowError, IndexError, AttributeError."""
    import time

    fn = _api_calls()[call]
    for value in GRID_VALUES:
        start = time.perf_counter()
        try:
            fn(value)
        except (TypeError, ValueError) as exc:
            # a validation error names what it refused: the value (as written, or as a float), or its type
            msg = str(exc)
            shown = {repr(value), str(value), type(value).__name__}
            if isinstance(value, int | float) and not isinstance(value, bool):
                shown |= {f"{value:g}", f"{value:.6g}"}
            assert call in NAMES_THE_PAIR or any(text in msg for text in shown), (call, value, msg)
        else:
            assert any(value is ok or (type(value) is type(ok) and value == ok) for ok in MAY_ACCEPT.get(call, ())), \
                f"{call} accepted v={value!r}"
        assert time.perf_counter() - start < 20, (call, value)
