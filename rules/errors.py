"""The one error base of `rules/`; every leaf error also subclasses the builtin that fits."""


class RulesError(Exception):
    """Base of every error raised by `rules/`."""
