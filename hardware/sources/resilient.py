"""Keep frames coming through unplugged webcams, dropped streams and camera timeouts.

`ResilientSource(open_fn)` wraps any source. When opening fails (`SourceUnavailableError`) or a
working source stops (`SourceLostError`), it reports state "lost", closes what is left, and
reopens with backoff (0.5, 1, 2, 5, 5, ... s) until it works, then reports "ok" again. Corrupt
frames (`CorruptFrameError`, or an image that is None, empty, not (H, W, 3) uint8, or not the size
of the frames before it since the source was opened) are skipped and counted. `EndOfStream` passes through: a finished
recording is not a failure. Frames get a new `index` that keeps increasing across reconnects (the
source's own is kept in `meta["source_index"]`).

`on_state(state, detail)` is called on every change: state is "ok", "lost" or (after `close()`)
"closed"; detail is a sentence for the page ("webcam:0: no frame (device unplugged or stream
dropped)"). `stats()["last_error"]` keeps the latest failure even when the state did not change.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from hardware.errors import CorruptFrameError, EndOfStream, SourceLostError, SourceUnavailableError
from hardware.source import Frame, FrameSource, SourceBase, check_bgr_image

StateCallback = Callable[[str, str], None]


class ResilientSource(SourceBase):
    """Reopen-with-backoff and corrupt-frame skipping around any `FrameSource`."""

    def __init__(
        self,
        open_fn: Callable[[], FrameSource],
        *,
        backoff: Sequence[float] = (0.5, 1.0, 2.0, 5.0),
        on_state: StateCallback | None = None,
        sleep: Callable[[float], None] | None = None,
        max_corrupt_in_row: int = 25,
        max_attempts: int | None = None,
    ) -> None:
        if not backoff or any(b < 0 for b in backoff):
            raise ValueError(f"backoff must be a non-empty sequence of delays >= 0, got {backoff!r}")
        self._open_fn = open_fn
        self._backoff = tuple(float(b) for b in backoff)
        self._on_state = on_state
        self._closed_event = threading.Event()
        self._sleep = sleep if sleep is not None else self._closed_event.wait
        self._max_corrupt_in_row = max_corrupt_in_row
        self._max_attempts = max_attempts
        self._source: FrameSource | None = None
        self._shape: tuple[int, ...] | None = None
        self._lock = threading.Lock()
        self.state = "starting"
        self.last_error = ""
        self.frames = 0
        self.corrupt = 0
        self.reconnects = 0
        self.failed_opens = 0
        self._corrupt_in_row = 0
        self._ever_opened = False

    # --- state --------------------------------------------------------------------------------
    def _set_state(self, state: str, detail: str) -> None:
        if state == "lost":
            self.last_error = detail
        if state != self.state:
            self.state = state
            if self._on_state is not None:
                self._on_state(state, detail)

    def stats(self) -> dict[str, Any]:
        """frames handed out, corrupt frames skipped, reconnects made, current state, last error."""
        return {
            "frames": self.frames,
            "corrupt": self.corrupt,
            "reconnects": self.reconnects,
            "failed_opens": self.failed_opens,
            "state": self.state,
            "last_error": self.last_error,
        }

    @property
    def source(self) -> FrameSource | None:
        """The source currently open (None while lost), e.g. for its `locked_controls()`."""
        return self._source

    # --- opening ------------------------------------------------------------------------------
    def _drop_source(self) -> None:
        self._shape = None  # a reopened source may come back at another size
        source, self._source = self._source, None
        if source is not None:
            try:
                source.close()
            except Exception:  # noqa: BLE001, S110 - a broken source may fail to close; it is gone
                pass

    def _connect(self) -> FrameSource:
        attempt = 0
        while True:
            if self._closed_event.is_set():
                raise EndOfStream("the resilient source was closed")
            try:
                source = self._open_fn()
            except (SourceUnavailableError, SourceLostError) as exc:
                self.failed_opens += 1
                self._set_state("lost", str(exc))
                attempt += 1
                if self._max_attempts is not None and attempt >= self._max_attempts:
                    raise SourceLostError(
                        f"gave up after {attempt} attempts to open the source: {exc}"
                    ) from exc
                self._sleep(self._backoff[min(attempt - 1, len(self._backoff) - 1)])
                continue
            if self._ever_opened:
                self.reconnects += 1
            self._ever_opened = True
            self._source = source
            self._set_state("ok", "frames are coming in")
            return source

    # --- the FrameSource protocol ------------------------------------------------------------
    def read(self) -> Frame:
        while True:
            source = self._source if self._source is not None else self._connect()
            try:
                frame = source.read()
                image = check_bgr_image(frame.image)
                if self._shape is not None and image.shape != self._shape:
                    raise CorruptFrameError(
                        f"frame of shape {image.shape}, the frames before were {self._shape}"
                    )
            except CorruptFrameError as exc:
                self.corrupt += 1
                self._corrupt_in_row += 1
                if self._corrupt_in_row >= self._max_corrupt_in_row:
                    self._corrupt_in_row = 0
                    self._drop_source()
                    self._set_state("lost", f"{self._max_corrupt_in_row} corrupt frames in a row: "
                                            f"{exc}")
                continue
            except SourceLostError as exc:
                self._drop_source()
                if self._closed_event.is_set():
                    raise EndOfStream("the resilient source was closed") from exc
                self._set_state("lost", str(exc))
                self._sleep(self._backoff[0])
                continue
            self._corrupt_in_row = 0
            self._shape = image.shape
            meta = dict(frame.meta)
            meta["source_index"] = frame.index
            result = Frame(image, frame.timestamp_s, self.frames, meta, frame.preview)
            self.frames += 1
            return result

    def close(self) -> None:
        self._closed_event.set()
        self._drop_source()
        self._set_state("closed", "closed")
