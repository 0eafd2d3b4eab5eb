"""The camera from the Domination board's own square grid, for frames without a calibration.

A plane of known geometry seen by a camera with square pixels and its principal point at the
image centre fixes the focal length from one view, as soon as the view is not head on (the
homography's two orthogonality constraints, then `cv2.calibrateCamera` with k1 for the lens):
`vision.chessboard.camera_from_grid` does that on any set of grid points. This module measures
those grid points on the kit's printed board, where the dark lines 0.04 cells wide meet at
the lattice points (i, j) of the 8x8: across each of the two lines through a lattice point,
short grey profiles 0.15-0.35 cells away from it (clear of the other line and of a centred
piece) give the line's centre to a fraction of a pixel; a straight line through each line's
centres (a lens bends a line by far less than a pixel over half a cell) and their
intersection give the point. The chessboard finder measures its own inner corners.

Stage: `with_grid_camera(frame, board, params, pool=None) -> BoardFit`: the board re-fitted through the
camera found, marked `extra["lens"] = "grid"` and carrying `extra["intrinsics"]`,
`extra["focal_sigma_px"]` (what `vision.domination.read_tops` turns into its heights' sigma)
and `extra["grid_points"]`; `board` unchanged when the grid gives too few points.
A view seen head on cannot fix the focal length (`_focal_and_sigma` tells it from the
homography's conditioning): its sigma is infinite and the prior's focal length is used, not the
grid's wrong confident one. `FocalPool` pools the focal length over the board fits of one
camera (a fixed stand: the same focal length, one view per fit) by inverse variance:
`with_grid_camera(..., pool=pool)` refits each new view through the pooled value, so a head-on
view after a tilted one keeps the focal length the tilted one measured.

Arrays: points in px are `(N, 2) float64 (x, y)` of the frame as captured; board points
`(N, 2)` in cells (DESIGN.md's Domination board frame).
Run as `python -m vision.board_camera IMAGE --corners x0,y0,...` to print the estimate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from vision.camera import Intrinsics
from vision.chessboard import CUT_GRID
from vision.geometry import (
    PI_V2_HFOV_DEG,
    BoardFit,
    apply_homography,
    as_gray,
    board_intrinsics,
    darkest_subpixel,
    fit_from_corners,
    focal_from_hfov,
    line_profiles,
)
from vision.lens import LineSamples

#: the playable cells as grid (col, row), col = file index, row = 8 - rank: all but the 12 cut ones
_PLAYABLE_GRID = frozenset((c, r) for c in range(8) for r in range(8) if (c, r) not in CUT_GRID)


def _line_segments() -> list[tuple[int, float, float, float]]:
    """Drawn line pieces of the 52 cells: (axis, c, lo, hi), axis 0 for the line x = c."""
    segs = set()
    for col, row in _PLAYABLE_GRID:
        segs |= {(0, float(col), float(row), float(row + 1)), (0, float(col + 1), float(row), float(row + 1)),
                 (1, float(row), float(col), float(col + 1)), (1, float(row + 1), float(col), float(col + 1))}
    return sorted(segs)


_SEGMENTS = _line_segments()


@dataclass(frozen=True)
class GridCameraParams:
    """Tuning of the grid measurement on the kit's board (shipped defaults)."""

    #: distances along a line from the lattice point where it is measured (cells): beyond the
    #: crossing line's width and blur, short of a centred piece's rim (0.4 from the centre)
    along_cells: tuple[float, ...] = (0.15, 0.25, 0.35)
    #: half-length of each cross profile (cells): the lens bends a line between the given
    #: corners by a few pixels, about a tenth of a cell on the simulated and the Pi's lenses
    profile_half_cells: float = 0.12
    #: profile samples
    profile_samples: int = 25
    #: a profile counts when its darkest point is this much darker than both its ends, in
    #: units of the frame's grey noise (measured on the board's light cells)
    min_contrast_sigmas: float = 6.0
    #: grid points needed for an estimate (k1, f and a pose: 8 unknowns, with margin)
    min_points: int = 20
    #: line samples per drawn cell side for the lens (plumb line)
    samples_per_side: int = 4
    #: how far off the image centre the principal point may be, as a fraction of the image's
    #: larger side (cameras of the Pi's class: within about 2 %), for the focal length's sigma
    principal_point_fraction: float = 0.02
    #: lattice outlier rejection: passes, and the smallest miss (px) that makes an outlier
    outlier_passes: int = 3
    min_outlier_px: float = 0.5
    #: horizontal field of view assumed when the grid cannot tell the focal length (Pi v2)
    prior_hfov_deg: float = PI_V2_HFOV_DEG
    #: the keystone an error correlated over the board can put on the grid unseen
    #: (`_focal_and_sigma`): this many times the homography's residual at the board's edge, at
    #: least this many px (a lens's tangential terms)
    keystone_sigmas: float = 3.0
    keystone_min_px: float = 1.0


