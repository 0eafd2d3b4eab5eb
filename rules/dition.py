"""Dition: discs placed anywhere on a square board; a disc in range of 4+ opponents disappears.

The rule text is `seeds/000_*.txt`; the precise specification this module implements, with every
decision the text leaves open, is `seeds/dition.md`.

Units: one board unit = one disc diameter. The playing area is the outer square `[0, 20]^2`; a disc
lies wholly on it when its centre is in `[0.5, 19.5]^2`. Frame as in DESIGN.md (x right, y down).

Float policy: every distance test compares the *squared* centre distance `dx*dx + dy*dy`, computed
in float64 in exactly that order, against the exact constants 1.0 and 4.0. No epsilon is added, so
a disc exactly 2 diameters away (e.g. centres (3, 5) and (5, 5)) is out of range and two discs
exactly 1 apart touch legally. Every function here and in `rules.dition_analysis` uses the same
formula, so they agree to the last bit. Only the existence questions of the analysis
(`has_legal_placement`, `has_safe_placement`) use a documented slack, see `seeds/dition.md`.

Vocabulary first: colours, board constants, discs, positions; then the judgement
(`check_placement`, `apply_placement`) and camera-reading checks (`status`, `borderline_pairs`).
The analysis (`danger_map`, `has_safe_placement`, `has_legal_placement`) sits above this engine in
`rules.dition_analysis`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import IntEnum, IntFlag, StrEnum
from functools import cached_property
from typing import Any, NamedTuple

import numpy as np

from rules.errors import (
    IllegalPlacementError,
    InvalidDiscError,
    InvalidNotationError,
    InvalidParameterError,
)


class Colour(StrEnum):
    """A side (and a disc's face). Black plays first."""

    BLACK = "black"
    WHITE = "white"

    @property
    def opponent(self) -> Colour:
        return Colour.WHITE if self is Colour.BLACK else Colour.BLACK

    def __repr__(self) -> str:
        return f"Colour.{self.name}"


# --- the board, in disc diameters -----------------------------------------------------------
BOARD_SIZE = 20.0  #: side of the outer (playing) square
INNER_SQUARE = (3.0, 17.0)  #: the inner square: a visual aid only, no rule uses it
DISC_DIAMETER = 1.0
CENTRE_MIN = 0.5  #: smallest centre coordinate of a disc lying wholly on the board
CENTRE_MAX = 19.5  #: largest centre coordinate of a disc lying wholly on the board
TOUCH_DISTANCE = 1.0  #: centre distance below which two discs overlap (touching is allowed)
RANGE_DISTANCE = 2.0  #: centre distance below which two discs are within range (strict)
TOUCH_SQ = TOUCH_DISTANCE * TOUCH_DISTANCE
RANGE_SQ = RANGE_DISTANCE * RANGE_DISTANCE
DISAPPEAR_COUNT = 4  #: a disc within range of this many opponent discs disappears


def parse_coordinate(value: Any, name: str, error: type[ValueError] = InvalidDiscError) -> float:
    """`value` as a finite float; `error` naming `name` otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise error(f"{name} must be a number, got {value!r}")
    number = float(value)
    if not math.isfinite(number):
        raise error(f"{name} must be finite, got {number!r}")
    return number


def parse_colour(value: Any, name: str) -> Colour:
    """`value` as a Colour; InvalidDiscError naming `name` otherwise."""
    if isinstance(value, Colour):
        return value
    try:
        return Colour(value)
    except (ValueError, TypeError):
        raise InvalidDiscError(f"{name} must be 'black' or 'white', got {value!r}") from None


@dataclass(frozen=True)
class Disc:
    """One disc: centre `(x, y)` in board units and the colour of its upper face."""

    x: float
    y: float
    colour: Colour

    def __post_init__(self) -> None:
        object.__setattr__(self, "x", parse_coordinate(self.x, "disc x"))
        object.__setattr__(self, "y", parse_coordinate(self.y, "disc y"))
        object.__setattr__(self, "colour", parse_colour(self.colour, "disc colour"))

    def __repr__(self) -> str:
        return f"Disc({self.x!r}, {self.y!r}, {self.colour!r})"

    def distance_to(self, x: float, y: float) -> float:
        return math.sqrt(_dist_sq(self.x, self.y, x, y))


def _dist_sq(x0: float, y0: float, x1: float, y1: float) -> float:
    """The one squared-distance formula (the numpy code in this package mirrors it exactly)."""
    dx = x0 - x1
    dy = y0 - y1
    return dx * dx + dy * dy


def on_board(x: float, y: float) -> bool:
    """Whether a disc centred at `(x, y)` lies wholly on the playing area (edges inclusive)."""
    return CENTRE_MIN <= x <= CENTRE_MAX and CENTRE_MIN <= y <= CENTRE_MAX


_DIAGRAM_DISCS = {"b": Colour.BLACK, "x": Colour.BLACK, "w": Colour.WHITE, "o": Colour.WHITE}


@dataclass(frozen=True)
class Position:
    """Discs on the board (in a fixed order: verdicts name discs by index), side to move, move
    number (1 before Black's first placement), and the winner once a suicide has ended the game."""

    discs: tuple[Disc, ...] = ()
    to_move: Colour = Colour.BLACK
    move_number: int = 1
    winner: Colour | None = None

    def __post_init__(self) -> None:
        discs = tuple(self.discs)
        for i, disc in enumerate(discs):
            if not isinstance(disc, Disc):
                raise InvalidDiscError(f"disc {i} must be a Disc, got {disc!r}")
        object.__setattr__(self, "discs", discs)
        object.__setattr__(self, "to_move", parse_colour(self.to_move, "to_move"))
        if self.winner is not None:
            object.__setattr__(self, "winner", parse_colour(self.winner, "winner"))
        number = self.move_number
        if isinstance(number, bool) or not isinstance(number, (int, np.integer)) or number < 1:
            raise InvalidDiscError(f"move_number must be an integer >= 1, got {number!r}")
        object.__setattr__(self, "move_number", int(number))

    @classmethod
    def empty(cls) -> Position:
        """The start: empty board, Black to move, move 1."""
        return cls((), Colour.BLACK, 1)

    @property
    def is_over(self) -> bool:
        return self.winner is not None

    # -- arrays for vectorised judgement (computed once per position) --------------------------
    @cached_property
    def centres(self) -> np.ndarray:
        """`(N, 2)` float64 disc centres in board units (read-only)."""
        xy = np.empty((len(self.discs), 2), dtype=np.float64)
        xy[:, 0] = [d.x for d in self.discs]
        xy[:, 1] = [d.y for d in self.discs]
        xy.setflags(write=False)
        return xy

    @cached_property
    def is_black(self) -> np.ndarray:
        """`(N,)` bool, True where the disc is black (read-only)."""
        mask = np.array([d.colour is Colour.BLACK for d in self.discs], dtype=bool)
        mask.setflags(write=False)
        return mask

    @cached_property
    def is_white(self) -> np.ndarray:
        """`(N,)` bool, True where the disc is white (read-only)."""
        mask = ~self.is_black
        mask.setflags(write=False)
        return mask

    def colour_mask(self, colour: Colour) -> np.ndarray:
        """`(N,)` bool, True where the disc has `colour` (read-only)."""
        return self.is_black if colour is Colour.BLACK else self.is_white

    # -- text forms ----------------------------------------------------------------------------
    def to_text(self) -> str:
        """`dition to_move=black move=1 [winner=white]` then one `colour x y` line per disc.

        Coordinates are written with `repr(float)`, so `from_text(p.to_text()) == p` exactly."""
        head = f"dition to_move={self.to_move.value} move={self.move_number}"
        if self.winner is not None:
            head += f" winner={self.winner.value}"
        lines = [head] + [f"{d.colour.value} {d.x!r} {d.y!r}" for d in self.discs]
        return "\n".join(lines) + "\n"

    @classmethod
    def from_text(cls, text: str) -> Position:
        """Parse `to_text()` output; blank lines and `#` comments are ignored."""
        rows = [(n, line.split("#", 1)[0].strip()) for n, line in enumerate(text.splitlines(), 1)]
        rows = [(n, line) for n, line in rows if line]
        if not rows:
            raise InvalidNotationError("empty Dition position text: expected a 'dition ...' line")
        n, head = rows[0]
        fields = head.split()
        if fields[0] != "dition":
            raise InvalidNotationError(
                f"line {n}: expected 'dition to_move=... move=...', got {head!r}"
            )
        header: dict[str, str] = {}
        for item in fields[1:]:
            key, sep, value = item.partition("=")
            if not sep or key not in ("to_move", "move", "winner") or key in header:
                raise InvalidNotationError(f"line {n}: unexpected header field {item!r}")
            header[key] = value
        try:
            to_move = parse_colour(header.get("to_move", "black"), "to_move")
            winner = parse_colour(header["winner"], "winner") if "winner" in header else None
            move_number = int(header.get("move", "1"))
        except (InvalidDiscError, ValueError) as exc:
            raise InvalidNotationError(f"line {n}: {exc}") from None
        discs = []
        for n, line in rows[1:]:
            parts = line.split()
            if len(parts) != 3:
                raise InvalidNotationError(f"line {n}: expected 'colour x y', got {line!r}")
            try:
                discs.append(Disc(float(parts[1]), float(parts[2]), parse_colour(parts[0], "colour")))
            except ValueError as exc:
                raise InvalidNotationError(f"line {n}: {line!r}: {exc}") from None
        try:
            return cls(tuple(discs), to_move, move_number, winner)
        except InvalidDiscError as exc:
            raise InvalidNotationError(f"line {rows[0][0]}: {exc}") from None

    @classmethod
    def from_diagram(
        cls,
        diagram: str,
        *,
        origin: tuple[float, float] = (CENTRE_MIN, CENTRE_MIN),
        step: float = 1.0,
        to_move: Colour = Colour.BLACK,
        move_number: int = 1,
    ) -> Position:
        """A position from a small diagram (for tests); see `parse_diagram`."""
        return parse_diagram(
            diagram, origin=origin, step=step, to_move=to_move, move_number=move_number
        )[0]

    def with_discs(self, discs: Iterable[Disc]) -> Position:
        return Position(tuple(discs), self.to_move, self.move_number, self.winner)

    def __repr__(self) -> str:
        return f"Position.from_text({self.to_text()!r})"


def parse_diagram(
    diagram: str,
    *,
    origin: tuple[float, float] = (CENTRE_MIN, CENTRE_MIN),
    step: float = 1.0,
    to_move: Colour = Colour.BLACK,
    move_number: int = 1,
) -> tuple[Position, dict[str, tuple[float, float]]]:
    """Read a diagram of whitespace-separated tokens, one per lattice point.

    Token in column c of row r (blank lines skipped) sits at `origin + (c, r) * step`.
    `b`/`x` black disc, `w`/`o` white disc, `.` empty; any other single character is a *mark*
    (e.g. `*` for the placement to test), returned by name with its point. Discs are numbered in
    reading order."""
    if not (math.isfinite(step) and step > 0):
        raise InvalidParameterError(f"diagram step must be a positive number, got {step!r}")
    discs: list[Disc] = []
    marks: dict[str, tuple[float, float]] = {}
    rows = [line.split() for line in diagram.splitlines() if line.strip()]
    for r, tokens in enumerate(rows):
        for c, token in enumerate(tokens):
            x, y = origin[0] + c * step, origin[1] + r * step
            if len(token) != 1:
                raise InvalidNotationError(
                    f"diagram row {r}, column {c}: token {token!r} is not one character"
                )
            if token == ".":
                continue
            if token.lower() in _DIAGRAM_DISCS:
                discs.append(Disc(x, y, _DIAGRAM_DISCS[token.lower()]))
            elif token in marks:
                raise InvalidNotationError(f"diagram mark {token!r} appears twice")
            else:
                marks[token] = (x, y)
    return Position(tuple(discs), to_move, move_number), marks


# --- judging a placement ----------------------------------------------------------------------
class Illegal(StrEnum):
    """Why a placement is illegal (the `reason` strings of `Legality` and of `referee judge`)."""

    GAME_OVER = "game_over"
    OUTSIDE = "outside"
    OVERLAP = "overlap"


@dataclass(frozen=True)
class Legality:
    """Whether a placement is legal; if not, `reason` (an `Illegal` value), a sentence, and the
    indices of the discs it overlaps."""

    legal: bool
    reason: str | None = None
    detail: str = ""
    conflicts: tuple[int, ...] = ()

    def __bool__(self) -> bool:
        return self.legal


class Outcome(StrEnum):
    """What a legal placement did."""

    PLACED = "placed"  #: nothing disappeared
    CAPTURE = "capture"  #: opponent discs disappeared, the placed disc stays
    SACRIFICE = "sacrifice"  #: the placed disc disappeared together with opponent discs
    SUICIDE = "suicide"  #: only the placed disc disappeared: the mover loses


@dataclass(frozen=True)
class Verdict:
    """The judgement of one placement. Indices refer to the discs of the position *before* it."""

    outcome: Outcome
    placed: Disc
    removed: tuple[int, ...]  #: opponent discs that disappear (ascending)
    placed_removed: bool
    winner: Colour | None
    opponents_in_range: tuple[int, ...] = ()  #: opponent discs within range of the placed one


def _fmt(x: float, y: float) -> str:
    return f"({x:g}, {y:g})"


def check_placement(position: Position, x: float, y: float) -> Legality:
    """Whether the side to move may place a disc centred at `(x, y)`.

    Checked in this order: the game is over; the disc would not lie wholly on the board
    (`0.5 <= x, y <= 19.5`, inclusive); it would overlap a disc (centre distance < 1; touching at
    exactly 1 is allowed)."""
    return _check(position, parse_coordinate(x, "placement x"), parse_coordinate(y, "placement y"))[0]


def _check(position: Position, x: float, y: float) -> tuple[Legality, np.ndarray | None]:
    """The legality, and the squared distances from `(x, y)` to every disc if computed."""
    if position.winner is not None:
        return Legality(
            False, Illegal.GAME_OVER, f"the game is over: {position.winner.value} won"
        ), None
    if not on_board(x, y):
        bad = [f"{n} = {v:g}" for n, v in (("x", x), ("y", y)) if not CENTRE_MIN <= v <= CENTRE_MAX]
        return Legality(
            False,
            Illegal.OUTSIDE,
            f"{' and '.join(bad)} puts part of the disc off the board "
            f"(centres must lie in [{CENTRE_MIN:g}, {CENTRE_MAX:g}])",
        ), None
    if not position.discs:
        return _LEGAL, None
    d2 = _dist_sq_to(position.centres, x, y)
    hits = np.flatnonzero(d2 < TOUCH_SQ)
    if hits.size:
        i = int(hits[0])
        disc = position.discs[i]
        return Legality(
            False,
            Illegal.OVERLAP,
            f"overlaps disc {i} ({disc.colour.value} at {_fmt(disc.x, disc.y)}, centre "
            f"distance {math.sqrt(float(d2[i])):.4g} < 1)"
            + (f" and {hits.size - 1} more" if hits.size > 1 else ""),
            tuple(int(h) for h in hits),
        ), d2
    return _LEGAL, d2


_LEGAL = Legality(True)


def _dist_sq_to(centres: np.ndarray, x: float, y: float) -> np.ndarray:
    dx = centres[:, 0] - x
    dy = centres[:, 1] - y
    return dx * dx + dy * dy


def judge_placement(position: Position, x: float, y: float) -> Verdict:
    """The verdict of placing a disc of the side to move at `(x, y)`, without building the new
    position. Raises `IllegalPlacementError` (an `IllegalMoveError`) if the placement is illegal.

    Disappearance is decided once, on the board with the new disc on it: the placed disc goes if
    4+ opponent discs are within range of it; an opponent disc goes if it is within range of the
    placed disc and 4+ discs of the mover (the placed one included) are within range of it. Other
    discs' neighbourhoods do not change, so they cannot qualify; nothing cascades."""
    x = parse_coordinate(x, "placement x")
    y = parse_coordinate(y, "placement y")
    legality, d2 = _check(position, x, y)
    if not legality.legal:
        raise IllegalPlacementError(
            f"illegal placement at {_fmt(x, y)} for {position.to_move.value} (move "
            f"{position.move_number}, {len(position.discs)} discs on the board): "
            f"{legality.reason}: {legality.detail}"
        )
    mover = position.to_move
    placed = Disc(x, y, mover)
    if d2 is None:
        return Verdict(Outcome.PLACED, placed, (), False, None, ())
    centres = position.centres
    is_opponent = position.colour_mask(mover.opponent)
    near = np.flatnonzero((d2 < RANGE_SQ) & is_opponent)
    placed_removed = near.size >= DISAPPEAR_COUNT
    removed: tuple[int, ...] = ()
    if near.size:
        # for each opponent disc in range: the mover's discs within range of it
        ex = centres[near, 0][:, None] - centres[:, 0]
        ey = centres[near, 1][:, None] - centres[:, 1]
        in_range = (ex * ex + ey * ey < RANGE_SQ) & position.colour_mask(mover)
        counts = np.count_nonzero(in_range, axis=1) + 1  # + the placed disc
        removed = tuple(near[counts >= DISAPPEAR_COUNT].tolist())
    if placed_removed:
        outcome = Outcome.SACRIFICE if removed else Outcome.SUICIDE
    else:
        outcome = Outcome.CAPTURE if removed else Outcome.PLACED
    winner = mover.opponent if outcome is Outcome.SUICIDE else None
    return Verdict(outcome, placed, removed, placed_removed, winner, tuple(near.tolist()))


def apply_placement(position: Position, x: float, y: float) -> tuple[Position, Verdict]:
    """Place a disc of the side to move at `(x, y)`: the new position and the verdict.

    The new position keeps the surviving discs in their old order, then the placed disc (if it
    survives); the other side is to move, the move number goes up by one, and after a suicide the
    opponent is the winner. Raises `IllegalPlacementError` for an illegal placement."""
    verdict = judge_placement(position, x, y)
    if verdict.removed:
        gone = set(verdict.removed)
        discs = [d for i, d in enumerate(position.discs) if i not in gone]
    else:
        discs = list(position.discs)
    if not verdict.placed_removed:
        discs.append(verdict.placed)
    after = Position(
        tuple(discs), position.to_move.opponent, position.move_number + 1, verdict.winner
    )
    if "centres" in position.__dict__ and "is_black" in position.__dict__:
        # carry the arrays over instead of rebuilding them from the discs at the next move
        keep = np.ones(len(position.discs), dtype=bool)
        keep[list(verdict.removed)] = False
        centres, is_black = position.centres[keep], position.is_black[keep]
        if not verdict.placed_removed:
            centres = np.vstack([centres, [(verdict.placed.x, verdict.placed.y)]])
            is_black = np.append(is_black, verdict.placed.colour is Colour.BLACK)
        centres.setflags(write=False)
        is_black.setflags(write=False)
        after.__dict__["centres"] = centres
        after.__dict__["is_black"] = is_black
    return after, verdict


# --- checking positions read by a camera -----------------------------------------------------
class Status(IntFlag):
    """What is wrong with a set of discs (python-chess style flags; `VALID` is 0)."""

    VALID = 0
    OVERLAP = 1  #: two discs closer than one diameter
    OFF_BOARD = 2  #: a disc not wholly on the playing area
    SHOULD_HAVE_DISAPPEARED = 4  #: a disc within range of 4+ opponent discs


@dataclass(frozen=True)
class StatusReport:
    flags: Status
    overlapping: tuple[tuple[int, int], ...] = ()  #: pairs (i < j) with centre distance < 1
    off_board: tuple[int, ...] = ()
    should_have_disappeared: tuple[int, ...] = ()

    @property
    def valid(self) -> bool:
        return self.flags == Status.VALID

    def __bool__(self) -> bool:
        return self.valid


def _discs_of(discs: Position | Sequence[Disc]) -> Position:
    if isinstance(discs, Position):
        return discs
    return Position(tuple(discs))


def _pairs_within(centres: np.ndarray, distance_sq: float, slack: float = 1e-6) -> np.ndarray:
    """`(P, 2)` index pairs i < j with squared centre distance < `distance_sq` (exact test)."""
    if len(centres) < 2:
        return np.empty((0, 2), dtype=np.intp)
    from scipy.spatial import cKDTree

    pairs = cKDTree(centres).query_pairs(math.sqrt(distance_sq) + slack, output_type="ndarray")
    if not len(pairs):
        return np.empty((0, 2), dtype=np.intp)
    d = centres[pairs[:, 0]] - centres[pairs[:, 1]]
    keep = d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1] < distance_sq
    pairs = pairs[keep]
    return pairs[np.lexsort((pairs[:, 1], pairs[:, 0]))]


def opponent_counts(discs: Position | Sequence[Disc]) -> np.ndarray:
    """`(N,)` int: for each disc, how many discs of the other colour are within range of it."""
    position = _discs_of(discs)
    counts = np.zeros(len(position.discs), dtype=np.intp)
    pairs = _pairs_within(position.centres, RANGE_SQ)
    if len(pairs):
        black = position.is_black
        cross = pairs[black[pairs[:, 0]] != black[pairs[:, 1]]]
        counts += np.bincount(cross.ravel(), minlength=len(counts))
    return counts


def status(discs: Position | Sequence[Disc]) -> StatusReport:
    """Flags for a set of discs, typically read from a camera.

    A settled Dition position never has a disc within range of 4+ opponents: every placement
    removes exactly the discs that reach 4, and removal only lowers counts. So such a disc means
    the players have not yet taken off what disappeared (or the reading is wrong)."""
    position = _discs_of(discs)
    flags = Status.VALID
    overlap = _pairs_within(position.centres, TOUCH_SQ)
    overlapping = tuple((int(i), int(j)) for i, j in overlap)
    if overlapping:
        flags |= Status.OVERLAP
    c = position.centres
    inside = ((c >= CENTRE_MIN) & (c <= CENTRE_MAX)).all(axis=1)
    off = tuple(np.flatnonzero(~inside).tolist())
    if off:
        flags |= Status.OFF_BOARD
    doomed = tuple(int(i) for i in np.flatnonzero(opponent_counts(position) >= DISAPPEAR_COUNT))
    if doomed:
        flags |= Status.SHOULD_HAVE_DISAPPEARED
    return StatusReport(flags, overlapping, off, doomed)


class BorderlinePair(NamedTuple):
    """Two discs whose centre distance is within the tolerance of a rule threshold."""

    i: int
    j: int
    distance: float
    threshold: float  #: 1.0 (touching / overlap) or 2.0 (within range)


def borderline_pairs(
    discs: Position | Sequence[Disc], tolerance: float, *, range_opponents_only: bool = True
) -> list[BorderlinePair]:
    """Pairs (i < j) whose centre distance d has `|d - 1| <= tolerance` or `|d - 2| <= tolerance`.

    The range threshold matters only between discs of different colours, so by default same-colour
    pairs are reported only near 1. Sorted by closeness to the threshold, then by (i, j)."""
    tol = parse_coordinate(tolerance, "tolerance", InvalidParameterError)
    if tol < 0:
        raise InvalidParameterError(f"tolerance must be >= 0, got {tol!r}")
    position = _discs_of(discs)
    centres = position.centres
    pairs = _pairs_within(centres, (RANGE_DISTANCE + tol) ** 2 + 1e-9)
    if not len(pairs):
        return []
    d = centres[pairs[:, 0]] - centres[pairs[:, 1]]
    dist = np.sqrt(d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1])
    cross = position.is_black[pairs[:, 0]] != position.is_black[pairs[:, 1]]
    out: list[BorderlinePair] = []
    for threshold, allowed in ((TOUCH_DISTANCE, None), (RANGE_DISTANCE, cross)):
        hit = np.abs(dist - threshold) <= tol
        if allowed is not None and range_opponents_only:
            hit &= allowed
        for k in np.flatnonzero(hit):
            out.append(
                BorderlinePair(int(pairs[k, 0]), int(pairs[k, 1]), float(dist[k]), threshold)
            )
    out.sort(key=lambda p: (abs(p.distance - p.threshold), p.i, p.j, p.threshold))
    return out


