"""The Dition match state machine, fed with settled readings (no camera involved)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from referee.dition_match import DitionMatch, DitionSettings
from referee.errors import CommandError
from referee.matching import SeenDisc
from rules import dition as rd

B, W = rd.Colour.BLACK, rd.Colour.WHITE


def pos(discs: list[tuple[float, float, rd.Colour]], to_move: rd.Colour) -> rd.Position:
    return rd.Position(tuple(rd.Disc(x, y, c) for x, y, c in discs), to_move, len(discs) + 1)


def seen(position_discs, rng: np.random.Generator | None = None, jitter: float = 0.0,
         extra=()) -> list[SeenDisc]:
    out = []
    for d in position_discs:
        dx, dy = (rng.normal(0, jitter, 2) if rng is not None else (0.0, 0.0))
        colour = d.colour.value if hasattr(d.colour, "value") else d.colour
        out.append(SeenDisc(d.x + dx, d.y + dy, colour))
    out += [SeenDisc(x, y, c) for x, y, c in extra]
    return out


#: black disc at (10,10) with three white discs in range; a black disc far away
CAPTURE_SETUP = [(10, 10, B), (10, 8.5, W), (8.5, 10, W), (11.5, 10, W), (3, 3, B)]


def types(events):
    return [e["type"] for e in events]


def test_plain_placement_then_nothing_while_the_board_stays(rng) -> None:
    m = DitionMatch()
    ev = m.observe([SeenDisc(7.3, 9.1, "black")])
    assert types(ev) == ["move"]
    assert ev[0]["outcome"] == "placed" and ev[0]["colour"] == "black"
    assert ev[0]["x"] == pytest.approx(7.3) and ev[0]["removed"] == []
    assert m.to_move == "white"
    # the same board, read again with a little noise: nothing new
    for _ in range(5):
        assert m.observe(seen(m.position.discs, rng, 0.03)) == []


def test_capture_asks_for_removal_and_waits_for_it() -> None:
    m = DitionMatch(pos(CAPTURE_SETUP, W))
    board = seen(m.position.discs, extra=[(10, 11.5, "white")])
    ev = m.observe(board)
    assert types(ev) == ["move", "instruction"]
    assert ev[0]["outcome"] == "capture" and ev[0]["removed"] == [[10.0, 10.0]]
    assert "captures 1 black disc" in ev[0]["text"]
    assert m.phase == "await_removal"
    assert [h["role"] for h in m.instruction["highlight"]] == ["remove"]
    assert m.observe(board) == []  # not removed yet: keep asking, no new event
    # the wrong disc removed: the far black disc instead of the captured one
    wrong = [s for s in board if (s.x, s.y) != (3, 3)]
    ev = m.observe(wrong)
    assert types(ev) == ["warning"] and ev[0]["code"] == "wrong_removed"
    assert any(h["role"] == "missing" and h["x"] == 3 for h in ev[0]["highlight"])
    right = [s for s in board if (s.x, s.y) != (10, 10)]
    ev = m.observe(right)
    assert "info" in types(ev) and m.phase == "await_move" and m.to_move == "black"


def test_suicide_ends_the_match() -> None:
    setup = [(5, 3.5, B), (3.5, 5, B), (6.5, 5, B), (5, 6.5, B), (15, 15, W), (16, 12, W)]
    m = DitionMatch(pos(setup, W))
    ev = m.observe(seen(m.position.discs, extra=[(5, 5, "white")]))
    assert types(ev) == ["move", "end"]
    assert ev[0]["outcome"] == "suicide" and ev[1]["winner"] == "black"
    assert ev[1]["reason"] == "suicide" and "suicide" in ev[1]["text"]
    # issue 17: the end event marks the suicide disc (the replay draws it from the event)
    assert (ev[1]["x"], ev[1]["y"]) == (5.0, 5.0)
    assert {(h["x"], h["y"], h["role"]) for h in ev[1]["highlight"]} == {(5.0, 5.0, "remove")}
    assert m.phase == "over" and m.to_move is None
    assert m.observe(seen(m.position.discs)) == []


def test_sacrifice() -> None:
    # white at (10,11.5) is in range of 4 black discs and completes the capture of (10,10)
    setup = CAPTURE_SETUP[:-1] + [(9, 12.8, B), (11, 12.8, B), (8.6, 11.2, B)]
    m = DitionMatch(pos(setup, W))
    ev = m.observe(seen(m.position.discs, extra=[(10, 11.5, "white")]))
    assert ev[0]["outcome"] == "sacrifice"
    assert ev[0]["placed_removed"] is True and [10.0, 10.0] in ev[0]["removed"]


def test_wrong_colour_and_two_discs_are_warnings() -> None:
    m = DitionMatch()
    ev = m.observe([SeenDisc(5, 5, "white")])
    assert types(ev) == ["warning"] and ev[0]["code"] == "wrong_colour"
    assert m.observe([SeenDisc(5, 5, "white")]) == []  # said once
    ev = m.observe([SeenDisc(5, 5, "black"), SeenDisc(9, 9, "black")])
    assert types(ev) == ["warning"] and "take back all but one" in ev[0]["text"]
    ev = m.observe([])
    assert types(ev) == ["info"]  # board as expected again
    assert types(m.observe([SeenDisc(9, 9, "black")])) == ["move"]


def test_a_disc_pushed_away_is_pointed_at() -> None:
    m = DitionMatch(pos([(5, 5, B), (12, 12, W)], B))
    ev = m.observe([SeenDisc(5.9, 5.0, "black"), SeenDisc(12, 12, "white")])
    assert types(ev) == ["warning"] and ev[0]["code"] == "moved"
    assert "black disc" in ev[0]["text"] and "the top-left corner" in ev[0]["text"]
    assert {(h["x"], h["y"], h["role"]) for h in ev[0]["highlight"]} == {
        (5.0, 5.0, "missing"), (5.9, 5.0, "wrong")}  # the coordinates stay in the API


COORDINATES = re.compile(r"\(\s*\d+(\.\d+)?\s*,\s*\d+(\.\d+)?\s*\)")


def test_verdicts_point_at_discs_in_words_not_coordinates() -> None:
    """Issue 17: "the disc at (13.7, 12.3)" cannot be found on a board without a scale."""
    m = DitionMatch(pos(CAPTURE_SETUP, W))
    ev = m.observe(seen(m.position.discs, extra=[(10, 11.5, "white")]))
    texts = [e["text"] for e in ev] + [m.instruction["text"]]
    assert ev[0]["outcome"] == "capture"
    assert not any(COORDINATES.search(t) for t in texts), texts
    remove = next(e for e in ev if e["type"] == "instruction")
    assert remove["text"] == "Remove the black disc ringed in red, near the centre"
    assert ev[0]["removed"] == [[10.0, 10.0]]  # the API keeps the numbers


def test_where_words_name_the_corner_edge_or_centre() -> None:
    from referee.dition_match import where_words

    assert where_words(1, 1) == "near the top-left corner"
    assert where_words(19, 1) == "near the top-right corner"
    assert where_words(6, 14.5) == "towards the bottom-left corner"
    assert where_words(10, 18) == "by the bottom edge"
    assert where_words(2, 10) == "by the left edge"
    assert where_words(10, 5) == "towards the top edge"
    assert where_words(10, 10) == "near the centre"


def test_a_mismatch_names_a_few_discs_and_leaves_the_rest_to_the_diagram() -> None:
    """Issue 17: after an undo, 13 coordinates filled the phone screen."""
    discs = [(1.5 + 1.5 * i, 3.0, B if i % 2 else W) for i in range(12)]
    m = DitionMatch(pos(discs, B))
    ev = m.observe([SeenDisc(5.0, 15.0, "black")])  # 12 gone, one that should not be there
    text = ev[0]["text"]
    assert ev[0]["code"] == "mismatch" and len(ev[0]["highlight"]) == 13
    assert text.count(" disc ") <= 2 * 3 and "9 more shown as an orange ghost" in text, text
    assert not COORDINATES.search(text)


def test_discs_on_the_board_of_a_new_match_are_not_placed_at_once() -> None:
    """Issue 17: a game in progress shown to a new match read as "40 discs were placed at once";
    a Dition match can only start on an empty board."""
    m = DitionMatch()
    many = [SeenDisc(1.5 + 1.5 * (i % 12), 2.0 + 3 * (i // 12), "black" if i % 2 else "white")
            for i in range(40)]
    ev = m.observe(many)
    assert ev[0]["code"] == "not_empty" and "placed at once" not in ev[0]["text"]
    assert "starts on an empty board" in ev[0]["text"] and "40 discs" in ev[0]["text"]
    assert len(ev[0]["highlight"]) == 40


def test_illegal_overlap_and_outside() -> None:
    m = DitionMatch(pos([(5, 5, B)], W))
    ev = m.observe([SeenDisc(5, 5, "black"), SeenDisc(5.6, 5.0, "white")])
    assert types(ev) == ["illegal"] and ev[0]["reason"] == "overlap"
    m = DitionMatch(pos([(5, 5, B)], W))
    ev = m.observe([SeenDisc(5, 5, "black"), SeenDisc(0.2, 10, "white")])
    assert types(ev) == ["illegal"] and ev[0]["reason"] == "outside"


def test_touching_discs_measured_slightly_overlapping_are_legal() -> None:
    m = DitionMatch(pos([(5, 5, B)], W))
    ev = m.observe([SeenDisc(5, 5, "black"), SeenDisc(5.97, 5.0, "white")])
    assert types(ev) == ["move"] and ev[0]["x"] >= 6.0 - 1e-6


def test_borderline_distance_is_asked_only_when_it_decides() -> None:
    m = DitionMatch(pos(CAPTURE_SETUP, W))
    ev = m.observe(seen(m.position.discs, extra=[(10, 12.01, "white")]))
    assert types(ev) == ["question"]
    q = m.question()
    assert q is not None and q["kind"] == "borderline" and "measuring disc" in q["text"]
    with pytest.raises(CommandError):
        m.answer("nonsense", "in")
    ev = m.answer(q["id"], "in")
    assert types(ev)[:2] == ["answer", "move"]
    assert ev[1]["outcome"] == "capture" and ev[1]["removed"] == [[10.0, 10.0]]
    # the same placement far from any decision is not asked
    m2 = DitionMatch(pos(CAPTURE_SETUP, W))
    ev = m2.observe(seen(m2.position.discs, extra=[(16, 16.01, "white")]))
    assert types(ev) == ["move"]


def test_borderline_answered_out() -> None:
    m = DitionMatch(pos(CAPTURE_SETUP, W))
    m.observe(seen(m.position.discs, extra=[(10, 11.99, "white")]))
    q = m.question()
    assert q is not None
    ev = m.answer(q["id"], "out")
    assert ev[1]["outcome"] == "placed" and ev[1]["removed"] == []


def test_auto_answer_uses_the_measurement() -> None:
    m = DitionMatch(pos(CAPTURE_SETUP, W), settings=DitionSettings(auto_answer=True))
    ev = m.observe(seen(m.position.discs, extra=[(10, 11.98, "white")]))
    assert types(ev)[:3] == ["question", "answer", "move"]
    assert ev[1]["by"] == "measurement" and ev[2]["outcome"] == "capture"


def test_undo_and_draw_and_snapshot_resume() -> None:
    m = DitionMatch()
    m.observe([SeenDisc(5, 5, "black")])
    m.observe([SeenDisc(5, 5, "black"), SeenDisc(9, 9, "white")])
    snap = m.snapshot()
    resumed = DitionMatch.resume(snap)
    assert resumed.position == m.position and resumed.to_move == "black"
    ev = m.undo()
    assert types(ev) == ["undo"] and len(m.position.discs) == 1 and m.to_move == "white"
    ev = m.draw()
    assert ev[0]["reason"] == "agreement" and m.phase == "over"
    with pytest.raises(CommandError):
        m.draw()


def test_resume_in_the_middle_of_a_removal() -> None:
    m = DitionMatch(pos(CAPTURE_SETUP, W))
    board = seen(m.position.discs, extra=[(10, 11.5, "white")])
    m.observe(board)
    resumed = DitionMatch.resume(m.snapshot())
    assert resumed.phase == "await_removal"
    ev = resumed.observe([s for s in board if (s.x, s.y) != (10, 10)])
    assert resumed.phase == "await_move" and "info" in types(ev)


def test_removal_and_next_placement_seen_together() -> None:
    """The board was never still between the removal and the next disc: both are taken."""
    m = DitionMatch(pos(CAPTURE_SETUP, W))
    board = seen(m.position.discs, extra=[(10, 11.5, "white")])
    m.observe(board)
    after = [s for s in board if (s.x, s.y) != (10, 10)] + [SeenDisc(15, 15, "black")]
    ev = m.observe(after)
    assert [e["type"] for e in ev if e["type"] in ("move", "info")] == ["info", "move"]
    assert ev[-1]["colour"] == "black" and m.to_move == "white"


@pytest.mark.parametrize("angle, turns", [(0, 0), (30, 0), (60, 1), (95, 1), (180, 2), (-80, 3),
                                          (-135 + 1, 3)])
def test_the_view_follows_the_board_as_the_camera_shows_it(angle: float, turns: int) -> None:
    """Issue 17: the diagram was always corner 0 top-left while the camera saw the board at
    45-150 degrees. Corners of a board turned `angle` degrees clockwise in the picture."""
    from referee.view import board_angle_deg, quarter_turns

    a = np.radians(angle)
    axis_x, axis_y = np.array([np.cos(a), np.sin(a)]), np.array([-np.sin(a), np.cos(a)])
    centre = np.array([640.0, 480.0])
    corners = [centre + 300 * (sx * axis_x + sy * axis_y)
               for sx, sy in ((-1, -1), (1, -1), (1, 1), (-1, 1))]
    assert board_angle_deg(corners) == pytest.approx(angle, abs=1e-6)
    assert quarter_turns(corners) == turns


def test_words_follow_the_turned_view() -> None:
    from referee.dition_match import where_words

    # board corner 0 appears top-right after one quarter turn clockwise, bottom-right after two
    assert where_words(1, 1, 1) == "near the top-right corner"
    assert where_words(1, 1, 2) == "near the bottom-right corner"
    assert where_words(1, 1, 3) == "near the bottom-left corner"
    m = DitionMatch(pos([(5, 5, B), (12, 12, W)], B))
    m.view_turns = 2
    ev = m.observe([SeenDisc(5.9, 5.0, "black"), SeenDisc(12, 12, "white")])
    assert "the bottom-right corner" in ev[0]["text"]
