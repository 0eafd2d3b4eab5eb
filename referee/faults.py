"""Test-only fault injection for a real `referee serve` process; off unless asked for.

The frame thread never ends on an error in judging (`RefereeService._judge_frame`), so the one
path left — the thread ending anyway, after which `serve` must exit non-zero for the service
manager to restart it — cannot be reached from outside without a planted fault. Setting
`REFEREE_TEST_FAULT=loop-dies-after-frames:N` makes the camera's read raise `InjectedFault`
(not a `HardwareError`, so nothing retries it) once N frames were read: the thread ends the way
a bug outside judging would end it. Unset (always, outside tests), nothing changes.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

from hardware.source import reader
from referee.errors import RefereeError

FAULT_ENV = "REFEREE_TEST_FAULT"
_LOOP_DIES = "loop-dies-after-frames"


class InjectedFault(RefereeError, RuntimeError):
    """The fault `REFEREE_TEST_FAULT` asked for."""


class FaultSpecError(RefereeError, ValueError):
    """A `REFEREE_TEST_FAULT` value the referee does not know."""


def loop_dies_after(environ: Mapping[str, str] | None = None) -> int | None:
    """N from `REFEREE_TEST_FAULT=loop-dies-after-frames:N`, None when the variable is unset."""
    raw = (os.environ if environ is None else environ).get(FAULT_ENV, "").strip()
    if not raw:
        return None
    name, _, count = raw.partition(":")
    if name != _LOOP_DIES or not count.isdigit():
        raise FaultSpecError(f"{FAULT_ENV}={raw!r}: the only fault is {_LOOP_DIES}:N "
                             "(N frames, a whole number)")
    return int(count)


class _DyingSource:
    """A frame source that raises `InjectedFault` on the read after its first `frames`."""

    def __init__(self, source: Any, frames: int) -> None:
        self._source = source
        self._left = frames

    def _next(self, read: Callable[[], Any]) -> Any:
        if self._left <= 0:
            raise InjectedFault(f"{FAULT_ENV}: the frame thread dies here, as asked")
        frame = read()
        self._left -= 1
        return frame

    def read(self) -> Any:
        return self._next(self._source.read)

    def read_borrowed(self) -> Any:
        """As `read`, for a source that lends its frames (`hardware.source.reader`)."""
        return self._next(reader(self._source))

    def close(self) -> None:
        self._source.close()

    def __getattr__(self, name: str) -> Any:  # intrinsics, game, ...: the real source's
        return getattr(self._source, name)


def with_faults(open_source: Callable[[int], Any],
                environ: Mapping[str, str] | None = None) -> Callable[[int], Any]:
    """`open_source`, or with `REFEREE_TEST_FAULT` set, one whose sources die as it says."""
    frames = loop_dies_after(environ)
    if frames is None:
        return open_source
    return lambda restart: _DyingSource(open_source(restart), frames)
