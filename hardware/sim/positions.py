"""Random piece layouts for tests and demos (geometry only: no rules are applied)."""

from __future__ import annotations

import numpy as np

from hardware.sim.layout import DITION_SIZE, playable_cells
from hardware.sim.render import MAX_STACK, SimDisc


def random_discs(
    rng: np.random.Generator, n: int, *, min_distance: float = 1.0, max_tries: int = 20000
) -> tuple[SimDisc, ...]:
    """`n` non-overlapping discs (centre distance >= `min_distance`) on the playing area
    (0.5 <= x, y <= 19.5), colours alternating black, white, ..."""
    if n < 0:
        raise ValueError(f"number of discs must be >= 0, got {n}")
    pts: list[tuple[float, float]] = []
    tries = 0
    while len(pts) < n:
        tries += 1
        if tries > max_tries:
            raise ValueError(f"could not place {n} non-overlapping discs (placed {len(pts)})")
        x, y = rng.uniform(0.5, DITION_SIZE - 0.5, 2)
        if all((x - px) ** 2 + (y - py) ** 2 >= min_distance**2 for px, py in pts):
            pts.append((float(x), float(y)))
    return tuple(SimDisc(x, y, ("black", "white")[i % 2]) for i, (x, y) in enumerate(pts))


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
