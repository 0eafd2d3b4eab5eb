"""How the log writes a move payload in short, in the engine's own notation, which
`rules.domination.Move.from_text` reads back: "d4-d6/2" (2 pieces from d4 to d6), "+e5" (a
reserve placed), "b7~c7" (the anti-symmetry swap). A payload that is no move reads "?"."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def move_text(move: Mapping[str, Any]) -> str:
    """`{"place": "e5"}` -> "+e5"; `{"from": "d4", "to": "d6", "count": 2}` -> "d4-d6/2";
    `{"swap": ["b7", "c7"]}` -> "b7~c7"."""
    from rules import domination as rdom
    from rules.errors import InvalidNotationError

    try:
        return str(rdom.Move.from_json(dict(move)))
    except InvalidNotationError:
        return "?"
