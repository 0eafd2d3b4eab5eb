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


def _serve(db: Path, port: int, log_file: Path) -> subprocess.Popen:
    with open(log_file, "ab") as out:  # the child keeps its own copy of the descriptor
        return subprocess.Popen(
            REFEREE + ["serve", "--source", "sim:dition:3", "--db", str(db), "--port", str(port),
                       "--max-fps", "20"],
            stdout=out, stderr=subprocess.STDOUT, cwd=Path(__file__).resolve().parent.parent,
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

        before = _wait(moved, 240, "two moves", proc, out)
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
        after = _wait(lambda: _state(port2), 120, "the restarted server", proc, out)
        assert after["match_id"] == match_id
        assert after["game"] == "dition"
        expected_discs = len(before["position"]["discs"])
        assert len(after["position"]["discs"]) >= expected_discs - 2  # removals may have landed
        # a page stays open while the service stops: its event stream must not hold the stop up
        page = urllib.request.urlopen(f"http://127.0.0.1:{port2}/api/events", timeout=10)
        assert any(page.readline().startswith(b"event: state") for _ in range(5))
    finally:
        os.kill(proc.pid, signal.SIGTERM)  # `kill`, a container stop: a clean stop
        assert proc.wait(timeout=20) == 0, log_text(out)
        if page is not None:
            page.close()
    assert "match log is closed" in log_text(out)
    assert "still running" not in log_text(out)  # the web server's workers all ended
    log = MatchLog(db)
    events = [(e.seq, e.type, dict(e.payload)) for e in log.events(match_id)]
    assert events[: len(committed)] == committed  # nothing lost, nothing rewritten
    assert any(t == "resumed" for _, t, _ in events[len(committed):])
