"""Find a chessboard's 8x8 in a frame, and the camera from its own grid (issue 19).

Stage function: `find_chessboard(frame, params=None, *, intrinsics=None) -> vision.board.BoardFit`
(method "chessboard"). Any two colours of squares, with or without a border, the twelve cut
corners blocked by anything: the finder uses only the X-junctions where four squares meet (the 7x7
inner corners, as many as pieces and corner marks leave) and the squares' alternation.

1. X-junctions: the determinant of the Hessian of the blurred grey image is strongly negative
   where two dark and two light quadrants meet (a saddle); its local minima are candidates. The
   blur and the suppression window follow from the expected square size (the board fills a good
   part of the frame: `min_square_fraction` of the smaller side at least).
2. Lattice: from a seed candidate and two neighbours (a local basis), candidates are labelled
   with integer lattice positions where they land within `snap_tolerance` squares of the
   prediction of a homography refitted as the labelled set grows; the X-junction's polarity (the
   sign of the mixed second derivative along the lattice's axes) must alternate like (-1)^(i+j).
   The largest consistent lattice over a few seeds wins.
3. Which 7x7 of the lattice are the inner corners: the labelled span, and where it is short of
   7, the squares' alternation: the offset that puts the most checker contrast inside the 8x8 and
   the least just outside it.
4. Sub-pixel corners (`cv2.cornerSubPix` in the full frame), then without `intrinsics` the camera
   from the grid itself (`camera_from_grid`: focal length and radial distortion, principal point
   at the image centre, square pixels); the fit carries it (extra["intrinsics"], extra["lens"] ==
   "estimated") for every later stage, as `vision.lens` does for Dition.

Orientation: the chessboard is symmetric under half turns, so corner 0 (next to a8) is put at a
light corner square (a1 dark, "light on the right"), the one on the image's top-left side; a
board whose a8 lies at the other light corner is turned by the caller (`turn_board`).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from vision.camera import Intrinsics
from vision.errors import BoardNotFoundError
from vision.geometry import (
    PI_V2_HFOV_DEG,
    BoardFit,
    apply_homography,
    as_gray,
    board_to_image,
    fit_from_homography,
    focal_from_hfov,
    sample_points,
)

BOARD_SQUARES = 8
#: the 12 cut squares as grid (col, row), col = file index, row = 8 - rank (rank 8 = row 0)
CUT_GRID = frozenset({(0, 0), (1, 0), (0, 1), (6, 0), (7, 0), (7, 1), (0, 6), (0, 7), (1, 7), (6, 7), (7, 7), (7, 6)})


@dataclass(frozen=True)
class ChessboardParams:
    """Tuning of the chessboard finder (shipped defaults, each with its reason)."""

    #: the search runs on a copy of the frame this wide (a square is then >= ~25 px)
    search_width_px: int = 800
    #: smallest square side expected, as a fraction of the smaller image side (board >= 1/3 of it)
    min_square_fraction: float = 0.04
    #: an X-junction's ring: correlation with itself a half turn on (an X: +1, an edge: -1), and
    #: anti-correlation a quarter turn on (an X: -1); its contrast in grey levels (well above
    #: sensor noise, below the weakest board: yellow on cream)
    min_half_turn_corr: float = 0.5
    min_quarter_turn_anticorr: float = 0.3
    min_junction_contrast: float = 12.0
    #: most candidates kept (the 49 corners, the pieces' and marks' junctions)
    max_candidates: int = 400
    #: labelling tolerance in squares (a piece's edge nearby moves a junction by < 0.1)
    snap_tolerance: float = 0.22
    #: seeds tried for the lattice
    seeds: int = 24
    #: corners needed for a fit (of 49)
    min_corners: int = 12
    #: estimate focal length and distortion from the grid when no intrinsics are given
    estimate_camera: bool = True


def find_chessboard(
    frame: np.ndarray, params: Any = None, *, intrinsics: Intrinsics | None = None
) -> BoardFit:
    """The 8x8 of a chessboard in `frame` (BGR or grey uint8); BoardNotFoundError otherwise."""
    p = params if isinstance(params, ChessboardParams) else ChessboardParams()
    gray = as_gray(frame)
    h, w = gray.shape
    scale = min(1.0, p.search_width_px / w)
    size = (round(w * scale), round(h * scale)) if scale < 1 else (w, h)
    if frame.ndim == 3:  # (the grey frame shrunk would be thrown away: 5 ms on 1640x1232)
        small = _contrast_image(frame, size)
    else:
        small = cv2.resize(gray, size, interpolation=cv2.INTER_AREA) if scale < 1 else gray
    square_px = p.min_square_fraction * min(small.shape)
    pts, polarity, strength = _saddles(small, square_px, p)
    if len(pts) < p.min_corners:
        raise BoardNotFoundError(
            f"chessboard: {len(pts)} square corners (X-junctions) seen, need {p.min_corners}"
        )
    labels = _best_lattice(pts, polarity, strength, square_px, p, small.shape[::-1])
    if labels is None or len(labels) < p.min_corners:
        n = 0 if labels is None else len(labels)
        raise BoardNotFoundError(
            f"chessboard: only {n} square corners form a regular grid, need {p.min_corners}"
        )
    idx = np.array(list(labels.keys()))
    grid = np.array([labels[i] for i in idx], np.float64)
    idx, grid = _trim_to_inner(pts, idx, grid)
    offset = _board_offset(small, pts[idx], grid)
    if offset is None:
        raise BoardNotFoundError("chessboard: the grid found does not fit inside an 8x8 board")
    board_xy = grid + offset  # inner corners at 1..7
    inner = np.all((board_xy >= 1) & (board_xy <= 7), axis=1)
    idx, grid, board_xy = idx[inner], grid[inner], board_xy[inner]
    if len(idx) < p.min_corners:
        raise BoardNotFoundError(
            f"chessboard: only {len(idx)} square corners inside the 8x8, need {p.min_corners}")
    # sub-pixel corners in the full frame
    px_full = ((pts[idx] + 0.5) / scale - 0.5).astype(np.float32)
    win = max(3, round(0.2 * square_px / scale))
    px_full = cv2.cornerSubPix(
        gray, px_full.reshape(-1, 1, 2), (win, win), (-1, -1),
        (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 30, 0.01),
    ).reshape(-1, 2).astype(np.float64)
    lens = "given" if intrinsics is not None else "none"
    cam = intrinsics
    extra: dict[str, object] = {"corners_found": len(idx), "orientation": "a8 on a light corner"}
    if cam is None and p.estimate_camera and len(idx) >= 20:
        cam, info = camera_from_grid(px_full, board_xy, (w, h))
        lens = "estimated"
        extra.update(info)
    # the board's outer edge: where its squares' borders meet it (T-junctions at integer
    # positions, away from the cut corners), measured from the first fit, then the camera again
    edge_px, edge_xy = _edge_junctions(gray, px_full, board_xy, cam, win)
    if len(edge_px):
        px_full = np.concatenate([px_full, edge_px])
        board_xy = np.concatenate([board_xy, edge_xy])
        extra["edge_points"] = len(edge_px)
        if lens == "estimated":
            cam, info = camera_from_grid(px_full, board_xy, (w, h))
            extra.update(info)
    und = cam.undistort_points(px_full) if cam is not None else px_full
    H, inl = cv2.findHomography(und, board_xy, cv2.RANSAC, 2.0)
    if H is None:
        raise BoardNotFoundError("chessboard: the corners give no homography")
    keep = inl.ravel().astype(bool)
    H, _ = cv2.findHomography(und[keep], board_xy[keep], 0)
    pred = apply_homography(np.linalg.inv(H), board_xy[keep])
    residual = float(np.sqrt(np.mean(np.sum((pred - und[keep]) ** 2, axis=1))))
    H = _orient(H, small, scale, cam)
    if cam is not None and lens == "estimated":
        extra["intrinsics"] = cam
    extra["lens"] = lens
    return fit_from_homography(
        H, "domination", "chessboard", intrinsics=cam, residual_px=residual,
        support=float(keep.sum()) / 49.0, extra=extra,
    )


def _contrast_image(frame: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """The frame at `size` projected on the main axis of its colours in the middle of the view
    (uint8): grey for brown and cream squares, red for red and black ones, whose grey levels
    differ less."""
    small = cv2.resize(frame, size, interpolation=cv2.INTER_AREA).astype(np.float32)
    h, w = small.shape[:2]
    mid = small[h // 4 : 3 * h // 4, w // 4 : 3 * w // 4].reshape(-1, 3)
    mid = mid[:: max(1, len(mid) // 20000)]
    centred = mid - mid.mean(axis=0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    axis = vt[0] * (1.0 if vt[0].sum() >= 0 else -1.0)
    proj = small.reshape(-1, 3) @ axis
    lo, hi = np.percentile(proj, [1, 99])
    out = np.clip((proj - lo) * (255.0 / max(hi - lo, 1.0)), 0, 255).reshape(h, w)
    return out.astype(np.uint8)


# ---- 1. X-junctions ---------------------------------------------------------------------------


def _saddles(small: np.ndarray, square_px: float, p: ChessboardParams
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Candidate X-junctions (N, 2) px of `small`, their polarity (+-1) and strength."""
    sigma = max(1.0, 0.12 * square_px)  # the quadrants must dominate the blurred neighbourhood
    g = cv2.GaussianBlur(small.astype(np.float32), (0, 0), sigma)
    ixx = cv2.Sobel(g, cv2.CV_32F, 2, 0, ksize=3)
    iyy = cv2.Sobel(g, cv2.CV_32F, 0, 2, ksize=3)
    ixy = cv2.Sobel(g, cv2.CV_32F, 1, 1, ksize=3)
    s = ixy * ixy - ixx * iyy  # > 0 at saddles
    k = max(3, round(0.35 * square_px) | 1)
    local_max = cv2.dilate(s, cv2.getStructuringElement(cv2.MORPH_RECT, (k, k)))
    ys, xs = np.nonzero((s >= local_max) & (s > 0))
    if xs.size == 0:
        return np.zeros((0, 2)), np.zeros(0), np.zeros(0)
    vals = s[ys, xs]
    order = np.argsort(-vals)[: p.max_candidates * 4]
    pts = np.stack([xs[order], ys[order]], 1).astype(np.float64)
    # two rings: a junction of squares holds at both scales, one of a chip's stripes or a
    # crown's points at most at the smaller (pieces start 0.3 squares from a square's corner)
    keep = _x_junctions(g, pts, 0.25 * square_px, p) & _x_junctions(g, pts, 0.45 * square_px, p)
    order, pts = order[keep], pts[keep]
    if len(order) > p.max_candidates:
        order, pts = order[: p.max_candidates], pts[: p.max_candidates]
    # the second derivatives there, for the polarity along the lattice's axes (`_mixed_sign`)
    hx, hy, hxy = ixx[ys[order], xs[order]], iyy[ys[order], xs[order]], ixy[ys[order], xs[order]]
    pol = np.stack([hx, hy, hxy], 1)
    return pts, pol, vals[order]


