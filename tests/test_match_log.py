"""The match log: a real SQLite file that survives crashes and exports readable records."""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from referee.log import ExportFormatError, MatchLog, MatchLogError, UnknownMatchError


def _play(log: MatchLog) -> int:
    mid = log.new_match("dition", ["black", "white"], source="sim:dition:1")
    log.append(mid, {"type": "start", "text": "New dition match"})
    log.append(mid, {"type": "move", "colour": "black", "x": 7.25, "y": 9.5,
                     "outcome": "placed", "removed": []},
               position={"discs": [{"x": 7.25, "y": 9.5, "colour": "black"}]},
               snapshot_jpeg=b"\xff\xd8fakejpeg\xff\xd9")
    log.append(mid, {"type": "move", "colour": "white", "x": 3.0, "y": 4.0,
                     "outcome": "capture", "removed": [[7.25, 9.5]]})
    log.append(mid, {"type": "end", "winner": "white", "reason": "suicide", "text": "done"})
    log.end_match(mid, {"winner": "white", "reason": "suicide"})
    return mid


def test_events_are_numbered_and_persist_across_connections(tmp_path: Path) -> None:
    path = tmp_path / "log.sqlite"
    log = MatchLog(path)
    mid = _play(log)
    log.close()
    again = MatchLog(path)
    events = again.events(mid)
    assert [e.seq for e in events] == [1, 2, 3, 4]
    assert [e.type for e in events] == ["start", "move", "move", "end"]
    assert events[1].payload["x"] == 7.25 and events[1].position is not None
    assert again.snapshot(mid, 2) == b"\xff\xd8fakejpeg\xff\xd9"
    assert again.snapshot(mid, 3) is None
    assert [e.seq for e in again.events(mid, last=2)] == [3, 4]
    assert [e.seq for e in again.events(mid, after_seq=1, last=10)] == [2, 3, 4]
    record = again.match(mid)
    assert record.ended_at is not None and record.result == {"winner": "white", "reason": "suicide"}
    assert again.open_match() is None


def test_wal_mode_is_on(tmp_path: Path) -> None:
    MatchLog(tmp_path / "a.sqlite")
    mode = sqlite3.connect(tmp_path / "a.sqlite").execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"


def test_unknown_match_and_format_are_clear_errors(tmp_path: Path) -> None:
    log = MatchLog(tmp_path / "a.sqlite")
    with pytest.raises(UnknownMatchError, match="no match 42"):
        log.events(42)
    with pytest.raises(LookupError):
        log.append(42, {"type": "move"})
    mid = _play(log)
    with pytest.raises(ExportFormatError, match="xml"):
        log.export(mid, "xml")
    with pytest.raises(ValueError, match="type"):
        log.append(mid, {"colour": "black"})


def test_a_file_that_is_not_a_log_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "notes.sqlite"
    bad.write_bytes(b"this is not a database at all" * 100)
    with pytest.raises(MatchLogError, match="notes.sqlite"):
        MatchLog(bad)


def test_exports(tmp_path: Path) -> None:
    log = MatchLog(tmp_path / "a.sqlite")
    mid = _play(log)
    mime, body = log.export(mid, "json")
    data = json.loads(body)
    assert mime == "application/json"
    assert data["match"]["id"] == mid and len(data["events"]) == 4
    assert data["events"][2]["removed"] == [[7.25, 9.5]]
    mime, body = log.export(mid, "csv")
    rows = list(csv.DictReader(io.StringIO(body.decode())))
    assert mime == "text/csv" and [r["type"] for r in rows] == ["start", "move", "move", "end"]
    assert rows[2]["outcome"] == "capture" and rows[2]["colour"] == "white"
    mime, body = log.export(mid, "txt")
    text = body.decode()
    assert "1. black" in text and "2. white" in text and "removes 1" in text
    assert "Result:" in text


def test_open_match_is_the_latest_unfinished(tmp_path: Path) -> None:
    log = MatchLog(tmp_path / "a.sqlite")
    _play(log)
    a = log.new_match("dition", ["black", "white"])
    b = log.new_match("domination", ["G", "R"])
    assert log.open_match().id == b
    assert log.open_match("dition").id == a


_WRITER = """
import sys, time
from referee.log import MatchLog
log = MatchLog(sys.argv[1])
mid = log.new_match("dition", ["black", "white"])
n = 0
while True:
    n += 1
    log.append(mid, {"type": "move", "colour": "black", "x": n, "y": 1.0, "outcome": "placed",
                     "removed": []}, snapshot_jpeg=b"x" * 2000)
    print(n, flush=True)
"""


def test_killed_writer_loses_no_committed_event(tmp_path: Path) -> None:
    path = tmp_path / "crash.sqlite"
    proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(path)], stdout=subprocess.PIPE,
                            text=True)
    assert proc.stdout is not None
    last = 0
    deadline = time.monotonic() + 30
    while last < 40 and time.monotonic() < deadline:
        last = int(proc.stdout.readline())
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    log = MatchLog(path)
    events = log.events(log.open_match().id)
    # every event reported as committed is there, in order, none half-written
    assert len(events) >= last
    assert [e.payload["x"] for e in events] == list(range(1, len(events) + 1))
