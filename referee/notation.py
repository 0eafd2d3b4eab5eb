"""How the log writes a move payload in short: "+e5" (a reserve placed), "d4-d6x2" (a step)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def move_text(move: Mapping[str, Any]) -> str:
    """`{"place": "e5"}` -> "+e5"; `{"from": "d4", "to": "d6", "count": 2}` -> "d4-d6x2"."""
    if "place" in move:
        return f"+{move['place']}"
    return f"{move.get('from')}-{move.get('to')}x{move.get('count')}"
