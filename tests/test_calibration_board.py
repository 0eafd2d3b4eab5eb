"""Board calibration on simulated frames: homography, camera pose, manual corners, checks."""

from __future__ import annotations

import numpy as np
import pytest

from calibration.board import BoardCalibration, calibrate_board, check_board
from calibration.errors import (
    BoardCalibrationError,
    BoardMismatchError,
    ImageSizeMismatchError,
    MalformedCalibrationError,
)
from hardware.sim import RenderOptions, SimDisc, look_at_board, render_dition, render_domination
from vision.camera import Intrinsics
from vision.geometry import apply_homography

SIZE = (1640, 1232)
LENS = np.array([-0.11, 0.06, 0.0012, -0.0009, 0.0])
OPTIONS = RenderOptions(supersample=2)


def _intrinsics(cam) -> Intrinsics:
    return Intrinsics(cam.camera_matrix, cam.dist_coeffs, cam.image_size)


@pytest.fixture(scope="module")
def dition_scene():
    rng = np.random.default_rng(41)
    cam = look_at_board("dition", image_size=SIZE, tilt_deg=22, tilt_azimuth_deg=70,
                        rotation_deg=4, distortion=LENS)
    discs = [SimDisc(4.0, 6.0, "black"), SimDisc(11.5, 12.0, "white")]
    return cam, render_dition(discs, cam, rng, options=OPTIONS)


def test_pose_from_markers_matches_the_true_camera(dition_scene) -> None:
    cam, frame = dition_scene
    board = calibrate_board(frame.image, game="dition", intrinsics=_intrinsics(cam))
    assert board.method in ("aruco", "lines") and board.undistorted
    truth_centre = cam.centre_world
    height = -truth_centre[2]
    centre = np.array(board.camera_centre_board)
    assert centre[2] < 0  # above the board: z points into the table
    assert np.linalg.norm(centre - truth_centre) < 0.005 * height
    assert board.tilt_deg == pytest.approx(22.0, abs=0.3)
    assert board.reprojection_px is not None and board.reprojection_px < 0.6
    assert np.max(np.abs(board.corners_px - np.array(frame.truth["corners_px"]))) < 0.6


def test_two_markers_out_of_view_fall_back_on_the_drawn_squares() -> None:
    """Markers 0 and 1 leave the picture: two markers would extrapolate over the board, the
    drawn squares span it."""
    from vision.aruco import detect_aruco_markers

    cam = look_at_board("dition", image_size=SIZE, focal_px=1359.3, height_units=26.0,
                        tilt_deg=18, tilt_azimuth_deg=-90, distortion=LENS)
    frame = render_dition([SimDisc(4.0, 6.0, "black")], cam, np.random.default_rng(1),
                          options=OPTIONS)
    assert sorted(detect_aruco_markers(frame.image, "dition")) == [2, 3]
    board = calibrate_board(frame.image, game="dition", intrinsics=_intrinsics(cam))
    assert board.method == "lines"
    assert np.max(np.abs(board.corners_px - np.array(frame.truth["corners_px"]))) < 0.3
    height = -cam.centre_world[2]
    assert np.linalg.norm(np.array(board.camera_centre_board) - cam.centre_world) < 0.002 * height


def test_homography_maps_undistorted_pixels_to_the_board(dition_scene) -> None:
    cam, frame = dition_scene
    intr = _intrinsics(cam)
    board = calibrate_board(frame.image, game="dition", intrinsics=intr)
    pts_board = np.array([[3.0, 3.0], [17.0, 3.0], [10.0, 10.0], [1.5, 18.5]])
    px = cam.project(np.c_[pts_board, np.zeros(4)])
    back = apply_homography(board.H_image_to_board, intr.undistort_points(px))
    assert np.max(np.linalg.norm(back - pts_board, axis=1)) < 0.01


def test_without_intrinsics_there_is_no_pose_and_distortion_shows(dition_scene) -> None:
    _cam, frame = dition_scene
    board = calibrate_board(frame.image, game="dition")
    assert board.rvec is None and board.camera_centre_board is None and not board.undistorted
    # the barrel lens bends the board: four corners from a plain homography are off by pixels
    err = np.max(np.abs(board.corners_px - np.array(frame.truth["corners_px"])))
    assert 0.6 < err < 15


def test_manual_corners_are_the_wizard_path(dition_scene) -> None:
    cam, frame = dition_scene
    clicked = np.array(frame.truth["corners_px"]) + np.random.default_rng(2).normal(0, 0.3, (4, 2))
    board = calibrate_board(frame.image, game="dition", intrinsics=_intrinsics(cam),
                            corners_px=clicked)
    assert board.method == "corners"
    assert np.allclose(board.corners_px, clicked)
    height = -cam.centre_world[2]
    assert np.linalg.norm(np.array(board.camera_centre_board) - cam.centre_world) < 0.03 * height


