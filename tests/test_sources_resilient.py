"""ResilientSource: reopen with backoff, skip and count corrupt frames, report the state."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hardware import (
    CorruptFrameError,
    EndOfStream,
    Frame,
    ResilientSource,
    SourceBase,
    SourceLostError,
    SourceUnavailableError,
    UnknownSourceError,
)

GOOD = np.zeros((6, 8, 3), np.uint8)


class ScriptedSource(SourceBase):
    """Plays events: "f" a frame, "c" CorruptFrameError, "n" a None image, "s" a wrong-sized
    image, "l" SourceLostError (then the source is dead), "e" EndOfStream."""

    def __init__(self, events: Iterator[str], log: list[str]) -> None:
        self._events = events
        self._log = log
        self._index = 0
        self.closed = False

    def read(self) -> Frame:
        assert not self.closed
        event = next(self._events)
        self._log.append(event)
        self._index += 1
        if event == "f":
            image = GOOD.copy()
            image[0, 0, 0] = self._index % 256
            return Frame(image, float(self._index), self._index)
        if event == "c":
            raise CorruptFrameError("bad jpeg")
        if event == "n":
            return Frame(None, 0.0, self._index)  # type: ignore[arg-type]
        if event == "s":
            return Frame(np.zeros((3, 3, 3), np.uint8), 0.0, self._index)
        if event == "l":
            raise SourceLostError("cable pulled")
        if event == "e":
            raise EndOfStream("done")
        raise AssertionError(event)

    def close(self) -> None:
        self.closed = True


class Opener:
    """open_fn: "u" fails with SourceUnavailableError, "o" opens a source on the shared events."""

    def __init__(self, opens: str, events: str) -> None:
        self._opens = iter(opens)
        self._events = iter(events)
        self.log: list[str] = []
        self.sources: list[ScriptedSource] = []

    def __call__(self) -> ScriptedSource:
        if next(self._opens, "o") == "u":
            raise SourceUnavailableError("/dev/video0 does not exist")
        source = ScriptedSource(self._events, self.log)
        self.sources.append(source)
        return source


def test_backoff_sequence_and_states() -> None:
    opener = Opener("uuuuuo", "ff")
    sleeps: list[float] = []
    states: list[tuple[str, str]] = []
    source = ResilientSource(opener, backoff=(0.5, 1, 2, 5), sleep=sleeps.append,
                             on_state=lambda s, d: states.append((s, d)))
    assert source.read().index == 0
    assert sleeps == [0.5, 1.0, 2.0, 5.0, 5.0]
    assert states == [("lost", "/dev/video0 does not exist"), ("ok", "frames are coming in")]
    assert source.stats() | {"last_error": ""} == {
        "frames": 1, "corrupt": 0, "reconnects": 0, "failed_opens": 5, "state": "ok",
        "last_error": ""}


def test_lost_source_is_closed_and_reopened() -> None:
    opener = Opener("oo", "fflff")
    states: list[str] = []
    source = ResilientSource(opener, sleep=lambda s: None, on_state=lambda s, d: states.append(s))
    frames = [source.read() for _ in range(4)]
    assert [f.index for f in frames] == [0, 1, 2, 3]
    assert [f.meta["source_index"] for f in frames] == [1, 2, 1, 2]
    assert opener.sources[0].closed and not opener.sources[1].closed
    assert source.source is opener.sources[1]
    assert states == ["ok", "lost", "ok"]
    assert source.stats()["reconnects"] == 1
    assert source.stats()["last_error"] == "cable pulled"


def test_corrupt_none_and_wrong_size_frames_are_skipped_and_counted() -> None:
    opener = Opener("o", "fcnsfcf")
    source = ResilientSource(opener, sleep=lambda s: None)
    frames = [source.read() for _ in range(3)]
    assert all(f.image.shape == GOOD.shape for f in frames)
    assert source.stats()["corrupt"] == 4
    assert source.stats()["reconnects"] == 0


def test_too_many_corrupt_frames_in_a_row_reopen_the_source() -> None:
    opener = Opener("oo", "f" + "c" * 5 + "f")
    source = ResilientSource(opener, sleep=lambda s: None, max_corrupt_in_row=5)
    source.read()
    source.read()
    assert source.stats()["reconnects"] == 1 and source.stats()["corrupt"] == 5


def test_end_of_stream_passes_through() -> None:
    source = ResilientSource(Opener("o", "fe"), sleep=lambda s: None)
    source.read()
    with pytest.raises(EndOfStream):
        source.read()


def test_other_errors_are_not_retried() -> None:
    def open_fn() -> SourceBase:
        raise UnknownSourceError("unknown source 'webcma:0'")

    with pytest.raises(UnknownSourceError):
        ResilientSource(open_fn, sleep=lambda s: None).read()


def test_max_attempts_gives_up_with_the_cause() -> None:
    source = ResilientSource(Opener("uuuu", ""), sleep=lambda s: None, max_attempts=3)
    with pytest.raises(SourceLostError, match="3 attempts.*video0"):
        source.read()


def test_close_from_another_thread_ends_a_backoff_wait() -> None:
    source = ResilientSource(Opener("u" * 1000, ""), backoff=(30.0,))  # real waiting
    errors: list[BaseException] = []

    def reader() -> None:
        try:
            source.read()
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    thread = threading.Thread(target=reader)
    thread.start()
    time.sleep(0.1)
    start = time.monotonic()
    source.close()
    thread.join(5)
    assert not thread.is_alive() and time.monotonic() - start < 2
    assert isinstance(errors[0], EndOfStream)


def _model(events: list[str]) -> tuple[int, int, int]:
    """(frames, corrupt, reconnects) by the rules in the module docstring."""
    frames = corrupt = 0
    shape: tuple[int, ...] | None = None
    for event in events:
        if event in "cn":
            corrupt += 1
        elif event in "fs":
            size = GOOD.shape if event == "f" else (3, 3, 3)
            if shape is None or shape == size:
                frames += 1
                shape = size
            else:
                corrupt += 1
        elif event == "l":
            shape = None
    return frames, corrupt, events.count("l")


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from("ffffccnsl"), min_size=1, max_size=60))
def test_counts_add_up_for_any_event_sequence(events: list[str]) -> None:
    """Every good frame comes out once, in order; every bad one is counted; every loss reopens."""
    opener = Opener("", "".join(events) + "e")
    source = ResilientSource(opener, sleep=lambda s: None, max_corrupt_in_row=1000)
    frames = []
    with pytest.raises(EndOfStream):
        while True:
            frames.append(source.read())
    stats = source.stats()
    assert (stats["frames"], stats["corrupt"], stats["reconnects"]) == _model(events)
    assert [f.index for f in frames] == list(range(len(frames)))
    assert stats["frames"] == len(frames)
    assert all(s.closed for s in opener.sources[:-1]), "every lost source was closed"
