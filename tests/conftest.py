"""Shared fixtures."""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import settings

# In CI every property test draws the same examples (a red run must mean a regression, not bad
# luck); on a developer's machine they explore new ones each run.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.fixture
def rng() -> np.random.Generator:
    """Randomness is injected, never global."""
    return np.random.default_rng(20261130)
