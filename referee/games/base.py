"""What a game supplies to the referee: one description, looked up by name in the registry.

A `Game` ties together everything the loop, the service, the page, the commands and the
simulated table need to know about one game (docs/ADDING_A_GAME.md): its players and variants,
its match state machine (new, offline, resumed), its board finder, its piece reader and how two
readings compare, what the page shows of a match, how the overlay marks its pieces, how the
log's game record writes a move, and how the simulated table plays it. The defaults here are
what a game without that part does (no simulated table, no colour model, no game-specific
commands); the built-in games are `referee.games.dition` and `referee.games.domination`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, Protocol

import numpy as np

from referee.errors import CommandError


class Reading(Protocol):
    """One settled reading of the board, in the game's own terms."""

    def agrees(self, other: Any) -> bool:
        """Whether `other` (a reading of the same game, or None) shows the same board."""
        ...


#: what the demo says when its simulated players cannot carry on after a control
CANNOT_CARRY_ON = ("The simulated players cannot carry on from this position: start a new "
                   "match to see them play again")

#: a game-specific control of the page: (service, payload) -> events
Command = Callable[[Any, dict[str, Any]], list[dict[str, Any]]]


class Game:
    """The description of one game. Subclass it and register an instance."""

    #: the name used on the command line, in the log and in the API ("dition")
    name: str = ""
    #: how the text calls it ("Dition")
    title: str = ""
    #: the players of a new match when none are given
    default_players: tuple[str, ...] = ()
    #: (fewest, most) players when the players choose their colours; None: always the default
    player_counts: tuple[int, int] | None = None
    #: whether a match has variants (`--variant`); without, every match is "standard"
    has_variants: bool = False
    #: the module with `judge(obj) -> dict` for `referee judge` (None: not judged offline)
    judge_module: str | None = None
    #: whether a calibrated colour model (`referee calibrate colours`) applies to the pieces
    uses_colour_model: bool = False
    #: a piece's diameter in board units (colour sampling)
    piece_diameter_board: float = 1.0
    #: whether the board's squares have names ("d4") pieces can be placed on
    named_cells: bool = False
    #: controls of the page that only this game has: name -> handler
    commands: ClassVar[Mapping[str, Command]] = {}
    #: controls other games have that this one refuses: name -> (error code, text)
    refusals: ClassVar[Mapping[str, tuple[str, str]]] = {}

    # -- players and matches -------------------------------------------------------------------
    def check_players(self, players: Sequence[str]) -> None:
        """Raise CommandError("bad_players", ...) unless `players` can play a match."""
        if self.player_counts is None:
            if tuple(players) != self.default_players:
                raise CommandError("bad_players", f"{self.title} is played by "
                                   f"{' and '.join(self.default_players)}")
            return
        lo, hi = self.player_counts
        if not lo <= len(players) <= hi or len(set(players)) != len(players):
            raise CommandError("bad_players", f"{self.title} needs {lo} to {hi} distinct colours")

    def new_match(self, players: Sequence[str], variant: str = "standard") -> Any:
        """A new match state machine; CommandError("bad_variant", ...) for a variant it lacks."""
        raise NotImplementedError

    def offline_match(self, players: Sequence[str], variant: str = "standard") -> Any:
        """A match for `referee replay`: nobody at the table answers its questions."""
        return self.new_match(players, variant)

    def resume_match(self, record: Any, events: Sequence[Any]) -> Any:
        """The match of log `record` at its last committed event (`events` in order)."""
        raise NotImplementedError

    # -- vision --------------------------------------------------------------------------------
    def find_board(self, image: np.ndarray, *, corners_px: Any = None, intrinsics: Any = None) -> Any:
        """The board in `image` (vision.board.find_board with this game's finder)."""
        from vision import board as vboard

        return vboard.find_board(image, game=self.name, corners_px=corners_px, intrinsics=intrinsics)

    def track_board(self, image: np.ndarray, previous: Any, intrinsics: Any = None) -> tuple[bool, Any]:
        """Has the board left `previous`? (moved, the board re-measured cheaply or None: then
        `find_board` looks for it again). By default every check looks afresh."""
        return True, None

    def orient_board(self, previous: Any, board: Any, intrinsics: Any = None) -> Any:
        """`board` found again after `previous`, its corners in the order that keeps the cells
        where they were (a board symmetric under quarter turns may come back rotated)."""
        return board

    def turn_board(self, board: Any, quarter_turns: int, intrinsics: Any = None) -> Any:
        """The same board with corner 0 (a8's) moved `quarter_turns` corners on: the players'
        start showed a8 elsewhere than the finder put it. By default the corners are re-ordered."""
        from vision.geometry import fit_from_corners

        corners = np.roll(np.asarray(board.corners_px, dtype=float), -quarter_turns, axis=0)
        return fit_from_corners(corners, board.game, intrinsics)

    def read(self, image: np.ndarray, board: Any, *, intrinsics: Any = None,
             colours: Mapping[str, Any] | None = None, disc_thickness: float | None = None,
             cache: dict[str, Any] | None = None) -> Reading:
        """Read the pieces of a settled board (`disc_thickness`: the discs' thickness over their
        diameter when the user stated it; games without discs ignore it). `cache`: a mapping the
        caller keeps from frame to frame, one per referee (`referee detect`: one per run), where
        the game may keep what it works out once per board (None: nothing is kept; a game keeps
        no such state of its own, its one description serves every referee)."""
        raise NotImplementedError

    def start_colours(self, image: np.ndarray, board: Any, players: Sequence[str], *,
                      intrinsics: Any = None) -> Mapping[str, Any] | None:
        """The pieces' colour model learnt from `image` if it shows this game's start position
        on `board` (the referee asks before its first reading when it has none), else None."""
        return None

    def observe(self, match: Any, reading: Any) -> list[dict[str, Any]]:
        """Hand a settled reading to the match; the events it caused."""
        raise NotImplementedError

    def exposure(self, image: np.ndarray, board: Any, *, intrinsics: Any = None,
                 disc_thickness: float | None = None, turns: int = 0) -> dict[str, Any] | None:
        """Where the camera clipped the board at the sensor's white, so that pieces there may
        be missed: `{"share", "disc_areas", "box_board", "warning", "text"}` (`warning`: what
        `referee detect` prints, with board coordinates; `text`: what the page tells the players,
        in words, the board turned by `turns` quarter turns as the camera shows it), or None
        where no patch a piece wide is clipped (or the game does not measure it)."""
        return None

    def detect_json(self, image: np.ndarray, board: Any, *, intrinsics: Any = None,
                    disc_thickness: float | None = None, cache: dict[str, Any] | None = None) -> dict[str, Any]:
        """What `referee detect` prints of the pieces (merged into the image's result object;
        `cache` as for `read`)."""
        raise NotImplementedError

    # -- the page and the overlay ------------------------------------------------------------
    def page_position(self, match: Any) -> dict[str, Any]:
        """The `position` of /api/state."""
        raise NotImplementedError

    def borderline(self, match: Any) -> list[Any]:
        """The `borderline` of /api/state: pairs of pieces near a rule distance."""
        return []

    def move_number(self, match: Any) -> int:
        """The `move_number` of /api/state."""
        return 0

    def danger(self, match: Any) -> dict[str, Any] | None:
        """The `danger` of /api/state (a map of where a placement would be risky), or None."""
        return None

    def danger_key(self, match: Any) -> object:
        """What `danger` depends on: the service computes it again only when this changes."""
        return None

    def draw(self, image: np.ndarray, H_board_to_image: np.ndarray, reading: Any,
             instruction: Mapping[str, Any], thickness: int) -> None:
        """Mark, in place on the camera picture, the pieces read and the ones the instruction
        points at."""

    # -- the printed kit -------------------------------------------------------------------------
    def board_printer(self) -> tuple[str, str, Callable[..., Any]] | None:
        """How `referee print board` prints this game's board: (the size option it is printed
        from, its metavar, `calibration.printing`'s printer (out, size_mm, paper, options)); None:
        no printed board."""
        return None

    def print_board(self, out: str, sizes_mm: Mapping[str, float | None], paper: str,
                    options: Any) -> Any:
        """The board at true scale from the one size option the game's board is drawn to
        (`sizes_mm`: option -> value or None); CommandError("bad_usage", ...) naming it."""
        printer = self.board_printer()
        if printer is None:
            raise CommandError("bad_usage", f"there is no printed board for {self.title}")
        option, metavar, print_fn = printer
        others = [f"--{k}" for k, v in sizes_mm.items() if k != option and v is not None]
        if sizes_mm.get(option) is None or others:
            rest = [f"--{k}" for k in sizes_mm if k != option]
            raise CommandError("bad_usage", f"--game {self.name} needs --{option} {metavar}"
                               + (f" (and no {', '.join(rest)})" if rest else ""))
        return print_fn(out, sizes_mm[option], paper, options)

    # -- the log ---------------------------------------------------------------------------------
    def move_notation(self, payload: Mapping[str, Any]) -> str:
        """A logged move in the notation its engine reads back (the APGameRecord's moves)."""
        from referee.notation import move_text

        return move_text(payload.get("move") or {})

    def record_line(self, number: int, payload: Mapping[str, Any]) -> str:
        """One move of the readable game record (`referee export --format txt`)."""
        return f"{number:3d}. {payload.get('colour', '?')} {payload.get('text', '')}"

    # -- the simulated table ---------------------------------------------------------------------
    #: pieces on a rendered board when `referee render` is not told (`--discs`)
    render_pieces: int = 0

    def render_still(self, rng: np.random.Generator, n: int, camera: Any, options: Any) -> Any:
        """One simulated frame of `n` random pieces (`hardware.sim` render result: .image, .truth)."""
        raise CommandError("not_supported", f"the simulated table does not render {self.title}")

    def place_and_remove(self, rng: np.random.Generator, n: int) -> tuple[Any, Any, Any, Any, list[Any]]:
        """A rule-free scene for `referee render --frames`: (the n pieces before, after one more
        is placed, after up to two are taken away, where the hand places, where it takes)."""
        raise CommandError("not_supported", f"the simulated table does not render {self.title}")

    def sim_match(self, rng: np.random.Generator, pace: Any, camera: Any,
                  **generate: Any) -> tuple[list[Any], list[Any]]:
        """(the match's turns at the rules level, the simulated table's steps playing them)."""
        raise CommandError("not_supported", f"the simulated table does not play {self.title}")

    def sim_carry_on(self, rng: np.random.Generator, pace: Any, camera: Any, shown: Any,
                     match: Any) -> tuple[Any, list[Any], list[Any], str | None]:
        """The demo after a control (`referee.simtable.carry_on`): (the pieces the table must
        show for `match`'s record, where the hand goes to make `shown` into them, the steps
        of the players carrying on from the record, a sentence when they cannot, else None)."""
        return shown, [], [], CANNOT_CARRY_ON
