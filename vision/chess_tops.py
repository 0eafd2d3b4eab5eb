"""Tops of draughts men, chips and counters on a chessboard's 52 cells (issue 19).

`read_chess_tops(frame, board, colours, *, intrinsics=None, thickness=0.12) -> TopsReading`;
`learn_chess_colours(frame, board, tops, *, intrinsics=None) -> {letter: BGR}` learns the colour
model from a position whose tops are known (the start position, or `referee calibrate colours`).

The squares are two colours, the pieces any 2-4 (black on a dark square, cream on a light one),
so neither "saturated means a piece" nor one board colour works. Per cell:

- the square's own colour where no piece reaches: four samples 0.42 squares off the centre along
  the diagonals (a man is 0.8 across: its edge stays 0.14 away); the local light level (lamp
  gradient, vignette, hot spot: smooth and grey) is the median brightness of the samples of the
  cell and its 8 neighbours against their squares' colours (`_light_field`: a tall neighbour
  leaning over a cell's own corners is a minority there);
- the outline (`_closure`): a top 1..5 pieces high is a closed ring at a man's radius around
  where the camera from the board (`vision.geometry.camera_geometry`) puts it; the radial
  grey-level steps on that ring, less the bare board's own square edges (blurred as much as the
  frame shows them), in units of the square's own noise and grain; the best height is the
  top's; and the side band's: the weakest step of the three eighths facing the camera's nadir,
  where a stack's side shows between its top's rim and the board (white chips on white squares
  clipped by the sensor show nothing else);
- the top's colour: the median of a disc half a man's radius across at that height (a crown,
  rings or a printed ring are a minority of it); the centre's colour at the board;
- colours are compared as logarithms of BGR divided by the local light level (a shadow or a
  brighter corner scales all three channels alike), with the white that glossy tops show near
  the lamp's reflection taken off (`_glare_field`; a channel clipped at 255 bounds no glare and
  teaches no colour, and a top clipped in all three shows its neighbours no glare). Where the
  nearest piece colour is far from
  the square's, colour tells a piece from the bare square; where it is not (black on a dark
  square), the outline does; a clearly closed outline is a piece, none is no piece
  (`ChessTopsParams`); a centre surely of its square's colour and far from every piece colour
  is no piece whatever outline closes, one surely of a piece colour is a piece without one (and
  so is a clipped centre far from its square's own colour, which a matte square cannot show). The
  confidence is the margin between the best two explanations.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from vision.camera import Intrinsics
from vision.domination import CELLS, TopsReading, cell_centre_board
from vision.errors import ColourModelError, InvalidImageError
from vision.geometry import (
    BoardFit,
    board_intrinsics,
    board_to_image_lookup,
    camera_geometry,
    sample_points,
)

_CENTRES = np.array([cell_centre_board(c) for c in CELLS])
_DARK = np.array([(int(x) + int(y)) % 2 == 1 for x, y in _CENTRES])  # col + row odd


@dataclass(frozen=True)
class ChessTopsParams:
    """Tuning (shipped defaults)."""

    #: where the square shows beside a piece: offset along the diagonals, squares
    corner_offset: float = 0.42
    #: radius of the sampled top disc, squares: half a man's radius (a man is 0.74-0.84 across),
    #: so that with its jitter (up to 0.08) and the height guess it stays on the top; its median
    #: is the top's colour where rings, a crown or a printed ring cover a minority of its area
    disc_radius: float = 0.2
    #: radii (squares from the centre) searched for a man's rim: its radius with its jitter
    outline_radii: tuple[float, float] = (0.27, 0.5)
    #: a ring point this near (squares) a cut square or the board's outer edge says nothing of a
    #: rim: the marks' edges are not the square's, and the fit there is extrapolated (its corner
    #: error along the outer edge is a few px, some 0.05 of a square; 0.1 lost as many tops as it
    #: saved bare squares on `bench_vision_chess.py` seed 3)
    edge_margin: float = 0.05
    #: the squares' edges lie within this many times the fit's residual (px; at least half a
    #: pixel) of where the fit puts them: ring points that near an edge say nothing of a rim (on
    #: fits 2.3-2.5 px off, the edges of bare black printed squares beside white ones closed
    #: rings at 4-10 noise units, 0.2 grey levels a pixel there)
    fit_slack: float = 2.0
    #: the tallest stack whose top is looked for
    max_height: int = 5
    #: the outline's closure (`_closure`: multiples of the square's own noise and grain) above
    #: which a piece is there whatever its colour, below which none is, and above which one is
    #: where colour cannot tell; on the simulated table (`bench_vision_chess.py`, 140 frames) a
    #: bare square's median is 0.63 (its noise), 1 % of them reach 1.8, 0.1 % 6; 1 % of tops
    #: stay under 3.2, their median is 21. Where colour cannot tell (seeds 3 and 11, 179 frames,
    #: with `fit_slack`): no bare square of 1011 reached 1.9 (99 % stay under 1.1), while 3 of 991
    #: tops (counters of a square's colour: a thin rim) lay between 2.5 and 3, missed at 3
    outline_sure: float = 5.0
    outline_none: float = 2.0
    outline_alone: float = 2.5
    #: where colour cannot tell, how far the centre leans towards a piece colour away from its
    #: square's own (`_decide`'s `bare` below 0: 0 half-way, -1 at the piece colour) lowers the
    #: closure needed, one noise unit per unit of lean, to no less than `outline_lean`: a
    #: counter of its square's colour shows a thin rim (1.8-2.5 noise units on seeds 3 and 11)
    #: and its face leans 0.3-0.9 towards the piece colour, while a bare square that closes that
    #: far is the 1 % of them (1.8) and leans as far only one time in 8 (seeds 3 and 11: of 1202
    #: such bare squares none closed over 1.8 with its centre leaning; the two at 1.6 leaned
    #: 0.8-1.2, where 1.8 stops them)
    outline_lean: float = 1.8
    #: a ring closed short of `outline_sure` is a top only where the three eighths facing the
    #: nadir (`_closure`'s side band) step at least this share of its closure: a top's side adds
    #: to its rim there, so they are not its weakest (291 tops closing at 1.5-5 on seeds 3, 5, 7
    #: and 11: at least 0.6 of the closure, median 1.2), while neighbours' leaning sides and
    #: shadows that close a bare square's ring on six eighths rarely cross those three (two bare
    #: black squares closing at 2.8 and 3.2, seeds 5 and 7: 0.43 and 0.2 of it)
    band_share: float = 0.5
    #: colour tells a piece from the bare square when the nearest piece colour lies this far
    #: (log BGR) from the square's: a bare square's centre lies within 0.04 (median) and 0.15
    #: (95 %) of its colour after the light-level correction
    colour_tells: float = 0.25
    #: colour says "bare square" surely when the centre is nearer its square's colour than the
    #: nearest piece colour by this share of the two colours' distance (and then, near its
    #: square's and far from every piece colour, no outline makes a piece); below it, a closed
    #: outline (`outline_alone`) is a piece all the same (a black top with its rim and a glint);
    #: "a piece" as surely (nearer the piece colour by this share) needs no outline (a chip's
    #: striped rim cancels its ring's mean step)
    bare_sure: float = 0.5
    #: a centre leaning surely to a piece colour (`bare_sure`) is a piece without an outline only
    #: where it lies this many times its square's grain (`_measure`: the median distance, log BGR,
    #: of the square's 12 samples where only it shows from its colour) from the square's colour,
    #: or as far as a learnt colour is off (2.5 `colour_tells`): a grainy print's bare black
    #: squares leant surely to black men learnt 0.32 from them with no outline at 1.2-2.4 times
    #: their grain (0.17-0.28; the median square's 0.06), the only bare squares of seeds 3, 5, 7
    #: and 11 that leant so; of 4478 tops leaning surely 1 % lie under 2 grains, all but one of
    #: those with an outline. Samples straddling two squares (given corners, no lens: a real
    #: tray's 0.6-0.9) are no grain of a square; its men's centres lie 1.1-2.4 from it
    grain_sure: float = 3.0


def _log(bgr: np.ndarray) -> np.ndarray:
    return np.log(np.maximum(np.asarray(bgr, np.float64), 1.0))


def _disc(radius: float, n: int = 37) -> np.ndarray:
    """`n` points spread evenly over the area of a disc (a sunflower pattern): their median is
    the colour covering most of it."""
    k = np.arange(n) + 0.5
    r = radius * np.sqrt(k / n)
    a = k * (np.pi * (3.0 - np.sqrt(5.0)))
    return np.stack([r * np.cos(a), r * np.sin(a)], 1)


def _edge_blur(grey: np.ndarray, board: BoardFit, cam: Intrinsics | None, origin: np.ndarray) -> float:
    """How far (board units, one sigma) the squares' edges are smeared in `grey`: the second
    moment of the mean grey-level step across the edges between neighbouring playable squares,
    measured near the squares' corners (where no man reaches: 0.55 squares from its centre);
    `grey` is the frame's part from `origin` (px) on."""
    index = {(float(x), float(y)) for x, y in _CENTRES}
    t = np.linspace(-0.15, 0.15, 31)
    lines = []
    for x, y in _CENTRES:
        if (x + 1.0, y) in index:
            lines += [np.stack([x + 0.5 + t, np.full_like(t, y + v)], 1) for v in (-0.42, 0.42)]
        if (x, y + 1.0) in index:
            lines += [np.stack([np.full_like(t, x + v), y + 0.5 + t], 1) for v in (-0.42, 0.42)]
    pts = np.concatenate(lines)
    prof = sample_points(grey, board_to_image_lookup(pts, board, cam) - origin).reshape(len(lines), len(t))
    prof *= np.sign(prof[:, -1] - prof[:, 0])[:, None]  # each edge rising
    step = np.median(np.diff(prof, axis=1), axis=0)  # the typical edge (a man's side: a minority)
    step = np.maximum(step - np.median(np.r_[step[:5], step[-5:]]), 0.0)
    mid = 0.5 * (t[1:] + t[:-1])
    if step.sum() <= 0:
        return 0.02
    centre = float((step * mid).sum() / step.sum())
    return float(np.sqrt((step * (mid - centre) ** 2).sum() / step.sum()))


