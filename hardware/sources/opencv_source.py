"""Webcams, video files and network streams through `cv2.VideoCapture`.

- `webcam[:INDEX]`: a USB/V4L2 camera. Live: a grabber thread keeps only the newest frame, so a
  slow consumer never sees stale buffered frames; a failed grab is `SourceLostError`.
- a video file path: finite; frames in order, `timestamp_s` = media time; `EndOfStream` at the end.
  Optional `realtime=True` paces reads at the file's frame rate, `loop=True` starts over.
- `http(s)://`, `rtsp(s)://` URLs through the FFmpeg backend (MJPEG from a phone app or an IP
  camera, HLS, RTSP, or a video file on a web server): a stream without a frame count is live
  (grabber thread, lost when it drops); one with a frame count is read like a file.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from hardware.errors import (
    CorruptFrameError,
    EndOfStream,
    MissingBackendError,
    SourceLostError,
    SourceUnavailableError,
)
from hardware.source import BgrImage, Frame, SourceBase, check_bgr_image
from hardware.sources.latest import LatestFrameGrabber

URL_SCHEMES = ("http://", "https://", "rtsp://", "rtsps://")


def _cv2() -> Any:
    import cv2

    return cv2


def ffmpeg_available() -> bool:
    cv2 = _cv2()
    from cv2 import videoio_registry

    return bool(videoio_registry.hasBackend(cv2.CAP_FFMPEG))


class _Capture:
    """A `cv2.VideoCapture` with the property reads the sources need."""

    def __init__(self, capture: Any) -> None:
        self.capture = capture

    def prop(self, name: str) -> float:
        cv2 = _cv2()
        return float(self.capture.get(getattr(cv2, name)))


class VideoFileSource(SourceBase):
    """A recorded video (or a finite network file): every frame in order, then `EndOfStream`."""

    def __init__(
        self,
        target: str | os.PathLike[str],
        *,
        realtime: bool = False,
        loop: bool = False,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        _capture: Any = None,
    ) -> None:
        cv2 = _cv2()
        self.name = str(target)
        if _capture is None:
            if not self.name.startswith(URL_SCHEMES) and not Path(self.name).is_file():
                raise SourceUnavailableError(f"video file {self.name!r} does not exist")
            _capture = cv2.VideoCapture(self.name, cv2.CAP_FFMPEG if ffmpeg_available()
                                        else cv2.CAP_ANY)
        if not _capture.isOpened():
            _capture.release()
            raise SourceUnavailableError(
                f"video {self.name!r}: cannot open or decode it (not a video OpenCV's FFmpeg can read?)"
            )
        self._capture = _Capture(_capture)
        self.fps = self._capture.prop("CAP_PROP_FPS") or 0.0
        count = self._capture.prop("CAP_PROP_FRAME_COUNT")
        self.frame_count: int | None = int(count) if count > 0 else None
        self._realtime = realtime
        self._loop = loop
        self._sleep = sleep
        self._clock = clock
        self._index = 0
        self._started_at: float | None = None
        self._failed_at: int | None = None

    def read(self) -> Frame:
        if self._capture is None:
            raise EndOfStream(f"{self.name}: closed")
        capture = self._capture.capture
        position = int(self._capture.prop("CAP_PROP_POS_FRAMES"))
        ok, image = capture.read()
        if not ok or image is None:
            count = self.frame_count
            if count is not None and position < count - 1 and self._failed_at != position:
                # A frame the index promises did not decode: report it once; if the next read
                # fails at the same place the file is cut short there.
                self._failed_at = position
                raise CorruptFrameError(
                    f"{self.name}: frame {position} of {count} could not be decoded"
                )
            if self._loop and self._index > 0:
                capture.set(_cv2().CAP_PROP_POS_FRAMES, 0)
                self._failed_at = None
                return self.read()
            if count is not None and position < count - 1:
                raise EndOfStream(
                    f"{self.name}: video ends early at frame {position} of {count} "
                    "(truncated file?)"
                )
            raise EndOfStream(f"{self.name}: end of video after {self._index} frames")
        self._failed_at = None
        image = check_bgr_image(image, what=f"{self.name} frame {position}")
        media_time_s = self._capture.prop("CAP_PROP_POS_MSEC") / 1000.0
        if self.fps > 0 and (media_time_s <= 0 and position > 0):
            media_time_s = position / self.fps
        if self._realtime and self.fps > 0:
            now = self._clock()
            if self._started_at is None:
                self._started_at = now
            due = self._started_at + self._index / self.fps
            if due > now:
                self._sleep(due - now)
        frame = Frame(image, media_time_s, self._index, {"source": self.name, "position": position})
        self._index += 1
        return frame

    def close(self) -> None:
        if self._capture is not None:
            self._capture.capture.release()
            self._capture = None


class LiveCaptureSource(SourceBase):
    """A live `cv2.VideoCapture` (webcam or stream) read by one grabber thread."""

    def __init__(self, capture: Any, *, name: str, read_timeout_s: float = 5.0,
                 decode_when_read: bool = False) -> None:
        self.name = name
        self._capture = capture
        self._read_timeout_s = read_timeout_s
        # decode_when_read (webcams): grab() every frame, so the device's queue never holds stale
        # ones, but retrieve() - decode and copy - only the frames that are read
        self._grabber: LatestFrameGrabber | None = LatestFrameGrabber(
            self._grab if decode_when_read else self._read, name=name,
            read_timeout_s=read_timeout_s, retrieve=self._retrieve if decode_when_read else None,
        )

    def _read(self) -> tuple[BgrImage, float, Mapping[str, Any]]:
        ok, image = self._capture.read()
        timestamp_s = time.monotonic()
        if not ok:
            raise SourceLostError(f"{self.name}: no frame (device unplugged or stream dropped)")
        return image, timestamp_s, {"source": self.name}

    def _grab(self) -> float:
        if not self._capture.grab():
            raise SourceLostError(f"{self.name}: no frame (device unplugged or stream dropped)")
        return time.monotonic()

    def _retrieve(self, timestamp_s: float) -> tuple[BgrImage, float, Mapping[str, Any]]:
        ok, image = self._capture.retrieve()
        if not ok or image is None:
            raise CorruptFrameError(f"{self.name}: a grabbed frame did not decode")
        return image, timestamp_s, {"source": self.name}

    def read(self) -> Frame:
        if self._grabber is None:
            raise SourceLostError(f"{self.name}: the source is closed")
        return self._grabber.read()

    def close(self) -> None:
        grabber, self._grabber = self._grabber, None
        if grabber is None:
            return
        # VideoCapture is not thread-safe: wait for the grab in progress (bounded by the read
        # timeout) before releasing; a thread still stuck in the driver keeps the capture.
        grabber.stop(join_timeout_s=self._read_timeout_s + 1.0)
        if not grabber.alive:
            self._capture.release()


def open_webcam(
    index: int = 0,
    *,
    size: tuple[int, int] | None = None,
    fps: float | None = None,
    read_timeout_s: float = 5.0,
) -> LiveCaptureSource:
    """`webcam[:INDEX]`: /dev/video<INDEX> on Linux (V4L2), the INDEX-th camera elsewhere."""
    cv2 = _cv2()
    api = cv2.CAP_V4L2 if os.name == "posix" and Path("/dev").is_dir() else cv2.CAP_ANY
    device = Path(f"/dev/video{index}")
    if api == cv2.CAP_V4L2 and not device.exists():
        present = sorted(p.name for p in Path("/dev").glob("video*"))
        raise SourceUnavailableError(
            f"webcam:{index}: {device} does not exist"
            + (f" (present: {', '.join(present)})" if present else " (no /dev/video* at all: "
               "is a webcam plugged in?)")
        )
    capture = cv2.VideoCapture(index, api)
    if not capture.isOpened():
        capture.release()
        raise SourceUnavailableError(
            f"webcam:{index}: cannot open {device} (busy in another program, or not a capture "
            "device: try the next index)"
        )
    if size is not None:
        capture.set(cv2.CAP_PROP_FRAME_WIDTH, int(size[0]))
        capture.set(cv2.CAP_PROP_FRAME_HEIGHT, int(size[1]))
    if fps is not None:
        capture.set(cv2.CAP_PROP_FPS, float(fps))
    return LiveCaptureSource(capture, name=f"webcam:{index}", read_timeout_s=read_timeout_s,
                             decode_when_read=True)


def open_url(
    url: str,
    *,
    open_timeout_s: float = 10.0,
    read_timeout_s: float = 5.0,
    realtime: bool = False,
    loop: bool = False,
    live: bool | None = None,
) -> SourceBase:
    """An `http(s)://` / `rtsp(s)://` stream or remote video via FFmpeg.

    `live=None` decides from the stream: a frame count means a finite file.
    """
    cv2 = _cv2()
    if not ffmpeg_available():
        raise MissingBackendError(
            f"{url}: this OpenCV build has no FFmpeg backend (needed for network streams); "
            "install opencv-python-headless from PyPI"
        )
    params = [
        cv2.CAP_PROP_OPEN_TIMEOUT_MSEC, int(open_timeout_s * 1000),
        cv2.CAP_PROP_READ_TIMEOUT_MSEC, int(read_timeout_s * 1000),
    ]
    capture = cv2.VideoCapture(url, cv2.CAP_FFMPEG, params)
    if not capture.isOpened():
        capture.release()
        raise SourceUnavailableError(
            f"{url}: cannot open the stream (wrong address, server down, or not a video/MJPEG "
            f"stream; waited up to {open_timeout_s:g} s)"
        )
    count = capture.get(cv2.CAP_PROP_FRAME_COUNT)
    if live is None:
        live = not count > 0
    if not live:
        return VideoFileSource(url, realtime=realtime, loop=loop, _capture=capture)
    return LiveCaptureSource(capture, name=url, read_timeout_s=read_timeout_s)
