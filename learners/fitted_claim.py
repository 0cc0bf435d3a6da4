"""The ``claim`` of a fitted private learner.

scikit-learn requires every attribute set by ``fit`` to end in ``_``; DESIGN.md's
public API reads ``learner.claim``. Learners therefore store ``claim_`` in ``fit``
and expose it through this read-only property, which raises ``NotFittedError``
before ``fit``.
"""

from __future__ import annotations

from sklearn.utils.validation import check_is_fitted

from privaudit.mechanisms.claim import PrivacyClaim


class FittedClaimMixin:
    """Adds the read-only ``claim`` property over the fitted ``claim_``."""

    @property
    def claim(self) -> PrivacyClaim:
        """The privacy claim of what ``fit`` released (a :class:`~privaudit.mechanisms.PrivacyClaim`)."""
        check_is_fitted(self, "claim_")
        return self.claim_
