"""What the club tests share: a scratch database on the real PostgreSQL, a proxy that can cut it.

The server is the machine's PostgreSQL (`REFEREE_TEST_POSTGRES`, default
postgresql://postgres@127.0.0.1:5432/test). Each test gets its own database
`club_test_<random>`, dropped afterwards, so parallel workers never meet. Without a reachable
server the tests skip saying why; with REFEREE_REQUIRE_POSTGRES=1 (CI) they fail instead.
The shared server is never stopped: "the server goes away" is a `TcpProxy` on a loopback port
that the test closes, or `pg_terminate_backend` on the test database's own connections.
"""

from __future__ import annotations

import os
import secrets
import socket
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest

from referee.club import schema
from referee.club.sender import ClubSender
from referee.club.url import connect
from referee.log import MatchLog

SERVER = os.environ.get("REFEREE_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")


def _server_missing() -> str | None:
    try:
        import psycopg
    except ImportError:
        return "psycopg is not installed (make install)"
    try:
        psycopg.connect(SERVER, connect_timeout=3).close()
    except psycopg.Error as exc:
        return f"no PostgreSQL at {SERVER}: {str(exc).strip().splitlines()[0]}"
    return None


def require_server() -> None:
    missing = _server_missing()
    if missing:
        if os.environ.get("REFEREE_REQUIRE_POSTGRES") == "1":
            pytest.fail(f"club tests need PostgreSQL (REFEREE_REQUIRE_POSTGRES=1) but {missing}")
        pytest.skip(f"club tests skipped: {missing}")


def with_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "/" + name, parts.query, parts.fragment))


def with_port(url: str, port: int) -> str:
    parts = urlsplit(url)
    userinfo = parts.netloc.rsplit("@", 1)[0] + "@" if "@" in parts.netloc else ""
    return urlunsplit((parts.scheme, f"{userinfo}127.0.0.1:{port}", parts.path, parts.query,
                       parts.fragment))


def admin() -> Any:
    import psycopg

    return psycopg.connect(SERVER, autocommit=True)


def terminate_connections(database: str) -> int:
    """Terminate every connection to `database` but ours; the number terminated."""
    with admin() as conn:
        rows = conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = %s AND pid <> pg_backend_pid()", (database,)).fetchall()
    return sum(1 for r in rows if r[0])


def scratch_database() -> Iterator[tuple[str, str]]:
    """(url, database name) of a fresh, empty scratch database; dropped afterwards (the
    `club_db` fixture of conftest.py)."""
    require_server()
    name = f"club_test_{secrets.token_hex(6)}"
    with admin() as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield with_database(SERVER, name), name
    finally:
        with admin() as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def club_rows(url: str) -> dict[tuple[str, int], list[tuple[Any, ...]]]:
    """{(table, match's local id): [(seq, time, type, payload, position, jpeg), ...] in arrival
    order} of the whole club database."""
    import psycopg

    out: dict[tuple[str, int], list[tuple[Any, ...]]] = {}
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT m.table_name, m.local_id, e.seq, e.time, e.type, e.payload::text,"
            " p.position::text, s.jpeg FROM events e JOIN matches m ON m.id = e.match_id"
            " LEFT JOIN positions p ON p.match_id = e.match_id AND p.seq = e.seq"
            " LEFT JOIN snapshots s ON s.match_id = e.match_id AND s.seq = e.seq"
            " ORDER BY e.arrival").fetchall()
    for r in rows:
        out.setdefault((r[0], int(r[1])), []).append(
            (int(r[2]), r[3], r[4], r[5], r[6], bytes(r[7]) if r[7] is not None else None))
    return out


def log_rows(db_path: Any, table: str) -> dict[tuple[str, int], list[tuple[Any, ...]]]:
    """The same shape from a referee's SQLite log, in sequence order."""
    db = sqlite3.connect(str(db_path))
    try:
        rows = db.execute(
            "SELECT e.match_id, e.seq, e.time, e.type, e.payload, e.position, s.jpeg"
            " FROM events e LEFT JOIN snapshots s ON s.match_id = e.match_id AND s.seq = e.seq"
            " ORDER BY e.match_id, e.seq").fetchall()
    finally:
        db.close()
    out: dict[tuple[str, int], list[tuple[Any, ...]]] = {}
    for r in rows:
        out.setdefault((table, int(r[0])), []).append(
            (int(r[1]), r[2], r[3], r[4], r[5], bytes(r[6]) if r[6] is not None else None))
    return out


