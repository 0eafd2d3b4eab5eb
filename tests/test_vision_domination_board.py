"""vision.domination_board: the board from its cell pattern, on markerless simulated frames."""

from __future__ import annotations

import numpy as np
import pytest

from hardware.sim import RenderOptions, random_camera, render_domination
from hardware.sim.layout import playable_cells
from vision.board import find_board
from vision.camera import Intrinsics
from vision.domination import CELLS, cell_centre_board, read_tops
from vision.domination_board import (
    PLAYABLE_GRID,
    domination_board_moved,
    find_domination_board,
    track_domination_board,
)
from vision.errors import BoardNotFoundError, InvalidImageError
from vision.geometry import BoardFit, apply_homography, fit_from_corners


def _corner_error_px(found: np.ndarray, truth: np.ndarray) -> tuple[float, int]:
    """Largest corner distance and the quarter turn (roll of the corner order) that gives it."""
    errs = [float(np.linalg.norm(np.roll(found, k, axis=0) - truth, axis=1).max()) for k in range(4)]
    return min(errs), int(np.argmin(errs))


def _render(seed: int, fill: float) -> tuple[np.ndarray, np.ndarray, Intrinsics, dict[str, str]]:
    rng = np.random.default_rng(seed)
    cam = random_camera(rng, "domination")
    stacks = {
        c: "".join(rng.choice(list("GRBY"), size=int(rng.integers(1, 6))))
        for c in playable_cells()
        if rng.random() < fill
    }
    rendered = render_domination(stacks, cam, rng, options=RenderOptions.random(rng, markers=False))
    intr = Intrinsics(cam.camera_matrix, cam.dist_coeffs, cam.image_size)
    return rendered.image, np.asarray(rendered.truth["corners_px"]), intr, stacks


@pytest.mark.parametrize("seed, fill", [(11, 0.3), (12, 0.6), (13, 0.95)])
def test_board_found_from_cells_within_two_pixels(seed: int, fill: float) -> None:
    image, truth, intr, _ = _render(seed, fill)
    fit = find_domination_board(image, intrinsics=intr)
    assert isinstance(fit, BoardFit) and fit.game == "domination" and fit.method == "cells"
    err, _ = _corner_error_px(fit.corners_px, truth)
    assert err < 1.0, f"corner error {err:.2f} px"


def test_without_intrinsics_the_board_is_still_close_enough_to_read_tops() -> None:
    image, truth, _, stacks = _render(14, 0.5)
    fit = find_domination_board(image)
    err, turn = _corner_error_px(fit.corners_px, truth)
    assert err < 12.0
    reading = read_tops(image, fit)
    # the corner order found may be a quarter turn of the truth's: map each found cell through
    # the image into the true board frame to name it
    true_fit = fit_from_corners(truth, "domination")
    centres = np.array([cell_centre_board(c) for c in CELLS])
    in_true = apply_homography(true_fit.H_image_to_board, apply_homography(fit.H_board_to_image, centres))
    files = "abcdefgh"
    for cell, (x, y) in zip(CELLS, in_true, strict=True):
        true_cell = f"{files[int(x)]}{8 - int(y)}"
        expected = stacks[true_cell][-1] if true_cell in stacks else "."
        assert reading.tops[cell] == expected, (cell, true_cell)
    assert turn in range(4)


def test_find_board_dispatches_to_the_cell_pattern_without_markers() -> None:
    image, truth, intr, _ = _render(15, 0.4)
    fit = find_board(image, game="domination", intrinsics=intr)
    assert fit.method == "cells"
    assert _corner_error_px(fit.corners_px, truth)[0] < 1.0


def test_no_board_raises_board_not_found(rng: np.random.Generator) -> None:
    table = np.full((600, 800, 3), (52, 86, 128), np.uint8)
    table += rng.integers(0, 6, table.shape, dtype=np.uint8)
    with pytest.raises(BoardNotFoundError, match="cell squares"):
        find_domination_board(table)
    with pytest.raises(InvalidImageError, match="uint8"):
        find_domination_board(table.astype(np.float64))


def test_given_corners_win() -> None:
    image, truth, intr, _ = _render(16, 0.5)
    fit = find_domination_board(image, corners_px=truth, intrinsics=intr)
    assert fit.method == "corners"
    np.testing.assert_allclose(fit.corners_px, truth)


def test_playable_grid_is_the_52_cells() -> None:
    assert len(PLAYABLE_GRID) == 52
    assert {(int(x), int(y)) for x, y in map(cell_centre_board, CELLS)} == set(PLAYABLE_GRID)


def test_tracking_tells_a_still_board_from_a_bumped_one() -> None:
    rng = np.random.default_rng(21)
    cam = random_camera(rng, "domination")
    stacks = {c: "GR" for c in playable_cells()[::3]}
    opts = RenderOptions.random(rng, markers=False)
    first = render_domination(stacks, cam, rng, options=opts)
    intr = Intrinsics(cam.camera_matrix, cam.dist_coeffs, cam.image_size)
    fit = find_domination_board(first.image, intrinsics=intr)
    # the same scene again (new sensor noise): the board has not moved
    again = render_domination(stacks, cam, rng, options=opts)
    still = track_domination_board(again.image, fit, intrinsics=intr)
    assert np.linalg.norm(still.corners_px - fit.corners_px, axis=1).max() < 0.5
    moved_flag, refit = domination_board_moved(again.image, fit, intrinsics=intr)
    assert not moved_flag and refit is not None
    # a bump: the camera turns by a fraction of a degree, the board moves by a few pixels
    bumped_cam = cam.with_pose(np.asarray(cam.rvec) + np.array([0.0, 0.0, 0.004]), cam.tvec)
    bumped = render_domination(stacks, bumped_cam, rng, options=opts)
    truth = np.asarray(bumped.truth["corners_px"])
    moved_flag, refit = domination_board_moved(bumped.image, fit, intrinsics=intr)
    assert moved_flag
    if refit is not None:
        assert _corner_error_px(refit.corners_px, truth)[0] < 1.0
    # a frame without the board (covered): its lines are gone
    blank = np.full_like(first.image, 128)
    assert domination_board_moved(blank, fit, intrinsics=intr) == (True, None)
    with pytest.raises(ValueError, match="tolerance_px"):
        domination_board_moved(again.image, fit, tolerance_px=0.0)
    try:
        moved = track_domination_board(bumped.image, fit, intrinsics=intr)
    except BoardNotFoundError:
        return  # lost: also tells the caller that the board moved
    shift = np.linalg.norm(moved.corners_px - fit.corners_px, axis=1).max()
    assert shift > 2.0
    assert _corner_error_px(moved.corners_px, truth)[0] < 1.0
