"""`referee judge` for `{"game": "domination", ...}` lines, and the JSON state shared with `infer`.

Input (one JSON object): `players` (default ["G", "R"]), `stacks` (cell -> bottom-to-top letters),
`reserves` and `captured` (default zeros), `to_move` (default the first player), optional
`variant` ({"fast", "up_to_k", "partners", "anti_symmetry"} booleans, a list of those names, or one
name / "standard"), optional `move_number` and `totals`, and `move`
(`{"from": "d4", "to": "d6", "count": 2}` or `{"place": "e5"}`).

Output: `{"legal": true, "stacks", "reserves", "captured", "removed", "to_move", "winner"}` or
`{"legal": false, "reason": "..."}`. Malformed input raises a `ValueError` (from `rules.errors`)
whose message names what was wrong; the `judge` command turns it into `{"error": ...}`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from rules.domination import (
    CELL_INDEX,
    MAX_HEIGHT,
    PIECES_PER_PLAYER,
    Move,
    State,
    Variant,
    apply_move,
    check_move,
)
from rules.errors import InvalidNotationError, InvalidObservationError, InvalidStateError

GAME = "domination"
_OPTIONS = ("partners", "fast", "up_to_k", "anti_symmetry")


def _variant(players: tuple[str, ...], raw: object) -> Variant:
    if raw is None or raw == "standard":
        return Variant(players)
    if isinstance(raw, str):
        raw = [raw]
    if isinstance(raw, list | tuple):
        unknown = [x for x in raw if x not in _OPTIONS and x != "standard"]
        if unknown:
            raise InvalidStateError(f"unknown variant options {unknown}; known: {list(_OPTIONS)}")
        return Variant(players, **{x: True for x in raw if x in _OPTIONS})
    if isinstance(raw, Mapping):
        unknown = [k for k in raw if k not in _OPTIONS and k != "name"]
        if unknown:
            raise InvalidStateError(f"unknown variant fields {unknown}; known: {list(_OPTIONS)}")
        flags = {}
        for k in _OPTIONS:
            v = raw.get(k, False)
            if not isinstance(v, bool):
                raise InvalidStateError(f"variant.{k} must be true or false, got {v!r}")
            flags[k] = v
        return Variant(players, **flags)
    raise InvalidStateError(f"'variant' must be an object, a list of option names or a name: {raw!r}")


def _check_possible(obj: Mapping[str, Any], players: tuple[str, ...]) -> None:
    """Refuse, before any work, a position no Domination set can make (the rule it breaks)."""
    if not 2 <= len(players) <= 4 or len(set(players)) != len(players):
        raise InvalidStateError(f"'players' must be 2 to 4 distinct letters, got {list(players)}")
    pieces = PIECES_PER_PLAYER[len(players)]
    stacks = obj.get("stacks")
    if isinstance(stacks, Mapping):
        if len(stacks) > len(CELL_INDEX):
            raise InvalidStateError(f"'stacks' names {len(stacks)} cells; the board has "
                                    f"{len(CELL_INDEX)}")
        for cell, stack in stacks.items():
            if isinstance(stack, str) and len(stack) > MAX_HEIGHT:
                raise InvalidStateError(
                    f"stacks: {cell} holds {len(stack)} pieces; a stack has at most "
                    f"{MAX_HEIGHT} (the pieces beyond {MAX_HEIGHT} come off the bottom at once)")
    counts: list[tuple[str, Any]] = []
    for name in ("reserves", "totals"):
        given = obj.get(name)
        if isinstance(given, Mapping):
            counts += [(f"{name}.{k}", v) for k, v in given.items()]
    captured = obj.get("captured")
    if isinstance(captured, Mapping):
        for who, row in captured.items():
            if isinstance(row, Mapping):
                counts += [(f"captured.{who}.{k}", v) for k, v in row.items()]
    for where, value in counts:
        if isinstance(value, int) and not isinstance(value, bool) and value > pieces:
            raise InvalidStateError(
                f"'{where}' is {value}: a {len(players)}-player set has {pieces} pieces per "
                "player")


def _cell_map(given: Any, name: str, values: str) -> None:
    """`given` maps at most the board's cells (to `values`), or `InvalidObservationError`."""
    if not isinstance(given, Mapping):
        raise InvalidObservationError(
            f"'{name}' must map cell -> {values}, got {type(given).__name__}")
    if len(given) > len(CELL_INDEX):
        raise InvalidObservationError(f"'{name}' names {len(given)} cells; the board has "
                                      f"{len(CELL_INDEX)}")


