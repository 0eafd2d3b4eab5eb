"""ScriptedTable: a FrameSource that plays scripted steps with ground truth in the frame meta."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hardware.errors import CorruptFrameError, EndOfStream
from hardware.sim import RenderOptions, SimDisc, look_at_board, random_discs
from hardware.sim.script import Bump, Drop, HandPlace, HandRemove, Relight, ScriptedTable, Still
from hardware.sim.variety import Variety
from hardware.source import FrameSource

SIZE = (480, 360)
OPTS = RenderOptions(supersample=1, jpeg_quality=None)


def _table(script, game="dition", **kw) -> ScriptedTable:
    cam = look_at_board(game, image_size=SIZE, tilt_deg=5.0)
    return ScriptedTable(script, cam, np.random.default_rng(0), options=OPTS, **kw)


def _read_all(table: ScriptedTable) -> list:
    out = []
    while True:
        try:
            out.append(table.read())
        except CorruptFrameError as exc:
            out.append(exc)
        except EndOfStream:
            return out


def test_plays_a_placement_with_truth_labels_and_errors() -> None:
    a = (SimDisc(5.0, 5.0, "black"),)
    b = a + (SimDisc(12.0, 14.0, "white"),)
    script = [
        Still(a, 3, label="start"),
        HandPlace(None, b, (12.0, 14.0), 10, label={"move": 1}),
        Drop(2, label="glitch"),
        Still(None, 2, label="after"),
    ]
    table = _table(script, fps=4.0)
    assert isinstance(table, FrameSource) and len(table) == 3 + 10 + 2 + 2
    frames = _read_all(table)
    assert len(frames) == 17
    errors = [f for f in frames if isinstance(f, Exception)]
    assert len(errors) == 2 and all(isinstance(e, CorruptFrameError) for e in errors)
    good = [f for f in frames if not isinstance(f, Exception)]
    assert [f.index for f in good] == [i for i in range(17) if i not in (13, 14)]
    assert all(abs(f.timestamp_s - f.index / 4.0) < 1e-12 for f in good)
    labels = [f.meta["label"] for f in good]
    assert (
        labels[:3] == ["start"] * 3
        and labels[3:13] == [{"move": 1}] * 10
        and labels[13:] == ["after"] * 2
    )
    phases = [f.meta["phase"] for f in good[3:13]]
    assert phases[0] == "enter" and phases[-1] == "leave" and "over" in phases
    counts = [len(f.meta["truth"]["discs"]) for f in good]
    hands = [f.meta["truth"]["hand"] for f in good]
    assert counts[:3] == [1, 1, 1] and counts[-2:] == [2, 2]
    # the new disc appears only while the hand is over the board, never in a hand-free frame
    first_two = counts.index(2)
    assert hands[first_two] and good[first_two].meta["phase"] == "over"
    assert hands[3:13] == [True] * 10 and not any(hands[:3] + hands[13:])
    with pytest.raises(EndOfStream):
        table.read()


def test_still_frames_flicker_and_differ_only_by_noise_and_light() -> None:
    table = _table([Still((SimDisc(10.0, 10.0, "white"),), 4)], flicker=0.02)
    imgs = [f.image.astype(float) for f in table]
    assert len(imgs) == 4
    means = [im.mean() for im in imgs]
    assert max(means) - min(means) > 0.05  # not identical
    diff = np.abs(imgs[0] - imgs[1])
    assert diff.mean() < 12  # same scene


def test_hand_remove_visits_targets_in_turn() -> None:
    before = {"d4": "GR", "e5": "R", "c6": "G"}
    after = {"d4": "GR"}
    table = _table([HandRemove(before, after, ["e5", "c6"], 14)], game="domination")
    frames = list(table)
    stacks = [f.meta["truth"]["stacks"] for f in frames]
    assert stacks[0] == before and stacks[-1] == after
    seen = []
    for s in stacks:
        if not seen or seen[-1] != s:
            seen.append(s)
    # e5 goes first (first target), then c6
    assert seen == [before, {"d4": "GR", "c6": "G"}, after]


def test_bump_changes_the_camera_from_then_on() -> None:
    cam2 = look_at_board("dition", image_size=SIZE, tilt_deg=7.0, rotation_deg=2.0)
    a = (SimDisc(4.0, 4.0, "black"),)
    table = _table([Still(a, 2), Bump(cam2, label="bump"), Still(None, 2)])
    frames = list(table)
    assert len(frames) == 4
    c0 = np.array(frames[0].meta["truth"]["corners_px"])
    c3 = np.array(frames[3].meta["truth"]["corners_px"])
    assert np.abs(c0 - c3).max() > 1.0
    assert np.allclose(
        c3, cam2.project(np.array([[0, 0, 0], [20, 0, 0], [20, 20, 0], [0, 20, 0]], float))
    )


def test_a_varied_table_and_a_lamp_switched_on_from_then_on() -> None:
    """`variety` puts the match on a felt board (light lines, no markers); `Relight` switches the
    lamp on from the next frame on (brighter), the board staying felt."""
    a = (SimDisc(4.0, 4.0, "black"),)
    felt = Variety(board="green_felt")
    table = _table([Still(a, 2), Relight(variety=Variety(board="green_felt", light="lamp")), Still(None, 2)],
                   variety=felt, flicker=0.0)
    frames = list(table)
    assert len(frames) == 4
    assert [f.meta["truth"]["variety"]["light"] for f in frames] == ["room", "room", "lamp", "lamp"]
    # felt is green: the board's middle is greener than red or blue, before and after
    u, v = (np.array(frames[0].meta["truth"]["corners_px"]).mean(axis=0)).astype(int)
    for f in frames:
        b, g, r = f.image[v - 5 : v + 5, u - 5 : u + 5].reshape(-1, 3).mean(axis=0)
        assert g > 1.5 * max(b, r)
    mean = [float(f.image.mean()) for f in frames]
    assert min(mean[2:]) > max(mean[:2]) + 3  # the lamp is on
    with pytest.raises(ValueError, match="Dition"):
        _table([Still({"d4": "G"}, 1)], game="domination", variety=felt)


def test_context_manager_and_closing() -> None:
    with _table([Still((), 3)]) as table:
        table.read()
    with pytest.raises(EndOfStream):
        table.read()


def test_bad_scripts_are_refused_with_clear_errors() -> None:
    with pytest.raises(ValueError, match="game"):
        _table([Drop(1)])
    with pytest.raises(ValueError, match="at least 3 frames"):
        _table([HandPlace((), (SimDisc(1.0, 1.0, "black"),), (1.0, 1.0), 2)])
    with pytest.raises(ValueError, match="different games"):
        _table([HandPlace((), {"d4": "G"}, (1.0, 1.0), 5)])
    with pytest.raises(ValueError, match="bad cell"):
        _table([HandPlace({}, {"d4": "G"}, "z9", 5)], game="domination")
    with pytest.raises(ValueError, match="image size"):
        _table([Still((), 1), Bump(look_at_board("dition", image_size=(640, 480)))])
    with pytest.raises(TypeError, match="unknown script step"):
        _table([Still((), 1), "jump"])  # type: ignore[list-item]


@given(
    seed=st.integers(0, 10_000),
    n_before=st.integers(1, 8),
    n_gone=st.integers(1, 4),
    n_targets=st.integers(1, 3),
    frames=st.integers(3, 12),
)
@settings(max_examples=15, deadline=None)
def test_removals_only_ever_shrink_the_board(
    seed: int, n_before: int, n_gone: int, n_targets: int, frames: int
) -> None:
    """Whatever the script, a HandRemove plays states between `before` and `after`, pieces only
    leave while the hand is over the board, and the table yields exactly the scripted frames."""
    rng = np.random.default_rng(seed)
    before = random_discs(rng, n_before)
    gone = before[: min(n_gone, n_before)]
    after = tuple(d for d in before if d not in gone)
    targets = [(d.x, d.y) for d in gone][:n_targets] or [(10.0, 10.0)]
    cam = look_at_board("dition", image_size=(64, 48))
    table = ScriptedTable(
        [Still(before, 1), HandRemove(None, after, targets, frames), Still(None, 1)],
        cam,
        rng,
        options=RenderOptions(supersample=1, jpeg_quality=None),
    )
    frames_seen = list(table)
    assert len(frames_seen) == len(table) == 2 + frames
    sets = [{(d["x"], d["y"]) for d in f.meta["truth"]["discs"]} for f in frames_seen]
    full, final = {(d.x, d.y) for d in before}, {(d.x, d.y) for d in after}
    assert sets[0] == full and sets[-1] == final
    for a, b, f in zip(sets, sets[1:], frames_seen[1:]):
        assert final <= b <= a <= full
        if b != a:
            assert f.meta["truth"]["hand"]
