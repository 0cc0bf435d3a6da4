"""Named components a configuration may use: mechanisms, priors, learners, experiments, bias samplers.

A configuration names a component by a registered name (``mechanism = { name =
"gaussian", epsilon = 1.0 }``). Registries hold the built-ins (registered below,
imported lazily so that validating a file does not import torch) and the components
installed packages declare through entry points (groups ``privaudit.mechanisms``,
``privaudit.priors``, ``privaudit.learners``, ``privaudit.experiments``,
``privaudit.samplers``; loaded on first use, a broken one skipped with a warning). A name
clash raises, naming both sources (one :class:`~privaudit.mechanisms.registry.Registry`
class holds kinds, components and attackers alike).

No code from configurations
    A ``"package.module:attr"`` reference imports code, so it is refused unless the
    user running the audit opted in for that module: :func:`allow_imports` (process
    wide), ``parse_config(..., allow_imports=[...])`` / ``load_config`` (one file), or
    ``privaudit run --allow-import MODULE``. Even then validation only *imports*
    the object and checks the table's keys and values against a declarative
    parameter specification; nothing is called or constructed until the task runs.

Declarative parameter specifications
    A component's parameters are validated against scikit-learn style constraints
    (``{"epsilon": [Interval(Real, 0, None, closed="neither")], ...}``, see
    :mod:`sklearn.utils._param_validation`): the class's own
    ``_parameter_constraints`` when it declares one (the learners do), else the
    specification registered with the component. Components without either (an
    opted-in import of a plain function) are checked on their keyword names only.
    Registered built-in components may also declare a ``check`` spanning several
    parameters (e.g. "give ε and δ, or σ").
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import importlib
import inspect
import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from numbers import Integral, Real
from typing import Any

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions, make_constraint

import privaudit.mechanisms.external  # noqa: F401  (declares the third-party adapters, by reference)
from privaudit.mechanisms.registry import (
    DECLARED_MECHANISMS,
    MechanismDeclaration,
    MissingParameterError,
    Registry,
    reference,
)
from privaudit.mechanisms.validation import InvalidParameterError, ParameterTypeError

from privaudit.audit.schema.fields import (
    ConfigKeyError,
    ConfigTypeError,
    ConfigValueError,
    _is_number_array,
    _rectangular,
    check_keys,
    did_you_mean,
)

#: Parameters through which a component receives its randomness: set from the task's
#: generator at run time, never from a configuration (that would bypass the run's seed).
SEED_PARAMS = ("rng", "random_state", "seed")

# --------------------------------------------------------------------------- import opt-in
_ALLOWED: set[str] = set()
_SCOPED: contextvars.ContextVar[frozenset[str]] = contextvars.ContextVar("privaudit_allowed_imports",
                                                                         default=frozenset())


def _check_module_name(module: str) -> str:
    if not isinstance(module, str) or not module or not all(p.isidentifier() for p in module.split(".")):
        raise ConfigValueError(f"allow_imports takes module names such as 'my_package.estimators', got {module!r}")
    return module


def allow_imports(*modules: str) -> None:
    """Allow configurations of this process to reference ``"module:attr"`` objects of ``modules``.

    A module allows its submodules too (``"mypkg"`` allows ``"mypkg.sub:f"``). This is
    what ``privaudit run --allow-import MODULE`` does.
    """
    _ALLOWED.update(_check_module_name(m) for m in modules)


def disallow_imports(*modules: str) -> None:
    """Withdraw :func:`allow_imports` for ``modules`` (all of them when none is given)."""
    if modules:
        _ALLOWED.difference_update(modules)
    else:
        _ALLOWED.clear()


@contextlib.contextmanager
def imports_allowed(modules: Iterable[str] = ()) -> Iterator[None]:
    """Allow ``modules`` within the ``with`` block only (used by ``parse_config(allow_imports=...)``).

    Parameters
    ----------
    modules : iterable of str
        Dotted module (or package) names.

    Yields
    ------
    None
    """
    token = _SCOPED.set(_SCOPED.get() | {_check_module_name(m) for m in modules})
    try:
        yield
    finally:
        _SCOPED.reset(token)


def import_allowed(module: str) -> bool:
    """Whether ``module`` (or a package containing it) was allowed.

    Parameters
    ----------
    module : str
        Dotted module name.

    Returns
    -------
    bool
    """
    allowed = _ALLOWED | _SCOPED.get()
    parts = module.split(".")
    return any(".".join(parts[:i]) in allowed for i in range(1, len(parts) + 1))


def _split_ref(ref: str, path: str) -> tuple[str, str]:
    module, sep, attr = ref.partition(":")
    ok = sep and module and attr and all(p.isidentifier() for p in module.split(".")) and attr.isidentifier()
    if not ok:
        raise ConfigValueError(f"{path} = {ref!r} is not a 'package.module:attr' reference")
    return module, attr


def import_reference(ref: str, path: str) -> Any:
    """Import the object of a ``"module:attr"`` reference the user allowed; nothing is called.

    Parameters
    ----------
    ref : str
        A ``"package.module:attr"`` reference.
    path : str
        Configuration path named in errors (e.g. ``"audit.mechanism.name"``).

    Returns
    -------
    object

    Raises
    ------
    ConfigValueError
        For a malformed reference, a module not allowed, or a failed import.
    """
    module, attr = _split_ref(ref, path)
    if not import_allowed(module):
        raise ConfigValueError(
            f"{path} = {ref!r} would import code from module {module!r}, which this run does not allow; "
            f"use a registered name, or opt in with `privaudit run --allow-import {module}` "
            f"(Python: privaudit.audit.schema.components.allow_imports({module!r}))"
        )
    return load_reference(ref, path)


def load_reference(ref: str, path: str) -> Any:
    """Import ``"module:attr"`` without the opt-in check (built-in and entry-point references, and tasks
    whose configuration was validated, with the opt-in, when it was loaded).

    Parameters
    ----------
    ref : str
        A ``"package.module:attr"`` reference.
    path : str
        Configuration path named in errors (e.g. ``"audit.mechanism.name"``).

    Returns
    -------
    object

    Raises
    ------
    ConfigValueError
        For a malformed reference or a failed import.
    """
    module, attr = _split_ref(ref, path)
    try:
        return getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as exc:
        raise ConfigValueError(f"cannot import {path} = {ref!r}: {exc}") from exc


# --------------------------------------------------------------------------- parameter specifications
Constraints = Mapping[str, list]


def _satisfied(constraint: Any, value: Any) -> bool:
    if isinstance(value, bool) and isinstance(constraint, Interval):
        return False  # TOML booleans are not numbers
    if constraint == "array-like":
        return _is_number_array(value)
    return make_constraint(constraint).is_satisfied_by(value)


def _describe(constraints: list) -> str:
    names = [("an array of numbers" if c == "array-like" else str(make_constraint(c))) for c in constraints]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


def check_parameters(path: str, table: Mapping[str, Any], constraints: Constraints) -> None:
    """Check each value of ``table`` against its constraints; raise naming ``path.key`` and the value.

    A value of the wrong kind (a string for a number) is a :class:`ConfigTypeError`;
    a value of the right kind out of range a :class:`ConfigValueError`. NaN and
    infinities are refused everywhere in a component table.

    Parameters
    ----------
    path : str
        Configuration path named in errors (e.g. ``"audit.mechanism.name"``).
    table : mapping
        Parameter values by key.
    constraints : mapping of str to list
        scikit-learn constraints by key (keys absent here are not checked).

    Raises
    ------
    ConfigTypeError
        For a value of the wrong kind.
    ConfigValueError
        For a value out of range, not finite, or a ragged array.
    """
    for key, value in table.items():
        loc = f"{path}.{key}"
        if isinstance(value, float) and not math.isfinite(value):
            raise ConfigValueError(f"{loc} must be finite, got {loc} = {value!r}")
        if isinstance(value, list) and not _finite_nested(value):
            raise ConfigValueError(f"{loc} must hold finite values only, got {loc} = {value!r}")
        if isinstance(value, list) and not _rectangular(value):
            raise ConfigValueError(f"{loc} must be a rectangular array (rows of equal length), got {loc} = {value!r}")
        allowed = constraints.get(key)
        if allowed is None or any(_satisfied(c, value) for c in allowed):
            continue
        err = ConfigValueError if any(_right_kind(c, value) for c in allowed) else ConfigTypeError
        raise err(f"{loc} must be {_describe(allowed)}, got {loc} = {value!r} ({type(value).__name__})")


def _right_kind(constraint: Any, value: Any) -> bool:
    """Whether ``value`` has the type ``constraint`` constrains (so that failing it is a value error)."""
    if isinstance(constraint, Interval):
        return isinstance(value, constraint.type) and not isinstance(value, bool)
    if isinstance(constraint, StrOptions):
        return isinstance(value, str)
    return False


def _finite_nested(value: Any) -> bool:
    if isinstance(value, list):
        return all(_finite_nested(v) for v in value)
    return not isinstance(value, float) or math.isfinite(value)


def keyword_names(obj: Any) -> list[str]:
    """Keyword parameter names of a callable, from its signature (nothing is called).

    Parameters
    ----------
    obj : object
        A callable (class or function).

    Returns
    -------
    list of str
        Empty when the signature cannot be read.
    """
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return []
    return [n for n, p in sig.parameters.items() if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)]


# --------------------------------------------------------------------------- registries
@dataclasses.dataclass(frozen=True)
class Component:
    """A registered component.

    Attributes
    ----------
    name : str
    ref : str or object
        ``"module:attr"`` (imported on first use) or the object itself.
    constraints : mapping, optional
        Parameter specification (default: the object's ``_parameter_constraints``).
    check : callable(path, table), optional
        Validation spanning several parameters; raises config errors naming ``path``.
    doc : str
    """

    name: str
    ref: Any
    constraints: Constraints | None = None
    check: Callable[[str, dict], None] | None = None
    doc: str = ""

    def load(self, path: str = "name") -> Any:
        """The component's object: its reference imported (without the opt-in check), or the object itself.

        Parameters
        ----------
        path : str
            Configuration path named in errors (e.g. ``"audit.mechanism.name"``).

        Returns
        -------
        object
            The referenced object (imported on first use), or the object itself.

        Raises
        ------
        ConfigValueError
            When the reference cannot be imported.
        """
        return load_reference(self.ref, path) if isinstance(self.ref, str) else self.ref


def _component_identity(comp: Component) -> Any:
    return comp.ref


class ComponentRegistry:
    """Components of one sort, by name, in a :class:`~privaudit.mechanisms.registry.Registry`.

    Built-ins are registered eagerly by reference (imported on first use); installed
    entry points are read on the first lookup of a name that is not registered (or a
    listing), and one that fails to load is skipped with a
    :class:`~privaudit.mechanisms.registry.PluginWarning`. A name clash raises, naming
    both sources, unless ``force``.

    Parameters
    ----------
    sort : str
        What the registry holds, for messages (``"mechanism"``).
    group : str
        Entry-point group of installed components.
    """

    def __init__(self, sort: str, group: str) -> None:
        self.sort, self.group = sort, group
        self.registry: Registry[Component] = Registry(
            sort, group, error=ConfigValueError, identity=_component_identity,
            describe=lambda comp: reference(comp.ref),
            from_entry_point=lambda ep: Component(ep.name, ep.load(), doc=f"from entry point {ep.value}"),
        )

    def register(self, name: str, ref: Any, *, constraints: Constraints | None = None,
                 check: Callable[[str, dict], None] | None = None, doc: str = "", force: bool = False) -> None:
        """Register ``ref`` under ``name``.

        Parameters
        ----------
        name : str
            Non-empty, without ``":"``.
        ref : str or object
            ``"module:attr"`` (imported on first use) or the component itself.
        constraints : mapping, optional
            Parameter specification (default: the object's ``_parameter_constraints``).
        check : callable(path, table), optional
            Validation spanning several parameters.
        doc : str
            One line for ``privaudit list``.
        force : bool
            Replace a different component of the same name.

        Raises
        ------
        ConfigValueError
            A malformed name, or a clash (naming both sources) without ``force``.
        """
        self.registry.register(name, Component(name, ref, constraints, check, doc), force=force)

    def unregister(self, name: str) -> None:
        """Remove ``name`` (for tests that register temporary components).

        Parameters
        ----------
        name : str
        """
        self.registry.unregister(name)

    def names(self) -> list[str]:
        """Every registered name (built-ins first, then entry points).

        Returns
        -------
        list of str
        """
        return self.registry.names()

    def __contains__(self, name: object) -> bool:
        return name in self.registry

    def get(self, name: str) -> Component:
        """The component registered as ``name``.

        Parameters
        ----------
        name : str

        Returns
        -------
        Component

        Raises
        ------
        ConfigValueError
            Unknown name.
        """
        return self.registry.get(name)

    def resolve(self, name: str, path: str) -> tuple[Any, Component | None]:
        """The object named ``name`` (a registered name, or an allowed ``"module:attr"``); nothing is called.

        Parameters
        ----------
        name : str
            A registered name or an allowed ``"module:attr"`` reference.
        path : str
            Configuration path named in errors (e.g. ``"audit.mechanism.name"``).

        Returns
        -------
        (object, Component or None)
            The object and its registry entry (None for a reference).

        Raises
        ------
        ConfigValueError
            For an unknown name (with suggestions) or a reference that is not allowed.
        """
        if name in self:
            comp = self.get(name)
            return comp.load(path), comp
        if ":" in name:
            return import_reference(name, path), None
        raise ConfigValueError(
            f"unknown {path} = {name!r}{did_you_mean(name, self.names())} (known {self.sort}s: "
            f"{', '.join(self.names())}; or 'package.module:attr' with --allow-import)"
        )

    def constraints(self, obj: Any, comp: Component | None) -> Constraints | None:
        """The parameter specification of ``obj``.

        Parameters
        ----------
        obj : object
            A callable (class or function).
        comp : Component or None
            Its registry entry (None for a reference).

        Returns
        -------
        mapping or None
            The object's own ``_parameter_constraints``, else the entry's, else None.
        """
        own = getattr(obj, "_parameter_constraints", None)
        if isinstance(own, Mapping):
            return own
        return comp.constraints if comp is not None else None

    def validate(self, path: str, table: Mapping[str, Any]) -> dict:
        """Validate a component table ``{name = ..., <parameters>}``; nothing is called or constructed.

        Parameters
        ----------
        path : str
            Configuration path named in errors (e.g. ``"audit.mechanism.name"``).
        table : mapping
            The component table ``{name = ..., <parameters>}``.

        Returns
        -------
        dict
            A copy of the table.

        Raises
        ------
        ConfigTypeError
            When the table or its name has the wrong type, or a value the wrong kind.
        ConfigKeyError
            When ``name`` is missing or a key is unknown.
        ConfigValueError
            For an unknown name or a value out of range.
        """
        if not isinstance(table, Mapping):
            raise ConfigTypeError(f"{path} must be a table {{name = ..., ...}}, got {path} = {table!r}")
        if "name" not in table:
            raise ConfigKeyError(f"missing required key {path}.name (one of: {', '.join(self.names())})")
        name = table["name"]
        if not isinstance(name, str):
            raise ConfigTypeError(f"{path}.name must be a string, got {path}.name = {name!r}")
        obj, comp = self.resolve(name, f"{path}.name")
        params = {k: v for k, v in table.items() if k != "name"}
        spec = self.constraints(obj, comp)
        allowed = list(spec) if spec is not None else keyword_names(obj)
        check_keys(path, params, [k for k in allowed if k not in SEED_PARAMS or k == "random_state"])
        check_parameters(path, params, spec or {})
        if comp is not None and comp.check is not None:
            comp.check(path, params)
        return dict(table)

    def build(self, table: Mapping[str, Any], path: str) -> Any:
        """Construct the component of a validated table (lists become float arrays); errors name ``path``.

        Parameters
        ----------
        table : mapping
            A table validated by :meth:`validate`.
        path : str
            Configuration path named in errors (e.g. ``"audit.mechanism.name"``).

        Returns
        -------
        object
            The constructed component.

        Raises
        ------
        ConfigTypeError
            When construction raises a TypeError.
        ConfigValueError
            When construction raises a ValueError.
        """
        obj, _ = self.resolve_validated(table["name"], f"{path}.name")
        try:
            kwargs = {k: (np.asarray(v, dtype=float) if isinstance(v, list) else v) for k, v in table.items()
                      if k != "name"}
            return obj(**kwargs)
        except TypeError as exc:
            raise ConfigTypeError(f"{path}: {exc} (got {path} = {dict(table)!r})") from exc
        except ValueError as exc:
            raise ConfigValueError(f"{path}: {exc}") from exc

    def resolve_validated(self, name: str, path: str) -> tuple[Any, Component | None]:
        """Like :meth:`resolve` for a table validated at load time (the opt-in was checked then;
        worker processes do not share the loading process's opt-ins).

        Parameters
        ----------
        name : str
            The name or reference of a validated table.
        path : str
            Configuration path named in errors (e.g. ``"audit.mechanism.name"``).

        Returns
        -------
        (object, Component or None)
            The object and its registry entry (None for a reference).
        """
        if name in self:
            comp = self.get(name)
            return comp.load(path), comp
        return load_reference(name, path), None

    def field_validator(self) -> Callable[[str, Any], dict]:
        """``Field(validate=...)`` hook validating a table of this registry."""
        return lambda path, table: self.validate(path, table)


def config_check(check: Callable[[str, dict], None]) -> Callable[[str, dict], None]:
    """A mechanism's ``check`` (:mod:`privaudit.mechanisms.registry`) raising configuration errors.

    The mechanisms layer cannot import :mod:`privaudit.audit`, so its checks raise its own
    errors; the message stays, the class becomes the configuration's:
    :class:`~privaudit.mechanisms.registry.MissingParameterError` a :class:`ConfigKeyError`,
    ``ParameterTypeError`` a :class:`ConfigTypeError`, ``InvalidParameterError`` a
    :class:`ConfigValueError`.

    Parameters
    ----------
    check : callable(path, params)

    Returns
    -------
    callable(path, params)
    """
    def run(path: str, params: dict) -> None:
        try:
            check(path, params)
        except (ConfigKeyError, ConfigTypeError, ConfigValueError):
            raise
        except MissingParameterError as exc:
            raise ConfigKeyError(str(exc)) from exc
        except ParameterTypeError as exc:
            raise ConfigTypeError(str(exc)) from exc
        except InvalidParameterError as exc:
            raise ConfigValueError(str(exc)) from exc

    run.__wrapped__ = check  # type: ignore[attr-defined]
    return run


class _MechanismRegistry(ComponentRegistry):
    """The mechanisms configurations name: every declaration of
    :data:`~privaudit.mechanisms.registry.DECLARED_MECHANISMS` (each mechanism class declares
    itself with ``@register_mechanism``, next to its code), plus components registered here
    and the ``privaudit.mechanisms`` entry points.

    Declarations are mirrored in before every lookup, so a class declared after this module
    was imported is configurable too. A class's ``_parameter_constraints`` apply to the
    keywords its constructor takes (a subclass with fewer keywords is not offered its
    parent's).

    Parameters
    ----------
    declarations : Registry of MechanismDeclaration
        Where the mechanisms layer declares its classes.
    """

    def __init__(self, declarations: Registry[MechanismDeclaration]) -> None:
        super().__init__("mechanism", "privaudit.mechanisms")
        self.declarations = declarations
        self._mirrored: dict[str, MechanismDeclaration] = {}
        self._sync()

    def _sync(self) -> None:
        for name, decl in self.declarations.items().items():
            if self._mirrored.get(name) is decl:
                continue
            check = config_check(decl.check) if decl.check is not None else None
            # By its public "package:Class" reference where a package exports it (what a clash message
            # names), else the class itself (a class defined in a function has no importable reference).
            ref = decl.cls if isinstance(decl.cls, type) and decl.ref == reference(decl.cls) else decl.ref
            self.registry.register(name, Component(name, ref, decl.constraints, check, decl.doc),
                                   force=name in self._mirrored)
            self._mirrored[name] = decl

    def register(self, name: str, ref: Any, **kwargs: Any) -> None:  # noqa: D102 - ComponentRegistry.register
        self._sync()
        super().register(name, ref, **kwargs)

    def names(self) -> list[str]:  # noqa: D102 - ComponentRegistry.names
        self._sync()
        return super().names()

    def __contains__(self, name: object) -> bool:
        self._sync()
        return super().__contains__(name)

    def get(self, name: str) -> Component:  # noqa: D102 - ComponentRegistry.get
        self._sync()
        return super().get(name)

    def constraints(self, obj: Any, comp: Component | None) -> Constraints | None:  # noqa: D102
        spec = super().constraints(obj, comp)
        own = getattr(obj, "_parameter_constraints", None)
        if spec is not None and spec is own:
            accepted = keyword_names(obj)
            if accepted:
                spec = {k: v for k, v in spec.items() if k in accepted}
        return spec


#: Mechanisms, by configuration name: filled from the mechanisms' own declarations.
MECHANISMS = _MechanismRegistry(DECLARED_MECHANISMS)
PRIORS = ComponentRegistry("prior", "privaudit.priors")
LEARNERS = ComponentRegistry("learner", "privaudit.learners")
EXPERIMENTS = ComponentRegistry("experiment", "privaudit.experiments")
SAMPLERS = ComponentRegistry("bias sampler", "privaudit.samplers")
#: Trained-model audits: scikit-learn estimators (validated by their own ``_parameter_constraints``) and
#: every privaudit learner; a model audit clones and refits them.
MODELS = ComponentRegistry("model", "privaudit.models")
for _name, _ref in {
    "MLPClassifier": "sklearn.neural_network:MLPClassifier", "MLPRegressor": "sklearn.neural_network:MLPRegressor",
    "LogisticRegression": "sklearn.linear_model:LogisticRegression", "Ridge": "sklearn.linear_model:Ridge",
    "LinearRegression": "sklearn.linear_model:LinearRegression", "GaussianNB": "sklearn.naive_bayes:GaussianNB",
    "RandomForestClassifier": "sklearn.ensemble:RandomForestClassifier",
    "DecisionTreeClassifier": "sklearn.tree:DecisionTreeClassifier",
}.items():
    MODELS.register(_name, _ref, doc=f"scikit-learn {_name}")
MODELS.register("QuarterNoiseDPGDClassifier", "privaudit.learners.dpgd_logistic:QuarterNoiseDPGDClassifier",
                doc="negative control: DP-GD logistic regression with a quarter of its claimed noise")


def registered_attackers(kind: str) -> Callable[[str, Any], str | list[str]]:
    """``Field(validate=...)`` hook: a registered attacker of ``kind``, by name, or a list of them.

    Attackers are named from the attacker registry only (no ``"module:attr"``
    references), so a configuration that passes validation names attackers that exist
    and fit the audit, instead of failing when its task runs.

    Parameters
    ----------
    kind : {"distinguisher", "reconstruction", "label"}
        The attacker kind the audit uses.

    Returns
    -------
    callable(path, value) -> value
        Returns the value unchanged; raises :class:`ConfigValueError` naming the key path
        (``audits[0].attacker[1]``) and the name, with the closest registered names.
    """
    def validate(path: str, value: str | list[str]) -> str | list[str]:
        from privaudit.attacks import available_attacks

        every = available_attacks()
        fitting = [n for n, cls in every.items() if cls.kind == kind]
        names = [(path, value)] if isinstance(value, str) else [(f"{path}[{i}]", v) for i, v in enumerate(value)]
        for loc, name in names:
            if name not in every:
                raise ConfigValueError(f"unknown {loc} = {name!r}{did_you_mean(name, fitting)} (registered {kind} "
                                       f"attackers: {', '.join(fitting)}; see `privaudit list attackers`)")
            if every[name].kind != kind:
                raise ConfigValueError(f"{loc} = {name!r} is a {every[name].kind} attacker, not a {kind} attacker "
                                       f"(registered {kind} attackers: {', '.join(fitting)})")
        return value

    return validate


# --------------------------------------------------------------------------- built-in specifications
_POS = Interval(Real, 0, None, closed="neither")
_NONNEG = Interval(Real, 0, None, closed="left")
_DELTA = Interval(Real, 0, 1, closed="neither")
_COUNT = Interval(Integral, 1, None, closed="left")


def _requires(*keys: str) -> Callable[[str, dict], None]:
    def check(path: str, p: dict) -> None:
        for k in keys:
            if k not in p:
                raise ConfigKeyError(f"missing required key {path}.{k}")
    return check


PRIORS.register("gaussian", "privaudit.attacks.priors:GaussianPrior",
                constraints={"mean": ["array-like"], "cov": ["array-like"]}, check=_requires("mean", "cov"))
PRIORS.register("discrete", "privaudit.attacks.priors:DiscretePrior",
                constraints={"support": ["array-like"], "probs": ["array-like", None]}, check=_requires("support"))

def _register_builtin_learners() -> None:
    """Every estimator ``privaudit.learners`` exports (``*Regressor``, ``*Classifier``), by reference.

    Nothing is imported here; whether a learner can be audited (it defines
    ``release_view``) is checked when a configuration names it. A learner added to
    ``privaudit.learners`` is therefore configurable without an edit in ``audit/``.
    """
    from privaudit import learners

    for name, module in learners._LAZY.items():
        if name.endswith(("Regressor", "Classifier")):
            LEARNERS.register(name, f"privaudit.learners.{module}:{name}")
            MODELS.register(name, f"privaudit.learners.{module}:{name}")


_register_builtin_learners()

_SMALL = {"small": ["boolean"]}


def small_overrides(*keys: str) -> Callable[[str, dict], None]:
    """``Component(check=...)`` of an experiment whose ``small = true`` replaces ``keys`` by its smoke-test values.

    Giving one of them together with ``small = true`` would be silently ignored, so it is refused.

    Parameters
    ----------
    *keys : str
        The parameters ``small`` overrides.

    Returns
    -------
    callable(path, table)
        Raises :class:`ConfigKeyError` naming ``path.key`` and its value.
    """
    def check(path: str, table: dict) -> None:
        if table.get("small") is True:
            for key in keys:
                if key in table:
                    raise ConfigKeyError(
                        f"{path}.{key} = {table[key]!r} would be ignored: small = true replaces "
                        f"{', '.join(keys)} by the smoke-test values; drop {path}.{key} or small")
    return check


_EPSILONS = {"epsilons": ["array-like"], "n_runs": [_COUNT, None]}
EXPERIMENTS.register("modulated-figure1", "privaudit.audit.studies.experiments.modulated_figure1:run_modulated_figure1",
                     constraints={**_SMALL, "epsilons": ["array-like"], "n_repeats": [_COUNT], "n_tune": [_COUNT],
                                  "delta": [_DELTA], "alpha": [Interval(Real, 0, 1, closed="both")], "lam": [_NONNEG],
                                  "omega": [_NONNEG], "rounds": [_COUNT],
                                  "conversion": [str], "tasks": [list],
                                  "statistic": [StrOptions({"median", "mean"})],
                                  "simulation": [StrOptions({"sufficient", "clients"})]},
                     check=small_overrides("tasks", "epsilons", "n_repeats", "n_tune"))
EXPERIMENTS.register("iwp-figure1", "privaudit.audit.studies.experiments.iwp_figure1:run_iwp_figure1",
                     constraints={**_SMALL, "variant": [StrOptions({"synthetic", "logistic", "real"})],
                                  "p": [_COUNT, "array-like", None], "epsilon": ["array-like", None], "delta": [_DELTA],
                                  "n": [_COUNT], "loss": [str, None], "lam": [_POS, None], "batch_size": [_COUNT, None],
                                  "step": [_POS, None], "n_repeats": [_COUNT, None],
                                  "split": [Interval(Real, 0, 1, closed="neither")], "n_terms": [_COUNT],
                                  "radius": [_POS, None], "n_test": [_COUNT], "n_points": [_COUNT]},
                     check=small_overrides("n", "n_test", "n_repeats", "n_points"))
EXPERIMENTS.register("conddp-synthetic", "privaudit.audit.studies.experiments.conddp:run_conddp_synthetic",
                     constraints={**_SMALL, **_EPSILONS, "powers": ["array-like"]},
                     check=small_overrides("powers", "epsilons"))
EXPERIMENTS.register("conddp-real", "privaudit.audit.studies.experiments.conddp:run_conddp_real",
                     constraints={**_SMALL, **_EPSILONS}, check=small_overrides("epsilons"))
EXPERIMENTS.register("privacy-utility-attack",
                     "privaudit.audit.studies.experiments.privacy_utility_attack:run_privacy_utility_attack",
                     constraints={**_SMALL, "epsilons": ["array-like"], "dataset": [str], "canaries": [_COUNT],
                                  "n_reference": [_COUNT], "steps": [_COUNT], "lr": [_POS]},
                     check=small_overrides("epsilons", "canaries", "n_reference"))
EXPERIMENTS.register("learner-membership",
                     "privaudit.audit.studies.experiments.learner_membership:run_learner_membership",
                     constraints={**_SMALL, "epsilons": ["array-like"], "n": [_COUNT], "canaries": [_COUNT],
                                  "n_reference": [_COUNT]},
                     check=small_overrides("epsilons", "n", "canaries", "n_reference"))
EXPERIMENTS.register("conddp-mlp", "privaudit.audit.studies.experiments.conddp:run_conddp_mlp",
                     constraints={**_SMALL, **_EPSILONS}, check=small_overrides("epsilons"))


__all__ = [
    "EXPERIMENTS", "LEARNERS", "MECHANISMS", "MODELS", "PRIORS", "SAMPLERS", "Component", "ComponentRegistry", "SEED_PARAMS",
    "config_check",
    "allow_imports", "check_parameters", "disallow_imports", "import_allowed", "import_reference", "imports_allowed",
    "keyword_names", "load_reference", "registered_attackers",
]
