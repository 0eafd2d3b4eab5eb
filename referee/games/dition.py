"""Dition as the referee plays it: discs read anywhere on the board, judged by `rules.dition`.

The board is found from its markers or drawn squares (`vision.board`) and re-measured on its
lines (`vision.board.board_moved`); the discs are read by `vision.dition.detect_discs`; two
readings agree when every disc is within 0.15 diameters of one of the same colour; the match is
`referee.dition_match.DitionMatch`; the page shows the discs, the borderline pairs and the danger
map of the side to move.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from referee.errors import CommandError
from referee.games.base import CANNOT_CARRY_ON, Game

if TYPE_CHECKING:  # pragma: no cover - typing only
    from referee import scripts
    from referee.dition_match import DitionMatch
    from referee.matching import SeenDisc
    from referee.simsteps import Pace

# The heavy parts (the vision, the match machine with its optimiser, the simulated table) are
# imported where they are used: `referee judge` or `referee matches` load this description
# without them.

#: two readings agree when each disc is this close (board units) to one of the same colour
AGREE_TOLERANCE = 0.15


@dataclass
class DiscsReading:
    """The discs of one settled reading (board units)."""

    discs: list[SeenDisc] = field(default_factory=list)

    def agrees(self, other: DiscsReading | None) -> bool:
        from referee.matching import diff_discs

        if other is None or len(self.discs) != len(other.discs):
            return False
        triples = [(d.x, d.y, d.colour) for d in other.discs]
        return diff_discs(triples, self.discs, tolerance=AGREE_TOLERANCE).same


class DitionGame(Game):
    name = "dition"
    title = "Dition"
    default_players = ("black", "white")
    judge_module = "referee.judging.dition"
    piece_diameter_board = 1.0
    refusals: ClassVar[Mapping[str, tuple[str, str]]] = {
        "invisible": ("bad_game", "invisible moves exist only in Domination"),
        "sample_colours": ("not_supported",
                           "Dition reads black and white discs without a colour model"),
    }

    # -- matches -------------------------------------------------------------------------------
    def new_match(self, players: Sequence[str], variant: str = "standard") -> DitionMatch:
        from referee.dition_match import DitionMatch

        if variant != "standard":
            raise CommandError("bad_variant", f"Dition has no variant {variant!r}")
        return DitionMatch()

    def offline_match(self, players: Sequence[str], variant: str = "standard") -> DitionMatch:
        from referee.dition_match import DitionMatch, DitionSettings

        return DitionMatch(settings=DitionSettings(auto_answer=True))

    def resume_match(self, record: Any, events: Sequence[Any]) -> DitionMatch:
        from referee.dition_match import DitionMatch, position_from_json

        snapshot: Mapping[str, Any] | None = record.start_position
        if snapshot is None:
            snapshot = {"discs": [], "to_move": "black", "move_number": 1}
        history: list[Any] = []
        for e in events:
            if e.type == "move" and snapshot is not None:
                history.append(position_from_json(snapshot))
            if e.type == "undo" and history:
                history.pop()
            if e.position is not None:
                snapshot = e.position
        return DitionMatch.resume(snapshot or {"discs": []}, history)

    # -- vision --------------------------------------------------------------------------------
    def track_board(self, image: np.ndarray, previous: Any, intrinsics: Any = None) -> tuple[bool, Any]:
        from vision import board as vboard
        from vision.errors import VisionError

        try:
            return vboard.board_moved(previous, image, intrinsics=intrinsics), None
        except VisionError:
            return True, None

    def read(self, image: np.ndarray, board: Any, *, intrinsics: Any = None,
             colours: Mapping[str, Any] | None = None, disc_thickness: float | None = None,
             cache: dict[str, Any] | None = None) -> DiscsReading:
        from referee.matching import SeenDisc
        from vision.dition import detect_discs

        params = _disc_params(disc_thickness)
        # (the rules need the player colour only: the seen colour's naming is skipped)
        discs = detect_discs(image, board, params, intrinsics=intrinsics, name_colours=False,
                             tables=_disc_tables(cache, image, board, params, intrinsics))
        return DiscsReading([
            SeenDisc(float(d.centre_board[0]), float(d.centre_board[1]), d.colour,
                     float(d.sigma_board), float(d.confidence))
            for d in discs
        ])

    def observe(self, match: DitionMatch, reading: DiscsReading) -> list[dict[str, Any]]:
        return match.observe(reading.discs)

    def detect_json(self, image: np.ndarray, board: Any, *, intrinsics: Any = None,
                    debug: bool = False, disc_thickness: float | None = None,
                    cache: dict[str, Any] | None = None) -> tuple[dict[str, Any], np.ndarray | None]:
        from vision.debug import draw_detections
        from vision.dition import detect_discs

        params = _disc_params(disc_thickness)
        discs = detect_discs(image, board, params, intrinsics=intrinsics,
                             tables=_disc_tables(cache, image, board, params, intrinsics))
        out: dict[str, Any] = {"discs": [
            {"x": round(d.centre_board[0], 4), "y": round(d.centre_board[1], 4), "colour": d.colour,
             "confidence": round(d.confidence, 3), "sigma": round(d.sigma_board, 4),
             "seen": d.seen if d.seen is not None else d.colour}
            for d in discs
        ]}
        # (a board clipped at the sensor's white hides white discs on it: say where)
        exposure = self.exposure(image, board, intrinsics=intrinsics, disc_thickness=disc_thickness)
        if exposure is not None:
            out["overexposed"] = {k: exposure[k] for k in ("share", "disc_areas", "box_board")}
            out["warning"] = exposure["warning"]
        picture = draw_detections(image, board, discs, intrinsics=intrinsics) if debug else None
        return out, picture

    def exposure(self, image: np.ndarray, board: Any, *, intrinsics: Any = None,
                 disc_thickness: float | None = None, turns: int = 0) -> dict[str, Any] | None:
        from referee.dition_match import where_words
        from vision.exposure import overexposure

        found = overexposure(image, board, intrinsics=intrinsics, params=_disc_params(disc_thickness))
        if found.warning is None or found.box_board is None:
            return None
        x0, y0, x1, y1 = found.box_board
        text = (f"The board is over-exposed {where_words((x0 + x1) / 2, (y0 + y1) / 2, turns)} "
                f"({found.share:.0%} of it shows pure white to the camera): a white disc there "
                "may be missed. Dim or move the lamp, or lower the camera's exposure.")
        return {**found.to_dict(), "warning": found.warning, "text": text}

    # -- the page --------------------------------------------------------------------------------
    def page_position(self, match: DitionMatch) -> dict[str, Any]:
        from referee.dition_match import discs_json

        return {"discs": discs_json(match.board_position)}

    def borderline(self, match: DitionMatch) -> list[Any]:
        return match.borderline()

    def move_number(self, match: DitionMatch) -> int:
        return match.position.move_number

    def danger(self, match: DitionMatch) -> dict[str, Any] | None:
        from rules import dition_analysis as da

        if match.phase == "over":
            return None
        pos = match.position
        return da.danger_map(pos, pos.to_move, resolution=0.4).to_dict()

    def danger_key(self, match: DitionMatch) -> object:
        """What the danger map depends on (the service recomputes it when this changes)."""
        return (match.position.to_text(), match.phase)

    def draw(self, image: np.ndarray, H_board_to_image: np.ndarray, reading: DiscsReading | None,
             instruction: Mapping[str, Any], thickness: int) -> None:
        from referee import overlay

        if reading is not None:
            for black, bgr in ((True, (30, 30, 30)), (False, (235, 235, 235))):
                centres = [(d.x, d.y) for d in reading.discs if (d.colour == "black") == black]
                overlay.rings(image, H_board_to_image, centres, 0.56, bgr, thickness)
        for hl in instruction.get("highlight", []):
            if "x" in hl:
                bgr = overlay.ROLE_BGR.get(hl.get("role", ""), (0, 0, 255))
                overlay.ring(image, H_board_to_image, hl["x"], hl["y"], 0.7, bgr, thickness * 2)

    # -- the printed kit -------------------------------------------------------------------------
    def board_printer(self) -> tuple[str, str, Any]:
        from calibration.printing import print_dition_board

        return "disc-mm", "D", print_dition_board

    # -- the log ---------------------------------------------------------------------------------
    def move_notation(self, payload: Mapping[str, Any]) -> str:
        """The centre of the placed disc in diameters from corner 0: "7.30,9.10"."""
        return f"{float(payload['x']):.2f},{float(payload['y']):.2f}"

    def record_line(self, number: int, payload: Mapping[str, Any]) -> str:
        p = payload
        removed = p.get("removed") or []
        line = f"{number:3d}. {p.get('colour', '?'):<5} ({p['x']:.2f}, {p['y']:.2f})"
        line += f"  {p.get('outcome', '')}"
        if removed:
            pts = ", ".join(f"({x:.2f}, {y:.2f})" for x, y in removed)
            line += f"  removes {len(removed)}: {pts}"
        return line

    # -- the simulated table ---------------------------------------------------------------------
    render_pieces = 40

    def render_still(self, rng: np.random.Generator, n: int, camera: Any, options: Any) -> Any:
        from hardware.sim import render_dition
        from hardware.sim.positions import random_discs

        return render_dition(random_discs(rng, n), camera, rng, options=options)

    def place_and_remove(self, rng: np.random.Generator, n: int) -> tuple[Any, Any, Any, Any, list[Any]]:
        from hardware.sim.positions import random_discs

        discs = random_discs(rng, n + 1)
        before, new = discs[:n], discs[n]
        after = before + (new,)
        gone = after[: max(1, min(2, n))]  # with no disc before, the placed one goes again
        final = tuple(d for d in after if d not in gone)
        return before, after, final, (new.x, new.y), [(d.x, d.y) for d in gone]

    def sim_match(self, rng: np.random.Generator, pace: Pace, camera: Any,
                  **generate: Any) -> tuple[list[Any], list[Any]]:
        from referee import scripts

        turns = list(scripts.generate_dition_match(rng, **generate))
        return turns, dition_steps(turns, pace, rng, camera)

    def sim_carry_on(self, rng: np.random.Generator, pace: Pace, camera: Any, shown: Any,
                     match: DitionMatch) -> tuple[Any, list[Any], list[Any], str | None]:
        from referee import scripts

        wanted, start = _dition_wanted(tuple(shown), match)
        fresh = not start.discs and start.move_number == 1  # a new match: the whole story
        note = None
        try:
            turns = (scripts.generate_dition_match(rng, start=None if fresh else start)
                     if match.phase == "await_move" else [])
        except RuntimeError:
            turns, note = [], CANNOT_CARRY_ON
        steps = dition_steps(turns, pace, rng, camera) if turns else []
        changed = ([(d.x, d.y) for d in shown if d not in wanted]
                   + [(d.x, d.y) for d in wanted if d not in shown])
        return wanted, changed, steps, note


#: a simulated disc this close to a recorded one (and of its colour) is that disc
SAME_DISC = 0.35


def _disc_tables(cache: dict[str, Any] | None, image: np.ndarray, board: Any, params: Any,
                 intrinsics: Any) -> Any:
    """The reader's tables of this board (`vision.dition.DiscTables`), kept in the caller's
    `cache` (one per referee: `Game.read`) for the frames that follow while the board, the camera
    and the frame size stay (one board at a time); None without a cache (`detect_discs` builds
    them for the frame)."""
    if cache is None:
        return None
    from vision.dition import DiscTables

    size = (image.shape[1], image.shape[0])
    tables = cache.get("disc_tables")
    if tables is None or not tables.matches(board, size, params, intrinsics):
        tables = cache["disc_tables"] = DiscTables(board, size, params, intrinsics)
    return tables


def _sim_discs(discs: Sequence[Any]) -> tuple[Any, ...]:
    from hardware import sim

    return tuple(sim.SimDisc(float(d.x), float(d.y), d.colour.value) for d in discs)


def dition_steps(turns: Sequence[scripts.DitionTurn], pace: Pace, rng: np.random.Generator,
                 camera: Any) -> list[Any]:
    """The simulated table's steps playing `turns`: a hand places each disc, takes away what the
    verdict removed; with `pace`, sometimes a mistake put right, a camera bump, a dropped frame."""
    from hardware import sim
    from referee.simsteps import bumped

    first = _sim_discs(turns[0].before.discs) if turns else ()
    steps: list[Any] = [sim.Still(first, pace.still * 2, label={"turn": -1})]
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
            steps.append(sim.Bump(bumped(camera, rng)))
            steps.append(sim.Still(after, pace.still, label=label))
        if pace.drop_every and n % pace.drop_every == pace.drop_every // 2:
            steps.append(sim.Drop(1))
    return steps


GAME = DitionGame()


def _dition_wanted(shown: tuple[Any, ...], match: DitionMatch) -> tuple[tuple[Any, ...], Any]:
    """(the discs the table must show for the match's record, the position to carry on from):
    a recorded disc the table already has stays where it lies (the record holds the camera's
    reading of it); one the table lacks is put back where the record says."""
    from hardware import sim
    from rules import dition as rd

    record = match.board_position
    left = list(shown)
    out = []
    for d in record.discs:
        near = [s for s in left if s.colour == d.colour.value
                and float(np.hypot(s.x - d.x, s.y - d.y)) < SAME_DISC]
        keep = min(near, key=lambda s: float(np.hypot(s.x - d.x, s.y - d.y))) if near else None
        if keep is not None:
            left.remove(keep)
        out.append(keep or sim.SimDisc(float(d.x), float(d.y), d.colour.value))
    start = rd.Position(tuple(rd.Disc(s.x, s.y, rd.Colour(s.colour)) for s in out),
                        to_move=record.to_move, move_number=record.move_number)
    return tuple(out), start


def _disc_params(disc_thickness: float | None) -> Any:
    """The reader's parameters with the discs' thickness the user stated (over their diameter;
    None: the reader's default, the kit's discs)."""
    from vision.dition import DiscParams

    return DiscParams() if disc_thickness is None else DiscParams(thickness_board=float(disc_thickness))
