"""The one error base of `referee/`; every leaf error also subclasses the builtin that fits."""


class RefereeError(Exception):
    """Base of every error raised by `referee/`."""


class CommandError(RefereeError, ValueError):
    """A control command that cannot be carried out now; `code` names why (for the JSON API)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class SourceSpecError(RefereeError, ValueError):
    """A source spec the referee cannot open."""


class JudgeInputError(RefereeError, ValueError):
    """A `referee judge` input line that is not a well-formed request (the message names why)."""


class UnknownGameError(CommandError):
    """A game name the registry does not know (code "bad_game"; the message lists the known)."""
