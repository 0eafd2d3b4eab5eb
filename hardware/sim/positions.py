"""Random piece layouts for tests and demos (geometry only: no rules are applied)."""

from __future__ import annotations

import math
from typing import Literal

import numpy as np

from hardware.sim.layout import DITION_SIZE, playable_cells
from hardware.sim.render import MAX_STACK, SimDisc


def random_discs(
    rng: np.random.Generator,
    n: int,
    *,
    min_distance: float = 1.0,
    max_tries: int = 20000,
    touching_fraction: float = 0.0,
    touching_gap: float = 0.03,
    colours: Literal["alternate", "random"] = "alternate",
) -> tuple[SimDisc, ...]:
    """`n` non-overlapping discs (centre distance >= `min_distance`) on the playing area
    (0.5 <= x, y <= 19.5).

    `touching_fraction`: the share of the placements (after the first) that put the disc next to
    a random earlier one, at a centre distance of `min_distance` .. `min_distance` +
    `touching_gap` in a random direction (clusters of touching discs, as in play); the others
    are uniform on the playing area. `colours`: "alternate" (black, white, black, ...) or
    "random" (each disc black or white with equal odds, drawn after all positions).
    The defaults (no touching, alternating) keep the random stream of earlier versions."""
    if n < 0:
        raise ValueError(f"number of discs must be >= 0, got {n}")
    if not 0.0 <= touching_fraction <= 1.0:
        raise ValueError(f"touching_fraction must be in [0, 1], got {touching_fraction}")
    if touching_gap < 0:
        raise ValueError(f"touching_gap must be >= 0, got {touching_gap}")
    if colours not in ("alternate", "random"):
        raise ValueError(f"colours must be 'alternate' or 'random', got {colours!r}")
    lo, hi = 0.5, DITION_SIZE - 0.5
    pts: list[tuple[float, float]] = []
    tries = 0
    while len(pts) < n:
        tries += 1
        if tries > max_tries:
            raise ValueError(f"could not place {n} non-overlapping discs (placed {len(pts)})")
        if touching_fraction > 0 and pts and rng.random() < touching_fraction:
            bx, by = pts[int(rng.integers(len(pts)))]
            a = rng.uniform(0.0, 2 * math.pi)
            dist = rng.uniform(min_distance, min_distance + touching_gap)
            x, y = bx + dist * math.cos(a), by + dist * math.sin(a)
            if not (lo <= x <= hi and lo <= y <= hi):
                continue
        else:
            x, y = rng.uniform(lo, hi, 2)
        # (the touching disc itself may lie a rounding error inside `min_distance`)
        if all((x - px) ** 2 + (y - py) ** 2 >= min_distance**2 * (1 - 1e-12) for px, py in pts):
            pts.append((float(x), float(y)))
    if colours == "random":
        names = ["black" if b else "white" for b in rng.random(len(pts)) < 0.5]
    else:
        names = [("black", "white")[i % 2] for i in range(len(pts))]
    return tuple(SimDisc(x, y, c) for (x, y), c in zip(pts, names))


def random_stacks(
    rng: np.random.Generator, n: int, letters: str = "GR", *, max_height: int = MAX_STACK
) -> dict[str, str]:
    """Stacks of 1..max_height random `letters` on `n` distinct random playable cells."""
    cells = playable_cells()
    if not 0 <= n <= len(cells):
        raise ValueError(f"number of stacks must be 0..{len(cells)}, got {n}")
    if not letters:
        raise ValueError("need at least one colour letter")
    chosen = rng.choice(len(cells), size=n, replace=False)
    out = {}
    for i in sorted(chosen):
        h = int(rng.integers(1, max_height + 1))
        out[cells[i]] = "".join(str(c) for c in rng.choice(list(letters), size=h))
    return out