def _x_junctions(g: np.ndarray, pts: np.ndarray, radius: float, p: ChessboardParams) -> np.ndarray:
    """Which candidates look like four squares meeting: on a ring around the point the grey
    level repeats after a half turn and inverts after a quarter turn (an edge inverts after a
    half turn, a blob or glyph does neither), with a contrast above the noise."""
    n = 16
    ang = np.arange(n) * (2 * np.pi / n)
    ring = pts[:, None, :] + radius * np.stack([np.cos(ang), np.sin(ang)], 1)[None]
    x = np.clip(ring[..., 0], 0, g.shape[1] - 1).astype(np.float32)
    y = np.clip(ring[..., 1], 0, g.shape[0] - 1).astype(np.float32)
    vals = cv2.remap(g, x, y, cv2.INTER_LINEAR)
    vals = vals - vals.mean(axis=1, keepdims=True)
    norm = np.sqrt((vals * vals).sum(axis=1)) + 1e-6
    half = (vals * np.roll(vals, n // 2, axis=1)).sum(axis=1) / norm**2
    quarter = (vals * np.roll(vals, n // 4, axis=1)).sum(axis=1) / norm**2
    contrast = np.ptp(vals, axis=1)
    return (half > p.min_half_turn_corr) & (quarter < -p.min_quarter_turn_anticorr) & (
        contrast > p.min_junction_contrast)


def _mixed_sign(pol: np.ndarray, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Sign of the second derivative along u then v (unit image directions) at each saddle."""
    hx, hy, hxy = pol[:, 0], pol[:, 1], pol[:, 2]
    d = u[0] * v[0] * hx + (u[0] * v[1] + u[1] * v[0]) * hxy + u[1] * v[1] * hy
    return np.sign(d)


# ---- 2. the lattice ---------------------------------------------------------------------------


def _best_lattice(pts: np.ndarray, pol: np.ndarray, strength: np.ndarray, square_px: float,
                  p: ChessboardParams, image_size: tuple[int, int]) -> dict[int, tuple[int, int]] | None:
    if len(pts) < 4:
        return None
    from scipy.spatial import cKDTree

    tree = cKDTree(pts)
    # seeds: candidates whose neighbours share their grid directions (a lattice around them),
    # the stronger first among equals
    _, nb = tree.query(pts, k=min(9, len(pts)))
    angles = _axis_angle(pol)
    agree = (_angle_off(angles[nb[:, 1:]], angles[:, None]) < math.radians(10)).sum(axis=1)
    # the board is the subject of the picture: nearer the middle first
    centre = np.array([image_size[0] / 2.0, image_size[1] / 2.0])
    near = 1.0 / (1.0 + np.linalg.norm(pts - centre, axis=1) / (6 * square_px))
    score = (agree + 1.0) * np.sqrt(strength / (strength.max() + 1e-9)) * near
    seeds = np.argsort(-score)[: p.seeds]
    best: dict[int, tuple[int, int]] | None = None
    for s in seeds:
        for basis in _local_bases(pts, pol, tree, int(s), square_px):
            labels = _grow(pts, pol, tree, int(s), basis, p)
            if labels is not None and (best is None or len(labels) > len(best)):
                best = labels
        # done once a lattice spans the whole 7x7 with most of its corners: more seeds would
        # only grow the same one again
        if best is not None and len(best) >= 25 and tuple(np.max(list(best.values()), axis=0)) == (6, 6):
            break
    return best


def _axis_angle(pol: np.ndarray) -> np.ndarray:
    """Per saddle, the direction (radians, modulo pi/2) of the grid lines through it: the Hessian's
    eigenvectors lie along the diagonals of an X-junction, 45 degrees off its lines."""
    hx, hy, hxy = pol[:, 0], pol[:, 1], pol[:, 2]
    return np.mod(0.5 * np.arctan2(2 * hxy, hx - hy) + np.pi / 4, np.pi / 2)


def _angle_off(a: np.ndarray | float, b: np.ndarray | float) -> np.ndarray:
    """Difference of two line directions modulo pi/2, in [0, pi/4]."""
    d = np.mod(np.asarray(a) - np.asarray(b), np.pi / 2)
    return np.minimum(d, np.pi / 2 - d)


def _local_bases(pts: np.ndarray, pol: np.ndarray, tree: Any, s: int, square_px: float
                 ) -> list[tuple[np.ndarray, np.ndarray]]:
    """Lattice steps (u, v) at seed s: the nearest candidates along its own two grid lines."""
    d, nb = tree.query(pts[s], k=min(16, len(pts)))
    theta = float(_axis_angle(pol[s : s + 1])[0])
    own = _axis_angle(pol[nb])
    steps = [pts[j] - pts[s] for j, dist, ang in zip(nb[1:], d[1:], own[1:])
             if dist >= 0.6 * square_px and _angle_off(ang, theta) < math.radians(15)]
    out = []
    for a in range(min(2, len(steps))):
        u = steps[a]
        for v in steps[a + 1 :]:
            cos = float(u @ v) / (np.linalg.norm(u) * np.linalg.norm(v))
            if abs(cos) < 0.55 and 0.6 < np.linalg.norm(v) / np.linalg.norm(u) < 1.6:
                out.append((u, v))
                break
    return out


def _grow(pts: np.ndarray, pol: np.ndarray, tree: Any, s: int, basis: tuple[np.ndarray, np.ndarray],
          p: ChessboardParams) -> dict[int, tuple[int, int]] | None:
    u, v = basis
    if u[0] * v[1] - u[1] * v[0] < 0:  # keep the lattice right-handed in the image (y down)
        u, v = v, u
    seed_sign = _mixed_sign(pol[s : s + 1], u / np.linalg.norm(u), v / np.linalg.norm(v))[0]
    if seed_sign == 0:
        return None
    angles = _axis_angle(pol)
    labels: dict[int, tuple[int, int]] = {s: (0, 0)}
    taken: dict[tuple[int, int], int] = {(0, 0): s}
    A = np.array([[u[0], v[0], pts[s, 0]], [u[1], v[1], pts[s, 1]], [0.0, 0.0, 1.0]])  # grid -> px
    for _ in range(12):
        grew = False
        frontier = set()
        for (i, j) in list(taken):
            for di, dj in ((1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (-1, -1), (1, -1), (-1, 1)):
                q = (i + di, j + dj)
                if q not in taken and abs(q[0]) <= 8 and abs(q[1]) <= 8:
                    frontier.add(q)
        if not frontier:
            break
        cells = np.array(sorted(frontier), np.float64)
        pred = apply_homography(A, cells)
        if not np.all(np.isfinite(pred)):  # a degenerate refit (the labelled points on a line)
            return None
        # local square size at each prediction, for the tolerance
        du = apply_homography(A, cells + [0.5, 0.0]) - apply_homography(A, cells - [0.5, 0.0])
        dv = apply_homography(A, cells + [0.0, 0.5]) - apply_homography(A, cells - [0.0, 0.5])
        size = np.sqrt(np.abs(du[:, 0] * dv[:, 1] - du[:, 1] * dv[:, 0]))
        dist, j_idx = tree.query(pred)
        for c, dd, jj, sz, a_u, a_v in zip(cells, dist, j_idx, size, du, dv):
            if dd > p.snap_tolerance * sz or jj in labels:
                continue
            key = (int(c[0]), int(c[1]))
            parity = 1.0 if (key[0] + key[1]) % 2 == 0 else -1.0
            sign = _mixed_sign(pol[jj : jj + 1], a_u / np.linalg.norm(a_u), a_v / np.linalg.norm(a_v))[0]
            if sign * parity != seed_sign:
                continue
            if _angle_off(angles[jj], math.atan2(a_u[1], a_u[0])) > math.radians(20):
                continue
            labels[int(jj)] = key
            taken[key] = int(jj)
            grew = True
        if len(labels) >= 4:
            src = np.array([labels[k] for k in labels], np.float64)
            dst = pts[list(labels)]
            H, _ = cv2.findHomography(src, dst, 0)
            if H is not None:
                A = H
        if not grew:
            break
    if len(labels) < 6:
        return None
    # the polarity must alternate like (-1)^(i + j) along the lattice's own axes
    ids = np.array(list(labels))
    g = np.array([labels[i] for i in ids], np.float64)
    ex = apply_homography(A, g + [0.05, 0.0]) - apply_homography(A, g)
    ey = apply_homography(A, g + [0.0, 0.05]) - apply_homography(A, g)
    ex /= np.linalg.norm(ex, axis=1, keepdims=True)
    ey /= np.linalg.norm(ey, axis=1, keepdims=True)
    sgn = np.array([_mixed_sign(pol[i : i + 1], ex[k], ey[k])[0] for k, i in enumerate(ids)])
    parity = np.where((g[:, 0] + g[:, 1]) % 2 == 0, 1.0, -1.0)
    agree = sgn * parity
    major = 1.0 if agree.sum() >= 0 else -1.0
    keep = agree == major
    if keep.sum() < 6:
        return None
    out = {int(i): (int(a), int(b)) for i, (a, b), k in zip(ids, g, keep) if k}
    # labels relative to the smallest
    gi = np.array(list(out.values()))
    i0, j0 = gi.min(axis=0)
    return {k: (a - int(i0), b - int(j0)) for k, (a, b) in out.items()}


# ---- 3. which 7x7 are the inner corners -------------------------------------------------------


def _trim_to_inner(pts: np.ndarray, idx: np.ndarray, grid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A lattice wider than the 7 inner corners has junctions of the corner marks or the border
    in it (tape on a square beside a dark border is an X too): while it is, the end line whose
    junctions sit further off the lattice (median, in squares) is dropped. The squares' own
    corners lie on it to the blur's precision; a mark's edges only roughly."""
    while True:
        span = grid.max(axis=0) - grid.min(axis=0)
        axis = int(np.argmax(span))
        if span[axis] <= 6 or len(idx) < 8:
            return idx, grid - grid.min(axis=0)
        H, _ = cv2.findHomography(grid, pts[idx], 0)
        if H is None:
            return idx, grid - grid.min(axis=0)
        size = np.linalg.norm(apply_homography(H, grid + [0.5, 0.5]) - apply_homography(H, grid - [0.5, 0.5]),
                              axis=1) / math.sqrt(2.0)
        off = np.linalg.norm(apply_homography(H, grid) - pts[idx], axis=1) / np.maximum(size, 1e-6)
        lo, hi = grid[:, axis] == grid[:, axis].min(), grid[:, axis] == grid[:, axis].max()
        drop = hi if float(np.median(off[hi])) > float(np.median(off[lo])) else lo
        # only a line clearly off the lattice (3 x the others' offset, and over 0.06 squares: a
        # corner's sub-pixel scatter at 25 px a square) is a mark's; a lattice regular beyond
        # 7x7 is no chessboard (a drawn grid), and stays too wide
        rest = float(np.median(off[~drop]))
        if float(np.median(off[drop])) <= max(3.0 * rest, 0.06):
            return idx, grid - grid.min(axis=0)
        idx, grid = idx[~drop], grid[~drop]


def _board_offset(small: np.ndarray, px: np.ndarray, grid: np.ndarray) -> np.ndarray | None:
    """The offset (dx, dy) taking lattice labels to board coordinates (inner corners 1..7): of
    the placements of the 8x8 that contain the lattice, the one whose playable squares alternate
    most clearly while the squares just beyond each side do not (a border, the table). The cut
    squares are left out: tape, paper or spare men cover them."""
    span = grid.max(axis=0)
    if span[0] > 6 or span[1] > 6:
        return None
    H, _ = cv2.findHomography(grid, px, 0)
    if H is None:
        return None
    g = cv2.GaussianBlur(small.astype(np.float32), (0, 0), 1.0)
    lo = -8  # lattice squares -8 .. 8 cover every placement and the squares beyond it
    idx = np.arange(lo, 9)
    ii, jj = np.meshgrid(idx, idx, indexing="ij")
    # each square's level near its four corners (0.57 squares from its centre: beyond a man and
    # its jitter, 0.1 squares from the edges: beyond the blur at 25 px a square)
    sub = np.array([[0.1, 0.1], [0.9, 0.1], [0.1, 0.9], [0.9, 0.9]])
    pts = (np.stack([ii, jj], -1)[..., None, :] + sub).reshape(-1, 2)
    q = apply_homography(H, pts)
    ok = (q[:, 0] >= 0) & (q[:, 0] < g.shape[1] - 1) & (q[:, 1] >= 0) & (q[:, 1] < g.shape[0] - 1)
    vals = np.full(len(q), np.nan)
    qi = np.round(q[ok]).astype(int)
    vals[ok] = g[qi[:, 1], qi[:, 0]]
    if not ok.any():
        return None
    with warnings.catch_warnings():  # squares out of the picture: all-NaN, skipped below
        warnings.simplefilter("ignore", RuntimeWarning)
        level = np.nanmedian(vals.reshape(len(idx), len(idx), 4), axis=2)
    even = (ii + jj) % 2 == 0

    def side_contrast(cells: list[tuple[int, int]]) -> float:
        """How clearly the squares alternate: the median of one parity against the other's
        (medians: men, a hand or a mark on a few of the squares do not flip it)."""
        a = [level[x - lo, y - lo] for x, y in cells if 0 <= x - lo < len(idx) and 0 <= y - lo < len(idx)
             and even[x - lo, y - lo] and np.isfinite(level[x - lo, y - lo])]
        b = [level[x - lo, y - lo] for x, y in cells if 0 <= x - lo < len(idx) and 0 <= y - lo < len(idx)
             and not even[x - lo, y - lo] and np.isfinite(level[x - lo, y - lo])]
        return abs(float(np.median(a)) - float(np.median(b))) if a and b else 0.0

    best, best_score = None, -np.inf
    for ox in range(int(span[0]) - 6, 1):
        for oy in range(int(span[1]) - 6, 1):
            # board square (c, r) is lattice square (c - 1 + ox, r - 1 + oy)
            inside = [(c - 1 + ox, r - 1 + oy) for c in range(8) for r in range(8) if (c, r) not in CUT_GRID]
            beyond = [[(-2 + ox, r - 1 + oy) for r in range(8)], [(7 + ox, r - 1 + oy) for r in range(8)],
                      [(c - 1 + ox, -2 + oy) for c in range(8)], [(c - 1 + ox, 7 + oy) for c in range(8)]]
            # the squares just inside each side alternate as well (a border's strip of labels
            # or the table next to the 8x8 does not; the median over the whole 8x8 hardly moves
            # when one line of it is a border: 0.3 of 66 grey levels on seed 11's frame 49)
            edges = [[(0 + ox - 1, r - 1 + oy) for r in range(8) if (0, r) not in CUT_GRID],
                     [(7 + ox - 1, r - 1 + oy) for r in range(8) if (7, r) not in CUT_GRID],
                     [(c - 1 + ox, 0 + oy - 1) for c in range(8) if (c, 0) not in CUT_GRID],
                     [(c - 1 + ox, 7 + oy - 1) for c in range(8) if (c, 7) not in CUT_GRID]]
            score = (min(side_contrast(inside), *(side_contrast(e) for e in edges))
                     - max(side_contrast(b) for b in beyond))
            if score > best_score:
                best, best_score = np.array([1.0 - ox, 1.0 - oy]), score
    return best


#: outer-edge junctions (board units) clear of the cut corners' marks: x or y = 0 or 8
EDGE_POINTS = np.array(
    [[c, e] for c in (3.0, 4.0, 5.0) for e in (0.0, 8.0)] + [[e, c] for c in (3.0, 4.0, 5.0) for e in (0.0, 8.0)]
)


def _edge_junctions(gray: np.ndarray, px: np.ndarray, board_xy: np.ndarray, cam: Intrinsics | None,
                    win: int) -> tuple[np.ndarray, np.ndarray]:
    """The outer edge's T-junctions (px, board) that `cv2.cornerSubPix` finds within a tenth of a
    square of where the inner corners predict them."""
    und = cam.undistort_points(px) if cam is not None else px
    H, _ = cv2.findHomography(board_xy, und, 0)
    if H is None:
        return np.zeros((0, 2)), np.zeros((0, 2))
    pred = apply_homography(H, EDGE_POINTS)
    step = apply_homography(H, EDGE_POINTS + [0.1, 0.0]) - pred
    if cam is not None:
        pred = cam.distort_points(pred)
    h, w = gray.shape
    inside = (pred[:, 0] > win + 2) & (pred[:, 0] < w - win - 3) & (pred[:, 1] > win + 2) & (pred[:, 1] < h - win - 3)
    if not inside.any():
        return np.zeros((0, 2)), np.zeros((0, 2))
    start = pred[inside].astype(np.float32).reshape(-1, 1, 2)
    got = cv2.cornerSubPix(gray, start.copy(), (win, win), (-1, -1),
                           (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 30, 0.01)).reshape(-1, 2)
    moved = np.linalg.norm(got - pred[inside], axis=1)
    ok = moved < np.linalg.norm(step[inside], axis=1)  # a tenth of a square
    return got[ok].astype(np.float64), EDGE_POINTS[inside][ok]


# ---- 4. orientation and the camera ------------------------------------------------------------


def _orient(H: np.ndarray, small: np.ndarray, scale: float, cam: Intrinsics | None) -> np.ndarray:
    """H_image_to_board turned by quarter turns so that board corner 0 is a light corner square
    and, of the two, the one on the image's top-left side."""
    H_inv = np.linalg.inv(H)
    corners = np.array([[0.5, 0.5], [7.5, 0.5], [7.5, 7.5], [0.5, 7.5]])
    g = cv2.GaussianBlur(small.astype(np.float32), (0, 0), 1.0)
    # the corner squares themselves are cut and covered (tape, paper, spare men): compare the
    # two colours over the playable squares, each seen beside its piece (0.42 off its centre)
    squares = np.array([(c, r) for c in range(8) for r in range(8) if (c, r) not in CUT_GRID], np.float64)
    offs = np.array([[-0.42, -0.42], [0.42, -0.42], [0.42, 0.42], [-0.42, 0.42]])
    pts = apply_homography(H_inv, (squares[:, None, :] + 0.5 + offs[None]).reshape(-1, 2))
    if cam is not None:
        pts = cam.distort_points(pts)
    q = np.round((pts + 0.5) * scale - 0.5).astype(int)
    q[:, 0] = q[:, 0].clip(0, g.shape[1] - 1)
    q[:, 1] = q[:, 1].clip(0, g.shape[0] - 1)
    level = np.median(g[q[:, 1], q[:, 0]].reshape(len(squares), 4), axis=1)
    even = (squares.sum(axis=1) % 2) == 0
    where = [apply_homography(H_inv, c[None])[0] for c in corners]
    # squares (0,0) and (7,7) share the even squares' colour, (7,0) and (0,7) the odd ones'
    light = (0, 2) if float(np.mean(level[even])) >= float(np.mean(level[~even])) else (1, 3)
    # of the two light corners, the top-left-most in the image (smallest x + y)
    k = min(light, key=lambda i: where[i][0] + where[i][1])
    # a quarter turn taking board corner k to corner 0: board (x, y) -> turned
    turns = {0: np.eye(3),
             1: np.array([[0.0, 1, 0], [-1, 0, 8], [0, 0, 1]]),   # (8, 0) -> (0, 0)
             2: np.array([[-1.0, 0, 8], [0, -1, 8], [0, 0, 1]]),  # (8, 8) -> (0, 0)
             3: np.array([[0.0, -1, 8], [1, 0, 0], [0, 0, 1]])}   # (0, 8) -> (0, 0)
    return turns[k] @ H


def turn_board(board: BoardFit, quarter_turns: int, intrinsics: Intrinsics | None = None) -> BoardFit:
    """The same board with corner 0 moved `quarter_turns` corners on (clockwise in board order):
    for a8 where the players said it is."""
    k = quarter_turns % 4
    T = np.eye(3)
    step = np.array([[0.0, 1, 0], [-1, 0, 8], [0, 0, 1]])
    for _ in range(k):
        T = step @ T
    cam = intrinsics if intrinsics is not None else board.extra.get("intrinsics")
    return fit_from_homography(
        T @ board.H_image_to_board, board.game, board.method,
        intrinsics=cam if isinstance(cam, Intrinsics) else None,
        residual_px=board.residual_px, support=board.support, extra=board.extra,
    )


#: the four squares about an inner corner are sampled 0.15 squares from it along the diagonals
#: (0.49 squares from each square's centre, beyond a man's 0.40-0.45 radius), each as the mean of
#: 3x3 points 0.04 squares apart (a tenth of a square at most: within the square)
_ALT_STEP = np.array([-0.04, 0.0, 0.04])
_ALT_PTS = np.array(
    [[i + sx * 0.15 + dx, j + sy * 0.15 + dy]
     for i in range(1, BOARD_SQUARES) for j in range(1, BOARD_SQUARES)
     for sx, sy in ((1, 1), (-1, -1), (1, -1), (-1, 1)) for dx in _ALT_STEP for dy in _ALT_STEP])
_ALT_SIGN = np.array([(-1.0) ** (i + j) for i in range(1, BOARD_SQUARES) for j in range(1, BOARD_SQUARES)])
#: a frame shows alternating squares at a fit when this share of its 49 inner corners agree on
#: it: with nothing alternating each corner's sign is a coin's (the kit's board and drawn grids
#: 0.49-0.73 on 48 simulated frames), 39 of 49 by chance is p < 1e-4; chessboards showed 0.90-1.00
#: with 20-95 % of the cells covered (24 simulated, 9 real photos)
ALTERNATING_SHARE = 0.8


def alternating_share(frame: np.ndarray, board: BoardFit, intrinsics: Intrinsics | None = None) -> float:
    """The share of the 7x7 inner corners of the 8x8 at `board` where the four squares alternate
    as on a chessboard, all in the same way: per corner, the colour (log BGR) of the two squares
    on one diagonal less that of the other two, signed by (-1)^(i+j) for the square's parity; a
    corner agrees when it points the way of the median over the board (any two colours of
    squares, of any brightness: red on green as well as black on white). Men standing on the
    squares leave their corners showing."""
    bgr = sample_points(frame, board_to_image(_ALT_PTS, board, intrinsics)).astype(np.float64)
    logs = np.log(np.maximum(bgr, 1.0)).reshape(len(_ALT_SIGN), 4, len(_ALT_STEP) ** 2, 3).mean(axis=2)
    diff = (logs[:, 0] + logs[:, 1] - logs[:, 2] - logs[:, 3]) * _ALT_SIGN[:, None]
    way = np.median(diff, axis=0)
    if not np.any(way):
        return 0.0
    return float(np.mean(diff @ way > 0))


def camera_from_grid(
    points_px: np.ndarray, points_board: np.ndarray, image_size: tuple[int, int],
    *, prior_hfov_deg: float = PI_V2_HFOV_DEG, fit_k2: bool = False,
) -> tuple[Intrinsics, dict[str, object]]:
    """Focal length and radial distortion (k1, k2) from one view of a plane with known geometry
    (board units), square pixels and the principal point at the image centre.

    The homography's two orthogonality constraints fix the focal length when the plane is seen
    at a slant; `cv2.calibrateCamera` then refines it with the distortion. Seen nearly head on,
    the focal length is not determined by the grid: it stays at the prior (`prior_hfov_deg`,
    the Pi camera v2) and its sigma says so. Returns the intrinsics and
    {"focal_px", "focal_sigma_px", "rms_px"}."""
    w, h = image_size
    pts = np.asarray(points_px, np.float64).reshape(-1, 2)
    obj = np.c_[np.asarray(points_board, np.float64).reshape(-1, 2), np.zeros(len(pts))]
    f_prior = focal_from_hfov(w, prior_hfov_deg)
    f0 = focal_from_homography(pts, obj[:, :2], image_size) or f_prior
    K0 = np.array([[f0, 0.0, (w - 1) / 2.0], [0.0, f0, (h - 1) / 2.0], [0.0, 0.0, 1.0]])
    flags = (cv2.CALIB_USE_INTRINSIC_GUESS | cv2.CALIB_FIX_PRINCIPAL_POINT | cv2.CALIB_FIX_ASPECT_RATIO
             | cv2.CALIB_ZERO_TANGENT_DIST | cv2.CALIB_FIX_K3)
    if not fit_k2:
        flags |= cv2.CALIB_FIX_K2
    out = cv2.calibrateCameraExtended(
        [obj.astype(np.float32)], [pts.astype(np.float32)], (w, h), K0.copy(), np.zeros(5), flags=flags,
        criteria=(cv2.TERM_CRITERIA_COUNT + cv2.TERM_CRITERIA_EPS, 60, 1e-9),
    )
    rms, K, dist = out[0], out[1], out[2]
    # one robust pass: points a piece's edge or a mark pulled off the junction are dropped
    proj, _ = cv2.projectPoints(obj, out[3][0], out[4][0], K, dist)
    res = np.linalg.norm(proj.reshape(-1, 2) - pts, axis=1)
    keep = res < max(3.0 * float(np.median(res)), 0.5)
    if keep.sum() >= 12 and not keep.all():
        pts, obj = pts[keep], obj[keep]
        out = cv2.calibrateCameraExtended(
            [obj.astype(np.float32)], [pts.astype(np.float32)], (w, h), K0.copy(), np.zeros(5),
            flags=flags, criteria=(cv2.TERM_CRITERIA_COUNT + cv2.TERM_CRITERIA_EPS, 60, 1e-9),
        )
        rms, K, dist = out[0], out[1], out[2]
    f_sigma = _focal_sigma(obj, pts, out[3][0], out[4][0], K, dist, max(float(rms), 0.1), fit_k2)
    f = float(K[0, 0])
    if not math.isfinite(f_sigma) or f_sigma > 0.25 * f or not 0.3 * f_prior < f < 4 * f_prior:
        # head on: the grid does not tell the focal length; keep the prior, fit the lens
        K0 = np.array([[f_prior, 0.0, (w - 1) / 2.0], [0.0, f_prior, (h - 1) / 2.0], [0.0, 0.0, 1.0]])
        out = cv2.calibrateCameraExtended(
            [obj.astype(np.float32)], [pts.astype(np.float32)], (w, h), K0, np.zeros(5),
            flags=flags | cv2.CALIB_FIX_FOCAL_LENGTH,
        )
        rms, K, dist = out[0], out[1], out[2]
        f, f_sigma = f_prior, 0.3 * f_prior
    cam = Intrinsics(K, np.asarray(dist, np.float64).ravel()[:5], (w, h))
    return cam, {"focal_px": f, "focal_sigma_px": f_sigma, "rms_px": float(rms),
                 "focal_pp_sigma_px": _focal_pp_sigma(cam, pts, obj[:, :2], f, f_sigma)}


#: how far off the image centre a camera's principal point may be, as a fraction of the image's
#: larger side (cameras of the Pi's class: within about 2 %; `vision.board_camera` takes the same)
PRINCIPAL_POINT_FRACTION = 0.02


def _focal_pp_sigma(cam: Intrinsics, pts_px: np.ndarray, pts_board: np.ndarray, f: float, f_sigma: float) -> float:
    """What a principal point `PRINCIPAL_POINT_FRACTION` off the image centre (either way along
    either axis) would change the focal length by (px, as a sigma): the grid's own `f_sigma`
    takes the centre as known, and on tilted views the focal length was 5-40 % off the truth
    with sigmas of 1-4 % (median |error| / sigma 2.8 over 80 simulated frames). Where the view
    leaves the focal length to the prior (`f_sigma` already 30 %), nothing to add."""
    w, h = cam.image_size
    if f_sigma >= 0.3 * f:
        return 0.0
    und = cam.undistort_points(pts_px)
    # against the homography's own focal length at the centre (the fit's moved by the lens)
    f_centre = focal_from_homography(und, pts_board, (w, h))
    if f_centre is None:
        return 0.3 * f
    delta = PRINCIPAL_POINT_FRACTION * max(w, h)
    var = 0.0
    for shift in ((delta, 0.0), (-delta, 0.0), (0.0, delta), (0.0, -delta)):
        fi = focal_from_homography(und - np.asarray(shift), pts_board, (w, h))
        if fi is None:
            return 0.3 * f  # one side of the centre has no solution: as unknown as head on
        var += 0.5 * (fi - f_centre) ** 2
    return math.sqrt(var)


def _focal_sigma(obj: np.ndarray, pts: np.ndarray, rvec: np.ndarray, tvec: np.ndarray, K: np.ndarray,
                 dist: np.ndarray, noise_px: float, fit_k2: bool) -> float:
    """Standard deviation of the focal length (px) from the fit's Jacobian (pose, f, k1 and k2
    if fitted) and the corners' scatter `noise_px`."""
    _, jac = cv2.projectPoints(obj, rvec, tvec, K, dist)
    # columns: rvec 3, tvec 3, fx, fy, cx, cy, k1, k2, p1, p2, k3, ...
    cols = [jac[:, :6], (jac[:, 6] + jac[:, 7])[:, None], jac[:, 10:11]]
    if fit_k2:
        cols.append(jac[:, 11:12])
    J = np.concatenate(cols, axis=1)
    try:
        cov = np.linalg.inv(J.T @ J) * noise_px**2
    except np.linalg.LinAlgError:
        return float("inf")
    return float(math.sqrt(max(cov[6, 6], 0.0)))


def focal_from_homography(points_px: np.ndarray, points_board: np.ndarray,
                          image_size: tuple[int, int]) -> float | None:
    """The focal length (px) that makes the plane's two axes orthogonal and of equal length,
    principal point at the image centre, square pixels (least squares over both constraints);
    None when the view is too close to head on to tell."""
    H, _ = cv2.findHomography(np.asarray(points_board, np.float64), np.asarray(points_px, np.float64), 0)
    if H is None:
        return None
    w, h = image_size
    c = np.array([[1.0, 0, -(w - 1) / 2.0], [0, 1.0, -(h - 1) / 2.0], [0, 0, 1.0]])
    G = c @ H  # board -> centred pixels; columns g1, g2 = K' [r1 r2]
    g1, g2 = G[:, 0], G[:, 1]
    # with K' = diag(f, f, 1): r1 . r2 = 0 -> (a1 a2 + b1 b2) / f^2 + c1 c2 = 0
    #                          |r1| = |r2| -> (a1^2 + b1^2 - a2^2 - b2^2) / f^2 + c1^2 - c2^2 = 0
    rows = np.array([[g1[0] * g2[0] + g1[1] * g2[1], g1[2] * g2[2]],
                     [g1[0] ** 2 + g1[1] ** 2 - g2[0] ** 2 - g2[1] ** 2, g1[2] ** 2 - g2[2] ** 2]])
    # x = 1 / f^2 solves rows[:, 0] * x + rows[:, 1] = 0 in the least-squares sense
    a, b = rows[:, 0], rows[:, 1]
    denom = float(a @ a)
    if denom <= 0:
        return None
    x = -float(a @ b) / denom
    if x <= 0:
        return None
    return 1.0 / math.sqrt(x)


def chessboard_moved(
    frame: np.ndarray, previous: BoardFit, *, intrinsics: Intrinsics | None = None, tolerance_px: float = 1.5
) -> tuple[bool, BoardFit | None]:
    """Cheap bump check for the referee loop, as `vision.domination_board.domination_board_moved`
    for the kit: the inner corners are re-measured (`cv2.cornerSubPix`) where `previous` puts
    them. `(False, previous)` when their median shift is within `tolerance_px`; `(True, fit)`
    when they did not (`fit`: the board found anew, in the corner order nearest the previous
    one); `(True, None)` when it is not found."""
    if not tolerance_px > 0:
        raise ValueError(f"tolerance_px must be > 0, got {tolerance_px}")
    gray = as_gray(frame)
    cam = intrinsics if intrinsics is not None else previous.extra.get("intrinsics")
    cam = cam if isinstance(cam, Intrinsics) else None
    board_xy = np.array([[i, j] for i in range(1, 8) for j in range(1, 8)], np.float64)
    pred = apply_homography(previous.H_board_to_image, board_xy)
    step = np.linalg.norm(apply_homography(previous.H_board_to_image, board_xy + [0.1, 0.0]) - pred, axis=1)
    if cam is not None:
        pred = cam.distort_points(pred)
    win = max(3, round(2.0 * float(np.median(step))))  # a fifth of a square
    h, w = gray.shape
    inside = (pred[:, 0] > win + 2) & (pred[:, 0] < w - win - 3) & (pred[:, 1] > win + 2) & (pred[:, 1] < h - win - 3)
    if inside.sum() < 12:
        return True, None
    # the squares' corners must still be there (not a blank, covered or removed board)
    real = _x_junctions(cv2.GaussianBlur(gray.astype(np.float32), (0, 0), 1.0), pred[inside],
                        2.5 * float(np.median(step)), ChessboardParams())
    if real.sum() >= 12:
        got = cv2.cornerSubPix(gray, pred[inside][real].astype(np.float32).reshape(-1, 1, 2), (win, win),
                               (-1, -1), (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 20, 0.02))
        shift = np.linalg.norm(got.reshape(-1, 2) - pred[inside][real], axis=1)
        # a junction under a piece or a hand drifts anywhere; the board's own ones agree
        if float(np.median(shift)) <= tolerance_px:
            return False, previous
    # moved: found anew (a bump moves the corners by more than cornerSubPix reaches), with the
    # corner order nearest the previous one (a8 stays a8 through the bump)
    try:
        fit = find_chessboard(frame, intrinsics=intrinsics)
    except BoardNotFoundError:
        return True, None
    k = min(range(4), key=lambda q: float(np.linalg.norm(np.roll(fit.corners_px, -q, axis=0) - previous.corners_px)))
    return True, turn_board(fit, k, intrinsics)
