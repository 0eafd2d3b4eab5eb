"""What the match state machines of both games share: warnings said once, an agreed draw."""

from __future__ import annotations

from typing import Any

from referee.errors import CommandError


class MatchBase:
    phase: str
    winner: str | None
    instruction: dict[str, Any]
    _last_signature: object

    def _warn_once(self, signature: object, event: dict[str, Any]) -> list[dict[str, Any]]:
        """A warning is said (and becomes the instruction) once per distinct board problem."""
        if signature == self._last_signature:
            return []
        self._last_signature = signature
        self.instruction = {"kind": "warning", "text": event["text"],
                            "highlight": event.get("highlight", [])}
        return [event]

    def draw(self) -> list[dict[str, Any]]:
        """The players agree on a draw."""
        if self.phase == "over":
            raise CommandError("match_over", "the match is already over")
        self.phase = "over"
        self.winner = None
        text = "Draw agreed by the players"
        self.instruction = {"kind": "over", "text": text, "highlight": []}
        return [{"type": "end", "winner": None, "reason": "agreement", "text": text}]
