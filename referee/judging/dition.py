"""`referee judge` for `{"game": "dition", ...}` lines.

Request fields (board units, DESIGN.md frame):
- `discs`: list of `{"x": number, "y": number, "colour": "black"|"white"}` (required, may be []).
- `to_move`: "black"|"white" (required).
- `place`: `{"x": number, "y": number}` (required): the disc the side to move puts down.
- `move_number` (optional int >= 1, default 1), `winner` (optional: the game is already over),
  `tolerance` (optional number >= 0: report borderline distances from the placed disc).

Answer for a legal placement: `{"game", "legal": true, "outcome": "placed"|"capture"|"sacrifice"|
"suicide", "removed": [indices into the input discs], "placed_removed", "winner": colour|null,
"placed": {...}, "opponents_in_range": [...], "to_move", "move_number", "tie", "all_suicide",
"warnings": [...]}` (+ `"borderline"` when `tolerance` is given). `tie`: the next side has no legal
placement at all; `all_suicide`: it has legal placements but every one is suicide.
For an illegal placement: `{"game", "legal": false, "reason": "overlap"|"outside"|"game_over",
"detail", "conflicts": [indices], "warnings"}`. Malformed input raises `JudgeInputError`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from referee.errors import JudgeInputError
from rules import dition as rd
from rules import dition_analysis as da

GAME = "dition"
#: Discs of one diameter that do not overlap and lie wholly on the 20 x 20 board: at most about
#: 460 (hexagonal packing, 0.907 of the area); a reading with a few overlaps stays below 500.
MAX_DISCS = 500
#: Board coordinates run from 0 to 20; a point this far away is no reading of any board (and
#: its squared distances would overflow to infinity).
MAX_COORDINATE = 1000.0


def _number(value: Any, where: str, limit: float = MAX_COORDINATE) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise JudgeInputError(f"{where} must be a number, got {value!r}")
    try:
        number = float(value)
    except OverflowError:
        number = math.inf
    if not math.isfinite(number):
        raise JudgeInputError(f"{where} must be finite, got {value!r}")
    if abs(number) > limit:
        raise JudgeInputError(f"{where} is {value!r}: board coordinates run from 0 to "
                              f"{rd.BOARD_SIZE:g}, anything beyond {limit:g} is no position")
    return number


_COLOURS = {"black": rd.Colour.BLACK, "white": rd.Colour.WHITE}


def _colour(value: Any, where: str) -> rd.Colour:
    colour = _COLOURS.get(value) if isinstance(value, str) else None
    if colour is None:
        raise JudgeInputError(f'{where} must be "black" or "white", got {value!r}')
    return colour


def _field(obj: Mapping[str, Any], name: str, where: str = "") -> Any:
    if name not in obj:
        raise JudgeInputError(f"missing field '{where}{name}'")
    return obj[name]


def _point(raw: Any, where: str) -> tuple[float, float]:
    if not isinstance(raw, Mapping):
        raise JudgeInputError(f'\'{where}\' must be an object {{"x": .., "y": ..}}, got {raw!r}')
    return (
        _number(_field(raw, "x", f"{where}."), f"'{where}.x'"),
        _number(_field(raw, "y", f"{where}."), f"'{where}.y'"),
    )


def position_from_request(obj: Mapping[str, Any]) -> rd.Position:
    """The position of a judge request; raises `JudgeInputError` naming the bad field."""
    raw_discs = _field(obj, "discs")
    if not isinstance(raw_discs, list):
        raise JudgeInputError(f"'discs' must be a list of discs, got {raw_discs!r}")
    if len(raw_discs) > MAX_DISCS:
        raise JudgeInputError(
            f"'discs' has {len(raw_discs)} discs; a Dition board holds at most about 460 that "
            f"do not overlap (limit {MAX_DISCS})")
    discs = []
    for i, raw in enumerate(raw_discs):
        x, y = _point(raw, f"discs[{i}]")
        discs.append(
            rd.Disc(x, y, _colour(_field(raw, "colour", f"discs[{i}]."), f"'discs[{i}].colour'"))
        )
    to_move = _colour(_field(obj, "to_move"), "'to_move'")
    move_number = obj.get("move_number", 1)
    if isinstance(move_number, bool) or not isinstance(move_number, int) or not (
            1 <= move_number <= 10**6):
        raise JudgeInputError(
            f"'move_number' must be an integer from 1 to 1000000, got {move_number!r}")
    winner = obj.get("winner")
    if winner is not None:
        winner = _colour(winner, "'winner'")
    return rd.Position(tuple(discs), to_move, move_number, winner)


def _warnings(position: rd.Position) -> list[str]:
    report = rd.status(position)
    out = []
    if report.overlapping:
        out.append("overlapping discs: " + ", ".join(f"{i}-{j}" for i, j in report.overlapping))
    if report.off_board:
        out.append("discs not wholly on the board: " + ", ".join(map(str, report.off_board)))
    if report.should_have_disappeared:
        out.append(
            "discs within range of 4+ opponents (should already have disappeared): "
            + ", ".join(map(str, report.should_have_disappeared))
        )
    return out


def _borderline(
    position: rd.Position, x: float, y: float, tolerance: float
) -> list[dict[str, Any]]:
    """Distances from the placed disc within `tolerance` of 1 (any disc) or 2 (opponents)."""
    if not position.discs:
        return []
    delta = position.centres - (x, y)
    distance = np.sqrt(delta[:, 0] * delta[:, 0] + delta[:, 1] * delta[:, 1])
    opponent = position.colour_mask(position.to_move.opponent)
    out = []
    for threshold, allowed in ((rd.TOUCH_DISTANCE, None), (rd.RANGE_DISTANCE, opponent)):
        near = np.abs(distance - threshold) <= tolerance
        if allowed is not None:
            near &= allowed
        out += [
            {"disc": int(i), "distance": round(float(distance[i]), 6), "threshold": threshold}
            for i in np.flatnonzero(near)
        ]
    return sorted(out, key=lambda item: (item["disc"], item["threshold"]))


def judge(obj: dict[str, Any]) -> dict[str, Any]:
    """Judge one Dition request (see the module docstring for the contract)."""
    if not isinstance(obj, Mapping):
        raise JudgeInputError(f"expected a JSON object, got {obj!r}")
    if obj.get("game", GAME) != GAME:
        raise JudgeInputError(f"this judge handles game 'dition', not {obj.get('game')!r}")
    position = position_from_request(obj)
    x, y = _point(_field(obj, "place"), "place")
    tolerance = obj.get("tolerance")
    if tolerance is not None:
        tolerance = _number(tolerance, "'tolerance'")
        if tolerance < 0:
            raise JudgeInputError(f"'tolerance' must be >= 0, got {tolerance!r}")
    warnings = _warnings(position)
    legality = rd.check_placement(position, x, y)
    if not legality.legal:
        return {
            "game": GAME,
            "legal": False,
            "reason": str(legality.reason),
            "detail": legality.detail,
            "conflicts": list(legality.conflicts),
            "warnings": warnings,
        }
    after, verdict = rd.apply_placement(position, x, y)
    answer: dict[str, Any] = {
        "game": GAME,
        "legal": True,
        "outcome": verdict.outcome.value,
        "removed": list(verdict.removed),
        "placed_removed": verdict.placed_removed,
        "winner": verdict.winner.value if verdict.winner else None,
        "placed": {"x": x, "y": y, "colour": verdict.placed.colour.value},
        "opponents_in_range": list(verdict.opponents_in_range),
        "to_move": after.to_move.value,
        "move_number": after.move_number,
        "tie": False,
        "all_suicide": False,
        "warnings": warnings,
    }
    if verdict.winner is None:
        if not da.has_legal_placement(after):
            answer["tie"] = True
        elif not da.has_safe_placement(after):
            answer["all_suicide"] = True
    if tolerance is not None:
        answer["borderline"] = _borderline(position, x, y, tolerance)
    return answer
