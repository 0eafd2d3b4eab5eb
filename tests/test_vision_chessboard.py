"""A chessboard's 8x8 found from its squares, the camera from its grid, tops on it (issue 19)."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest

from hardware.sim import RenderOptions, SimCamera, look_at_board, random_camera, render_domination
from hardware.sim.chessboard import CHESSBOARDS
from hardware.sim.layout import playable_cells
from hardware.sim.men import PIECE_COLOURS, Men, random_chess_table
from vision.board import find_board
from vision.camera import Intrinsics
from vision.chess_tops import learn_chess_colours, read_chess_tops
from vision.chessboard import (
    camera_from_grid,
    chessboard_moved,
    find_chessboard,
    focal_from_homography,
    turn_board,
)
from vision.domination import CELLS, cell_centre_board
from vision.errors import BoardNotFoundError, ColourModelError
from vision.geometry import BoardFit, board_to_image


def _stacks(rng: np.random.Generator, letters: list[str], fill: float) -> dict[str, str]:
    return {c: "".join(rng.choice(letters, size=int(rng.integers(1, 6))))
            for c in playable_cells() if rng.random() < fill}


def _turn_to_truth(found: np.ndarray, truth: np.ndarray) -> tuple[int, float]:
    errs = [float(np.linalg.norm(np.roll(found, -k, axis=0) - truth, axis=1).max()) for k in range(4)]
    return int(np.argmin(errs)), min(errs)


@pytest.fixture(scope="module")
def tables() -> list:  # type: ignore[type-arg]
    """Four random tables (board, men, colours, camera, light) and a frame of each."""
    rng = np.random.default_rng(21)
    out = []
    for _ in range(4):
        board, men, colours = random_chess_table(rng)
        cam = random_camera(rng, "domination")
        opts = RenderOptions.random(rng)
        r = render_domination(_stacks(rng, list(colours), 0.6), cam, rng, colours=colours, options=opts,
                              board=board, men=men)
        out.append((board, men, colours, cam, opts, r))
    return out


def test_the_8x8_is_found_on_random_chessboards_with_a8_on_a_light_corner(tables) -> None:  # type: ignore[no-untyped-def]
    cell_errors, corner_errors = [], []
    for board, _men, _colours, cam, _opts, r in tables:
        fit = find_board(r.image, game="domination")  # no corners, no markers
        assert fit.method == "chessboard", (board.name, fit.method)
        turns, err = _turn_to_truth(fit.corners_px, np.array(r.truth["corners_px"]))
        # a1 is dark: corner 0 is a light corner, a8 or (half a turn on) h1
        assert turns in (0, 2), (board.name, turns)
        assert fit.extra["lens"] == "estimated"
        fit = turn_board(fit, turns)
        centres = np.array([cell_centre_board(c) for c in CELLS])
        found = board_to_image(centres, fit)
        truth = cam.project(np.c_[centres, np.zeros(len(centres))])
        cell_errors.append(float(np.linalg.norm(found - truth, axis=1).max()))
        corner_errors.append(err)
    # measured today on these four: cell centres within 0.33 / 0.53 / 0.58 / 4.2 px, corners
    # (extrapolated past the inner 7x7 through the estimated lens) 2.9-8.7 px
    assert max(cell_errors) < 5.0, cell_errors
    assert float(np.median(cell_errors)) < 1.0, cell_errors
    assert max(corner_errors) < 12.0, corner_errors


def test_turning_a_board_moves_its_corners_round() -> None:
    rng = np.random.default_rng(2)
    cam = look_at_board("domination", image_size=(820, 616), tilt_deg=8.0)
    r = render_domination({}, cam, rng, options=RenderOptions.clean(),
                          board=CHESSBOARDS["print"].replace(corners="none"))
    fit = find_chessboard(r.image)
    once = turn_board(fit, 1)
    assert np.allclose(once.corners_px, np.roll(fit.corners_px, -1, axis=0), atol=1e-6)
    assert np.allclose(turn_board(fit, 4).corners_px, fit.corners_px, atol=1e-6)


def test_the_kit_board_is_still_found_from_its_cells_and_a_blank_frame_names_both_finders() -> None:
    rng = np.random.default_rng(5)
    cam = random_camera(rng, "domination")
    r = render_domination({"d4": "GR", "e5": "B"}, cam, rng, options=RenderOptions.random(rng, markers=False))
    truth = np.array(r.truth["corners_px"])
    side_px = float(np.mean(np.linalg.norm(truth - np.roll(truth, 1, axis=0), axis=1))) / 8.0

    def error_squares(fit: BoardFit) -> float:
        return min(float(np.linalg.norm(np.roll(fit.corners_px, -k, axis=0) - truth, axis=1).max())
                   for k in range(4)) / side_px

    # with the camera model: the cells' fit as it is
    intr = Intrinsics(cam.camera_matrix, cam.dist_coeffs, cam.image_size)
    assert find_board(r.image, game="domination", intrinsics=intr).method == "cells"
    # without one the cells' fit has no lens (0.20 squares off here): it is fitted again on the
    # kit's drawn lines where it puts them, through the lens from their straightness
    fit = find_board(r.image, game="domination")
    assert fit.method == "lines" and fit.extra["lens"] == "estimated"
    assert error_squares(fit) < 0.05
    with pytest.raises(BoardNotFoundError, match="chessboard"):
        find_board(np.full((600, 800, 3), 128, np.uint8), game="domination")


def _grid_view(tilt_deg: float, k1: float) -> tuple[np.ndarray, np.ndarray, float]:
    cam = look_at_board("domination", tilt_deg=tilt_deg, tilt_azimuth_deg=40.0, rotation_deg=17.0,
                        distortion=np.array([k1, 0.0, 0.0, 0.0, 0.0]))
    board = np.array([[i, j] for i in range(1, 8) for j in range(1, 8)], np.float64)
    px = cam.project(np.c_[board, np.zeros(len(board))])
    px += np.random.default_rng(0).normal(0.0, 0.1, px.shape)  # sub-pixel corner noise
    return px, board, float(cam.camera_matrix[0, 0])


@pytest.mark.parametrize("k1", [-0.1, 0.0, 0.06])
def test_the_camera_comes_from_the_grid_of_a_slanted_view(k1: float) -> None:
    px, board, f_true = _grid_view(25.0, k1)
    cam, info = camera_from_grid(px, board, (1640, 1232))
    assert abs(cam.camera_matrix[0, 0] / f_true - 1) < 0.03, (cam.camera_matrix[0, 0], f_true)
    assert abs(cam.dist_coeffs[0] - k1) < 0.02
    assert info["rms_px"] < 0.3
    # without distortion the homography alone gives it too
    if k1 == 0.0:
        f = focal_from_homography(px, board, (1640, 1232))
        assert f is not None and abs(f / f_true - 1) < 0.03


@pytest.mark.parametrize("tilt_deg", [5.0, 10.0, 15.0])
def test_the_grids_focal_sigma_says_what_an_off_centre_principal_point_does(tilt_deg: float) -> None:
    """The grid camera takes the principal point at the image centre; a camera's is up to ~2 %
    of the image off it, and on a tilted view that moves the focal length by 5-16 % where the
    corners' scatter alone says 1-3 % (the chessboard heights' focal factor then claimed
    sigmas a third of their errors). `focal_pp_sigma_px` is that share: with it the error is
    within its sigma (without it 6 sigmas)."""
    cam = look_at_board("domination", tilt_deg=tilt_deg, tilt_azimuth_deg=40.0, rotation_deg=17.0,
                        distortion=np.zeros(5))
    K = cam.camera_matrix.copy()
    K[0, 2] += 0.015 * 1640
    K[1, 2] -= 0.01 * 1232
    cam = SimCamera(K, cam.dist_coeffs, cam.rvec, cam.tvec, cam.image_size)
    board = np.array([[i, j] for i in range(1, 8) for j in range(1, 8)], np.float64)
    px = cam.project(np.c_[board, np.zeros(len(board))])
    px += np.random.default_rng(0).normal(0.0, 0.1, px.shape)
    got, info = camera_from_grid(px, board, (1640, 1232))
    err = abs(float(got.camera_matrix[0, 0]) - float(K[0, 0]))
    assert err > 3.0 * info["focal_sigma_px"]  # the scene: the corners' scatter does not say it
    assert err < math.hypot(info["focal_sigma_px"], info["focal_pp_sigma_px"])


def test_a_head_on_grid_keeps_the_prior_focal_length_and_says_how_unsure_it_is() -> None:
    px, board, _ = _grid_view(0.0, 0.0)
    cam, info = camera_from_grid(px, board, (1640, 1232), prior_hfov_deg=62.2)
    prior = 820 / math.tan(math.radians(31.1))
    assert cam.camera_matrix[0, 0] == pytest.approx(prior, rel=1e-6)
    assert info["focal_sigma_px"] >= 0.25 * prior


def test_tops_of_black_and_white_men_on_a_vinyl_board() -> None:
    rng = np.random.default_rng(8)
    board = CHESSBOARDS["vinyl"].replace(corners="tape")
    men = Men(kind="draughts", crown_share=0.3)
    colours = {k: PIECE_COLOURS[k] for k in "KWR"}
    cam = random_camera(rng, "domination")
    opts = RenderOptions.random(rng, glare=0.05)
    first = render_domination(_stacks(rng, list(colours), 0.7), cam, rng, colours=colours, options=opts,
                              board=board, men=men)
    fit = find_chessboard(first.image)
    turns, _ = _turn_to_truth(fit.corners_px, np.array(first.truth["corners_px"]))
    fit = turn_board(fit, turns)  # a8 where the players said
    model = learn_chess_colours(first.image, fit, {c: s[-1] for c, s in first.truth["stacks"].items()})
    assert sorted(model) == ["K", "R", "W"]
    right = total = 0
    for _ in range(2):
        stacks = _stacks(rng, list(colours), 0.5)
        r = render_domination(stacks, cam, rng, colours=colours, options=opts, board=board, men=men)
        fit = turn_board(find_chessboard(r.image), turns)
        reading = read_chess_tops(r.image, fit, model)
        right += sum(reading.tops[c] == (stacks[c][-1] if c in stacks else ".") for c in CELLS)
        total += len(CELLS)
    # measured today: 103 of 104 cells (one frame of each of two positions)
    assert right / total >= 0.95, right / total
    with pytest.raises(ColourModelError, match="2-4"):
        read_chess_tops(r.image, fit, {"K": (30, 30, 30)})


def test_the_contrast_image_separates_red_from_black_squares() -> None:
    rng = np.random.default_rng(4)
    cam = look_at_board("domination", image_size=(820, 616))
    r = render_domination({}, cam, rng, options=RenderOptions.clean(),
                          board=CHESSBOARDS["checkers"].replace(corners="none"))
    fit = find_chessboard(r.image)
    assert fit.extra["corners_found"] >= 45
    grey = cv2.cvtColor(r.image, cv2.COLOR_BGR2GRAY)
    assert grey.std() > 0  # the frame is not blank


def test_a_bump_is_told_from_a_still_board_and_followed() -> None:
    rng = np.random.default_rng(6)
    board = CHESSBOARDS["wood"].replace(corners="paper")
    colours = {k: PIECE_COLOURS[k] for k in "KW"}
    stacks = _stacks(np.random.default_rng(1), list(colours), 0.4)
    opts = RenderOptions.random(rng)
    cam = look_at_board("domination", tilt_deg=6.0, rotation_deg=12.0)
    first = render_domination(stacks, cam, rng, colours=colours, options=opts, board=board, men=Men())
    fit = find_chessboard(first.image)
    again = render_domination(stacks, cam, rng, colours=colours, options=opts, board=board, men=Men())
    assert chessboard_moved(again.image, fit) == (False, fit)
    bumped_cam = look_at_board("domination", tilt_deg=6.0, rotation_deg=13.5, target_offset=(0.08, -0.05))
    bumped = render_domination(stacks, bumped_cam, rng, colours=colours, options=opts, board=board, men=Men())
    moved, now = chessboard_moved(bumped.image, fit)
    assert moved and now is not None
    truth = np.array(bumped.truth["corners_px"])
    _, err_now = _turn_to_truth(now.corners_px, truth)
    _, err_refound = _turn_to_truth(find_chessboard(bumped.image).corners_px, truth)
    assert err_now < err_refound + 3.0, (err_now, err_refound)  # as good as finding it anew
    assert np.allclose(now.corners_px[0], fit.corners_px[0], atol=60)  # a8 kept
    assert chessboard_moved(np.full_like(bumped.image, 90), fit) == (True, None)
    with pytest.raises(ValueError, match="tolerance"):
        chessboard_moved(bumped.image, fit, tolerance_px=0)


@pytest.mark.parametrize(("kind", "most_wrong"), [("counter", 4), ("chip", 1), ("draughts", 1)])
def test_black_men_on_black_squares_and_white_on_white_with_glare(kind: str, most_wrong: int) -> None:
    """The cases colour cannot tell (a printed board's black and white squares, black and white
    men) and a lamp's glare on the glossy tops (a black top looks grey near it): the outline at
    the top's height and the glare taken off read them."""
    rng = np.random.default_rng(31)
    board = CHESSBOARDS["print"].replace(corners="paper")
    men = Men(kind=kind)
    colours = {k: PIECE_COLOURS[k] for k in "KW"}
    cam = random_camera(rng, "domination")
    opts = RenderOptions.random(rng, glare=0.3, hot_spot_strength=0.2, hot_spot_radius=0.3)
    first = render_domination(_stacks(rng, list(colours), 0.7), cam, rng, colours=colours, options=opts,
                              board=board, men=men)
    fit = find_chessboard(first.image)
    turns, _ = _turn_to_truth(fit.corners_px, np.array(first.truth["corners_px"]))
    model = learn_chess_colours(first.image, turn_board(fit, turns),
                                {c: s[-1] for c, s in first.truth["stacks"].items()})
    wrong, same_colour = [], 0
    for _ in range(3):
        stacks = _stacks(rng, list(colours), 0.6)
        r = render_domination(stacks, cam, rng, colours=colours, options=opts, board=board, men=men)
        reading = read_chess_tops(r.image, turn_board(find_chessboard(r.image), turns), model)
        for c in CELLS:
            truth = stacks[c][-1] if c in stacks else "."
            x, y = cell_centre_board(c)
            dark = (int(x) + int(y)) % 2 == 1
            same_colour += truth == ("K" if dark else "W")
            if reading.tops[c] != truth:
                wrong.append((c, truth, reading.tops[c]))
    assert same_colour >= 20  # the frames hold plenty of men on their own colour
    # measured today, of 156 cells: counters 3 wrong (black on black, 5 high), chips and
    # draughts men none; with the reader before, 6, 2 and 4
    assert len(wrong) <= most_wrong, wrong


