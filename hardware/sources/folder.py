"""Image folders and single image files as frame sources.

A folder is read in natural order (`frame2.png` before `frame10.png`); `fps` paces the reads (the
folder plays like a camera at that rate) and sets `timestamp_s = index / fps` (without `fps`,
`timestamp_s = index`). A file that does not decode, or a JPEG/PNG cut short, raises
`CorruptFrameError` naming it; the next `read()` goes on with the next file. A single image is one
frame, or the same frame forever with `loop=True`.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from pathlib import Path

from hardware.errors import (
    CorruptFrameError,
    EndOfStream,
    SourceOptionError,
    SourceUnavailableError,
)
from hardware.source import BgrImage, Frame, SourceBase, check_bgr_image

IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp", ".ppm",
                            ".pgm"})

_JPEG_EOI = b"\xff\xd9"
_PNG_IEND = b"IEND"


def natural_key(name: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key: runs of digits compare as numbers (`img2` < `img10`)."""
    parts = re.split(r"(\d+)", name)
    return tuple((0, int(p)) if p.isdigit() else (1, p.lower()) for p in parts if p)


def decode_image_file(path: Path) -> BgrImage:
    """Read and decode one image; `CorruptFrameError` if unreadable, undecodable or truncated."""
    import cv2
    import numpy as np

    try:
        data = path.read_bytes()
    except OSError as exc:
        raise CorruptFrameError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    suffix = path.suffix.lower()
    if suffix in (".jpg", ".jpeg") and _JPEG_EOI not in data[-64:]:
        raise CorruptFrameError(f"{path}: truncated JPEG (no end-of-image marker)")
    if suffix == ".png" and _PNG_IEND not in data[-32:]:
        raise CorruptFrameError(f"{path}: truncated PNG (no IEND chunk)")
    image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    if image is None:
        raise CorruptFrameError(f"{path}: not an image OpenCV can decode")
    return check_bgr_image(image, what=str(path))


def _check_fps(fps: float | None) -> float | None:
    if fps is None:
        return None
    if not isinstance(fps, (int, float)) or not fps > 0:
        raise SourceOptionError(f"fps must be a positive number of frames per second, got {fps!r}")
    return float(fps)


class _Pacer:
    """Sleeps so that frame i is handed out no earlier than start + i / fps."""

    def __init__(self, fps: float | None, sleep: Callable[[float], None],
                 clock: Callable[[], float]) -> None:
        self.fps = fps
        self._sleep = sleep
        self._clock = clock
        self._start: float | None = None

    def wait(self, index: int) -> None:
        if self.fps is None:
            return
        now = self._clock()
        if self._start is None:
            self._start = now
        due = self._start + index / self.fps
        if due > now:
            self._sleep(due - now)


class FolderSource(SourceBase):
    """Every image in a folder, in natural order, optionally paced at `fps`."""

    def __init__(
        self,
        folder: str | os.PathLike[str],
        *,
        fps: float | None = None,
        loop: bool = False,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.folder = Path(folder)
        if not self.folder.is_dir():
            raise SourceUnavailableError(f"image folder {str(self.folder)!r} does not exist")
        self.paths = sorted(
            (p for p in self.folder.iterdir()
             if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES and not p.name.startswith(".")),
            key=lambda p: natural_key(p.name),
        )
        if not self.paths:
            raise SourceUnavailableError(
                f"image folder {str(self.folder)!r} has no images "
                f"({', '.join(sorted(IMAGE_SUFFIXES))})"
            )
        self.fps = _check_fps(fps)
        self._loop = loop
        self._pacer = _Pacer(self.fps, sleep, clock)
        self._position = 0  # next path to read
        self._index = 0  # frames handed out (good or corrupt)
        self._closed = False

    def read(self) -> Frame:
        if self._closed:
            raise EndOfStream(f"{self.folder}: closed")
        if self._position >= len(self.paths):
            if not self._loop:
                raise EndOfStream(f"{self.folder}: all {len(self.paths)} images read")
            self._position = 0
        path = self.paths[self._position]
        self._position += 1
        index = self._index
        self._index += 1
        self._pacer.wait(index)
        image = decode_image_file(path)  # CorruptFrameError: this one is skipped, go on
        timestamp_s = index / self.fps if self.fps else float(index)
        return Frame(image, timestamp_s, index, {"source": str(self.folder), "path": str(path)})

    def close(self) -> None:
        self._closed = True


class ImageFileSource(SourceBase):
    """One image: a single frame, or the same frame again and again with `loop=True`."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        loop: bool = False,
        fps: float | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.path = Path(path)
        if not self.path.is_file():
            raise SourceUnavailableError(f"image file {str(self.path)!r} does not exist")
        self._image = decode_image_file(self.path)
        self._image.setflags(write=False)
        self.fps = _check_fps(fps)
        self._loop = loop
        self._pacer = _Pacer(self.fps, sleep, clock)
        self._index = 0
        self._closed = False

    def read(self) -> Frame:
        if self._closed or (self._index >= 1 and not self._loop):
            raise EndOfStream(f"{self.path}: {'closed' if self._closed else 'single image read'}")
        index = self._index
        self._index += 1
        self._pacer.wait(index)
        timestamp_s = index / self.fps if self.fps else float(index)
        return Frame(self._image, timestamp_s, index, {"source": str(self.path),
                                                      "path": str(self.path)})

    def close(self) -> None:
        self._closed = True
