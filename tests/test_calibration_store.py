"""The calibration file: round trip, and every way a file can be wrong gives its own error."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from calibration.board import BoardCalibration
from calibration.colour import fit_colour_model
from calibration.errors import (
    CalibrationError,
    CalibrationNotFoundError,
    ImageSizeMismatchError,
    MalformedCalibrationError,
    UnknownVersionError,
)
from calibration.store import (
    CALIBRATION_VERSION,
    Calibration,
    check_frame,
    load_calibration,
    save_calibration,
)
from vision.camera import Intrinsics

SIZE = (1640, 1232)


def _calibration(rng: np.random.Generator) -> Calibration:
    k = np.array([[1350.0 + rng.uniform(-20, 20), 0, 820 + rng.uniform(-5, 5)],
                  [0, 1351.0, 615 + rng.uniform(-5, 5)], [0, 0, 1]])
    intrinsics = Intrinsics(k, np.array([-0.1, 0.05, 0.001, -0.001, 0.0]), SIZE)
    corners = np.array([[300.0, 200.0], [1300.0, 210.0], [1310.0, 1050.0], [290.0, 1040.0]])
    H = np.linalg.inv(np.array([[50.0, 0.5, 300.0], [0.4, 42.0, 200.0], [1e-4, 2e-5, 1.0]]))
    board = BoardCalibration("dition", corners, H, np.array([0.1, -0.2, 0.03]),
                             np.array([-10.0, -9.0, 30.0]), "aruco", 0.12, 0.2, True)
    pixels = {"black": rng.normal(40, 3, (100, 3)), "white": rng.normal(220, 3, (100, 3))}
    colours = fit_colour_model(pixels, game="dition")
    return Calibration(SIZE, intrinsics, board, colours, {"exposure_us": 8000},
                       quality={"camera": {"rms_px": 0.2}})


def _write(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "calibration.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_round_trip(tmp_path: Path, rng: np.random.Generator) -> None:
    cal = _calibration(rng)
    path = save_calibration(cal, tmp_path / "sub" / "cal.json")
    data = json.loads(path.read_text())
    assert data["version"] == CALIBRATION_VERSION == 1
    assert set(data) == {"version", "image_size", "intrinsics", "board", "colours",
                         "camera_controls", "created", "quality"}
    back = load_calibration(path)
    assert back.image_size == SIZE
    assert back.intrinsics == cal.intrinsics
    assert np.allclose(back.board.corners_px, cal.board.corners_px)
    assert np.allclose(back.board.H_image_to_board, cal.board.H_image_to_board)
    assert back.colours.to_dict() == cal.colours.to_dict()
    assert back.camera_controls == {"exposure_us": 8000}
    assert back.created == cal.created
    assert back.to_dict() == cal.to_dict()


def test_the_discs_thickness_is_kept(tmp_path: Path, rng: np.random.Generator) -> None:
    cal = _calibration(rng).with_changes(disc_thickness=0.15)
    assert load_calibration(save_calibration(cal, tmp_path / "c.json")).disc_thickness == 0.15
    # a file from before (no such key) states none: the reader's default
    # a file that states none (as every file before) reads the reader's default
    assert "disc_thickness" not in _calibration(rng).to_dict()
    assert load_calibration(save_calibration(_calibration(rng), tmp_path / "d.json")).disc_thickness is None


def test_summary_and_colours_as_a_mapping(rng: np.random.Generator) -> None:
    cal = _calibration(rng)
    summary = cal.summary()
    json.dumps(summary)  # JSON-able for the status page
    assert summary["board"]["game"] == "dition" and summary["colours"]["pieces"] == ["black", "white"]
    assert summary["intrinsics"]["fx"] == pytest.approx(cal.intrinsics.camera_matrix[0, 0], abs=0.01)
    assert summary["board"]["camera_height_board"] > 0
    # the colour model is the {name: BGR} mapping the vision takes
    colours = dict(cal.colours)
    assert set(colours) == {"black", "white"}
    assert colours["black"][0] < 60 and colours["white"][0] > 200
    assert Calibration((640, 480)).summary()["intrinsics"] is None


def test_an_empty_calibration_is_valid(tmp_path: Path) -> None:
    path = save_calibration(Calibration((640, 480)), tmp_path / "c.json")
    back = load_calibration(path, image_size=(640, 480))
    assert back.intrinsics is None and back.board is None and back.colours is None


@pytest.mark.parametrize("version", [0, 2, 99])
def test_unknown_version(tmp_path: Path, rng: np.random.Generator, version: int) -> None:
    data = _calibration(rng).to_dict() | {"version": version}
    with pytest.raises(UnknownVersionError, match=f"version {version} is not known"):
        load_calibration(_write(tmp_path, data))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"version": "1"}, "'version' must be an integer"),
        ({"image_size": [1640]}, "image_size"),
        ({"image_size": [1640.5, 1232]}, "image_size"),
        ({"image_size": [820, 616]}, "'intrinsics' are for 1640x1232"),
        ({"intrinsics": {"camera_matrix": [[1, 0], [0, 1]], "dist_coeffs": [],
                         "image_size": [1640, 1232]}}, "bad 'intrinsics'"),
        ({"board": {"game": "dition"}}, "board"),
        ({"colours": {"game": "dition", "pieces": {"black": {"bgr": [1, 2]}}}}, "colours"),
        ({"camera_controls": [1, 2]}, "camera_controls"),
        ({"extra": 1}, "unknown keys \\['extra'\\]"),
        ({"disc_thickness": 0}, "'disc_thickness' is the discs' thickness over their diameter"),
        ({"disc_thickness": "0.15"}, "'disc_thickness'"),
        ({"disc_thickness": 2.0}, "at most 0.5"),
    ],
)
def test_malformed_files_name_the_problem(tmp_path: Path, rng: np.random.Generator,
                                          change: dict, message: str) -> None:
    data = _calibration(rng).to_dict() | change
    with pytest.raises(MalformedCalibrationError, match=message):
        load_calibration(_write(tmp_path, data))


def test_missing_version_and_non_json(tmp_path: Path) -> None:
    with pytest.raises(MalformedCalibrationError, match="no 'version'"):
        load_calibration(_write(tmp_path, {"image_size": [1, 1]}))
    with pytest.raises(MalformedCalibrationError, match="JSON object"):
        load_calibration(_write(tmp_path, [1, 2, 3]))
    bad = tmp_path / "bad.json"
    bad.write_text("{version: 1", encoding="utf-8")
    with pytest.raises(MalformedCalibrationError, match="not valid JSON"):
        load_calibration(bad)


def test_board_made_with_intrinsics_needs_them(tmp_path: Path, rng: np.random.Generator) -> None:
    data = _calibration(rng).to_dict() | {"intrinsics": None}
    with pytest.raises(MalformedCalibrationError, match="calibrated with intrinsics"):
        load_calibration(_write(tmp_path, data))


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(CalibrationNotFoundError, match="does not exist") as info:
        load_calibration(tmp_path / "nope.json")
    assert isinstance(info.value, FileNotFoundError) and isinstance(info.value, CalibrationError)


def test_frames_of_the_wrong_size_are_refused(tmp_path: Path, rng: np.random.Generator) -> None:
    cal = _calibration(rng)
    check_frame(cal, np.zeros((1232, 1640, 3), np.uint8))
    with pytest.raises(ImageSizeMismatchError, match="frames are 1280x720 px .* 1640x1232"):
        check_frame(cal, np.zeros((720, 1280, 3), np.uint8))
    with pytest.raises(ImageSizeMismatchError):
        check_frame(cal, np.zeros((1640, 1232, 3), np.uint8))  # rotated
    path = save_calibration(cal, tmp_path / "c.json")
    with pytest.raises(ImageSizeMismatchError, match="820x616"):
        load_calibration(path, image_size=(820, 616))
    assert isinstance(ImageSizeMismatchError("x"), ValueError)


def test_intrinsics_of_another_size_cannot_be_combined(rng: np.random.Generator) -> None:
    cal = _calibration(rng)
    with pytest.raises(ImageSizeMismatchError, match="made for 1640x1232"):
        Calibration((820, 616), cal.intrinsics)


def test_saving_is_atomic(tmp_path: Path, rng: np.random.Generator) -> None:
    path = tmp_path / "c.json"
    save_calibration(_calibration(rng), path)
    save_calibration(Calibration((640, 480)), path)
    assert load_calibration(path).image_size == (640, 480)
    assert [p.name for p in tmp_path.iterdir()] == ["c.json"]
