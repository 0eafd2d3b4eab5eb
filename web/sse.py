"""Server-Sent Events: the full referee state, pushed on every change, with keep-alives.

The service's `subscribe()` gives an iterable of event dicts that blocks until something
happens. It is drained by a helper thread into a queue so that the response generator can send
keep-alive comments while nothing happens and notice a closed connection (waitress raises on
the next write). Several events arriving together are sent as one state.
"""

from __future__ import annotations

import json
import queue
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from web.service_access import to_jsonable

_END = object()


def format_event(data: Any, *, event: str | None = None, event_id: str | None = None) -> str:
    """One SSE message; `data` is sent as compact JSON on one line."""
    lines = []
    if event:
        lines.append(f"event: {event}")
    if event_id is not None:
        lines.append(f"id: {event_id}")
    lines.append("data: " + json.dumps(to_jsonable(data), separators=(",", ":")))
    return "\n".join(lines) + "\n\n"


def _pump(subscription: Any, events: queue.Queue[Any], stop: threading.Event) -> None:
    try:
        for item in subscription:
            if stop.is_set():
                break
            events.put(item)
    except Exception as exc:  # noqa: BLE001 - reported to the client, then the stream ends
        events.put(exc)
    finally:
        events.put(_END)


def state_stream(
    service: Any,
    *,
    keepalive_s: float = 15.0,
    max_duration_s: float = 600.0,
    min_interval_s: float = 0.1,
    clock: Callable[[], float] = time.monotonic,
) -> Iterator[str]:
    """Yield SSE text: `state` now, a new `state` after every service event, keep-alives between.

    States are at least `min_interval_s` apart: a burst of events (a verdict, its instruction,
    its log entries) becomes one state, and a referee that warns on every frame cannot flood
    a phone."""
    subscription = service.subscribe()
    events: queue.Queue[Any] = queue.Queue()
    stop = threading.Event()
    pump = threading.Thread(target=_pump, args=(subscription, events, stop),
                            name="sse-pump", daemon=True)
    pump.start()
    started = clock()
    try:
        yield "retry: 2000\n\n"
        yield format_event(service.state(), event="state")
        last_sent = clock()
        while clock() - started < max_duration_s:
            try:
                item = events.get(timeout=keepalive_s)
            except queue.Empty:
                yield ": keep-alive\n\n"
                continue
            ended = item is _END
            wait_s = min_interval_s - (clock() - last_sent)
            if wait_s > 0 and not ended:
                time.sleep(wait_s)
            if isinstance(item, Exception):
                yield format_event({"error": "stream_failed", "message": str(item)}, event="error")
                ended = True
            while not ended:  # coalesce a burst into one state
                try:
                    item = events.get_nowait()
                except queue.Empty:
                    break
                ended = item is _END or isinstance(item, Exception)
            yield format_event(service.state(), event="state")
            last_sent = clock()
            if ended:
                return
    finally:
        stop.set()
        close = getattr(subscription, "close", None)
        if callable(close):
            close()
