"""Shared fixtures."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture
def rng() -> np.random.Generator:
    """Randomness is injected, never global."""
    return np.random.default_rng(20261130)
