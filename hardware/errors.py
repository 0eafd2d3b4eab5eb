"""The one error base of `hardware/`; every leaf error also subclasses the builtin that fits."""


class HardwareError(Exception):
    """Base of every error raised by `hardware/`."""


class SourceUnavailableError(HardwareError, OSError):
    """The source cannot be opened (no camera, camera busy, file missing, bad URL)."""


class SourceLostError(HardwareError, ConnectionError):
    """A source that was working stopped delivering frames (unplugged, stream dropped, timeout)."""


class CorruptFrameError(HardwareError, ValueError):
    """One frame could not be decoded; the source itself may still be fine."""


class EndOfStream(HardwareError, EOFError):
    """A finite source (file, folder, scripted match) has no more frames."""


class UnknownSourceError(HardwareError, ValueError):
    """The source spec names no known kind of source."""
