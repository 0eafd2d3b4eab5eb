"""The live view: `GET /api/state`, `/api/events` (SSE), `/api/frame.jpg`, `/api/stream.mjpg`."""

from __future__ import annotations

import time
from collections.abc import Iterator

from flask import Blueprint, Response, current_app, jsonify, request

from web.errors import FrameUnavailableError
from web.frames import FrameCache
from web.service_access import get_service, to_jsonable
from web.sse import state_stream

bp = Blueprint("api_live", __name__, url_prefix="/api")

_NO_STORE = {"Cache-Control": "no-store"}


def _frames() -> FrameCache:
    return current_app.extensions["referee_frames"]  # type: ignore[no-any-return]


def _want_overlay() -> bool:
    return request.args.get("overlay", "1").lower() not in ("0", "false", "no", "off")


@bp.get("/state")
def state() -> Response:
    response = jsonify(to_jsonable(get_service().state()))
    response.headers.update(_NO_STORE)
    return response


@bp.get("/events")
def events() -> Response:
    config = current_app.config
    stream = state_stream(get_service(), keepalive_s=float(config["SSE_KEEPALIVE_S"]),
                          max_duration_s=float(config["SSE_MAX_S"]),
                          min_interval_s=float(config["SSE_MIN_INTERVAL_S"]))
    return Response(stream, mimetype="text/event-stream",
                    headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


@bp.get("/frame.jpg")
def frame() -> Response:
    jpeg = _frames().get(get_service(), overlay=_want_overlay())
    if not jpeg:
        raise FrameUnavailableError("no camera frame yet: the camera is starting or lost")
    return Response(jpeg, mimetype="image/jpeg", headers=_NO_STORE)


def _mjpeg(service: object, frames: FrameCache, overlay: bool, fps: float) -> Iterator[bytes]:
    period_s = 1.0 / max(fps, 0.1)
    previous: bytes | None = None
    while True:
        jpeg = frames.get(service, overlay=overlay)
        if jpeg and jpeg is not previous:
            previous = jpeg
            yield (b"--frame\r\nContent-Type: image/jpeg\r\nContent-Length: "
                   + str(len(jpeg)).encode() + b"\r\n\r\n" + jpeg + b"\r\n")
        time.sleep(period_s)


@bp.get("/stream.mjpg")
def stream() -> Response:
    fps = float(current_app.config["MJPEG_FPS"])
    return Response(_mjpeg(get_service(), _frames(), _want_overlay(), fps),
                    mimetype="multipart/x-mixed-replace; boundary=frame", headers=_NO_STORE)
