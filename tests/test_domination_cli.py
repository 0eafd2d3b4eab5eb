"""`referee judge` (domination lines) and `referee infer`: the JSON contracts of issue 7."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from referee.judging.domination import judge
from rules.domination import CELLS, Move, State, apply_move

ROOT = Path(__file__).resolve().parent.parent

REQUEST = {
    "game": "domination",
    "players": ["G", "R"],
    "stacks": {"d4": "GRG", "d6": "RGRRR", "a4": "R"},
    "reserves": {"G": 0, "R": 1},
    "captured": {"G": {"R": 2}, "R": {"G": 0}},
    "to_move": "G",
    "move": {"from": "d4", "to": "d6", "count": 2},
}


def test_judge_a_legal_move_with_overflow() -> None:
    answer = judge(dict(REQUEST))
    # d6 RGRRR + RG -> RGRRRRG: R and G come off the bottom
    assert answer == {
        "legal": True,
        "stacks": {"a4": "R", "d4": "G", "d6": "RRRRG"},
        "reserves": {"G": 1, "R": 1},
        "captured": {"G": {"R": 3}, "R": {"G": 0}},
        "removed": "RG",
        "to_move": "R",
        "winner": None,
    }
    json.dumps(answer)


def test_judge_a_placement_and_default_counts() -> None:
    request = {"game": "domination", "players": ["G", "R"], "stacks": {"d4": "R", "e5": "G"},
               "reserves": {"G": 1}, "to_move": "G", "move": {"place": "d4"}}
    answer = judge(request)
    assert answer["legal"] and answer["stacks"] == {"d4": "RG", "e5": "G"}
    assert answer["reserves"] == {"G": 0, "R": 0}
    assert answer["captured"] == {"G": {"R": 0}, "R": {"G": 0}}
    assert answer["winner"] == "G"  # red controls nothing and has no reserve


def test_judge_an_illegal_move_gives_the_reason() -> None:
    answer = judge({**REQUEST, "move": {"from": "d4", "to": "d7", "count": 2}})
    assert answer["legal"] is False and "exactly 2" in answer["reason"]
    answer = judge({**REQUEST, "to_move": "R", "move": {"from": "d4", "to": "d5", "count": 1}})
    assert answer == {"legal": False, "reason": "the top of d4 is G, not R (R to move)"}


def test_judge_variant_fields() -> None:
    short = {**REQUEST, "move": {"from": "d4", "to": "d5", "count": 2}}
    assert judge(short)["legal"] is False
    assert judge({**short, "variant": {"up_to_k": True}})["legal"] is True
    assert judge({**short, "variant": ["up_to_k"]})["legal"] is True
    fast = {"game": "domination", "stacks": {"d4": "G", "d5": "RGGGG"}, "reserves": {"R": 1},
            "move": {"from": "d4", "to": "d5", "count": 1}}
    assert judge(fast)["winner"] is None
    assert judge({**fast, "variant": {"fast": True}})["winner"] == "G"


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"stacks": {"a1": "G"}}, "'a1' is a cut corner"),
        ({"stacks": {"d4": "GX"}}, "'X'"),
        ({"move": {"from": "d4", "to": "d9", "count": 1}}, "'d9'"),
        ({"move": {"go": "d4"}}, "cannot read move"),
        ({"players": "GR"}, "'players' must be a list"),
        ({"reserves": {"G": -1}}, "reserves[G]"),
        ({"variant": {"speedy": True}}, "unknown variant"),
        ({"variant": {"partners": True}}, "partners needs exactly 4"),
    ],
)
def test_judge_malformed_requests_name_the_problem(change: dict, words: str) -> None:
    with pytest.raises(ValueError, match=None) as info:
        judge({**REQUEST, **change})
    assert words in str(info.value)


def test_judge_through_the_dispatcher() -> None:
    judging = pytest.importorskip("referee.judging")
    answer = judging.judge_line(json.dumps(REQUEST))
    assert answer["legal"] is True and answer["removed"] == "RG"
    bad = judging.judge_line(json.dumps({**REQUEST, "stacks": {"h8": "G"}}))
    assert "h8" in bad["error"]


def _infer_request(state: State, move: Move, *, heights: bool = False) -> dict:
    after, _ = apply_move(state, move)
    request = {"players": list(state.players), "stacks": state.stacks,
               "reserves": state.reserves, "captured": state.captured,
               "to_move": state.to_move, "observed": after.tops()}
    if heights:
        request["heights"] = after.heights()
        request["height_sigma"] = {c: 0.1 for c in CELLS}
    return request


def _run_infer(lines: list[str], monkeypatch: pytest.MonkeyPatch,
               capsys: pytest.CaptureFixture[str], *args: str) -> list[dict]:
    from referee.cli import main

    monkeypatch.setattr(sys, "stdin", io.StringIO("".join(line + "\n" for line in lines)))
    assert main(["infer", *args]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_infer_lines_and_errors(monkeypatch: pytest.MonkeyPatch,
                                capsys: pytest.CaptureFixture[str]) -> None:
    s = State.standard_start()
    ok = _infer_request(s, Move.step("d6", "d5", 1))
    missing = {k: v for k, v in ok.items() if k != "observed"}
    partial = {**ok, "observed": {"c1": "."}}
    out = _run_infer([json.dumps(ok), "{not json", json.dumps(missing), json.dumps(partial),
                      json.dumps(ok)], monkeypatch, capsys)
    assert out[0] == {"candidates": [{"from": "d6", "to": "d5", "count": 1}]}
    assert "not valid JSON" in out[1]["error"] and out[1]["line"] == 2
    assert "observed" in out[2]["error"]
    assert "51 missing" in out[3]["error"]
    assert out[4] == out[0]


def test_infer_ambiguous_and_invisible_with_details(monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    s = State.from_setup({"e3": "GGG", "a4": "R"}, ("G", "R"), reserves={"G": 1})
    both = _infer_request(s, Move.place("e5"))
    sharp = _infer_request(s, Move.place("e5"), heights=True)
    invisible = _infer_request(s, Move.place("e3"))
    out = _run_infer([json.dumps(both), json.dumps(sharp), json.dumps(invisible)],
                     monkeypatch, capsys, "--details")
    assert {json.dumps(m, sort_keys=True) for m in out[0]["candidates"]} == {
        json.dumps({"place": "e5"}, sort_keys=True),
        json.dumps({"from": "e3", "to": "e5", "count": 2}, sort_keys=True)}
    assert out[1]["candidates"] == [{"place": "e5"}]
    assert {"place": "e3"} in out[2]["candidates"]
    assert all(d["invisible"] for d in out[2]["details"])


def test_infer_command_end_to_end() -> None:
    s = State.standard_start()
    request = _infer_request(s, Move.step("c7", "c8", 1))
    done = subprocess.run(
        [sys.executable, "-m", "referee", "infer"], input=json.dumps(request) + "\n",
        capture_output=True, text=True, cwd=ROOT, timeout=60, check=True,
    )
    assert json.loads(done.stdout) == {"candidates": [{"from": "c7", "to": "c8", "count": 1}]}
