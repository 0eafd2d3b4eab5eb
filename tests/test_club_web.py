"""The club page (`referee club serve`): its API, its live stream from LISTEN/NOTIFY, the
organiser's PIN, and two real referees on simulated tables reporting to it at once, one of them
killed with SIGKILL in the middle of sending (against the real PostgreSQL server)."""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from club_support import (
    TcpProxy,
    club_rows,
    init_club,
    log_rows,
    make_sender,
    wait_for,
    with_port,
    write_match,
)
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from referee.club.store import ClubStore
from referee.log import MatchLog
from web.club.app import create_club_app
from web.club.hub import ClubHub

PIN = "4321"
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def club(club_db: tuple[str, str], tmp_path: Path) -> Any:
    url, _ = club_db
    init_club(url)
    store = ClubStore(url)
    hub = ClubHub(store)
    app = create_club_app(hub, {"REQUIRE_PIN": True, "PIN": PIN, "SSE_MIN_INTERVAL_S": 0.0})
    wait_for(lambda: hub.listening, 20, "the club page to LISTEN")
    yield {"url": url, "hub": hub, "client": app.test_client(), "tmp": tmp_path}
    hub.close()
    store.close()


def _fill(url: str, tmp: Path) -> MatchLog:
    log = MatchLog(tmp / "T1.sqlite")
    write_match(log, 6, names={"black": "Ann", "white": "Bob"},
                 end={"winner": "white", "reason": "suicide", "text": "White wins"})
    sender = make_sender(log.path, url, "T1").start()
    try:
        assert sender.drain(30)
    finally:
        sender.stop()
    return log


def test_spectators_read_the_tables_archive_replay_and_standings(club: dict[str, Any]) -> None:
    log = _fill(club["url"], club["tmp"])
    client = club["client"]
    for page in ("/", "/archive", "/standings", "/replay/1"):
        response = client.get(page)
        assert response.status_code == 200, page
        assert b"<nav>" in response.data
    state = client.get("/api/state").get_json()
    (table,) = state["tables"]
    assert (table["table"], table["match_id"], table["names"]) == (
        "T1", 1, {"black": "Ann", "white": "Bob"})
    assert table["verdict"]["text"] == "White wins"
    assert table["events"] == [e.to_json() for e in log.events(1, last=20)]
    (m,) = client.get("/api/matches?player=bob&result=won").get_json()["matches"]
    assert client.get("/api/matches?table=T9").get_json()["matches"] == []
    detail = client.get(f"/api/matches/{m['id']}").get_json()
    assert [e["seq"] for e in detail["events"]] == [e.seq for e in log.events(1)]
    assert detail["events"][-2]["position"] == log.events(1)[-2].position
    shot = next(e for e in detail["events"] if e["snapshot"])
    jpeg = client.get(f"/api/matches/{m['id']}/snapshots/{shot['seq']}.jpg")
    assert jpeg.mimetype == "image/jpeg" and jpeg.data == log.snapshot(1, shot["seq"])
    export = client.get(f"/api/matches/{m['id']}/export?format=csv")
    assert export.data == log.export(1, "csv")[1]
    assert client.get("/api/matches/1/export?format=xml").status_code == 400
    assert client.get("/api/matches/99").status_code == 404
    assert client.get("/api/matches?date=yesterday").status_code == 400
    rows = list(csv.DictReader(io.StringIO(
        client.get("/api/standings?format=csv").get_data(as_text=True))))
    assert [(r["rank"], r["player"], r["wins"], r["losses"]) for r in rows] == [
        ("1", "Bob", "1", "0"), ("2", "Ann", "0", "1")]


