"""vision.lens: the lens distortion estimated from the drawn Dition lines (no calibration).

Frames and cameras come from the simulated table (OpenCV projection with k1, k2, p1, p2), so the
truth is known: the true image of every board point and the true disc centres.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.spatial import cKDTree

from hardware.sim import RenderOptions, random_camera, render_dition
from hardware.sim.camera import SimCamera
from tests.test_vision_dition import random_discs
from vision.board import board_moved, find_board
from vision.camera import Intrinsics
from vision.dition import detect_discs
from vision.dition_board import with_estimated_lens
from vision.geometry import BoardParams, board_intrinsics, board_to_image
from vision.lens import LensParams, LineSamples, estimate_intrinsics_from_board, fit_lens_to_lines

#: what the estimate must reach on distorted frames without intrinsics (board units = diameters)
MEDIAN_TOL = 0.01
P99_TOL = 0.03

GRID_BOARD = np.stack(np.meshgrid(np.linspace(0, 20, 11), np.linspace(0, 20, 11)), -1).reshape(-1, 2)


def _project(cam: SimCamera, pts_board: np.ndarray) -> np.ndarray:
    return cam.project(np.column_stack([pts_board, np.zeros(len(pts_board))]))


def _symmetric_errors(truth: np.ndarray, found: np.ndarray) -> np.ndarray:
    """Distances to the nearest true disc, under the square's symmetry closest to the reading
    (a board found from its lines alone has no preferred corner 0)."""
    x, y = truth[:, 0], truth[:, 1]
    options = [np.stack(p, 1) for p in ((x, y), (20 - y, x), (20 - x, 20 - y), (y, 20 - x))]
    best = min(options, key=lambda t: float(np.median(cKDTree(t).query(found)[0])))
    return cKDTree(best).query(found)[0]


def _frame(seed: int, markers: bool = True, distortion: bool = True):
    rng = np.random.default_rng(seed)
    discs = random_discs(rng, int(rng.integers(30, 120)))
    cam = random_camera(rng, "dition", distortion=distortion)
    opts = RenderOptions.random(rng).replace(markers=markers)
    r = render_dition(discs, cam, np.random.default_rng([seed, 1]), options=opts)
    truth = np.array([[d.x, d.y] for d in discs])
    return r, cam, truth


# --------------------------------------------------------------------------------------------
# the plumb-line fit on exact projections
# --------------------------------------------------------------------------------------------


def _line_samples(cam: SimCamera, step: float = 0.5) -> LineSamples:
    """The 8 drawn edges of the Dition squares, projected by the (distorted) camera."""
    pts, ids = [], []
    lid = 0
    for lo, hi in ((0.0, 20.0), (3.0, 17.0)):
        t = np.arange(lo + 0.5, hi - 0.5 + 1e-9, step)
        for c in (lo, hi):
            for p in (np.stack([np.full_like(t, c), t], 1), np.stack([t, np.full_like(t, c)], 1)):
                pts.append(_project(cam, p))
                ids.append(np.full(len(t), lid))
                lid += 1
    return LineSamples(np.concatenate(pts), np.concatenate(ids))


def _plane_error_board(cam: SimCamera, est: Intrinsics | None) -> float:
    """Worst deviation (board units) of the board plane, seen through `est`, from the best
    homography: how much of the lens distortion the model leaves."""
    import cv2

    img = _project(cam, GRID_BOARD)
    und = est.undistort_points(img) if est is not None else img
    H, _ = cv2.findHomography(und, GRID_BOARD, 0)
    back = cv2.perspectiveTransform(und.reshape(-1, 1, 2), H).reshape(-1, 2)
    return float(np.max(np.linalg.norm(back - GRID_BOARD, axis=1)))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1), focal_scale=st.floats(0.6, 1.6))
def test_plumb_line_fit_removes_the_distortion_of_exact_lines(seed: int, focal_scale: float) -> None:
    rng = np.random.default_rng(seed)
    cam = random_camera(rng, "dition", distortion=True)
    samples = _line_samples(cam)
    # the focal length is a guess: any scale of it must give the same pixel mapping
    est = fit_lens_to_lines(samples, cam.image_size, cam.camera_matrix[0, 0] * focal_scale)
    assert est is not None
    before = _plane_error_board(cam, None)
    after = _plane_error_board(cam, est)
    # the true camera's principal point is off-centre by up to 1 %, the model's is not: what
    # remains is about 1 % of a disc diameter at most (a mild lens: 0.031 -> 0.010 seen)
    assert after <= max(0.012, 0.1 * before), (before, after, est.dist_coeffs, cam.dist_coeffs)


def test_plumb_line_fit_of_an_undistorted_camera_is_no_distortion() -> None:
    rng = np.random.default_rng(3)
    cam = random_camera(rng, "dition", distortion=False)
    # straight lines stay straight: no model is better than none
    assert fit_lens_to_lines(_line_samples(cam), cam.image_size, cam.camera_matrix[0, 0]) is None


def test_plumb_line_fit_refuses_too_few_lines() -> None:
    cam = random_camera(np.random.default_rng(4), "dition")
    s = _line_samples(cam)
    few = np.isin(s.line_id, [0, 1, 2])  # 3 of the 8 lines
    assert fit_lens_to_lines(LineSamples(s.points_px[few], s.line_id[few]), cam.image_size, 900.0) is None
    # all the lines of one direction only: the lens is not determined
    one_dir = s.line_id % 2 == 0
    assert fit_lens_to_lines(LineSamples(s.points_px[one_dir], s.line_id[one_dir]), cam.image_size, 900.0,
                             LensParams(min_lines=4)) is None


# --------------------------------------------------------------------------------------------
# on rendered frames
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["corners", "aruco", "lines"])
def test_discs_without_intrinsics_on_distorted_frames(method: str) -> None:
    errors_before, errors_after = [], []
    for seed in (11, 12, 13):
        r, _, truth = _frame(seed, markers=method != "lines")
        corners = np.array(r.truth["corners_px"]) if method == "corners" else None
        params = BoardParams(use_aruco=method == "aruco", use_lines=method == "lines")
        plain = find_board(r.image, params, corners_px=corners, estimate_lens=False)
        fit = find_board(r.image, params, corners_px=corners)
        assert fit.method == method
        assert fit.extra["lens"] == "estimated"
        assert "lens" not in plain.extra
        for f, errs in ((plain, errors_before), (fit, errors_after)):
            found = np.array([d.centre_board for d in detect_discs(r.image, f)])
            assert len(found) == len(truth)
            errs.append(_symmetric_errors(truth, found))
    before, after = np.concatenate(errors_before), np.concatenate(errors_after)
    assert np.median(after) <= MEDIAN_TOL, np.median(after)
    assert np.percentile(after, 99) <= P99_TOL, np.percentile(after, 99)
    # and it is the lens model that makes the difference
    assert np.median(after) < 0.5 * np.median(before)


def test_estimated_board_matches_the_true_projection() -> None:
    r, cam, _ = _frame(21)
    fit = find_board(r.image, BoardParams(use_lines=False))
    # where the fit (with its lens) puts the board points vs where the camera put them
    err_px = np.linalg.norm(board_to_image(GRID_BOARD, fit) - _project(cam, GRID_BOARD), axis=1)
    plain = find_board(r.image, BoardParams(use_lines=False), estimate_lens=False)
    err_plain_px = np.linalg.norm(board_to_image(GRID_BOARD, plain) - _project(cam, GRID_BOARD), axis=1)
    assert err_px.max() < 1.0, err_px.max()
    assert err_px.max() < 0.5 * err_plain_px.max()


def test_no_regression_without_distortion() -> None:
    r, _, truth = _frame(31, distortion=False)
    corners = np.array(r.truth["corners_px"])
    fit = find_board(r.image, corners_px=corners)
    plain = find_board(r.image, corners_px=corners, estimate_lens=False)
    # nothing to correct: the plain homography is kept
    assert fit.extra["lens"] == "none" and board_intrinsics(fit) is None
    e_fit = _symmetric_errors(truth, np.array([d.centre_board for d in detect_discs(r.image, fit)]))
    e_plain = _symmetric_errors(truth, np.array([d.centre_board for d in detect_discs(r.image, plain)]))
    assert len(e_fit) == len(truth)
    assert np.median(e_fit) <= max(0.005, 1.2 * np.median(e_plain))
    assert np.percentile(e_fit, 99) <= max(0.02, 1.2 * np.percentile(e_plain, 99))


def test_given_intrinsics_are_used_as_they_are() -> None:
    r, cam, _ = _frame(41)
    intr = Intrinsics(cam.camera_matrix, cam.dist_coeffs, cam.image_size)
    fit = find_board(r.image, BoardParams(use_lines=False), intrinsics=intr)
    assert "lens" not in fit.extra and board_intrinsics(fit) is None
    assert board_intrinsics(fit, intr) is intr
    again = find_board(r.image, BoardParams(use_lines=False), intrinsics=intr, estimate_lens=False)
    np.testing.assert_array_equal(fit.H_image_to_board, again.H_image_to_board)


def test_detect_discs_picks_up_the_estimate_from_the_board() -> None:
    r, _, _ = _frame(51)
    fit = find_board(r.image, corners_px=np.array(r.truth["corners_px"]))
    est = board_intrinsics(fit)
    assert isinstance(est, Intrinsics) and est.has_distortion
    a = [d.centre_board for d in detect_discs(r.image, fit)]
    b = [d.centre_board for d in detect_discs(r.image, fit, intrinsics=est)]
    assert a == b


def test_the_same_frame_does_not_look_moved() -> None:
    r, _, _ = _frame(61, markers=False)
    fit = find_board(r.image, BoardParams(use_aruco=False))
    assert fit.extra["lens"] == "estimated"
    assert not board_moved(fit, r.image)


def test_no_lines_in_view_means_no_estimate() -> None:
    r, _, _ = _frame(71)
    fit = find_board(r.image, corners_px=np.array(r.truth["corners_px"]), estimate_lens=False)
    blank = np.full_like(r.image, 180)
    assert estimate_intrinsics_from_board(blank, fit) is None
    marked = with_estimated_lens(blank, fit)
    assert marked.extra["lens"] == "none" and board_intrinsics(marked) is None
    np.testing.assert_array_equal(marked.H_image_to_board, fit.H_image_to_board)


def test_only_dition_boards_get_an_estimate() -> None:
    r, _, _ = _frame(81)
    fit = find_board(r.image, corners_px=np.array(r.truth["corners_px"]), game="domination")
    assert "lens" not in fit.extra
