"""Club benchmark: many simulated tables sending to one PostgreSQL through the real sender.

Each table is a thread writing synthetic events (a move with its position; a 20 kB snapshot
every tenth) into its own SQLite match log at `--rate` events per second, woken sender and all,
exactly as `referee serve --club` does (`referee.club.sender.ClubSender`, one connection each).
A LISTEN connection stands for the club page. Prints the events per second the club database
took in over the run, the backlog left, and the lag from an event's commit in a table's log to
its NOTIFY reaching the club page (p50, p99, max), then checks that the club holds every event
once. Everything runs in one process (the tables' threads share the interpreter).

Needs PostgreSQL (`--server`, default $REFEREE_TEST_POSTGRES or
postgresql://postgres@127.0.0.1:5432/test); works in a scratch database it drops afterwards.

Run: .venv/bin/python benchmarks/bench_club.py [--tables 50] [--rate 4] [--seconds 20]
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import psycopg

from referee.club import schema
from referee.club.sender import ClubSender
from referee.club.url import connect
from referee.log import MatchLog

DEFAULT_SERVER = os.environ.get("REFEREE_TEST_POSTGRES",
                                "postgresql://postgres@127.0.0.1:5432/test")
SNAPSHOT = b"\xff\xd8" + bytes(20_000)


def _database(url: str, name: str) -> str:
    p = urlsplit(url)
    return urlunsplit((p.scheme, p.netloc, "/" + name, p.query, p.fragment))


def _table(name: str, log: MatchLog, sender: ClubSender, rate: float, stop: threading.Event,
           commits: dict[tuple[str, int], float], rng: np.random.Generator) -> None:
    match_id = log.new_match("dition", ["black", "white"])
    period = 1.0 / rate
    next_t = time.perf_counter() + rng.uniform(0, period)
    discs: list[dict[str, object]] = []
    n = 0
    while not stop.is_set():
        wait = next_t - time.perf_counter()
        if wait > 0:
            stop.wait(wait)
        next_t += period
        colour = ("black", "white")[n % 2]
        x, y = (float(v) for v in rng.uniform(0.5, 19.5, 2))
        discs.append({"x": round(x, 3), "y": round(y, 3), "colour": colour})
        text = f"{colour} at ({x:.2f}, {y:.2f})"
        record = log.append(match_id, {"type": "move", "colour": colour, "x": x, "y": y,
                                       "outcome": "quiet", "text": text},
                            position={"discs": discs[-40:], "to_move": colour},
                            snapshot_jpeg=SNAPSHOT if n % 10 == 0 else None)
        commits[(name, record.seq)] = time.perf_counter()
        sender.wake()
        n += 1


def _listen(url: str, ready: threading.Event, stop: threading.Event,
            commits: dict[tuple[str, int], float], lags: list[float]) -> None:
    last: dict[str, int] = {}
    with connect(url, autocommit=True) as conn:
        conn.execute(f"LISTEN {schema.NOTIFY_CHANNEL}")
        ready.set()
        while not stop.is_set():
            for notify in conn.notifies(timeout=0.5):
                now = time.perf_counter()
                item = json.loads(notify.payload)
                table, seq = item["table"], int(item["seq"])
                for s in range(last.get(table, 0) + 1, seq + 1):
                    if (table, s) in commits:
                        lags.append(now - commits[(table, s)])
                last[table] = max(seq, last.get(table, 0))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--server", default=DEFAULT_SERVER)
    ap.add_argument("--tables", type=int, default=50)
    ap.add_argument("--rate", type=float, default=4.0, help="events per second per table")
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    name = f"club_bench_{secrets.token_hex(4)}"
    try:
        admin = psycopg.connect(args.server, autocommit=True, connect_timeout=5)
    except psycopg.Error as exc:
        print(f"bench_club: skipped, no PostgreSQL at {args.server}: {exc}", file=sys.stderr)
        return 1 if os.environ.get("REFEREE_REQUIRE_POSTGRES") == "1" else 0
    admin.execute(f'CREATE DATABASE "{name}"')
    url = _database(args.server, name)
    tmp = Path(tempfile.mkdtemp(prefix="bench_club_"))
    try:
        with connect(url, autocommit=True) as conn:
            schema.migrate(conn)
        rng = np.random.default_rng(args.seed)
        commits: dict[tuple[str, int], float] = {}
        lags: list[float] = []
        stop_tables, stop_listen, ready = threading.Event(), threading.Event(), threading.Event()
        listener = threading.Thread(target=_listen, args=(url, ready, stop_listen, commits, lags),
                                    daemon=True)
        listener.start()
        ready.wait(10)
        logs, senders, threads = [], [], []
        for i in range(args.tables):
            table = f"T{i + 1:02d}"
            log = MatchLog(tmp / f"{table}.sqlite")
            sender = ClubSender(log.path, url, table, poll_s=1.0, say=lambda _: None).start()
            logs.append(log)
            senders.append(sender)
            threads.append(threading.Thread(
                target=_table, args=(table, log, sender, args.rate, stop_tables, commits,
                                     np.random.default_rng(rng.integers(2**32))), daemon=True))
        with psycopg.connect(url) as conn:
            def arrived() -> int:
                return int(conn.execute("SELECT COUNT(*) FROM events").fetchone()[0])

            t0 = time.perf_counter()
            for t in threads:
                t.start()
            time.sleep(args.seconds)
            stop_tables.set()
            for t in threads:
                t.join()
            elapsed = time.perf_counter() - t0
            in_club = arrived()
            written = len(commits)
            drained = all(s.drain(120) for s in senders)
            drain_s = time.perf_counter() - t0 - elapsed
            time.sleep(1.0)
            stop_listen.set()
            listener.join(5)
            final = arrived()
        for s in senders:
            s.stop()
        lag_ms = np.array(lags) * 1000
        print(f"club benchmark: {args.tables} tables x {args.rate:g} events/s for "
              f"{elapsed:.1f} s, one PostgreSQL (loopback), one process")
        print(f"  written to the tables' logs: {written} events ({written / elapsed:.0f}/s)")
        print(f"  in the club during the run:  {in_club} events = {in_club / elapsed:.0f} "
              f"events/s sustained; backlog at the end {written - in_club}, drained in "
              f"{drain_s:.1f} s")
        print(f"  commit -> club page (NOTIFY received): p50 {np.percentile(lag_ms, 50):.0f} ms, "
              f"p99 {np.percentile(lag_ms, 99):.0f} ms, max {lag_ms.max():.0f} ms "
              f"over {len(lag_ms)} events")
        ok = drained and final == written
        print(f"  club holds {final} of {written} events{'' if ok else ' -- MISMATCH'}")
        return 0 if ok else 1
    finally:
        for log in locals().get("logs", []):
            log.close()
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.close()


if __name__ == "__main__":
    sys.exit(main())
