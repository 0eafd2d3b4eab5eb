"""`referee capture`: calibration photos of the ChArUco target, new poses only, the stream's size."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from calibration.capture import PhotoPicker
from calibration.intrinsics import calibrate_camera, detect_target
from calibration.store import load_calibration
from calibration.target import CharucoSpec, target_texture
from hardware.sim.camera import camera_for_target
from hardware.sim.options import RenderOptions
from hardware.sim.render import render_planar_target
from referee.cli import main

SPEC = CharucoSpec()
SIZE = (1024, 768)
QUIET_MM = 10.0


def _views(n: int, seed: int = 4) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    tw, th = SPEC.size_mm
    texture, size = target_texture(SPEC, 4.0, QUIET_MM), (tw + 2 * QUIET_MM, th + 2 * QUIET_MM)
    images = []
    for _ in range(n):
        cam = camera_for_target(rng, size, SIZE, max_tilt_deg=40.0, fill=(0.6, 0.95))
        images.append(render_planar_target(texture, size, cam, rng,
                                           options=RenderOptions.random(rng, supersample=1),
                                           table=False))
    return images


def test_a_repeated_pose_is_not_taken_twice() -> None:
    first, second = _views(2)
    view = detect_target(first, SPEC)
    picker = PhotoPicker()
    assert picker.consider(view)
    noisy = np.clip(first.astype(int) + np.random.default_rng(1).normal(0, 3, first.shape), 0,
                    255).astype(np.uint8)
    assert "same pose" in picker.reason(detect_target(noisy, SPEC))
    assert picker.consider(detect_target(second, SPEC))
    few = PhotoPicker(min_corners=len(view.ids) + 1)
    assert "show more of the target" in few.reason(view)


@pytest.mark.slow
def test_capture_takes_new_poses_at_the_stream_size_and_they_calibrate(tmp_path: Path) -> None:
    frames = tmp_path / "stream"
    frames.mkdir()
    views = _views(8)
    # the camera stream: every pose held for three frames, and frames without the target
    n = 0
    blank = np.full((SIZE[1], SIZE[0], 3), 120, np.uint8)
    for image in views:
        for still in (image, image, image, blank):
            cv2.imwrite(str(frames / f"f{n:03d}.png"), still)
            n += 1
    out = tmp_path / "photos"
    preview = tmp_path / "preview.jpg"
    code = main(["capture", "--source", str(frames), "--out", str(out), "--count", "8",
                 "--preview", str(preview)])
    assert code == 0
    photos = sorted(out.glob("*.png"))
    assert len(photos) == len(views), "one photo per pose, none of the repeats or blanks"
    for photo in photos:
        assert cv2.imread(str(photo)).shape == (SIZE[1], SIZE[0], 3)
    assert cv2.imread(str(preview)).shape == (SIZE[1], SIZE[0], 3)
    result = calibrate_camera([cv2.imread(str(p)) for p in photos], SPEC)
    assert result.views_used == len(views) and result.distinct_poses == len(views)


def test_capture_stores_the_pi_cameras_focus_in_the_calibration(tmp_path: Path,
                                                                  monkeypatch) -> None:
    from hardware.fakes.picamera2 import FakeCamera, FakeCameraSystem
    from hardware.sources.picamera2_source import Picamera2Params, Picamera2Source
    from referee import sources

    image = _views(1)[0]
    system = FakeCameraSystem([FakeCamera(image=image, fps=60.0, settle_frames=2,
                                          focus_dioptres=1.4)])
    monkeypatch.setattr(sources, "open_any", lambda spec, **kw: Picamera2Source(
        0, Picamera2Params(size=SIZE), picamera2_class=system.picamera2_class, **kw))
    cal = tmp_path / "cal.json"
    code = main(["capture", "--source", "picamera2", "--out", str(tmp_path / "p"), "--count",
                 "1", "--calibration", str(cal)])
    assert code == 0
    stored = load_calibration(cal)
    assert stored.camera_controls == {"LensPosition": pytest.approx(1.4)}
    assert tuple(stored.image_size) == SIZE
    with pytest.raises(SystemExit, match="for the Pi camera"):
        main(["capture", "--source", "webcam:0", "--lens-position", "1.2"])


def test_serve_focuses_as_told_or_as_the_calibration_stored() -> None:
    from calibration.store import Calibration
    from referee.commands.serve import camera_options

    stored = Calibration(image_size=SIZE, camera_controls={"LensPosition": 1.4})
    assert camera_options("picamera2:0", None, stored) == {"lens_position_dioptres": 1.4}
    assert camera_options("picamera2", 2.0, stored) == {"lens_position_dioptres": 2.0}
    assert camera_options("picamera2", None, None) == {}
    assert camera_options("webcam:0", None, stored) == {}, "a webcam has no lens position"
    with pytest.raises(SystemExit, match="for the Pi camera"):
        camera_options("webcam:0", 1.0, None)


def test_the_calibration_pages_button_takes_a_photo_of_a_new_pose(tmp_path: Path) -> None:
    import time

    from hardware.fakes.picamera2 import FakeCamera, FakeCameraSystem
    from hardware.sources.picamera2_source import Picamera2Params, Picamera2Source
    from referee.log import MatchLog
    from referee.service import RefereeService
    from web.app import create_app

    first, second = _views(2, seed=6)
    shown = [first]
    system = FakeCameraSystem([FakeCamera(fps=30.0, settle_frames=2,
                                          frame_fn=lambda i, size: shown[0])])
    service = RefereeService(
        MatchLog(tmp_path / "m.sqlite"),
        lambda restart: Picamera2Source(0, Picamera2Params(size=SIZE),
                                        picamera2_class=system.picamera2_class),
        game="dition", source_spec="picamera2", photo_dir=str(tmp_path / "photos"),
        max_fps=10.0)
    client = create_app({"TESTING": True}, service=service).test_client()
    service.start()
    try:
        deadline = time.monotonic() + 30
        while service.referee.last_frame is None and time.monotonic() < deadline:
            time.sleep(0.1)
        taken = client.post("/api/control/capture_photo", json={})
        assert taken.status_code == 200, taken.get_json()
        event = taken.get_json()["result"]["events"][0]
        photo = Path(event["photo"])
        assert photo.parent == tmp_path / "photos"
        assert cv2.imread(str(photo)).shape == (SIZE[1], SIZE[0], 3), "at the stream's size"
        truth = detect_target(first, SPEC)
        assert event["corners"] == len(truth.ids)
        found = np.array(event["corners_px"])
        assert np.max(np.abs(np.sort(found, axis=0) - np.sort(truth.corners_px, axis=0))) < 1.0
        again = client.post("/api/control/capture_photo", json={})
        assert again.status_code >= 400 and "same pose" in again.get_json()["message"]
        shown[0] = second  # the target moved: once the referee has that frame, a new photo
        deadline = time.monotonic() + 10
        while True:
            moved = client.post("/api/control/capture_photo", json={})
            if moved.status_code == 200 or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert moved.status_code == 200, moved.get_json()
        assert len(list((tmp_path / "photos").glob("*.png"))) == 2
    finally:
        service.stop()
        service.log.close()


def _posed(seed: int, size: tuple[int, int] = SIZE) -> tuple[np.ndarray, object]:
    """One rendered view of the target and the camera that saw it (the ground truth)."""
    rng = np.random.default_rng(seed)
    tw, th = SPEC.size_mm
    texture, area = target_texture(SPEC, 4.0, QUIET_MM), (tw + 2 * QUIET_MM, th + 2 * QUIET_MM)
    cam = camera_for_target(rng, area, size, max_tilt_deg=30.0, fill=(0.7, 0.9))
    image = render_planar_target(texture, area, cam, rng,
                                 options=RenderOptions.random(rng, supersample=1), table=False)
    return image, cam


def _true_px(cam: object, object_mm: np.ndarray) -> np.ndarray:
    return cam.project(np.c_[object_mm[:, :2] + QUIET_MM, np.zeros(len(object_mm))])


def test_the_live_view_finds_the_target_on_a_halved_picture_where_it_is() -> None:
    """`detect_live` on a picture halved once (max width half the frame's): its corners, in the
    frame's pixels, within 1 px of the true projection and 0.45 px in the median (a halved
    pixel is 2 px of the frame; the full-size detection sits ~0.3 px off it too; without the
    pixel-centre shift the median was 0.4-0.58), about as many as at full size; a blank
    picture: not found."""
    from calibration.capture import detect_live

    image, cam = _posed(12)
    live = detect_live(image, max_width_px=SIZE[0] // 2)
    assert live["found"] and live["image_size"] == list(SIZE)
    full = detect_target(image, SPEC)
    assert abs(live["corners"] - len(full.ids)) <= max(2, len(full.ids) // 10)
    # which corners they are: matched to the full-size ones by position, then to the truth
    found = np.array(live["corners_px"])
    nearest = np.argmin(np.linalg.norm(found[:, None] - full.corners_px[None], axis=2), axis=1)
    truth = _true_px(cam, full.object_mm[nearest])
    error = np.linalg.norm(found - truth, axis=1)
    assert np.median(error) < 0.45 and error.max() < 1.0, error
    assert live["ready"] and "would be kept" in live["text"]
    picker = PhotoPicker()
    picker.consider(full)
    again = detect_live(image, picker, max_width_px=SIZE[0] // 2)
    assert not again["ready"] and "same pose" in again["text"]
    blank = detect_live(np.full_like(image, 128), max_width_px=SIZE[0] // 2)
    assert not blank["found"] and blank["corners_px"] == []


def test_the_calibration_page_sees_the_target_live(tmp_path: Path, monkeypatch) -> None:
    """`GET /api/calibration/target` on the fake Pi camera showing the target: its corners where
    the camera projects them (the frame is 1600 px wide, so the live view halves it), found
    at most once per 0.3 s however often it is asked, and "not found" once the target is gone."""
    import time

    from calibration import capture
    from hardware.fakes.picamera2 import FakeCamera, FakeCameraSystem
    from hardware.sources.picamera2_source import Picamera2Params, Picamera2Source
    from referee.log import MatchLog
    from referee.service import LIVE_TARGET_INTERVAL_S, RefereeService
    from web.app import create_app

    size = (1600, 900)
    image, cam = _posed(21, size)
    shown = [image]
    system = FakeCameraSystem([FakeCamera(fps=30.0, settle_frames=2,
                                          frame_fn=lambda i, wh: shown[0])])
    detections = []
    detect_live = capture.detect_live
    monkeypatch.setattr(capture, "detect_live",
                        lambda *a, **k: detections.append(1) or detect_live(*a, **k))
    service = RefereeService(
        MatchLog(tmp_path / "m.sqlite"),
        lambda restart: Picamera2Source(0, Picamera2Params(size=size),
                                        picamera2_class=system.picamera2_class),
        game="dition", source_spec="picamera2", max_fps=10.0)
    client = create_app({"TESTING": True}, service=service).test_client()
    assert client.get("/api/calibration/target").status_code == 503  # no frame yet
    service.start()
    try:
        deadline = time.monotonic() + 30
        while service.referee.last_frame is None and time.monotonic() < deadline:
            time.sleep(0.1)
        t0 = time.monotonic()
        answers = [client.get("/api/calibration/target") for _ in range(12)]
        elapsed = time.monotonic() - t0
        assert all(a.status_code == 200 for a in answers)
        assert len(detections) <= 1 + elapsed / LIVE_TARGET_INTERVAL_S
        live = answers[-1].get_json()
        assert live["found"] and live["image_size"] == list(size) and live["ready"]
        full = detect_target(image, SPEC)
        found = np.array(live["corners_px"])
        nearest = np.argmin(np.linalg.norm(found[:, None] - full.corners_px[None], axis=2), 1)
        error = np.linalg.norm(found - _true_px(cam, full.object_mm[nearest]), axis=1)
        assert live["corners"] >= 0.9 * len(full.ids) and error.max() < 1.0, error
        shown[0] = np.full_like(image, 128)  # the target taken away
        deadline = time.monotonic() + 10
        while client.get("/api/calibration/target").get_json()["found"]:
            assert time.monotonic() < deadline, "the live view still shows a target"
            time.sleep(0.2)
    finally:
        service.stop()
        service.log.close()
