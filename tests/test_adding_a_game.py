"""docs/ADDING_A_GAME.md, followed for a toy game: registered, read from rendered frames, refereed.

"Squares": two players (blue, green) place square pieces on the empty cells of a 4x4 board; three
of one colour in a row or a column wins. The test supplies what the guide lists (tiny rules, a
board finder and a reader over frames drawn with cv2, a match state machine, a `Game`
description), registers it, and plays a few moves through the real `Referee` loop, match log and
overlay; the service builds the page's state of the match through the same registry.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import cv2
import numpy as np
import pytest

from referee.errors import CommandError
from referee.games import registry
from referee.games.base import Game
from referee.log import MatchLog
from referee.loop import Referee
from referee.service import RefereeService
from vision import geometry
from vision.errors import BoardNotFoundError

# -- the rules (pure, as rules/ would hold them) --------------------------------------------------

SIDE = 4
CELLS = tuple(f"{'abcd'[x]}{SIDE - y}" for y in range(SIDE) for x in range(SIDE))  # a4..d1
EMPTY = "."


def cell_xy(cell: str) -> tuple[int, int]:
    """(column, row from the top) of a cell: a4 is (0, 0), d1 is (3, 3)."""
    return "abcd".index(cell[0]), SIDE - int(cell[1])


@dataclass(frozen=True)
class SquaresState:
    players: tuple[str, str]
    cells: Mapping[str, str] = field(default_factory=lambda: dict.fromkeys(CELLS, EMPTY))
    to_move: str = "blue"

    def winner(self) -> str | None:
        for player in self.players:
            mine = {cell_xy(c) for c, v in self.cells.items() if v == player}
            for x, y in mine:
                if {(x + 1, y), (x + 2, y)} <= mine or {(x, y + 1), (x, y + 2)} <= mine:
                    return player
        return None


def apply_move(state: SquaresState, cell: str) -> SquaresState:
    """The state after the side to move places on `cell`; ValueError when it cannot."""
    if state.cells.get(cell) != EMPTY or state.winner() is not None:
        raise ValueError(f"{state.to_move} cannot place on {cell}")
    cells = {**state.cells, cell: state.to_move}
    other = state.players[1 - state.players.index(state.to_move)]
    return replace(state, cells=cells, to_move=other)


# -- the vision: rendered frames, a board finder, a reader ----------------------------------------

PX_PER_CELL = 60
PIECE_BGR = {"blue": (200, 90, 30), "green": (50, 170, 40)}
#: where the board's corners 0..3 land in the 640x480 picture (a camera looking a little askew)
CORNERS_PX = np.array([[170.0, 95.0], [480.0, 115.0], [500.0, 405.0], [150.0, 380.0]])


def render(cells: Mapping[str, str], rng: np.random.Generator) -> np.ndarray:
    """A BGR frame of the board on a grey table: light cells in dark lines, square pieces."""
    n = SIDE * PX_PER_CELL
    top = np.full((n, n, 3), 225, np.uint8)
    for i in range(SIDE + 1):
        cv2.line(top, (i * PX_PER_CELL, 0), (i * PX_PER_CELL, n), (40, 40, 40), 3)
        cv2.line(top, (0, i * PX_PER_CELL), (n, i * PX_PER_CELL), (40, 40, 40), 3)
    for cell, who in cells.items():
        if who != EMPTY:
            x, y = cell_xy(cell)
            lo = (x * PX_PER_CELL + 12, y * PX_PER_CELL + 12)
            hi = ((x + 1) * PX_PER_CELL - 12, (y + 1) * PX_PER_CELL - 12)
            cv2.rectangle(top, lo, hi, PIECE_BGR[who], -1)
    src = np.array([[0, 0], [n, 0], [n, n], [0, n]], np.float32)
    H = cv2.getPerspectiveTransform(src, CORNERS_PX.astype(np.float32))
    frame = cv2.warpPerspective(top, H, (640, 480), borderValue=(110, 110, 110))
    noise = rng.normal(0.0, 3.0, frame.shape)
    return np.clip(frame + noise, 0, 255).astype(np.uint8)


def find_squares_board(frame: np.ndarray) -> geometry.BoardFit:
    """The board: the largest region that is not table (the plate is much lighter than the
    table, its lines much darker), corner 0 the one nearest the picture's top-left, clockwise."""
    gray = geometry.as_gray(frame).astype(np.int16)
    # the table's grey, from the picture's edge (the board lies inside it)
    table = float(np.median(np.r_[gray[0], gray[-1], gray[:, 0], gray[:, -1]]))
    # plate (225) and lines (40) both stand 70 or more grey levels off the table (110); the
    # sensor noise is a few levels: half that gap keeps every board pixel and no table pixel
    mask = (np.abs(gray - table) > 35).astype(np.uint8)
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    if not contours:
        raise BoardNotFoundError("squares board: nothing but table in the frame")
    outline = max(contours, key=cv2.contourArea)
    quad = cv2.approxPolyDP(outline, 0.02 * cv2.arcLength(outline, True), True).reshape(-1, 2)
    if len(quad) != 4:
        raise BoardNotFoundError(f"squares board: the plate has {len(quad)} corners, not 4")
    centre = quad.mean(axis=0)
    quad = quad[np.argsort(np.arctan2(quad[:, 1] - centre[1], quad[:, 0] - centre[0]))]
    quad = np.roll(quad, -int(np.argmin(quad.sum(axis=1))), axis=0)
    return geometry.fit_from_corners(quad.astype(np.float64), "squares")


