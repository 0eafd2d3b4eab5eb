"""What every game's script for the simulated table is made of: the pace of a turn, a bump.

A game's description (`referee.games`) writes the steps of its own matches from these;
`referee.simtable` puts the script on the simulated table.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Pace:
    """Frames per phase of a turn (the demo runs at a few frames a second)."""

    still: int = 4
    hand: int = 6
    verdict: int = 6
    end: int = 25
    bump_every: int = 0  # a camera bump every n turns (0: never)
    drop_every: int = 0  # a dropped frame every n turns (0: never)
    mistake_every: int = 0  # a player's mistake every n turns (0: never), put right afterwards


def bumped(camera: Any, rng: np.random.Generator) -> Any:
    """The same camera knocked a little: a few tenths of a degree and a few millimetres."""
    rvec = np.asarray(camera.rvec, dtype=float) + rng.normal(0, 0.004, 3)
    tvec = np.asarray(camera.tvec, dtype=float) + rng.normal(0, 0.08, 3)
    return replace(camera, rvec=rvec, tvec=tvec)
