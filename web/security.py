"""Who may watch and who may change things: the Host guard, the body limit, the owner's PIN
(beyond localhost), its sessions and the cross-site request guard.

- Every request must name this machine in its `Host`: a loopback name or address, this machine's
  host name, its mDNS name (`NAME.local`), one of its addresses, or a name given with
  `--allowed-host`. Otherwise 421 `unknown_host`: a page on another site that points its own
  name at this machine (DNS rebinding) is never served.
- A request body over `MAX_BODY_BYTES` is refused with 413 `too_large` from its
  `Content-Length`, before any of it is read (the waitress server stops reading there too).

- Every state-changing request (POST/PUT/PATCH/DELETE) must come from this server's own page:
  its `Origin` (or, without one, its `Referer`) must name the `Host` it was sent to, and its body
  must be declared `application/json` (a cross-site JSON request needs a CORS preflight, which
  this server never grants). Otherwise 403 `cross_site` / 415 `json_required`.
- When the app's config says `REQUIRE_PIN` (set by `web.server.serve` for a non-loopback host),
  controls need the owner's PIN: header `X-Referee-Pin`, or the session cookie set by
  `POST /api/login {"pin": ...}`. Spectators can still watch. Otherwise 401.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import hmac
import ipaddress
import itertools
import json
import os
import secrets
import socket
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from flask import Flask, Response, current_app, request, session

from web.errors import (
    CrossSiteRequestError,
    MisdirectedRequestError,
    PayloadTooLargeError,
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
_SESSION_ID = "sid"
#: The largest body any control needs is a handful of numbers (four corners, a correction): 16 KiB
#: is ample and keeps a flood of large bodies from costing memory.
MAX_BODY_BYTES = 16 * 1024
#: PIN strength: the lockout lets one address try `PIN_MAX_FAILURES` (5) PINs a minute and all
#: addresses together `PIN_MAX_FAILURES_ALL` (20). Six characters give 10^6 PINs of digits alone:
#: about 17 days at 20 a minute to try half of them, against under two minutes for "1".
PIN_MIN_LENGTH = 6
PIN_MAX_FAILURES_ALL = 20
SESSION_LIFETIME_S = 30 * 24 * 3600.0  # an owner's login lasts a month unless logged out
MAX_SESSIONS = 64  # the oldest logins are dropped beyond this


def pin_weakness(pin: str) -> str | None:
    """Why `pin` is too easy to guess, or None when it is strong enough."""
    if len(pin) < PIN_MIN_LENGTH:
        return (f"the PIN must have at least {PIN_MIN_LENGTH} characters (got {len(pin)}): "
                "a short one is guessed within the wrong-PIN lockout in hours")
    if len(set(pin)) == 1:
        return "the PIN must not be one character repeated (it is among the first guessed)"
    steps = {ord(b) - ord(a) for a, b in itertools.pairwise(pin)}
    if steps in ({1}, {-1}):
        return "the PIN must not be a run like 123456 (it is among the first guessed)"
    return None


def strong_random_pin() -> str:
    """A random 6-digit PIN that passes `pin_weakness`."""
    while True:
        pin = f"{secrets.randbelow(10**6):06d}"
        if pin_weakness(pin) is None:
            return pin


def load_secret(data_dir: str | Path) -> str:
    """The session-signing secret kept in `data_dir/session-secret` (created, owner-only, on
    first use), so that the owner's login survives a restart of the referee."""
    path = Path(data_dir) / "session-secret"
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        if path.stat().st_mode & 0o077:
            path.chmod(0o600)  # readable by others: nobody else may sign a session cookie
        secret = path.read_text(encoding="ascii").strip()
        if len(secret) >= 32:
            return secret
        path.unlink()
        return load_secret(data_dir)
    secret = secrets.token_hex(32)
    with os.fdopen(fd, "w", encoding="ascii") as fh:
        fh.write(secret + "\n")
    return secret


class OwnerSessions:
    """The owner's logins that are valid now; logging out removes one, so its cookie is worth
    nothing afterwards. Kept in `path` (owner-only) when given, so they survive a restart."""

    def __init__(self, path: str | Path | None = None,
                 clock: Any = time.time) -> None:
        self._path = Path(path) if path is not None else None
        self._clock = clock
        self._lock = threading.Lock()
        self._expiry: dict[str, float] = {}
        if self._path is not None and self._path.is_file():
            with contextlib.suppress(OSError, ValueError, AttributeError):
                data = json.loads(self._path.read_text(encoding="utf-8"))
                self._expiry = {str(k): float(v) for k, v in data.items()}

    @staticmethod
    def _key(sid: str) -> str:
        return hashlib.sha256(sid.encode()).hexdigest()  # the file never holds a usable id

    def _save(self) -> None:
        if self._path is None:
            return
        tmp = self._path.with_suffix(".tmp")
        with contextlib.suppress(OSError):
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(self._expiry, fh)
            os.replace(tmp, self._path)

    def issue(self) -> str:
        sid = secrets.token_urlsafe(24)
        now = self._clock()
        with self._lock:
            self._expiry = {k: t for k, t in self._expiry.items() if t > now}
            while len(self._expiry) >= MAX_SESSIONS:
                self._expiry.pop(min(self._expiry, key=self._expiry.__getitem__))
            self._expiry[self._key(sid)] = now + SESSION_LIFETIME_S
            self._save()
        return sid

    def valid(self, sid: object) -> bool:
        if not isinstance(sid, str):
            return False
        with self._lock:
            return self._expiry.get(self._key(sid), 0.0) > self._clock()

    def revoke(self, sid: object) -> None:
        if not isinstance(sid, str):
            return
        with self._lock:
            if self._expiry.pop(self._key(sid), None) is not None:
                self._save()