def grid_points(
    frame: np.ndarray, board: BoardFit, params: GridCameraParams = GridCameraParams(),
    intrinsics: Intrinsics | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The kit board's lattice points measured in `frame`: (points_px (N, 2) captured,
    points_board (N, 2) cells). `intrinsics` (a first estimate) only sharpens where the
    profiles are taken."""
    gray = as_gray(frame).astype(np.float32)
    cam = board_intrinsics(board, intrinsics)
    lattice, axes, bases, drawn = _lattice_samples(params)
    n_al = len(params.along_cells) * 2
    centre_px, ok = _line_centres(gray, board, bases, axes, params, cam)
    centre_px = centre_px.reshape(len(lattice), 2, n_al, 2)
    ok = (ok & drawn).reshape(len(lattice), 2, n_al)
    pts, keep = [], []
    for n in range(len(lattice)):
        lines = []
        for ax in range(2):
            sel = ok[n, ax]
            if sel.sum() < 3:
                break
            lines.append(_fit_line(centre_px[n, ax][sel]))
        if len(lines) < 2:
            continue
        p = _intersect(*lines)
        if p is not None:
            pts.append(p)
            keep.append(n)
    if not pts:
        return np.zeros((0, 2)), np.zeros((0, 2))
    return np.asarray(pts, np.float64), lattice[keep].astype(np.float64)


def _lattice_samples(params: GridCameraParams) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Lattice points (L, 2) with a drawn line on both axes, and per point, per axis (x = i line
    first, then y = j), per along offset (both sides): the axis code, the board point and
    whether the line is drawn there."""
    lattice, axes, bases, drawn = [], [], [], []
    al = np.asarray(params.along_cells, np.float64)
    al = np.concatenate([-al[::-1], al])
    for i in range(9):
        for j in range(9):
            cells = {(c, r) for c in (i - 1, i) for r in (j - 1, j)} & _PLAYABLE_GRID
            if not cells:
                continue
            # a line x = i runs past (i, j) on the side of row r when cell (i-1, r) or (i, r) is
            # playable: the point is kept when both lines are drawn on at least one side (T and
            # L junctions on the board's edge reach furthest out, where the lens shows most)
            vert = [any((c, r) in _PLAYABLE_GRID for c in (i - 1, i)) for r in (j - 1, j)]
            horiz = [any((c, r) in _PLAYABLE_GRID for r in (j - 1, j)) for c in (i - 1, i)]
            if not (any(vert) and any(horiz)):
                continue
            lattice.append((i, j))
            for a in al:
                axes.append(0)
                bases.append((i, j + a))
                drawn.append(vert[int(a > 0)])
            for a in al:
                axes.append(1)
                bases.append((i + a, j))
                drawn.append(horiz[int(a > 0)])
    return np.asarray(lattice), np.asarray(axes), np.asarray(bases, np.float64), np.asarray(drawn)


