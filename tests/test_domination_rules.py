"""Golden tests of the Domination rules, from small text diagrams (seeds/domination.md)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from rules.domination import (
    CELLS,
    CUT_CELLS,
    MAX_HEIGHT,
    Move,
    State,
    Status,
    Termination,
    Variant,
    apply_move,
    cell_centre,
    check_move,
    legal_moves,
    outcome,
    status,
)
from rules.errors import (
    IllegalMoveError,
    InvalidNotationError,
    InvalidStateError,
    RulesError,
)

EMPTY_BOARD = """
8  #  #  .  .  .  .  #  #
7  #  .  .  .  .  .  .  #
6  .  .  .  .  .  .  .  .
5  .  .  .  .  .  .  .  .
4  .  .  .  .  .  .  .  .
3  .  .  .  .  .  .  .  .
2  #  .  .  .  .  .  .  #
1  #  #  .  .  .  .  #  #
"""


def diagram(
    rows: str,
    *,
    players: str = "G R",
    to_move: str = "G",
    reserves: str = "",
    captured: str = "",
    variant: str = "standard",
) -> State:
    """A state from 8 board rows (rank 8 first) plus header fields, through `State.from_text`."""
    p = players.split()
    res = reserves or " ".join(f"{x}=0" for x in p)
    cap = captured or " ".join(f"{a}:" + ",".join(f"{b}=0" for b in p if b != a) for a in p)
    text = (f"players: {players}\nvariant: {variant}\nto move: {to_move}\nmove: 0\n"
            f"reserves: {res}\ncaptured: {cap}\n{rows}")
    return State.from_text(text)


def put(rows: str, **cells: str) -> str:
    """The EMPTY_BOARD diagram with some cells filled: put(EMPTY_BOARD, d4="GRG")."""
    grid = {line.split()[0]: line.split()[1:] for line in rows.strip().splitlines()}
    for cell, stack in cells.items():
        grid[cell[1]]["abcdefgh".index(cell[0])] = stack
    return "\n".join(f"{r}  " + "  ".join(grid[r]) for r in "87654321") + "\n"


# -- vocabulary ---------------------------------------------------------------------------------


def test_cells_are_the_52_uncut_cells() -> None:
    every = {f + r for f in "abcdefgh" for r in "12345678"}
    assert len(CELLS) == 52 and len(set(CELLS)) == 52
    assert set(CELLS) == every - CUT_CELLS
    assert CUT_CELLS == {"a1", "b1", "a2", "g1", "h1", "h2", "a7", "a8", "b8", "g8", "h8", "h7"}


@pytest.mark.parametrize(
    ("cell", "centre"),
    [("c8", (2.5, 0.5)), ("f1", (5.5, 7.5)), ("d4", (3.5, 4.5)), ("a3", (0.5, 5.5))],
)
def test_cell_centre_in_the_board_frame(cell: str, centre: tuple[float, float]) -> None:
    assert cell_centre(cell) == centre


def test_cut_cell_has_no_centre() -> None:
    with pytest.raises(InvalidNotationError, match="cut corner"):
        cell_centre("a1")


def test_standard_start_matches_sacksons_layout() -> None:
    s = State.standard_start(("G", "R"))
    expected_rows = {  # files b..g
        "7": "GGRRGG", "6": "RRGGRR", "5": "GGRRGG",
        "4": "RRGGRR", "3": "GGRRGG", "2": "RRGGRR",
    }
    for rank, row in expected_rows.items():
        assert "".join(s.top(f + rank) for f in "bcdefg") == row
    assert {c for c, st in s.stacks.items()} == {f + r for f in "bcdefg" for r in "234567"}
    assert s.to_move == "G" and s.reserves == {"G": 0, "R": 0}
    assert sum(v == "G" for v in s.stacks.values()) == 18
    assert sum(v == "R" for v in s.stacks.values()) == 18
    assert status(s, {"G": 18, "R": 18}) == Status.VALID


def test_standard_start_is_colour_symmetric_under_rank_mirror() -> None:
    s = State.standard_start(("A", "B"))
    for cell, stack in s.stacks.items():
        mirrored = cell[0] + str(9 - int(cell[1]))
        assert s.stack(mirrored) == {"A": "B", "B": "A"}[stack]


# -- moves ---------------------------------------------------------------------------------------


def test_single_step_onto_an_empty_cell() -> None:
    s = diagram(put(EMPTY_BOARD, d4="G", e6="R"))
    after, result = apply_move(s, Move.step("d4", "d5", 1))
    assert after.stacks == {"d5": "G", "e6": "R"}
    assert result.removed == "" and after.to_move == "R" and after.move_number == 1


def test_split_takes_the_top_pieces_and_control_goes_to_the_new_top() -> None:
    s = diagram(put(EMPTY_BOARD, d4="RGG", h5="R"))
    after, _ = apply_move(s, Move.step("d4", "e4", 1))
    assert after.stacks == {"d4": "RG", "e4": "G", "h5": "R"}
    after, _ = apply_move(s, Move.step("d4", "f4", 2))
    assert after.stacks == {"d4": "R", "f4": "GG", "h5": "R"}
    assert after.top("d4") == "R"  # the rest of the split stack now belongs to red
    assert Move.step("d4", "d3", 1) in legal_moves(replace(after, to_move="R"))


def test_moved_pieces_keep_their_order_on_top_of_the_landing_stack() -> None:
    s = diagram(put(EMPTY_BOARD, c3="GRG", c5="RR"))
    after, _ = apply_move(s, Move.step("c3", "c5", 2))
    assert after.stack("c5") == "RRRG" and after.stack("c3") == "G"


def test_a_multiple_move_jumps_over_everything_between() -> None:
    s = diagram(put(EMPTY_BOARD, d3="GGG", d4="RRRRR", d5="R"))
    after, _ = apply_move(s, Move.step("d3", "d6", 3))
    assert after.stacks == {"d4": "RRRRR", "d5": "R", "d6": "GGG"}


def test_legal_moves_of_a_lone_stack_are_exactly_k_in_four_directions() -> None:
    s = diagram(put(EMPTY_BOARD, d4="RGG", a6="R"))
    got = {(m.to_cell, m.count) for m in legal_moves(s)}
    assert got == {("d5", 1), ("d3", 1), ("e4", 1), ("c4", 1),
                   ("d6", 2), ("d2", 2), ("f4", 2), ("b4", 2),
                   ("d7", 3), ("d1", 3), ("g4", 3), ("a4", 3)}


def test_up_to_k_variant_allows_shorter_distances() -> None:
    s = diagram(put(EMPTY_BOARD, d4="GG", a6="R"), variant="up_to_k")
    got = {(m.to_cell, m.count) for m in legal_moves(s)}
    assert ("d5", 2) in got and ("d6", 2) in got and ("d6", 1) not in got
    assert check_move(s, Move.step("d4", "d5", 2)) is None
    exact = diagram(put(EMPTY_BOARD, d4="GG", a6="R"))
    assert "exactly 2" in check_move(exact, Move.step("d4", "d5", 2))


@pytest.mark.parametrize(
    ("move", "words"),
    [
        (Move.step("d4", "e5", 1), "straight"),
        (Move.step("d4", "d7", 2), "exactly 2"),
        (Move.step("d4", "d8", 5), "between 1 and the height 3"),
        (Move.step("e6", "e5", 1), "top of e6 is R"),
        (Move.step("f5", "f6", 1), "f5 is empty"),
        (Move.place("c3"), "no reserve"),
        (Move.step("b3", "a2", 1), "cut corner"),
        (Move.swap("d4", "e6"), "swap"),
    ],
)
def test_illegal_moves_have_reasons(move: Move, words: str) -> None:
    s = diagram(put(EMPTY_BOARD, d4="RGG", e6="R", b3="G"))
    assert words in check_move(s, move)
    with pytest.raises(IllegalMoveError) as info:
        apply_move(s, move)
    assert isinstance(info.value, ValueError) and isinstance(info.value, RulesError)
    assert repr(move) in str(info.value) and "players: G R" in str(info.value)


def test_moves_off_the_board_and_onto_cut_cells_are_never_generated() -> None:
    s = diagram(put(EMPTY_BOARD, b2="GG", a3="G", c8="G", h6="R"))
    targets = {m.to_cell for m in legal_moves(s)}
    assert not targets & CUT_CELLS
    # b2 "GG": b3 c2 (1), b4 d2 (2); a3: a4 b3; c8: c7 d8 (b8 is cut)
    assert targets == {"b3", "c2", "b4", "d2", "a4", "c7", "d8"}


# -- overflow --------------------------------------------------------------------------------------


def test_overflow_own_pieces_go_to_the_reserve() -> None:
    s = diagram(put(EMPTY_BOARD, d3="GG", d5="GGRRR"))
    after, result = apply_move(s, Move.step("d3", "d5", 2))
    assert after.stack("d5") == "RRRGG"
    assert result.removed == "GG" and result.to_reserve == {"G": 2} and result.captured == {}
    assert after.reserves == {"G": 2, "R": 0}
    assert after.captured == {"G": {"R": 0}, "R": {"G": 0}}


def test_overflow_opponent_pieces_are_captured() -> None:
    s = diagram(put(EMPTY_BOARD, d3="GG", d5="RRGGG", a4="R"))
    after, result = apply_move(s, Move.step("d3", "d5", 2))
    assert after.stack("d5") == "GGGGG"
    assert result.removed == "RR" and result.captured == {"R": 2}
    assert after.captured["G"] == {"R": 2} and after.reserves["G"] == 0


def test_overflow_mixed_is_removed_bottom_first() -> None:
    s = diagram(put(EMPTY_BOARD, d3="GG", d5="RGRGR"))
    after, result = apply_move(s, Move.step("d3", "d5", 2))
    assert result.removed == "RG"
    assert after.stack("d5") == "RGRGG"
    assert after.reserves["G"] == 1 and after.captured["G"]["R"] == 1
    assert result.describe() == "remove 2 from the bottom of d5: 1 R captured, 1 G to G's reserve"


def test_reserve_placement_anywhere() -> None:
    s = diagram(put(EMPTY_BOARD, d4="R", e4="G"), reserves="G=2 R=0")
    for cell, expect in (("c6", "G"), ("d4", "RG"), ("e4", "GG")):
        after, result = apply_move(s, Move.place(cell))
        assert after.stack(cell) == expect and result.removed == ""
        assert after.reserves["G"] == 1
    assert sum(m.kind.value == "place" for m in legal_moves(s)) == 52


def test_reserve_placement_onto_a_five_stack_overflows() -> None:
    s = diagram(put(EMPTY_BOARD, d4="RGGGG", e4="GRRRR"), reserves="G=1 R=0")
    after, result = apply_move(s, Move.place("d4"))
    assert after.stack("d4") == "GGGGG" and result.removed == "R"
    assert after.captured["G"]["R"] == 1 and after.reserves["G"] == 0
    after, result = apply_move(s, Move.place("e4"))
    assert after.stack("e4") == "RRRRG" and result.removed == "G"
    assert after.reserves["G"] == 1  # the bottom green came straight back to the reserve


def test_partner_pieces_go_back_to_the_partners_reserve() -> None:
    s = diagram(put(EMPTY_BOARD, d4="G", d5="BRRRR", a4="R", a5="Y"),
                players="G R B Y", variant="partners")
    after, result = apply_move(s, Move.step("d4", "d5", 1))
    assert result.removed == "B" and result.to_reserve == {"B": 1} and result.captured == {}
    assert after.reserves["B"] == 1 and after.captured["G"]["B"] == 0


# -- turn order and the end -----------------------------------------------------------------------


def test_two_players_the_player_who_cannot_move_loses() -> None:
    s = diagram(put(EMPTY_BOARD, d4="G", d5="R", f6="G"))
    after, result = apply_move(s, Move.step("d4", "d5", 1))
    assert result.winner == "G"
    assert outcome(after) is not None
    assert outcome(after).termination is Termination.NO_MOVES and outcome(after).winner == "G"
    assert legal_moves(after) == []
    assert "game is over" in check_move(after, Move.step("d5", "d6", 1))


def test_two_players_a_reserve_keeps_the_loser_alive() -> None:
    s = diagram(put(EMPTY_BOARD, d4="G", d5="R"), reserves="G=0 R=1")
    after, result = apply_move(s, Move.step("d4", "d5", 1))
    assert result.winner is None and outcome(after) is None
    assert legal_moves(after) == [Move.place(c) for c in CELLS]


def test_fast_variant_wins_when_the_opponent_has_no_piece_on_the_board() -> None:
    rows = put(EMPTY_BOARD, d4="G", d5="RGGGG")
    for variant, expect in (("fast", "G"), ("standard", None)):
        s = diagram(rows, reserves="G=0 R=1", captured="G:R=4 R:G=0", variant=variant)
        after, result = apply_move(s, Move.step("d4", "d5", 1))
        assert result.removed == "R" and result.winner == expect
        if expect:
            assert outcome(after).termination is Termination.ALL_PIECES


def test_three_players_capturing_three_from_both_opponents_wins() -> None:
    rows = put(EMPTY_BOARD, d4="G", d5="RGGGG", a4="R", h4="B")
    s = diagram(rows, players="G R B", captured="G:R=2,B=3 R:G=0,B=0 B:G=0,R=0")
    after, result = apply_move(s, Move.step("d4", "d5", 1))
    assert result.winner == "G" and outcome(after).termination is Termination.CAPTURES
    s = diagram(rows, players="G R B", captured="G:R=2,B=2 R:G=0,B=0 B:G=0,R=0")
    _, result = apply_move(s, Move.step("d4", "d5", 1))
    assert result.winner is None  # 3 from red but only 2 from blue


def test_three_players_skip_a_player_without_a_move() -> None:
    s = diagram(put(EMPTY_BOARD, d4="G", d5="R", h4="B"), players="G R B")
    after, result = apply_move(s, Move.step("d4", "d5", 1))
    assert after.to_move == "B" and result.skipped_players == ("R",)
    assert result.winner is None and outcome(after) is None
    # blue uncovers red by moving off a stack: red is back in the game
    s = diagram(put(EMPTY_BOARD, d4="RB", h4="G", a5="R"), players="G R B", to_move="B")
    after, result = apply_move(s, Move.step("d4", "d3", 1))
    assert after.to_move == "G" and result.skipped_players == ()


def test_three_players_the_last_player_who_can_move_wins() -> None:
    s = diagram(put(EMPTY_BOARD, d4="G", d5="R", d6="B"), players="G R B")
    after, result = apply_move(s, Move.step("d4", "d5", 1))  # red is covered: skipped
    assert after.to_move == "B" and result.skipped_players == ("R",) and outcome(after) is None
    after, result = apply_move(after, Move.step("d6", "d5", 1))  # blue covers green too
    assert after.stack("d5") == "RGB"
    assert result.winner == "B" and result.skipped_players == ("G", "R")
    assert outcome(after).termination is Termination.LAST_TO_MOVE


def test_four_player_partners_win_together() -> None:
    rows = put(EMPTY_BOARD, d4="G", d5="RGGGG", a4="R", h4="B", c8="Y")
    caps = "G:R=2,B=0,Y=2 R:G=0,B=0,Y=0 B:G=0,R=0,Y=1 Y:G=0,R=0,B=0"
    s = diagram(rows, players="G R B Y", captured=caps, variant="partners")
    after, result = apply_move(s, Move.step("d4", "d5", 1))
    assert result.winner == "G"
    end = outcome(after)
    assert end.termination is Termination.CAPTURES and set(end.winners) == {"G", "B"}
    alone = diagram(rows, players="G R B Y", captured=caps)
    _, result = apply_move(alone, Move.step("d4", "d5", 1))
    assert result.winner is None  # individually G has 3 red, 2 yellow and 0 blue


def test_variant_options_are_checked() -> None:
    with pytest.raises(InvalidStateError, match="partners"):
        Variant(("G", "R", "B"), partners=True)
    with pytest.raises(InvalidStateError, match="fast"):
        Variant(("G", "R", "B"), fast=True)
    with pytest.raises(InvalidStateError, match="uppercase"):
        Variant(("G", "r"))


# -- anti-symmetry swap --------------------------------------------------------------------------


def test_anti_symmetry_swaps_come_first_and_may_not_restore_symmetry() -> None:
    s = State.standard_start(("G", "R"), anti_symmetry=True)
    assert "swap" in check_move(s, Move.step("c7", "c8", 1))
    moves = legal_moves(s)
    assert len(moves) == 18 * 18 and all(m.kind.value == "swap" for m in moves)
    s1, _ = apply_move(s, Move.swap("b7", "d7"))
    assert s1.top("b7") == "R" and s1.top("d7") == "G" and s1.to_move == "R"
    # swapping back, or the mirror image swap (ranks mirrored), restores the symmetry
    assert "symmetry" in check_move(s1, Move.swap("b7", "d7"))
    assert "symmetry" in check_move(s1, Move.swap("b2", "d2"))
    assert check_move(s1, Move.swap("c6", "e6")) is None
    assert len(legal_moves(s1)) < 18 * 18
    s2, _ = apply_move(s1, Move.swap("c6", "e6"))
    assert s2.move_number == 2 and s2.to_move == "G"
    assert all(m.kind.value == "step" for m in legal_moves(s2))


# -- text forms, errors, status -------------------------------------------------------------------

GOLDEN_TEXT = """players: G R B
variant: standard
to move: B
move: 17
reserves: G=1 R=0 B=2
captured: G:R=1,B=0 R:G=0,B=3 B:G=0,R=0
totals: G=12 R=12 B=12
   a     b     c     d     e     f     g     h