@pytest.mark.parametrize("seed", [102, 103])
def test_a_crowded_chessboard_is_not_taken_for_the_kits_cells(seed: int) -> None:
    """The kit's cell finder sees a few of a chessboard's light squares as its cells (10 of 52 on
    these frames) and used to win; the chessboard found in the same frame does now."""
    from vision.domination_board import find_domination_board

    rng = np.random.default_rng(seed)
    board = CHESSBOARDS[["vinyl", "print"][seed % 2]].replace(corners="tape")
    colours = {k: PIECE_COLOURS[k] for k in "KW"}
    cam = random_camera(rng, "domination")
    opts = RenderOptions.random(rng)
    stacks = {c: "".join(rng.choice(list(colours), size=int(rng.integers(1, 6))))
              for c in playable_cells() if rng.random() < 0.85}
    r = render_domination(stacks, cam, rng, colours=colours, options=opts, board=board, men=Men(kind="chip"))
    try:  # the trap: the kit's finder sees a few of the light squares as its cells
        kit_cells = find_domination_board(r.image).extra["cells_found"]
        assert kit_cells < 26
    except BoardNotFoundError:  # OpenCV 4.10 (the floor) rejects seed 103's lines outright
        pass
    fit = find_board(r.image, game="domination")
    assert fit.method == "chessboard"
    turns, _ = _turn_to_truth(fit.corners_px, np.array(r.truth["corners_px"]))
    fit = turn_board(fit, turns)
    centres = np.array([cell_centre_board(c) for c in CELLS])
    truth = cam.project(np.c_[centres, np.zeros(len(centres))])
    square_px = float(np.linalg.norm(truth[1] - truth[0]))
    assert float(np.linalg.norm(board_to_image(centres, fit) - truth, axis=1).max()) < 0.1 * square_px


