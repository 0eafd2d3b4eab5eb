"""The picture's overlay: the verdict is written over the frame whole (issue 17: long verdicts
ran off the right edge of the snapshots the replay shows)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from referee.overlay import ROLE_BGR, draw_overlay
from vision.resize import shrink

LONG = ("The board does not match the diagram: put back the black disc shown as an orange ghost, "
        "near the top-left corner; take away the white disc ringed in orange, by the right edge.")


def _referee(text: str) -> SimpleNamespace:
    match = SimpleNamespace(instruction={"kind": "warning", "text": text, "highlight": []})
    return SimpleNamespace(board=None, game="dition", last_reading=None, match=match, hand=False)


def test_a_long_verdict_is_wrapped_inside_the_picture() -> None:
    frame = np.zeros((480, 640, 3), np.uint8)
    out = draw_overlay(frame, _referee(LONG))
    bright = out.max(axis=2) > 128  # the white letters (the band behind them is dark grey)
    rows = np.flatnonzero(bright.any(axis=1))
    assert rows.size and not bright[:, -6:].any(), "text runs off the right edge"
    # ~170 characters at this size need several lines: the text is at least twice as tall as
    # one line with ascenders and descenders (lines may touch: OpenCV 4.x draws a bolder font)
    one = draw_overlay(np.zeros((480, 640, 3), np.uint8), _referee("Tipping by quay"))
    one_rows = np.flatnonzero((one.max(axis=2) > 128).any(axis=1))
    assert rows.max() - rows.min() >= 2 * (one_rows.max() - one_rows.min())
    assert rows.max() < 480 // 2


def test_a_short_verdict_stays_on_one_line() -> None:
    out = draw_overlay(np.zeros((480, 640, 3), np.uint8), _referee("Black to move"))
    rows = np.flatnonzero((out.max(axis=2) > 128).any(axis=1))
    assert rows.size and rows.max() - rows.min() < 30


def test_the_rings_on_the_picture_have_the_diagrams_colours() -> None:
    """The verdicts say "ringed in yellow" for a borderline disc, as the diagram draws it."""
    b, g, r = ROLE_BGR["borderline"]
    assert r > 200 and g > 150 and b < 80  # yellow, not blue
    assert ROLE_BGR["wrong"] == ROLE_BGR["missing"]  # both orange


def test_the_page_picture_is_shrunk_without_aliasing() -> None:
    """`shrink` (halvings, then bilinear) against the known answer: 1-px black/white stripes
    average to mid grey at any smaller size (one bilinear pass straight to 640 px would sample
    a few columns of 2304 and show bands), a smooth ramp keeps its values, odd sizes too."""
    stripes = np.zeros((1297, 2305, 3), np.uint8)
    stripes[:, ::2] = 255  # 1-px columns: mean 127.6
    out = shrink(stripes, 640)
    assert out.shape[1] == 640 and abs(out.shape[0] - 1297 * 640 / 2305) <= 2
    assert abs(float(out.mean()) - 127.5) < 3 and int(out.max()) - int(out.min()) <= 8
    ramp = np.tile(np.linspace(0, 255, 2304).astype(np.uint8), (1296, 1))
    ramp = np.dstack([ramp] * 3)
    small = shrink(ramp, 500)
    truth = np.linspace(0, 255, 500)  # the ramp's value at each shown column's centre
    assert np.abs(small[small.shape[0] // 2, 5:-5, 0] - truth[5:-5]).max() < 3
    assert shrink(ramp, 4000) is ramp and shrink(ramp, 2304) is ramp


def test_a_verdicts_snapshot_is_stored_halved_to_at_most_1280_px(tmp_path) -> None:
    """The snapshot behind a verdict is the overlay on the frame halved until at most
    `snapshot_max_width` (1280) wide, its aspect kept, with the verdict's text on it (a
    full-size one cost 14 ms of CPU per verdict)."""
    import cv2

    from referee.dition_match import DitionMatch
    from referee.log import MatchLog
    from referee.loop import Referee

    log = MatchLog(tmp_path / "log.sqlite")
    match = DitionMatch()
    mid = log.new_match(match.game, match.players)
    referee = Referee(match, log, mid)
    referee.last_frame = np.zeros((1296, 2304, 3), np.uint8)
    (event,) = referee.emit([{"type": "warning", "text": "Check the board"}])
    image = cv2.imdecode(np.frombuffer(log.snapshot(mid, event["seq"]), np.uint8),
                         cv2.IMREAD_COLOR)
    assert image.shape[:2] == (648, 1152)
    assert (image[:60].max(axis=2) > 128).any(), "the verdict's text is on the snapshot"
    small = Referee(match, log, mid)
    small.last_frame = np.zeros((480, 640, 3), np.uint8)  # never enlarged
    (event,) = small.emit([{"type": "warning", "text": "Check the board"}])
    image = cv2.imdecode(np.frombuffer(log.snapshot(mid, event["seq"]), np.uint8),
                         cv2.IMREAD_COLOR)
    assert image.shape[:2] == (480, 640)
    log.close()


def test_halving_to_a_width_keeps_the_pixel_means() -> None:
    """`halve_to`: halved until at most the width asked, each pixel the mean of the block it
    covers (a known 4x4 block pattern), the factor returned; `halved_width` says where it ends."""
    from vision.resize import halve_to, halved_width

    blocks = np.kron(np.arange(12, dtype=np.uint8).reshape(3, 4) * 20, np.ones((4, 4), np.uint8))
    image = np.dstack([blocks] * 3)  # 12 x 16, each 4x4 block one value
    small, factor = halve_to(image, 5)
    assert factor == 4 and small.shape[:2] == (3, 4)
    assert np.array_equal(small[:, :, 0], np.arange(12).reshape(3, 4) * 20)
    assert halved_width(16, 5) == 4 and halved_width(2304, 1280) == 1152
    assert halve_to(image, 16)[1] == 1 and halved_width(640, 1280) == 640


def test_events_committed_together_share_one_snapshot(tmp_path) -> None:
    """A move and the end it brings (or two warnings) come from one frame with one state drawn
    on it: one overlay and JPEG for all of them (each was ~5 ms of CPU), every one of them with
    the snapshot."""
    from referee.dition_match import DitionMatch
    from referee.log import MatchLog
    from referee.loop import Referee

    log = MatchLog(tmp_path / "log.sqlite")
    match = DitionMatch()
    mid = log.new_match(match.game, match.players)
    referee = Referee(match, log, mid)
    referee.last_frame = np.zeros((1296, 2304, 3), np.uint8)
    made = []
    snapshot_jpeg = referee.snapshot_jpeg

    def counted() -> bytes | None:
        made.append(1)
        return snapshot_jpeg()

    referee.snapshot_jpeg = counted  # type: ignore[method-assign]
    events = referee.emit([{"type": "warning", "text": "Check the board"},
                           {"type": "info", "text": "not a verdict: no snapshot"},
                           {"type": "warning", "text": "Check it again"}])
    assert len(made) == 1
    shots = [log.snapshot(mid, e["seq"]) for e in events]
    assert shots[0] and shots[0] == shots[2] and not shots[1]
    referee.emit([{"type": "warning", "text": "A later frame"}])
    assert len(made) == 2  # a later call: a picture of its own
    log.close()


def test_the_page_picture_is_drawn_on_its_own_array_not_on_the_preview() -> None:
    """The overlay from a preview whose BGR was not asked for yet is drawn on an array of its
    own: the preview shows the clean frame afterwards, as it does when it was converted first."""
    import cv2

    from hardware.source import Preview

    bgr = np.full((360, 640, 3), 90, np.uint8)
    yuv = cv2.cvtColor(bgr, cv2.COLOR_BGR2YUV_I420)
    clean = Preview(yuv, (640, 360)).bgr().copy()
    for converted_first in (False, True):
        preview = Preview(yuv, (640, 360))
        if converted_first:
            preview.bgr()
        out = draw_overlay(np.zeros((1296, 2304, 3), np.uint8), _referee("Black to move"),
                           width=640, preview=preview)
        assert out.shape == (360, 640, 3) and (out.max(axis=2) > 200).any(), "text drawn"
        assert np.array_equal(preview.bgr(), clean), "drawn on the preview itself"
