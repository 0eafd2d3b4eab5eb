"""One JPEG encode per camera picture, however many phones are watching.

`service.latest_jpeg()` draws the overlay and encodes a full frame each call (~0.1 s on a
laptop at 1280x960, more on a Pi). Every open page asks for a picture a few times a second, so
the answers are shared: within `max_age_s` every request gets the same bytes.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any


class FrameCache:
    def __init__(self, max_age_s: float = 0.2, clock: Callable[[], float] = time.monotonic) -> None:
        self.max_age_s = max_age_s
        self._clock = clock
        self._lock = threading.Lock()
        self._entries: dict[bool, tuple[float, bytes | None]] = {}

    def get(self, service: Any, *, overlay: bool) -> bytes | None:
        """The latest JPEG (`overlay` or not), encoded at most once per `max_age_s`."""
        with self._lock:  # one encode at a time; the others wait and share its result
            now = self._clock()
            entry = self._entries.get(overlay)
            if entry is not None and now - entry[0] < self.max_age_s and entry[1] is not None:
                return entry[1]
            jpeg = service.latest_jpeg(overlay=overlay)
            self._entries[overlay] = (self._clock(), jpeg)
            return jpeg
