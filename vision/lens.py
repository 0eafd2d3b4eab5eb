"""An approximate lens model from the Dition board itself, for frames without a calibration.

Plumb-line method: the eight drawn edges of the outer and inner squares are straight on paper,
so in the picture they bend only by lens distortion. Across each drawn line, intensity profiles
in the captured frame locate the dark line centre (parabola through the minimum); a radial model
(k1, and k2 when the lines reach far enough from the centre to tell the two apart) with the
distortion centre at the image centre is fitted by minimising the distance of the undistorted
points from a straight line per drawn edge (robust least squares, soft-L1).

The focal length only sets the scale of the normalised radius (the pixel mapping is the same for
(f, k1, k2) and (f', k1 (f'/f)^2, k2 (f'/f)^4)); it is taken from the perspective of the board's
homography as `vision.geometry.camera_geometry` does, so that the thickness correction downstream
sees a plausible camera.

Stage: `estimate_intrinsics_from_board(frame, board, params) -> Intrinsics | None` (None when
the lines give too few samples or the fit is not trustworthy: then the caller keeps the plain
homography). `vision.dition_board.with_estimated_lens(frame, board, params)` returns the board
re-fitted through the estimate, marked `extra["lens"] = "estimated"` and carrying
`extra["intrinsics"]`, which `vision.geometry.board_intrinsics` hands to every later stage (no
per-frame cost).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from vision.camera import Intrinsics
from vision.geometry import (
    DITION_DRAWING,
    GRID_8X8,
    BoardFit,
    LineDrawing,
    as_gray,
    board_intrinsics,
    camera_geometry,
    darkest_subpixel,
    line_profiles,
)


@dataclass(frozen=True)
class LensParams:
    """Tuning of the plumb-line lens estimate (shipped defaults)."""

    #: samples along each drawn line per Dition board unit (a twentieth of the board's side:
    #: on other drawings per twentieth of their side, the same density in the picture)
    samples_per_unit: float = 3.0
    #: half-length of each cross profile in board units (distortion bows a line by a few px)
    profile_halfwidth_board: float = 0.35
    #: ... when that finds too few lines around the plain homography's prediction, a second
    #: try this wide (the squares are 3 units apart: it cannot jump to the other square)
    first_profile_halfwidth_board: float = 0.8
    #: minimum darkness of the line centre below both sides (grey levels)
    min_line_contrast: float = 10.0
    #: a drawn line is used when at least this many of its samples are good
    min_points_per_line: int = 12
    #: the estimate needs at least this many usable lines (of 8) with both directions present
    min_lines: int = 6
    #: fit k2 too when the samples reach this share of the image's half-diagonal (else k1 only)
    min_radius_for_k2: float = 0.3
    #: also fit the tangential (decentring) terms p1, p2
    fit_tangential: bool = True
    #: reject an estimate whose |p1| or |p2| (radii in half-diagonals) reaches this
    max_abs_p: float = 0.05
    #: soft-L1 scale of the straightness residuals (px)
    residual_scale_px: float = 0.3
    #: reject an estimate whose |k1| or |k2| (radii in half-diagonals) reaches this
    max_abs_k: float = 2.0
    #: reject an estimate when the robust straightness residual stays above this (px)
    max_residual_px: float = 1.0
    #: the model must shrink the median distance of the line points from straight lines by at
    #: least this factor (a distortion-free camera leaves only noise: ~0.03 px either way)
    min_improvement: float = 2.0
    #: horizontal field of view assumed when the homography cannot tell the focal length
    default_hfov_deg: float = 62.2


@dataclass(frozen=True)
class LineSamples:
    """Centres of the drawn lines in captured pixels: points_px (N, 2) and line_id (N,) 0..7."""

    points_px: np.ndarray
    line_id: np.ndarray


def drawing_for(board: BoardFit) -> LineDrawing | None:
    """The straight lines drawn on `board`: the Dition board's squares, the 8x8 grid of a
    Domination board found from its lines (method "lines"); None for any other board."""
    if board.game == "dition":
        return DITION_DRAWING
    return GRID_8X8 if board.method == "lines" else None


def _line_layout(samples_per_unit: float, drawing: LineDrawing) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Board points on the drawn lines (away from their ends): points (N, 2), axis (N,)
    (0: the line x = c, 1: the line y = c), line id (N,)."""
    pts, axis, ids = [], [], []
    for lid, (ax, c, lo, hi) in enumerate(drawing.lines):
        n = max(8, int((hi - lo) * samples_per_unit * 20.0 / drawing.size))
        t = np.linspace(lo + 0.45, hi - 0.45, n)
        on = np.full_like(t, c)
        pts.append(np.stack([on, t], axis=1) if ax == 0 else np.stack([t, on], axis=1))
        axis.append(np.full(n, ax, int))
        ids.append(np.full(n, lid))
    return np.concatenate(pts), np.concatenate(axis), np.concatenate(ids)


