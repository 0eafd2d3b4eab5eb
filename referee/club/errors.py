"""Errors of the club link: all `RefereeError`s, each leaf also the builtin that fits."""

from __future__ import annotations

from referee.errors import RefereeError


class ClubError(RefereeError):
    """Something about the club database; the message never holds its password."""


class ClubUrlError(ClubError, ValueError):
    """A club URL that is not a postgresql:// URL (or has no table name to go with it)."""


class ClubUnreachableError(ClubError, ConnectionError):
    """The club database does not answer (down, wrong host or port, network away)."""


class ClubAuthError(ClubError, PermissionError):
    """The club database refused the user name or the password."""


class ClubSchemaError(ClubError, RuntimeError):
    """The club database has no schema yet, or one this referee does not know."""


class ClubNotFoundError(ClubError, LookupError):
    """No such match (or round) in the club database."""


class ClubInputError(ClubError, ValueError):
    """A filter, a round's name or a player's name the club cannot take (the message says why)."""


class ClubConflictError(ClubError, ValueError):
    """A change that clashes with what the club database holds (a second round at one start);
    the page answers 409."""

    status = 409
