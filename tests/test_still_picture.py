"""A still board's picture is encoded once: the referee says when a frame may look different
(`Referee.picture_version`), the page's picture cache serves the last picture again until then
(`web.frames.FrameCache`, at most `STILL_MAX_AGE_S`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import cv2
import numpy as np

from referee.dition_match import DitionMatch
from referee.log import MatchLog
from referee.loop import Referee
from referee.simsteps import Pace
from referee.simtable import scripted_match
from web.frames import STILL_MAX_AGE_S, FrameCache


def _still_board() -> tuple[np.ndarray, Any]:
    table, _ = scripted_match("dition", 5, pace=Pace(still=2, hand=3, verdict=2), size=(960, 720))
    with table:
        return table.read().image, table.intrinsics


def test_the_picture_version_changes_only_when_the_board_does(tmp_path: Path) -> None:
    """The same rendered board under fresh sensor noise (sigma 2 grey levels, as a camera's)
    keeps its version once the board is found and read; a hand-sized skin-coloured blob over the board
    changes it, and so does the frame after (the hand gone), then it holds again."""
    still, intrinsics = _still_board()
    rng = np.random.default_rng(3)

    def noisy(image: np.ndarray) -> np.ndarray:
        return np.clip(image + rng.normal(0, 2, image.shape), 0, 255).astype(np.uint8)

    log = MatchLog(tmp_path / "log.sqlite")
    match = DitionMatch()
    referee = Referee(match, log, log.new_match(match.game, match.players), intrinsics=intrinsics)
    for _ in range(5):  # the board found, settled, read (its rings drawn: a new picture)
        referee.process(noisy(still))
    assert referee.board is not None and referee.last_reading is not None
    versions = []
    for _ in range(4):
        referee.process(noisy(still))
        versions.append(referee.picture_version)
    assert len(set(versions)) == 1, "only noise: the same picture"
    hand = noisy(still)
    h, w = hand.shape[:2]
    # a palm over the board's middle, in a skin tone (BGR), a sixth of the frame across
    cv2.ellipse(hand, (w // 2, h // 2), (w // 12, h // 9), 30, 0, 360, (120, 150, 205), -1)
    referee.process(hand)
    assert referee.picture_version != versions[-1], "a hand over the board"
    with_hand = referee.picture_version
    referee.process(noisy(still))
    assert referee.picture_version != with_hand, "the hand left"
    left = referee.picture_version
    referee.process(noisy(still))
    assert referee.picture_version == left
    log.close()


class _Keyed:
    """A service whose picture key the test sets; counts the encodes."""

    def __init__(self) -> None:
        self.key: Any = 1
        self.encodes = 0

    def picture_key(self) -> Any:
        return self.key

    def latest_jpeg(self, overlay: bool = True, max_width: int | None = None) -> bytes:
        self.encodes += 1
        return f"picture {self.encodes}".encode()


def test_a_still_boards_picture_is_served_again_until_it_changes() -> None:
    """Past `max_age_s`, the same key gets the same bytes (no encode) until `STILL_MAX_AGE_S`;
    a new key is encoded at once; the camera's own picture (`overlay=0`) is never kept longer
    than `max_age_s`."""
    now = [100.0]
    service = _Keyed()
    cache = FrameCache(max_age_s=0.2, clock=lambda: now[0])
    first = cache.get(service, overlay=True, width=640)
    now[0] += 0.35
    assert cache.get(service, overlay=True, width=640) is first
    assert service.encodes == 1
    service.key = 2  # something moved on the board, or the verdict changed
    changed = cache.get(service, overlay=True, width=640)
    assert changed is not first and service.encodes == 2
    now[0] += STILL_MAX_AGE_S + 0.01  # the room beyond the board is never older than that
    assert cache.get(service, overlay=True, width=640) is not changed
    raw = cache.get(service, overlay=False, width=640)
    now[0] += 0.35
    assert cache.get(service, overlay=False, width=640) is not raw
