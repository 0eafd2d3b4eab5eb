"""The calibration file: versioned JSON, checked when loaded and against every frame.

    {"version": 1, "image_size": [w, h], "intrinsics": {...} | null, "board": {...} | null,
     "colours": {...} | null, "camera_controls": {...} | null, "created": ISO time,
     "quality": {...}}

`intrinsics` is `vision.camera.Intrinsics.to_dict()`, `board` a `BoardCalibration`, `colours` a
`ColourModel`, `camera_controls` free-form settings of the camera (exposure, white balance) to
lock before use, `quality` figures of the calibration (RMS reprojection error, views). Loading
refuses an unknown version, a malformed file, unknown keys and parts that disagree on the image
size; `check_frame` refuses frames of another size.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from calibration.board import BoardCalibration
from calibration.colour import ColourModel
from calibration.errors import (
    CalibrationNotFoundError,
    ImageSizeMismatchError,
    MalformedCalibrationError,
    UnknownVersionError,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from vision.camera import Intrinsics

CALIBRATION_VERSION = 1
_KEYS = {"version", "image_size", "intrinsics", "board", "colours", "camera_controls", "created",
         "quality", "disc_thickness"}
#: the thickest disc over its diameter a thickness may state (a stack of coins is no disc)
MAX_DISC_THICKNESS = 0.5


def check_disc_thickness(value: Any, what: str = "disc_thickness") -> float:
    """A disc's thickness over its diameter (Othello discs 0.15, the kit's 0.08): a number in
    (0, MAX_DISC_THICKNESS]; ValueError naming `what` and the value otherwise."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or not 0 < value <= MAX_DISC_THICKNESS:
        raise ValueError(f"{what} is the discs' thickness over their diameter, a number above 0 and at "
                         f"most {MAX_DISC_THICKNESS} (Othello discs: 0.15), got {value!r}")
    return float(value)


def _now() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat()


@dataclass(frozen=True, eq=False)
class Calibration:
    """Everything calibrated for one camera at one resolution looking at one board."""

    image_size: tuple[int, int]
    intrinsics: Intrinsics | None = None
    board: BoardCalibration | None = None
    colours: ColourModel | None = None
    camera_controls: Mapping[str, Any] | None = None
    created: str = field(default_factory=_now)
    quality: Mapping[str, Any] = field(default_factory=dict)
    version: int = CALIBRATION_VERSION
    #: the Dition discs' thickness over their diameter, when stated (None: the reader's default)
    disc_thickness: float | None = None

    def __post_init__(self) -> None:
        size = _image_size(self.image_size)
        object.__setattr__(self, "image_size", size)
        if self.intrinsics is not None and tuple(self.intrinsics.image_size) != size:
            raise ImageSizeMismatchError(
                f"the intrinsics were made for {_wh(self.intrinsics.image_size)} px but the "
                f"calibration is for {_wh(size)} px")

    def with_changes(self, **changes: Any) -> Calibration:
        """A copy with some parts replaced (and a new creation time)."""
        changes.setdefault("created", _now())
        return replace(self, **changes)

    def summary(self) -> dict[str, Any]:
        """A short JSON-able account for status pages (what is calibrated, how well)."""
        camera = dict(self.quality.get("camera", {})) if isinstance(
            self.quality.get("camera"), Mapping) else {}
        board = None
        if self.board is not None:
            centre = self.board.camera_centre_board
            board = {"game": self.board.game, "method": self.board.method,
                     "with_intrinsics": self.board.undistorted,
                     "camera_height_board": None if centre is None else round(-centre[2], 3),
                     "tilt_deg": None if self.board.tilt_deg is None
                     else round(self.board.tilt_deg, 2)}
        return {
            "image_size": list(self.image_size),
            "intrinsics": None if self.intrinsics is None else {
                "rms_px": camera.get("rms_px"),
                "fx": round(float(self.intrinsics.camera_matrix[0, 0]), 2),
                "distortion": self.intrinsics.has_distortion},
            "board": board,
            "colours": None if self.colours is None else {
                "game": self.colours.game, "pieces": list(self.colours.names())},
            "created": self.created,
        }

    def to_dict(self) -> dict[str, Any]:
        # (the discs' thickness only when stated: a file without it reads as before)
        stated = {} if self.disc_thickness is None else {"disc_thickness": self.disc_thickness}
        return {
            "version": self.version,
            "image_size": list(self.image_size),
            "intrinsics": None if self.intrinsics is None else self.intrinsics.to_dict(),
            "board": None if self.board is None else self.board.to_dict(),
            "colours": None if self.colours is None else self.colours.to_dict(),
            "camera_controls": None if self.camera_controls is None else dict(self.camera_controls),
            "created": self.created,
            "quality": dict(self.quality),
            **stated,
        }

    @classmethod
    def from_dict(cls, data: Any, *, source: str = "calibration") -> Calibration:
        from vision.camera import Intrinsics
        from vision.errors import VisionError

        if not isinstance(data, Mapping):
            raise MalformedCalibrationError(f"{source}: a calibration is a JSON object, got "
                                            f"{type(data).__name__}")
        if "version" not in data:
            raise MalformedCalibrationError(f"{source}: no 'version' field (not a calibration "
                                            "file?)")
        version = data["version"]
        if not isinstance(version, int) or isinstance(version, bool):
            raise MalformedCalibrationError(f"{source}: 'version' must be an integer, got "
                                            f"{version!r}")
        if version != CALIBRATION_VERSION:
            raise UnknownVersionError(
                f"{source}: calibration format version {version} is not known to this referee "
                f"(it reads version {CALIBRATION_VERSION}); recalibrate or update the referee")
        unknown = set(data) - _KEYS
        if unknown:
            raise MalformedCalibrationError(f"{source}: unknown keys {sorted(unknown)}")
        if "image_size" not in data:
            raise MalformedCalibrationError(f"{source}: no 'image_size' field")
        try:
            size = _image_size(data["image_size"])
        except ValueError as exc:
            raise MalformedCalibrationError(f"{source}: {exc}") from None
        intrinsics = None
        if data.get("intrinsics") is not None:
            try:
                intrinsics = Intrinsics.from_dict(data["intrinsics"])
            except (VisionError, TypeError, ValueError) as exc:
                raise MalformedCalibrationError(f"{source}: bad 'intrinsics': {exc}") from None
            if tuple(intrinsics.image_size) != size:
                raise MalformedCalibrationError(
                    f"{source}: 'intrinsics' are for {_wh(intrinsics.image_size)} px but "
                    f"'image_size' says {_wh(size)} px")
        try:
            board = None if data.get("board") is None else BoardCalibration.from_dict(data["board"])
            colours = None if data.get("colours") is None else ColourModel.from_dict(data["colours"])
        except MalformedCalibrationError as exc:
            raise MalformedCalibrationError(f"{source}: {exc}") from None
        if board is not None and board.undistorted and intrinsics is None:
            raise MalformedCalibrationError(
                f"{source}: the board was calibrated with intrinsics but the file has none")
        controls = data.get("camera_controls")
        if controls is not None and not isinstance(controls, Mapping):
            raise MalformedCalibrationError(f"{source}: 'camera_controls' must be an object")
        quality = data.get("quality") or {}
        if not isinstance(quality, Mapping):
            raise MalformedCalibrationError(f"{source}: 'quality' must be an object")
        created = data.get("created", "")
        if not isinstance(created, str):
            raise MalformedCalibrationError(f"{source}: 'created' must be an ISO time string")
        thickness = data.get("disc_thickness")
        if thickness is not None:
            try:
                thickness = check_disc_thickness(thickness, "'disc_thickness'")
            except ValueError as exc:
                raise MalformedCalibrationError(f"{source}: {exc}") from None
        return cls(size, intrinsics, board, colours, controls, created, quality, version, thickness)


