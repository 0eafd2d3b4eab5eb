"""The web server against hostile clients: DNS rebinding, large and deep bodies, stolen
cookies after logout, weak PINs, stream floods, slow readers, and a fuzz of every /api body."""

from __future__ import annotations

import http.client
import json
import socket
import stat
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from web_support import make_service

from web.app import create_app
from web.blueprints import api_control
from web.security import host_allowed, pin_weakness

#: every control the page sends (the app's own list, so a new one is fuzzed too) and one unknown
COMMANDS = [*api_control.COMMANDS, "invisible"]


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Any:
    svc = make_service(tmp_path_factory.mktemp("hard") / "log.sqlite")
    yield svc
    svc.stop()


def _client(service: Any, **config: Any) -> Any:
    return create_app({"TESTING": True, **config}, service=service).test_client()


# ------------------------------------------------------------------------------ Host guard
@pytest.mark.parametrize("host", ["rebind.evil.example", "evil.example:8000", "10.255.255.7",
                                  "referee.local.evil.example", "localhost.evil.example"])
def test_a_page_on_another_site_is_never_served_dns_rebinding(service: Any, host: str) -> None:
    client = _client(service)
    base = f"http://{host}"
    for response in (client.get("/api/state", base_url=base),
                     client.get("/", base_url=base),
                     client.post("/api/control/pause", json={}, base_url=base,
                                 headers={"Origin": base})):
        assert response.status_code == 421, response.get_data(as_text=True)
        assert response.get_json()["error"] == "unknown_host"
    assert service.state()["status"] != "paused"


def test_this_machines_names_and_addresses_are_served(service: Any) -> None:
    name = socket.gethostname()
    for host in ["localhost:8000", "127.0.0.1", "127.8.9.10:80", "[::1]:8000", name,
                 f"{name.split('.')[0]}.local:8000", "app.localhost"]:
        assert host_allowed(host), host
    assert not host_allowed("rebind.evil.example")
    assert not host_allowed("")
    assert host_allowed("referee.club.example", ("referee.club.example",))
    client = _client(service, ALLOWED_HOSTS=["referee.club.example"])
    assert client.get("/api/state", base_url="http://referee.club.example:8000").status_code == 200


# ----------------------------------------------------------------------------- bodies
class _Unreadable:
    """A request body that fails the test if anyone reads it."""

    def read(self, *args: Any) -> bytes:
        raise AssertionError("the body was read")

    readline = readlines = read


def test_a_large_body_is_refused_before_it_is_read(service: Any) -> None:
    client = _client(service)
    for path in ("/api/control/pause", "/api/login", "/api/state"):
        response = client.post(path, headers={"Origin": "http://localhost",
                                              "Content-Type": "application/json"},
                               environ_overrides={"wsgi.input": _Unreadable(),
                                                  "CONTENT_LENGTH": str(10**9)})
        assert response.status_code == 413
        assert response.get_json()["error"] == "too_large"
    ok = client.post("/api/control/pause", json={"pad": "x" * 8000},
                     headers={"Origin": "http://localhost"})
    assert ok.status_code == 200
    client.post("/api/control/resume", json={}, headers={"Origin": "http://localhost"})


@pytest.mark.parametrize(("body", "code"), [
    (b"[" * 8000 + b"]" * 8000, "malformed_json"),  # past the parser's recursion limit
    (b'{"a": ' + b"[" * 9 + b"]" * 9 + b"}", "malformed_json"),  # deeper than any control
    (b'{"n": ' + b"9" * 5000 + b"}", "malformed_json"),  # past Python's integer digits
    (b'{"corners_px": [[1e200, 0], [1, 0], [1, 1], [0, 1]]}', "bad_number"),
    (b'{"add": {"x": 1e200, "y": 1, "colour": "black"}}', "bad_number"),
    (b'{"remove": 100000000000000000000000000000}', "bad_number"),
    (b'{"x": NaN}', "bad_number"),
])
def test_hostile_json_is_a_clear_400(service: Any, body: bytes, code: str) -> None:
    client = _client(service)
    for name in ("set_corners", "correct"):
        response = client.post(f"/api/control/{name}", data=body,
                               headers={"Origin": "http://localhost",
                                        "Content-Type": "application/json"})
        assert response.status_code == 400, response.get_data(as_text=True)
        assert response.get_json()["error"] == code
        assert len(response.get_json()["message"]) < 300