def check_observation(obj: Mapping[str, Any]) -> None:
    """The `infer` fields `observed`, `heights`, `height_sigma` have the right shape and sizes."""
    _cell_map(obj.get("observed"), "observed", "letter or '.'")
    for name in ("heights", "height_sigma"):
        given = obj.get(name)
        if given is None:
            continue
        _cell_map(given, name, "pieces")
        for cell, value in given.items():
            if cell not in CELL_INDEX:
                raise InvalidObservationError(f"'{name}' names {cell!r}, not a board cell")
            if isinstance(value, bool) or not isinstance(value, int | float) \
                    or not math.isfinite(value) or not 0 <= value <= 4 * MAX_HEIGHT:
                raise InvalidObservationError(
                    f"'{name}.{cell}' must be a number of pieces from 0 to {4 * MAX_HEIGHT}, "
                    f"got {value!r}")


def state_from_json(obj: Mapping[str, Any]) -> State:
    """A `State` from the judge/infer JSON fields; raises ValueError subclasses naming the field."""
    if not isinstance(obj, Mapping):
        raise InvalidStateError(f"expected a JSON object, got {type(obj).__name__}")
    raw_players = obj.get("players", ["G", "R"])
    if not isinstance(raw_players, list | tuple) or not all(isinstance(p, str) for p in raw_players):
        raise InvalidStateError(f"'players' must be a list of letters, got {raw_players!r}")
    players = tuple(raw_players)
    _check_possible(obj, players)
    if "stacks" not in obj:
        raise InvalidStateError("missing 'stacks' (cell -> bottom-to-top letters)")
    for name in ("stacks", "reserves", "captured", "totals"):
        if name in obj and obj[name] is not None and not isinstance(obj[name], Mapping):
            raise InvalidStateError(f"'{name}' must be a JSON object, got {obj[name]!r}")
    captured = obj.get("captured") or {}
    for who, row in captured.items():
        if not isinstance(row, Mapping):
            raise InvalidStateError(f"'captured.{who}' must map opponent -> count, got {row!r}")
    move_number = obj.get("move_number", 0)
    if isinstance(move_number, int) and move_number > 10**6:
        raise InvalidStateError(f"'move_number' is {move_number}: no match lasts a million moves")
    return State.from_setup(
        obj["stacks"],
        variant=_variant(players, obj.get("variant")),
        reserves=obj.get("reserves") or {},
        captured=captured,
        to_move=obj.get("to_move"),
        move_number=move_number,
        totals=obj.get("totals"),
    )


def state_to_json(state: State) -> dict[str, Any]:
    return {
        "stacks": dict(sorted(state.stacks.items())),
        "reserves": state.reserves,
        "captured": state.captured,
    }


def judge(obj: dict[str, Any]) -> dict[str, Any]:
    """Judge one Domination move; see the module docstring for the contract."""
    game = obj.get("game", GAME)
    if game != GAME:
        raise InvalidStateError(f"this judge handles game 'domination', not {game!r}")
    state = state_from_json(obj)
    if "move" not in obj:
        raise InvalidNotationError(
            "missing 'move' ({'from': 'd4', 'to': 'd6', 'count': 2} or {'place': 'e5'})"
        )
    move = Move.from_json(obj["move"])
    reason = check_move(state, move)
    if reason is not None:
        return {"legal": False, "reason": reason}
    after, result = apply_move(state, move)
    return {
        "legal": True,
        **state_to_json(after),
        "removed": result.removed,
        "to_move": after.to_move,
        "winner": result.winner,
    }
