"""`referee detect`: the command-line contract, on image files rendered by the simulated table."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest
from scipy.spatial import cKDTree

from hardware.sim import RenderOptions, SimDisc, look_at_board, render_dition
from referee.cli import main

DISCS = [SimDisc(2.0, 3.0, "black"), SimDisc(3.0, 3.0, "white"), SimDisc(10.5, 9.5, "white"),
         SimDisc(17.2, 16.0, "black"), SimDisc(0.6, 19.4, "white"), SimDisc(12.0, 17.0, "black")]


@pytest.fixture(scope="module")
def frame_file(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[list[float]]]:
    rng = np.random.default_rng(5)
    cam = look_at_board("dition", tilt_deg=6, rotation_deg=3)  # no lens distortion
    r = render_dition(DISCS, cam, rng, options=RenderOptions.random(rng))
    path = tmp_path_factory.mktemp("detect") / "frame.png"
    cv2.imwrite(str(path), r.image)
    return path, r.truth["corners_px"]


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[dict]]:
    code = main(["detect", *argv])
    out = capsys.readouterr().out
    return code, [json.loads(line) for line in out.splitlines() if line.strip()]


def _check_discs(result: dict) -> None:
    found = result["discs"]
    assert len(found) == len(DISCS)
    truth = np.array([[d.x, d.y] for d in DISCS])
    dist, idx = cKDTree(truth).query([[d["x"], d["y"]] for d in found])
    assert dist.max() < 0.05
    assert sorted(idx) == list(range(len(DISCS)))
    assert [found[i]["colour"] for i in np.argsort(idx)] == [d.colour for d in DISCS]
    assert all(0 <= d["confidence"] <= 1 for d in found)


def test_detect_with_corners(capsys: pytest.CaptureFixture[str], frame_file) -> None:
    path, corners = frame_file
    spec = ",".join(f"{v:.3f}" for xy in corners for v in xy)
    code, results = _run(capsys, "--corners", spec, str(path))
    assert code == 0 and len(results) == 1
    res = results[0]
    assert res["image"] == str(path)
    assert np.allclose(res["board"]["corners_px"], corners, atol=0.01)
    _check_discs(res)


def test_detect_finds_the_board_itself(capsys: pytest.CaptureFixture[str], frame_file) -> None:
    path, corners = frame_file
    code, results = _run(capsys, "--game", "dition", str(path))
    assert code == 0
    # the markers are in the picture, so corner 0 is board corner 0
    assert np.allclose(results[0]["board"]["corners_px"], corners, atol=1.0)
    _check_discs(results[0])


def test_unreadable_and_boardless_images_give_errors_and_the_rest_is_processed(
    capsys: pytest.CaptureFixture[str], frame_file, tmp_path: Path
) -> None:
    path, _ = frame_file
    junk = tmp_path / "junk.png"
    junk.write_bytes(b"not an image at all")
    blank = tmp_path / "blank.png"
    cv2.imwrite(str(blank), np.full((300, 400, 3), 90, np.uint8))
    missing = tmp_path / "missing.jpg"
    code, results = _run(capsys, str(junk), str(path), str(missing), str(blank))
    assert code == 1
    assert [r["image"] for r in results] == [str(junk), str(path), str(missing), str(blank)]
    assert results[0]["error"].startswith("cannot read image") and "junk.png" in results[0]["error"]
    assert "discs" in results[1]
    assert "no such file" in results[2]["error"]
    assert "board" in results[3]["error"]


def test_bad_corners_option_is_a_usage_error(capsys: pytest.CaptureFixture[str], frame_file) -> None:
    path, _ = frame_file
    assert main(["detect", "--corners", "1,2,3", str(path)]) == 2
    assert "8 numbers" in capsys.readouterr().err
    # four points in the wrong order (a bow tie) are an error for that image
    code, results = _run(capsys, "--corners", "0,0,100,100,100,0,0,100", str(path))
    assert code == 1 and "convex quadrilateral" in results[0]["error"]


def test_missing_calibration_file_is_a_clear_error(capsys: pytest.CaptureFixture[str], frame_file, tmp_path: Path) -> None:
    path, _ = frame_file
    assert main(["detect", "--calibration", str(tmp_path / "nope.json"), str(path)]) == 2
    assert "nope.json" in capsys.readouterr().err


def test_detect_domination_prints_all_52_cells(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from hardware.sim import render_domination

    rng = np.random.default_rng(9)
    cam = look_at_board("domination", tilt_deg=5)
    stacks = {"d4": "GR", "e5": "B", "c3": "YYG"}
    r = render_domination(stacks, cam, rng, options=RenderOptions.random(rng))
    path = tmp_path / "dom.png"
    cv2.imwrite(str(path), r.image)
    code, results = _run(capsys, "--game", "domination", str(path))
    assert code == 0, results
    res = results[0]
    assert len(res["tops"]) == 52
    assert res["tops"]["d4"] == "R" and res["tops"]["e5"] == "B" and res["tops"]["c3"] == "G"
    assert res["tops"]["a3"] == "."


def test_detect_warns_when_the_corners_show_no_board(capsys: pytest.CaptureFixture[str], frame_file,
                                                      tmp_path: Path) -> None:
    """Corners given on a picture with no board there (a bare table) give a warning with a
    score; on the board's own frame there is none."""
    path, corners = frame_file
    spec = ",".join(f"{v:.3f}" for xy in corners for v in xy)
    blank = tmp_path / "table.png"
    img = cv2.imread(str(path))
    cv2.imwrite(str(blank), np.full_like(img, (52, 86, 128)))
    code, results = _run(capsys, "--corners", spec, str(path), str(blank))
    assert code == 0
    board, table = results
    assert "warning" not in board
    assert "no Dition board seen at the given corners" in table["warning"]
    assert table["board"]["score"] < 0.35


