"""Board calibration: where the board is in the picture and where the camera is above it.

`calibrate_board(frame, game=..., intrinsics=..., corners_px=...)` finds the board with
`vision.board.find_board` (ArUco markers, the drawn lines, or four clicked corners: the web
wizard's manual path) and, when the camera's intrinsics are known, poses the camera on the board
with `cv2.solvePnP` (board plane z = 0 in board units, z into the table, so the camera has z < 0).
`check_board(board, frame)` re-finds the board and refuses a calibration that no longer matches
the picture.

Frames: `corners_px` are captured (distorted) pixels of board corners 0..3; `H_image_to_board`
acts on undistorted pixels when the calibration was made with intrinsics (`undistorted`), on
captured pixels otherwise (vision.board's convention).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from calibration.errors import (
    BoardCalibrationError,
    BoardMismatchError,
    MalformedCalibrationError,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from vision.camera import Intrinsics
    from vision.geometry import BoardFit, BoardParams

GAMES = ("dition", "domination")


@dataclass(frozen=True, eq=False)
class BoardCalibration:
    """The board as calibrated: corners_px (4, 2) float64, H_image_to_board (3, 3), the camera
    pose rvec/tvec (3,) board -> camera in board units (None without intrinsics), the finder's
    `method`, its `residual_px`, and the pose's RMS reprojection error in px."""

    game: str
    corners_px: npt.NDArray[np.float64]
    H_image_to_board: npt.NDArray[np.float64]
    rvec: npt.NDArray[np.float64] | None
    tvec: npt.NDArray[np.float64] | None
    method: str
    residual_px: float = 0.0
    reprojection_px: float | None = None
    undistorted: bool = False

    @property
    def camera_centre_board(self) -> tuple[float, float, float] | None:
        """The camera's centre of projection in the board frame (z < 0: above the board)."""
        if self.rvec is None or self.tvec is None:
            return None
        import cv2
        import numpy as np

        R = cv2.Rodrigues(np.asarray(self.rvec, np.float64))[0]
        c = -R.T @ np.asarray(self.tvec, np.float64)
        return float(c[0]), float(c[1]), float(c[2])

    @property
    def tilt_deg(self) -> float | None:
        """Angle between the optical axis and the table's normal."""
        if self.rvec is None:
            return None
        import cv2
        import numpy as np

        R = cv2.Rodrigues(np.asarray(self.rvec, np.float64))[0]
        # the board's z axis in camera coordinates is R[:, 2]; the optical axis is (0, 0, 1)
        return float(np.degrees(np.arccos(np.clip(abs(R[2, 2]), -1.0, 1.0))))

    def to_board_fit(self) -> BoardFit:
        """The vision stages' view of this calibration."""
        import numpy as np

        from vision.geometry import BoardFit

        H = np.asarray(self.H_image_to_board, np.float64)
        H_inv = np.linalg.inv(H)
        return BoardFit(np.asarray(self.corners_px, np.float64).copy(), H.copy(),
                        H_inv / H_inv[2, 2], self.game, self.method, float(self.residual_px))

    def to_dict(self) -> dict[str, Any]:
        return {
            "game": self.game,
            "method": self.method,
            "corners_px": [[float(v) for v in p] for p in self.corners_px],
            "H_image_to_board": [[float(v) for v in row] for row in self.H_image_to_board],
            "rvec": None if self.rvec is None else [float(v) for v in self.rvec],
            "tvec": None if self.tvec is None else [float(v) for v in self.tvec],
            "residual_px": float(self.residual_px),
            "reprojection_px": self.reprojection_px,
            "undistorted": self.undistorted,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> BoardCalibration:
        import numpy as np

        allowed = {"game", "method", "corners_px", "H_image_to_board", "rvec", "tvec",
                   "residual_px", "reprojection_px", "undistorted"}
        if not isinstance(data, Mapping):
            raise MalformedCalibrationError(f"'board' must be an object, got {type(data).__name__}")
        unknown = set(data) - allowed
        if unknown:
            raise MalformedCalibrationError(f"unknown keys in 'board': {sorted(unknown)}")
        try:
            game = str(data["game"])
            corners = np.asarray(data["corners_px"], np.float64)
            H = np.asarray(data["H_image_to_board"], np.float64)
            rvec = None if data.get("rvec") is None else np.asarray(data["rvec"], np.float64)
            tvec = None if data.get("tvec") is None else np.asarray(data["tvec"], np.float64)
        except KeyError as exc:
            raise MalformedCalibrationError(f"'board' lacks the key {exc.args[0]!r}") from None
        except (TypeError, ValueError) as exc:
            raise MalformedCalibrationError(f"'board' has a malformed value: {exc}") from None
        if game not in GAMES:
            raise MalformedCalibrationError(f"'board.game' must be one of {GAMES}, got {game!r}")
        if corners.shape != (4, 2) or not np.all(np.isfinite(corners)):
            raise MalformedCalibrationError(
                f"'board.corners_px' must be 4 finite [x, y] pairs, got shape {corners.shape}")
        if H.shape != (3, 3) or not np.all(np.isfinite(H)) or abs(np.linalg.det(H)) < 1e-15:
            raise MalformedCalibrationError("'board.H_image_to_board' must be an invertible 3x3")
        for name, v in (("rvec", rvec), ("tvec", tvec)):
            if v is not None and (v.shape != (3,) or not np.all(np.isfinite(v))):
                raise MalformedCalibrationError(f"'board.{name}' must be 3 finite numbers or null")
        if (rvec is None) != (tvec is None):
            raise MalformedCalibrationError("'board.rvec' and 'board.tvec' must both be given "
                                            "or both be null")
        reproj = data.get("reprojection_px")
        return cls(game, corners, H, rvec, tvec, str(data.get("method", "corners")),
                   float(data.get("residual_px", 0.0)),
                   None if reproj is None else float(reproj), bool(data.get("undistorted", False)))


def calibrate_board(
    frame: npt.NDArray[np.uint8],
    *,
    game: str,
    intrinsics: Intrinsics | None = None,
    corners_px: npt.ArrayLike | None = None,
    params: BoardParams | None = None,
) -> BoardCalibration:
    """Find the board in one frame of the empty (or set-up) board and, with `intrinsics`, pose
    the camera on it. `corners_px` (4 clicked corners, board corners 0..3 in DESIGN.md order)
    bypass the search: the manual path. A Dition board is fitted on its drawn squares when they
    are found (see `_prefer_lines`)."""
    import numpy as np

    from vision.board import find_board
    from vision.errors import VisionError
    from vision.geometry import BoardParams

    if game not in GAMES:
        raise BoardCalibrationError(f"unknown game {game!r}: expected one of {', '.join(GAMES)}")
    _check_frame_array(frame)
    if intrinsics is not None:
        w, h = intrinsics.image_size
        if (frame.shape[1], frame.shape[0]) != (w, h):
            from calibration.errors import ImageSizeMismatchError

            raise ImageSizeMismatchError(
                f"the frame is {frame.shape[1]}x{frame.shape[0]} px but the intrinsics were "
                f"made for {w}x{h} px")
    corners = None if corners_px is None else np.asarray(corners_px, np.float64)
    board_params = params or BoardParams()
    try:
        fit = find_board(frame, board_params, game=game, corners_px=corners,
                         intrinsics=intrinsics, estimate_lens=False)
    except VisionError as exc:
        raise BoardCalibrationError(f"{game} board not found in the calibration frame: {exc}") \
            from None
    if fit.method == "aruco" and game == "dition" and board_params.use_lines:
        fit = _prefer_lines(frame, fit, board_params, intrinsics)
    rvec = tvec = None
    reprojection = None
    if intrinsics is not None:
        rvec, tvec, reprojection = _pose(frame, fit, intrinsics)
    return BoardCalibration(game, np.asarray(fit.corners_px, np.float64),
                            np.asarray(fit.H_image_to_board, np.float64), rvec, tvec, fit.method,
                            float(fit.residual_px), reprojection, intrinsics is not None)


#: a Dition fit on the drawn squares replaces a four-marker fit when their corners agree this well
_LINES_AGREE_PX = 3.0
#: ... and, with only two or three markers seen, this fraction of the image diagonal
_LINES_AGREE_FRACTION = 0.02


def _prefer_lines(frame: npt.NDArray[np.uint8], fit: BoardFit, params: BoardParams,
                  intrinsics: Intrinsics | None) -> BoardFit:
    """The Dition board fitted on its drawn squares when they are found: the lines span the
    whole board and are measured along their full length, so their corners are more precise
    than the markers' (which sit outside the corners and are extrapolated from, badly so when
    only two or three are in view). With all four markers seen, the lines must agree with them."""
    import numpy as np

    from vision.board import find_board
    from vision.errors import VisionError

    try:
        lines = find_board(frame, replace(params, use_aruco=False), game="dition",
                           intrinsics=intrinsics, estimate_lens=False)
    except VisionError:
        return fit
    markers_seen = len(list(fit.extra.get("marker_ids", ())))  # type: ignore[call-overload]
    shift = float(np.max(np.linalg.norm(lines.corners_px - fit.corners_px, axis=1)))
    # fewer markers extrapolate worse, but the lines must still be the same board
    h, w = frame.shape[:2]
    tolerance = _LINES_AGREE_PX if markers_seen >= 4 else _LINES_AGREE_FRACTION * math.hypot(w, h)
    return lines if shift < tolerance else fit


def _pose(frame: npt.NDArray[np.uint8], fit: BoardFit,
          intrinsics: Intrinsics) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], float]:
    """solvePnP on the board corners (and the ArUco marker corners when the fit used them)."""
    import cv2
    import numpy as np

    from vision.aruco import detect_aruco_markers
    from vision.geometry import board_corners_board
    from vision.markers import layout_for

    obj = [board_corners_board(fit.game)]
    img = [np.asarray(fit.corners_px, np.float64)]
    if fit.method == "aruco":
        layout = layout_for(fit.game)
        for marker_id, corners in sorted(detect_aruco_markers(frame, fit.game).items()):
            obj.append(layout.marker_corners_board(marker_id))
            img.append(np.asarray(corners, np.float64).reshape(4, 2))
    obj3 = np.c_[np.concatenate(obj), np.zeros(sum(len(o) for o in obj))].astype(np.float64)
    img2 = np.concatenate(img).astype(np.float64)
    k, d = intrinsics.camera_matrix, intrinsics.dist_coeffs
    ok, rvec, tvec = cv2.solvePnP(obj3, img2, k, d, flags=cv2.SOLVEPNP_IPPE)
    if not ok:
        raise BoardCalibrationError("cannot pose the camera on the board (solvePnP failed)")
    rvec, tvec = cv2.solvePnPRefineLM(obj3, img2, k, d, rvec, tvec)
    R = cv2.Rodrigues(rvec)[0]
    centre = -R.T @ tvec.ravel()
    if centre[2] >= 0:
        raise BoardCalibrationError(
            "the camera comes out below the board: the corners are in mirrored order (give them "
            "clockwise from corner 0 as the board is seen from above)")
    proj, _ = cv2.projectPoints(obj3, rvec, tvec, k, d)
    rms = float(np.sqrt(np.mean(np.sum((proj.reshape(-1, 2) - img2) ** 2, axis=1))))
    return rvec.ravel().astype(np.float64), tvec.ravel().astype(np.float64), rms


