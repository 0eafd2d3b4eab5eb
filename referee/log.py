"""The match log: one SQLite file (WAL), every event committed as it happens.

Tables: `matches` (game, variant, players, start/end, result), `events` (an append-only sequence
per match: moves, verdicts, instructions, warnings, questions, answers, corrections, undo — each
with the position after it) and `snapshots` (the JPEG frame behind a verdict). Nothing is ever
rewritten: a correction or an undo is a new event. A match without `ended_at` is open and is
resumed by `referee serve` after a crash or power cut.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import sqlite3
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from referee.errors import RefereeError
from referee.games.base import Game
from referee.games.registry import find_game
from referee.notation import move_text

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS matches (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    game TEXT NOT NULL,
    variant TEXT NOT NULL,
    players TEXT NOT NULL,
    source TEXT,
    started_at TEXT NOT NULL,
    ended_at TEXT,
    result TEXT,
    start_position TEXT
);
CREATE TABLE IF NOT EXISTS events (
    match_id INTEGER NOT NULL REFERENCES matches(id),
    seq INTEGER NOT NULL,
    time TEXT NOT NULL,
    type TEXT NOT NULL,
    payload TEXT NOT NULL,
    position TEXT,
    PRIMARY KEY (match_id, seq)
);
CREATE TABLE IF NOT EXISTS snapshots (
    match_id INTEGER NOT NULL REFERENCES matches(id),
    seq INTEGER NOT NULL,
    jpeg BLOB NOT NULL,
    PRIMARY KEY (match_id, seq)
);
"""

EXPORT_FORMATS = {"json": "application/json", "csv": "text/csv", "txt": "text/plain",
                  "apgamerecord": "application/json"}


class MatchLogError(RefereeError, OSError):
    """The log file cannot be opened or is not a referee log."""


class UnknownMatchError(RefereeError, LookupError):
    """No match with that id in the log."""

    def __init__(self, match_id: object) -> None:
        super().__init__(f"no match {match_id!r} in the log")
        self.match_id = match_id


class ExportFormatError(RefereeError, ValueError):
    """An export format other than json, csv, txt or apgamerecord."""


class LogWriteError(RefereeError, OSError):
    """The log cannot be written now (disk full, read-only, I/O error) and the write cannot wait
    (a new match needs its id from the file)."""

    code = "log_write_failed"


def write_fault(exc: sqlite3.Error) -> str:
    """What a failed write means for the people at the table, in a few words."""
    text = str(exc).lower()
    if "full" in text:
        return "disk full"
    if "readonly" in text or "read-only" in text:
        return "the file is read-only"
    if "i/o" in text:
        return "disk I/O error"
    if "locked" in text or "busy" in text:
        return "the file is locked by another program"
    return str(exc)


