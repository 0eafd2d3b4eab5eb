"""The Pi camera unplugged during a match, through picamera2's real request queue (the fake).

A capture that times out on a camera that no longer delivers stays queued in picamera2, and its
`stop()` queues behind it with no timeout: closing the camera that way never returns, so the
page never learns the camera is gone. Here the fake camera films the simulated table playing a
scripted match; mid-match its cable comes out, then goes back in. The page (`/api/state`) must
say "camera lost" within 5 s, the camera must be reopened, and every move of the match must be
in the log.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from hardware import EndOfStream
from hardware.fakes.picamera2 import FakeCamera, FakeCameraSystem
from hardware.sources.picamera2_source import Picamera2Params, Picamera2Source
from referee.log import MatchLog
from referee.loop import LoopSettings
from referee.service import RefereeService
from referee.simtable import Pace, scripted_match
from web.app import create_app

SIZE = (800, 600)
#: the page must say so within this (the issue's promise)
LOST_WITHIN_S = 5.0


class TableInFrontOfTheCamera:
    """The scripted table as the world: one step every `1 / fps` s of frames actually looked at.

    The fake camera asks for a picture only when a frame is read; while the camera is unplugged
    nobody looks, and the players (told "camera lost" by the page) wait.
    """

    def __init__(self, table: Any, fps: float) -> None:
        self._table = table
        self._period_s = 1.0 / fps
        self._next_s = 0.0
        self._image: np.ndarray | None = None
        self._lock = threading.Lock()
        self.ended = threading.Event()

    def frame(self, index: int, size: tuple[int, int]) -> np.ndarray:
        with self._lock:
            now = time.monotonic()
            if self._image is None or (now >= self._next_s and not self.ended.is_set()):
                try:
                    self._image = self._table.read().image
                except EndOfStream:
                    self.ended.set()
                self._next_s = now + self._period_s
            assert self._image is not None
            image = self._image
        if (image.shape[1], image.shape[0]) != size:
            image = cv2.resize(image, size, interpolation=cv2.INTER_AREA)
        return image


def _wait(condition: Any, timeout_s: float, what: str, poll_s: float = 0.05) -> float:
    start = time.monotonic()
    while time.monotonic() - start < timeout_s:
        if condition():
            return time.monotonic() - start
        time.sleep(poll_s)
    pytest.fail(f"{what}: not within {timeout_s} s")


@pytest.mark.slow
def test_unplugged_camera_is_reported_reopened_and_the_match_log_misses_nothing(
    tmp_path: Path,
) -> None:
    table, turns = scripted_match("domination", 5, pace=Pace(still=4, hand=3, verdict=5, end=6),
                                  size=SIZE, moves=16)
    world = TableInFrontOfTheCamera(table, fps=4.0)
    system = FakeCameraSystem([FakeCamera(fps=15.0, settle_frames=3, frame_fn=world.frame)])
    params = Picamera2Params(size=SIZE)  # the shipped timeouts

    def open_camera(restart: int) -> Picamera2Source:
        source = Picamera2Source(0, params, picamera2_class=system.picamera2_class)
        source.intrinsics = table.intrinsics  # type: ignore[attr-defined] - as a calibration
        return source

    log = MatchLog(tmp_path / "m.sqlite")
    service = RefereeService(log, open_camera, game="domination", source_spec="picamera2:0",
                             settings=LoopSettings(agree_frames=1), max_fps=8.0, resume=False)
    client = create_app({"TESTING": True}, service=service).test_client()

    def page() -> dict[str, Any]:
        response = client.get("/api/state")
        assert response.status_code == 200
        return response.get_json()

    def logged_moves() -> list[Any]:
        return [e for e in log.events(service.state()["match_id"]) if e.type == "move"]

    service.start()
    try:
        _wait(lambda: len(logged_moves()) >= 2, 120, "two moves refereed")
        system.cameras[0].connected = False  # the ribbon cable comes out mid-match
        took_s = _wait(lambda: page()["camera"]["state"] == "lost", 15, "camera lost on the page")
        assert took_s < LOST_WITHIN_S, f"the page said camera lost after {took_s:.1f} s"
        assert page()["status"] == "camera_lost"
        opened_before = len(system.instances)
        time.sleep(1.0)
        system.cameras[0].connected = True  # pushed back in
        _wait(lambda: page()["camera"]["state"] == "ok", 20, "camera back")
        assert len(system.instances) > opened_before, "a new picamera2 instance was opened"
        assert sum(c.is_open for c in system.instances) == 1, "the lost one was closed"
        _wait(world.ended.is_set, 240, "the match played to its end")
        _wait(lambda: len(logged_moves()) >= len(turns), 20, "every move logged")
    finally:
        service.stop()
    moves = [e.to_json() for e in logged_moves()]
    assert [m["move"] for m in moves] == [t.move.to_json() for t in turns]
    assert [m["removed"] for m in moves] == [t.result.removed for t in turns]
    log.close()
