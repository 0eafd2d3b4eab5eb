"""Frames of the varied simulated table's benchmark (`benchmarks/bench_vision_variety.py`), for
the tests that pin the reader's behaviour on one of them."""

from __future__ import annotations

import numpy as np

from hardware.sim import RenderOptions, random_camera, random_discs
from hardware.sim.variety import Variety, render_varied
from vision.board import find_board
from vision.camera import Intrinsics
from vision.dition import DiscParams, detect_discs


def bench_frame(seed: int, frame: int, variety: Variety, params: DiscParams | None = None, *, lamp: bool = True):
    """Frame `frame` of the benchmark's `seed` (its draws, in its order), read with the board's
    corners and the intrinsics given (and `params`: the Othello row's stated thickness): the
    discs and the readings. `lamp=False`: the glare and lamp choices as rendered before the
    lamp was a lamp (`Variety.options`), the frames the tests of those days describe."""
    rng = np.random.default_rng(seed)
    for _ in range(frame + 1):
        discs = random_discs(rng, int(rng.integers(10, 151)), touching_fraction=0.33, colours="random")
        opts = RenderOptions.random(rng)
        cam = random_camera(rng, "dition", distortion=True)
    r = render_varied(discs, cam, np.random.default_rng([seed, frame]), variety, opts, lamp=lamp)
    k = Intrinsics(cam.camera_matrix, cam.dist_coeffs, cam.image_size)
    fit = find_board(r.image, corners_px=np.array(r.truth["corners_px"]), intrinsics=k)
    return discs, detect_discs(r.image, fit, params or DiscParams(), intrinsics=k)
