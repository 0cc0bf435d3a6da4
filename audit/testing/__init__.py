"""pytest plugin: privacy assertions, seeded fixtures and options.

Registered through the ``pytest11`` entry point, so installing privaudit is enough.

Assertions
----------
:func:`assert_private`, :func:`assert_unbiased` and
:func:`assert_reconstruction_bounded` run an audit and raise
:class:`PrivacyAssertionError` (an ``AssertionError``) with a message that states
the certified bound, the claim, n, the confidence and the seed.

False failures
--------------
An assertion fails only when the audit's *lower* confidence bound exceeds the
claim (or a bias test rejects). With the default confidence 0.999 a correct
mechanism therefore fails an assertion with probability at most 1 − 0.999 = 1e−3
(the Clopper–Pearson bounds are exact-coverage-conservative, and thresholds are
chosen on a separate split). ``benchmarks/bench_plugin.py`` measures the rate.

Options
-------
``--privacy-seed S``
    Root seed of every ``privacy_rng`` and of every assertion that is not given
    an ``rng`` (default 0). It is printed in the session header so that any
    failure can be reproduced.
``--privacy-samples X``
    Multiplies the sample size of every assertion (default 1.0).

Marker
------
``@pytest.mark.privacy(epsilon=..., delta=..., n=..., confidence=...)`` sets the
defaults of the assertions made inside one test. ``epsilon``/``delta`` must agree
with the mechanism's own claim (a disagreeing marker is an error, never a silent
pass or a spurious failure); ``n`` and ``confidence`` set the audit's size. Any other
key (a typo such as ``eps``) or a positional argument is a :class:`PrivacyMarkerError`
naming it, never ignored.

Messages
--------
Every failure message starts the traceback (the plugin's frames are hidden with
``__tracebackhide__``) and states the integer seed that reproduces the audit
(``rng=<seed>``), whatever generator was passed (e.g. ``privacy_rng``), and the
stated power of the audit.

Fixtures
--------
``privacy_rng``
    A ``numpy.random.Generator`` derived from the root seed and the test's node id,
    so that tests draw independent, reproducible streams whatever their order.
"""

from __future__ import annotations

import contextvars
import dataclasses
from collections.abc import Callable, Generator
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike
import pytest

if TYPE_CHECKING:
    from privaudit.audit.engines.bias import BiasAudit
    from privaudit.audit.engines.reconstruction import ReconstructionAudit
    from privaudit.audit.engines.tradeoff import TradeoffAudit

DEFAULT_CONFIDENCE = 0.999
DEFAULT_SAMPLES = {"private": 200_000, "unbiased": 100_000, "reconstruction": 20_000}


@dataclasses.dataclass(frozen=True)
class _Context:
    """What the running test contributes to assertion defaults."""

    seed: int = 0
    scale: float = 1.0
    nodeid: str = ""
    marker: dict = dataclasses.field(default_factory=dict)


_CONTEXT: contextvars.ContextVar[_Context] = contextvars.ContextVar("privaudit_context", default=_Context())


class PrivacyAssertionError(AssertionError):
    """A privacy assertion failed: the audit found evidence against the claim."""


