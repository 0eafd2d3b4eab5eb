"""Drawing overlays over frames: the board outline, discs with colour and index, highlights.

Detecting is separate from drawing: stages return data, this module draws it (the web page's
live view and the README pictures use it). Every function draws onto a copy and returns it.
Images are BGR uint8 (H, W, 3).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from vision.camera import Intrinsics
from vision.dition import DiscReading
from vision.geometry import DITION_SQUARES, BoardFit, board_to_image

#: BGR colours of the overlay
OUTLINE_BGR = (0, 200, 255)
BLACK_DISC_BGR = (255, 120, 0)
WHITE_DISC_BGR = (0, 0, 255)
ROLE_BGR: dict[str, tuple[int, int, int]] = {
    "remove": (0, 0, 255),
    "placed": (0, 220, 0),
    "wrong": (255, 0, 255),
    "borderline": (0, 200, 255),
}


def _polyline_board(
    points_board: np.ndarray, board: BoardFit, intrinsics: Intrinsics | None
) -> np.ndarray:
    px = board_to_image(points_board, board, intrinsics)
    return np.round(px * 16).astype(np.int32).reshape(-1, 1, 2)


def _square(lo: float, hi: float, n: int = 40) -> np.ndarray:
    t = np.linspace(lo, hi, n)
    return np.concatenate([
        np.stack([t, np.full(n, lo)], 1), np.stack([np.full(n, hi), t], 1),
        np.stack([t[::-1], np.full(n, hi)], 1), np.stack([np.full(n, lo), t[::-1]], 1),
    ])


def draw_board(
    image: np.ndarray,
    board: BoardFit,
    *,
    intrinsics: Intrinsics | None = None,
    colour: tuple[int, int, int] = OUTLINE_BGR,
    thickness: int = 2,
) -> np.ndarray:
    """The board's squares (Dition: outer and inner; Domination: the 8x8 outline) and corner ids."""
    import cv2

    out = image.copy()
    squares: Sequence[tuple[float, float]] = (
        DITION_SQUARES if board.game == "dition" else ((0.0, board.size_board),)
    )
    for lo, hi in squares:
        cv2.polylines(out, [_polyline_board(_square(lo, hi), board, intrinsics)], True, colour,
                      thickness, cv2.LINE_AA, 4)
    for i, (x, y) in enumerate(board.corners_px):
        cv2.putText(out, str(i), (int(x) + 6, int(y) - 6), cv2.FONT_HERSHEY_SIMPLEX, 0.8,
                    colour, 2, cv2.LINE_AA)
    return out


def draw_discs(
    image: np.ndarray,
    board: BoardFit,
    discs: Sequence[DiscReading],
    *,
    intrinsics: Intrinsics | None = None,
    radius_board: float = 0.5,
    labels: bool = True,
) -> np.ndarray:
    """Each disc's outline (its footprint on the board), its centre and its index."""
    import cv2

    out = image.copy()
    ang = np.linspace(0, 2 * math.pi, 32, endpoint=False)
    ring = np.stack([np.cos(ang), np.sin(ang)], 1) * radius_board
    for i, d in enumerate(discs):
        c = np.asarray(d.centre_board)
        colour = BLACK_DISC_BGR if d.colour == "black" else WHITE_DISC_BGR
        cv2.polylines(out, [_polyline_board(c + ring, board, intrinsics)], True, colour, 2,
                      cv2.LINE_AA, 4)
        px = board_to_image(c[None], board, intrinsics)[0]
        cv2.drawMarker(out, (round(px[0]), round(px[1])), colour, cv2.MARKER_CROSS, 8, 1)
        if labels:
            cv2.putText(out, str(i), (int(px[0]) + 4, int(px[1]) - 4), cv2.FONT_HERSHEY_SIMPLEX,
                        0.45, colour, 1, cv2.LINE_AA)
    return out


def draw_highlights(
    image: np.ndarray,
    board: BoardFit,
    highlights: Iterable[Mapping[str, object]],
    *,
    intrinsics: Intrinsics | None = None,
    radius_board: float = 0.62,
) -> np.ndarray:
    """Rings around board points: `{"x": .., "y": .., "role": "remove"|"placed"|...}`
    (the `highlight` entries of the /api/state payload)."""
    import cv2

    out = image.copy()
    ang = np.linspace(0, 2 * math.pi, 40, endpoint=False)
    ring = np.stack([np.cos(ang), np.sin(ang)], 1) * radius_board
    for h in highlights:
        if "x" not in h or "y" not in h:
            continue
        c = np.array([float(h["x"]), float(h["y"])])  # type: ignore[arg-type]
        colour = ROLE_BGR.get(str(h.get("role", "")), (255, 255, 255))
        cv2.polylines(out, [_polyline_board(c + ring, board, intrinsics)], True, colour, 3,
                      cv2.LINE_AA, 4)
    return out


def draw_detections(
    image: np.ndarray,
    board: BoardFit,
    discs: Sequence[DiscReading] = (),
    *,
    intrinsics: Intrinsics | None = None,
) -> np.ndarray:
    """Board outline plus discs: the picture `referee detect` and the README show."""
    return draw_discs(draw_board(image, board, intrinsics=intrinsics), board, discs,
                      intrinsics=intrinsics)
