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
