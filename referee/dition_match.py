"""The Dition match state machine: settled readings in, events and instructions out.

It keeps the position the board *should* show and compares every settled reading with it:

- `await_move`: one new disc of the side to move is a placement. It is checked (illegal placements
  are refused and must be taken back), measured against the thresholds (a distance that the
  vision cannot tell from 2 diameters, where the answer changes the verdict, becomes a question to
  the players), and judged by `rules.dition`. Anything else (a disc missing, two placed, the wrong
  colour, a disc pushed away) is a warning that points at the discs and waits for the board to be
  put right.
- `await_removal`: the verdict removed discs; wait until exactly those are gone, pointing at a
  wrong disc taken away.
- `question`: a borderline distance waits for the players' answer.
- `over`: suicide, a tie or an agreed draw ended the match.

Every change comes out as an event dict (with a "type"); the caller logs it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from referee.errors import CommandError
from referee.match_base import MatchBase
from referee.matching import BoardDiff, SeenDisc, diff_discs
from referee.view import turned
from rules import dition as rd
from rules import dition_analysis as da

GAME = "dition"
PLAYERS = ("black", "white")
RANGE = 2.0
OVERLAP = 1.0
HALF = 0.5
SIDE = 20.0


@dataclass(frozen=True)
class DitionSettings:
    match_tolerance: float = 0.35  # a disc seen this close to where it was is the same disc
    borderline_k: float = 3.0  # |distance - threshold| < k * combined sigma is too close to call
    borderline_min: float = 0.02  # ... and never less than this
    touching_slack: float = 0.06  # measured overlap up to this is two discs touching
    edge_slack: float = 0.06  # a disc this far over the edge is read as on the edge
    auto_answer: bool = False  # nobody to ask (offline replay): the measurement decides


@dataclass
class _Pending:
    """A placement waiting for the players to settle borderline distances."""

    x: float
    y: float
    colour: str
    sigma: float
    decisions: dict[int, bool] = field(default_factory=dict)  # disc index -> in range?
    open_pairs: list[tuple[int, float]] = field(default_factory=list)  # (index, distance)
    question_id: str = ""


#: how a role is drawn on the diagram and the camera picture (web/static/js/diagram.js,
#: referee/overlay.py): the words a verdict uses to point at a disc
RING_WORDS = {"remove": "ringed in red", "wrong": "ringed in orange",
              "missing": "shown as an orange ghost", "borderline": "ringed in yellow",
              "placed": "ringed in green"}
#: a message names at most this many discs; the diagram shows the rest
NAMED_AT_MOST = 3
#: this many discs on the board before the first move are a game in progress, not a placement
NOT_EMPTY_AT = 4


def where_words(x: float, y: float, turns: int = 0) -> str:
    """Where a disc lies in words a player can use at the table, as the diagram draws the board
    (corner 0 top-left): "near the top-left corner" (within 5 diameters of both edges), "towards
    the top-left corner", "by the left edge" (within 3), "towards the left edge", "near the
    centre" (the middle 6 x 6). The ring on the diagram and the picture gives the exact spot.
    `turns`: quarter turns clockwise of the board in the camera picture (`referee.view`)."""
    x, y = turned(x, y, turns, SIDE)
    lo, hi = SIDE / 2 - 3, SIDE / 2 + 3
    horiz = "left" if x < lo else "right" if x > hi else ""
    vert = "top" if y < lo else "bottom" if y > hi else ""
    edge_x, edge_y = min(x, SIDE - x), min(y, SIDE - y)
    if vert and horiz:
        near = "near" if max(edge_x, edge_y) < 5 else "towards"
        return f"{near} the {vert}-{horiz} corner"
    if vert or horiz:
        near = "by" if (edge_y if vert else edge_x) < 3 else "towards"
        return f"{near} the {vert or horiz} edge"
    return "near the centre"


def disc_words(colour: str, x: float, y: float, role: str, turns: int = 0) -> str:
    """"the white disc ringed in red, near the top-left corner"."""
    return f"the {colour} disc {RING_WORDS[role]}, {where_words(x, y, turns)}"


def discs_words(discs: Sequence[tuple[str, float, float]], role: str, turns: int = 0) -> str:
    """A few discs named, the rest counted: "the black disc ringed in red, by the top edge,
    the ... and 9 more ringed in red"."""
    named = [disc_words(c, x, y, role, turns) for c, x, y in discs[:NAMED_AT_MOST]]
    rest = len(discs) - len(named)
    if rest:
        named.append(f"{rest} more {RING_WORDS[role]} on the diagram")
    return ", ".join(named[:-1]) + (" and " if len(named) > 1 else "") + named[-1]