@pytest.mark.parametrize("path", ["/api/matches/{big}", "/api/matches/{big}/export",
                                  "/api/matches/1/snapshots/{big}.jpg", "/replay/{big}"])
def test_ids_beyond_64_bits_are_not_found(service: Any, path: str) -> None:
    response = _client(service).get(path.format(big=2**64 + 5))
    assert response.status_code in (404, 200)  # the replay page itself loads, its data 404s
    if path.startswith("/api"):
        assert response.get_json()["error"] == "unknown_match" or "snapshot" in path


# ----------------------------------------------------------------------------- sessions
def test_logout_revokes_the_cookie_and_logins_survive_a_restart(tmp_path: Path) -> None:
    from web.server import app_for

    svc = make_service(tmp_path / "log.sqlite")
    headers = {"Origin": "http://localhost"}
    app = app_for(svc, host="0.0.0.0", pin="583920")
    first = app.test_client()
    assert first.post("/api/login", json={"pin": "583920"}, headers=headers).status_code == 200
    cookie = first.get_cookie("session")
    assert cookie is not None
    secret = tmp_path / "session-secret"
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "owner-sessions.json").stat().st_mode) == 0o600

    restarted = app_for(svc, host="0.0.0.0", pin="583920").test_client()  # same data directory
    restarted.set_cookie("session", cookie.value)
    assert restarted.get("/api/session").get_json()["owner"] is True
    assert restarted.post("/api/control/pause", json={}, headers=headers).status_code == 200

    assert first.post("/api/logout", json={}, headers=headers).status_code == 200
    stolen = app_for(svc, host="0.0.0.0", pin="583920").test_client()
    stolen.set_cookie("session", cookie.value)  # a copy of the cookie from before the logout
    assert stolen.get("/api/session").get_json()["owner"] is False
    response = stolen.post("/api/control/resume", json={}, headers=headers)
    assert response.status_code == 401


@pytest.mark.parametrize(("pin", "weak"), [
    ("1", True), ("4821", True), ("00000000", True), ("123456", True), ("987654", True),
    ("abcdef", True), ("583920", False), ("tabletop", False), ("112358", False),
])
def test_weak_pins_are_refused_with_the_reason(pin: str, weak: bool) -> None:
    assert (pin_weakness(pin) is not None) is weak
    if weak:
        from referee.commands.serve import check_pin

        with pytest.raises(SystemExit, match="--pin: the PIN must"):
            check_pin("0.0.0.0", pin)


def test_many_addresses_together_are_locked_out_too(service: Any) -> None:
    app = create_app({"TESTING": True, "REQUIRE_PIN": True, "PIN": "583920",
                      "PIN_MAX_FAILURES": 5, "PIN_MAX_FAILURES_ALL": 6}, service=service)
    client = app.test_client()
    codes = [client.post("/api/login", json={"pin": "000001"},
                         headers={"Origin": "http://localhost"},
                         environ_overrides={"REMOTE_ADDR": f"10.0.0.{i}"}).status_code
             for i in range(8)]
    assert codes == [401] * 6 + [429] * 2


