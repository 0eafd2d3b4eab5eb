"""Scripted matches for the simulated table, made with the rules engines.

`hardware/` knows no rules, so the matches it plays come from here: random but legal Dition
matches with captures, a sacrifice and a final suicide, and Domination matches with overflows and
reserve placements. A script is a list of `Turn`s at the rules level; `referee.simtable` turns it
into the sim's hand-and-pieces steps.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from rules import dition as rd
from rules import domination as rdom
from rules.domination_infer import infer_moves

#: A generated placement stays this far from the thresholds, so a demo never needs the players.
CLEAR_MARGIN = 0.12


@dataclass(frozen=True)
class DitionTurn:
    before: rd.Position
    x: float
    y: float
    colour: str
    verdict: rd.Verdict
    after: rd.Position  # after the discs that disappear are gone

    @property
    def with_placed(self) -> tuple[rd.Disc, ...]:
        """The board right after the hand put the disc down, before any removal."""
        return self.before.discs + (rd.Disc(self.x, self.y, rd.Colour(self.colour)),)


def _clear(position: rd.Position, x: float, y: float) -> bool:
    for d in position.discs:
        dist = math.hypot(x - d.x, y - d.y)
        if abs(dist - 2.0) < CLEAR_MARGIN or abs(dist - 1.0) < CLEAR_MARGIN / 2 and dist > 1.0:
            return False
        if dist < 1.0 + CLEAR_MARGIN / 2:
            return False
    return 0.5 + 0.05 <= x <= 19.5 - 0.05 and 0.5 + 0.05 <= y <= 19.5 - 0.05


def _candidates(position: rd.Position, rng: np.random.Generator, n: int) -> np.ndarray:
    side = position.to_move
    own = np.array([(d.x, d.y) for d in position.discs if d.colour == side]).reshape(-1, 2)
    opp = np.array([(d.x, d.y) for d in position.discs if d.colour != side]).reshape(-1, 2)
    pts = [rng.uniform(4.0, 16.0, size=(max(n // 5, 1), 2))]
    for anchors, share in ((opp, 0.55), (own, 0.25)):
        if len(anchors):
            k = int(n * share)
            base = anchors[rng.integers(0, len(anchors), size=k)]
            r = rng.uniform(1.05, 1.95, size=k)
            a = rng.uniform(0, 2 * math.pi, size=k)
            pts.append(base + np.stack([r * np.cos(a), r * np.sin(a)], axis=1))
    return np.concatenate(pts)


def generate_dition_match(
    rng: np.random.Generator,
    *,
    min_moves: int = 14,
    max_moves: int = 44,
    candidates: int = 160,
    attempts: int = 40,
    start: rd.Position | None = None,
) -> list[DitionTurn]:
    """A legal match with at least two captures, a sacrifice, ending in a suicide.

    `start`: carry on a match from this position (after an undo or a correction in the demo):
    then a few moves and a suicide are enough."""
    for _ in range(attempts):
        turns = _try_dition_match(rng, min_moves, max_moves, candidates, start)
        if turns is not None:
            return turns
    raise RuntimeError("could not generate a Dition match with captures, a sacrifice and a suicide"
                       + (" from this position" if start is not None else ""))


def _try_dition_match(
    rng: np.random.Generator, min_moves: int, max_moves: int, n: int,
    start: rd.Position | None = None,
) -> list[DitionTurn] | None:
    position = start if start is not None else rd.Position.empty()
    turns: list[DitionTurn] = []
    captures = sacrifices = 0
    if start is not None:  # carrying on: the match already had its story
        captures, sacrifices, min_moves = 2, 1, min(min_moves, 4)
    while len(turns) < max_moves:
        options: dict[str, list[tuple[float, float, rd.Position, rd.Verdict, int]]] = {}
        for x, y in _candidates(position, rng, n):
            x, y = float(x), float(y)
            if not _clear(position, x, y) or not rd.check_placement(position, x, y).legal:
                continue
            after, verdict = rd.apply_placement(position, x, y)
            pressure = sum(
                1
                for d in position.discs
                if d.colour != position.to_move and math.hypot(x - d.x, y - d.y) < 2.0
            )
            options.setdefault(verdict.outcome.value, []).append((x, y, after, verdict, pressure))
        ending = len(turns) >= min_moves and captures >= 2 and sacrifices >= 1
        if ending and options.get("suicide"):
            pick = options["suicide"][0]
        elif sacrifices == 0 and len(turns) >= 6 and options.get("sacrifice"):
            pick = options["sacrifice"][0]
        elif options.get("capture") and rng.random() < 0.85:
            pick = options["capture"][int(rng.integers(len(options["capture"])))]
        elif options.get("placed"):
            safe = options["placed"]
            best = max(p[4] for p in safe)
            # Aggressive but not reckless: crowd the opponent so that captures come.
            near = [p for p in safe if p[4] >= best - 1] if rng.random() < 0.7 else safe
            pick = near[int(rng.integers(len(near)))]
        else:
            return None
        x, y, after, verdict, _ = pick
        turns.append(DitionTurn(position, x, y, position.to_move.value, verdict, after))
        outcome = verdict.outcome.value
        captures += outcome == "capture"
        sacrifices += outcome == "sacrifice"
        if outcome == "suicide":
            return turns
        position = after
    return None


# -- Domination ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class DominationTurn:
    before: Any  # rdom.State
    move: Any  # rdom.Move
    result: Any  # rdom.MoveResult
    after: Any  # rdom.State


def generate_domination_match(
    rng: np.random.Generator,
    *,
    players: tuple[str, ...] = ("G", "R"),
    moves: int = 30,
    attempts: int = 40,
    start: Any = None,
) -> list[DominationTurn]:
    """A legal match with overflows and at least one reserve placement, every move visible.

    Moves that change no visible top (a reserve placed on one's own stack, or a move that leaves
    every top colour as it was) are avoided, so that a demo never has to ask the players.
    `start` (an `rdom.State`): carry on from there; any visible legal moves will do.
    """
    for _ in range(attempts):
        if start is not None:
            state = start
        else:
            state = rdom.State.standard_start(players) if len(players) == 2 else None
        if state is None:
            raise ValueError("scripted Domination matches are two-player")
        turns: list[DominationTurn] = []
        overflows = reserves = 0
        for _ in range(moves):
            legal = rdom.legal_moves(state)
            if not legal:
                break
            scored = []
            for move in legal:
                after, result = rdom.apply_move(state, move)
                if _tops(after) == _tops(state):
                    continue  # invisible
                if len(infer_moves(state, _tops(after))) != 1:
                    continue  # keep the demo free of questions
                score = rng.random()
                score += 2.0 * len(result.removed)
                score += 3.0 if move.kind == rdom.MoveKind.PLACE and reserves == 0 else 0.0
                scored.append((score, move, after, result))
            if not scored:
                break
            scored.sort(key=lambda t: -t[0])
            _, move, after, result = scored[0]
            turns.append(DominationTurn(state, move, result, after))
            overflows += bool(result.removed)
            reserves += move.kind == rdom.MoveKind.PLACE
            state = after
            if rdom.outcome(state) is not None:
                break
        if (overflows >= 2 and reserves >= 1) or (start is not None and turns):
            return turns
    raise RuntimeError("could not generate a Domination match with overflows and a reserve move")


def _tops(state: Any) -> dict[str, str]:
    return {cell: (state.stacks.get(cell) or ".")[-1] for cell in rdom.CELLS}
