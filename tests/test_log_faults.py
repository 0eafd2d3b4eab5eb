"""The match log when its file cannot be written (disk full, read-only, damaged).

A full disk is made with SQLite's `max_page_count`: once the file holds that many pages every
write fails with SQLITE_FULL ("database or disk is full"), exactly as on a full filesystem.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from hardware import Frame
from hardware.errors import EndOfStream
from referee.log import LogWriteError, MatchLog, MatchLogError
from referee.service import RefereeService


def _fill_disk(log: MatchLog) -> None:
    """No page may be added from now on (the file is as full as a full disk)."""
    (pages,) = log._db.execute("PRAGMA page_count").fetchone()
    log._db.execute(f"PRAGMA max_page_count = {pages}")


def _free_disk(log: MatchLog) -> None:
    log._db.execute("PRAGMA max_page_count = 1073741823")


def _on_disk(path: Path, match_id: int) -> list[tuple[int, str, str]]:
    with sqlite3.connect(path) as db:
        return [(seq, kind, payload) for seq, kind, payload in db.execute(
            "SELECT seq, type, payload FROM events WHERE match_id=? ORDER BY seq", (match_id,))]


def test_a_full_disk_loses_nothing_and_writes_everything_in_order_later(tmp_path: Path) -> None:
    path = tmp_path / "log.sqlite"
    log = MatchLog(path)
    match_id = log.new_match("dition", ["black", "white"])
    log.append(match_id, {"type": "start", "text": "go"})
    _fill_disk(log)
    jpeg = bytes(range(256)) * 400  # 100 KiB: needs new pages
    sent = []
    for i in range(12):
        record = log.append(match_id, {"type": "move", "text": f"move {i}", "x": i / 3},
                            position={"discs": [[i, i, "black"]]}, snapshot_jpeg=jpeg)
        sent.append(record.seq)
    log.end_match(match_id, {"winner": "black", "reason": "suicide"})
    status = log.status()
    assert status["ok"] is False and status["waiting"] == 12
    assert status["message"] == "the match log cannot be written: disk full \u2014 12 events waiting"
    assert sent == list(range(2, 14))
    # what waits is shown as if written: the page and the history still see every event
    assert [e.seq for e in log.events(match_id)] == list(range(1, 14))
    assert [e.seq for e in log.events(match_id, last=3)] == [11, 12, 13]
    assert log.snapshot(match_id, 5) == jpeg
    assert len(_on_disk(path, match_id)) < 13  # the file really could not take them
    assert log.retry() is False  # still full

    _free_disk(log)
    assert log.retry() is True
    assert log.status() == {"ok": True, "waiting": 0, "message": None}
    rows = _on_disk(path, match_id)
    assert [r[0] for r in rows] == list(range(1, 14))
    assert [r[1] for r in rows] == ["start"] + ["move"] * 12
    assert '"move 11"' in rows[-1][2]
    reopened = MatchLog(path)
    assert reopened.match(match_id).ended_at is not None
    assert reopened.snapshot(match_id, 13) == jpeg
    assert reopened.events(match_id)[5].position == {"discs": [[4, 4, "black"]]}


def test_a_new_match_on_a_full_disk_is_refused_clearly(tmp_path: Path) -> None:
    log = MatchLog(tmp_path / "log.sqlite")
    match_id = log.new_match("dition", ["black", "white"])
    _fill_disk(log)
    log.append(match_id, {"type": "move", "text": "x" * 20000})
    with pytest.raises(LogWriteError, match="disk full"):
        log.new_match("dition", ["black", "white"])


class _Stills:
    """A frame source of plain grey frames (no board: the referee warns and goes on)."""

    def __init__(self, frames: int = 10**9) -> None:
        self.index = 0
        self.frames = frames

    def read(self) -> Frame:
        if self.index >= self.frames:
            raise EndOfStream("done")
        self.index += 1
        return Frame(np.full((120, 160, 3), 90, np.uint8), self.index, time.monotonic())

    def close(self) -> None:
        pass


def _wait(condition, timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail("timed out")
        time.sleep(0.02)


def test_the_page_shows_a_full_disk_and_the_match_goes_on(tmp_path: Path) -> None:
    path = tmp_path / "log.sqlite"
    log = MatchLog(path)
    service = RefereeService(log, lambda restart: _Stills(), game="dition", max_fps=50)
    match_id = service.state()["match_id"]
    _fill_disk(log)
    for _ in range(3):  # verdicts (large ones: they need new pages) and controls go on
        service.referee.emit([{"type": "warning", "code": "test", "text": "y" * 30000}])
        service.command("pause", {})
        service.command("resume", {})
    state = service.state()
    assert state["log"]["ok"] is False
    assert state["log"]["message"].startswith("the match log cannot be written: disk full")
    assert state["log"]["waiting"] >= 9
    assert [e["type"] for e in state["events"]][-9:] == ["warning", "pause", "resume"] * 3
    service.start()
    try:
        _free_disk(log)
        _wait(lambda: service.state()["log"]["ok"])  # the frame thread retried by itself
    finally:
        assert service.stop()
    kinds = [r[1] for r in _on_disk(path, match_id)]
    assert kinds[:1] == ["start"] and kinds[1:10] == ["warning", "pause", "resume"] * 3


def test_an_unexpected_error_in_judging_is_an_event_and_the_loop_goes_on(tmp_path: Path) -> None:
    service = RefereeService(MatchLog(tmp_path / "log.sqlite"), lambda restart: _Stills(),
                             game="dition", max_fps=100)
    calls = {"n": 0}
    real = service.referee.process

    def flaky(image, preview=None):
        calls["n"] += 1
        if calls["n"] in (2, 3):  # the same error twice in a row is reported once
            raise ZeroDivisionError("a bug in the vision")
        return real(image, preview)

    service.referee.process = flaky
    died = threading.Event()
    service.on_loop_died = lambda exc: died.set()
    service.start()
    try:
        _wait(lambda: calls["n"] > 6)
    finally:
        assert service.stop()
    errors = [e for e in service.state()["events"] if e["type"] == "error"]
    assert len(errors) == 1 and "ZeroDivisionError: a bug in the vision" in errors[0]["text"]
    assert not died.is_set() and service.loop_failure is None


def test_a_frame_thread_that_ends_by_surprise_is_reported(tmp_path: Path) -> None:
    service = RefereeService(MatchLog(tmp_path / "log.sqlite"), lambda restart: _Stills(),
                             game="dition")
    told = []
    service.on_loop_died = told.append
    service._run_frames = lambda: (_ for _ in ()).throw(MemoryError("out of memory"))
    service.start()
    _wait(lambda: bool(told))
    assert isinstance(told[0], MemoryError) and service.loop_failure is told[0]


def _referee(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "referee", *args], check=False,
                          capture_output=True, text=True, timeout=60)


def test_a_damaged_read_only_or_missing_log_is_one_clear_line(tmp_path: Path) -> None:
    corrupt = tmp_path / "corrupt.sqlite"
    corrupt.write_bytes(b"this is not sqlite" * 100)
    out = _referee("matches", "--db", str(corrupt))
    assert out.returncode != 0 and "Traceback" not in out.stderr
    assert out.stderr.strip().count("\n") == 0
    assert "not a referee match log" in out.stderr and str(corrupt) in out.stderr

    missing = tmp_path / "nowhere" / "log.sqlite"
    out = _referee("export", "1", "--db", str(missing))
    assert out.returncode != 0 and "Traceback" not in out.stderr
    assert "no match log at" in out.stderr and not missing.parent.exists()

    with pytest.raises(MatchLogError, match="not a referee match log"):
        MatchLog(corrupt)
    readonly = tmp_path / "ro.sqlite"
    MatchLog(readonly).close()
    readonly.chmod(0o444)
    try:
        if not _writable_anyway(readonly):
            with pytest.raises(MatchLogError, match="read-only"):
                MatchLog(readonly)
        assert MatchLog(readonly, read_only=True).list_matches() == []
    finally:
        readonly.chmod(0o644)


def _writable_anyway(path: Path) -> bool:
    """root writes read-only files: the read-only check is then not testable."""
    try:
        with open(path, "ab"):
            return True
    except PermissionError:
        return False


def test_ids_beyond_64_bits_are_no_such_match(tmp_path: Path) -> None:
    log = MatchLog(tmp_path / "log.sqlite")
    from referee.log import UnknownMatchError

    with pytest.raises(UnknownMatchError):
        log.match(2**64)
    with pytest.raises(UnknownMatchError):
        log.events(-(2**70))
    match_id = log.new_match("dition", ["black", "white"])
    assert log.snapshot(match_id, 2**65) is None
