"""The live view: `GET /api/state`, `/api/events` (SSE), `/api/frame.jpg`, `/api/stream.mjpg`,
`/api/calibration/target` (the calibration target found in the latest frame)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

from flask import Blueprint, Response, current_app, jsonify, request

from web.errors import BadRequestError, FrameUnavailableError
from web.frames import FrameCache
from web.service_access import get_service, to_jsonable
from web.sse import StreamBudget, state_stream

bp = Blueprint("api_live", __name__, url_prefix="/api")

_NO_STORE = {"Cache-Control": "no-store"}


def _frames() -> FrameCache:
    return current_app.extensions["referee_frames"]  # type: ignore[no-any-return]


def _want_overlay() -> bool:
    return request.args.get("overlay", "1").lower() not in ("0", "false", "no", "off")


def _budget() -> StreamBudget:
    return current_app.extensions["referee_streams"]  # type: ignore[no-any-return]


def _reader_gone() -> Callable[[], bool] | None:
    """Whether this request's client has disconnected (waitress tells; other servers: None)."""
    gone = request.environ.get("waitress.client_disconnected")
    return gone if callable(gone) else None


def _open_stream(kind: str, body: Iterator[Any], mimetype: str,
                 headers: dict[str, str]) -> Response:
    """A streamed response counted against the stream budget (503 over it) until it closes."""
    config = current_app.config
    address = request.remote_addr or "?"
    budget = _budget()
    budget.open(address, kind, per_address=int(config["STREAMS_PER_ADDRESS"]),
                total=int(config["STREAMS_MAX"]),
                kind_max=int(config["MJPEG_MAX"]) if kind == "picture" else None)
    response = Response(body, mimetype=mimetype, headers=headers)
    response.call_on_close(lambda: budget.close(address, kind))
    return response


@bp.get("/state")
def state() -> Response:
    response = jsonify(to_jsonable(get_service().state()))
    response.headers.update(_NO_STORE)
    return response


def state_events(source: object) -> Response:
    """The SSE response streaming `source`'s state (a referee service, or the club's hub)."""
    config = current_app.config
    stream = state_stream(source, keepalive_s=float(config["SSE_KEEPALIVE_S"]),
                          max_duration_s=float(config["SSE_MAX_S"]),
                          min_interval_s=float(config["SSE_MIN_INTERVAL_S"]),
                          shared=current_app.extensions["referee_states"], gone=_reader_gone())
    return _open_stream("event", stream, "text/event-stream",
                        {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


@bp.get("/events")
def events() -> Response:
    return state_events(get_service())


def _want_width() -> int | None:
    """`?w=PX`: the width the page shows the picture at (None: the full frame)."""
    raw = request.args.get("w")
    if raw is None or raw == "":
        return None
    try:
        width = int(raw)
    except ValueError:
        raise BadRequestError(f"w must be a whole number of pixels, got {raw!r}",
                              code="bad_width") from None
    if not 1 <= width <= 10_000:
        raise BadRequestError(f"w must be 1..10000 pixels, got {width}", code="bad_width")
    return width


@bp.get("/frame.jpg")
def frame() -> Response:
    jpeg = _frames().get(get_service(), overlay=_want_overlay(), width=_want_width())
    if not jpeg:
        raise FrameUnavailableError("no camera frame yet: the camera is starting or lost")
    return Response(jpeg, mimetype="image/jpeg", headers=_NO_STORE)


@bp.get("/calibration/target")
def calibration_target() -> Response:
    """The calibration target as the latest frame shows it (the calibration page's live view)."""
    answer = get_service().live_target()
    if answer is None:
        raise FrameUnavailableError("no camera frame yet: the camera is starting or lost")
    response = jsonify(answer)
    response.headers.update(_NO_STORE)
    return response


def _mjpeg(service: object, frames: FrameCache, overlay: bool, fps: float,
           max_s: float = 600.0, gone: Callable[[], bool] | None = None) -> Iterator[bytes]:
    """Pictures at `fps` (the same bytes for every client: `FrameCache`); ends after `max_s`
    (an `<img>` reconnects by itself) so that no stream holds a worker for ever, and as soon as
    `gone()` says the reader left."""
    period_s = 1.0 / max(fps, 0.1)
    previous: bytes | None = None
    ends = time.monotonic() + max_s
    while time.monotonic() < ends and not (gone is not None and gone()):
        jpeg = frames.get(service, overlay=overlay)
        if jpeg and jpeg is not previous:
            previous = jpeg
            yield (b"--frame\r\nContent-Type: image/jpeg\r\nContent-Length: "
                   + str(len(jpeg)).encode() + b"\r\n\r\n")
            yield jpeg  # the shared bytes themselves: no copy per client
            yield b"\r\n"
        time.sleep(period_s)


@bp.get("/stream.mjpg")
def stream() -> Response:
    fps = float(current_app.config["MJPEG_FPS"])
    get_service()  # no stream is counted for an app without a service
    max_s = float(current_app.config["MJPEG_MAX_S"])
    pictures = _mjpeg(get_service(), _frames(), _want_overlay(), fps, max_s, _reader_gone())
    return _open_stream("picture", pictures, "multipart/x-mixed-replace; boundary=frame",
                        dict(_NO_STORE))