@dataclass
class SquaresReading:
    cells: dict[str, str]

    def agrees(self, other: SquaresReading | None) -> bool:
        return other is not None and other.cells == self.cells


def read_squares(frame: np.ndarray, board: geometry.BoardFit) -> SquaresReading:
    """Each cell's middle, seen top-down: grey is empty, else the nearer piece colour."""
    scale = 20.0
    top = geometry.rectify(frame, board, scale).astype(np.float64)
    cells = {}
    for cell in CELLS:
        x, y = cell_xy(cell)
        u, v = int((x + 0.5) * scale), int((y + 0.5) * scale)
        bgr = top[v - 4 : v + 5, u - 4 : u + 5].reshape(-1, 3).mean(axis=0)
        # a piece is saturated; the plate's channels differ by the noise only
        if bgr.max() - bgr.min() < 40:
            cells[cell] = EMPTY
        else:
            cells[cell] = min(PIECE_BGR, key=lambda k: float(np.linalg.norm(bgr - PIECE_BGR[k])))
    return SquaresReading(cells)


# -- the match state machine ----------------------------------------------------------------------


class SquaresMatch:
    game = "squares"

    def __init__(self, players: tuple[str, str]) -> None:
        self.state = SquaresState(players, to_move=players[0])
        self.phase = "await_move"
        self.winner: str | None = None
        self.last_move: dict[str, Any] | None = None
        self.instruction: dict[str, Any] = {"kind": "info", "text": f"{players[0]} to move",
                                            "highlight": []}

    @property
    def players(self) -> tuple[str, str]:
        return self.state.players

    @property
    def to_move(self) -> str | None:
        return None if self.phase == "over" else self.state.to_move

    def snapshot(self) -> dict[str, Any]:
        return {"cells": dict(self.state.cells), "to_move": self.state.to_move, "phase": self.phase}

    def question(self) -> None:
        return None

    def observe(self, cells: Mapping[str, str]) -> list[dict[str, Any]]:
        if self.phase == "over":
            return []
        changed = [c for c in CELLS if cells[c] != self.state.cells[c]]
        if not changed:
            return []
        mover = self.state.to_move
        if len(changed) != 1 or self.state.cells[changed[0]] != EMPTY or cells[changed[0]] != mover:
            text = f"The board does not show one new {mover} piece: put it right"
            self.instruction = {"kind": "warning", "text": text,
                                "highlight": [{"cell": c, "role": "wrong"} for c in changed]}
            return [{"type": "warning", "code": "mismatch", "text": text}]
        self.state = apply_move(self.state, changed[0])
        self.last_move = {"colour": mover, "cell": changed[0]}
        events = [{"type": "move", "colour": mover, "cell": changed[0],
                   "text": f"{mover} on {changed[0]}"}]
        self.winner = self.state.winner()
        if self.winner is not None:
            self.phase = "over"
            text = f"{self.winner} has three in a line and wins"
            self.instruction = {"kind": "over", "text": text, "highlight": []}
            events.append({"type": "end", "winner": self.winner, "reason": "line", "text": text})
        else:
            self.instruction = {"kind": "info", "text": f"{self.state.to_move} to move",
                                "highlight": [{"cell": changed[0], "role": "placed"}]}
        return events


# -- the description --------------------------------------------------------------------------------


class SquaresGame(Game):
    name = "squares"
    title = "Squares"
    default_players = ("blue", "green")

    def new_match(self, players: Any, variant: str = "standard") -> SquaresMatch:
        if variant != "standard":
            raise CommandError("bad_variant", f"Squares has no variant {variant!r}")
        return SquaresMatch(tuple(players))

    def find_board(self, image: np.ndarray, *, corners_px: Any = None,
                   intrinsics: Any = None) -> geometry.BoardFit:
        if corners_px is not None:
            return geometry.fit_from_corners(corners_px, self.name, intrinsics)
        return find_squares_board(image)

    def read(self, image: np.ndarray, board: Any, *, intrinsics: Any = None,
             colours: Any = None, disc_thickness: float | None = None, cache: Any = None) -> SquaresReading:
        return read_squares(image, board)

    def observe(self, match: SquaresMatch, reading: SquaresReading) -> list[dict[str, Any]]:
        return match.observe(reading.cells)

    def page_position(self, match: SquaresMatch) -> dict[str, Any]:
        return {"cells": {c: v for c, v in match.state.cells.items() if v != EMPTY}}

    def draw(self, image: np.ndarray, H_board_to_image: np.ndarray, reading: Any,
             instruction: Mapping[str, Any], thickness: int) -> None:
        from referee import overlay

        for hl in instruction.get("highlight", []):
            x, y = cell_xy(hl["cell"])
            square = np.array([[x, y], [x + 1, y], [x + 1, y + 1], [x, y + 1]], float)
            overlay.outline(image, H_board_to_image, square, overlay.ROLE_BGR[hl["role"]], thickness)


