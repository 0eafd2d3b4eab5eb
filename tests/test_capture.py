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
