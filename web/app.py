"""The Flask app factory: one blueprint per feature, the referee service stored on the app."""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import Any

from flask import Flask

from web.frames import FrameCache
from web.service_access import SERVICE_KEY
from web.sse import SharedStates, StreamBudget

#: Shipped defaults; `test_config` or `serve()` override them.
DEFAULT_CONFIG: dict[str, Any] = {
    "REQUIRE_PIN": False,  # set by web.server.serve when listening beyond localhost
    "PIN": None,  # the owner's PIN (str); controls are refused while REQUIRE_PIN and no PIN
    "SSE_KEEPALIVE_S": 15.0,  # a comment line this often keeps proxies and phones connected
    "SSE_MAX_S": 600.0,  # a stream ends after this long; EventSource reconnects by itself
    "SSE_MIN_INTERVAL_S": 0.1,  # a burst of events is pushed as one state
    "MJPEG_FPS": 5.0,
    "MJPEG_MAX_S": 600.0,  # a picture stream ends after this long; the page's <img> reconnects
    "FRAME_MAX_AGE_S": 0.2,  # camera JPEGs are shared between requests this young
    "PIN_MAX_FAILURES": 5,  # wrong PINs from one address ...
    "PIN_LOCKOUT_S": 60.0,  # ... lock that address out for this long
    "HOST_CHECK": True,  # only Host names of this machine are served (web.security), else 421
    "ALLOWED_HOSTS": (),  # more names to answer to (`--allowed-host`: a proxy's, a DNS alias)
    "MAX_BODY_BYTES": 16 * 1024,  # larger request bodies get 413 before they are read
    "MAX_CONTENT_LENGTH": 16 * 1024,  # the same for a body sent without a Content-Length
    "SESSION_STORE": None,  # file of the owner's valid logins (serve: in the data directory)
    "STREAMS_PER_ADDRESS": 8,  # open event + picture streams one client address may hold
    "STREAMS_MAX": 260,  # all streams together; below the server's worker threads
    "MJPEG_MAX": 64,  # picture streams together (each costs an encode share and bandwidth)
    "SESSION_COOKIE_SAMESITE": "Strict",
    "SESSION_COOKIE_HTTPONLY": True,
    "JSON_SORT_KEYS": False,
    "LISTEN_HOST": None,  # the address the server listens on (web.server.app_for): /api/join
}


def create_app(test_config: Mapping[str, Any] | None = None, *, service: Any = None) -> Flask:
    """Build the web app presenting `service` (a `referee.service.RefereeService`)."""
    app = Flask(__name__)
    app.config.update(DEFAULT_CONFIG)
    # sessions last as long as the process, unless the server gives a persisted secret
    app.config["SECRET_KEY"] = secrets.token_hex(32)
    if test_config is not None:
        app.config.update(test_config)
    app.json.sort_keys = False  # type: ignore[attr-defined]
    app.extensions[SERVICE_KEY] = service
    app.extensions["referee_frames"] = FrameCache(float(app.config["FRAME_MAX_AGE_S"]))
    app.extensions["referee_streams"] = StreamBudget()
    app.extensions["referee_states"] = SharedStates()

    from web import json_errors, security
    from web.blueprints import api_control, api_join, api_live, api_matches, api_session, pages

    security.init_app(app)
    json_errors.init_app(app)
    app.register_blueprint(pages.bp)
    app.register_blueprint(api_live.bp)
    app.register_blueprint(api_control.bp)
    app.register_blueprint(api_session.bp)
    app.register_blueprint(api_matches.bp)
    app.register_blueprint(api_join.bp)
    return app
