"""Move inference from observed tops (and heights): golden cases and error handling."""

from __future__ import annotations

import pytest

from rules.domination import CELLS, Move, State, apply_move
from rules.domination_infer import InferParams, infer_moves, moves_explaining
from rules.errors import InvalidObservationError


def setup(stacks: dict[str, str], **kw: object) -> State:
    return State.from_setup(stacks, ("G", "R"), **kw)  # type: ignore[arg-type]


def observe(state: State, move: Move) -> tuple[dict[str, str], dict[str, int]]:
    after, _ = apply_move(state, move)
    return after.tops(), after.heights()


def test_a_plain_step_is_found_alone() -> None:
    s = State.standard_start()
    tops, _ = observe(s, Move.step("d6", "d5", 1))
    cands = infer_moves(s, tops)
    assert [c.move for c in cands] == [Move.step("d6", "d5", 1)]
    assert not cands[0].invisible and cands[0].score == 0.0
    assert cands[0].state_after.stack("d5") == "RG"


def test_tops_alone_can_be_ambiguous_and_heights_settle_it() -> None:
    # +e5 and e3-e5/2 both leave e3 green and put green on e5
    s = setup({"e3": "GGG", "a4": "R"}, reserves={"G": 1})
    place, step = Move.place("e5"), Move.step("e3", "e5", 2)
    for played, other in ((place, step), (step, place)):
        tops, heights = observe(s, played)
        assert {c.move for c in infer_moves(s, tops)} == {place, step}
        exact = infer_moves(s, tops, heights, {c: 0.1 for c in CELLS})
        assert [c.move for c in exact] == [played]
        noisy = {c: h + 0.3 for c, h in heights.items()}
        ranked = infer_moves(s, tops, noisy, {c: 0.8 for c in CELLS})  # both in the gate
        assert [c.move for c in ranked] == [played, other]
        assert ranked[0].score > ranked[1].score


def test_a_reserve_on_ones_own_stack_is_invisible_in_the_tops() -> None:
    s = setup({"d4": "RG", "a4": "R", "f5": "G"}, reserves={"G": 1})
    tops, heights = observe(s, Move.place("d4"))
    assert tops == s.tops()
    cands = infer_moves(s, tops)
    assert Move.place("d4") in [c.move for c in cands]
    assert all(c.invisible for c in cands)
    # the stack grew by one: exact heights pick the placement out
    exact = infer_moves(s, tops, heights, {c: 0.1 for c in CELLS})
    assert [c.move for c in exact] == [Move.place("d4")] and exact[0].invisible


def test_moves_to_identical_states_form_one_group() -> None:
    # a reserve on either all-green five-stack: the bottom green goes straight back
    s = setup({"c3": "GGGGG", "f6": "GGGGG", "a4": "R"}, reserves={"G": 1})
    tops, heights = observe(s, Move.place("c3"))
    groups = moves_explaining(s, tops, heights, {c: 0.1 for c in CELLS})
    assert len(groups) == 1
    assert {c.move for c in groups[0]} == {Move.place("c3"), Move.place("f6")}


def test_what_falls_off_a_five_stack_is_hidden_from_the_camera() -> None:
    # d4 goes onto d5 (captures red) or d3 (own green back to reserve): same picture
    s = setup({"d4": "G", "d5": "RGGGG", "d3": "GGGGG", "a5": "R"})
    tops, heights = observe(s, Move.step("d4", "d5", 1))
    groups = moves_explaining(s, tops, heights, {c: 0.1 for c in CELLS})
    assert len(groups) == 2
    outcomes = {g[0].move.to_cell: g[0].state_after.captured["G"]["R"] for g in groups}
    assert outcomes == {"d5": 1, "d3": 0}


def test_a_misread_cell_is_tolerated_only_when_asked() -> None:
    s = State.standard_start()
    tops, _ = observe(s, Move.step("d6", "d5", 1))
    tops["b3"] = "R"  # misread: b3 is green
    assert infer_moves(s, tops) == []
    cands = infer_moves(s, tops, params=InferParams(max_mismatches=1))
    assert cands[0].move == Move.step("d6", "d5", 1) and cands[0].mismatches == 1
    assert cands[0].score < 0


def test_a_picture_no_move_explains_gives_nothing() -> None:
    s = State.standard_start()
    tops = s.tops()
    tops["c7"], tops["d6"], tops["e5"] = ".", ".", "."
    assert infer_moves(s, tops) == []


def test_the_swap_phase_is_inferred_too() -> None:
    s = State.standard_start(anti_symmetry=True)
    tops, _ = observe(s, Move.swap("b7", "d7"))
    assert [c.move for c in infer_moves(s, tops)] == [Move.swap("b7", "d7")]


@pytest.mark.parametrize(
    ("edit", "words"),
    [
        (lambda t: t.pop("c1"), "1 missing [c1]"),
        (lambda t: t.update(a1="."), "1 unknown [a1]"),
        (lambda t: t.update(d4="B"), "'d4': 'B'"),
    ],
)
def test_bad_observations_are_named(edit: object, words: str) -> None:
    s = State.standard_start()
    tops = s.tops()
    edit(tops)  # type: ignore[operator]
    with pytest.raises(InvalidObservationError) as info:
        infer_moves(s, tops)
    assert isinstance(info.value, ValueError) and words in str(info.value)


def test_bad_heights_are_named() -> None:
    s = State.standard_start()
    with pytest.raises(InvalidObservationError, match="heights: d4"):
        infer_moves(s, s.tops(), {"d4": float("nan")})
    with pytest.raises(InvalidObservationError, match="height_sigma: d4"):
        infer_moves(s, s.tops(), {"d4": 1.0}, {"d4": 0.0})
