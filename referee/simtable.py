"""The simulated table playing a generated match: rules-level turns -> the sim's steps.

`hardware.sim.ScriptedTable` knows no rules: it shows pieces, moves a hand and changes the pieces
when it is told to. This module writes that script from a match made by `referee.scripts`, the
way real players behave: a still board, a hand placing a piece, the hand leaving, a pause for the
referee's verdict, a hand taking away what the verdict removed, sometimes a bump of the camera or
a dropped frame.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hardware import sim
from referee import scripts
from rules import domination as rdom
from vision.camera import Intrinsics


@dataclass(frozen=True)
class Pace:
    """Frames per phase of a turn (the demo runs at a few frames a second)."""

    still: int = 4
    hand: int = 6
    verdict: int = 6
    end: int = 25
    bump_every: int = 0  # a camera bump every n turns (0: never)
    drop_every: int = 0  # a dropped frame every n turns (0: never)
    mistake_every: int = 0  # a player's mistake every n turns (0: never), put right afterwards


def _sim_discs(discs: Sequence[Any]) -> tuple[Any, ...]:
    return tuple(sim.SimDisc(float(d.x), float(d.y), d.colour.value) for d in discs)


def dition_steps(turns: Sequence[scripts.DitionTurn], pace: Pace, rng: np.random.Generator,
                 camera: Any) -> list[Any]:
    steps: list[Any] = [sim.Still((), pace.still * 2, label={"turn": -1})]
    for n, turn in enumerate(turns):
        before = _sim_discs(turn.before.discs)
        placed = _sim_discs(turn.with_placed)
        after = _sim_discs(turn.after.discs)
        label = {"turn": n, "colour": turn.colour, "x": turn.x, "y": turn.y,
                 "outcome": turn.verdict.outcome.value}
        mistake = bool(pace.mistake_every) and n % pace.mistake_every == pace.mistake_every - 1
        if mistake:
            # the wrong colour first: the referee must refuse it, the player takes it back
            other = "white" if turn.colour == "black" else "black"
            wrong = before + (sim.SimDisc(turn.x, turn.y, other),)
            bad = {**label, "mistake": "wrong_colour"}
            steps.append(sim.HandPlace(before, wrong, (turn.x, turn.y), pace.hand, label=bad))
            steps.append(sim.Still(wrong, pace.verdict, label=bad))
            steps.append(sim.HandRemove(wrong, before, ((turn.x, turn.y),), pace.hand, label=bad))
            steps.append(sim.Still(before, pace.still, label=bad))
        steps.append(sim.HandPlace(before, placed, (turn.x, turn.y), pace.hand, label=label))
        steps.append(sim.Still(placed, pace.verdict, label=label))
        if turn.verdict.outcome.value == "suicide":
            steps.append(sim.Still(placed, pace.end, label=label))
            break
        if len(after) != len(placed):
            gone = [d for d in placed if d not in after]
            if mistake and after:
                # a disc that stays is taken away by mistake, then put back
                keep = after[0]
                slip = tuple(d for d in placed if d != keep)
                bad = {**label, "mistake": "wrong_removed"}
                steps.append(sim.HandRemove(placed, slip, ((keep.x, keep.y),), pace.hand,
                                            label=bad))
                steps.append(sim.Still(slip, pace.verdict, label=bad))
                steps.append(sim.HandPlace(slip, placed, (keep.x, keep.y), pace.hand, label=bad))
                steps.append(sim.Still(placed, pace.still, label=bad))
            steps.append(sim.HandRemove(placed, after, tuple((d.x, d.y) for d in gone),
                                        pace.hand, label=label))
            steps.append(sim.Still(after, pace.still, label=label))
        if pace.bump_every and n % pace.bump_every == pace.bump_every - 1:
            steps.append(sim.Bump(_bumped(camera, rng)))
            steps.append(sim.Still(after, pace.still, label=label))
        if pace.drop_every and n % pace.drop_every == pace.drop_every // 2:
            steps.append(sim.Drop(1))
    return steps


def _bumped(camera: Any, rng: np.random.Generator) -> Any:
    """The same camera knocked a little: a few tenths of a degree and a few millimetres."""
    from dataclasses import replace

    rvec = np.asarray(camera.rvec, dtype=float) + rng.normal(0, 0.004, 3)
    tvec = np.asarray(camera.tvec, dtype=float) + rng.normal(0, 0.08, 3)
    return replace(camera, rvec=rvec, tvec=tvec)


def domination_steps(turns: Sequence[scripts.DominationTurn], pace: Pace,
                     rng: np.random.Generator | None = None, camera: Any = None) -> list[Any]:
    if not turns:
        return []
    start = dict(turns[0].before.stacks)
    steps: list[Any] = [sim.Still(start, pace.still * 2, label={"turn": -1})]
    for n, turn in enumerate(turns):
        before = {c: s for c, s in turn.before.stacks.items() if s}
        after = {c: s for c, s in turn.after.stacks.items() if s}
        mj = turn.move.to_json()
        target_cell = mj.get("to") or mj.get("place")
        label = {"turn": n, "colour": turn.before.to_move, "move": mj,
                 "removed": turn.result.removed}
        steps.append(sim.HandPlace(before, after, rdom.cell_centre(target_cell), pace.hand,
                                   label=label))
        steps.append(sim.Still(after, pace.verdict, label=label))
        if pace.bump_every and camera is not None and rng is not None and (
                n % pace.bump_every == pace.bump_every - 1):
            steps.append(sim.Bump(_bumped(camera, rng)))
            steps.append(sim.Still(after, pace.still, label=label))
        if pace.drop_every and n % pace.drop_every == pace.drop_every // 2:
            steps.append(sim.Drop(1))
    steps.append(sim.Still(dict(turns[-1].after.stacks), pace.end, label={"turn": len(turns)}))
    return steps


def scripted_match(game: str, seed: int, *, pace: Pace = Pace(), fps: float = 5.0,
                   size: tuple[int, int] = (1280, 960), options: Any = None,
                   max_tilt_deg: float = 10.0, **generate: Any) -> tuple[Any, list[Any]]:
    """(a `FrameSource` playing a generated match of `game`, the match's turns); from `seed`."""
    rng = np.random.default_rng(seed)
    camera = sim.random_camera(rng, game, image_size=size, max_tilt_deg=max_tilt_deg)
    if options is None:
        options = sim.RenderOptions.random(rng)
    turns: list[Any]
    if game == "dition":
        turns = list(scripts.generate_dition_match(rng, **generate))
        steps = dition_steps(turns, pace, rng, camera)
    elif game == "domination":
        turns = list(scripts.generate_domination_match(rng, **generate))
        steps = domination_steps(turns, pace, rng, camera)
    else:
        raise ValueError(f"unknown game {game!r}")
    table = sim.ScriptedTable(steps, camera, rng, game=game, options=options, fps=fps)
    # The simulated players calibrated their camera (`referee calibrate camera`): the referee
    # knows its lens, as it would from a calibration file.
    table.intrinsics = sim_intrinsics(camera)
    return table, turns


def sim_intrinsics(camera: Any) -> Intrinsics:
    """What a camera calibration of the simulated camera gives: its matrix and distortion."""
    return Intrinsics(np.asarray(camera.camera_matrix, dtype=float),
                      np.asarray(camera.dist_coeffs, dtype=float), tuple(camera.image_size))


def scripted_table(game: str, seed: int, **kw: Any) -> Any:
    """A `FrameSource` playing a whole generated match of `game`, deterministic from `seed`."""
    return scripted_match(game, seed, **kw)[0]
