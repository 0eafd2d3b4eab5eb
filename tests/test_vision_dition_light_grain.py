"""A lighter streak of wood grain is no white disc: on the poker table's light wood
(benchmarks/real/README.md, set `chips_poker_table`, photo `train_14`) the colour pass closed a
round outline around a patch of the wood a little paler and lighter than the wood beyond it, 4.6
noise sigmas off its colour and 8 grey levels lighter, and read it as a white disc. A face with no
chroma of its own is a light disc only by its lightness: lighter than the board beyond its rim by
the least contrast that counts (`min_face_contrast`, `face_snr` noise sigmas)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from drawn_wood_support import MARGIN_PX, grained_wood
from real_photos_support import dition_photos
from scipy.spatial import cKDTree

from vision.dition import detect_discs
from vision.geometry import fit_from_corners

PX = 18.0  # pixels per disc diameter


def _px(p) -> tuple[float, float]:
    return (MARGIN_PX + p[0] * PX, MARGIN_PX + p[1] * PX)


def _scene(seed: int, paler: float, lighter: float) -> tuple[np.ndarray, tuple[float, float]]:
    """Wood with a soft grain and one disc-sized patch with a soft edge, `paler` of the way to
    the wood's grey and `lighter` grey levels lighter; the patch's centre (board units)."""
    rng = np.random.default_rng(seed)
    img, xx, yy, size = grained_wood(PX)
    centre = (float(10.0 + rng.uniform(-0.3, 0.3)), float(10.0 + rng.uniform(-0.3, 0.3)))
    r = np.hypot(xx - (MARGIN_PX / PX + centre[0]), yy - (MARGIN_PX / PX + centre[1]))
    w = np.clip((0.5 - r) / 0.1 + 0.5, 0.0, 1.0)[..., None]
    grey = img.mean(axis=2, keepdims=True)
    patch = img + (grey - img) * paler + lighter
    img = img * (1.0 - w) + patch * w
    img = cv2.resize(img, (size, size), interpolation=cv2.INTER_AREA)
    img = cv2.GaussianBlur(img, (0, 0), 0.7)
    img += rng.normal(0.0, 1.0, img.shape).astype(np.float32)
    return np.clip(img, 0, 255).astype(np.uint8), centre


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("paler, lighter", [(0.1, 4.0), (0.1, 8.0), (0.15, 4.0)])
def test_a_paler_patch_of_wood_is_no_disc(seed: int, paler: float, lighter: float) -> None:
    """(Each read as a white disc before.)"""
    frame, centre = _scene(seed, paler, lighter)
    corners = np.array([_px((0, 0)), _px((20, 0)), _px((20, 20)), _px((0, 20))], np.float64)
    found = detect_discs(frame, fit_from_corners(corners, "dition"))
    on_patch = [(tuple(round(v, 2) for v in r.centre_board), r.colour) for r in found
                if np.hypot(*(np.array(r.centre_board) - centre)) < 0.5]
    assert not on_patch, f"the patch at {centre} read as a disc: {on_patch}"


def test_the_light_wood_on_the_real_poker_table() -> None:
    """The poker table photo `train_14` (image fetched by `benchmarks/real/fetch_images.py`; not
    in a clean clone), read as `benchmarks/bench_real_photos.py` reads it: bare wood above the
    chips, about (1013, 158) px, was read as a white disc; the 9 chips (one white) are still read."""
    (photo,) = dition_photos("chips_poker_table", "train_14")
    readings = detect_discs(photo.image, photo.fit)
    got = np.array([r.centre_board for r in readings]).reshape(-1, 2)
    labels = photo.labels_board()
    far = cKDTree(labels).query(got)[0] >= 0.5 if len(got) else np.zeros(0, bool)
    assert not far.any(), f"read where no chip lies: {got[far].round(2).tolist()}"
    found = int((cKDTree(got).query(labels)[0] < 0.5).sum()) if len(got) else 0
    assert found == len(labels), f"{found} of the {len(labels)} chips read"
