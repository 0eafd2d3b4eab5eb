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


class CameraBusyError(SourceUnavailableError):
    """The camera exists but another process (or another source in this one) holds it."""


class NoCameraError(SourceUnavailableError):
    """No camera is attached at the requested index."""


class MissingBackendError(SourceUnavailableError):
    """A library the source needs (picamera2/libcamera, the FFmpeg backend) is not installed."""


class SourceOptionError(HardwareError, TypeError):
    """An option passed to `open_source` is unknown for that kind of source or has a bad value."""