class TcpProxy:
    """A loopback TCP proxy to the PostgreSQL server that the test can cut and restore.

    `cut()` closes every proxied connection and refuses new ones (the server "goes away");
    `stall()` keeps connections open but stops forwarding (a sender stuck mid-send);
    `restore()` forwards again. `close()` ends it."""

    def __init__(self, target_host: str = "127.0.0.1", target_port: int = 5432) -> None:
        self.target = (target_host, target_port)
        self._listener = socket.socket()
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(64)
        self.port = int(self._listener.getsockname()[1])
        self._up = threading.Event()
        self._up.set()
        self._flowing = threading.Event()
        self._flowing.set()
        self._closed = False
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        threading.Thread(target=self._accept, name="pg-proxy", daemon=True).start()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            if not self._up.is_set():
                client.close()
                continue
            try:
                upstream = socket.create_connection(self.target, timeout=5)
                upstream.settimeout(None)  # an idle connection stays open, as without a proxy
            except OSError:
                client.close()
                continue
            with self._lock:
                self._sockets += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    def _pipe(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                while not self._flowing.wait(0.1):
                    if not self._up.is_set() or self._closed:
                        return
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.close()
                except OSError:
                    pass

    def cut(self) -> None:
        self._up.clear()
        with self._lock:
            sockets, self._sockets = self._sockets, []
        for s in sockets:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def stall(self) -> None:
        self._flowing.clear()

    def restore(self) -> None:
        self._flowing.set()
        self._up.set()

    def close(self) -> None:
        self._closed = True
        self.cut()
        self._listener.close()


def init_club(url: str) -> None:
    with connect(url, autocommit=True) as conn:
        schema.migrate(conn)


def make_sender(db: Path, url: str, table: str, said: list[str] | None = None,
            **kw: Any) -> ClubSender:
    kw.setdefault("min_backoff_s", 0.05)
    kw.setdefault("max_backoff_s", 0.5)
    kw.setdefault("poll_s", 0.05)
    out = said if said is not None else []
    return ClubSender(db, url, table, say=out.append, **kw)


def write_match(log: MatchLog, n: int, *, game: str = "dition", names: dict | None = None,
                 end: dict | None = None, snapshot_every: int = 3, pause_s: float = 0.0) -> int:
    players = ["black", "white"] if game == "dition" else ["G", "R"]
    match_id = log.new_match(game, players, start_position={"discs": [], "to_move": "black"})
    start = {"type": "start", "game": game, "players": players, "text": "New match"}
    if names:
        start["names"] = names
    log.append(match_id, start, position={"discs": [], "to_move": "black"})
    for i in range(n):
        colour = players[i % 2]
        log.append(match_id, {"type": "move", "colour": colour, "x": 1.0 + i % 17,
                              "y": 2.5 + i // 17, "outcome": "quiet",
                              "text": f"{colour} move {i}"},
                   position={"discs": [{"x": 1.0 + k % 17, "y": 2.5 + k // 17,
                                        "colour": players[k % 2]} for k in range(i + 1)],
                             "to_move": players[(i + 1) % 2]},
                   snapshot_jpeg=(b"\xff\xd8" + bytes([i % 256]) * 300
                                  if i % snapshot_every == 0 else None))
        if pause_s:
            time.sleep(pause_s)
    if end is not None:
        log.append(match_id, {"type": "end", **end})
        log.end_match(match_id, end)
    return match_id


def assert_same(url: str, logs: dict[str, Path]) -> None:
    """The club holds every event of every log exactly (payload, position, snapshot), in order."""
    club = club_rows(url)
    expected: dict = {}
    for table, path in logs.items():
        expected.update(log_rows(path, table))
    assert set(club) == set(expected)
    for key, rows in expected.items():
        got = club[key]
        assert [r[0] for r in got] == sorted(r[0] for r in got), f"{key} arrived out of order"
        assert got == rows, f"{key}: the club's copy differs from the log"


def wait_for(predicate: Any, timeout_s: float, what: str) -> Any:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    pytest.fail(f"timed out after {timeout_s:g} s waiting for {what}")
