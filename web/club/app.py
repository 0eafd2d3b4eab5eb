"""The club page's Flask app: pages, the live state and its stream, the archive, the standings.

Spectators read everything; the organiser's controls (name a round, correct a player's name)
need the PIN beyond localhost, exactly as a table's controls (`web.security`).
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from datetime import date
from pathlib import Path
from typing import Any

from flask import Blueprint, Flask, Response, current_app, jsonify, render_template, request

from referee.club.store import MatchFilter, standings_csv
from web import json_errors, security
from web.app import DEFAULT_CONFIG
from web.blueprints import api_session
from web.blueprints.api_control import json_object_body
from web.blueprints.api_live import state_events
from web.errors import BadRequestError, NotFoundError

WEB = Path(__file__).resolve().parent.parent
HUB_KEY = "club_hub"

pages = Blueprint("club_pages", __name__)
api = Blueprint("club_api", __name__, url_prefix="/api")


def hub() -> Any:
    return current_app.extensions[HUB_KEY]


def store() -> Any:
    return hub().store


def create_club_app(hub_: Any, test_config: Mapping[str, Any] | None = None) -> Flask:
    app = Flask(__name__, static_folder=str(WEB / "static"),
                template_folder=str(WEB / "templates"))
    app.config.update(DEFAULT_CONFIG)
    app.config["SECRET_KEY"] = secrets.token_hex(32)
    if test_config is not None:
        app.config.update(test_config)
    app.json.sort_keys = False  # type: ignore[attr-defined]
    app.extensions[HUB_KEY] = hub_
    security.init_app(app)
    json_errors.init_app(app)
    app.register_blueprint(pages)
    app.register_blueprint(api)
    app.register_blueprint(api_session.bp)
    return app


# -- pages ---------------------------------------------------------------------------------------
def _page(template: str, **context: object) -> str:
    return render_template(f"club/{template}", require_pin=security.pin_required(),
                           owner=security.is_owner(), **context)


@pages.get("/")
def live() -> str:
    return _page("live.html", page="live")


@pages.get("/archive")
def archive() -> str:
    return _page("archive.html", page="archive")


@pages.get("/standings")
def standings_page() -> str:
    return _page("standings.html", page="standings")


@pages.get("/replay/<int:match_id>")
def replay(match_id: int) -> str:
    return _page("replay.html", page="archive", match_id=match_id,
                 base_template="club/base.html")


# -- live ----------------------------------------------------------------------------------------
@api.get("/state")
def state() -> Response:
    response = jsonify(hub().state())
    response.headers["Cache-Control"] = "no-store"
    return response


@api.get("/events")
def events() -> Response:
    return state_events(hub())


# -- the archive ---------------------------------------------------------------------------------
def _int_arg(name: str) -> int | None:
    raw = request.args.get(name) or None
    if raw is None:
        return None
    try:
        return int(raw)
    except ValueError:
        raise BadRequestError(f"{name} must be a whole number, got {raw!r}") from None


def _filter() -> MatchFilter:
    raw_day = request.args.get("date") or None
    try:
        day = date.fromisoformat(raw_day) if raw_day else None
    except ValueError:
        raise BadRequestError(f"date must be YYYY-MM-DD, got {raw_day!r}") from None
    return MatchFilter(table=request.args.get("table") or None,
                       player=request.args.get("player") or None,
                       game=request.args.get("game") or None, day=day,
                       result=request.args.get("result") or None, round_id=_int_arg("round"))


@api.get("/matches")
def list_matches() -> Response:
    return jsonify({"matches": [m.to_api() for m in store().list_matches(_filter())]})


@api.get("/matches/<int:match_id>")
def match(match_id: int) -> Response:
    found = store().match(match_id)
    events = [e.to_json() | {"position": e.position} for e in store().events(match_id)]
    return jsonify({"match": found.to_api(), "start_position": found.record.start_position,
                    "events": events})


@api.get("/matches/<int:match_id>/export")
def export(match_id: int) -> Response:
    fmt = request.args.get("format", "json")
    mimetype, body = store().export(match_id, fmt)
    disposition = "attachment" if request.args.get("download", "1") != "0" else "inline"
    return Response(body, mimetype=mimetype, headers={
        "Content-Disposition": f'{disposition}; filename="club-match-{match_id}.{fmt}"'})


@api.get("/matches/<int:match_id>/snapshots/<int:seq>.jpg")
def snapshot(match_id: int, seq: int) -> Response:
    jpeg = store().snapshot(match_id, seq)
    if not jpeg:
        raise NotFoundError(f"match {match_id} has no snapshot for event {seq}",
                            code="unknown_snapshot")
    return Response(jpeg, mimetype="image/jpeg",
                    headers={"Cache-Control": "public, max-age=86400"})


# -- standings and rounds ------------------------------------------------------------------------
@api.get("/standings")
def standings() -> Response:
    round_id = _int_arg("round")
    rows = store().standings(round_id)
    if request.args.get("format") == "csv":
        name = f"round-{round_id}" if round_id is not None else "all"
        return Response(standings_csv(rows), mimetype="text/csv", headers={
            "Content-Disposition": f'attachment; filename="standings-{name}.csv"'})
    return jsonify({"round": round_id, "standings": rows})


@api.get("/rounds")
def rounds() -> Response:
    return jsonify({"rounds": store().rounds()})


@api.post("/rounds")
def new_round() -> Response:
    security.require_owner()
    body = json_object_body()
    made = store().new_round(body.get("name"), body.get("started"))
    hub().changed()
    return jsonify({"ok": True, "round": made})


@api.patch("/rounds/<int:round_id>")
def rename_round(round_id: int) -> Response:
    security.require_owner()
    made = store().rename_round(round_id, json_object_body().get("name"))
    hub().changed()
    return jsonify({"ok": True, "round": made})


@api.post("/matches/<int:match_id>/names")
def correct_name(match_id: int) -> Response:
    security.require_owner()
    body = json_object_body()
    found = store().correct_name(match_id, str(body.get("colour", "")), body.get("name"))
    hub().changed()
    return jsonify({"ok": True, "match": found.to_api()})
