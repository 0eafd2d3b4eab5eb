"""An AbstractPlay game record (APGameRecord JSON, schema 1-0-0) of a finished two-player match.

The format (AbstractPlay/recranks, `src/schemas/gamerecord.json`, vendored in tests/data) is
modelled on PGN: a header (game, site, dates, players with their results) and the moves as rounds,
one entry per player in seating order. Moves are written in the engines' own notation, which they
read back (each game's `Game.move_notation`): Domination `d4-d6/2`, `+e5`, `b7~c7`
(`rules.domination.Move.from_text`), Dition the centre of the placed disc `x,y` in disc
diameters from corner 0.
Only standard two-player matches that have ended have such a record.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from referee.errors import RefereeError
from referee.games.registry import find_game, get_game

SITE = "Over the board (tabletop-referee)"


class GameRecordError(RefereeError, ValueError):
    """The match has no APGameRecord: not finished, not two-player, or not the standard game."""


def played_moves(game: str, events: Sequence[Any]) -> list[tuple[str, str]]:
    """(mover, notation) of every move that stands: an undo takes the last one back."""
    spec = get_game(game)
    moves: list[tuple[str, str]] = []
    for e in events:
        p = e.payload
        if e.type == "move":
            moves.append((str(p.get("colour", "?")), spec.move_notation(p)))
        elif e.type == "undo" and moves:
            moves.pop()
    return moves


def _iso(text: str) -> str:
    return datetime.fromisoformat(text).astimezone(UTC).isoformat(timespec="seconds").replace(
        "+00:00", "Z")


def game_record(record: Any, events: Sequence[Any], *, now: datetime | None = None) -> dict[str, Any]:
    """The APGameRecord dict of one match (a `MatchRecord` and its `EventRecord`s)."""
    if len(record.players) != 2 or record.variant != "standard":
        raise GameRecordError(
            f"match {record.id} is {record.game} {record.variant} with {len(record.players)} "
            "players: an APGameRecord is made for standard two-player matches only")
    if not record.ended_at or record.result is None:
        raise GameRecordError(f"match {record.id} has not ended: an APGameRecord records "
                              "finished matches only")
    winner = record.result.get("winner")
    reason = record.result.get("reason")
    players = [{"name": p, "result": 1 if winner == p else 0} for p in record.players]
    moves = played_moves(record.game, events)
    rounds: list[list[str | None]] = []
    for mover, text in moves:
        seat = record.players.index(mover) if mover in record.players else len(rounds) % 2
        if not rounds or seat == 0 or rounds[-1][seat] is not None:
            rounds.append([None, None])
        rounds[-1][seat] = text
    header: dict[str, Any] = {
        "game": {"name": getattr(find_game(record.game), "title", record.game), "variants": []},
        "site": {"name": SITE},
        "date-start": _iso(record.started_at),
        "date-end": _iso(record.ended_at),
        "date-generated": (now or datetime.now(UTC)).astimezone(UTC).isoformat(
            timespec="seconds").replace("+00:00", "Z"),
        "players": players,
        "result-reason": reason,
    }
    if reason == "abandoned":
        header["unrated"] = True
    return {"header": header, "moves": rounds}
