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
                    np.asarray(r.truth["corners_px"], np.float64)))
    return out


@pytest.fixture(scope="module")
def frames() -> list[tuple[object, dict[str, str], Intrinsics, np.ndarray]]:
    return _frames()


def _a8_turned(fit: object, corners_px: np.ndarray, intr: Intrinsics | None) -> object:
    errs = [float(np.linalg.norm(np.roll(fit.corners_px, -k, axis=0) - corners_px, axis=1).max())  # type: ignore[attr-defined]
            for k in range(4)]
    return turn_board(fit, int(np.argmin(errs)), intr)  # type: ignore[arg-type]


@pytest.mark.parametrize("calibrated", [True, False])
def test_heights_of_men_on_a_chessboard_with_honest_sigmas(frames: list, calibrated: bool) -> None:
    """Measured, not yet good: the benchmark's figures are ~60 % exact with the camera model and
    ~50 % without (the kit reader's 96 % is the target); what is claimed must hold: most within
    one piece, and each height's sigma as wide as its error (a Gaussian's median |z| is 0.67)."""
    err, z = [], []
    for r, stacks, intr, corners in frames:
        k = intr if calibrated else None
        fit = _a8_turned(find_board(r.image, game="domination", intrinsics=k), corners, k)
        got = stack_heights(r.image, fit, sorted(stacks), intrinsics=k, thickness=0.12)
        assert got is not None
        for cell, stack in stacks.items():
            if cell in got.heights:
                err.append(got.heights[cell] - len(stack))
                z.append((got.estimate[cell] - len(stack)) / got.sigma[cell])
    e = np.asarray(err)
    assert e.size >= 60
    assert np.mean(e == 0) >= (0.45 if calibrated else 0.35), np.mean(e == 0)
    assert np.mean(np.abs(e) <= 1) >= 0.8, np.mean(np.abs(e) <= 1)
    assert 0.35 <= float(np.median(np.abs(z))) <= 1.3, float(np.median(np.abs(z)))


def test_no_camera_model_no_heights(frames: list) -> None:
    r, stacks, _, corners = frames[0]
    from vision.geometry import fit_from_corners

    assert stack_heights(r.image, fit_from_corners(corners, "domination"), sorted(stacks)) is None
    with pytest.raises(ValueError, match="thickness"):
        stack_heights(r.image, fit_from_corners(corners, "domination"), sorted(stacks), thickness=0.0)
