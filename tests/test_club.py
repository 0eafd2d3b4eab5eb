"""The club database (issue 20), against the real PostgreSQL server: schema and migrations, the
background sender (exactly once, in order, through terminated connections and a cut network),
the reads behind the club page and the command-line contract.

Every test gets its own scratch database (`club_db`); without a server they skip saying why
(REFEREE_REQUIRE_POSTGRES=1 makes that a failure, as in CI).
"""

from __future__ import annotations

import io
import json
import sqlite3
import threading
import time
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import psycopg
import pytest
from club_support import (
    TcpProxy,
    assert_same,
    init_club,
    make_sender,
    terminate_connections,
    wait_for,
    with_port,
    write_match,
)

from referee.club import schema
from referee.club.errors import ClubAuthError, ClubUnreachableError, ClubUrlError
from referee.club.store import ClubStore, MatchFilter
from referee.club.url import check_url, connect, redact, scrub
from referee.log import MatchLog

SECRET = "s3cr3t-Pa55"


# -- the URL --------------------------------------------------------------------------------------
def test_the_password_is_redacted_wherever_it_appears() -> None:
    url = f"postgresql://club:{SECRET}@db.example:5433/club?sslmode=require"
    assert redact(url) == "postgresql://club:***@db.example:5433/club?sslmode=require"
    assert SECRET not in redact(f"postgresql://h/club?password={SECRET}&sslmode=verify-full")
    in_query = f"postgresql://h/club?password={SECRET}&sslmode=verify-full"
    assert "sslmode=verify-full" in redact(in_query)
    message = f'connection to "{url}" failed for password "{SECRET}"'
    assert SECRET not in scrub(message, url)
    with pytest.raises(ClubUrlError, match="postgresql://"):
        check_url(f"mysql://club:{SECRET}@h/db")
    with pytest.raises(ClubUrlError) as info:
        check_url(f"http://club:{SECRET}@h/db")
    assert SECRET not in str(info.value)


