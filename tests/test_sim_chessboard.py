"""The simulated table's chessboards, draughts men and chips (issue 19)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from hardware.sim import RenderOptions, look_at_board, render_domination
from hardware.sim.chessboard import CHESSBOARDS, ChessBoard, chessboard_texture, cut_grid_cells
from hardware.sim.layout import playable_cells
from hardware.sim.men import PIECE_COLOURS, Men, random_chess_table, random_men_colours

SIZE = (820, 616)


def _board_px(cam, x: float, y: float) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    p = cam.project(np.array([[x, y, 0.0]]))[0]
    return round(float(p[0])), round(float(p[1]))


@pytest.mark.parametrize("name", ["wood", "vinyl", "checkers"])
def test_squares_alternate_with_a1_dark_and_the_cut_corners_are_taped(name: str) -> None:
    board = CHESSBOARDS[name].replace(corners="tape", corner_bgr=(196, 140, 52))
    cam = look_at_board("domination", image_size=SIZE)
    r = render_domination({}, cam, np.random.default_rng(0), options=RenderOptions.clean(), board=board)
    cut = set(cut_grid_cells())
    for col in range(8):
        for row in range(8):
            # a point off the square's centre: the tape's strips cross there on some squares
            x, y = _board_px(cam, col + 0.5, row + 0.5)
            got = r.image[y - 1 : y + 2, x - 1 : x + 2].reshape(-1, 3).mean(axis=0)
            if (col, row) in cut:
                continue
            want = board.dark_bgr if (col + row) % 2 == 1 else board.light_bgr
            assert np.abs(got - np.array(want)).max() < 30, (name, col, row, got, want)
    # every cut square shows the tape over much of it
    for col, row in cut:
        pts = [_board_px(cam, col + u, row + v) for u in np.linspace(0.15, 0.85, 8)
               for v in np.linspace(0.15, 0.85, 8)]
        taped = [np.abs(r.image[y, x].astype(int) - [196, 140, 52]).max() < 30 for x, y in pts]
        assert np.mean(taped) > 0.3, (name, col, row, np.mean(taped))
    assert r.truth["board"]["name"] == name
    json.dumps(r.truth)


def test_borderless_board_ends_at_the_table_and_a_bordered_one_does_not() -> None:
    cam = look_at_board("domination", image_size=SIZE)
    for border in (0.0, 0.6):
        board = CHESSBOARDS["print"].replace(border=border, corners="none")
        r = render_domination({}, cam, np.random.default_rng(0), options=RenderOptions.clean(), board=board)
        x, y = _board_px(cam, 4.5, -0.3)
        got = r.image[y, x].astype(int)
        is_border = np.abs(got - np.array(board.border_bgr)).max() < 30
        assert is_border == (border > 0), (border, got)


def test_men_show_their_colour_and_their_decoration() -> None:
    rng = np.random.default_rng(3)
    cam = look_at_board("domination", image_size=SIZE)
    colours = {k: PIECE_COLOURS[k] for k in "KWR"}
    stacks = {c: "KWR"[i % 3] * (1 + i % 3) for i, c in enumerate(playable_cells()[::2])}
    for kind in ("draughts", "chip", "counter"):
        men = Men(kind=kind, jitter=0.0)  # type: ignore[arg-type]
        r = render_domination(stacks, cam, rng, colours=colours, options=RenderOptions.clean(),
                              board=CHESSBOARDS["vinyl"], men=men)
        spread = []
        for cell, stack in stacks.items():
            tx, ty = r.truth["tops_board"][cell]
            z = -len(stack) * 0.12
            # half way out: plain top on every kind (inside the chip's ring, outside the crown)
            p = cam.project(np.array([[tx + 0.4 * 0.4, ty, z]]))[0]
            x, y = round(float(p[0])), round(float(p[1]))
            got = r.image[y, x].astype(int)
            assert np.abs(got - np.array(colours[stack[-1]])).max() < 30, (kind, cell, got)
            # along a ring near the rim: decorations (grooves, stripes) vary the colour there
            ang = np.linspace(0, 2 * np.pi, 48, endpoint=False)
            ring = np.stack([tx + 0.37 * np.cos(ang), ty + 0.37 * np.sin(ang), np.full(48, z)], 1)
            q = np.round(cam.project(ring)).astype(int)
            spread.append(float(np.ptp(r.image[q[:, 1], q[:, 0]].astype(int).sum(axis=1))))
        if kind == "counter":
            assert np.median(spread) < 40, (kind, np.median(spread))
        elif kind == "chip":
            assert np.median(spread) > 200, (kind, np.median(spread))  # white stripes


def test_spare_pieces_block_the_corners_but_are_no_stacks() -> None:
    cam = look_at_board("domination", image_size=SIZE)
    board = CHESSBOARDS["wood"].replace(corners="pieces", border=0.5)
    colours = {k: PIECE_COLOURS[k] for k in "KW"}
    r = render_domination({"d4": "K"}, cam, np.random.default_rng(0), colours=colours,
                          options=RenderOptions.clean(), board=board, men=Men())
    assert r.truth["stacks"] == {"d4": "K"}
    for col, row in cut_grid_cells():
        x, y = _board_px(cam, col + 0.5, row + 0.5)
        got = r.image[y, x].astype(int)
        square = board.dark_bgr if (col + row) % 2 == 1 else board.light_bgr
        assert np.abs(got - np.array(square)).max() > 40, (col, row, got)


def test_random_tables_and_bad_descriptions() -> None:
    rng = np.random.default_rng(1)
    kinds, corners = set(), set()
    for _ in range(40):
        board, men, colours = random_chess_table(rng)
        assert 2 <= len(colours) <= 4 and ("K" in colours or "W" in colours)
        kinds.add(men.kind)
        corners.add(board.corners)
        assert ChessBoard.from_dict(json.loads(json.dumps(board.to_dict()))) == board
    assert kinds == {"draughts", "chip", "counter"} and corners == {"tape", "paper", "pieces"}
    with pytest.raises(ValueError, match="material"):
        ChessBoard(material="glass")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="border"):
        ChessBoard(border=3.0)
    with pytest.raises(ValueError, match="unknown keys"):
        ChessBoard.from_dict({"colour": 1})
    with pytest.raises(ValueError, match="kind"):
        Men(kind="marble")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="2..4"):
        random_men_colours(rng, 5)


def test_the_texture_is_box_filtered_at_the_square_borders() -> None:
    board = CHESSBOARDS["print"].replace(corners="none", labels=False, edge_line=False, border=0.45)
    tex = chessboard_texture(board, 10.0, False)
    # texel k covers board [-0.45 + k / 10, -0.45 + (k + 1) / 10): the one from 2.95 to 3.05
    # lies half on column 2 (light on row 0) and half on column 3 (dark)
    row = tex.image[int((0.55 + 0.45) * 10), :, 0].astype(float)  # board y 0.55..0.65, row 0
    k = round((2.95 + 0.45) * 10)
    light, dark = board.light_bgr[0], board.dark_bgr[0]
    assert not board.is_dark(2, 0) and board.is_dark(3, 0)
    assert row[k - 1] == pytest.approx(light, abs=1)
    assert row[k] == pytest.approx((light + dark) / 2, abs=1)
    assert row[k + 1] == pytest.approx(dark, abs=1)
