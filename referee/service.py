"""The referee service: one thread owns the camera and the match; the page reads and controls it.

`RefereeService` ties a frame source, the vision, a match state machine and the match log
together and offers what `web/` presents (docs/INTERFACES.md): `state()`, `subscribe()`,
`latest_jpeg()`, `command()` and `log`. One thread reads frames and runs the referee; commands
from the page take the same lock, so a verdict and a control never interleave.
"""

from __future__ import annotations

import contextlib
import queue
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from hardware.errors import CorruptFrameError, EndOfStream, HardwareError, SourceLostError
from referee.dition_match import DitionMatch, position_from_json
from referee.domination_match import DominationMatch
from referee.errors import CommandError
from referee.log import MatchLog
from referee.loop import LoopSettings, Referee

GAMES = ("dition", "domination")
DEFAULT_PLAYERS = {"dition": ("black", "white"), "domination": ("G", "R")}
DEFAULT_SETTINGS = LoopSettings()
#: how long `stop` waits for the frame thread: longer than a camera read's own 5 s timeout plus a
#: verdict; the simulated table's first frame alone takes seconds on a busy machine
STOP_TIMEOUT_S = 10.0
SourceFactory = Callable[[int], Any]  # (restart number) -> FrameSource


class Subscription:
    """Iterate to receive event dicts as they happen; `close()` ends the iteration."""

    def __init__(self, hub: RefereeService) -> None:
        self._hub = hub
        self._queue: queue.Queue[dict[str, Any] | None] = queue.Queue(maxsize=1000)
        self._closed = False

    def put(self, event: dict[str, Any]) -> None:
        try:
            self._queue.put_nowait(event)
        except queue.Full:  # a stalled client loses old events, never blocks the referee
            pass

    def get(self, timeout: float | None = None) -> dict[str, Any] | None:
        try:
            return self._queue.get(timeout=timeout)
        except queue.Empty:
            return None

    def __iter__(self) -> Iterator[dict[str, Any]]:
        while not self._closed:
            item = self._queue.get()
            if item is None:
                return
            yield item

    def close(self) -> None:
        self._closed = True
        self._hub._unsubscribe(self)
        self._queue.put(None)


def _make_match(game: str, players: Sequence[str],
                variant: str = "standard") -> DitionMatch | DominationMatch:
    if game == "dition":
        if variant != "standard":
            raise CommandError("bad_variant", f"Dition has no variant {variant!r}")
        return DitionMatch()
    if game == "domination":
        return DominationMatch(players=players, variant=variant)
    raise CommandError("bad_game", f"unknown game {game!r}: use dition or domination")