8  #     #     .     .     .     .     #     #
7  #     GRB   .     .     .     .     .     #
6  .     .     .     .     RRGBB .     .     .
5  .     .     G     .     .     .     .     .
4  .     .     .     .     .     .     .     B
3  R     .     .     .     .     .     .     .
2  #     .     .     .     .     .     .     #
1  #     #     .     .     .     .     #     #
"""


def test_text_round_trips_from_a_literal_diagram() -> None:
    s = State.from_text(GOLDEN_TEXT)
    assert s.to_text() == GOLDEN_TEXT
    assert s.stacks == {"b7": "GRB", "e6": "RRGBB", "c5": "G", "h4": "B", "a3": "R"}
    assert s.reserves == {"G": 1, "R": 0, "B": 2} and s.captured["R"] == {"G": 0, "B": 3}
    assert s.to_move == "B" and s.move_number == 17
    assert status(s) == Status.PIECES_MISSING  # the diagram holds far fewer than 12 each


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (("7  #     GRB", "7  .     GRB"), "cut cell a7"),
        (("5  .     .     G", "5  .     #     G"), "b5 is playable"),
        (("players: G R B", "players: G R"), "not one of players"),
        (("variant: standard", "variant: speedy"), "unknown variant"),
        (("to move: B", "to move: Q"), "to_move 'Q'"),
        (("reserves: G=1", "reserves: G=x"), "cannot read state"),
    ],
)
def test_bad_state_text_is_rejected(change: tuple[str, str], words: str) -> None:
    text = GOLDEN_TEXT.replace(*change)
    assert text != GOLDEN_TEXT
    with pytest.raises((InvalidNotationError, InvalidStateError)) as info:
        State.from_text(text)
    assert isinstance(info.value, ValueError)
    assert words in str(info.value)


def test_move_notation_round_trips_and_rejects_bad_cells() -> None:
    for move in (Move.step("d4", "d6", 2), Move.place("e5"), Move.swap("b7", "d7")):
        assert eval(repr(move)) == move
        assert Move.from_json(move.to_json()) == move
        assert Move.from_text(str(move)) == move
    assert Move.step("d4", "d6", 2).to_json() == {"from": "d4", "to": "d6", "count": 2}
    assert Move.place("e5").to_json() == {"place": "e5"}
    for bad in ({"from": "d4", "to": "a1", "count": 1}, {"place": "z9"}, {"to": "d5"},
                {"from": "d4", "to": "d5", "count": "1"}, ["d4"]):
        with pytest.raises(InvalidNotationError):
            Move.from_json(bad)
    with pytest.raises(InvalidNotationError, match="d4=d6"):
        Move.from_text("d4=d6")


def test_status_flags_impossible_camera_readings() -> None:
    tall = State.from_setup({"a3": "GGRRGG", "e4": "R"}, ("G", "R"))
    assert Status.STACK_TOO_TALL in status(tall)
    assert "at most 5" in check_move(tall, Move.step("a3", "g3", 6))
    assert max(m.count for m in legal_moves(tall)) == MAX_HEIGHT
    s = State.from_setup({"d4": "G", "e4": "R"}, ("G", "R"))
    assert status(s) == Status.VALID
    assert status(s, {"G": 18, "R": 1}) == Status.PIECES_MISSING
    assert status(s, {"G": 1, "R": 0}) == Status.PIECES_EXTRA
    assert Status.EMPTY_BOARD in status(State.from_setup({}, ("G", "R")))
    stuck = State.from_setup({"d4": "G"}, ("G", "R"), to_move="R")
    assert Status.TO_MOVE_CANNOT_MOVE in status(stuck)


def test_from_setup_names_what_is_wrong() -> None:
    with pytest.raises(InvalidStateError, match="h8"):
        State.from_setup({"h8": "G"}, ("G", "R"))
    with pytest.raises(InvalidStateError, match="'X'"):
        State.from_setup({"d4": "GX"}, ("G", "R"))
    with pytest.raises(InvalidStateError, match="to_move"):
        State.from_setup({"d4": "G"}, ("G", "R"), to_move="B")
    with pytest.raises(InvalidStateError, match=r"reserves\[G\]"):
        State.from_setup({"d4": "G"}, ("G", "R"), reserves={"G": -1})
    with pytest.raises(InvalidStateError, match=r"captured\[G\] must map"):
        State.from_setup({"d4": "G"}, ("G", "R"), captured={"G": 2})  # type: ignore[dict-item]
    with pytest.raises(InvalidStateError, match="totals must map"):
        State.from_setup({"d4": "G"}, ("G", "R"), totals=[18, 18])  # type: ignore[arg-type]
