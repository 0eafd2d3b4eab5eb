"""Find the Domination board from its own cell pattern (no markers, no given corners).

Stage function: `find_domination_board(frame, params=None, *, corners_px=None, intrinsics=None)
-> vision.geometry.BoardFit` (method "cells", or "corners" when corners are given).

The printed board is 52 light squares, each enclosed by dark grid lines 0.04 cells wide centred
on the cell borders; the cut corners and the margin are plate colour (docs/INTERFACES.md). Pieces
sit inside the squares but leave their corners light, so every cell still shows up as a light
four-sided region:

1. light, low-saturation pixels relative to their neighbourhood (adaptive threshold on the grey
   image, saturated piece colours removed) -> connected regions;
2. regions whose hull is a convex quadrilateral of plausible size -> cell candidates;
3. starting from the most central empty-looking candidate (a region around a piece can form a
   quad that is not its cell), a region-growing grid assignment: its corners give a local
   homography to a unit cell, neighbours whose centre and corners land on a grid cell get its
   integer position, and the homography is refitted on all assigned corners as the grid grows;
4. the grid homography is sharpened on the dark lines around the cells found: short profiles
   across each line give its centre (parabola through the darkest sample), and a robust
   point-on-line DLT refits the homography (pieces covering a line only remove samples);
5. the integer offset of the grid inside the 8x8 frame is the one that puts (nearly) all found
   cells on playable squares and sees the most of the board's line pieces, outline included,
   where it predicts them;
6. a final line refinement over every line piece of the 52-cell board.

Orientation: the cell pattern is symmetric under quarter turns, so without markers corner 0
(next to a8) is the board corner on the image's top-left side: the board's x axis is taken along
the side of the seed cell that runs rightwards from its top-left-most corner. Lens distortion:
with `intrinsics` all points are undistorted before fitting (the homography acts on undistorted
pixels, as in vision.geometry); without, the extrapolated corners can be several pixels off.

`track_domination_board(frame, previous, ...)` re-measures a known board on its lines only.
`is_one_sheet(frame, board)` tells an 8x8 drawn on one sheet (its margin the cells' colour), which
this finder also finds, from the kit's printed board (light cells on a darker plate).
Run as `python -m vision.domination_board IMAGE` to print the fit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from vision.camera import Intrinsics
from vision.chessboard import CUT_GRID
from vision.errors import BoardNotFoundError, InvalidImageError
from vision.geometry import (
    BoardFit,
    board_to_image,
    fit_from_corners,
    fit_from_homography,
    sample_points,
)

#: playable cells as grid (col, row), col = file index, row = 8 - rank (0 = rank 8): all but the
#: 12 cut ones (`vision.chessboard.CUT_GRID`)
PLAYABLE_GRID: frozenset[tuple[int, int]] = frozenset(
    (f, 8 - r) for f in range(8) for r in range(1, 9) if (f, 8 - r) not in CUT_GRID
)


@dataclass(frozen=True)
class DominationBoardParams:
    """Tuning of the cell-pattern board finder (shipped defaults)."""

    #: adaptive threshold block as a fraction of the image's smaller side (made odd)
    block_fraction: float = 0.08
    #: a light pixel is this many grey levels above its neighbourhood mean
    threshold_offset: float = -6.0
    #: pixels more saturated than this (HSV S, 0..255) are pieces, not board
    max_saturation: int = 90
    #: cell side bounds as fractions of the image's smaller side
    min_cell_fraction: float = 0.025
    max_cell_fraction: float = 0.2
    #: a candidate's area must be at least this fraction of its hull quad's area
    min_fill: float = 0.3
    #: cells needed for a fit
    min_cells: int = 8
    #: grid assignment tolerance (cells) when snapping centres, and corners, to the grid
    snap_tolerance: float = 0.3
    corner_tolerance: float = 0.3
    #: the seed quad must fill this much of itself (an empty cell's light square)
    seed_min_fill: float = 0.8
    #: line refinement: passes, samples per cell side, cross-profile half-length (cells)
    line_passes: int = 2
    samples_per_cell: int = 6
    profile_half: float = 0.075
    #: a line sample counts when its centre is this much darker than both sides (grey levels)
    min_line_contrast: float = 25.0
    #: line points needed to accept the fit
    min_line_points: int = 40


def find_domination_board(
    frame: np.ndarray,
    params: Any = None,
    *,
    corners_px: np.ndarray | None = None,
    intrinsics: Intrinsics | None = None,
) -> BoardFit:
    """Locate the Domination board from its cells. `params` may be a DominationBoardParams (the
    board-finder's own BoardParams is accepted and ignored). Raises BoardNotFoundError."""
    import cv2

    if corners_px is not None:
        return fit_from_corners(corners_px, "domination", intrinsics)
    p = params if isinstance(params, DominationBoardParams) else DominationBoardParams()
    _check_frame(frame)
    quads, fills = _cell_quads(frame, p)
    if len(quads) < p.min_cells:
        raise BoardNotFoundError(
            f"domination board: {len(quads)} light cell squares found, need {p.min_cells} "
            "(is the board in view and lit?)"
        )
    und = [intrinsics.undistort_points(q) if intrinsics is not None else q for q in quads]
    grid = _assign_grid(und, fills, p)
    if len(grid) < p.min_cells:
        raise BoardNotFoundError(
            f"domination board: only {len(grid)} cell squares form a regular grid, need {p.min_cells}"
        )
    H_img_to_grid, assigned = _fit_grid(und, grid, p)
    offset, H_img_to_grid = _place_on_board(frame, assigned, H_img_to_grid, intrinsics, p)
    H = np.array([[1.0, 0, offset[0]], [0, 1.0, offset[1]], [0, 0, 1.0]]) @ H_img_to_grid
    gray = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
    residual, n_line = float("nan"), 0
    for _ in range(p.line_passes):
        H, residual, n_line = _refine_on_lines(gray, H, intrinsics, p)
    if n_line < p.min_line_points:
        raise BoardNotFoundError(
            f"domination board: the grid lines were not confirmed ({n_line} line points seen, "
            f"need {p.min_line_points})"
        )
    H = H / H[2, 2]
    return fit_from_homography(
        H, "domination", "cells", intrinsics=intrinsics, residual_px=residual,
        support=float(len(assigned)) / len(PLAYABLE_GRID),
        extra={"cells_found": len(assigned), "orientation": "ambiguous (quarter turns)",
               "line_points": n_line},
    )


def track_domination_board(
    frame: np.ndarray,
    previous: BoardFit,
    params: Any = None,
    *,
    intrinsics: Intrinsics | None = None,
) -> BoardFit:
    """Re-measure a known Domination board in a new frame (cheap: line refinement only, from the
    previous homography). Raises BoardNotFoundError when its lines are no longer where `previous`
    says (a bump larger than a few pixels, or the board gone): compare the corners of the
    result with `previous.corners_px` to tell a small shift."""
    import cv2

    p = params if isinstance(params, DominationBoardParams) else DominationBoardParams()
    _check_frame(frame)
    gray = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
    H = np.asarray(previous.H_image_to_board, dtype=np.float64)
    residual, n_line = float("nan"), 0
    for _ in range(p.line_passes):
        H, residual, n_line = _refine_on_lines(gray, H, intrinsics, p)
    if n_line < p.min_line_points:
        raise BoardNotFoundError(
            f"domination board: its grid lines are no longer where they were ({n_line} line "
            f"points seen, need {p.min_line_points})"
        )
    return fit_from_homography(
        H / H[2, 2], "domination", previous.method, intrinsics=intrinsics, residual_px=residual,
        support=previous.support, extra={**previous.extra, "line_points": n_line},
    )


def domination_board_moved(
    frame: np.ndarray,
    previous: BoardFit,
    *,
    intrinsics: Intrinsics | None = None,
    tolerance_px: float = 1.5,
    params: DominationBoardParams | None = None,
) -> tuple[bool, BoardFit | None]:
    """Cheap bump check for the referee loop: has the board moved since `previous` was fitted?

    Returns `(moved, board)`: `(False, fit)` when the board's grid lines are where they were
    (every corner within `tolerance_px`; `fit` is the re-measured board, no better or worse to
    use than `previous`); `(True, fit)` when it moved by more than that but is still tracked
    (`fit` is where it is now); `(True, None)` when its lines are gone (a large bump, or the
    board covered or removed): re-find it with `vision.board.find_board`.
    """
    if not tolerance_px > 0:
        raise ValueError(f"tolerance_px must be > 0, got {tolerance_px}")
    try:
        fit = track_domination_board(frame, previous, params, intrinsics=intrinsics)
    except BoardNotFoundError:
        return True, None
    shift_px = float(
        np.linalg.norm(
            np.asarray(fit.corners_px, np.float64) - np.asarray(previous.corners_px, np.float64),
            axis=1,
        ).max()
    )
    return shift_px > tolerance_px, fit


#: the margin round the 8x8 beside the middle four squares of each side (never beside a cut
#: corner, whose tape, paper or spare men may overhang it), as (side square's corner (col, row),
#: outward unit normal, along): board points 0.12-0.24 squares outside the grid's edge (past the
#: line's ink, 0.02-0.035 either side of its centre, and its blur; within the kit's plate margin,
#: 0.45, and a drawn sheet's, 0.3 or more)
_SIDE_SQUARES = (
    [((k, 0), (0.0, -1.0), (1.0, 0.0)) for k in range(2, 6)]
    + [((k, 7), (0.0, 1.0), (1.0, 0.0)) for k in range(2, 6)]
    + [((0, k), (-1.0, 0.0), (0.0, 1.0)) for k in range(2, 6)]
    + [((7, k), (1.0, 0.0), (0.0, 1.0)) for k in range(2, 6)]
)
_MARGIN_OUT = np.array([0.12, 0.18, 0.24])
_MARGIN_ALONG = np.linspace(0.15, 0.85, 6)
#: where a cell shows its own surface beside a man (0.8 across): 0.38 and 0.42 squares off its
#: centre along the diagonals
_QUIET = np.array([[sx * a, sy * a] for a in (0.38, 0.42) for sx in (-1, 1) for sy in (-1, 1)])


def _side_points() -> tuple[np.ndarray, np.ndarray]:
    """Board points: the margin's (16, 18, 2) and the side squares' own (16, 8, 2)."""
    margin, own = [], []
    for (col, row), (nx, ny), (ax, ay) in _SIDE_SQUARES:
        centre = np.array([col + 0.5, row + 0.5])
        edge = centre + 0.5 * np.array([nx, ny])
        margin.append([edge + d * np.array([nx, ny]) + (t - 0.5) * np.array([ax, ay])
                       for d in _MARGIN_OUT for t in _MARGIN_ALONG])
        own.append(centre + _QUIET)
    return np.array(margin), np.array(own)


_MARGIN_PTS, _SIDE_PTS = _side_points()


#: the kit prints its margin and cut corners in the plate's colour, (120, 148, 178) BGR, round
#: cells of (205, 222, 232): the margin 0.40 darker (mean log BGR) and 0.19 off in hue (the log
#: BGR distance left once the level is taken off), 0.55 darker printed without the tint (white
#: cells). A margin of the cells' own sheet is neither: it lies 0.0-0.15 brighter (men's
#: shadows fall on the cells' corners, not beside the grid; 0.02 darker at most, the vignette)
#: and 0.04 off in hue at most (felt's texture) on the drawn 8x8s of `bench_vision_chess.py
#: --drawn`, against the kit's 0.28-0.42 darker and 0.18-0.20 off (seeds 3, 5, 8, 11). Half the
#: kit's print in each is the line between the two.
SHEET_DARKER = 0.2
SHEET_HUE = 0.1


def _log_bgr_medians(frame: np.ndarray, board: BoardFit, pts: np.ndarray,
                     intrinsics: Intrinsics | None) -> np.ndarray:
    """Per group of points (G, n, 2) board units, the median log BGR (G, 3) of the frame there."""
    bgr = sample_points(frame, board_to_image(pts.reshape(-1, 2), board, intrinsics)).astype(np.float64)
    return np.median(np.log(np.maximum(bgr, 1.0)).reshape(pts.shape[0], pts.shape[1], 3), axis=1)


def _level_and_hue(diff: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A log BGR difference (..., 3) as its level (the mean) and its hue (what is left)."""
    level = diff.mean(axis=-1)
    return level, np.linalg.norm(diff - level[..., None], axis=-1)


def margin_contrast(frame: np.ndarray, board: BoardFit, intrinsics: Intrinsics | None = None) -> tuple[float, float]:
    """How the margin just outside the 8x8 differs from the cells beside it (log BGR, medians
    over the 16 middle squares of the four sides, a man's shadow or a leaning stack over a few
    of them a minority): (level, the margin's mean log BGR less the cells'; hue, the distance
    left once the level is taken off). The cells' own colour is taken where a man leaves it
    showing, 0.38-0.42 squares off their centres along the diagonals."""
    return _margin_against_sides(_log_bgr_medians(frame, board, _MARGIN_PTS, intrinsics),
                                 _log_bgr_medians(frame, board, _SIDE_PTS, intrinsics))


def _margin_against_sides(margin: np.ndarray, sides: np.ndarray) -> tuple[float, float]:
    """`margin_contrast` from the margin's and the side squares' medians (16, 3) each."""
    level, hue = _level_and_hue(margin - sides)
    return float(np.median(level)), float(np.median(hue))


#: the 12 cut squares, each sampled on 3x3 points 0.3 squares apart about its centre (the kit's
#: plate there; on a drawn sheet the sheet, or the tape, paper or spare men blocking them)
_CUT_PTS = np.array([[[col + 0.5 + a, row + 0.5 + b] for a in (-0.3, 0.0, 0.3) for b in (-0.3, 0.0, 0.3)]
                     for col, row in sorted(CUT_GRID)])

#: the kit prints its cut corners in its plate's colour, as its margin: their medians differ by
#: 0.00-0.12 in level and 0.00-0.09 in hue (70 kit frames of seeds 3, 8, 11 and 20-23, with and
#: without markers: men's shadows and the vignette). A sheet that ends at the grid's outer lines
#: has the table for a margin, and its cut corners are the sheet, tape, paper or spare men:
#: 0.32-1.59 off in hue on the 30 such frames of the same seeds (drawn 8x8s without a border).
#: Twice the kit's worst is the line.
CORNERS_LEVEL = 0.25
CORNERS_HUE = 0.15


def corners_contrast(frame: np.ndarray, board: BoardFit, intrinsics: Intrinsics | None = None) -> tuple[float, float]:
    """How the 12 cut squares differ from the margin beside the grid's sides (log BGR, the median
    of each square's and of each side square's margin, then over them): (level, hue) as in
    `margin_contrast`."""
    return _corners_against_margin(_log_bgr_medians(frame, board, _CUT_PTS, intrinsics),
                                   _log_bgr_medians(frame, board, _MARGIN_PTS, intrinsics))


def _corners_against_margin(cut: np.ndarray, margin: np.ndarray) -> tuple[float, float]:
    """`corners_contrast` from the cut squares' (12, 3) and the margin's (16, 3) medians."""
    level, hue = _level_and_hue(np.median(cut, axis=0) - np.median(margin, axis=0))
    return float(level), float(hue)


def is_one_sheet(frame: np.ndarray, board: BoardFit, intrinsics: Intrinsics | None = None) -> bool:
    """Whether the 8x8 at `board` is drawn on one sheet (paper, card, felt), not the kit's printed
    board (light cells on a darker plate): an 8x8 drawn as lines passes for the kit's cells and its
    lines, so its finder cannot tell. Its margin beside the grid is the cells' own colour
    (`margin_contrast`); or, on a sheet that ends at the grid's outer lines, the margin is the
    table but the cut corners do not match it as the kit's plate-coloured ones do
    (`corners_contrast`)."""
    margin = _log_bgr_medians(frame, board, _MARGIN_PTS, intrinsics)  # (sampled once for both)
    level, hue = _margin_against_sides(margin, _log_bgr_medians(frame, board, _SIDE_PTS, intrinsics))
    if level > -SHEET_DARKER and hue < SHEET_HUE:
        return True
    c_level, c_hue = _corners_against_margin(_log_bgr_medians(frame, board, _CUT_PTS, intrinsics), margin)
    return abs(c_level) > CORNERS_LEVEL or c_hue > CORNERS_HUE


# --- steps --------------------------------------------------------------------------------------
def _check_frame(frame: np.ndarray) -> None:
    if not isinstance(frame, np.ndarray) or frame.ndim != 3 or frame.shape[2] != 3:
        raise InvalidImageError(
            f"frame must be a BGR image of shape (H, W, 3), got shape {getattr(frame, 'shape', None)}"
        )
    if frame.dtype != np.uint8:
        raise InvalidImageError(f"frame must be uint8 BGR, got dtype {frame.dtype}")


def _apply(H: np.ndarray, pts: np.ndarray) -> np.ndarray:
    q = np.asarray(pts, np.float64).reshape(-1, 2) @ H[:, :2].T + H[:, 2]
    return q[:, :2] / q[:, 2:3]


def _cell_quads(frame: np.ndarray, p: DominationBoardParams) -> tuple[list[np.ndarray], list[float]]:
    """Light four-sided regions: (4, 2) float64 px corners each, clockwise in the image, and the
    fraction of each quad the region fills (about 1 for an empty cell, 0.5 around a piece)."""
    import cv2

    gray = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
    hsv_s = cv2.cvtColor(frame, cv2.COLOR_BGR2HSV)[:, :, 1]
    side = min(gray.shape)
    block = int(p.block_fraction * side) | 1
    light = cv2.adaptiveThreshold(
        gray, 255, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_BINARY, block, p.threshold_offset
    )
    light[hsv_s > p.max_saturation] = 0
    n, labels, stats, _ = cv2.connectedComponentsWithStats(light, connectivity=4)
    lo = (p.min_cell_fraction * side) ** 2
    hi = (p.max_cell_fraction * side) ** 2
    quads: list[np.ndarray] = []
    fills: list[float] = []
    for i in range(1, n):
        x, y, w, h, area = stats[i]
        if area < lo * 0.4 or w * h > hi * 2.5 or w < 4 or h < 4:
            continue
        mask = (labels[y : y + h, x : x + w] == i).astype(np.uint8)
        contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        if not contours:
            continue
        hull = cv2.convexHull(max(contours, key=cv2.contourArea))
        peri = cv2.arcLength(hull, True)
        approx = cv2.approxPolyDP(hull, 0.04 * peri, True)
        if len(approx) != 4 or not cv2.isContourConvex(approx):
            continue
        quad_area = cv2.contourArea(approx)
        if not lo <= quad_area <= hi or area < p.min_fill * quad_area:
            continue
        q = approx.reshape(4, 2).astype(np.float64) + (x, y)
        sides = np.linalg.norm(q - np.roll(q, 1, axis=0), axis=1)
        if sides.max() > 1.8 * sides.min():
            continue
        quads.append(_refine_quad(gray, _clockwise(q)))
        fills.append(area / quad_area)
    return quads, fills


def _refine_quad(gray: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Sub-pixel corners: intersect lines fitted to the region's four sides."""
    import cv2

    pts = q.astype(np.float32).reshape(-1, 1, 2)
    crit = (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, 20, 0.01)
    try:
        ref = cv2.cornerSubPix(gray, pts.copy(), (3, 3), (-1, -1), crit).reshape(4, 2)
    except cv2.error:
        return q
    if np.max(np.linalg.norm(ref - q, axis=1)) > 2.5:
        return q
    return ref.astype(np.float64)


def _clockwise(q: np.ndarray) -> np.ndarray:
    c = q.mean(axis=0)
    ang = np.arctan2(q[:, 1] - c[1], q[:, 0] - c[0])
    q = q[np.argsort(ang)]  # increasing angle = clockwise on screen (y down)
    start = int(np.argmin(q.sum(axis=1)))
    return np.roll(q, -start, axis=0)


def _unit_homography(q: np.ndarray) -> np.ndarray:
    import cv2

    unit = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], np.float32)
    return cv2.getPerspectiveTransform(q.astype(np.float32), unit).astype(np.float64)


