"""History: `GET /api/matches`, `/api/matches/<id>`, its export and its event snapshots."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, jsonify, request

from web.errors import BadRequestError, NotFoundError
from web.service_access import get_service, to_jsonable

bp = Blueprint("api_matches", __name__, url_prefix="/api/matches")

EXPORT_FORMATS = {"json": "json", "csv": "csv", "txt": "txt", "apgamerecord": "json"}


def _log() -> Any:
    return get_service().log


def _match_or_404(match_id: int) -> Any:
    try:
        match = _log().match(match_id)
    except (LookupError, ValueError) as exc:
        raise NotFoundError(f"no match {match_id} in the log", code="unknown_match") from exc
    if match is None:
        raise NotFoundError(f"no match {match_id} in the log", code="unknown_match")
    return match


@bp.get("")
def list_matches() -> Response:
    return jsonify({"matches": to_jsonable(_log().list_matches())})


@bp.get("/<int:match_id>")
def match(match_id: int) -> Response:
    found = _match_or_404(match_id)
    events = [_event_json(e) for e in _log().events(match_id)]
    return jsonify({"match": to_jsonable(found), "events": events})


def _event_json(event: Any) -> Any:
    """An event as the API shows it, with the position after it (for the replay diagram)."""
    out = to_jsonable(event)
    position = getattr(event, "position", None)
    if isinstance(out, dict) and position is not None and "position" not in out:
        out["position"] = to_jsonable(position)
    return out


@bp.get("/<int:match_id>/export")
def export(match_id: int) -> Response:
    fmt = request.args.get("format", "json")
    if fmt not in EXPORT_FORMATS:
        raise BadRequestError(f"unknown export format {fmt!r}: use {', '.join(EXPORT_FORMATS)}",
                              code="bad_format")
    _match_or_404(match_id)
    mimetype, body = _log().export(match_id, fmt)
    filename = f"match-{match_id}.{EXPORT_FORMATS[fmt]}"
    disposition = "attachment" if request.args.get("download", "1") != "0" else "inline"
    return Response(body, mimetype=mimetype,
                    headers={"Content-Disposition": f'{disposition}; filename="{filename}"'})


@bp.get("/<int:match_id>/snapshots/<int:event_seq>.jpg")
def snapshot(match_id: int, event_seq: int) -> Response:
    _match_or_404(match_id)
    log = _log()
    getter = getattr(log, "snapshot", None)
    jpeg: bytes | None = None
    if callable(getter):
        try:
            jpeg = getter(match_id, event_seq)
        except (LookupError, ValueError):
            jpeg = None
    if not jpeg:
        raise NotFoundError(f"match {match_id} has no snapshot for event {event_seq}",
                            code="unknown_snapshot")
    return Response(jpeg, mimetype="image/jpeg",
                    headers={"Cache-Control": "public, max-age=86400"})
