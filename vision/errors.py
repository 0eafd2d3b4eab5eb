"""The one error base of `vision/`; every leaf error also subclasses the builtin that fits."""


class VisionError(Exception):
    """Base of every error raised by `vision/`."""


class InvalidIntrinsicsError(VisionError, ValueError):
    """Camera intrinsics that are malformed (shape, non-finite values, unknown keys)."""


class BoardNotFoundError(VisionError, LookupError):
    """No board could be located in the frame (the message says what was tried)."""


class InvalidCornersError(VisionError, ValueError):
    """Board corners given by the user that are malformed or do not form a convex quadrilateral."""


class InvalidImageError(VisionError, ValueError):
    """A frame that is not a usable BGR image (wrong dtype, shape or empty)."""


class ColourModelError(VisionError, ValueError):
    """A piece colour model {letter: BGR} that is malformed or has colours too grey to tell apart."""


class BoardPoseError(VisionError, ValueError):
    """Board corners from which no camera pose above the board can be computed."""
