"""Camera intrinsics from simulated photos of the printed ChArUco target (truth from the sim)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from calibration.errors import TargetNotFoundError, TooFewViewsError, ViewsTooSimilarError
from calibration.intrinsics import IntrinsicsParams, calibrate_camera, detect_target
from calibration.target import CharucoSpec, target_texture
from hardware.sim.camera import SimCamera, camera_for_target
from hardware.sim.options import RenderOptions
from hardware.sim.render import render_planar_target
from vision.camera import undistort_iterated

IMAGE_SIZE = (1640, 1232)
QUIET_MM = 10.0
#: a Pi-camera-like lens, fixed for the whole series (barrel distortion, small decentring)
LENS = np.array([-0.11, 0.06, 0.0012, -0.0009, 0.0])
SPEC = CharucoSpec()


def _target() -> tuple[np.ndarray, tuple[float, float]]:
    tw, th = SPEC.size_mm
    return target_texture(SPEC, 4.0, QUIET_MM), (tw + 2 * QUIET_MM, th + 2 * QUIET_MM)


def _views(rng: np.random.Generator, n: int, *, max_tilt_deg: float = 40.0,
           focal_px: float | None = None) -> tuple[list[np.ndarray], list[SimCamera]]:
    texture, size = _target()
    images, cams = [], []
    for _ in range(n):
        cam = camera_for_target(rng, size, IMAGE_SIZE, max_tilt_deg=max_tilt_deg,
                                distortion=LENS, focal_px=focal_px, fill=(0.6, 0.95))
        images.append(render_planar_target(texture, size, cam, rng,
                                           options=RenderOptions.random(rng, supersample=2),
                                           table=False))
        cams.append(cam)
    return images, cams


@pytest.fixture(scope="module")
def series() -> tuple[list[np.ndarray], list[SimCamera]]:
    return _views(np.random.default_rng(9), 12)


def test_twelve_views_recover_focal_length_and_centre(series) -> None:
    images, cams = series
    truth = cams[0].camera_matrix
    result = calibrate_camera(images, SPEC)
    k = result.intrinsics.camera_matrix
    w, h = IMAGE_SIZE
    assert result.views_used == 12 and result.distinct_poses == 12
    assert k[0, 0] == pytest.approx(truth[0, 0], rel=0.01)
    assert k[1, 1] == pytest.approx(truth[1, 1], rel=0.01)
    assert abs(k[0, 2] - truth[0, 2]) < 0.01 * w
    assert abs(k[1, 2] - truth[1, 2]) < 0.01 * h
    assert result.intrinsics.image_size == IMAGE_SIZE
    assert result.rms_px < 0.5


def test_recovered_lens_undistorts_like_the_true_one(series) -> None:
    """Distortion checked where it matters: pixels all over the image, undistorted with the true
    and with the calibrated lens, lie on the same straight-line geometry (equal up to a
    homography, which absorbs the small focal length and centre differences checked above)."""
    import cv2

    images, cams = series
    result = calibrate_camera(images, SPEC)
    w, h = IMAGE_SIZE
    # the views cover the image up to a few percent from its edges (camera_for_target's margin)
    xs, ys = np.meshgrid(np.linspace(0.05 * w, 0.95 * w, 15), np.linspace(0.05 * h, 0.95 * h, 11))
    px = np.stack([xs.ravel(), ys.ravel()], axis=1).reshape(-1, 1, 2)
    truth_k = cams[0].camera_matrix
    true_und = undistort_iterated(px, truth_k, LENS, (3, 50, 1e-10), new_camera_matrix=truth_k)
    k, d = result.intrinsics.camera_matrix, result.intrinsics.dist_coeffs
    cal_und = undistort_iterated(px, k, d, (3, 50, 1e-10), new_camera_matrix=k)
    H, _ = cv2.findHomography(cal_und.reshape(-1, 2), true_und.reshape(-1, 2), 0)
    mapped = cv2.perspectiveTransform(cal_und, H).reshape(-1, 2)
    err = np.linalg.norm(mapped - true_und.reshape(-1, 2), axis=1)
    assert np.max(err) < 1.0
    assert np.median(err) < 0.2
    # and without the lens model the same pixels are far from straight
    H0, _ = cv2.findHomography(px.reshape(-1, 2), true_und.reshape(-1, 2), 0)
    raw = cv2.perspectiveTransform(px, H0).reshape(-1, 2)
    assert np.max(np.linalg.norm(raw - true_und.reshape(-1, 2), axis=1)) > 10


def test_partly_hidden_targets_still_count(series) -> None:
    """A hand or the frame edge hides part of the target in some views: the corners still seen
    are used."""
    images, cams = series
    hidden = [im.copy() for im in images]
    for k, im in enumerate(hidden[:5]):
        view = detect_target(im, SPEC)
        cx = float(np.median(view.corners_px[:, 0]))
        if k % 2:
            im[:, : int(cx)] = 90
        else:
            im[:, int(cx):] = 90
    result = calibrate_camera(hidden, SPEC)
    assert result.views_used == 12
    assert result.intrinsics.camera_matrix[0, 0] == pytest.approx(cams[0].camera_matrix[0, 0],
                                                                  rel=0.01)


def test_too_few_views_are_refused(series) -> None:
    images, _ = series
    with pytest.raises(TooFewViewsError, match="5 usable view"):
        calibrate_camera(images[:5], SPEC)


def test_views_without_the_target_do_not_count(series) -> None:
    images, _ = series
    blank = np.full((IMAGE_SIZE[1], IMAGE_SIZE[0], 3), 128, np.uint8)
    with pytest.raises(TooFewViewsError, match="rejected"):
        calibrate_camera(images[:4] + [blank, blank, blank], SPEC)
    result = calibrate_camera(images[:8] + [blank], SPEC)
    assert result.views_used == 8 and len(result.rejected) == 1


def test_the_same_pose_over_and_over_is_refused(series) -> None:
    """Eight frames of one pose (different noise) are one view, not eight."""
    rng = np.random.default_rng(3)
    texture, size = _target()
    cam = camera_for_target(rng, size, IMAGE_SIZE, distortion=LENS, fill=(0.6, 0.95))
    frames = [render_planar_target(texture, size, cam, rng,
                                   options=RenderOptions.random(rng, supersample=1), table=False)
              for _ in range(8)]
    with pytest.raises(ViewsTooSimilarError, match="distinct pose"):
        calibrate_camera(frames, SPEC)


def test_views_without_tilt_are_refused() -> None:
    """Fronto-parallel views cannot separate focal length from distance."""
    images, _ = _views(np.random.default_rng(5), 7, max_tilt_deg=0.5)
    with pytest.raises(ViewsTooSimilarError, match="tilt|focal"):
        calibrate_camera(images, SPEC, IntrinsicsParams())


def test_images_of_different_sizes_are_refused(series) -> None:
    from calibration.errors import ImageSizeMismatchError

    images, _ = series
    half = [cv2.resize(im, (IMAGE_SIZE[0] // 2, IMAGE_SIZE[1] // 2)) for im in images[:4]]
    with pytest.raises(ImageSizeMismatchError, match="1640x1232"):
        calibrate_camera(images[:4] + half, SPEC)


def test_detect_target_names_the_image_when_nothing_is_found() -> None:
    noise = np.random.default_rng(1).integers(0, 255, (480, 640, 3), dtype=np.uint8)
    with pytest.raises(TargetNotFoundError, match="shot.png"):
        detect_target(noise, SPEC, min_corners=6, source="shot.png")


def test_detected_corners_sit_on_the_true_projection(series) -> None:
    images, cams = series
    view = detect_target(images[0], SPEC)
    true_px = cams[0].project(np.c_[view.object_mm[:, :2] + QUIET_MM, np.zeros(len(view.ids))])
    err = np.linalg.norm(true_px - view.corners_px, axis=1)
    assert len(view.ids) >= 30
    assert np.median(err) < 0.3 and np.max(err) < 1.0
