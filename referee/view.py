"""How the board appears turned in the camera picture, in quarter turns.

The diagram on the page and the words of a verdict ("near the top-left corner") follow the
board as the camera shows it: a board whose x axis (corner 0 -> corner 1) points down the picture
is drawn a quarter turn clockwise, so that the diagram, the picture beside it and the words agree
(to within 45 degrees). Frames as in DESIGN.md: image y down, board y down.
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def board_angle_deg(corners_px: Sequence[Sequence[float]]) -> float:
    """Angle of the board's x axis in the picture, degrees clockwise from the picture's x axis
    (both edges that run from the corner-0 side to the corner-1 side, averaged)."""
    c = [(float(p[0]), float(p[1])) for p in corners_px]
    dx = (c[1][0] - c[0][0]) + (c[2][0] - c[3][0])
    dy = (c[1][1] - c[0][1]) + (c[2][1] - c[3][1])
    return math.degrees(math.atan2(dy, dx))


def quarter_turns(corners_px: Sequence[Sequence[float]]) -> int:
    """0..3: quarter turns clockwise that bring the diagram closest to the picture."""
    return round(board_angle_deg(corners_px) / 90.0) % 4


def turned(x: float, y: float, turns: int, side: float) -> tuple[float, float]:
    """Board point (x, y) of a square board of `side` as seen after `turns` quarter turns
    clockwise (corner 0 at (0, 0) goes to the top-right after one turn)."""
    for _ in range(turns % 4):
        x, y = side - y, x
    return x, y
