"""`referee judge` for Dition: the JSON Lines contract, through the real command line."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from referee.commands.judge import judge_stream
from referee.errors import JudgeInputError
from referee.judging import GAMES, judge_line
from referee.judging.dition import judge
from rules import dition as rd

ROOT = Path(__file__).resolve().parent.parent


def request(diagram: str, to_move: str = "black", mark: str = "*", **extra) -> dict:
    position, marks = rd.parse_diagram(diagram, origin=(8.0, 8.0))
    x, y = marks[mark]
    return {
        "game": "dition",
        "discs": [{"x": d.x, "y": d.y, "colour": d.colour.value} for d in position.discs],
        "to_move": to_move,
        "place": {"x": x, "y": y},
        **extra,
    }


SUICIDE = request(". w .\nw * w\n. w .")
CAPTURE = request(". b .\nb w b\n. * .")
SACRIFICE = request(". w . b .\nw * w b .\n. w . b .")
PLACED = request("w . w\n. * .")
OVERLAP = {**PLACED, "place": {"x": 8.5, "y": 8.0}}
OUTSIDE = {**PLACED, "place": {"x": 19.75, "y": 3.0}}


def run_cli(lines: list[str]) -> list[dict]:
    done = subprocess.run(
        [sys.executable, "-m", "referee", "judge"],
        input="".join(line + "\n" for line in lines),
        capture_output=True,
        check=False,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_cli_judges_every_outcome_in_order_and_survives_bad_lines() -> None:
    lines = [json.dumps(r) for r in (SUICIDE, CAPTURE, SACRIFICE, PLACED, OVERLAP, OUTSIDE)]
    lines[3:3] = ["{not json", "", '{"game": "dition", "discs": []}', '["dition"]']
    answers = run_cli(lines)
    assert len(answers) == len(lines)
    suicide, capture, sacrifice, bad_json, empty, missing, array, placed, overlap, outside = answers
    assert suicide["legal"] is True and suicide["outcome"] == "suicide"
    assert suicide["removed"] == [] and suicide["placed_removed"] is True
    assert suicide["winner"] == "white"
    assert capture["outcome"] == "capture" and capture["removed"] == [2]
    assert capture["placed_removed"] is False and capture["winner"] is None
    assert sacrifice["outcome"] == "sacrifice" and sacrifice["placed_removed"] is True
    assert [SACRIFICE["discs"][i] for i in sacrifice["removed"]] == [
        {"x": 10.0, "y": 9.0, "colour": "white"}
    ]
    assert placed["outcome"] == "placed" and placed["removed"] == []
    assert overlap == {**overlap, "legal": False, "reason": "overlap", "conflicts": [0]}
    assert outside["legal"] is False and outside["reason"] == "outside"
    assert "JSON" in bad_json["error"] and bad_json["line"] == 4
    assert "empty" in empty["error"]
    assert missing["error"] == "missing field 'to_move'" and missing["line"] == 6
    assert "object" in array["error"]


def test_cli_answers_each_line_as_soon_as_it_arrives() -> None:
    """A caller can drive the judge line by line through a pipe (flush per line)."""
    with subprocess.Popen(
        [sys.executable, "-m", "referee", "judge"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    ) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        for req, outcome in ((CAPTURE, "capture"), (SUICIDE, "suicide")):
            proc.stdin.write(json.dumps(req) + "\n")
            proc.stdin.flush()
            assert json.loads(proc.stdout.readline())["outcome"] == outcome
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0


def test_a_game_module_that_is_missing_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(GAMES, "domination", "referee.judging.no_such_game_module")
    assert judge_line('{"game": "domination", "stacks": {}}') == {
        "error": "game 'domination' is not available"
    }
    assert "unknown game 'go'" in judge_line('{"game": "go"}')["error"]
    assert "missing field 'game'" in judge_line("{}")["error"]


def test_stream_numbers_the_lines_of_errors() -> None:
    sink = io.StringIO()
    count = judge_stream(io.StringIO(json.dumps(PLACED) + "\n\nnope\n"), sink)
    answers = [json.loads(line) for line in sink.getvalue().splitlines()]
    assert count == 3 and answers[0]["legal"] is True
    assert answers[1]["line"] == 2 and answers[2]["line"] == 3


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        ({"discs": None}, "'discs' must be a list"),
        ({"discs": [{"x": 1, "y": 2}]}, "discs[0].colour"),
        ({"discs": [{"x": "1", "y": 2, "colour": "black"}]}, "'discs[0].x' must be a number"),
        ({"discs": [{"x": 1, "y": 2, "colour": "red"}]}, "'discs[0].colour'"),
        ({"discs": [1.5]}, "'discs[0]' must be an object"),
        ({"to_move": "green"}, "'to_move'"),
        ({"place": [5, 5]}, "'place' must be an object"),
        ({"place": {"x": 5}}, "missing field 'place.y'"),
        ({"place": {"x": True, "y": 3}}, "'place.x' must be a number"),
        ({"place": {"x": float("inf"), "y": 3}}, "'place.x' must be finite"),
        ({"move_number": 0}, "'move_number'"),
        ({"tolerance": -1}, "'tolerance'"),
        ({"winner": "red"}, "'winner'"),
    ],
)
def test_malformed_requests_name_the_field(change: dict, needle: str) -> None:
    with pytest.raises(JudgeInputError) as info:
        judge({**PLACED, **change})
    assert needle in str(info.value)
    assert needle in judge_line(json.dumps({**PLACED, **change}, allow_nan=True))["error"]


def test_missing_required_fields() -> None:
    for name in ("discs", "to_move", "place"):
        req = dict(PLACED)
        del req[name]
        assert f"missing field '{name}'" in judge_line(json.dumps(req))["error"]


def test_extras_tie_all_suicide_warnings_borderline() -> None:
    # a full white lattice but for two holes far apart; black fills one: the other hole is
    # white's only spot, and it is safe for white, so no tie and no all-suicide
    full = [
        {"x": 0.5 + i, "y": 0.5 + j, "colour": "white"}
        for j in range(20)
        for i in range(20)
        if (i, j) not in {(3, 3), (15, 15)}
    ]
    answer = judge(
        {"game": "dition", "discs": full, "to_move": "black", "place": {"x": 3.5, "y": 3.5}}
    )
    assert answer["outcome"] == "suicide" and answer["tie"] is False
    # white fills one hole: black's only spot is the other, surrounded by white: all suicide
    answer = judge(
        {"game": "dition", "discs": full, "to_move": "white", "place": {"x": 3.5, "y": 3.5}}
    )
    assert answer["outcome"] == "placed" and answer["all_suicide"] is True and not answer["tie"]
    # white fills the last hole of a board with one hole: black has nowhere to go, a tie
    one_hole = [d for d in full] + [{"x": 15.5, "y": 15.5, "colour": "white"}]
    answer = judge(
        {"game": "dition", "discs": one_hole, "to_move": "white", "place": {"x": 3.5, "y": 3.5}}
    )
    assert answer["tie"] is True
    # warnings about the input, and borderline distances from the placed disc
    shaky = {
        **PLACED,
        "discs": PLACED["discs"] + [{"x": 8.25, "y": 8.0, "colour": "black"}],
        "place": {"x": 9.0, "y": 10.0},
        "tolerance": 0.3,
    }
    answer = judge(shaky)
    assert any("overlapping discs: 0-2" in w for w in answer["warnings"])
    # white discs 0 and 1 are sqrt(5) = 2.236 from (9, 10): within 0.3 of the range threshold;
    # the black disc 2 (2.14 away) is the mover's own colour, for which range does not matter
    assert answer["borderline"] == [
        {"disc": 0, "distance": pytest.approx(5**0.5), "threshold": 2.0},
        {"disc": 1, "distance": pytest.approx(5**0.5), "threshold": 2.0},
    ]


def test_judge_agrees_with_the_engine() -> None:
    for req in (SUICIDE, CAPTURE, SACRIFICE, PLACED):
        position = rd.Position(
            tuple(rd.Disc(d["x"], d["y"], rd.Colour(d["colour"])) for d in req["discs"]),
            rd.Colour(req["to_move"]),
        )
        _, verdict = rd.apply_placement(position, req["place"]["x"], req["place"]["y"])
        answer = judge(req)
        assert answer["outcome"] == verdict.outcome.value
        assert answer["removed"] == list(verdict.removed)
        assert answer["opponents_in_range"] == list(verdict.opponents_in_range)


def test_a_broken_game_module_does_not_stop_the_others(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "broken_game_for_judge_test.py").write_text("raise RuntimeError('half written')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(GAMES, "domination", "broken_game_for_judge_test")
    assert judge_line('{"game": "domination"}') == {"error": "game 'domination' is not available"}
    assert judge_line(json.dumps(CAPTURE))["outcome"] == "capture"


def test_borderline_distances_are_printed_rounded() -> None:
    """Issue 17: 4.99 - 3.0 printed as 1.9900000000000002."""
    req = {"game": "dition", "discs": [{"x": 3.0, "y": 4.0, "colour": "white"}],
           "to_move": "black", "place": {"x": 4.99, "y": 4.0}, "tolerance": 0.05}
    (answer,) = run_cli([json.dumps(req)])
    (near,) = answer["borderline"]
    assert near["threshold"] == 2.0 and near["distance"] == pytest.approx(1.99, abs=1e-9)
    assert len(repr(near["distance"])) <= len("1.990000")
