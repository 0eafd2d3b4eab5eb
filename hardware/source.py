"""The `FrameSource` protocol every camera, file and simulation implements.

A source hands out `Frame`s: a BGR image (uint8, shape (H, W, 3)), the time it was captured and
its index. `read()` blocks until the next frame, raises `EndOfStream` when a finite source is
exhausted, `SourceLostError` when a live camera is gone, and `CorruptFrameError` for a frame that
could not be decoded (the next `read()` may succeed).

A camera that makes a second, smaller picture of each frame itself (the Pi camera's `lores`
stream, scaled by the ISP) hands it out as the frame's `preview`: the page's picture is made
from it instead of shrinking the full frame (2.2 ms of CPU from 2304x1296, 0.2 ms from I420).
Sources without one (webcams, files, URLs) leave it None.

Lending: a camera that can hand out a frame inside its own buffer offers `read_borrowed()` next
to `read()` (the Pi camera: no 9 MB copy a frame). The frame's image and preview are read-only
and valid until the second read after it (of either kind) or `close()`: then the buffer goes
back to the camera, which writes a later frame into it. Whoever keeps a lent frame longer
copies it first (`np.array(image)`, `Preview.copy()`). `reader(source)` is `read_borrowed` where
a source has it, else `read`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Protocol, Self, runtime_checkable

import numpy as np

#: (H, W, 3) uint8, blue-green-red
BgrImage = np.ndarray


class Preview:
    """The same frame as `Frame.image`, smaller, as the camera's ISP made it: a YUV420 (I420) or
    YVU420 (YV12) buffer laid out as picamera2's `make_array` returns it, (h * 3 // 2, stride)
    with `stride` >= w (the rows' padding is dropped). Converted to BGR once, when first asked
    (`bgr()`): most frames are never shown."""

    def __init__(self, yuv: np.ndarray, size: tuple[int, int], fmt: str = "YUV420") -> None:
        from hardware.errors import CorruptFrameError

        width, height = int(size[0]), int(size[1])
        if fmt not in _YUV_TO_BGR:
            raise ValueError(f"preview format {fmt!r}: one of {sorted(_YUV_TO_BGR)}")
        shape = getattr(yuv, "shape", None)
        if (width <= 0 or height <= 0 or width % 2 or height % 2 or not isinstance(yuv, np.ndarray)
                or yuv.dtype != np.uint8 or yuv.ndim != 2 or yuv.shape[0] != height * 3 // 2
                or yuv.shape[1] < width or yuv.shape[1] % 2):
            raise CorruptFrameError(
                f"preview: a {fmt} buffer of {width}x{height} is (h * 3 / 2, stride >= w) uint8, "
                f"got shape {shape}"
            )
        self.size = (width, height)
        self.format = fmt
        self._yuv = yuv
        self._bgr: BgrImage | None = None

    def copy(self) -> Preview:
        """A preview of its own (a lent one's buffer goes back to the camera)."""
        copied = Preview(np.array(self._yuv), self.size, self.format)
        copied._bgr = self._bgr
        return copied

    def converted(self) -> BgrImage | None:
        """`bgr()` if it was already asked for, else None (nothing is converted)."""
        return self._bgr

    def bgr(self) -> BgrImage:
        """The preview as BGR (h, w, 3); the same array on every call (do not draw on it)."""
        if self._bgr is None:
            self._bgr = self._converted()
        return self._bgr

    def bgr_copy(self) -> BgrImage:
        """The preview as BGR in an array of the caller's own (to draw on): converted into it
        when `bgr()` was not asked for yet (a page's picture with the overlay: the conversion
        is the copy, not a conversion then a copy), else a copy of that."""
        return self._converted() if self._bgr is None else self._bgr.copy()

    def _converted(self) -> BgrImage:
        import cv2

        # converted at the padded width: the chroma planes' rows are stride / 2 bytes, as an
        # I420 picture that wide has them; then the padding columns are cut off
        bgr = cv2.cvtColor(self._yuv, getattr(cv2, _YUV_TO_BGR[self.format]))
        width = self.size[0]
        return bgr if bgr.shape[1] == width else np.ascontiguousarray(bgr[:, :width])


#: the OpenCV conversion of each (cv2 is imported only when a preview is shown)
_YUV_TO_BGR = {"YUV420": "COLOR_YUV2BGR_I420", "YVU420": "COLOR_YUV2BGR_YV12"}


@dataclass(frozen=True)
class Frame:
    image: BgrImage
    timestamp_s: float
    index: int
    meta: Mapping[str, Any] = field(default_factory=dict)
    #: the same frame, smaller, made by the camera (`Preview`); None when it makes none
    preview: Preview | None = None


@runtime_checkable
class FrameSource(Protocol):
    def read(self) -> Frame: ...

    def close(self) -> None: ...

    def __enter__(self) -> Self: ...

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...


class SourceBase:
    """Context-manager plumbing shared by the implementations."""

    def read(self) -> Frame:  # pragma: no cover - abstract
        raise NotImplementedError

    def close(self) -> None:
        pass

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def reader(source: Any) -> Callable[[], Frame]:
    """`source.read_borrowed` where the source lends frames (see the module's "Lending"), else
    `source.read`."""
    borrowed = getattr(source, "read_borrowed", None)
    return borrowed if callable(borrowed) else source.read


def check_bgr_image(image: Any, *, what: str = "frame") -> BgrImage:
    """Return `image` if it is a usable BGR frame, else raise `CorruptFrameError` saying why.

    Usable: a non-empty uint8 numpy array of shape (H, W, 3). Sources call this on everything a
    decoder hands back, so a truncated buffer never reaches the vision stages.
    """
    from hardware.errors import CorruptFrameError

    if image is None:
        raise CorruptFrameError(f"{what}: the decoder returned no image")
    if not isinstance(image, np.ndarray):
        raise CorruptFrameError(f"{what}: expected a numpy array, got {type(image).__name__}")
    if image.size == 0:
        raise CorruptFrameError(f"{what}: empty image of shape {image.shape}")
    if image.ndim != 3 or image.shape[2] != 3:
        raise CorruptFrameError(f"{what}: expected shape (H, W, 3), got {image.shape}")
    if image.dtype != np.uint8:
        raise CorruptFrameError(f"{what}: expected uint8 pixels, got {image.dtype}")
    return image


def iter_frames(source: FrameSource) -> Iterator[Frame]:
    """Every frame of a finite source, skipping corrupt ones, until `EndOfStream`."""
    from hardware.errors import CorruptFrameError, EndOfStream

    while True:
        try:
            yield source.read()
        except CorruptFrameError:
            continue
        except EndOfStream:
            return
