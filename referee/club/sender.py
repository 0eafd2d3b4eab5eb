"""The background sender: every committed event of the match log, copied to the club database.

The outbox is the match log itself. A table `club_sent` in the same SQLite file keeps, per club
and match, the last sequence number the club has committed (the sent-up-to marker), so after a
restart or a power cut the sender starts where it stopped, and it can say how many events are
waiting even while the club is away. The club's own copy is the authority on where to resume:
each batch starts after the highest sequence the club already holds for that match, and every
insert is `ON CONFLICT DO NOTHING` on (referee id, match, seq), so a batch sent twice (the
process killed between the club's commit and the marker) lands once.

One thread, its own SQLite connection and its own PostgreSQL connection: the match thread never
waits for the network. While the club is away the sender retries with exponential backoff
(0.5 s doubling to 30 s); a refused password is said once and retried slowly, the referee goes on
refereeing either way. Each batch is one PostgreSQL transaction and ends with a NOTIFY that the
club page listens to.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import sys
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from referee.club import schema
from referee.club.errors import ClubAuthError, ClubError, ClubSchemaError
from referee.club.url import check_url, club_key, connect, redact, scrub

BATCH_EVENTS = 200
MIN_BACKOFF_S = 0.5
MAX_BACKOFF_S = 30.0
POLL_S = 1.0  # without a wake-up (a committed event), the log is looked at this often
TABLE_SEEN_EVERY_S = 5.0  # the table's `last_seen` in the club is refreshed this often
REFEREE_ID_KEY = "club_referee_id"

_MARKER_SCHEMA = """
CREATE TABLE IF NOT EXISTS club_sent (
    club TEXT NOT NULL,
    match_id INTEGER NOT NULL,
    seq INTEGER NOT NULL DEFAULT 0,
    ended INTEGER NOT NULL DEFAULT 0,
    done INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (club, match_id)
);
"""

_PENDING = """
SELECT m.id, m.game, m.variant, m.players, m.source, m.started_at, m.ended_at, m.result,
       m.start_position, COALESCE(c.seq, 0), COALESCE(c.ended, 0),
       (SELECT COALESCE(MAX(e.seq), 0) FROM events e WHERE e.match_id = m.id),
       c.match_id IS NOT NULL