def _grey_noise(gray: np.ndarray, board: BoardFit, cam: Intrinsics | None) -> float:
    """The frame's grey noise (sigma) on the board: the median absolute difference of
    neighbouring pixels around the cell centres of the board's middle (light cells or tops:
    both flat), over sqrt(2)."""
    pts = np.array([[c + 0.5, r + 0.5] for c in range(2, 6) for r in range(2, 6)], np.float64)
    px = apply_homography(board.H_board_to_image, pts)
    if cam is not None:
        px = cam.distort_points(px)
    h, w = gray.shape
    diffs = []
    for x, y in px.astype(int):
        if 3 <= x < w - 4 and 3 <= y < h - 4:
            patch = gray[y - 3:y + 4, x - 3:x + 4]
            diffs.append(np.abs(np.diff(patch, axis=1)).ravel())
    if not diffs:
        return 1.0
    return max(float(np.median(np.concatenate(diffs))) / 0.6745 / math.sqrt(2), 0.5)


def _fit_line(pts: np.ndarray) -> tuple[np.ndarray, float]:
    """Total least squares line through (N, 2) points: (unit normal, offset)."""
    m = pts.mean(axis=0)
    _, _, vt = np.linalg.svd(pts - m)
    n = vt[-1]
    return n, float(n @ m)


def _intersect(a: tuple[np.ndarray, float], b: tuple[np.ndarray, float]) -> np.ndarray | None:
    A = np.stack([a[0], b[0]])
    if abs(np.linalg.det(A)) < 0.3:  # the lines are far from perpendicular: a bad measurement
        return None
    return np.linalg.solve(A, np.array([a[1], b[1]]))


def line_samples(
    frame: np.ndarray, board: BoardFit, params: GridCameraParams = GridCameraParams(),
    intrinsics: Intrinsics | None = None,
) -> LineSamples:
    """The centres of the kit board's 18 grid lines (x = 0..8, y = 0..8) in captured px, at
    `samples_per_side` points along every drawn side of a cell, away from the crossings (a
    centred piece's rim stays 0.4 cells from its centre, clear of the short profiles)."""
    gray = as_gray(frame).astype(np.float32)
    cam = board_intrinsics(board, intrinsics)
    pts, axes, ids = [], [], []
    tt = np.linspace(0.2, 0.8, params.samples_per_side)
    for axis, c, lo, hi in _SEGMENTS:
        for t in tt:
            a = lo + (hi - lo) * t
            pts.append((c, a) if axis == 0 else (a, c))
            axes.append(axis)
            ids.append(int(c) + 9 * axis)
    pts_b, axis_a, id_a = np.asarray(pts, np.float64), np.asarray(axes), np.asarray(ids)
    centre_px, ok = _line_centres(gray, board, pts_b, axis_a, params, cam)
    return LineSamples(centre_px[ok], id_a[ok])


def _line_centres(
    gray: np.ndarray, board: BoardFit, pts_b: np.ndarray, axes: np.ndarray, params: GridCameraParams,
    cam: Intrinsics | None,
) -> tuple[np.ndarray, np.ndarray]:
    """Cross profiles at board points on drawn lines: (centre captured px (N, 2), seen (N,))."""
    offs = np.linspace(-params.profile_half_cells, params.profile_half_cells, params.profile_samples)
    vals, _, px, inside = line_profiles(gray, board.H_board_to_image, pts_b, axes, offs, cam)
    k, frac, darkest = darkest_subpixel(vals)
    ends = np.minimum(vals[:, :3].mean(axis=1), vals[:, -3:].mean(axis=1))
    noise = _grey_noise(gray, board, cam)
    ok = inside & (ends - darkest > params.min_contrast_sigmas * noise)
    ok &= (k > 1) & (k < params.profile_samples - 2)  # a minimum at the end is not the line
    rows = np.arange(len(k))
    t = np.clip(k + frac, 0, params.profile_samples - 1)
    i0 = np.floor(t).astype(int).clip(0, params.profile_samples - 2)
    w1 = (t - i0)[:, None]
    return px[rows, i0] * (1 - w1) + px[rows, i0 + 1] * w1, ok