def sample_drawn_lines(
    frame: np.ndarray, board: BoardFit, params: LensParams = LensParams()
) -> LineSamples:
    """The centres of the board's drawn lines (`drawing_for`: the 8 of the Dition board, the 18 of
    a drawn 8x8) in captured pixels, found by cross profiles around where `board` (and its lens,
    if any) predicts them. Pieces on a line drop samples."""

    gray = as_gray(frame)
    intr = board_intrinsics(board)
    drawing = drawing_for(board) or DITION_DRAWING
    pts_b, axis, ids = _line_layout(params.samples_per_unit, drawing)
    n_prof = 41
    # (a profile stays short of the next parallel line)
    half = min(params.profile_halfwidth_board, 0.45 * drawing.spacing)
    s = np.linspace(-half, half, n_prof)
    vals, _, pp, inside = line_profiles(gray, board.H_board_to_image, pts_b, axis, s, intr)
    k, off, y1 = darkest_subpixel(vals)
    rows = np.arange(len(vals))
    # both sides of the line: the samples a few line widths away from the minimum
    gap = max(3, n_prof // 10)
    idx = np.arange(n_prof)[None, :]
    left_mask = (idx < (k - gap)[:, None]) & (idx >= (k - 3 * gap)[:, None])
    right_mask = (idx > (k + gap)[:, None]) & (idx <= (k + 3 * gap)[:, None])
    with np.errstate(invalid="ignore", divide="ignore"):
        left = np.where(left_mask.any(1), (vals * left_mask).sum(1) / left_mask.sum(1), np.nan)
        right = np.where(right_mask.any(1), (vals * right_mask).sum(1) / right_mask.sum(1), np.nan)
    contrast = np.minimum(left, right) - y1
    ok = inside & np.isfinite(contrast) & (contrast > params.min_line_contrast)
    # a drawn line is thin and dark between two similar light sides; a disc edge is a step
    ok &= np.abs(left - right) < 0.5 * (left + right - 2 * y1) + 5
    ok &= (k > 1) & (k < n_prof - 2)
    pos = np.clip(k + off, 0, n_prof - 1)
    i0 = np.clip(np.floor(pos).astype(int), 0, n_prof - 2)
    fr = pos - i0
    centre_px = pp[rows, i0] * (1 - fr)[:, None] + pp[rows, i0 + 1] * fr[:, None]
    pts, ids = centre_px[ok], ids[ok]
    keep = _on_their_lines(pts, ids)
    return LineSamples(pts[keep], ids[keep])


def _on_their_lines(pts: np.ndarray, ids: np.ndarray, tol_px: float = 2.0) -> np.ndarray:
    """Which points lie on the straight line of their group: a piece's edge that passed for a
    drawn line lands far off it (pieces stand across a drawn 8x8's lines), while a lens bows a
    line by a few px over its length. Per group the line through two of its points that most
    points lie within `tol_px` of (the centres' own precision, and the bow over a short stretch),
    then the points within 4 robust sigmas (at least `tol_px`) of the least-squares line
    through those."""
    keep = np.zeros(len(pts), bool)
    for j in np.unique(ids):
        idx = np.flatnonzero(ids == j)
        q = pts[idx]
        if len(q) < 3:
            keep[idx] = True
            continue
        a, b = np.triu_indices(len(q), 1)
        d = q[b] - q[a]
        n = np.stack([-d[:, 1], d[:, 0]], 1) / np.maximum(np.linalg.norm(d, axis=1), 1e-9)[:, None]
        dist = np.abs(((q[None, :, :] - q[a][:, None, :]) * n[:, None, :]).sum(axis=2))  # (pairs, pts)
        best = dist[int(np.argmax((dist <= tol_px).sum(axis=1)))] <= tol_px
        m = q[best].mean(axis=0)
        normal = np.linalg.svd(q[best] - m, full_matrices=False)[2][1]
        off = np.abs((q - m) @ normal)
        mad = 1.4826 * float(np.median(off[best]))
        keep[idx] = off <= max(4.0 * mad, tol_px)
    return keep


def _undistort_normalised(
    xd: np.ndarray, yd: np.ndarray, k1: float, k2: float, p1: float = 0.0, p2: float = 0.0
) -> tuple[np.ndarray, np.ndarray]:
    """Invert OpenCV's x_d = x_u (1 + k1 r^2 + k2 r^4) + tangential(p1, p2) by fixed-point
    iteration (small coefficients)."""
    xu, yu = xd.copy(), yd.copy()
    for _ in range(12):
        r2 = xu * xu + yu * yu
        f = 1.0 + r2 * (k1 + k2 * r2)
        f = np.where(np.abs(f) > 0.2, f, 0.2)
        tx = 2 * p1 * xu * yu + p2 * (r2 + 2 * xu * xu)
        ty = p1 * (r2 + 2 * yu * yu) + 2 * p2 * xu * yu
        xu, yu = (xd - tx) / f, (yd - ty) / f
    return xu, yu


def _straightness_residuals(
    xn: np.ndarray, yn: np.ndarray, ids: np.ndarray, n_lines: int, coeffs: tuple[float, float, float, float],
    focal_px: float,
) -> np.ndarray:
    """Distance (px) of every undistorted point from the total-least-squares line of its group.
    coeffs = (k1, k2, p1, p2)."""
    xu, yu = _undistort_normalised(xn, yn, *coeffs)
    cnt = np.bincount(ids, minlength=n_lines).astype(np.float64)
    cnt = np.maximum(cnt, 1)
    mx = np.bincount(ids, xu, n_lines) / cnt
    my = np.bincount(ids, yu, n_lines) / cnt
    dx, dy = xu - mx[ids], yu - my[ids]
    sxx = np.bincount(ids, dx * dx, n_lines)
    syy = np.bincount(ids, dy * dy, n_lines)
    sxy = np.bincount(ids, dx * dy, n_lines)
    # the line's direction: principal axis of the 2x2 scatter
    theta = 0.5 * np.arctan2(2 * sxy, sxx - syy)
    nx, ny = -np.sin(theta), np.cos(theta)
    return (dx * nx[ids] + dy * ny[ids]) * focal_px


def estimate_focal_px(board: BoardFit, image_size: tuple[int, int], default_hfov_deg: float = 62.2) -> float:
    """Focal length (px) from the perspective of the board's homography (principal point at the
    image centre), or from `default_hfov_deg` when the view is too square-on to tell."""
    return camera_geometry(board, image_size, None, default_hfov_deg).focal_px


def estimate_intrinsics_from_board(
    frame: np.ndarray,
    board: BoardFit,
    params: LensParams = LensParams(),
    *,
    focal_px: float | None = None,
) -> Intrinsics | None:
    """A radial lens model (k1[, k2]) from the straightness of the board's drawn lines (the Dition
    board's squares, a drawn 8x8's grid), with the distortion centre at the image centre; None
    when the lines do not allow a reliable estimate or the board has none."""
    gray = as_gray(frame)
    h, w = gray.shape
    if drawing_for(board) is None:
        return None
    samples = sample_drawn_lines(gray, board, params)
    f = float(focal_px) if focal_px is not None else estimate_focal_px(board, (w, h), params.default_hfov_deg)
    return fit_lens_to_lines(samples, (w, h), f, params)


def fit_lens_to_lines(
    samples: LineSamples, image_size: tuple[int, int], focal_px: float, params: LensParams = LensParams()
) -> Intrinsics | None:
    """The plumb-line fit: a lens model (principal point at the image centre, focal length
    `focal_px`) under which every group of `samples` (one group per straight line) is straight.
    None when too few lines carry enough samples or the fit is not trustworthy."""
    from scipy.optimize import least_squares

    w, h = image_size
    n_ids = int(samples.line_id.max()) + 1 if len(samples.line_id) else 0
    counts = np.bincount(samples.line_id, minlength=n_ids)
    good_lines = np.flatnonzero(counts >= params.min_points_per_line)
    if len(good_lines) < params.min_lines:
        return None
    keep = np.isin(samples.line_id, good_lines)
    pts = samples.points_px[keep]
    remap = np.full(n_ids, -1)
    remap[good_lines] = np.arange(len(good_lines))
    ids = remap[samples.line_id[keep]]
    n_lines = len(good_lines)
    # two directions must be present: straight lines all parallel leave the lens undetermined
    d = np.zeros((n_lines, 2))
    for j in range(n_lines):
        q = pts[ids == j] - pts[ids == j].mean(axis=0)
        d[j] = np.linalg.svd(q, full_matrices=False)[2][0]
    if np.min(np.abs(d @ d[0])) > math.cos(math.radians(30)):
        return None
    f = float(focal_px)
    cx, cy = (w - 1) / 2.0, (h - 1) / 2.0
    # the fit runs in coordinates normalised by the image's half-diagonal R (well conditioned
    # whatever the focal length guess), and is converted to f at the end
    R = math.hypot(w, h) / 2.0
    xn, yn = (pts[:, 0] - cx) / R, (pts[:, 1] - cy) / R
    r_max = float(np.sqrt(np.max(xn * xn + yn * yn)))
    fit_k2 = r_max >= params.min_radius_for_k2
    fit_p = params.fit_tangential

    def unpack(x: np.ndarray) -> tuple[float, float, float, float]:
        k1 = float(x[0])
        k2 = float(x[1]) if fit_k2 else 0.0
        p1, p2 = (float(x[-2]), float(x[-1])) if fit_p else (0.0, 0.0)
        return k1, k2, p1, p2

    def resid(x: np.ndarray) -> np.ndarray:
        return _straightness_residuals(xn, yn, ids, n_lines, unpack(x), R)

    n_par = 1 + fit_k2 + 2 * fit_p
    bound = np.full(n_par, params.max_abs_k)
    if fit_p:
        bound[-2:] = params.max_abs_p
    sol = least_squares(resid, np.zeros(n_par), loss="soft_l1", f_scale=params.residual_scale_px,
                        bounds=(-bound, bound), x_scale=0.01)
    if not sol.success or np.any(np.abs(sol.x) >= 0.999 * bound):
        return None
    r = np.abs(resid(sol.x))
    if float(np.median(r)) * 1.4826 > params.max_residual_px:
        return None
    # a lens that explains no more than the noise is no lens: keep the plain homography
    r0 = np.abs(resid(np.zeros(n_par)))
    if float(np.median(r0)) < params.min_improvement * float(np.median(r)):
        return None
    k1r, k2r, p1r, p2r = unpack(sol.x)
    # the model must be monotonic over the picture (a real lens does not fold back)
    rr = np.linspace(0, 1.05, 64)
    rd = rr * (1 + k1r * rr**2 + k2r * rr**4)
    if np.any(np.diff(rd) <= 0):
        return None
    # the same pixel mapping with radii normalised by f: r_R = r_f * f / R
    q = f / R
    k1, k2, p1, p2 = k1r * q**2, k2r * q**4, p1r * q, p2r * q
    K = np.array([[f, 0.0, cx], [0.0, f, cy], [0.0, 0.0, 1.0]])
    return Intrinsics(K, np.array([k1, k2, p1, p2, 0.0]), (w, h))