@dataclass
class _Pending:
    """A write kept in memory while the file cannot take it: an event or a match's end."""

    match_id: int
    seq: int  # 0 for a match's end
    time: str
    type: str
    payload_json: str
    position_json: str | None = None
    jpeg: bytes | None = None
    result_json: str | None = None  # a match's end
    record: EventRecord | None = field(default=None, repr=False)


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def default_db_path() -> Path:
    """`$XDG_DATA_HOME/tabletop-referee/referee.sqlite` (or ~/.local/share/...)."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "tabletop-referee" / "referee.sqlite"


@dataclass(frozen=True)
class MatchRecord:
    id: int
    game: str
    variant: str
    players: tuple[str, ...]
    source: str | None
    started_at: str
    ended_at: str | None
    result: Mapping[str, Any] | None
    start_position: Mapping[str, Any] | None
    events: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "game": self.game,
            "variant": self.variant,
            "players": list(self.players),
            "source": self.source,
            "started_at": self.started_at,
            "ended_at": self.ended_at,
            "result": self.result,
            "events": self.events,
        }


@dataclass(frozen=True)
class EventRecord:
    match_id: int
    seq: int
    time: str
    type: str
    payload: Mapping[str, Any]
    position: Mapping[str, Any] | None
    has_snapshot: bool = False

    def to_json(self) -> dict[str, Any]:
        out = {"seq": self.seq, "time": self.time, **self.payload, "type": self.type}
        out["snapshot"] = self.has_snapshot
        return out


class MatchLog:
    """Thread-safe access to one log file. Writers commit each event at once."""

    def __init__(self, path: str | Path, *, read_only: bool = False) -> None:
        """Open (or create) the log at `path`; `read_only` opens an existing file for reading
        only (the history commands: a missing file is then an error, not a new log). Raises
        `MatchLogError` with a one-line reason: missing, not a referee log, read-only, ..."""
        self.path = Path(path)
        try:
            if read_only:
                if not self.path.is_file():
                    raise MatchLogError(f"no match log at {self.path} (nothing has been "
                                        "refereed with this --db yet?)")
                self._db = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True,
                                           check_same_thread=False, isolation_level=None)
            else:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._db = sqlite3.connect(str(self.path), check_same_thread=False,
                                           isolation_level=None)
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=FULL")
                self._db.execute("PRAGMA foreign_keys=ON")
                self._db.executescript(_SCHEMA)
                self._db.execute(
                    "INSERT OR IGNORE INTO meta(key, value) VALUES ('schema', ?)",
                    (str(SCHEMA_VERSION),))
            row = self._db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
        except sqlite3.DatabaseError as exc:
            reason = str(exc)
            if "not a database" in reason or "malformed" in reason or "no such table" in reason:
                reason = f"not a referee match log, or damaged ({exc})"
            elif "readonly" in reason:
                reason = "the file is read-only (the referee needs to write it)"
            raise MatchLogError(f"cannot open the match log {self.path}: {reason}") from exc
        except OSError as exc:
            raise MatchLogError(
                f"cannot open the match log {self.path}: {exc.strerror or exc}") from exc
        if row is None or not str(row[0]).isdigit() or int(row[0]) > SCHEMA_VERSION:
            raise MatchLogError(
                f"{self.path} was written by a newer referee (schema {row and row[0]})"
            )
        self._lock = threading.RLock()
        self._pending: list[_Pending] = []
        self.fault: str | None = None  # why the file cannot be written now, None when it can

    # -- write faults ------------------------------------------------------------------------
    @property
    def waiting(self) -> int:
        """How many writes are kept in memory, waiting for the file to take them."""
        return len(self._pending)

    def status(self) -> dict[str, Any]:
        """`{"ok", "waiting", "message"}` for the page: is every event on disk?"""
        with self._lock:
            if self.fault is None and not self._pending:
                return {"ok": True, "waiting": 0, "message": None}
            events = sum(1 for p in self._pending if p.seq)
            return {"ok": False, "waiting": events,
                    "message": f"the match log cannot be written: {self.fault} \u2014 "
                               f"{events} event{'s' if events != 1 else ''} waiting"}

    def retry(self) -> bool:
        """Write what is waiting, in order; True when nothing is left waiting."""
        with self._lock:
            while self._pending:
                item = self._pending[0]
                try:
                    self._write(item)
                except sqlite3.Error as exc:
                    self.fault = write_fault(exc)
                    return False
                self._pending.pop(0)
            self.fault = None
            return True

    def _write(self, item: _Pending) -> None:
        """One pending write in its own transaction (rolled back whole if it fails)."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            if item.result_json is not None:
                self._db.execute(
                    "UPDATE matches SET ended_at=?, result=? WHERE id=? AND ended_at IS NULL",
                    (item.time, item.result_json, item.match_id))
            else:
                self._db.execute(
                    "INSERT INTO events(match_id, seq, time, type, payload, position)"
                    " VALUES (?, ?, ?, ?, ?, ?)",
                    (item.match_id, item.seq, item.time, item.type, item.payload_json,
                     item.position_json))
                if item.jpeg:
                    self._db.execute(
                        "INSERT INTO snapshots(match_id, seq, jpeg) VALUES (?, ?, ?)",
                        (item.match_id, item.seq, sqlite3.Binary(item.jpeg)))
            self._db.execute("COMMIT")
        except BaseException:
            if self._db.in_transaction:  # SQLite may have rolled back already (disk full)
                with contextlib.suppress(sqlite3.Error):
                    self._db.execute("ROLLBACK")
            raise

    def _keep(self, item: _Pending) -> None:
        """Write `item` now, or keep it (after whatever already waits) when the file cannot."""
        if self._pending and not self.retry():
            self._pending.append(item)
            return
        try:
            self._write(item)
        except sqlite3.Error as exc:
            self.fault = write_fault(exc)
            self._pending.append(item)

    def _next_seq(self, match_id: int) -> int:
        waiting = [p.seq for p in self._pending if p.match_id == match_id and p.seq]
        if waiting:
            return waiting[-1] + 1
        (last,) = self._db.execute(
            "SELECT COALESCE(MAX(seq), 0) FROM events WHERE match_id=?", (match_id,)
        ).fetchone()
        return int(last) + 1

    # -- writing ---------------------------------------------------------------------------
    def new_match(
        self,
        game: str,
        players: Sequence[str],
        *,
        variant: str = "standard",
        source: str | None = None,
        start_position: Mapping[str, Any] | None = None,
    ) -> int:
        with self._lock:
            if not self.retry():
                raise LogWriteError(f"cannot start a new match: {self.status()['message']}")
            try:
                cur = self._db.execute(
                    "INSERT INTO matches(game, variant, players, source, started_at,"
                    " start_position) VALUES (?, ?, ?, ?, ?, ?)",
                    (
                        game,
                        variant,
                        json.dumps(list(players)),
                        source,
                        now_iso(),
                        json.dumps(start_position) if start_position is not None else None,
                    ),
                )
            except sqlite3.Error as exc:
                raise LogWriteError(
                    f"cannot start a new match: the match log cannot be written: "
                    f"{write_fault(exc)}") from exc
            return int(cur.lastrowid or 0)

    def append(
        self,
        match_id: int,
        event: Mapping[str, Any],
        *,
        position: Mapping[str, Any] | None = None,
        snapshot_jpeg: bytes | None = None,
    ) -> EventRecord:
        """Commit one event (its dict must have a "type"); returns it with its sequence number.

        When the file cannot be written (disk full, read-only) the event is kept in memory, after
        any others already waiting, and written with them, in order, by a later `append` or
        `retry`; `status()` says so meanwhile. Nothing is lost while the process runs.
        """
        if "type" not in event:
            raise ValueError(f"an event needs a 'type': {event!r}")
        payload = {k: v for k, v in event.items() if k not in ("type", "seq", "time")}
        payload_json = json.dumps(payload)
        position_json = json.dumps(position) if position is not None else None
        time = now_iso()
        with self._lock:
            self._require(match_id)
            seq = self._next_seq(match_id)
            record = EventRecord(
                match_id, seq, time, str(event["type"]), json.loads(payload_json),
                json.loads(position_json) if position_json is not None else None,
                bool(snapshot_jpeg))
            self._keep(_Pending(match_id, seq, time, str(event["type"]), payload_json,
                                position_json, snapshot_jpeg or None, record=record))
        return record

    def end_match(self, match_id: int, result: Mapping[str, Any]) -> None:
        with self._lock:
            self._require(match_id)
            self._keep(_Pending(match_id, 0, now_iso(), "", "", result_json=json.dumps(result)))

    # -- reading ---------------------------------------------------------------------------
    def _require(self, match_id: int) -> None:
        if not isinstance(match_id, int) or not -(2**63) <= match_id < 2**63:
            raise UnknownMatchError(match_id)  # SQLite's ids are 64-bit: no such match
        row = self._db.execute("SELECT 1 FROM matches WHERE id=?", (match_id,)).fetchone()
        if row is None:
            raise UnknownMatchError(match_id)

    def _match_from_row(self, row: Sequence[Any]) -> MatchRecord:
        return MatchRecord(
            id=int(row[0]),
            game=row[1],
            variant=row[2],
            players=tuple(json.loads(row[3])),
            source=row[4],
            started_at=row[5],
            ended_at=row[6],
            result=json.loads(row[7]) if row[7] else None,
            start_position=json.loads(row[8]) if row[8] else None,
            events=int(row[9]),
        )

    _MATCH_COLUMNS = (
        "m.id, m.game, m.variant, m.players, m.source, m.started_at, m.ended_at, m.result,"
        " m.start_position, (SELECT COUNT(*) FROM events e WHERE e.match_id=m.id)"
    )

    def list_matches(self) -> list[MatchRecord]:
        with self._lock:
            rows = self._db.execute(
                f"SELECT {self._MATCH_COLUMNS} FROM matches m ORDER BY m.id DESC"
            ).fetchall()
        return [self._match_from_row(r) for r in rows]

    def match(self, match_id: int) -> MatchRecord:
        with self._lock:
            self._require(match_id)
            row = self._db.execute(
                f"SELECT {self._MATCH_COLUMNS} FROM matches m WHERE m.id=?", (match_id,)
            ).fetchone()
        if row is None:
            raise UnknownMatchError(match_id)
        return self._match_from_row(row)

    def open_match(self, game: str | None = None) -> MatchRecord | None:
        """The most recent match that has not ended (to resume after a crash)."""
        query = f"SELECT {self._MATCH_COLUMNS} FROM matches m WHERE m.ended_at IS NULL"
        args: tuple[Any, ...] = ()
        if game is not None:
            query += " AND m.game=?"
            args = (game,)
        with self._lock:
            row = self._db.execute(query + " ORDER BY m.id DESC LIMIT 1", args).fetchone()
        return self._match_from_row(row) if row else None

    def events(
        self, match_id: int, *, after_seq: int = 0, last: int | None = None
    ) -> list[EventRecord]:
        """The match's events in order (after `after_seq`; only the `last` n when given)."""
        query = (
            "SELECT e.seq, e.time, e.type, e.payload, e.position,"
            " EXISTS(SELECT 1 FROM snapshots s WHERE s.match_id=e.match_id AND s.seq=e.seq)"
            " FROM events e WHERE e.match_id=? AND e.seq>? ORDER BY e.seq"
        )
        args: tuple[Any, ...] = (match_id, after_seq)
        if last is not None:
            query = f"SELECT * FROM ({query} DESC LIMIT ?) ORDER BY 1"
            args += (last,)
        with self._lock:
            self._require(match_id)
            rows = self._db.execute(query, args).fetchall()
            waiting = [p.record for p in self._pending
                       if p.match_id == match_id and p.record is not None and p.seq > after_seq]
        out = [
            EventRecord(
                match_id,
                int(r[0]),
                r[1],
                r[2],
                json.loads(r[3]),
                json.loads(r[4]) if r[4] else None,
                bool(r[5]),
            )
            for r in rows
        ] + waiting  # kept in memory while the file is full: shown as if written
        return out[-last:] if last is not None and last > 0 else out

    def snapshot(self, match_id: int, seq: int) -> bytes | None:
        with self._lock:
            self._require(match_id)
            if not -(2**63) <= seq < 2**63:
                return None
            for item in self._pending:
                if item.match_id == match_id and item.seq == seq and item.jpeg:
                    return item.jpeg
            row = self._db.execute(
                "SELECT jpeg FROM snapshots WHERE match_id=? AND seq=?", (match_id, seq)
            ).fetchone()
        return bytes(row[0]) if row else None

    def close(self) -> None:
        """Write what waits if the file takes it now, then close; says what could not be."""
        with self._lock:
            if self._pending and not self.retry():
                print(f"referee: closing with {self.status()['message']}: they are lost",
                      file=sys.stderr, flush=True)
            self._db.close()

    # -- export ----------------------------------------------------------------------------
    def export(self, match_id: int, fmt: str) -> tuple[str, bytes]:
        """(mimetype, body) of one match as json, csv or a readable txt record."""
        check_export_format(fmt)
        return export_record(self.match(match_id), self.events(match_id), fmt)