def _assign_grid(
    quads: list[np.ndarray], fills: list[float], p: DominationBoardParams
) -> dict[int, tuple[int, int]]:
    """Integer grid (col, row) per quad index, grown from the most central empty-looking quad
    (a region around a piece can be a quad that is not the cell's outline). A quad is kept only
    when all its corners land near the corners of its grid cell."""
    import cv2

    centres = np.array([q.mean(axis=0) for q in quads])
    med = np.median(centres, axis=0)
    dist = np.linalg.norm(centres - med, axis=1)
    full = np.asarray(fills) >= p.seed_min_fill
    seed = int(np.argmin(np.where(full, dist, dist + 1e9)) if full.any() else np.argmin(dist))
    H = _unit_homography(quads[seed])
    grid: dict[int, tuple[int, int]] = {seed: (0, 0)}
    for radius in (1.6, 2.6, 4.0, 6.0, 9.0):
        g = _apply(H, centres) - 0.5
        for i, (gx, gy) in enumerate(g):
            if i in grid:
                continue
            rx, ry = round(gx), round(gy)
            if max(abs(rx), abs(ry)) > 8 or math.hypot(gx, gy) > radius + 0.5:
                continue
            if abs(gx - rx) < p.snap_tolerance and abs(gy - ry) < p.snap_tolerance:
                gq = _apply(H, quads[i])
                corners = np.array([[rx, ry], [rx + 1, ry], [rx + 1, ry + 1], [rx, ry + 1]], float)
                d = np.linalg.norm(gq[:, None, :] - corners[None], axis=2).min(axis=1)
                if d.max() < p.corner_tolerance:
                    grid[i] = (int(rx), int(ry))
        # refit on all assigned centres and corners
        src, dst = [], []
        for i, (cx, cy) in grid.items():
            q = quads[i]
            gq = _apply(H, q)
            order = np.argsort(np.arctan2(gq[:, 1] - (cy + 0.5), gq[:, 0] - (cx + 0.5)))
            corners = np.array([[cx, cy], [cx + 1, cy], [cx + 1, cy + 1], [cx, cy + 1]], float)
            ang_c = np.arctan2(corners[:, 1] - (cy + 0.5), corners[:, 0] - (cx + 0.5))
            src.append(q[order])
            dst.append(corners[np.argsort(ang_c)])
        if len(grid) >= 4:
            Hn, _ = cv2.findHomography(np.concatenate(src), np.concatenate(dst), 0)
            if Hn is not None:
                H = Hn
    # drop duplicates (two regions on one grid position): keep the one closest to it
    seen: dict[tuple[int, int], int] = {}
    g = _apply(H, centres) - 0.5
    for i, pos in list(grid.items()):
        j = seen.get(pos)
        if j is None:
            seen[pos] = i
        else:
            keep = i if np.linalg.norm(g[i] - pos) < np.linalg.norm(g[j] - pos) else j
            seen[pos] = keep
    return {i: pos for pos, i in seen.items()}


