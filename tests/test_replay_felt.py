"""Issue 21: a recorded match on a board nobody printed, refereed move for move by `referee replay`
without `--corners`: green felt with light lines and no markers, a hand that hovers over the
board and leaves without placing anything, a lamp switched on mid-match, a knock on the camera
stand. The frames are recorded to a folder (JPEG) and the real command reads them; its event
stream is checked against the script the table played (which the referee never sees).
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from calibration.store import Calibration, save_calibration
from hardware import sim
from hardware.sim.variety import Variety
from hardware.source import iter_frames
from referee.simsteps import Pace, bumped
from referee.simtable import scripted_match

PACE = Pace(still=4, hand=4, verdict=4, end=3)
FELT = Variety(board="green_felt")
#: the turns before which the hand hovers, the lamp goes on and the camera is knocked
HOVER_AT, LAMP_AT, BUMP_AT = 2, 4, 6


#: the quarter turns of the board [0, 20]^2
SYMMETRIES = (lambda x, y: (x, y), lambda x, y: (20 - y, x), lambda x, y: (20 - x, 20 - y),
              lambda x, y: (y, 20 - x))


def _sim_discs(position: Any) -> tuple[sim.SimDisc, ...]:
    return tuple(sim.SimDisc(float(d.x), float(d.y), d.colour.value) for d in position.discs)


def felt_events(steps: list[Any], turns: list[Any], camera: Any, rng: np.random.Generator) -> list[Any]:
    """The generated script with, before turns HOVER_AT, LAMP_AT and BUMP_AT: a hand hovering
    over the board's middle (nothing changes), the lamp switched on, the camera knocked."""
    out: list[Any] = []
    seen: set[int] = set()
    for step in steps:
        n = (step.label or {}).get("turn", -1) if isinstance(step.label, dict) else -1
        if n in (HOVER_AT, LAMP_AT, BUMP_AT) and n not in seen:
            seen.add(n)
            board = _sim_discs(turns[n].before)
            label = {"turn": n - 1, "event": True}
            if n == HOVER_AT:
                out.append(sim.HandPlace(board, board, (10.0, 11.0), 10, label=label))
            elif n == LAMP_AT:
                out.append(sim.Relight(variety=Variety(board=FELT.board, light="lamp"), label=label))
            else:
                out.append(sim.Bump(bumped(camera, rng), label=label))
            out.append(sim.Still(board, PACE.still, label=label))
        out.append(step)
    assert seen == {HOVER_AT, LAMP_AT, BUMP_AT}, "the match is too short for the events"
    return out


def _record(tmp_path: Path) -> tuple[Path, Path, list[Any]]:
    table, turns = scripted_match("dition", 7, pace=PACE, size=(1024, 768), min_moves=10, max_moves=24,
                                  variety=FELT, events=felt_events)
    frames = tmp_path / "frames"
    frames.mkdir()
    with table:
        for frame in iter_frames(table):
            cv2.imwrite(str(frames / f"frame{frame.index:05d}.jpg"), frame.image, [cv2.IMWRITE_JPEG_QUALITY, 90])
    intr = table.intrinsics
    cal = save_calibration(Calibration(image_size=tuple(intr.image_size), intrinsics=intr),
                           tmp_path / "calibration.json")
    return frames, cal, turns


@pytest.mark.slow
def test_a_felt_match_with_a_hovering_hand_a_lamp_and_a_knock_is_refereed_move_for_move(tmp_path: Path) -> None:
    frames, cal, turns = _record(tmp_path)
    out = subprocess.run([sys.executable, "-m", "referee", "replay", str(frames), "--game", "dition",
                          "--calibration", str(cal)], capture_output=True, text=True, timeout=900, check=False)
    assert out.returncode == 0, out.stderr[-3000:]
    events = [json.loads(line) for line in out.stdout.splitlines()]
    moves = [e for e in events if e["type"] == "move"]
    assert len(moves) == len(turns), [e.get("text") or e for e in events]
    outcomes = [t.verdict.outcome.value for t in turns]
    # the script has what a match is judged on: captures, a sacrifice, a final suicide
    assert {"capture", "sacrifice", "suicide"} <= set(outcomes)
    # with no markers the board looks the same turned by a quarter: corner 0 is the one on the
    # picture's top-left, so the script's coordinates are the referee's turned by one of the 4
    # quarter turns, the same one for the whole match (the knock included)
    turn_of = min(SYMMETRIES, key=lambda sym: sum(math.dist(sym(ev["x"], ev["y"]), (t.x, t.y))
                                                    for ev, t in zip(moves, turns)))
    for ev, turn in zip(moves, turns):
        assert ev["colour"] == turn.colour and ev["outcome"] == turn.verdict.outcome.value, ev
        assert math.dist(turn_of(ev["x"], ev["y"]), (turn.x, turn.y)) < 0.1, ev
        want = sorted((turn.before.discs[i].x, turn.before.discs[i].y) for i in turn.verdict.removed)
        got = sorted(turn_of(*p) for p in ev["removed"])
        assert len(got) == len(want), ev
        assert all(math.dist(g, w) < 0.1 for g, w in zip(got, want)), ev
    end = [e for e in events if e["type"] == "end"]
    assert len(end) == 1 and end[0]["reason"] == "suicide"
    assert end[0]["winner"] == ("white" if turns[-1].colour == "black" else "black")
    # the board was found by itself from its light lines, and found again after the knock
    boards = [e for e in events if e["type"] == "board"]
    assert boards and boards[0]["code"] == "found"
    assert any(e["code"] == "moved" for e in boards), boards
    # the hovering hand and the lamp made no move and no warning
    assert not [e for e in events if e["type"] in ("warning", "error")], [e for e in events if e["type"] in
                                                                        ("warning", "error")]
