"""The referee service on the simulated table: state, pushed events, controls, resume."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np
import pytest

from hardware import Frame
from referee.errors import CommandError
from referee.log import MatchLog
from referee.service import RefereeService
from referee.simsteps import Pace
from referee.simtable import scripted_table


def _service(db: Path, game: str = "domination", **kw) -> RefereeService:
    return RefereeService(
        MatchLog(db),
        lambda restart: scripted_table(game, 4 + restart, pace=Pace(still=2, hand=3, verdict=5),
                                       size=(960, 720)),
        game=game, source_spec=f"sim:{game}:4", **kw,
    )


def _wait_for(sub, kind: str, timeout: float = 120.0) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        event = sub.get(timeout=1.0)
        if event is not None and event["type"] == kind:
            return event
    pytest.fail(f"no {kind!r} event within {timeout} s")


@pytest.mark.slow
def test_service_referees_and_pushes_events(tmp_path: Path) -> None:
    service = _service(tmp_path / "db.sqlite")
    sub = service.subscribe()
    service.start()
    try:
        move = _wait_for(sub, "move")
        assert move["colour"] == "G" and "move" in move and move["seq"] > 0
        state = service.state()
        assert state["game"] == "domination" and state["camera"]["state"] == "ok"
        assert state["last_move"]["move"] == move["move"]
        assert any(e["type"] == "move" for e in state["events"])
        jpeg = service.latest_jpeg()
        assert jpeg is not None and jpeg[:2] == b"\xff\xd8"
        # controls
        with pytest.raises(CommandError) as err:
            service.command("answer", {"question_id": "nope", "choice": "x"})
        assert err.value.code == "no_question"
        with pytest.raises(CommandError) as err:
            service.command("launch_rockets", {})
        assert err.value.code == "unknown_command"
        with pytest.raises(CommandError):
            service.command("set_corners", {"corners_px": [[1, 2], [3]]})
        out = service.command("pause", {})
        assert out["events"][0]["type"] == "pause" and service.state()["status"] == "paused"
        service.command("resume", {})
        old_id = state["match_id"]
        service.command("new_match", {"game": "dition"})
        new = service.state()
        assert new["match_id"] != old_id and new["game"] == "dition"
        assert service.log.match(old_id).result["reason"] == "abandoned"
        with pytest.raises(CommandError):
            service.command("new_match", {"game": "chess"})
    finally:
        sub.close()
        service.stop()


def test_resume_rebuilds_the_open_match(tmp_path: Path) -> None:
    db = tmp_path / "db.sqlite"
    log = MatchLog(db)
    mid = log.new_match("dition", ["black", "white"])
    log.append(mid, {"type": "move", "colour": "black", "x": 5.0, "y": 5.0, "outcome": "placed",
                     "removed": []},
               position={"discs": [{"x": 5.0, "y": 5.0, "colour": "black"}], "to_move": "white",
                         "move_number": 2, "phase": "await_move"})
    log.close()
    service = _service(db, game="dition")
    state = service.state()
    assert state["match_id"] == mid
    assert state["to_move"] == "white" and state["position"]["discs"] == [
        {"x": 5.0, "y": 5.0, "colour": "black"}]
    assert "resumed" in [e["type"] for e in state["events"]]
    # the undo history came back too
    service.command("undo", {})
    assert service.state()["position"]["discs"] == []


def test_not_resuming_closes_the_open_match_as_abandoned(tmp_path: Path) -> None:
    db = tmp_path / "db.sqlite"
    log = MatchLog(db)
    old = log.new_match("dition", ["black", "white"])
    log.close()
    service = _service(db, game="dition", resume=False)
    assert service.state()["match_id"] != old
    record = service.log.match(old)
    assert record.ended_at is not None and record.result["reason"] == "abandoned"
    assert service.log.events(old)[-1].type == "end"


class _SlowCamera:
    """A camera whose every read takes `read_s` (a driver waiting for the sensor); it notes
    whether it was ever closed while a read was in progress."""

    def __init__(self, read_s: float) -> None:
        self.read_s = read_s
        self.reading = threading.Event()
        self.closed = False
        self.closed_during_read = False

    def read(self) -> Frame:
        self.reading.set()
        time.sleep(self.read_s)
        self.reading.clear()
        return Frame(np.full((480, 640, 3), 90, np.uint8), time.monotonic(), 0)

    def close(self) -> None:
        self.closed_during_read = self.closed_during_read or self.reading.is_set()
        self.closed = True


def _slow_service(db: Path, camera: _SlowCamera) -> RefereeService:
    service = RefereeService(MatchLog(db), lambda restart: camera, game="dition",
                             source_spec="slow")
    service.start()
    assert camera.reading.wait(10), "the frame thread never read"
    return service


def test_stop_waits_for_the_read_in_progress_then_closes_the_camera(tmp_path: Path) -> None:
    camera = _SlowCamera(read_s=0.8)
    service = _slow_service(tmp_path / "db.sqlite", camera)
    start = time.monotonic()
    assert service.stop() is True
    assert camera.closed and not camera.closed_during_read
    assert time.monotonic() - start < 5.0
    service.log.close()


def test_a_stop_that_times_out_leaves_the_camera_to_its_thread(tmp_path: Path) -> None:
    camera = _SlowCamera(read_s=1.5)
    service = _slow_service(tmp_path / "db.sqlite", camera)
    assert service.stop(timeout=0.1) is False  # the read goes on: never closed under it
    assert not camera.closed
    assert service.stop(timeout=10) is True  # once the read returns, the thread ends
    assert camera.closed and not camera.closed_during_read
    service.log.close()


def _wait_until(predicate, timeout: float = 120.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    pytest.fail(f"{what} not reached within {timeout} s")


def test_a_demo_match_left_without_an_end_is_closed_as_abandoned(tmp_path: Path) -> None:
    """Issue 17: when the simulated table began its next match, the one before stayed
    "in progress" in the log for ever."""
    from hardware import sim
    from referee.simtable import sim_intrinsics

    def short(restart: int):  # an empty board for a few frames: a match that never ends
        rng = np.random.default_rng(restart)
        camera = sim.random_camera(rng, "dition", image_size=(480, 360))
        table = sim.ScriptedTable([sim.Still((), 3)], camera, rng, game="dition")
        table.intrinsics = sim_intrinsics(camera)
        return table

    service = RefereeService(MatchLog(tmp_path / "db.sqlite"), short, game="dition",
                             resume=False, demo=True)
    first = service.referee.match_id
    service.start()
    try:
        _wait_until(lambda: service.referee.match_id > first + 1, 60, "two demo restarts")
    finally:
        service.stop()
    record = service.log.match(first)
    assert record.ended_at is not None and record.result["reason"] == "abandoned"
    ends = [e for e in service.log.events(first) if e.type == "end"]
    assert len(ends) == 1


def test_board_not_found_is_the_headline_not_only_a_recent_event(tmp_path: Path) -> None:
    """Issue 17: New match -> Domination with a Dition table in view left the headline at
    "Watching... set up the pieces"."""
    service = _service(tmp_path / "db.sqlite", game="dition")
    service.command("new_match", {"game": "domination"})
    table = scripted_table("dition", 4, size=(640, 480))
    with table, service._lock:  # frames fed by hand, without the frame thread
        for _ in range(3):
            service.referee.process(table.read().image)
    state = service.state()
    assert service.referee.board is None
    assert state["status"] == "instruction" and state["instruction"]["kind"] == "warning"
    assert "Board not found" in state["instruction"]["text"]
    assert "domination" in state["instruction"]["text"]


@pytest.mark.slow
def test_demo_undo_the_simulated_hand_takes_the_disc_back(tmp_path: Path) -> None:
    """Issue 17: after an undo the demo said "The board does not match: put back ... take away
    ..." until its next match. Now the simulated hand takes the undone disc back and play goes
    on from the record: the next move has the undone move's number and nothing is amiss."""
    from referee.simtable import carry_on

    pace = Pace(still=2, hand=3, verdict=5)
    service = RefereeService(
        MatchLog(tmp_path / "db.sqlite"),
        lambda restart: scripted_table("dition", 4 + restart, pace=pace, size=(960, 720)),
        game="dition", resume=False, demo=True,
        demo_follow=lambda table, match, n: carry_on(table, match, 40 + n, pace=pace))
    sub = service.subscribe()
    service.start()
    try:
        _wait_for(sub, "move")
        second = _wait_for(sub, "move")
        service.command("undo", {})
        after = []
        nxt = None
        while nxt is None:
            event = sub.get(timeout=120)
            assert event is not None, "no move after the undo"
            after.append(event)
            if event["type"] == "move":
                nxt = event
        assert nxt["move_number"] == second["move_number"], [e.get("text") for e in after]
        assert not [e for e in after if e["type"] in ("warning", "illegal")], \
            [e.get("text") for e in after]
    finally:
        sub.close()
        service.stop()
