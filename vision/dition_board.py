"""The Dition board from its drawn squares (no markers, no corners), and its lens.

Line search: thin dark structures (morphological black-hat) -> Hough lines -> every pair
of extreme lines per direction family is a hypothesis for the outer square, scored by how much
of the predicted outer *and* inner squares is drawn -> sub-pixel refinement: across each of the
eight predicted lines, intensity profiles in the full frame give the dark line centre (parabola
through the minimum); a robust least-squares homography fits all those points at once
(each point on the line x = c gives one linear equation). Discs lying on a line only remove
samples, they do not bias the fit. The drawn squares are `vision.geometry.DITION_SQUARES`
(outer [0,20]^2 and inner [3,17]^2, dark lines 0.06 units wide centred on the edges).

A board with no drawn lines (`find_dition_edge`, method "edge"): its own edge against the table
is the playing area's edge; colour edges (Lab, smoothed past the felt's or the grain's texture)
-> Hough lines -> the quadrilateral with one board inside and the table outside all around ->
sub-pixel: the step across each edge, in the board-minus-table colour direction, at halfway.

The same line search finds any board drawn as straight lines (`LineDrawing`): `find_drawn_lines`
with `GRID_8X8` is a drawn 8x8 grid for Domination (9 + 9 lines, no alternating squares).

Without intrinsics `with_estimated_lens(frame, board)` estimates the lens from the drawn lines
(`vision.lens`) and re-fits the board through it by the same method (`refit_board`); the fit
then carries the model (extra["lens"] == "estimated", extra["intrinsics"]).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from vision.aruco import find_board_aruco
from vision.camera import Intrinsics
from vision.errors import BoardNotFoundError
from vision.geometry import (
    BOARD_SIZE,
    DITION_DRAWING,
    GRID_8X8,
    GRID_8X8_PLAYABLE,
    BoardFit,
    BoardParams,
    LineDrawing,
    apply_homography,
    as_gray,
    board_corners_board,
    board_intrinsics,
    darkest_subpixel,
    fit_from_corners,
    fit_from_homography,
    homography_4pt,
    homography_from_corners,
    line_profiles,
)
from vision.lens import LensParams, drawing_for, estimate_focal_px, estimate_intrinsics_from_board

#: the drawn lines' polarity: dark on a light board (paper, wood) or light on a dark one (felt)
LINE_POLARITIES = ("dark", "light")




def lines_gray(frame: np.ndarray, board: BoardFit | None = None, polarity: str | None = None) -> np.ndarray:
    """The grey frame in which the board's drawn lines are dark: as captured for dark lines,
    inverted for light lines (`polarity`, else the one the fit of `board` was found with,
    extra["lines"]; dark by default)."""
    pol = polarity or (board.extra.get("lines", "dark") if board is not None else "dark")
    gray = as_gray(frame)
    return gray if pol == "dark" else 255 - gray


def with_polarity(fit: BoardFit, polarity: str) -> BoardFit:
    """`fit` marked extra["lines"] = polarity (the refinements find the lines in `lines_gray`)."""
    return replace(fit, extra={**fit.extra, "lines": polarity})


def find_dition_lines(
    frame: np.ndarray, params: BoardParams = BoardParams(), *, intrinsics: Intrinsics | None = None
) -> BoardFit:
    """The Dition board from its drawn outer and inner squares (no markers, no corners): dark
    lines first, then light ones (the same search on the inverted frame). The fit carries the
    polarity (extra["lines"])."""
    return find_drawn_lines(frame, DITION_DRAWING, params, intrinsics=intrinsics)


def find_drawn_lines(
    frame: np.ndarray, drawing: LineDrawing, params: BoardParams = BoardParams(), *,
    intrinsics: Intrinsics | None = None,
) -> BoardFit:
    """A board drawn as `drawing`'s lines (method "lines"), dark lines first, then light ones;
    the fit carries the polarity (extra["lines"]). Corner 0 is the image's top-left one (the
    lines alone do not say which corner is which)."""
    tried = []
    for polarity in LINE_POLARITIES:
        gray = lines_gray(frame, polarity=polarity)
        try:
            H0 = _coarse_lines(gray, params, intrinsics, drawing)
        except BoardNotFoundError as exc:
            tried.append(f"{polarity} lines: {str(exc).removeprefix(drawing.name + ': ')}")
            continue
        fit = refine_dition(gray, H0, params, intrinsics, passes=3, drawing=drawing)
        if fit.support < params.min_support:
            tried.append(f"{polarity} lines: the drawn lines were not confirmed (only {fit.support:.0%} of "
                         f"the line samples agree)")
        elif drawing is DITION_DRAWING and frame.ndim == 3 and not _one_surface(frame, fit, intrinsics):
            tried.append(f"{polarity} lines: the squares found are not drawn on one surface (the band "
                         "between them and the middle differ in colour: a table's planks, not a board)")
        else:
            return with_polarity(fit, polarity)
    raise BoardNotFoundError(f"{drawing.name}: " + "; ".join(tried))


def drawn_lines_at(
    frame: np.ndarray, board: BoardFit, drawing: LineDrawing, params: BoardParams = BoardParams(), *,
    intrinsics: Intrinsics | None = None,
) -> BoardFit | None:
    """`drawing`'s lines re-fitted starting from where `board` (found by another finder, e.g.
    the kit's cells on an 8x8 drawn in ink) puts them, dark lines first, then light ones; the
    fit (method "lines", with its polarity) when the frame shows them there (support at least
    `params.min_support`, as `find_drawn_lines` confirms its own), else None."""
    for polarity in LINE_POLARITIES:
        fit = refine_dition(lines_gray(frame, polarity=polarity), board.H_image_to_board, params, intrinsics,
                            passes=3, drawing=drawing)
        if fit.support >= params.min_support:
            return with_polarity(fit, polarity)
    return None


#: colour samples of the band between the drawn squares and of the inner square's middle (board
#: units): along each side, 1.5 inside the outer square and 1.5 inside the inner one
_BAND_T = np.linspace(2.0, 18.0, 24)
_MIDDLE_T = np.linspace(5.0, 15.0, 16)


def _one_surface(frame: np.ndarray, fit: BoardFit, intrinsics: Intrinsics | None) -> bool:
    """Whether the band between the drawn squares and the inner square's middle are one material:
    their median chroma (Lab a, b: light gradients and hot spots change mostly L) within 4 times
    the chroma's spread along the band (the board's texture and the noise, measured on the
    frame, between neighbouring samples; discs cover a minority of either). Two squares of
    lines found on a table's planks around a felt square are not."""
    import cv2

    def ring(c: float, t: np.ndarray) -> np.ndarray:
        return np.concatenate([np.stack([np.full_like(t, c), t], 1), np.stack([np.full_like(t, 20 - c), t], 1),
                               np.stack([t, np.full_like(t, c)], 1), np.stack([t, np.full_like(t, 20 - c)], 1)])

    lab = _lab(frame)
    h, w = lab.shape[:2]
    vals = []
    for pts in (ring(1.5, _BAND_T), ring(4.5, _MIDDLE_T)):
        px = apply_homography(fit.H_board_to_image, pts)
        if intrinsics is not None:
            px = intrinsics.distort_points(px)
        inside = (px[:, 0] >= 0) & (px[:, 1] >= 0) & (px[:, 0] < w - 1) & (px[:, 1] < h - 1)
        m = px[inside].astype(np.float32).reshape(-1, 1, 2)
        vals.append(cv2.remap(lab, m[..., 0], m[..., 1], cv2.INTER_LINEAR).reshape(-1, 3)[:, 1:])
    band, middle = vals
    if len(band) < 8 or len(middle) < 8:
        return True  # too little in view to tell: the line support decides
    spread = max(1.4826 * float(np.median(np.linalg.norm(np.diff(band, axis=0), axis=1))) / math.sqrt(2), 2.0)
    return float(np.linalg.norm(np.median(band, axis=0) - np.median(middle, axis=0))) < 4 * spread


