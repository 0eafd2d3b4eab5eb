"""Wire a club sender to a running referee service: its page shows the link, its events wake it."""

from __future__ import annotations

import threading
from typing import Any

from referee.club.sender import ClubSender

STATUS_KEY = "club"


def attach(service: Any, url: str, table: str, **options: Any) -> ClubSender:
    """Start a `ClubSender` for `service`'s log; `service.state()["club"]` shows its status and
    each committed event wakes it. Stop it with `sender.stop()` after the service."""
    sender = ClubSender(service.log.path, url, table,
                        on_change=lambda status: service.publish_extra(
                            {"type": STATUS_KEY, **status}),
                        **options)
    service.state_extras[STATUS_KEY] = sender.status
    subscription = service.subscribe()

    def pump() -> None:
        for event in subscription:
            if event.get("type") != STATUS_KEY:
                sender.wake()

    threading.Thread(target=pump, name="club-wake", daemon=True).start()
    return sender.start()
