"""`referee render`: frames as JPEG and ground truth as JSON."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from hardware.sim import SimCamera
from referee.cli import main


def test_render_one_dition_frame(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "d"
    assert (
        main(
            [
                "render",
                "--game",
                "dition",
                "--seed",
                "5",
                "--out",
                str(out),
                "--discs",
                "12",
                "--size",
                "480x360",
            ]
        )
        == 0
    )
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert len(lines) == 1 and Path(lines[0]["image"]).exists()
    img = cv2.imread(str(out / "000000.jpg"))
    truth = json.loads((out / "000000.json").read_text())
    assert img.shape == (360, 480, 3)
    assert (
        truth["game"] == "dition"
        and len(truth["discs"]) == 12
        and truth["image_size"] == [480, 360]
    )
    cam = SimCamera.from_dict(truth["camera"])
    corners = cam.project(np.array([[0, 0, 0], [20, 0, 0], [20, 20, 0], [0, 20, 0]], float))
    assert np.allclose(truth["corners_px"], corners)
    # the same seed gives the same picture
    out2 = tmp_path / "d2"
    main(
        [
            "render",
            "--game",
            "dition",
            "--seed",
            "5",
            "--out",
            str(out2),
            "--discs",
            "12",
            "--size",
            "480x360",
        ]
    )
    assert (out / "000000.json").read_text() == (out2 / "000000.json").read_text()
    assert (out / "000000.jpg").read_bytes() == (out2 / "000000.jpg").read_bytes()


def test_render_a_domination_sequence(tmp_path: Path) -> None:
    out = tmp_path / "m"
    assert (
        main(
            [
                "render",
                "--game",
                "domination",
                "--seed",
                "1",
                "--out",
                str(out),
                "--frames",
                "--discs",
                "6",
                "--size",
                "320x240",
                "--clean",
            ]
        )
        == 0
    )
    rows = [json.loads(x) for x in (out / "index.jsonl").read_text().splitlines()]
    dropped = [r for r in rows if r.get("dropped")]
    frames = [r for r in rows if not r.get("dropped")]
    assert len(dropped) == 1 and len(frames) >= 30
    truths = [json.loads(Path(r["truth"]).read_text()) for r in frames]
    labels = [t["frame"]["label"] for t in truths]
    assert (
        labels[0] == "start" and labels[-1] == "bumped" and "place" in labels and "remove" in labels
    )
    counts = [len(t["stacks"]) for t in truths]
    assert counts[0] == 6 and max(counts) == 7 and counts[-1] == 5
    assert any(t["hand"] for t in truths) and not truths[0]["hand"]
    assert truths[0]["corners_px"] != truths[-1]["corners_px"]  # the bump


def test_render_rejects_bad_arguments(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["render", "--game", "dition", "--out", str(tmp_path), "--size", "big"])
    assert exc.value.code == 2
    with pytest.raises(SystemExit):
        main(["render", "--game", "go", "--out", str(tmp_path)])
    assert main(["render", "--game", "dition", "--out", str(tmp_path), "--discs", "-1"]) == 2
    assert (
        main(
            [
                "render",
                "--game",
                "domination",
                "--out",
                str(tmp_path),
                "--discs",
                "60",
                "--size",
                "320x240",
            ]
        )
        == 2
    )


@pytest.mark.parametrize("game", ["dition", "domination"])
def test_render_frames_from_an_empty_board(tmp_path: Path, capsys, game: str) -> None:
    """Issue 17: `--frames --discs 0` failed on "HandRemove needs at least one target"."""
    out = tmp_path / game
    assert main(["render", "--game", game, "--seed", "3", "--out", str(out), "--frames",
                 "--discs", "0", "--size", "240x180"]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    truths = [json.loads(Path(x["truth"]).read_text()) for x in lines if "truth" in x]
    pieces = "discs" if game == "dition" else "stacks"
    counts = [len(t[pieces]) for t in truths]
    assert counts[0] == 0 and max(counts) == 1 and counts[-1] == 0  # placed, then taken away
