"""Draw what the referee sees and wants over the camera frame (for the page and the snapshots).

The board outline, every piece read (ringed in its colour), the pieces the instruction points at
(red: remove, orange: wrong or missing, blue: borderline, green: just placed) and the instruction
text. Drawing is separate from detecting: this reads the referee's state and returns a new image.
"""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np

ROLE_BGR = {
    "remove": (40, 40, 230),
    "wrong": (0, 140, 255),
    "missing": (0, 140, 255),
    "borderline": (230, 120, 30),
    "placed": (60, 200, 60),
}
_CIRCLE = np.stack([np.cos(np.linspace(0, 2 * np.pi, 40)), np.sin(np.linspace(0, 2 * np.pi, 40))], 1)


def _to_image(H_board_to_image: np.ndarray, pts_board: np.ndarray) -> np.ndarray:
    pts = np.asarray(pts_board, dtype=np.float64).reshape(-1, 1, 2)
    return cv2.perspectiveTransform(pts, H_board_to_image).reshape(-1, 2)


def _ring(img: np.ndarray, H: np.ndarray, x: float, y: float, r: float, bgr: tuple, t: int) -> None:
    poly = _to_image(H, np.array([x, y]) + r * _CIRCLE)
    cv2.polylines(img, [np.round(poly * 4).astype(np.int32)], True, bgr, t, cv2.LINE_AA, shift=2)


def _cell_xy(cell: str) -> tuple[float, float]:
    f = ord(cell[0]) - ord("a")
    r = int(cell[1:])
    return f + 0.5, 8 - r + 0.5


def draw_overlay(frame: np.ndarray, referee: Any) -> np.ndarray:
    img = frame.copy()
    board = referee.board
    h, w = img.shape[:2]
    thick = max(2, round(w / 600))
    if board is not None:
        H = np.asarray(board.H_board_to_image, dtype=np.float64)
        corners = np.round(np.asarray(board.corners_px) * 4).astype(np.int32)
        cv2.polylines(img, [corners], True, (60, 200, 60), thick, cv2.LINE_AA, shift=2)
        reading = referee.last_reading
        if referee.game == "dition":
            if reading is not None:
                for d in reading.discs:
                    bgr = (30, 30, 30) if d.colour == "black" else (235, 235, 235)
                    _ring(img, H, d.x, d.y, 0.56, bgr, thick)
            for hl in referee.match.instruction.get("highlight", []):
                if "x" in hl:
                    bgr = ROLE_BGR.get(hl.get("role", ""), (0, 0, 255))
                    _ring(img, H, hl["x"], hl["y"], 0.7, bgr, thick * 2)
        else:
            for hl in referee.match.instruction.get("highlight", []):
                if "cell" in hl:
                    x, y = _cell_xy(hl["cell"])
                    sq = np.array([[x - .5, y - .5], [x + .5, y - .5], [x + .5, y + .5], [x - .5, y + .5]])
                    poly = np.round(_to_image(H, sq) * 4).astype(np.int32)
                    bgr = ROLE_BGR.get(hl.get("role", ""), (0, 0, 255))
                    cv2.polylines(img, [poly], True, bgr, thick * 2, cv2.LINE_AA, shift=2)
    text = referee.match.instruction.get("text", "")
    if text:
        scale = w / 1400
        (tw, th), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, scale, thick)
        cv2.rectangle(img, (0, 0), (min(w, tw + 20), th + 24), (20, 20, 20), -1)
        cv2.putText(img, text, (10, th + 10), cv2.FONT_HERSHEY_SIMPLEX, scale, (255, 255, 255),
                    thick, cv2.LINE_AA)
    if referee.hand:
        cv2.putText(img, "hand over the board", (10, h - 20), cv2.FONT_HERSHEY_SIMPLEX,
                    w / 1600, (0, 200, 255), thick, cv2.LINE_AA)
    return img
