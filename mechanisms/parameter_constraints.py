"""Parameter constraints of the mechanisms, in scikit-learn's vocabulary (:mod:`sklearn.utils._param_validation`).

A mechanism class declares its constructor parameters as ``_parameter_constraints`` next to its
code, one entry per keyword, a list of admissible types or ranges (``Interval``,
``StrOptions``, ``"array-like"``, ``"boolean"``, ``None``...): the vocabulary the learners use
(:mod:`privaudit.learners.parameter_constraints`). The configuration layer validates a
mechanism table against it when a file is loaded, so ``epsilon = -1`` is refused before any
task runs and the mechanism is never constructed to check its parameters. What one parameter
cannot say alone (``sigma``, or ``epsilon`` and ``delta``) is the ``check`` given to
:func:`~privaudit.mechanisms.registry.register_mechanism`.

The constraints below are the ones several mechanisms share.
"""

from __future__ import annotations

from numbers import Integral, Real

from sklearn.utils._param_validation import Interval, StrOptions

#: A number > 0 (ε, σ, a sensitivity, a scale).
POSITIVE = Interval(Real, 0, None, closed="neither")
#: A number >= 0.
NONNEGATIVE = Interval(Real, 0, None, closed="left")
#: δ in (0, 1).
DELTA = Interval(Real, 0, 1, closed="neither")
#: A probability in [0, 1].
UNIT = Interval(Real, 0, 1, closed="both")
#: A rate in (0, 1].
RATE = Interval(Real, 0, 1, closed="right")
#: An integer >= 1.
COUNT = Interval(Integral, 1, None, closed="left")
#: An integer >= 0.
SIZE = Interval(Integral, 0, None, closed="left")
#: How σ is calibrated to (ε, δ).
CALIBRATION = StrOptions({"analytic", "classical"})

__all__ = ["CALIBRATION", "COUNT", "DELTA", "Integral", "Interval", "NONNEGATIVE", "POSITIVE", "RATE", "Real", "SIZE",
           "StrOptions", "UNIT"]
