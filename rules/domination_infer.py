"""Which Domination move explains what the camera sees?

The camera sees the top of each of the 52 cells (a player letter or "." for empty) and, when it
can, an estimated stack height with an uncertainty. A move changes at most two cells (source and
target of a step, the target of a placement, the two cells of a swap), so for each legal move the
predicted top and height of those cells are compared with the observation without building a
state; only the moves that fit are applied.

A move that changes no top at all (a reserve placed on one's own stack, a piece moved from one
own stack onto another while the source stays one's own) is *invisible* in the tops: such
candidates carry `invisible=True` and the referee asks the players to confirm. Different moves
can also lead to the very same state (e.g. a lone piece moved onto one of two own five-stacks
made only of own pieces): `moves_explaining` groups candidates by the state they lead to.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from rules.domination import (
    CELL_INDEX,
    CELLS,
    EMPTY,
    MAX_HEIGHT,
    N_CELLS,
    Move,
    MoveKind,
    State,
    apply_legal_move,
    legal_moves,
)
from rules.errors import InvalidObservationError


@dataclass(frozen=True)
class InferParams:
    """Tuning of `infer_moves`.

    max_mismatches: cells whose observed top (or height, beyond the gate) may disagree with the
        prediction; 0 = only moves that fit the tops exactly.
    gate_sigma: a height is consistent within this many standard deviations.
    default_height_sigma: sigma (in pieces) for heights given without an uncertainty.
    mismatch_penalty: score subtracted per mismatching cell.
    """

    max_mismatches: int = 0
    gate_sigma: float = 3.0
    default_height_sigma: float = 0.25
    mismatch_penalty: float = 10.0


@dataclass(frozen=True)
class Candidate:
    """A legal move consistent with the observation. Higher `score` is better (0 = perfect).

    score: the Gaussian log-likelihood of the observed heights (0 without heights) minus
        `mismatch_penalty` per mismatching cell.
    invisible: the move changes no top, so the tops alone cannot show it was played.
    """

    move: Move
    state_after: State
    score: float
    invisible: bool
    mismatches: int = 0


#: (cells changed, their predicted tops, their predicted heights)
Effect = tuple[tuple[int, ...], tuple[str, ...], tuple[int, ...]]


def move_effect(board: tuple[str, ...], mover: str, move: Move) -> Effect:
    """The cells a legal `move` changes with their new tops and heights (no state is built)."""
    t = CELL_INDEX[move.to_cell]
    if move.kind is MoveKind.PLACE:
        return (t,), (mover,), (min(MAX_HEIGHT, len(board[t]) + 1),)
    s = CELL_INDEX[move.from_cell]  # type: ignore[index]
    src, dst = board[s], board[t]
    if move.kind is MoveKind.SWAP:
        return (s, t), (dst[-1], src[-1]), (len(src), len(dst))
    k = move.count
    rest = len(src) - k
    return (s, t), (src[rest - 1] if rest > 0 else EMPTY, mover), (
        rest, min(MAX_HEIGHT, len(dst) + k)
    )


def _observation(
    state: State, observed_tops: Mapping[str, str]
) -> list[str]:
    if not isinstance(observed_tops, Mapping):
        raise InvalidObservationError(f"observed tops must map cell -> letter, got {observed_tops!r}")
    unknown = [c for c in observed_tops if c not in CELL_INDEX]
    missing = [c for c in CELLS if c not in observed_tops]
    if unknown or missing:
        raise InvalidObservationError(
            "observed tops must name exactly the 52 cells: "
            f"{len(unknown)} unknown {_few(sorted(map(str, unknown)))}, "
            f"{len(missing)} missing {_few(missing)}"
        )
    allowed = set(state.players) | {EMPTY}
    obs = [observed_tops[c] for c in CELLS]
    bad = {c: v for c, v in zip(CELLS, obs, strict=True) if v not in allowed}
    if bad:
        raise InvalidObservationError(
            f"observed tops must be one of {sorted(allowed)}; got {bad}"
        )
    return obs


def _few(names: list[str], n: int = 6) -> str:
    return "[" + ", ".join(names[:n]) + (", ..." if len(names) > n else "") + "]"


def _heights(
    heights: Mapping[str, float] | None,
    height_sigma: Mapping[str, float] | None,
    params: InferParams,
) -> tuple[list[float | None], list[float]]:
    h: list[float | None] = [None] * N_CELLS
    sig = [params.default_height_sigma] * N_CELLS
    if heights is None:
        return h, sig
    for c, v in heights.items():
        if c not in CELL_INDEX:
            raise InvalidObservationError(f"heights: {c!r} is not a playable cell")
        if not isinstance(v, int | float) or isinstance(v, bool) or not math.isfinite(v):
            raise InvalidObservationError(f"heights: {c} must be a finite number, got {v!r}")
        h[CELL_INDEX[c]] = float(v)
    for c, v in (height_sigma or {}).items():
        if c not in CELL_INDEX:
            raise InvalidObservationError(f"height_sigma: {c!r} is not a playable cell")
        if not isinstance(v, int | float) or isinstance(v, bool) or not v > 0:
            raise InvalidObservationError(f"height_sigma: {c} must be > 0, got {v!r}")
        sig[CELL_INDEX[c]] = float(v)
    return h, sig


def infer_moves(
    state: State,
    observed_tops: Mapping[str, str],
    heights: Mapping[str, float] | None = None,
    height_sigma: Mapping[str, float] | None = None,
    params: InferParams = InferParams(),
) -> list[Candidate]:
    """Every legal move consistent with the observed tops (and heights), best first.

    `observed_tops` names all 52 cells ("." = empty); `heights` (pieces, may be fractional
    estimates) and `height_sigma` (pieces) may cover any subset of the cells.
    """
    obs = _observation(state, observed_tops)
    obs_h, sig = _heights(heights, height_sigma, params)
    board = state.board
    mover = state.to_move
    gate = params.gate_sigma

    # Per-cell disagreement with "nothing moved", and its log-likelihood.
    bad_now = [0] * N_CELLS
    ll_now = [0.0] * N_CELLS
    for i, s in enumerate(board):
        top = s[-1] if s else EMPTY
        z = 0.0 if obs_h[i] is None else (obs_h[i] - len(s)) / sig[i]  # type: ignore[operator]
        ll_now[i] = -0.5 * z * z
        bad_now[i] = (top != obs[i]) + (abs(z) > gate)
    base_bad = sum(bad_now)
    base_ll = sum(ll_now)
    if base_bad > 2 * 2 + params.max_mismatches:  # a move changes at most 2 cells
        return []

    out: list[Candidate] = []
    for move in legal_moves(state):
        cells, tops, hs = move_effect(board, mover, move)
        bad = base_bad
        ll = base_ll
        for i, top, h in zip(cells, tops, hs, strict=True):
            bad -= bad_now[i]
            ll -= ll_now[i]
            z = 0.0 if obs_h[i] is None else (obs_h[i] - h) / sig[i]  # type: ignore[operator]
            ll += -0.5 * z * z
            bad += (top != obs[i]) + (abs(z) > gate)
        if bad > params.max_mismatches:
            continue
        invisible = all(
            top == (board[i][-1] if board[i] else EMPTY)
            for i, top in zip(cells, tops, strict=True)
        )
        after, _ = apply_legal_move(state, move)
        score = round(ll - params.mismatch_penalty * bad, 9)  # drop float cancellation noise
        out.append(Candidate(move, after, score, invisible, bad))
    out.sort(key=lambda c: (-c.score, c.invisible))
    return out


def moves_explaining(
    state: State,
    observed_tops: Mapping[str, str],
    heights: Mapping[str, float] | None = None,
    height_sigma: Mapping[str, float] | None = None,
    params: InferParams = InferParams(),
) -> list[list[Candidate]]:
    """`infer_moves` grouped by the state each move leads to, best group first.

    One group = one outcome: the referee need not ask which move of a group was played.
    """
    groups: dict[State, list[Candidate]] = {}
    for cand in infer_moves(state, observed_tops, heights, height_sigma, params):
        groups.setdefault(cand.state_after, []).append(cand)
    return list(groups.values())