def board_score(frame: np.ndarray, board: BoardFit, params: BoardParams = BoardParams(), *,
                intrinsics: Intrinsics | None = None) -> float:
    """How well the frame shows the Dition board's drawn squares where `board` says they are
    (0..1): the share of the line samples that find a line there (dark or light, whichever
    agrees more), 0 when the lines found lie more than a third of a diameter away (a picture
    with no board there, or corners given for another picture); or, for a board with no lines,
    the share of its edge where one board meets the table, if that is more."""
    intrinsics = board_intrinsics(board, intrinsics)
    best = _edge_agreement(*_edge_sides(_lab(frame), board.H_board_to_image, intrinsics))[0]
    for polarity in LINE_POLARITIES:
        try:
            fit = refine_dition(lines_gray(frame, polarity=polarity), board.H_image_to_board, params, intrinsics,
                                passes=1)
        except BoardNotFoundError:
            continue
        moved = np.abs(apply_homography(board.H_image_to_board, apply_homography(fit.H_board_to_image,
                                                                                 board_corners_board("dition")))
                       - board_corners_board("dition")).max()
        if moved < 1 / 3:
            best = max(best, float(fit.support))
    return best


def _coarse_lines(gray: np.ndarray, params: BoardParams, intrinsics: Intrinsics | None,
                  drawing: LineDrawing) -> np.ndarray:
    """H_image_to_board (undistorted px) good to a few pixels, from Hough lines + verification:
    every quadrilateral of two lines of each family is a guess at the drawing's outer lines,
    scored by how much of all its lines is drawn where that guess puts them."""
    import cv2

    h, w = gray.shape
    f = min(1.0, params.search_width_px / w)
    small = cv2.resize(gray, (round(w * f), round(h * f)), interpolation=cv2.INTER_AREA) if f < 1 else gray
    if intrinsics is not None and intrinsics.has_distortion:
        # straighten the lines first: Hough wants straight lines (same camera matrix, scaled)
        k_small = intrinsics.scaled_to((small.shape[1], small.shape[0]))
        small = cv2.undistort(small, k_small.camera_matrix, k_small.dist_coeffs)
    k = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (7, 7))
    closed = cv2.morphologyEx(small, cv2.MORPH_CLOSE, k)
    bh = cv2.subtract(closed, small)  # black-hat: thin dark structures
    # only lines drawn on something bright (the plate), not the grain of a darker table
    bright = closed > 0.6 * float(np.percentile(closed, 95))
    bh[~bright] = 0
    thr = max(12.0, float(np.percentile(bh[bright], 97)) * 0.5) if bright.any() else 12.0
    mask = (bh > thr).astype(np.uint8) * 255
    # copies of one drawn line (its two edges, its bow under the lens) are merged: within 6 px,
    # or for a grid within 0.4 of the smallest square (the board fills a third of the view at
    # least: a square is >= 1/24 of the smaller side; its lines are a square apart)
    rho_tol = 6.0 if drawing is DITION_DRAWING else max(6.0, 0.4 * min(mask.shape) / 24)
    fam_a, fam_b = _line_families(mask, params, "lines", drawing.name, rho_tol)
    # score image: blackhat, dilated a little so a near miss still counts
    score_img = cv2.dilate((bh > thr).astype(np.uint8), np.ones((3, 3), np.uint8))
    # the strongest lines of each family: as many as the drawing has, and a few strays
    keep = 10 if drawing is DITION_DRAWING else 8 + max(sum(ln[0] == ax for ln in drawing.lines) for ax in (0, 1))
    fam_a = _sort_family(fam_a, keep)
    fam_b = _sort_family(fam_b, keep)
    quads = _all_quads(fam_a, fam_b, min_area=0.04 * small.shape[0] * small.shape[1])
    if len(quads) == 0:
        raise BoardNotFoundError(f"{drawing.name}: no large quadrilateral of lines in the frame")
    corners = board_corners_board(drawing.game)
    scores = _score_quads(quads, score_img, drawing.samples(0.3)[0], corners)
    if drawing.gaps:  # less what it finds where nothing is drawn
        scores -= _score_quads(quads, score_img, drawing.samples(0.3, gaps=True)[0], corners)
    k_best = int(np.argmax(scores))
    if scores[k_best] < params.min_support:
        raise BoardNotFoundError(
            f"{drawing.name}: no quadrilateral of lines looks like the drawn "
            f"{'squares' if drawing is DITION_DRAWING else 'grid'} (best agreement {max(float(scores[k_best]), 0):.0%})"
        )
    best = (float(scores[k_best]), quads[k_best])
    if drawing is GRID_8X8:  # judged on the lines the corner squares' marks leave in view
        best = _whole_grid(best, score_img, GRID_8X8_PLAYABLE)
    # back to full-size (undistorted) pixels; pixel centres scale about -0.5
    quad_px = (best[1] + 0.5) / f - 0.5
    quad_px = _canonical_corner_order(quad_px)
    return homography_4pt(quad_px, board_corners_board(drawing.game))


