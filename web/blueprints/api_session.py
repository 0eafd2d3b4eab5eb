"""The owner's session: `GET /api/session`, `POST /api/login {"pin"}`, `POST /api/logout`.

Shared by a table's page and the club page (the organiser's PIN works the same way).
"""

from __future__ import annotations

from flask import Blueprint, Response, jsonify

from web import security
from web.blueprints.api_control import json_object_body
from web.errors import BadRequestError

bp = Blueprint("api_session", __name__, url_prefix="/api")


@bp.get("/session")
def session_info() -> Response:
    return jsonify({"require_pin": security.pin_required(), "owner": security.is_owner()})


@bp.post("/login")
def login() -> Response:
    body = json_object_body()
    if security.pin_required():
        if "pin" not in body:
            raise BadRequestError('the login body must be {"pin": "..."}', code="malformed_json")
        security.log_in(str(body["pin"]))
    return jsonify({"require_pin": security.pin_required(), "owner": True})


@bp.post("/logout")
def logout() -> Response:
    security.log_out()
    return jsonify({"require_pin": security.pin_required(), "owner": security.is_owner()})
