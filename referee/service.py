"""The referee service: one thread owns the camera and the match; the page reads and controls it.

`RefereeService` ties a frame source, the vision, a match state machine and the match log
together and offers what `web/` presents (docs/INTERFACES.md): `state()`, `subscribe()`,
`latest_jpeg()`, `command()` and `log`. One thread reads frames and runs the referee; commands
from the page take the same lock, so a verdict and a control never interleave.
"""

from __future__ import annotations

import contextlib
import queue
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from hardware.errors import CorruptFrameError, EndOfStream, HardwareError, SourceLostError
from hardware.source import reader
from referee.errors import CommandError
from referee.games import registry
from referee.log import MatchLog
from referee.loop import LoopSettings, Referee
from referee.overlay import shown_picture
from referee.view import board_angle_deg, quarter_turns

DEFAULT_SETTINGS = LoopSettings()
#: how long `stop` waits for the frame thread: longer than a camera read's own 5 s timeout plus a
#: verdict; the simulated table's first frame alone takes seconds on a busy machine
STOP_TIMEOUT_S = 10.0
SourceFactory = Callable[[int], Any]  # (restart number) -> FrameSource
#: the demo's simulated players after a control: (the table so far or None, the match, a seed)
#: -> (a FrameSource that carries on from the match's record, a sentence when they cannot)
DemoFollow = Callable[[Any, Any, int], tuple[Any, str | None]]
#: the calibration page's live target: one detection at most this often, however many ask
LIVE_TARGET_INTERVAL_S = 0.3
#: the controls after which the demo's simulated players put the table right
DEMO_FOLLOWS = ("undo", "correct", "new_match")


def _tidying(frame: Any) -> bool:
    """A demo frame of the simulated hand putting the table right after a control (its label
    says {"tidy": true}, see `referee.simtable.carry_on`): the page shows it, nobody judges it."""
    label = (getattr(frame, "meta", None) or {}).get("label")
    return isinstance(label, Mapping) and bool(label.get("tidy"))


def _view(board: Any) -> dict[str, Any]:
    """How the page turns the diagram: as the camera shows the board (`referee.view`)."""
    if board is None:
        return {"quarter_turns": 0, "angle_deg": None}
    return {"quarter_turns": quarter_turns(board.corners_px),
            "angle_deg": round(board_angle_deg(board.corners_px), 1)}


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

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        self._closed = True
        self._hub._unsubscribe(self)
        self._queue.put(None)


MAX_NAME_CHARS = 60


def player_names(raw: object, players: Sequence[str]) -> dict[str, str]:
    """The optional names of a new match's players, {colour: name}; blanks left out;
    `CommandError("bad_names")` naming what is wrong otherwise."""
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise CommandError("bad_names", 'names must be an object {"colour": "name", ...}')
    names = {}
    for colour, name in raw.items():
        if colour not in players:
            raise CommandError("bad_names", f"names: {colour!r} is not one of the players "
                               f"{', '.join(players)}")
        if not isinstance(name, str) or len(name.strip()) > MAX_NAME_CHARS:
            raise CommandError("bad_names", f"names: the name of {colour} must be text of at "
                               f"most {MAX_NAME_CHARS} characters")
        if name.strip():
            names[str(colour)] = name.strip()
    return names