def pytest_addoption(parser: pytest.Parser) -> None:
    """Register ``--privacy-seed`` and ``--privacy-samples``.

    Parameters
    ----------
    parser : pytest.Parser
        pytest's option parser.
    """
    group = parser.getgroup("privaudit", "privacy assertions (privaudit)")
    group.addoption("--privacy-seed", type=int, default=0, help="root seed of privacy assertions and privacy_rng (default 0)")
    group.addoption(
        "--privacy-samples", type=float, default=1.0,
        help="multiply the sample size of every privacy assertion by this factor (default 1.0)",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Declare the ``privacy`` marker.

    Parameters
    ----------
    config : pytest.Config
        The session configuration.
    """
    config.addinivalue_line(
        "markers", "privacy(epsilon=None, delta=None, n=None, confidence=None, domain=None, n_reference=None, "
        "canaries=None): per-test privacy budget, audit size, the input domain assert_private searches when no pair "
        "is given, and the reference models and canaries of assert_model_private"
    )


def pytest_report_header(config: pytest.Config) -> str:
    """The header line stating the privacy seed and sample factor.

    Parameters
    ----------
    config : pytest.Config
        The session configuration.

    Returns
    -------
    str
        The line naming the seed and sample factor.
    """
    return (
        f"privaudit: --privacy-seed={config.getoption('--privacy-seed')} "
        f"--privacy-samples={config.getoption('--privacy-samples')}"
    )


#: The keys a ``privacy`` marker takes (``n_reference`` and ``canaries``: :func:`assert_model_private`).
MARKER_KEYS = ("epsilon", "delta", "n", "confidence", "domain", "n_reference", "canaries")


class PrivacyMarkerError(ValueError):
    """A ``privacy`` marker with an unknown key or a positional argument (a typo must not be silently ignored)."""


def marker_budget(marker: pytest.Mark | None) -> dict:
    """The keyword arguments of a ``privacy`` marker, checked against :data:`MARKER_KEYS`.

    Parameters
    ----------
    marker : pytest.Mark or None
        The test's closest ``privacy`` marker.

    Returns
    -------
    dict
        ``{}`` without a marker.

    Raises
    ------
    PrivacyMarkerError
        A positional argument, or a key not in :data:`MARKER_KEYS` (named, with the closest key).
    """
    if marker is None:
        return {}
    if marker.args:
        raise PrivacyMarkerError(f"@pytest.mark.privacy takes keywords only ({', '.join(MARKER_KEYS)}), "
                                 f"got positional arguments {marker.args!r}")
    unknown = [k for k in marker.kwargs if k not in MARKER_KEYS]
    if unknown:
        import difflib

        hints = [f"{k!r}" + (f" (did you mean {close[0]!r}?)" if (close := difflib.get_close_matches(
            k, MARKER_KEYS, n=1, cutoff=0.4)) else "") for k in unknown]
        raise PrivacyMarkerError(f"@pytest.mark.privacy: unknown key {', '.join(hints)}; the keys are "
                                 f"{', '.join(MARKER_KEYS)}")
    return dict(marker.kwargs)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, Any, Any]:
    """Run the test with its privacy context (seed, sample factor, node id, marker) set.

    Parameters
    ----------
    item : pytest.Item
        The test being run.

    Yields
    ------
    None
        Control passes to the test; its outcome is returned.

    Raises
    ------
    PrivacyMarkerError
        When the test's ``privacy`` marker is malformed.
    """
    token = _CONTEXT.set(_Context(
        seed=item.config.getoption("--privacy-seed"),
        scale=item.config.getoption("--privacy-samples"),
        nodeid=item.nodeid,
        marker=marker_budget(item.get_closest_marker("privacy")),
    ))
    try:
        return (yield)
    finally:
        _CONTEXT.reset(token)


@pytest.fixture
def privacy_rng(request: pytest.FixtureRequest) -> np.random.Generator:
    """A Generator seeded from ``--privacy-seed`` and the test's node id (the stream named by the node id).

    Parameters
    ----------
    request : pytest.FixtureRequest
        The requesting test.

    Returns
    -------
    Generator
    """
    from privaudit.mechanisms.randomness import named_seed_sequence

    return np.random.default_rng(named_seed_sequence(request.config.getoption("--privacy-seed"), request.node.nodeid))


def _setting(name: str, given: Any, default: Any) -> Any:
    """An explicit argument, else the test's ``privacy`` marker, else the default."""
    if given is not None:
        return given
    return _CONTEXT.get().marker.get(name, default)


def _samples(given: int | None, kind: str) -> int:
    ctx = _CONTEXT.get()
    n = _setting("n", given, DEFAULT_SAMPLES[kind])
    return max(1, int(round(n * ctx.scale)))


def _rng(rng) -> tuple[int, str]:
    """The integer seed to run with and how to reproduce it, for the failure message.

    Whatever ``rng`` is (an int, a Generator such as ``privacy_rng``, a SeedSequence
    or None), one integer is drawn from it and the audit runs from that integer, so
    ``rng=<that integer>`` reproduces the audit exactly.
    """
    from privaudit.mechanisms.randomness import draw_seed, named_seed_sequence

    if rng is not None:
        seed = draw_seed(rng)
        return seed, f"seed {seed} (rerun with rng={seed})"
    ctx = _CONTEXT.get()
    seed = draw_seed(named_seed_sequence(ctx.seed, ctx.nodeid))
    return seed, f"seed {seed} (rerun with rng={seed}; --privacy-seed={ctx.seed}, test {ctx.nodeid or '?'})"


class PrivacyPowerWarning(UserWarning):
    """A privacy assertion is too small to refute its claim (see ``min_detectable_ratio``)."""


#: assert_private warns when it could only detect a true ε above this multiple of the claim.
POWER_WARNING_RATIO = 2.0


def _marker_budget(claim) -> tuple[float, float]:
    """(ε, δ) of the ``privacy`` marker, which must agree with the mechanism's own claim."""
    __tracebackhide__ = True
    import math

    from privaudit.mechanisms import InvalidParameterError

    marker = _CONTEXT.get().marker
    eps, delta = marker.get("epsilon", claim.epsilon), marker.get("delta", claim.delta)
    if not (math.isclose(eps, claim.epsilon, rel_tol=1e-9) and math.isclose(delta, claim.delta, rel_tol=1e-9,
                                                                           abs_tol=0.0)):
        raise InvalidParameterError(
            f"@pytest.mark.privacy(epsilon={eps!r}, delta={delta!r}) disagrees with the mechanism's own claim "
            f"(epsilon={claim.epsilon!r}, delta={claim.delta!r}): a marker cannot change what the mechanism "
            "promises. Fix the marker, or pass epsilon=/delta= to assert_private to test a different budget."
        )
    return eps, delta


def _power_text(result) -> str:
    r = result.min_detectable_ratio
    if r == float("inf"):
        return "at this n the audit cannot refute the claim at all"
    return f"at this n the audit detects only a true epsilon above {r:.3g}x the claim"


def assert_private(mechanism: Any, x: Any = None, x_prime: Any = None, *, epsilon: float | None = None,
                   delta: float | None = None, n: int | None = None, confidence: float | None = None,
                   attacker: Any = None, rng: Any = None, domain: Any = None, adjacency: str = "check") -> TradeoffAudit:
    """Assert that no attack certifies more privacy loss than (ε, δ) between ``x`` and ``x_prime``.

    (ε, δ) default to ``mechanism.claim``; a ``privacy`` marker may restate them but
    must agree with the claim (else :class:`~privaudit.mechanisms.InvalidParameterError`);
    explicit ``epsilon=``/``delta=`` test a different budget. ``n`` is the number of
    releases per hypothesis. Without a pair, ``domain`` (a Domain, ``(low, high)`` or a spec; default the
    mechanism's declared ``domain``) runs :func:`~privaudit.audit.engines.pair_search.search_pairs` under the
    claim's neighbourhood and certifies the worst pair found; a failure names that pair by its origin and
    coordinates, with the runners-up (``adjacency="group"`` also searches pairs several steps apart).
    ``adjacency`` is passed to :func:`~privaudit.audit.engines.tradeoff.audit_tradeoff`
    (a non-adjacent pair is an error unless ``"group"``).

    Every message states the certified bound, the claim, n, the confidence, the stated
    power (:attr:`TradeoffAudit.min_detectable_ratio`) and the integer seed that
    reproduces the audit; a :class:`PrivacyPowerWarning` is issued when the audit could
    only detect a true ε above ``POWER_WARNING_RATIO`` times the claim.
    Returns the :class:`~privaudit.audit.engines.tradeoff.TradeoffAudit` on success.

    Parameters
    ----------
    mechanism : mechanism
        The mechanism under test (its ``claim`` is the default budget).
    x : array-like, optional
        One input of the pair (None: search the domain).
    x_prime : array-like, optional
        The other input.
    epsilon : float, optional
        Budget to test instead of the claim's.
    delta : float, optional
        Budget to test instead of the claim's.
    n : int, optional
        Sample size before the ``--privacy-samples`` factor (default: the marker's ``n``, else 200 000).
    confidence : float, optional
        Confidence (default: the marker's, else :data:`DEFAULT_CONFIDENCE`).
    attacker : str, class or instance, optional
        The attacker (default: the audit's suite).
    rng : int, Generator, SeedSequence or None
        One integer seed is drawn from it (default: from ``--privacy-seed`` and the test's node id); the message names it.
    domain : Domain, (low, high) or spec, optional
        Where to search a pair when none is given.
    adjacency : {"check", "group"}
        How the pair's adjacency is treated (see above).

    Returns
    -------
    TradeoffAudit
        The audit (the best pair's, when searched).

    Raises
    ------
    PrivacyAssertionError
        When an attack certifies ε̲ above the budget.
    InvalidParameterError
        When the marker disagrees with the claim, or there is no pair and no domain.
    ClaimTypeError
        When the mechanism exposes no :class:`~privaudit.mechanisms.PrivacyClaim` as ``.claim``
        (a ``ParameterTypeError``).
    """
    __tracebackhide__ = True
    import warnings

    from privaudit.audit.engines.tradeoff import audit_tradeoff
    from privaudit.mechanisms import InvalidParameterError, PrivacyClaim, claim_of

    claim = claim_of(mechanism, required=True)
    m_eps, m_delta = _marker_budget(claim)
    epsilon = m_eps if epsilon is None else epsilon
    delta = m_delta if delta is None else delta
    n = _samples(n, "private")
    confidence = _setting("confidence", confidence, DEFAULT_CONFIDENCE)
    domain = _setting("domain", domain, None)
    seed, how = _rng(rng)
    stated = PrivacyClaim(epsilon, delta, claim.adjacency, mu=claim.mu if (epsilon, delta) == (claim.epsilon, claim.delta) else None)
    if x is None or x_prime is None:
        from privaudit.mechanisms.domains import domain_of

        if domain is None and domain_of(mechanism) is None:
            raise InvalidParameterError("assert_private needs a pair (x, x_prime), a domain= to search, or a "
                                        "mechanism that declares its own domain")
        from privaudit.audit.engines.pair_search import search_pairs

        found = search_pairs(mechanism, domain, n=n, confidence=confidence, attacker=attacker, rng=seed, claim=stated,
                             group=adjacency == "group")
        result = found.best
        where = f"the {found.summary()}"
    else:
        result = audit_tradeoff(mechanism, x, x_prime, n=n, attacker=attacker, confidence=confidence,
                                rng=seed, claim=stated, adjacency=adjacency)
        where = "the given pair"
    if result.verdict == "violation":
        raise PrivacyAssertionError(
            f"privacy violation: certified epsilon >= {result.epsilon_lb:.4g} at {confidence:.4%} confidence, "
            f"but the claim is (epsilon={result.claim.epsilon:g}, delta={result.claim.delta:g}) under "
            f"{claim.adjacency!r}; attack {result.attacker!r} on {where}, estimator {result.estimator!r}, "
            f"n={n} releases per hypothesis, {how}."
            + (f" Exact epsilon of the mechanism: {result.epsilon_exact:.4g}." if result.epsilon_exact is not None else "")
        )
    if result.min_detectable_ratio > POWER_WARNING_RATIO:
        warnings.warn(PrivacyPowerWarning(
            f"assert_private passed, but {_power_text(result)} (n={n}, confidence {confidence:.4%}, "
            f"claim epsilon={result.claim.epsilon:g}); raise n or --privacy-samples to make it informative"
        ), stacklevel=2)
    return result


def assert_unbiased(sampler: Callable, target: ArrayLike, *, n: int | None = None, confidence: float | None = None,
                    rng: Any = None, name: str = "estimator") -> BiasAudit:
    """Assert that ``sampler(n, rng)`` draws have expectation ``target``. Returns the BiasAudit.

    Parameters
    ----------
    sampler : callable
        ``sampler(n, rng)`` returning n draws, one per row.
    target : array-like
        The expected value.
    n : int, optional
        Sample size before the ``--privacy-samples`` factor (default: the marker's ``n``, else 100 000).
    confidence : float, optional
        Confidence (default: the marker's, else :data:`DEFAULT_CONFIDENCE`).
    rng : int, Generator, SeedSequence or None
        One integer seed is drawn from it (default: from ``--privacy-seed`` and the test's node id); the message names it.
    name : str
        The estimator, named in messages.

    Returns
    -------
    BiasAudit

    Raises
    ------
    PrivacyAssertionError
        When the bias test rejects at ``confidence``.
    """
    __tracebackhide__ = True
    from privaudit.audit.engines.bias import audit_bias

    n = _samples(n, "unbiased")
    confidence = _setting("confidence", confidence, DEFAULT_CONFIDENCE)
    seed, how = _rng(rng)
    result = audit_bias(sampler, target, n=n, confidence=confidence, rng=seed, name=name)
    if result.verdict == "fail":
        worst = int(np.argmax(np.abs(np.asarray(result.bias, dtype=float))))
        lo, hi = np.asarray(result.bias_ci, dtype=float).reshape(-1, 2)[worst]
        raise PrivacyAssertionError(
            f"{name} is biased: {result.test} p-value {result.p_value:.3g} at confidence {confidence:.4%}; "
            f"largest bias {result.bias[worst]:.4g} at coordinate {worst} (simultaneous CI [{lo:.4g}, {hi:.4g}]), "
            f"relative bias {result.relative_bias:.3g}; n={n}, {how}."
        )
    return result


def assert_reconstruction_bounded(mechanism: Any, attacker: Any = None, x: Any = None, prior: Any = None, *,
                                  n: int | None = None, rng: Any = None) -> ReconstructionAudit:
    """Assert that no attacker reconstructs below the bounds that apply to it. Returns the ReconstructionAudit.

    Parameters
    ----------
    mechanism : mechanism
        The release attacked.
    attacker : str, class or instance, optional
        The reconstruction attacker (default: the audit's choice).
    x : array-like, optional
        The client input (default: the audit's).
    prior : prior, optional
        Prior for the Bayesian bounds and attackers.
    n : int, optional
        Sample size before the ``--privacy-samples`` factor (default: the marker's ``n``, else 20 000).
    rng : int, Generator, SeedSequence or None
        One integer seed is drawn from it (default: from ``--privacy-seed`` and the test's node id); the message names it.

    Returns
    -------
    ReconstructionAudit

    Raises
    ------
    PrivacyAssertionError
        When an attacker reconstructs below a bound that applies to it.
    """
    __tracebackhide__ = True
    from privaudit.audit.engines.reconstruction import audit_reconstruction

    n = _samples(n, "reconstruction")
    seed, how = _rng(rng)
    result = audit_reconstruction(mechanism, attacker, x=x, prior=prior, n=n, rng=seed)
    if result.verdict == "violation":
        raise PrivacyAssertionError(
            f"reconstruction below its bound: MSE {result.mse:.4g} (CI {result.mse_ci}) against "
            f"CRB {result.crb!r} / van Trees {result.van_trees!r}; ratios {result.ratio}; "
            f"attacker {getattr(result, 'attacker', attacker)!r}, n={n}, {how}."
        )
    return result


def assert_model_private(model: Any, X: ArrayLike, y: ArrayLike, *, canaries: Any = None, n_reference: int | None = None,
                         claim: Any = None, confidence: float | None = None, n_jobs: int | None = None,
                         rng: Any = None) -> Any:
    """Assert that no membership (or label) attack certifies more privacy loss than the model's claim.

    Runs :func:`~privaudit.audit.engines.membership.audit_membership` (the leave-many-out design with
    ``n_reference`` reference models per target; ``canaries`` for the worst case) and fails when a
    certified, assumption-free ε̲ exceeds the claim's ε. The claim defaults to the one the fitted model
    carries (privaudit learners); a model without a claim, or whose claim's neighbourhood does not cover
    membership, cannot fail and is refused, so that the assertion never passes vacuously.

    Parameters
    ----------
    model : estimator or trainer
        cloned and refitted
    X, y : array-like
        the pool of records
    canaries : int or (X_c, y_c), optional
        worst-case records (default: the marker's ``canaries``)
    n_reference : int, optional
        reference models per target (default: the marker's ``n_reference``, else 8)
    claim : PrivacyClaim, optional
        default: the fitted model's
    confidence : float, optional
        default: the marker's, else 0.95
    n_jobs : int, optional
        joblib workers
    rng : int, Generator or None
        one integer seed is drawn from it; the message names it

    Returns
    -------
    MembershipAudit

    Raises
    ------
    PrivacyAssertionError
        When a certified ε̲ exceeds the claim.
    InvalidParameterError
        When there is no claim to hold the model to, or its neighbourhood covers neither membership nor labels.
    """
    __tracebackhide__ = True
    from privaudit.mechanisms.validation import InvalidParameterError
    from privaudit.audit.engines.membership import audit_membership

    seed, how = _rng(rng)
    confidence = _setting("confidence", confidence, 0.95)
    n_reference = _setting("n_reference", n_reference, 8)
    canaries = _setting("canaries", canaries, None)
    result = audit_membership(model, X, y, canaries=canaries, n_reference=n_reference, claim=claim,
                              confidence=confidence, n_jobs=n_jobs, rng=seed)
    if result.claim is None or not result.claim_check.applies:
        raise InvalidParameterError(f"assert_model_private needs a claim covering membership or labels: "
                                    f"{result.claim_check.note}")
    if result.verdict == "violation":
        raise PrivacyAssertionError(
            f"the model leaks more than its claim: certified epsilon >= {result.epsilon_lb:.4g} against "
            f"claimed epsilon = {result.claim.epsilon:g} (delta = {result.claim.delta:g}, {result.claim.adjacency}) "
            f"at confidence {confidence:.4%}, {result.unit} inference over {result.n_fits} fits; best attack "
            f"{result.best!r}; {how}.\n{result.summary()}"
        )
    return result
