"""vision.chess_heights: stack heights of men on a chessboard through a camera model, on the
simulated table's ground truth (issue 19): with the camera model and from the uncalibrated
frame (the camera the chessboard finder estimated from the board's own grid)."""

from __future__ import annotations

import numpy as np
import pytest

from hardware.sim import RenderOptions, random_camera, render_domination
from hardware.sim.layout import playable_cells
from hardware.sim.men import random_chess_table
from vision.board import find_board
from vision.camera import Intrinsics
from vision.chess_heights import stack_heights
from vision.chessboard import turn_board


def _frames() -> list[tuple[object, dict[str, str], Intrinsics, np.ndarray]]:
    return [f[:4] for f in _scenes()]


def _scenes() -> list[tuple]:
    out = []
    for seed in (31, 32, 33):
        rng = np.random.default_rng(seed)
        board, men, colours = random_chess_table(rng)
        cam = random_camera(rng, "domination")
        letters = list(colours)
        stacks = {c: "".join(rng.choice(letters, size=int(rng.integers(1, 6))))
                  for c in playable_cells() if rng.random() < 0.6}
        r = render_domination(stacks, cam, rng, colours=colours, options=RenderOptions.random(rng),
                              board=board, men=men)
        out.append((r, stacks, Intrinsics(cam.camera_matrix, cam.dist_coeffs, cam.image_size),
                    np.asarray(r.truth["corners_px"], np.float64), cam, men))
    return out


@pytest.fixture(scope="module")
def scenes() -> list[tuple]:
    return _scenes()


@pytest.fixture(scope="module")
def frames(scenes: list[tuple]) -> list[tuple[object, dict[str, str], Intrinsics, np.ndarray]]:
    return [f[:4] for f in scenes]


def test_top_circles_found_where_the_camera_puts_them(scenes: list[tuple]) -> None:
    """The top face's circle in the board plane, against the truth: the top man's position
    (with its placement jitter) carried out from the camera's nadir by s = Z / (Z - k t), radius
    the men's radius times s. A circle through the outline of top and side band together (or a
    ring inside the rim) is 0.02-0.1 squares off; one man's height moves a top 3 squares from
    the nadir by ~0.035 and its radius by ~0.005. The circle most rim points agree with brings
    the radius's median error under 0.008 squares (0.0109 with a least-squares fit that drops
    points three sigmas off)."""
    centre_err, radius_err = [], []
    for r, stacks, intr, corners, cam, men in scenes:
        fit = _a8_turned(find_board(r.image, game="domination", intrinsics=intr), corners, intr)
        got = stack_heights(r.image, fit, sorted(stacks), intrinsics=intr, thickness=0.12)
        assert got is not None
        _append_top_errors(r, cam, men, stacks, got, centre_err, radius_err)
    c, e = np.asarray(centre_err), np.abs(np.asarray(radius_err))
    assert c.size >= 80
    assert np.mean(c < 0.02) >= 0.8, np.mean(c < 0.02)
    assert float(np.median(e)) < 0.008, float(np.median(e))


def _top_radius_errors(seeds: tuple[int, ...], men: object, colours: dict[str, tuple[int, int, int]],
                       options: RenderOptions) -> np.ndarray:
    """|measured - true| top radius (squares) of every stack on random chessboard scenes of
    `men` in `colours`, known corners and camera: the truth is the top man's radius times
    s = Z / (Z - k t) (k men of thickness t under a camera Z above the board)."""
    from hardware.sim.chessboard import ChessBoard
    from vision.geometry import fit_from_corners

    err = []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        cam = random_camera(rng, "domination")
        stacks = {c: "".join(rng.choice(list(colours), size=int(rng.integers(1, 6))))
                  for c in playable_cells() if rng.random() < 0.5}
        r = render_domination(stacks, cam, rng, colours=colours, options=options, board=ChessBoard(),
                              men=men)
        intr = Intrinsics(cam.camera_matrix, cam.dist_coeffs, cam.image_size)
        fit = fit_from_corners(np.asarray(r.truth["corners_px"], np.float64), "domination", intr)
        got = stack_heights(r.image, fit, sorted(stacks), intrinsics=intr, thickness=0.12)
        assert got is not None
        Z = -float(cam.centre_world[2])
        for cell, stack in stacks.items():
            s = Z / (Z - len(stack) * 0.12)
            err.append(got.top_radius_board.get(cell, np.nan) - men.diameter / 2 * s)  # type: ignore[attr-defined]
    return np.abs(np.asarray(err))


