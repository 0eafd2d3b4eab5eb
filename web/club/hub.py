"""LISTEN on the club database, and hand the pages a state to stream (as a table's service does).

`ClubHub` offers what `web.sse.state_stream` needs from a referee service: `state()` (every
table, cached until the next NOTIFY) and `subscribe()` (one item per NOTIFY the senders made).
One thread holds a LISTEN connection; when the database goes away it reconnects with backoff
and the pages show `listening: false` meanwhile.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from typing import Any

from referee.club import schema
from referee.club.errors import ClubError
from referee.club.url import connect, scrub
from referee.service import Subscription


class ClubHub:
    def __init__(self, store: Any, *, listen: bool = True) -> None:
        self.store = store
        self._subs: list[Subscription] = []
        self._stop = threading.Event()
        self._version = 0
        self._cached: tuple[int, dict[str, Any]] | None = None
        self._lock = threading.Lock()
        self.listening = False
        self.error: str | None = None
        self.notified = 0
        self._thread: threading.Thread | None = None
        if listen:
            self._thread = threading.Thread(target=self._listen, name="club-listen", daemon=True)
            self._thread.start()

    # -- what state_stream uses ---------------------------------------------------------------
    def subscribe(self) -> Subscription:
        sub = Subscription(self)  # type: ignore[arg-type]
        self._subs.append(sub)
        return sub

    def _unsubscribe(self, sub: Subscription) -> None:
        if sub in self._subs:
            self._subs.remove(sub)

    def end_streams(self) -> None:
        for sub in list(self._subs):
            sub.close()

    def state(self) -> dict[str, Any]:
        with self._lock:
            version = self._version
            if self._cached is not None and self._cached[0] == version:
                return self._cached[1]
        try:
            tables = self.store.tables_state()
            rounds = self.store.rounds()
            error = self.error
        except ClubError as exc:
            tables, rounds, error = [], [], str(exc)
        state = {"tables": tables, "rounds": rounds,
                 "club": {"listening": self.listening, "error": error}}
        with self._lock:
            if self._version == version:
                self._cached = (version, state)
        return state

    def changed(self, item: dict[str, Any] | None = None) -> None:
        """Something changed in the database (a NOTIFY, or the organiser's own write)."""
        with self._lock:
            self._version += 1
        for sub in list(self._subs):
            sub.put(item or {"type": "changed"})

    # -- the LISTEN thread -------------------------------------------------------------------
    def _listen(self) -> None:
        backoff = 0.5
        while not self._stop.is_set():
            try:
                conn = connect(self.store.url, autocommit=True)
            except ClubError as exc:
                self._lost(str(exc))
                self._stop.wait(backoff)
                backoff = min(backoff * 2, 10.0)
                continue
            try:
                conn.execute(f"LISTEN {schema.NOTIFY_CHANNEL}")
                self.listening, self.error, backoff = True, None, 0.5
                self.changed()
                while not self._stop.is_set():
                    for notify in conn.notifies(timeout=0.5):
                        self.notified += 1
                        try:
                            item = json.loads(notify.payload)
                        except ValueError:
                            item = {}
                        item["received"] = time.time()
                        self.changed({"type": "notify", **item})
            except Exception as exc:  # noqa: BLE001 - the server went away: reconnect
                self._lost(scrub(str(exc).strip() or type(exc).__name__, self.store.url))
            finally:
                with contextlib.suppress(Exception):  # closing a dead connection
                    conn.close()
            self._stop.wait(backoff)

    def _lost(self, message: str) -> None:
        was = self.listening
        self.listening, self.error = False, f"the club database is away: {message}"
        if was:
            self.changed()

    def close(self) -> None:
        self._stop.set()
        self.end_streams()
        if self._thread is not None:
            self._thread.join(2.0)
