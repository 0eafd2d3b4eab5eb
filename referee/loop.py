"""The referee loop: frames in, settled readings to the match, events to the log.

`Referee.process(frame)` runs the vision on one frame: it finds the board (once, and again when the
camera or the board was bumped), asks the scene monitor whether hands are off and the board is
still, reads the pieces of a settled board, waits until the reading is the same on
`settings.agree_frames` frames in a row, and hands it to the match state machine. The events that
come out are committed to the match log at once, each with the position after it and, for the
verdicts, a JPEG of the frame with the detections drawn over it.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from hardware.source import Preview
from referee.games.base import Reading
from referee.games.registry import get_game
from referee.log import MatchLog
from referee.view import quarter_turns
from vision.errors import VisionError
from vision.resize import halved_width

SNAPSHOT_EVENTS = {"move", "illegal", "end", "answer", "question", "warning", "start", "resolved"}
#: checks in a row that must find the board no longer over-exposed before the page says so
EXPOSURE_CLEAR_CHECKS = 2
#: picture versions, unique across referees (a new match's referee never repeats an old one's)
_PICTURE_VERSIONS = itertools.count(1)


@dataclass(frozen=True)
class LoopSettings:
    agree_frames: int = 1  # identical settled readings needed (the scene monitor already
    #                        requires a few quiet frames before it says "settled")
    use_motion: bool = True  # False for a folder of stills: each still is settled if no hand
    refind_every: int = 25  # frames between checks that the board has not moved
    snapshot_quality: int = 80
    #: the verdicts' snapshots are the frame halved until at most this wide (2304 px -> 1152):
    #: the replay shows them at page width, and a full 2304 px overlay and encode cost 14 ms of
    #: CPU per verdict, the halved one ~5 ms (exact halving is the cheap shrink: vision.resize)
    snapshot_max_width: int | None = 1280


Match = Any  # the match state machine of the game (`Game.new_match`)
Listener = Callable[[dict[str, Any]], None]


class Referee:
    """Owns one match and its vision state. The caller owns the frame source."""

    def __init__(
        self,
        match: Match,
        log: MatchLog,
        match_id: int,
        *,
        corners_px: Sequence[Sequence[float]] | None = None,
        intrinsics: Any = None,
        colours: Mapping[str, Any] | None = None,
        settings: LoopSettings = LoopSettings(),
        listener: Listener | None = None,
        disc_thickness: float | None = None,
    ) -> None:
        from vision.scene import SceneMonitor

        self.match = match
        self.game = match.game
        self.spec = get_game(match.game)
        self.log = log
        self.match_id = match_id
        self.corners_px = np.asarray(corners_px, dtype=float) if corners_px is not None else None
        self.intrinsics = intrinsics
        self.colours = dict(colours) if colours else None
        self.disc_thickness = disc_thickness  # the discs' thickness over their diameter, if stated
        self.settings = settings
        self.listener = listener
        self.board: Any = None
        #: what the game keeps of the board from frame to frame (`Game.read`'s cache: the Dition
        #: reader's tables), this referee's own
        self.reading_cache: dict[str, Any] = {}
        self.scene = SceneMonitor()
        self.frames = 0
        self.settled = False
        self.hand = False
        self.last_reading: Reading | None = None
        self._candidate: Reading | None = None
        self._agree = 0
        self._acted_on: Reading | None = None
        self.board_error: str | None = None
        #: where the board shows pure white to the camera (`Game.exposure`), or None: looked at
        #: when the board is found, when hands leave it and with the board's periodic check
        self.exposure: dict[str, Any] | None = None
        self._exposure_clear_checks = 0
        self.last_frame: np.ndarray | None = None
        #: the camera's own smaller picture of `last_frame` (`hardware.source.Preview`: the Pi
        #: camera's lores stream), for the page's picture; None from sources without one
        self.last_preview: Preview | None = None
        #: `last_frame` and `last_preview` are lent by the camera (`hardware.source`, "Lending"):
        #: valid until the source's second read after them; `keep_frame()` before that
        self.frame_lent = False
        self.last_overlay: np.ndarray | None = None
        #: changes with every frame whose picture may differ from the one before beyond the
        #: sensor's noise: one with a hand or motion over the board (the scene monitor), a board
        #: found or moved, a reading that does not agree with the one before, no board at all;
        #: not while the board lies still (`picture_changed`)
        self.picture_version = next(_PICTURE_VERSIONS)
        self.timings_ms: dict[str, float] = {}

    # -- events ------------------------------------------------------------------------------
    def emit(self, events: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """Commit events to the log (with position and snapshot) and tell the listener."""
        out = []
        snapshot: bytes | None = None  # one picture for every event of this call: the same
        #                                frame, the same state drawn (a move and the end with it)
        for event in events:
            jpeg = None
            if event["type"] in SNAPSHOT_EVENTS and self.last_frame is not None:
                if snapshot is None:
                    snapshot = self.snapshot_jpeg()
                jpeg = snapshot
            record = self.log.append(
                self.match_id, event, position=self.match.snapshot(), snapshot_jpeg=jpeg
            )
            full = {"seq": record.seq, "time": record.time, **event}
            if event["type"] == "end":
                self.log.end_match(
                    self.match_id,
                    {"winner": event.get("winner"), "reason": event.get("reason"),
                     "text": event.get("text")},
                )
            out.append(full)
            if self.listener:
                self.listener(full)
        return out

    def snapshot_jpeg(self) -> bytes | None:
        width = None
        if self.settings.snapshot_max_width is not None and self.last_frame is not None:
            width = halved_width(self.last_frame.shape[1], self.settings.snapshot_max_width)
        image = self.overlay_image(width=width)
        if image is None:
            return None
        ok, buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY,
                                               self.settings.snapshot_quality])
        return buf.tobytes() if ok else None

    def picture_changed(self) -> None:
        """`last_frame` may look different from the frame before (`picture_version`)."""
        self.picture_version = next(_PICTURE_VERSIONS)

    def keep_frame(self) -> None:
        """Make `last_frame` (and its preview) copies of their own if the camera lent them: the
        page goes on showing the last frame after the camera is closed or lost, or while frames
        are read but not judged."""
        if not self.frame_lent:
            return
        if self.last_frame is not None:
            self.last_frame = np.array(self.last_frame)
        if self.last_preview is not None:
            self.last_preview = self.last_preview.copy()
        self.frame_lent = False

    def overlay_image(self, width: int | None = None) -> np.ndarray | None:
        if self.last_frame is None:
            return None
        from referee.overlay import draw_overlay

        return draw_overlay(self.last_frame, self, width=width, preview=self.last_preview)

    # -- frames --------------------------------------------------------------------------------
    def process(self, image: np.ndarray, preview: Preview | None = None) -> list[dict[str, Any]]:
        """One frame in (and the camera's smaller picture of it, if it makes one: only shown,
        never judged); the committed events out."""
        self.frames += 1
        self.last_frame = image
        self.last_preview = preview
        t0 = time.perf_counter()
        events: list[dict[str, Any]] = []
        board_before = self.board
        if self.board is None:
            events += self._locate_board(image)
            if self.board is None:
                self.picture_changed()
                return self.emit(events)
            events += self._check_exposure(image)
        elif not self.hand and self.frames % self.settings.refind_every == 0:
            events += self._check_board(image)
            events += self._check_exposure(image)
        t1 = time.perf_counter()
        state = self.scene.update(image, self.board)
        if state.hand_present or state.motion or self.board is not board_before:
            self.picture_changed()
        self.hand = bool(state.hand_present)
        settled = bool(state.settled) if self.settings.use_motion else not state.hand_present
        if settled and not self.settled and self.frames > 1:
            # hands just left: make sure nobody bumped the camera or the board meanwhile, and
            # that no lamp was switched on
            events += self._check_board(image)
            events += self._check_exposure(image)
        self.settled = settled
        if not settled:
            self._agree = 0
            self._candidate = None
            self.timings_ms = {"board": (t1 - t0) * 1e3, "scene": (time.perf_counter() - t1) * 1e3}
            return self.emit(events)
        t2 = time.perf_counter()
        try:
            reading = self.read(image)
        except VisionError as exc:
            return self.emit(events + [{"type": "warning", "code": "vision", "text": str(exc)}])
        t3 = time.perf_counter()
        if not reading.agrees(self.last_reading):
            self.picture_changed()  # its rings are drawn on the picture
        self.last_reading = reading
        self.timings_ms = {"board": (t1 - t0) * 1e3, "scene": (t2 - t1) * 1e3,
                           "read": (t3 - t2) * 1e3}
        if reading.agrees(self._candidate):
            self._agree += 1
        else:
            self._candidate = reading
            self._agree = 1
        if self._agree < self.settings.agree_frames:
            return self.emit(events)
        if reading.agrees(self._acted_on):
            return self.emit(events)  # nothing new since the last time we acted
        self._acted_on = reading
        events += self.feed(reading)
        return self.emit(events)

    def feed(self, reading: Reading) -> list[dict[str, Any]]:
        return self.follow_turns(self.spec.observe(self.match, reading))

    def follow_turns(self, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The match's events, the board turned where one says a8 is at another corner than the
        finder's guess (the start, or the players' answer): once, and kept so through bumps
        (`orient_board` follows the corner order)."""
        for e in events:
            if e.get("type") == "board" and e.get("code") == "turned" and self.board is not None:
                self.board = self.spec.turn_board(self.board, int(e["quarter_turns"]), self.intrinsics)
                self._follow_view()
                self._acted_on = self._candidate = None
        return events

    def _check_exposure(self, image: np.ndarray) -> list[dict[str, Any]]:
        """Tell the players once when part of the board turns pure white to the camera (a lamp
        switched on, the sun), where pieces may be missed, and once when it no longer does."""
        if self.board is None:
            return []
        found = self.spec.exposure(image, self.board, intrinsics=self.intrinsics,
                                   disc_thickness=self.disc_thickness,
                                   turns=int(getattr(self.match, "view_turns", 0)))
        before = self.exposure
        if found is None and before is not None:
            # gone only when two checks in a row say so: a light on the edge of clipping (or a
            # sleeve's shadow over the hot spot) would otherwise flap the notice on and off
            self._exposure_clear_checks += 1
            if self._exposure_clear_checks < EXPOSURE_CLEAR_CHECKS:
                return []
        self._exposure_clear_checks = 0
        self.exposure = found
        if found is not None and before is None:
            return [{"type": "warning", "code": "overexposed", "text": found["text"],
                     "overexposed": {k: found[k] for k in ("share", "disc_areas", "box_board")}}]
        if found is None and before is not None:
            return [{"type": "board", "code": "exposure_ok",
                     "text": "The board is no longer over-exposed"}]
        return []

    def _check_board(self, image: np.ndarray) -> list[dict[str, Any]]:
        """Has the board moved in the picture? Then find it again (given corners are kept)."""
        if self.corners_px is not None or self.board is None:
            return []
        return self._locate_board(image)

    def _locate_board(self, image: np.ndarray) -> list[dict[str, Any]]:
        previous = self.board
        if previous is not None:
            moved, tracked = self.spec.track_board(image, previous, self.intrinsics)
            if not moved:
                return []
            if tracked is not None:
                return self._board_changed(previous, tracked)
        try:
            board = self.spec.find_board(image, corners_px=self.corners_px,
                                         intrinsics=self.intrinsics)
        except VisionError as exc:
            if previous is None:
                message = f"Board not found: {exc}"
                if message != self.board_error:
                    self.board_error = message
                    return [{"type": "warning", "code": "board_not_found", "text": message}]
            return []
        self.board_error = None
        if previous is None:
            self.board = board
            self._follow_view()
            return [{"type": "board", "code": "found", "text": "Board found",
                     "corners_px": np.round(board.corners_px, 2).tolist()}]
        return self._board_changed(previous, board)

    def _board_changed(self, previous: Any, board: Any) -> list[dict[str, Any]]:
        board = self.spec.orient_board(previous, board, self.intrinsics)
        self.board = board
        self._follow_view()
        shift = float(np.max(np.linalg.norm(board.corners_px - previous.corners_px, axis=1)))
        if shift > 3.0:
            self._acted_on = None
            return [{"type": "board", "code": "moved",
                     "text": f"The board moved ({shift:.0f} px): found it again, carrying on",
                     "corners_px": np.round(board.corners_px, 2).tolist()}]
        return []

    def _follow_view(self) -> None:
        """The verdicts' words follow the board as the camera shows it (`referee.view`)."""
        if hasattr(self.match, "view_turns") and self.board is not None:
            self.match.view_turns = quarter_turns(self.board.corners_px)
        if hasattr(self.match, "board_may_turn") and self.board is not None:
            # only a board the finder oriented by guess (a chessboard's two light corners);
            # given corners say where a8 is, even where the chessboard finder measured them
            self.match.board_may_turn = self.corners_px is None and self.board.method == "chessboard"

    def read(self, image: np.ndarray) -> Reading:
        if self.colours is None and self.spec.uses_colour_model and self._acted_on is None:
            # no colour model given: the game may learn one from its start position
            learnt = self.spec.start_colours(image, self.board, tuple(self.match.players),
                                             intrinsics=self.intrinsics)
            self.colours = dict(learnt) if learnt else None
        return self.spec.read(image, self.board, intrinsics=self.intrinsics, colours=self.colours,
                              disc_thickness=self.disc_thickness, cache=self.reading_cache)
