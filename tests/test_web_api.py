"""The JSON API through Flask's test client: every route, good and bad input, no state change."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from flask import Flask
from flask.testing import FlaskClient
from web_support import make_service, observable

from web.app import create_app

HOST = "referee.local:8000"
BASE = f"http://{HOST}"
JSON_HEADERS = {"Origin": BASE}
TEST_CONFIG = {"TESTING": True, "ALLOWED_HOSTS": ["referee.local"]}


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Any]:
    svc = make_service(tmp_path / "log.sqlite")
    yield svc
    stop = getattr(svc, "stop", None)
    if callable(stop):
        stop()


@pytest.fixture
def app(service: Any) -> Flask:
    return create_app({**TEST_CONFIG, "SSE_KEEPALIVE_S": 0.05, "SSE_MAX_S": 5.0},
                      service=service)


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


def post(client: FlaskClient, path: str, body: Any = None, **kw: Any) -> Any:
    headers = {**JSON_HEADERS, **kw.pop("headers", {})}
    return client.post(path, json={} if body is None else body, headers=headers,
                       base_url=BASE, **kw)


def assert_json_error(response: Any, status: int, code: str | None = None) -> dict[str, Any]:
    assert response.status_code == status, response.get_data(as_text=True)
    assert response.mimetype == "application/json"
    body = response.get_json()
    assert set(body) == {"error", "message"}
    assert isinstance(body["message"], str) and len(body["message"]) > 5
    if code is not None:
        assert body["error"] == code
    return body


# ------------------------------------------------------------------------------ state & live
def test_state_is_the_services_state(client: FlaskClient, service: Any) -> None:
    response = client.get("/api/state")
    assert response.status_code == 200
    assert response.headers["Cache-Control"] == "no-store"
    body = response.get_json()
    expected = json.loads(json.dumps(service.state()))
    for key in ("game", "match_id", "players", "status", "to_move", "move_number", "position",
                "instruction", "events"):
        assert body[key] == expected[key], key
    assert body["game"] in ("dition", "domination")


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The real service with its frame thread running on the simulated table."""
    import time

    svc = make_service(tmp_path_factory.mktemp("running") / "log.sqlite")
    svc.start()
    deadline = time.monotonic() + 60
    while svc.latest_jpeg(overlay=False) is None and time.monotonic() < deadline:
        time.sleep(0.1)
    yield svc
    svc.stop()


def _decode(data: bytes) -> np.ndarray:
    image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    assert image is not None, "not a JPEG"
    return image


def test_no_frame_yet_is_503(client: FlaskClient, service: Any) -> None:
    assert service.latest_jpeg(overlay=True) is None  # not started: no camera frame yet
    body = assert_json_error(client.get("/api/frame.jpg"), 503, "no_frame")
    assert "camera" in body["message"]


def test_frame_is_the_camera_picture(running: Any) -> None:
    client = create_app({"TESTING": True}, service=running).test_client()
    plain = client.get("/api/frame.jpg?overlay=0")
    drawn = client.get("/api/frame.jpg")
    for response in (plain, drawn):
        assert response.status_code == 200 and response.mimetype == "image/jpeg"
        assert response.headers["Cache-Control"] == "no-store"
    image, overlay = _decode(plain.data), _decode(drawn.data)
    assert image.shape == (960, 1280, 3)  # the simulated camera's frame size
    assert overlay.shape == image.shape


def test_frame_is_encoded_at_the_width_the_page_shows(running: Any) -> None:
    client = create_app({"TESTING": True}, service=running).test_client()
    full = _decode(client.get("/api/frame.jpg?overlay=0").data)
    small = _decode(client.get("/api/frame.jpg?overlay=0&w=420").data)
    assert small.shape == (360, 480, 3), "420 px rounded up to 480, the frame's aspect kept"
    # the same picture, smaller: the full frame shrunk to 480 px matches it
    shrunk = cv2.resize(full, (480, 360), interpolation=cv2.INTER_AREA)
    assert np.mean(np.abs(shrunk.astype(int) - small.astype(int))) < 6
    assert _decode(client.get("/api/frame.jpg?w=5000").data).shape == full.shape, "not enlarged"
    # the overlay is drawn on the small copy, where the full-size one shrunk would put it
    drawn_full = _decode(client.get("/api/frame.jpg").data)
    drawn_small = _decode(client.get("/api/frame.jpg?w=420").data)
    assert drawn_small.shape == (360, 480, 3)
    shrunk = cv2.resize(drawn_full, (480, 360), interpolation=cv2.INTER_AREA)
    assert np.mean(np.abs(shrunk.astype(int) - drawn_small.astype(int))) < 8
    assert_json_error(client.get("/api/frame.jpg?w=wide"), 400, "bad_width")
    assert_json_error(client.get("/api/frame.jpg?w=0"), 400, "bad_width")


