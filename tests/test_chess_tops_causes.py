"""Tops on a chessboard: the causes of the misread cells of `bench_vision_chess.py` (issue 19),
each on rendered frames with known tops."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np

from hardware.sim import RenderOptions, look_at_board, random_camera, render_domination
from hardware.sim.camera import SimCamera
from hardware.sim.chessboard import CHESSBOARDS, ChessBoard
from hardware.sim.layout import playable_cells
from hardware.sim.men import PIECE_COLOURS, Men
from vision.chess_tops import learn_chess_colours, read_chess_tops
from vision.chessboard import find_chessboard, turn_board
from vision.domination import CELLS, cell_centre_board
from vision.geometry import (
    BoardFit,
    board_intrinsics,
    board_to_image,
    camera_geometry,
    fit_from_corners,
)


def _turns(fit_corners: np.ndarray, truth: np.ndarray) -> int:
    errs = [float(np.linalg.norm(np.roll(fit_corners, -k, axis=0) - truth, axis=1).max()) for k in range(4)]
    return int(np.argmin(errs))


def _empty_board(rng: np.random.Generator, board: str, tilt_deg: float, rotation_deg: float, noise_sigma: float,  # type: ignore[no-untyped-def]
                 **light: float):
    """A rendered chessboard with no men (cut corners papered), seen by a camera tilted and
    turned so (its noise drawn from `rng`), and its fit found by the chessboard finder, turned
    to the truth's a8."""
    cam = look_at_board("domination", tilt_deg=tilt_deg, rotation_deg=rotation_deg)
    empty = render_domination({}, cam, rng,
                              options=RenderOptions.clean(noise_sigma=noise_sigma, **light),
                              board=CHESSBOARDS[board].replace(corners="paper"))
    fit = find_chessboard(empty.image)
    return empty, turn_board(fit, _turns(fit.corners_px, np.array(empty.truth["corners_px"])))


def _dark(cell: str) -> bool:
    x, y = cell_centre_board(cell)
    return (int(x) + int(y)) % 2 == 1


def _read(board, men, colours, cam, opts, learn_stacks, stacks, seed):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)
    first = render_domination(learn_stacks, cam, rng, colours=colours, options=opts, board=board, men=men)
    fit = find_chessboard(first.image)
    turns = _turns(fit.corners_px, np.array(first.truth["corners_px"]))
    model = learn_chess_colours(first.image, turn_board(fit, turns), {c: s[-1] for c, s in learn_stacks.items()})
    r = render_domination(stacks, cam, rng, colours=colours, options=opts, board=board, men=men)
    reading = read_chess_tops(r.image, turn_board(find_chessboard(r.image), turns), model)
    return {c: (stacks[c][-1] if c in stacks else ".", reading.tops[c]) for c in CELLS}


def _disc_px(fit, centre_board, radius_board):  # type: ignore[no-untyped-def]
    ang = np.linspace(0, 2 * np.pi, 48, endpoint=False)
    ring = np.asarray(centre_board) + radius_board * np.stack([np.cos(ang), np.sin(ang)], 1)
    return np.round(board_to_image(ring, fit) * 16).astype(np.int32)