def discs_json(position: rd.Position) -> list[dict[str, Any]]:
    return [
        {"x": round(d.x, 4), "y": round(d.y, 4), "colour": d.colour.value} for d in position.discs
    ]


def position_json(position: rd.Position) -> dict[str, Any]:
    return {
        "discs": discs_json(position),
        "to_move": position.to_move.value,
        "move_number": position.move_number,
    }


def position_from_json(data: Mapping[str, Any]) -> rd.Position:
    discs = tuple(
        rd.Disc(float(d["x"]), float(d["y"]), rd.Colour(d["colour"])) for d in data["discs"]
    )
    return rd.Position(
        discs=discs,
        to_move=rd.Colour(data.get("to_move", "black")),
        move_number=int(data.get("move_number", len(discs) + 1)),
    )


def _triples(position: rd.Position) -> list[tuple[float, float, str]]:
    return [(d.x, d.y, d.colour.value) for d in position.discs]


class DitionMatch(MatchBase):
    """One Dition match. Not thread-safe: the referee loop owns it."""

    game = GAME

    def __init__(
        self,
        position: rd.Position | None = None,
        *,
        settings: DitionSettings = DitionSettings(),
        phase: str = "await_move",
        target: rd.Position | None = None,
        history: Sequence[rd.Position] = (),
        winner: str | None = None,
    ) -> None:
        self.settings = settings
        self.position = position if position is not None else rd.Position.empty()
        self.phase = phase
        self.target = target  # position after a verdict, while discs must be removed
        self.history: list[rd.Position] = list(history)  # positions before each move (undo)
        self.winner = winner
        self.pending: _Pending | None = None
        self.instruction: dict[str, Any] = self._to_move_instruction()
        self.last_move: dict[str, Any] | None = None
        self._last_signature: object = None
        self._question_seq = 0
        #: quarter turns of the board in the camera picture: the words follow the picture
        self.view_turns = 0

    def _where(self, x: float, y: float) -> str:
        return where_words(x, y, self.view_turns)

    def _disc_words(self, colour: str, x: float, y: float, role: str) -> str:
        return disc_words(colour, x, y, role, self.view_turns)

    def _discs_words(self, discs: Sequence[tuple[str, float, float]], role: str) -> str:
        return discs_words(discs, role, self.view_turns)

    # -- public view -----------------------------------------------------------------------
    @property
    def players(self) -> tuple[str, ...]:
        return PLAYERS

    @property
    def to_move(self) -> str | None:
        return None if self.phase == "over" else self.position.to_move.value

    @property
    def board_position(self) -> rd.Position:
        """What the board should show right now."""
        return self.target if self.phase == "await_removal" and self.target else self.position

    def snapshot(self) -> dict[str, Any]:
        """Everything needed to resume this match (stored with each event)."""
        out = position_json(self.position)
        out["phase"] = "await_move" if self.phase == "question" else self.phase
        if self.phase == "await_removal" and self.target is not None:
            out["target"] = discs_json(self.target)
        if self.winner is not None:
            out["winner"] = self.winner
        return out

    @classmethod
    def resume(
        cls, snapshot: Mapping[str, Any], history: Sequence[rd.Position] = (), **kw: Any
    ) -> DitionMatch:
        position = position_from_json(snapshot)
        target = None
        if snapshot.get("target") is not None:
            target = position_from_json(
                {"discs": snapshot["target"], "to_move": snapshot.get("to_move", "black")}
            )
        return cls(
            position,
            phase=str(snapshot.get("phase", "await_move")),
            target=target,
            history=history,
            winner=snapshot.get("winner"),
            **kw,
        )

    def question(self) -> dict[str, Any] | None:
        p = self.pending
        if self.phase != "question" or p is None or not p.open_pairs:
            return None
        index, distance = p.open_pairs[0]
        other = self.position.discs[index]
        return {
            "id": p.question_id,
            "kind": "borderline",
            "text": (
                f"Too close to call: the {p.colour} disc just placed and "
                f"{self._disc_words(other.colour.value, other.x, other.y, 'borderline')} are "
                f"{distance:.2f} diameters apart. Please use the measuring disc: "
                "is it supported by both (in range)?"
            ),
            "choices": [
                {"id": "in", "label": "in range"},
                {"id": "out", "label": "out of range"},
            ],
            "pair": [[p.x, p.y], [other.x, other.y]],
        }

    def borderline(self) -> list[list[float]]:
        """Pairs of discs on the board whose distance is near 1 or 2 (for the diagram)."""
        pairs = rd.borderline_pairs(self.board_position.discs, 0.05)
        return [[int(p[0]), int(p[1]), round(float(p[2]), 3)] for p in pairs]

    # -- readings --------------------------------------------------------------------------
    def observe(self, seen: Sequence[SeenDisc]) -> list[dict[str, Any]]:
        """Feed one settled reading of the board; returns the events it caused."""
        if self.phase == "over":
            return []
        if self.phase == "question":
            return self._observe_during_question(seen)
        if self.phase == "await_removal":
            return self._observe_removal(seen)
        return self._observe_move(seen)

    def _diff(self, position: rd.Position, seen: Sequence[SeenDisc]) -> BoardDiff:
        return diff_discs(_triples(position), seen, tolerance=self.settings.match_tolerance)

    def _settle(self) -> list[dict[str, Any]]:
        """The board matches what it should: clear a standing warning."""
        if self._last_signature is None:
            return []
        self._last_signature = None
        self.instruction = self._to_move_instruction()
        return [{"type": "info", "text": "The board matches again. " + self.instruction["text"]}]

    def _observe_move(self, seen: Sequence[SeenDisc]) -> list[dict[str, Any]]:
        diff = self._diff(self.position, seen)
        if diff.same:
            return self._settle()
        to_move = self.position.to_move.value
        if not diff.missing and len(diff.extra) == 1:
            new = seen[diff.extra[0]]
            if new.colour != to_move:
                return self._warn_once(
                    ("colour", diff.signature()),
                    {
                        "type": "warning",
                        "code": "wrong_colour",
                        "text": f"It is {to_move.capitalize()}'s turn: take back "
                        f"{self._disc_words(new.colour, new.x, new.y, 'wrong')}.",
                        "highlight": [{"x": new.x, "y": new.y, "role": "wrong"}],
                    },
                )
            return self._placement(new)
        return self._warn_once(diff.signature(), self._mismatch_warning(self.position, diff, seen))

    def _mismatch_warning(
        self, position: rd.Position, diff: BoardDiff, seen: Sequence[SeenDisc]
    ) -> dict[str, Any]:
        missing = [position.discs[i] for i in diff.missing]
        extra = [seen[j] for j in diff.extra]
        parts: list[str] = []
        highlight: list[dict[str, Any]] = []
        highlight += [{"x": d.x, "y": d.y, "role": "missing"} for d in missing]
        highlight += [{"x": s.x, "y": s.y, "role": "wrong"} for s in extra]
        # The message names a few discs; the diagram shows every one.
        if missing:
            parts.append("put back " + self._discs_words(
                [(d.colour.value, d.x, d.y) for d in missing], "missing"))
        if extra:
            where = self._discs_words([(s.colour, s.x, s.y) for s in extra], "wrong")
            if self._not_empty_start(position, extra):
                parts = [(f"a Dition match starts on an empty board and {len(extra)} discs "
                          "are on it: clear the board to start")]
            elif len(extra) > 1 and not missing and self.phase == "await_move":
                parts.append(f"{len(extra)} discs were placed at once ({where}): "
                             "take back all but one")
            else:
                parts.append(f"take away {where}")
        code = "moved" if len(missing) == len(extra) == 1 else "mismatch"
        if self._not_empty_start(position, extra):
            code = "not_empty"
        text = "The board does not match the diagram: " + "; ".join(parts) + "."
        if code == "moved":
            text = (
                f"A {missing[0].colour.value} disc was moved "
                f"{self._where(extra[0].x, extra[0].y)}: put it back on its orange ghost on "
                "the diagram."
            )
        return {"type": "warning", "code": code, "text": text, "highlight": highlight}

    @staticmethod
    def _not_empty_start(position: rd.Position, extra: Sequence[Any]) -> bool:
        """Many discs on the board before the first move: a game in progress (or left over),
        not a hasty player (two or three discs put down at once are that)."""
        return not position.discs and position.move_number == 1 and len(extra) >= NOT_EMPTY_AT

    # -- a placement -----------------------------------------------------------------------
    def _snap(self, x: float, y: float) -> tuple[float, float, str | None]:
        """Read a measured centre the way the physical discs must lie.

        Flat discs cannot overlap and cannot hang over the edge by a hair without the players
        seeing it: a measured overlap or overhang within the vision's slack is read as touching /
        lying on the edge. A larger one is a real fault.
        """
        s = self.settings
        lo, hi = HALF, SIDE - HALF
        if x < lo - s.edge_slack or x > hi + s.edge_slack or y < lo - s.edge_slack or y > hi + s.edge_slack:
            return x, y, "outside"
        x, y = min(max(x, lo), hi), min(max(y, lo), hi)
        for _ in range(4):
            moved = False
            for d in self.position.discs:
                dist = math.hypot(x - d.x, y - d.y)
                if dist < OVERLAP:
                    if dist < OVERLAP - s.touching_slack or dist == 0:
                        return x, y, "overlap"
                    f = (OVERLAP + 1e-9) / dist
                    x, y = d.x + (x - d.x) * f, d.y + (y - d.y) * f
                    moved = True
            if not moved:
                break
        return x, y, None

    def _placement(self, new: SeenDisc) -> list[dict[str, Any]]:
        x, y, fault = self._snap(new.x, new.y)
        legality = rd.check_placement(self.position, x, y) if fault is None else None
        if fault is not None or (legality is not None and not legality.legal):
            reason = fault or (legality.reason if legality else "illegal")
            text = {
                "outside": "must lie wholly inside the outer square",
                "overlap": "must not lie on another disc",
            }.get(str(reason), f"is not allowed ({reason})")
            return self._warn_once(
                ("illegal", round(new.x, 1), round(new.y, 1)),
                {
                    "type": "illegal",
                    "colour": new.colour,
                    "x": round(new.x, 3),
                    "y": round(new.y, 3),
                    "reason": reason,
                    "text": f"The {new.colour} disc {RING_WORDS['wrong']}, "
                    f"{self._where(new.x, new.y)}, {text}: take it back and place it again.",
                    "highlight": [{"x": new.x, "y": new.y, "role": "wrong"}],
                },
            )
        pending = _Pending(x, y, new.colour, new.sigma)
        pending.open_pairs = self._deciding_pairs(pending)
        return self._continue(pending)

    def _continue(self, p: _Pending) -> list[dict[str, Any]]:
        """Ask about the next deciding distance, or judge once none is left."""
        if not p.open_pairs:
            self.pending = None
            self.phase = "await_move"
            return self._judge(p)
        events = self._ask(p)
        if self.settings.auto_answer:
            _, distance = p.open_pairs[0]
            events += self.answer(p.question_id, "in" if distance < RANGE else "out",
                                  by="measurement")
        return events

    def _placement_point(self, p: _Pending) -> tuple[float, float]:
        """The placement with the players' decisions applied to the distances they settled."""
        x, y = p.x, p.y
        for index, inside in p.decisions.items():
            d = self.position.discs[index]
            dist = math.hypot(x - d.x, y - d.y)
            want = RANGE - 1e-6 if inside else RANGE + 1e-6
            if (dist < RANGE) != inside and dist > 0:
                f = want / dist
                x, y = d.x + (x - d.x) * f, d.y + (y - d.y) * f
        return x, y

    def _outcome_key(self, x: float, y: float) -> tuple[str, tuple[int, ...]]:
        _, verdict = rd.apply_placement(self.position, x, y)
        return verdict.outcome.value, tuple(sorted(verdict.removed))

    def _deciding_pairs(self, p: _Pending) -> list[tuple[int, float]]:
        """Borderline distances from the placed disc whose reading changes the verdict."""
        s = self.settings
        found: list[tuple[int, float]] = []
        x0, y0 = self._placement_point(p)
        base = self._outcome_key(x0, y0)
        for index, d in enumerate(self.position.discs):
            if index in p.decisions:
                continue
            dist = math.hypot(x0 - d.x, y0 - d.y)
            tol = max(s.borderline_min, s.borderline_k * math.hypot(p.sigma, 0.02))
            if abs(dist - RANGE) >= tol or dist == 0:
                continue
            flipped = RANGE + 1e-6 if dist < RANGE else RANGE - 1e-6
            f = flipped / dist
            xf, yf = d.x + (x0 - d.x) * f, d.y + (y0 - d.y) * f
            if not rd.check_placement(self.position, xf, yf).legal:
                continue
            if self._outcome_key(xf, yf) != base:
                found.append((index, dist))
        return found

    def _ask(self, p: _Pending) -> list[dict[str, Any]]:
        self._question_seq += 1
        p.question_id = f"m{self.position.move_number}-q{self._question_seq}"
        self.pending = p
        self.phase = "question"
        q = self.question()
        assert q is not None
        self.instruction = {
            "kind": "question",
            "text": "Too close to call — please use the measuring disc.",
            "highlight": [
                {"x": p.x, "y": p.y, "role": "borderline"},
                {"x": q["pair"][1][0], "y": q["pair"][1][1], "role": "borderline"},
            ],
        }
        return [{"type": "question", **q}]

    def _observe_during_question(self, seen: Sequence[SeenDisc]) -> list[dict[str, Any]]:
        # The disc in question was taken back: forget the question.
        if self._diff(self.position, seen).same and self.pending is not None:
            self.pending = None
            self.phase = "await_move"
            self.instruction = self._to_move_instruction()
            return [{"type": "info", "text": "The disc was taken back; question withdrawn."}]
        return []

    def answer(self, question_id: str, choice: str, *, by: str = "players") -> list[dict[str, Any]]:
        p = self.pending
        if self.phase != "question" or p is None:
            raise CommandError("no_question", "there is no open question")
        if question_id != p.question_id:
            raise CommandError("stale_question", f"question {question_id!r} is no longer open")
        if choice not in ("in", "out"):
            raise CommandError("bad_choice", f"answer 'in' or 'out', not {choice!r}")
        index, distance = p.open_pairs.pop(0)
        p.decisions[index] = choice == "in"
        other = self.position.discs[index]
        events: list[dict[str, Any]] = [
            {
                "type": "answer",
                "question": question_id,
                "choice": choice,
                "distance": round(distance, 4),
                "pair": [[round(p.x, 3), round(p.y, 3)], [other.x, other.y]],
                "by": by,
                "text": f"Measured by the {by}: {'in' if choice == 'in' else 'out of'} range "
                f"({distance:.2f} read by the camera).",
            }
        ]
        p.open_pairs = self._deciding_pairs(p)
        return events + self._continue(p)

    def finish(self) -> list[dict[str, Any]]:
        """The recording ended: nothing is left open in Dition."""
        return []

    def _judge(self, p: _Pending) -> list[dict[str, Any]]:
        x, y = self._placement_point(p)
        before = self.position
        after, verdict = rd.apply_placement(before, x, y)
        removed = [before.discs[i] for i in verdict.removed]
        colour = p.colour
        opp = "white" if colour == "black" else "black"
        outcome = verdict.outcome.value
        self.history.append(before)
        self._last_signature = None
        move = {
            "type": "move",
            "colour": colour,
            "x": round(x, 4),
            "y": round(y, 4),
            "outcome": outcome,
            "removed": [[round(d.x, 4), round(d.y, 4)] for d in removed],
            "placed_removed": bool(verdict.placed_removed),
            "move_number": before.move_number,
        }
        n = len(removed)
        noun = f"{n} {opp} disc{'s' if n != 1 else ''}"
        highlight = [{"x": d.x, "y": d.y, "role": "remove"} for d in removed]
        if verdict.placed_removed:
            highlight.append({"x": x, "y": y, "role": "remove"})
        events: list[dict[str, Any]]
        if outcome == "suicide":
            self.position = after
            self.winner = opp
            self.phase = "over"
            text = f"{colour.capitalize()}'s move is suicide — {opp.capitalize()} wins"
            move["text"] = text
            self.instruction = {"kind": "suicide", "text": text, "highlight": highlight}
            # the end event marks the suicide disc (and any disc it took with it)
            events = [move, {"type": "end", "winner": opp, "reason": "suicide", "text": text,
                             "x": move["x"], "y": move["y"], "highlight": highlight}]
        else:
            if outcome == "capture":
                text = (
                    f"{colour.capitalize()}'s disc {self._where(x, y)} captures {noun} — "
                    f"remove {'it' if n == 1 else 'them'} ({RING_WORDS['remove']})"
                )
            elif outcome == "sacrifice":
                text = (
                    f"{colour.capitalize()} sacrifices the disc just placed {self._where(x, y)} "
                    f"and takes {noun} — remove the {colour} disc and the {opp} "
                    f"disc{'s' if n != 1 else ''} ({RING_WORDS['remove']})"
                )
            else:
                text = f"{colour.capitalize()} placed {self._where(x, y)}"
            move["text"] = text
            self.position = after
            events = [move]
            if outcome == "placed":
                self.instruction = self._to_move_instruction(prefix=text + ". ")
                events += self._after_move()
            else:
                self.phase = "await_removal"
                self.target = after
                self.instruction = {"kind": outcome, "text": text, "highlight": highlight}
                where = [(d.colour.value, d.x, d.y) for d in removed]
                if verdict.placed_removed:
                    where.insert(0, (colour, x, y))
                events.append({"type": "instruction", "kind": "remove",
                               "text": "Remove " + self._discs_words(where, "remove"),
                               "highlight": highlight})
        self.last_move = move
        return events

    def _after_move(self) -> list[dict[str, Any]]:
        """Once the board is right after a move: a tie, or a warning that all is suicide."""
        side = self.position.to_move
        if not da.has_legal_placement(self.position):
            self.phase = "over"
            self.winner = None
            text = f"No legal placement is left for {side.value.capitalize()}: the match is a tie"
            self.instruction = {"kind": "over", "text": text, "highlight": []}
            return [{"type": "end", "winner": None, "reason": "no_legal_placement", "text": text}]
        if not da.has_safe_placement(self.position, side):
            text = (
                f"{side.value.capitalize()} to move: every legal placement is suicide "
                "(see the danger map) — a move must still be made"
            )
            self.instruction = {"kind": "warning", "text": text, "highlight": []}
            return [{"type": "info", "code": "all_suicide", "text": text}]
        return []

    def _observe_removal(self, seen: Sequence[SeenDisc]) -> list[dict[str, Any]]:
        assert self.target is not None
        diff = self._diff(self.target, seen)
        if diff.same:
            self.phase = "await_move"
            self.target = None
            self._last_signature = None
            self.instruction = self._to_move_instruction()
            return [{"type": "info", "code": "removed", "text": "Discs removed. "
                     + self.instruction["text"]}] + self._after_move()
        if not diff.missing and len(diff.extra) == 1:
            new = seen[diff.extra[0]]
            gone = list((self.last_move or {}).get("removed", []))
            if self.last_move and self.last_move.get("placed_removed"):
                gone.append([self.last_move["x"], self.last_move["y"]])
            stays = all(math.hypot(new.x - gx, new.y - gy) > self.settings.match_tolerance
                        for gx, gy in gone)
            if new.colour == self.position.to_move.value and stays:
                # The discs went and the next disc came before the board was ever still in
                # between: take the removal as done and judge the placement.
                events = self._observe_removal([s for j, s in enumerate(seen) if j != diff.extra[0]])
                return events + (self._observe_move(seen) if self.phase == "await_move" else [])
        if diff.missing:
            return self._warn_once(("removal", diff.signature()),
                                   self._mismatch_warning(self.target, diff, seen)
                                   | {"code": "wrong_removed"})
        return []  # still waiting for the discs to go

    def _to_move_instruction(self, prefix: str = "") -> dict[str, Any]:
        if self.phase == "over":
            return {"kind": "over", "text": "The match is over", "highlight": []}
        side = self.position.to_move.value
        return {"kind": "info", "text": f"{prefix}{side.capitalize()} to move", "highlight": []}

    # -- controls --------------------------------------------------------------------------
    def undo(self) -> list[dict[str, Any]]:
        if not self.history:
            raise CommandError("nothing_to_undo", "no move to undo")
        self.position = self.history.pop()
        self.phase = "await_move"
        self.target = None
        self.pending = None
        self.winner = None
        self._last_signature = None
        self.instruction = self._to_move_instruction(
            prefix="Last move undone: put the board back as shown. "
        )
        return [{"type": "undo", "text": self.instruction["text"]}]

    def correct(self, payload: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Correct the referee's record: `{"remove": i}`, `{"index": i, "colour": c}`,
        `{"index": i, "x": .., "y": ..}` or `{"add": {"x", "y", "colour"}}`."""
        if self.phase in ("question", "await_removal", "over"):
            raise CommandError("busy", f"cannot correct the position now ({self.phase})")
        discs = list(self.position.discs)
        try:
            if "add" in payload:
                a = payload["add"]
                discs.append(rd.Disc(float(a["x"]), float(a["y"]), rd.Colour(a["colour"])))
                text = (f"Added a {a['colour']} disc "
                        f"{self._where(float(a['x']), float(a['y']))} to the record")
            else:
                index = int(payload["remove"] if "remove" in payload else payload["index"])
                if not 0 <= index < len(discs):
                    raise CommandError("bad_index", f"no disc {index}: there are {len(discs)}")
                if "remove" in payload:
                    d = discs.pop(index)
                    text = (f"Removed the {d.colour.value} disc {self._where(d.x, d.y)} "
                            "from the record")
                else:
                    d = discs[index]
                    d2 = rd.Disc(
                        float(payload.get("x", d.x)),
                        float(payload.get("y", d.y)),
                        rd.Colour(payload.get("colour", d.colour.value)),
                    )
                    discs[index] = d2
                    text = (f"Disc {index} corrected to {d2.colour.value}, "
                            f"{self._where(d2.x, d2.y)}")
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, CommandError):
                raise
            raise CommandError("bad_correction", f"malformed correction {dict(payload)!r}: {exc}")
        self.history.append(self.position)
        self.position = replace(self.position, discs=tuple(discs))
        self._last_signature = None
        self.instruction = self._to_move_instruction(prefix=f"Corrected: {text}. ")
        return [{"type": "correction", "text": text, "request": dict(payload)}]