def test_frames_are_shared_between_requests_for_a_moment(running: Any) -> None:
    from web.frames import FrameCache

    now = [100.0]
    cache = FrameCache(max_age_s=0.2, clock=lambda: now[0])
    first = cache.get(running, overlay=True)
    assert first is not None
    now[0] += 0.1
    assert cache.get(running, overlay=True) is first  # young enough: no new encode
    assert cache.get(running, overlay=False) is not first  # the other picture is its own
    now[0] += 0.15
    running.referee.picture_changed()  # a new picture of the board (else a still one's again)
    again = cache.get(running, overlay=True)
    assert again is not first and _decode(again).shape == _decode(first).shape


def test_mjpeg_stream_sends_jpeg_parts(running: Any) -> None:
    client = create_app({**TEST_CONFIG, "MJPEG_FPS": 20.0}, service=running).test_client()
    response = client.get("/api/stream.mjpg?overlay=0", buffered=False)
    assert response.mimetype == "multipart/x-mixed-replace"
    assert response.mimetype_params["boundary"] == "frame"
    chunks = iter(response.response)
    data = b""
    for _ in range(2):  # the parts as bytes on the wire, however they are chunked
        while b"\r\n\r\n" not in data:
            data += next(chunks)
        head, _, data = data.partition(b"\r\n\r\n")
        assert head.startswith(b"--frame\r\nContent-Type: image/jpeg")
        length = int(head.split(b"Content-Length: ")[1])
        while len(data) < length + 2:
            data += next(chunks)
        assert _decode(data[:length]).shape == (960, 1280, 3)
        assert data[length:length + 2] == b"\r\n"
        data = data[length + 2:]
    response.close()


def _sse_messages(chunks: Iterator[bytes], count: int) -> list[tuple[str, str]]:
    """Read `count` SSE messages (event name, data); comments are returned as ("comment", text)."""
    out: list[tuple[str, str]] = []
    buffer = ""
    for chunk in chunks:
        buffer += chunk.decode() if isinstance(chunk, bytes) else chunk
        while "\n\n" in buffer:
            block, buffer = buffer.split("\n\n", 1)
            name, data = "message", ""
            for line in block.split("\n"):
                if line.startswith(":"):
                    name, data = "comment", line[1:].strip()
                elif line.startswith("event: "):
                    name = line[7:]
                elif line.startswith("data: "):
                    data = line[6:]
                elif line.startswith("retry: "):
                    name, data = "retry", line[7:]
            out.append((name, data))
            if len(out) == count:
                return out
    return out


def test_events_stream_pushes_state_after_a_command(app: Flask, service: Any) -> None:
    client = app.test_client()
    response = client.get("/api/events", buffered=False)
    assert response.mimetype == "text/event-stream"
    chunks = iter(response.response)
    first = _sse_messages(chunks, 2)
    assert first[0] == ("retry", "2000")
    assert first[1][0] == "state"
    assert json.loads(first[1][1])["status"] != "paused"
    # a command from another client changes the state; the stream pushes the new one
    assert post(app.test_client(), "/api/control/pause").status_code == 200
    pushed = [m for m in _sse_messages(chunks, 4) if m[0] == "state"]
    assert pushed and json.loads(pushed[0][1])["status"] == "paused"
    response.close()


def test_events_stream_keeps_alive_while_nothing_happens(app: Flask) -> None:
    response = app.test_client().get("/api/events", buffered=False)
    messages = _sse_messages(iter(response.response), 3)
    assert messages[2] == ("comment", "keep-alive")
    response.close()


def test_a_burst_of_events_is_pushed_as_one_state(service: Any) -> None:
    from web.sse import state_stream

    stream = state_stream(service, keepalive_s=0.3, min_interval_s=0.5)
    assert next(stream) == "retry: 2000\n\n"
    assert json.loads(next(stream).split("data: ", 1)[1])["status"] != "paused"
    for command in ("pause", "resume", "pause"):  # three events within a few milliseconds
        service.command(command, {})
    pushed = next(stream)
    assert pushed.startswith("event: state\n")
    assert json.loads(pushed.split("data: ", 1)[1])["status"] == "paused"  # the latest state
    assert next(stream) == ": keep-alive\n\n"  # nothing more was queued: one state in all
    stream.close()


