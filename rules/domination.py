"""Domination (Sid Sackson's Focus): state, moves, legality, apply, outcome, text forms.

The precise rules implemented here are in `seeds/domination.md`. Vocabulary first:

- The board is the 8x8 square without its 12 cut corner cells: 52 playable `CELLS`, named
  "a1".."h8" (file letter, rank digit). Cell (file f, rank r) has its centre at
  `(f + 0.5, 8 - r + 0.5)` in the Domination board frame of DESIGN.md (unit = one cell, a8
  top-left).
- A stack is a bottom-to-top string of player letters ("GRG": green at the bottom, green on
  top); it belongs to the player whose letter is on top. At most `MAX_HEIGHT` = 5 pieces.
- Players are single uppercase letters, G R B Y by default, listed in turn order.
- A `Move` is a step (the top `count` pieces of a stack, `count` cells in a straight line), a
  reserve placement, or (Sackson's anti-symmetry option only) a pre-game swap.

Internally the board is a tuple of 52 strings indexed like `CELLS` ("" = empty), and the
neighbour / target tables are precomputed, so move generation and apply are cheap.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from rules.errors import IllegalMoveError, InvalidNotationError, InvalidStateError

# ----------------------------------------------------------------------------------------------
# Vocabulary
# ----------------------------------------------------------------------------------------------

FILES = "abcdefgh"
RANKS = "12345678"
MAX_HEIGHT = 5
#: pieces each player must capture from every opponent to win with 3 or 4 players
CAPTURE_TARGET = 3
DEFAULT_PLAYERS: tuple[str, ...] = ("G", "R", "B", "Y")
#: pieces per player at the start (2 players: standard start; 3-4 players: individual set-up)
PIECES_PER_PLAYER: Mapping[int, int] = {2: 18, 3: 12, 4: 13}
EMPTY = "."
CUT = "#"

CUT_CELLS: frozenset[str] = frozenset(
    {"a1", "b1", "a2", "g1", "h1", "h2", "a7", "a8", "b8", "g8", "h8", "h7"}
)
#: the 52 playable cells, rank 1 first, files a..h within a rank (python-chess order)
CELLS: tuple[str, ...] = tuple(
    f + r for r in RANKS for f in FILES if f + r not in CUT_CELLS
)
CELL_INDEX: Mapping[str, int] = {c: i for i, c in enumerate(CELLS)}
N_CELLS = len(CELLS)

#: direction name -> (file step, rank step)
DIRECTIONS: Mapping[str, tuple[int, int]] = {"N": (0, 1), "S": (0, -1), "E": (1, 0), "W": (-1, 0)}

#: Sackson's 2-player start, rank 7 down to rank 2 over files b..g; "A" = first player.
STANDARD_ROWS: tuple[str, ...] = ("AABBAA", "BBAABB", "AABBAA", "BBAABB", "AABBAA", "BBAABB")


def cell_file_rank(cell: str) -> tuple[int, int]:
    """(file index 0..7, rank 1..8) of a playable cell; raises InvalidNotationError otherwise."""
    if cell not in CELL_INDEX:
        raise InvalidNotationError(_bad_cell_text(cell))
    return FILES.index(cell[0]), int(cell[1])


def cell_centre(cell: str) -> tuple[float, float]:
    """Centre of `cell` in the Domination board frame (unit = one cell, a8 top-left)."""
    f, r = cell_file_rank(cell)
    return (f + 0.5, 8 - r + 0.5)


def _bad_cell_text(cell: object) -> str:
    if isinstance(cell, str) and cell in CUT_CELLS:
        return f"{cell!r} is a cut corner cell, not part of the board"
    return f"{cell!r} is not a cell name (expected a1..h8 without the 12 cut corners)"


def _build_targets() -> tuple[tuple[tuple[int, ...], ...], ...]:
    """TARGETS[i][d] = cells at exactly distance d (1..5) from cell i in the 4 directions."""
    table = []
    for cell in CELLS:
        f, r = FILES.index(cell[0]), int(cell[1])
        by_distance: list[tuple[int, ...]] = [()]
        for d in range(1, MAX_HEIGHT + 1):
            found = []
            for df, dr in DIRECTIONS.values():
                ff, rr = f + df * d, r + dr * d
                if 0 <= ff < 8 and 1 <= rr <= 8:
                    name = FILES[ff] + str(rr)
                    if name in CELL_INDEX:
                        found.append(CELL_INDEX[name])
            by_distance.append(tuple(found))
        table.append(tuple(by_distance))
    return tuple(table)


TARGETS = _build_targets()


# ----------------------------------------------------------------------------------------------
# Moves
# ----------------------------------------------------------------------------------------------


class MoveKind(enum.Enum):
    STEP = "step"
    PLACE = "place"
    SWAP = "swap"


@dataclass(frozen=True, slots=True)
class Move:
    """One move. Build with `Move.step`, `Move.place` or `Move.swap`; `repr` pastes back.

    step: the top `count` pieces of `from_cell` go to `to_cell`; place: one reserve piece goes
    onto `to_cell`; swap (anti-symmetry pre-game only): the mover's piece on `from_cell` and the
    opponent's piece on `to_cell` change places.
    """

    kind: MoveKind
    to_cell: str
    from_cell: str | None = None
    count: int = 1

    @classmethod
    def step(cls, from_cell: str, to_cell: str, count: int) -> Move:
        return cls(MoveKind.STEP, to_cell, from_cell, count)

    @classmethod
    def place(cls, cell: str) -> Move:
        return cls(MoveKind.PLACE, cell, None, 1)

    @classmethod
    def swap(cls, own_cell: str, other_cell: str) -> Move:
        return cls(MoveKind.SWAP, other_cell, own_cell, 0)

    def __repr__(self) -> str:
        if self.kind is MoveKind.STEP:
            return f"Move.step({self.from_cell!r}, {self.to_cell!r}, {self.count})"
        if self.kind is MoveKind.PLACE:
            return f"Move.place({self.to_cell!r})"
        return f"Move.swap({self.from_cell!r}, {self.to_cell!r})"

    def __str__(self) -> str:
        """Short text: "d4-d6/2", "+e5", "b7~c7"; `Move.from_text` reads it back."""
        if self.kind is MoveKind.STEP:
            return f"{self.from_cell}-{self.to_cell}/{self.count}"
        if self.kind is MoveKind.PLACE:
            return f"+{self.to_cell}"
        return f"{self.from_cell}~{self.to_cell}"

    @classmethod
    def from_text(cls, text: str) -> Move:
        t = text.strip()
        try:
            if t.startswith("+"):
                return cls.place(_cell(t[1:]))
            if "~" in t:
                a, b = t.split("~")
                return cls.swap(_cell(a), _cell(b))
            path, count = t.split("/")
            a, b = path.split("-")
            return cls.step(_cell(a), _cell(b), int(count))
        except (ValueError, InvalidNotationError) as exc:
            raise InvalidNotationError(
                f"cannot read move {text!r} (expected 'd4-d6/2', '+e5' or 'b7~c7'): {exc}"
            ) from None

    def to_json(self) -> dict[str, object]:
        if self.kind is MoveKind.STEP:
            return {"from": self.from_cell, "to": self.to_cell, "count": self.count}
        if self.kind is MoveKind.PLACE:
            return {"place": self.to_cell}
        return {"swap": [self.from_cell, self.to_cell]}

    @classmethod
    def from_json(cls, obj: object) -> Move:
        if not isinstance(obj, Mapping):
            raise InvalidNotationError(f"a move must be a JSON object, got {obj!r}")
        keys = set(obj)
        if keys == {"place"}:
            return cls.place(_cell(obj["place"]))
        if keys == {"swap"}:
            pair = obj["swap"]
            if not (isinstance(pair, list | tuple) and len(pair) == 2):
                raise InvalidNotationError(f"'swap' needs two cells, got {pair!r}")
            return cls.swap(_cell(pair[0]), _cell(pair[1]))
        if keys == {"from", "to", "count"}:
            count = obj["count"]
            if not isinstance(count, int) or isinstance(count, bool):
                raise InvalidNotationError(f"move 'count' must be an integer, got {count!r}")
            return cls.step(_cell(obj["from"]), _cell(obj["to"]), count)
        raise InvalidNotationError(
            f"cannot read move {dict(obj)!r}: expected {{'from','to','count'}} or {{'place'}}"
        )


def _cell(name: object) -> str:
    if not isinstance(name, str) or name not in CELL_INDEX:
        raise InvalidNotationError(_bad_cell_text(name))
    return name


#: prebuilt move objects (moves are values; sharing them keeps legal_moves cheap)
_PLACE_MOVES: tuple[Move, ...] = tuple(Move.place(c) for c in CELLS)
#: _STEPS_EXACT[i][k]: count k, distance k;  _STEPS_UPTO[i][k]: count k, distance 1..k
_STEPS_EXACT: tuple[tuple[tuple[Move, ...], ...], ...] = tuple(
    tuple(
        tuple(Move.step(CELLS[i], CELLS[j], k) for j in TARGETS[i][k]) if k else ()
        for k in range(MAX_HEIGHT + 1)
    )
    for i in range(N_CELLS)
)
_STEPS_UPTO: tuple[tuple[tuple[Move, ...], ...], ...] = tuple(
    tuple(
        tuple(Move.step(CELLS[i], CELLS[j], k) for d in range(1, k + 1) for j in TARGETS[i][d])
        for k in range(MAX_HEIGHT + 1)
    )
    for i in range(N_CELLS)
)


# ----------------------------------------------------------------------------------------------
# Variant and state
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Variant:
    """Game options. `players`: 2-4 single uppercase letters in turn (clockwise seat) order.

    partners: 4 players only; players 1+3 and 2+4 (opposite seats) form teams.
    fast: 2 players only; a player also wins as soon as the opponent has no piece on the board.
    up_to_k: the paraphrase reading "move k pieces up to k cells" instead of exactly k.
    anti_symmetry: 2 players only; Sackson's pre-game swap: before the first real move each player
        in turn exchanges one of his pieces for one of the opponent's (`Move.swap`); the second
        swap may not restore the colour-exchanging symmetry of the position.
    """

    players: tuple[str, ...] = ("G", "R")
    partners: bool = False
    fast: bool = False
    up_to_k: bool = False
    anti_symmetry: bool = False

    def __post_init__(self) -> None:
        p = self.players
        if not isinstance(p, tuple):
            object.__setattr__(self, "players", p := tuple(p))
        if not 2 <= len(p) <= 4:
            raise InvalidStateError(f"Domination needs 2 to 4 players, got {p!r}")
        for letter in p:
            if not (isinstance(letter, str) and len(letter) == 1 and "A" <= letter <= "Z"):
                raise InvalidStateError(f"a player is one uppercase letter, got {letter!r}")
        if len(set(p)) != len(p):
            raise InvalidStateError(f"player letters must differ, got {p!r}")
        if self.partners and len(p) != 4:
            raise InvalidStateError("partners needs exactly 4 players")
        if self.fast and len(p) != 2:
            raise InvalidStateError("the fast variant is for 2 players only")
        if self.anti_symmetry and len(p) != 2:
            raise InvalidStateError("the anti-symmetry swap is for 2 players only")

    def teams(self) -> tuple[tuple[str, ...], ...]:
        """The sides that win together: pairs of opposite seats with partners, else each alone."""
        p = self.players
        if self.partners:
            return ((p[0], p[2]), (p[1], p[3]))
        return tuple((x,) for x in p)

    def team_of(self, player: str) -> tuple[str, ...]:
        return next(t for t in self.teams() if player in t)

    def options_text(self) -> str:
        names = [n for n in ("partners", "fast", "up_to_k", "anti_symmetry") if getattr(self, n)]
        return " ".join(names) if names else "standard"


@dataclass(frozen=True)
class State:
    """An immutable Domination position. Build with `standard_start`, `from_setup`, `from_text`.

    board: 52 bottom-to-top stack strings indexed like `CELLS` ("" = empty).
    reserve_counts[i]: reserve pieces of players[i].
    capture_counts[i][j]: pieces of players[j] captured by players[i] (diagonal is 0).
    totals[i]: pieces players[i] owns in all (board + reserves + captured by others).
    move_number: moves made so far (0 at the start; swaps count).
    """

    board: tuple[str, ...]
    reserve_counts: tuple[int, ...]
    capture_counts: tuple[tuple[int, ...], ...]
    to_move: str
    variant: Variant = field(default_factory=Variant)
    move_number: int = 0
    totals: tuple[int, ...] = ()

    # -- views -------------------------------------------------------------------------------

    @property
    def players(self) -> tuple[str, ...]:
        return self.variant.players

    @property
    def stacks(self) -> dict[str, str]:
        """cell -> bottom-to-top stack, non-empty cells only."""
        return {CELLS[i]: s for i, s in enumerate(self.board) if s}

    @property
    def reserves(self) -> dict[str, int]:
        return dict(zip(self.players, self.reserve_counts, strict=True))

    @property
    def captured(self) -> dict[str, dict[str, int]]:
        p = self.players
        return {
            a: {b: self.capture_counts[i][j] for j, b in enumerate(p) if j != i}
            for i, a in enumerate(p)
        }

    @property
    def piece_totals(self) -> dict[str, int]:
        return dict(zip(self.players, self.totals, strict=True))

    def stack(self, cell: str) -> str:
        return self.board[CELL_INDEX[_cell(cell)]]

    def top(self, cell: str) -> str:
        """The letter on top of `cell`, or "." when it is empty."""
        s = self.stack(cell)
        return s[-1] if s else EMPTY

    def tops(self) -> dict[str, str]:
        """All 52 cells -> top letter or "." (what the camera sees)."""
        return {c: (s[-1] if s else EMPTY) for c, s in zip(CELLS, self.board, strict=True)}

    def heights(self) -> dict[str, int]:
        return {c: len(s) for c, s in zip(CELLS, self.board, strict=True)}

    def on_board(self, player: str) -> int:
        """Pieces of `player` on the board (anywhere in any stack)."""
        return sum(s.count(player) for s in self.board)

    @property
    def in_swap_phase(self) -> bool:
        return self.variant.anti_symmetry and self.move_number < 2

    # -- constructors ------------------------------------------------------------------------

    @classmethod
    def standard_start(
        cls, players: Iterable[str] = ("G", "R"), *, fast: bool = False, up_to_k: bool = False,
        anti_symmetry: bool = False,
    ) -> State:
        """Sackson's 2-player start: 18 each in 2x1 blocks over b2..g7, first player to move.

        Rank 7 reads (files b..g) A A B B A A, rank 6 B B A A B B, alternating down to rank 2,
        with A the first player and B the second (`STANDARD_ROWS`).
        """
        variant = Variant(tuple(players), fast=fast, up_to_k=up_to_k, anti_symmetry=anti_symmetry)
        if len(variant.players) != 2:
            raise InvalidStateError("the standard start is for 2 players; use State.from_setup")
        a, b = variant.players
        stacks = {}
        for row, rank in zip(STANDARD_ROWS, "765432", strict=True):
            for letter, file in zip(row, "bcdefg", strict=True):
                stacks[file + rank] = a if letter == "A" else b
        return cls.from_setup(stacks, variant.players, variant=variant)

    @classmethod
    def from_setup(
        cls,
        stacks: Mapping[str, str],
        players: Iterable[str] | None = None,
        *,
        reserves: Mapping[str, int] | None = None,
        captured: Mapping[str, Mapping[str, int]] | None = None,
        to_move: str | None = None,
        variant: Variant | None = None,
        move_number: int = 0,
        totals: Mapping[str, int] | None = None,
    ) -> State:
        """A state from cell -> stack (e.g. read from the camera), checked for representability.

        Totals default to what is accounted for (board + reserves + captured); pass the expected
        totals to have `status()` flag missing or extra pieces.
        """
        if variant is None:
            variant = Variant(tuple(players) if players is not None else ("G", "R"))
        elif players is not None and tuple(players) != variant.players:
            raise InvalidStateError(f"players {tuple(players)!r} differ from the variant's")
        p = variant.players
        board = [""] * N_CELLS
        if not isinstance(stacks, Mapping):
            raise InvalidStateError(f"stacks must map cell -> stack, got {stacks!r}")
        for cell, stack in stacks.items():
            if cell not in CELL_INDEX:
                raise InvalidStateError(f"stacks: {_bad_cell_text(cell)}")
            if not isinstance(stack, str):
                raise InvalidStateError(f"stacks: {cell} must be a string, got {stack!r}")
            stack = "" if stack == EMPTY else stack
            bad = sorted(set(stack) - set(p))
            if bad:
                raise InvalidStateError(
                    f"stacks: {cell}={stack!r} holds {''.join(bad)!r}, not one of players {p!r}"
                )
            board[CELL_INDEX[cell]] = stack
        for what, given in (("reserves", reserves), ("captured", captured), ("totals", totals)):
            if given is not None and not isinstance(given, Mapping):
                raise InvalidStateError(f"{what} must map player -> count, got {given!r}")
        for a, row in (captured or {}).items():
            if not isinstance(row, Mapping):
                raise InvalidStateError(f"captured[{a}] must map opponent -> count, got {row!r}")
        reserves = dict(reserves or {})
        captured = {a: dict(v) for a, v in (captured or {}).items()}
        for name in list(reserves) + list(captured):
            if name not in p:
                raise InvalidStateError(f"reserves/captured name {name!r}, not a player {p!r}")
        res = tuple(_count(reserves.get(x, 0), f"reserves[{x}]") for x in p)
        cap = []
        for a in p:
            row = captured.get(a, {})
            for b in row:
                if b not in p or b == a:
                    raise InvalidStateError(f"captured[{a}] names {b!r}: not an opponent")
            cap.append(tuple(0 if b == a else _count(row.get(b, 0), f"captured[{a}][{b}]")
                             for b in p))
        mover = p[0] if to_move is None else to_move
        if mover not in p:
            raise InvalidStateError(f"to_move {mover!r} is not one of players {p!r}")
        if totals is None:
            tot = tuple(
                sum(s.count(x) for s in board) + res[i] + sum(c[i] for c in cap)
                for i, x in enumerate(p)
            )
        else:
            tot = tuple(_count(totals.get(x, 0), f"totals[{x}]") for x in p)
        if not isinstance(move_number, int) or move_number < 0:
            raise InvalidStateError(f"move_number must be >= 0, got {move_number!r}")
        return cls(tuple(board), res, tuple(cap), mover, variant, move_number, tot)

    # -- text form ---------------------------------------------------------------------------

    def to_text(self) -> str:
        """A diagram with a header; `State.from_text(s.to_text()) == s`.

        Rows run from rank 8 (top of the board frame) down to rank 1; `#` marks cut cells, `.`
        empty ones, stacks read bottom to top.
        """
        p = self.players
        lines = [
            f"players: {' '.join(p)}",
            f"variant: {self.variant.options_text()}",
            f"to move: {self.to_move}",
            f"move: {self.move_number}",
            "reserves: " + " ".join(f"{x}={n}" for x, n in zip(p, self.reserve_counts, strict=True)),
            "captured: " + " ".join(
                f"{a}:" + ",".join(f"{b}={self.capture_counts[i][j]}"
                                   for j, b in enumerate(p) if j != i)
                for i, a in enumerate(p)
            ),
            "totals: " + " ".join(f"{x}={n}" for x, n in zip(p, self.totals, strict=True)),
            "   " + " ".join(f"{f:<5}" for f in FILES).rstrip(),
        ]
        for r in reversed(RANKS):
            cells = []
            for f in FILES:
                name = f + r
                if name in CUT_CELLS:
                    cells.append(CUT)
                else:
                    cells.append(self.board[CELL_INDEX[name]] or EMPTY)
            lines.append(f"{r}  " + " ".join(f"{c:<5}" for c in cells).rstrip())
        return "\n".join(lines) + "\n"

    @classmethod
    def from_text(cls, text: str) -> State:
        try:
            return _parse_state(text)
        except (KeyError, ValueError, IndexError) as exc:
            if isinstance(exc, InvalidStateError | InvalidNotationError):
                raise
            raise InvalidNotationError(f"cannot read state text: {exc}") from None

    def __str__(self) -> str:
        return self.to_text()


def _count(value: object, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise InvalidStateError(f"{what} must be a whole number >= 0, got {value!r}")
    return value


def _pairs(text: str) -> dict[str, int]:
    out = {}
    for item in text.replace(",", " ").split():
        k, v = item.split("=")
        out[k] = int(v)
    return out


def _parse_state(text: str) -> State:
    header: dict[str, str] = {}
    rows: dict[str, list[str]] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if ":" in line.split()[0] or line.startswith("to move:"):
            key, _, value = line.partition(":")
            header[key.strip()] = value.strip()
        elif line[0] in RANKS and len(line.split()) == 9:
            rows[line[0]] = line.split()[1:]
        elif line.split() == list(FILES):
            continue
        else:
            raise InvalidNotationError(f"cannot read state line {raw!r}")
    missing = {"players", "to move", "reserves", "captured"} - set(header)
    if missing or len(rows) != 8:
        raise InvalidNotationError(
            f"state text needs header lines {sorted(missing)} and 8 board rows (got {len(rows)})"
        )
    players = tuple(header["players"].split())
    opts = set(header.get("variant", "standard").split()) - {"standard"}
    unknown = opts - {"partners", "fast", "up_to_k", "anti_symmetry"}
    if unknown:
        raise InvalidNotationError(f"unknown variant options {sorted(unknown)}")
    variant = Variant(players, **{o: True for o in opts})
    stacks = {}
    for r, cells in rows.items():
        for f, token in zip(FILES, cells, strict=True):
            name = f + r
            if name in CUT_CELLS:
                if token != CUT:
                    raise InvalidNotationError(f"cut cell {name} must be drawn '#', got {token!r}")
            elif token == CUT:
                raise InvalidNotationError(f"{name} is playable but drawn as a cut cell")
            elif token != EMPTY:
                stacks[name] = token
    captured: dict[str, dict[str, int]] = {}
    for item in header["captured"].split():
        who, _, rest = item.partition(":")
        captured[who] = _pairs(rest)
    return State.from_setup(
        stacks,
        variant=variant,
        reserves=_pairs(header["reserves"]),
        captured=captured,
        to_move=header["to move"],
        move_number=int(header.get("move", "0")),
        totals=_pairs(header["totals"]) if "totals" in header else None,
    )


# ----------------------------------------------------------------------------------------------
# Results
# ----------------------------------------------------------------------------------------------


class Termination(enum.Enum):
    NO_MOVES = "no_moves"            # 2 players: the player to move cannot move and loses
    LAST_TO_MOVE = "last_to_move"    # 3-4 players: only one player (team) can still move
    ALL_PIECES = "all_pieces"        # fast 2-player variant: opponent has no piece on the board
    CAPTURES = "captures"            # 3-4 players: 3+ captured from each opponent


@dataclass(frozen=True)
class Outcome:
    termination: Termination
    winner: str
    #: the winning side: (winner,) or both partners
    winners: tuple[str, ...]


@dataclass(frozen=True)
class MoveResult:
    """What a move did. `removed`: pieces taken off the bottom, bottom first."""

    move: Move
    mover: str
    removed: str = ""
    #: player -> pieces that went to that player's reserve (the mover's own, or a partner's)
    to_reserve: Mapping[str, int] = field(default_factory=dict)
    #: opponent -> pieces of theirs the mover captured with this move
    captured: Mapping[str, int] = field(default_factory=dict)
    winner: str | None = None
    skipped_players: tuple[str, ...] = ()

    def describe(self, names: Mapping[str, str] | None = None) -> str:
        """Plain words for the players, e.g. "remove 2 from the bottom of d4: 1 R captured, ..."."""
        names = names or {}
        if not self.removed:
            return ""
        parts = [f"{n} {names.get(p, p)} captured" for p, n in self.captured.items() if n]
        parts += [f"{n} {names.get(p, p)} to {names.get(p, p)}'s reserve"
                  for p, n in self.to_reserve.items() if n]
        return (f"remove {len(self.removed)} from the bottom of {self.move.to_cell}: "
                + ", ".join(parts))


class Status(enum.IntFlag):
    """What is wrong with a state (e.g. one read from the camera). `VALID` when nothing is."""

    VALID = 0
    STACK_TOO_TALL = enum.auto()
    PIECES_MISSING = enum.auto()    # some player has fewer pieces accounted for than expected
    PIECES_EXTRA = enum.auto()      # some player has more pieces than expected
    EMPTY_BOARD = enum.auto()
    TO_MOVE_CANNOT_MOVE = enum.auto()


# ----------------------------------------------------------------------------------------------
# Rules
# ----------------------------------------------------------------------------------------------


def _can_move(state: State, index: int) -> bool:
    if state.reserve_counts[index] > 0:
        return True
    letter = state.players[index]
    return any(s and s[-1] == letter for s in state.board)


def legal_moves(state: State) -> list[Move]:
    """Every legal move of the player to move (empty when the game is over)."""
    if state.in_swap_phase:
        return legal_swaps(state)
    if outcome(state) is not None:
        return []
    return _moves_of(state)


def _moves_of(state: State) -> list[Move]:
    me = state.to_move
    table = _STEPS_UPTO if state.variant.up_to_k else _STEPS_EXACT
    out: list[Move] = []
    for i, s in enumerate(state.board):
        if s and s[-1] == me:
            row = table[i]
            for k in range(1, min(len(s), MAX_HEIGHT) + 1):
                out.extend(row[k])
    if state.reserve_counts[state.players.index(me)] > 0:
        out.extend(_PLACE_MOVES)
    return out


def check_move(state: State, move: Move) -> str | None:
    """Why `move` is illegal in `state`, or None when it is legal."""
    if not isinstance(move, Move):
        return f"not a move: {move!r}"
    for name in (move.to_cell, move.from_cell):
        if name is not None and name not in CELL_INDEX:
            return _bad_cell_text(name)
    me = state.to_move
    if state.in_swap_phase:
        return check_swap(state, move)
    if move.kind is MoveKind.SWAP:
        return "a swap is only allowed before the game with the anti-symmetry option"
    done = outcome(state)
    if done is not None:
        return f"the game is over ({done.termination.value}, {'+'.join(done.winners)} won)"
    if move.kind is MoveKind.PLACE:
        if state.reserve_counts[state.players.index(me)] <= 0:
            return f"{me} has no reserve pieces to place"
        return None
    assert move.from_cell is not None
    src = state.board[CELL_INDEX[move.from_cell]]
    if not src:
        return f"{move.from_cell} is empty"
    if src[-1] != me:
        return f"the top of {move.from_cell} is {src[-1]}, not {me} ({me} to move)"
    if not 1 <= move.count <= min(len(src), MAX_HEIGHT):
        return (f"count {move.count} is not between 1 and the height {len(src)} of "
                f"{move.from_cell}" + (f" (at most {MAX_HEIGHT})" if len(src) > MAX_HEIGHT else ""))
    (f0, r0), (f1, r1) = cell_file_rank(move.from_cell), cell_file_rank(move.to_cell)
    if f0 != f1 and r0 != r1:
        return f"{move.from_cell} to {move.to_cell} is not a straight orthogonal line"
    distance = abs(f1 - f0) + abs(r1 - r0)
    if state.variant.up_to_k:
        if not 1 <= distance <= move.count:
            return (f"{move.from_cell} to {move.to_cell} is {distance} cells; moving "
                    f"{move.count} pieces goes 1 to {move.count} cells")
    elif distance != move.count:
        return (f"{move.from_cell} to {move.to_cell} is {distance} cells; moving {move.count} "
                f"pieces goes exactly {move.count}")
    return None


def apply_move(state: State, move: Move) -> tuple[State, MoveResult]:
    """The state after `move` and what it did; raises IllegalMoveError naming move and state."""
    reason = check_move(state, move)
    if reason is not None:
        raise IllegalMoveError(
            f"illegal move {move!r} ({reason}) in position:\n{state.to_text()}"
        )
    return apply_legal_move(state, move)


def apply_legal_move(state: State, move: Move) -> tuple[State, MoveResult]:
    """`apply_move` for a move already known to be legal (no check; the inference's inner loop)."""
    p = state.players
    me = state.to_move
    mi = p.index(me)
    board = list(state.board)
    reserves = list(state.reserve_counts)
    if move.kind is MoveKind.SWAP:
        board = swap_board(state, move)
        nxt = p[(mi + 1) % len(p)]
        new = State(tuple(board), state.reserve_counts, state.capture_counts, nxt,
                    state.variant, state.move_number + 1, state.totals)
        return new, MoveResult(move, me)
    t = CELL_INDEX[move.to_cell]
    if move.kind is MoveKind.PLACE:
        reserves[mi] -= 1
        moved = me
    else:
        s = CELL_INDEX[move.from_cell]  # type: ignore[index]
        src = board[s]
        moved = src[-move.count:]
        board[s] = src[: -move.count]
    stack = board[t] + moved
    removed = ""
    to_reserve: dict[str, int] = {}
    captured_now: dict[str, int] = {}
    capture_counts = state.capture_counts
    if len(stack) > MAX_HEIGHT:
        removed = stack[: len(stack) - MAX_HEIGHT]
        stack = stack[len(stack) - MAX_HEIGHT:]
        team = state.variant.team_of(me)
        row = list(capture_counts[mi])
        for letter in removed:
            if letter in team:
                reserves[p.index(letter)] += 1
                to_reserve[letter] = to_reserve.get(letter, 0) + 1
            else:
                row[p.index(letter)] += 1
                captured_now[letter] = captured_now.get(letter, 0) + 1
        capture_counts = capture_counts[:mi] + (tuple(row),) + capture_counts[mi + 1:]
    board[t] = stack
    interim = State(tuple(board), tuple(reserves), capture_counts, me, state.variant,
                    state.move_number + 1, state.totals)
    nxt, skipped = _next_player(interim, mi)
    new = State(interim.board, interim.reserve_counts, capture_counts, nxt, state.variant,
                state.move_number + 1, state.totals)
    done = outcome(new)
    winner = None
    if done is not None:
        winner = me if me in done.winners else done.winner
    return new, MoveResult(move, me, removed, to_reserve, captured_now, winner, skipped)


def _next_player(state: State, mover_index: int) -> tuple[str, tuple[str, ...]]:
    """Who moves after players[mover_index], and the players skipped for having no move."""
    p = state.players
    if len(p) == 2:
        return p[1 - mover_index], ()
    skipped = []
    for step in range(1, len(p) + 1):
        j = (mover_index + step) % len(p)
        if _can_move(state, j):
            return p[j], tuple(skipped)
        skipped.append(p[j])
    return p[mover_index], tuple(skipped[:-1])  # unreachable after a real move: mover can move


def outcome(state: State) -> Outcome | None:
    """The result if the game is over in `state`, else None."""
    p = state.players
    v = state.variant
    if state.in_swap_phase:
        return None
    if len(p) == 2:
        if v.fast:
            for i, x in enumerate(p):
                if state.on_board(x) == 0 and state.totals[i] > 0:
                    w = p[1 - i]
                    return Outcome(Termination.ALL_PIECES, w, (w,))
        mi = p.index(state.to_move)
        if not _can_move(state, mi):
            w = p[1 - mi]
            return Outcome(Termination.NO_MOVES, w, (w,))
        return None
    for team in v.teams():
        opponents = [j for j, x in enumerate(p) if x not in team]
        if all(
            sum(state.capture_counts[p.index(a)][j] for a in team) >= CAPTURE_TARGET
            for j in opponents
        ):
            w = state.to_move if state.to_move in team else team[0]
            return Outcome(Termination.CAPTURES, w, team)
    movable = {v.team_of(x) for i, x in enumerate(p) if _can_move(state, i)}
    if len(movable) == 1:
        team = movable.pop()
        w = state.to_move if state.to_move in team else team[0]
        return Outcome(Termination.LAST_TO_MOVE, w, team)
    return None


def status(state: State, totals: Mapping[str, int] | None = None) -> Status:
    """Flags for what is wrong with `state`; `totals` (player -> pieces) overrides state.totals."""
    flags = Status.VALID
    if any(len(s) > MAX_HEIGHT for s in state.board):
        flags |= Status.STACK_TOO_TALL
    if not any(state.board):
        flags |= Status.EMPTY_BOARD
    expected = state.piece_totals if totals is None else dict(totals)
    for i, x in enumerate(state.players):
        have = (state.on_board(x) + state.reserve_counts[i]
                + sum(row[i] for row in state.capture_counts))
        want = expected.get(x, have)
        if have < want:
            flags |= Status.PIECES_MISSING
        elif have > want:
            flags |= Status.PIECES_EXTRA
    if not state.in_swap_phase and not _can_move(state, state.players.index(state.to_move)):
        flags |= Status.TO_MOVE_CANNOT_MOVE
    return flags


# ----------------------------------------------------------------------------------------------
# Sackson's anti-symmetry option: the pre-game swap
# ----------------------------------------------------------------------------------------------
# Sackson's anti-symmetry option for 2 players: the pre-game swap of one piece each.
#
# Without it the second player can at least draw by copying every move in mirror image (Paul
# Yearout's observation, reported by Martin Gardner). With `Variant(anti_symmetry=True)` the first
# two moves of the game are swaps: the player to move exchanges one piece on top of a stack of his
# with the top piece of one of the opponent's stacks (`Move.swap(own_cell, other_cell)`). The
# second swap must not give a position that is symmetric again, that is: no rotation or mirror
# of the board maps the position onto itself with the two colours exchanged.


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
    """The board after the swap `move` (no check)."""
    board = list(state.board)
    i, j = CELL_INDEX[move.from_cell], CELL_INDEX[move.to_cell]  # type: ignore[index]
    board[i], board[j] = board[i][:-1] + board[j][-1], board[j][:-1] + board[i][-1]
    return board


def check_swap(state: State, move: Move) -> str | None:
    """Why the swap `move` is illegal in the swap phase of `state`, or None."""
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
    """Every legal swap of the player to move (the swap phase)."""
    me = state.to_move
    own = [c for c, s in zip(CELLS, state.board, strict=True) if s and s[-1] == me]
    other = [c for c, s in zip(CELLS, state.board, strict=True) if s and s[-1] != me]
    moves = [Move.swap(a, b) for a in own for b in other]
    if state.move_number == 1:
        moves = [m for m in moves if check_swap(state, m) is None]
    return moves


__all__ = [
    "CAPTURE_TARGET", "CELLS", "CELL_INDEX", "CUT_CELLS", "DEFAULT_PLAYERS", "MAX_HEIGHT",
    "PIECES_PER_PLAYER", "Move", "MoveKind", "MoveResult", "Outcome", "State",
    "Status", "Termination", "Variant", "apply_move", "cell_centre", "check_move",
    "legal_moves", "outcome", "status",
]
