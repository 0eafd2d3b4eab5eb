"""A light wooden board drawn for the Dition reader's tests of real-table cases (cream coins of
the wood's tint, a pale patch of its grain, a carrom striker): the board 20 disc diameters wide
with a margin, drawn at `UP` times the scale (the callers average it down: a camera's pixels)."""

from __future__ import annotations

import numpy as np

MARGIN_PX = 20
UP = 4  # drawn at this many times the scale, then averaged down (a camera's pixels)
WOOD = np.array((80, 145, 200), np.float32)  # BGR: plywood or light wood under a warm light


def grained_wood(px_per_d: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """(image (S*UP, S*UP, 3) float32 BGR, xx, yy (S*UP, S*UP) the drawn pixels' position in disc
    diameters from the frame's corner, S the frame's side in pixels) of the wood with a soft
    grain along x, `px_per_d` pixels a diameter."""
    size = round(2 * MARGIN_PX + 20 * px_per_d)
    big = size * UP
    yy, xx = np.mgrid[0:big, 0:big].astype(np.float32) / (px_per_d * UP)
    grain = 4.0 * np.sin(2 * np.pi * (yy * 3.1 + 0.3 * np.sin(xx * 0.7))) + 2.0 * np.sin(2 * np.pi * yy * 7.3)
    img = WOOD[None, None, :] + grain[..., None] * np.array((0.6, 0.9, 1.0), np.float32)
    return img, xx, yy, size
