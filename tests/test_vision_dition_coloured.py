"""Discs of a colour of their own (issue 21, real pieces): red draughts men on a roll-up
chessboard's light squares beside black ones, and green, blue and white poker chips on light
yellow wood, soft-edged and noisy, the corners given (as `detect --corners`). Each has a closed
round outline of the disc's size and a face that differs from the board in colour; the reader
before read the black men only (benchmarks/real: checkers_chessdetection, chips_poker_table). A
red circle printed smaller than a disc (a carrom board's base circle) is no disc."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from scipy.spatial import cKDTree

from vision.dition import detect_discs
from vision.geometry import fit_from_corners

PX = 36.0  # pixels per disc diameter
MARGIN_PX = 40
LIGHT_SQUARE = (212, 216, 214)  # BGR: the vinyl's off-white
DARK_SQUARE = (88, 90, 92)  # ... and its grey
WOOD = (150, 205, 228)  # light birch, yellow
RED = (40, 50, 200)
GREEN = (95, 120, 20)
BLUE = (160, 90, 30)
CHIP_WHITE = (232, 226, 224)  # neutral, a little lighter than the wood
BLACK = (32, 32, 34)


def _px(p) -> tuple[int, int]:
    return (round(MARGIN_PX + p[0] * PX), round(MARGIN_PX + p[1] * PX))


def _disc(img: np.ndarray, centre: tuple[float, float], colour: tuple[int, int, int]) -> None:
    c = _px(centre)
    # a soft shadow down-right, the face, a slightly darker rim
    cv2.circle(img, (c[0] + 2, c[1] + 2), round(0.5 * PX), tuple(int(0.7 * v) for v in img[c[1], c[0]]), -1)
    cv2.circle(img, c, round(0.5 * PX), colour, -1)
    cv2.circle(img, c, round(0.5 * PX), tuple(int(0.8 * v) for v in colour), 1)


def _scene(seed: int) -> tuple[np.ndarray, list[tuple[tuple[float, float], str]]]:
    """A 20 x 20 diameter Dition area: a chessboard of 1.4-diameter squares on [2, 13.2]^2 with
    red and black men on light squares, and light wood elsewhere with coloured chips."""
    rng = np.random.default_rng(seed)
    size = round(2 * MARGIN_PX + 20 * PX)
    img = np.full((size, size, 3), WOOD, np.uint8)
    sq = 1.4
    origin = 2.0
    light = []
    for i in range(8):
        for j in range(8):
            x0, y0 = origin + i * sq, origin + j * sq
            is_light = (i + j) % 2 == 0
            cv2.rectangle(img, _px((x0, y0)), _px((x0 + sq, y0 + sq)), LIGHT_SQUARE if is_light else DARK_SQUARE, -1)
            # (men on the inner squares: beyond the chessboard's edge lies the wood, which is
            # not the board the men are read against)
            if is_light and 0 < i < 7 and 0 < j < 7:
                light.append((x0 + sq / 2, y0 + sq / 2))
    # a red circle printed 0.7 diameters wide, in a thin black ring, on the wood (no disc)
    cv2.circle(img, _px((16.0, 3.0)), round(0.35 * PX), RED, -1)
    cv2.circle(img, _px((16.0, 3.0)), round(0.42 * PX), (30, 30, 30), 1)
    discs: list[tuple[tuple[float, float], str]] = []
    for k in rng.choice(len(light), size=14, replace=False):
        colour = "red" if len(discs) % 2 == 0 else "black"
        centre = (float(light[k][0] + rng.uniform(-0.1, 0.1)), float(light[k][1] + rng.uniform(-0.1, 0.1)))
        _disc(img, centre, RED if colour == "red" else BLACK)
        discs.append((centre, colour))
    # chips on the wood, on a grid 1.6 diameters apart beyond the chessboard
    spots = [(x, y) for x in (15.0, 16.6, 18.2) for y in (6.0, 7.6, 9.2, 10.8, 12.4, 14.0, 15.6, 17.2)]
    spots += [(x, 16.6) for x in (3.0, 4.6, 6.2, 7.8, 9.4, 11.0)]
    for k in rng.choice(len(spots), size=12, replace=False):
        colour = ("green", "blue", "white")[len(discs) % 3]
        centre = (float(spots[k][0] + rng.uniform(-0.1, 0.1)), float(spots[k][1] + rng.uniform(-0.1, 0.1)))
        _disc(img, centre, {"green": GREEN, "blue": BLUE, "white": CHIP_WHITE}[colour])
        discs.append((centre, colour))
    img = cv2.GaussianBlur(img, (0, 0), 1.5)
    noisy = img.astype(np.float32) + rng.normal(0.0, 2.0, img.shape).astype(np.float32)
    return np.clip(noisy, 0, 255).astype(np.uint8), discs


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_discs_of_any_colour_are_read_and_print_is_not(seed: int) -> None:
    frame, discs = _scene(seed)
    corners = np.array([_px((0, 0)), _px((20, 0)), _px((20, 20)), _px((0, 20))], np.float64)
    found = detect_discs(frame, fit_from_corners(corners, "dition"))
    truth = np.array([c for c, _ in discs])
    d, j = cKDTree(truth).query(np.array([r.centre_board for r in found]).reshape(-1, 2))
    phantoms = [tuple(round(v, 2) for v in r.centre_board) for r, dd in zip(found, d) if dd > 0.3]
    assert not phantoms, f"readings where no disc lies: {phantoms}"
    missed = [discs[k] for k in sorted(set(range(len(discs))) - set(j.tolist()))]
    assert not missed, f"missed: {missed}"
    assert len(found) == len(discs), "a disc was read twice"
    # (a piece of a third colour reads as the darker or the lighter player's colour by its face's
    # brightness against the board beside it: red men on off-white squares, green and blue chips
    # on light wood are darker; the white chips lighter)
    expected = {"red": "black", "black": "black", "green": "black", "blue": "black", "white": "white"}
    for r, jj in zip(found, j):
        assert r.colour == expected[discs[jj][1]], f"{discs[jj][1]} disc at {discs[jj][0]} read {r.colour}"
    assert float(np.median(d)) < 0.05, f"centres off by {np.median(d):.3f} diameters (median)"