@pytest.mark.parametrize("as_folder", [False, True], ids=["image files", "one folder source"])
def test_detect_fits_given_corners_once_for_many_frames(capsys: pytest.CaptureFixture[str], frame_file,
                                                        monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                        as_folder: bool) -> None:
    import shutil

    import vision.board
    import vision.dition

    path, corners = frame_file
    spec = ",".join(f"{v:.3f}" for xy in corners for v in xy)
    if as_folder:  # three frames of one source
        for i in range(3):
            shutil.copy(path, tmp_path / f"frame{i}.png")
        images = [str(tmp_path)]
    else:
        images = [str(path)] * 3
    calls = []
    real = vision.board.find_board
    # (a fit without intrinsics calls itself once more, without the lens estimate)
    monkeypatch.setattr(vision.board, "find_board",
                        lambda *a, **k: calls.append(k.get("estimate_lens", True)) or real(*a, **k))
    # (and the disc reader's tables of that board are built once too, not once per frame)
    tables = []
    real_tables = vision.dition.DiscTables.__init__
    monkeypatch.setattr(vision.dition.DiscTables, "__init__",
                        lambda self, *a, **k: tables.append(a[0]) or real_tables(self, *a, **k))
    code, results = _run(capsys, "--corners", spec, *images)
    assert code == 0 and len(results) == 3
    assert calls.count(True) == 1
    assert len(tables) == 1
    assert results[0]["discs"] == results[2]["discs"]


