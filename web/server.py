"""Serve the app with waitress: one process, one camera owner, enough threads for SSE clients."""

from __future__ import annotations

import secrets
import socket
import sys
import threading
from typing import Any

from web.errors import ServerStartError
from web.join import is_loopback

DEFAULT_THREADS = 24  # each open page holds one thread for its event stream


def app_for(service: Any, *, host: str, pin: str | None = None) -> Any:
    """The Flask app for `service` listening on `host`.

    Beyond localhost the controls need the owner's PIN; without `pin` a random 6-digit one is
    made and printed.
    """
    from web.app import create_app

    require_pin = not is_loopback(host)
    if require_pin and not pin:
        pin = f"{secrets.randbelow(10**6):06d}"
        print(f"owner PIN: {pin}", flush=True)
    return create_app({"REQUIRE_PIN": require_pin, "PIN": pin, "LISTEN_HOST": host},
                      service=service)


def make_server(service: Any, *, host: str = "127.0.0.1", port: int = 8000,
                pin: str | None = None, threads: int = DEFAULT_THREADS) -> Any:
    """A bound waitress server for `service`: call `.run()`; from another thread stop it with
    `stop_server`."""
    from waitress import create_server

    app = app_for(service, host=host, pin=pin)
    try:
        return create_server(app, host=host, port=port, threads=threads,
                             channel_timeout=30, ident="tabletop-referee")
    except OSError as exc:
        raise ServerStartError(
            f"cannot listen on {host}:{port}: {exc.strerror or exc} "
            "(another referee running? choose another --port)") from exc


def stop_server(server: Any, *, join: threading.Thread | None = None,
                timeout_s: float = 10.0) -> None:
    """Stop a waitress server whose `.run()` loop runs on another thread.

    Closing its sockets from outside races the loop's `select()` (a closed descriptor, EBADF):
    the close is handed to the loop thread through waitress's trigger instead, which ends the
    loop (its map is empty). `join`, when given, is that thread: it is waited for, then the
    worker threads are told to stop. A worker still streaming events ends at its next write
    (its socket is closed); it is a daemon thread and is not waited for.
    """
    from waitress import wasyncore

    server.trigger.pull_trigger(lambda: wasyncore.close_all(server._map))
    if join is not None:
        join.join(timeout_s)
        if join.is_alive():
            raise TimeoutError(f"the server thread did not stop within {timeout_s:g} s")
    server.task_dispatcher.set_thread_count(0)  # the idle workers leave; nothing waits for them


def serve(service: Any, *, host: str = "127.0.0.1", port: int = 8000,
          pin: str | None = None) -> None:
    """Serve the page until interrupted; prints `serving on http://HOST:PORT/` when listening."""
    server = make_server(service, host=host, port=port, pin=pin)
    bound_port = server.effective_port if hasattr(server, "effective_port") else port
    shown = f"[{host}]" if ":" in host else host
    print(f"serving on http://{shown}:{bound_port}/", flush=True)
    if not is_loopback(host) and host in ("0.0.0.0", "::"):
        try:
            lan = socket.gethostbyname(socket.gethostname())
            print(f"on this network: http://{lan}:{bound_port}/", file=sys.stderr, flush=True)
        except OSError:
            pass
    try:
        server.run()
    finally:
        server.close()
