"""Find the board in a frame: given corners, ArUco markers, or (Dition) the drawn squares.

The stage function is `find_board(frame, params, *, game, corners_px, intrinsics) -> BoardFit`.
Given corners always win; then ArUco markers of the game's layout (vision.markers); then the
drawn lines of the Dition board (outer square [0,20]^2 and inner square [3,17]^2, dark lines
0.06 units wide centred on the edges). Domination boards without markers are delegated to
`vision.domination_board.find_domination_board` (imported lazily).

Frames: `corners_px` and every `*_px` are pixels of the frame as captured (distorted). The
homographies act on undistorted pixels (identical to captured pixels when no intrinsics are
given). The helpers `board_to_image`, `image_to_board` and `rectify` hide the difference.

Line search (Dition): thin dark structures (morphological black-hat) -> Hough lines -> every pair
of extreme lines per direction family is a hypothesis for the outer square, scored by how much
of the predicted outer *and* inner squares is drawn -> sub-pixel refinement: across each of the
eight predicted lines, intensity profiles in the full frame give the dark line centre (parabola
through the minimum); a robust least-squares homography fits all those points at once
(each point on the line x = c gives one linear equation). Discs lying on a line only remove
samples, they do not bias the fit.
"""

from __future__ import annotations

import functools
import math
import sys
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from vision.camera import Intrinsics
from vision.errors import BoardNotFoundError, InvalidCornersError, InvalidImageError
from vision.markers import QUIET_ZONE_FRACTION, layout_for

Game = Literal["dition", "domination"]

#: side of the playing square in board units, per game
BOARD_SIZE: dict[str, float] = {"dition": 20.0, "domination": 8.0}
#: the drawn squares of the Dition board (line centres), as (lo, hi) in board units
DITION_SQUARES: tuple[tuple[float, float], ...] = ((0.0, 20.0), (3.0, 17.0))
DITION_LINE_WIDTH = 0.06


@dataclass(frozen=True)
class BoardParams:
    """Tuning of the board finder (shipped defaults)."""

    use_aruco: bool = True
    use_lines: bool = True
    #: the Hough search runs on a copy of the frame scaled to this width
    search_width_px: int = 820
    #: Hough accumulator threshold as a fraction of the smaller side of the search image
    hough_threshold_fraction: float = 0.12
    max_hough_lines: int = 60
    #: sub-pixel refinement: samples per board unit along each drawn line
    samples_per_unit: float = 4.0
    #: half-length of each cross profile in board units
    profile_halfwidth_board: float = 0.2
    #: minimum darkness of the line centre below the mean of both sides (grey levels)
    min_line_contrast: float = 10.0
    #: a fit is rejected when fewer than this fraction of line samples agree with it
    min_support: float = 0.35
    #: board_moved: a corner that shifted more than this (captured px) means the board moved
    moved_threshold_px: float = 2.5


@dataclass(frozen=True, eq=False)
class BoardFit:
    """Where the board is. corners_px (4, 2) float64 captured pixels of board corners 0..3;
    H_image_to_board (3, 3) maps undistorted pixels to board units; H_board_to_image inverts it."""

    corners_px: np.ndarray
    H_image_to_board: np.ndarray
    H_board_to_image: np.ndarray
    game: str
    method: str
    residual_px: float = 0.0
    #: fraction of the drawn line samples that agree with the fit (1.0 for given corners)
    support: float = 1.0
    extra: dict[str, object] = field(default_factory=dict)

    @property
    def size_board(self) -> float:
        return BOARD_SIZE[self.game]

    def to_dict(self) -> dict[str, object]:
        return {
            "game": self.game,
            "method": self.method,
            "corners_px": np.round(self.corners_px, 3).tolist(),
            "H_image_to_board": self.H_image_to_board.tolist(),
            "residual_px": round(float(self.residual_px), 4),
        }


# --------------------------------------------------------------------------------------------
# homography helpers (also used by vision.domination_board and calibration)
# --------------------------------------------------------------------------------------------


