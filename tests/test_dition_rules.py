"""Dition rules: golden positions from small diagrams, thresholds, edges, text forms, errors."""

from __future__ import annotations

import math

import pytest

from rules import dition as rd
from rules.errors import (
    IllegalMoveError,
    IllegalPlacementError,
    InvalidDiscError,
    InvalidNotationError,
    InvalidParameterError,
    RulesError,
)

B, W = rd.Colour.BLACK, rd.Colour.WHITE


def diagram(text: str, *, to_move: rd.Colour = B, origin=(8.0, 8.0), step=1.0):
    return rd.parse_diagram(text, origin=origin, step=step, to_move=to_move)


# --- vocabulary ---------------------------------------------------------------------------------
def test_colours_and_empty_position() -> None:
    assert B.opponent is W and W.opponent is B
    assert B.value == "black" and rd.Colour("white") is W
    start = rd.Position.empty()
    assert start.discs == () and start.to_move is B and start.move_number == 1
    assert not start.is_over


def test_reprs_paste_back_as_code() -> None:
    disc = rd.Disc(3.5, 4.0, W)
    assert eval(repr(disc), {"Disc": rd.Disc, "Colour": rd.Colour}) == disc
    position = rd.Position((disc, rd.Disc(1, 2, B)), W, 7)
    assert eval(repr(position), {"Position": rd.Position}) == position


def test_text_form_is_readable_and_exact() -> None:
    text = "dition to_move=white move=3\nblack 0.1 19.5\nwhite 10.0 10.000000000000002\n"
    position = rd.Position.from_text(text)
    assert position.to_move is W and position.move_number == 3
    assert position.discs[0] == rd.Disc(0.1, 19.5, B)
    assert position.discs[1].y == 10.000000000000002
    assert position.to_text() == text
    commented = "# a comment\n\ndition to_move=black move=1 winner=white\n  white 1 2  # disc 0\n"
    parsed = rd.Position.from_text(commented)
    assert parsed.winner is W and parsed.discs == (rd.Disc(1.0, 2.0, W),)


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("", "empty"),
        ("chess to_move=black\n", "line 1"),
        ("dition to_move=red move=1\n", "to_move"),
        ("dition to_move=black move=x\n", "line 1"),
        ("dition to_move=black move=0\n", "move_number"),
        ("dition to_move=black bogus=1\n", "bogus"),
        ("dition to_move=black move=1\nblack 1.0\n", "line 2"),
        ("dition to_move=black move=1\nblack 1.0 nan\n", "finite"),
        ("dition to_move=black move=1\ngreen 1.0 2.0\n", "green"),
    ],
)
def test_bad_text_names_the_problem(text: str, needle: str) -> None:
    with pytest.raises(InvalidNotationError, match=needle) as info:
        rd.Position.from_text(text)
    assert isinstance(info.value, ValueError) and isinstance(info.value, RulesError)


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        ((math.nan, 1.0, B), "disc x must be finite"),
        ((1.0, math.inf, B), "disc y must be finite"),
        (("1", 1.0, B), "disc x must be a number"),
        ((True, 1.0, B), "disc x must be a number"),
        ((1.0, 1.0, "red"), "disc colour"),
    ],
)
def test_bad_discs_are_rejected(args: tuple, needle: str) -> None:
    with pytest.raises(InvalidDiscError, match=needle):
        rd.Disc(*args)


def test_bad_positions_are_rejected() -> None:
    with pytest.raises(InvalidDiscError, match="disc 0"):
        rd.Position(((1.0, 2.0),))  # type: ignore[arg-type]
    with pytest.raises(InvalidDiscError, match="move_number"):
        rd.Position((), B, 0)
    with pytest.raises(InvalidDiscError, match="to_move"):
        rd.Position((), "grey")  # type: ignore[arg-type]


