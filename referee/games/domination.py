"""Domination (Focus) as the referee plays it: stack tops read per cell, moves inferred.

The board is found from its markers or its cell pattern (`vision.board`) and re-measured on its
lines (`vision.domination_board.domination_board_moved`); a board found again from the cell
pattern keeps the corner order closest to the one before (the pattern looks the same after a
quarter turn). The tops and heights (through the calibration, or without one through the camera
measured on the board's own grid, `vision.board_camera`) are read by
`vision.domination.read_tops`; on a chessboard, and on an 8x8 drawn as lines on one sheet (the
finder marks it, `vision.chess_tops.is_drawn_grid`; re-measured on its lines through its lens,
`vision.board.drawn_grid_moved`), the tops by `vision.chess_tops.read_chess_tops` and the men's
heights by `vision.chess_heights.stack_heights`; two readings agree when every cell shows the
same top; the match is `referee.domination_match.DominationMatch`, which infers the moves. Its
own controls: an invisible reserve placement, and the colour model sampled from the start
position."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from referee.errors import CommandError
from referee.games.base import CANNOT_CARRY_ON, Command, Game
from referee.notation import move_text

if TYPE_CHECKING:  # pragma: no cover - typing only
    from referee import scripts
    from referee.domination_match import DominationMatch
    from referee.simsteps import Pace

# The heavy parts (the vision, the calibration, the simulated table) are imported where they
# are used: `referee judge` or `referee matches` load this description without them.


@dataclass
class TopsReading:
    """The tops of one settled reading, and the heights of the occupied cells when measured."""

    tops: dict[str, str] = field(default_factory=dict)
    heights: dict[str, float] | None = None
    height_sigma: dict[str, float] | None = None

    def agrees(self, other: TopsReading | None) -> bool:
        return other is not None and self.tops == other.tops


def _chess_read(board: Any) -> bool:
    """Whether `board`'s tops are read as on a chessboard (`vision.chess_tops.read_chess_tops`):
    a chessboard's fit or given corners where the squares alternate
    (`vision.chess_tops.is_chessboard`), or an 8x8 drawn as lines on one sheet
    (`vision.chess_tops.is_drawn_grid`: the finder tells it from the kit's printed board by the
    margin beside the grid, at given corners too); the kit's board, with markers or without, is
    read by `vision.domination.read_tops`."""
    from vision.chess_tops import is_chessboard, is_drawn_grid

    return is_chessboard(board) or is_drawn_grid(board)


def _with_grid_camera(image: np.ndarray, board: Any, intrinsics: Any,
                      cache: dict[str, Any] | None) -> Any:
    """Without a calibration, the kit's board with the camera measured on its own grid
    (`vision.board_camera.with_grid_camera`: heights from an uncalibrated frame), once per board
    fit: the fits of the last few boards are kept in the caller's `cache` (`Game.read`'s: one
    per referee, one per `referee detect` run) by their corners and the frame size (a board
    that moved is a new fit, measured on the frame it was found in)."""
    from vision.board_camera import with_grid_camera

    if intrinsics is not None or _chess_read(board):
        return board
    kept: dict[bytes, Any] = cache.setdefault("grid_camera_boards", {}) if cache is not None else {}
    key = np.ascontiguousarray(board.corners_px, np.float64).tobytes() + repr(image.shape).encode()
    got = kept.get(key)
    if got is None:
        got = with_grid_camera(image, board)
        while len(kept) >= 4:
            kept.pop(next(iter(kept)))
        kept[key] = got
    return got


def _read_kit_tops(image: np.ndarray, board: Any, intrinsics: Any, cache: dict[str, Any] | None,
                   colours: Mapping[str, Any] | None = None) -> Any:
    """`vision.domination.read_tops` on the kit's board; without a calibration through the
    camera from its own grid (`_with_grid_camera`), whose focal length the heights settle: the
    factor one frame settles on is kept in `cache` per board fit (by its corners and the frame
    size, as the grid camera is) and the next frame of that fit starts there (one reading
    instead of one per step towards it; the same frame again reads the same)."""
    from vision.domination import read_tops

    fit = _with_grid_camera(image, board, intrinsics, cache)
    if intrinsics is not None or cache is None:
        return read_tops(image, fit, colours=colours, intrinsics=intrinsics)
    kept: dict[bytes, float] = cache.setdefault("grid_focal_scales", {})
    key = np.ascontiguousarray(board.corners_px, np.float64).tobytes() + repr(image.shape).encode()
    reading = read_tops(image, fit, colours=colours, focal_scale=kept.get(key, 1.0))
    if reading.focal_scale is not None:
        kept.pop(key, None)
        while len(kept) >= 4:
            kept.pop(next(iter(kept)))
        kept[key] = reading.focal_scale
    return reading


def _invisible(service: Any, p: dict[str, Any]) -> list[dict[str, Any]]:
    """A reserve placed on the mover's own stack (no top changes): the players say where."""
    if "cell" not in p:
        raise CommandError("bad_request", "invisible needs the 'cell' of the reserve placement")
    return service.referee.match.invisible(str(p["cell"]))


