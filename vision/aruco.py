"""The board from the ArUco markers of the game's layout (`vision.markers`), for any game.

`find_board_aruco(frame, game, intrinsics) -> BoardFit` (method "aruco"; at least 2 of the 4
markers must be seen); `detect_aruco_markers(frame, game)` lists the markers found.

The markers are searched for on the frame halved while it stays at least 800 px wide (a kit
marker on a board spanning half the frame is then still ~30 px, 5 px per bit, where OpenCV reads
4), their corners then refined on the full frame (`cv2.cornerSubPix`): a quarter of the pixels
to threshold and trace, 25-35 -> 6-14 ms on a 1640x1232 frame, and the corners closer (board
corner error on the simulated table median 0.05 px, max 0.09, against 0.06 and 0.12 found on the
full frame). The halved frame is thresholded at one adaptive window first (13 px: OpenCV's
windows are 3, 13 and 23 px; see `_HALVED_WINDOWS_PX`), the other only for the markers that
window missed: each threshold is one pass over the frame and a contour trace, and every marker
of the simulated table was found at the first (3.8 -> 1.9 ms on the halved frame, seeds 8 and
9). A frame where the halved frame misses any of the layout's markers is searched again at full
size (markers too small for the halved frame). Before all that, the halved frame is halved once
more and searched at one window (`QUARTER_WINDOW_PX`): where it shows all of the layout's
markers, their corners are refined on the full frame as above and the halved frame is not
searched (find_board_aruco on the simulated table 0.89 -> 0.69 decodes of its frame, the board
corners as close: median 0.042 px, max 0.085 against 0.091; all four markers there on 24 of
24 frames of seed 8, 7 of 10 of seeds 11-20).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from vision.camera import Intrinsics
from vision.errors import BoardNotFoundError
from vision.geometry import BoardFit, apply_homography, as_gray, fit_from_homography
from vision.markers import QUIET_ZONE_FRACTION, layout_for
from vision.resize import halve, halve_to


def detect_aruco_markers(frame: np.ndarray, game: str | None = None) -> dict[int, np.ndarray]:
    """All DICT_4X4_50 markers in the frame: id -> (4, 2) float64 captured-pixel corners in the
    marker's own order (top-left, top-right, bottom-right, bottom-left). With `game`, only the
    ids of that game's layout are kept."""
    gray = as_gray(frame)
    wanted = set(layout_for(game).ids) if game is not None else None
    small, factor = halve_to(gray, 2 * _MIN_SEARCH_WIDTH_PX - 1)
    if factor > 1 and wanted:
        # the halved frame halved once more first: all of the layout's markers found there, they
        # are refined on the full frame as the halved frame's are; else the halved frame's search
        quarter = _detect(_aruco_detector(QUARTER_WINDOW_PX), halve(small), wanted)
        if wanted <= quarter.keys():
            for corners in quarter.values():
                _refine_corners(gray, corners, 2 * factor)
            return quarter
    found: dict[int, np.ndarray] = {}
    if factor > 1:
        for window in _HALVED_WINDOWS_PX:
            more = _detect(_aruco_detector(window), small, wanted)
            for marker_id, corners in more.items():
                if marker_id not in found:
                    _refine_corners(gray, corners, factor)
                    found[marker_id] = corners
            if wanted is not None and wanted <= found.keys():
                break
    if factor == 1 or len(found) < (len(wanted) if wanted is not None else 1):
        found = _detect(_aruco_detector(), gray, wanted)
    return found


#: the width the marker search halves the frame down to at least, px
_MIN_SEARCH_WIDTH_PX = 800
#: the adaptive threshold windows on the halved frame, px, in the order tried. A marker's black
#: border is one bit wide, its quiet zone 1.5 bits (`QUIET_ZONE_FRACTION`); a window that spans
#: both shows the border darker than its surroundings and closes its contour. A kit marker is 6
#: bits on 0.6 of a cell: on the simulated table's 1640x1232 frames (85-135 px per cell) a bit of
#: the halved frame is 4.3-6.7 px, which 13 px spans twice; 23 px is for bigger ones (a board
#: nearer the camera). OpenCV's 3 px window is under any bit the halved frame can read (4 px or
#: more): it only traces noise and edges.
_HALVED_WINDOWS_PX = (13, 23)


#: the adaptive threshold window on the frame halved twice (the first pass), px: a kit marker's
#: bit there is 2.2-3.4 px on the simulated table's frames; the window spans the black border
#: and the quiet zone beyond it as 13 px do on the halved frame, and 5 px found all four
#: markers on more of its frames than 7, 9 or 13 (94, 88, 75, 81 % of 16 frames, seed 9)
QUARTER_WINDOW_PX = 5


def _detect(detector: Any, gray: np.ndarray, wanted: set[int] | None) -> dict[int, np.ndarray]:
    """The markers `detector` finds in `gray`: id -> (4, 2) float64 corners (only `wanted`)."""
    corners, ids, _ = detector.detectMarkers(gray)
    found: dict[int, np.ndarray] = {}
    if ids is None:
        return found
    for c, i in zip(corners, ids.ravel()):
        if wanted is None or int(i) in wanted:
            found[int(i)] = np.asarray(c, dtype=np.float64).reshape(4, 2)
    return found


def _refine_corners(gray: np.ndarray, corners: np.ndarray, factor: int) -> None:
    """Corners (4, 2) found (to subpixel) on `gray` shrunk `factor` times, in place: scaled to
    `gray` (pixel centres) and refined there with `cv2.cornerSubPix`. Its window's half side is
    one bit of the marker (its narrowest, px): around a marker's outer corner that much shows
    only the corner of its black border and the white quiet zone (1.5 bits wide), none of the
    code inside; the shrunk frame's corner is within a few tenths of a pixel already."""
    import cv2

    corners[:] = (corners + 0.5) * factor - 0.5
    detector = _aruco_detector()
    params = detector.getDetectorParameters()
    bits = detector.getDictionary().markerSize + 2 * params.markerBorderBits
    side_px = float(np.linalg.norm(corners - np.roll(corners, 1, axis=0), axis=1).min())
    half = max(2, int(side_px / bits))
    pts = corners.astype(np.float32).reshape(-1, 1, 2)
    criteria = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER,
                params.cornerRefinementMaxIterations, params.cornerRefinementMinAccuracy)
    cv2.cornerSubPix(gray, pts, (half, half), (-1, -1), criteria)
    corners[:] = pts.reshape(4, 2)


@functools.lru_cache(maxsize=4)
def _aruco_detector(window_px: int | None = None) -> Any:
    """The DICT_4X4_50 detector, corners refined to subpixel: with OpenCV's adaptive threshold
    windows (3, 13 and 23 px), or with `window_px` only that one (the halved frame's)."""
    import cv2

    dictionary = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50)
    params = cv2.aruco.DetectorParameters()
    params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
    if window_px is not None:
        params.adaptiveThreshWinSizeMin = params.adaptiveThreshWinSizeMax = int(window_px)
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
