"""vision.scene.SceneMonitor on sequences of the simulated table, with and without a hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hardware.sim import (
    HandPose,
    RenderOptions,
    SimDisc,
    random_camera,
    render_dition,
    render_domination,
)
from vision.board import find_board
from vision.camera import Intrinsics
from vision.scene import SceneMonitor, SceneParams


def _discs(rng: np.random.Generator, n: int) -> list[SimDisc]:
    pts: list[np.ndarray] = []
    while len(pts) < n:
        p = rng.uniform(0.5, 19.5, 2)
        if not pts or np.min(np.linalg.norm(np.array(pts) - p, axis=1)) >= 1.0:
            pts.append(p)
    return [SimDisc(float(x), float(y), "black" if i % 2 else "white") for i, (x, y) in enumerate(pts)]


def _setup(seed: int, game: str = "dition"):
    rng = np.random.default_rng(seed)
    cam = random_camera(rng, game)
    opts = RenderOptions.random(rng)
    k = Intrinsics(cam.camera_matrix, cam.dist_coeffs, cam.image_size)
    return rng, cam, opts, k


def _hand(rng: np.random.Generator, x: float, y: float) -> HandPose:
    # the arm reaches in from the nearest edge (players sit around the board)
    angle = math.degrees(math.atan2(y - 10.0, x - 10.0))
    return HandPose.random(rng, x, y, angle)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_still_board_settles_and_a_hand_unsettles_it(seed: int) -> None:
    rng, cam, opts, k = _setup(seed)
    discs = _discs(rng, 50)
    render = lambda i, hand=None: render_dition(
        discs, cam, np.random.default_rng([seed, i]), options=opts, hand=hand).image
    first = render_dition(discs, cam, rng, options=opts)
    board = find_board(first.image, corners_px=np.array(first.truth["corners_px"]), intrinsics=k)
    monitor = SceneMonitor(SceneParams(settle_frames=3), intrinsics=k)
    states = [monitor.update(render(i), board) for i in range(4)]
    # new sensor noise every frame is not motion; settled after 3 quiet frames
    assert [s.motion for s in states] == [False] * 4
    assert [s.hand_present for s in states] == [False] * 4
    assert [s.settled for s in states] == [False, False, True, True]
    x, y = rng.uniform(4, 16, 2)
    hand = _hand(rng, float(x), float(y))
    with_hand = monitor.update(render(10, hand), board)
    assert with_hand.hand_present and not with_hand.settled
    # the hand withdraws (that frame still changed), then settle_frames quiet frames
    after = [monitor.update(render(20 + i), board) for i in range(4)]
    assert after[0].motion
    assert [s.settled for s in after] == [False, False, False, True]


def test_a_disc_placed_between_frames_is_motion(rng: np.random.Generator) -> None:
    rng, cam, opts, k = _setup(7)
    discs = _discs(rng, 30)
    a = render_dition(discs, cam, np.random.default_rng(1), options=opts)
    b = render_dition(discs + [SimDisc(10.3, 10.4, "black")], cam, np.random.default_rng(2), options=opts)
    board = find_board(a.image, corners_px=np.array(a.truth["corners_px"]), intrinsics=k)
    monitor = SceneMonitor(intrinsics=k)
    assert not monitor.update(a.image, board).motion
    state = monitor.update(b.image, board)
    assert state.motion and not state.hand_present and not state.settled


def test_light_flicker_is_not_motion() -> None:
    rng, cam, opts, k = _setup(8)
    discs = _discs(rng, 40)
    board = None
    monitor = SceneMonitor(intrinsics=k)
    for i, gain in enumerate((1.0, 1.04, 0.96, 1.02, 0.97)):
        r = render_dition(discs, cam, np.random.default_rng([8, i]), options=opts, gain=gain)
        board = board or find_board(r.image, corners_px=np.array(r.truth["corners_px"]), intrinsics=k)
        state = monitor.update(r.image, board)
        assert not state.motion, f"flicker {gain} seen as motion ({state.motion_fraction:.4f})"
    assert state.settled


@pytest.mark.parametrize("seed", [4, 5, 6, 9, 10])
def test_hands_of_every_skin_tone_are_seen(seed: int) -> None:
    rng, cam, opts, k = _setup(seed)
    discs = _discs(rng, 40)
    x, y = rng.uniform(2, 18, 2)
    r = render_dition(discs, cam, rng, options=opts, hand=_hand(rng, float(x), float(y)))
    board = find_board(r.image, corners_px=np.array(r.truth["corners_px"]), intrinsics=k)
    state = SceneMonitor(intrinsics=k).update(r.image, board)
    assert state.hand_present, f"hand missed (skin {state.skin_fraction:.4f}, {r.truth['hand_pose']})"


def test_domination_pieces_are_not_skin() -> None:
    """Red and yellow stacks must not look like a hand."""
    rng, cam, opts, k = _setup(11, "domination")
    stacks = {"c3": "R", "d4": "YR", "e5": "RRY", "f6": "Y", "d5": "GB", "e4": "BGR", "c6": "YY"}
    r = render_domination(stacks, cam, rng, options=opts)
    board = find_board(r.image, game="domination", corners_px=np.array(r.truth["corners_px"]), intrinsics=k)
    monitor = SceneMonitor(intrinsics=k)
    state = monitor.update(r.image, board)
    assert not state.hand_present, f"skin fraction {state.skin_fraction:.4f}"
    x, y = 4.2, 3.7
    with_hand = render_domination(stacks, cam, rng, options=opts,
                                  hand=HandPose.random(rng, x, y, 90.0))
    assert monitor.update(with_hand.image, board).hand_present


@pytest.mark.parametrize("seed", [4, 5])
def test_a_hand_over_green_felt_is_a_hand(seed: int) -> None:
    """A board of green felt (light lines) says nothing of the light's colour: the skin test must
    not measure skin against it (the hand was never seen there, so a folder of photos read every
    frame with a hand in it)."""
    from hardware.sim.variety import Variety, render_varied

    rng, cam, opts, k = _setup(seed)
    discs = _discs(rng, 30)
    felt = Variety(board="green_felt")
    first = render_varied(discs, cam, np.random.default_rng(seed), felt, opts)
    board = find_board(first.image, corners_px=np.array(first.truth["corners_px"]), intrinsics=k)
    for light in ("room", "warm", "cool"):
        v = Variety(board="green_felt", light=light)
        empty = render_varied(discs, cam, np.random.default_rng(seed), v, opts).image
        x, y = rng.uniform(5, 15, 2)
        hand = render_varied(discs, cam, np.random.default_rng(seed), v, opts, hand=_hand(rng, x, y)).image
        assert not SceneMonitor(intrinsics=k).update(empty, board).hand_present, light
        assert SceneMonitor(intrinsics=k).update(hand, board).hand_present, light
