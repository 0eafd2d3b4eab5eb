"""The one error base of `calibration/`; every leaf error also subclasses the builtin that fits."""


class CalibrationError(Exception):
    """Base of every error raised by `calibration/`."""


# --- camera intrinsics (ChArUco) -------------------------------------------------------------
class TargetNotFoundError(CalibrationError, LookupError):
    """The ChArUco calibration target was not seen (well enough) in an image."""


class TooFewViewsError(CalibrationError, ValueError):
    """Fewer usable views of the calibration target than a calibration needs."""


class ViewsTooSimilarError(CalibrationError, ValueError):
    """The views of the target are too alike to pin down the focal length and centre."""


# --- stored calibration files ----------------------------------------------------------------
class CalibrationNotFoundError(CalibrationError, FileNotFoundError):
    """A calibration file does not exist or cannot be read."""


class MalformedCalibrationError(CalibrationError, ValueError):
    """A calibration file is not valid JSON or lacks / mistypes a field."""


class UnknownVersionError(CalibrationError, ValueError):
    """A calibration file was written by a version of the format this code does not know."""


class ImageSizeMismatchError(CalibrationError, ValueError):
    """Frames are not the size the calibration was made for."""


class BoardMismatchError(CalibrationError, ValueError):
    """The stored board corners no longer match the picture (the board or camera moved)."""


class BoardCalibrationError(CalibrationError, LookupError):
    """The board could not be found or posed in the calibration frame."""


# --- colours ---------------------------------------------------------------------------------
class ColoursTooCloseError(CalibrationError, ValueError):
    """Two piece colours are too close for the camera to tell apart."""


class ColourSampleError(CalibrationError, ValueError):
    """A colour sample is unusable (off the image, too few pixels, unknown piece name)."""


# --- the printable kit -----------------------------------------------------------------------
class PrintLayoutError(CalibrationError, ValueError):
    """A printed item cannot be laid out as asked (size out of range, unknown paper)."""