def test_the_organisers_controls_need_the_pin(club: dict[str, Any]) -> None:
    _fill(club["url"], club["tmp"])
    client = club["client"]
    same = {"Origin": "http://localhost", "Content-Type": "application/json"}
    body = json.dumps({"name": "Round 1"})
    assert client.post("/api/rounds", data=body, headers=same).status_code == 401
    fix = json.dumps({"colour": "white", "name": "Robert"})
    assert client.post("/api/matches/1/names", data=fix, headers=same).status_code == 401
    assert client.post("/api/rounds", data=body, headers={**same, "X-Referee-Pin": "0000"}
                       ).status_code == 401
    assert client.post("/api/rounds", data=body,
                       headers={**same, "Origin": "http://evil.example", "X-Referee-Pin": PIN}
                       ).status_code == 403
    made = client.post("/api/rounds", data=body, headers={**same, "X-Referee-Pin": PIN})
    assert made.status_code == 200 and made.get_json()["round"]["name"] == "Round 1"
    assert client.post("/api/login", data=json.dumps({"pin": PIN}), headers=same).status_code == 200
    fixed = client.post("/api/matches/1/names", data=fix, headers=same)
    assert fixed.get_json()["match"]["names"] == {"black": "Ann", "white": "Robert"}
    bad = client.post("/api/matches/1/names", data=json.dumps({"colour": "G", "name": "X"}),
                      headers=same)
    assert bad.status_code == 400 and "no player 'G'" in bad.get_json()["message"]
    renamed = client.patch(f"/api/rounds/{made.get_json()['round']['id']}",
                           data=json.dumps({"name": "Final"}), headers=same)
    assert renamed.get_json()["round"]["name"] == "Final"
    assert [r["player"] for r in client.get("/api/standings").get_json()["standings"]] == [
        "Robert", "Ann"]


def test_a_second_round_at_one_start_and_a_start_that_is_no_time_are_clear_errors(
        club: dict[str, Any]) -> None:
    """Found by the fuzz below: both were a 500 with PostgreSQL's error in the server's log."""
    client = club["client"]
    owner = {"Origin": "http://localhost", "Content-Type": "application/json",
             "X-Referee-Pin": PIN}
    body = json.dumps({"name": "R1", "started": "2026-12-01T10:00:00+00:00"})
    assert client.post("/api/rounds", data=body, headers=owner).status_code == 200
    again = client.post("/api/rounds", data=body, headers=owner)
    assert again.status_code == 409
    assert "a round already starts at 2026-12-01T10:00:00+00:00" in again.get_json()["message"]
    for started in ("half past ten", 5, ["2026-12-01"], "2026-13-45"):
        bad = client.post("/api/rounds", data=json.dumps({"name": "R2", "started": started}),
                          headers=owner)
        assert bad.status_code == 400, started
        assert bad.get_json()["message"].startswith("a round's start must be a date or time")
    assert [r["name"] for r in client.get("/api/rounds").get_json()["rounds"]] == ["R1"]


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)
_names = st.text(max_size=80)
_club_bodies = st.one_of(
    st.fixed_dictionaries(  # what the organiser's page sends, with any text in it
        {"name": _names, "colour": st.sampled_from(["black", "white"])},
        optional={"started": st.sampled_from(["2026-12-01", "2026-12-01T10:00:00+00:00",
                                              "yesterday"])}),
    st.fixed_dictionaries({}, optional={
        "name": _names | _json, "started": _json, "colour": st.sampled_from(["G", ""]) | _json,
        "pin": _json}),
    _json,
)