FROM matches m LEFT JOIN club_sent c ON c.match_id = m.id AND c.club = ?
WHERE COALESCE(c.done, 0) = 0
ORDER BY m.id
"""

_EVENTS = """
SELECT e.seq, e.time, e.type, e.payload, e.position, s.jpeg
FROM events e LEFT JOIN snapshots s ON s.match_id = e.match_id AND s.seq = e.seq
WHERE e.match_id = ? AND e.seq > ? ORDER BY e.seq LIMIT ?
"""


def referee_id(db: sqlite3.Connection) -> str:
    """This log's referee id (made once, kept in the log's `meta` table)."""
    db.execute("INSERT OR IGNORE INTO meta(key, value) VALUES (?, ?)",
               (REFEREE_ID_KEY, uuid.uuid4().hex))
    row = db.execute("SELECT value FROM meta WHERE key = ?", (REFEREE_ID_KEY,)).fetchone()
    return str(row[0])


def parse_time(text: str) -> datetime:
    return datetime.fromisoformat(text)


class ClubSender:
    """Copies the match log at `db_path` to the club database at `url` as table `table`."""

    def __init__(
        self,
        db_path: str | Path,
        url: str,
        table: str,
        *,
        batch_events: int = BATCH_EVENTS,
        min_backoff_s: float = MIN_BACKOFF_S,
        max_backoff_s: float = MAX_BACKOFF_S,
        poll_s: float = POLL_S,
        snapshot_cap_bytes: int = schema.SNAPSHOT_CAP_BYTES,
        say: Callable[[str], None] | None = None,
        on_change: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        check_url(url)
        if not table or not table.strip():
            raise ClubError("a club table needs a name: give --table NAME")
        self.url = url
        self.shown_url = redact(url)
        self.table = table.strip()
        self.batch_events = batch_events
        self.min_backoff_s = min_backoff_s
        self.max_backoff_s = max_backoff_s
        self.poll_s = poll_s
        self.snapshot_cap_bytes = snapshot_cap_bytes
        self._say = say or (lambda text: print(text, file=sys.stderr, flush=True))
        self._on_change = on_change
        self._club = club_key(url)
        self._db = sqlite3.connect(str(db_path), check_same_thread=False, isolation_level=None,
                                   timeout=30.0)
        self._db.execute("PRAGMA busy_timeout=30000")
        # The marker may lag after a power cut (WAL, NORMAL: the last commits may be lost, never
        # the file): the club's own copy says where to resume, so no fsync per batch is needed.
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_MARKER_SCHEMA)
        self.referee_id = referee_id(self._db)
        self._db_lock = threading.Lock()
        self._pg: Any = None
        #: local match id -> (club id, club's last seq, end sent) as this connection left them
        self._known: dict[int, tuple[int, int, bool]] = {}
        self._table_seen_s = 0.0
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._status: dict[str, Any] = {"state": "starting", "waiting": self._count_waiting(),
                                        "sent": 0, "error": None, "url": self.shown_url,
                                        "table": self.table}
        self.sent_events = 0

    # -- control ---------------------------------------------------------------------------------
    def start(self) -> ClubSender:
        if self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(target=self._run, name="club-sender", daemon=True)
            self._thread.start()
        return self

    def wake(self) -> None:
        """Something was committed to the log: look at it now rather than at the next poll."""
        self._wake.set()

    def stop(self, timeout_s: float = 5.0) -> None:
        """Stop the thread; while the club is connected, what the log holds by now is sent first
        (for at most `timeout_s`), so a clean stop leaves nothing waiting."""
        self._stop.set()
        self._wake.set()
        thread = self._thread
        if thread is not None:
            thread.join(timeout_s)
            self._thread = None
        if thread is not None and not thread.is_alive() and self._pg is not None:
            self._flush(time.monotonic() + timeout_s)
        self._close_pg()
        with self._db_lock:
            self._db.close()

    def status(self) -> dict[str, Any]:
        """{"state": connected|sending|waiting_for_club|refused|no_schema|starting, "waiting": n,
        "text": "club: 3 events waiting", ...}; never holds the password."""
        with self._lock:
            out = dict(self._status)
        out["text"] = _status_text(out)
        return out

    def drain(self, timeout_s: float) -> bool:
        """Wait until nothing is waiting (for tests and benchmarks); True when drained."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            self.wake()
            if self.status()["state"] == "connected" and self._count_waiting() == 0:
                return True
            time.sleep(0.05)
        return False

    def _flush(self, deadline: float) -> None:
        """Send what the log holds; a connection found dead (an idle one cut by a firewall or a
        NAT) is replaced once."""
        for attempt in (1, 2):
            try:
                if self._pg is None:
                    self._pg = connect(self.url, autocommit=True,
                                       timeout_s=max(1.0, deadline - time.monotonic()))
                while time.monotonic() < deadline and self._send_some(final=True):
                    pass
                self._set(waiting=self._count_waiting())
                return
            except Exception as exc:  # noqa: BLE001 - stopping: the log keeps what is left
                self._close_pg()
                if attempt == 2 or time.monotonic() >= deadline:
                    self._say(f"club: stopped with events unsent ({scrub(str(exc), self.url)});"
                              " they are sent at the next start")

    # -- the thread --------------------------------------------------------------------------------
    def _set(self, **changes: Any) -> None:
        with self._lock:
            before = dict(self._status)
            self._status.update(changes)
            after = dict(self._status)
        if after != before and self._on_change is not None:
            # a page listener must never stop the sender
            with contextlib.suppress(Exception):
                self._on_change(self.status())

    def _run(self) -> None:
        backoff = self.min_backoff_s
        while not self._stop.is_set():
            self._wake.clear()
            try:
                if self._pg is None or self._pg.closed:
                    self._pg = connect(self.url, autocommit=True)
                    schema.require(self._pg)
                    self._say(f"club: connected to {self.shown_url} as table {self.table!r}")
                    self._set(state="connected", error=None)
                more = self._send_some()
                backoff = self.min_backoff_s
                self._set(state="connected", error=None, waiting=self._count_waiting())
                if not more:
                    self._wake.wait(self.poll_s)
                continue
            except ClubAuthError as exc:
                self._fail("refused", str(exc))
                backoff = self.max_backoff_s
            except ClubSchemaError as exc:
                self._fail("no_schema", str(exc))
                backoff = self.max_backoff_s
            except ClubError as exc:
                self._fail("waiting_for_club", str(exc))
            except Exception as exc:  # noqa: BLE001 - psycopg's errors mid-send: connection lost
                self._fail("waiting_for_club",
                           f"lost the club database {self.shown_url}: "
                           f"{scrub(str(exc).strip() or type(exc).__name__, self.url)}")
            self._backoff(backoff)
            backoff = min(backoff * 2, self.max_backoff_s)

    def _backoff(self, wait_s: float) -> None:
        """Wait `wait_s`, recounting what is waiting whenever the log gets an event."""
        deadline = time.monotonic() + wait_s
        while not self._stop.is_set():
            left = deadline - time.monotonic()
            if left <= 0:
                return
            if self._wake.wait(left):
                self._wake.clear()
                self._set(waiting=self._count_waiting())

    def _fail(self, state: str, message: str) -> None:
        with self._lock:
            repeated = self._status.get("error") == message
        if not repeated:
            self._say(f"club: {message}; refereeing goes on, the events wait in the log")
        self._close_pg()
        self._set(state=state, error=message, waiting=self._count_waiting())

    def _close_pg(self) -> None:
        if self._pg is not None:
            with contextlib.suppress(Exception):  # closing a dead connection
                self._pg.close()
            self._pg = None
        self._known.clear()  # a new connection asks the club where each match stands

    # -- the log side --------------------------------------------------------------------------
    def _count_waiting(self) -> int:
        with self._db_lock:
            rows = self._db.execute(_PENDING, (self._club,)).fetchall()
        return sum(max(0, int(r[11]) - int(r[9])) for r in rows)

    def _mark(self, match_id: int, seq: int, ended: bool, done: bool) -> None:
        with self._db_lock:
            self._db.execute(
                "INSERT INTO club_sent(club, match_id, seq, ended, done) VALUES (?, ?, ?, ?, ?)"
                " ON CONFLICT(club, match_id) DO UPDATE SET seq=excluded.seq,"
                " ended=excluded.ended, done=excluded.done",
                (self._club, match_id, seq, int(ended), int(done)))

    # -- the club side --------------------------------------------------------------------------
    def _send_some(self, final: bool = False) -> bool:
        """One pass over the matches with something unsent; True if a batch was full."""
        with self._db_lock:
            pending = self._db.execute(_PENDING, (self._club,)).fetchall()
        more = False
        for row in pending:
            if self._stop.is_set() and not final:
                return False
            sent_seq, ended_sent, last_seq, marked = int(row[9]), bool(row[10]), int(row[11]), \
                bool(row[12])
            if marked and last_seq <= sent_seq and ended_sent == (row[6] is not None):
                continue
            more |= self._send_match(row, last_seq)
        return more

    def _send_match(self, row: Sequence[Any], last_seq: int) -> bool:
        local_id = int(row[0])
        ended = row[6] is not None
        pg = self._pg
        known = self._known.get(local_id)
        with pg.transaction():
            if known is None or known[2] != ended:
                match_pk, club_seq = self._upsert_match(pg, row)
            else:  # this connection sent the last batch: the club holds up to its end
                match_pk, club_seq = known[0], known[1]
                if time.monotonic() - self._table_seen_s > TABLE_SEEN_EVERY_S:
                    self._upsert_table(pg)
            with self._db_lock:
                events = self._db.execute(_EVENTS, (local_id, club_seq,
                                                    self.batch_events)).fetchall()
            if events:
                self._insert_events(pg, match_pk, events, json.loads(row[3]))
            sent_up_to = int(events[-1][0]) if events else int(club_seq)
            pg.execute("SELECT pg_notify(%s, %s)", (schema.NOTIFY_CHANNEL, json.dumps({
                "table": self.table, "match": match_pk, "seq": sent_up_to,
                "time": events[-1][1] if events else None})))
        # committed: the marker follows (a crash before this line only re-sends, never loses)
        self._known[local_id] = (match_pk, sent_up_to, ended)
        self.sent_events += len(events)
        self._mark(local_id, sent_up_to, ended, ended and sent_up_to >= last_seq)
        self._set(sent=self.sent_events)
        return len(events) == self.batch_events

    def _upsert_table(self, pg: Any) -> None:
        pg.execute(
            "INSERT INTO tables (name, referee_id, last_seen) VALUES (%s, %s, now())"
            " ON CONFLICT (name) DO UPDATE SET referee_id = EXCLUDED.referee_id,"
            " last_seen = now()", (self.table, self.referee_id))
        self._table_seen_s = time.monotonic()

    def _upsert_match(self, pg: Any, row: Sequence[Any]) -> tuple[int, int]:
        """The match's row in the club (made, or its end recorded): (club id, the highest
        sequence number the club holds for it)."""
        self._upsert_table(pg)
        (match_pk,) = pg.execute(
            "INSERT INTO matches (referee_id, local_id, table_name, game, variant, players,"
            " source, started_at, started, ended_at, result, start_position)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
            " ON CONFLICT (referee_id, local_id) DO UPDATE SET ended_at = EXCLUDED.ended_at,"
            " result = EXCLUDED.result RETURNING id",
            (self.referee_id, int(row[0]), self.table, row[1], row[2], row[3], row[4], row[5],
             parse_time(row[5]), row[6], row[7], row[8])).fetchone()
        (club_seq,) = pg.execute("SELECT COALESCE(MAX(seq), 0) FROM events WHERE match_id = %s",
                                 (match_pk,)).fetchone()
        return int(match_pk), int(club_seq)

    def _insert_events(self, pg: Any, match_pk: int, events: Sequence[Any],
                       players: Sequence[str]) -> None:
        with pg.cursor() as cur:
            cur.executemany(
                "INSERT INTO events (match_id, seq, time, type, payload)"
                " VALUES (%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                [(match_pk, e[0], e[1], e[2], e[3]) for e in events])
            positioned = [(match_pk, e[0], e[4]) for e in events if e[4] is not None]
            if positioned:
                cur.executemany("INSERT INTO positions (match_id, seq, position)"
                                " VALUES (%s, %s, %s) ON CONFLICT DO NOTHING", positioned)
            shots = [(match_pk, e[0], bytes(e[5])) for e in events
                     if e[5] is not None and len(e[5]) <= self.snapshot_cap_bytes]
            if shots:
                cur.executemany("INSERT INTO snapshots (match_id, seq, jpeg) VALUES (%s, %s, %s)"
                                " ON CONFLICT DO NOTHING", shots)
            for e in events:
                if e[2] == "start":
                    names = json.loads(e[3]).get("names") or {}
                    cur.executemany(
                        "INSERT INTO match_players (match_id, colour, name) VALUES (%s, %s, %s)"
                        " ON CONFLICT DO NOTHING",
                        [(match_pk, colour, _clean_name(names.get(colour)))
                         for colour in players])


def _clean_name(name: object) -> str | None:
    return name.strip() or None if isinstance(name, str) else None


def _status_text(status: dict[str, Any]) -> str:
    waiting = int(status.get("waiting") or 0)
    count = f"{waiting} event{'s' if waiting != 1 else ''} waiting"
    state = status.get("state")
    if state == "connected":
        return "club: all sent" if waiting == 0 else f"club: {count}"
    if state == "refused":
        return f"club: wrong credentials, {count}"
    if state == "no_schema":
        return f"club: database not set up (referee club init), {count}"
    if state == "starting":
        return f"club: connecting, {count}"
    return f"club: offline, {count}"
