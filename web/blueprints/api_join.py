"""`GET /api/join`: the addresses phones open the page at, with a QR code (see web/join.py)."""

from __future__ import annotations

from flask import Blueprint, Response, current_app, jsonify, request

from web.join import join_info, mdns_name

bp = Blueprint("api_join", __name__, url_prefix="/api")


@bp.get("/join")
def join() -> Response:
    listen = str(current_app.config.get("LISTEN_HOST") or request.host.rsplit(":", 1)[0])
    port = request.host.rsplit(":", 1)[1] if ":" in request.host.split("]")[-1] else (
        "443" if request.scheme == "https" else "80")
    info = join_info(listen.strip("[]"), int(port), request.scheme, mdns=mdns_name())
    response = jsonify(info)
    response.headers["Cache-Control"] = "no-store"
    return response