def test_the_stream_ends_when_the_service_stops(tmp_path: Path) -> None:
    from web.sse import state_stream

    svc = make_service(tmp_path / "stop.sqlite")
    stream = state_stream(svc, keepalive_s=5.0, min_interval_s=0.0)
    next(stream), next(stream)
    svc.stop()
    rest = list(stream)  # ends instead of waiting for events that never come
    assert len(rest) <= 1 and all(m.startswith("event: state") for m in rest)


# ----------------------------------------------------------------------------------- controls
def test_control_reaches_the_service_and_is_logged(client: FlaskClient, service: Any) -> None:
    match_id = service.state()["match_id"]
    before = len(service.log.events(match_id))
    response = post(client, "/api/control/pause")
    assert response.status_code == 200
    assert response.get_json()["ok"] is True
    assert service.state()["status"] == "paused"
    assert len(service.log.events(match_id)) > before or service.state()["events"]
    assert post(client, "/api/control/resume").status_code == 200
    assert service.state()["status"] != "paused"


def test_new_match_starts_a_match_in_the_log(client: FlaskClient, service: Any) -> None:
    old = service.state()["match_id"]
    response = post(client, "/api/control/new_match",
                    {"game": "dition", "variant": "standard", "players": ["black", "white"]})
    assert response.status_code == 200
    new = service.state()["match_id"]
    assert new != old
    assert new in [m.id for m in service.log.list_matches()]


@pytest.mark.parametrize("body, why", [
    (b"{not json", "not JSON"),
    (b"[1, 2]", "an array"),
    (b'"pause"', "a string"),
])
def test_malformed_json_is_refused_without_change(client: FlaskClient, service: Any,
                                                  body: bytes, why: str) -> None:
    before = observable(service)
    response = client.post("/api/control/pause", data=body, base_url=BASE,
                           headers={**JSON_HEADERS, "Content-Type": "application/json"})
    assert_json_error(response, 400, "malformed_json")
    assert observable(service) == before, why


def test_non_json_content_type_is_refused(client: FlaskClient, service: Any) -> None:
    before = observable(service)
    for content_type in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data"):
        response = client.post("/api/control/pause", data="{}", base_url=BASE,
                               headers={**JSON_HEADERS, "Content-Type": content_type})
        assert_json_error(response, 415, "json_required")
    response = client.post("/api/control/pause", base_url=BASE, headers=JSON_HEADERS)
    assert_json_error(response, 415, "json_required")
    assert observable(service) == before


@pytest.mark.parametrize("headers", [
    {"Origin": "http://evil.example"},
    {"Origin": "http://referee.local:9999"},  # same host, another port: another origin
    {"Origin": "null"},
    {"Referer": "http://evil.example/page"},
    {"Sec-Fetch-Site": "cross-site"},
])
def test_cross_site_post_is_refused_without_change(client: FlaskClient, service: Any,
                                                   headers: dict[str, str]) -> None:
    before = observable(service)
    response = client.post("/api/control/pause", json={}, base_url=BASE, headers=headers)
    body = assert_json_error(response, 403, "cross_site")
    assert HOST in body["message"]
    assert observable(service) == before


def test_same_origin_referer_is_accepted(client: FlaskClient) -> None:
    response = client.post("/api/control/pause", json={}, base_url=BASE,
                           headers={"Referer": f"{BASE}/"})
    assert response.status_code == 200


def test_command_errors_become_json(client: FlaskClient, service: Any) -> None:
    before = observable(service)
    # a wrong answer to a question that was never asked: the state does not fit (or bad input)
    response = post(client, "/api/control/answer", {"question_id": "q-none", "choice": "in"})
    assert response.status_code in (400, 409)
    assert_json_error(response, response.status_code)
    assert_json_error(post(client, "/api/control/launch_rockets"), 404, "unknown_command")
    assert_json_error(post(client, "/api/control/Bad-Name!"), 400, "unknown_command")
    assert_json_error(post(client, "/api/control/set_corners", {"corners_px": [[1, 2]]}), 400,
                      "bad_corners")
    assert observable(service) == before


def test_command_error_status_codes() -> None:
    from referee.errors import CommandError
    from web.json_errors import command_error_status

    assert command_error_status(CommandError("busy", "x")) == 409
    assert command_error_status(CommandError("stale_question", "x")) == 409
    assert command_error_status(CommandError("bad_players", "x")) == 400
    assert command_error_status(CommandError("unknown_command", "x")) == 404


# ------------------------------------------------------------------------------------ the PIN
@pytest.fixture
def pin_app(service: Any) -> Flask:
    return create_app({**TEST_CONFIG, "REQUIRE_PIN": True, "PIN": "4821",
                       "PIN_MAX_FAILURES": 3, "PIN_LOCKOUT_S": 60.0}, service=service)