def test_diagram_builder_places_tokens_on_the_lattice() -> None:
    position, marks = rd.parse_diagram(
        """
        b . w
        . * .
        """,
        origin=(2.0, 3.0),
        step=0.5,
    )
    assert position.discs == (rd.Disc(2.0, 3.0, B), rd.Disc(3.0, 3.0, W))
    assert marks == {"*": (2.5, 3.5)}
    with pytest.raises(InvalidNotationError, match="twice"):
        rd.parse_diagram("* *")
    with pytest.raises(InvalidNotationError, match="one character"):
        rd.parse_diagram("bw")
    with pytest.raises(InvalidParameterError):
        rd.parse_diagram("b", step=0.0)


# --- golden positions, one per outcome ----------------------------------------------------------
def test_placed_nothing_disappears() -> None:
    position, marks = diagram(
        """
        w . w
        . * .
        w . .
        """
    )
    after, verdict = rd.apply_placement(position, *marks["*"])
    assert verdict.outcome is rd.Outcome.PLACED
    assert verdict.removed == () and not verdict.placed_removed and verdict.winner is None
    assert verdict.opponents_in_range == (0, 1, 2)
    assert after.discs == position.discs + (rd.Disc(*marks["*"], B),)
    assert after.to_move is W and after.move_number == 2 and not after.is_over


def test_capture_removes_the_surrounded_opponent() -> None:
    # the white disc has three black neighbours; the fourth black disc captures it
    position, marks = diagram(
        """
        . b .
        b w b
        . * .
        """
    )
    after, verdict = rd.apply_placement(position, *marks["*"])
    assert verdict.outcome is rd.Outcome.CAPTURE
    assert verdict.removed == (2,)  # reading order: b, b, w, b
    assert not verdict.placed_removed and verdict.winner is None
    assert [d.colour for d in after.discs] == [B, B, B, B]


def test_capture_of_several_discs_at_once() -> None:
    position, marks = diagram(
        """
        . b . b .
        b w * w b
        . b . b .
        """
    )
    _, verdict = rd.apply_placement(position, *marks["*"])
    assert verdict.outcome is rd.Outcome.CAPTURE
    whites = tuple(i for i, d in enumerate(position.discs) if d.colour is W)
    assert verdict.removed == whites


def test_suicide_loses_the_game() -> None:
    position, marks = diagram(
        """
        . w .
        w * w
        . w .
        """
    )
    after, verdict = rd.apply_placement(position, *marks["*"])
    assert verdict.outcome is rd.Outcome.SUICIDE
    assert verdict.placed_removed and verdict.removed == ()
    assert verdict.winner is W and after.winner is W and after.is_over
    assert after.discs == position.discs  # the placed disc is gone, nothing else changed
    assert rd.check_placement(after, 1.0, 1.0).reason == "game_over"
    with pytest.raises(IllegalPlacementError, match="game_over"):
        rd.apply_placement(after, 1.0, 1.0)


def test_sacrifice_both_go() -> None:
    # the placed black disc has 4 white neighbours in range, and the white disc at the centre
    # right of it reaches 4 black neighbours with it: both disappear
    position, marks = diagram(
        """
        . w . b .
        w * w b .
        . w . b .
        """
    )
    _, verdict = rd.apply_placement(position, *marks["*"])
    assert verdict.outcome is rd.Outcome.SACRIFICE
    assert verdict.placed_removed and verdict.winner is None
    white_right = position.discs.index(rd.Disc(10.0, 9.0, W))
    assert verdict.removed == (white_right,)


def test_disappearance_is_simultaneous() -> None:
    # the placed disc counts the white discs that disappear with it: counts come from the board
    # with the new disc on it, before anything is removed (otherwise this would be a capture)
    position, marks = diagram(
        """
        b . b . b
        . w . w .
        b w * w b
        """
    )
    assert rd.status(position).valid
    _, verdict = rd.apply_placement(position, *marks["*"])
    assert verdict.outcome is rd.Outcome.SACRIFICE
    upper_whites = (position.discs.index(rd.Disc(9, 9, W)), position.discs.index(rd.Disc(11, 9, W)))
    assert verdict.removed == upper_whites


def test_white_moves_too() -> None:
    position, marks = diagram(
        """
        . b .
        b * b
        . b .
        """,
        to_move=W,
    )
    _, verdict = rd.apply_placement(position, *marks["*"])
    assert verdict.outcome is rd.Outcome.SUICIDE and verdict.winner is B
    assert verdict.placed.colour is W