def check_export_format(fmt: str) -> None:
    if fmt not in EXPORT_FORMATS:
        raise ExportFormatError(
            f"unknown export format {fmt!r}: use one of {', '.join(EXPORT_FORMATS)}"
        )


def export_record(record: MatchRecord, events: Sequence[EventRecord],
                  fmt: str) -> tuple[str, bytes]:
    """(mimetype, body) of a match and its events as json, csv or a readable txt record (the
    table's log and the club database export through here alike)."""
    check_export_format(fmt)
    if fmt == "json":
        body = json.dumps(
            {
                "match": record.to_json(),
                "start_position": record.start_position,
                "events": [e.to_json() | {"position": e.position} for e in events],
            },
            indent=1,
        )
    elif fmt == "csv":
        body = _events_csv(events)
    elif fmt == "apgamerecord":
        from referee.apgamerecord import game_record

        body = json.dumps(game_record(record, events), indent=1)
    else:
        body = "\n".join(game_record_lines(record, events)) + "\n"
    return EXPORT_FORMATS[fmt], body.encode("utf-8")


_CSV_FIELDS = ("seq", "time", "type", "colour", "x", "y", "move", "outcome", "removed", "text")


def _events_csv(events: Sequence[EventRecord]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(_CSV_FIELDS)
    for e in events:
        p = e.payload
        move = p.get("move")
        writer.writerow(
            [
                e.seq,
                e.time,
                e.type,
                p.get("colour", ""),
                p.get("x", ""),
                p.get("y", ""),
                move_text(move) if isinstance(move, Mapping) else "",
                p.get("outcome", ""),
                json.dumps(p["removed"]) if "removed" in p else "",
                p.get("text", ""),
            ]
        )
    return out.getvalue()


def game_record_lines(record: MatchRecord, events: Sequence[EventRecord]) -> Iterator[str]:
    """A readable game record, one line per move, for club archives."""
    game = find_game(record.game) or Game()
    yield f"Match {record.id}: {record.game} ({record.variant})"
    yield f"Players: {', '.join(record.players)}"
    yield f"Started: {record.started_at}"
    number = 0
    for e in events:
        p = e.payload
        if e.type == "move":
            number += 1
            yield game.record_line(number, p)
        elif e.type in ("answer", "correction", "undo", "draw"):
            yield f"     [{e.type}] {p.get('text', '')}"
        elif e.type == "end":
            yield f"Result: {p.get('text') or (p.get('winner') or 'draw')} ({p.get('reason', '')})"
    if record.ended_at:
        yield f"Ended: {record.ended_at}"
