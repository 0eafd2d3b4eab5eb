"""Camera intrinsics, board pose and colour models, stored as versioned JSON; the printable kit.

Entry points (numpy / OpenCV are imported inside the functions that need them):
- `calibrate_camera(images, spec, params) -> CameraCalibration` (ChArUco, `calibration.intrinsics`)
- `calibrate_board(frame, game=..., intrinsics=..., corners_px=...) -> BoardCalibration`,
  `check_board(board, frame)` (`calibration.board`)
- `fit_colour_model(samples, game=...)`, `sample_pieces`, `colours_from_start`
  (`calibration.colour`)
- `Calibration`, `load_calibration(path)`, `save_calibration`, `check_frame`,
  `check_calibration(calibration, frame)` (size and board place)
  (`calibration.store`)
- the printable kit: `calibration.printing` (PDF/SVG/PNG), `calibration.kit`,
  `calibration.target` (imported on demand: they pull in reportlab)
"""

from calibration.board import BoardCalibration, calibrate_board, check_board
from calibration.colour import ColourModel, colours_from_start, fit_colour_model, sample_pieces
from calibration.intrinsics import (
    CameraCalibration,
    IntrinsicsParams,
    calibrate_camera,
    detect_target,
)
from calibration.store import (
    CALIBRATION_VERSION,
    Calibration,
    check_calibration,
    check_frame,
    load_calibration,
    save_calibration,
)
from calibration.target import CharucoSpec

__all__ = [
    "CALIBRATION_VERSION", "BoardCalibration", "Calibration", "CameraCalibration", "CharucoSpec",
    "ColourModel", "IntrinsicsParams", "calibrate_board", "calibrate_camera", "check_board",
    "check_calibration", "check_frame", "colours_from_start", "detect_target", "fit_colour_model", "load_calibration",
    "sample_pieces", "save_calibration",
]
