"""The picture's overlay: the verdict is written over the frame whole (issue 17: long verdicts
ran off the right edge of the snapshots the replay shows)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from referee.overlay import ROLE_BGR, draw_overlay

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
