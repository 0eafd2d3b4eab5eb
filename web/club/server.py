"""Serve the club page with waitress (as a table's page), until Ctrl-C or SIGTERM."""

from __future__ import annotations

import signal
import threading
from typing import Any

from web.club.app import create_club_app
from web.club.hub import ClubHub
from web.server import DEFAULT_THREADS, is_loopback


def club_app(store: Any, *, host: str, pin: str | None = None, listen: bool = True) -> Any:
    """The club app on `host`: beyond localhost (or with a PIN given) the organiser's controls
    need the PIN; without one a random 6-digit PIN is made and printed."""
    from web.security import pin_weakness, strong_random_pin

    if pin and pin_weakness(pin) is not None:
        raise ValueError(pin_weakness(pin))
    require_pin = bool(pin) or not is_loopback(host)
    if require_pin and not pin:
        pin = strong_random_pin()
        print(f"organiser PIN: {pin}", flush=True)
    return create_club_app(ClubHub(store, listen=listen),
                           {"REQUIRE_PIN": require_pin, "PIN": pin})


def make_club_server(store: Any, *, host: str = "127.0.0.1", port: int = 8100,
                     pin: str | None = None, threads: int = DEFAULT_THREADS) -> Any:
    from waitress import create_server

    from web.errors import ServerStartError

    app = club_app(store, host=host, pin=pin)
    try:
        server = create_server(app, host=host, port=port, threads=threads, channel_timeout=30,
                               ident="tabletop-referee-club")
    except OSError as exc:
        raise ServerStartError(f"cannot listen on {host}:{port}: {exc.strerror or exc} "
                               "(choose another --port)") from exc
    server.club_hub = app.extensions["club_hub"]
    return server


def serve_club(store: Any, *, host: str = "127.0.0.1", port: int = 8100,
               pin: str | None = None) -> None:
    server = make_club_server(store, host=host, port=port, pin=pin)
    hub = server.club_hub
    shown = f"[{host}]" if ":" in host else host
    print(f"club page on http://{shown}:{server.effective_port}/", flush=True)

    def on_signal(signum: int, frame: object) -> None:
        hub.end_streams()
        raise KeyboardInterrupt

    previous = {}
    if threading.current_thread() is threading.main_thread():
        previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        server.run()
    finally:
        hub.close()
        server.close()
        for s, handler in previous.items():
            signal.signal(s, handler)