def test_a_white_top_on_a_black_square_whose_corners_white_men_cover() -> None:
    """Tall white stacks beside a black square lean over its corners, where its light level was
    measured (the four samples 0.42 squares off its centre): a white top there looked three
    times too dark and read yellow. Painted on a rendered checkers board: white and yellow tops,
    and on three black squares white patches over all four corner samples."""
    rng = np.random.default_rng(1)
    empty, fit = _empty_board(rng, "checkers", 8.0, 15.0, noise_sigma=1.5)
    colours = {"W": PIECE_COLOURS["W"], "Y": PIECE_COLOURS["Y"]}

    def paint(tops: dict[str, str], covered: list[str]) -> np.ndarray:
        img = empty.image.copy()
        for cell, letter in tops.items():
            cv2.fillPoly(img, [_disc_px(fit, cell_centre_board(cell), 0.38)], colours[letter], cv2.LINE_AA, 4)
        for cell in covered:
            x, y = cell_centre_board(cell)
            for dx, dy in ((-0.42, -0.42), (0.42, -0.42), (0.42, 0.42), (-0.42, 0.42)):
                cv2.fillPoly(img, [_disc_px(fit, (x + dx, y + dy), 0.09)], colours["W"], cv2.LINE_AA, 4)
        return img

    learn = {c: "WY"[i % 2] for i, c in enumerate(["c3", "d4", "e3", "f4", "c5", "e5", "d6", "f6"])}
    model = learn_chess_colours(paint(learn, []), fit, learn)
    tops = {"b4": "W", "d2": "W", "g5": "Y", "c7": "Y", "e4": "W", "f5": "Y"}
    covered = ["b4", "d2", "g5"]
    assert all(_dark(c) for c in covered)
    reading = read_chess_tops(paint(tops, covered), fit, model)
    wrong = [(c, tops.get(c, "."), reading.tops[c]) for c in CELLS if reading.tops[c] != tops.get(c, ".")]
    # with the level from the cell's own four samples: the covered white tops read yellow
    assert not wrong, wrong


def test_bare_black_squares_beside_the_cut_corners_and_the_edge() -> None:
    """Black counters on a printed board whose cut corners are taped: the tape's edges (not the
    squares') and the fit extrapolated to the outer edge closed rings on the bare black squares
    beside them, where colour cannot tell a black counter from the square."""
    board = CHESSBOARDS["print"].replace(corners="tape", seed=5)
    colours = {k: PIECE_COLOURS[k] for k in "KW"}
    cam = look_at_board("domination", tilt_deg=10.0, rotation_deg=-25.0)
    opts = RenderOptions.random(np.random.default_rng(2), glare=0.05)
    cells = playable_cells()
    edge = [c for c in cells if c[0] in "ah" or c[1] in "18" or c in ("b2", "g2", "b7", "g7")]
    inner = [c for c in cells if c not in edge]
    learn = {c: "KW"[i % 2] for i, c in enumerate(inner)}
    rng = np.random.default_rng(3)
    # the edge squares bare, the inner ones full (their leaning sides beside the edge squares)
    stacks = {c: "".join(rng.choice(list("KW"), size=int(rng.integers(1, 6)))) for c in inner}
    got = _read(board, Men(kind="counter"), colours, cam, opts, learn, stacks, seed=13)
    phantoms = [c for c in edge if got[c][1] != "."]
    wrong = [(c, t, r) for c, (t, r) in got.items() if t != r]
    # measured: 1 phantom of the 32 bare edge squares (f8), before 3 (f8, g7, a6)
    assert len(phantoms) <= 1, phantoms
    assert len(wrong) <= 1, wrong


def test_no_phantom_tops_on_bare_black_squares_where_the_fit_is_off_by_its_residual() -> None:
    """A fit a few pixels off (the finder's on seed 3's frames 30 and 32 said 2.3-2.5 px) puts
    the printed squares' black-to-white edges beside the bare black squares a few pixels from
    where it says: the steps it did not take off closed rings of 4-10 noise units (a smooth print
    shows 0.2 grey levels a pixel) and read black counters there, where colour cannot tell. The
    fit here: the true corners moved by 3.5 px, which its residual says (light, noise, blur and
    JPEG as on seed 3's frame 30). Measured: with the edges taken where the fit puts them
    (`fit_slack=0`), 2 phantoms (e3, g3)."""
    board = CHESSBOARDS["print"].replace(corners="tape", seed=7)
    colours = {k: PIECE_COLOURS[k] for k in "KW"}
    cam = look_at_board("domination", tilt_deg=12.0, rotation_deg=20.0)
    opts = RenderOptions.clean(noise_sigma=1.5, blur_sigma_px=1.0, jpeg_quality=76, shadow=0.3, light_dir=(0.1, 0.12))
    cells = playable_cells()
    light = [c for c in cells if not _dark(c)]
    dark = [c for c in cells if _dark(c)]
    rng = np.random.default_rng(4)
    learn = {c: "KW"[i % 2] for i, c in enumerate(cells)}
    first = render_domination(learn, cam, rng, colours=colours, options=opts, board=board, men=Men(kind="counter"))
    exact = fit_from_corners(np.array(first.truth["corners_px"]), "domination")
    model = learn_chess_colours(first.image, exact, learn)
    # tall white stacks on the light squares, black tops on every third dark one, the rest bare
    stacks = {c: "".join(rng.choice(list("KW"), size=int(rng.integers(2, 5)))) + "W" for c in light}
    stacks.update({c: "WK" for c in dark[::3]})
    r = render_domination(stacks, cam, rng, colours=colours, options=opts, board=board, men=Men(kind="counter"))
    moved = np.array(r.truth["corners_px"]) + [2.5, 2.5]  # 3.5 px off, as its residual says
    off = fit_from_corners(moved, "domination")
    off = BoardFit(off.corners_px, off.H_image_to_board, off.H_board_to_image, off.game, off.method,
                   residual_px=3.5)
    reading = read_chess_tops(r.image, off, model)
    phantoms = [c for c in dark if c not in stacks and reading.tops[c] != "."]
    wrong = [(c, stacks.get(c, ".")[-1:] or ".", reading.tops[c]) for c in CELLS
             if reading.tops[c] != (stacks[c][-1] if c in stacks else ".")]
    assert not phantoms, phantoms
    assert len(wrong) <= 1, wrong