class RefereeService:
    def __init__(
        self,
        log: MatchLog,
        open_source: SourceFactory,
        *,
        game: str | None = None,
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
        demo_follow: DemoFollow | None = None,
        photo_dir: str = "calibration-photos",
        disc_thickness: float | None = None,
    ) -> None:
        spec = registry.get_game(game if game is not None else registry.default_name())
        self.log = log
        self._open_source = open_source
        self.source_spec = source_spec
        self.corners_px = corners_px
        self.calibration = calibration
        self.stated_disc_thickness = disc_thickness  # --disc-thickness: wins over the calibration's
        self.settings = settings
        self.realtime = realtime
        self.max_fps = max_fps
        self.demo = demo
        self._demo_follow = demo_follow
        self._demo_replan = False
        self.new_match_on_end_s = new_match_on_end_s
        self.photo_dir = photo_dir  # where the calibration page's photos go
        self._photos: Any = None
        self._live_target_lock = threading.Lock()
        self._live_target: tuple[float, object, dict[str, Any]] | None = None
        self._lock = threading.RLock()
        self._subs: list[Subscription] = []
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._paused = False
        self._source: Any = None
        #: the source lends its frames (`hardware.source.reader`): the referee's last frame is in
        #: the camera's buffer until the second read after it
        self._lending = False
        self._restarts = 0
        self._camera_state = "starting"
        self._dropped = 0
        self._fps = 0.0
        self._ended_at: float | None = None
        self._danger: dict[str, Any] | None = None
        self._danger_key: object = None
        self._log_fault: str | None = None  # the fault last told to the terminal
        self._last_error: str | None = None  # the last unexpected error, reported once
        self.loop_failure: BaseException | None = None  # why the frame thread ended, if it did
        #: called (from the frame thread) when it ends unexpectedly: `referee serve` stops the
        #: process with a non-zero status so that the service manager restarts it
        self.on_loop_died: Callable[[BaseException], None] | None = None
        #: key -> callable whose answer `state()` adds under that key (the club link's status)
        self.state_extras: dict[str, Callable[[], Any]] = {}
        self.referee: Referee
        opened = self.log.open_match(spec.name)
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
            self._new_match(spec.name, tuple(players or spec.default_players), variant)

    # -- match lifecycle -------------------------------------------------------------------------
    def _referee_for(self, match: Any, match_id: int) -> Referee:
        intrinsics = getattr(self.calibration, "intrinsics", None)
        colours = getattr(self.calibration, "colours", None)
        if colours is not None and getattr(colours, "game", match.game) != match.game:
            colours = None  # a colour model sampled for the other game
        return Referee(
            match, self.log, match_id,
            corners_px=self.corners_px, intrinsics=intrinsics, colours=colours,
            settings=self.settings, listener=self._publish, disc_thickness=self.disc_thickness,
        )

    @property
    def disc_thickness(self) -> float | None:
        """The discs' thickness over their diameter: as stated on the command line, else as
        stored with the calibration, else None (the reader's default)."""
        if self.stated_disc_thickness is not None:
            return self.stated_disc_thickness
        return getattr(self.calibration, "disc_thickness", None)

    def _abandon_current(self, text: str) -> None:
        """A match left without an end is closed as abandoned (never "in progress" forever)."""
        old = getattr(self, "referee", None)
        if old is not None and old.match.phase != "over":
            old.emit([{"type": "end", "winner": None, "reason": "abandoned", "text": text}])

    def _new_match(self, game: str, players: tuple[str, ...], variant: str,
                   names: Mapping[str, str] | None = None) -> None:
        match = registry.get_game(game).new_match(players, variant)
        self._abandon_current("Match abandoned for a new one")
        match_id = self.log.new_match(game, match.players, variant=variant,
                                      source=self.source_spec, start_position=match.snapshot())
        self.variant = variant
        self.referee = self._referee_for(match, match_id)
        self._ended_at = None
        start: dict[str, Any] = {"type": "start", "game": game, "players": list(match.players),
                                 "text": f"New {game} match"}
        if names:
            start["names"] = dict(names)
        self.referee.emit([start])

    def _resume(self, record: Any) -> None:
        events = self.log.events(record.id)
        match = registry.get_game(record.game).resume_match(record, events)
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
            with self._lock:  # the page goes on showing the last frame: not the camera's buffer
                self.referee.keep_frame()
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
        """The frame thread: never ends on an error in judging (`_judge_frame`); if it ends
        anyway (a bug outside it), `on_loop_died` is told."""
        try:
            self._run_frames()
        except BaseException as exc:  # noqa: BLE001 - reported, then the process is told
            self.loop_failure = exc
            traceback.print_exc(file=sys.stderr)
            if self.on_loop_died is not None:
                self.on_loop_died(exc)

    def _judge_frame(self, frame: Any) -> bool:
        """One frame through the referee; an unexpected error becomes an `error` event (once
        per distinct error, not on every frame) and the loop goes on with the next frame.
        False for a frame that is not judged: one of the table as it was before a control
        (the demo replans), or one where the simulated players put the table right (shown
        only)."""
        try:
            with self._lock:
                if self._demo_replan:
                    self.referee.keep_frame()  # not replaced: its buffer goes back soon
                    return False
                self.referee.frame_lent = self._lending
                if _tidying(frame):
                    self.referee.last_frame = frame.image
                    self.referee.last_preview = frame.preview
                    self.referee.picture_changed()  # not judged: the scene was not watched
                    return False
                self.referee.process(frame.image, frame.preview)
            self._last_error = None
        except Exception as exc:  # noqa: BLE001 - nothing a frame does may stop the referee
            text = f"{type(exc).__name__}: {exc}"
            if text == self._last_error:
                return True
            self._last_error = text
            traceback.print_exc(file=sys.stderr)
            with contextlib.suppress(Exception), self._lock:
                self.referee.emit([{"type": "error", "code": "internal",
                                    "text": f"Internal error while judging a frame ({text}); "
                                            "carrying on with the next frame"}])
        self._check_log()
        return True

    def _check_log(self) -> None:
        """Retry writes that wait for the log file; tell the terminal and the pages when the
        fault starts or ends."""
        if self.log.waiting:
            self.log.retry()
        fault = self.log.status()["message"]
        if fault == self._log_fault:
            return
        if fault is not None:
            print(f"referee: {fault}; retrying", file=sys.stderr, flush=True)
        elif self._log_fault is not None:
            print("referee: the match log is written again; nothing was lost", file=sys.stderr,
                  flush=True)
        self._log_fault = fault
        self._publish({"type": "log", "status": self.log.status()})

    def _run_frames(self) -> None:
        backoff = 0.5
        last_t = time.monotonic()
        while not self._stop.is_set():
            if self._paused:
                self._check_log()
                self._stop.wait(0.1)
                continue
            if self._demo_replan:
                self._follow_demo()
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
                read = reader(self._source)
                self._lending = read != self._source.read
                frame = read()
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
                        if self._demo_follow is not None:  # the game the page chose last
                            self._demo_replan = False
                            self._source, _ = self._demo_follow(None, self.referee.match,
                                                                self._restarts)
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
            if not self._judge_frame(frame):
                continue  # not judged: shown only, or the table as it was before a control
            if self.max_fps:
                wait = 1.0 / self.max_fps - (time.monotonic() - last_t)
                if wait > 0:
                    self._stop.wait(wait)
            now = time.monotonic()
            dt = now - last_t
            last_t = now
            if dt > 0:
                self._fps = 0.8 * self._fps + 0.2 / dt if self._fps else 1.0 / dt

    def _follow_demo(self) -> None:
        """Frame thread, demo: the simulated players put the table right after a control (take
        back the undone disc, clear the board for a new match) and carry on from the record."""
        with self._lock:
            self._demo_replan = False
            if self._demo_follow is None:
                return
            self._restarts += 1
            source, note = self._demo_follow(self._source, self.referee.match,
                                             self._restarts)
            if note:
                self.referee.emit([{"type": "info", "code": "demo", "text": note}])
        self._close_source()
        self._source = source

    # -- presentation -----------------------------------------------------------------------------
    def _publish(self, event: dict[str, Any]) -> None:
        for sub in list(self._subs):
            sub.put(event)

    def publish_extra(self, event: dict[str, Any]) -> None:
        """Tell the pages something outside the match changed (not logged): a state extra."""
        self._publish(event)

    def subscribe(self) -> Subscription:
        sub = Subscription(self)
        self._subs.append(sub)
        return sub

    def _unsubscribe(self, sub: Subscription) -> None:
        if sub in self._subs:
            self._subs.remove(sub)

    def picture_key(self) -> tuple[Any, ...] | None:
        """What the latest picture with the overlay shows: while it is the same, that picture
        differs from the last one only by the sensor's noise (`Referee.picture_version`: the
        scene monitor saw nothing move on the board) and the same things are drawn on it (the
        board, the instruction, the hand warning). None before the first frame."""
        with self._lock:
            ref = self.referee
            if ref.last_frame is None:
                return None
            return (ref.picture_version, id(ref.board), ref.hand, repr(ref.match.instruction))

    def latest_jpeg(self, overlay: bool = True, max_width: int | None = None) -> bytes | None:
        """The latest frame as JPEG; `max_width`: shrunk to that width (the size a page shows),
        which costs a fraction of a full-size encode."""
        with self._lock:
            if overlay:
                image = self.referee.overlay_image(width=max_width)
            else:
                image, preview = self.referee.last_frame, self.referee.last_preview
                if image is not None:
                    # made now, under the lock: a lent frame's buffer goes back to the camera
                    # while the frame thread reads on (a full-size picture is copied)
                    image = shown_picture(image, preview, max_width)
                    if self.referee.frame_lent and image is self.referee.last_frame:
                        image = np.array(image)
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
        if ref.board is None and ref.board_error:
            return "instruction"
        if phase == "question":
            return "question"
        if ref.match.instruction.get("kind") not in ("info", None):
            return "instruction"
        if ref.hand or not ref.settled:
            return "settling"
        return "waiting"

    def _danger_map(self) -> dict[str, Any] | None:
        spec, match = self.referee.spec, self.referee.match
        key = (spec.name, spec.danger_key(match))
        if key != self._danger_key:
            self._danger = spec.danger(match)
            self._danger_key = key
        return self._danger

    def _instruction(self) -> dict[str, Any]:
        """The match's instruction, or why there is none yet: a board not found is the
        headline, not only a line in the recent events."""
        ref = self.referee
        if ref.board is None and ref.board_error and ref.match.phase != "over":
            return {"kind": "warning", "highlight": [],
                    "text": f"{ref.board_error.rstrip('.')}. Is the camera looking at a "
                    f"{ref.game} board? (The match being refereed is {ref.game}.)"}
        return dict(ref.match.instruction)

    def state(self) -> dict[str, Any]:
        with self._lock:
            ref = self.referee
            match = ref.match
            spec = ref.spec
            record_events = self.log.events(ref.match_id, last=20)
            position = spec.page_position(match)
            borderline = spec.borderline(match)
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
                "move_number": spec.move_number(match),
                "position": position,
                "instruction": self._instruction(),
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
                "view": _view(ref.board),
                "exposure": None if ref.exposure is None else {
                    "text": ref.exposure["text"], "share": ref.exposure["share"]},
                "events": [e.to_json() for e in record_events],
                "log": self.log.status(),
            }
            if self.calibration is not None and hasattr(self.calibration, "summary"):
                state["calibration"] = self.calibration.summary()
        for key, extra in list(self.state_extras.items()):
            state[key] = extra()
        return state

    # -- controls ---------------------------------------------------------------------------------
    def command(self, name: str, payload: Mapping[str, Any] | None = None) -> dict[str, Any]:
        payload = dict(payload or {})
        with self._lock:
            events = self._command_handler(name)(payload)
            committed = self.referee.emit(events) if events else []
            if name in DEMO_FOLLOWS and self._demo_follow is not None:
                self._demo_replan = True
        return {"ok": True, "events": committed}

    def _command_handler(self, name: str) -> Callable[[dict[str, Any]], list[dict[str, Any]]]:
        """The control `name`: the service's own, the game's own, or a CommandError saying why
        not (the game refuses another game's control with its own words)."""
        handler = getattr(self, f"_cmd_{name}", None)
        if handler is not None:
            return handler
        spec = self.referee.spec
        game_handler = spec.commands.get(name)
        if game_handler is not None:
            return lambda payload: game_handler(self, payload)
        if name in spec.refusals:
            raise CommandError(*spec.refusals[name])
        if any(name in registry.get_game(g).commands for g in registry.names()):
            raise CommandError("bad_game", f"{spec.title} has no control {name!r}")
        raise CommandError("unknown_command", f"unknown command {name!r}")

    def _cmd_new_match(self, p: dict[str, Any]) -> list[dict[str, Any]]:
        spec = registry.get_game(str(p.get("game", self.referee.game)))
        game = spec.name
        players = p.get("players") or spec.default_players
        spec.check_players(players)
        spec.new_match(tuple(players), str(p.get("variant", "standard")))  # refuse it first
        names = player_names(p.get("names"), tuple(players))
        old = self.referee
        self._new_match(game, tuple(players), str(p.get("variant", "standard")), names)
        self.referee.board = old.board if old.game == game else None
        return []

    def _cmd_answer(self, p: dict[str, Any]) -> list[dict[str, Any]]:
        if "question_id" not in p or "choice" not in p:
            raise CommandError("bad_request", "answer needs 'question_id' and 'choice'")
        return self.referee.follow_turns(self.referee.match.answer(str(p["question_id"]), str(p["choice"])))

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

    def live_target(self) -> dict[str, Any] | None:
        """The calibration target in the latest frame (`calibration.capture.detect_live`), for
        the calibration page's live view; None before the first frame. Detected only when
        asked, on a reduced copy, at most every `LIVE_TARGET_INTERVAL_S` and once per frame
        however many pages ask; never under the lock the frame thread needs."""
        from calibration.capture import detect_live

        with self._live_target_lock:
            with self._lock:
                image = self.referee.last_frame
                picker = self._photos.picker if self._photos is not None else None
                if image is None:
                    return None
                now = time.monotonic()
                last = self._live_target
                if last is not None and (last[1] is image
                                         or now - last[0] < LIVE_TARGET_INTERVAL_S):
                    return last[2]
                # detected outside the lock, while the camera may reuse a lent frame's buffer
                shown = np.array(image) if self.referee.frame_lent else image
            answer = detect_live(shown, picker)
            self._live_target = (now, image, answer)
            return answer

    def _cmd_capture_photo(self, p: dict[str, Any]) -> list[dict[str, Any]]:
        """Save the current frame as a calibration photo (`calibration.capture.PhotoSession`)."""
        from calibration.capture import PhotoRefusedError, PhotoSession

        image = self.referee.last_frame
        if image is None:
            raise CommandError("no_frame", "no camera frame yet: wait for the camera")
        if self._photos is None:
            self._photos = PhotoSession(self.photo_dir)
        try:
            path, view = self._photos.take(image)
        except PhotoRefusedError as exc:
            raise CommandError("no_photo", f"no photo taken: {exc}") from exc
        return [{"type": "calibration", "photo": path, "corners": len(view.ids),
                 "corners_px": view.corners_px.round(1).tolist(),
                 "text": f"Calibration photo {len(self._photos.picker.kept)} saved: {path} "
                         f"({len(view.ids)} corners)"}]


def create_demo_service(
    db_path: str | Path,
    *,
    game: str | None = None,
    seed: int = 7,
    realtime: bool = True,
    speed: float = 1.0,
) -> RefereeService:
    """The service `referee demo` runs: the simulated table plays generated matches, one after
    the other (the seed advances each time). Not started. `realtime` paces it at 5 x `speed`
    frames a second, as a camera would; without it the frames come as fast as they are read."""
    from referee.simtable import carry_on, scripted_table

    game = registry.get_game(game if game is not None else registry.default_name()).name
    return RefereeService(
        MatchLog(db_path),
        lambda restart: scripted_table(game, seed + restart),
        game=game,
        source_spec=f"sim:{game}:{seed}",
        max_fps=5.0 * speed if realtime else None,
        resume=False,
        demo=True,
        demo_follow=lambda table, match, restart: carry_on(table, match, seed + restart),
    )
