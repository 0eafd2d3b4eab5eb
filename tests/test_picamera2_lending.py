"""Frames judged in the Pi camera's own buffers (`read_borrowed`), against the fake's buffers.

The fake holds libcamera's `buffer_count` buffers: a request keeps one until it is released,
then the camera writes a later frame into it (`poison_released`: at once, with `POISON`). So a
frame that someone keeps past its release without a copy shows the poison, and these tests see
it: the lending window (valid until the second read after it), the release on close and on a
lost camera, and the service keeping the page's last frame when the camera goes away.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest
from test_sources_support import disc_centre_px, measure_disc, render_frame

from hardware import SourceLostError
from hardware.fakes.picamera2 import POISON, FakeCamera, FakeCameraSystem, MappedArray
from hardware.source import reader
from hardware.sources.picamera2_source import Picamera2Params, Picamera2Source
from referee.log import MatchLog
from referee.service import RefereeService

SIZE = (320, 240)
#: the rendered disc's centroid against where it was drawn (anti-aliased, sub-pixel: see
#: test_sources_support); a poisoned frame has no disc at all
CENTRE_TOLERANCE_PX = 1.0


def _system(**camera: object) -> FakeCameraSystem:
    options = {"fps": 250.0, "settle_frames": 2, "poison_released": True,
               "frame_fn": lambda i, size: render_frame(i, size)} | camera
    return FakeCameraSystem([FakeCamera(**options)])  # type: ignore[arg-type]


def _open(system: FakeCameraSystem) -> Picamera2Source:
    return Picamera2Source(0, Picamera2Params(capture_timeout_s=0.3, preview_width=160), size=SIZE,
                           picamera2_class=system.picamera2_class)


def _poisoned(image: np.ndarray) -> bool:
    return bool(np.all(image == POISON))


def _shows_its_frame(image: np.ndarray, index: int) -> bool:
    """The image is the rendered frame `index` (its disc where that frame drew it)."""
    if _poisoned(image):
        return False
    return float(np.hypot(*np.subtract(measure_disc(image), disc_centre_px(index, SIZE)))) \
        < CENTRE_TOLERANCE_PX


def test_a_released_buffer_goes_back_to_the_camera_and_a_copy_survives_it() -> None:
    system = _system()
    camera = system.picamera2_class(0)
    camera.configure(camera.create_video_configuration(main={"size": SIZE, "format": "RGB888"},
                                                        buffer_count=3))
    camera.start()
    try:
        request = camera.capture_request(wait=2.0)
        with MappedArray(request, "main", write=False) as mapped:
            view = mapped.array
        copy = request.make_array("main")
        assert view.shape == copy.shape == (SIZE[1], SIZE[0], 3)
        assert np.array_equal(view, copy) and not _poisoned(view)
        request.release()
        assert _poisoned(view), "the released buffer was handed back to the camera"
        assert not _poisoned(copy), "make_array copied it out"
        # an application that holds every buffer stops the camera's frames
        held = [camera.capture_request(wait=2.0) for _ in range(2)]
        dropped = camera.frames_dropped
        time.sleep(0.1)  # 25 frame periods
        assert camera.frames_dropped > dropped, "frames lost while every buffer was held"
        for r in held:
            r.release()
        camera.capture_request(wait=2.0).release()  # frames come again
    finally:
        camera.close()


def test_a_lent_frame_is_the_camera_buffer_until_the_second_read_after_it() -> None:
    system = _system()
    with _open(system) as source:
        assert reader(source) == source.read_borrowed
        frames = [source.read_borrowed()]
        shown = frames[0].image.copy()
        assert not frames[0].image.flags.writeable, "the camera's memory is read-only"
        with pytest.raises(ValueError):
            frames[0].image[0, 0] = 0
        frames.append(source.read_borrowed())
        assert np.array_equal(frames[0].image, shown), "still valid while the next is judged"
        assert frames[0].preview is not None and not _poisoned(frames[0].preview.bgr())
        for _ in range(20):
            frames.append(source.read_borrowed())
            assert source.lent <= 2, "never more than two buffers held between reads"
        # released at the second read after it: poisoned, then a later frame written into it
        assert not np.array_equal(frames[0].image, shown), "its buffer went back to the camera"
        assert not _poisoned(frames[-1].image) and not _poisoned(frames[-2].image)
        last = frames[-1].image
    assert source.lent == 0 and _poisoned(last), "close() gives every lent buffer back"


def test_lent_frames_show_what_copied_frames_show() -> None:
    """Lent and copied frames of the same camera: the same picture of their frame."""
    system = _system()
    with _open(system) as source:
        for read in (source.read, source.read_borrowed) * 3:
            frame = read()
            index = system.instances[-1].frames  # frames made so far: this one is among the last
            assert any(_shows_its_frame(frame.image, i) for i in range(index - 4, index)), \
                read.__name__


def test_a_lost_camera_keeps_what_it_lent_until_it_is_closed() -> None:
    system = _system(disconnect_after_n=30)
    source = _open(system)
    with pytest.raises(SourceLostError):
        for _ in range(100):
            frame = source.read_borrowed()
    assert source.lent >= 1 and not _poisoned(frame.image), "the caller may still show it"
    source.close()
    assert source.lent == 0 and _poisoned(frame.image)


def test_the_service_keeps_the_last_frame_when_the_camera_goes(tmp_path: Path) -> None:
    """The page goes on showing the last frame after "camera lost" and after the service
    stops: its copy, not the camera buffer given back."""
    system = _system(fps=60.0)
    service = RefereeService(MatchLog(tmp_path / "m.sqlite"), lambda restart: _open(system),
                             game="dition", source_spec="picamera2:0", max_fps=20.0,
                             resume=False)
    service.start()
    try:
        deadline = time.monotonic() + 60
        while service.referee.frames < 5 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert service.referee.frames >= 5 and service.referee.frame_lent
        system.cameras[0].connected = False
        while service.state()["camera"]["state"] != "lost" and time.monotonic() < deadline:
            time.sleep(0.05)
        assert service.state()["camera"]["state"] == "lost"
        assert all(cam.lent == 0 for cam in [service._source] if cam is not None)
        image = service.referee.last_frame
        assert image is not None and not _poisoned(image), "the page's frame was kept"
        assert not service.referee.frame_lent
        assert service.latest_jpeg(overlay=False) is not None
        system.cameras[0].connected = True
        while service.state()["camera"]["state"] != "ok" and time.monotonic() < deadline:
            time.sleep(0.05)
        frames = service.referee.frames
        while service.referee.frames < frames + 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert service.referee.frame_lent, "the reopened camera lends again"
    finally:
        service.stop()
    assert not _poisoned(service.referee.last_frame), "kept after the service stopped"


class _UnmappingMappedArray(MappedArray):
    """picamera2 before its allocators: the buffer is unmapped at the end of the `with`, which
    fails while a view of it is still held."""

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        super().__exit__(exc_type, exc, tb)
        raise BufferError("cannot close exported pointers exist")


class _MappedArrayWithoutWrite:
    """picamera2 before `MappedArray(..., write=)`."""

    def __init__(self, request: object, stream: str, reshape: bool = True) -> None:
        raise AssertionError("not reached: called with write=")


@pytest.mark.parametrize("old", [_UnmappingMappedArray, _MappedArrayWithoutWrite])
def test_an_older_picamera2_that_cannot_lend_gets_copies(old: type) -> None:
    system = _system()
    source = Picamera2Source(0, Picamera2Params(capture_timeout_s=0.3), size=SIZE,
                             picamera2_class=system.picamera2_class, mapped_array_class=old)
    with source:
        frames = [source.read_borrowed() for _ in range(4)]
        assert source.lent == 0, "nothing held: every frame was copied out"
    assert all(not _poisoned(f.image) and f.image.flags.writeable for f in frames)
