"""Every error becomes JSON `{"error": code, "message": text}` with a fitting status code."""

from __future__ import annotations

import re

from flask import Flask, Response, jsonify, request
from werkzeug.exceptions import HTTPException

from referee.errors import RefereeError
from web.errors import WebError

#: CommandError codes that mean "not now, in this state of the match" (409); every other code
#: means "not like that" (400), except an unknown command name (404, like an unknown route).
CONFLICT_CODES = frozenset({
    "busy", "conflict", "match_over", "no_question", "stale_question", "nothing_to_undo",
    "no_match", "paused", "not_paused", "camera_lost", "wrong_state",
})
NOT_FOUND_CODES = frozenset({"unknown_command"})


def error_response(code: str, message: str, status: int) -> Response:
    response = jsonify({"error": code, "message": message})
    response.status_code = status
    return response


def command_error_status(exc: BaseException) -> int:
    """409 for a command that does not fit the match's current state, 404 unknown, else 400."""
    status = getattr(exc, "status", None)
    if isinstance(status, int) and 400 <= status < 600:
        return status
    code = str(getattr(exc, "code", "") or "")
    if code in CONFLICT_CODES:
        return 409
    if code in NOT_FOUND_CODES:
        return 404
    return 400


def _snake(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def init_app(app: Flask) -> None:
    @app.errorhandler(WebError)
    def _web_error(exc: WebError) -> Response:
        return error_response(exc.code, exc.message, exc.status)

    @app.errorhandler(RefereeError)
    def _referee_error(exc: RefereeError) -> Response:
        code = str(getattr(exc, "code", "") or _snake(type(exc).__name__))
        if isinstance(exc, LookupError):
            return error_response(code, str(exc), 404)
        if isinstance(exc, ValueError):
            return error_response(code, str(exc), command_error_status(exc))
        return error_response(code, str(exc), 409)

    @app.errorhandler(HTTPException)
    def _http_error(exc: HTTPException) -> Response:
        code = _snake(exc.name or "error")
        message = exc.description or exc.name or "error"
        if exc.code == 404:
            message = f"no such page or API route: {request.method} {request.path}"
        elif exc.code == 405:
            allowed = ", ".join(sorted(getattr(exc, "valid_methods", None) or []))
            message = f"{request.method} is not allowed on {request.path}" + (
                f" (allowed: {allowed})" if allowed else "")
        response = error_response(code, message, exc.code or 500)
        if exc.code == 405 and getattr(exc, "valid_methods", None):
            response.headers["Allow"] = ", ".join(exc.valid_methods)  # type: ignore[union-attr]
        return response