def _image_size(value: Any) -> tuple[int, int]:
    try:
        w, h = value
    except (TypeError, ValueError):
        raise ValueError(f"'image_size' must be [width, height], got {value!r}") from None
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
               and v == int(v) and v > 0 for v in (w, h)):
        raise ValueError(f"'image_size' must be two positive integers, got {value!r}")
    return int(w), int(h)


def _wh(size: tuple[int, int] | Any) -> str:
    return f"{size[0]}x{size[1]}"


def save_calibration(calibration: Calibration, path: str | Path) -> Path:
    """Write the calibration as JSON (atomically: a crash never leaves half a file)."""
    target = Path(path)
    if target.parent and not target.parent.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".tmp")
    tmp.write_text(_dumps(calibration.to_dict()) + "\n", encoding="utf-8")
    os.replace(tmp, target)
    return target


_NUMBER_LIST = re.compile(r"\[\s*((?:-?[0-9.eE+-]+|null|true|false)(?:,\s*(?:-?[0-9.eE+-]+|null|true"
                          r"|false))*)\s*\]")


def _dumps(data: Mapping[str, Any]) -> str:
    """Indented JSON with lists of numbers kept on one line (a matrix row per line)."""
    text = json.dumps(data, indent=2)
    return _NUMBER_LIST.sub(lambda m: "[" + ", ".join(v.strip() for v in m.group(1).split(","))
                            + "]", text)


def load_calibration(path: str | Path, *,
                     image_size: tuple[int, int] | None = None) -> Calibration:
    """Read and check a calibration file; with `image_size`, also refuse another frame size."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CalibrationNotFoundError(f"calibration file {p} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CalibrationNotFoundError(f"cannot read calibration file {p}: {exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise MalformedCalibrationError(f"{p}: not valid JSON ({exc})") from None
    calibration = Calibration.from_dict(data, source=str(p))
    if image_size is not None:
        _check_size(calibration, tuple(image_size), str(p))  # type: ignore[arg-type]
    return calibration


def check_frame(calibration: Calibration, frame: npt.NDArray[np.uint8] | Any) -> None:
    """Refuse a frame whose size differs from the calibration's (`ImageSizeMismatchError`)."""
    shape = getattr(frame, "shape", None)
    if shape is None or len(shape) < 2:
        raise ImageSizeMismatchError(f"expected an image array, got {type(frame).__name__}")
    _check_size(calibration, (int(shape[1]), int(shape[0])), "calibration")


def check_calibration(calibration: Calibration, frame: npt.NDArray[np.uint8], *,
                      tolerance_px: float = 3.0) -> float | None:
    """Everything a frame can contradict: its size (`ImageSizeMismatchError`) and, when a board
    is stored, the board's place in the picture (`BoardMismatchError`). Returns the largest
    corner shift in px (None without a stored board)."""
    from calibration.board import check_board

    check_frame(calibration, frame)
    if calibration.board is None:
        return None
    return check_board(calibration.board, frame, intrinsics=calibration.intrinsics,
                       tolerance_px=tolerance_px)


def _check_size(calibration: Calibration, size: tuple[int, int], source: str) -> None:
    if size != calibration.image_size:
        raise ImageSizeMismatchError(
            f"{source}: frames are {_wh(size)} px but the calibration was made for "
            f"{_wh(calibration.image_size)} px; set the camera to {_wh(calibration.image_size)} "
            "or recalibrate at this resolution")