def check_board(
    board: BoardCalibration,
    frame: npt.NDArray[np.uint8],
    *,
    intrinsics: Intrinsics | None = None,
    params: BoardParams | None = None,
    tolerance_px: float = 3.0,
) -> float:
    """Re-find the board in `frame` and compare with the stored corners; returns the largest
    corner shift in px. Raises `BoardMismatchError` when the board is not found or moved by
    more than `tolerance_px` (recalibrate the board)."""
    import numpy as np

    from vision.board import find_board
    from vision.errors import VisionError
    from vision.geometry import BoardParams

    _check_frame_array(frame)
    try:
        fresh = find_board(frame, params or BoardParams(), game=board.game,
                           intrinsics=intrinsics)
    except VisionError as exc:
        raise BoardMismatchError(
            f"the calibrated {board.game} board is not found in the picture ({exc}); "
            "recalibrate the board") from None
    shift = np.linalg.norm(np.asarray(fresh.corners_px) - np.asarray(board.corners_px), axis=1)
    worst = float(shift.max())
    if not math.isfinite(worst) or worst > tolerance_px:
        corner = int(np.argmax(shift))
        raise BoardMismatchError(
            f"the board no longer matches the calibration: corner {corner} moved by "
            f"{worst:.1f} px (tolerance {tolerance_px:g} px); recalibrate the board")
    return worst


def _check_frame_array(frame: Any) -> None:
    import numpy as np

    if not isinstance(frame, np.ndarray) or frame.ndim not in (2, 3) or frame.size == 0:
        raise BoardCalibrationError(
            f"the calibration frame must be an image array, got {type(frame).__name__}")