# -------------------------------------------------------------------------------- Host guard
LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost",
                            "ip6-loopback"})


@functools.lru_cache(maxsize=1)
def machine_names() -> frozenset[str]:
    """This machine's own names: host name, fully qualified name and mDNS name (`NAME.local`)."""
    names = set()
    with contextlib.suppress(OSError):
        host = socket.gethostname().lower()
        names |= {host, host.split(".")[0] + ".local"}
        names.add(socket.getfqdn().lower())
    return frozenset(n for n in names if n)


@functools.lru_cache(maxsize=256)
def _is_own_address(address: str) -> bool:
    """An address of this machine's own interfaces: only those can be bound to."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    if ip.is_loopback:
        return True
    if ip.is_multicast or ip.is_unspecified:
        return False
    family = socket.AF_INET6 if ip.version == 6 else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_DGRAM) as probe:
            probe.bind((address, 0))
        return True
    except OSError:
        return False


def host_name_of(host: str) -> str:
    """`Host` header value -> the name or address alone (no port, no IPv6 brackets), lowercase."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:].split("]", 1)[0]
    if host.count(":") == 1:
        host = host.split(":", 1)[0]
    return host.rstrip(".")


def host_allowed(host: str, extra: tuple[str, ...] = ()) -> bool:
    """True when `host` (a `Host` header) names this machine (module docstring)."""
    name = host_name_of(host)
    if not name:
        return False
    if name in LOOPBACK_NAMES or name.endswith(".localhost") or name in machine_names():
        return True
    if name in {e.lower().rstrip(".") for e in extra}:
        return True
    return _is_own_address(name)


def check_host() -> None:
    config = current_app.config
    if not config.get("HOST_CHECK", True):
        return
    host = request.headers.get("Host", "")
    if not host_allowed(host, tuple(config.get("ALLOWED_HOSTS") or ())):
        raise MisdirectedRequestError(
            f"this referee does not answer to the name {host!r}: open it by this machine's "
            "name or address (or start it with --allowed-host NAME)")


def check_body_size() -> None:
    length = request.content_length
    limit = int(current_app.config.get("MAX_BODY_BYTES", MAX_BODY_BYTES))
    if length is not None and length > limit:
        raise PayloadTooLargeError(
            f"the body of {request.method} {request.path} has {length} bytes; at most {limit} "
            "are accepted")


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
    if not isinstance(fingerprint, str) or not hmac.compare_digest(fingerprint,
                                                                   _pin_fingerprint(pin)):
        return False
    return _sessions().valid(session.get(_SESSION_ID))


class _Attempts:
    """Wrong-PIN counter per client address (a lockout slows guessing down)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._failures: dict[str, list[float]] = {}

    ALL = "*"  # every address together: many addresses do not guess faster than a few

    def check(self, address: str, max_failures: int, lockout_s: float,
              max_failures_all: int = PIN_MAX_FAILURES_ALL) -> None:
        now = time.monotonic()
        with self._lock:
            for key, limit in ((address, max_failures), (self.ALL, max_failures_all)):
                recent = [t for t in self._failures.get(key, []) if now - t < lockout_s]
                self._failures[key] = recent
                if len(recent) >= limit:
                    wait_s = lockout_s - (now - recent[0])
                    who = "" if key == address else " from all addresses together"
                    raise TooManyAttemptsError(
                        f"{len(recent)} wrong PINs{who}: try again in {wait_s:.0f} s")

    def fail(self, address: str) -> None:
        with self._lock:
            now = time.monotonic()
            self._failures.setdefault(address, []).append(now)
            self._failures.setdefault(self.ALL, []).append(now)

    def clear(self, address: str) -> None:
        with self._lock:
            self._failures.pop(address, None)


def _attempts() -> _Attempts:
    return current_app.extensions["referee_pin_attempts"]


def _sessions() -> OwnerSessions:
    return current_app.extensions["referee_owner_sessions"]


def verify_pin(candidate: object) -> bool:
    """Check a PIN offered by the client; counts failures and enforces the lockout."""
    address = request.remote_addr or "?"
    config = current_app.config
    _attempts().check(address, int(config["PIN_MAX_FAILURES"]), float(config["PIN_LOCKOUT_S"]),
                      int(config.get("PIN_MAX_FAILURES_ALL", PIN_MAX_FAILURES_ALL)))
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
    _sessions().revoke(session.get(_SESSION_ID))
    session[_SESSION_KEY] = _pin_fingerprint(str(current_app.config["PIN"]))
    session[_SESSION_ID] = _sessions().issue()


def log_out() -> None:
    """End this owner's session: its cookie, even a copy kept elsewhere, no longer opens the
    controls."""
    _sessions().revoke(session.get(_SESSION_ID))
    session.pop(_SESSION_KEY, None)
    session.pop(_SESSION_ID, None)


def init_app(app: Flask) -> None:
    app.extensions["referee_pin_attempts"] = _Attempts()
    app.extensions["referee_owner_sessions"] = OwnerSessions(app.config.get("SESSION_STORE"))

    @app.after_request
    def _security_headers(response: Response) -> Response:
        for name, value in SECURITY_HEADERS.items():
            response.headers.setdefault(name, value)
        return response

    @app.before_request
    def _guard_host_and_size() -> None:
        check_host()
        check_body_size()

    @app.before_request
    def _guard_state_changes() -> None:
        if request.routing_exception is not None:
            return  # unknown route or method: answered with 404/405 first
        if request.method in STATE_CHANGING_METHODS:
            check_same_origin()
            check_json_body()
