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
    SourceLostError,
    SourceOptionError,
    SourceUnavailableError,
)
from hardware.source import BgrImage, Frame, SourceBase, check_bgr_image

IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp", ".ppm",
                            ".pgm"})

_JPEG_EOI = b"\xff\xd9"
_PNG_IEND = b"IEND"
#: The largest picture any camera here takes: 64 MP (Arducam 64MP Hawkeye, 9152 x 6944); the
#: Pi's own cameras give 12 MP. A larger image is refused from its header, before decoding
#: (a 69-byte PNG may claim 60000 x 60000, 10 GB decoded).
MAX_IMAGE_PIXELS = 64_000_000


_JPEG_SOF = frozenset({0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE,
                       0xCF})


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    """(width, height) from a JPEG's start-of-frame segment."""
    i = 2
    while i + 9 <= len(data):
        if data[i] != 0xFF:
            return None
        marker = data[i + 1]
        if marker == 0xFF:  # fill byte
            i += 1
            continue
        if marker in (0x01, 0xD8) or 0xD0 <= marker <= 0xD7:
            i += 2
            continue
        length = int.from_bytes(data[i + 2:i + 4], "big")
        if marker in _JPEG_SOF:
            height = int.from_bytes(data[i + 5:i + 7], "big")
            width = int.from_bytes(data[i + 7:i + 9], "big")
            return width, height
        if marker == 0xDA or length < 2:  # image data before any frame header
            return None
        i += 2 + length
    return None


def image_size(data: bytes) -> tuple[int, int] | None:
    """(width, height) from an image's header without decoding it: PNG's IHDR, JPEG's SOF,
    Pillow's header reader for the other formats; None when unknown (OpenCV may still decode
    it, within its own limit)."""
    import io
    import warnings

    if data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR" and len(data) >= 24:
        return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    if data[:2] == b"\xff\xd8":
        return _jpeg_size(data)
    from PIL import Image, UnidentifiedImageError

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", Image.DecompressionBombWarning)  # checked by the caller
        try:
            with Image.open(io.BytesIO(data)) as header:  # reads the header only
                return int(header.size[0]), int(header.size[1])
        except Image.DecompressionBombError:
            return MAX_IMAGE_PIXELS + 1, 1  # over Pillow's own limit, far over ours
        except (UnidentifiedImageError, OSError, ValueError, SyntaxError):
            return None


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
    size = image_size(data)
    if size is not None and size[0] * size[1] > MAX_IMAGE_PIXELS:
        shown = f"{size[0]}x{size[1]} pixels" if size[1] > 1 else "its size in the header"
        raise CorruptFrameError(
            f"{path}: {shown} is larger than any camera picture (at most "
            f"{MAX_IMAGE_PIXELS // 1_000_000} MP); not decoded")
    try:
        image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    except cv2.error as exc:  # e.g. over OpenCV's own size limit
        raise CorruptFrameError(f"{path}: OpenCV cannot decode it: "
                                f"{str(exc).strip().splitlines()[-1]}") from None
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
        if not self.folder.is_dir():  # deleted or unmounted under us: like a camera unplugged
            raise SourceLostError(f"image folder {str(self.folder)!r} is gone")
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