def test_a_chips_rim_is_its_edge_not_its_printed_ring() -> None:
    """White and yellow poker chips with dark stripes on a wooden board's dark squares: the
    chip's printed ring (0.7 of its radius, as dark as the square) is nearer the square's colour
    than the top's, and was read as the rim on most chips (radius 0.13 squares short); the
    board is now where the profile stays the square's colour for 0.05 squares, and the circle
    is the one most rim points agree with (a dark stripe at the rim puts a few points 0.08
    inside). Against the truth (the top man's radius times s = Z / (Z - k t))."""
    from hardware.sim.men import PIECE_COLOURS, Men

    men = Men(kind="chip", stripe_bgr=(40, 40, 44), diameter=0.8, jitter=0.02)
    e = _top_radius_errors((41, 42, 43), men, {"W": PIECE_COLOURS["W"], "Y": PIECE_COLOURS["Y"]},
                           RenderOptions())
    assert e.size >= 60
    # one man's height moves the radius by ~0.005
    assert float(np.nanmedian(e)) < 0.006, float(np.nanmedian(e))
    assert np.mean(e < 0.01) >= 0.7, np.mean(e < 0.01)


def test_a_mans_rim_under_a_shadow_is_its_edge() -> None:
    """Black and white draughts men on a wooden board under a strong soft shadow (0.7): the
    board beside a man is darker than the squares' own colour, and the crossing between the
    top's colour and the square's moved out with it (median radius error 0.0032 squares, 61 %
    of the tops under 0.005, one man's height; 67 % of the heights exact); the rim is now the
    steepest colour change near where the board begins, which a shadow does not move. Against
    the truth (the top man's radius times s = Z / (Z - k t)), known corners and camera."""
    from hardware.sim.men import PIECE_COLOURS, Men

    men = Men(kind="draughts", diameter=0.8, jitter=0.02)
    e = _top_radius_errors((51, 52, 53), men, {"W": PIECE_COLOURS["W"], "B": PIECE_COLOURS["B"]},
                           RenderOptions(shadow=0.7))
    assert e.size >= 60
    # one man's height moves the radius by ~0.005
    assert float(np.nanmedian(e)) < 0.0027, float(np.nanmedian(e))
    assert np.mean(e < 0.005) >= 0.7, np.mean(e < 0.005)


def _a8_turned(fit: object, corners_px: np.ndarray, intr: Intrinsics | None) -> object:
    errs = [float(np.linalg.norm(np.roll(fit.corners_px, -k, axis=0) - corners_px, axis=1).max())  # type: ignore[attr-defined]
            for k in range(4)]
    return turn_board(fit, int(np.argmin(errs)), intr)  # type: ignore[arg-type]


@pytest.mark.parametrize("with_tops", [False, True])
@pytest.mark.parametrize("calibrated", [True, False])
def test_heights_of_men_on_a_chessboard_with_honest_sigmas(frames: list, calibrated: bool, with_tops: bool) -> None:
    """Measured, not yet good: see the README's Figures for the benchmark's (the kit reader's
    96 % is the target); what is claimed must hold: on these frames 72 / 60 % exact with the
    camera model / without (73 / 58 % with the tops' colours given, as the referee gives them;
    the lowest of OpenCV 4.10 + numpy 1.26 and the current versions), 56-58 % without before the
    impossible rims were sought again (73 / 58 % before the focal factor was fitted with the
    groups' radii; 67 / 48 % with the least-squares rims of before, which also put 7 % more than
    a piece off), 95 % within one piece, and each height's sigma as wide as its error (a
    Gaussian's median |z| is 0.67; with the rims re-sought but the radius's sigma left to the
    disagreements alone 1.54 on the floor versions)."""
    err, z = [], []
    for r, stacks, intr, corners in frames:
        k = intr if calibrated else None
        fit = _a8_turned(find_board(r.image, game="domination", intrinsics=k), corners, k)
        tops = {c: s[-1] for c, s in stacks.items()} if with_tops else None
        got = stack_heights(r.image, fit, sorted(stacks), intrinsics=k, thickness=0.12, tops=tops)
        assert got is not None
        for cell, stack in stacks.items():
            if cell in got.heights:
                err.append(got.heights[cell] - len(stack))
                z.append((got.estimate[cell] - len(stack)) / got.sigma[cell])
    e = np.asarray(err)
    assert e.size >= 60
    assert np.mean(e == 0) >= (0.72 if calibrated else 0.57), np.mean(e == 0)
    assert np.mean(np.abs(e) <= 1) >= 0.95, np.mean(np.abs(e) <= 1)
    assert 0.35 <= float(np.median(np.abs(z))) <= 1.3, float(np.median(np.abs(z)))


def test_no_camera_model_no_heights(frames: list) -> None:
    r, stacks, _, corners = frames[0]
    from vision.geometry import fit_from_corners

    assert stack_heights(r.image, fit_from_corners(corners, "domination"), sorted(stacks)) is None
    with pytest.raises(ValueError, match="thickness"):
        stack_heights(r.image, fit_from_corners(corners, "domination"), sorted(stacks), thickness=0.0)