# ------------------------------------------------------------------------------ streams
def test_streams_are_capped_per_address_and_in_all(service: Any) -> None:
    app = create_app({"TESTING": True, "STREAMS_PER_ADDRESS": 2, "STREAMS_MAX": 3,
                      "SSE_KEEPALIVE_S": 0.05}, service=service)
    client = app.test_client()

    def open_from(address: str) -> Any:
        return client.get("/api/events", buffered=False,
                          environ_overrides={"REMOTE_ADDR": address})

    a1, a2 = open_from("10.0.0.1"), open_from("10.0.0.1")
    assert a1.status_code == a2.status_code == 200
    refused = open_from("10.0.0.1")
    assert refused.status_code == 503 and refused.get_json()["error"] == "too_many_streams"
    assert "10.0.0.1 already has 2" in refused.get_json()["message"]
    b1 = open_from("10.0.0.2")
    assert b1.status_code == 200
    full = open_from("10.0.0.3")
    assert full.status_code == 503 and "as many live event streams" in full.get_json()["message"]
    assert client.get("/api/state").status_code == 200  # the page is always answered
    a1.close()
    again = open_from("10.0.0.3")
    assert again.status_code == 200
    for response in (a2, b1, again):
        response.close()
    assert app.extensions["referee_streams"].count() == 0


def _serve(service: Any, **limits: Any) -> tuple[Any, threading.Thread, int]:
    from web.server import make_server

    server = make_server(service, host="127.0.0.1", port=0, threads=16)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    return server, thread, int(server.effective_port)


