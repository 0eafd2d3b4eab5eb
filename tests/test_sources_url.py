"""Network sources against a loopback server: a phone-style MJPEG stream and a video on a web server."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import numpy as np
import pytest
from test_sources_support import (
    CENTRE_TOLERANCE_PX,
    disc_centre_px,
    frame_index_of,
    measure_disc,
    render_frame,
    write_avi,
)

from hardware import (
    EndOfStream,
    ResilientSource,
    SourceLostError,
    SourceUnavailableError,
    open_source,
)
from hardware.fakes.stream_server import MjpegServer


def test_mjpeg_stream_delivers_live_frames_in_order() -> None:
    with MjpegServer(render_frame, fps=40) as server, \
            open_source(server.stream_url, open_timeout_s=5) as source:
        frames = [source.read() for _ in range(8)]
    shown = [frame_index_of(f.image, range(400)) for f in frames]
    assert shown == sorted(set(shown)), "a live source never repeats or goes back"
    assert all(b > a for a, b in zip([f.timestamp_s for f in frames],
                                     [f.timestamp_s for f in frames][1:]))
    for frame, i in zip(frames, shown):
        assert np.hypot(*np.subtract(measure_disc(frame.image), disc_centre_px(i))) < \
            CENTRE_TOLERANCE_PX


def test_a_slow_reader_gets_the_newest_frame_not_a_stale_one() -> None:
    """A consumer busy for many frame times gets the last frame sent, never the next in a queue.

    The stream stops after a known last frame, so the newest frame is known exactly and the
    check does not depend on how the machine schedules the server and the grabber threads.
    """
    last = 29
    with MjpegServer(render_frame, fps=50, max_frames=last + 1) as server, \
            open_source(server.stream_url) as source:
        first = frame_index_of(source.read().image, range(400))
        deadline = time.monotonic() + 10.0
        while server.frames_sent <= last and time.monotonic() < deadline:
            time.sleep(0.02)
        assert server.frames_sent == last + 1, "the server did not send its frames in 10 s"
        time.sleep(0.5)  # the slow consumer is still busy; the grabber keeps only the newest
        late = frame_index_of(source.read().image, range(400))
    assert first < last
    assert late == last, f"got frame {late} after frame {first}; the newest was {last}"


def test_dropped_stream_is_lost() -> None:
    with MjpegServer(render_frame, fps=50, drop_after_n=4) as server:
        source = open_source(server.stream_url, read_timeout_s=2)
        with pytest.raises(SourceLostError, match="video.mjpg"):
            for _ in range(20):
                source.read()
        source.close()


def test_resilient_source_reconnects_after_drops_and_outages() -> None:
    states: list[tuple[str, str]] = []
    with MjpegServer(render_frame, fps=50, drop_after_n=5) as server:
        outage_sleeps: list[float] = []

        def sleep(seconds: float) -> None:
            if not server.serving:
                outage_sleeps.append(seconds)
                if len(outage_sleeps) == 3:
                    server.resume_serving()  # the phone app comes back

        source = ResilientSource(
            lambda: open_source(server.stream_url, open_timeout_s=2, read_timeout_s=2),
            on_state=lambda s, d: states.append((s, d)),
            sleep=sleep,
        )
        got = [source.read() for _ in range(7)]  # the stream drops after 5: one reconnect
        assert source.stats()["reconnects"] == 1
        server.drop_after_n = None
        server.stop_serving()  # the phone app closes: the stream ends, reopening fails (503)
        got += [source.read() for _ in range(3)]
        source.close()
    stats = source.stats()
    assert stats["frames"] == 10
    assert [f.index for f in got] == list(range(10))
    assert stats["reconnects"] == 2
    assert stats["failed_opens"] == 2
    # lost while reading: wait the first backoff; then each failed open backs off further
    assert outage_sleeps == [0.5, 0.5, 1.0]
    assert [s for s, _ in states] == ["ok", "lost", "ok", "lost", "ok", "closed"]
    assert "cannot open" in stats["last_error"]  # the last failure, kept for the page


def test_video_file_on_a_web_server_is_finite(tmp_path: Path) -> None:
    path = tmp_path / "match.avi"
    write_avi(path, 12, 10.0)
    with MjpegServer(render_frame, files={"match.avi": path}) as server:
        source = open_source(server.file_url("match.avi"))
        frames = []
        with pytest.raises(EndOfStream):
            while True:
                frames.append(source.read())
        source.close()
    assert len(frames) == 12
    for i, frame in enumerate(frames):
        assert np.hypot(*np.subtract(measure_disc(frame.image), disc_centre_px(i))) < \
            CENTRE_TOLERANCE_PX


def test_nothing_listening_is_unavailable_quickly() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    start = time.monotonic()
    with pytest.raises(SourceUnavailableError, match=f"127.0.0.1:{port}"):
        open_source(f"http://127.0.0.1:{port}/video.mjpg", open_timeout_s=2)
    assert time.monotonic() - start < 5