def check_frame(frame: np.ndarray) -> None:
    """Raise InvalidImageError unless `frame` is a BGR (H, W, 3) or gray (H, W) uint8 image."""
    if not isinstance(frame, np.ndarray) or frame.size == 0:
        raise InvalidImageError("frame must be a non-empty numpy array")
    if frame.dtype != np.uint8:
        raise InvalidImageError(f"frame must be uint8, got {frame.dtype}")
    if not (frame.ndim == 2 or (frame.ndim == 3 and frame.shape[2] == 3)):
        raise InvalidImageError(f"frame must be (H, W, 3) BGR or (H, W) gray, got shape {frame.shape}")


def as_gray(frame: np.ndarray) -> np.ndarray:
    """BGR (H, W, 3) or gray (H, W) uint8 -> gray (H, W) uint8; clear error otherwise."""
    import cv2

    check_frame(frame)
    return frame if frame.ndim == 2 else cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)


def board_corners_board(game: str) -> np.ndarray:
    """(4, 2) board-frame coordinates of corners 0..3 (clockwise from (0, 0))."""
    s = BOARD_SIZE[_check_game(game)]
    return np.array([[0.0, 0.0], [s, 0.0], [s, s], [0.0, s]])


def apply_homography(H: np.ndarray, points: np.ndarray) -> np.ndarray:
    """(N, 2) -> (N, 2) through the 3x3 homography H."""
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 2)
    x, y = pts[:, 0], pts[:, 1]
    w = H[2, 0] * x + H[2, 1] * y + H[2, 2]
    out = np.empty_like(pts)
    out[:, 0] = (H[0, 0] * x + H[0, 1] * y + H[0, 2]) / w
    out[:, 1] = (H[1, 0] * x + H[1, 1] * y + H[1, 2]) / w
    return out


def homography_from_corners(
    corners_px: np.ndarray, game: str = "dition", intrinsics: Intrinsics | None = None
) -> np.ndarray:
    """H_image_to_board (undistorted pixels -> board units) from the 4 captured-pixel corners."""

    corners = _check_corners(corners_px)
    und = intrinsics.undistort_points(corners) if intrinsics is not None else corners
    return homography_4pt(und, board_corners_board(game))


