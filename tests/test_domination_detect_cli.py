"""`referee detect --game domination` over several frames with the same `--corners` (issue 19):
the board is fitted, and the reader's geometry built, once for all of them; each frame is read."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from hardware.sim import RenderOptions, look_at_board, render_domination
from referee.cli import main

STACKS = {"c3": "G", "d4": "RG", "e5": "GGR", "f6": "R", "b4": "RRGG"}


@pytest.fixture(scope="module")
def frame_file(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[list[float]]]:
    rng = np.random.default_rng(19)
    cam = look_at_board("domination", tilt_deg=8, rotation_deg=4)
    r = render_domination(STACKS, cam, rng, options=RenderOptions.clean())
    path = tmp_path_factory.mktemp("detect_domination") / "frame.png"
    cv2.imwrite(str(path), r.image)
    return path, r.truth["corners_px"]


def _detect_counting(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, path: Path,
                     corners: list[list[float]], n_frames: int) -> tuple[list[dict], int, int]:
    """`referee detect --game domination --corners` on `n_frames` copies of the frame: (results,
    board fits, reader geometries built). The corners are a few hundredths of a pixel off the
    truth, unlike any other run's: no fit or geometry can come from an earlier one."""
    import vision.board
    import vision.domination

    off = np.random.default_rng().uniform(-0.05, 0.05, (4, 2))
    spec = ",".join(f"{v:.4f}" for xy in np.asarray(corners) + off for v in xy)
    fits, poses = [], []
    real_fit, real_pose = vision.board.find_board, vision.domination.camera_from_board
    monkeypatch.setattr(vision.board, "find_board", lambda *a, **k: fits.append(1) or real_fit(*a, **k))
    monkeypatch.setattr(vision.domination, "camera_from_board",
                        lambda *a, **k: poses.append(1) or real_pose(*a, **k))
    code = main(["detect", "--game", "domination", "--corners", spec] + [str(path)] * n_frames)
    results = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]
    assert code == 0 and len(results) == n_frames
    return results, len(fits), len(poses)


def test_detect_fits_given_corners_once_for_many_frames(capsys: pytest.CaptureFixture[str], frame_file,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    path, corners = frame_file
    results, fits, poses = _detect_counting(capsys, monkeypatch, path, corners, 3)
    assert fits == 1, "the board of the given corners is fitted once"
    # the first frame builds the reader's geometry (once per camera model it tries: without a
    # calibration, the camera from the board's grid refines its focal length); the others none
    _, _, poses_one = _detect_counting(capsys, monkeypatch, path, corners, 1)
    assert poses == poses_one >= 1
    truth = {c: (STACKS[c][-1] if c in STACKS else ".") for c in results[0]["tops"]}
    assert all(r["tops"] == truth for r in results)


def test_two_referees_measure_their_own_grid_camera(frame_file, monkeypatch: pytest.MonkeyPatch,
                                                    tmp_path: Path) -> None:
    """Without a calibration the kit's board is read with the camera measured on its own grid,
    once per board fit and per referee (`Game.read`'s cache): two referees in one process (two
    tables of a club) never read with a camera the other measured on its frame, nor evict it."""
    import vision.board_camera
    from referee.domination_match import DominationMatch
    from referee.log import MatchLog
    from referee.loop import Referee
    from vision.board import find_board

    path, corners = frame_file
    image = cv2.imread(str(path))
    board = find_board(image, corners_px=np.array(corners))
    log = MatchLog(tmp_path / "log.sqlite")
    referees = []
    for _ in range(2):
        match = DominationMatch(players=("G", "R"))
        referee = Referee(match, log, log.new_match(match.game, match.players))
        referee.board = board
        referees.append(referee)
    measured = []
    real = vision.board_camera.with_grid_camera
    monkeypatch.setattr(vision.board_camera, "with_grid_camera",
                        lambda *a, **k: measured.append(1) or real(*a, **k))
    readings = [r.read(image) for r in referees + referees]  # each twice, alternately
    log.close()
    assert len(measured) == 2, "one measurement per referee, then each reads with its own"
    truth = {c: (STACKS[c][-1] if c in STACKS else ".") for c in readings[0].tops}
    assert all(reading.tops == truth for reading in readings)


def test_detect_keeps_the_grid_cameras_focal_length_per_fit(capsys: pytest.CaptureFixture[str], frame_file,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a calibration the heights settle the grid camera's focal length (`height_scale`,
    read again after each step); the factor is kept per board fit, so the next frames of the fit
    start there: the same frame again is read once (one step, under 1 %), not once per step,
    and reads the same, every stack's height right."""
    import vision.domination

    path, corners = frame_file
    spec = ",".join(f"{v:.4f}" for xy in corners for v in xy)
    steps: list[int] = []
    real = vision.domination.height_scale
    monkeypatch.setattr(vision.domination, "height_scale", lambda *a, **k: steps.append(1) or real(*a, **k))
    runs = []
    for n_frames in (1, 3):
        steps.clear()
        assert main(["detect", "--game", "domination", "--corners", spec] + [str(path)] * n_frames) == 0
        runs.append((len(steps), [json.loads(line) for line in capsys.readouterr().out.splitlines() if line]))
    (steps_one, _), (steps_three, results) = runs
    assert steps_one >= 2, "the frame's first reading is off by more than 1 %: read again (else no test)"
    assert steps_three == steps_one + 2, "the later frames of the fit: one reading each"
    assert results[1:] == results[:1] * 2
    assert {c: h for c, h in results[0]["heights"].items() if h} == {c: len(s) for c, s in STACKS.items()}


def test_given_corners_on_a_chessboard_ask_for_the_mens_colours(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The corners of a chessboard are read as a chessboard's (not as the kit's cells): its men
    have no fixed colours, so `detect` names the missing colour model for that image (exit 1),
    while the kit's board at its corners is still read (the module's frame: every top right)."""
    from hardware.sim import random_camera
    from hardware.sim.men import random_chess_table

    rng = np.random.default_rng(36)
    board, men, colours = random_chess_table(rng)
    r = render_domination({"d4": next(iter(colours))}, random_camera(rng, "domination"), rng, colours=colours,
                          board=board, men=men)
    path = tmp_path / "chess.png"
    cv2.imwrite(str(path), r.image)
    spec = ",".join(f"{v:.2f}" for xy in r.truth["corners_px"] for v in xy)
    capsys.readouterr()
    assert main(["detect", "--game", "domination", "--corners", spec, str(path)]) == 1
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert "colour model" in out["error"] and "tops" not in out
