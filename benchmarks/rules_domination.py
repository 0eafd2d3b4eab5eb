"""Speed of the Domination engine on a mid-game position (issue 7 targets).

`figures()` returns (name, milliseconds, target) rows; `benchmarks/bench_rules.py` prints them,
and `python benchmarks/rules_domination.py` prints them alone.
"""

from __future__ import annotations

import timeit

import numpy as np

from rules.domination import State, apply_move, legal_moves
from rules.domination_infer import infer_moves


def mid_game(seed: int = 7, plies: int = 40) -> State:
    """The standard start after `plies` seeded random moves, with 2 reserve pieces to place."""
    rng = np.random.default_rng(seed)
    state = State.standard_start()
    for _ in range(plies):
        moves = legal_moves(state)
        state, _ = apply_move(state, moves[int(rng.integers(len(moves)))])
    reserves = {p: 2 for p in state.players}
    return State.from_setup(state.stacks, variant=state.variant, reserves=reserves,
                            captured=state.captured, to_move=state.to_move,
                            move_number=state.move_number)


def _ms(fn: object, number: int = 200, repeat: int = 5) -> float:
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1000.0  # type: ignore[arg-type]


def figures() -> list[tuple[str, float, str]]:
    state = mid_game()
    moves = legal_moves(state)
    # the move whose picture is judged: a step that lands on a stack (the costliest kind)
    move = next(m for m in moves if m.from_cell and state.stack(m.to_cell))
    after, _ = apply_move(state, move)
    tops, heights = after.tops(), after.heights()
    n = len(moves)
    return [
        (f"domination legal moves, mid-game ({n} moves)", _ms(lambda: legal_moves(state)),
         "well under 1 ms"),
        ("domination apply a move (with checks)", _ms(lambda: apply_move(state, move)), "< 1 ms"),
        (f"domination inference over all {n} legal moves, tops",
         _ms(lambda: infer_moves(state, tops)), "< 20 ms"),
        (f"domination inference over all {n} legal moves, tops + heights",
         _ms(lambda: infer_moves(state, tops, heights)), "< 20 ms"),
    ]


def main() -> None:
    for name, ms, target in figures():
        print(f"{name:<62} {ms:9.4f} ms   (target {target})")


if __name__ == "__main__":
    main()