def test_own_discs_never_count() -> None:
    position, marks = diagram(
        """
        b b b
        b * b
        b b b
        """
    )
    _, verdict = rd.apply_placement(position, *marks["*"])
    assert verdict.outcome is rd.Outcome.PLACED


def test_only_discs_near_the_placement_can_disappear() -> None:
    # an unsettled reading: the far white disc already has 4 black neighbours; placing far
    # away from it does not remove it (status() reports it instead)
    position, marks = diagram(
        """
        . b . . . . *
        b w b . . . .
        . b . . . . .
        """
    )
    _, verdict = rd.apply_placement(position, *marks["*"])
    assert verdict.outcome is rd.Outcome.PLACED
    assert rd.status(position).should_have_disappeared == (2,)


# --- thresholds, exactly ----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("distance", "in_range"),
    [(2.0, False), (2.0 - 2.0**-40, True), (2.0 + 2.0**-40, False), (1.0, True), (1.5, True)],
)
def test_within_range_is_strictly_less_than_two(distance: float, in_range: bool) -> None:
    # 4 white discs at `distance` from the placement (axis-aligned: exact coordinates)
    cx = cy = 10.0
    discs = [
        rd.Disc(cx + dx * distance, cy + dy * distance, W)
        for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1))
    ]
    _, verdict = rd.apply_placement(rd.Position(tuple(discs)), cx, cy)
    assert (verdict.outcome is rd.Outcome.SUICIDE) is in_range
    assert len(verdict.opponents_in_range) == (4 if in_range else 0)


@pytest.mark.parametrize(
    ("distance", "legal"),
    [(1.0, True), (1.0 - 2.0**-40, False), (0.5, False), (0.0, False), (1.0 + 2.0**-40, True)],
)
def test_touching_is_legal_overlap_is_not(distance: float, legal: bool) -> None:
    position = rd.Position((rd.Disc(10.0, 10.0, W),))
    for x, y in ((10.0 + distance, 10.0), (10.0, 10.0 - distance)):
        legality = rd.check_placement(position, x, y)
        assert legality.legal is legal
        if not legal:
            assert legality.reason == "overlap" and legality.conflicts == (0,)
            assert "disc 0" in legality.detail


def test_diagonal_threshold_uses_the_float_distance() -> None:
    # (sqrt(2), sqrt(2)) rounded: whichever side of 2 the float distance falls is the verdict
    s = math.sqrt(2.0)
    d2 = s * s + s * s
    discs = tuple(
        rd.Disc(10.0 + sx * s, 10.0 + sy * s, W) for sx, sy in ((1, 1), (1, -1), (-1, 1), (-1, -1))
    )
    _, verdict = rd.apply_placement(rd.Position(discs), 10.0, 10.0)
    assert (verdict.outcome is rd.Outcome.SUICIDE) is (d2 < 4.0)


@pytest.mark.parametrize(
    ("x", "y", "legal"),
    [
        (0.5, 0.5, True),
        (19.5, 19.5, True),
        (0.5, 19.5, True),
        (19.5, 0.5, True),
        (10.0, 0.5, True),
        (0.5, 10.0, True),
        (math.nextafter(0.5, 0.0), 10.0, False),
        (10.0, math.nextafter(19.5, 20.0), False),
        (0.0, 0.0, False),
        (20.0, 10.0, False),
        (-3.0, 10.0, False),
        (10.0, 25.0, False),
    ],
)
def test_the_whole_disc_must_be_on_the_board(x: float, y: float, legal: bool) -> None:
    legality = rd.check_placement(rd.Position.empty(), x, y)
    assert legality.legal is legal
    if not legal:
        assert legality.reason == "outside"
        with pytest.raises(IllegalMoveError, match="outside"):
            rd.apply_placement(rd.Position.empty(), x, y)


