"""Reading the club database: the archive, one match, the tables' live state, a round's standings.

A club match is shown as a table's `MatchRecord` (its `id` the club's own, unique across
tables) plus its `table`, so `referee matches --club --json` prints the same JSON as `referee
matches --json` with a `table` key, and the club's exports are the table's (one `export_record`).
JSON columns are read as the text the referee wrote (`::text`), so key order survives.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date
from typing import Any

from referee.club import schema
from referee.club.errors import ClubConflictError, ClubInputError, ClubNotFoundError
from referee.club.url import connect, redact
from referee.log import EventRecord, MatchRecord, check_export_format, export_record

LIVE_EVENTS = 20  # as a table's /api/state
#: event types that carry a verdict the club page shows under a table
VERDICT_TYPES = ("move", "illegal", "end", "warning", "question", "answer", "correction", "undo",
                 "start", "resumed", "resolved", "draw")
RESULT_FILTERS = ("in_progress", "finished", "draw", "abandoned", "won")
MAX_ROUND_NAME = 80
MAX_LIST = 500

_MATCH_COLUMNS = """m.id, m.game, m.variant, m.players::text, m.source, m.started_at, m.ended_at,
    m.result::text, m.start_position::text,
    (SELECT COUNT(*) FROM events e WHERE e.match_id = m.id), m.table_name,
    (SELECT COALESCE(json_object_agg(p.colour, p.name) FILTER (WHERE p.name IS NOT NULL),
                     '{}'::json)::text
     FROM match_players p WHERE p.match_id = m.id)"""


def _loads(text: str | None) -> Any:
    return json.loads(text) if text is not None else None


@dataclass(frozen=True)
class ClubMatch:
    """A match in the club: the table's record, the table's name and the players' names."""

    record: MatchRecord
    table: str
    names: Mapping[str, str]

    def to_json(self) -> dict[str, Any]:
        """`referee matches --json`'s object plus `table`."""
        return self.record.to_json() | {"table": self.table}

    def to_api(self) -> dict[str, Any]:
        return self.to_json() | {"names": dict(self.names)}


def _match_from_row(row: Sequence[Any]) -> ClubMatch:
    record = MatchRecord(
        id=int(row[0]), game=row[1], variant=row[2], players=tuple(json.loads(row[3])),
        source=row[4], started_at=row[5], ended_at=row[6], result=_loads(row[7]),
        start_position=_loads(row[8]), events=int(row[9]))
    return ClubMatch(record, row[10], json.loads(row[11]))


@dataclass(frozen=True)
class MatchFilter:
    """The archive's filters; every one optional."""

    table: str | None = None
    player: str | None = None  # part of a name, any case
    game: str | None = None
    day: date | None = None  # the UTC day the match started
    result: str | None = None  # one of RESULT_FILTERS
    round_id: int | None = None

    def where(self) -> tuple[str, list[Any]]:
        clauses: list[str] = []
        args: list[Any] = []
        if self.table:
            clauses.append("m.table_name = %s")
            args.append(self.table)
        if self.game:
            clauses.append("m.game = %s")
            args.append(self.game)
        if self.player:
            clauses.append("EXISTS (SELECT 1 FROM match_players p WHERE p.match_id = m.id"
                           " AND lower(p.name) LIKE %s)")
            args.append("%" + _like_escape(self.player.lower()) + "%")
        if self.day is not None:
            clauses.append("m.started >= %s::date AT TIME ZONE 'UTC'"
                           " AND m.started < (%s::date + 1) AT TIME ZONE 'UTC'")
            args += [self.day, self.day]
        if self.result:
            if self.result not in RESULT_FILTERS:
                raise ClubInputError(f"unknown result filter {self.result!r}: use one of "
                                f"{', '.join(RESULT_FILTERS)}")
            clauses.append({
                "in_progress": "m.ended_at IS NULL",
                "finished": "m.ended_at IS NOT NULL",
                "draw": "m.ended_at IS NOT NULL AND (m.result->>'winner') IS NULL"
                        " AND COALESCE(m.result->>'reason', '') <> 'abandoned'",
                "abandoned": "m.result->>'reason' = 'abandoned'",
                "won": "(m.result->>'winner') IS NOT NULL",
            }[self.result])
        if self.round_id is not None:
            clauses.append(_IN_ROUND)
            args += [self.round_id, self.round_id]
        return (" WHERE " + " AND ".join(clauses)) if clauses else "", args