# -- the schema -----------------------------------------------------------------------------------
def test_init_creates_the_schema_once_and_reports_it(club_db: tuple[str, str]) -> None:
    from referee.cli import main

    url, _ = club_db
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["club", "init", url]) == 0
        assert main(["club", "init", url]) == 0
    lines = out.getvalue().splitlines()
    assert lines[0].endswith(f"schema 0 -> {schema.LATEST} (applied 1, 2)")
    assert lines[1].endswith(f"schema {schema.LATEST}, up to date")
    with psycopg.connect(url) as conn:
        versions = [r[0] for r in conn.execute("SELECT version FROM schema_version ORDER BY 1")]
        tables = {r[0] for r in conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public'")}
        indexes = {r[0] for r in conn.execute(
            "SELECT indexname FROM pg_indexes WHERE schemaname = 'public'")}
    assert versions == [1, 2]
    assert {"tables", "matches", "events", "positions", "snapshots", "match_players",
            "rounds", "schema_version"} <= tables
    assert {"matches_table_started", "matches_started", "match_players_name"} <= indexes


def test_a_migration_from_the_previous_version_keeps_every_row(
        club_db: tuple[str, str], tmp_path: Path) -> None:
    url, _ = club_db
    with connect(url, autocommit=True) as conn:
        assert schema.migrate(conn, target=1) == [1]
        # rows as a version-1 club held them (written the way the version-1 sender wrote them)
        conn.execute("INSERT INTO tables (name, referee_id) VALUES ('T1', 'r1'), ('T2', 'r2')")
        for local, table, names in ((1, "T1", {"black": "Ann", "white": "Bo"}), (2, "T1", None),
                                    (1, "T2", {"white": "Cy"})):
            (pk,) = conn.execute(
                "INSERT INTO matches (referee_id, local_id, table_name, game, variant, players,"
                " started_at, started, ended_at, result) VALUES (%s, %s, %s, 'dition',"
                " 'standard', '[\"black\", \"white\"]', '2026-11-30T20:00:00.000+00:00',"
                " '2026-11-30T20:00:00Z', '2026-11-30T21:00:00.000+00:00',"
                " '{\"winner\": \"black\", \"reason\": \"suicide\"}') RETURNING id",
                (f"r{table[1]}", local, table)).fetchone()
            start = {"game": "dition", "text": "New match"} | ({"names": names} if names else {})
            conn.execute("INSERT INTO events (match_id, seq, time, type, payload) VALUES"
                         " (%s, 1, 't1', 'start', %s), (%s, 2, 't2', 'move', '{\"x\": 1}')",
                         (pk, json.dumps(start), pk))
            conn.execute("INSERT INTO positions VALUES (%s, 2, '{\"discs\": []}')", (pk,))
            conn.execute("INSERT INTO snapshots VALUES (%s, 2, %s)", (pk, b"\xff\xd8jpeg"))
        dump = "SELECT * FROM {} ORDER BY 1, 2"
        before = {t: conn.execute(dump.format(t)).fetchall()
                  for t in ("tables", "matches", "events", "positions", "snapshots")}
        assert schema.migrate(conn) == [2]
        after = {t: conn.execute(dump.format(t)).fetchall() for t in before}
        # version 2 only adds columns at the end: every version-1 row is still there, whole
        for table, rows in before.items():
            assert [r[:len(rows[0])] for r in after[table]] == rows, table
        names = conn.execute("SELECT m.table_name, m.local_id, p.colour, p.name FROM"
                             " match_players p JOIN matches m ON m.id = p.match_id"
                             " ORDER BY 1, 2, 3").fetchall()
    assert names == [("T1", 1, "black", "Ann"), ("T1", 1, "white", "Bo"),
                     ("T1", 2, "black", None), ("T1", 2, "white", None),
                     ("T2", 1, "black", None), ("T2", 1, "white", "Cy")]
    # and the migrated club is read like a new one
    store = ClubStore(url)
    try:
        assert [m.names for m in store.list_matches(MatchFilter(player="ann"))] == [
            {"black": "Ann", "white": "Bo"}]
    finally:
        store.close()


def test_a_sender_waits_for_a_club_without_schema(club_db: tuple[str, str],
                                                  tmp_path: Path) -> None:
    url, _ = club_db
    log = MatchLog(tmp_path / "t.sqlite")
    write_match(log, 3)
    said: list[str] = []
    sender = make_sender(log.path, url, "T1", said).start()
    try:
        status = wait_for(lambda: sender.status()["state"] == "no_schema" and sender.status(),
                          20, "the sender to find no schema")
        assert status["waiting"] == 4
        assert "referee club init" in status["error"]
        init_club(url)
        assert sender.drain(30), sender.status()
    finally:
        sender.stop()
    assert_same(url, {"T1": log.path})


# -- the sender -----------------------------------------------------------------------------------
def test_two_tables_report_concurrently_every_event_once_in_order(
        club_db: tuple[str, str], tmp_path: Path) -> None:
    url, _ = club_db
    init_club(url)
    logs = {name: MatchLog(tmp_path / f"{name}.sqlite") for name in ("T1", "T2")}
    senders = [make_sender(log.path, url, name).start() for name, log in logs.items()]
    writers = [threading.Thread(target=write_match, args=(log, 60),
                                kwargs={"end": {"winner": "white", "reason": "suicide",
                                                "text": "White wins"}, "pause_s": 0.005})
               for log in logs.values()]
    try:
        for w in writers:
            w.start()
        for w in writers:
            w.join()
        for s in senders:
            assert s.drain(60), s.status()
    finally:
        for s in senders:
            s.stop()
    assert_same(url, {name: log.path for name, log in logs.items()})
    with psycopg.connect(url) as conn:
        ended = conn.execute("SELECT table_name, ended_at IS NOT NULL, result::text"
                             " FROM matches ORDER BY 1").fetchall()
    assert [(t, e) for t, e, _ in ended] == [("T1", True), ("T2", True)]
    assert all(json.loads(r)["winner"] == "white" for _, _, r in ended)


def test_terminated_connections_mid_match_lose_and_double_nothing(
        club_db: tuple[str, str], tmp_path: Path) -> None:
    url, name = club_db
    init_club(url)
    log = MatchLog(tmp_path / "t.sqlite")
    said: list[str] = []
    sender = make_sender(log.path, url, "T1", said, batch_events=5).start()
    writer = threading.Thread(target=write_match, args=(log, 150),
                              kwargs={"pause_s": 0.01, "end": {"winner": None, "reason": "draw"}})
    writer.start()
    terminated = 0
    try:
        wait_for(lambda: sender.sent_events > 5, 30, "the first events to reach the club")
        deadline = time.monotonic() + 2.0  # "the server away for a while": every connection
        while time.monotonic() < deadline:  # of the club cut again and again for 2 s
            terminated += terminate_connections(name)
            time.sleep(0.05)
        writer.join()
        assert sender.drain(60), sender.status()
    finally:
        writer.join()
        sender.stop()
    assert terminated >= 1
    assert any("lost the club database" in s or "cannot reach" in s for s in said), said
    assert_same(url, {"T1": log.path})


def test_a_cut_network_shows_the_waiting_events_and_they_follow_on_return(
        club_db: tuple[str, str], tmp_path: Path) -> None:
    url, _ = club_db
    init_club(url)
    proxy = TcpProxy()
    log = MatchLog(tmp_path / "t.sqlite")
    sender = make_sender(log.path, with_port(url, proxy.port), "T1").start()
    try:
        match_id = write_match(log, 4)
        assert sender.drain(30), sender.status()
        proxy.cut()
        for i in range(3):
            log.append(match_id, {"type": "move", "colour": "black", "x": 9.0 + i, "y": 9.0})
            sender.wake()
        status = wait_for(lambda: (s := sender.status())["state"] == "waiting_for_club"
                          and s["waiting"] == 3 and s, 30, "the sender to count 3 waiting")
        assert status["text"] == "club: offline, 3 events waiting"
        proxy.restore()
        assert sender.drain(30), sender.status()
        assert sender.status()["text"] == "club: all sent"
    finally:
        sender.stop()
        proxy.close()
    assert_same(url, {"T1": log.path})


def test_wrong_credentials_are_said_and_the_match_goes_on(
        club_db: tuple[str, str], tmp_path: Path) -> None:
    url, _ = club_db
    init_club(url)
    bad = url.replace("postgresql://postgres@", f"postgresql://nosuchclub:{SECRET}@")
    with pytest.raises(ClubAuthError) as info:
        connect(bad)
    assert SECRET not in str(info.value) and "nosuchclub" in str(info.value)
    with pytest.raises(ClubUnreachableError):
        connect(with_port(url, 1), timeout_s=2)  # nothing listens on port 1

    from web_support import make_service

    from referee.club.link import attach
    from web.app import create_app

    service = make_service(tmp_path / "t.sqlite")
    said: list[str] = []
    sender = attach(service, bad, "T1", say=said.append, min_backoff_s=0.05, poll_s=0.05)
    try:
        wait_for(lambda: service.state()["club"]["state"] == "refused", 20, "refused")
        service.command("pause")  # refereeing goes on: controls answer and events are logged
        service.command("resume")
        n_events = len(service.log.events(service.state()["match_id"]))
        state = wait_for(lambda: (s := service.state())["club"]["waiting"] == n_events and s, 20,
                         "the new events to be counted as waiting")
        assert state["club"]["text"].startswith("club: wrong credentials, ")
        page = create_app(service=service).test_client().get("/api/state").get_data(as_text=True)
    finally:
        sender.stop()
    assert "nosuchclub" in said[0] and "refused the credentials" in said[0]
    for text in (*said, json.dumps(state), page):
        assert SECRET not in text


def test_the_sender_resumes_from_its_marker_after_a_restart(
        club_db: tuple[str, str], tmp_path: Path) -> None:
    url, _ = club_db
    init_club(url)
    log = MatchLog(tmp_path / "t.sqlite")
    match_id = write_match(log, 10)
    sender = make_sender(log.path, url, "T1").start()
    assert sender.drain(30)
    sender.stop()
    db = sqlite3.connect(str(log.path))
    assert db.execute("SELECT seq FROM club_sent WHERE match_id = ?", (match_id,)).fetchone() \
        == (11,)
    # a marker behind the club (killed between the club's commit and the marker): no double
    db.execute("UPDATE club_sent SET seq = 4")
    db.commit()
    db.close()
    log.append(match_id, {"type": "move", "colour": "black", "x": 3.0, "y": 3.0})
    again = make_sender(log.path, url, "T1")
    assert again.status()["waiting"] == 8
    again.start()
    try:
        assert again.drain(30)
    finally:
        again.stop()
    assert_same(url, {"T1": log.path})


# -- reading the club -----------------------------------------------------------------------------
@pytest.fixture
def filled_club(club_db: tuple[str, str], tmp_path: Path) -> dict[str, Any]:
    url, _ = club_db
    init_club(url)
    logs = {n: MatchLog(tmp_path / f"{n}.sqlite") for n in ("T1", "T2")}
    write_match(logs["T1"], 5, names={"black": "Ann", "white": "Bob"},
                 end={"winner": "black", "reason": "suicide", "text": "Black wins"})
    write_match(logs["T1"], 3, names={"black": "Bob", "white": "Cy"},
                 end={"winner": None, "reason": "agreed", "text": "Draw"})
    write_match(logs["T2"], 4, game="domination", names={"G": "Ann", "R": "Cy"},
                 end={"winner": "R", "reason": "no moves", "text": "Red wins"})
    write_match(logs["T2"], 2, names={"black": "Dee"},
                 end={"winner": None, "reason": "abandoned", "text": "Abandoned"})
    write_match(logs["T2"], 2, names={"white": "Eve"})
    for name, log in logs.items():
        sender = make_sender(log.path, url, name)
        sender.start()
        try:
            assert sender.drain(30)
        finally:
            sender.stop()
    return {"url": url, "logs": logs}


def test_the_archive_filters(filled_club: dict[str, Any]) -> None:
    store = ClubStore(filled_club["url"])
    try:
        def tables_and_players(**kw: Any) -> list[tuple[str, tuple[str, ...]]]:
            return sorted((m.table, tuple(sorted(m.names.values())))
                          for m in store.list_matches(MatchFilter(**kw)))

        assert len(store.list_matches()) == 5
        assert tables_and_players(table="T1") == [("T1", ("Ann", "Bob")), ("T1", ("Bob", "Cy"))]
        assert tables_and_players(player="ANN") == [("T1", ("Ann", "Bob")), ("T2", ("Ann", "Cy"))]
        assert tables_and_players(game="domination") == [("T2", ("Ann", "Cy"))]
        assert tables_and_players(result="draw") == [("T1", ("Bob", "Cy"))]
        assert tables_and_players(result="abandoned") == [("T2", ("Dee",))]
        assert tables_and_players(result="in_progress") == [("T2", ("Eve",))]
        assert tables_and_players(result="won") == [("T1", ("Ann", "Bob")), ("T2", ("Ann", "Cy"))]
        from datetime import UTC, datetime, timedelta

        today = datetime.now(UTC).date()
        assert len(store.list_matches(MatchFilter(day=today))) == 5
        assert store.list_matches(MatchFilter(day=today - timedelta(days=1))) == []
        assert tables_and_players(player="100%_") == []  # LIKE's wildcards are taken literally
    finally:
        store.close()


def test_standings_count_wins_draws_and_losses_per_player(filled_club: dict[str, Any]) -> None:
    store = ClubStore(filled_club["url"])
    try:
        rows = {r["player"]: (r["played"], r["wins"], r["draws"], r["losses"])
                for r in store.standings()}
        # the abandoned match and the one in progress count for no one
        assert rows == {"Ann": (2, 1, 0, 1), "Bob": (2, 0, 1, 1), "Cy": (2, 1, 1, 0)}
        first = store.new_round("Round 1", "2000-01-01T00:00:00Z")
        later = store.new_round("Round 2")  # starts now: no match started after it
        assert store.standings(first["id"]) == store.standings()
        assert store.standings(later["id"]) == []
        assert store.rename_round(later["id"], "Final")["name"] == "Final"
    finally:
        store.close()


def test_the_command_line_reads_the_club_as_it_reads_a_table(
        filled_club: dict[str, Any]) -> None:
    from referee.cli import main

    url, logs = filled_club["url"], filled_club["logs"]

    def run(*argv: str) -> str:
        out = io.StringIO()
        with redirect_stdout(out):
            assert main(list(argv)) == 0
        return out.getvalue()

    club = [json.loads(line) for line in run("matches", "--club", url, "--json").splitlines()]
    assert len(club) == 5
    for table, log in logs.items():
        local = [json.loads(line) for line in
                 run("matches", "--db", str(log.path), "--json").splitlines()]
        mine = [m for m in club if m["table"] == table]
        assert len(mine) == len(local)
        by_start = {m["started_at"]: m for m in mine}
        for m in local:
            twin = by_start[m["started_at"]]
            assert list(twin) == [*m, "table"]  # the same keys in the same order, plus table
            assert {k: v for k, v in twin.items() if k not in ("id", "table")} == \
                {k: v for k, v in m.items() if k != "id"}
            for fmt in ("json", "csv", "txt"):
                mine_text = run("export", str(twin["id"]), "--club", url, "--format", fmt)
                theirs = run("export", str(m["id"]), "--db", str(log.path), "--format", fmt)
                if fmt == "json":
                    a, b = json.loads(mine_text), json.loads(theirs)
                    assert a["match"].pop("id") == twin["id"] and b["match"].pop("id") == m["id"]
                    assert a == b
                elif fmt == "txt":
                    assert mine_text.split("\n", 1)[1] == theirs.split("\n", 1)[1]
                else:
                    assert mine_text == theirs
    err = io.StringIO()
    with redirect_stderr(err):
        assert main(["export", "999999", "--club", url]) == 1
    assert "no match 999999 in the club database" in err.getvalue()


# -- the table's side -----------------------------------------------------------------------------
def test_a_new_match_takes_the_players_names(tmp_path: Path) -> None:
    from web_support import make_service

    from web.app import create_app

    service = make_service(tmp_path / "t.sqlite", game="domination")
    client = create_app(service=service).test_client()
    same = {"Origin": "http://localhost", "Content-Type": "application/json"}
    body = {"game": "domination", "players": ["G", "R"], "names": {"G": " Ann ", "R": ""}}
    assert client.post("/api/control/new_match", json=body, headers=same).status_code == 200
    state = client.get("/api/state").get_json()
    start = next(e for e in state["events"] if e["type"] == "start")
    assert start["names"] == {"G": "Ann"}  # trimmed, the blank one left out
    assert "club" not in state  # no club link without --club
    for names, word in (({"B": "Cy"}, "'B' is not one of the players"), (["Ann"], "an object"),
                        ({"G": "x" * 61}, "at most 60 characters")):
        refused = client.post("/api/control/new_match", headers=same,
                              json={"game": "domination", "players": ["G", "R"], "names": names})
        assert refused.status_code == 400 and refused.get_json()["error"] == "bad_names"
        assert word in refused.get_json()["message"]
    assert client.get("/api/state").get_json()["match_id"] == state["match_id"]


def test_club_options_are_checked_before_anything_starts(tmp_path: Path) -> None:
    from referee.cli import main

    url = f"postgresql://club:{SECRET}@127.0.0.1:1/club"
    with pytest.raises(SystemExit) as info:
        main(["demo", "--club", url, "--db", str(tmp_path / "d.sqlite"), "--quiet"])
    assert "needs --table NAME" in str(info.value) and SECRET not in str(info.value)
    with pytest.raises(SystemExit) as info:
        main(["demo", "--club", "mysql://x@h/db", "--table", "T", "--quiet",
              "--db", str(tmp_path / "d.sqlite")])
    assert "postgresql://" in str(info.value)


def test_the_libpq_options_are_passed_through(club_db: tuple[str, str]) -> None:
    url, _ = club_db
    connect(url + "?sslmode=disable").close()
    # the test server speaks no TLS: sslmode=require reaching libpq is what refuses it
    with pytest.raises(ClubUnreachableError, match="SSL"):
        connect(url + "?sslmode=require")


@pytest.mark.parametrize("required", [False, True])
def test_without_a_server_the_club_tests_skip_or_fail_in_ci(required: bool) -> None:
    import os
    import subprocess
    import sys

    env = {**os.environ, "REFEREE_TEST_POSTGRES": "postgresql://postgres@127.0.0.1:1/test"}
    env.pop("REFEREE_REQUIRE_POSTGRES", None)
    if required:
        env["REFEREE_REQUIRE_POSTGRES"] = "1"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider",
         f"{Path(__file__).parent / 'test_club.py'}::test_the_libpq_options_are_passed_through"],
        capture_output=True, text=True, env=env, cwd=Path(__file__).parent.parent, timeout=120,
        check=False)
    if required:
        assert done.returncode == 1 and "REFEREE_REQUIRE_POSTGRES=1" in done.stdout, done.stdout
    else:
        assert done.returncode == 0, done.stdout
        assert "club tests skipped: no PostgreSQL at postgresql://postgres@127.0.0.1:1/test" \
            in done.stdout


def test_a_clean_stop_sends_what_is_left_over_a_dead_idle_connection(
        club_db: tuple[str, str], tmp_path: Path) -> None:
    url, name = club_db
    init_club(url)
    log = MatchLog(tmp_path / "t.sqlite")
    match_id = write_match(log, 3)
    sender = make_sender(log.path, url, "T1", poll_s=60.0).start()
    assert sender.drain(30)
    assert terminate_connections(name) >= 1  # the idle connection dies unnoticed (no wake-up)
    for i in range(4):
        log.append(match_id, {"type": "move", "colour": "white", "x": 5.0 + i, "y": 5.0})
    sender.stop()  # stopping: the thread ends, the last events go out on a new connection
    assert_same(url, {"T1": log.path})
