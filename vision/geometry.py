"""The geometry every stage uses: where the board is (`BoardFit`), homographies, the camera.

Frames: `corners_px` and every `*_px` are pixels of the frame as captured (distorted). The
homographies act on undistorted pixels (identical to captured pixels when no intrinsics are
given). The helpers `board_to_image`, `image_to_board` and `rectify` hide the difference; the
lens model is the caller's intrinsics or the one estimated with the board (`board_intrinsics`).
`camera_geometry` places the camera above the board from the homography (and K when known).
`line_profiles` / `darkest_subpixel` measure drawn lines across their width (the Dition board
finder and the lens estimate use them).

Nothing here knows how a board is found: that is `vision.aruco` (markers, any game),
`vision.dition_board`, `vision.domination_board`, and `vision.board.find_board` picks.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from vision.camera import Intrinsics
from vision.errors import InvalidCornersError, InvalidImageError

Game = Literal["dition", "domination"]

#: side of the playing square in board units, per game
BOARD_SIZE: dict[str, float] = {"dition": 20.0, "domination": 8.0}
#: the drawn squares of the Dition board (line centres), as (lo, hi) in board units
DITION_SQUARES: tuple[tuple[float, float], ...] = ((0.0, 20.0), (3.0, 17.0))
DITION_LINE_WIDTH = 0.06


@dataclass(frozen=True)
class LineDrawing:
    """Straight lines drawn on a board, in its frame: each (axis, c, lo, hi) is the line x = c
    (axis 0) or y = c (axis 1) from lo to hi; the board's corners are [0, size]^2 of `game`;
    `name` starts the finder's messages."""

    game: str
    name: str
    lines: tuple[tuple[int, float, float, float], ...]
    #: the least distance between two parallel lines (a profile across one stays short of it)
    spacing: float
    #: lines (as `lines`) where nothing is drawn: a guess at the board that finds lines there
    #: is off by a fraction of the spacing (a crowded grid's men hide lines, their edges pass
    #: for some)
    gaps: tuple[tuple[int, float, float, float], ...] = ()

    @property
    def size(self) -> float:
        return BOARD_SIZE[self.game]

    def samples(self, margin: float, per_unit: float | None = None, n: int = 24, gaps: bool = False
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Points on the lines (`gaps`: on the gaps) `margin` in from their ends, `per_unit` a unit
        along each line (else `n` a line): board points (N, 2), axis (N,), constant (N,)."""
        pts, axis, const = [], [], []
        for ax, c, lo, hi in self.gaps if gaps else self.lines:
            k = int((hi - lo) * per_unit) if per_unit else n
            t = np.linspace(lo + margin, hi - margin, k)
            on = np.full_like(t, c)
            pts.append(np.stack([on, t], 1) if ax == 0 else np.stack([t, on], 1))
            axis.append(np.full(k, ax, int))
            const.append(on)
        return np.concatenate(pts), np.concatenate(axis), np.concatenate(const)


#: the Dition board's two drawn squares
DITION_DRAWING = LineDrawing("dition", "dition board", tuple(
    (ax, c, lo, hi) for lo, hi in DITION_SQUARES for c in (lo, hi) for ax in (0, 1)), spacing=3.0)
#: a drawn 8x8 for Domination: the 9 + 9 lines of its squares' edges
GRID_8X8 = LineDrawing("domination", "drawn 8x8", tuple(
    (ax, float(k), 0.0, 8.0) for k in range(9) for ax in (0, 1)), spacing=1.0,
    gaps=tuple((ax, k + 0.5, 0.0, 8.0) for k in range(8) for ax in (0, 1)))
#: the drawn 8x8's lines (and gaps) as far as they border a playable square: Domination blocks
#: off the 12 corner squares (tape, paper, spare men), which hide the lines' ends there; from
#: line (or column) k on, the first playable square is 2, 1, 0, ... in
_PLAYABLE_FROM = (2.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 2.0)
GRID_8X8_PLAYABLE = LineDrawing("domination", "drawn 8x8", tuple(
    (ax, float(k), _PLAYABLE_FROM[k], 8.0 - _PLAYABLE_FROM[k]) for k in range(9) for ax in (0, 1)), spacing=1.0,
    gaps=tuple((ax, k + 0.5, _PLAYABLE_FROM[k + (k > 3)], 8.0 - _PLAYABLE_FROM[k + (k > 3)])
               for k in range(8) for ax in (0, 1)))


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
# homography helpers
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
    s = BOARD_SIZE[check_game(game)]
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

    corners = check_corners(corners_px)
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
    return BoardFit(check_corners(corners_px), fit.H_image_to_board, fit.H_board_to_image, game, "corners")


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
    far below a thousandth of a pixel with OpenCV 5's float interpolation; OpenCV 4.x's `remap`
    interpolates with 1/32-cell weights, up to 1/32 of a table cell (about 0.04 px at a typical
    3 px cell). Points beyond the table's margin are clamped to it."""
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


#: points per row of the maps `sample_points` folds the points into: `cv2.remap` takes maps
#: under 32767 (SHRT_MAX) on a side, so one row of N points fails from there on; with rows of
#: this many, one call takes up to 32766 rows (134 M points) and more are taken in turns
_SAMPLE_COLS = 4096
_MAP_MAX_SIDE = 32766


def sample_points(image: np.ndarray, points_px: np.ndarray, dtype: type = np.float32) -> np.ndarray:
    """Bilinear samples of `image` at any number of points (N, 2) px (x, y), outside it the
    border replicated: (N,) of a one-channel image, (N, channels) of the others, as `dtype`
    (of a uint8 image the samples are `cv2.remap`'s, rounded to whole levels)."""
    import cv2

    pts = np.asarray(points_px, dtype=np.float32).reshape(-1, 2)
    n = len(pts)
    channels = image.shape[2] if image.ndim == 3 else 1
    out = np.empty((n, channels), dtype=dtype)
    cols = max(1, min(n, _SAMPLE_COLS))
    chunk = cols * _MAP_MAX_SIDE
    for start in range(0, n, chunk):
        part = pts[start : start + chunk]
        m = len(part)
        rows = -(-m // cols)
        if rows * cols != m:
            part = np.concatenate([part, np.zeros((rows * cols - m, 2), np.float32)])
        # one two-channel float map: remap converts it to its fixed point as it does an x, y pair
        vals = cv2.remap(image, part.reshape(rows, cols, 2), None, cv2.INTER_LINEAR,
                         borderMode=cv2.BORDER_REPLICATE)
        out[start : start + m] = vals.reshape(-1, channels)[:m]
    return out[:, 0] if image.ndim == 2 else out


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


# --------------------------------------------------------------------------------------------
# camera geometry from the homography
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CameraGeometry:
    """Where the camera is, in the board frame: centre_board (x, y) of its foot point and
    height_board above the board plane."""

    centre_board: tuple[float, float]
    height_board: float
    focal_px: float
    estimated: bool

    def thickness_shift(self, centres_board: np.ndarray, height: float) -> np.ndarray:
        """(N, 2) displacement, on the board plane, of a point `height` above each centre."""
        c = np.asarray(self.centre_board)
        k = height / max(self.height_board - height, 1e-6)
        return (np.asarray(centres_board, dtype=np.float64) - c) * k


#: the horizontal field of view of the Pi camera v2 (degrees): the focal length assumed where
#: no calibration and no view tells it
PI_V2_HFOV_DEG = 62.2


def row_median(values: np.ndarray) -> np.ndarray:
    """`np.median(values, axis=1)` of an (N, P) or (N, P, C) array of finite values: (N,) or
    (N, C), by one sort (np.median's partition is several times slower on these short rows)."""
    v = np.sort(values, axis=1)
    n = v.shape[1]
    lo, hi = v[:, (n - 1) // 2], v[:, n // 2]
    return lo if n % 2 else (lo + hi) / 2


def focal_from_hfov(width_px: int, hfov_deg: float) -> float:
    """The focal length (px) of a camera `width_px` wide whose horizontal field of view is
    `hfov_deg` degrees (square pixels, principal point at the centre)."""
    return (width_px / 2.0) / math.tan(math.radians(hfov_deg) / 2.0)


def camera_geometry(
    board: BoardFit,
    image_size: tuple[int, int],
    intrinsics: Intrinsics | None = None,
    default_hfov_deg: float = PI_V2_HFOV_DEG,
    min_perspective_strength: float = 0.05,
) -> CameraGeometry:
    """The camera centre above the board from H_board_to_image (and K when known); the result
    is cached per board, image size and camera."""
    return _camera_geometry_cached(board.H_board_to_image.tobytes(), (int(image_size[0]), int(image_size[1])),
                                   intrinsics, float(default_hfov_deg), float(min_perspective_strength))


@functools.lru_cache(maxsize=16)
def _camera_geometry_cached(
    H_bytes: bytes,
    image_size: tuple[int, int],
    intrinsics: Intrinsics | None,
    default_hfov_deg: float,
    min_perspective_strength: float,
) -> CameraGeometry:
    w, h = image_size
    H = np.frombuffer(H_bytes, dtype=np.float64).reshape(3, 3)
    if intrinsics is not None:
        K = intrinsics.camera_matrix
        estimated = False
    else:
        cx, cy = (w - 1) / 2.0, (h - 1) / 2.0
        T = np.array([[1, 0, -cx], [0, 1, -cy], [0, 0, 1.0]])
        Hc = T @ H
        h1, h2 = Hc[:, 0], Hc[:, 1]
        f_default = focal_from_hfov(w, default_hfov_deg)
        # r1 . r2 = 0 and |r1| = |r2| with K^-1 h = (h_x / f, h_y / f, h_z): two equations
        # a_i / f^2 + c_i = 0, solved in least squares for x = 1 / f^2
        a = np.array([h1[0] * h2[0] + h1[1] * h2[1], h1[0] ** 2 + h1[1] ** 2 - h2[0] ** 2 - h2[1] ** 2])
        c = np.array([h1[2] * h2[2], h1[2] ** 2 - h2[2] ** 2])
        f = f_default
        estimated = True
        aa = float(a @ a)
        # how strongly the perspective terms speak, relative to the in-plane ones at f_default
        strength = math.sqrt(float(c @ c)) * f_default**2 / max(math.sqrt(aa), 1e-30)
        if aa > 1e-30 and strength > min_perspective_strength:
            x = -float(a @ c) / aa
            if x > 0 and 0.4 * f_default < 1 / math.sqrt(x) < 2.5 * f_default:
                f = 1 / math.sqrt(x)
        K = np.array([[f, 0, cx], [0, f, cy], [0, 0, 1.0]])
    M = np.linalg.inv(K) @ H
    lam = 2.0 / (np.linalg.norm(M[:, 0]) + np.linalg.norm(M[:, 1]))
    M = M * lam
    if M[2, 2] < 0:  # the board must be in front of the camera
        M = -M
    r1, r2, t = M[:, 0], M[:, 1], M[:, 2]
    r3 = np.cross(r1, r2)
    R = np.stack([r1, r2, r3], axis=1)
    u, _, vt = np.linalg.svd(R)
    R = u @ vt
    C = -R.T @ t
    # board frame z: r3 = x cross y points into the table (y down); the camera has z < 0
    return CameraGeometry((float(C[0]), float(C[1])), float(abs(C[2])), float(K[0, 0]), estimated)


def check_game(game: str) -> str:
    """`game` when a board of that name is known, else ValueError naming the known ones."""
    if game not in BOARD_SIZE:
        raise ValueError(f"unknown game {game!r}: expected one of {sorted(BOARD_SIZE)}")
    return game


def check_corners(corners_px: np.ndarray) -> np.ndarray:
    """The 4 corners as a (4, 2) float64 array; InvalidCornersError unless they are finite and
    form a convex quadrilateral in order 0, 1, 2, 3."""
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
