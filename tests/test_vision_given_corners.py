"""Domination with the board's corners given (issue 19): the corners of a chessboard, of an 8x8
drawn on one sheet or of the kit's printed board are read by the reader made for that board.

Before, any given corners were read as the kit's printed board (its light cells), whatever the
frame showed: men on a chessboard's dark squares and a drawn grid's lines went through the kit's
reader. `vision.board.find_board` now looks at what the corners frame: the squares' alternation
(`vision.chessboard.alternating_share`), else the margin beside the grid (`is_one_sheet`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hardware.sim import RenderOptions, random_camera, render_domination
from hardware.sim.layout import playable_cells
from hardware.sim.men import random_chess_table
from vision.board import find_board
from vision.chess_tops import is_chessboard, is_drawn_grid, learn_chess_colours
from vision.chessboard import ALTERNATING_SHARE, alternating_share
from vision.domination import CELLS
from vision.geometry import fit_from_corners, image_to_board

KINDS = ("chessboard", "drawn", "kit")


def _stacks(rng: np.random.Generator, letters: list[str]) -> dict[str, str]:
    fill = rng.uniform(0.2, 0.95)
    return {c: "".join(rng.choice(letters, size=int(rng.integers(1, 6))))
            for c in playable_cells() if rng.random() < fill}


def _table(rng: np.random.Generator, kind: str):
    """A random table of `kind` and a frame of a random position on it, with its truth."""
    if kind == "kit":
        board = men = colours = None
        letters = list("GRBY")[: int(rng.integers(2, 5))]
    else:
        board, men, colours = random_chess_table(rng, drawn=kind == "drawn")
        letters = list(colours)
    cam = random_camera(rng, "domination")
    opts = RenderOptions.random(rng)
    stacks = _stacks(rng, letters)
    return render_domination(stacks, cam, rng, colours=colours, options=opts, board=board, men=men), stacks


def _kind(fit) -> str:
    return "chessboard" if is_chessboard(fit) else "drawn" if is_drawn_grid(fit) else "kit"


@pytest.mark.parametrize("kind", KINDS)
def test_given_corners_are_read_as_the_board_they_frame(kind: str) -> None:
    rng = np.random.default_rng({"chessboard": 31, "drawn": 32, "kit": 33}[kind])
    for _ in range(4):
        r = _table(rng, kind)[0]
        truth = np.asarray(r.truth["corners_px"], float)
        turns = int(rng.integers(0, 4))  # the players' a8 at any corner of the picture
        given = np.roll(truth, -turns, axis=0)
        fit = find_board(r.image, game="domination", corners_px=given)
        assert _kind(fit) == kind
        # corner i of the fit is given corner i: within a tenth of a square on the board's plane
        err_squares = np.linalg.norm(image_to_board(fit.corners_px, fit_from_corners(given, "domination"))
                                     - image_to_board(given, fit_from_corners(given, "domination")), axis=1)
        assert err_squares.max() < 0.1, err_squares


def test_the_squares_alternate_on_chessboards_only() -> None:
    rng = np.random.default_rng(34)
    shares = {k: [] for k in KINDS}
    for kind in KINDS:
        for _ in range(4):
            r = _table(rng, kind)[0]
            fit = fit_from_corners(np.asarray(r.truth["corners_px"], float), "domination")
            shares[kind].append(alternating_share(r.image, fit))
    assert min(shares["chessboard"]) >= ALTERNATING_SHARE, shares
    assert max(shares["drawn"] + shares["kit"]) < ALTERNATING_SHARE, shares
    # half a square off, the corners frame a lattice of the squares' middles: nothing alternates
    r = _table(np.random.default_rng(35), "chessboard")[0]
    fit = fit_from_corners(np.asarray(r.truth["corners_px"], float), "domination")
    from vision.geometry import board_to_image

    shifted = board_to_image(np.array([[0.5, 0.5], [8.5, 0.5], [8.5, 8.5], [0.5, 8.5]]), fit)
    assert alternating_share(r.image, fit_from_corners(shifted, "domination")) < ALTERNATING_SHARE


def test_men_on_a_chessboard_at_given_corners_are_read_by_the_chessboard_reader() -> None:
    """Given corners on a chessboard: the referee's Domination reading (`Game.read`) reads the
    men as the chessboard reader does (the kit's reader, taken before for any given corners,
    looks for the kit's light cells and its pieces)."""
    from referee.games.registry import get_game

    spec = get_game("domination")
    rng = np.random.default_rng(36)
    board, men, colours = random_chess_table(rng)
    letters = list(colours)
    cam = random_camera(rng, "domination")
    opts = RenderOptions.random(rng)
    learn = render_domination(_stacks(rng, letters), cam, rng, colours=colours, options=opts, board=board, men=men)
    given = np.asarray(learn.truth["corners_px"], float)
    fit = find_board(learn.image, game="domination", corners_px=given)
    model = learn_chess_colours(learn.image, fit, {c: s[-1] for c, s in learn.truth["stacks"].items()})
    right = total = 0
    for _ in range(2):
        stacks = _stacks(rng, letters)
        r = render_domination(stacks, cam, rng, colours=colours, options=opts, board=board, men=men)
        tops = spec.read(r.image, spec.find_board(r.image, corners_px=given), colours=model).tops
        right += sum(tops[c] == (stacks[c][-1] if c in stacks else ".") for c in CELLS)
        total += len(CELLS)
    assert right >= 0.99 * total, (right, total)


def test_real_chessboard_photos_at_their_labelled_corners_are_chessboards() -> None:
    """The real photos of draughts on chessboards (benchmarks/real, images fetched by
    `benchmarks/real/fetch_images.py`; not in a clean clone)."""
    import sys

    import cv2

    real = Path(__file__).resolve().parent.parent / "benchmarks" / "real"
    sys.path.insert(0, str(real))
    try:
        from fetch_images import image_path, label_sets
    finally:
        sys.path.remove(str(real))
    photos = [(s, im) for s in label_sets("domination") for im in s["images"] if image_path(s, im).exists()]
    if not photos:
        pytest.skip("no real chessboard photos on disk: run benchmarks/real/fetch_images.py")
    for s, im in photos:
        frame = cv2.imread(str(image_path(s, im)))
        fit = find_board(frame, game="domination", corners_px=np.asarray(im["corners_px"], float))
        assert is_chessboard(fit), (s["set"], im["name"])
