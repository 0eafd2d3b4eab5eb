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


def _play_domination(log: MatchLog, moves, *, variant: str = "standard") -> int:
    from rules import domination as rdom

    mid = log.new_match("domination", ["G", "R"], variant=variant)
    state = rdom.State.standard_start(("G", "R"), anti_symmetry=variant == "anti_symmetry")
    for move in moves:
        log.append(mid, {"type": "move", "colour": state.to_move, "move": move.to_json(),
                         "removed": []})
        state, _ = rdom.apply_move(state, move)
    log.append(mid, {"type": "end", "winner": "G", "reason": "no_moves", "text": "G wins"})
    log.end_match(mid, {"winner": "G", "reason": "no_moves"})
    return mid


def test_exported_domination_moves_are_read_back_by_the_engine(tmp_path: Path) -> None:
    """Issue 17: the export wrote `d4-d6x2` (the engine reads `d4-d6/2`) and a swap as
    `None-NonexNone`."""
    from rules import domination as rdom

    start = rdom.State.standard_start(("G", "R"), anti_symmetry=True)
    swap = rdom.legal_moves(start)[0]
    after, _ = rdom.apply_move(start, swap)
    moves = [swap, rdom.legal_moves(after)[0]]
    log = MatchLog(tmp_path / "d.sqlite")
    mid = _play_domination(log, moves, variant="anti_symmetry")
    rows = list(csv.DictReader(io.StringIO(log.export(mid, "csv")[1].decode())))
    written = [r["move"] for r in rows if r["type"] == "move"]
    assert [rdom.Move.from_text(t) for t in written] == moves
    txt = log.export(mid, "txt")[1].decode()
    assert "None" not in txt and str(swap) in txt

    state = rdom.State.standard_start(("G", "R"))
    step = next(m for m in rdom.legal_moves(state) if m.kind is rdom.MoveKind.STEP)
    mid = _play_domination(log, [step])
    rows = list(csv.DictReader(io.StringIO(log.export(mid, "csv")[1].decode())))
    assert rdom.Move.from_text(rows[0]["move"]) == step


def _apschema():
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((Path(__file__).parent / "data" / "abstractplay" / "gamerecord.json")
                        .read_text(encoding="utf-8"))
    return jsonschema.Draft7Validator(schema, format_checker=jsonschema.FormatChecker())


def test_apgamerecord_export_is_valid_against_the_abstractplay_schema(tmp_path: Path) -> None:
    from rules import domination as rdom

    validator = _apschema()
    log = MatchLog(tmp_path / "ap.sqlite")
    mid = _play(log)
    record = json.loads(log.export(mid, "apgamerecord")[1])
    assert list(validator.iter_errors(record)) == []
    assert record["header"]["game"]["name"] == "Dition"
    assert record["header"]["players"] == [{"name": "black", "result": 0},
                                           {"name": "white", "result": 1}]
    assert record["moves"] == [["7.25,9.50", "3.00,4.00"]]

    state = rdom.State.standard_start(("G", "R"))
    moves = []
    for _ in range(3):
        move = next(m for m in rdom.legal_moves(state) if m.kind is rdom.MoveKind.STEP)
        moves.append(move)
        state, _ = rdom.apply_move(state, move)
    mid = _play_domination(log, moves)
    record = json.loads(log.export(mid, "apgamerecord")[1])
    assert list(validator.iter_errors(record)) == []
    assert [rdom.Move.from_text(t) for rnd in record["moves"] for t in rnd if t] == moves
    assert record["moves"][-1][1] is None  # G moved last: R's seat in that round is empty
    # the validator is not a rubber stamp: a record without its end date is refused
    del record["header"]["date-end"]
    assert list(validator.iter_errors(record))


def test_apgamerecord_needs_a_finished_two_player_standard_match(tmp_path: Path) -> None:
    from referee.apgamerecord import GameRecordError

    log = MatchLog(tmp_path / "ap.sqlite")
    open_mid = log.new_match("dition", ["black", "white"])
    with pytest.raises(GameRecordError, match="has not ended"):
        log.export(open_mid, "apgamerecord")
    three = log.new_match("domination", ["G", "R", "B"])
    log.end_match(three, {"winner": "G", "reason": "no_moves"})
    with pytest.raises(GameRecordError, match="two-player"):
        log.export(three, "apgamerecord")


def test_matches_cli_says_events_and_prints_the_whole_start_time(tmp_path: Path, capsys) -> None:
    from referee.cli import main

    db = tmp_path / "m.sqlite"
    log = MatchLog(db)
    mid = _play(log)
    started = log.match(mid).started_at
    log.close()
    assert main(["matches", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    header = out.splitlines()[0].split()
    assert "events" in header and "moves" not in header
    assert started in out  # not cut at 25 characters


@pytest.mark.parametrize("command", [["matches"], ["export", "1"]])
def test_a_mistyped_db_path_is_an_error_not_a_new_empty_log(tmp_path: Path, command) -> None:
    from referee.cli import main

    missing = tmp_path / "typo" / "refere.sqlite"
    with pytest.raises(SystemExit, match="no match log at"):
        main([*command, "--db", str(missing)])
    assert not missing.exists() and not missing.parent.exists()
