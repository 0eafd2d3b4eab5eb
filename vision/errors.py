"""The one error base of `vision/`; every leaf error also subclasses the builtin that fits."""


class VisionError(Exception):
    """Base of every error raised by `vision/`."""