def grid_camera(
    frame: np.ndarray, board: BoardFit, params: GridCameraParams = GridCameraParams(),
    pool: FocalPool | None = None,
) -> tuple[Intrinsics, dict[str, float], np.ndarray, np.ndarray] | None:
    """The camera from one frame of the kit's board: the lens from the lines' straightness
    (`vision.lens.fit_lens_to_lines`: a pixel mapping, whatever the focal length), then the
    focal length from the undistorted lattice points' homography (principal point at the
    image centre, square pixels). Returns (intrinsics, {"focal_px", "focal_sigma_px",
    "grid_points", "line_points"}, grid points px, grid points board) or None when the grid
    gives too few points.

    The focal length's sigma adds, to the points' own scatter, what a principal point
    `principal_point_fraction` of the image off centre would change: near head on that is most
    of it (the vanishing points are far, and a shifted centre moves the focal length a lot).
    With `pool` (the same camera's earlier board fits) this frame's estimate joins it, and
    the camera is refitted through the pooled focal length when that is the better known
    (info then also holds the frame's own "frame_focal_px", "frame_focal_sigma_px")."""
    from vision.lens import fit_lens_to_lines

    w, h = frame.shape[1], frame.shape[0]
    f_prior = focal_from_hfov(w, params.prior_hfov_deg)
    lens = None
    for _ in range(2):  # the second pass looks for the lines where the first lens puts them
        lines = line_samples(frame, board if lens is None else fit_from_corners(board.corners_px, "domination", lens),
                             params)
        if len(lines.points_px) < params.min_points:
            break
        lens = fit_lens_to_lines(lines, (w, h), f_prior) or lens
    if lens is None:
        lens = Intrinsics(np.array([[f_prior, 0, (w - 1) / 2.0], [0, f_prior, (h - 1) / 2.0], [0, 0, 1.0]]),
                          np.zeros(5), (w, h))
    fit = fit_from_corners(board.corners_px, "domination", lens)
    pts_px, pts_board = grid_points(frame, fit, params)
    if len(pts_px) < params.min_points:
        return None
    und = lens.undistort_points(pts_px)
    f, sigma = _focal_and_sigma(und, pts_board, (w, h), params)
    if f is None or not 0.3 * f_prior < f < 4.0 * f_prior:
        # head on: the grid does not tell the focal length; the prior's, not the grid's wrong
        # confident one (the stacks settle it, `read_tops`). Where only a centre shifted one
        # way leaves no solution, the grid's value is still the best guess (sigma infinite)
        f, sigma = f_prior, math.inf
    got = _grid_fit(lens, f, f_prior, sigma, pts_px, pts_board, (w, h), len(lines.points_px), params)
    if pool is None:
        return got
    cam, info, pts_px, pts_board = got
    pool.add(info["focal_px"], info["focal_sigma_px"], (w, h))
    pooled = pool.estimate()
    if pooled is None or not pooled[1] < info["focal_sigma_px"]:
        return got
    cam, pooled_info, pts_px, pts_board = _grid_fit(lens, pooled[0], f_prior, pooled[1], pts_px, pts_board,
                                                    (w, h), len(lines.points_px), params, fix_focal=True)
    pooled_info.update(frame_focal_px=info["focal_px"], frame_focal_sigma_px=info["focal_sigma_px"])
    return cam, pooled_info, pts_px, pts_board