def test_spectators_can_watch_but_not_control(pin_app: Flask, service: Any) -> None:
    client = pin_app.test_client()
    assert client.get("/api/state").status_code == 200
    assert client.get("/api/matches").status_code == 200
    assert client.get("/api/session").get_json() == {"require_pin": True, "owner": False}
    before = observable(service)
    assert_json_error(post(client, "/api/control/pause"), 401, "pin_required")
    assert_json_error(post(client, "/api/control/pause", headers={"X-Referee-Pin": "0000"}),
                      401, "wrong_pin")
    assert observable(service) == before


def test_pin_header_unlocks_one_request(pin_app: Flask, service: Any) -> None:
    client = pin_app.test_client()
    response = post(client, "/api/control/pause", headers={"X-Referee-Pin": "4821"})
    assert response.status_code == 200
    assert service.state()["status"] == "paused"
    assert_json_error(post(client, "/api/control/resume"), 401, "pin_required")


def test_login_sets_a_session_and_logout_ends_it(pin_app: Flask, service: Any) -> None:
    client = pin_app.test_client()
    assert_json_error(post(client, "/api/login", {"pin": "1111"}), 401, "wrong_pin")
    assert_json_error(post(client, "/api/login", {"code": "4821"}), 400, "malformed_json")
    response = post(client, "/api/login", {"pin": "4821"})
    assert response.status_code == 200 and response.get_json()["owner"] is True
    cookie = response.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    assert post(client, "/api/control/pause").status_code == 200
    assert client.get("/api/session", base_url=BASE).get_json()["owner"] is True
    assert post(client, "/api/logout").status_code == 200
    assert_json_error(post(client, "/api/control/resume"), 401, "pin_required")


def test_login_is_also_protected_against_cross_site(pin_app: Flask) -> None:
    client = pin_app.test_client()
    response = client.post("/api/login", json={"pin": "4821"}, base_url=BASE,
                           headers={"Origin": "http://evil.example"})
    assert_json_error(response, 403, "cross_site")
    assert "Set-Cookie" not in response.headers


def test_repeated_wrong_pins_lock_the_address_out(pin_app: Flask) -> None:
    client = pin_app.test_client()
    for _ in range(3):
        assert_json_error(post(client, "/api/login", {"pin": "0000"}), 401, "wrong_pin")
    assert_json_error(post(client, "/api/login", {"pin": "4821"}), 429, "too_many_attempts")


def test_no_pin_set_keeps_the_controls_locked(service: Any) -> None:
    client = create_app({**TEST_CONFIG, "REQUIRE_PIN": True, "PIN": None},
                        service=service).test_client()
    assert_json_error(post(client, "/api/control/pause", headers={"X-Referee-Pin": ""}),
                      401, "no_pin_set")


# ------------------------------------------------------------------------------------ history
@pytest.fixture
def logged(service: Any) -> dict[str, Any]:
    """A finished match written straight into the real log, with a snapshot."""
    log = service.log
    match_id = log.new_match("dition", ["black", "white"], variant="standard",
                             start_position={"discs": []})
    discs: list[dict[str, Any]] = []
    jpeg = cv2.imencode(".jpg", np.full((60, 80, 3), (10, 200, 30), np.uint8))[1].tobytes()
    seqs = []
    for i, (x, y) in enumerate([(4.0, 5.5), (6.25, 5.5), (10.0, 10.0)]):
        colour = "black" if i % 2 == 0 else "white"
        discs.append({"x": x, "y": y, "colour": colour})
        record = log.append(match_id, {"type": "move", "colour": colour, "x": x, "y": y,
                                       "outcome": "quiet", "removed": []},
                            position={"discs": list(discs)},
                            snapshot_jpeg=jpeg if i == 1 else None)
        seqs.append(record.seq)
    log.append(match_id, {"type": "end", "winner": "white", "reason": "agreed",
                          "text": "White wins"})
    log.end_match(match_id, {"winner": "white", "reason": "agreed"})
    return {"id": match_id, "seqs": seqs, "jpeg": jpeg, "discs": discs}


def test_matches_lists_the_log(client: FlaskClient, logged: dict[str, Any]) -> None:
    body = client.get("/api/matches").get_json()
    ids = [m["id"] for m in body["matches"]]
    assert logged["id"] in ids
    ours = next(m for m in body["matches"] if m["id"] == logged["id"])
    assert ours["game"] == "dition" and ours["players"] == ["black", "white"]
    assert ours["events"] == 4 and ours["result"]["winner"] == "white"


