"""From a configuration entry to the function that runs it.

Each ``[[audits]]`` entry of a configuration names a *task kind*. A kind is
registered here with :func:`register_task_kind`: the keys it accepts (as
:class:`~privaudit.audit.config.Field` objects, which the config validator checks)
and a small adapter ``run(params, rng)`` that builds the mechanism or learner and
calls the audit. Adapters import their audit module lazily, so that listing kinds or
validating a file does not import torch.

Randomness. A run with root seed ``s`` gives task ``i`` the generator
``default_rng(SeedSequence(s, spawn_key=(i,)))``, which is exactly
``SeedSequence(s).spawn(k)[i]`` for any ``k > i``. A result therefore depends on the
seed and on the task's position in the configuration, never on the number of
workers or the order in which they finish.

A :class:`Task` is plain data (the kind's name, validated parameters, seed and a
content hash). The runner ships it to joblib or Dask workers together with the kind's
adapter, so kinds registered at run time (a user's script, a test) also run on workers,
provided the adapter pickles (cloudpickle: by reference when its module is importable
on the worker, by value for ``__main__``).

Built-in kinds
--------------
``tradeoff``, ``calibration``, ``reconstruction``
    A mechanism from its table (:data:`MECHANISMS` or ``"package.module:Class"``).
``learner-tradeoff``, ``learner-reconstruction``
    A learner (:data:`LEARNERS`) fitted on synthetic data, audited through the view
    of what it releases (:mod:`privaudit.audit.learner_audits`).
``bias``, ``bias-checks``
    A user estimator (``sampler = "module:function"``), or the catalogue of
    :mod:`privaudit.audit.bias_checks`.
``utility``
    A paper experiment (:data:`EXPERIMENTS`) returning an ExperimentResult.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import inspect
import json
import traceback
import warnings
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from .config import (
    REQUIRED,
    Config,
    ConfigKeyError,
    ConfigTypeError,
    ConfigValueError,
    Field,
    check_keys,
    did_you_mean,
)
from .results import AuditResult, to_jsonable

#: Version of the task encoding: part of every cache key.
TASK_FORMAT = 1


# --------------------------------------------------------------------------- task kinds
@dataclasses.dataclass(frozen=True)
class TaskKind:
    """A registered kind of audit entry.

    Attributes
    ----------
    name : str
        The ``kind`` value in a configuration.
    run : callable(params, rng) -> AuditResult | list[AuditResult] | dict | list[dict]
        The adapter. ``params`` are the validated fields (sample sizes already scaled),
        ``rng`` the task's own ``numpy.random.Generator``.
    fields : mapping of str to Field
        Keys accepted by the entry (besides ``kind`` and ``target``).
    doc : str
    target : callable(params) -> str, optional
        Default report label when the entry has no ``target``.
    check : callable(path, params), optional
        Validation spanning several fields, run when the configuration is loaded.
    """

    name: str
    run: Callable[[dict, np.random.Generator], Any]
    fields: Mapping[str, Field]
    doc: str = ""
    target: Callable[[dict], str] | None = None
    check: Callable[[str, dict], None] | None = None

    def validate(self, path: str, params: dict) -> None:
        """Checks spanning several fields (after each field is valid); raise naming ``path``."""
        if self.check is not None:
            self.check(path, params)

    def default_target(self, params: dict) -> str:
        return self.target(params) if self.target is not None else self.name


_KINDS: dict[str, TaskKind] = {}


def register_task_kind(
    name: str, *, fields: Mapping[str, Field], doc: str = "", target: Callable[[dict], str] | None = None,
    check: Callable[[str, dict], None] | None = None, force: bool = False,
):
    """Decorator registering ``run(params, rng)`` as the adapter of task kind ``name``.

    A name clash raises unless ``force=True``.
    """

    def deco(run):
        if name in _KINDS and _KINDS[name].run is not run and not force:
            raise ConfigValueError(f"task kind {name!r} is already registered; pass force=True to replace it")
        _KINDS[name] = TaskKind(
            name, run, dict(fields), doc or (inspect.getdoc(run) or "").split("\n")[0], target, check
        )
        return run

    return deco


def unregister_task_kind(name: str) -> None:
    """Remove a kind (for tests that register temporary kinds)."""
    _KINDS.pop(name, None)


def task_kinds() -> dict[str, TaskKind]:
    """Registered task kinds, by name."""
    return dict(sorted(_KINDS.items()))


def get_task_kind(name: str) -> TaskKind:
    try:
        return _KINDS[name]
    except KeyError:
        raise ConfigValueError(f"unknown task kind {name!r}{did_you_mean(name, _KINDS)}") from None


# --------------------------------------------------------------------------- mechanisms
#: Mechanism names usable in ``mechanism = { name = ..., ... }`` tables.
MECHANISMS = {
    "gaussian": "privaudit.mechanisms:GaussianMechanism",
    "laplace": "privaudit.mechanisms:LaplaceMechanism",
    "randomized-response": "privaudit.mechanisms:RandomizedResponse",
    "modulated": "privaudit.mechanisms:ModulatedMechanism",
}


def _import_object(ref: str, path: str):
    module, _, attr = ref.partition(":")
    try:
        return getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as exc:
        raise ConfigValueError(f"cannot import {path} = {ref!r}: {exc}") from exc


#: Prior names usable in ``prior = { name = ..., ... }`` tables (reconstruction audits).
PRIORS = {
    "gaussian": "privaudit.attacks.priors:GaussianPrior",
    "discrete": "privaudit.attacks.priors:DiscretePrior",
}


def component_class(registry: Mapping[str, str], name: str, path: str):
    """The class named ``name`` in ``registry`` (name -> "module:Class"), or given as ``"package.module:Class"``."""
    if name in registry:
        return _import_object(registry[name], path)
    if ":" in name:
        return _import_object(name, path)
    raise ConfigValueError(
        f"unknown {path} = {name!r}{did_you_mean(name, registry)} "
        f"(known: {', '.join(registry)}, or 'package.module:Class')"
    )


def mechanism_class(name: str, path: str = "mechanism.name"):
    """The mechanism class named by ``name``: a key of :data:`MECHANISMS` or ``"package.module:Class"``."""
    return component_class(MECHANISMS, name, path)


def _keyword_params(obj) -> dict[str, inspect.Parameter]:
    """Keyword parameters of a callable; for a class whose ``__init__`` forwards ``**kwargs``
    to its base (e.g. CondDPRegressor), those of the bases too."""
    sig = inspect.signature(obj)
    out = {n: p for n, p in sig.parameters.items() if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)}
    if isinstance(obj, type) and any(p.kind == p.VAR_KEYWORD for p in sig.parameters.values()):
        for base in obj.__mro__[1:]:
            if base is object or "__init__" not in vars(base):
                continue
            out = {**_keyword_params(base), **out}
            break
    return out


def build_component(registry: Mapping[str, str], spec: Mapping[str, Any], path: str):
    """Construct the object described by a table ``{name = ..., <keyword arguments>}``.

    Arrays are passed as numpy arrays. Constructor errors are re-raised as config
    errors prefixed with ``path``.
    """
    cls = component_class(registry, spec["name"], f"{path}.name")
    kwargs = {k: (np.asarray(v, dtype=float) if isinstance(v, list) else v) for k, v in spec.items() if k != "name"}
    try:
        return cls(**kwargs)
    except TypeError as exc:
        raise ConfigTypeError(f"{path}: {exc} (got {path} = {dict(spec)!r})") from exc
    except ValueError as exc:
        raise ConfigValueError(f"{path}: {exc}") from exc


def build_mechanism(spec: Mapping[str, Any], path: str = "mechanism"):
    """Construct the mechanism described by a validated ``mechanism`` table."""
    return build_component(MECHANISMS, spec, path)


def component_validator(registry: Mapping[str, str]) -> Callable[[str, dict], dict]:
    """Field validator of a component table: known name, known keys, constructible now (not on a worker)."""

    def validate(path: str, table: dict) -> dict:
        if "name" not in table:
            raise ConfigKeyError(f"missing required key {path}.name (one of: {', '.join(registry)})")
        if not isinstance(table["name"], str):
            raise ConfigTypeError(f"{path}.name must be a string, got {path}.name = {table['name']!r}")
        cls = component_class(registry, table["name"], f"{path}.name")
        check_keys(path, table, ["name", *_keyword_params(cls)])
        with warnings.catch_warnings():  # warnings are for the run, not for loading the file
            warnings.simplefilter("ignore")
            build_component(registry, table, path)
        return dict(table)

    return validate


validate_mechanism = component_validator(MECHANISMS)
validate_prior = component_validator(PRIORS)


#: Parameters through which a function receives its randomness: set by the runner from the
#: task's generator, never from a configuration (that would bypass the run's seed).
_SEED_PARAMS = ("rng", "random_state", "seed")


def validate_kwargs(func_ref: str, path: str, table: dict) -> dict:
    """Check a table of keyword arguments against the signature of ``func_ref`` ("module:function").

    Unknown keys get a did-you-mean hint; a value whose type differs from the
    parameter's non-None default (int accepted for float) raises
    :class:`~privaudit.audit.config.ConfigTypeError`.
    """
    func = _import_object(func_ref, path)
    params = {n: p for n, p in _keyword_params(func).items() if n not in _SEED_PARAMS}
    check_keys(path, table, params)
    for key, value in table.items():
        default = params[key].default
        if default is inspect.Parameter.empty or default is None:
            continue
        ok = (isinstance(value, type(default)) or (isinstance(default, float) and isinstance(value, int))
              or (isinstance(default, list | tuple) and isinstance(value, list | tuple)))
        if isinstance(default, bool) != isinstance(value, bool) or not ok:
            raise ConfigTypeError(
                f"{path}.{key} must be {type(default).__name__} like its default {default!r}, "
                f"got {path}.{key} = {value!r} ({type(value).__name__})"
            )
    return dict(table)


# --------------------------------------------------------------------------- planned tasks
@dataclasses.dataclass(frozen=True)
class Task:
    """One unit of work: plain data that pickles to any worker.

    ``key`` is the SHA-256 of the canonical JSON of everything that determines the
    result (kind, target, scaled parameters, root seed, index, task format), used as
    the cache file name.
    """

    index: int
    kind: str
    target: str
    params: dict
    seed: int
    key: str

    @property
    def seed_sequence(self) -> np.random.SeedSequence:
        """``SeedSequence(seed).spawn(k)[index]``, rebuilt from its spawn key."""
        return np.random.SeedSequence(self.seed, spawn_key=(self.index,))

    def rng(self) -> np.random.Generator:
        return np.random.default_rng(self.seed_sequence)


def scale_params(kind: TaskKind, params: dict, samples: float) -> dict:
    """Multiply every sample-size field by ``samples``.

    Integer fields are rounded and kept at least at the field's minimum (and ≥ 1);
    float fields (scale factors such as ``n_scale``) are multiplied as they are.
    """
    out = dict(params)
    for name, field in kind.fields.items():
        if field.samples and out.get(name) is not None:
            if field.type == "int":
                floor = int(field.low) if field.low is not None else 1
                out[name] = max(floor, 1, int(round(out[name] * samples)))
            else:
                out[name] = float(out[name]) * samples
    return out


def task_key(kind: str, target: str, params: dict, seed: int, index: int) -> str:
    """Content hash of a task: what determines its result, plus the privaudit version."""
    payload = {"format": TASK_FORMAT, "kind": kind, "target": target, "params": params, "seed": seed,
               "index": index, "version": privaudit_version()}
    blob = json.dumps(to_jsonable(payload), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


def privaudit_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("privaudit")
    except PackageNotFoundError:  # pragma: no cover - running from a bare checkout
        return "0+unknown"


def plan_tasks(config: Config) -> list[Task]:
    """The tasks of ``config``, one per ``[[audits]]`` entry, with scaled sample sizes and keys."""
    tasks = []
    for spec in config.audits:
        kind = get_task_kind(spec.kind)
        params = scale_params(kind, spec.params, config.samples)
        key = task_key(spec.kind, spec.target, params, config.seed, spec.index)
        tasks.append(Task(spec.index, spec.kind, spec.target, params, config.seed, key))
    return tasks


def _as_dicts(result: Any, task: Task) -> list[dict]:
    items = result if isinstance(result, list | tuple) else [result]
    out = []
    for item in items:
        if isinstance(item, AuditResult):
            d = item.to_dict()
        elif isinstance(item, Mapping):
            d = to_jsonable(dict(item))
        else:
            raise TypeError(f"task kind {task.kind!r} returned {type(item).__name__}, expected an AuditResult")
        d.setdefault("kind", task.kind)
        # One result: the configuration's label names it (the audit's own name is kept).
        # Several (a catalogue such as the bias checks): each keeps its own name.
        if len(items) == 1 or not d.get("target"):
            if d.get("target") and d["target"] != task.target:
                d["audited"] = d["target"]
            d["target"] = task.target
        d.setdefault("verdict", "info")
        out.append(d)
    return out


def execute_task(task: Task, run: Callable | None = None) -> dict:
    """Run one task; never raises for an ordinary exception.

    ``run`` is the kind's adapter, shipped with the task so that kinds registered at
    run time (a user's script, a test) also run on worker processes and Dask workers
    (cloudpickle serialises it); by default it is looked up in this process's registry.

    Returns ``{"key", "index", "ok", "results": [dict, ...]}``. A failing audit is
    recorded as one result with verdict ``"error"``, its exception and a traceback,
    so that the other tasks of the run still complete. ``KeyboardInterrupt`` and
    ``SystemExit`` propagate (an interrupted run is resumed from the cache).
    """
    try:
        run = run if run is not None else get_task_kind(task.kind).run
        results = _as_dicts(run(dict(task.params), task.rng()), task)
        ok = True
    except Exception as exc:  # noqa: BLE001 - recorded in the report, the run goes on
        tb = traceback.format_exception(type(exc), exc, exc.__traceback__)
        results = [{
            "kind": task.kind, "target": task.target, "verdict": "error",
            "error": f"{type(exc).__name__}: {exc}", "traceback": "".join(tb[-6:]),
        }]
        ok = False
    return {"key": task.key, "index": task.index, "ok": ok, "results": results}


def default_rng_int(rng: np.random.Generator) -> int:
    """An integer seed drawn from the task's generator, for APIs taking ``random_state`` ints."""
    return int(rng.integers(2**31 - 1))


# --------------------------------------------------------------------------- built-in kinds
_CONF = Field("float", 0.95, low=0.0, high=1.0, closed="neither", doc="confidence level of the bounds")
_MECH = Field("table", validate=validate_mechanism, doc="mechanism table {name = ..., <parameters>}")


def _mech_target(params: dict) -> str:
    m = params.get("mechanism") or {}
    args = ", ".join(f"{k}={v}" for k, v in m.items() if k != "name" and not isinstance(v, list))
    return f"{m.get('name', '?')}({args})"


def apply_expectation(result: Any, expect: str, *, caught: str, missed: str = "fail") -> dict:
    """Verdict of a negative control: a deliberately broken target must be caught.

    With ``expect="violation"`` (a mechanism whose claim is known to be false) the
    entry passes when the audit reports ``caught`` and fails otherwise; its original
    verdict is kept as ``audit_verdict``. ``expect="private"`` leaves the verdict as is.
    """
    d = result.to_dict() if isinstance(result, AuditResult) else dict(result)
    if expect in ("private", "unbiased"):
        return d
    raw = d.get("verdict")
    d["audit_verdict"] = raw
    d["expect"] = expect
    d["verdict"] = "pass" if raw == caught else missed
    note = (f"negative control: the claim is known to be false; the audit {'caught' if raw == caught else 'MISSED'} "
            f"it (audit verdict {raw!r})")
    d["notes"] = [*(d.get("notes") or []), note]
    return d


@register_task_kind(
    "tradeoff",
    fields={
        "mechanism": _MECH,
        "x": Field("array", None, doc="input x (the null hypothesis); default: the worst-case pair"),
        "x_prime": Field("array", None, doc="neighbouring input x'; default: the worst-case pair"),
        "dim": Field("int", 1, low=1, doc="input dimension of the worst-case pair (Gaussian, Laplace)"),
        "n": Field("int", 20000, low=10, samples=True, doc="releases per hypothesis"),
        "attacker": Field("str", None, doc="registered distinguisher (default: strongest applicable)"),
        "confidence": _CONF,
        "estimator": Field("str", "clopper-pearson", choices=("clopper-pearson", "gdp")),
        "selection": Field("str", "split", choices=("split", "bonferroni")),
        "delta": Field("float", None, low=0.0, high=1.0, closed="left", doc="δ of the bound (default: the claim's)"),
        "expect": Field("str", "private", choices=("private", "violation"),
                        doc="'violation' marks a negative control: it passes when the audit catches it"),
    },
    target=_mech_target,
    check=lambda path, p: _check_pair(path, p),
)
def run_tradeoff(params: dict, rng: np.random.Generator):
    """Empirical trade-off curve of a mechanism on one neighbouring pair vs. its claim (audit_tradeoff)."""
    from .tradeoff import audit_tradeoff

    mech = build_mechanism(params["mechanism"])
    extra = {}
    if params["x"] is None:
        from privaudit.attacks.pairs import worst_case_pair

        pair = worst_case_pair(mech, dim=params["dim"])
        mech, x, x_prime = pair.mechanism, pair.x, pair.x_prime
        if pair.exact_mu is not None:
            # This pair's own exact curve and ε (D ≤ L for a modulated pair), not the worst case over pairs.
            extra["exact_curve"] = pair.exact_curve
            from .epsilon_bounds import gdp_epsilon

            delta = mech.claim.delta if params["delta"] is None else params["delta"]
            extra["epsilon_exact"] = gdp_epsilon(pair.exact_mu, delta)
    else:
        x, x_prime = np.asarray(params["x"]), np.asarray(params["x_prime"])
    res = audit_tradeoff(
        mech, x, x_prime, n=params["n"], attacker=params["attacker"], confidence=params["confidence"],
        estimator=params["estimator"], selection=params["selection"], delta=params["delta"], rng=rng, **extra,
    )
    return apply_expectation(res, params["expect"], caught="violation")


def _check_pair(path: str, params: dict) -> None:
    if (params["x"] is None) != (params["x_prime"] is None):
        missing = "x_prime" if params["x_prime"] is None else "x"
        raise ConfigKeyError(f"missing key {path}.{missing}: give both x and x_prime, or neither (worst-case pair)")


@register_task_kind(
    "reconstruction",
    fields={
        "mechanism": _MECH,
        "rounds": Field("int", 1, low=1, doc="releases per client (T rounds of the iterative protocol)"),
        "attacker": Field("str", None, doc="registered reconstruction attacker (default: strongest applicable)"),
        "x": Field("array", None, doc="the client's input (default: (1,...,1)/sqrt(d) without a prior)"),
        "prior": Field("table", None, validate=validate_prior, doc="prior table {name = 'gaussian', mean, cov}"),
        "n": Field("int", 10_000, low=10, samples=True, doc="audited releases"),
        "phase": Field("str", "known", choices=("known", "hidden"), doc="modulation phases revealed or not"),
        "beta": Field("array", None, doc="public response weights (y = x'beta + noise)"),
        "sigma_y": Field("float", None, low=0.0, closed="neither", doc="noise std of the public response"),
        "confidence": _CONF,
    },
    target=lambda p: _mech_target(p) + (f" x{p['rounds']} rounds" if p["rounds"] > 1 else ""),
)
def run_reconstruction(params: dict, rng: np.random.Generator):
    """Reconstruction attacker's MSE against Cramér–Rao / van Trees bounds (audit_reconstruction)."""
    from .reconstruction import audit_reconstruction

    mech = build_mechanism(params["mechanism"])
    target = [mech] * params["rounds"] if params["rounds"] > 1 else mech
    prior = build_component(PRIORS, params["prior"], "prior") if params["prior"] is not None else None
    arr = {k: (None if params[k] is None else np.asarray(params[k])) for k in ("x", "beta")}
    return audit_reconstruction(
        target, params["attacker"], arr["x"], prior, n=params["n"], rng=rng, phase=params["phase"],
        beta=arr["beta"], sigma_y=params["sigma_y"], confidence=params["confidence"],
    )


def _validate_callable_ref(path: str, ref: str) -> str:
    if ":" not in ref:
        raise ConfigValueError(f"{path} must be 'package.module:function', got {path} = {ref!r}")
    if not callable(_import_object(ref, path)):
        raise ConfigTypeError(f"{path} = {ref!r} is not callable")
    return ref


@register_task_kind(
    "bias",
    fields={
        "sampler": Field("str", validate=_validate_callable_ref,
                         doc="'package.module:function' with sampler(n, rng) -> n draws of the estimator"),
        "target_value": Field("array", doc="the estimator's claimed expectation"),
        "n": Field("int", 100_000, low=10, samples=True, doc="draws of the estimator"),
        "confidence": _CONF,
        "expect": Field("str", "unbiased", choices=("unbiased", "biased")),
    },
    target=lambda p: p["sampler"].rpartition(":")[2],
)
def run_bias(params: dict, rng: np.random.Generator):
    """Bias audit of a user estimator: is E[sampler(n, rng)] equal to target_value? (audit_bias)."""
    from .bias import audit_bias

    sampler = _import_object(params["sampler"], "sampler")
    return audit_bias(sampler, np.asarray(params["target_value"]), n=params["n"], confidence=params["confidence"],
                      expect=params["expect"], name=params["sampler"].rpartition(":")[2], rng=rng)


@register_task_kind(
    "bias-checks",
    fields={
        "small": Field("bool", False, doc="smaller caps (smoke runs; may be under-powered, notes say so)"),
        "n_scale": Field("float", 1.0, low=0.0, closed="neither", samples=True, doc="multiplies every cap on draws"),
    },
    target=lambda p: "bias checks" + (" (small)" if p["small"] else ""),
)
def run_bias_checks(params: dict, rng: np.random.Generator):
    """The catalogue of bias checks of every estimator the papers claim unbiased (run_bias_checks)."""
    from .bias_checks import run_bias_checks as run

    return run(n_scale=params["n_scale"], random_state=default_rng_int(rng), small=params["small"])


@register_task_kind(
    "calibration",
    fields={"mechanism": _MECH,
            "expect": Field("str", "private", choices=("private", "violation"),
                            doc="'violation' marks a negative control (a claim known to be false)")},
    target=_mech_target,
)
def run_calibration(params: dict, rng: np.random.Generator):
    """Exact ε of the noise actually used against the claimed ε, analytically (audit_calibration)."""
    from .calibration import audit_calibration

    return apply_expectation(audit_calibration(build_mechanism(params["mechanism"])), params["expect"],
                             caught="violation")


# --------------------------------------------------------------------------- learners
#: Learner names usable in ``learner = { name = ..., <hyperparameters> }`` tables.
LEARNERS = {name: f"privaudit.learners.{mod}:{name}" for name, mod in {
    "ModulatedRegressor": "modulated", "OneShotModulatedRegressor": "modulated",
    "IWPSGDClassifier": "iwp", "IWPSGDRegressor": "iwp", "NoisySGDClassifier": "iwp", "NoisySGDRegressor": "iwp",
    "CondDPRegressor": "conddp", "DPSGDRegressor": "conddp",
}.items()}
#: Which audit view applies to each learner: the modulated transcript (seed 000), the
#: IWP record release (seed 001) or DP-SGD under label DP along a label canary (seed 002).
LEARNER_FAMILY = {
    "ModulatedRegressor": "modulated", "OneShotModulatedRegressor": "modulated",
    "IWPSGDClassifier": "iwp", "IWPSGDRegressor": "iwp", "NoisySGDClassifier": "iwp", "NoisySGDRegressor": "iwp",
    "CondDPRegressor": "dpsgd", "DPSGDRegressor": "dpsgd",
}
validate_learner = component_validator(LEARNERS)
_LEARNER = Field("table", validate=validate_learner, doc="learner table {name = ..., <hyperparameters>}")
_DATA_FIELDS = {
    "n_train": Field("int", 2000, low=10, doc="synthetic training examples the learner is fitted on"),
    "dim": Field("int", 3, low=1, doc="feature dimension of the synthetic data"),
}


def synthetic_data(n: int, dim: int, rng: np.random.Generator, *, classification: bool):
    """Features uniform in the unit ℓ₂ ball's inscribed cube [−1/√d, 1/√d]^d, linear labels.

    y = xᵀβ + 0.1·N(0, 1) with β = linspace(1, −1, d) (regression), or its sign
    (classification, labels ±1). Every row lies in the unit ball and in the box
    [−1, 1]^d, so declared bounds of either kind hold independently of the data.
    """
    X = rng.uniform(-1.0, 1.0, (n, dim)) / np.sqrt(dim)
    y = X @ np.linspace(1.0, -1.0, dim) + 0.1 * rng.standard_normal(n)
    return X, (np.where(y >= 0, 1.0, -1.0) if classification else y)


def fitted_learner(params: dict, rng: np.random.Generator):
    """Build the configured learner, seed it from the task's generator, fit it on synthetic data."""
    spec = params["learner"]
    learner = build_component(LEARNERS, spec, "learner")
    if "random_state" not in spec and "random_state" in learner.get_params():
        learner.set_params(random_state=default_rng_int(rng))
    classification = spec["name"].endswith("Classifier")
    X, y = synthetic_data(params["n_train"], params["dim"], rng, classification=classification)
    return learner.fit(X, y)


def _canary_view(params: dict, rng: np.random.Generator):
    """The DP-SGD label-canary view with the learner's privacy parameters (epsilon, delta, clip, epochs, lr)."""
    from .learner_audits import DPSGDLabelCanary, canary_dataset

    learner = build_component(LEARNERS, params["learner"], "learner")
    p = learner.get_params()
    kw = {k: p[k] for k in ("epsilon", "delta", "clip", "epochs", "lr", "adjacency") if k in p}
    data = canary_dataset(params["n_train"], params["dim"], rng=rng)
    return DPSGDLabelCanary(data, mode=params["mode"], **kw)


def _family(params: dict) -> str:
    return LEARNER_FAMILY.get(params["learner"]["name"], "unknown")


def _learner_target(params: dict) -> str:
    spec = params["learner"]
    args = ", ".join(f"{k}={v}" for k, v in spec.items() if k != "name" and not isinstance(v, list))
    return f"{spec['name']}({args})"


def _check_learner(path: str, params: dict) -> None:
    if params["learner"]["name"] not in LEARNER_FAMILY:
        raise ConfigValueError(
            f"{path}.learner.name = {params['learner']['name']!r} has no learner audit "
            f"(audited learners: {', '.join(LEARNER_FAMILY)})"
        )


@register_task_kind(
    "learner-tradeoff",
    fields={
        "learner": _LEARNER, **_DATA_FIELDS,
        "n": Field("int", 20000, low=10, samples=True, doc="releases (or training runs) per hypothesis"),
        "phase": Field("str", "known", choices=("known", "hidden"), doc="modulated learners: phases revealed or not"),
        "mode": Field("str", "white-box", choices=("white-box", "black-box"),
                      doc="DP-SGD learners: attacker sees every noisy step, or the final model"),
        "estimator": Field("str", None, choices=("clopper-pearson", "gdp"), doc="default: the audit's own choice"),
        "confidence": _CONF,
        "expect": Field("str", "private", choices=("private", "violation")),
    },
    target=_learner_target,
    check=_check_learner,
)
def run_learner_tradeoff(params: dict, rng: np.random.Generator):
    """Trade-off audit of what a learner releases: modulated transcript, IWP record, DP-SGD label canary."""
    from . import learner_audits as la

    family = _family(params)
    kw = {"n": params["n"], "confidence": params["confidence"], "rng": rng}
    if params["estimator"] is not None:
        kw["estimator"] = params["estimator"]
    if family == "modulated":
        res = la.audit_modulated(fitted_learner(params, rng), phase_known=params["phase"] == "known", **kw)
    elif family == "iwp":
        res = la.audit_iwp_release(fitted_learner(params, rng), **kw)
    else:
        res = la.audit_dpsgd_label(_canary_view(params, rng), **kw)
    return with_note(apply_expectation(res, params["expect"], caught="violation"), _VIEW_NOTES[family])


#: What each learner audit actually measures (recorded in the report's notes).
_VIEW_NOTES = {
    "modulated": "the learner is fitted on synthetic data; the audit tests one client's releases over all "
                 "rounds (its transcript) on the worst-case pair, with the learner's own per-round σ and bases",
    "iwp": "the learner is fitted on synthetic data; the audit tests one record's local release (x~, y~) "
           "on opposite corners of the declared feature box with the label flipped",
    "dpsgd": "the DP-SGD engine with the learner's (ε, δ, clip, epochs, lr, adjacency) on a small canary "
             "dataset, one label flipped; conditioning by public features is post-processing of public data "
             "and does not enter the label-DP analysis",
}


def with_note(result: Any, note: str) -> dict:
    """The result as a dict with ``note`` appended to its ``notes``."""
    d = result.to_dict() if isinstance(result, AuditResult) else dict(result)
    d["notes"] = [*(d.get("notes") or []), note]
    return d


class _ScalarInputRelease:
    """A label-canary view whose input is the sign s ∈ {−1, +1}, seen as a 1-vector.

    Reconstruction audits draw inputs as vectors (a discrete prior's support has shape
    (k, d)); :class:`~privaudit.audit.learner_audits.LabelCanarySteps` takes the scalar s.
    """

    def __init__(self, view) -> None:
        self.view = view
        self.claim = view.claim

    def __repr__(self) -> str:
        return repr(self.view)

    def sample(self, x, n: int, rng=None) -> np.ndarray:
        return self.view.sample(float(np.ravel(x)[0]), n, rng)

    def log_density(self, outputs, x) -> np.ndarray:
        return self.view.log_density(outputs, float(np.ravel(x)[0]))

    def tradeoff(self, alpha) -> np.ndarray:
        return self.view.tradeoff(alpha)


@register_task_kind(
    "learner-reconstruction",
    fields={
        "learner": _LEARNER, **_DATA_FIELDS,
        "n": Field("int", 5000, low=10, samples=True, doc="audited releases"),
        "attacker": Field("str", None, doc="registered reconstruction attacker (default: strongest applicable)"),
        "prior_std": Field("float", None, low=0.0, closed="neither",
                           doc="draw x ~ N(0, prior_std² I) (van Trees); default: a fixed x"),
        "phase": Field("str", "known", choices=("known", "hidden")),
        "confidence": _CONF,
    },
    target=_learner_target,
    check=_check_learner,
)
def run_learner_reconstruction(params: dict, rng: np.random.Generator):
    """Reconstruction from what a learner releases: a client's transcript (modulated), a record's
    features (IWP), or a canary's label from the DP-SGD steps (Cond-DP; exact-reconstruction bound)."""
    from privaudit.attacks.priors import DiscretePrior, GaussianPrior

    from .reconstruction import audit_reconstruction

    family = _family(params)
    d = params["dim"]
    prior = None if params["prior_std"] is None else GaussianPrior(np.zeros(d), params["prior_std"] ** 2 * np.eye(d))
    kw = {"n": params["n"], "rng": rng, "confidence": params["confidence"]}
    if family == "modulated":
        mechs = list(fitted_learner(params, rng).round_mechanisms_)
        res = audit_reconstruction(mechs, params["attacker"], None, prior, phase=params["phase"], **kw)
        return with_note(res, "x is reconstructed from one client's releases over all rounds of the fitted learner")
    if family == "iwp":
        release = fitted_learner(params, rng).release_
        res = audit_reconstruction(release.feature_mechanism, params["attacker"], None, prior, **kw)
        return with_note(res, "x is reconstructed from one record's released features x~ (Gaussian, σ on the "
                              "declared box's diameter)")
    from .learner_audits import LabelCanarySteps

    canary = _canary_view({**params, "mode": "white-box"}, rng)
    view = LabelCanarySteps(noise_multiplier=canary.noise_multiplier_, steps=canary.steps_,
                            delta=canary.claim.delta, adjacency=canary.claim.adjacency)
    labels = DiscretePrior(np.array([[-1.0], [1.0]]))
    res = audit_reconstruction(_ScalarInputRelease(view), params["attacker"], None, labels, **kw)
    return with_note(res, "a canary's label sign (uniform prior on ±1) is reconstructed from the white-box DP-SGD "
                          "steps; the exact-reconstruction (ReRo) bound follows from the steps' trade-off curve")


@register_task_kind(
    "one-run-label",
    fields={
        "m": Field("int", 1000, low=10, samples=True, doc="label canaries in the single training run"),
        "epsilon": Field("float", 1.0, low=0.0, closed="neither", doc="claimed ε of the DP-SGD run"),
        "delta": Field("float", 1e-5, low=0.0, high=1.0, closed="neither"),
        "clip": Field("float", 1.0, low=0.0, closed="neither"),
        "epochs": Field("int", 10, low=1),
        "lr": Field("float", 0.05, low=0.0, closed="neither"),
        "adjacency": Field("str", "label", choices=("label", "replace-one", "add-remove"),
                           doc="neighbouring relation DP-SGD is calibrated for"),
        "confidence": _CONF,
    },
    target=lambda p: f"DP-SGD one run, {p['m']} label canaries, ε={p['epsilon']:g}",
)
def run_one_run_label(params: dict, rng: np.random.Generator):
    """One DP-SGD training run with m label canaries; ε̲ by Steinke, Nasr & Jagielski (2023)."""
    from .learner_audits import one_run_label_audit

    kw = {k: params[k] for k in ("m", "epsilon", "delta", "clip", "epochs", "lr", "adjacency", "confidence")}
    bound = one_run_label_audit(**kw, rng=rng)
    d = to_jsonable(bound)
    d["epsilon_lb"] = d.pop("epsilon")
    claim = {"epsilon": params["epsilon"], "delta": params["delta"], "adjacency": params["adjacency"]}
    # Like a trade-off audit: a violation iff the lower confidence bound exceeds the claim.
    return {"kind": "one-run", "claim": claim, "verdict": "violation" if d["epsilon_lb"] > claim["epsilon"] else "pass",
            **d, "notes": ["one training run; the bound is valid but loose by design (m canaries, r guesses)"]}


#: Experiments runnable by the ``utility`` kind: name -> "module:function" (ExperimentResult).
EXPERIMENTS = {
    "modulated-figure1": "privaudit.audit.experiments.modulated_figure1:run_modulated_figure1",
    "iwp-figure1": "privaudit.audit.experiments.iwp_figure1:run_iwp_figure1",
    "conddp-synthetic": "privaudit.audit.experiments.conddp:run_conddp_synthetic",
    "conddp-real": "privaudit.audit.experiments.conddp:run_conddp_real",
    "conddp-mlp": "privaudit.audit.experiments.conddp:run_conddp_mlp",
}


def _validate_experiment(path: str, name: str) -> str:
    if name not in EXPERIMENTS:
        raise ConfigValueError(
            f"unknown {path} = {name!r}{did_you_mean(name, EXPERIMENTS)} (known: {', '.join(EXPERIMENTS)})"
        )
    return name


@register_task_kind(
    "utility",
    fields={
        "experiment": Field("str", validate=_validate_experiment, doc=f"one of {list(EXPERIMENTS)}"),
        "params": Field("table", {}, doc="keyword arguments of the experiment function (e.g. small = true)"),
    },
    target=lambda p: p["experiment"],
    check=lambda path, p: validate_kwargs(EXPERIMENTS[p["experiment"]], f"{path}.params", p["params"]),
)
def run_utility(params: dict, rng: np.random.Generator):
    """A paper experiment (utility curves, ExperimentResult) run at the configured size."""
    func = _import_object(EXPERIMENTS[params["experiment"]], "experiment")
    kwargs = dict(params["params"])
    sig = _keyword_params(func)
    if "rng" in sig:
        kwargs["rng"] = rng
    elif "random_state" in sig:
        kwargs["random_state"] = default_rng_int(rng)
    elif "seed" in sig:
        kwargs["seed"] = default_rng_int(rng)
    return func(**kwargs)


__all__ = [
    "EXPERIMENTS", "MECHANISMS", "REQUIRED", "Task", "TaskKind", "build_mechanism", "execute_task",
    "get_task_kind", "plan_tasks", "register_task_kind", "task_kinds", "unregister_task_kind", "validate_kwargs",
    "validate_mechanism",
]
