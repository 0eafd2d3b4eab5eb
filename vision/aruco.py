"""The board from the ArUco markers of the game's layout (`vision.markers`), for any game.

`find_board_aruco(frame, game, intrinsics) -> BoardFit` (method "aruco"; at least 2 of the 4
markers must be seen); `detect_aruco_markers(frame, game)` lists the markers found.
"""

from __future__ import annotations

import functools

import numpy as np

from vision.camera import Intrinsics
from vision.errors import BoardNotFoundError
from vision.geometry import BoardFit, apply_homography, as_gray, fit_from_homography
from vision.markers import QUIET_ZONE_FRACTION, layout_for


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