def test_white_counters_on_white_printed_squares_by_their_thin_rim() -> None:
    """White counters on a printed board's white squares: colour cannot tell them from the
    square, and a counter's thin rim closes its outline at only 2.5-3 noise units (3 of 991 such
    tops on seeds 3 and 11), where no bare square reached 1.9 once the edges the fit may have
    misplaced say nothing. Measured on these two frames: 1 missed (c4), with the outline needed
    at 3 noise units as before, 3 (d3 twice, c4). With the floor's OpenCV 4.10 drawing the frames
    2 are missed (d3, c4): the bound is 2, which the old threshold's 3 still fails."""
    rng = np.random.default_rng(5)
    board = CHESSBOARDS["print"].replace(corners="paper", seed=5)
    colours = {k: PIECE_COLOURS[k] for k in "KWY"}
    cam = random_camera(rng, "domination")
    opts = RenderOptions.random(rng)
    cells = playable_cells()
    learn = {c: "KWY"[i % 3] for i, c in enumerate(cells)}
    first = render_domination(learn, cam, rng, colours=colours, options=opts, board=board, men=Men(kind="counter"))
    fit = find_chessboard(first.image)
    turns = _turns(fit.corners_px, np.array(first.truth["corners_px"]))
    model = learn_chess_colours(first.image, turn_board(fit, turns), learn)
    light = [c for c in cells if not _dark(c)]
    wrong = []
    for _ in range(2):
        stacks = {c: "".join(rng.choice(list("KWY"), size=int(rng.integers(0, 4)))) + "W"
                  for c in light if rng.random() < 0.7}
        r = render_domination(stacks, cam, rng, colours=colours, options=opts, board=board, men=Men(kind="counter"))
        reading = read_chess_tops(r.image, turn_board(find_chessboard(r.image), turns), model)
        wrong += [(c, stacks[c][-1] if c in stacks else ".", reading.tops[c]) for c in CELLS
                  if reading.tops[c] != (stacks[c][-1] if c in stacks else ".")]
    assert len(wrong) <= 2, wrong