class RefereeService:
    def __init__(
        self,
        log: MatchLog,
        open_source: SourceFactory,
        *,
        game: str = "dition",
        players: Sequence[str] | None = None,
        variant: str = "standard",
        source_spec: str = "",
        corners_px: Sequence[Sequence[float]] | None = None,
        calibration: Any = None,
        settings: LoopSettings = DEFAULT_SETTINGS,
        realtime: bool = True,
        max_fps: float | None = None,
        resume: bool = True,
        demo: bool = False,
        new_match_on_end_s: float | None = None,
    ) -> None:
        if game not in GAMES:
            raise CommandError("bad_game", f"unknown game {game!r}: use dition or domination")
        self.log = log
        self._open_source = open_source
        self.source_spec = source_spec
        self.corners_px = corners_px
        self.calibration = calibration
        self.settings = settings
        self.realtime = realtime
        self.max_fps = max_fps
        self.demo = demo
        self.new_match_on_end_s = new_match_on_end_s
        self._lock = threading.RLock()
        self._subs: list[Subscription] = []
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._paused = False
        self._source: Any = None
        self._restarts = 0
        self._camera_state = "starting"
        self._dropped = 0
        self._fps = 0.0
        self._ended_at: float | None = None
        self._danger: dict[str, Any] | None = None
        self._danger_key: object = None
        self.referee: Referee
        opened = self.log.open_match(game)
        if opened is not None and not resume:
            # Not resumed: it will never be finished, so the record says so.
            result = {"winner": None, "reason": "abandoned",
                      "text": "Abandoned: a new match was started instead of resuming it"}
            self.log.append(opened.id, {"type": "end", **result})
            self.log.end_match(opened.id, result)
            opened = None
        if opened is not None:
            self._resume(opened)
        else:
            self._new_match(game, tuple(players or DEFAULT_PLAYERS[game]), variant)

    # -- match lifecycle -------------------------------------------------------------------------
    def _referee_for(self, match: Any, match_id: int) -> Referee:
        intrinsics = getattr(self.calibration, "intrinsics", None)
        colours = getattr(self.calibration, "colours", None)
        if colours is not None and getattr(colours, "game", match.game) != match.game:
            colours = None  # a colour model sampled for the other game
        return Referee(
            match, self.log, match_id,
            corners_px=self.corners_px, intrinsics=intrinsics, colours=colours,
            settings=self.settings, listener=self._publish,
        )

    def _new_match(self, game: str, players: tuple[str, ...], variant: str) -> None:
        match = _make_match(game, players, variant)
        match_id = self.log.new_match(game, match.players, variant=variant,
                                      source=self.source_spec, start_position=match.snapshot())
        self.variant = variant
        self.referee = self._referee_for(match, match_id)
        self._ended_at = None
        self.referee.emit([{"type": "start", "game": game, "players": list(match.players),
                            "text": f"New {game} match"}])

    def _resume(self, record: Any) -> None:
        events = self.log.events(record.id)
        snapshot: Mapping[str, Any] | None = record.start_position
        if snapshot is None and record.game == "dition":
            snapshot = {"discs": [], "to_move": "black", "move_number": 1}
        history: list[Any] = []
        for e in events:
            if e.type == "move" and snapshot is not None and record.game == "dition":
                history.append(position_from_json(snapshot))
            if e.type == "undo" and history:
                history.pop()
            if e.position is not None:
                snapshot = e.position
        if record.game == "dition":
            match: Any = DitionMatch.resume(snapshot or {"discs": []}, history)
        else:
            match = (DominationMatch.resume(snapshot, players=record.players,
                                            variant=record.variant)
                     if snapshot and snapshot.get("state") else
                     DominationMatch(players=record.players, variant=record.variant))
        self.variant = record.variant
        self.referee = self._referee_for(match, record.id)
        moves = sum(1 for e in events if e.type == "move")
        text = (f"Match {record.id} resumed after {moves} moves: please check that the board "
                "matches the diagram")
        match.instruction = {"kind": "warning", "text": text, "highlight": []}
        self.referee.emit([{"type": "resumed", "text": text}])

    # -- the frame thread --------------------------------------------------------------------------
    def start(self) -> RefereeService:
        if self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(target=self._run, name="referee-loop", daemon=True)
            self._thread.start()
        return self

    def stop(self, timeout: float = STOP_TIMEOUT_S) -> bool:
        """Stop the frame thread; the step in progress (a source read, a verdict) ends first.

        Returns False if the thread still runs after `timeout` s (a camera stuck in its driver):
        the source then stays with that thread and is never closed under a read in progress.
        """
        self._stop.set()
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
        stopped = thread is None or not thread.is_alive()
        if stopped:
            self._thread = None
            self._close_source()
        self.end_streams()
        return stopped

    def end_streams(self) -> None:
        """End every open event stream (the pages reconnect on their own); never blocks."""
        for sub in list(self._subs):
            sub.close()

    def _close_source(self) -> None:
        if self._source is not None:
            with contextlib.suppress(Exception):  # closing a broken camera must not crash us
                self._source.close()
            self._source = None

    def _set_camera(self, state: str, text: str | None = None) -> None:
        if state == self._camera_state:
            return
        self._camera_state = state
        if text:
            with self._lock:
                self.referee.emit([{"type": "camera", "state": state, "text": text}])
        else:
            self._publish({"type": "camera", "state": state})

    def _run(self) -> None:
        backoff = 0.5
        last_t = time.monotonic()
        while not self._stop.is_set():
            if self._paused:
                self._stop.wait(0.1)
                continue
            if self._source is None:
                try:
                    self._source = self._open_source(self._restarts)
                    backoff = 0.5
                    known = getattr(self._source, "intrinsics", None)
                    if known is not None and getattr(self.calibration, "intrinsics", None) is None:
                        with self._lock:
                            self.referee.intrinsics = known  # a source that knows its lens
                except HardwareError as exc:
                    self._set_camera("lost", f"Camera lost: {exc} — retrying")
                    self._stop.wait(backoff)
                    backoff = min(backoff * 2, 5.0)
                    continue
            try:
                frame = self._source.read()
            except CorruptFrameError:
                self._dropped += 1
                continue
            except EndOfStream:
                self._close_source()
                if self.demo:
                    self._restarts += 1
                    with self._lock:
                        self._new_match(self.referee.game, self.referee.match.players,
                                        self.variant)
                    continue
                self._set_camera("ended", "The recording has ended")
                return
            except (SourceLostError, HardwareError) as exc:
                self._close_source()
                self._set_camera("lost", f"Camera lost: {exc} — retrying")
                self._stop.wait(backoff)
                backoff = min(backoff * 2, 5.0)
                continue
            self._set_camera("ok", "Camera OK" if self._camera_state == "lost" else None)
            with self._lock:
                self.referee.process(frame.image)
            if self.max_fps:
                wait = 1.0 / self.max_fps - (time.monotonic() - last_t)
                if wait > 0:
                    self._stop.wait(wait)
            now = time.monotonic()
            dt = now - last_t
            last_t = now
            if dt > 0:
                self._fps = 0.8 * self._fps + 0.2 / dt if self._fps else 1.0 / dt

    # -- presentation -----------------------------------------------------------------------------
    def _publish(self, event: dict[str, Any]) -> None:
        for sub in list(self._subs):
            sub.put(event)

    def subscribe(self) -> Subscription:
        sub = Subscription(self)
        self._subs.append(sub)
        return sub

    def _unsubscribe(self, sub: Subscription) -> None:
        if sub in self._subs:
            self._subs.remove(sub)

    def latest_jpeg(self, overlay: bool = True) -> bytes | None:
        with self._lock:
            image = self.referee.overlay_image() if overlay else self.referee.last_frame
        if image is None:
            return None
        ok, buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 80])
        return buf.tobytes() if ok else None

    def _status(self) -> str:
        ref = self.referee
        if self._camera_state == "lost":
            return "camera_lost"
        if self._paused:
            return "paused"
        phase = ref.match.phase
        if phase == "over":
            return "over"
        if phase == "question":
            return "question"
        if ref.match.instruction.get("kind") not in ("info", None):
            return "instruction"
        if ref.hand or not ref.settled:
            return "settling"
        return "waiting"

    def _danger_map(self) -> dict[str, Any] | None:
        match = self.referee.match
        if not isinstance(match, DitionMatch) or match.phase == "over":
            return None
        pos = match.position
        key = (pos.to_text(), match.phase)
        if key != self._danger_key:
            from rules import dition as rd

            self._danger = rd.danger_map(pos, pos.to_move, resolution=0.4).to_dict()
            self._danger_key = key
        return self._danger

    def state(self) -> dict[str, Any]:
        with self._lock:
            ref = self.referee
            match = ref.match
            record_events = self.log.events(ref.match_id, last=20)
            if isinstance(match, DitionMatch):
                from referee.dition_match import discs_json

                position: dict[str, Any] = {"discs": discs_json(match.board_position)}
                borderline = match.borderline()
            else:
                position = match.position_json()
                borderline = []
            try:
                danger = self._danger_map()
            except Exception:  # noqa: BLE001 - the optional overlay must never break the page
                danger = None
            state = {
                "game": ref.game,
                "match_id": ref.match_id,
                "variant": self.variant,
                "players": list(match.players),
                "status": self._status(),
                "to_move": match.to_move,
                "move_number": (match.position.move_number if isinstance(match, DitionMatch)
                                else getattr(match.state, "move_number", 0)),
                "position": position,
                "instruction": dict(match.instruction),
                "question": match.question(),
                "last_move": match.last_move,
                "borderline": borderline,
                "danger": danger,
                "winner": match.winner,
                "camera": {"state": "paused" if self._paused else self._camera_state,
                           "fps": round(self._fps, 1), "dropped": self._dropped,
                           "source": self.source_spec},
                "board": None if ref.board is None else {
                    "corners_px": np.round(ref.board.corners_px, 1).tolist()},
                "events": [e.to_json() for e in record_events],
            }
            if self.calibration is not None and hasattr(self.calibration, "summary"):
                state["calibration"] = self.calibration.summary()
            return state

    # -- controls ---------------------------------------------------------------------------------
    def command(self, name: str, payload: Mapping[str, Any] | None = None) -> dict[str, Any]:
        payload = dict(payload or {})
        handler = getattr(self, f"_cmd_{name}", None)
        if handler is None:
            raise CommandError("unknown_command", f"unknown command {name!r}")
        with self._lock:
            events = handler(payload)
            committed = self.referee.emit(events) if events else []
        return {"ok": True, "events": committed}

    def _cmd_new_match(self, p: dict[str, Any]) -> list[dict[str, Any]]:
        game = str(p.get("game", self.referee.game))
        if game not in GAMES:
            raise CommandError("bad_game", f"unknown game {game!r}: use dition or domination")
        players = p.get("players") or DEFAULT_PLAYERS[game]
        if game == "dition" and tuple(players) != DEFAULT_PLAYERS["dition"]:
            raise CommandError("bad_players", "Dition is played by black and white")
        if game == "domination" and (not 2 <= len(players) <= 4
                                     or len(set(players)) != len(players)):
            raise CommandError("bad_players", "Domination needs 2 to 4 distinct colours")
        _make_match(game, tuple(players), str(p.get("variant", "standard")))  # refuse it first
        old = self.referee
        if old.match.phase != "over":
            old.emit([{"type": "end", "winner": None, "reason": "abandoned",
                       "text": "Match abandoned for a new one"}])
        self._new_match(game, tuple(players), str(p.get("variant", "standard")))
        self.referee.board = old.board if old.game == game else None
        return []

    def _cmd_answer(self, p: dict[str, Any]) -> list[dict[str, Any]]:
        if "question_id" not in p or "choice" not in p:
            raise CommandError("bad_request", "answer needs 'question_id' and 'choice'")
        return self.referee.match.answer(str(p["question_id"]), str(p["choice"]))

    def _cmd_confirm(self, p: dict[str, Any]) -> list[dict[str, Any]]:
        q = self.referee.match.question()
        if q is not None and q.get("kind") == "confirm":
            return self.referee.match.answer(q["id"], "yes")
        self.referee.match.instruction = self.referee.match._to_move_instruction(
            prefix="Board confirmed. ")
        return [{"type": "confirm", "text": "The players confirmed the board"}]

    def _cmd_undo(self, p: dict[str, Any]) -> list[dict[str, Any]]:
        events = self.referee.match.undo()
        self.referee._acted_on = None
        return events

    def _cmd_draw(self, p: dict[str, Any]) -> list[dict[str, Any]]:
        return self.referee.match.draw()

    def _cmd_correct(self, p: dict[str, Any]) -> list[dict[str, Any]]:
        events = self.referee.match.correct(p)
        self.referee._acted_on = None
        return events

    def _cmd_invisible(self, p: dict[str, Any]) -> list[dict[str, Any]]:
        match = self.referee.match
        if not isinstance(match, DominationMatch):
            raise CommandError("bad_game", "invisible moves exist only in Domination")
        if "cell" not in p:
            raise CommandError("bad_request", "invisible needs the 'cell' of the reserve placement")
        return match.invisible(str(p["cell"]))

    def _cmd_pause(self, p: dict[str, Any]) -> list[dict[str, Any]]:
        self._paused = True
        return [{"type": "pause", "text": "Paused by the players"}]

    def _cmd_resume(self, p: dict[str, Any]) -> list[dict[str, Any]]:
        self._paused = False
        self.referee._acted_on = None
        return [{"type": "resume", "text": "Resumed"}]

    def _cmd_set_corners(self, p: dict[str, Any]) -> list[dict[str, Any]]:
        corners = p.get("corners_px")
        try:
            arr = np.asarray(corners, dtype=float)
        except (TypeError, ValueError):
            arr = np.zeros(0)
        if arr.shape != (4, 2) or not np.all(np.isfinite(arr)):
            raise CommandError("bad_corners", "corners_px must be four [x, y] pixel points")
        self.corners_px = arr.tolist()
        self.referee.corners_px = arr
        self.referee.board = None
        return [{"type": "calibration", "text": "Board corners set by hand",
                 "corners_px": arr.tolist()}]

    def _cmd_sample_colours(self, p: dict[str, Any]) -> list[dict[str, Any]]:
        """Sample the piece colours from the standard start now on the board (Domination)."""
        ref = self.referee
        if ref.game != "domination":
            raise CommandError("not_supported",
                               "Dition reads black and white discs without a colour model")
        if ref.last_frame is None or ref.board is None:
            raise CommandError("no_frame", "no frame with a board yet: wait for the camera")
        players = ref.match.players
        if len(players) != 2:
            raise CommandError("not_supported", "colours are sampled from the 2-player start; "
                               "use `referee calibrate colours --cell` for 3-4 players")
        from calibration import colours_from_start
        from calibration.errors import CalibrationError

        try:
            model = colours_from_start(ref.last_frame, ref.board, players=players,
                                       intrinsics=ref.intrinsics)
        except CalibrationError as exc:
            raise CommandError("bad_colours", f"cannot sample the colours: {exc}") from exc
        ref.colours = dict(model)
        return [{"type": "calibration", "text": "Colours sampled from the start position: "
                 + ", ".join(f"{k} {tuple(int(c) for c in v)}" for k, v in ref.colours.items())}]


def create_demo_service(
    db_path: str | Path,
    *,
    game: str = "dition",
    seed: int = 7,
    realtime: bool = True,
    speed: float = 1.0,
) -> RefereeService:
    """The service `referee demo` runs: the simulated table plays generated matches, one after
    the other (the seed advances each time). Not started. `realtime` paces it at 5 x `speed`
    frames a second, as a camera would; without it the frames come as fast as they are read."""
    from referee.simtable import scripted_table

    return RefereeService(
        MatchLog(db_path),
        lambda restart: scripted_table(game, seed + restart),
        game=game,
        source_spec=f"sim:{game}:{seed}",
        max_fps=5.0 * speed if realtime else None,
        resume=False,
        demo=True,
    )
