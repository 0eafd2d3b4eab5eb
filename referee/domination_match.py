"""The Domination match state machine: stack tops (and heights) in, moves and instructions out.

A camera sees only the top of each stack, so the referee keeps the full stacks by inferring every
move from what changed. When several moves explain the picture and lead to different stacks, every
one is kept as a hypothesis and the players are asked; a later move that only one hypothesis can
explain settles it too. A reserve placed on the mover's own stack changes no top: with height
estimates the referee sees the stack grow and asks the players to confirm it; without them the
players tell it with the `invisible` control.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from referee.errors import CommandError
from referee.match_base import MatchBase
from rules import domination as rdom
from rules.domination_infer import infer_moves

GAME = "domination"


VARIANT_WORDS = ("standard", "fast", "up_to_k", "anti_symmetry", "partners", "individual")


def domination_variant(players: Sequence[str], text: str | None = "standard") -> Any:
    """`rules.domination.Variant` from a variant text such as "standard", "fast",
    "up_to_k+fast" or "individual". Four players play as partners unless "individual"."""
    words = {w for w in (text or "standard").replace(",", "+").split("+") if w}
    unknown = sorted(words - set(VARIANT_WORDS))
    if unknown:
        raise CommandError("bad_variant", f"unknown variant {'+'.join(unknown)!r}: use "
                           + ", ".join(VARIANT_WORDS) + " (combine with +)")
    try:
        return rdom.Variant(tuple(players), partners=len(players) == 4 and "individual" not in words,
                            fast="fast" in words, up_to_k="up_to_k" in words,
                            anti_symmetry="anti_symmetry" in words)
    except ValueError as exc:
        raise CommandError("bad_variant", f"variant {text!r} with players {list(players)}: {exc}")


def state_json(state: Any) -> dict[str, Any]:
    return {
        "players": list(state.players),
        "stacks": {c: s for c, s in sorted(state.stacks.items()) if s},
        "reserves": dict(state.reserves),
        "captured": {p: dict(v) for p, v in state.captured.items()},
        "to_move": state.to_move,
        "move_number": state.move_number,
        "text": state.to_text(),
    }


def state_from_json(data: Mapping[str, Any]) -> Any:
    return rdom.State.from_text(data["text"])


def tops_of(state: Any) -> dict[str, str]:
    return {cell: (state.stacks.get(cell) or ".")[-1] for cell in rdom.CELLS}


#: the event telling the loop to turn the board half round (a8 at the chessboard's other light
#: corner), once, at the start
BOARD_TURNED = {"type": "board", "code": "turned", "quarter_turns": 2,
                "text": "a8 is at the other light corner: reading the board half a turn round"}


def half_turned(tops: Mapping[str, str]) -> dict[str, str]:
    """The tops as they read with the board turned half round (a8 <-> h1): cell -> letter."""
    half = rdom.SYMMETRIES[1]  # (file, rank) -> (7 - file, 7 - rank)
    return {c: tops[rdom.CELLS[half[i]]] for i, c in enumerate(rdom.CELLS)}


#: a message names at most this many cells; the diagram marks every one
NAMED_AT_MOST = 4


def few_cells(cells: Sequence[str]) -> str:
    """"c3, d4, e5, f6 and 3 more marked on the diagram"."""
    shown = ", ".join(cells[:NAMED_AT_MOST])
    rest = len(cells) - NAMED_AT_MOST
    return shown + (f" and {rest} more marked on the diagram" if rest > 0 else "")


def move_words(move: Any) -> str:
    """What the mover did, in words: "moves 2 from d4 to d6", "places a reserve on e5",
    "swaps b7 and c7" (the anti-symmetry pre-game swap)."""
    if move.kind is rdom.MoveKind.PLACE:
        return f"places a reserve on {move.to_cell}"
    if move.kind is rdom.MoveKind.SWAP:
        return f"swaps {move.from_cell} and {move.to_cell}"
    return f"moves {move.count} from {move.from_cell} to {move.to_cell}"


def move_cells(move: Any) -> list[str]:
    """The cells a move touched, the one that received pieces last."""
    return [move.to_cell] if move.from_cell is None else [move.from_cell, move.to_cell]


@dataclass(frozen=True)
class _Hypothesis:
    state: Any
    moves: tuple[Any, ...]  # moves since the last certain state
    results: tuple[Any, ...]
    movers: tuple[str, ...] = ()


class DominationMatch(MatchBase):
    game = GAME

    def __init__(
        self,
        state: Any | None = None,
        *,
        players: Sequence[str] = ("G", "R"),
        phase: str | None = None,
        winner: str | None = None,
        history: Sequence[Any] = (),
        variant: str | None = "standard",
        auto_confirm: bool = False,
    ) -> None:
        self._players = tuple(players)
        self.auto_confirm = auto_confirm
        #: set by the loop: the board's a8 corner was the finder's guess (a chessboard), so a
        #: start read half a turn round turns the board instead of asking for a new setup
        self.board_may_turn = False
        self.variant = domination_variant(self._players, variant)
        self.hypotheses: list[_Hypothesis] = []
        if state is not None:
            self.hypotheses = [_Hypothesis(state, (), ())]
        self.phase = phase or ("await_move" if state is not None else "setup")
        self.winner = winner
        self.history: list[Any] = list(history)
        self.instruction: dict[str, Any] = self._to_move_instruction()
        self.last_move: dict[str, Any] | None = None
        self._question: dict[str, Any] | None = None
        self._proposed_start: Any = None
        self._last_signature: object = None
        self._qseq = 0

    # -- view --------------------------------------------------------------------------------
    @property
    def players(self) -> tuple[str, ...]:
        return self._players

    @property
    def state(self) -> Any:
        return self.hypotheses[0].state if self.hypotheses else None

    @property
    def to_move(self) -> str | None:
        return None if self.phase in ("over", "setup") or self.state is None else self.state.to_move

    def snapshot(self) -> dict[str, Any]:
        out: dict[str, Any] = {"phase": "await_move" if self.phase == "question" else self.phase}
        if self.state is not None:
            out["state"] = state_json(self.state)
        if self.winner is not None:
            out["winner"] = self.winner
        out["players"] = list(self._players)
        return out

    @classmethod
    def resume(cls, snapshot: Mapping[str, Any], history: Sequence[Any] = (), **kw: Any):
        state = state_from_json(snapshot["state"]) if snapshot.get("state") else None
        return cls(
            state,
            players=snapshot.get("players", ("G", "R")),
            phase=snapshot.get("phase"),
            winner=snapshot.get("winner"),
            history=history,
            **kw,
        )

    def position_json(self) -> dict[str, Any]:
        if self.state is None:
            return {"stacks": {}, "reserves": {}, "captured": {}}
        s = state_json(self.state)
        return {k: s[k] for k in ("stacks", "reserves", "captured")}

    def question(self) -> dict[str, Any] | None:
        return self._question if self.phase == "question" else None

    def _to_move_instruction(self, prefix: str = "") -> dict[str, Any]:
        if self.phase == "setup":
            return {"kind": "info", "text": "Set up the pieces; the referee reads the start",
                    "highlight": []}
        if self.phase == "over":
            return {"kind": "over", "text": "The match is over", "highlight": []}
        return {"kind": "info", "text": f"{prefix}{self.to_move} to move", "highlight": []}

    def observe(
        self,
        tops: Mapping[str, str],
        heights: Mapping[str, float] | None = None,
        height_sigma: Mapping[str, float] | None = None,
    ) -> list[dict[str, Any]]:
        tops = {c: (tops.get(c) or ".") for c in rdom.CELLS}
        if self.phase == "over":
            return []
        if self.phase == "question" and self._question and self._question["kind"] == "confirm":
            return []
        strangers = self._strangers_warning(tops)
        if strangers is not None:
            return strangers
        if self.phase == "setup":
            return self._observe_setup(tops)
        return self._observe_move(tops, heights, height_sigma)

    def _observe_setup(self, tops: Mapping[str, str]) -> list[dict[str, Any]]:
        if len(self._players) == 2:
            v = self.variant
            start = rdom.State.standard_start(self._players, fast=v.fast, up_to_k=v.up_to_k,
                                              anti_symmetry=v.anti_symmetry)
            wrong = [c for c in rdom.CELLS if tops_of(start)[c] != tops[c]]
            if wrong and self.board_may_turn and not [
                    c for c, t in half_turned(tops).items() if tops_of(start)[c] != t]:
                # the start is not symmetric under a half turn (its colours swap): a8 is at the
                # other light corner of a chessboard; the loop turns the board once
                return [dict(BOARD_TURNED)] + self._start(start, "Standard start recognised")
            if wrong and self.auto_confirm:
                stacks = {c: t for c, t in tops.items() if t != "."}
                return self._start(rdom.State.from_setup(stacks, self._players,
                                                         variant=self.variant),
                                   "Start position read from the camera")
            if wrong:
                return self._warn_cells(
                    "setup", wrong, "Set up the standard start: " + ", ".join(
                        f"{c} should be {tops_of(start)[c]}" for c in wrong[:NAMED_AT_MOST])
                    + (f" and {len(wrong) - NAMED_AT_MOST} more cells marked on the diagram"
                       if len(wrong) > NAMED_AT_MOST else ""))
            return self._start(start, "Standard start recognised")
        stacks = {c: t for c, t in tops.items() if t != "."}
        state = rdom.State.from_setup(stacks, self._players, variant=self.variant)
        if self.auto_confirm:
            return self._start(state, "Start position read from the camera")
        self._proposed_start = state
        self.phase = "question"
        self._qseq += 1
        counts = {p: sum(1 for t in stacks.values() if t == p) for p in self._players}
        self._question = {
            "id": f"setup-{self._qseq}", "kind": "confirm",
            "text": "Start position read: " + ", ".join(f"{p} {n}" for p, n in counts.items())
            + " pieces. Is that right?",
            "choices": [{"id": "yes", "label": "yes, start"}, {"id": "no", "label": "read again"}],
        }
        if self.board_may_turn:
            # a 3-4 player start has no standard layout to tell a8 by: the players say it, once
            self._question["text"] += " (a8 is the light corner marked on the picture)"
            self._question["choices"].insert(1, {"id": "turned",
                                                 "label": "yes, but a8 is the other light corner"})
        self.instruction = {"kind": "question", "text": self._question["text"], "highlight": []}
        return [{"type": "question", **self._question}]

    def _start(self, state: Any, text: str) -> list[dict[str, Any]]:
        self.hypotheses = [_Hypothesis(state, (), ())]
        self.phase = "await_move"
        self._last_signature = None
        self.instruction = self._to_move_instruction(prefix=text + ". ")
        return [{"type": "start", "position": self.position_json(), "text": text}]

    def _strangers_warning(self, tops: Mapping[str, str]) -> list[dict[str, Any]] | None:
        """A warning when a top is of a colour not in this match (at the start or later): no
        position is built from a piece no player owns."""
        strangers = sorted({t for t in tops.values() if t != "."} - set(self._players))
        if not strangers:
            return None
        cells = [c for c, t in tops.items() if t in strangers]
        return self._warn_cells(
            "unknown_colour", cells, f"A piece of a colour not in this match ({', '.join(strangers)}) "
            f"is on {few_cells(cells)}: take it away, or check the light")

    def _warn_cells(self, code: str, cells: list[str], text: str) -> list[dict[str, Any]]:
        """A warning about `cells` (marked wrong on the diagram), given once until they change."""
        return self._warn_once(
            (code, tuple(cells)),
            {"type": "warning", "code": code, "text": text,
             "highlight": [{"cell": c, "role": "wrong"} for c in cells]},
        )

    def _observe_move(self, tops, heights, height_sigma) -> list[dict[str, Any]]:
        # Keep only the hypotheses that explain the picture (no change, or a move).
        explained: list[tuple[_Hypothesis, list[Any]]] = []
        unchanged = False
        for h in self.hypotheses:
            if tops_of(h.state) == dict(tops):
                unchanged = True
                explained.append((h, []))
                continue
            cands = infer_moves(h.state, tops, heights, height_sigma)
            if not cands and heights:
                # A height misread must not hide a move the tops explain on their own.
                cands = infer_moves(h.state, tops)
            if cands:
                explained.append((h, cands))
        if unchanged and all(not c for _, c in explained):
            if self._last_signature is not None:
                self._last_signature = None
                self.instruction = self._to_move_instruction()
                return [{"type": "info", "text": "The board matches again"}]
            return self._check_invisible(heights, height_sigma)
        moved = [(h, c) for h, c in explained if c]
        if not moved and len(self.hypotheses) == 1:
            pair = self._two_moves(self.hypotheses[0], tops)
            if pair:
                self._last_signature = None
                events: list[dict[str, Any]] = [{
                    "type": "info", "code": "two_moves",
                    "text": "Two moves were made while the board was never still in between"}]
                if len(pair) == 1:
                    return events + self._commit(pair[0])
                self.hypotheses = pair
                return events + self._ask_ambiguous()
        if not moved:
            changed = [c for c in rdom.CELLS if tops_of(self.state)[c] != tops[c]]
            return self._warn_cells(
                "no_legal_move", changed, f"No legal move of {self.state.to_move} explains this "
                f"picture (changed: {few_cells(changed)}): put the board back as the diagram shows")
        new: list[_Hypothesis] = []
        for h, cands in moved:
            for cand in cands:
                after, result = rdom.apply_move(h.state, cand.move)
                if any(n.state == after for n in new):
                    continue
                new.append(_Hypothesis(after, h.moves + (cand.move,), h.results + (result,),
                                       h.movers + (h.state.to_move,)))
        events: list[dict[str, Any]] = []
        if len(self.hypotheses) > 1 and len({id(h) for h, _ in moved}) == 1:
            events.append({"type": "resolved", "text": "The next move settled the ambiguity"})
        self.hypotheses = new
        self._last_signature = None
        if len(new) == 1:
            return events + self._commit(new[0])
        return events + self._ask_ambiguous()

    def _two_moves(self, h: _Hypothesis, tops: Mapping[str, str]) -> list[_Hypothesis]:
        """The mover's move and the next player's, when no single move explains the picture
        (the board was never still between them). Distinct resulting states only."""
        found: list[_Hypothesis] = []
        for first in rdom.legal_moves(h.state):
            mid, r1 = rdom.apply_move(h.state, first)
            if rdom.outcome(mid) is not None:
                continue
            for cand in infer_moves(mid, tops):
                after, r2 = rdom.apply_move(mid, cand.move)
                if all(f.state != after for f in found):
                    found.append(_Hypothesis(after, h.moves + (first, cand.move),
                                             h.results + (r1, r2),
                                             h.movers + (h.state.to_move, mid.to_move)))
        return found

    def _check_invisible(self, heights, height_sigma) -> list[dict[str, Any]]:
        if heights is None or len(self.hypotheses) != 1:
            return []
        state = self.state
        mover = state.to_move
        if state.reserves.get(mover, 0) <= 0:
            return []
        grown = [
            c for c, s in state.stacks.items()
            if s and s[-1] == mover and c in heights
            and heights[c] - min(len(s) + 1, rdom.MAX_HEIGHT) > -0.5
            and len(s) < rdom.MAX_HEIGHT
            and heights[c] - len(s) > 0.5 + 2 * (height_sigma or {}).get(c, 0.0)
        ]
        if len(grown) != 1:
            return []
        return self._ask_invisible(grown[0])

    def _ask_invisible(self, cell: str) -> list[dict[str, Any]]:
        self._qseq += 1
        mover = self.state.to_move
        self._question = {
            "id": f"inv-{self._qseq}", "kind": "invisible",
            "text": f"Did {mover} place a reserve on {cell}?",
            "choices": [{"id": "yes", "label": f"yes, {mover} placed on {cell}"},
                        {"id": "no", "label": "no"}],
            "cell": cell,
        }
        self.phase = "question"
        self.instruction = {"kind": "question", "text": self._question["text"],
                            "highlight": [{"cell": cell, "role": "borderline"}]}
        return [{"type": "question", **self._question}]

    def _ask_ambiguous(self) -> list[dict[str, Any]]:
        self._qseq += 1
        choices = []
        arrows = []
        for i, h in enumerate(self.hypotheses):
            moves = [mv.to_json() for mv in h.moves]
            label = " then ".join(f"{who} {mv}" for who, mv in zip(h.movers, h.moves))
            choices.append({"id": str(i), "label": label, "move": moves[-1], "moves": moves})
            arrows += [{"from": m["from"], "to": m["to"]} for m in moves if "from" in m]
        self._question = {
            "id": f"amb-{self._qseq}", "kind": "ambiguous",
            "text": "Several moves fit this picture: which one was it?",
            "choices": choices, "arrows": arrows,
        }
        self.phase = "question"
        self.instruction = {"kind": "question", "text": self._question["text"], "highlight": []}
        return [{"type": "question", **self._question}]

    def _commit(self, h: _Hypothesis) -> list[dict[str, Any]]:
        """Log the moves of a now-certain hypothesis."""
        events: list[dict[str, Any]] = []
        self.hypotheses = [_Hypothesis(h.state, (), ())]
        for move, result, mover in zip(h.moves, h.results, h.movers):
            events += self._move_events(move, result, mover)
        self.phase = "await_move"
        end = rdom.outcome(h.state)
        if end is not None:
            self.phase = "over"
            self.winner = "+".join(end.winners) if len(end.winners) > 1 else end.winner
            reason = end.termination.value
            text = f"{self.winner} wins ({reason})" if self.winner else f"Game over ({reason})"
            self.instruction = {"kind": "over", "text": text, "highlight": []}
            events.append({"type": "end", "winner": self.winner, "reason": reason, "text": text})
        return events

    def _move_events(self, move: Any, result: Any, mover: str) -> list[dict[str, Any]]:
        mj = move.to_json()
        self.history.append(move)
        text = f"{mover} {move_words(move)}"
        cells = move_cells(move)
        event = {"type": "move", "colour": mover, "move": mj, "removed": result.removed,
                 "text": text}
        self.last_move = event
        events = [event]
        overflow = result.describe() or None
        if overflow:
            cell = cells[-1]
            self.instruction = {"kind": "remove", "text": f"{text}: {overflow}",
                                "highlight": [{"cell": cell, "role": "remove"}]}
            events.append({"type": "instruction", "kind": "remove", "text": overflow,
                           "cell": cell})
        else:
            self.instruction = {"kind": "info", "text": f"{text}. {self.to_move} to move",
                                "highlight": [{"cell": c, "role": "placed"} for c in cells]}
        return events

    # -- controls ----------------------------------------------------------------------------
    def answer(self, question_id: str, choice: str) -> list[dict[str, Any]]:
        q = self._question
        if self.phase != "question" or q is None:
            raise CommandError("no_question", "there is no open question")
        if question_id != q["id"]:
            raise CommandError("stale_question", f"question {question_id!r} is no longer open")
        valid = [c["id"] for c in q["choices"]]
        if choice not in valid:
            raise CommandError("bad_choice", f"choose one of {valid}, not {choice!r}")
        self._question = None
        ev = {"type": "answer", "question": question_id, "choice": choice,
              "text": f"Players answered: {next(c['label'] for c in q['choices'] if c['id'] == choice)}"}
        if q["kind"] == "confirm":
            if choice == "yes":
                return [ev] + self._start(self._proposed_start, "Start position confirmed")
            if choice == "turned":
                stacks = half_turned({c: self._proposed_start.stack(c) or "." for c in rdom.CELLS})
                state = rdom.State.from_setup({c: t for c, t in stacks.items() if t != "."},
                                              self._players, variant=self.variant)
                return [ev, dict(BOARD_TURNED)] + self._start(state, "Start position confirmed, a8 at the other corner")
            self.phase = "setup"
            self._last_signature = None
            return [ev]
        if q["kind"] == "invisible":
            self.phase = "await_move"
            if choice == "no":
                return [ev]
            move = rdom.Move.place(q["cell"])
            after, result = rdom.apply_move(self.state, move)
            return [ev] + self._commit(_Hypothesis(after, (move,), (result,), (self.state.to_move,)))
        # ambiguous
        self.phase = "await_move"
        return [ev] + self._commit(self.hypotheses[int(choice)])

    def finish(self) -> list[dict[str, Any]]:
        """The recording ended: an ambiguity still open takes the most likely move."""
        if len(self.hypotheses) > 1:
            self._question = None
            events: list[dict[str, Any]] = [{"type": "info", "code": "unresolved",
                                             "text": "Ambiguity never settled: taking the most "
                                             "likely move"}]
            return events + self._commit(self.hypotheses[0])
        return []

    def invisible(self, cell: str) -> list[dict[str, Any]]:
        """The players say the mover placed a reserve on `cell` (no top changed)."""
        if self.phase != "await_move" or len(self.hypotheses) != 1:
            raise CommandError("busy", f"cannot record a reserve placement now ({self.phase})")
        move = rdom.Move.place(cell)
        reason = rdom.check_move(self.state, move)
        if reason:
            raise CommandError("illegal", f"{move!r} is not legal here: {reason}")
        after, result = rdom.apply_move(self.state, move)
        return self._commit(_Hypothesis(after, (move,), (result,), (self.state.to_move,)))

    def undo(self) -> list[dict[str, Any]]:
        raise CommandError("not_supported", "undo in Domination: correct the position instead")

    def correct(self, payload: Mapping[str, Any]) -> list[dict[str, Any]]:
        """`{"cell": "d4", "stack": "GRG"}`: the players say what a stack really holds."""
        if self.phase not in ("await_move",) or len(self.hypotheses) != 1:
            raise CommandError("busy", f"cannot correct the position now ({self.phase})")
        try:
            cell, stack = str(payload["cell"]), str(payload["stack"])
        except KeyError as exc:
            raise CommandError("bad_correction", f"a correction needs 'cell' and 'stack': {exc}")
        if cell not in rdom.CELLS:
            raise CommandError("bad_correction", f"{cell!r} is not a playable cell")
        state = self.state
        if len(stack) > rdom.MAX_HEIGHT or set(stack) - set(state.players):
            raise CommandError("bad_correction", f"{stack!r} is not a stack of at most "
                               f"{rdom.MAX_HEIGHT} pieces of {', '.join(state.players)}")
        stacks = dict(state.stacks)
        stacks[cell] = stack
        try:
            text_state = rdom.State.from_setup(
                {c: s for c, s in stacks.items() if s}, state.players,
                reserves=state.reserves, captured=state.captured, to_move=state.to_move,
                variant=state.variant, move_number=state.move_number,
            )
        except ValueError as exc:
            raise CommandError("bad_correction", f"cannot set {cell} to {stack!r}: {exc}")
        self.hypotheses = [_Hypothesis(text_state, (), ())]
        self.instruction = self._to_move_instruction(
            prefix=f"Corrected: {cell} holds {stack or 'nothing'}. ")
        return [{"type": "correction", "text": f"{cell} corrected to {stack or 'empty'}",
                 "request": dict(payload)}]
