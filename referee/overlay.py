"""Draw what the referee sees and wants over the camera frame (for the page and the snapshots).

The board outline, every piece read (ringed in its colour), the pieces the instruction points at
(red: remove, orange: wrong or missing, yellow: borderline, green: just placed: the colours of
the diagram's rings, which the verdicts name) and the instruction text, wrapped to the picture's
width (a snapshot in the replay shows the whole verdict). Drawing is separate from detecting:
this reads the referee's state and returns a new image.
"""

from __future__ import annotations

import functools
from typing import Any

import cv2
import numpy as np

from hardware.source import Preview
from vision.resize import shrink

ROLE_BGR = {
    "remove": (40, 40, 230),
    "wrong": (0, 140, 255),
    "missing": (0, 140, 255),
    "borderline": (10, 214, 255),
    "placed": (60, 200, 60),
}
_CIRCLE = np.stack([np.cos(np.linspace(0, 2 * np.pi, 40)), np.sin(np.linspace(0, 2 * np.pi, 40))], 1)


def to_image(H_board_to_image: np.ndarray, pts_board: np.ndarray) -> np.ndarray:
    """(N, 2) board units -> (N, 2) pixels through the board's homography."""
    pts = np.asarray(pts_board, dtype=np.float64).reshape(-1, 1, 2)
    return cv2.perspectiveTransform(pts, H_board_to_image).reshape(-1, 2)


def ring(img: np.ndarray, H: np.ndarray, x: float, y: float, r: float, bgr: tuple, t: int) -> None:
    """A circle of radius `r` (board units) around board point (x, y), drawn in place."""
    rings(img, H, [(x, y)], r, bgr, t)


def rings(img: np.ndarray, H: np.ndarray, centres_board: Any, r: float, bgr: tuple,
          t: int) -> None:
    """`ring` around each of `centres_board` ((N, 2) board units): their outlines through the
    homography in one call and drawn in one (one call a ring was ~15 us of Python a ring, 40
    discs on every picture the page shows)."""
    centres = np.asarray(centres_board, dtype=np.float64).reshape(-1, 1, 2)
    if not len(centres):
        return
    poly = to_image(H, centres + r * _CIRCLE).reshape(len(centres), -1, 2)
    cv2.polylines(img, list(np.round(poly * 4).astype(np.int32)), True, bgr, t, cv2.LINE_AA,
                  shift=2)


def outline(img: np.ndarray, H: np.ndarray, pts_board: np.ndarray, bgr: tuple, t: int) -> None:
    """The closed polygon through `pts_board` (board units), drawn in place."""
    poly = to_image(H, pts_board)
    cv2.polylines(img, [np.round(poly * 4).astype(np.int32)], True, bgr, t, cv2.LINE_AA, shift=2)


@functools.lru_cache(maxsize=64)
def caption_lines(text: str, width_px: int, scale: float, thick: int) -> tuple[str, ...]:
    """`text` broken between words into lines no wider than `width_px` (a single word wider
    than that stands alone on its line). Kept for the next pictures: the same verdict is
    written on every picture until it changes (a getTextSize per word was ~1 ms a picture)."""
    lines: list[str] = []
    for word in text.split():
        trial = f"{lines[-1]} {word}" if lines else word
        fits = cv2.getTextSize(trial, cv2.FONT_HERSHEY_SIMPLEX, scale, thick)[0][0] <= width_px
        if lines and fits:
            lines[-1] = trial
        else:
            lines.append(word)
    return tuple(lines)


@functools.lru_cache(maxsize=64)
def caption_layout(text: str, width_px: int, scale: float,
                   thick: int) -> tuple[tuple[str, ...], int, int]:
    """(`caption_lines`, the height of a line's capitals in px, the widest line's width in
    px): kept with the lines (measuring them again was ~8 getTextSize calls a picture)."""
    lines = caption_lines(text, width_px, scale, thick)
    (_, cap_px), _ = cv2.getTextSize("Ag", cv2.FONT_HERSHEY_SIMPLEX, scale, thick)
    widest_px = max(cv2.getTextSize(line, cv2.FONT_HERSHEY_SIMPLEX, scale, thick)[0][0]
                    for line in lines)
    return lines, cap_px, widest_px


def shown_picture(frame: np.ndarray, preview: Preview | None, width: int | None,
                  own: bool = False) -> np.ndarray:
    """`frame` as a page shows it, `width` px wide (None, or not narrower: the frame itself).
    From the camera's `preview` of it when that is at least `width` wide (the same frame, made
    small by the camera: the full frame is not touched), else shrunk from `frame`. May be
    `frame` or the preview's own array unless `own` (then an array of the caller's own, to draw
    on)."""
    if width is None or width <= 0 or width >= frame.shape[1]:
        return frame.copy() if own else frame
    if preview is not None and preview.size[0] >= width:
        if width >= preview.size[0]:  # the preview as it is: `shrink` would return it
            return preview.bgr_copy() if own else preview.bgr()
        return shrink(preview.bgr(), width)  # a new array
    return shrink(frame, width)  # a new array: `width` is narrower than the frame


def draw_overlay(frame: np.ndarray, referee: Any, width: int | None = None,
                 preview: Preview | None = None) -> np.ndarray:
    """A copy of `frame` with the board outline, what the referee's game marks on it (its
    `Game.draw`), the instruction and a hand warning. `width`: the copy is shrunk to it first and
    drawn at that size (the page's picture: no full-size copy and drawing for a small view),
    made from `preview` (the camera's smaller picture of the same frame) when that is wide
    enough (`shown_picture`)."""
    img = shown_picture(frame, preview, width, own=True)
    # captured pixels -> pixels of the copy, per axis (a preview's aspect may differ a little)
    scale_x, scale_y = img.shape[1] / frame.shape[1], img.shape[0] / frame.shape[0]
    board = referee.board
    h, w = img.shape[:2]
    thick = max(2, round(w / 600))
    if board is not None:
        to_shown = np.diag([scale_x, scale_y, 1.0])
        H = to_shown @ np.asarray(board.H_board_to_image, dtype=np.float64)
        corners = np.round(np.asarray(board.corners_px) * (scale_x, scale_y) * 4).astype(np.int32)
        cv2.polylines(img, [corners], True, (60, 200, 60), thick, cv2.LINE_AA, shift=2)
        referee.spec.draw(img, H, referee.last_reading, referee.match.instruction, thick)
    text = referee.match.instruction.get("text", "")
    if text:
        scale = w / 1400
        lines, th, widest = caption_layout(text, w - 20, scale, thick)
        step = th + max(6, th // 2)
        cv2.rectangle(img, (0, 0), (min(w, widest + 20), step * len(lines) + 14), (20, 20, 20), -1)
        for k, line in enumerate(lines):
            cv2.putText(img, line, (10, th + 10 + k * step), cv2.FONT_HERSHEY_SIMPLEX, scale,
                        (255, 255, 255), thick, cv2.LINE_AA)
    if referee.hand:
        cv2.putText(img, "hand over the board", (10, h - 20), cv2.FONT_HERSHEY_SIMPLEX,
                    w / 1600, (0, 200, 255), thick, cv2.LINE_AA)
    return img
