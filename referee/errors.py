"""The one error base of `referee/`; every leaf error also subclasses the builtin that fits."""


class RefereeError(Exception):
    """Base of every error raised by `referee/`."""