def test_black_chips_under_glare_among_clipped_white_ones() -> None:
    """Black chips under a lamp look grey (their glare up to ~90 grey levels); the white chips
    around them clip, and a clipped top shows no glare: counted as none, they denied the black
    tops beside them theirs, which then read white (seed 3 table 21, seed 11 table 2 of
    `bench_vision_chess.py`). A wood board under seed 3 table 21's light, a quarter of the tops
    black. Measured: none wrong; with the clipped tops in the glare field, 2 black tops read
    white (b4, c5; on three of four such frames tried, 2 each)."""
    cells = playable_cells()
    colours = {k: PIECE_COLOURS[k] for k in "KW"}
    learn = {c: "KW"[i % 2] for i, c in enumerate(cells)}
    rng = np.random.default_rng(0)
    stacks = {c: "".join(rng.choice(list("KW"), size=int(rng.integers(0, 4)))) + ("K" if rng.random() < 0.25 else "W")
              for c in cells}
    cam = look_at_board("domination", tilt_deg=10.0, rotation_deg=10.0)
    opts = RenderOptions.clean(noise_sigma=1.7, blur_sigma_px=0.8, jpeg_quality=95, glare=0.34, ambient=0.94,
                               hot_spot_xy=(0.33, 0.47), hot_spot_strength=0.11, hot_spot_radius=0.28)
    got = _read(CHESSBOARDS["wood"].replace(corners="paper"), Men(kind="chip"), colours, cam, opts, learn, stacks,
                seed=100)
    wrong = [(c, t, r) for c, (t, r) in got.items() if t != r]
    assert not wrong, wrong


def test_a_cream_clipped_where_it_is_brightest_is_not_a_paler_grey() -> None:
    """A cream learnt brighter than the sensor shows (G and R 274 at the board's median light
    level: learnt where the light is a little lower) clips at 255 in G and R where the light is
    full; the glare a paler grey (206, 212, 211) may hold then brought the grey nearer, and the
    cream tops read grey (seed 3 table 24 of `bench_vision_chess.py`, 8 tops). Painted on a
    rendered printed board: cream tops clipped in G and R, grey tops unclipped, with the colours
    as that table learnt them. Measured: none wrong; the distance taking the clipped channels as
    they are read 13 of the 13 cream tops grey."""
    rng = np.random.default_rng(1)
    empty, fit = _empty_board(rng, "print", 8.0, 15.0, noise_sigma=1.5)
    model = {"K": (38.0, 41.0, 45.0), "N": (206.0, 212.0, 211.0), "W": (231.0, 274.0, 273.0)}
    shown = {"W": (242, 255, 255), "N": (200, 206, 205)}
    img = empty.image.copy()
    tops = {}
    for i, cell in enumerate(playable_cells()[::2]):
        tops[cell] = "WN"[i % 2]
        cv2.fillPoly(img, [_disc_px(fit, cell_centre_board(cell), 0.38)], (60, 60, 60), cv2.LINE_AA, 4)  # its rim
        cv2.fillPoly(img, [_disc_px(fit, cell_centre_board(cell), 0.34)], shown[tops[cell]], cv2.LINE_AA, 4)
    img = np.clip(img + rng.normal(0.0, 1.5, img.shape), 0, 255).astype(np.uint8)
    reading = read_chess_tops(img, fit, model)
    wrong = [(c, tops.get(c, "."), reading.tops[c]) for c in CELLS if reading.tops[c] != tops.get(c, ".")]
    assert not wrong, wrong


def test_white_chips_on_white_squares_clipped_by_their_side_band() -> None:
    """White chips on a printed board's white squares under a lamp bright enough to clip both at
    the sensor's white: top and square read alike, and a chip shows only where its side band
    does, between its top's rim and the board on the camera's nadir's side; the other eighths
    of the ring are flat white and the outline closed at 0.7-1.4 noise units (seed 3 table 8 of
    `bench_vision_chess.py`: 3 tops missed on 2 boards). Painted on a rendered printed board whose
    white squares clip: each stack's side a grey disc at the board, its top a white disc where
    the camera puts a top 3 pieces up. Measured: none wrong; without the side band's test every
    white top on a white square read bare (6)."""
    rng = np.random.default_rng(1)
    empty, fit = _empty_board(rng, "print", 12.0, 15.0, noise_sigma=1.5, ambient=1.4)
    h, w = empty.image.shape[:2]
    geo = camera_geometry(fit, (w, h), board_intrinsics(fit, None))
    colours = {"K": (40, 40, 45), "W": (255, 255, 255)}

    def paint(tops: dict[str, str]) -> np.ndarray:
        img = empty.image.copy()
        for cell, letter in tops.items():
            base = np.asarray(cell_centre_board(cell), np.float64)
            top = base + geo.thickness_shift(base[None], 3 * 0.12)[0]
            side = (150, 150, 150) if letter == "W" else (30, 30, 30)
            cv2.fillPoly(img, [_disc_px(fit, base, 0.38)], side, cv2.LINE_AA, 4)
            cv2.fillPoly(img, [_disc_px(fit, top, 0.38)], colours[letter], cv2.LINE_AA, 4)
        return np.clip(img + rng.normal(0.0, 1.5, img.shape), 0, 255).astype(np.uint8)

    learn = {c: "KW"[i % 2] for i, c in enumerate(["c3", "d4", "e3", "f4", "c5", "e5", "d6", "f6"])}
    model = learn_chess_colours(paint(learn), fit, learn)
    light = [c for c in playable_cells() if not _dark(c)]
    dark = [c for c in playable_cells() if _dark(c)]
    tops = {c: "W" for c in light[1::4]}
    tops.update({c: "K" for c in dark[::5]})
    reading = read_chess_tops(paint(tops), fit, model)
    wrong = [(c, tops.get(c, "."), reading.tops[c]) for c in CELLS if reading.tops[c] != tops.get(c, ".")]
    assert not wrong, wrong


