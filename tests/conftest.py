"""Shared fixtures."""

from __future__ import annotations

import os
from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import settings

# In CI every property test draws the same examples (a red run must mean a regression, not bad
# luck); on a developer's machine they explore new ones each run.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.fixture
def club_db() -> Iterator[tuple[str, str]]:
    """(url, name) of a scratch database on the test PostgreSQL server (tests/club_support.py);
    skips without a server, fails then under REFEREE_REQUIRE_POSTGRES=1."""
    from club_support import scratch_database

    yield from scratch_database()


@pytest.fixture
def rng() -> np.random.Generator:
    """Randomness is injected, never global."""
    return np.random.default_rng(20261130)
