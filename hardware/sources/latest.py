"""One thread owns a live device and hands out its latest frame (picamera2's mjpeg_server pattern).

A live camera keeps producing frames whether or not anyone reads them; a consumer that is slower
than the camera must get the newest frame, not one that waited in a queue. `LatestFrameGrabber`
runs `grab()` in a loop on its own thread and keeps only the newest result. `read()` waits (on a
`threading.Condition`) for a result newer than the last one it returned.

`grab()` returns `(image, timestamp_s, meta)`. If it raises `CorruptFrameError` the bad frame
becomes the newest result and the next `read()` raises it (the source is still fine). Any other
exception ends the thread: every later `read()` raises `SourceLostError` naming the cause.

With `retrieve`, grabbing and decoding are split (`cv2.VideoCapture.grab()` / `.retrieve()`):
`grab()` only takes the frame off the device (returning a token), and `retrieve(token)` makes
the picture only while a `read()` is waiting. A camera at 30 fps read at 8 fps then decodes and
copies 8 frames a second, not 30; the frame handed out is the first one grabbed after the read
began (at most one frame period old). (A stream that ends loses its last frame if nobody was
reading: `retrieve()` after the failed `grab()` has nothing to decode; so webcams use it, not
URL streams, whose FFmpeg `grab()` decodes anyway.)
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

from hardware.errors import CorruptFrameError, SourceLostError
from hardware.source import BgrImage, Frame, check_bgr_image

GrabResult = tuple[BgrImage, float, Mapping[str, Any]]


class LatestFrameGrabber:
    """Run `grab` on a daemon thread; `read()` returns the newest frame not yet returned."""

    def __init__(
        self,
        grab: Callable[[], Any],
        *,
        name: str,
        read_timeout_s: float = 5.0,
        retrieve: Callable[[Any], GrabResult] | None = None,
    ) -> None:
        self._grab = grab
        self._retrieve = retrieve
        self._waiting = 0  # readers waiting now (with `retrieve`: make pictures only for them)
        self.skipped = 0
        self._name = name
        self._read_timeout_s = read_timeout_s
        self._condition = threading.Condition()
        self._latest: Frame | CorruptFrameError | None = None
        self._sequence = 0  # number of results produced (good or corrupt)
        self._returned = 0  # sequence number of the last result handed out
        self._failure: BaseException | None = None
        self._stopping = False
        self.grabbed = 0
        self.corrupt = 0
        self._thread = threading.Thread(target=self._run, name=f"grab-{name}", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            with self._condition:
                if self._stopping:
                    return
            try:
                if self._retrieve is None:
                    image, timestamp_s, meta = self._grab()
                else:
                    token = self._grab()
                    with self._condition:
                        wanted = self._waiting > 0
                    if not wanted:
                        self.skipped += 1
                        continue
                    image, timestamp_s, meta = self._retrieve(token)
                result: Frame | CorruptFrameError = self._make(image, timestamp_s, meta)
            except CorruptFrameError as exc:
                result = exc
            except BaseException as exc:  # noqa: BLE001 - handed to the reader as SourceLostError
                with self._condition:
                    self._failure = exc
                    self._condition.notify_all()
                return
            if not self._publish(result):
                return

    def _make(self, image: Any, timestamp_s: float, meta: Mapping[str, Any]) -> Frame:
        return Frame(check_bgr_image(image, what=self._name), timestamp_s, 0, meta)

    def _publish(self, result: Frame | CorruptFrameError) -> bool:
        """Make `result` the newest; False when stopping."""
        with self._condition:
            if self._stopping:
                return False
            self._sequence += 1
            if isinstance(result, Frame):
                self.grabbed += 1
                result = Frame(result.image, result.timestamp_s, self._sequence, result.meta,
                               result.preview)
            else:
                self.corrupt += 1
            self._latest = result
            self._condition.notify_all()
        return True

    def read(self, timeout_s: float | None = None) -> Frame:
        """The newest frame not returned before; waits up to `timeout_s` (default: the one given)."""
        wait_s = self._read_timeout_s if timeout_s is None else timeout_s
        with self._condition:
            self._waiting += 1
            try:
                ready = self._condition.wait_for(
                    lambda: self._sequence > self._returned or self._failure is not None
                    or self._stopping,
                    timeout=wait_s,
                )
            finally:
                self._waiting -= 1
            if self._stopping:
                raise SourceLostError(f"{self._name}: the source was closed")
            if self._sequence > self._returned:
                self._returned = self._sequence
                latest = self._latest
                assert latest is not None
                if isinstance(latest, CorruptFrameError):
                    raise latest
                return latest
            if isinstance(self._failure, SourceLostError):
                raise SourceLostError(str(self._failure)) from self._failure
            if self._failure is not None:
                raise SourceLostError(
                    f"{self._name}: stopped delivering frames: {self._failure!r}"
                ) from self._failure
            assert not ready
            raise SourceLostError(f"{self._name}: no new frame within {wait_s:.1f} s")

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    def stop(self, join_timeout_s: float = 5.0) -> None:
        """Ask the thread to stop and wait for it (the grab in progress must return first)."""
        with self._condition:
            self._stopping = True
            self._condition.notify_all()
        if threading.current_thread() is not self._thread:
            self._thread.join(join_timeout_s)