def _fit_grid(
    quads: list[np.ndarray], grid: dict[int, tuple[int, int]], p: DominationBoardParams
) -> tuple[np.ndarray, dict[int, tuple[int, int, np.ndarray]]]:
    """Homography image -> grid units on all assigned quads, and each quad's corner order."""
    import cv2

    # shift the grid so its smallest col/row is 0
    cols = min(c for c, _ in grid.values())
    rows = min(r for _, r in grid.values())
    src, dst, assigned = [], [], {}
    for i, (c, r) in grid.items():
        c, r = c - cols, r - rows
        q = quads[i]
        corners = np.array([[c, r], [c + 1, r], [c + 1, r + 1], [c, r + 1]], float)
        assigned[i] = (c + 0.5, r + 0.5, np.arange(4))
        src.append(q)
        dst.append(corners)
    H0, _ = cv2.findHomography(np.concatenate([q.mean(axis=0, keepdims=True) for q in src]),
                               np.concatenate([d.mean(axis=0, keepdims=True) for d in dst]), 0)
    if H0 is None:
        raise BoardNotFoundError("domination board: the cell grid gives no homography")
    # match corner order through the centre-based homography
    src_all, dst_all = [], []
    for (i, (gc, gr, _)), q, d in zip(assigned.items(), src, dst, strict=True):
        gq = _apply(H0, q)
        dd = np.linalg.norm(gq[:, None, :] - d[None, :, :], axis=2)
        order = np.argmin(dd, axis=0)  # for each grid corner, the image corner
        if len(set(order.tolist())) != 4:
            continue
        assigned[i] = (gc, gr, order)
        src_all.append(q[order])
        dst_all.append(d)
    H, _ = cv2.findHomography(np.concatenate(src_all), np.concatenate(dst_all), 0)
    if H is None:
        raise BoardNotFoundError("domination board: the cell grid gives no homography")
    return H, assigned


