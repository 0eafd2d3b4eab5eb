"""Serve the app with waitress: one process, one camera owner, streams on their own budget.

Every open page holds one worker thread for its event stream (and one more for an MJPEG
picture stream), so the server runs many more workers than streams it allows
(`STREAMS_MAX` < `DEFAULT_THREADS`, see `web.app`): the page's `/api/state` and the controls
always find a free worker. Connections are bounded in time and memory (`BoundedChannel`): a
request must arrive whole within `REQUEST_HEAD_TIMEOUT_S`, a client that reads its stream too
slowly is dropped after `SLOW_CLIENT_TIMEOUT_S`, at most `OUTBUF_HIGH_WATERMARK` bytes wait
for any one client, and a stream whose reader left ends within a second (`web.sse`); bodies over
`web.security.MAX_BODY_BYTES` are refused unread.
"""

from __future__ import annotations

import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any

from web.errors import ServerStartError
from web.join import is_loopback

DEFAULT_THREADS = 300  # > the app's STREAMS_MAX (260): 40 workers are always left for pages
CONNECTION_LIMIT = 600  # open connections (streams + keep-alive pages + a margin)
REQUEST_HEAD_TIMEOUT_S = 10.0  # a request not received whole by then is dropped (slowloris)
SLOW_CLIENT_TIMEOUT_S = 20.0  # a stream that cannot send anything for this long is dropped
IDLE_TIMEOUT_S = 30.0  # a keep-alive connection with nothing to do is closed
OUTBUF_HIGH_WATERMARK = 1 << 20  # bytes waiting for one client before its worker waits


def data_dir_of(service: Any) -> Path | None:
    """The directory of the service's match log (where the session secret is kept too)."""
    path = getattr(getattr(service, "log", None), "path", None)
    if path is None or str(path) == ":memory:":
        return None
    return Path(path).resolve().parent


def app_for(service: Any, *, host: str, pin: str | None = None,
            allowed_hosts: tuple[str, ...] = ()) -> Any:
    """The Flask app for `service` listening on `host`.

    Beyond localhost the controls need the owner's PIN; without `pin` a random 6-digit one is
    made and printed. A PIN that is too easy to guess is refused (`ValueError` saying why).
    Sessions are signed with a secret kept in the match log's directory, so a login survives
    a restart.
    """
    from web.app import create_app
    from web.security import load_secret, pin_weakness, strong_random_pin

    require_pin = not is_loopback(host)
    if pin:
        weakness = pin_weakness(pin)
        if weakness is not None:
            raise ValueError(weakness)
    if require_pin and not pin:
        pin = strong_random_pin()
        print(f"owner PIN: {pin}", flush=True)
    config: dict[str, Any] = {"REQUIRE_PIN": require_pin, "PIN": pin,
                              "ALLOWED_HOSTS": tuple(allowed_hosts),
                              "LISTEN_HOST": host}
    data_dir = data_dir_of(service)
    if data_dir is not None:
        config["SECRET_KEY"] = load_secret(data_dir)
        config["SESSION_STORE"] = str(data_dir / "owner-sessions.json")
    return create_app(config, service=service)


def _bounded_channel_class() -> type:
    from waitress.channel import HTTPChannel

    class BoundedChannel(HTTPChannel):
        """A waitress channel that never waits on a client for ever.

        `received` notes when a request started arriving (the server's maintenance drops it
        after `REQUEST_HEAD_TIMEOUT_S`); a worker waiting for a slow client to take its
        stream gives up after `SLOW_CLIENT_TIMEOUT_S`, closing the connection (waitress's own
        wait has no time limit).
        """

        request_started = 0.0

        def received(self, data: bytes) -> bool:
            if self.request is None and not self.requests and data:
                self.request_started = time.monotonic()
            result = super().received(data)
            if self.request is None:  # the request is complete (or none is being read)
                self.request_started = 0.0
            return result

        def _flush_outbufs_below_high_watermark(self) -> None:
            limit = self.adj.outbuf_high_watermark
            if self.total_outbufs_len <= limit:
                return
            deadline = time.monotonic() + SLOW_CLIENT_TIMEOUT_S
            with self.outbuf_lock:
                self._flush_exception(self._flush_some, do_close=False)
                while self.connected and self.total_outbufs_len > limit:
                    left = deadline - time.monotonic()
                    if left <= 0:  # the client takes nothing: drop it, free its buffer
                        self.will_close = True
                        self.connected = False  # the worker's next write ends its stream
                        self.server.pull_trigger()
                        return
                    self.server.pull_trigger()
                    self.outbuf_lock.wait(min(left, 1.0))

    return BoundedChannel