#: a match belongs to the round whose start is the latest at or before its own start
_IN_ROUND = ("m.started >= (SELECT r.started FROM rounds r WHERE r.id = %s) AND m.started <"
             " COALESCE((SELECT MIN(n.started) FROM rounds n WHERE n.started >"
             " (SELECT r.started FROM rounds r WHERE r.id = %s)), 'infinity')")


def _like_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


class ClubStore:
    """Thread-safe reads (and the organiser's few writes) on the club database at `url`."""

    def __init__(self, url: str, *, connections: int = 4) -> None:
        self.url = url
        self.shown_url = redact(url)
        self._free: list[Any] = []
        self._lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(connections)
        with self._conn() as conn:
            schema.require(conn)

    @contextmanager
    def _conn(self) -> Iterator[Any]:
        self._slots.acquire()
        try:
            with self._lock:
                conn = self._free.pop() if self._free else None
            if conn is None or conn.closed or conn.broken:
                conn = connect(self.url, autocommit=True)
            try:
                yield conn
            except BaseException:
                if conn.broken:
                    conn.close()
                raise
            if not conn.closed:
                with self._lock:
                    self._free.append(conn)
        finally:
            self._slots.release()

    def close(self) -> None:
        with self._lock:
            for conn in self._free:
                conn.close()
            self._free.clear()

    def _all(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._conn() as conn:
            return conn.execute(sql, args).fetchall()

    # -- the archive -----------------------------------------------------------------------------
    def list_matches(self, where: MatchFilter = MatchFilter(), *,
                     limit: int = MAX_LIST) -> list[ClubMatch]:
        clause, args = where.where()
        rows = self._all(f"SELECT {_MATCH_COLUMNS} FROM matches m{clause}"
                         " ORDER BY m.started DESC, m.id DESC LIMIT %s", [*args, limit])
        return [_match_from_row(r) for r in rows]

    def match(self, match_id: int) -> ClubMatch:
        rows = self._all(f"SELECT {_MATCH_COLUMNS} FROM matches m WHERE m.id = %s", (match_id,))
        if not rows:
            raise ClubNotFoundError(f"no match {match_id} in the club database")
        return _match_from_row(rows[0])

    def events(self, match_id: int, *, last: int | None = None) -> list[EventRecord]:
        query = ("SELECT e.seq, e.time, e.type, e.payload::text, p.position::text,"
                 " EXISTS (SELECT 1 FROM snapshots s WHERE s.match_id = e.match_id"
                 " AND s.seq = e.seq)"
                 " FROM events e LEFT JOIN positions p ON p.match_id = e.match_id"
                 " AND p.seq = e.seq WHERE e.match_id = %s ORDER BY e.seq")
        args: list[Any] = [match_id]
        if last is not None:
            query = f"SELECT * FROM ({query} DESC LIMIT %s) t ORDER BY 1"
            args.append(last)
        return [EventRecord(match_id, int(r[0]), r[1], r[2], json.loads(r[3]), _loads(r[4]),
                            bool(r[5])) for r in self._all(query, args)]

    def snapshot(self, match_id: int, seq: int) -> bytes | None:
        rows = self._all("SELECT jpeg FROM snapshots WHERE match_id = %s AND seq = %s",
                         (match_id, seq))
        return bytes(rows[0][0]) if rows else None

    def export(self, match_id: int, fmt: str) -> tuple[str, bytes]:
        check_export_format(fmt)
        return export_record(self.match(match_id).record, self.events(match_id), fmt)

    # -- live ----------------------------------------------------------------------------------
    def tables_state(self) -> list[dict[str, Any]]:
        """Every table's latest match: its position, last verdict and last events (three
        queries, whatever the number of tables)."""
        matches = self._all(
            f"SELECT DISTINCT ON (m.table_name) {_MATCH_COLUMNS}, t.last_seen, m.local_id"
            " FROM matches m JOIN tables t ON t.name = m.table_name"
            " ORDER BY m.table_name, m.started DESC, m.id DESC")
        ids = [int(r[0]) for r in matches]
        events: dict[int, list[EventRecord]] = {i: [] for i in ids}
        for r in self._all(
                "SELECT e.match_id, e.seq, e.time, e.type, e.payload::text, p.position::text,"
                " EXISTS (SELECT 1 FROM snapshots s WHERE s.match_id = e.match_id"
                " AND s.seq = e.seq)"
                " FROM unnest(%s::bigint[]) AS l(id) CROSS JOIN LATERAL"
                " (SELECT * FROM events e WHERE e.match_id = l.id ORDER BY e.seq DESC"
                " LIMIT %s) e LEFT JOIN positions p ON p.match_id = e.match_id"
                " AND p.seq = e.seq ORDER BY e.match_id, e.seq", (ids, LIVE_EVENTS)):
            events[int(r[0])].append(EventRecord(int(r[0]), int(r[1]), r[2], r[3],
                                                 json.loads(r[4]), _loads(r[5]), bool(r[6])))
        positions = {int(r[0]): json.loads(r[1]) for r in self._all(
            "SELECT l.id, p.position::text FROM unnest(%s::bigint[]) AS l(id) CROSS JOIN LATERAL"
            " (SELECT position FROM positions p WHERE p.match_id = l.id ORDER BY p.seq DESC"
            " LIMIT 1) p", (ids,))}
        return [table_state(_match_from_row(r), events[int(r[0])], positions.get(int(r[0])),
                            last_seen=r[12].isoformat(), local_id=int(r[13])) for r in matches]

    # -- rounds and standings ------------------------------------------------------------------
    def rounds(self) -> list[dict[str, Any]]:
        rows = self._all("SELECT id, name, started FROM rounds ORDER BY started")
        return [{"id": int(r[0]), "name": r[1], "started": r[2].isoformat()} for r in rows]

    def new_round(self, name: str, started: str | None = None) -> dict[str, Any]:
        """A round named `name` from `started` (a date or time PostgreSQL reads, such as
        2026-12-01 or 2026-12-01T10:00:00+00:00; None: now). A start that is not a time is
        `ClubInputError`, a second round at one start `ClubConflictError`."""
        import psycopg

        name = _round_name(name)
        if started is not None and not (isinstance(started, str) and 0 < len(started) <= 64):
            raise ClubInputError(f"a round's start must be a date or time such as 2026-12-01 or "
                                 f"2026-12-01T10:00:00+00:00, got {str(started)[:64]!r}")
        try:
            with self._conn() as conn:
                row = conn.execute(
                    "INSERT INTO rounds (name, started) VALUES (%s,"
                    " COALESCE(%s::timestamptz, now())) RETURNING id, name, started",
                    (name, started)).fetchone()
        except psycopg.errors.UniqueViolation:
            raise ClubConflictError(f"a round already starts at {started or 'this moment'}: "
                                    "rounds are told apart by their start") from None
        except psycopg.errors.DataError as exc:  # not a time PostgreSQL can read
            raise ClubInputError(f"a round's start must be a date or time such as 2026-12-01 "
                                 f"or 2026-12-01T10:00:00+00:00, got {started!r} "
                                 f"({str(exc).splitlines()[0]})") from None
        return {"id": int(row[0]), "name": row[1], "started": row[2].isoformat()}

    def rename_round(self, round_id: int, name: str) -> dict[str, Any]:
        with self._conn() as conn:
            row = conn.execute("UPDATE rounds SET name = %s WHERE id = %s"
                               " RETURNING id, name, started",
                               (_round_name(name), round_id)).fetchone()
        if row is None:
            raise ClubNotFoundError(f"no round {round_id} in the club database")
        return {"id": int(row[0]), "name": row[1], "started": row[2].isoformat()}

    def correct_name(self, match_id: int, colour: str, name: str) -> ClubMatch:
        """The organiser's correction of a player's name in one match (the table's log keeps
        what was typed there)."""
        match = self.match(match_id)
        if colour not in match.record.players:
            raise ClubInputError(f"match {match_id} has no player {colour!r} (its players: "
                            f"{', '.join(match.record.players)})")
        cleaned = name.strip() if isinstance(name, str) else ""
        if not cleaned or len(cleaned) > 60:
            raise ClubInputError("a player's name must be 1 to 60 characters")
        if "\x00" in cleaned:  # PostgreSQL's text cannot hold it
            raise ClubInputError("a player's name must not contain a NUL character")
        with self._conn() as conn:
            conn.execute(
                "INSERT INTO match_players (match_id, colour, name, corrected_at)"
                " VALUES (%s, %s, %s, now()) ON CONFLICT (match_id, colour) DO UPDATE"
                " SET name = EXCLUDED.name, corrected_at = now()", (match_id, colour, cleaned))
        return self.match(match_id)

    def standings(self, round_id: int | None = None) -> list[dict[str, Any]]:
        """Wins, draws and losses per player over the round's finished matches (abandoned ones
        left out); a player without a name is `TABLE colour`. Best first."""
        where = MatchFilter(round_id=round_id, result="finished")
        return standings_of(self.list_matches(where, limit=100_000))


def _round_name(name: object) -> str:
    if not isinstance(name, str) or not name.strip() or len(name.strip()) > MAX_ROUND_NAME:
        raise ClubInputError(f"a round's name must be 1 to {MAX_ROUND_NAME} characters")
    if "\x00" in name:  # PostgreSQL's text cannot hold it
        raise ClubInputError("a round's name must not contain a NUL character")
    return name.strip()


def player_label(match: ClubMatch, colour: str) -> str:
    return match.names.get(colour) or f"{match.table} {colour}"


def standings_of(matches: Sequence[ClubMatch]) -> list[dict[str, Any]]:
    rows: dict[str, dict[str, Any]] = {}
    for m in matches:
        result = m.record.result or {}
        if m.record.ended_at is None or result.get("reason") == "abandoned":
            continue
        winner = result.get("winner")
        for colour in m.record.players:
            name = player_label(m, colour)
            row = rows.setdefault(name, {"player": name, "played": 0, "wins": 0, "draws": 0,
                                         "losses": 0})
            row["played"] += 1
            if winner is None:
                row["draws"] += 1
            elif colour in str(winner).split("+"):  # a team "G+B" wins for both partners
                row["wins"] += 1
            else:
                row["losses"] += 1
    for row in rows.values():
        row["points"] = row["wins"] + 0.5 * row["draws"]
    return sorted(rows.values(), key=lambda r: (-r["points"], -r["wins"], r["player"]))


STANDINGS_CSV_FIELDS = ("rank", "player", "played", "wins", "draws", "losses", "points")


def standings_csv(rows: Sequence[Mapping[str, Any]]) -> str:
    import csv
    import io

    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(STANDINGS_CSV_FIELDS)
    for rank, row in enumerate(rows, 1):
        writer.writerow([rank, row["player"], row["played"], row["wins"], row["draws"],
                         row["losses"], f"{row['points']:g}"])
    return out.getvalue()


def table_state(match: ClubMatch, events: Sequence[EventRecord], position: Any, *,
                last_seen: str, local_id: int) -> dict[str, Any]:
    """One table as the club page shows it (the fields it shares with the table's own
    /api/state have the same names and values: match_id is the table's, events alike)."""
    record = match.record
    verdict = next((e for e in reversed(events) if e.type in VERDICT_TYPES and
                    e.payload.get("text")), None)
    shown = position.get("state") if isinstance(position, Mapping) and \
        isinstance(position.get("state"), Mapping) else position
    return {
        "table": match.table,
        "match_id": local_id,
        "club_match_id": record.id,
        "game": record.game,
        "variant": record.variant,
        "players": list(record.players),
        "names": dict(match.names),
        "started_at": record.started_at,
        "ended_at": record.ended_at,
        "result": record.result,
        "to_move": shown.get("to_move") if isinstance(shown, Mapping) else None,
        "winner": (position or {}).get("winner") if isinstance(position, Mapping) else None,
        "position": shown,
        "verdict": None if verdict is None else {"seq": verdict.seq, "type": verdict.type,
                                                 "text": verdict.payload.get("text")},
        "events": [e.to_json() for e in events],
        "last_seen": last_seen,
    }