def test_match_has_its_events_with_positions(client: FlaskClient, logged: dict[str, Any]) -> None:
    body = client.get(f"/api/matches/{logged['id']}").get_json()
    assert body["match"]["id"] == logged["id"]
    events = body["events"]
    assert [e["type"] for e in events] == ["move", "move", "move", "end"]
    assert [e["seq"] for e in events[:3]] == logged["seqs"]
    assert events[2]["position"]["discs"] == logged["discs"]
    assert [e["snapshot"] for e in events] == [False, True, False, False]


def test_unknown_match_is_404_everywhere(client: FlaskClient) -> None:
    for path in ("/api/matches/9999", "/api/matches/9999/export?format=csv",
                 "/api/matches/9999/snapshots/1.jpg"):
        body = assert_json_error(client.get(path), 404, "unknown_match")
        assert "9999" in body["message"]


@pytest.mark.parametrize("fmt, mimetype", [("json", "application/json"), ("csv", "text/csv"),
                                           ("txt", "text/plain")])
def test_export(client: FlaskClient, logged: dict[str, Any], fmt: str, mimetype: str) -> None:
    response = client.get(f"/api/matches/{logged['id']}/export?format={fmt}")
    assert response.status_code == 200
    assert response.mimetype == mimetype
    disposition = response.headers["Content-Disposition"]
    assert disposition.startswith("attachment") and f"match-{logged['id']}.{fmt}" in disposition
    text = response.get_data(as_text=True)
    if fmt == "json":
        assert json.loads(text)["match"]["id"] == logged["id"]
    elif fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(text)))
        assert [float(r["x"]) for r in rows if r["type"] == "move"] == [4.0, 6.25, 10.0]
    else:
        assert f"Match {logged['id']}" in text and "6.25" in text


def test_export_rejects_an_unknown_format(client: FlaskClient, logged: dict[str, Any]) -> None:
    body = assert_json_error(client.get(f"/api/matches/{logged['id']}/export?format=pdf"), 400,
                             "bad_format")
    assert "pdf" in body["message"]


def test_snapshot_is_the_logged_jpeg(client: FlaskClient, logged: dict[str, Any]) -> None:
    seq = logged["seqs"][1]
    response = client.get(f"/api/matches/{logged['id']}/snapshots/{seq}.jpg")
    assert response.status_code == 200 and response.mimetype == "image/jpeg"
    assert response.data == logged["jpeg"]
    missing = logged["seqs"][0]
    assert_json_error(client.get(f"/api/matches/{logged['id']}/snapshots/{missing}.jpg"), 404,
                      "unknown_snapshot")


# ------------------------------------------------------------------------------ routing errors
def test_unknown_route_is_json_404(client: FlaskClient) -> None:
    body = assert_json_error(client.get("/api/nope"), 404, "not_found")
    assert "/api/nope" in body["message"]
    assert_json_error(client.get("/api/matches/abc"), 404)


def test_wrong_method_is_json_405(client: FlaskClient) -> None:
    response = client.get("/api/control/pause")
    body = assert_json_error(response, 405, "method_not_allowed")
    assert "POST" in response.headers["Allow"] and "GET" in body["message"]
    assert_json_error(client.delete("/api/state", base_url=BASE), 405)


# ---------------------------------------------------------------------------------- the pages
@pytest.mark.parametrize("path", ["/", "/history", "/calibrate", "/replay/1"])
def test_pages_and_every_asset_they_use_load(client: FlaskClient, path: str) -> None:
    import re

    response = client.get(path)
    assert response.status_code == 200 and response.mimetype == "text/html"
    html = response.get_data(as_text=True)
    assets = re.findall(r'(?:src|href)="(/static/[^"]+)"', html)
    assert any(a.endswith(".js") for a in assets) and any(a.endswith(".css") for a in assets)
    for asset in assets:
        assert client.get(asset).status_code == 200, asset
    assert "http://" not in html.replace("http://www.w3.org", "")  # everything served locally


def test_scripts_import_only_local_modules(client: FlaskClient) -> None:
    import re

    root = Path(__file__).resolve().parent.parent / "web" / "static" / "js"
    for script in root.glob("*.js"):
        text = script.read_text(encoding="utf-8")
        for target in re.findall(r'from\s+"([^"]+)"', text):
            assert target.startswith("./"), f"{script.name} imports {target}"
            assert client.get(f"/static/js/{target[2:]}").status_code == 200
        assert "https://" not in text and "cdn" not in text.lower()
