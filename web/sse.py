"""Server-Sent Events: the full referee state, pushed on every change, with keep-alives.

The service's `subscribe()` gives an iterable of event dicts that blocks until something
happens. A subscription with `get(timeout)` and `closed` (the service's) is waited on directly;
any other iterable is drained by a helper thread into a queue. Either way the response generator
can send keep-alive comments while nothing happens. A page that leaves is noticed within
`GONE_POLL_S` when the server can tell (`gone`: waitress's `waitress.client_disconnected`), else
at the next write (waitress raises): a stream whose reader left holds a worker, a subscription and
a place in the budget, and with one keep-alive every 15 s a page reloaded a few times would
otherwise fill its address's share. Several events arriving together are sent as one state.

`StreamBudget` counts the open streams (events and pictures) per client address and in all:
each one holds a server worker for as long as it is open, so over the caps a new stream is
refused with 503 `too_many_streams` and the page's `/api/state` is always answered.
"""

from __future__ import annotations

import math
import queue
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from web.errors import TooManyStreamsError
from web.service_access import json_text

_END = object()
#: how often a waiting stream asks whether its reader is still there
GONE_POLL_S = 1.0


class StreamBudget:
    """Open streams per client address and in all, with their caps (`try_open` / `close`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._per_address: dict[str, int] = {}
        self._per_kind: dict[str, int] = {}
        self.total = 0

    def open(self, address: str, kind: str, *, per_address: int, total: int,
             kind_max: int | None = None) -> None:
        """Count one more stream of `kind` from `address`, or raise `TooManyStreamsError`."""
        with self._lock:
            mine = self._per_address.get(address, 0)
            if mine >= per_address:
                raise TooManyStreamsError(
                    f"{address} already has {mine} live streams open (at most {per_address} "
                    "per address): close another page or tab first")
            if self.total >= total or (kind_max is not None
                                       and self._per_kind.get(kind, 0) >= kind_max):
                raise TooManyStreamsError(
                    f"the referee is serving as many live {kind} streams as it can; "
                    "the page still updates every few seconds (GET /api/state)")
            self._per_address[address] = mine + 1
            self._per_kind[kind] = self._per_kind.get(kind, 0) + 1
            self.total += 1

    def close(self, address: str, kind: str) -> None:
        with self._lock:
            left = self._per_address.get(address, 0) - 1
            if left > 0:
                self._per_address[address] = left
            else:
                self._per_address.pop(address, None)
            self._per_kind[kind] = max(self._per_kind.get(kind, 0) - 1, 0)
            self.total = max(self.total - 1, 0)

    def count(self, kind: str | None = None) -> int:
        with self._lock:
            return self.total if kind is None else self._per_kind.get(kind, 0)


def format_event(data: Any, *, event: str | None = None, event_id: str | None = None) -> str:
    """One SSE message; `data` is sent as compact JSON on one line."""
    lines = []
    if event:
        lines.append(f"event: {event}")
    if event_id is not None:
        lines.append(f"id: {event_id}")
    lines.append("data: " + json_text(data))
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


class SharedStates:
    """One encoded `state` message per service event, however many pages are open.

    Every subscription receives the same event object, so the streams that last saw the same
    event send the same bytes: the state is built and serialised once, not once per page (with
    200 pages open that is most of the server's work and memory churn)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._key: object = None
        self._data = ""

    def message(self, service: Any, after: object) -> str:
        """The state message for a stream whose last event was `after` (None: build anew)."""
        with self._lock:
            if after is not None and after is self._key:
                return self._data
            data = format_event(service.state(), event="state")
            self._key, self._data = after, data
            return data


class _Direct:
    """A subscription with `get(timeout)` and `closed` seen as the pump's queue."""

    def __init__(self, subscription: Any) -> None:
        self._sub = subscription

    def get(self, timeout: float | None = None) -> Any:
        if self._sub.closed:
            return _END
        item = self._sub.get(timeout=timeout)
        if item is None:
            if self._sub.closed:
                return _END
            raise queue.Empty
        return item

    def get_nowait(self) -> Any:
        return self.get(timeout=0.0)


def _next_event(events: Any, timeout_s: float, gone: Callable[[], bool] | None) -> Any:
    """The next item within `timeout_s` (`queue.Empty` if none), or `_END` as soon as `gone()`
    says the reader has left."""
    if gone is None:
        return events.get(timeout=timeout_s)
    slices = max(1, math.ceil(timeout_s / GONE_POLL_S))
    for _ in range(slices):
        if gone():
            return _END
        try:
            return events.get(timeout=timeout_s / slices)
        except queue.Empty:
            continue
    if gone():
        return _END
    raise queue.Empty


def state_stream(
    service: Any,
    *,
    keepalive_s: float = 15.0,
    max_duration_s: float = 600.0,
    min_interval_s: float = 0.1,
    clock: Callable[[], float] = time.monotonic,
    shared: SharedStates | None = None,
    gone: Callable[[], bool] | None = None,
) -> Iterator[str]:
    """Yield SSE text: `state` now, a new `state` after every service event, keep-alives between.

    States are at least `min_interval_s` apart: a burst of events (a verdict, its instruction,
    its log entries) becomes one state, and a referee that warns on every frame cannot flood
    a phone. Streams given the same `shared` send one encoding of each state. `gone()`, when
    given, says the reader has left: the stream then ends within `GONE_POLL_S`."""
    shared = shared if shared is not None else SharedStates()
    subscription = service.subscribe()
    stop = threading.Event()
    if callable(getattr(subscription, "get", None)) and hasattr(subscription, "closed"):
        events: Any = _Direct(subscription)  # no helper thread per open page
    else:
        events = queue.Queue()
        threading.Thread(target=_pump, args=(subscription, events, stop),
                         name="sse-pump", daemon=True).start()
    started = clock()
    try:
        yield "retry: 2000\n\n"
        yield shared.message(service, None)
        last_sent = clock()
        while clock() - started < max_duration_s:
            try:
                item = _next_event(events, keepalive_s, gone)
            except queue.Empty:
                yield ": keep-alive\n\n"
                continue
            if item is _END and gone is not None and gone():
                return  # nobody to send a last state to
            ended = item is _END
            wait_s = min_interval_s - (clock() - last_sent)
            if wait_s > 0 and not ended:
                time.sleep(wait_s)
            if isinstance(item, Exception):
                yield format_event({"error": "stream_failed", "message": str(item)}, event="error")
                ended = True
            last = None if ended else item
            while not ended:  # coalesce a burst into one state
                try:
                    item = events.get_nowait()
                except queue.Empty:
                    break
                ended = item is _END or isinstance(item, Exception)
                last = None if ended else item
            yield shared.message(service, last)
            last_sent = clock()
            if ended:
                return
    finally:
        stop.set()
        close = getattr(subscription, "close", None)
        if callable(close):
            close()