def test_black_counters_on_black_squares_leaning_to_their_colour() -> None:
    """Black counters a shade darker than the black printed squares they stand on (6 % darker,
    2.4 grey levels): colour cannot tell them from the square, their outline closes at only
    about 2 noise units, under the 2.5 a closure alone needs, but the centre sits on the
    counters' colour, not the square's (seed 3 table 34, seed 11 table 25 of
    `bench_vision_chess.py`: black tops on black squares closing at 1.8-1.9 whose face leans
    0.8 towards the black learnt). Painted on a rendered printed board, bare black squares
    between them. Measured: none wrong; with the closure needed regardless of the lean, 5 of
    the 9 counters missed."""
    rng = np.random.default_rng(1)
    empty, fit = _empty_board(rng, "print", 8.0, 15.0, noise_sigma=1.5)
    dark = [c for c in playable_cells() if _dark(c)]
    at = np.round(board_to_image(np.array([cell_centre_board(c) for c in dark]), fit)).astype(int)
    square = np.median(empty.image[at[:, 1], at[:, 0]].astype(np.float64), axis=0)
    black = tuple(float(v) for v in 0.94 * square)
    model = {"K": black, "W": (230.0, 232.0, 236.0)}
    tops = {c: "K" for c in dark[::3]}
    img = empty.image.astype(np.float64)
    for cell in tops:
        cv2.fillPoly(img, [_disc_px(fit, cell_centre_board(cell), 0.38)], black, cv2.LINE_AA, 4)
    img = np.clip(img + np.random.default_rng(2).normal(0.0, 1.5, img.shape), 0, 255).astype(np.uint8)
    reading = read_chess_tops(img, fit, model)
    wrong = [(c, tops.get(c, "."), reading.tops[c]) for c in CELLS if reading.tops[c] != tops.get(c, ".")]
    assert not wrong, wrong


