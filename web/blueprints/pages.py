"""The HTML pages: live view, history, replay, calibration wizard."""

from __future__ import annotations

from flask import Blueprint, render_template

from web import security

bp = Blueprint("pages", __name__)


def _page(template: str, **context: object) -> str:
    return render_template(template, require_pin=security.pin_required(),
                           owner=security.is_owner(), **context)


@bp.get("/")
def live() -> str:
    return _page("live.html", page="live")


@bp.get("/history")
def history() -> str:
    return _page("history.html", page="history")


@bp.get("/replay/<int:match_id>")
def replay(match_id: int) -> str:
    return _page("replay.html", page="history", match_id=match_id)


@bp.get("/calibrate")
def calibrate() -> str:
    return _page("calibrate.html", page="calibrate")