def test_corner_suicide_needs_only_what_fits() -> None:
    # four white discs within range of the corner spot (0.5, 0.5) still fit on the board
    whites = ((1.5, 0.5), (0.5, 1.5), (2.125, 1.375), (1.375, 2.125))
    position = rd.Position(tuple(rd.Disc(x, y, W) for x, y in whites))
    assert rd.status(position).valid
    _, verdict = rd.apply_placement(position, 0.5, 0.5)
    assert verdict.outcome is rd.Outcome.SUICIDE and verdict.opponents_in_range == (0, 1, 2, 3)
    # one step along the edge the farthest white disc is out of range: merely placed
    _, verdict = rd.apply_placement(position.with_discs(position.discs[:3]), 0.5, 0.5)
    assert verdict.outcome is rd.Outcome.PLACED


def test_edge_capture() -> None:
    position, marks = rd.parse_diagram(
        """
        b w b
        . b *
        """,
        origin=(9.5, 0.5),
    )
    # the white disc on the edge has 3 black discs within range; the fourth captures it
    _, verdict = rd.apply_placement(position, *marks["*"])
    assert verdict.outcome is rd.Outcome.CAPTURE and verdict.removed == (1,)


def test_illegal_placement_error_names_placement_and_reason() -> None:
    position = rd.Position((rd.Disc(5.0, 5.0, B),), W, 4)
    with pytest.raises(IllegalPlacementError) as info:
        rd.apply_placement(position, 5.5, 5.0)
    message = str(info.value)
    assert "(5.5, 5)" in message and "white" in message and "overlap" in message
    assert "move 4" in message
    assert isinstance(info.value, ValueError)
    with pytest.raises(InvalidDiscError, match="placement x"):
        rd.check_placement(position, math.nan, 1.0)


# --- status and borderline pairs -------------------------------------------------------------
def test_status_flags_each_problem() -> None:
    assert rd.status(rd.Position.empty()).valid
    discs = [
        rd.Disc(5.0, 5.0, B),
        rd.Disc(5.5, 5.0, W),  # overlaps 0
        rd.Disc(0.25, 10.0, B),  # off the board
        rd.Disc(15.0, 15.0, W),  # 4 black discs around it
        rd.Disc(14.0, 15.0, B),
        rd.Disc(16.0, 15.0, B),
        rd.Disc(15.0, 14.0, B),
        rd.Disc(15.0, 16.0, B),
    ]
    report = rd.status(discs)
    assert (
        report.flags == rd.Status.OVERLAP | rd.Status.OFF_BOARD | rd.Status.SHOULD_HAVE_DISAPPEARED
    )
    assert report.overlapping == ((0, 1),)
    assert report.off_board == (2,)
    assert report.should_have_disappeared == (3,)
    assert not report


def test_status_touching_and_edge_are_fine() -> None:
    discs = [rd.Disc(0.5, 0.5, B), rd.Disc(1.5, 0.5, W), rd.Disc(19.5, 19.5, W)]
    assert rd.status(discs).flags == rd.Status.VALID


def test_borderline_pairs_near_one_and_two() -> None:
    discs = [
        rd.Disc(5.0, 5.0, B),
        rd.Disc(6.03, 5.0, W),  # 1.03 from disc 0: near touching
        rd.Disc(5.0, 6.96, W),  # 1.96 from disc 0: near range, opponents
        rd.Disc(5.0, 3.02, B),  # 1.98 from disc 0: near range but same colour
        rd.Disc(12.0, 12.0, W),  # far from all
    ]
    pairs = rd.borderline_pairs(discs, 0.05)
    assert [(p.i, p.j, p.threshold) for p in pairs] == [(0, 1, 1.0), (0, 2, 2.0)]
    assert pairs[0].distance == pytest.approx(1.03)
    i, j, distance, threshold = pairs[1]
    assert (i, j, threshold) == (0, 2, 2.0) and distance == pytest.approx(1.96)
    everything = rd.borderline_pairs(discs, 0.05, range_opponents_only=False)
    assert (0, 3, 2.0) in [(p.i, p.j, p.threshold) for p in everything]
    assert rd.borderline_pairs(discs, 0.01) == []
    with pytest.raises(InvalidParameterError):
        rd.borderline_pairs(discs, -0.1)