@pytest.fixture
def squares(monkeypatch: pytest.MonkeyPatch) -> Iterator[SquaresGame]:
    """The toy game registered (and its 4-unit board known to vision), forgotten afterwards."""
    monkeypatch.setitem(geometry.BOARD_SIZE, "squares", float(SIDE))
    game = registry.register(SquaresGame())
    yield game
    registry.unregister("squares")


def _frames(positions: list[dict[str, str]], rng: np.random.Generator, still: int = 5) -> Iterator[np.ndarray]:
    for cells in positions:
        for _ in range(still):
            yield render(cells, rng)


def test_the_board_finder_and_reader_see_what_was_drawn(squares: SquaresGame) -> None:
    rng = np.random.default_rng(3)
    cells = {**dict.fromkeys(CELLS, EMPTY), "a4": "blue", "c2": "green", "d1": "blue"}
    frame = render(cells, rng)
    board = squares.find_board(frame)
    # the outline runs through the centres of the board's outermost pixels, whose edge pixels are
    # blends of plate and table: a corner may come out up to a pixel diagonal (1.4 px) and a
    # blended pixel inside where it was drawn; a cell is 60+ px, so that reads every cell right
    assert np.abs(board.corners_px - CORNERS_PX).max() <= 2.5
    assert read_squares(frame, board).cells == cells


def test_a_toy_game_is_refereed_end_to_end(squares: SquaresGame, tmp_path: Any) -> None:
    """Registered through the guide's path, the loop finds the board, waits for still frames,
    reads, and the match judges: a move, a wrong piece pointed at and taken back, the win."""
    rng = np.random.default_rng(11)
    empty = dict.fromkeys(CELLS, EMPTY)
    b1 = {**empty, "b3": "blue"}
    g1 = {**b1, "a1": "green"}
    wrong = {**g1, "d4": "green"}  # blue to move: a green piece is no blue move
    b2 = {**g1, "b2": "blue"}
    g2 = {**b2, "d1": "green"}
    b3 = {**g2, "b4": "blue"}  # b4, b3, b2: three in a column
    log = MatchLog(tmp_path / "squares.sqlite")
    match = squares.new_match(squares.default_players)
    match_id = log.new_match("squares", match.players, start_position=match.snapshot())
    referee = Referee(match, log, match_id)
    assert referee.spec is squares
    events = []
    for frame in _frames([empty, b1, g1, wrong, g1, b2, g2, b3], rng):
        events += referee.process(frame)
    moves = [(e["colour"], e["cell"]) for e in events if e["type"] == "move"]
    assert moves == [("blue", "b3"), ("green", "a1"), ("blue", "b2"), ("green", "d1"),
                     ("blue", "b4")]
    warnings = [e for e in events if e["type"] == "warning"]
    assert len(warnings) == 1 and "one new blue piece" in warnings[0]["text"]
    assert events[-1]["type"] == "end" and events[-1]["winner"] == "blue"
    # the log holds every event with the position after it, and a picture behind the verdicts
    logged = log.events(match_id)
    assert [e.type for e in logged if e.type == "move"] == ["move"] * 5
    assert logged[-1].position["cells"]["b4"] == "blue"
    picture = log.snapshot(match_id, logged[-1].seq)
    assert picture is not None and cv2.imdecode(np.frombuffer(picture, np.uint8), cv2.IMREAD_COLOR).shape == (480, 640, 3)


def test_the_page_state_of_a_toy_match_comes_from_its_description(
        squares: SquaresGame, tmp_path: Any) -> None:
    service = RefereeService(MatchLog(tmp_path / "page.sqlite"), lambda restart: None,
                             game="squares", resume=False)
    state = service.state()
    assert (state["game"], state["players"], state["to_move"]) == ("squares", ["blue", "green"],
                                                                   "blue")
    assert state["position"] == {"cells": {}} and state["danger"] is None
    with pytest.raises(CommandError) as refused:
        service.command("new_match", {"game": "squares", "players": ["blue", "red"]})
    assert refused.value.code == "bad_players"
    with pytest.raises(CommandError) as unknown:
        service.command("invisible", {"cell": "a1"})
    assert unknown.value.code == "bad_game"