def _whole_grid(best: tuple[float, np.ndarray], score_img: np.ndarray,
                drawing: LineDrawing) -> tuple[float, np.ndarray]:
    """The whole grid rather than a part of it. The quadrilateral that scored best may be a
    sub-grid taken for the whole: the middle 4x4's outline (its 9 predicted lines per axis then
    fall every half square, every other one on a drawn line) or 8 of the 9 lines, one square
    off. Its two lines on each axis are two of the grid's, i0 and i0 + n squares in (n = 1 .. the
    grid's squares, i0 = 0 .. squares - n): each such (i0, n) on both axes is a whole grid of
    the same lines, extended over the frame. Each is scored on `drawing` (the grid's lines and
    the gaps half-way between them as far as the frame can show them: `GRID_8X8_PLAYABLE`, not
    under the corner squares' marks) as the coarse search scores a quadrilateral (the share of
    the lines' samples on drawn-line pixels, less the share of the gaps'), so every candidate is
    judged on the same lines along its whole outline: a sub-grid's extension onto lines the
    frame does not show (off the board, on the table) or a grid at half the spacing (lines
    across the squares' middles) loses, the whole grid wins (the quadrilateral as found is
    among them, i0 = 0 and n = squares)."""
    import cv2

    squares = round(drawing.size / drawing.spacing)
    H_b2i = homography_4pt(board_corners_board(drawing.game), best[1])
    # an extension carries the found lines' error (a pixel or so of the Hough lines' resolution)
    # out by up to `squares` times: a line within a tenth of the found square's side of a
    # candidate's counts as seen (the refinement's first pass searches 0.4 squares either side;
    # the gaps stay 0.4 squares from the lines)
    side_px = float(np.mean(np.linalg.norm(best[1] - np.roll(best[1], 1, axis=0), axis=1))) / squares
    reach = max(1, round(0.1 * side_px))
    near_img = cv2.dilate(score_img, np.ones((2 * reach + 1, 2 * reach + 1), np.uint8))
    # per axis: the grid's outline [lo, hi] in the found quadrilateral's board units (its lines
    # at 0 and size are lines i0 and i0 + n of the whole grid: a square is size / n of them)
    n_i0 = np.array([(n, i0) for n in range(1, squares + 1) for i0 in range(squares - n + 1)])
    spans = np.stack([-n_i0[:, 1], squares - n_i0[:, 1]], 1) * drawing.size / n_i0[:, :1]
    ix, iy = (i.ravel() for i in np.meshgrid(np.arange(len(spans)), np.arange(len(spans)), indexing="ij"))
    # the squares are square: a part of n_x by n_y squares taken for the whole looks n_x / n_y as
    # wide as high, give or take the view's foreshortening (cos 37 degrees: 1.25, more than the
    # coarse search's quadrilaterals allow)
    q = best[1]
    wide = (np.linalg.norm(q[1] - q[0]) + np.linalg.norm(q[2] - q[3])) / (
        np.linalg.norm(q[3] - q[0]) + np.linalg.norm(q[2] - q[1]))
    square = np.abs(np.log(n_i0[ix, 0] / n_i0[iy, 0] / wide)) < np.log(1.25)
    ix, iy = ix[square], iy[square]
    lo = np.stack([spans[ix, 0], spans[iy, 0]], 1)[:, None, :]  # (K, 1, 2)
    scale = np.stack([spans[ix, 1] - spans[ix, 0], spans[iy, 1] - spans[iy, 0]], 1)[:, None, :] / drawing.size

    def seen(samples_board: np.ndarray) -> np.ndarray:
        """Share of each candidate's samples (board units of the candidate) on line pixels."""
        pts = apply_homography(H_b2i, (lo + scale * samples_board[None]).reshape(-1, 2))
        hgt, wid = near_img.shape
        with np.errstate(invalid="ignore"):
            inside = (pts[:, 0] >= 0) & (pts[:, 0] < wid - 0.5) & (pts[:, 1] >= 0) & (pts[:, 1] < hgt - 0.5)
        xi = np.where(inside, np.rint(np.nan_to_num(pts[:, 0])), 0).astype(np.int64)
        yi = np.where(inside, np.rint(np.nan_to_num(pts[:, 1])), 0).astype(np.int64)
        return np.mean((near_img[yi, xi] * inside).reshape(len(lo), -1), axis=1)

    # 12 samples a line (the coarse search's 24 only place a quadrilateral more finely)
    scores = seen(drawing.samples(0.3, n=12)[0]) - seen(drawing.samples(0.3, n=12, gaps=True)[0])
    k = int(np.argmax(scores))
    quad_b = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]) * drawing.size
    return float(scores[k]), apply_homography(H_b2i, lo[k] + scale[k] * quad_b)


def _line_families(mask: np.ndarray, params: BoardParams, what: str, name: str = "dition board",
                   rho_tol: float = 6.0) -> tuple[np.ndarray, np.ndarray]:
    """The straight `what` (lines, colour edges) of a binary image as two families of roughly
    perpendicular lines (a, b, c), a x + b y = c with a unit normal, in that image's pixels."""
    import cv2

    vote = int(params.hough_threshold_fraction * min(mask.shape[:2]))
    lines = cv2.HoughLines(mask, 1, np.pi / 360, vote)
    if lines is None or len(lines) < 4:
        raise BoardNotFoundError(f"{name}: fewer than 4 straight {what} in the frame")
    # near-duplicates go before the strongest are kept (a table's grain gives many copies of
    # one line, which would crowd out the board's other direction)
    lines = _dedupe_lines(lines[: 8 * params.max_hough_lines, 0, :].astype(np.float64), rho_tol=rho_tol,
                          theta_tol=np.deg2rad(3))[: params.max_hough_lines]
    fam_a, fam_b = _two_families(lines)
    if len(fam_a) < 2 or len(fam_b) < 2:
        raise BoardNotFoundError(f"{name}: no two families of roughly perpendicular {what}")
    return fam_a, fam_b


