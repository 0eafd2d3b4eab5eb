"""A small stand-in for `referee.service.RefereeService`, used until the real one exists.

It keeps the interface of docs/INTERFACES.md (state(), subscribe(), latest_jpeg(), command(),
log) with the real `referee.log.MatchLog`; its "camera" is a frame drawn with OpenCV from the
discs it holds, and `place(x, y)` stands for a move the camera saw.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from referee.errors import CommandError
from referee.log import MatchLog


def _command_error(code: str, message: str) -> CommandError:
    return CommandError(code, message)


class Subscription:
    """Iterate to receive event dicts; `close()` ends the iteration."""

    def __init__(self, hub: StandInService) -> None:
        self._hub = hub
        self._seen = hub._published
        self._closed = False

    def __iter__(self) -> Iterator[dict[str, Any]]:
        while True:
            with self._hub._changed:
                while self._seen == self._hub._published and not self._closed:
                    self._hub._changed.wait()
                if self._closed:
                    return
                new = self._hub._history[self._seen:]
                self._seen = self._hub._published
            yield from new

    def close(self) -> None:
        with self._hub._changed:
            self._closed = True
            self._hub._changed.notify_all()


class StandInService:
    def __init__(self, db_path: str | Path) -> None:
        self.log = MatchLog(db_path)
        self._changed = threading.Condition()
        self._history: list[dict[str, Any]] = []
        self._published = 0
        self.commands: list[tuple[str, dict[str, Any]]] = []
        self.match_id: int | None = None
        self.discs: list[dict[str, Any]] = []
        self.status = "waiting"
        self.instruction: dict[str, Any] = {"kind": "info", "text": "Start a new match", "highlight": []}
        self.question: dict[str, Any] | None = None
        self.winner: str | None = None
        self.players = ["black", "white"]
        self.calibration: dict[str, Any] | None = None

    # -- the interface -------------------------------------------------------------------
    def state(self) -> dict[str, Any]:
        with self._changed:
            to_move = None if self.status in ("waiting", "over") else (
                "black" if len(self.discs) % 2 == 0 else "white")
            return {
                "game": "dition", "match_id": self.match_id, "variant": "standard",
                "players": list(self.players), "status": self.status, "to_move": to_move,
                "move_number": len(self.discs) + 1,
                "position": {"discs": [dict(d) for d in self.discs]},
                "instruction": dict(self.instruction), "question": self.question,
                "last_move": None, "borderline": [], "danger": None, "winner": self.winner,
                "camera": {"state": "ok", "fps": 5.0, "dropped": 0},
                "calibration": self.calibration,
                "events": self._history[-20:],
            }

    def subscribe(self) -> Subscription:
        return Subscription(self)

    def latest_jpeg(self, overlay: bool = True) -> bytes | None:
        image = np.full((480, 640, 3), (170, 200, 215), np.uint8)
        scale, origin = 22.0, np.array([100.0, 20.0])
        cv2.rectangle(image, (100, 20), (540, 460), (40, 40, 40), 2)
        for d in self.discs:
            centre = tuple(int(v) for v in origin + scale * np.array([d["x"], d["y"]]))
            colour = (20, 20, 20) if d["colour"] == "black" else (240, 240, 240)
            cv2.circle(image, centre, 11, colour, -1)
            if overlay:
                cv2.circle(image, centre, 13, (0, 200, 0), 2)
        ok, jpeg = cv2.imencode(".jpg", image)
        return jpeg.tobytes() if ok else None

    def command(self, name: str, payload: dict[str, Any]) -> dict[str, Any]:
        if name == "new_match":
            game = payload.get("game", "dition")
            if game != "dition":
                raise _command_error("bad_game", f"the stand-in referees dition only, not {game!r}")
            with self._changed:
                self.match_id = self.log.new_match("dition", self.players)
                self.discs, self.status, self.winner = [], "instruction", None
                self.instruction = {"kind": "info", "text": "Black to place a disc", "highlight": []}
            self._publish({"type": "new_match", "match_id": self.match_id})
        elif name in ("pause", "resume", "confirm", "undo", "draw", "answer", "correct",
                      "set_corners", "sample_colours"):
            if self.match_id is None and name not in ("set_corners", "sample_colours"):
                raise _command_error("no_match", f"no match running: {name} needs a match")
            if name == "answer" and self.question is None:
                raise _command_error("no_question", "there is no open question to answer")
            if name == "undo" and not self.discs:
                raise _command_error("nothing_to_undo", "no move to undo")
            if name == "pause":
                self.status = "paused"
                self.instruction = {"kind": "info", "text": "Paused", "highlight": []}
            elif name == "resume":
                if self.status != "paused":
                    raise _command_error("not_paused", "the match is not paused")
                self.status = "instruction"
            elif name == "set_corners":
                corners = payload.get("corners_px")
                if not (isinstance(corners, list) and len(corners) == 4):
                    raise _command_error("bad_corners", "corners_px must be four [x, y] points")
                self.calibration = {"corners_px": corners, "residual_px": 0.4}
            elif name == "draw":
                self.status, self.winner = "over", None
                self.instruction = {"kind": "over", "text": "Draw agreed", "highlight": []}
            self._publish({"type": name})
        else:
            raise _command_error("unknown_command", f"unknown command {name!r}")
        self.commands.append((name, payload))
        return {"status": self.status}

    # -- what the camera would see -------------------------------------------------------
    def place(self, x: float, y: float) -> None:
        with self._changed:
            colour = "black" if len(self.discs) % 2 == 0 else "white"
            self.discs.append({"x": x, "y": y, "colour": colour})
            other = "white" if colour == "black" else "black"
            self.instruction = {"kind": "info", "text": f"{other.capitalize()} to place a disc",
                                "highlight": [{"x": x, "y": y, "role": "placed"}]}
        event = {"type": "move", "colour": colour, "x": x, "y": y, "outcome": "quiet", "removed": []}
        if self.match_id is not None:
            self.log.append(self.match_id, event, position={"discs": list(self.discs)},
                            snapshot_jpeg=self.latest_jpeg())
        self._publish(event)

    def _publish(self, event: dict[str, Any]) -> None:
        with self._changed:
            self._history.append({"seq": len(self._history) + 1, **event})
            self._published = len(self._history)
            self._changed.notify_all()


# -- shared by the web tests -------------------------------------------------------------------
def make_service(db_path: str | Path) -> Any:
    """The service the web tests present (not started: no frame thread, deterministic)."""
    service = StandInService(db_path)
    service.command("new_match", {"game": "dition"})
    return service


def observable(service: Any) -> dict[str, Any]:
    """What a bad request must leave unchanged: the state (minus clocks) and the whole log."""
    state = service.state()
    state.pop("camera", None)
    log = service.log
    matches = [m.to_json() for m in log.list_matches()]
    events = {m["id"]: [e.to_json() for e in log.events(m["id"])] for m in matches}
    return {"state": state, "matches": matches, "events": events}
