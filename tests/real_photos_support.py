"""The real photos of `benchmarks/real` for the Dition reader's tests, loaded as
`benchmarks/bench_real_photos.py` loads them (the images are fetched by
`benchmarks/real/fetch_images.py`; a clean clone has none: the test skips, saying so)."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from vision.geometry import BoardFit, apply_homography, fit_from_corners

BENCH = Path(__file__).resolve().parent.parent / "benchmarks"


@dataclass(frozen=True)
class RealPhoto:
    """One labelled photo: the image (BGR, scaled as the benchmark scales it), the board fitted
    at the corners the benchmark gives the reader, and its label (`discs`: centre_px, colour)."""

    image: np.ndarray
    fit: BoardFit
    label: dict[str, Any]
    H_image_to_board: np.ndarray
    scale: float

    def to_board(self, points_px: Any) -> np.ndarray:
        """Label pixel coordinates (N, 2), as stored, in board units."""
        return apply_homography(self.H_image_to_board, np.asarray(points_px, np.float64).reshape(-1, 2) * self.scale)

    def labels_board(self, colour: str | None = None) -> np.ndarray:
        """The labelled discs' centres (N, 2) in board units (those of `colour`, if given)."""
        pts = [d["centre_px"] for d in self.label["discs"] if colour is None or d["colour"] == colour]
        return self.to_board(pts) if pts else np.zeros((0, 2))


def dition_photos(set_name: str, *names: str) -> list[RealPhoto]:
    """The photos of the Dition label set `set_name` (those `names`, if given); skips the calling
    test when one is not on disk."""
    sys.path[:0] = [str(BENCH), str(BENCH / "real")]
    try:
        from bench_real_photos import board_corners, load_image
        from fetch_images import image_path, label_sets
    finally:
        del sys.path[:2]
    (labels,) = [s for s in label_sets("dition") if s["set"] == set_name]
    images = [im for im in labels["images"] if not names or im["name"] in names]
    if not all(image_path(labels, im).exists() for im in images):
        pytest.skip(f"the real photos of {set_name} are not on disk: run benchmarks/real/fetch_images.py")
    out = []
    for im in images:
        img, k = load_image(labels, im)
        corners, _area, H = board_corners(im, k)
        out.append(RealPhoto(img, fit_from_corners(corners, "dition"), im, H, k))
    return out