def _sample_colours(service: Any, p: dict[str, Any]) -> list[dict[str, Any]]:
    """Sample the piece colours from the standard start now on the board."""
    from calibration import colours_from_start
    from calibration.errors import CalibrationError

    ref = service.referee
    if ref.last_frame is None or ref.board is None:
        raise CommandError("no_frame", "no frame with a board yet: wait for the camera")
    players = ref.match.players
    if len(players) != 2:
        raise CommandError("not_supported", "colours are sampled from the 2-player start; "
                           "use `referee calibrate colours --cell` for 3-4 players")
    try:
        model = colours_from_start(ref.last_frame, ref.board, players=players,
                                   intrinsics=ref.intrinsics)
    except CalibrationError as exc:
        raise CommandError("bad_colours", f"cannot sample the colours: {exc}") from exc
    ref.colours = dict(model)
    return [{"type": "calibration", "text": "Colours sampled from the start position: "
             + ", ".join(f"{k} {tuple(int(c) for c in v)}" for k, v in ref.colours.items())}]


class DominationGame(Game):
    name = "domination"
    title = "Domination"
    default_players = ("G", "R")
    player_counts = (2, 4)
    has_variants = True
    judge_module = "referee.judging.domination"
    uses_colour_model = True
    named_cells = True
    piece_diameter_board = 0.8
    commands: ClassVar[Mapping[str, Command]] = {"invisible": _invisible, "sample_colours": _sample_colours}

    # -- matches -------------------------------------------------------------------------------
    def new_match(self, players: Sequence[str], variant: str = "standard") -> DominationMatch:
        from referee.domination_match import DominationMatch

        return DominationMatch(players=players, variant=variant)

    def offline_match(self, players: Sequence[str], variant: str = "standard") -> DominationMatch:
        from referee.domination_match import DominationMatch

        return DominationMatch(players=players, auto_confirm=True, variant=variant)

    def resume_match(self, record: Any, events: Sequence[Any]) -> DominationMatch:
        from referee.domination_match import DominationMatch

        snapshot: Mapping[str, Any] | None = record.start_position
        for e in events:
            if e.position is not None:
                snapshot = e.position
        if snapshot and snapshot.get("state"):
            return DominationMatch.resume(snapshot, players=record.players, variant=record.variant)
        return DominationMatch(players=record.players, variant=record.variant)

    # -- vision --------------------------------------------------------------------------------
    def track_board(self, image: np.ndarray, previous: Any, intrinsics: Any = None) -> tuple[bool, Any]:
        from vision.board import drawn_grid_moved
        from vision.chess_tops import is_drawn_grid
        from vision.chessboard import chessboard_moved
        from vision.domination_board import domination_board_moved
        from vision.errors import VisionError

        try:
            if previous.method == "chessboard":
                return chessboard_moved(image, previous, intrinsics=intrinsics)
            if previous.method == "lines" and is_drawn_grid(previous):  # its lens and marks stay
                return drawn_grid_moved(image, previous, intrinsics=intrinsics)
            return domination_board_moved(image, previous, intrinsics=intrinsics)
        except VisionError:
            return True, None

    def orient_board(self, previous: Any, board: Any, intrinsics: Any = None) -> Any:

        if board.method in ("aruco", "corners"):
            return board
        # The cell pattern looks the same after a quarter turn: keep the corner order that
        # is closest to the board we had, so that a8 stays a8 through a bump.
        corners = np.asarray(board.corners_px, dtype=float)
        best = min(range(4), key=lambda k: float(np.linalg.norm(
            np.roll(corners, -k, axis=0) - previous.corners_px)))
        return self.turn_board(board, best, intrinsics) if best else board

    def turn_board(self, board: Any, quarter_turns: int, intrinsics: Any = None) -> Any:
        if _chess_read(board):  # its own lens and reader stay (a chessboard, a drawn 8x8)
            from vision.chessboard import turn_board

            return turn_board(board, quarter_turns, intrinsics)
        return super().turn_board(board, quarter_turns, intrinsics)

    def read(self, image: np.ndarray, board: Any, *, intrinsics: Any = None,
             colours: Mapping[str, Any] | None = None, disc_thickness: float | None = None,
             cache: dict[str, Any] | None = None) -> TopsReading:
        from vision.chess_tops import read_chess_tops

        if _chess_read(board):  # men on a chessboard or a drawn 8x8 (issue 19)
            from vision.chess_heights import stack_heights

            chess = read_chess_tops(image, board, colours or {}, intrinsics=intrinsics)
            occupied = [c for c, t in chess.tops.items() if t != "."]
            # the men's heights through the calibration, or the camera the chessboard finder
            # took from the board's own grid (men of the module's default thickness); as for
            # the kit's board they only settle ambiguity, their sigmas say how little some tell
            got = (stack_heights(image, board, occupied, intrinsics=intrinsics, tops=chess.tops)
                   if occupied else None)
            if got is None or not got.heights:
                return TopsReading(tops=dict(chess.tops), heights=None, height_sigma=None)
            return TopsReading(tops=dict(chess.tops), heights={c: float(v) for c, v in got.heights.items()},
                               height_sigma={c: max(float(v), 0.05) for c, v in got.sigma.items()})
        tops = _read_kit_tops(image, board, intrinsics, cache, colours)
        heights = sigma = None
        if tops.heights:
            # Height estimates of occupied cells only, never claimed more certain than 0.05 piece.
            occupied = [c for c, t in tops.tops.items() if t != "." and c in tops.heights]
            heights = {c: float(tops.heights[c]) for c in occupied}
            given = tops.height_sigma or {}
            sigma = {c: max(float(given.get(c, 0.5)), 0.05) for c in occupied}
        return TopsReading(tops=dict(tops.tops), heights=heights, height_sigma=sigma)

    def start_colours(self, image: np.ndarray, board: Any, players: Sequence[str], *,
                      intrinsics: Any = None) -> Mapping[str, Any] | None:
        """On a chessboard or a drawn 8x8, the men's colours from the standard 2-player start:
        learnt on its 36 cells (`vision.chess_tops.learn_chess_colours`) and kept only when
        they read this very frame back as that start, every one of the 52 cells (a frame of
        anything else gives None: the referee asks again on the next one)."""
        from calibration.colour import standard_start_cells
        from vision.chess_tops import learn_chess_colours, read_chess_tops
        from vision.errors import VisionError

        if not _chess_read(board) or len(players) != 2:
            return None
        start = standard_start_cells(players)
        try:
            model = learn_chess_colours(image, board, start, intrinsics=intrinsics)
            tops = read_chess_tops(image, board, model, intrinsics=intrinsics).tops
        except VisionError:
            return None
        return model if all(tops[c] == start.get(c, ".") for c in tops) else None

    def observe(self, match: DominationMatch, reading: TopsReading) -> list[dict[str, Any]]:
        return match.observe(reading.tops, reading.heights, reading.height_sigma)

    def detect_json(self, image: np.ndarray, board: Any, *, intrinsics: Any = None,
                    debug: bool = False, disc_thickness: float | None = None,
                    cache: dict[str, Any] | None = None) -> tuple[dict[str, Any], np.ndarray | None]:
        from vision.chess_tops import read_chess_tops

        if _chess_read(board):  # its men's colours must be learnt first: a clear error
            read_chess_tops(image, board, {}, intrinsics=intrinsics)
        reading = _read_kit_tops(image, board, intrinsics, cache)
        out: dict[str, Any] = {"tops": dict(reading.tops),
                               "heights": None if reading.heights is None else dict(reading.heights)}
        if getattr(reading, "confidence", None) is not None:
            out["confidence"] = {k: round(float(v), 3) for k, v in reading.confidence.items()}
        return out, None

    # -- the page --------------------------------------------------------------------------------
    def page_position(self, match: DominationMatch) -> dict[str, Any]:
        return match.position_json()

    def move_number(self, match: DominationMatch) -> int:
        return getattr(match.state, "move_number", 0)

    def draw(self, image: np.ndarray, H_board_to_image: np.ndarray, reading: TopsReading | None,
             instruction: Mapping[str, Any], thickness: int) -> None:
        from referee import overlay
        from rules import domination as rdom

        for hl in instruction.get("highlight", []):
            if "cell" in hl:
                x, y = rdom.cell_centre(hl["cell"])
                sq = np.array([[x - .5, y - .5], [x + .5, y - .5], [x + .5, y + .5], [x - .5, y + .5]])
                bgr = overlay.ROLE_BGR.get(hl.get("role", ""), (0, 0, 255))
                overlay.outline(image, H_board_to_image, sq, bgr, thickness * 2)

    # -- the printed kit -------------------------------------------------------------------------
    def board_printer(self) -> tuple[str, str, Any]:
        from calibration.printing import print_domination_board

        return "cell-mm", "C", print_domination_board

    # -- the log ---------------------------------------------------------------------------------
    def record_line(self, number: int, payload: Mapping[str, Any]) -> str:
        p = payload
        line = f"{number:3d}. {p.get('colour', '?')} {move_text(p.get('move', {}))}"
        if p.get("removed"):
            line += f"  off the bottom: {p['removed']}"
        return line

    # -- the simulated table ---------------------------------------------------------------------
    render_pieces = 20

    def render_still(self, rng: np.random.Generator, n: int, camera: Any, options: Any) -> Any:
        from hardware.sim import render_domination
        from hardware.sim.positions import random_stacks

        return render_domination(random_stacks(rng, n, "GRBY"), camera, rng, options=options)

    def place_and_remove(self, rng: np.random.Generator, n: int) -> tuple[Any, Any, Any, Any, list[Any]]:
        from hardware.sim.positions import random_stacks

        stacks = random_stacks(rng, n + 1, "GR")
        cells = sorted(stacks)
        new_cell = cells[-1]
        before = {c: stacks[c] for c in cells[:-1]}
        after = dict(before, **{new_cell: stacks[new_cell]})
        gone_cells = cells[: max(1, min(2, n))]  # with no stack before, the new one goes again
        final = {c: s for c, s in after.items() if c not in gone_cells}
        return before, after, final, new_cell, list(gone_cells)

    def sim_match(self, rng: np.random.Generator, pace: Pace, camera: Any,
                  **generate: Any) -> tuple[list[Any], list[Any]]:
        from referee import scripts

        turns = list(scripts.generate_domination_match(rng, **generate))
        return turns, domination_steps(turns, pace, rng, camera)

    def sim_carry_on(self, rng: np.random.Generator, pace: Pace, camera: Any, shown: Any,
                     match: Any) -> tuple[Any, list[Any], list[Any], str | None]:
        from referee import scripts
        from rules import domination as rdom

        players = tuple(match.players)
        state = match.state
        if state is None and len(players) == 2:
            state = rdom.State.standard_start(players)
        if state is None:
            return shown, [], [], ("The simulated players set up two-player matches only: "
                                   "set up the start by hand")
        wanted = {c: stack for c, stack in state.stacks.items() if stack}
        note = None
        try:  # a new match (no state yet) gets the whole story, else any visible moves
            turns = (scripts.generate_domination_match(rng, players=players, start=match.state)
                     if match.phase in ("setup", "await_move") else [])
        except (RuntimeError, ValueError):
            turns, note = [], CANNOT_CARRY_ON
        steps = domination_steps(turns, pace, rng, camera) if turns else []
        changed = sorted(c for c in set(shown) | set(wanted) if shown.get(c) != wanted.get(c))
        return wanted, changed, steps, note


def domination_steps(turns: Sequence[scripts.DominationTurn], pace: Pace,
                     rng: np.random.Generator | None = None, camera: Any = None) -> list[Any]:
    """The simulated table's steps playing `turns`: a hand makes each move; with `pace`,
    sometimes a camera bump or a dropped frame."""
    from hardware import sim
    from referee.simsteps import bumped
    from rules import domination as rdom

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
            steps.append(sim.Bump(bumped(camera, rng)))
            steps.append(sim.Still(after, pace.still, label=label))
        if pace.drop_every and n % pace.drop_every == pace.drop_every // 2:
            steps.append(sim.Drop(1))
    steps.append(sim.Still(dict(turns[-1].after.stacks), pace.end, label={"turn": len(turns)}))
    return steps


GAME = DominationGame()