def _bare_step(pts_board: np.ndarray, dirs: np.ndarray, grid: np.ndarray, sigma: float,
               slack: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """The bare board's grey-level step (per board unit) along `dirs` (A, 2) at points
    (..., R, A, 2) on the board: each square at its own grey level (`grid` (10, 10): squares
    -1..8 by (col, row), the cut squares' marks and what lies beyond the 8x8 included), edges
    blurred by `sigma`; and the largest step magnitude there were the edges `slack` (board
    units) nearer (where the fit may have put them)."""
    q = pts_board
    out = np.zeros(q.shape[:-1])
    near = np.zeros(q.shape[:-1])
    norm = 1.0 / (max(sigma, 1e-3) * math.sqrt(2 * math.pi))
    for axis in (0, 1):
        line = np.clip(np.round(q[..., axis]), 0, 8)  # the nearest edge across this axis
        d = q[..., axis] - line
        other = np.clip(np.floor(q[..., 1 - axis]), -1, 8).astype(int) + 1
        lo = line.astype(int)  # squares line - 1 and line, as grid indices lo and lo + 1
        a, b = (lo, other) if axis == 0 else (other, lo)
        a2, b2 = (lo + 1, other) if axis == 0 else (other, lo + 1)
        jump = grid[np.clip(a2, 0, 9), np.clip(b2, 0, 9)] - grid[np.clip(a, 0, 9), np.clip(b, 0, 9)]
        out += jump * norm * np.exp(-0.5 * (d / max(sigma, 1e-3)) ** 2) * dirs[:, axis]
        d_near = np.maximum(np.abs(d) - slack, 0.0)
        near += np.abs(jump * dirs[:, axis]) * norm * np.exp(-0.5 * (d_near / max(sigma, 1e-3)) ** 2)
    return out, near


def is_chessboard(board: BoardFit) -> bool:
    """Whether the fit is a chessboard's 8x8: found by `vision.chessboard`, or given corners
    where the squares alternate (`vision.board.domination_at_corners` marks them
    extra["squares"] == "alternating")."""
    return board.game == "domination" and (board.method == "chessboard"
                                           or board.extra.get("squares") == "alternating")


def is_drawn_grid(board: BoardFit) -> bool:
    """Whether the fit says the board is an 8x8 drawn as lines on one sheet (`vision.board.find_board`
    marks a Domination fit by the kit's cells or by drawn lines extra["drawn"] where the margin
    beside the grid is the cells' own sheet, `vision.domination_board.is_one_sheet`), not a
    chessboard of alternating squares nor the kit's printed board."""
    return board.game == "domination" and board.extra.get("drawn") is True


#: across the drawn lines between neighbouring playable squares, 0.42 squares along them from the
#: squares' centres: (profiles, 41, 2) board points 0.01 squares apart (under a pixel at up to
#: 100 px a square) from 0.2 on one side of the line to 0.2 on the other
_DRAWN_PROFILE_T = np.linspace(-0.2, 0.2, 41)
_DRAWN_PROFILES = np.array(
    [np.stack([x + 0.5 + _DRAWN_PROFILE_T, np.full_like(_DRAWN_PROFILE_T, y + v)], 1)
     for x, y in _CENTRES if any((_CENTRES == (x + 1.0, y)).all(axis=1)) for v in (-0.42, 0.42)]
    + [np.stack([np.full_like(_DRAWN_PROFILE_T, x + v), y + 0.5 + _DRAWN_PROFILE_T], 1)
       for x, y in _CENTRES if any((_CENTRES == (x, y + 1.0)).all(axis=1)) for v in (-0.42, 0.42)])


def _drawn_lines_step(grey: np.ndarray, board: BoardFit, cam: Intrinsics | None, origin: np.ndarray,
                      pts_board: np.ndarray, dirs: np.ndarray, slack: np.ndarray | float) -> np.ndarray:
    """On a drawn 8x8 (`is_drawn_grid`), the largest grey-level step (per board unit) the bare
    sheet's drawn lines make along `dirs` (A, 2) at points (..., R, A, 2) on the board, were the
    lines `slack` (board units) nearer: the lines are not edges between squares of two colours
    (`_bare_step` sees none on one sheet) but a dip (or a ridge: chalk on felt) as wide as they
    are drawn and blurred, just beyond a man's rim. Their profile is measured in `grey` (the
    frame's part from `origin` px on) across the lines between neighbouring playable squares,
    0.42 squares along them from the squares' centres (where no man reaches), the median of the
    profiles (a man's side crossing one is a minority), each taken from its own ends' level."""
    t = _DRAWN_PROFILE_T
    pts = _DRAWN_PROFILES.reshape(-1, 2)
    prof = sample_points(grey, board_to_image_lookup(pts, board, cam) - origin).reshape(len(_DRAWN_PROFILES), len(t))
    prof = prof - np.median(np.c_[prof[:, :5], prof[:, -5:]], axis=1)[:, None]
    grad = np.abs(np.gradient(np.median(prof, axis=0), t))  # grey levels per board unit
    # the step at a distance a from the line: the largest at a or further out on either side, so
    # that the lines' band is one piece; beyond the profile's ends the sheet is flat
    a = t[t >= 0]
    side = np.maximum(grad[t >= 0], grad[t <= 0][::-1])
    envelope = np.maximum.accumulate(side[::-1])[::-1]
    out = np.zeros(pts_board.shape[:-1])
    for axis in (0, 1):
        d = np.abs(pts_board[..., axis] - np.round(pts_board[..., axis]))
        d = np.maximum(d - slack, 0.0)
        out = np.maximum(out, np.interp(d, a, envelope, right=0.0) * np.abs(dirs[:, axis]))
    return out


def _quiet_offsets(board: BoardFit) -> np.ndarray:
    """Offsets (squares, along each axis from a cell's centre, taken along the diagonals) where
    only the square shows beside a piece: 0.38-0.46; on a drawn 8x8 (`is_drawn_grid`) not 0.46,
    0.04 from two drawn lines, in their band (ink up to 0.035 squares either side of its centre,
    then its blur): their step there counted as the sheet's grain made it 1.6 times what it is
    (bare cells' closure median 0.37 against 0.59, seed 3's drawn frames) and lowered every top's
    closure as much."""
    if is_drawn_grid(board):
        return np.array([-0.42, -0.38, 0.38, 0.42])
    return np.array([-0.46, -0.42, -0.38, 0.38, 0.42, 0.46])


_PLAYABLE = np.zeros((10, 10), bool)  # squares -1..8 by (col, row) as indices 0..9
for _x, _y in _CENTRES:
    _PLAYABLE[int(_x) + 1, int(_y) + 1] = True


def _off_playable(pts_board: np.ndarray, margin: float) -> np.ndarray:
    """(...,) whether points (..., 2) on the board lie within `margin` of a square that is not
    one of the 52 (a cut square, the border, the table)."""
    out = np.zeros(pts_board.shape[:-1], bool)
    for dx, dy in ((0.0, 0.0), (margin, 0.0), (-margin, 0.0), (0.0, margin), (0.0, -margin)):
        ij = np.clip(np.floor(pts_board + [dx, dy]).astype(int) + 1, 0, 9)
        out |= ~_PLAYABLE[ij[..., 0], ij[..., 1]]
    return out


def _closure(frame: np.ndarray, board: BoardFit, cam: Intrinsics | None, geo: Any, thickness: float,
             square_grey: np.ndarray, p: ChessTopsParams) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per cell, how closed an outline around its centre is, in units of its square's own grain
    and noise: for a top 1..5 pieces high, on each eighth of a ring between `outline_radii`
    (a man's rim, with its jitter on the square) the strongest mean radial grey-level step, then
    the value 3/4 of the eighths reach (a piece's top is a closed ring; a neighbour's leaning
    side, a shadow or wood grain crosses only part of it); the best height wins."""
    import cv2

    # only the board's part of the frame (its 8x8 and a square around it: tall stacks lean out)
    box = board_to_image_lookup(np.array([[-1.0, -1.0], [9.0, -1.0], [9.0, 9.0], [-1.0, 9.0]]), board, cam)
    h, w = frame.shape[:2]
    x0, y0 = (int(np.clip(np.floor(box[:, k].min()), 0, lim - 1)) for k, lim in ((0, w), (1, h)))
    x1, y1 = (int(np.clip(np.ceil(box[:, k].max()) + 1, 1, lim)) for k, lim in ((0, w), (1, h)))
    origin = np.array([x0, y0], np.float64)
    grey = cv2.cvtColor(frame[y0:y1, x0:x1], cv2.COLOR_BGR2GRAY).astype(np.float32)
    grey = cv2.GaussianBlur(grey, (0, 0), 1.0)
    gx = cv2.Sobel(grey, cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(grey, cv2.CV_32F, 0, 1, ksize=3)
    n_ang, n_sectors = 48, 8
    ang = np.arange(n_ang) * (2 * np.pi / n_ang)
    lo, hi = p.outline_radii
    radii = np.linspace(lo, hi, 10)  # 0.026 squares apart: 2 px at 80 px a square, a rim is ~3
    ring = (radii[:, None, None] * np.stack([np.cos(ang), np.sin(ang)], 1)[None]).reshape(-1, 2)
    heights = np.arange(1, p.max_height + 1)
    pts = []
    mids = []
    for k in heights:
        b = (_CENTRES[:, None, :] + ring[None]).reshape(-1, 2)
        pts.append(b + geo.thickness_shift(b, k * thickness))
        mids.append(_CENTRES + geo.thickness_shift(_CENTRES, k * thickness))
    # the squares' own edges are steps too: each ring point's step is taken against the bare
    # board's there (its squares' grey levels, stepping across their edges as blurred as the
    # frame shows them), so that only what lies on the board is left
    unit = board_to_image_lookup(np.concatenate([_CENTRES, _CENTRES + [1.0, 0.0]]), board, cam)
    square_px = np.linalg.norm(unit[len(_CENTRES):] - unit[: len(_CENTRES)], axis=1)
    ring_b = np.stack(pts).reshape(len(heights), len(_CENTRES), len(radii), n_ang, 2)
    dirs = np.stack([np.cos(ang), np.sin(ang)], 1)
    # the grey level of every square of the 10x10 around the board where a man does not reach
    # (the playable ones measured already; the cut squares' tape, paper or spare men, and the
    # border or table beyond: their four samples 0.42 squares off the centre along the diagonals)
    ij = np.array([(i, j) for i in range(-1, 9) for j in range(-1, 9)], np.float64)
    diag = np.array([[-0.42, -0.42], [0.42, -0.42], [0.42, 0.42], [-0.42, 0.42]])
    sq_px = board_to_image_lookup((ij[:, None, :] + 0.5 + diag[None]).reshape(-1, 2), board, cam) - origin
    grid = np.median(sample_points(grey, sq_px).reshape(len(ij), 4), axis=1).reshape(10, 10)
    for (x, y), g in zip(_CENTRES, square_grey):
        grid[int(x) + 1, int(y) + 1] = g
    # where the fit may have put the squares' edges (`fit_slack`)
    slack = p.fit_slack * max(float(board.residual_px), 0.5) / square_px[None, :, None, None]
    bare, near = _bare_step(ring_b, dirs, grid, _edge_blur(grey, board, cam, origin), slack)
    if is_drawn_grid(board):  # a drawn 8x8's lines step where no square edge does
        near = np.maximum(near, _drawn_lines_step(grey, board, cam, origin, ring_b, dirs, slack))
    bare = bare / square_px[None, :, None, None]
    near = near / square_px[None, :, None, None]
    px = board_to_image_lookup(np.concatenate(pts + mids), board, cam)
    n, m = len(_CENTRES), len(ring)
    ring_px = px[: len(heights) * n * m].reshape(len(heights), n, m, 2)
    mid_px = px[len(heights) * n * m :].reshape(len(heights), n, 1, 2)
    radial = ring_px - mid_px
    radial /= np.maximum(np.linalg.norm(radial, axis=3, keepdims=True), 1e-6)
    vx = sample_points(gx, ring_px.reshape(-1, 2) - origin).reshape(radial.shape[:3])
    vy = sample_points(gy, ring_px.reshape(-1, 2) - origin).reshape(radial.shape[:3])
    # noise and grain of each square colour in this frame: the grey-level gradient where only
    # the square shows (beside a piece, 0.38-0.46 squares off the centre along the diagonals)
    d = _quiet_offsets(board)
    offs = np.array([[a, b] for a in d for b in d if abs(abs(a) - abs(b)) < 1e-9])
    quiet_px = board_to_image_lookup((_CENTRES[:, None, :] + offs[None]).reshape(-1, 2), board, cam) - origin
    mag = np.hypot(sample_points(gx, quiet_px), sample_points(gy, quiet_px)).reshape(n, -1) / 8.0
    noise = np.empty(n)
    for dark in (False, True):
        noise[_DARK == dark] = max(float(np.median(mag[_DARK == dark])), 0.05)
    step = (vx * radial[..., 0] + vy * radial[..., 1]) / 8.0  # Sobel 3x3: 8 x grey per px
    # where the bare board's edge steps more than the noise, the model of it (blur, the fit's
    # error) is not good enough to take it off: those points say nothing
    # (nor where it would were the edge as far off as the fit may have put it)
    step = np.where(near > noise[None, :, None, None], np.nan, step.reshape(bare.shape) - bare)
    # nor do points beside a cut square or the board's outer edge: the tape's, paper's or spare
    # men's edges are not the square's, and there the fit is extrapolated from the inner corners
    step = np.where(_off_playable(ring_b, p.edge_margin), np.nan, step)
    # the signed step averaged over each eighth of the ring at each radius (a rim is coherent
    # along it, noise is not), the strongest radius per eighth
    step = step.reshape(len(heights), n, len(radii), n_sectors, n_ang // n_sectors)
    with warnings.catch_warnings():  # an eighth with nothing usable at a radius: NaN, left out
        warnings.simplefilter("ignore", RuntimeWarning)
        step = np.nanmax(np.abs(np.nanmean(step, axis=4)), axis=2)
    # the value 3/4 of the usable eighths reach; at least half of them must be usable
    have = np.isfinite(step).sum(axis=2)
    srt = np.sort(np.where(np.isfinite(step), step, np.inf), axis=2)
    q = np.take_along_axis(srt, (have // 4)[..., None], axis=2)[..., 0]
    q = np.where(have >= n_sectors // 2, q, 0.0)
    closed = q.max(axis=0)
    height = np.argmax(q, axis=0) + 1
    # the side band: a stack's top is shifted away from the camera's nadir, its side shows
    # between the top's rim and the board on the nadir's side, concentric with the top, so the
    # three eighths facing the nadir all step (a neighbour's leaning side or shadow crosses the
    # ring on one side of its own, rarely those three); the weakest of the three, at the best
    # height (an eighth with nothing usable left out, two needed)
    toward = -np.stack([geo.thickness_shift(_CENTRES, k * thickness) for k in heights])  # (H, n, 2)
    facing = np.floor(np.mod(np.arctan2(toward[..., 1], toward[..., 0]), 2 * np.pi) / (2 * np.pi / n_sectors))
    facing = np.mod(facing.astype(int)[..., None] + np.array([-1, 0, 1]), n_sectors)  # (H, n, 3)
    arc = np.take_along_axis(step, facing, axis=2)
    arc_have = np.isfinite(arc).sum(axis=2)
    band = np.where(arc_have >= 2, np.nanmin(np.where(np.isfinite(arc), arc, np.inf), axis=2), 0.0)
    out = closed / noise
    return out, height, band.max(axis=0) / noise


_NEAR = np.linalg.norm(_CENTRES[:, None, :] - _CENTRES[None, :, :], axis=2) < 1.5  # a cell and its 8


def _light_field(corners: np.ndarray) -> tuple[np.ndarray, np.ndarray, dict[bool, np.ndarray]]:
    """From the four samples beside each cell (n, 4, 3) BGR: the light level per cell (n, 3),
    the cell's own square colour at the board (n, 3) and the median light and dark square.

    The lamp, its hot spot and the vignette are smooth and grey: the level is one number per
    cell, the median brightness, against its square colour's, of the 36 samples of the cell and
    its 8 neighbours (a sample covered by a white man leaning over a black square, or shaded by
    a stack, is a minority there; the cell's own four often are not). The square's own colour
    (a wooden square has its own tone) is the median of its samples that agree with that level
    within the spread the frame's samples show (3 robust sigmas); with fewer than two, its
    colour's median at that level."""
    n = len(corners)
    square = np.median(corners, axis=1)
    refs = {}
    ref = np.empty((n, 3))
    for dark in (False, True):
        sel = _DARK == dark
        refs[dark] = np.maximum(np.median(square[sel], axis=0), 1.0)
        ref[sel] = refs[dark]
    ell = np.log(np.maximum(corners.sum(axis=2), 1.0) / ref.sum(axis=1)[:, None])  # (n, 4)
    lv = np.array([np.median(ell[_NEAR[i]]) for i in range(n)])
    dev = ell - lv[:, None]
    sigma = max(1.4826 * float(np.median(np.abs(dev))), 0.01)
    ok = np.abs(dev) <= 3.0 * sigma
    own = ref * np.exp(lv)[:, None]
    for i in np.flatnonzero(ok.sum(axis=1) >= 2):
        own[i] = np.median(corners[i, ok[i]], axis=0)
    return np.repeat(np.exp(lv)[:, None], 3, axis=1), own, refs


def _measure(frame: np.ndarray, board: BoardFit, intrinsics: Intrinsics | None, thickness: float,
             p: ChessTopsParams) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[bool, np.ndarray],
                                          np.ndarray, np.ndarray]:
    """Per cell: the local light level (3,) and its square's own colour (3,) (`_light_field`),
    the centre's colour at the board (3,) and the top's colour (3,) at the height its outline
    closes best, raw BGR; the median light and dark square; the outline's closure and its side
    band's (`_closure`); the square's grain (log BGR)."""
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
    for k in range(1, p.max_height + 1):
        centres.append(_CENTRES + geo.thickness_shift(_CENTRES, k * thickness))
    disc_pts = np.concatenate([(c[:, None, :] + disc[None]).reshape(-1, 2) for c in centres])
    q = _quiet_offsets(board)
    quiet_offs = np.array([[a, b] for a in q for b in q if abs(abs(a) - abs(b)) < 1e-9])
    quiet_pts = (_CENTRES[:, None, :] + quiet_offs[None]).reshape(-1, 2)
    px = board_to_image_lookup(np.concatenate([corner_pts, disc_pts, quiet_pts]), board, cam)
    vals = sample_points(frame, px, np.float64)
    n = len(CELLS)
    corners = vals[: 4 * n].reshape(n, 4, 3)
    discs = vals[4 * n : 4 * n + len(disc_pts)].reshape(len(centres), n, len(disc), 3)
    level, square, refs = _light_field(corners)
    # the square's grain: how far (log BGR) its samples where only it shows (0.38-0.46 squares off
    # the centre along the diagonals) lie from its own colour, their median (a print's grain and
    # the sensor's noise; a bare centre strays as far; a neighbour leaning over is a minority)
    quiet = vals[4 * n + len(disc_pts):].reshape(n, -1, 3)
    grain = np.median(np.linalg.norm(_log(quiet) - _log(square)[:, None, :], axis=2), axis=1)
    base = np.median(discs[0], axis=1)
    grey_w = np.array([0.114, 0.587, 0.299])  # cv2's BGR -> grey
    energy, height, band = _closure(frame, board, cam, geo, thickness, square @ grey_w, p)
    # the top's colour where its rim closes best (a tall stack's side band, seen beside its top,
    # is as uniform as a top)
    top = np.median(discs[height, np.arange(n)], axis=1)
    return level, square, base, top, refs, energy, band, grain


def learn_chess_colours(
    frame: np.ndarray, board: BoardFit, tops: Mapping[str, str], *, intrinsics: Intrinsics | None = None,
    thickness: float = 0.12, params: ChessTopsParams = ChessTopsParams(),
) -> dict[str, tuple[float, float, float]]:
    """{letter: BGR} as the pieces' tops look, from a frame whose tops are known (`tops`: cell ->
    letter for the occupied cells, e.g. the start position); each colour at the median light
    level of the board."""
    level, _, _, top, _, _, _, _ = _measure(frame, board, intrinsics, thickness, params)
    index = {c: i for i, c in enumerate(CELLS)}
    out: dict[str, tuple[float, float, float]] = {}
    for letter in sorted(set(tops.values())):
        rows = [index[c] for c, t in tops.items() if t == letter and c in index]
        if not rows:
            continue
        norm = top[rows] / np.maximum(level[rows], 0.05)
        clipped = top[rows] >= _CLIPPED
        # glare (`_glare_field`) only adds: the duller half of the tops shows the colour; a
        # clipped channel says only "at least this bright", so each channel's median is over the
        # tops where it is not clipped (the duller half's, else all the tops'), else its highest
        order = np.argsort(norm.sum(axis=1))
        dull = order[: max(1, (len(rows) + 1) // 2)]
        colour = np.empty(3)
        for ch in range(3):
            fine = [r for r in dull if not clipped[r, ch]] or [r for r in order if not clipped[r, ch]]
            colour[ch] = np.median(norm[fine, ch]) if fine else norm[:, ch].max()
        norm = colour
        out[letter] = tuple(float(v) for v in norm)  # type: ignore[assignment]
    if len(out) < 2:
        raise ColourModelError(f"learn_chess_colours: need 2-4 colours on the board, got {sorted(out)}")
    return out


#: an 8-bit channel whose median over a top is this bright is clipped by the sensor (255 less
#: the few levels noise and JPEG move it): the colour there is at least that bright, no more known
#: (taking a clipped channel as a lower bound in the distances too read glaring white tops as
#: black ones with glare: 9 colour errors on 54 boards against 5; only a colour itself as bright
#: as the clip at the cell's light level agrees with a clipped channel, `_distances`)
_CLIPPED = 250.0


def _without_glare(bgr: np.ndarray, clipped: np.ndarray, colours: np.ndarray, cap: np.ndarray) -> np.ndarray:
    """(n, L, 3): each cell's colour with, per piece colour, the white glare taken off that it
    can hold: the excess over that colour in its least-excess channel (glare adds to all three
    alike; a `clipped` channel's excess is only a lower bound, so it bounds nothing; a top clipped
    in all three is taken as it is: glare that bright would explain any colour), at most `cap`
    (n,)."""
    excess = np.where(clipped[:, None, :], np.inf, bgr[:, None, :] - colours[None]).min(axis=2)
    excess = np.where(np.isfinite(excess), excess, 0.0)  # all clipped: nothing bounds it, none taken
    g = np.clip(excess, 0.0, cap[:, None])
    return np.maximum(bgr[:, None, :] - g[..., None], 1.0)


def _distances(clean: np.ndarray, clipped: np.ndarray, model: np.ndarray, clip_level: np.ndarray) -> np.ndarray:
    """(n, L): log-BGR distances of each cell's colour, glare taken off per piece colour (`clean`
    (n, L, 3)), to the piece colours. A channel `clipped` by the sensor agrees with a colour that
    is itself at least as bright as the clip at the cell's light level (`clip_level` (n, 3), in
    the colours' units): it only says "at least this bright" (a cream learnt at 274 where its
    light level is a little low read a paler grey's 212 where it clipped at 259: the glare taken
    off for the grey brought it nearer). A colour below the clip is not excused: glare taken off
    a clipped channel lowers it, and a lower bound that low would fit any darker colour."""
    diff = _log(clean) - model[None]
    agrees = clipped[:, None, :] & (model[None] >= _log(clip_level)[:, None, :])
    return np.linalg.norm(np.where(agrees, np.maximum(diff, 0.0), diff), axis=2)


def _decide(base: np.ndarray, top: np.ndarray, clipped: tuple[np.ndarray, np.ndarray], cap: np.ndarray,
            model: np.ndarray, d_empty: np.ndarray, sep: np.ndarray, closure: np.ndarray, p: ChessTopsParams,
            clip_level: np.ndarray, band: np.ndarray, grain: np.ndarray,
            frame_model: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Distances of the centre (n,) and the top (n, L) to the piece colours (`clipped`: their
    channels clipped by the sensor, at `clip_level` (n, 3) in the colours' units), glare up to
    `cap` taken off; which cells hold a piece (see `ChessTopsParams`; `grain` (n,): how far the
    square's own samples stray from its colour; `frame_model` (L, 3): the colours as the frame's
    own tops show them, `_duller_in_frame`, for the veto of a bare-looking centre); the glare of
    the nearest colour."""
    colours = np.exp(model)
    d_base = _distances(_without_glare(base, clipped[0], colours, cap), clipped[0], model, clip_level).min(axis=1)
    clean = _without_glare(top, clipped[1], colours, cap)
    d_top = _distances(clean, clipped[1], model, clip_level)
    # a piece shows its colour at the centre or, on a tall stack seen aslant, at its top
    d_base = np.minimum(d_base, d_top.min(axis=1))
    # how clearly the centre is its square rather than the nearest piece colour: 1 when it is
    # the square's colour, 0 half-way, below 0 nearer the piece colour
    bare = (d_base - d_empty) / np.maximum(sep, 1e-6)
    # where colour cannot tell, the outline says; a centre leaning towards a piece colour lowers
    # what it must close (`outline_lean`)
    needed = np.maximum(p.outline_alone + np.minimum(bare, 0.0), p.outline_lean)
    # and a ring closed short of `outline_sure` is a top only where its side band steps too
    # (`band_share`)
    banded = band >= p.band_share * closure
    tells = sep >= p.colour_tells
    by_colour = np.where(tells, bare < 0.0, (closure >= needed) & banded)
    # a clearly closed outline is a piece whatever the colour, unless colour surely says "bare"
    # and no side band shows: a paper corner's edge inside a bare black square closed its ring at
    # 14 noise units with none on the nadir's side (seed 3 table 18), while a top's band shows
    colour_says_bare = tells & (bare >= p.bare_sure)
    sure = (closure >= p.outline_sure) & ~(colour_says_bare & (band < p.outline_alone))
    # where colour cannot tell and the centre leans surely to its square's colour, a ring closed
    # at `outline_sure` is a top only where its side band steps too (`band_share`): a bare white
    # printed square among white men closed at 9.7 with a band of 0.4 (seed 31 table 13), while
    # the tops so (17 on seeds 3, 5, 7, 11 and 31) stepped there at 0.6 of their closure or more
    sure &= ~(~tells & (bare >= p.bare_sure) & ~banded)
    # colour says "a piece" surely (no outline needed) only where the centre also lies further
    # from its square's colour than the square's own samples stray (`grain_sure`)
    says_piece = (bare <= -p.bare_sure) & (d_empty >= np.minimum(p.grain_sure * grain, 2.5 * p.colour_tells))
    # where the learnt colours are too near to tell but the centre itself says "a piece" surely,
    # the outline needed (`outline_lean`) is a top without its band's share: a yellow top on a
    # white vinyl square (learnt 0.22 from it) lay 0.61 from the square's colour, 19 of its
    # grains, closing at 4.3 with a band of 1.8 (seed 31 table 2); of 5079 bare squares of seeds
    # 3, 5, 7, 11 and 31 the 14 where colour cannot tell and leaning so closed at 1.1 at most
    by_colour |= ~tells & says_piece & (closure >= needed)
    piece = (by_colour & (((closure > p.outline_none) & banded) | says_piece)) | sure
    # a closed outline where colour says "bare" only faintly (a black top with its rim and a
    # glint, on a dark square) is a piece too
    piece |= (closure >= p.outline_alone) & (bare < p.bare_sure) & banded
    # and so is a side band as strong as a sure outline where colour does not surely say "bare":
    # a tall stack at the board's outer edge leans its top over the table, where the ring's
    # points are left out (`edge_margin`), its glossy top (glare 0.33) half-way between its
    # colour and the square's; its band stepped at 7 (seed 5 table 2); of 5282 bare squares of
    # seeds 3, 5, 7 and 11, 99.9 % stepped under 1.95 there, the two over 5 leaning surely bare
    piece |= (band >= p.outline_sure) & (bare < p.bare_sure)
    # where colour cannot tell, a side band is a piece too: a stack's side shows on the nadir's
    # side of its top, concentric with it, on the three eighths facing the nadir (`_closure`),
    # where a top of its square's colour shows no rim elsewhere (white chips on white squares
    # clipped by the sensor: only the band's stripes and shadow show; a black counter on a
    # black square); on seeds 3 and 11 no bare square of 1202 where colour cannot tell stepped
    # there over 1.95 noise units, the tops missed 2.4-18; unless the centre leans surely to its
    # square's colour and is not clipped (where it is, its colour says nothing): beside a paper
    # corner, its edge on the nadir's side of a bare black square stepped at 5.7 (seed 29)
    piece |= (~tells & (band >= p.outline_alone)
              & ((bare < p.bare_sure) | clipped[0].all(axis=1)))
    # and so are the two together where each is at least what no bare square reaches on both
    # (`outline_lean`, the 1 % of bare squares' closure): a thin black chip closing its outline
    # and its band at 2.4 each (seed 3 table 5), a white man four high on a white square clipped
    # by the sensor at 1.8 and 1.9 (seed 5 table 14); of 5282 bare squares of seeds 3, 5, 7 and
    # 11 none reached 1.62 on both
    piece |= ~tells & (band >= p.outline_lean) & (closure >= p.outline_lean)
    # where the piece colour is close to the square's (white chips on white vinyl under the
    # lamp), a centre clipped in all three channels and as far from its square's own colour as
    # colour must be to tell, surely nearer a piece colour, is a piece without an outline: the
    # board is matte and the light smooth over a square, so a bare centre is no brighter than
    # the corners its colour comes from (the clipped top of a tall white stack closes its thin
    # rim at only 1.3-2 noise units; any centre that far, unclipped, can be a bare black
    # square's noise or a misplaced fit's: 0.29-0.31 on seed 3's printed squares)
    piece |= clipped[0].all(axis=1) & (d_empty >= p.colour_tells) & (bare <= -p.bare_sure)
    # where colour surely says "bare" (the centre is its square's colour, as near as a bare
    # centre comes, and further from every piece colour than a learnt colour is off on glossy
    # tops under a lamp: up to 0.54 in the glare test's black counters), no outline makes a
    # piece: a neighbour's leaning side, a corner mark's edge off the square's or a shadow's
    # closes a ring as well
    # (nor from the colours as this frame's own sure tops show them, `_duller_in_frame`: a colour
    # learnt from one top under the lamp was 0.53 brighter than the frame's tops of it away from it)
    d_far = d_base
    if frame_model is not None:
        frame_colours = np.exp(frame_model)
        d_far = np.minimum(d_far, _distances(_without_glare(base, clipped[0], frame_colours, cap), clipped[0],
                                             frame_model, clip_level).min(axis=1))
    piece &= ~((bare >= p.bare_sure) & (d_empty < p.colour_tells) & (d_far >= 2.5 * p.colour_tells))
    nearest = np.argmin(d_top, axis=1)
    glare = (top - clean[np.arange(len(top)), nearest]).mean(axis=1)
    return d_base, d_top, piece, glare


def _duller_in_frame(top: np.ndarray, clipped: np.ndarray, model: np.ndarray, d_top: np.ndarray,
                     sure: np.ndarray, min_tops: int = 3) -> np.ndarray:
    """The model (L, 3) log BGR with each colour lowered to the median of the duller half of the
    frame's `sure` tops nearest it (`top` (n, 3) at the board's light level, none clipped), where
    there are at least `min_tops` of them and that lies below the colour in all three channels
    (glare only adds white: a colour learnt from a top under the lamp holds some)."""
    out = model.copy()
    nearest = np.argmin(d_top, axis=1)
    for k in range(len(model)):
        rows = np.flatnonzero(sure & (nearest == k) & ~clipped.any(axis=1))
        if len(rows) < min_tops:
            continue
        vals = _log(top[rows])
        dull = vals[np.argsort(vals.sum(axis=1))[: (len(rows) + 1) // 2]]
        colour = np.median(dull, axis=0)
        # glare adds white: the same amount in all three channels (within a half: the sensor's
        # noise and a colour cast); a colour the frame shows lower in one channel than in the
        # others is not the learnt one with its glare taken off (a green square read as a pale
        # man's top)
        excess = np.exp(model[k]) - np.exp(colour)
        if excess.min() > 0.0 and excess.min() >= 0.5 * excess.max():
            out[k] = colour
    return out


def _glare_field(glare: np.ndarray, piece: np.ndarray) -> np.ndarray:
    """Per cell, the glare its neighbourhood's tops show: the median over the tops within 1.5
    squares (a lamp's reflection is smooth over the board, the board itself matte; a misread
    top is a minority), the cell's own left out (a white top read as a black one under glare
    would allow itself that glare). `piece`: the tops that show their glare."""
    if not piece.any():
        return np.zeros(len(CELLS))
    dist = np.linalg.norm(_CENTRES[:, None, :] - _CENTRES[None, piece, :], axis=2)
    near = dist <= 1.5
    vals = np.where(near, glare[piece][None, :], np.nan)
    with warnings.catch_warnings():  # no top within reach: NaN, no glare
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nan_to_num(np.nanmedian(vals, axis=1), nan=0.0)


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
    level, square, base, top, refs, energy, band, grain = _measure(frame, board, intrinsics, thickness, params)
    lvl = np.maximum(level, 0.05)
    # each cell's square at the median light level: the median of the squares of its colour
    square_n = np.where(_DARK[:, None], _log(refs[True])[None], _log(refs[False])[None])
    d_empty = np.linalg.norm(_log(base) - _log(square), axis=1)
    clipped = (base >= _CLIPPED, top >= _CLIPPED)
    # colour tells a piece from the bare square where the nearest piece colour is far from the
    # square's; the outline tells it where it is not (black on a dark square, cream on cream)
    sep = np.linalg.norm(square_n[:, None, :] - model[None], axis=2).min(axis=1)

    def decide(frame_model: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """d_base, d_top, piece (`_decide`), the veto's distances also to `frame_model`."""
        # glossy tops near the lamp's reflection show extra white: first any amount per top, then
        # at most what the tops around show (+ a third, and 8 grey levels: sensor noise on a median)
        cap = np.full(len(CELLS), np.inf)
        for _ in range(2):
            d_base, d_top, piece, glare = _decide(base / lvl, top / lvl, clipped, cap, model, d_empty, sep, energy,
                                                  params, _CLIPPED / lvl, band, grain, frame_model)
            # a top clipped in a channel shows no glare there, only that it is at least that bright
            # (white tops under the lamp: counted as 0 they denied the black tops beside them theirs)
            cap = 1.33 * _glare_field(glare, piece & ~clipped[1].all(axis=1)) + 8.0
        return d_base, d_top, piece

    d_base, d_top, piece = decide(None)
    # a colour learnt with glare on it (from one top under the lamp) is brighter than this frame's
    # tops of it show away from the lamp: as `learn_chess_colours` does, the duller half of the
    # frame's own sure tops (closed outlines) of that colour shows it; the veto of a bare-looking
    # centre far from every piece colour then also asks it (seed 3 table 22: a black chip on a
    # black square closing at 31 noise units lay 0.73 from the black learnt, 0.53 too bright)
    frame_model = _duller_in_frame(top / lvl, clipped[1], model, d_top, piece & (energy >= params.outline_sure))
    if not np.array_equal(frame_model, model):
        d_base, d_top, piece = decide(frame_model)
    n = len(CELLS)
    order = np.argsort(d_top, axis=1)
    best = order[:, 0]
    d1 = d_top[np.arange(n), best]
    d2 = d_top[np.arange(n), order[:, 1]]
    tops_out: dict[str, str] = {}
    conf: dict[str, float] = {}
    for i, cell in enumerate(CELLS):
        if not piece[i]:
            tops_out[cell] = "."
            margin = d_base[i] - d_empty[i] if sep[i] >= params.colour_tells else 0.1 * (params.outline_alone - energy[i])
        else:
            tops_out[cell] = letters[int(best[i])]
            margin = d2[i] - d1[i]
        conf[cell] = float(np.clip(margin / 0.3, 0.0, 1.0))
    return TopsReading(tops_out, conf)
