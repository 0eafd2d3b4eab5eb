"""Who may change things: the owner's PIN (beyond localhost) and the cross-site request guard.

- Every state-changing request (POST/PUT/PATCH/DELETE) must come from this server's own page:
  its `Origin` (or, without one, its `Referer`) must name the `Host` it was sent to, and its body
  must be declared `application/json` (a cross-site JSON request needs a CORS preflight, which
  this server never grants). Otherwise 403 `cross_site` / 415 `json_required`.
- When the app's config says `REQUIRE_PIN` (set by `web.server.serve` for a non-loopback host),
  controls need the owner's PIN: header `X-Referee-Pin`, or the session cookie set by
  `POST /api/login {"pin": ...}`. Spectators can still watch. Otherwise 401.
"""

from __future__ import annotations

import hashlib
import hmac
import threading
import time
from urllib.parse import urlsplit

from flask import Flask, Response, current_app, request, session

from web.errors import (
    CrossSiteRequestError,
    PinRequiredError,
    TooManyAttemptsError,
    UnsupportedMediaTypeError,
)

STATE_CHANGING_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
#: Every answer: only this server's own scripts run, no other site may frame the page (so no
#: one can trick a player into tapping a control through an invisible frame).
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; connect-src 'self'; "
        "img-src 'self' data: blob:; style-src 'self' 'unsafe-inline'; "
        "frame-ancestors 'none'; base-uri 'none'; form-action 'self'"),
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}
PIN_HEADER = "X-Referee-Pin"
_SESSION_KEY = "owner"


def _same_origin(url: str, host: str) -> bool:
    parts = urlsplit(url)
    return parts.scheme in ("http", "https") and parts.netloc.lower() == host.lower()


def check_same_origin() -> None:
    """Raise `CrossSiteRequestError` unless the request comes from a page of this server."""
    host = request.host
    origin = request.headers.get("Origin")
    referer = request.headers.get("Referer")
    fetch_site = request.headers.get("Sec-Fetch-Site")
    if origin is not None:
        if not _same_origin(origin, host):
            raise CrossSiteRequestError(
                f"refused a {request.method} from origin {origin!r}: only pages served by "
                f"{host} may change the referee")
        return
    if referer:
        if not _same_origin(referer, host):
            raise CrossSiteRequestError(
                f"refused a {request.method} referred by {referer!r}: only pages served by "
                f"{host} may change the referee")
        return
    if fetch_site is not None and fetch_site not in ("same-origin", "none"):
        raise CrossSiteRequestError(
            f"refused a {fetch_site} {request.method}: only pages served by {host} may change "
            "the referee")


def check_json_body() -> None:
    if request.mimetype != "application/json":
        shown = request.content_type or "none"
        raise UnsupportedMediaTypeError(
            f"{request.method} {request.path} needs Content-Type: application/json "
            f"(got {shown})")


def _pin_fingerprint(pin: str) -> str:
    key = current_app.config["SECRET_KEY"].encode()
    return hmac.new(key, pin.encode(), hashlib.sha256).hexdigest()


def pin_required() -> bool:
    return bool(current_app.config.get("REQUIRE_PIN"))


def is_owner() -> bool:
    """True when this request may use the controls."""
    if not pin_required():
        return True
    pin = current_app.config.get("PIN")
    if not pin:
        return False
    fingerprint = session.get(_SESSION_KEY)
    return isinstance(fingerprint, str) and hmac.compare_digest(fingerprint, _pin_fingerprint(pin))


class _Attempts:
    """Wrong-PIN counter per client address (a lockout slows guessing down)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._failures: dict[str, list[float]] = {}

    def check(self, address: str, max_failures: int, lockout_s: float) -> None:
        now = time.monotonic()
        with self._lock:
            recent = [t for t in self._failures.get(address, []) if now - t < lockout_s]
            self._failures[address] = recent
            if len(recent) >= max_failures:
                wait_s = lockout_s - (now - recent[0])
                raise TooManyAttemptsError(
                    f"{len(recent)} wrong PINs: try again in {wait_s:.0f} s")

    def fail(self, address: str) -> None:
        with self._lock:
            self._failures.setdefault(address, []).append(time.monotonic())

    def clear(self, address: str) -> None:
        with self._lock:
            self._failures.pop(address, None)


def _attempts() -> _Attempts:
    return current_app.extensions["referee_pin_attempts"]


def verify_pin(candidate: object) -> bool:
    """Check a PIN offered by the client; counts failures and enforces the lockout."""
    address = request.remote_addr or "?"
    config = current_app.config
    _attempts().check(address, int(config["PIN_MAX_FAILURES"]), float(config["PIN_LOCKOUT_S"]))
    pin = config.get("PIN")
    if not pin:
        raise PinRequiredError(
            "the controls are locked: the owner has not set a PIN (start with --pin)",
            code="no_pin_set")
    if not isinstance(candidate, str) or not hmac.compare_digest(
            candidate.encode(), str(pin).encode()):
        _attempts().fail(address)
        raise PinRequiredError("wrong PIN", code="wrong_pin")
    _attempts().clear(address)
    return True


def require_owner() -> None:
    """Raise `PinRequiredError` unless this request may use the controls."""
    if is_owner():
        return
    offered = request.headers.get(PIN_HEADER)
    if offered is None:
        raise PinRequiredError(
            "the controls need the owner's PIN: log in on the page or send the "
            f"{PIN_HEADER} header")
    verify_pin(offered)


def log_in(pin: object) -> None:
    verify_pin(pin)
    session[_SESSION_KEY] = _pin_fingerprint(str(current_app.config["PIN"]))


def log_out() -> None:
    session.pop(_SESSION_KEY, None)


def init_app(app: Flask) -> None:
    app.extensions["referee_pin_attempts"] = _Attempts()

    @app.after_request
    def _security_headers(response: Response) -> Response:
        for name, value in SECURITY_HEADERS.items():
            response.headers.setdefault(name, value)
        return response

    @app.before_request
    def _guard_state_changes() -> None:
        if request.routing_exception is not None:
            return  # unknown route or method: answered with 404/405 first
        if request.method in STATE_CHANGING_METHODS:
            check_same_origin()
            check_json_body()
