"""The one error base of `rules/`; every leaf error also subclasses the builtin that fits."""


class RulesError(Exception):
    """Base of every error raised by `rules/`."""


# --- Domination (rules/domination*.py) ---


class IllegalMoveError(RulesError, ValueError):
    """A Domination move that the rules forbid in the given state (the message names both)."""


class InvalidNotationError(RulesError, ValueError):
    """A cell name, move or state text that cannot be parsed."""


class InvalidStateError(RulesError, ValueError):
    """A Domination state that cannot be represented (unknown cell or player letter, bad counts)."""


class InvalidObservationError(RulesError, ValueError):
    """Observed Domination tops/heights that do not cover the 52 cells or name unknown colours."""


# --- Dition (rules/dition*.py) ---


class IllegalPlacementError(IllegalMoveError):
    """A Dition placement the rules forbid (outside, overlapping, game over); names it and why."""


class InvalidDiscError(RulesError, ValueError):
    """A Dition disc or position that cannot exist: non-finite coordinate, unknown colour, ..."""


class InvalidParameterError(RulesError, ValueError):
    """An analysis parameter out of its domain (resolution, tolerance, ...)."""
