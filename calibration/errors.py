"""The one error base of `calibration/`; every leaf error also subclasses the builtin that fits."""


class CalibrationError(Exception):
    """Base of every error raised by `calibration/`."""
