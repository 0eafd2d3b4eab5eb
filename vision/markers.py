"""The ArUco marker layout of the shared physical kit (docs/INTERFACES.md), for both games.

Markers are optional, from `cv2.aruco.DICT_4X4_50`, axis-aligned with the board frame, the
marker's own top-left corner at its smallest (x, y), on a white quiet zone of 0.25 of its side.
Marker id `ids[i]` sits next to board corner i. hardware/sim keeps a copy for rendering; a test
checks that both agree.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: name of the cv2.aruco predefined dictionary
ARUCO_DICTIONARY = "DICT_4X4_50"
#: quiet zone around each marker, as a fraction of its side
QUIET_ZONE_FRACTION = 0.25


@dataclass(frozen=True)
class MarkerLayout:
    game: str
    ids: tuple[int, int, int, int]
    side_board: float
    centres_board: tuple[tuple[float, float], ...]
    #: the board corners (board frame) that the four markers stand for
    board_corners_board: tuple[tuple[float, float], ...]

    def marker_corners_board(self, marker_id: int) -> np.ndarray:
        """(4, 2) float64 corners of one marker in board units, in ArUco order
        (top-left, top-right, bottom-right, bottom-left = increasing angle, clockwise)."""
        i = self.ids.index(marker_id)
        cx, cy = self.centres_board[i]
        h = self.side_board / 2
        return np.array([[cx - h, cy - h], [cx + h, cy - h], [cx + h, cy + h], [cx - h, cy + h]])


DITION_MARKERS = MarkerLayout(
    game="dition",
    ids=(0, 1, 2, 3),
    side_board=1.5,
    centres_board=((-1.25, -1.25), (21.25, -1.25), (21.25, 21.25), (-1.25, 21.25)),
    board_corners_board=((0.0, 0.0), (20.0, 0.0), (20.0, 20.0), (0.0, 20.0)),
)

DOMINATION_MARKERS = MarkerLayout(
    game="domination",
    ids=(4, 5, 6, 7),
    side_board=0.6,
    centres_board=((0.5, 0.5), (7.5, 0.5), (7.5, 7.5), (0.5, 7.5)),
    board_corners_board=((0.0, 0.0), (8.0, 0.0), (8.0, 8.0), (0.0, 8.0)),
)

LAYOUTS: dict[str, MarkerLayout] = {"dition": DITION_MARKERS, "domination": DOMINATION_MARKERS}


def layout_for(game: str) -> MarkerLayout:
    try:
        return LAYOUTS[game]
    except KeyError:
        raise ValueError(f"unknown game {game!r}: expected one of {sorted(LAYOUTS)}") from None