def homography_4pt(src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """The exact homography taking 4 points (4, 2) to 4 points, in float64."""
    src = np.asarray(src, dtype=np.float64).reshape(4, 2)
    dst = np.asarray(dst, dtype=np.float64).reshape(4, 2)
    A = np.zeros((8, 8))
    b = np.zeros(8)
    for i, ((x, y), (u, v)) in enumerate(zip(src, dst)):
        A[2 * i] = [x, y, 1, 0, 0, 0, -u * x, -u * y]
        A[2 * i + 1] = [0, 0, 0, x, y, 1, -v * x, -v * y]
        b[2 * i], b[2 * i + 1] = u, v
    h = np.linalg.solve(A, b)
    return np.append(h, 1.0).reshape(3, 3)


def fit_from_homography(
    H_image_to_board: np.ndarray,
    game: str,
    method: str,
    *,
    intrinsics: Intrinsics | None = None,
    residual_px: float = 0.0,
    support: float = 1.0,
    extra: dict[str, object] | None = None,
) -> BoardFit:
    """Build a BoardFit (corners in captured pixels) from a homography on undistorted pixels."""
    H = np.asarray(H_image_to_board, dtype=np.float64)
    H = H / H[2, 2]
    H_inv = np.linalg.inv(H)
    H_inv = H_inv / H_inv[2, 2]
    corners = apply_homography(H_inv, board_corners_board(game))
    if intrinsics is not None:
        corners = intrinsics.distort_points(corners)
    return BoardFit(corners, H, H_inv, game, method, float(residual_px), float(support), dict(extra or {}))


def fit_from_corners(
    corners_px: np.ndarray, game: str = "dition", intrinsics: Intrinsics | None = None
) -> BoardFit:
    """The BoardFit of corners given by the user (corner i of the array is board corner i)."""
    H = homography_from_corners(corners_px, game, intrinsics)
    fit = fit_from_homography(H, game, "corners", intrinsics=intrinsics)
    # keep the user's corners exactly
    return BoardFit(_check_corners(corners_px), fit.H_image_to_board, fit.H_board_to_image, game, "corners")


def board_intrinsics(board: BoardFit, intrinsics: Intrinsics | None = None) -> Intrinsics | None:
    """The lens model to use with `board`: the caller's intrinsics when given, else the one
    estimated from the board itself (`vision.lens`, extra["intrinsics"]), else None."""
    if intrinsics is not None:
        return intrinsics
    est = board.extra.get("intrinsics")
    return est if isinstance(est, Intrinsics) else None


def board_to_image(
    points_board: np.ndarray, board: BoardFit, intrinsics: Intrinsics | None = None
) -> np.ndarray:
    """(N, 2) board units (on the board plane) -> (N, 2) captured pixels."""
    intrinsics = board_intrinsics(board, intrinsics)
    pts = apply_homography(board.H_board_to_image, points_board)
    return intrinsics.distort_points(pts) if intrinsics is not None else pts


def image_to_board(
    points_px: np.ndarray, board: BoardFit, intrinsics: Intrinsics | None = None
) -> np.ndarray:
    """(N, 2) captured pixels -> (N, 2) board units (on the board plane)."""
    intrinsics = board_intrinsics(board, intrinsics)
    pts = np.asarray(points_px, dtype=np.float64).reshape(-1, 2)
    if intrinsics is not None:
        pts = intrinsics.undistort_points(pts)
    return apply_homography(board.H_image_to_board, pts)


def rectify_maps(
    board: BoardFit,
    scale_px_per_unit: float,
    margin_board: float,
    intrinsics: Intrinsics | None = None,
) -> tuple[np.ndarray, np.ndarray] | np.ndarray:
    """What `rectify` warps with: a 3x3 matrix (no distortion) or remap maps (cached)."""
    return _rectify_maps_cached(
        board.H_board_to_image.tobytes(), board.size_board, float(scale_px_per_unit),
        float(margin_board), board_intrinsics(board, intrinsics),
    )


def rectify(
    frame: np.ndarray,
    board: BoardFit,
    scale_px_per_unit: float,
    margin_board: float = 0.0,
    intrinsics: Intrinsics | None = None,
    interpolation: int | None = None,
) -> np.ndarray:
    """Top-down view of the board: pixel (u, v) shows board point
    ((u + 0.5) / scale - margin, (v + 0.5) / scale - margin)... precisely: pixel centre (u, v)
    is board point (u / scale - margin, v / scale - margin)."""
    import cv2

    interp = cv2.INTER_LINEAR if interpolation is None else interpolation
    maps = rectify_maps(board, scale_px_per_unit, margin_board, intrinsics)
    n = round((board.size_board + 2 * margin_board) * scale_px_per_unit) + 1
    if isinstance(maps, tuple):
        return cv2.remap(frame, maps[0], maps[1], interp, borderMode=cv2.BORDER_REPLICATE)
    return cv2.warpPerspective(
        frame, maps, (n, n), flags=interp | cv2.WARP_INVERSE_MAP, borderMode=cv2.BORDER_REPLICATE
    )


@functools.lru_cache(maxsize=16)
def _rectify_maps_cached(
    H_bytes: bytes, size_board: float, scale: float, margin: float, intrinsics: Intrinsics | None
) -> tuple[np.ndarray, np.ndarray] | np.ndarray:
    import cv2

    H_b2i = np.frombuffer(H_bytes, dtype=np.float64).reshape(3, 3)
    # rectified pixel -> board: b = u / scale - margin
    S = np.array([[1 / scale, 0, -margin], [0, 1 / scale, -margin], [0, 0, 1]])
    M = H_b2i @ S  # rectified pixel -> undistorted image pixel
    if intrinsics is None or not intrinsics.has_distortion:
        return M
    n = round((size_board + 2 * margin) * scale) + 1
    u, v = np.meshgrid(np.arange(n, dtype=np.float64), np.arange(n, dtype=np.float64))
    pts = apply_homography(M, np.stack([u.ravel(), v.ravel()], axis=1))
    pts = intrinsics.distort_points(pts).astype(np.float32)
    map1, map2 = cv2.convertMaps(
        pts[:, 0].reshape(n, n), pts[:, 1].reshape(n, n), cv2.CV_16SC2
    )
    return map1, map2


def board_to_image_maps(
    board: BoardFit,
    intrinsics: Intrinsics | None = None,
    *,
    scale_px_per_unit: float = 16.0,
    margin_board: float = 1.5,
) -> tuple[np.ndarray, np.ndarray]:
    """The cached dense tables behind `board_to_image_lookup`: (x, y) captured pixels (float32,
    (n, n) each, read-only) of board point (u / scale - margin, v / scale - margin) at entry [v, u]. A
    `cv2.remap` of each at table coordinates (float32 maps) is an exact bilinear look-up."""
    return _coord_maps_cached(
        board.H_board_to_image.tobytes(), board.size_board, float(scale_px_per_unit),
        float(margin_board), board_intrinsics(board, intrinsics),
    )


def board_to_image_lookup(
    points_board: np.ndarray,
    board: BoardFit,
    intrinsics: Intrinsics | None = None,
    *,
    scale_px_per_unit: float = 16.0,
    margin_board: float = 1.5,
) -> np.ndarray:
    """Like `board_to_image`, for many points at once: bilinear look-up in a cached dense table
    of the mapping (every 1/scale board units). The mapping is smooth, so the table's error is
    far below a thousandth of a pixel; points beyond the table's margin are clamped to it."""
    import cv2

    mx, my = _coord_maps_cached(
        board.H_board_to_image.tobytes(), board.size_board, float(scale_px_per_unit),
        float(margin_board), board_intrinsics(board, intrinsics),
    )
    pts = np.asarray(points_board, dtype=np.float32).reshape(-1, 2)
    u = (pts[:, 0] + margin_board) * scale_px_per_unit
    v = (pts[:, 1] + margin_board) * scale_px_per_unit
    n = len(pts)
    cols = max(1, min(n, 8192))
    rows = -(-n // cols)
    pad = rows * cols - n
    uu = np.pad(u, (0, pad)).reshape(rows, cols)
    vv = np.pad(v, (0, pad)).reshape(rows, cols)
    x = cv2.remap(mx, uu, vv, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE).ravel()[:n]
    y = cv2.remap(my, uu, vv, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE).ravel()[:n]
    return np.stack([x, y], axis=1)


@functools.lru_cache(maxsize=16)
def _coord_maps_cached(
    H_bytes: bytes, size_board: float, scale: float, margin: float, intrinsics: Intrinsics | None
) -> tuple[np.ndarray, np.ndarray]:
    H_b2i = np.frombuffer(H_bytes, dtype=np.float64).reshape(3, 3)
    n = round((size_board + 2 * margin) * scale) + 1
    u, v = np.meshgrid(np.arange(n, dtype=np.float64), np.arange(n, dtype=np.float64))
    pts = np.stack([u.ravel() / scale - margin, v.ravel() / scale - margin], axis=1)
    px = apply_homography(H_b2i, pts)
    if intrinsics is not None:
        px = intrinsics.distort_points(px)
    # float32 keeps 1e-4 px at these magnitudes; offsets relative to the table would do better
    mx, my = px[:, 0].reshape(n, n).astype(np.float32), px[:, 1].reshape(n, n).astype(np.float32)
    mx.flags.writeable = my.flags.writeable = False  # shared by every caller of the cache
    return mx, my


# --------------------------------------------------------------------------------------------
# ArUco
# --------------------------------------------------------------------------------------------


def detect_aruco_markers(frame: np.ndarray, game: str | None = None) -> dict[int, np.ndarray]:
    """All DICT_4X4_50 markers in the frame: id -> (4, 2) float64 captured-pixel corners in the
    marker's own order (top-left, top-right, bottom-right, bottom-left). With `game`, only the
    ids of that game's layout are kept."""

    gray = as_gray(frame)
    detector = _aruco_detector()
    corners, ids, _ = detector.detectMarkers(gray)
    found: dict[int, np.ndarray] = {}
    if ids is None:
        return found
    wanted = set(layout_for(game).ids) if game is not None else None
    for c, i in zip(corners, ids.ravel()):
        if wanted is None or int(i) in wanted:
            found[int(i)] = np.asarray(c, dtype=np.float64).reshape(4, 2)
    return found


@functools.lru_cache(maxsize=1)
def _aruco_detector() -> object:
    import cv2

    dictionary = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50)
    params = cv2.aruco.DetectorParameters()
    params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
    return cv2.aruco.ArucoDetector(dictionary, params)


def find_board_aruco(
    frame: np.ndarray, game: str = "dition", intrinsics: Intrinsics | None = None
) -> BoardFit:
    """Board from the game's ArUco markers (at least 2 of the 4 must be seen)."""
    import cv2

    layout = layout_for(game)
    markers = detect_aruco_markers(frame, game)
    if len(markers) < 2:
        raise BoardNotFoundError(
            f"{game} board: {len(markers)} of the ArUco markers {list(layout.ids)} found, need 2"
        )
    img_pts = np.concatenate([markers[i] for i in sorted(markers)])
    brd_pts = np.concatenate([layout.marker_corners_board(i) for i in sorted(markers)])
    und = intrinsics.undistort_points(img_pts) if intrinsics is not None else img_pts
    H, _ = cv2.findHomography(und, brd_pts, 0)
    if H is None:
        raise BoardNotFoundError(f"{game} board: the ArUco markers give no homography")
    pred = apply_homography(np.linalg.inv(H), brd_pts)
    residual = float(np.sqrt(np.mean(np.sum((pred - und) ** 2, axis=1))))
    return fit_from_homography(
        H, game, "aruco", intrinsics=intrinsics, residual_px=residual,
        extra={"marker_ids": sorted(markers), "quiet_zone": QUIET_ZONE_FRACTION},
    )


# --------------------------------------------------------------------------------------------
# the stage
# --------------------------------------------------------------------------------------------


def find_board(
    frame: np.ndarray,
    params: BoardParams = BoardParams(),
    *,
    game: str = "dition",
    corners_px: np.ndarray | None = None,
    intrinsics: Intrinsics | None = None,
    estimate_lens: bool = True,
) -> BoardFit:
    """Locate the board. Given corners win; then ArUco; then the drawn lines (Dition) or
    vision.domination_board (Domination). Raises BoardNotFoundError naming what was tried.

    Dition without intrinsics (and `estimate_lens`): the lens distortion is estimated from the
    drawn lines (`vision.lens`) and the board re-fitted through it; the fit then carries the
    model (extra["lens"] == "estimated", extra["intrinsics"]) for every later stage."""
    _check_game(game)
    if intrinsics is None and estimate_lens and game == "dition":
        from vision.lens import with_estimated_lens

        plain = find_board(frame, params, game=game, corners_px=corners_px, estimate_lens=False)
        return with_estimated_lens(frame, plain, board_params=params)
    if corners_px is not None:
        return fit_from_corners(corners_px, game, intrinsics)
    gray = as_gray(frame)  # validates
    tried: list[str] = []
    if params.use_aruco:
        try:
            return find_board_aruco(gray, game, intrinsics)
        except BoardNotFoundError as exc:
            tried.append(str(exc))
    if game == "domination":
        from vision.domination_board import find_domination_board

        return find_domination_board(frame, params, corners_px=None, intrinsics=intrinsics)
    if params.use_lines:
        try:
            return find_dition_lines(gray, params, intrinsics=intrinsics)
        except BoardNotFoundError as exc:
            tried.append(str(exc))
    raise BoardNotFoundError("; ".join(tried) or "no board finder enabled")


def board_moved(
    previous: BoardFit,
    frame: np.ndarray,
    params: BoardParams = BoardParams(),
    *,
    intrinsics: Intrinsics | None = None,
) -> bool:
    """True when the board no longer sits where `previous` says (a bump of a few pixels).

    Dition: the drawn squares are re-measured starting from the previous fit; a corner shift
    beyond params.moved_threshold_px, or lines no longer found there, means it moved.
    ArUco fits re-detect the markers. Other fits re-run find_board and compare corners.
    A lens estimated with `previous` (vision.lens) is used when no intrinsics are given.
    """
    shift: float
    intrinsics = board_intrinsics(previous, intrinsics)
    try:
        if previous.game == "dition":
            gray = as_gray(frame)
            new = _refine_dition(gray, previous.H_image_to_board, params, intrinsics, passes=1)
            if new.support < params.min_support:
                return True
        elif previous.method == "aruco":
            new = find_board_aruco(frame, previous.game, intrinsics)
        else:
            new = find_board(frame, params, game=previous.game, intrinsics=intrinsics)
    except BoardNotFoundError:
        return True
    shift = float(np.max(np.linalg.norm(new.corners_px - previous.corners_px, axis=1)))
    return shift > params.moved_threshold_px


# --------------------------------------------------------------------------------------------
# Dition: the drawn squares
# --------------------------------------------------------------------------------------------


def find_dition_lines(
    frame: np.ndarray, params: BoardParams = BoardParams(), *, intrinsics: Intrinsics | None = None
) -> BoardFit:
    """The Dition board from its drawn outer and inner squares (no markers, no corners)."""
    gray = as_gray(frame)
    H0 = _coarse_dition(gray, params, intrinsics)
    fit = _refine_dition(gray, H0, params, intrinsics, passes=3)
    if fit.support < params.min_support:
        raise BoardNotFoundError(
            f"dition board: the drawn squares were not confirmed (only {fit.support:.0%} of the "
            f"line samples agree)"
        )
    return fit


def _coarse_dition(gray: np.ndarray, params: BoardParams, intrinsics: Intrinsics | None) -> np.ndarray:
    """H_image_to_board (undistorted px) good to a few pixels, from Hough lines + verification."""
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
    vote = int(params.hough_threshold_fraction * min(small.shape))
    lines = cv2.HoughLines(mask, 1, np.pi / 360, vote)
    if lines is None or len(lines) < 4:
        raise BoardNotFoundError("dition board: fewer than 4 straight lines in the frame")
    lines = lines[: params.max_hough_lines, 0, :].astype(np.float64)
    # represent each line as (a, b, c) with a x + b y = c (unit normal), in small-image pixels
    lines = _dedupe_lines(lines, rho_tol=6.0, theta_tol=np.deg2rad(3))
    fam_a, fam_b = _two_families(lines)
    if len(fam_a) < 2 or len(fam_b) < 2:
        raise BoardNotFoundError("dition board: no two families of roughly perpendicular lines")
    # score image: blackhat, dilated a little so a near miss still counts
    score_img = cv2.dilate((bh > thr).astype(np.uint8), np.ones((3, 3), np.uint8))
    fam_a = _sort_family(fam_a)
    fam_b = _sort_family(fam_b)
    quads = _all_quads(fam_a, fam_b, min_area=0.04 * small.shape[0] * small.shape[1])
    if len(quads) == 0:
        raise BoardNotFoundError("dition board: no large quadrilateral of lines in the frame")
    scores = _score_quads(quads, score_img, _square_samples())
    k_best = int(np.argmax(scores))
    if scores[k_best] < params.min_support:
        raise BoardNotFoundError(
            f"dition board: no quadrilateral of lines looks like the two drawn squares "
            f"(best agreement {max(float(scores[k_best]), 0):.0%})"
        )
    best = (float(scores[k_best]), quads[k_best])
    # back to full-size (undistorted) pixels; pixel centres scale about -0.5
    quad_px = (best[1] + 0.5) / f - 0.5
    quad_px = _canonical_corner_order(quad_px)
    return homography_4pt(quad_px, board_corners_board("dition"))


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


def _score_quads(quads: np.ndarray, score_img: np.ndarray, samples_board: np.ndarray) -> np.ndarray:
    """Fraction of the predicted drawn-line samples that fall on line pixels, per quad."""
    dst = quads
    src = board_corners_board("dition")
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


def _square_samples() -> np.ndarray:
    """Board points along the 8 drawn lines (both squares), away from the corners."""
    pts = []
    for lo, hi in DITION_SQUARES:
        t = np.linspace(lo + 0.3, hi - 0.3, 24)
        for c in (lo, hi):
            pts.append(np.stack([np.full_like(t, c), t], axis=1))
            pts.append(np.stack([t, np.full_like(t, c)], axis=1))
    return np.concatenate(pts)


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
    """Split lines (a, b, c) by orientation (mod 180 degrees) around the dominant direction."""
    ang = np.mod(np.arctan2(lines[:, 1], lines[:, 0]), np.pi)
    # dominant orientation via a doubled-angle mean of the strongest few
    ref = ang[0]
    d = np.abs(((ang - ref + np.pi / 2) % np.pi) - np.pi / 2)
    a = lines[d < np.deg2rad(25)]
    b = lines[(d > np.deg2rad(60))]
    return a, b


def _sort_family(fam: np.ndarray) -> np.ndarray:
    """Make normals consistent and sort by offset, keeping at most the extremes and a few more."""
    n0 = fam[0, :2]
    out = fam.copy()
    flip = out[:, :2] @ n0 < 0
    out[flip] *= -1
    # the strongest lines (Hough order), then sorted by offset
    out = out[:10]
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


def _refine_dition(
    gray: np.ndarray,
    H_image_to_board: np.ndarray,
    params: BoardParams,
    intrinsics: Intrinsics | None,
    passes: int = 2,
) -> BoardFit:
    """Sub-pixel fit of the homography to the 8 drawn lines, starting from H_image_to_board."""
    H = np.asarray(H_image_to_board, dtype=np.float64)
    support = 0.0
    residual = float("inf")
    for p in range(passes):
        # the first pass searches wide (the coarse fit may be off by ~1 line spacing of the
        # profile), the later ones narrow
        halfwidth = params.profile_halfwidth_board * (2.0 if p == 0 and passes > 1 else 0.6 if p else 1.0)
        H, support, residual = _refine_pass(gray, H, params, intrinsics, halfwidth)
    return fit_from_homography(
        H, "dition", "lines", intrinsics=intrinsics, residual_px=residual, support=support
    )


def _line_constraints() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sample points on the 8 drawn lines: board points (N, 2), axis (N,) 0 = line x = c
    (vertical) / 1 = line y = c, and the constant c (N,)."""
    pts, axis, const = [], [], []
    for lo, hi in DITION_SQUARES:
        n = int((hi - lo) * 4)
        t = np.linspace(lo + 0.35, hi - 0.35, n)
        for c in (lo, hi):
            pts.append(np.stack([np.full_like(t, c), t], axis=1))
            axis.append(np.zeros(n, int))
            const.append(np.full(n, c))
            pts.append(np.stack([t, np.full_like(t, c)], axis=1))
            axis.append(np.ones(n, int))
            const.append(np.full(n, c))
    return np.concatenate(pts), np.concatenate(axis), np.concatenate(const)


_LINE_PTS, _LINE_AXIS, _LINE_CONST = _line_constraints()


def line_profiles(
    gray: np.ndarray,
    H_board_to_image: np.ndarray,
    pts_board: np.ndarray,
    axis: np.ndarray,
    offsets_board: np.ndarray,
    intrinsics: Intrinsics | None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Grey profiles across drawn lines: for each point on a line (board units; `axis` 0 for a
    line x = c, 1 for y = c) the samples at `offsets_board` along the line's normal, taken in
    the captured image (through the lens when known). (values (N, n) float64, sample points
    undistorted px (N, n, 2), sample points captured px (N, n, 2), inside: the whole profile
    lies in the image)."""
    import cv2

    normal_b = np.zeros_like(pts_board)
    normal_b[axis == 0, 0] = 1.0
    normal_b[axis == 1, 1] = 1.0
    n_prof = len(offsets_board)
    prof_b = pts_board[:, None, :] + offsets_board[None, :, None] * normal_b[:, None, :]
    prof_u = apply_homography(H_board_to_image, prof_b.reshape(-1, 2))  # undistorted px
    prof_px = intrinsics.distort_points(prof_u) if intrinsics is not None else prof_u
    mx = prof_px[:, 0].reshape(-1, n_prof).astype(np.float32)
    my = prof_px[:, 1].reshape(-1, n_prof).astype(np.float32)
    vals = cv2.remap(gray, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=0)
    h, w = gray.shape
    inside = (mx >= 0).all(1) & (my >= 0).all(1) & (mx < w - 1).all(1) & (my < h - 1).all(1)
    return (vals.astype(np.float64), prof_u.reshape(-1, n_prof, 2),
            np.asarray(prof_px).reshape(-1, n_prof, 2), inside)


def darkest_subpixel(vals: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per profile, the darkest sample after light smoothing and the parabola's sub-sample
    offset through it: (index (N,) int, offset (N,) in [-0.5, 0.5], smoothed darkest value)."""
    vs = vals.copy()
    vs[:, 1:-1] = 0.25 * vals[:, :-2] + 0.5 * vals[:, 1:-1] + 0.25 * vals[:, 2:]
    k = np.argmin(vs[:, 1:-1], axis=1) + 1
    rows = np.arange(len(vs))
    y0, y1, y2 = vs[rows, k - 1], vs[rows, k], vs[rows, k + 1]
    denom = y0 - 2 * y1 + y2
    off = np.where(denom > 1e-9, 0.5 * (y0 - y2) / np.maximum(denom, 1e-9), 0.0)
    return k, np.clip(off, -0.5, 0.5), y1


def _refine_pass(
    gray: np.ndarray,
    H_i2b: np.ndarray,
    params: BoardParams,
    intrinsics: Intrinsics | None,
    halfwidth_board: float,
) -> tuple[np.ndarray, float, float]:

    H_b2i = np.linalg.inv(H_i2b)
    pts_b = _LINE_PTS
    axis = _LINE_AXIS
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
        H_new = _fit_h_to_lines(centre_u[keep], axis[keep], _LINE_CONST[keep], H_i2b)
        b = apply_homography(H_new, centre_u)
        res_b = np.where(axis == 0, b[:, 0], b[:, 1]) - _LINE_CONST
        scale_px = _px_per_unit(H_new)
        res_px = np.abs(res_b) * scale_px
        med = np.median(res_px[ok]) if ok.any() else 0.0
        keep = ok & (res_px < max(3.0 * 1.4826 * med, 0.3))
    support = float(keep.mean())
    residual = float(np.sqrt(np.mean(res_px[keep] ** 2))) if keep.any() else float("inf")
    return H_new, support, residual


def _px_per_unit(H_i2b: np.ndarray) -> float:
    H_b2i = np.linalg.inv(H_i2b)
    c = apply_homography(H_b2i, np.array([[10.0, 10.0], [11.0, 10.0], [10.0, 11.0]]))
    return float((np.linalg.norm(c[1] - c[0]) + np.linalg.norm(c[2] - c[0])) / 2)


def _fit_h_to_lines(
    pts_u: np.ndarray, axis: np.ndarray, const: np.ndarray, H_init: np.ndarray
) -> np.ndarray:
    """Least-squares H (undistorted px -> board) with every point on its board line:
    row_axis(H) . p - c * row_2(H) . p = 0. Hartley-normalised, solved by SVD."""
    m = pts_u.mean(axis=0)
    sc = math.sqrt(2) / max(np.mean(np.linalg.norm(pts_u - m, axis=1)), 1e-9)
    T = np.array([[sc, 0, -sc * m[0]], [0, sc, -sc * m[1]], [0, 0, 1]])
    p = np.column_stack([(pts_u - m) * sc, np.ones(len(pts_u))])
    # board side normalisation: b' = (b - 10) / 10
    Tb = np.array([[0.1, 0, -1.0], [0, 0.1, -1.0], [0, 0, 1]])
    cn = (const - 10.0) / 10.0
    A = np.zeros((len(p), 9))
    for ax in (0, 1):
        sel = axis == ax
        A[sel, 3 * ax : 3 * ax + 3] = p[sel]
        A[sel, 6:9] = -cn[sel, None] * p[sel]
    # the constraints fix 8 dof only when both families are present
    _, _, vt = np.linalg.svd(A, full_matrices=False)
    Hn = vt[-1].reshape(3, 3)
    H = np.linalg.inv(Tb) @ Hn @ T
    H = H / H[2, 2]
    if np.sign(np.linalg.det(H)) != np.sign(np.linalg.det(H_init)):
        return H_init
    return H


def _check_game(game: str) -> str:
    if game not in BOARD_SIZE:
        raise ValueError(f"unknown game {game!r}: expected one of {sorted(BOARD_SIZE)}")
    return game


def _check_corners(corners_px: np.ndarray) -> np.ndarray:
    import cv2

    try:
        c = np.asarray(corners_px, dtype=np.float64).reshape(4, 2)
    except (TypeError, ValueError):
        raise InvalidCornersError(f"corners must be 4 (x, y) pairs, got {corners_px!r}") from None
    if not np.all(np.isfinite(c)):
        raise InvalidCornersError(f"corners must be finite, got {c.tolist()}")
    if not cv2.isContourConvex(c.astype(np.float32)) or abs(cv2.contourArea(c.astype(np.float32))) < 16:
        raise InvalidCornersError(
            f"corners {c.round(1).tolist()} do not form a convex quadrilateral in order 0, 1, 2, 3"
        )
    return c


if __name__ == "__main__":  # python -m vision.board IMAGE [game]
    import cv2

    img = cv2.imread(sys.argv[1])
    fit = find_board(img, game=sys.argv[2] if len(sys.argv) > 2 else "dition")
    print(fit.to_dict())