def test_a_labelled_border_strip_is_not_taken_for_a_line_of_squares() -> None:
    """A crowded checkers board (red and black squares) with a black labelled border and papered
    corners: where the grid of corners seen falls short of 7x7, the 8x8 was placed one square
    out, over the border's strip of labels (its whole-board alternation hardly moved: seed 11's
    frame 49 of `bench_vision_chess.py`, 30 cells wrong). Each side's line of squares inside the
    8x8 must alternate too. Measured: before, 1.13 squares off; now 0.12."""
    rng = np.random.default_rng(12)
    board = CHESSBOARDS["checkers"].replace(corners="paper", border=float(rng.uniform(0.3, 0.8)), labels=True,
                                            seed=12)
    cam = random_camera(rng, "domination")
    colours = {k: PIECE_COLOURS[k] for k in "BW"}
    stacks = {c: "".join(rng.choice(list(colours), size=int(rng.integers(1, 6))))
              for c in playable_cells() if rng.random() < 0.9}
    r = render_domination(stacks, cam, rng, colours=colours, options=RenderOptions.random(rng), board=board,
                          men=Men(kind="draughts"))
    truth = np.array(r.truth["corners_px"])
    square = float(np.mean(np.linalg.norm(truth - np.roll(truth, 1, axis=0), axis=1))) / 8.0
    _, err = _turn_to_truth(find_chessboard(r.image).corners_px, truth)
    assert err / square <= 0.25, err / square