@settings(max_examples=120, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(route=st.sampled_from([("post", "/api/rounds"), ("patch", "/api/rounds/1"),
                              ("patch", "/api/rounds/99"), ("post", "/api/matches/1/names"),
                              ("post", "/api/matches/99/names"), ("post", "/api/login"),
                              ("post", "/api/logout")]),
       body=_club_bodies, raw=st.booleans(), junk=st.binary(max_size=30))
def test_no_club_api_body_crashes_the_club_page(club: dict[str, Any], route: tuple[str, str],
                                                body: Any, raw: bool, junk: bytes) -> None:
    """Every body to the organiser's API, as the organiser (the PIN given), is answered with
    JSON: done, or an error saying what was wrong; never a 500."""
    client = club["client"]
    owner = {"Origin": "http://localhost", "Content-Type": "application/json",
             "X-Referee-Pin": PIN}
    if "filled" not in club:  # one match and one round to change (the fixture outlives examples)
        _fill(club["url"], club["tmp"])
        assert client.post("/api/rounds", data=json.dumps({"name": "R1"}),
                           headers=owner).status_code == 200
        club["filled"] = True
    method, path = route
    data = junk if raw else json.dumps(body).encode()
    response = getattr(client, method)(path, data=data, headers=owner)
    message = str((response.get_json() or {}).get("message", ""))[:50]
    event(f"{method} {path}: {response.status_code} {message}")
    assert response.status_code in (200, 400, 401, 404, 409, 429), response.get_data(as_text=True)
    payload = response.get_json()
    assert isinstance(payload, dict)
    if response.status_code != 200:
        assert set(payload) == {"error", "message"} and payload["message"]
    assert client.get("/api/state").status_code == 200


def test_a_committed_event_reaches_the_club_page_stream(club: dict[str, Any]) -> None:
    hub = club["hub"]
    log = MatchLog(club["tmp"] / "T1.sqlite")
    match_id = write_match(log, 1)
    sender = make_sender(log.path, club["url"], "T1").start()
    sub = hub.subscribe()
    try:
        assert sender.drain(30)
        while sub.get(timeout=0.5) is not None:
            pass  # what the first sends notified
        record = log.append(match_id, {"type": "move", "colour": "white", "x": 4.0, "y": 4.0,
                                       "text": "white at (4, 4)"})
        sender.wake()
        deadline = time.monotonic() + 20
        item = None
        while time.monotonic() < deadline:
            item = sub.get(timeout=1.0)
            if item and item.get("type") == "notify" and item.get("seq") == record.seq:
                break
        assert item is not None and item.get("seq") == record.seq, item
        assert item["table"] == "T1"
        assert hub.state()["tables"][0]["verdict"]["text"] == "white at (4, 4)"
    finally:
        sub.close()
        sender.stop()


# -- two real referees ----------------------------------------------------------------------------
def _comparable(state: dict[str, Any]) -> dict[str, Any]:
    return {"match_id": state["match_id"], "game": state["game"], "players": state["players"],
            "events": state["events"]}


@pytest.mark.slow
def test_two_referees_on_simulated_tables_and_the_club_page_agree(club: dict[str, Any]) -> None:
    from referee.club.link import attach
    from referee.service import RefereeService
    from referee.simtable import Pace, scripted_table

    pace = Pace(still=3, hand=3, verdict=4, end=4)
    services, senders = {}, {}
    for table, seed in (("T1", 5), ("T2", 6)):
        services[table] = RefereeService(
            MatchLog(club["tmp"] / f"{table}.sqlite"),
            lambda restart, seed=seed: scripted_table("domination", seed, moves=14, pace=pace,
                                                      size=(960, 720)),
            game="domination", source_spec=f"sim:domination:{seed}", resume=False)
        services[table].command("new_match", {"names": {"G": f"{table} green",
                                                        "R": f"{table} red"}})
        senders[table] = attach(services[table], club["url"], table, say=lambda _: None,
                                min_backoff_s=0.05, poll_s=0.2)
    try:
        for s in services.values():
            s.start()
        for table, s in services.items():
            wait_for(lambda s=s: s.state()["camera"]["state"] == "ended", 400,
                     f"table {table}'s recording to end")
            assert senders[table].drain(60), senders[table].status()
            assert s.state()["club"]["text"] == "club: all sent"
        def club_tables() -> dict[str, Any]:
            return {t["table"]: t for t in club["client"].get("/api/state").get_json()["tables"]}

        # the page's state follows the last NOTIFY (its LISTEN thread): wait for it to agree
        wait_for(lambda: all(_comparable(club_tables().get(t, {"match_id": None,
                 "game": None, "players": None, "events": None})) == _comparable(s.state())
                 for t, s in services.items()), 20, "the club page to show both tables")
        club_state = club_tables()
        for table, s in services.items():
            own = s.state()
            assert sum(1 for e in s.log.events(own["match_id"]) if e.type == "move") >= 10
            assert _comparable(club_state[table]) == _comparable(own)
            assert club_state[table]["names"] == {"G": f"{table} green", "R": f"{table} red"}
            position = s.log.events(own["match_id"])[-1].position
            assert club_state[table]["position"] == position["state"]
    finally:
        for table, service in services.items():
            service.stop()
            senders[table].stop()
    expected = {}
    for table, s in services.items():
        expected.update(log_rows(s.log.path, table))
    assert club_rows(club["url"]) == expected


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _club_state(port: int) -> dict[str, Any] | None:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/state", timeout=5) as r:
            return json.loads(r.read()).get("club")
    except OSError:
        return None


def _count(rows: dict[Any, list[Any]]) -> int:
    return sum(map(len, rows.values()))


def _serve(db: Path, url: str, port: int, out: Path) -> subprocess.Popen:
    with open(out, "ab") as fh:
        return subprocess.Popen(
            [sys.executable, "-m", "referee", "serve", "--source", "sim:dition:3", "--db",
             str(db), "--port", str(port), "--max-fps", "20", "--club", url, "--table", "K"],
            stdout=fh, stderr=subprocess.STDOUT, cwd=ROOT)


@pytest.mark.slow
def test_a_referee_killed_mid_send_and_a_cut_server_lose_and_double_nothing(
        club_db: tuple[str, str], tmp_path: Path) -> None:
    url, _ = club_db
    init_club(url)
    proxy = TcpProxy()
    via_proxy = with_port(url, proxy.port)
    db, out, port = tmp_path / "k.sqlite", tmp_path / "serve.log", _free_port()
    proc = _serve(db, via_proxy, port, out)
    try:
        wait_for(lambda: _count(club_rows(url)) >= 3, 120,
                 "the first events in the club")
        proxy.stall()  # the sender's next batch hangs half-sent ...
        wait_for(lambda: _count(log_rows(db, "K")) - _count(club_rows(url)) >= 3, 120,
                 "events waiting behind the stalled link")
        proc.send_signal(signal.SIGKILL)  # ... and the referee dies in the middle of it
        proc.wait(10)
        proxy.cut()  # the server away while the referee comes back
        unsent = _count(log_rows(db, "K")) - _count(club_rows(url))
        proc = _serve(db, via_proxy, port, out)
        state = wait_for(lambda: (c := _club_state(port)) and c["state"] == "waiting_for_club"
                         and c, 120, "the restarted referee to wait for the club")
        assert state["waiting"] >= unsent  # what the killed one left, and what came since
        proxy.restore()
        wait_for(lambda: (c := _club_state(port)) and c["text"] == "club: all sent", 240,
                 "everything sent after the restart")
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        proxy.close()
    assert club_rows(url) == log_rows(db, "K"), out.read_text(errors="replace")[-2000:]
    assert "club: connected" in out.read_text()
    assert os.path.getsize(db) > 0


def test_the_club_page_and_a_table_never_show_the_password(club_db: tuple[str, str],
                                                           tmp_path: Path) -> None:
    """The test server trusts loopback, so a URL with a password connects: the password must
    then appear nowhere, neither in the output nor on the pages and their API."""
    url, _ = club_db
    init_club(url)
    secret = "Hunter2-club"
    with_secret = url.replace("postgresql://postgres@", f"postgresql://postgres:{secret}@")
    out = tmp_path / "club.log"
    club_port, table_port = _free_port(), _free_port()
    with open(out, "ab") as fh:
        club_proc = subprocess.Popen(
            [sys.executable, "-m", "referee", "club", "serve", with_secret, "--port",
             str(club_port)], stdout=fh, stderr=subprocess.STDOUT, cwd=ROOT)
        table_proc = subprocess.Popen(
            [sys.executable, "-m", "referee", "demo", "--quiet", "--db", str(tmp_path / "t.sqlite"),
             "--port", str(table_port), "--club", with_secret, "--table", "T1", "--speed", "0.2"],
            stdout=fh, stderr=subprocess.STDOUT, cwd=ROOT)
    pages = []
    try:
        state = wait_for(lambda: (c := _club_state(table_port)) and c["state"] == "connected"
                         and c, 120, "the table to connect to the club")
        assert state["url"] == url.replace("postgresql://postgres@", "postgresql://postgres:***@")

        def fetch(port: int, path: str) -> str:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
                return r.read().decode()

        wait_for(lambda: "T1" in fetch(club_port, "/api/state"), 60, "the club page to show T1")
        pages = [fetch(club_port, p) for p in ("/", "/api/state", "/api/matches", "/archive")]
        pages += [fetch(table_port, p) for p in ("/", "/api/state")]
        # stopped once the simulated table is made (its first frame shown): a stop while the
        # match is still being generated waits for that, and a loaded machine can take 10 s
        wait_for(lambda: json.loads(fetch(table_port, "/api/state"))["camera"]["state"] == "ok",
                 120, "the table's first frame")
    finally:
        for proc in (club_proc, table_proc):
            proc.send_signal(signal.SIGTERM)
        codes = [proc.wait(30) for proc in (club_proc, table_proc)]
    text = out.read_text(errors="replace")
    assert codes == [0, 0], text[-3000:]
    assert "club page on http://127.0.0.1:" in text and "club: connected to" in text
    for shown in (text, *pages):
        assert secret not in shown