def _grid_fit(lens: Intrinsics, f: float, f_prior: float, sigma: float, pts_px: np.ndarray,
              pts_board: np.ndarray, size: tuple[int, int], line_points: int, params: GridCameraParams,
              *, fix_focal: bool = False) -> tuple[Intrinsics, dict[str, float], np.ndarray, np.ndarray]:
    """The camera refined on the lattice points from the focal length `f` (kept, with its
    `sigma`, when `fix_focal` or the sigma is infinite), outliers dropped; as `grid_camera`
    returns it."""
    fix_focal = fix_focal or not math.isfinite(sigma)
    w, h = size
    start = _with_focal(lens, f, f_prior)
    # a crossing a leaning stack or its shadow covers is measured pixels off (most are within
    # a tenth of one): dropped where the camera fitted on the others misses it by more than
    # three robust sigmas of their scatter (at least half a pixel)
    keep = np.ones(len(pts_px), bool)
    cam = start
    for _ in range(params.outlier_passes):
        cam, res = _refined(start, pts_px[keep], pts_board[keep], pts_px, pts_board,
                            fix_focal=fix_focal)
        new = res < max(params.min_outlier_px, 3.0 * 1.4826 * float(np.median(res[keep])))
        if (new == keep).all() or new.sum() < params.min_points:
            break
        keep = new
    pts_px, pts_board = pts_px[keep], pts_board[keep]
    if not fix_focal:
        f_hom, sigma = _focal_and_sigma(cam.undistort_points(pts_px), pts_board, (w, h), params)
        f_first = f
        f = float(cam.camera_matrix[0, 0])
        # the lens and the perspective trade off: the three estimates (lines' lens and
        # homography, the lattice's camera, its homography) disagree by what the grid cannot
        # tell apart, a share of the sigma
        spread = [v for v in (f_first, f_hom) if v is not None]
        sigma = math.hypot(sigma, max(abs(v - f) for v in spread))
        if f_hom is None:  # the refined lattice says it cannot tell after all: the prior
            return _grid_fit(lens, f_prior, f_prior, math.inf, pts_px, pts_board, size, line_points, params)
    info = {"focal_px": float(f), "focal_sigma_px": float(sigma), "grid_points": float(len(pts_px)),
            "line_points": float(line_points)}
    return cam, info, pts_px, pts_board


def _focal_and_sigma(und_px: np.ndarray, pts_board: np.ndarray, size: tuple[int, int],
                     params: GridCameraParams) -> tuple[float | None, float]:
    """Focal length from undistorted grid points, and its sigma: the points' scatter (the
    homography's residual, through a finite-difference gradient), the principal point's and a
    keystone's; (None, inf) when the view does not fix it."""
    from vision.chessboard import focal_from_homography

    f = focal_from_homography(und_px, pts_board, size)
    if f is None:
        return None, math.inf
    H = _homography(pts_board, und_px)
    res = np.linalg.norm(apply_homography(H, pts_board) - und_px, axis=1)
    noise = max(float(np.sqrt(np.mean(res**2))), 0.05)
    var = 0.0
    eps = 0.25
    for i in range(len(und_px)):
        for d in (0, 1):
            q = und_px.copy()
            q[i, d] += eps
            fi = focal_from_homography(q, pts_board, size)
            if fi is None:
                return f, math.inf
            var += ((fi - f) / eps * noise) ** 2
    # the principal point: shifting it by delta is shifting every point by -delta
    # (either way along both axes: near head on one side of the centre has no solution at all)
    delta = params.principal_point_fraction * max(size)
    for shift in ((delta, 0.0), (-delta, 0.0), (0.0, delta), (0.0, -delta)):
        fi = focal_from_homography(und_px - np.asarray(shift), pts_board, size)
        if fi is None:
            return f, math.inf
        var += 0.5 * (fi - f) ** 2
    # near head on the focal length rests on the homography's perspective terms alone, which
    # an error correlated over the board moves without showing in the residual: a lens's
    # tangential terms (about 1e-3 on Pi-class lenses: a pixel at the board's edge) put a
    # keystone of that size on the grid. A keystone either way that leaves no focal length,
    # or one 1.5 times off, is a view that does not fix it (a seed-9 frame 0.5 degrees from
    # head on claimed 4.2 times the focal length, sigma 18 %, and misread 29 of 39 stacks):
    # no focal length from it at all (None)
    lo, hi = pts_board.min(axis=0), pts_board.max(axis=0)
    mid, half = 0.5 * (lo + hi), np.maximum(0.5 * (hi - lo), 1e-6)
    budget = max(params.keystone_sigmas * noise, params.keystone_min_px)
    for axis in (0, 1):
        t = (pts_board[:, axis] - mid[axis]) / half[axis]  # -1 .. 1 across the board
        # a keystone: the far side's spacing up, the near side's down, by `budget` px at the edge
        centre_px = und_px.mean(axis=0)
        shift = (und_px - centre_px) * (t * budget / np.maximum(np.linalg.norm(und_px - centre_px, axis=1), 1e-6))[:, None]
        for sign in (1.0, -1.0):
            fi = focal_from_homography(und_px + sign * shift, pts_board, size)
            if fi is None or not f / 1.5 < fi < 1.5 * f:
                return None, math.inf
            var += 0.5 * (fi - f) ** 2
    return f, math.sqrt(var)