def test_no_top_where_a_paper_corner_inside_a_bare_black_square_closes_the_ring() -> None:
    """Paper blocking a cut corner, laid askew, reaches into a bare black square: its edges cross
    the ring on most eighths and closed the outline at 14 noise units (seed 3 table 18 of
    `bench_vision_chess.py`, g7), enough for a piece whatever the colour, though the centre is
    the square's and the black learnt is 0.4 away. A top's side shows on the camera's nadir's
    side of it; paper lying on the far side does not. Painted on a rendered printed board: an L
    of paper over the far two sides of every fourth black square (0.3 squares off the centre),
    black tops (with their sides) on others. Measured: none wrong; without the side band's
    test all 7 papered squares read black."""
    rng = np.random.default_rng(1)
    empty, fit = _empty_board(rng, "print", 12.0, 15.0, noise_sigma=1.5)
    h, w = empty.image.shape[:2]
    geo = camera_geometry(fit, (w, h), board_intrinsics(fit, None))
    model = {"K": (51.0, 51.0, 54.0), "W": (227.0, 235.0, 243.0)}  # the black 0.4 from the squares'
    dark = [c for c in playable_cells() if _dark(c)]
    img = empty.image.copy()
    for cell in dark[1::4]:
        centre = np.asarray(cell_centre_board(cell), np.float64)
        away = np.sign(geo.thickness_shift(centre[None], 0.36)[0])  # a top shifts away from the nadir
        for strip in ([[0.3, -0.5], [0.5, -0.5], [0.5, 0.5], [0.3, 0.5]], [[-0.5, 0.3], [0.5, 0.3], [0.5, 0.5], [-0.5, 0.5]]):
            corners = board_to_image(centre + np.array(strip) * away, fit)
            cv2.fillPoly(img, [np.round(corners * 16).astype(np.int32)], (235, 240, 245), cv2.LINE_AA, 4)
    tops = {c: "K" for c in dark[3::4]}
    for cell in tops:
        base = np.asarray(cell_centre_board(cell), np.float64)
        cv2.fillPoly(img, [_disc_px(fit, base, 0.38)], (25, 25, 28), cv2.LINE_AA, 4)  # its side
        top = base + geo.thickness_shift(base[None], 2 * 0.12)[0]
        cv2.fillPoly(img, [_disc_px(fit, top, 0.38)], model["K"], cv2.LINE_AA, 4)
    img = np.clip(img + np.random.default_rng(2).normal(0.0, 1.5, img.shape), 0, 255).astype(np.uint8)
    reading = read_chess_tops(img, fit, model)
    wrong = [(c, tops.get(c, "."), reading.tops[c]) for c in CELLS if reading.tops[c] != tops.get(c, ".")]
    assert not wrong, wrong


def _bench_table(name: str):  # type: ignore[no-untyped-def]
    """A table of `bench_vision_chess.py` whose reading failed, as the simulator drew it (its
    board, men, colours, camera, light and the two positions: `tests/data/chess_tops_tables.json`)."""
    spec = json.loads((Path(__file__).parent / "data" / "chess_tops_tables.json").read_text())[name]
    opts = RenderOptions(**{k: tuple(v) if isinstance(v, list) else v for k, v in spec["options"].items()})
    colours = {k: tuple(v) for k, v in spec["colours"].items()}
    return (ChessBoard.from_dict(spec["board"]), Men(**spec["men"]), colours, SimCamera.from_dict(spec["camera"]),
            opts, spec["learn"], spec["stacks"])


def test_a_ring_closed_by_the_neighbours_without_a_side_band_is_no_top() -> None:
    """Black counters on a red/black checkers board (their colour learnt 0.28 from the black
    square's, just past `colour_tells`): the bare black square f2 between a five-high stack, an
    edge and spare men closed its ring at 3.2 noise units on six eighths, but not on the three
    facing the nadir (0.6), where a top's side shows; it read as a black top (seed 7 table 2, the
    same scene with fresh sensor noise). Every other cell of the frame stays as it was read."""
    board, men, colours, cam, opts, learn, stacks = _bench_table("bench seed 7 table 2")
    got = _read(board, men, colours, cam, opts, learn, stacks, seed=2)
    assert got["f2"] == (".", "."), got["f2"]
    wrong = [(c, t, r) for c, (t, r) in got.items() if t != r]
    # measured: none (before: f2 read "K")
    assert not wrong, wrong


def test_a_tall_stack_leaning_over_the_outer_edge_by_its_side_band() -> None:
    """A five-high stack of brown counters on a light wooden square of the edge row, seen aslant
    under glare 0.33: its top leans over the table beyond the board's edge, where the ring's
    points are left out (closure 2.0), and its glossy top shows half-way between brown and the
    square's colour, but its side band steps at 7 noise units (bare squares: at most 2.3). It was
    read bare (seed 5 table 2, the same scene with fresh sensor noise)."""
    board, men, colours, cam, opts, learn, stacks = _bench_table("bench seed 5 table 2")
    got = _read(board, men, colours, cam, opts, learn, stacks, seed=2)
    assert got["f1"] == ("N", "N"), got["f1"]
    wrong = [(c, t, r) for c, (t, r) in got.items() if t != r]
    # measured: none (before: f1 read ".")
    assert not wrong, wrong


