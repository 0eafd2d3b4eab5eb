"""The simulated table playing a generated match: rules-level turns -> the sim's steps.

`hardware.sim.ScriptedTable` knows no rules: it shows pieces, moves a hand and changes the pieces
when it is told to. Each game's description (`referee.games`) writes that script from a match
made by `referee.scripts`, the way real players behave: a still board, a hand placing a piece,
the hand leaving, a pause for the referee's verdict, a hand taking away what the verdict
removed, sometimes a bump of the camera or a dropped frame.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hardware import sim
from referee.games.registry import get_game
from referee.simsteps import Pace
from vision.camera import Intrinsics


def scripted_match(game: str, seed: int, *, pace: Pace = Pace(), fps: float = 5.0,
                   size: tuple[int, int] = (1280, 960), options: Any = None,
                   max_tilt_deg: float = 10.0, variety: Any = None, events: Any = None,
                   **generate: Any) -> tuple[Any, list[Any]]:
    """(a `FrameSource` playing a generated match of `game`, the match's turns); from `seed`.

    `variety` (Dition): play on that table of `hardware.sim.variety` (a felt board with light
    lines, other discs). `events(steps, turns, camera, rng) -> steps`: changes the script before
    it is played (a hovering hand, a lamp switched on, a knock on the camera stand)."""
    rng = np.random.default_rng(seed)
    camera = sim.random_camera(rng, game, image_size=size, max_tilt_deg=max_tilt_deg)
    if options is None:
        options = sim.RenderOptions.random(rng)
    turns, steps = get_game(game).sim_match(rng, pace, camera, **generate)
    if events is not None:
        steps = events(steps, turns, camera, rng)
    table = sim.ScriptedTable(steps, camera, rng, game=game, options=options, fps=fps, variety=variety)
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


def carry_on(table: Any, match: Any, seed: int, *, pace: Pace = Pace(),
             fps: float = 5.0) -> tuple[Any, str | None]:
    """The demo after an undo, a correction or a new match: (a `FrameSource` where the simulated
    hand first makes the table show what the match's record says, then the players carry on
    from there; a sentence for the page when they cannot, else None).

    `table`: the `ScriptedTable` playing so far (its camera and pieces are kept), or None (or a
    table of the other game): a new generated match of `match.game`. The hand's frames are
    labelled {"tidy": True}: the service shows them and does not judge them."""
    if table is None or getattr(table, "game", None) != match.game:
        return scripted_table(match.game, seed), None
    shown, camera = table.shown()
    if shown is None or camera is None:
        return scripted_table(match.game, seed), None
    rng = np.random.default_rng(seed)
    wanted, changed, steps, note = get_game(match.game).sim_carry_on(rng, pace, camera, shown,
                                                                     match)
    label = {"turn": -1, "tidy": True}
    tidy: list[Any] = [sim.Still(shown, 2, label=label)]
    if changed:
        frames = min(max(pace.hand, 2 * len(changed) + 4), 40)
        tidy.append(sim.HandRemove(shown, wanted, changed, frames, label=label))
    tidy.append(sim.Still(wanted, pace.still if steps else pace.end * 4, label=label))
    new = sim.ScriptedTable(tidy + steps, camera, rng, game=match.game,
                            options=table.options, fps=fps)
    new.intrinsics = sim_intrinsics(camera)
    return new, note