def _libc() -> Any:
    """glibc, for `mallopt` / `malloc_trim`, or None on another C library."""
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
        return libc if libc is not None and hasattr(libc, "malloc_trim") else None
    except OSError:
        return None


M_MMAP_THRESHOLD, M_ARENA_MAX = -3, -8  # glibc's mallopt parameters


def _tune_malloc(libc: Any) -> None:
    """Memory that streams used goes back to the system when they close.

    glibc raises its mmap threshold each time a large block is freed, so after the first few
    camera frames (3.7 MB at 1280x960) every frame, overlay and JPEG buffer of every picture
    stream comes from the heap, which fragments and never shrinks (measured: +170 MB kept
    after 50 MJPEG clients left). A fixed 256 KiB threshold keeps them in their own mappings,
    returned on free; few arenas keep the 300 worker threads from splitting the rest."""
    if libc is not None:
        libc.mallopt(M_MMAP_THRESHOLD, 256 * 1024)
        libc.mallopt(M_ARENA_MAX, 2)


def _maintenance(server: Any) -> Any:
    original = server.maintenance
    libc = _libc()
    trimmed = [time.monotonic()]

    def maintenance(now: float) -> None:
        original(now)
        if libc is not None and time.monotonic() - trimmed[0] > 5.0:
            trimmed[0] = time.monotonic()
            libc.malloc_trim(0)  # give the memory of closed streams back to the system
        cutoff = time.monotonic() - REQUEST_HEAD_TIMEOUT_S
        for channel in list(server.active_channels.values()):
            started = getattr(channel, "request_started", 0.0)
            if started and started < cutoff and not channel.requests:
                channel.will_close = True  # a request trickling in too slowly
    return maintenance


def make_server(service: Any, *, host: str = "127.0.0.1", port: int = 8000,
                pin: str | None = None, threads: int = DEFAULT_THREADS,
                allowed_hosts: tuple[str, ...] = ()) -> Any:
    """A bound waitress server for `service`: call `.run()`; from another thread stop it with
    `stop_server`."""
    from waitress import create_server

    from web.security import MAX_BODY_BYTES

    _tune_malloc(_libc())
    app = app_for(service, host=host, pin=pin, allowed_hosts=allowed_hosts)
    app.config["STREAMS_MAX"] = min(int(app.config["STREAMS_MAX"]), max(threads - 8, 1))
    try:
        server = create_server(
            app, host=host, port=port, threads=threads, ident="tabletop-referee",
            channel_timeout=IDLE_TIMEOUT_S, cleanup_interval=2,
            connection_limit=CONNECTION_LIMIT, max_request_body_size=4 * MAX_BODY_BYTES,
            max_request_header_size=32 * 1024, outbuf_high_watermark=OUTBUF_HIGH_WATERMARK,
            outbuf_overflow=OUTBUF_HIGH_WATERMARK,
            # a connection stays readable while its stream runs, so a reader that leaves is
            # seen at once (`waitress.client_disconnected`, polled by the streams) and its
            # worker, subscription and place in the stream budget are freed within a second
            channel_request_lookahead=1,
            asyncore_use_poll=True)  # select() stops at descriptor 1024
    except OSError as exc:
        raise ServerStartError(
            f"cannot listen on {host}:{port}: {exc.strerror or exc} "
            "(another referee running? choose another --port)") from exc
    server.referee_app = app  # for tests and benchmarks: its stream budget, its config
    server.channel_class = _bounded_channel_class()
    server.maintenance = _maintenance(server)
    return server


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
          pin: str | None = None, allowed_hosts: tuple[str, ...] = ()) -> None:
    """Serve the page until interrupted; prints `serving on http://HOST:PORT/` when listening."""
    server = make_server(service, host=host, port=port, pin=pin, allowed_hosts=allowed_hosts)
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