def _all_quads(fam_a: np.ndarray, fam_b: np.ndarray, min_area: float) -> np.ndarray:
    """(K, 4, 2) quadrilaterals from every pair of lines of one family with every pair of the
    other, corners in canonical order, degenerate and small ones dropped."""
    ia, ja = np.triu_indices(len(fam_a), 1)
    ib, jb = np.triu_indices(len(fam_b), 1)
    A1, A2 = fam_a[ia], fam_a[ja]
    B1, B2 = fam_b[ib], fam_b[jb]
    na, nb = len(A1), len(B1)
    a1 = np.repeat(A1, nb, axis=0)
    a2 = np.repeat(A2, nb, axis=0)
    b1 = np.tile(B1, (na, 1))
    b2 = np.tile(B2, (na, 1))

    def cross(l1: np.ndarray, l2: np.ndarray) -> np.ndarray:
        det = l1[:, 0] * l2[:, 1] - l1[:, 1] * l2[:, 0]
        det = np.where(np.abs(det) < 1e-9, np.nan, det)
        x = (l1[:, 2] * l2[:, 1] - l1[:, 1] * l2[:, 2]) / det
        y = (l1[:, 0] * l2[:, 2] - l1[:, 2] * l2[:, 0]) / det
        return np.stack([x, y], axis=1)

    quads = np.stack([cross(a1, b1), cross(a1, b2), cross(a2, b2), cross(a2, b1)], axis=1)
    quads = quads[np.all(np.isfinite(quads), axis=(1, 2))]
    if len(quads) == 0:
        return quads
    # canonical order: clockwise on screen, starting nearest the image's top-left
    c = quads.mean(axis=1, keepdims=True)
    ang = np.arctan2(quads[..., 1] - c[..., 1], quads[..., 0] - c[..., 0])
    quads = np.take_along_axis(quads, np.argsort(ang, axis=1)[..., None], axis=1)
    start = np.argmin(quads[..., 0] + quads[..., 1], axis=1)
    idx = (start[:, None] + np.arange(4)[None]) % 4
    quads = np.take_along_axis(quads, idx[..., None], axis=1)
    x, y = quads[..., 0], quads[..., 1]
    area = 0.5 * np.abs(np.sum(x * np.roll(y, -1, axis=1) - np.roll(x, -1, axis=1) * y, axis=1))
    # a square seen within ~30 degrees of straight on: convex, sides of similar length,
    # no corner sharper than 45 degrees
    e = np.roll(quads, -1, axis=1) - quads  # edges
    side = np.linalg.norm(e, axis=2)
    turn = e[..., 0] * np.roll(e, -1, axis=1)[..., 1] - e[..., 1] * np.roll(e, -1, axis=1)[..., 0]
    convex = np.all(turn > 0, axis=1) | np.all(turn < 0, axis=1)
    cos = -np.sum(e * np.roll(e, -1, axis=1), axis=2) / np.maximum(side * np.roll(side, -1, axis=1), 1e-9)
    shape_ok = convex & (side.min(axis=1) > 0.5 * side.max(axis=1)) & np.all(np.abs(cos) < 0.7, axis=1)
    return quads[(area >= min_area) & shape_ok]


def _score_quads(quads: np.ndarray, score_img: np.ndarray, samples_board: np.ndarray,
                 src: np.ndarray) -> np.ndarray:
    """Fraction of the predicted drawn-line samples that fall on line pixels, per quad (its
    corners the images of the board corners `src`)."""
    dst = quads
    k = len(dst)
    A = np.zeros((k, 8, 8))
    b = np.zeros((k, 8))
    for i in range(4):
        x, y = src[i]
        u, v = dst[:, i, 0], dst[:, i, 1]
        A[:, 2 * i, :3] = (x, y, 1)
        A[:, 2 * i, 6] = -u * x
        A[:, 2 * i, 7] = -u * y
        A[:, 2 * i + 1, 3:6] = (x, y, 1)
        A[:, 2 * i + 1, 6] = -v * x
        A[:, 2 * i + 1, 7] = -v * y
        b[:, 2 * i], b[:, 2 * i + 1] = u, v
    ok = np.abs(np.linalg.det(A)) > 1e-12
    scores = np.full(k, -1.0)
    if not ok.any():
        return scores
    h = np.linalg.solve(A[ok], b[ok][..., None])[..., 0]
    H = np.concatenate([h, np.ones((len(h), 1))], axis=1).reshape(-1, 3, 3)
    sx, sy = samples_board[:, 0], samples_board[:, 1]
    w = H[:, 2, 0, None] * sx + H[:, 2, 1, None] * sy + H[:, 2, 2, None]
    px = (H[:, 0, 0, None] * sx + H[:, 0, 1, None] * sy + H[:, 0, 2, None]) / w
    py = (H[:, 1, 0, None] * sx + H[:, 1, 1, None] * sy + H[:, 1, 2, None]) / w
    hgt, wid = score_img.shape
    inside = (px >= 0) & (px < wid - 0.5) & (py >= 0) & (py < hgt - 0.5)
    xi = np.clip(np.rint(px).astype(np.int64), 0, wid - 1)
    yi = np.clip(np.rint(py).astype(np.int64), 0, hgt - 1)
    scores[ok] = np.mean(score_img[yi, xi] * inside, axis=1)
    return scores


def _dedupe_lines(lines: np.ndarray, rho_tol: float, theta_tol: float) -> np.ndarray:
    kept: list[np.ndarray] = []
    for rho, theta in lines:
        a, b = math.cos(theta), math.sin(theta)
        dup = False
        for k in kept:
            ang = abs(math.atan2(a * k[1] - b * k[0], a * k[0] + b * k[1]))
            if ang < theta_tol and abs(rho - k[2] * (1 if a * k[0] + b * k[1] > 0 else -1)) < rho_tol:
                dup = True
                break
            if abs(ang - math.pi) < theta_tol and abs(rho + k[2]) < rho_tol:
                dup = True
                break
        if not dup:
            kept.append(np.array([a, b, rho]))
    return np.array(kept)


