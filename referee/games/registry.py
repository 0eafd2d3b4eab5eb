"""The games the referee knows, by name: the one place that lists them.

`get_game(name)` is what the loop, the service, the page, the commands and the log look a game
up with; `register(game)` adds one (docs/ADDING_A_GAME.md), `unregister(name)` takes it away
again (tests). The built-in games are Dition and Domination; the first registered is the default.
"""

from __future__ import annotations

from referee.errors import UnknownGameError
from referee.games import dition, domination
from referee.games.base import Game

_GAMES: dict[str, Game] = {}


def register(game: Game) -> Game:
    """Add `game` under its name (ValueError when the name is empty or already taken)."""
    if not game.name:
        raise ValueError(f"{type(game).__name__} has no name")
    if game.name in _GAMES and _GAMES[game.name] is not game:
        raise ValueError(f"a game named {game.name!r} is already registered")
    _GAMES[game.name] = game
    return game


def unregister(name: str) -> None:
    """Forget the game `name` (nothing happens when it is not registered)."""
    _GAMES.pop(name, None)


def names() -> tuple[str, ...]:
    """The registered games' names, the default first."""
    return tuple(_GAMES)


def default_name() -> str:
    return next(iter(_GAMES))


def find_game(name: object) -> Game | None:
    """The game called `name`, or None."""
    return _GAMES.get(name) if isinstance(name, str) else None


def get_game(name: object) -> Game:
    """The game called `name`; UnknownGameError (code "bad_game") naming the known ones."""
    game = find_game(name)
    if game is None:
        raise UnknownGameError("bad_game", f"unknown game {name!r}: use {' or '.join(_GAMES)}")
    return game


register(dition.GAME)
register(domination.GAME)