def test_the_referee_reads_men_heights_on_a_chessboard(scenes: list[tuple]) -> None:
    """The Domination game's reader gives chessboard stacks heights with sigmas (they settle
    ambiguity as the kit's do), from the uncalibrated frame: against the truth, most within
    one piece and the errors as wide as the sigmas say."""
    from referee.games.registry import get_game
    from vision.chess_tops import learn_chess_colours

    err, z = [], []
    for r, stacks, _, corners, _, _ in scenes:
        fit = _a8_turned(find_board(r.image, game="domination"), corners, None)
        model = learn_chess_colours(r.image, fit, {c: s[-1] for c, s in stacks.items()})
        reading = get_game("domination").read(r.image, fit, colours=model)
        assert reading.heights is not None and reading.height_sigma is not None
        assert set(reading.heights) == {c for c, t in reading.tops.items() if t != "."}
        for cell, h in reading.heights.items():
            if cell in stacks:
                err.append(h - len(stacks[cell]))
                z.append(err[-1] / reading.height_sigma[cell])
    e = np.asarray(err)
    assert e.size >= 80
    assert np.mean(np.abs(e) <= 1) >= 0.8, np.mean(np.abs(e) <= 1)
    assert float(np.median(np.abs(z))) <= 1.3, float(np.median(np.abs(z)))


def _top_errors(seeds: tuple[int, ...], men: object, colours: dict[str, tuple[int, int, int]]
                ) -> tuple[np.ndarray, np.ndarray]:
    """Per stack on random chessboard scenes of `men` (known corners and camera): the found
    top centre's distance from the truth and the radius error (squares), the truth the top
    man's position carried out from the nadir by s = Z / (Z - k t), radius the men's times s."""
    from hardware.sim.chessboard import ChessBoard
    from vision.geometry import fit_from_corners

    centre_err, radius_err = [], []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        cam = random_camera(rng, "domination")
        stacks = {c: "".join(rng.choice(list(colours), size=int(rng.integers(1, 6))))
                  for c in playable_cells() if rng.random() < 0.5}
        r = render_domination(stacks, cam, rng, colours=colours, options=RenderOptions(), board=ChessBoard(),
                              men=men)
        intr = Intrinsics(cam.camera_matrix, cam.dist_coeffs, cam.image_size)
        fit = fit_from_corners(np.asarray(r.truth["corners_px"], np.float64), "domination", intr)
        got = stack_heights(r.image, fit, sorted(stacks), intrinsics=intr, thickness=0.12)
        assert got is not None
        _append_top_errors(r, cam, men, stacks, got, centre_err, radius_err)
    return np.asarray(centre_err), np.asarray(radius_err)


@pytest.mark.parametrize(("kind", "stripe", "letters", "spread_max"),
                         [("draughts", (232, 234, 236), "WK", 0.002), ("chip", (40, 40, 44), "WY", 0.001)])
def test_a_tops_centre_from_its_rings(kind: str, stripe: tuple[int, int, int], letters: str,
                                      spread_max: float) -> None:
    """A draughts man's embossed rings and a chip's printed ring are circles about the top's
    centre, seen all around (the rim only on the far side: the side band hides the near one);
    the centre they give is within ~0.02 px of the truth where the far side's rim put it
    0.2-0.3 px off, and that rim's radius moved with it (a half circle ties the two). Against
    the truth, known corners and camera: centre median error 0.0002 squares (the rim's circle
    0.0028 draughts, 0.0022 chips); the radius's median distance from its median 0.0017 /
    0.0006 squares (the rim's circle 0.0024 / 0.0014; one piece is ~0.005)."""
    from hardware.sim.men import PIECE_COLOURS, Men

    men = Men(kind=kind, diameter=0.8, jitter=0.02, stripe_bgr=stripe)  # type: ignore[arg-type]
    centre, radius = _top_errors((61, 62), men, {k: PIECE_COLOURS[k] for k in letters})
    assert centre.size >= 30
    assert float(np.median(centre)) < 0.001, float(np.median(centre))
    spread = float(np.median(np.abs(radius - np.median(radius))))
    assert spread < spread_max, spread


def _append_top_errors(r, cam, men, stacks, got, centre_err: list, radius_err: list) -> None:
    """Each read top's centre and radius error against the truth (board units), appended: the
    truth's top seen from the camera's nadir, scaled by the stack's height (men 0.12 thick)."""
    nadir, Z = np.asarray(cam.centre_world[:2], np.float64), -float(cam.centre_world[2])
    for cell, stack in stacks.items():
        if cell not in got.top_centre_board:
            continue
        s = Z / (Z - len(stack) * 0.12)
        top = nadir + (np.asarray(r.truth["tops_board"][cell], np.float64)[:2] - nadir) * s
        centre_err.append(float(np.linalg.norm(np.asarray(got.top_centre_board[cell]) - top)))
        radius_err.append(got.top_radius_board[cell] - men.diameter / 2 * s)
