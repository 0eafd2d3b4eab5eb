"""Properties of the guards: no cross-site or non-JSON request ever changes anything."""

from __future__ import annotations

import dataclasses
import enum
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from web_support import make_service, observable

from web.app import create_app
from web.server import app_for, is_loopback, make_server, stop_server
from web.service_access import json_text, to_jsonable

HOST = "referee.local:8000"
BASE = f"http://{HOST}"
COMMANDS = ["new_match", "confirm", "undo", "answer", "correct", "draw", "pause", "resume"]


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Any:
    svc = make_service(tmp_path_factory.mktemp("sec") / "log.sqlite")
    yield svc
    if callable(getattr(svc, "stop", None)):
        svc.stop()


@pytest.fixture(scope="module")
def client(service: Any) -> Any:
    return create_app({"TESTING": True, "ALLOWED_HOSTS": ["referee.local"], "REQUIRE_PIN": True,
                       "PIN": "4821", "PIN_MAX_FAILURES": 10**6, "PIN_MAX_FAILURES_ALL": 10**6},
                      service=service).test_client()


foreign_origins = st.builds(
    lambda scheme, host, port: f"{scheme}://{host}" + (f":{port}" if port else ""),
    st.sampled_from(["http", "https"]),
    st.from_regex(r"[a-z][a-z0-9-]{0,20}(\.[a-z]{2,6}){0,2}", fullmatch=True)
    .filter(lambda h: h != "referee.local"),
    st.one_of(st.none(), st.integers(1, 65535)),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(origin=foreign_origins, command=st.sampled_from(COMMANDS),
       with_pin=st.booleans())
def test_no_foreign_origin_changes_anything(client: Any, service: Any, origin: str,
                                            command: str, with_pin: bool) -> None:
    before = observable(service)
    headers = {"Origin": origin}
    if with_pin:
        headers["X-Referee-Pin"] = "4821"
    response = client.post(f"/api/control/{command}", json={}, base_url=BASE, headers=headers)
    assert response.status_code == 403
    assert response.get_json()["error"] == "cross_site"
    assert observable(service) == before


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=st.binary(max_size=64), command=st.sampled_from(COMMANDS),
       content_type=st.sampled_from(["text/plain", "application/x-www-form-urlencoded",
                                     "application/json"]))
def test_no_body_that_is_not_a_json_object_changes_anything(
        client: Any, service: Any, body: bytes, command: str, content_type: str) -> None:
    import json

    try:
        parsed = json.loads(body)
    except ValueError:
        parsed = None
    if content_type == "application/json" and (isinstance(parsed, dict) or not body.strip()):
        return  # a real JSON object (or an empty body): that is a valid request
    before = observable(service)
    response = client.post(f"/api/control/{command}", data=body, base_url=BASE,
                           headers={"Origin": BASE, "Content-Type": content_type,
                                    "X-Referee-Pin": "4821"})
    assert response.status_code in (400, 415)
    assert observable(service) == before


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pin=st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=12)
       .filter(lambda p: p != "4821"))
def test_no_wrong_pin_opens_the_controls(client: Any, service: Any, pin: str) -> None:
    before = observable(service)
    response = client.post("/api/control/pause", json={}, base_url=BASE,
                           headers={"Origin": BASE, "X-Referee-Pin": pin})
    assert response.status_code == 401
    assert observable(service) == before


@pytest.mark.parametrize("path", ["/", "/history", "/api/state", "/api/nope"])
def test_no_other_site_may_frame_or_script_the_page(client: Any, path: str) -> None:
    headers = client.get(path).headers
    assert headers["X-Frame-Options"] == "DENY"
    assert "frame-ancestors 'none'" in headers["Content-Security-Policy"]
    assert "script-src 'self';" in headers["Content-Security-Policy"]
    assert headers["X-Content-Type-Options"] == "nosniff"


# ------------------------------------------------------------------------------------- server
@pytest.mark.parametrize("host, loopback", [
    ("127.0.0.1", True), ("127.5.5.5", True), ("localhost", True), ("::1", True),
    ("[::1]", True), ("0.0.0.0", False), ("192.168.1.20", False), ("::", False),
    ("referee.local", False),
])
def test_is_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_app_beyond_localhost_requires_the_pin(service: Any, capsys: Any) -> None:
    app = app_for(service, host="0.0.0.0", pin="246813")
    assert app.config["REQUIRE_PIN"] is True and app.config["PIN"] == "246813"
    with pytest.raises(ValueError, match="at least 6 characters"):
        app_for(service, host="0.0.0.0", pin="2468")
    app = app_for(service, host="192.168.1.20")  # no PIN given: one is made and shown
    pin = app.config["PIN"]
    assert len(pin) == 6 and pin.isdigit()
    assert f"owner PIN: {pin}" in capsys.readouterr().out
    assert app_for(service, host="127.0.0.1").config["REQUIRE_PIN"] is False


def test_server_listens_on_loopback(service: Any) -> None:
    import threading
    import urllib.request

    server = make_server(service, host="127.0.0.1", port=0)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.effective_port}/api/session"
        with urllib.request.urlopen(url, timeout=5) as response:
            assert response.headers["Server"] == "tabletop-referee"
            assert response.read() == b'{"require_pin":false,"owner":true}\n'
    finally:
        stop_server(server, join=thread)
    assert not server._map, "sockets left open after the stop"


def test_a_taken_port_is_a_clear_error(service: Any) -> None:
    from web.errors import ServerStartError

    first = make_server(service, host="127.0.0.1", port=0)
    try:
        with pytest.raises(ServerStartError, match=f"127.0.0.1:{first.effective_port}.*--port"):
            make_server(service, host="127.0.0.1", port=first.effective_port)
    finally:
        first.close()


# ------------------------------------------------------------------------------ serialisation
class _Colour(enum.Enum):
    BLACK = "black"


@dataclasses.dataclass(frozen=True)
class _Disc:
    x: float
    colour: _Colour


def test_to_jsonable_handles_what_the_service_returns(tmp_path: Path) -> None:
    value = {"d": _Disc(1.5, _Colour.BLACK), "t": (1, 2), "n": np.float32(0.25),
             "a": np.arange(3), "nan": math.nan, 3: {"s": {"x"}}}
    assert to_jsonable(value) == {"d": {"x": 1.5, "colour": "black"}, "t": [1, 2], "n": 0.25,
                                  "a": [0, 1, 2], "nan": None, "3": {"s": ["x"]}}


@pytest.mark.parametrize("value", [
    {"d": _Disc(1.5, _Colour.BLACK), "t": (1, 2), "n": np.float32(0.25), "a": np.arange(3),
     3: {"s": {"x"}}, "b": b"jpeg", "f": np.float64(2.5), "e": [], "u": "\u00e9\n"},
    {"deep": [{"x": np.float64("nan")}], "ok": 1},  # a NaN inside: written as null
    {("tuple", "key"): 1},  # a key json cannot write
    [math.inf, None, True],
])
def test_json_text_writes_what_to_jsonable_makes(value: object) -> None:
    """The events' fast JSON writer gives the same JSON as `to_jsonable` then json (which
    turns NaN and infinities into null, tuples and sets into lists, numpy into numbers)."""
    text = json_text(value)
    assert json.loads(text) == to_jsonable(value)
    assert "NaN" not in text and "Infinity" not in text and "\n" not in text
