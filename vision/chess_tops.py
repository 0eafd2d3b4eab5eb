"""Tops of draughts men, chips and counters on a chessboard's 52 cells (issue 19).

`read_chess_tops(frame, board, colours, *, intrinsics=None, thickness=0.12) -> TopsReading`;
`learn_chess_colours(frame, board, tops, *, intrinsics=None) -> {letter: BGR}` learns the colour
model from a position whose tops are known (the start position, or `referee calibrate colours`).

The squares are two colours, the pieces any 2-4 (black on a dark square, cream on a light one),
so neither "saturated means a piece" nor one board colour works. Per cell:

- the square's own colour where no piece reaches: four samples 0.42 squares off the centre along
  the diagonals (a man is 0.8 across: its edge stays 0.14 away); its median, against the median
  of all squares of its colour, is the local light level (lamp gradient, vignette, hot spot);
- what covers the centre: a disc of samples 0.15 squares across around the cell's centre on the
  board, and around where a top 1, 3 or 5 pieces high would appear (the camera from the board:
  `vision.geometry.camera_geometry`); the top's colour is the median of the most uniform of
  those discs (a crown or the rings of a draughts man are a minority of it);
- colours are compared as logarithms of BGR divided by the local light level (a shadow or a
  brighter corner scales all three channels alike): the cell is empty when the centre looks like
  its square by less than `empty_margin` against the nearest piece colour, else the nearest
  piece colour is its top. The confidence is the margin between the best two explanations.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from vision.camera import Intrinsics
from vision.domination import CELLS, TopsReading, cell_centre_board
from vision.errors import ColourModelError, InvalidImageError
from vision.geometry import BoardFit, board_intrinsics, board_to_image_lookup, camera_geometry

_CENTRES = np.array([cell_centre_board(c) for c in CELLS])
_DARK = np.array([(int(x) + int(y)) % 2 == 1 for x, y in _CENTRES])  # col + row odd


@dataclass(frozen=True)
class ChessTopsParams:
    """Tuning (shipped defaults)."""

    #: where the square shows beside a piece: offset along the diagonals, squares
    corner_offset: float = 0.42
    #: radius of the sampled discs, squares (a top is 0.4; jitter and the height guess leave 0.15)
    disc_radius: float = 0.12
    #: a cell is empty when its centre is this much (log units) nearer its square than any piece
    #: colour is to it; below 0 the piece colour wins (ties go to the piece: a cream man on a
    #: cream square differs by ~0.1 log units, sensor noise by ~0.02)
    empty_margin: float = 0.0
    #: rings (squares from the centre) where a piece's outline shows; edge energy there above
    #: `outline_factor` x that of the empty-looking squares (plus `outline_floor` grey levels per
    #: px: sensor noise after the blur) means a piece, even one of the square's own colour
    outline_radii: tuple[float, ...] = (0.3, 0.38, 0.46)
    outline_factor: float = 2.5
    outline_floor: float = 2.0
    #: a centre nearer than this (log units) to its square's colour may be an empty square
    colour_sure: float = 0.3
    #: heights whose top discs are tried (pieces)
    heights: tuple[int, ...] = (3,)


def _log(bgr: np.ndarray) -> np.ndarray:
    return np.log(np.maximum(np.asarray(bgr, np.float64), 1.0))


def _sample(frame: np.ndarray, px: np.ndarray) -> np.ndarray:
    """Bilinear BGR at (N, 2) px (clamped to the frame)."""
    import cv2

    n = len(px)
    x = px[:, 0].astype(np.float32).reshape(1, n)
    y = px[:, 1].astype(np.float32).reshape(1, n)
    out = cv2.remap(frame, x, y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return out.reshape(n, 3).astype(np.float64)


def _disc(radius: float) -> np.ndarray:
    pts = [(0.0, 0.0)]
    for r, k in ((0.5, 6), (1.0, 12)):
        a = np.arange(k) * (2 * np.pi / k)
        pts += list(zip(radius * r * np.cos(a), radius * r * np.sin(a)))
    return np.array(pts)


def _outline_energy(frame: np.ndarray, board: BoardFit, cam: Intrinsics | None, p: ChessTopsParams) -> np.ndarray:
    """Per cell, how much edge lies where a piece's outline, rim, side band or foot shadow would
    be (rings 0.3-0.46 squares around the centre on the board): the mean of the stronger half of
    the grey gradient there. An empty square shows only its grain."""
    import cv2

    grey = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY).astype(np.float32)
    grey = cv2.GaussianBlur(grey, (0, 0), 1.0)
    gx = cv2.Sobel(grey, cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(grey, cv2.CV_32F, 0, 1, ksize=3)
    mag = cv2.magnitude(gx, gy)
    ang = np.arange(24) * (2 * np.pi / 24)
    ring = np.concatenate([np.stack([r * np.cos(ang), r * np.sin(ang)], 1) for r in p.outline_radii])
    pts = (_CENTRES[:, None, :] + ring[None]).reshape(-1, 2)
    px = board_to_image_lookup(pts, board, cam).astype(np.float32)
    vals = cv2.remap(mag, px[:, 0].reshape(1, -1), px[:, 1].reshape(1, -1), cv2.INTER_LINEAR,
                     borderMode=cv2.BORDER_REPLICATE).reshape(len(_CENTRES), -1)
    vals.sort(axis=1)
    return vals[:, vals.shape[1] // 2 :].mean(axis=1).astype(np.float64)


def _measure(frame: np.ndarray, board: BoardFit, intrinsics: Intrinsics | None, thickness: float,
             p: ChessTopsParams) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[bool, np.ndarray], np.ndarray]:
    """Per cell: the local light level (3,), the centre's colour at the board (3,) and the most
    uniform top disc's colour (3,), raw BGR; the median light and dark square; the outline
    energy (`_outline_energy`)."""
    if not isinstance(frame, np.ndarray) or frame.ndim != 3 or frame.shape[2] != 3 or frame.dtype != np.uint8:
        raise InvalidImageError(f"frame must be a BGR uint8 image (H, W, 3), got {getattr(frame, 'shape', None)}")
    cam = board_intrinsics(board, intrinsics)
    h, w = frame.shape[:2]
    geo = camera_geometry(board, (w, h), cam)
    d = p.corner_offset
    offs = np.array([[-d, -d], [d, -d], [d, d], [-d, d]])
    corner_pts = (_CENTRES[:, None, :] + offs[None]).reshape(-1, 2)
    disc = _disc(p.disc_radius)
    centres = [_CENTRES]
    for k in p.heights:
        centres.append(_CENTRES + geo.thickness_shift(_CENTRES, k * thickness))
    disc_pts = np.concatenate([(c[:, None, :] + disc[None]).reshape(-1, 2) for c in centres])
    px = board_to_image_lookup(np.concatenate([corner_pts, disc_pts]), board, cam)
    vals = _sample(frame, px)
    n = len(CELLS)
    corners = vals[: 4 * n].reshape(n, 4, 3)
    discs = vals[4 * n :].reshape(len(centres), n, len(disc), 3)
    square = np.median(corners, axis=1)  # (n, 3)
    # light level: the square's own colour against the median square of its colour
    level = np.empty_like(square)
    refs = {}
    for dark in (False, True):
        sel = _DARK == dark
        refs[dark] = np.maximum(np.median(square[sel], axis=0), 1.0)
        level[sel] = square[sel] / refs[dark]
    base = np.median(discs[0], axis=1)
    energy = _outline_energy(frame, board, cam, p)
    tops = discs[1:]
    spread = np.median(np.abs(tops - np.median(tops, axis=2, keepdims=True)), axis=2).sum(axis=2)
    best = np.argmin(spread, axis=0)
    top = np.median(tops[best, np.arange(n)], axis=1)
    return level, base, top, refs, energy


def learn_chess_colours(
    frame: np.ndarray, board: BoardFit, tops: Mapping[str, str], *, intrinsics: Intrinsics | None = None,
    thickness: float = 0.12, params: ChessTopsParams = ChessTopsParams(),
) -> dict[str, tuple[float, float, float]]:
    """{letter: BGR} as the pieces' tops look, from a frame whose tops are known (`tops`: cell ->
    letter for the occupied cells, e.g. the start position); each colour at the median light
    level of the board."""
    level, _, top, _, _ = _measure(frame, board, intrinsics, thickness, params)
    index = {c: i for i, c in enumerate(CELLS)}
    out: dict[str, tuple[float, float, float]] = {}
    for letter in sorted(set(tops.values())):
        rows = [index[c] for c, t in tops.items() if t == letter and c in index]
        if not rows:
            continue
        norm = np.median(top[rows] / np.maximum(level[rows], 0.05), axis=0)
        out[letter] = tuple(float(v) for v in norm)  # type: ignore[assignment]
    if len(out) < 2:
        raise ColourModelError(f"learn_chess_colours: need 2-4 colours on the board, got {sorted(out)}")
    return out


def read_chess_tops(
    frame: np.ndarray,
    board: BoardFit,
    colours: Mapping[str, Any],
    *,
    intrinsics: Intrinsics | None = None,
    thickness: float = 0.12,
    params: ChessTopsParams = ChessTopsParams(),
) -> TopsReading:
    """The top colour letter (or ".") of the 52 cells of a chessboard; see the module."""
    if colours is None or not 2 <= len(colours) <= 4:
        raise ColourModelError(
            "a chessboard's pieces need a colour model of 2-4 colours (learn it from the start "
            "position or `referee calibrate colours`)"
        )
    letters = sorted(colours)
    for k in letters:
        if len(k) != 1 or k == ".":
            raise ColourModelError(f"colour letters must be single characters other than '.', got {k!r}")
    model = _log(np.array([colours[k] for k in letters], np.float64))  # (L, 3)
    level, base, top, refs, energy = _measure(frame, board, intrinsics, thickness, params)
    lvl = np.maximum(level, 0.05)
    base_n = _log(base / lvl)
    top_n = _log(top / lvl)
    # each cell's square at the median light level: the median of the squares of its colour
    square_n = np.where(_DARK[:, None], _log(refs[True])[None], _log(refs[False])[None])
    d_empty = np.linalg.norm(base_n - square_n, axis=1)
    d_base = np.linalg.norm(base_n[:, None, :] - model[None], axis=2).min(axis=1)
    d_top = np.linalg.norm(top_n[:, None, :] - model[None], axis=2)  # (n, L)
    order = np.argsort(d_top, axis=1)
    best = order[:, 0]
    n = len(CELLS)
    d1 = d_top[np.arange(n), best]
    d2 = d_top[np.arange(n), order[:, 1]]
    by_colour = d_empty + params.empty_margin < d_base
    # the edge energy of the squares that look empty by colour sets the frame's texture level
    calm = by_colour & (d_base - d_empty > 0.1)
    ref = float(np.median(energy[calm])) if calm.sum() >= 4 else float(np.percentile(energy, 20))
    edgy = energy > params.outline_factor * ref + params.outline_floor
    # empty: nothing on the outline, and the centre not clearly another colour than the square
    empty = ~edgy & (by_colour | (d_empty < params.colour_sure))
    tops_out: dict[str, str] = {}
    conf: dict[str, float] = {}
    for i, cell in enumerate(CELLS):
        if empty[i]:
            tops_out[cell] = "."
            margin = d_base[i] - d_empty[i]
        else:
            tops_out[cell] = letters[int(best[i])]
            margin = min(d2[i] - d1[i], d_empty[i] - d_base[i])
        conf[cell] = float(np.clip(margin / 0.3, 0.0, 1.0))
    return TopsReading(tops_out, conf)
