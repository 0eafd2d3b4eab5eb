"""The one error base of `web/`; every leaf error also subclasses the builtin that fits."""


class WebError(Exception):
    """Base of every error raised by `web/`."""
