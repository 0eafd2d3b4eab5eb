"""A referee killed in the middle of a match resumes it with nothing lost (issue 5)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from referee.faults import FAULT_ENV
from referee.log import MatchLog

REFEREE = [sys.executable, "-m", "referee"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _state(port: int) -> dict | None:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/state", timeout=5) as r:
            return json.loads(r.read())
    except OSError:
        return None


def _serve(db: Path, port: int, log_file: Path, fault: str | None = None) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k != FAULT_ENV}
    if fault is not None:
        env[FAULT_ENV] = fault
    with open(log_file, "ab") as out:  # the child keeps its own copy of the descriptor
        return subprocess.Popen(
            REFEREE + ["serve", "--source", "sim:dition:3", "--db", str(db), "--port", str(port),
                       "--max-fps", "20"],
            stdout=out, stderr=subprocess.STDOUT, cwd=Path(__file__).resolve().parent.parent,
            env=env,
        )


def log_text(log_file: Path) -> str:
    return log_file.read_text(errors="replace")[-3000:]


def _wait(predicate, timeout: float, what: str, proc: subprocess.Popen, log_file: Path):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        if proc.poll() is not None:
            break
        time.sleep(0.5)
    pytest.fail(f"timed out waiting for {what}; server output:\n{log_text(log_file)}")


@pytest.mark.slow
def test_killed_serve_resumes_the_open_match(tmp_path: Path) -> None:
    db = tmp_path / "referee.sqlite"
    out = tmp_path / "serve.log"
    port = _free_port()
    proc = _serve(db, port, out)
    try:
        def moved() -> dict | None:
            st = _state(port)
            if st and sum(e["type"] == "move" for e in st["events"]) >= 2:
                return st
            return None

        before = _wait(moved, 300, "two moves", proc, out)
    finally:
        os.kill(proc.pid, signal.SIGKILL)  # a power cut, not a polite shutdown
        proc.wait()
    log = MatchLog(db)
    match_id = before["match_id"]
    committed = [(e.seq, e.type, dict(e.payload)) for e in log.events(match_id)]
    assert sum(t == "move" for _, t, _ in committed) >= 2
    assert log.match(match_id).ended_at is None
    log.close()

    port2 = _free_port()
    proc = _serve(db, port2, out)
    page = None
    try:
        after = _wait(lambda: _judging(port2), 240, "the restarted referee judging frames", proc,
                      out)
        assert after["match_id"] == match_id
        assert after["game"] == "dition"
        expected_discs = len(before["position"]["discs"])
        assert len(after["position"]["discs"]) >= expected_discs - 2  # removals may have landed
        # a page stays open while the service stops: its event stream must not hold the stop up
        page = urllib.request.urlopen(f"http://127.0.0.1:{port2}/api/events", timeout=30)
        assert any(page.readline().startswith(b"event: state") for _ in range(5))
    finally:
        os.kill(proc.pid, signal.SIGTERM)  # `kill`, a container stop: a clean stop
        assert _exit_status(proc) == 0, log_text(out)
        if page is not None:
            page.close()
    assert "match log is closed" in log_text(out)
    assert "still running" not in log_text(out)  # the web server's workers all ended
    log = MatchLog(db)
    events = [(e.seq, e.type, dict(e.payload)) for e in log.events(match_id)]
    assert events[: len(committed)] == committed  # nothing lost, nothing rewritten
    assert any(t == "resumed" for _, t, _ in events[len(committed):])


def _judging(port: int) -> dict | None:
    """The state once the referee judges frames: the camera read and the first verdict done.

    A stop waits for the step in progress (at most `referee.service.STOP_TIMEOUT_S`), and right
    after a start that step is the slowest of all (the simulated table generates its match and
    renders its first scene; the board is found and the lens estimated): on a loaded machine it
    can outlast the stop's wait, which is then a failure of this test, not a hang of the
    referee's."""
    st = _state(port)
    if st and st["camera"]["state"] == "ok" and st["camera"]["fps"] > 0:
        return st
    return None


def _exit_status(proc: subprocess.Popen, timeout_s: float = 60.0) -> int | None:
    """The process's exit status once it ends; None (and the process killed) if it is still
    running after `timeout_s`: a generous bound that still catches a hang."""
    try:
        return proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return None


#: frames the referee reads before the planted fault ends its frame thread: past the first move
#: of the simulated match sim:dition:3 (judged on frame 17), before its second (frame 30)
LOOP_DIES_AFTER_FRAMES = 24


@pytest.mark.slow
def test_a_match_loop_that_dies_stops_serve_and_the_restart_resumes_the_match(
        tmp_path: Path) -> None:
    """The frame thread ending (here by `referee.faults`) ends `serve` with status 1, which
    makes the service manager restart it; the restarted referee resumes the same match with
    every event of the log as it was."""
    db = tmp_path / "referee.sqlite"
    out = tmp_path / "serve.log"
    port = _free_port()
    proc = _serve(db, port, out, fault=f"loop-dies-after-frames:{LOOP_DIES_AFTER_FRAMES}")
    seen: dict | None = None
    deadline = time.monotonic() + 300
    try:
        while proc.poll() is None and time.monotonic() < deadline:
            seen = _state(port) or seen  # the page's last view before the process ended
            time.sleep(0.3)
    finally:
        status = _exit_status(proc, timeout_s=max(1.0, deadline - time.monotonic()))
    text = log_text(out)
    assert status == 1, text
    assert "the match loop stopped (InjectedFault" in text, text
    assert "service manager restarts the referee" in text
    assert seen is not None and any(e["type"] == "move" for e in seen["events"]), seen
    match_id = seen["match_id"]
    log = MatchLog(db)
    assert log.match(match_id).ended_at is None  # still open: the next start resumes it
    records = log.events(match_id)
    committed = [e.to_json() for e in records]
    last_position = [e.position for e in records if e.position][-1]
    log.close()
    on_disk = {e["seq"]: e for e in committed}
    assert all(on_disk.get(e["seq"]) == e for e in seen["events"])  # what the page showed

    port2 = _free_port()
    proc = _serve(db, port2, out)  # the service manager's restart: no fault this time
    try:
        after = _wait(lambda: _judging(port2), 240, "the restarted referee judging frames", proc,
                      out)
    finally:
        os.kill(proc.pid, signal.SIGTERM)
        assert _exit_status(proc) == 0, log_text(out)
    assert after["match_id"] == match_id
    assert len(after["position"]["discs"]) == len(last_position["discs"])  # as the log left it
    log = MatchLog(db)
    events = [e.to_json() for e in log.events(match_id)]
    assert events[: len(committed)] == committed  # nothing lost, nothing rewritten
    assert [e["type"] for e in events[len(committed):]][:1] == ["resumed"]


def test_the_fault_switch_is_off_unless_set_and_refuses_what_it_does_not_know() -> None:
    from referee.faults import FaultSpecError, loop_dies_after, with_faults

    def factory(restart: int) -> str:
        return f"source {restart}"

    assert loop_dies_after({}) is None and with_faults(factory, {}) is factory
    assert loop_dies_after({FAULT_ENV: "loop-dies-after-frames:7"}) == 7
    for wrong in ("loop-dies-after-frames", "loop-dies-after-frames:x", "disk-full:3"):
        with pytest.raises(FaultSpecError, match="the only fault is loop-dies-after-frames:N"):
            loop_dies_after({FAULT_ENV: wrong})