def test_the_referee_reads_the_frames_of_one_board_with_one_set_of_tables(frame_file,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The referee loop's reading (DitionGame.read) builds the disc reader's tables of a board
    once, in the cache its caller keeps, and reads its next frames with them as the first; a
    board found again (moved) gets its own."""
    import vision.dition
    from referee.games import registry
    from vision.board import find_board

    path, corners = frame_file
    image = cv2.imread(str(path))
    spec = registry.get_game("dition")
    board = find_board(image, corners_px=np.array(corners))
    built = []
    real = vision.dition.DiscTables.__init__
    monkeypatch.setattr(vision.dition.DiscTables, "__init__",
                        lambda self, *a, **k: built.append(a[0]) or real(self, *a, **k))
    cache: dict = {}
    first = spec.read(image, board, cache=cache)
    again = spec.read(image, board, cache=cache)
    assert len(built) == 1
    assert len(first.discs) == len(DISCS)
    assert [(d.x, d.y, d.colour) for d in again.discs] == [(d.x, d.y, d.colour) for d in first.discs]
    moved = find_board(image, corners_px=np.array(corners) + 1.0)
    spec.read(image, moved, cache=cache)
    assert len(built) == 2 and built[1] is moved


def test_two_referees_keep_their_own_disc_tables(frame_file, monkeypatch: pytest.MonkeyPatch,
                                                 tmp_path: Path) -> None:
    """Two referees (two tables of a club, one process) reading frames of the same board each
    build the reader's tables once and keep them: the game's one description (the registry's)
    holds none, so neither reads with tables another referee built, nor evicts the other's."""
    import vision.dition
    from referee.dition_match import DitionMatch
    from referee.log import MatchLog
    from referee.loop import Referee
    from vision.board import find_board

    path, corners = frame_file
    image = cv2.imread(str(path))
    board = find_board(image, corners_px=np.array(corners))
    log = MatchLog(tmp_path / "log.sqlite")
    referees = []
    for _ in range(2):
        match = DitionMatch()
        referee = Referee(match, log, log.new_match(match.game, match.players))
        referee.board = board
        referees.append(referee)
    built = []
    real = vision.dition.DiscTables.__init__
    monkeypatch.setattr(vision.dition.DiscTables, "__init__",
                        lambda self, *a, **k: built.append(a[0]) or real(self, *a, **k))
    readings = [r.read(image) for r in referees + referees]  # each twice, alternately
    log.close()
    assert len(built) == 2, "one build per referee, then each reads with its own"
    assert len({id(r.reading_cache["disc_tables"]) for r in referees}) == 2
    seen = [[(d.x, d.y, d.colour) for d in reading.discs] for reading in readings]
    assert len(readings[0].discs) == len(DISCS) and all(s == seen[0] for s in seen)


# ---- the discs' thickness, stated (issue 21: Othello discs are 0.15 of their diameter thick) --

THICK = [SimDisc(x, y, c) for x, y, c in ((2.0, 2.0, "black"), (18.0, 2.5, "white"), (10.0, 10.0, "black"),
                                           (2.5, 17.5, "white"), (17.5, 17.5, "black"), (6.0, 13.0, "white"))]


@pytest.fixture(scope="module")
def thick_frame(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, tuple[int, int]]:
    from hardware.sim.variety import OTHELLO_THICKNESS, Variety, render_varied

    assert OTHELLO_THICKNESS == 0.15
    cam = look_at_board("dition", tilt_deg=14, rotation_deg=5)  # the tops seen well off the board
    r = render_varied(THICK, cam, np.random.default_rng(3), Variety(disc="othello"), RenderOptions.clean())
    path = tmp_path_factory.mktemp("thick") / "othello.png"
    cv2.imwrite(str(path), r.image)
    spec = ",".join(f"{v:.3f}" for xy in r.truth["corners_px"] for v in xy)
    return path, spec, (r.image.shape[1], r.image.shape[0])


def _median_error(result: dict) -> float:
    found = np.array([[d["x"], d["y"]] for d in result["discs"]])
    assert len(found) == len(THICK)
    dist, _ = cKDTree([[d.x, d.y] for d in THICK]).query(found)
    return float(np.median(dist))


def test_disc_thickness_stated_on_the_command_line_or_with_the_calibration(
        capsys: pytest.CaptureFixture[str], thick_frame, tmp_path: Path) -> None:
    from calibration.store import Calibration, save_calibration

    path, spec, size = thick_frame
    # read as the kit's 0.08 the tops, 0.07 higher, are seen up to ~0.07 x (distance from the
    # camera's foot point ~10) / (height ~25) off
    code, (default,) = _run(capsys, "--corners", spec, str(path))
    assert code == 0 and _median_error(default) > 0.012
    code, (stated,) = _run(capsys, "--corners", spec, "--disc-thickness", "0.15", str(path))
    assert code == 0 and _median_error(stated) < 0.006
    cal = tmp_path / "cal.json"
    save_calibration(Calibration(image_size=size, disc_thickness=0.15), cal)
    code, (stored,) = _run(capsys, "--corners", spec, "--calibration", str(cal), str(path))
    assert code == 0 and stored["discs"] == stated["discs"]
    # the command line wins over the calibration
    code, (again,) = _run(capsys, "--corners", spec, "--calibration", str(cal), "--disc-thickness", "0.08",
                          str(path))
    assert again["discs"] == default["discs"]


@pytest.mark.parametrize("value", ["0", "-0.1", "0.9", "nan"])
def test_a_disc_thickness_that_is_no_disc_s_is_refused(capsys: pytest.CaptureFixture[str], thick_frame,
                                                       value: str) -> None:
    path, spec, _ = thick_frame
    with pytest.raises(SystemExit) as exc:
        main(["detect", "--corners", spec, "--disc-thickness", value, str(path)])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "--disc-thickness" in err and "thickness over their diameter" in err and value in err


def test_detect_warns_where_the_board_is_over_exposed(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A lamp's hot spot that clips the paper at the sensor's white in all three channels (white
    discs there show no face against it) gives a warning that says where, in board units; the
    same table without the hot spot gives none."""
    from vision.geometry import apply_homography, fit_from_corners

    cam = look_at_board("dition", tilt_deg=6, rotation_deg=3)
    paths, corners = [], None
    for strength in (0.6, 0.0):  # the paper (~236) clipped within ~1.8 sigmas of the centre
        opts = RenderOptions.clean(hot_spot_strength=strength, hot_spot_radius=0.1, hot_spot_xy=(0.5, 0.5))
        r = render_dition(DISCS, cam, np.random.default_rng(1), options=opts)
        paths.append(tmp_path / f"hot{strength}.png")
        cv2.imwrite(str(paths[-1]), r.image)
        corners = r.truth["corners_px"]
    spec = ",".join(f"{v:.3f}" for xy in corners for v in xy)
    code, (hot, plain) = _run(capsys, "--corners", spec, *map(str, paths))
    assert code == 0
    assert "warning" not in plain and "overexposed" not in plain
    assert "over-exposed" in hot["warning"]
    # where: around the board point under the hot spot's centre, not over the whole board
    w, h = r.image.shape[1], r.image.shape[0]
    fit = fit_from_corners(np.array(corners), "dition")
    centre = apply_homography(np.linalg.inv(fit.H_board_to_image), np.array([[0.5 * w, 0.5 * h]]))[0]
    x0, y0, x1, y1 = hot["overexposed"]["box_board"]
    assert x0 < centre[0] < x1 and y0 < centre[1] < y1
    assert 0.02 < hot["overexposed"]["share"] < 0.6
