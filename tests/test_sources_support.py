"""Frames rendered from known ground truth, and a measurement to compare against it.

Frame i shows a bright disc on a dark-blue plate at a position that depends on i; `disc_centre_px`
is the ground truth and `measure_disc` finds it again (centroid of the bright pixels). After JPEG
or MJPG compression the centroid stays within a fraction of a pixel.
"""

from __future__ import annotations

import cv2
import numpy as np

SIZE = (320, 240)  # (w, h)
PLATE_BGR = (120, 40, 20)  # dark blue
DISC_BGR = (235, 235, 235)
RADIUS_PX = 14
#: centroid of a compressed disc, against the drawn centre
CENTRE_TOLERANCE_PX = 0.75


def disc_centre_px(index: int, size: tuple[int, int] = SIZE) -> tuple[float, float]:
    width, height = size
    span_x = width - 4 * RADIUS_PX
    return (2 * RADIUS_PX + (index * 23) % span_x, height / 2 + 40 * np.sin(index * 0.7))


def render_frame(index: int, size: tuple[int, int] = SIZE) -> np.ndarray:
    """BGR uint8 frame with the disc of frame `index`, drawn anti-aliased with sub-pixel centre."""
    width, height = size
    image = np.zeros((height, width, 3), np.uint8)
    image[:] = PLATE_BGR
    cx, cy = disc_centre_px(index, size)
    shift = 4
    cv2.circle(image, (round(cx * 16), round(cy * 16)), RADIUS_PX * 16, DISC_BGR, -1,
               cv2.LINE_AA, shift)
    return image


def measure_disc(image: np.ndarray) -> tuple[float, float]:
    """Centroid of the disc, weighting each pixel by how far it is from plate to disc brightness."""
    gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY).astype(np.float64)
    plate = float(cv2.cvtColor(np.uint8([[PLATE_BGR]]), cv2.COLOR_BGR2GRAY)[0, 0])
    disc = float(cv2.cvtColor(np.uint8([[DISC_BGR]]), cv2.COLOR_BGR2GRAY)[0, 0])
    weight = np.clip((gray - plate) / (disc - plate), 0.0, 1.0)
    weight[weight < 0.1] = 0.0  # compression ringing on the plate
    total = weight.sum()
    assert total > 0, "no disc in the frame"
    ys, xs = np.indices(weight.shape)
    return float((xs * weight).sum() / total), float((ys * weight).sum() / total)


def frame_index_of(image: np.ndarray, candidates: range) -> int:
    """Which frame index this image shows (the one whose disc centre is closest)."""
    measured = np.array(measure_disc(image))
    distances = [np.hypot(*(measured - np.array(disc_centre_px(i, (image.shape[1],
                                                                 image.shape[0])))))
                 for i in candidates]
    best = int(np.argmin(distances))
    assert distances[best] < 2.0, f"frame matches no index (nearest {distances[best]:.2f} px)"
    return candidates[best]


def write_avi(path: object, count: int, fps: float = 10.0, size: tuple[int, int] = SIZE) -> None:
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), fps, size)
    assert writer.isOpened()
    for i in range(count):
        writer.write(render_frame(i, size))
    writer.release()


def test_measurement_finds_the_drawn_disc() -> None:
    """The yardstick itself: exact on a lossless frame, within tolerance after JPEG."""
    for i in (0, 5, 17):
        frame = render_frame(i)
        assert np.hypot(*np.subtract(measure_disc(frame), disc_centre_px(i))) < 0.3
        _, jpeg = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, 80])
        decoded = cv2.imdecode(jpeg, cv2.IMREAD_COLOR)
        assert np.hypot(*np.subtract(measure_disc(decoded), disc_centre_px(i))) < \
            CENTRE_TOLERANCE_PX
