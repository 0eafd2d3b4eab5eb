"""Camera intrinsics and lens distortion from views of the ChArUco target (OpenCV 4.7+/5.x API).

`detect_target(image, spec)` finds the target's inner corners in one frame;
`calibrate_camera(images_or_views, spec, params)` checks that there are enough, and different
enough, views, then runs `cv2.calibrateCameraExtended` on the matched corners and reports the RMS
reprojection error and the standard deviation of each intrinsic.

Refusals (clear errors, never a silently poor calibration):
- `TooFewViewsError`: fewer than `min_views` images in which the target was seen well enough.
- `ViewsTooSimilarError`: fewer than `min_views` distinct poses (the target's outline must move by
  a few percent of the image between shots), too little tilt, or a result whose focal length or
  principal point the views do not pin down (standard deviation above the limits).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from calibration.errors import (
    ImageSizeMismatchError,
    TargetNotFoundError,
    TooFewViewsError,
    ViewsTooSimilarError,
)
from calibration.target import CharucoSpec, charuco_board

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from vision.camera import Intrinsics


#: the target `referee print charuco` prints
DEFAULT_SPEC = CharucoSpec()


@dataclass(frozen=True)
class IntrinsicsParams:
    """Acceptance limits of a camera calibration (shipped tuning as defaults)."""

    #: usable, distinct views needed
    min_views: int = 6
    #: ChArUco corners a view must show to count (the 9x6 target has 40)
    min_corners: int = 12
    #: two views are "the same pose" when the target's four outer corners move by less than
    #: this fraction of the image diagonal (on average) between them
    same_pose_fraction: float = 0.03
    #: the views' target normals must spread over at least this angle (fronto-parallel views
    #: cannot separate the focal length from the distance)
    min_tilt_spread_deg: float = 10.0
    #: largest accepted standard deviation of fx, fy, relative to the focal length
    max_focal_sigma: float = 0.005
    #: largest accepted standard deviation of cx, cy, relative to the image width / height
    max_centre_sigma: float = 0.005
    #: fix the 6th-order radial term k3 (stabler for normal lenses; the Pi cameras need no k3)
    fix_k3: bool = True

    def __post_init__(self) -> None:
        if self.min_views < 3:
            raise ValueError(f"IntrinsicsParams.min_views must be at least 3, got {self.min_views}")
        if self.min_corners < 6:
            raise ValueError(f"IntrinsicsParams.min_corners must be at least 6, got {self.min_corners}")


@dataclass(frozen=True, eq=False)
class TargetView:
    """The target's corners found in one image: `corners_px` (N, 2) float32 (captured pixels),
    `object_mm` (N, 3) float32 on the target plane (z = 0), `ids` (N,) int32, `image_size`."""

    corners_px: npt.NDArray[np.float32]
    object_mm: npt.NDArray[np.float32]
    ids: npt.NDArray[np.int32]
    image_size: tuple[int, int]
    source: str = ""


@dataclass(frozen=True, eq=False)
class CameraCalibration:
    """The result: intrinsics with distortion, the RMS reprojection error (px), per-view RMS,
    the standard deviations of fx, fy, cx, cy (px), and the views that were used / rejected."""

    intrinsics: Intrinsics
    rms_px: float
    per_view_rms_px: tuple[float, ...]
    sigma_px: tuple[float, float, float, float]
    views_used: int
    distinct_poses: int
    tilt_spread_deg: float
    rejected: tuple[tuple[str, str], ...] = field(default=())

    def summary(self) -> dict[str, object]:
        k = self.intrinsics.camera_matrix
        return {
            "rms_px": round(self.rms_px, 4),
            "fx": round(float(k[0, 0]), 2), "fy": round(float(k[1, 1]), 2),
            "cx": round(float(k[0, 2]), 2), "cy": round(float(k[1, 2]), 2),
            "sigma_px": [round(s, 3) for s in self.sigma_px],
            "dist_coeffs": [round(float(v), 6) for v in self.intrinsics.dist_coeffs],
            "views_used": self.views_used, "distinct_poses": self.distinct_poses,
            "tilt_spread_deg": round(self.tilt_spread_deg, 1),
            "worst_view_rms_px": round(max(self.per_view_rms_px), 4),
            "rejected": [{"view": s, "reason": r} for s, r in self.rejected],
        }


def charuco_offset_px() -> float:
    """How far right and down of the true corner OpenCV's `CharucoDetector` puts it, in px.

    OpenCV 4.x returns ChArUco corners half a pixel off: on one rendered image, 4.10 and 4.11
    gave +0.50 px in x and in y against the true projection, 5.0 gave 0.00 px (within 0.003).
    """
    import cv2

    return 0.5 if int(cv2.__version__.split(".")[0]) < 5 else 0.0


def detect_target(image: npt.NDArray[np.uint8], spec: CharucoSpec = DEFAULT_SPEC, *,
                  min_corners: int = 1, source: str = "") -> TargetView:
    """The ChArUco corners in one BGR (or grey) image; raises `TargetNotFoundError` when fewer
    than `min_corners` are found."""
    import cv2
    import numpy as np

    if image is None or image.ndim not in (2, 3) or image.size == 0:
        raise TargetNotFoundError(f"{source or 'image'}: not an image")
    board = charuco_board(spec)
    detector = cv2.aruco.CharucoDetector(board)
    corners, ids, _, _ = detector.detectBoard(image)
    n = 0 if corners is None or ids is None else len(ids)
    if n < max(1, min_corners):
        raise TargetNotFoundError(
            f"{source or 'image'}: ChArUco target seen with {n} corners (need {min_corners}); is "
            f"the whole {spec.squares[0]}x{spec.squares[1]} target ({spec.dictionary}) in view, "
            "sharp and evenly lit?")
    obj, img = board.matchImagePoints(corners, ids)
    h, w = image.shape[:2]
    img = np.asarray(img, np.float32) - charuco_offset_px()
    return TargetView(img.reshape(-1, 2),
                      np.asarray(obj, np.float32).reshape(-1, 3),
                      np.asarray(ids, np.int32).reshape(-1), (int(w), int(h)), source)


def calibrate_camera(
    images: Iterable[npt.NDArray[np.uint8] | TargetView],
    spec: CharucoSpec = DEFAULT_SPEC,
    params: IntrinsicsParams = IntrinsicsParams(),
    *,
    names: Sequence[str] | None = None,
) -> CameraCalibration:
    """Intrinsics from 6+ different views of the printed target (images or detected views)."""
    views: list[TargetView] = []
    rejected: list[tuple[str, str]] = []
    for k, item in enumerate(images):
        name = names[k] if names is not None and k < len(names) else f"view {k + 1}"
        if isinstance(item, TargetView):
            view = item
        else:
            try:
                view = detect_target(item, spec, source=name)
            except TargetNotFoundError as exc:
                rejected.append((name, str(exc)))
                continue
        if len(view.ids) < params.min_corners:
            rejected.append((name, (f"only {len(view.ids)} target corners seen (need "
                                   f"{params.min_corners})")))
            continue
        views.append(view)
    return _calibrate_views(views, rejected, spec, params)


def _calibrate_views(views: list[TargetView], rejected: list[tuple[str, str]],
                     spec: CharucoSpec, params: IntrinsicsParams) -> CameraCalibration:
    import cv2
    import numpy as np

    from vision.camera import Intrinsics

    if len(views) < params.min_views:
        detail = "; ".join(f"{s}: {r}" for s, r in rejected[:5])
        raise TooFewViewsError(
            f"only {len(views)} usable view(s) of the calibration target, need at least "
            f"{params.min_views}: take more pictures of the printed target from different angles"
            + (f" (rejected: {detail})" if detail else ""))
    sizes = {v.image_size for v in views}
    if len(sizes) != 1:
        raise ImageSizeMismatchError(
            "all calibration images must have the same size (the size the referee will use), "
            f"got {', '.join(f'{w}x{h}' for w, h in sorted(sizes))}")
    image_size = sizes.pop()
    distinct = _distinct_poses(views, spec, image_size, params.same_pose_fraction)
    if distinct < params.min_views:
        raise ViewsTooSimilarError(
            f"the {len(views)} views show only {distinct} distinct pose(s) of the target, need "
            f"{params.min_views}: move and tilt the target (or the camera) between pictures, "
            "covering the corners of the image")
    flags = cv2.CALIB_FIX_K3 if params.fix_k3 else 0
    criteria = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 100, 1e-10)
    rms, k, dist, rvecs, _, sigma_intr, _, per_view = cv2.calibrateCameraExtended(
        [v.object_mm for v in views], [v.corners_px for v in views], image_size, None, None,
        flags=flags, criteria=criteria)
    tilt_spread = _tilt_spread_deg(rvecs)
    sigma = tuple(float(s) for s in np.asarray(sigma_intr).ravel()[:4])
    if tilt_spread < params.min_tilt_spread_deg:
        raise ViewsTooSimilarError(
            f"the target was seen from nearly the same direction in every view (tilts spread "
            f"over {tilt_spread:.1f} deg, need {params.min_tilt_spread_deg:g}): tilt it by "
            "20-40 degrees in different directions")
    w, h = image_size
    fx, fy = float(k[0, 0]), float(k[1, 1])
    if not all(math.isfinite(s) for s in sigma) or sigma[0] > params.max_focal_sigma * fx \
            or sigma[1] > params.max_focal_sigma * fy:
        raise ViewsTooSimilarError(
            f"the views do not pin down the focal length (fx {fx:.1f} +- {sigma[0]:.1f} px): "
            "add views with the target tilted in other directions")
    if sigma[2] > params.max_centre_sigma * w or sigma[3] > params.max_centre_sigma * h:
        raise ViewsTooSimilarError(
            f"the views do not pin down the image centre (cx +- {sigma[2]:.1f}, cy +- "
            f"{sigma[3]:.1f} px): add views with the target near the image's corners")
    intrinsics = Intrinsics(np.asarray(k, np.float64), np.asarray(dist, np.float64).ravel(),
                            image_size)
    return CameraCalibration(
        intrinsics=intrinsics, rms_px=float(rms),
        per_view_rms_px=tuple(float(e) for e in np.asarray(per_view).ravel()),
        sigma_px=sigma, views_used=len(views),  # type: ignore[arg-type]
        distinct_poses=distinct, tilt_spread_deg=tilt_spread, rejected=tuple(rejected))


def _distinct_poses(views: list[TargetView], spec: CharucoSpec, image_size: tuple[int, int],
                    fraction: float) -> int:
    """Count views whose projected target outline differs from every earlier distinct one."""
    import cv2
    import numpy as np

    tw, th = spec.size_mm
    outline = np.array([[0, 0], [tw, 0], [tw, th], [0, th]], np.float64).reshape(-1, 1, 2)
    diag = math.hypot(*image_size)
    kept: list[np.ndarray] = []
    for v in views:
        if len(v.ids) < 4:
            continue
        H, _ = cv2.findHomography(v.object_mm[:, :2].astype(np.float64),
                                  v.corners_px.astype(np.float64), 0)
        if H is None:
            continue
        quad = cv2.perspectiveTransform(outline, H).reshape(4, 2)
        if all(np.mean(np.linalg.norm(quad - q, axis=1)) > fraction * diag for q in kept):
            kept.append(quad)
    return len(kept)


def _tilt_spread_deg(rvecs: Sequence[npt.NDArray[np.float64]]) -> float:
    """Largest angle between the target normals of two views (camera frame)."""
    import cv2
    import numpy as np

    normals = np.array([cv2.Rodrigues(np.asarray(r, np.float64))[0][:, 2] for r in rvecs])
    cos = np.clip(normals @ normals.T, -1.0, 1.0)
    return float(np.degrees(np.arccos(cos.min())))
