"""The `FrameSource` protocol every camera, file and simulation implements.

A source hands out `Frame`s: a BGR image (uint8, shape (H, W, 3)), the time it was captured and
its index. `read()` blocks until the next frame, raises `EndOfStream` when a finite source is
exhausted, `SourceLostError` when a live camera is gone, and `CorruptFrameError` for a frame that
could not be decoded (the next `read()` may succeed).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Protocol, Self, runtime_checkable

import numpy as np

#: (H, W, 3) uint8, blue-green-red
BgrImage = np.ndarray


@dataclass(frozen=True)
class Frame:
    image: BgrImage
    timestamp_s: float
    index: int
    meta: Mapping[str, Any] = field(default_factory=dict)


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
