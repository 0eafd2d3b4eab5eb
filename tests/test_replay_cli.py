"""`referee replay` (contract): a recorded match in, one JSON event per line out.

The recordings are made by the simulated table playing a generated match: a folder of JPEG frames
for Dition, an MJPG video for Domination. The camera's calibration is handed over as the JSON file
`referee calibrate camera` writes. Every printed move is checked against the script.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import cv2
import pytest

from calibration.store import Calibration, save_calibration
from hardware.source import iter_frames
from referee.simsteps import Pace
from referee.simtable import scripted_match

PACE = Pace(still=4, hand=3, verdict=4, end=3)


def _record(table, write) -> None:
    with table:
        for frame in iter_frames(table):
            write(frame)


def _calibration(table, path: Path) -> Path:
    intr = table.intrinsics
    return save_calibration(Calibration(image_size=tuple(intr.image_size), intrinsics=intr), path)


def _replay(*args: str) -> list[dict]:
    out = subprocess.run([sys.executable, "-m", "referee", "replay", *args], capture_output=True,
                         text=True, timeout=600, check=False)
    assert out.returncode == 0, out.stderr[-3000:]
    return [json.loads(line) for line in out.stdout.splitlines()]


@pytest.mark.slow
def test_replay_a_folder_of_dition_frames(tmp_path: Path) -> None:
    table, turns = scripted_match("dition", 21, pace=PACE, size=(1024, 768), min_moves=8,
                                  max_moves=24)
    frames = tmp_path / "frames"
    frames.mkdir()
    _record(table, lambda f: cv2.imwrite(str(frames / f"frame{f.index}.jpg"), f.image,
                                         [cv2.IMWRITE_JPEG_QUALITY, 92]))
    cal = _calibration(table, tmp_path / "calibration.json")
    events = _replay(str(frames), "--game", "dition", "--calibration", str(cal))
    moves = [e for e in events if e["type"] == "move"]
    assert len(moves) == len(turns), [e.get("text") for e in events]
    for ev, turn in zip(moves, turns):
        assert set(ev) >= {"type", "colour", "x", "y", "outcome", "removed"}
        assert ev["colour"] == turn.colour and ev["outcome"] == turn.verdict.outcome.value
        assert math.hypot(ev["x"] - turn.x, ev["y"] - turn.y) < 0.1
        want = sorted((turn.before.discs[i].x, turn.before.discs[i].y) for i in turn.verdict.removed)
        got = sorted(tuple(p) for p in ev["removed"])
        assert len(got) == len(want)
        assert all(math.hypot(g[0] - w[0], g[1] - w[1]) < 0.1 for g, w in zip(got, want))
    end = events[-1]
    assert end["type"] == "end" and end["reason"] == "suicide"
    assert end["winner"] == ("white" if turns[-1].colour == "black" else "black")


@pytest.mark.slow
def test_replay_a_domination_video(tmp_path: Path) -> None:
    table, turns = scripted_match("domination", 8, pace=PACE, size=(1024, 768), moves=12)
    video = tmp_path / "match.avi"
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter_fourcc(*"MJPG"), 5.0, (1024, 768))
    assert writer.isOpened()
    _record(table, lambda f: writer.write(f.image))
    writer.release()
    events = _replay(str(video), "--game", "domination", "--players", "G,R")
    moves = [e for e in events if e["type"] == "move"]
    assert [m["move"] for m in moves] == [t.move.to_json() for t in turns]
    assert [m["removed"] for m in moves] == [t.result.removed for t in turns]
    assert [m["colour"] for m in moves] == [t.before.to_move for t in turns]
    assert events[-1]["type"] == "end"


def test_replay_reports_a_source_it_cannot_open(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "referee", "replay", str(tmp_path / "nothing"),
                          "--game", "dition"], capture_output=True, text=True, timeout=60,
                         check=False)
    assert out.returncode == 1
    event = json.loads(out.stdout.splitlines()[0])
    assert event["type"] == "error" and "nothing" in event["error"]


def test_replay_refuses_a_disc_thickness_that_is_no_disc_s(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "referee", "replay", str(tmp_path), "--game", "dition",
                          "--disc-thickness", "0.9"], capture_output=True, text=True, timeout=60, check=False)
    assert out.returncode == 2 and out.stdout == ""
    assert "--disc-thickness is the discs' thickness over their diameter" in out.stderr and "0.9" in out.stderr
