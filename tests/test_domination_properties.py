"""Property tests over random Domination playouts (seeded np.random.Generator via hypothesis)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from rules.domination import (
    CELLS,
    MAX_HEIGHT,
    Move,
    MoveKind,
    State,
    Variant,
    apply_move,
    check_move,
    legal_moves,
    outcome,
)
from rules.domination_infer import infer_moves, moves_explaining

PLAYERS = {2: ("G", "R"), 3: ("G", "R", "B"), 4: ("G", "R", "B", "Y")}


def random_start(rng: np.random.Generator, n_players: int, *, partners: bool = False,
                 up_to_k: bool = False, dense: bool = True) -> State:
    """A start with stacks 1..5 high (dense) or single pieces, and a few reserve pieces."""
    players = PLAYERS[n_players]
    variant = Variant(players, partners=partners and n_players == 4, up_to_k=up_to_k)
    if n_players == 2 and not dense:
        return State.standard_start(players, up_to_k=up_to_k)
    pieces = [p for p in players for _ in range(12)]
    rng.shuffle(pieces)
    cells = list(rng.permutation(len(CELLS)))
    stacks: dict[str, str] = {}
    while pieces:
        cell = CELLS[cells.pop()]
        h = int(rng.integers(1, MAX_HEIGHT + 1)) if dense else 1
        stacks[cell], pieces = "".join(pieces[:h]), pieces[h:]
    reserves = {p: int(rng.integers(0, 3)) for p in players}
    return State.from_setup(stacks, variant=variant, reserves=reserves)


def playout(rng: np.random.Generator, state: State, plies: int) -> Iterator[tuple[State, Move]]:
    """(state, move played in it) for up to `plies` random legal moves."""
    for _ in range(plies):
        moves = legal_moves(state)
        if not moves:
            return
        move = moves[int(rng.integers(len(moves)))]
        yield state, move
        state, _ = apply_move(state, move)


def counts(state: State) -> dict[str, int]:
    """Pieces of each player accounted for, counted from the public views."""
    out = {}
    for p in state.players:
        board = sum(s.count(p) for s in state.stacks.values())
        taken = sum(row.get(p, 0) for a, row in state.captured.items() if a != p)
        out[p] = board + state.reserves[p] + taken
    return out


games = st.tuples(
    st.integers(0, 2**32 - 1),
    st.sampled_from([2, 3, 4]),
    st.booleans(),
    st.booleans(),
    st.booleans(),
)


@settings(max_examples=40, deadline=None)
@given(games)
def test_pieces_are_conserved_and_text_round_trips(game: tuple[int, int, bool, bool, bool]) -> None:
    seed, n, partners, up_to_k, dense = game
    rng = np.random.default_rng(seed)
    start = random_start(rng, n, partners=partners, up_to_k=up_to_k, dense=dense)
    initial = counts(start)
    for state, move in playout(rng, start, 80):
        after, result = apply_move(state, move)
        assert counts(after) == initial
        assert all(len(s) <= MAX_HEIGHT for s in after.stacks.values())
        assert len(result.removed) == sum(result.to_reserve.values()) + sum(
            result.captured.values())
        text = after.to_text()
        again = State.from_text(text)
        assert again == after and again.to_text() == text


def _every_conceivable_move() -> list[Move]:
    moves = [Move.place(c) for c in CELLS]
    moves += [Move.step(a, b, k) for a in CELLS for b in CELLS if a != b for k in range(1, 6)]
    return moves


CONCEIVABLE = _every_conceivable_move()


@settings(max_examples=12, deadline=None)
@given(games)
def test_generator_and_checker_agree(game: tuple[int, int, bool, bool, bool]) -> None:
    seed, n, partners, up_to_k, dense = game
    rng = np.random.default_rng(seed)
    start = random_start(rng, n, partners=partners, up_to_k=up_to_k, dense=dense)
    for ply, (state, _) in enumerate(playout(rng, start, 30)):
        if ply % 10:
            continue
        generated = legal_moves(state)
        assert len(set(generated)) == len(generated)
        assert set(generated) == {m for m in CONCEIVABLE if check_move(state, m) is None}


MIRROR = {c: "abcdefgh"[7 - "abcdefgh".index(c[0])] + c[1] for c in CELLS}


def mirror_state(state: State) -> State:
    stacks = {MIRROR[c]: s for c, s in state.stacks.items()}
    return State.from_setup(stacks, variant=state.variant, reserves=state.reserves,
                            captured=state.captured, to_move=state.to_move,
                            move_number=state.move_number, totals=state.piece_totals)


def mirror_move(move: Move) -> Move:
    if move.kind is MoveKind.PLACE:
        return Move.place(MIRROR[move.to_cell])
    return Move.step(MIRROR[move.from_cell], MIRROR[move.to_cell], move.count)


@settings(max_examples=20, deadline=None)
@given(games)
def test_rules_are_symmetric_under_mirroring_the_board(game: tuple[int, int, bool, bool, bool]) -> None:
    seed, n, partners, up_to_k, dense = game
    rng = np.random.default_rng(seed)
    start = random_start(rng, n, partners=partners, up_to_k=up_to_k, dense=dense)
    for state, move in playout(rng, start, 40):
        mirrored = mirror_state(state)
        assert {mirror_move(m) for m in legal_moves(state)} == set(legal_moves(mirrored))
        after, result = apply_move(state, move)
        after_m, result_m = apply_move(mirrored, mirror_move(move))
        assert after_m == mirror_state(after)
        assert result_m.removed == result.removed and result_m.winner == result.winner


@settings(max_examples=40, deadline=None)
@given(games)
def test_inference_contains_the_move_played(game: tuple[int, int, bool, bool, bool]) -> None:
    seed, n, partners, up_to_k, dense = game
    rng = np.random.default_rng(seed)
    start = random_start(rng, n, partners=partners, up_to_k=up_to_k, dense=dense)
    for state, move in playout(rng, start, 60):
        after, _ = apply_move(state, move)
        tops_only = infer_moves(state, after.tops())
        assert move in [c.move for c in tops_only]
        for cand in tops_only:  # every candidate really explains the picture
            assert cand.state_after.tops() == after.tops()
        with_heights = infer_moves(state, after.tops(), after.heights())
        assert move in [c.move for c in with_heights]
        assert with_heights[0].score == 0.0


EXACT = {c: 0.1 for c in CELLS}  # heights known to a tenth of a piece


@settings(max_examples=40, deadline=None)
@given(games)
def test_tops_and_exact_heights_leave_only_what_the_game_hides(
    game: tuple[int, int, bool, bool, bool],
) -> None:
    """Unique up to identical states, except below a five-stack the move landed on.

    Different outcomes can only come from moves landing on a stack that was already 5 high and
    topped by the mover: its height and top do not change, only what falls off its bottom.
    """
    seed, n, partners, up_to_k, dense = game
    rng = np.random.default_rng(seed)
    start = random_start(rng, n, partners=partners, up_to_k=up_to_k, dense=dense)
    for state, move in playout(rng, start, 60):
        after, _ = apply_move(state, move)
        groups = moves_explaining(state, after.tops(), after.heights(), EXACT)
        assert any(c.move == move for g in groups for c in g)
        for group in groups:
            assert len({c.state_after for c in group}) == 1
        if len(groups) > 1:
            for cand in (c for g in groups for c in g):
                landing = state.stack(cand.move.to_cell)
                assert len(landing) == MAX_HEIGHT and landing[-1] == state.to_move


def _can_move(state: State, player: str) -> bool:
    return state.reserves[player] > 0 or any(s[-1] == player for s in state.stacks.values())


def ended_oracle(state: State) -> set[str] | None:
    """The winning side by the rules of seeds/domination.md, from the public views alone."""
    players = state.players
    if len(players) == 2:
        a, b = players
        if state.variant.fast:
            for loser, winner in ((a, b), (b, a)):
                if not any(loser in s for s in state.stacks.values()):
                    return {winner}
        if not _can_move(state, state.to_move):
            return {b if state.to_move == a else a}
        return None
    if state.variant.partners:
        sides = [{players[0], players[2]}, {players[1], players[3]}]
    else:
        sides = [{p} for p in players]
    for side in sides:
        if all(sum(state.captured[w][o] for w in side) >= 3 for o in players if o not in side):
            return side
    movable = [side for side in sides if any(_can_move(state, p) for p in side)]
    return movable[0] if len(movable) == 1 else None


@settings(max_examples=30, deadline=None)
@given(games)
def test_greedy_games_end_exactly_when_the_rules_say(game: tuple[int, int, bool, bool, bool]) -> None:
    """Capture-greedy playouts reach every kind of ending; outcome() agrees with an oracle."""
    seed, n, partners, fast, dense = game
    rng = np.random.default_rng(seed)
    start = random_start(rng, n, partners=partners, dense=dense)
    if fast and n == 2:
        start = State.from_setup(start.stacks, variant=Variant(start.players, fast=True),
                                 reserves=start.reserves)
    state, result = start, None
    for _ in range(150):
        expected = ended_oracle(state)
        end = outcome(state)
        assert (end is None) == (expected is None)
        if end is not None:
            assert set(end.winners) == expected and end.winner in expected
            assert legal_moves(state) == []
            if result is not None:  # the last move won the game for the mover's side
                assert result.winner in expected and result.mover in expected
            return
        options = []
        for move in legal_moves(state):
            after, res = apply_move(state, move)
            foes = sum(s[-1] != state.to_move for s in after.stacks.values())
            options.append((sum(res.captured.values()), -foes, rng.random(), after, res))
        best = max(options, key=lambda o: o[:3])
        state, result = best[3], best[4]
        assert result.winner is None or ended_oracle(state) is not None
