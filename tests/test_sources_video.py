"""Video files through cv2.VideoCapture: every frame, media timestamps, truncation, pacing."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest
from test_sources_support import (
    CENTRE_TOLERANCE_PX,
    disc_centre_px,
    measure_disc,
    write_avi,
)

from hardware import CorruptFrameError, EndOfStream, SourceUnavailableError, open_source
from hardware.sources.opencv_source import LiveCaptureSource, VideoFileSource

FPS = 10.0


def _read_all(source: object) -> tuple[list, list[str], str]:
    frames, corrupt = [], []
    while True:
        try:
            frames.append(source.read())  # type: ignore[attr-defined]
        except CorruptFrameError as exc:
            corrupt.append(str(exc))
        except EndOfStream as exc:
            return frames, corrupt, str(exc)


@pytest.fixture(scope="module")
def avi(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("video") / "match.avi"
    write_avi(path, 24, FPS)
    return path


def test_every_frame_in_order_with_media_time(avi: Path) -> None:
    with open_source(str(avi)) as source:
        assert isinstance(source, VideoFileSource)
        assert source.frame_count == 24
        assert source.fps == pytest.approx(FPS)
        frames, corrupt, end = _read_all(source)
    assert not corrupt
    assert "24 frames" in end
    assert [f.index for f in frames] == list(range(24))
    assert [f.timestamp_s for f in frames] == pytest.approx([i / FPS for i in range(24)],
                                                            abs=1e-3)
    for i, frame in enumerate(frames):
        assert frame.image.shape == (240, 320, 3) and frame.image.dtype == np.uint8
        error_px = np.hypot(*np.subtract(measure_disc(frame.image), disc_centre_px(i)))
        assert error_px < CENTRE_TOLERANCE_PX, f"frame {i} off by {error_px:.2f} px"


def test_truncated_video_reports_the_missing_frames(tmp_path: Path, avi: Path) -> None:
    cut = tmp_path / "cut.avi"
    data = avi.read_bytes()
    cut.write_bytes(data[: len(data) // 2])
    frames, corrupt, end = _read_all(open_source(str(cut)))
    assert 0 < len(frames) < 24
    assert len(corrupt) == 1 and f"frame {len(frames)} of 24" in corrupt[0]
    assert "ends early" in end
    for i, frame in enumerate(frames):  # what was read is still right
        assert np.hypot(*np.subtract(measure_disc(frame.image), disc_centre_px(i))) < \
            CENTRE_TOLERANCE_PX


def test_realtime_paces_at_the_file_rate(avi: Path) -> None:
    now = [0.0]
    sleeps: list[float] = []

    def sleep(s: float) -> None:
        sleeps.append(s)
        now[0] += s

    source = open_source(str(avi), realtime=True, sleep=sleep, clock=lambda: now[0])
    for _ in range(6):
        source.read()
    assert sum(sleeps) == pytest.approx(5 / FPS)


def test_loop_starts_over(avi: Path) -> None:
    source = open_source(str(avi), loop=True)
    images = [source.read().image for _ in range(26)]
    assert np.hypot(*np.subtract(measure_disc(images[24]), disc_centre_px(0))) < \
        CENTRE_TOLERANCE_PX
    assert np.hypot(*np.subtract(measure_disc(images[25]), disc_centre_px(1))) < \
        CENTRE_TOLERANCE_PX


def test_not_a_video(tmp_path: Path) -> None:
    junk = tmp_path / "junk.mp4"
    junk.write_bytes(b"\x00" * 4096)
    with pytest.raises(SourceUnavailableError, match="junk.mp4"):
        open_source(str(junk))
    with pytest.raises(SourceUnavailableError, match="no such file"):
        open_source(str(tmp_path / "gone.mp4"))


def test_live_capture_path_used_for_webcams(avi: Path) -> None:
    """The webcam source's class on a real cv2.VideoCapture: frames, then lost when it stops."""
    import cv2

    from hardware import SourceLostError
    from hardware.sources.opencv_source import LiveCaptureSource

    source = LiveCaptureSource(cv2.VideoCapture(str(avi)), name="webcam:test", read_timeout_s=2)
    shown = []
    with pytest.raises(SourceLostError, match="webcam:test"):
        for _ in range(100):
            frame = source.read()
            shown.append(frame.index)
    source.close()
    assert shown and shown == sorted(set(shown))
    assert len(shown) <= 24


class _CountingWebcam:
    """A `cv2.VideoCapture` stand-in at 100 fps that counts grabs and decodes."""

    def __init__(self) -> None:
        self.grabs = 0
        self.retrieves = 0

    def grab(self) -> bool:
        time.sleep(0.01)
        self.grabs += 1
        return True

    def retrieve(self) -> tuple[bool, np.ndarray]:
        self.retrieves += 1
        return True, np.full((48, 64, 3), self.grabs % 256, np.uint8)

    def release(self) -> None:
        pass


def test_a_webcam_decodes_only_the_frames_that_are_read() -> None:
    camera = _CountingWebcam()
    source = LiveCaptureSource(camera, name="webcam:test", decode_when_read=True)
    seen = []
    for _ in range(5):
        time.sleep(0.1)  # a consumer at < 10 fps
        grabbed_before = camera.grabs
        frame = source.read()
        seen.append(int(frame.image[0, 0, 0]))
        assert frame.image[0, 0, 0] >= grabbed_before % 256, "a frame grabbed after the read"
    source.close()
    assert camera.retrieves == 5, "decoded and copied only the five frames read"
    assert camera.grabs >= 30, "yet every frame was taken off the device"
