"""`referee judge`: one JSON request in, one JSON answer out, dispatched on `"game"`.

Each game names (`Game.judge_module`) a module with `judge(obj: dict) -> dict` (imported
lazily, on the first line that names the game). A request that is malformed gets `{"error": "..."}` naming the problem; the
game modules signal that by raising `ValueError` (their package's leaf errors subclass it).
"""

from __future__ import annotations

import importlib
import sys
import traceback
from collections.abc import Callable
from typing import Any

from referee.games import registry
from referee.jsonlines import LineError, parse_line

#: game name -> module with `judge(obj) -> dict` (from each game's description)
GAMES: dict[str, str] = {
    name: module for name in registry.names()
    if (module := registry.get_game(name).judge_module) is not None
}

_Judge = Callable[[dict[str, Any]], dict[str, Any]]


def _judge_for(game: str) -> _Judge | None:
    """The game's `judge`, or None if its module is missing or cannot be imported."""
    module_name = GAMES[game]
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name is None or not module_name.startswith(exc.name):
            traceback.print_exc(file=sys.stderr)
        return None
    except Exception:  # noqa: BLE001 - a broken game module must not stop the other games
        traceback.print_exc(file=sys.stderr)
        return None
    judge = getattr(module, "judge", None)
    return judge if callable(judge) else None


def judge_object(obj: Any) -> dict[str, Any]:
    """Judge one decoded request; never raises for bad input (answers `{"error": ...}`)."""
    if not isinstance(obj, dict):
        return {"error": f"expected a JSON object, got {_json_type(obj)}"}
    game = obj.get("game")
    if "game" not in obj:
        return {"error": f"missing field 'game' (one of: {', '.join(GAMES)})"}
    if not isinstance(game, str) or game not in GAMES:
        return {"error": f"unknown game {game!r}; known games: {', '.join(GAMES)}"}
    judge = _judge_for(game)
    if judge is None:
        return {"error": f"game {game!r} is not available"}
    try:
        answer = judge(obj)
    except ValueError as exc:  # malformed request: the game module names the problem
        return {"error": str(exc)}
    except Exception as exc:  # noqa: BLE001 - a bug must not stop the stream: report, go on
        traceback.print_exc(file=sys.stderr)
        return {"error": f"internal error judging this line: {type(exc).__name__}: {exc}"}
    return answer


def judge_line(line: str | bytes) -> dict[str, Any]:
    """Judge one line of JSON Lines input (text, or bytes decoded as UTF-8); never raises for
    bad input: blank, invalid UTF-8, not JSON, over the limits (`referee.jsonlines`)."""
    try:
        obj = parse_line(line)
    except LineError as exc:
        return {"error": str(exc)}
    return judge_object(obj)


def _json_type(value: Any) -> str:
    names = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    for kind, name in names.items():
        if isinstance(value, kind):
            return name
    return "a number"
