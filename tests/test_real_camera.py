"""Opt-in: a real camera delivers frames (REFEREE_REAL_CAMERA=1, spec in REFEREE_CAMERA_SPEC)."""

from __future__ import annotations

import os

import numpy as np
import pytest

pytestmark = [
    pytest.mark.hardware,
    pytest.mark.skipif(os.environ.get("REFEREE_REAL_CAMERA") != "1",
                       reason="needs a real camera: set REFEREE_REAL_CAMERA=1 "
                       "(and REFEREE_CAMERA_SPEC, default picamera2)"),
]


def test_real_camera_delivers_bgr_frames() -> None:
    import hardware

    spec = os.environ.get("REFEREE_CAMERA_SPEC", "picamera2")
    with hardware.open_source(spec) as source:
        frames = [source.read() for _ in range(3)]
    for frame in frames:
        assert frame.image.dtype == np.uint8 and frame.image.ndim == 3 and frame.image.shape[2] == 3
    assert frames[0].timestamp_s < frames[-1].timestamp_s
