"""An 8x8 drawn as lines (no alternating squares) on the simulated table, found automatically by the
Dition board's line search with the 8x8 grid as its drawing (issue 19)."""

from __future__ import annotations

import numpy as np
import pytest

from hardware.sim import RenderOptions, look_at_board, render_domination
from hardware.sim.chessboard import DRAWN_BOARDS, chessboard_texture
from hardware.sim.layout import playable_cells
from hardware.sim.men import Men
from vision.board import find_board
from vision.dition_board import find_drawn_lines, with_estimated_lens
from vision.errors import BoardNotFoundError
from vision.geometry import GRID_8X8

SIZE = (1232, 924)


def _stacks(rng: np.random.Generator, letters: list[str], fill: float) -> dict[str, str]:
    return {c: "".join(rng.choice(letters, size=int(rng.integers(1, 4))))
            for c in playable_cells() if rng.random() < fill}


def _corner_error_squares(found: np.ndarray, truth: np.ndarray) -> float:
    """Largest corner distance over the quarter turns of the corner order, in squares."""
    side_px = float(np.mean(np.linalg.norm(truth - np.roll(truth, 1, axis=0), axis=1))) / 8.0
    return min(float(np.linalg.norm(np.roll(found, -k, axis=0) - truth, axis=1).max())
               for k in range(4)) / side_px


def test_a_drawn_board_is_one_colour_with_its_grid_lines_in_ink() -> None:
    board = DRAWN_BOARDS["drawn-paper"].replace(corners="none", line_width=0.05)
    tex = chessboard_texture(board, 40.0, False)
    x0, y0 = tex.origin

    def at(x: float, y: float) -> np.ndarray:
        return tex.image[int((y - y0) * tex.ppu), int((x - x0) * tex.ppu)].astype(int)

    for col in range(8):
        for row in range(8):  # every square's middle the sheet's colour (no checker)
            assert np.abs(at(col + 0.5, row + 0.5) - board.light_bgr).max() < 6, (col, row)
    for k in range(9):  # on each of the 9 + 9 lines, ink; a fifth of a square beside it, none
        for t in (0.5, 3.5, 7.5):
            assert np.abs(at(k, t) - board.dark_bgr).max() < 40, ("x", k, t)
            assert np.abs(at(t, k) - board.dark_bgr).max() < 40, ("y", k, t)
            assert np.abs(at(k + 0.2 if k < 8 else k - 0.2, t) - board.light_bgr).max() < 6, (k, t)


@pytest.mark.parametrize(("name", "seed"), [("drawn-paper", 1), ("drawn-card", 2), ("drawn-felt", 3)])
def test_a_drawn_8x8_with_men_is_found_through_the_lens_within_a_twentieth_of_a_square(name: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    board = DRAWN_BOARDS[name].replace(corners="tape", seed=seed)
    men = Men(kind="draughts")
    colours = {"W": (226, 228, 230), "B": (40, 40, 44)}
    # a barrel lens bows the grid's lines by a few px: without the lens from their straightness
    # the corners miss by more than a twentieth of a square
    cam = look_at_board("domination", image_size=SIZE, tilt_deg=10.0, rotation_deg=8.0 * seed,
                        distortion=(-0.08, 0.02, 0.0, 0.0, 0.0))
    r = render_domination(_stacks(rng, ["W", "B"], 0.5), cam, rng, colours=colours,
                          options=RenderOptions.clean(), board=board, men=men)
    truth = np.array(r.truth["corners_px"])
    lines = find_drawn_lines(r.image, GRID_8X8)
    assert lines.method == "lines" and lines.game == "domination"
    assert lines.extra["lines"] == ("light" if name == "drawn-felt" else "dark")
    assert _corner_error_squares(with_estimated_lens(r.image, lines).corners_px, truth) < 0.05
    # and by the referee's own search (no markers, no corners: the kit's cells, a chessboard's
    # squares, then the drawn lines); ink on paper passes for the kit's cells first, fitted
    # without a lens model (its corners missed by up to 0.15 squares under this lens): the grid's
    # lines where the cells put them are fitted again, through the lens from their straightness
    fit = find_board(r.image, game="domination")
    assert fit.method == "lines"
    assert _corner_error_squares(fit.corners_px, truth) < 0.05


def test_a_bare_table_is_no_drawn_board() -> None:
    rng = np.random.default_rng(5)
    frame = np.clip(rng.normal(120, 6, (600, 800, 3)), 0, 255).astype(np.uint8)
    with pytest.raises(BoardNotFoundError, match="drawn 8x8"):
        find_drawn_lines(frame, GRID_8X8)


def test_a_few_crossings_of_a_drawn_grid_taken_for_a_chessboard_give_way_to_the_drawn_lines() -> None:
    """Chalk on felt with spare men on the corner squares (the chessboard benchmark's last drawn
    table, seed 3, another position): the chessboard finder's X-junctions make a lattice of 12
    corners of its own, 5.3 squares off the grid; too few for a chessboard taken at its word."""
    from hardware.sim import SimCamera

    board = DRAWN_BOARDS["drawn-felt"].replace(
        material="vinyl", light_bgr=(63, 114, 43), dark_bgr=(194, 215, 213), border=0.848,
        border_bgr=(63, 114, 43), labels=False, corners="pieces", corner_bgr=(150, 196, 214),
        line_width=0.0298, seed=419295817)
    men = Men(kind="draughts", diameter=0.816, crown_share=0.443, ridges=40, stripes=4,
              stripe_bgr=(40, 40, 44), jitter=0.0134, seed=406123413)
    colours = {"K": (34, 34, 38), "B": (168, 86, 34), "N": (48, 88, 150), "W": (206, 224, 232)}
    cam = SimCamera(
        camera_matrix=np.array([[1183.005, 0.0, 828.524], [0.0, 1182.957, 605.620], [0.0, 0.0, 1.0]]),
        dist_coeffs=np.array([-0.05053, 0.07550, 0.001342, 0.001573, 0.0]),
        rvec=np.array([0.019411, 0.050049, 1.328483]), tvec=np.array([2.809139, -4.750812, 9.894742]),
        image_size=(1640, 1232))
    options = RenderOptions(
        ambient=1.013, gradient=0.253, gradient_angle_deg=32.5, hot_spot_xy=(0.833, 0.348),
        hot_spot_strength=0.065, hot_spot_radius=0.153, glare=0.036, colour_cast=(1.024, 0.982, 0.994),
        noise_sigma=4.49, blur_sigma_px=0.81, jpeg_quality=74, vignette=0.048, shadow=0.318,
        light_dir=(-0.094, 0.192), shadow_blur_units=0.061, table_texture=True)
    rng = np.random.default_rng(8)
    fill = 0.2 + 0.75 * rng.random()
    stacks = {c: "".join(rng.choice(list(colours), size=int(rng.integers(1, 6))))
              for c in playable_cells() if rng.random() < fill}
    r = render_domination(stacks, cam, rng, colours=colours, options=options, board=board, men=men)
    fit = find_board(r.image, game="domination")
    assert fit.method == "lines"
    assert _corner_error_squares(fit.corners_px, np.array(r.truth["corners_px"])) < 0.05
