"""pytest plugin: privacy assertions, seeded fixtures and options.

Registered through the ``pytest11`` entry point, so installing privaudit is enough.

Options
-------
``--privacy-seed S``
    Root seed of every ``privacy_rng`` (default 0). It is printed in the session
    header so that any failure can be reproduced.
``--privacy-samples X``
    Multiplies the sample size of every privacy assertion (default 1.0).

Fixtures
--------
``privacy_rng``
    A ``numpy.random.Generator`` derived from the root seed and the test's node id,
    so that tests draw independent, reproducible streams whatever their order.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("privaudit", "privacy assertions (privaudit)")
    group.addoption("--privacy-seed", type=int, default=0, help="root seed of the privacy_rng fixture (default 0)")
    group.addoption(
        "--privacy-samples", type=float, default=1.0,
        help="multiply the sample size of every privacy assertion by this factor (default 1.0)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "privacy(epsilon=None, delta=None, n=None, confidence=None): per-test privacy budget and audit size"
    )


def pytest_report_header(config: pytest.Config) -> str:
    return (
        f"privaudit: --privacy-seed={config.getoption('--privacy-seed')} "
        f"--privacy-samples={config.getoption('--privacy-samples')}"
    )


def node_seed(root: int, nodeid: str) -> np.random.SeedSequence:
    """SeedSequence of one test: the root seed plus a stable hash of its node id."""
    digest = int.from_bytes(hashlib.sha256(nodeid.encode()).digest()[:8], "little")
    return np.random.SeedSequence([root, digest])


@pytest.fixture
def privacy_rng(request: pytest.FixtureRequest) -> np.random.Generator:
    """A Generator seeded from ``--privacy-seed`` and the test's node id."""
    return np.random.default_rng(node_seed(request.config.getoption("--privacy-seed"), request.node.nodeid))