def _place_on_board(
    frame: np.ndarray,
    assigned: dict[int, tuple[int, int, np.ndarray]],
    H_img_to_grid: np.ndarray,
    intrinsics: Intrinsics | None,
    p: DominationBoardParams,
) -> tuple[tuple[int, int], np.ndarray]:
    """Integer offset (cols, rows) of the found grid on the board: (nearly) all found cells on
    playable squares, and the most grid-line pieces of the board (its outline included) seen
    where that offset puts them. Cells that fall outside are dropped from `assigned`. Also
    returns the grid homography sharpened on the lines around the cells found."""
    import cv2

    gray = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
    cells = {i: (round(gc - 0.5), round(gr - 0.5)) for i, (gc, gr, _) in assigned.items()}
    # first sharpen the grid homography on the lines around the cells found (offset-free)
    own = _line_segments(set(cells.values()))
    for _ in range(2):
        H_img_to_grid = _refine_on_lines(gray, H_img_to_grid, intrinsics, p, own)[0]
    best: tuple[float, tuple[int, int]] | None = None
    for ox in range(-3, 9):
        for oy in range(-3, 9):
            inside = sum((c + ox, r + oy) in PLAYABLE_GRID for c, r in cells.values())
            if inside < max(p.min_cells, 0.85 * len(cells)):
                continue
            shift = np.array([[1.0, 0, ox], [0, 1.0, oy], [0, 0, 1.0]])
            _, _, _, ok = _line_samples(gray, shift @ H_img_to_grid, intrinsics, p)
            score = float(ok.mean()) + 0.002 * inside
            if best is None or score > best[0]:
                best = (score, (ox, oy))
    if best is None:
        raise BoardNotFoundError(
            "domination board: the cell squares found do not fit the 52-cell board shape"
        )
    ox, oy = best[1]
    for i, (c, r) in cells.items():
        if (c + ox, r + oy) not in PLAYABLE_GRID:
            del assigned[i]
    return (ox, oy), H_img_to_grid


