"""Compare what the camera sees with what the board should hold (Dition discs).

Expected and seen discs are paired per colour by a minimum-cost assignment (scipy's
`linear_sum_assignment`); a pair further apart than `tolerance` (board units) is no pair. What is
left over is `missing` (expected, not seen) and `extra` (seen, not expected).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linear_sum_assignment


@dataclass(frozen=True)
class SeenDisc:
    """One disc as the vision read it, in board units."""

    x: float
    y: float
    colour: str
    sigma: float = 0.02
    confidence: float = 1.0


@dataclass(frozen=True)
class BoardDiff:
    pairs: tuple[tuple[int, int], ...]  # (expected index, seen index)
    missing: tuple[int, ...]  # expected indices not seen
    extra: tuple[int, ...]  # seen indices not expected
    max_shift: float  # largest distance within a pair

    @property
    def same(self) -> bool:
        return not self.missing and not self.extra

    def signature(self) -> tuple[tuple[int, ...], int]:
        return (self.missing, len(self.extra))


def diff_discs(
    expected: Sequence[tuple[float, float, str]],
    seen: Sequence[SeenDisc],
    *,
    tolerance: float = 0.35,
) -> BoardDiff:
    pairs: list[tuple[int, int]] = []
    max_shift = 0.0
    for colour in {c for *_, c in expected} | {s.colour for s in seen}:
        e_idx = [i for i, (_, _, c) in enumerate(expected) if c == colour]
        s_idx = [j for j, s in enumerate(seen) if s.colour == colour]
        if not e_idx or not s_idx:
            continue
        e_xy = np.array([expected[i][:2] for i in e_idx], dtype=float)
        s_xy = np.array([(seen[j].x, seen[j].y) for j in s_idx], dtype=float)
        dist = np.linalg.norm(e_xy[:, None, :] - s_xy[None, :, :], axis=2)
        cost = np.where(dist <= tolerance, dist, 1e6)
        rows, cols = linear_sum_assignment(cost)
        for r, c in zip(rows, cols):
            if dist[r, c] <= tolerance:
                pairs.append((e_idx[r], s_idx[c]))
                max_shift = max(max_shift, float(dist[r, c]))
    paired_e = {p[0] for p in pairs}
    paired_s = {p[1] for p in pairs}
    return BoardDiff(
        pairs=tuple(sorted(pairs)),
        missing=tuple(i for i in range(len(expected)) if i not in paired_e),
        extra=tuple(j for j in range(len(seen)) if j not in paired_s),
        max_shift=max_shift,
    )
