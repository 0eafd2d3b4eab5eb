"""The shared physical kit, as the renderer draws it (docs/INTERFACES.md, "Shared physical kit").

`hardware/` may not import `vision/`, so the marker layout is duplicated here on purpose; a test
elsewhere checks that it agrees with `vision/markers.py`. All lengths are in board units (Dition:
disc diameters; Domination: cells).
"""

from __future__ import annotations

from typing import Literal

Game = Literal["dition", "domination"]
GAMES: tuple[str, ...] = ("dition", "domination")

# ---- Dition ---------------------------------------------------------------------------------
DITION_SIZE = 20.0
DITION_INNER = (3.0, 17.0)
DITION_LINE_WIDTH = 0.06
DITION_DISC_DIAMETER = 1.0
DITION_DOT_DIAMETER = 0.25
DITION_DISC_THICKNESS = 0.08
#: physical size of one Dition unit (a disc diameter); used only for the hand's size
DITION_UNIT_MM = 30.0

# ---- Domination -----------------------------------------------------------------------------
DOMINATION_SIZE = 8.0
DOMINATION_LINE_WIDTH = 0.04
DOMINATION_PIECE_DIAMETER = 0.8
DOMINATION_PIECE_THICKNESS = 0.12
DOMINATION_UNIT_MM = 35.0
FILES = "abcdefgh"
CUT_CELLS: frozenset[str] = frozenset(
    {"a1", "b1", "a2", "g1", "h1", "h2", "a7", "a8", "b8", "g8", "h8", "h7"}
)
#: default piece colours, BGR
DOMINATION_COLOURS: dict[str, tuple[int, int, int]] = {
    "G": (60, 160, 40),
    "R": (40, 40, 200),
    "B": (200, 90, 30),
    "Y": (30, 200, 230),
}

# ---- ArUco markers (cv2.aruco.DICT_4X4_50) ----------------------------------------------------
MARKER_DICTIONARY = "DICT_4X4_50"
#: quiet zone (white margin) around each marker, as a fraction of its side
MARKER_QUIET_ZONE = 0.25
#: game -> (ids at corners 0..3, side in units, centres in board units)
MARKERS: dict[str, tuple[tuple[int, ...], float, tuple[tuple[float, float], ...]]] = {
    "dition": ((0, 1, 2, 3), 1.5, ((-1.25, -1.25), (21.25, -1.25), (21.25, 21.25), (-1.25, 21.25))),
    "domination": ((4, 5, 6, 7), 0.6, ((0.5, 0.5), (7.5, 0.5), (7.5, 7.5), (0.5, 7.5))),
}

#: extent of the plate (the printed sheet / board) in board units: (x0, y0, x1, y1)
PLATE_EXTENT: dict[str, tuple[float, float, float, float]] = {
    "dition": (-2.8, -2.8, 22.8, 22.8),
    "domination": (-0.45, -0.45, 8.45, 8.45),
}


def board_size(game: str) -> float:
    """Side of the game's square board frame in board units."""
    return DITION_SIZE if check_game(game) == "dition" else DOMINATION_SIZE


def board_corners(game: str) -> tuple[tuple[float, float], ...]:
    """Corners 0..3 of the board frame (DESIGN.md order: clockwise from the origin)."""
    s = board_size(game)
    return ((0.0, 0.0), (s, 0.0), (s, s), (0.0, s))


def unit_mm(game: str) -> float:
    return DITION_UNIT_MM if check_game(game) == "dition" else DOMINATION_UNIT_MM


def check_game(game: str) -> str:
    if game not in GAMES:
        raise ValueError(f"unknown game {game!r}: expected one of {', '.join(GAMES)}")
    return game


def cell_centre(cell: str) -> tuple[float, float]:
    """Centre of a Domination cell ("a1".."h8") in board units (DESIGN.md)."""
    if len(cell) != 2 or cell[0] not in FILES or cell[1] not in "12345678":
        raise ValueError(f"bad cell name {cell!r}: expected a file a-h and a rank 1-8, e.g. 'd4'")
    f = FILES.index(cell[0])
    r = int(cell[1])
    return (f + 0.5, 8 - r + 0.5)


def playable_cells() -> tuple[str, ...]:
    """The 52 playable Domination cells, rank 8 first, files a..h."""
    return tuple(f"{f}{r}" for r in range(8, 0, -1) for f in FILES if f"{f}{r}" not in CUT_CELLS)
