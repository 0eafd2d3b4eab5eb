"""One JPEG encode per camera picture and size, however many phones are watching.

`service.latest_jpeg()` draws the overlay and encodes a frame each call (a full-size encode is
~20 ms at 2304x1296 on a laptop, more on a Pi). Every open page asks for a picture a few times
a second, so the answers are shared: within `max_age_s` every request for the same picture gets
the same bytes. A page says how wide it shows the picture (`width`): the frame is shrunk to that
before encoding, rounded up to a multiple of `WIDTH_STEP_PX` so pages of similar sizes share
one encode.

While the board lies still, the picture with the overlay is not encoded again: the service's
`picture_key()` stays the same while the scene monitor sees nothing move on the board and the
same things are drawn on it, and then a new picture would differ from the last one only by the
sensor's noise; the last one's bytes are served again, for at most `STILL_MAX_AGE_S` (what the
scene monitor does not watch, the room beyond the board's margin, is never older than that).
The camera's own pictures (`overlay=0`: calibration photos, the calibration page's view) are
always of the latest frame.

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

#: widths are rounded up to this, so phones of similar sizes share one encode
WIDTH_STEP_PX = 160
#: narrower than this is not worth a picture of the board
MIN_WIDTH_PX = 320
#: the longest a still board's picture is served again (the page asks every 350 ms)
STILL_MAX_AGE_S = 1.0


def width_bucket(width: int | None) -> int | None:
    """The width actually encoded for a page showing the picture `width` px wide (None: full)."""
    if width is None:
        return None
    width = max(MIN_WIDTH_PX, int(width))
    return -(-width // WIDTH_STEP_PX) * WIDTH_STEP_PX


class FrameCache:
    def __init__(self, max_age_s: float = 0.2, clock: Callable[[], float] = time.monotonic) -> None:
        self.max_age_s = max_age_s
        self._clock = clock
        self._lock = threading.Lock()
        #: (overlay, width) -> (when encoded, the JPEG, the service's picture key then)
        self._entries: dict[tuple[bool, int | None], tuple[float, bytes | None, Any]] = {}
        self._encoder = ThreadPoolExecutor(1, thread_name_prefix="frame-encoder")

    def get(self, service: Any, *, overlay: bool, width: int | None = None) -> bytes | None:
        """The latest JPEG (`overlay` or not, at most `width` px wide rounded up to the step),
        encoded at most once per `max_age_s`."""
        key = (overlay, width_bucket(width))
        with self._lock:  # one encode at a time; the others wait and share its result
            # read before the encode: a frame arriving meanwhile makes the next key differ
            picture = service.picture_key() if overlay and hasattr(service, "picture_key") else None
            now = self._clock()
            entry = self._entries.get(key)
            if entry is not None and entry[1] is not None and (
                    now - entry[0] < self.max_age_s
                    or (picture is not None and picture == entry[2]
                        and now - entry[0] < STILL_MAX_AGE_S)):
                return entry[1]
            if key[1] is None:
                job = self._encoder.submit(service.latest_jpeg, overlay=overlay)
            else:
                job = self._encoder.submit(service.latest_jpeg, overlay=overlay, max_width=key[1])
            jpeg = job.result()
            self._entries[key] = (self._clock(), jpeg, picture)
            return jpeg