def _refined(cam: Intrinsics, pts_px: np.ndarray, pts_board: np.ndarray, all_px: np.ndarray,
             all_board: np.ndarray, *, fix_focal: bool) -> tuple[Intrinsics, np.ndarray]:
    """`cam` refitted on the lattice points (`cv2.calibrateCamera`, one view: pose, k1, k2 and
    the tangential terms, the principal point fixed at the image centre, square pixels, and
    the focal length too when the grid does not tell it). The straightness of the lines leaves
    the spacing along them free (k1 against k2); the points fix it, and with it each cell's
    size in the picture, which is what a stack's height is read against (one piece is about
    1 % of it). Returns the camera and how far it misses each of `all_px` (px), posed as fitted."""
    import cv2

    obj = np.c_[pts_board, np.zeros(len(pts_board))].astype(np.float32)
    flags = (cv2.CALIB_USE_INTRINSIC_GUESS | cv2.CALIB_FIX_PRINCIPAL_POINT | cv2.CALIB_FIX_ASPECT_RATIO
             | cv2.CALIB_FIX_K3)
    if fix_focal:
        flags |= cv2.CALIB_FIX_FOCAL_LENGTH
    crit = (cv2.TERM_CRITERIA_COUNT + cv2.TERM_CRITERIA_EPS, 60, 1e-10)
    d0 = np.array(cam.dist_coeffs, np.float64).ravel()[:5]
    _, K, d, rvecs, tvecs = cv2.calibrateCamera([obj], [pts_px.astype(np.float32)], cam.image_size,
                                                np.array(cam.camera_matrix), d0.copy(), flags=flags,
                                                criteria=crit)
    proj, _ = cv2.projectPoints(np.c_[all_board, np.zeros(len(all_board))], rvecs[0], tvecs[0], K, d)
    res = np.linalg.norm(proj.reshape(-1, 2) - all_px, axis=1)
    return Intrinsics(K, np.asarray(d, np.float64).ravel()[:5], cam.image_size), res


