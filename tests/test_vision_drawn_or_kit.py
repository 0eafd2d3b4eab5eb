"""An 8x8 drawn as lines on one sheet and the kit's printed board without markers are found alike
(the kit's cells, then their lines): the fit says which the frame shows (issue 19), so that the
referee reads a drawn grid as a chessboard and the kit with the kit's reader."""

from __future__ import annotations

import numpy as np
import pytest

from hardware.sim import RenderOptions, look_at_board, random_camera, render_domination
from hardware.sim.chessboard import DRAWN_BOARDS
from hardware.sim.layout import playable_cells
from hardware.sim.men import Men
from referee.games.registry import get_game
from vision.board import drawn_grid_moved, find_board
from vision.camera import Intrinsics
from vision.chess_tops import is_drawn_grid
from vision.chessboard import turn_board
from vision.domination import CELLS

SIZE = (1024, 768)


def _stacks(rng: np.random.Generator, letters: str, fill: float) -> dict[str, str]:
    return {c: "".join(rng.choice(list(letters), size=int(rng.integers(1, 4))))
            for c in playable_cells() if rng.random() < fill}


def _turns(fit_corners: np.ndarray, truth: np.ndarray) -> int:
    return int(np.argmin([np.linalg.norm(np.roll(fit_corners, -k, axis=0) - truth, axis=1).max() for k in range(4)]))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_kits_board_without_markers_keeps_the_kits_reader(seed: int) -> None:
    # no markers, no calibration: the kit's cells re-fitted on its lines (method "lines", as a
    # drawn 8x8's), yet its margin is the plate's colour: read by the kit's reader, with the
    # kit's own piece colours (the chessboard reader would need colours learnt first)
    rng = np.random.default_rng(seed)
    stacks = _stacks(rng, "GRBY", 0.5)
    r = render_domination(stacks, random_camera(rng, "domination", image_size=SIZE), rng,
                          options=RenderOptions.random(rng, markers=False))
    fit = find_board(r.image, game="domination")
    assert fit.method in ("cells", "lines")
    assert fit.extra["drawn"] is False and not is_drawn_grid(fit)
    fit = turn_board(fit, _turns(fit.corners_px, np.array(r.truth["corners_px"])))
    reading = get_game("domination").read(r.image, fit)
    assert reading.tops == {c: stacks[c][-1] if c in stacks else "." for c in CELLS}


@pytest.mark.parametrize(("name", "seed", "calibrated"),
                         [("drawn-paper", 1, False), ("drawn-card", 2, False), ("drawn-felt", 3, False),
                          ("drawn-paper", 4, True)])
def test_a_drawn_8x8_is_marked_drawn_whichever_finder_found_it(name: str, seed: int, calibrated: bool) -> None:
    rng = np.random.default_rng(seed)
    board = DRAWN_BOARDS[name].replace(corners="tape", seed=seed, line_width=0.05)
    colours = {"W": (226, 228, 230), "B": (40, 40, 44)}
    cam = look_at_board("domination", image_size=SIZE, tilt_deg=9.0, rotation_deg=11.0 * seed,
                        distortion=(-0.06, 0.01, 0.0, 0.0, 0.0))
    r = render_domination(_stacks(rng, "WB", 0.6), cam, rng, colours=colours,
                          options=RenderOptions.random(rng), board=board, men=Men(kind="draughts"))
    intr = Intrinsics(cam.camera_matrix, cam.dist_coeffs, cam.image_size) if calibrated else None
    fit = find_board(r.image, game="domination", intrinsics=intr)
    assert fit.method in ("cells", "lines")
    assert is_drawn_grid(fit)


@pytest.mark.parametrize(("name", "corners", "seed"),
                         [("drawn-paper", "tape", 5), ("drawn-card", "paper", 6), ("drawn-felt", "pieces", 7),
                          ("drawn-card", "tape", 8)])
def test_a_drawn_sheet_cut_at_its_outer_lines_is_marked_drawn(name: str, corners: str, seed: int) -> None:
    # no margin of its own: the table beside the grid as the kit's plate would be, but the cut
    # corners are the sheet's tape, paper or spare men, not the table as the kit's plate-coloured
    # ones are; found by the finder and at given corners alike
    rng = np.random.default_rng(seed)
    board = DRAWN_BOARDS[name].replace(corners=corners, seed=seed, line_width=0.05, border=0.0)
    colours = {"W": (226, 228, 230), "B": (40, 40, 44)}
    cam = look_at_board("domination", image_size=SIZE, tilt_deg=7.0, rotation_deg=13.0 * seed,
                        distortion=(-0.04, 0.0, 0.0, 0.0, 0.0))
    r = render_domination(_stacks(rng, "WB", 0.6), cam, rng, colours=colours,
                          options=RenderOptions.random(rng), board=board, men=Men(kind="draughts"))
    fit = find_board(r.image, game="domination")
    assert is_drawn_grid(fit), fit.method
    given = find_board(r.image, game="domination", corners_px=np.asarray(r.truth["corners_px"], float))
    assert is_drawn_grid(given)


def test_a_drawn_8x8_is_tracked_on_its_lines_through_its_lens_and_a_bump() -> None:
    from referee.simsteps import bumped

    rng = np.random.default_rng(5)
    board = DRAWN_BOARDS["drawn-card"].replace(corners="paper", seed=5, line_width=0.04)
    colours = {"W": (226, 228, 230), "B": (40, 40, 44)}
    cam = look_at_board("domination", image_size=SIZE, tilt_deg=8.0, rotation_deg=6.0,
                        distortion=(-0.08, 0.02, 0.0, 0.0, 0.0))
    stacks = _stacks(rng, "WB", 0.5)
    opts = RenderOptions.random(rng)
    first = render_domination(stacks, cam, rng, colours=colours, options=opts, board=board, men=Men(kind="draughts"))
    fit = find_board(first.image, game="domination")
    assert fit.method == "lines" and is_drawn_grid(fit) and fit.extra["lens"] == "estimated"
    again = render_domination(stacks, cam, rng, colours=colours, options=opts, board=board, men=Men(kind="draughts"))
    assert drawn_grid_moved(again.image, fit) == (False, fit)
    moved_cam = bumped(cam, np.random.default_rng(1))
    after = render_domination(stacks, moved_cam, rng, colours=colours, options=opts, board=board,
                              men=Men(kind="draughts"))
    truth = np.array(after.truth["corners_px"])
    moved, new = drawn_grid_moved(after.image, fit)
    assert moved and new is not None
    assert float(np.linalg.norm(np.array(first.truth["corners_px"]) - truth, axis=1).max()) > 3.0
    # the corner order kept, every corner within a twentieth of a square
    square_px = float(np.linalg.norm(truth[1] - truth[0])) / 8.0
    k = _turns(fit.corners_px, np.array(first.truth["corners_px"]))
    assert float(np.linalg.norm(np.roll(new.corners_px, -k, axis=0) - truth, axis=1).max()) < square_px / 20
    assert is_drawn_grid(new) and new.extra["intrinsics"] is fit.extra["intrinsics"]
