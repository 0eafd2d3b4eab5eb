"""The `FrameSource` protocol every camera, file and simulation implements.

A source hands out `Frame`s: a BGR image (uint8, shape (H, W, 3)), the time it was captured and
its index. `read()` blocks until the next frame, raises `EndOfStream` when a finite source is
exhausted, `SourceLostError` when a live camera is gone, and `CorruptFrameError` for a frame that
could not be decoded (the next `read()` may succeed).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Mapping, Protocol, runtime_checkable

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

    def __enter__(self) -> "FrameSource": ...

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

    def __enter__(self) -> "SourceBase":
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        self.close()
