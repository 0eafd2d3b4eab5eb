"""Tops on an 8x8 drawn as lines on one sheet (issue 19): the drawn lines just beyond a man's rim
are no piece's outline."""

from __future__ import annotations

import numpy as np
import pytest

from hardware.sim import RenderOptions, look_at_board, render_domination
from hardware.sim.chessboard import DRAWN_BOARDS
from hardware.sim.layout import playable_cells
from hardware.sim.men import Men
from vision.board import find_board
from vision.chess_tops import is_drawn_grid, learn_chess_colours, read_chess_tops
from vision.chessboard import turn_board
from vision.domination import CELLS

SIZE = (1232, 924)


def _turns(fit_corners: np.ndarray, truth: np.ndarray) -> int:
    errs = [float(np.linalg.norm(np.roll(fit_corners, -k, axis=0) - truth, axis=1).max()) for k in range(4)]
    return int(np.argmin(errs))


def _stacks(rng: np.random.Generator, letters: list[str], fill: float) -> dict[str, str]:
    return {c: "".join(rng.choice(letters, size=int(rng.integers(1, 4))))
            for c in playable_cells() if rng.random() < fill}


@pytest.mark.parametrize(("name", "seed"), [("drawn-paper", 4), ("drawn-card", 6)])
def test_no_white_man_read_on_the_empty_cells_of_a_drawn_8x8(name: str, seed: int) -> None:
    # white men on paper or card: their colour is near the sheet's, so the outline tells a man
    # from a bare cell; the drawn lines round every cell, just beyond a man's rim, closed that
    # outline on empty cells (closure 4-9 noise units against 2.5) and white men were read there
    rng = np.random.default_rng(seed)
    board = DRAWN_BOARDS[name].replace(corners="tape", seed=seed, line_width=0.06)
    men = Men(kind="draughts")
    colours = {"W": (226, 228, 230), "B": (40, 40, 44)}
    cam = look_at_board("domination", image_size=SIZE, tilt_deg=12.0, rotation_deg=7.0 * seed)
    opts = RenderOptions.clean(noise_sigma=1.5)
    learn = _stacks(rng, ["W", "B"], 0.6)
    first = render_domination(learn, cam, rng, colours=colours, options=opts, board=board, men=men)
    fit = find_board(first.image, game="domination")
    assert is_drawn_grid(fit)
    turns = _turns(fit.corners_px, np.array(first.truth["corners_px"]))
    model = learn_chess_colours(first.image, turn_board(fit, turns), {c: s[-1] for c, s in learn.items()})
    stacks = _stacks(rng, ["W", "B"], 0.4)
    r = render_domination(stacks, cam, rng, colours=colours, options=opts, board=board, men=men)
    fit = find_board(r.image, game="domination")
    assert is_drawn_grid(fit)
    reading = read_chess_tops(r.image, turn_board(fit, _turns(fit.corners_px, np.array(r.truth["corners_px"]))),
                              model)
    phantoms = [c for c in CELLS if c not in stacks and reading.tops[c] != "."]
    assert phantoms == []
    wrong = [c for c in stacks if reading.tops[c] != stacks[c][-1]]
    assert wrong == []
