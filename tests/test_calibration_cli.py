"""`referee calibrate camera | board | colours` end to end on simulated pictures saved as files."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from calibration.store import load_calibration
from calibration.target import CharucoSpec, target_texture
from hardware.sim import RenderOptions, SimDisc, look_at_board, render_dition
from hardware.sim.camera import camera_for_target
from hardware.sim.render import render_planar_target
from referee.cli import main

SIZE = (1640, 1232)
LENS = np.array([-0.1, 0.05, 0.001, -0.001, 0.0])


@pytest.fixture(scope="module")
def pictures(tmp_path_factory) -> dict:
    folder = tmp_path_factory.mktemp("pictures")
    rng = np.random.default_rng(77)
    spec = CharucoSpec()
    q = 10.0
    size = (spec.size_mm[0] + 2 * q, spec.size_mm[1] + 2 * q)
    texture = target_texture(spec, 4.0, q)
    views, cam = [], None
    for i in range(7):
        cam = camera_for_target(rng, size, SIZE, distortion=LENS, fill=(0.6, 0.95))
        image = render_planar_target(texture, size, cam, rng,
                                     options=RenderOptions.random(rng, supersample=2), table=False)
        path = folder / f"target-{i}.png"
        cv2.imwrite(str(path), image)
        views.append(str(path))
    board_cam = look_at_board("dition", image_size=SIZE, focal_px=float(cam.camera_matrix[0, 0]),
                              tilt_deg=15, tilt_azimuth_deg=100, distortion=LENS)
    discs = [SimDisc(6, 6, "black"), SimDisc(8, 6, "white"), SimDisc(12, 14, "black"),
             SimDisc(14, 14, "white")]
    frame = render_dition(discs, board_cam, rng, options=RenderOptions(supersample=2))
    board_path = folder / "board.png"
    cv2.imwrite(str(board_path), frame.image)
    small = folder / "small.png"
    cv2.imwrite(str(small), cv2.resize(frame.image, (820, 616)))
    return {"views": views, "truth_k": cam.camera_matrix, "board": str(board_path),
            "board_cam": board_cam, "small": str(small), "corners": frame.truth["corners_px"]}


def _run(capsys, *argv: str) -> tuple[int, dict | None, str]:
    code = main(["calibrate", *argv])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out.strip() else None), err


def test_camera_then_board_then_colours(tmp_path: Path, capsys, pictures) -> None:
    out = tmp_path / "cal.json"
    code, report, err = _run(capsys, "camera", *pictures["views"], "--out", str(out))
    assert code == 0, err
    truth = pictures["truth_k"]
    assert report["fx"] == pytest.approx(truth[0, 0], rel=0.01)
    assert abs(report["cx"] - truth[0, 2]) < 0.01 * SIZE[0]
    assert report["views_used"] == 7 and report["rms_px"] < 0.5
    cal = load_calibration(out)
    assert cal.intrinsics is not None and cal.board is None and cal.image_size == SIZE

    code, report, err = _run(capsys, "board", pictures["board"], "--game", "dition",
                             "--out", str(out))
    assert code == 0, err
    assert report["with_intrinsics"] and report["tilt_deg"] == pytest.approx(15.0, abs=0.3)
    centre = np.array(report["camera_centre_board"])
    assert np.linalg.norm(centre - pictures["board_cam"].centre_world) < 0.1
    cal = load_calibration(out)
    assert cal.board is not None and cal.board.rvec is not None and cal.intrinsics is not None

    code, report, err = _run(capsys, "colours", pictures["board"], "--game", "dition",
                             "--piece", "black:6,6", "--piece", "white:8,6",
                             "--piece", "black:12,14", "--piece", "white:14,14",
                             "--out", str(out))
    assert code == 0, err
    assert set(report["pieces"]) == {"black", "white"}
    cal = load_calibration(out)
    assert cal.colours is not None and cal.board is not None and cal.intrinsics is not None


def test_manual_corners_and_refusals(tmp_path: Path, capsys, pictures) -> None:
    out = tmp_path / "cal.json"
    corners = ",".join(f"{v:.2f}" for p in pictures["corners"] for v in p)
    code, report, err = _run(capsys, "board", pictures["board"], "--game", "dition",
                             "--corners", corners, "--out", str(out))
    assert code == 0, err
    assert report["method"] == "corners" and not report["with_intrinsics"]
    # a picture of another size than the calibration's
    code, report, err = _run(capsys, "board", pictures["small"], "--game", "dition",
                             "--calibration", str(out), "--out", str(out))
    assert code == 2 and report is None and "820x616" in err and "1640x1232" in err
    code, _, err = _run(capsys, "camera", *pictures["views"][:4], "--out", str(out))
    assert code == 2 and "need at least 6" in err
    code, _, err = _run(capsys, "board", str(tmp_path / "missing.png"), "--game", "dition")
    assert code == 2 and "does not exist" in err
    code, _, err = _run(capsys, "board", pictures["board"], "--game", "dition",
                        "--corners", "1,2,3", "--out", str(out))
    assert code == 2 and "8 numbers" in err
    code, _, err = _run(capsys, "colours", pictures["board"], "--game", "dition",
                        "--piece", "black:6,6", "--piece", "white:12,14", "--out", str(out))
    assert code == 2 and "too close" in err  # two black discs


def test_a_broken_calibration_file_is_refused(tmp_path: Path, capsys, pictures) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"version": 7, "image_size": [1640, 1232]}))
    code, _, err = _run(capsys, "board", pictures["board"], "--game", "dition",
                        "--calibration", str(bad), "--out", str(tmp_path / "new.json"))
    assert code == 2 and "version 7 is not known" in err