def _homography(src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """Least-squares homography src -> dst over all points (no outlier rejection)."""
    import cv2

    H, _ = cv2.findHomography(np.asarray(src, np.float64), np.asarray(dst, np.float64), 0)
    return H


def _with_focal(lens: Intrinsics, f: float, f_lens: float) -> Intrinsics:
    """`lens` (its coefficients normalised by `f_lens`) re-expressed for the focal length `f`:
    the same pixel mapping."""
    q = f / f_lens
    d = np.array(lens.dist_coeffs, np.float64).ravel()
    d5 = np.zeros(5)
    d5[: min(5, d.size)] = d[:5]
    d5[0] *= q**2
    d5[1] *= q**4
    d5[2] *= q
    d5[3] *= q
    d5[4] *= q**6
    K = np.array(lens.camera_matrix, np.float64)
    K[0, 0] = K[1, 1] = f
    return Intrinsics(K, d5, lens.image_size)


def with_grid_camera(
    frame: np.ndarray, board: BoardFit, params: GridCameraParams = GridCameraParams(),
    pool: FocalPool | None = None,
) -> BoardFit:
    """`board` re-fitted through the camera found from its grid (see the module's text), or
    `board` itself when its grid gives too few points or it already carries a camera model;
    with `pool`, through the focal length pooled over the camera's board fits (`FocalPool`)."""
    if board.game != "domination" or board_intrinsics(board) is not None:
        return board
    got = grid_camera(frame, board, params, pool)
    if got is None:
        return board
    cam, info, pts_px, pts_board = got
    fit = fit_from_corners(board.corners_px, "domination", cam)
    extra = {**board.extra, "lens": "grid", "intrinsics": cam, "grid_points": int(info["grid_points"]),
             "focal_sigma_px": info["focal_sigma_px"], "grid_points_px": pts_px,
             "grid_points_board": pts_board}
    return BoardFit(board.corners_px, fit.H_image_to_board, fit.H_board_to_image, board.game, board.method,
                    board.residual_px, board.support, extra)


class FocalPool:
    """The focal length of one fixed camera pooled over its board fits (frames of new views:
    the board bumped, the stand knocked), as the referee sees them one after another.

    Each view's estimate is log-normal (sigma relative); they are pooled by inverse variance,
    head-on views (an infinite sigma) adding nothing. A bump changes the view a little, so
    the views' errors are partly shared: the pooled sigma is kept at no less than half the
    best single view's (four independent views' worth). A frame of another size, or a view
    whose estimate disagrees with the pool by more than `knock_sigmas` of their joint sigma (a
    knock that moved the focus, another camera), starts the pool again from that view."""

    def __init__(self, knock_sigmas: float = 3.0) -> None:
        if not knock_sigmas > 0:
            raise ValueError(f"knock_sigmas must be > 0, got {knock_sigmas}")
        self.knock_sigmas = float(knock_sigmas)
        self.reset()

    def reset(self) -> None:
        """Forget every view (a new camera)."""
        self.image_size: tuple[int, int] | None = None
        self.views = 0
        self._weight = 0.0
        self._weighted_log = 0.0
        self._best_rel = math.inf

    def add(self, focal_px: float, focal_sigma_px: float, image_size: tuple[int, int]) -> bool:
        """One view's estimate; True when it started the pool again (see the class)."""
        if not focal_px > 0:
            raise ValueError(f"focal_px must be > 0, got {focal_px}")
        restarted = False
        size = (int(image_size[0]), int(image_size[1]))
        if self.image_size is not None and size != self.image_size:
            self.reset()
            restarted = True
        self.image_size = size
        rel = float(focal_sigma_px) / float(focal_px)
        if not math.isfinite(rel) or rel <= 0:
            return restarted
        now = self.estimate()
        if now is not None:
            joint = math.hypot(now[1] / now[0], rel)
            if abs(math.log(focal_px / now[0])) > self.knock_sigmas * joint:
                self.reset()
                self.image_size = size
                restarted = True
        w = 1.0 / rel**2
        self._weight += w
        self._weighted_log += w * math.log(focal_px)
        self._best_rel = min(self._best_rel, rel)
        self.views += 1
        return restarted

    def estimate(self) -> tuple[float, float] | None:
        """(focal px, sigma px) pooled, or None before a view that tells the focal length."""
        if self._weight <= 0:
            return None
        f = math.exp(self._weighted_log / self._weight)
        rel = max(1.0 / math.sqrt(self._weight), 0.5 * self._best_rel)
        return f, f * rel