def _line_segments(cells: frozenset[tuple[int, int]] | set[tuple[int, int]]) -> list[tuple[int, float, float, float]]:
    """Grid line pieces bordering `cells` (col, row): (axis, c, lo, hi), axis 0 for x = c."""
    segs = set()
    for col, row in cells:
        segs.add((0, float(col), float(row), float(row + 1)))
        segs.add((0, float(col + 1), float(row), float(row + 1)))
        segs.add((1, float(row), float(col), float(col + 1)))
        segs.add((1, float(row + 1), float(col), float(col + 1)))
    return sorted(segs)


_SEGMENTS = _line_segments(PLAYABLE_GRID)


def _refine_on_lines(
    gray: np.ndarray, H_img_to_board: np.ndarray, intrinsics: Intrinsics | None,
    p: DominationBoardParams, segments: list[tuple[int, float, float, float]] = _SEGMENTS,
) -> tuple[np.ndarray, float, int]:
    """Re-measure the dark grid lines across short profiles and refit the homography so that
    every line point lies on its line (x = c or y = c), robustly. Returns (H, rms px, points)."""
    axis_a, c_a, img, ok = _line_samples(gray, H_img_to_board, intrinsics, p, segments)
    axis_a, c_a, img = axis_a[ok], c_a[ok], img[ok]
    if len(img) < 16 or len(set(axis_a.tolist())) < 2:
        return H_img_to_board, float("nan"), len(img)
    keep = np.ones(len(img), bool)
    H = H_img_to_board
    for _ in range(3):
        H = _dlt_lines(img[keep], axis_a[keep], c_a[keep])
        b = _apply(H, img)
        d_board = np.where(axis_a == 0, b[:, 0] - c_a, b[:, 1] - c_a)
        scale = _px_per_board(H)
        d_px = np.abs(d_board) * scale
        keep = d_px < max(1.5, 3.0 * float(np.median(d_px[keep])))
    rms = float(np.sqrt(np.mean(d_px[keep] ** 2)))
    return H, rms, int(keep.sum())