# --- analysis (implemented in rules.dition_analysis) -----------------------------------------
class Danger(IntEnum):
    """Codes of a danger map: what placing a disc of the given side at a grid point would do."""

    ILLEGAL = 0
    SUICIDE = 1
    SACRIFICE = 2
    CAPTURE = 3
    SAFE = 4  #: legal and nothing disappears


@dataclass(frozen=True, eq=False)
class DangerMap:
    """`codes[iy, ix]` is the `Danger` code of a placement at `(x[ix], y[iy])` by `colour`.

    The grid points are candidate disc centres: `x` and `y` run from 0.5 in steps of
    `resolution` up to at most 19.5 (board units). Arrays are read-only."""

    codes: np.ndarray  #: (ny, nx) uint8
    x: np.ndarray  #: (nx,) float64 board units
    y: np.ndarray  #: (ny,) float64 board units
    resolution: float
    colour: Colour

    def code_at(self, x: float, y: float) -> Danger:
        """The code of the grid point nearest to `(x, y)`."""
        ix = int(np.abs(self.x - x).argmin())
        iy = int(np.abs(self.y - y).argmin())
        return Danger(int(self.codes[iy, ix]))

    def counts(self) -> dict[str, int]:
        values = np.bincount(self.codes.ravel(), minlength=len(Danger))
        return {d.name.lower(): int(values[d]) for d in Danger}

    def to_dict(self) -> dict[str, Any]:
        """JSON-able: `{"resolution", "colour", "x0", "y0", "grid": rows of codes, "codes"}`."""
        return {
            "resolution": self.resolution,
            "colour": self.colour.value,
            "x0": float(self.x[0]),
            "y0": float(self.y[0]),
            "grid": self.codes.tolist(),
            "codes": {d.name.lower(): int(d) for d in Danger},
        }
