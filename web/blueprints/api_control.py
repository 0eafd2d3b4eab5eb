"""Controls: `POST /api/control/<name>` (JSON) -> `service.command(name, payload)`.

Cross-site and content-type checks run for every state-changing request (`web.security`); the
control routes also need the owner (PIN) when the server listens beyond localhost.
"""

from __future__ import annotations

import re
from typing import Any

from flask import Blueprint, Response, jsonify, request

from referee.errors import RefereeError
from referee.jsonlines import nesting_deeper_than
from web import security
from web.errors import BadRequestError
from web.service_access import get_service, to_jsonable

bp = Blueprint("api_control", __name__, url_prefix="/api")

#: The commands the page sends (docs/INTERFACES.md); others are passed on for the service to judge.
COMMANDS = ("new_match", "confirm", "undo", "answer", "correct", "draw", "pause", "resume",
            "set_corners", "sample_colours", "capture_photo")
_NAME = re.compile(r"[a-z][a-z0-9_]{0,39}")


#: No control body nests deeper than a list of corner points (3 levels); 8 leaves room.
MAX_JSON_DEPTH = 8
#: Controls take board coordinates (0..20), pixels (a few thousand), counts and indices: a number
#: beyond a million in a body is no position of anything (1e200 would overflow the geometry).
MAX_BODY_NUMBER = 1e6


def _numbers(value: Any) -> Any:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, int | float) and not isinstance(item, bool):
            yield item


def json_object_body() -> dict[str, Any]:
    """The request body as a JSON object, or `BadRequestError` saying what is wrong with it."""
    raw = request.get_data(cache=True)
    if not raw.strip():
        return {}
    try:
        body = request.get_json(silent=True)
    except RecursionError:
        body = None
    except ValueError as exc:  # e.g. an integer of thousands of digits
        raise BadRequestError(f"the body of {request.method} {request.path} is not usable "
                              f"JSON: {exc}", code="malformed_json") from None
    if isinstance(body, dict | list) and nesting_deeper_than(body, MAX_JSON_DEPTH):
        raise BadRequestError(
            f"the body of {request.method} {request.path} nests deeper than "
            f"{MAX_JSON_DEPTH} levels", code="malformed_json")
    if body is None:
        raise BadRequestError(f"the body of {request.method} {request.path} is not valid JSON",
                              code="malformed_json")
    for number in _numbers(body):
        if not abs(number) <= MAX_BODY_NUMBER:  # also NaN
            raise BadRequestError(
                f"the body of {request.method} {request.path} holds the number {number!r}: "
                f"controls take coordinates, pixels and counts up to {MAX_BODY_NUMBER:g}",
                code="bad_number")
    if not isinstance(body, dict):
        raise BadRequestError(
            f"the body of {request.method} {request.path} must be a JSON object, "
            f"got {type(body).__name__}", code="malformed_json")
    return body


@bp.post("/control/<name>")
def control(name: str) -> Response:
    if not _NAME.fullmatch(name):
        raise BadRequestError(f"{name!r} is not a command name", code="unknown_command")
    security.require_owner()
    payload = json_object_body()
    try:
        result = get_service().command(name, payload)
    except RefereeError:
        raise  # the service's own refusals carry their code (web.json_errors)
    except (TypeError, ValueError, KeyError, IndexError, AttributeError, OverflowError) as exc:
        # a field of the wrong type or shape that the command did not check itself
        raise BadRequestError(f"the body of {name} does not fit: {type(exc).__name__}: {exc}",
                              code="bad_request") from exc
    return jsonify({"ok": True, "command": name, "result": to_jsonable(result)})