def test_bare_black_printed_squares_whose_grain_strays_as_far_as_the_black_men() -> None:
    """Black draughts men learnt 0.32 (log BGR) from a printed board's black squares, whose print
    is grainy: a bare black square's centre lies 0.3-0.43 from its own colour (its four samples
    0.42 squares off the centre stray 0.17 from it, the median square's 0.04), as far as a black
    man. Colour alone (no outline: closure 0.5-0.8) read b2, b6 and d8 black (seed 5 table 15, the
    same scene with fresh sensor noise). Every other cell of the frame stays as it was read."""
    board, men, colours, cam, opts, learn, stacks = _bench_table("bench seed 5 table 15")
    got = _read(board, men, colours, cam, opts, learn, stacks, seed=2)
    wrong = [(c, t, r) for c, (t, r) in got.items() if t != r]
    # measured: none (before: b2, b6 and d8 read "K")
    assert not wrong, wrong


def test_black_chips_on_black_squares_whose_colour_was_learnt_under_the_lamp() -> None:
    """Four colours of chips on a red/black checkers board; the black chips' colour was learnt
    from the one black top of the colour frame, under the lamp: 0.53 (log BGR) brighter than the
    black squares, while the frame's black tops away from the lamp are as dark as the squares. A
    black chip on a black square closing its outline at 31 noise units, its centre within 0.25 of
    its square and 0.73 from every piece colour, was vetoed as bare (seed 3 table 22, c1). Here
    the same table with a black chip on top of every black square, fresh sensor noise."""
    board, men, colours, cam, opts, learn, stacks = _bench_table("bench seed 3 table 22")
    stacks = {c: (stacks.get(c, "R")[:-1] + "K")[-2:] if _dark(c) else stacks.get(c, "") for c in playable_cells()}
    got = _read(board, men, colours, cam, opts, learn, {c: s for c, s in stacks.items() if s}, seed=3)
    wrong = [(c, t, r) for c, (t, r) in got.items() if t != r]
    # measured: none (before: c1 read ".")
    assert not wrong, wrong


def test_a_yellow_top_on_white_vinyl_whose_centre_says_yellow_without_its_band() -> None:
    """Yellow and white draughts men on a vinyl board: yellow was learnt 0.22 (log BGR) from the
    white square's colour, under `colour_tells`, so the outline had to say; a two-high yellow
    stack on white f7 closed its ring at 4.3 noise units with its side band at 1.8, under half
    of it (`band_share`), and was read bare, though its centre lay 0.61 from the square's colour
    (19 of the square's grains) and surely nearer yellow (seed 31 table 2, the same scene with
    fresh sensor noise). Every other cell of the frame stays as it was read."""
    board, men, colours, cam, opts, learn, stacks = _bench_table("bench seed 31 table 2")
    got = _read(board, men, colours, cam, opts, learn, stacks, seed=2)
    assert got["f7"] == ("Y", "Y"), got["f7"]
    wrong = [(c, t, r) for c, (t, r) in got.items() if t != r]
    # measured: none (before: f7 read ".")
    assert not wrong, wrong


def test_a_bare_white_printed_square_closed_by_its_neighbours_without_a_side_band() -> None:
    """White and black draughts men on a printed board: white was learnt 0.10 from the white
    squares' colour, and the bare white square g6 among tall stacks closed its ring at 9.7
    noise units (past `outline_sure`) with its side band at 0.4 and its centre the square's
    colour; it read as a white top (seed 31 table 13, the same scene with fresh sensor noise).
    Every other cell of the frame stays as it was read."""
    board, men, colours, cam, opts, learn, stacks = _bench_table("bench seed 31 table 13")
    got = _read(board, men, colours, cam, opts, learn, stacks, seed=2)
    assert got["g6"] == (".", "."), got["g6"]
    wrong = [(c, t, r) for c, (t, r) in got.items() if t != r]
    # measured: none (before: g6 read "W")
    assert not wrong, wrong
