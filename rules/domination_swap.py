"""Sackson's anti-symmetry option for 2 players: the pre-game swap of one piece each.

Without it the second player can at least draw by copying every move in mirror image (Paul
Yearout's observation, reported by Martin Gardner). With `Variant(anti_symmetry=True)` the first
two moves of the game are swaps: the player to move exchanges one piece on top of a stack of his
with the top piece of one of the opponent's stacks (`Move.swap(own_cell, other_cell)`). The
second swap must not give a position that is symmetric again, that is: no rotation or mirror
of the board maps the position onto itself with the two colours exchanged.
"""

from __future__ import annotations

from rules.domination import (
    CELL_INDEX,
    CELLS,
    FILES,
    N_CELLS,
    Move,
    MoveKind,
    State,
)


def _symmetries() -> tuple[tuple[int, ...], ...]:
    """The 7 non-identity symmetries of the board as permutations of cell indices."""
    maps = (
        lambda f, r: (7 - r, f), lambda f, r: (7 - f, 7 - r), lambda f, r: (r, 7 - f),
        lambda f, r: (7 - f, r), lambda f, r: (f, 7 - r), lambda f, r: (r, f),
        lambda f, r: (7 - r, 7 - f),
    )
    out = []
    for m in maps:
        perm = []
        for cell in CELLS:
            f2, r2 = m(FILES.index(cell[0]), int(cell[1]) - 1)
            perm.append(CELL_INDEX[FILES[f2] + str(r2 + 1)])
        out.append(tuple(perm))
    return tuple(out)


SYMMETRIES = _symmetries()


def is_colour_symmetric(board: tuple[str, ...], a: str, b: str) -> bool:
    """True when some board symmetry maps `board` onto itself with colours a and b exchanged."""
    table = str.maketrans(a + b, b + a)
    swapped = [s.translate(table) for s in board]
    return any(
        all(board[perm[i]] == swapped[i] for i in range(N_CELLS)) for perm in SYMMETRIES
    )


def swap_board(state: State, move: Move) -> list[str]:
    board = list(state.board)
    i, j = CELL_INDEX[move.from_cell], CELL_INDEX[move.to_cell]  # type: ignore[index]
    board[i], board[j] = board[i][:-1] + board[j][-1], board[j][:-1] + board[i][-1]
    return board


def check_swap(state: State, move: Move) -> str | None:
    if move.kind is not MoveKind.SWAP:
        return (f"with the anti-symmetry option the first two moves are swaps "
                f"(move {state.move_number + 1} must be Move.swap(own_cell, other_cell))")
    me = state.to_move
    own, other = state.board[CELL_INDEX[move.from_cell]], state.board[CELL_INDEX[move.to_cell]]  # type: ignore[index]
    if not own or own[-1] != me:
        return f"{move.from_cell} does not hold a piece of {me} on top"
    if not other or other[-1] == me:
        return f"{move.to_cell} does not hold an opponent's piece on top"
    if state.move_number == 1:
        a, b = state.players
        if is_colour_symmetric(tuple(swap_board(state, move)), a, b):
            return f"swapping {move.from_cell} and {move.to_cell} restores the symmetry"
    return None


def legal_swaps(state: State) -> list[Move]:
    me = state.to_move
    own = [c for c, s in zip(CELLS, state.board, strict=True) if s and s[-1] == me]
    other = [c for c, s in zip(CELLS, state.board, strict=True) if s and s[-1] != me]
    moves = [Move.swap(a, b) for a in own for b in other]
    if state.move_number == 1:
        moves = [m for m in moves if check_swap(state, m) is None]
    return moves
