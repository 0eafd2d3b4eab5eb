"""One JPEG encode per camera picture, however many phones are watching.

`service.latest_jpeg()` draws the overlay and encodes a full frame each call (~0.1 s on a
laptop at 1280x960, more on a Pi). Every open page asks for a picture a few times a second, so
the answers are shared: within `max_age_s` every request gets the same bytes.

The encode itself runs on one thread of the cache's own, never on the server worker that
happened to ask: OpenCV keeps per-thread buffers for drawing and encoding, so with the encodes
spread over the workers of 50 picture streams each worker kept a few MB for good (measured:
+120 MB resident after the streams had closed).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any


class FrameCache:
    def __init__(self, max_age_s: float = 0.2, clock: Callable[[], float] = time.monotonic) -> None:
        self.max_age_s = max_age_s
        self._clock = clock
        self._lock = threading.Lock()
        self._entries: dict[bool, tuple[float, bytes | None]] = {}
        self._encoder = ThreadPoolExecutor(1, thread_name_prefix="frame-encoder")

    def get(self, service: Any, *, overlay: bool) -> bytes | None:
        """The latest JPEG (`overlay` or not), encoded at most once per `max_age_s`."""
        with self._lock:  # one encode at a time; the others wait and share its result
            now = self._clock()
            entry = self._entries.get(overlay)
            if entry is not None and now - entry[0] < self.max_age_s and entry[1] is not None:
                return entry[1]
            jpeg = self._encoder.submit(service.latest_jpeg, overlay=overlay).result()
            self._entries[overlay] = (self._clock(), jpeg)
            return jpeg
