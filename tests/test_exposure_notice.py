"""The page tells the players where the board is over-exposed (issue 21: the lamp's glare).

A lamp's hot spot that clips the paper at the sensor's white hides white discs there: `referee
detect` warned about it, the page did not. Now the referee looks when the board is found, when
hands leave it and with its periodic board check, says it once as a warning (logged with a
snapshot) in words a player can use, shows it on the page while it lasts, and says when it is gone.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from hardware.sim import RenderOptions, SimDisc, look_at_board, render_dition
from referee.log import MatchLog
from referee.loop import LoopSettings
from referee.service import RefereeService
from referee.simsteps import Pace
from referee.simtable import scripted_table

DISCS = [SimDisc(2.0, 3.0, "black"), SimDisc(10.5, 9.5, "white"), SimDisc(15.0, 16.0, "black")]


def _frames() -> tuple[np.ndarray, np.ndarray]:
    """The same table without and with a lamp's hot spot over the picture's top-left quarter."""
    cam = look_at_board("dition", image_size=(820, 616), tilt_deg=5, rotation_deg=2)
    plain = render_dition(DISCS, cam, np.random.default_rng(3), options=RenderOptions.clean()).image
    lamp = RenderOptions.clean(hot_spot_strength=0.8, hot_spot_radius=0.1, hot_spot_xy=(0.3, 0.3))
    hot = render_dition(DISCS, cam, np.random.default_rng(3), options=lamp).image
    # the hot spot clips the paper under it at the sensor's white in all three channels
    assert (hot.min(axis=2) == 255).sum() > 300 and (plain.min(axis=2) == 255).sum() == 0
    return plain, hot


def _service(tmp_path: Path) -> RefereeService:
    """A Dition referee whose frames the test feeds by hand (its own simulated table unused)."""
    return RefereeService(
        MatchLog(tmp_path / "db.sqlite"),
        lambda restart: scripted_table("dition", 4, pace=Pace(still=2, hand=3, verdict=5), size=(640, 480)),
        game="dition", source_spec="sim:dition:4")


def test_an_over_exposed_board_is_said_once_where_on_the_page_and_when_it_is_gone(tmp_path: Path) -> None:
    plain, hot = _frames()
    service = _service(tmp_path)
    ref = service.referee
    events: list[dict] = []
    with service._lock:  # frames fed by hand, without the frame thread
        for image in [plain] * 8:
            events += ref.process(image)
        assert ref.board is not None and service.state()["exposure"] is None
        assert not [e for e in events if e.get("code") == "overexposed"]
        for image in [hot] * 10:  # the lamp is switched on: the scene moves, then settles
            events += ref.process(image)
        state = service.state()
        for image in [plain] * 10:  # and off again
            events += ref.process(image)
        after = service.state()
    warned = [e for e in events if e.get("code") == "overexposed"]
    assert len(warned) == 1, [e.get("text") for e in events]
    text = warned[0]["text"]
    # in words, where the players see it (the picture's top-left), no coordinates
    assert "over-exposed" in text and "top-left" in text and "(board" not in text, text
    assert 0.0 < warned[0]["overexposed"]["share"] < 0.5
    assert state["exposure"] is not None and state["exposure"]["text"] == text
    # logged with a snapshot of the frame behind it
    logged = [e for e in service.log.events(ref.match_id) if e.type == "warning"]
    assert logged and logged[-1].payload.get("code") == "overexposed"
    assert service.log.snapshot(ref.match_id, logged[-1].seq) is not None
    # gone with the lamp
    assert after["exposure"] is None
    assert [e for e in events if e.get("code") == "exposure_ok"]


def test_a_single_check_without_the_glare_does_not_flap_the_notice(tmp_path: Path) -> None:
    """A light on the edge of clipping, or a sleeve's shadow over the hot spot for a moment: one
    check that finds no clipped patch between two that do neither ends the notice nor says it
    again; two checks in a row without it end it."""
    plain, hot = _frames()
    service = _service(tmp_path)
    ref = service.referee
    ref.settings = LoopSettings(refind_every=1)  # the board (and its exposure) checked every frame
    codes: list[list[str]] = []
    with service._lock:
        for block in ([plain] * 6, [hot] * 6, [plain], [hot] * 6, [plain] * 6):
            events = [e for image in block for e in ref.process(image)]
            codes.append([e["code"] for e in events if e.get("code") in ("overexposed", "exposure_ok")])
    assert codes == [[], ["overexposed"], [], [], ["exposure_ok"]], codes