def test_mirrored_corners_are_refused(dition_scene) -> None:
    cam, frame = dition_scene
    clicked = np.array(frame.truth["corners_px"])[[0, 3, 2, 1]]  # counter-clockwise
    with pytest.raises(BoardCalibrationError, match="mirrored"):
        calibrate_board(frame.image, game="dition", intrinsics=_intrinsics(cam), corners_px=clicked)


def test_a_frame_of_another_size_is_refused(dition_scene) -> None:
    cam, frame = dition_scene
    small = frame.image[: SIZE[1] // 2, : SIZE[0] // 2]
    with pytest.raises(ImageSizeMismatchError, match="820x616"):
        calibrate_board(small, game="dition", intrinsics=_intrinsics(cam))


def test_no_board_in_the_frame_is_a_clear_error() -> None:
    grey = np.full((SIZE[1], SIZE[0], 3), 120, np.uint8)
    with pytest.raises(BoardCalibrationError, match="dition board not found"):
        calibrate_board(grey, game="dition")


def test_check_board_accepts_the_same_picture_and_refuses_a_moved_board(dition_scene) -> None:
    cam, frame = dition_scene
    intr = _intrinsics(cam)
    board = calibrate_board(frame.image, game="dition", intrinsics=intr)
    assert check_board(board, frame.image, intrinsics=intr) < 1.0
    # the camera was bumped: 1.5 degrees of roll moves the far corners by many pixels
    bumped = look_at_board("dition", image_size=SIZE, tilt_deg=22, tilt_azimuth_deg=70,
                           rotation_deg=5.5, distortion=LENS)
    moved = render_dition([], bumped, np.random.default_rng(3), options=OPTIONS)
    with pytest.raises(BoardMismatchError, match="corner . moved by"):
        check_board(board, moved.image, intrinsics=intr)
    grey = np.full_like(frame.image, 120)
    with pytest.raises(BoardMismatchError, match="not found"):
        check_board(board, grey, intrinsics=intr)


def test_a_stored_calibration_is_checked_against_new_frames(dition_scene, tmp_path) -> None:
    from calibration.store import Calibration, check_calibration, load_calibration, save_calibration

    cam, frame = dition_scene
    intr = _intrinsics(cam)
    board = calibrate_board(frame.image, game="dition", intrinsics=intr)
    path = save_calibration(Calibration(SIZE, intr, board), tmp_path / "cal.json")
    stored = load_calibration(path)
    assert check_calibration(stored, frame.image) < 1.0
    later = render_dition([SimDisc(9.0, 9.0, "black")], cam, np.random.default_rng(4),
                          options=OPTIONS)
    assert check_calibration(stored, later.image) < 1.0  # same board, a disc more
    with pytest.raises(ImageSizeMismatchError):
        check_calibration(stored, later.image[:600])
    assert check_calibration(Calibration(SIZE), later.image) is None


def test_domination_board_with_markers_in_the_cut_corners() -> None:
    rng = np.random.default_rng(8)
    cam = look_at_board("domination", image_size=SIZE, tilt_deg=18, tilt_azimuth_deg=100,
                        distortion=LENS)
    frame = render_domination({"d4": "G", "e5": "RR"}, cam, rng, options=OPTIONS)
    board = calibrate_board(frame.image, game="domination", intrinsics=_intrinsics(cam))
    assert board.method == "aruco"
    height = -cam.centre_world[2]
    assert np.linalg.norm(np.array(board.camera_centre_board) - cam.centre_world) < 0.01 * height
    assert np.max(np.abs(board.corners_px - np.array(frame.truth["corners_px"]))) < 0.6


def test_round_trip_and_malformed_board_dicts(dition_scene) -> None:
    cam, frame = dition_scene
    board = calibrate_board(frame.image, game="dition", intrinsics=_intrinsics(cam))
    again = BoardCalibration.from_dict(board.to_dict())
    assert np.allclose(again.corners_px, board.corners_px)
    assert np.allclose(again.H_image_to_board, board.H_image_to_board)
    assert np.allclose(again.rvec, board.rvec) and np.allclose(again.tvec, board.tvec)
    fit = again.to_board_fit()
    assert np.allclose(fit.H_board_to_image @ fit.H_image_to_board / (fit.H_board_to_image @
                       fit.H_image_to_board)[2, 2], np.eye(3), atol=1e-9)
    bad = board.to_dict() | {"corners_px": [[0, 0], [1, 1]]}
    with pytest.raises(MalformedCalibrationError, match="corners_px"):
        BoardCalibration.from_dict(bad)
    with pytest.raises(MalformedCalibrationError, match="game"):
        BoardCalibration.from_dict(board.to_dict() | {"game": "chess"})
    with pytest.raises(MalformedCalibrationError, match="both"):
        BoardCalibration.from_dict(board.to_dict() | {"tvec": None})
    with pytest.raises(MalformedCalibrationError, match="unknown keys"):
        BoardCalibration.from_dict(board.to_dict() | {"rvecs": [0, 0, 0]})