def _two_families(lines: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Split lines (a, b, c) by orientation (mod 180 degrees) around the dominant direction: the
    orientation that, with its perpendicular, has the most lines within 12 degrees (the strongest
    line alone may be a stray one, through a row of discs or along the table's grain)."""
    ang = np.mod(np.arctan2(lines[:, 1], lines[:, 0]), np.pi)

    def off(ref: float) -> np.ndarray:
        return np.abs(((ang - ref + np.pi / 2) % np.pi) - np.pi / 2)

    near = np.deg2rad(12)
    counts = [int(np.sum(off(a) < near) + np.sum(np.abs(off(a) - np.pi / 2) < near)) for a in ang]
    d = off(float(ang[int(np.argmax(counts))]))  # argmax: the first (strongest) of the best
    a = lines[d < np.deg2rad(25)]
    b = lines[(d > np.deg2rad(60))]
    return a, b


def _sort_family(fam: np.ndarray, keep: int = 10) -> np.ndarray:
    """Make normals consistent and sort by offset, keeping the `keep` strongest lines."""
    n0 = fam[0, :2]
    out = fam.copy()
    flip = out[:, :2] @ n0 < 0
    out[flip] *= -1
    # the strongest lines (Hough order), then sorted by offset
    out = out[:keep]
    return out[np.argsort(out[:, 2])]


def _intersect(l1: np.ndarray, l2: np.ndarray) -> np.ndarray | None:
    A = np.array([l1[:2], l2[:2]])
    if abs(np.linalg.det(A)) < 1e-6:
        return None
    return np.linalg.solve(A, np.array([l1[2], l2[2]]))


def _quad_from_lines(a1: np.ndarray, a2: np.ndarray, b1: np.ndarray, b2: np.ndarray) -> np.ndarray | None:
    pts = [_intersect(a1, b1), _intersect(a1, b2), _intersect(a2, b2), _intersect(a2, b1)]
    if any(p is None for p in pts):
        return None
    quad = np.array(pts, dtype=np.float64)
    return _canonical_corner_order(quad)


def _canonical_corner_order(quad: np.ndarray) -> np.ndarray:
    """Order 4 points clockwise (in image y-down sense) starting with the one nearest the
    image's top-left. Without markers the board's own orientation is unknowable (it is
    symmetric); corner 0 is taken as the top-left one as seen by the camera."""
    c = quad.mean(axis=0)
    ang = np.arctan2(quad[:, 1] - c[1], quad[:, 0] - c[0])
    q = quad[np.argsort(ang)]  # increasing angle = clockwise on screen (y down)
    start = int(np.argmin(q[:, 0] + q[:, 1]))
    return np.roll(q, -start, axis=0)


def refine_dition(
    gray: np.ndarray,
    H_image_to_board: np.ndarray,
    params: BoardParams,
    intrinsics: Intrinsics | None,
    passes: int = 2,
    drawing: LineDrawing | None = None,
) -> BoardFit:
    """Sub-pixel fit of the homography to the drawn lines (the Dition board's 8 unless another
    `drawing`), starting from H_image_to_board."""
    drawing = drawing or DITION_DRAWING
    H = np.asarray(H_image_to_board, dtype=np.float64)
    support = 0.0
    residual = float("inf")
    for p in range(passes):
        # the first pass searches wide (the coarse fit may be off by ~1 line spacing of the
        # profile), the later ones narrow
        halfwidth = params.profile_halfwidth_board * (2.0 if p == 0 and passes > 1 else 0.6 if p else 1.0)
        H, support, residual = _refine_pass(gray, H, params, intrinsics, halfwidth, drawing)
    return fit_from_homography(
        H, drawing.game, "lines", intrinsics=intrinsics, residual_px=residual, support=support
    )


def _refine_pass(
    gray: np.ndarray,
    H_i2b: np.ndarray,
    params: BoardParams,
    intrinsics: Intrinsics | None,
    halfwidth_board: float,
    drawing: LineDrawing,
) -> tuple[np.ndarray, float, float]:

    H_b2i = np.linalg.inv(H_i2b)
    # 4 samples per twentieth of the board's side (a Dition unit)
    pts_b, axis, line_const = drawing.samples(0.35, per_unit=4 * 20.0 / drawing.size)
    n_prof = 25
    s = np.linspace(-halfwidth_board, halfwidth_board, n_prof)
    vals, pu, _, inside = line_profiles(gray, H_b2i, pts_b, axis, s, intrinsics)
    k, off, y1 = darkest_subpixel(vals)
    rows = np.arange(len(vals))
    pos = k + off
    side = max(2, n_prof // 6)
    left = vals[:, :side].mean(1)
    right = vals[:, -side:].mean(1)
    contrast = np.minimum(left, right) - y1
    # a drawn line is thin and dark between two similar light sides; a disc edge is a step
    ok = inside & (contrast > params.min_line_contrast) & (np.abs(left - right) < 0.5 * (left + right - 2 * y1) + 5)
    ok &= (k > 1) & (k < n_prof - 2)
    # sub-pixel image position of the line centre
    t = np.clip(pos, 0, n_prof - 1)
    i0 = np.clip(np.floor(t).astype(int), 0, n_prof - 2)
    fr = t - i0
    centre_u = pu[rows, i0] * (1 - fr)[:, None] + pu[rows, i0 + 1] * fr[:, None]
    support = float(ok.mean())
    if ok.sum() < 12:
        return H_i2b, support, float("inf")
    H_new = H_i2b
    keep = ok.copy()
    for _ in range(3):
        H_new = _fit_h_to_lines(centre_u[keep], axis[keep], line_const[keep], H_i2b, drawing.size)
        b = apply_homography(H_new, centre_u)
        res_b = np.where(axis == 0, b[:, 0], b[:, 1]) - line_const
        scale_px = _px_per_unit(H_new, drawing.size)
        res_px = np.abs(res_b) * scale_px
        med = np.median(res_px[ok]) if ok.any() else 0.0
        keep = ok & (res_px < max(3.0 * 1.4826 * med, 0.3))
    support = float(keep.mean())
    residual = float(np.sqrt(np.mean(res_px[keep] ** 2))) if keep.any() else float("inf")
    return H_new, support, residual


def _px_per_unit(H_i2b: np.ndarray, size: float) -> float:
    """Pixels per board unit at the board's centre."""
    H_b2i = np.linalg.inv(H_i2b)
    m = size / 2
    c = apply_homography(H_b2i, np.array([[m, m], [m + 1, m], [m, m + 1]]))
    return float((np.linalg.norm(c[1] - c[0]) + np.linalg.norm(c[2] - c[0])) / 2)


def _fit_h_to_lines(
    pts_u: np.ndarray, axis: np.ndarray, const: np.ndarray, H_init: np.ndarray, size: float
) -> np.ndarray:
    """Least-squares H (undistorted px -> board) with every point on its board line:
    row_axis(H) . p - c * row_2(H) . p = 0. Hartley-normalised, solved by SVD."""
    m = pts_u.mean(axis=0)
    sc = math.sqrt(2) / max(np.mean(np.linalg.norm(pts_u - m, axis=1)), 1e-9)
    T = np.array([[sc, 0, -sc * m[0]], [0, sc, -sc * m[1]], [0, 0, 1]])
    p = np.column_stack([(pts_u - m) * sc, np.ones(len(pts_u))])
    # board side normalisation: b' = (b - m) / m, m the board's half size
    m_b = size / 2
    Tb = np.array([[1 / m_b, 0, -1.0], [0, 1 / m_b, -1.0], [0, 0, 1]])
    cn = (const - m_b) / m_b
    A = np.zeros((len(p), 9))
    for ax in (0, 1):
        sel = axis == ax
        A[sel, 3 * ax : 3 * ax + 3] = p[sel]
        A[sel, 6:9] = -cn[sel, None] * p[sel]
    # the constraints fix 8 dof only when both families are present
    _, _, vt = np.linalg.svd(A, full_matrices=False)
    Hn = vt[-1].reshape(3, 3)
    H = np.linalg.inv(Tb) @ Hn @ T
    if not abs(H[2, 2]) > 1e-12:  # degenerate points (a family missing): keep the start
        return H_init
    H = H / H[2, 2]
    if np.sign(np.linalg.det(H)) != np.sign(np.linalg.det(H_init)):
        return H_init
    return H


# --------------------------------------------------------------------------------------------
# the lens estimated from the drawn lines
# --------------------------------------------------------------------------------------------


def refit_board(frame: np.ndarray, board: BoardFit, intrinsics: Intrinsics | None,
                board_params: BoardParams | None = None) -> BoardFit:
    """The same board found again through the lens model `intrinsics` by the same method
    (given corners, ArUco markers or the drawn lines)."""
    board_params = board_params or BoardParams()
    gray = lines_gray(frame, board)
    if board.method == "corners":
        return fit_from_corners(board.corners_px, board.game, intrinsics)
    if board.method == "aruco":
        return find_board_aruco(gray, board.game, intrinsics)
    if board.method == "edge":
        H0 = homography_from_corners(board.corners_px, board.game, intrinsics)
        return refine_edge(frame, H0, board_params, intrinsics, passes=2)
    if board.method == "lines":
        # start from the present fit's corners, undistorted
        H0 = homography_from_corners(board.corners_px, board.game, intrinsics)
        return with_polarity(refine_dition(gray, H0, board_params, intrinsics, passes=2,
                                           drawing=drawing_for(board)), board.extra.get("lines", "dark"))
    raise ValueError(f"cannot refit a board found by {board.method!r}")


def with_estimated_lens(
    frame: np.ndarray,
    board: BoardFit,
    params: LensParams = LensParams(),
    board_params: BoardParams | None = None,
) -> BoardFit:
    """`board` re-fitted through a lens model estimated from the drawn lines, marked
    extra["lens"] = "estimated" with extra["intrinsics"]; or `board` marked
    extra["lens"] = "none" when no reliable estimate exists (the plain homography stays)."""
    if not (board.game == "dition" or board.method == "lines") or board_intrinsics(board) is not None:
        return board
    if board.method == "edge":  # no drawn lines to measure the lens on (4 edges bow too little)
        return _marked(board, "none", None)
    board_params = board_params or BoardParams()
    gray = lines_gray(frame, board)
    h, w = gray.shape
    est = estimate_intrinsics_from_board(gray, board, params)
    if est is None:
        # the plain homography may miss the bowed lines by more than a profile's half-length
        # (markers outside the corners extrapolate the distortion): search wider
        wide = replace(params, profile_halfwidth_board=params.first_profile_halfwidth_board)
        est = estimate_intrinsics_from_board(gray, board, wide)
    fit = board
    if est is not None:
        try:
            fit = refit_board(frame, board, est, board_params)
        except BoardNotFoundError:  # the markers or lines are not found again: keep the plain fit
            est = None
    if est is not None and fit.method != "corners" and fit.support < board_params.min_support:
        est, fit = None, board
    if est is None:
        return _marked(board, "none", None)
    # second round: the lines sampled through the first model, the focal length from the
    # corrected homography (the pixel mapping is kept: k rescaled with f)
    f_new = estimate_focal_px(_marked(fit, "none", None), (w, h), params.default_hfov_deg)
    est2 = estimate_intrinsics_from_board(gray, _marked(fit, "estimated", est), params, focal_px=f_new)
    if est2 is not None:
        # the second estimate is a correction on top of the first: sampled through est, its
        # points are still captured pixels, so it stands on its own
        try:
            fit2 = refit_board(frame, board, est2, board_params)
            if fit2.method == "corners" or fit2.support >= board_params.min_support:
                est, fit = est2, fit2
        except BoardNotFoundError:
            pass
    return _marked(fit, "estimated", est)


def _marked(fit: BoardFit, lens: str, intrinsics: Intrinsics | None) -> BoardFit:
    extra = {k: v for k, v in fit.extra.items() if k not in ("lens", "intrinsics")}
    extra["lens"] = lens
    if intrinsics is not None:
        extra["intrinsics"] = intrinsics
    return BoardFit(fit.corners_px, fit.H_image_to_board, fit.H_board_to_image, fit.game, fit.method,
                    fit.residual_px, fit.support, extra)


# --------------------------------------------------------------------------------------------
# a board with no drawn lines: its own edge against the table
# --------------------------------------------------------------------------------------------

#: the board's outer edge, as the drawn-line constraints: 4 lines x = 0, x = 20, y = 0, y = 20
_EDGE_T = np.linspace(0.6, 19.4, 48)
_EDGE_PTS = np.concatenate([np.stack([np.full_like(_EDGE_T, c), _EDGE_T], 1) for c in (0.0, 20.0)]
                           + [np.stack([_EDGE_T, np.full_like(_EDGE_T, c)], 1) for c in (0.0, 20.0)])
_EDGE_AXIS = np.r_[np.zeros(2 * len(_EDGE_T), int), np.ones(2 * len(_EDGE_T), int)]
_EDGE_CONST = np.r_[np.zeros(len(_EDGE_T)), np.full(len(_EDGE_T), 20.0),
                    np.zeros(len(_EDGE_T)), np.full(len(_EDGE_T), 20.0)]
#: outward unit normal (board frame) of each edge sample: away from the board's middle
_EDGE_OUT = np.where(_EDGE_CONST[:, None] == 0.0, -1.0, 1.0) * np.where(
    _EDGE_AXIS[:, None] == 0, np.array([[1.0, 0.0]]), np.array([[0.0, 1.0]]))
#: colour samples this far inside / outside the edge (board units): past the blur of the step,
#: short of the discs (which keep half a diameter from the edge)
EDGE_SIDE_BOARD = 0.35
#: strongest edges kept per direction, and quadrilaterals (most on edges first) whose two sides
#: are compared
EDGE_LINES_PER_FAMILY = 18
EDGE_QUADS_CHECKED = 40


def _lab(frame: np.ndarray) -> np.ndarray:
    import cv2

    bgr = frame if frame.ndim == 3 else cv2.cvtColor(frame, cv2.COLOR_GRAY2BGR)
    return cv2.cvtColor(bgr, cv2.COLOR_BGR2Lab).astype(np.float32)


def _edge_sides(lab: np.ndarray, H_board_to_image: np.ndarray, intrinsics: Intrinsics | None,
                pts: np.ndarray = _EDGE_PTS, out: np.ndarray = _EDGE_OUT) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Lab colours just inside and just outside the board's edge at each edge sample (N, 3) x 2,
    and whether both lie in the frame (N,)."""
    import cv2

    both = np.concatenate([pts - EDGE_SIDE_BOARD * out, pts + EDGE_SIDE_BOARD * out])
    px = apply_homography(H_board_to_image, both)
    if intrinsics is not None:
        px = intrinsics.distort_points(px)
    h, w = lab.shape[:2]
    m = px.astype(np.float32).reshape(-1, 1, 2)
    vals = cv2.remap(lab, m[..., 0], m[..., 1], cv2.INTER_LINEAR).reshape(-1, 3)
    ok = (px[:, 0] >= 0) & (px[:, 1] >= 0) & (px[:, 0] < w - 1) & (px[:, 1] < h - 1)
    n = len(pts)
    return vals[:n], vals[n:], ok[:n] & ok[n:]


def _edge_agreement(inside: np.ndarray, outside: np.ndarray, ok: np.ndarray) -> tuple[float, float]:
    """(share of the edge samples where one board meets the table, the step in Lab units): where
    the inside shows the board (within 3 times its spread of the median inside colour; discs
    may lie against the edge), the outside differs from it by more than 4 times that spread.
    The spread is the board's texture and the noise, measured on the frame between neighbouring
    samples along the edge (a disc only spoils the pairs at its own rim). At least half of the
    samples must show the board."""
    if ok.sum() < 8:
        return 0.0, 0.0
    board = np.median(inside[ok], axis=0)
    pair = ok[:-1] & ok[1:]
    step = np.linalg.norm(np.diff(inside, axis=0), axis=1)[pair]
    spread = max(1.4826 * float(np.median(step)) / math.sqrt(2), 2.0) if len(step) else 2.0
    d_in = np.linalg.norm(inside - board, axis=1)
    d_out = np.linalg.norm(outside - board, axis=1)
    shows_board = ok & (d_in < 3 * spread)
    good = shows_board & (d_out > 4 * spread)
    return float(good.sum() / max(shows_board.sum(), 0.5 * len(ok))), float(np.median(d_out[ok]))


def _coarse_edge(frame: np.ndarray, params: BoardParams, intrinsics: Intrinsics | None) -> np.ndarray:
    """H_image_to_board (undistorted px) from the board's outer edge: colour edges -> Hough
    lines -> quadrilaterals -> the one with one board inside and the table outside all around."""
    import cv2

    h, w = frame.shape[:2]
    f = min(1.0, params.search_width_px / w)
    small = cv2.resize(frame, (round(w * f), round(h * f)), interpolation=cv2.INTER_AREA) if f < 1 else frame
    if intrinsics is not None and intrinsics.has_distortion:
        # straightened, with the border replicated: a black fill would make straight colour
        # edges of its own along the frame
        k_small = intrinsics.scaled_to((small.shape[1], small.shape[0]))
        mx, my = cv2.initUndistortRectifyMap(k_small.camera_matrix, k_small.dist_coeffs, None,
                                             k_small.camera_matrix, (small.shape[1], small.shape[0]), cv2.CV_32FC1)
        small = cv2.remap(small, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    lab = _lab(small)
    # felt fibres, wood grain, sensor noise and the thin gaps between a table's planks are finer
    # than a board's edge: smooth them away first (a step keeps its height, a line of width w
    # keeps about w / sigma of its own)
    sigma = max(3.0, 0.008 * small.shape[1])
    lab_s = cv2.GaussianBlur(lab, (0, 0), sigma)
    mag = np.sqrt(sum(cv2.Sobel(lab_s[..., c], cv2.CV_32F, 1, 0) ** 2 + cv2.Sobel(lab_s[..., c], cv2.CV_32F, 0, 1) ** 2
                      for c in range(3)))
    # an edge stands 4 times above the gradient the smoothed texture leaves (its median)
    thr = max(4.0 * float(np.median(mag)), 8.0)
    mask = (mag > thr).astype(np.uint8)
    mask = _thin(mask, mag)
    fam_a, fam_b = _line_families(mask, params, "colour edges")
    # a table's planks and rows of discs make strong straight edges too: keep more of each family
    quads = _all_quads(_sort_family(fam_a, EDGE_LINES_PER_FAMILY), _sort_family(fam_b, EDGE_LINES_PER_FAMILY),
                       min_area=0.04 * small.shape[0] * small.shape[1])
    if len(quads) == 0:
        raise BoardNotFoundError("dition board: no large quadrilateral of edges in the frame")
    hit = cv2.dilate((mag > thr).astype(np.uint8), np.ones((3, 3), np.uint8))
    on_edge = _score_quads(quads, hit, _EDGE_PTS, board_corners_board("dition"))
    best, best_score = None, 0.0
    for q in np.argsort(-on_edge)[:EDGE_QUADS_CHECKED]:
        if on_edge[q] < params.min_support:
            break
        quad = _canonical_corner_order(quads[q])
        H_b2i = homography_4pt(board_corners_board("dition"), quad)
        inside, outside, ok = _edge_sides(lab, H_b2i, None)
        score = _edge_agreement(inside, outside, ok)[0] * float(on_edge[q])
        if score > best_score:
            best, best_score = quad, score
    if best is None or best_score < params.min_support ** 2:
        raise BoardNotFoundError(
            "dition board: no quadrilateral of edges has one board inside and the table outside all "
            f"around (best agreement {best_score:.0%})")
    quad_px = (best + 0.5) / f - 0.5
    return homography_4pt(_canonical_corner_order(quad_px), board_corners_board("dition"))


def _thin(mask: np.ndarray, mag: np.ndarray) -> np.ndarray:
    """Edge pixels that are a local maximum of the gradient across x or y (a plain
    non-maximum suppression, without opencv-contrib's thinning)."""
    mx = (mag >= np.roll(mag, 1, 1)) & (mag >= np.roll(mag, -1, 1))
    my = (mag >= np.roll(mag, 1, 0)) & (mag >= np.roll(mag, -1, 0))
    return ((mask > 0) & (mx | my)).astype(np.uint8) * 255


def refine_edge(frame: np.ndarray, H_image_to_board: np.ndarray, params: BoardParams,
                intrinsics: Intrinsics | None, passes: int = 2) -> BoardFit:
    """Sub-pixel fit of the homography to the board's 4 outer edges: across each edge, the
    colour profile is projected on the board-minus-table colour direction (the largest contrast
    the two materials give); the edge is where that crosses halfway between the two (a
    symmetric blur moves neither), and every crossing is a point on its line x = 0, 20 or
    y = 0, 20 (`_fit_h_to_lines`)."""
    lab = _lab(frame)
    H = np.asarray(H_image_to_board, dtype=np.float64)
    support, residual = 0.0, float("inf")
    for p in range(passes):
        H_b2i = np.linalg.inv(H)
        inside, outside, ok = _edge_sides(lab, H_b2i, intrinsics)
        if ok.sum() < 12:
            raise BoardNotFoundError("dition board: the board's edge is not in the frame")
        board, table = np.median(inside[ok], axis=0), np.median(outside[ok], axis=0)
        d = board - table
        if float(np.linalg.norm(d)) < 1e-6:
            raise BoardNotFoundError("dition board: the board and the table look alike at its edge")
        # the contrast channel: 1 on the board, 0 on the table
        chan = ((lab - table) @ (d / float(d @ d))).astype(np.float32)
        halfwidth = params.profile_halfwidth_board * (2.0 if p == 0 and passes > 1 else 1.0)
        n_prof = 25
        s = np.linspace(-halfwidth, halfwidth, n_prof)
        # profiles run outward (x = 0 and y = 0 edges: along -x / -y)
        sign = np.where(_EDGE_CONST == 0.0, -1.0, 1.0)
        vals, pu, _, inside_img = line_profiles(chan, H_b2i, _EDGE_PTS, _EDGE_AXIS, s, intrinsics)
        vals = np.where(sign[:, None] > 0, vals, vals[:, ::-1])
        pu = np.where(sign[:, None, None] > 0, pu, pu[:, ::-1])
        lo_side = vals[:, -4:].mean(1)
        hi_side = vals[:, :4].mean(1)
        half = 0.5 * (lo_side + hi_side)
        # the last sample still on the board's side of halfway, going outward
        above = vals > half[:, None]
        k = np.where(above[:, :-1] & ~above[:, 1:], np.arange(n_prof - 1)[None, :], -1).max(axis=1)
        good = inside_img & (k >= 0) & (hi_side - lo_side > 0.5)
        kk = np.clip(k, 0, n_prof - 2)
        rows = np.arange(len(vals))
        v0, v1 = vals[rows, kk], vals[rows, kk + 1]
        fr = np.clip((v0 - half) / np.where(np.abs(v0 - v1) > 1e-9, v0 - v1, 1.0), 0.0, 1.0)
        centre_u = pu[rows, kk] * (1 - fr)[:, None] + pu[rows, kk + 1] * fr[:, None]
        if good.sum() < 12:
            raise BoardNotFoundError("dition board: too little of the board's edge is seen")
        keep = good.copy()
        H_new = H
        for _ in range(3):
            H_new = _fit_h_to_lines(centre_u[keep], _EDGE_AXIS[keep], _EDGE_CONST[keep], H, BOARD_SIZE["dition"])
            b = apply_homography(H_new, centre_u)
            res_px = np.abs(np.where(_EDGE_AXIS == 0, b[:, 0], b[:, 1]) - _EDGE_CONST) * _px_per_unit(H_new, BOARD_SIZE["dition"])
            med = float(np.median(res_px[good]))
            keep = good & (res_px < max(3.0 * 1.4826 * med, 0.3))
        H = H_new
        support = float(keep.mean())
        residual = float(np.sqrt(np.mean(res_px[keep] ** 2))) if keep.any() else float("inf")
    return fit_from_homography(H, "dition", "edge", intrinsics=intrinsics, residual_px=residual, support=support)


def find_dition_edge(frame: np.ndarray, params: BoardParams = BoardParams(), *,
                     intrinsics: Intrinsics | None = None) -> BoardFit:
    """The Dition board with no drawn lines: its own edge against the table is the playing
    area's edge ([0, 20]^2; a board of another colour or texture than the table). method "edge"."""
    H0 = _coarse_edge(frame, params, intrinsics)
    fit = refine_edge(frame, H0, params, intrinsics, passes=3)
    if fit.support < params.min_support:
        raise BoardNotFoundError(f"dition board: the board's edge was not confirmed (only {fit.support:.0%} of "
                                 "the edge samples agree)")
    return fit