def _line_samples(
    gray: np.ndarray, H_img_to_board: np.ndarray, intrinsics: Intrinsics | None,
    p: DominationBoardParams, segments: list[tuple[int, float, float, float]] = _SEGMENTS,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Cross profiles over every grid line piece: (axis, c, measured undistorted px, line seen)."""
    import cv2

    H_b2i = np.linalg.inv(H_img_to_board)
    n = p.samples_per_cell
    tt = (np.arange(n) + 0.5) / n
    prof = np.linspace(-p.profile_half, p.profile_half, 17)
    axis_l, c_l, base = [], [], []
    for axis, c, lo, hi in segments:
        along = lo + (hi - lo) * tt
        for a in along:
            axis_l.append(axis)
            c_l.append(c)
            base.append((c, a) if axis == 0 else (a, c))
    axis_a = np.asarray(axis_l)
    c_a = np.asarray(c_l)
    base_a = np.asarray(base, np.float64)  # (N, 2) board points on the lines
    off = np.zeros((len(base_a), prof.size, 2))
    off[axis_a == 0, :, 0] = prof
    off[axis_a == 1, :, 1] = prof
    pts_board = base_a[:, None, :] + off
    px = _apply(H_b2i, pts_board.reshape(-1, 2))
    if intrinsics is not None:
        px = intrinsics.distort_points(px)
    px = px.astype(np.float32).reshape(len(base_a), prof.size, 2)
    vals = cv2.remap(gray, px[..., 0], px[..., 1], cv2.INTER_LINEAR,
                     borderMode=cv2.BORDER_CONSTANT, borderValue=0).astype(np.float64)
    vals = (vals[:, :-2] + 2 * vals[:, 1:-1] + vals[:, 2:]) / 4  # (N, P-2), centre index i+1
    i_min = np.clip(np.argmin(vals, axis=1), 1, vals.shape[1] - 2)
    rows = np.arange(len(vals))
    v_m, v_0, v_p = vals[rows, i_min - 1], vals[rows, i_min], vals[rows, i_min + 1]
    den = v_m - 2 * v_0 + v_p
    frac = np.where(den > 1e-6, 0.5 * (v_m - v_p) / np.where(den > 1e-6, den, 1.0), 0.0)
    frac = np.clip(frac, -0.5, 0.5)
    left = vals[:, :3].mean(axis=1)
    right = vals[:, -3:].mean(axis=1)
    ok = (np.minimum(left, right) - v_0 > p.min_line_contrast) & (np.abs(left - right) < 0.5 * np.minimum(left, right))
    pos = i_min + 1 + frac  # index into prof
    step = prof[1] - prof[0]
    centre_board = base_a.copy()
    shift = prof[0] + pos * step
    centre_board[axis_a == 0, 0] += shift[axis_a == 0]
    centre_board[axis_a == 1, 1] += shift[axis_a == 1]
    # the measured image point of each line sample (undistorted pixels)
    img = _apply(H_b2i, centre_board)
    return axis_a, c_a, img, ok


def _px_per_board(H_img_to_board: np.ndarray) -> float:
    c = _apply(np.linalg.inv(H_img_to_board), np.array([[4.0, 4.0], [5.0, 4.0]]))
    return float(np.linalg.norm(c[1] - c[0]))


def _dlt_lines(img: np.ndarray, axis: np.ndarray, c: np.ndarray) -> np.ndarray:
    """H_image_to_board with every image point on its board line (x = c or y = c), by SVD."""
    mean = img.mean(axis=0)
    s = np.sqrt(2) / np.mean(np.linalg.norm(img - mean, axis=1))
    T = np.array([[s, 0, -s * mean[0]], [0, s, -s * mean[1]], [0, 0, 1]])
    q = np.c_[(img - mean) * s, np.ones(len(img))]
    a = np.zeros((len(q), 9))
    x_rows = axis == 0
    # x = c: h1.q - c h3.q = 0 ; y = c: h2.q - c h3.q = 0
    a[x_rows, 0:3] = q[x_rows]
    a[~x_rows, 3:6] = q[~x_rows]
    a[:, 6:9] = -c[:, None] * q
    _, _, vt = np.linalg.svd(a, full_matrices=False)
    Hn = vt[-1].reshape(3, 3)
    H = Hn @ T
    return H / H[2, 2]


def _main(argv: list[str] | None = None) -> int:  # pragma: no cover - manual debugging
    import argparse
    import json

    import cv2

    parser = argparse.ArgumentParser(description="find a Domination board from its cells")
    parser.add_argument("image")
    args = parser.parse_args(argv)
    frame = cv2.imread(args.image, cv2.IMREAD_COLOR)
    if frame is None:
        raise SystemExit(f"cannot read image {args.image}")
    print(json.dumps({"image": args.image, **find_domination_board(frame).to_dict()}))
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(_main())