def test_the_real_server_refuses_a_huge_body_unread_and_drops_a_trickling_request(
        service: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import web.server as ws
    from web.server import stop_server

    monkeypatch.setattr(ws, "REQUEST_HEAD_TIMEOUT_S", 1.0)
    server, thread, port = _serve(service)
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.putrequest("POST", "/api/control/pause")
        conn.putheader("Content-Type", "application/json")
        conn.putheader("Content-Length", str(10**9))  # 1 GB announced, 2 bytes sent
        conn.endheaders(b"{}")
        t0 = time.monotonic()
        assert conn.getresponse().status == 413 and time.monotonic() - t0 < 5
        conn.close()

        slow = socket.create_connection(("127.0.0.1", port), timeout=10)
        slow.sendall(b"GET /api/state HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # never finished
        t0 = time.monotonic()
        assert slow.recv(100) == b""  # closed by the server
        assert time.monotonic() - t0 < 8
        slow.close()
        _, status = _get(port, "/api/state")
        assert status == 200
    finally:
        stop_server(server, join=thread)


def _get(port: int, path: str) -> tuple[bytes, int]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", path)
    response = conn.getresponse()
    body = response.read()
    conn.close()
    return body, response.status


@pytest.mark.slow
def test_a_stream_reader_that_stops_reading_is_dropped(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A picture stream nobody reads: its worker gives up after the slow-client time and the
    stream's slot is free again (the server holds at most the high watermark for it)."""
    import web.server as ws
    from web.server import stop_server

    monkeypatch.setattr(ws, "SLOW_CLIENT_TIMEOUT_S", 2.0)
    monkeypatch.setattr(ws, "OUTBUF_HIGH_WATERMARK", 64 * 1024)
    svc = make_service(tmp_path / "log.sqlite").start()
    server, thread, port = _serve(svc)
    budget = server.referee_app.extensions["referee_streams"]
    try:
        deadline = time.monotonic() + 120
        while _get(port, "/api/frame.jpg")[1] != 200 and time.monotonic() < deadline:
            time.sleep(0.5)
        sock = socket.create_connection(("127.0.0.1", port))
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.sendall(b"GET /api/stream.mjpg HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        deadline = time.monotonic() + 60
        while budget.count("picture") == 0 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert budget.count("picture") == 1
        while budget.count("picture") == 1 and time.monotonic() < deadline:
            time.sleep(0.2)  # never reading a byte
        assert budget.count("picture") == 0, "the unread stream was not dropped"
        assert _get(port, "/api/state")[1] == 200
        sock.close()
    finally:
        stop_server(server, join=thread)
        svc.stop()


def test_a_page_that_leaves_frees_its_streams_at_once(service: Any) -> None:
    """A page closed (or reloaded) gives its event and picture streams back within seconds,
    not at the next keep-alive 15 s later: reloading a page a few times never fills its
    address's share. Both ways a client leaves: a clean close (FIN) after reading what came,
    and a close with data still unread (RST)."""
    from web.server import stop_server

    server, thread, port = _serve(service)  # the service is not started: no events, only
    budget = server.referee_app.extensions["referee_streams"]  # keep-alives every 15 s
    per_address = int(server.referee_app.config["STREAMS_PER_ADDRESS"])
    try:
        for unread in (False, True):
            socks = []
            for i in range(per_address):
                sock = socket.create_connection(("127.0.0.1", port), timeout=10)
                # (no camera picture here: a picture stream sends nothing to read)
                path = "/api/stream.mjpg" if unread and i % 2 else "/api/events"
                sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
                if not unread:
                    assert sock.recv(65536).startswith(b"HTTP/1.1 200")
                socks.append(sock)
            deadline = time.monotonic() + 30
            while budget.count() < per_address and time.monotonic() < deadline:
                time.sleep(0.05)
            assert budget.count() == per_address
            for sock in socks:
                sock.close()
            left = time.monotonic()
            while budget.count() and time.monotonic() - left < 10:
                time.sleep(0.05)
            assert budget.count() == 0, f"{budget.count()} streams still held (unread={unread})"
            assert time.monotonic() - left < 5  # a keep-alive is 15 s away
    finally:
        stop_server(server, join=thread)


# ------------------------------------------------------------------------------ fuzzing
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)
fields = st.sampled_from(["game", "players", "variant", "question_id", "choice", "remove",
                          "index", "colour", "add", "cell", "stack", "corners_px", "pin", "x"])
bodies = st.one_of(
    st.dictionaries(fields, json_values, max_size=4),
    st.fixed_dictionaries({}, optional={
        "game": st.sampled_from(["dition", "domination", "go"]),
        "players": st.lists(st.sampled_from(["G", "R", "B", "Y", "black", "white"]),
                            max_size=5),
        "variant": st.sampled_from(["standard", "fast", "individual", "nope"]),
        "corners_px": st.lists(st.lists(st.floats(-1e7, 1e7), min_size=2, max_size=2),
                               max_size=5),
        "add": st.fixed_dictionaries({"x": st.floats(-5, 25), "y": st.floats(-5, 25),
                                      "colour": st.sampled_from(["black", "white", "red"])}),
        "remove": st.integers(-3, 50), "index": st.integers(-3, 50),
        "colour": st.sampled_from(["black", "white"]), "cell": st.sampled_from(["d4", "zz"]),
        "stack": st.text("GR", max_size=7),
    }),
    json_values,
)


@pytest.fixture(scope="module")
def fuzz_client(tmp_path_factory: pytest.TempPathFactory) -> Any:
    tmp = tmp_path_factory.mktemp("fuzz")
    svc = make_service(tmp / "log.sqlite")
    svc.photo_dir = str(tmp / "photos")  # capture_photo never writes into the checkout
    yield create_app({"TESTING": True, "PIN_MAX_FAILURES": 10**6,
                      "PIN_MAX_FAILURES_ALL": 10**6}, service=svc).test_client()
    svc.stop()


@settings(max_examples=250, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(path=st.sampled_from([f"/api/control/{c}" for c in COMMANDS]
                            + ["/api/login", "/api/logout", "/api/control/nope"]),
       body=bodies, raw=st.booleans(), junk=st.binary(max_size=30))
def test_no_api_body_crashes_the_server(fuzz_client: Any, path: str, body: Any, raw: bool,
                                        junk: bytes) -> None:
    data = junk if raw else json.dumps(body).encode()
    response = fuzz_client.post(path, data=data, headers={"Origin": "http://localhost",
                                                          "Content-Type": "application/json"})
    assert response.status_code in (200, 400, 404, 409), response.get_data(as_text=True)
    payload = response.get_json()
    assert isinstance(payload, dict)
    if response.status_code != 200:
        assert set(payload) == {"error", "message"}
    assert fuzz_client.get("/api/state").status_code == 200
