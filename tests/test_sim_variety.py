"""The varied simulated table (hardware.sim.variety): the kit renders unchanged, every other choice
shows what it claims (measured on the frame, against the truth)."""

from __future__ import annotations

import math
import zlib

import numpy as np
import pytest

from hardware.sim import RenderOptions, SimDisc, look_at_board, render_dition
from hardware.sim.variety import EDGE_BOARDS, FACTORS, LINED_BOARDS, Variety, render_varied

CAM = look_at_board("dition", image_size=(640, 480), markers=True)
CLEAN = RenderOptions.clean(supersample=2)
DISCS = (SimDisc(6.0, 6.0, "white"), SimDisc(14.0, 6.0, "black"), SimDisc(6.0, 14.0, "white"))


def _px(x: float, y: float) -> tuple[int, int]:
    u, v = CAM.project(np.array([[x, y, 0.0]]))[0]
    return round(float(u)), round(float(v))


def _grey(img: np.ndarray, x: float, y: float) -> float:
    u, v = _px(x, y)
    return float(img[v - 1 : v + 2, u - 1 : u + 2].mean())


def test_the_kit_renders_exactly_as_render_dition() -> None:
    opts = RenderOptions.random(np.random.default_rng(4))
    a = render_dition(DISCS, CAM, np.random.default_rng(9), options=opts).image
    b = render_varied(DISCS, CAM, np.random.default_rng(9), Variety(), opts).image
    assert np.array_equal(a, b)


def test_an_unknown_choice_names_the_choices() -> None:
    with pytest.raises(ValueError, match="green_felt"):
        Variety(board="felt")
    with pytest.raises(ValueError, match="factors: board"):
        Variety.one("table", "oak")


@pytest.mark.parametrize("board", [b for b in LINED_BOARDS if b != "paper"])
def test_board_lines_have_the_stated_polarity(board: str) -> None:
    img = render_varied((), CAM, np.random.default_rng(1), Variety(board=board), CLEAN).image.mean(axis=2)
    # on the outer square's left line (x = 0) against the board 0.3 inside it, along the line
    on = np.mean([_grey(img, 0.0, y) for y in np.linspace(8.0, 12.0, 9)])
    off = np.mean([_grey(img, 0.3, y) for y in np.linspace(8.0, 12.0, 9)])
    polarity = "light" if on > off else "dark"
    assert polarity == LINED_BOARDS[board]
    assert abs(on - off) > 15  # a line a camera can see


@pytest.mark.parametrize("board", EDGE_BOARDS)
def test_boards_without_lines_end_at_the_playing_area(board: str) -> None:
    img = render_varied((), CAM, np.random.default_rng(1), Variety(board=board), CLEAN).image.astype(float)
    inside = np.array([img[_px(0.3, y)[1], _px(0.3, y)[0]] for y in np.linspace(2.0, 18.0, 17)])
    outside = np.array([img[_px(-0.3, y)[1], _px(-0.3, y)[0]] for y in np.linspace(2.0, 18.0, 17)])
    line = np.array([img[_px(3.0, y)[1], _px(3.0, y)[0]] for y in np.linspace(4.0, 16.0, 13)])
    # the board differs from the table at its edge, all along it
    assert np.linalg.norm(inside - outside, axis=1).min() > 40
    # and no square is drawn on it (the inner square's line is the board's own colour)
    assert np.linalg.norm(line - inside.mean(axis=0), axis=1).max() < 20
    assert set(EDGE_BOARDS) <= set(FACTORS["board"]) and not set(EDGE_BOARDS) & set(LINED_BOARDS)


def test_plain_discs_have_no_dot_and_dition_discs_do() -> None:
    for disc, has_dot in (("dition", True), ("plain", False), ("othello", False)):
        img = render_varied(DISCS, CAM, np.random.default_rng(1), Variety(disc=disc), CLEAN).image.mean(axis=2)
        centre, face = _grey(img, 6.0, 6.0), _grey(img, 6.3, 6.0)
        assert (face - centre > 40) is has_dot, disc


BIG = look_at_board("dition", image_size=(1640, 1232), markers=True)  # ~46 px a diameter


def _white_face(disc: str) -> tuple[np.ndarray, np.ndarray]:
    """Centroid (2,) and covariance (2, 2), in frame pixels, of the white disc at (6, 6)'s top
    face (its side is shaded darker, the paper is darker too), seen from above."""
    img = render_varied(DISCS, BIG, np.random.default_rng(1), Variety(disc=disc), CLEAN).image.mean(axis=2)
    u, v = BIG.project(np.array([[6.0, 6.0, 0.0]]))[0]
    s = int(np.linalg.norm(BIG.project(np.array([[7.0, 6.0, 0.0]]))[0] - (u, v)))
    y0, x0 = int(v) - s, int(u) - s
    ys, xs = np.nonzero(img[y0 : y0 + 2 * s, x0 : x0 + 2 * s] > 224)
    p = np.stack([xs + x0, ys + y0], axis=1).astype(float)
    return p.mean(axis=0), np.cov(p.T)


def test_off_round_pieces_are_longer_one_way_and_centred_on_their_position() -> None:
    # the direction the piece is longer along (the variety's own, from its position)
    a = (zlib.crc32(f"{6.0:.4f},{6.0:.4f}".encode()) % 360) * math.pi / 180
    c0, c1 = BIG.project(np.array([[6.0, 6.0, 0.0], [6.0 + math.cos(a), 6.0 + math.sin(a), 0.0]]))
    along = (c1 - c0) / np.linalg.norm(c1 - c0)
    across = np.array([-along[1], along[0]])
    plain_c, plain_cov = _white_face("plain")
    c, cov = _white_face("off_round")
    # 0.02 of a diameter longer along `along` (~1 px): its second moment along it grows by
    # ~6 px^2 more than across it (the round face's differ by the pixel grid's ~2)
    grown = (along @ cov @ along - across @ cov @ across) - (along @ plain_cov @ along - across @ plain_cov @ across)
    assert grown > 3.0
    # and its position is its outline's centre: the face's centroid is the round one's (within
    # 0.25 px = 0.005 diameters; a face printed 0.02 off its round base is 0.5 px off)
    assert np.linalg.norm(c - plain_c) < 0.25


def test_objects_lie_off_the_discs_and_the_truth_says_which_variety() -> None:
    r = render_varied(DISCS, CAM, np.random.default_rng(1), Variety(distractors="objects"), CLEAN)
    assert r.truth["variety"]["distractors"] == "objects"
    assert [d["colour"] for d in r.truth["discs"]] == ["white", "black", "white"]
    plain = render_varied(DISCS, CAM, np.random.default_rng(1), Variety(), CLEAN).image
    diff = np.abs(r.image.astype(int) - plain.astype(int)).max(axis=2) > 30
    # something was added, but not over the discs
    assert diff.sum() > 50
    for d in DISCS:
        u, v = _px(d.x, d.y)
        assert not diff[v - 3 : v + 4, u - 3 : u + 4].any()


# ---- a lamp (the glare and lamp choices): light added to the room's, its own shadows ----------

TALL = 0.3  # thick discs, so that the lamp's shadow beyond the rim is a dozen pixels wide


def _lamp_frame(discs: tuple[SimDisc, ...], foot: tuple[float, float], **changes: object) -> np.ndarray:
    """Grey frame (BIG camera, from above) with a lamp 5 units above board point `foot` whose
    pool (0.5 above the room's light at its centre) covers the whole board; dim enough to clip
    nowhere."""
    u, v = BIG.project(np.array([[foot[0], foot[1], 0.0]]))[0]
    w, h = BIG.image_size
    opts = CLEAN.replace(ambient=0.6, disc_thickness=TALL, hot_spot_xy=((u + 0.5) / w, (v + 0.5) / h),
                         hot_spot_strength=0.5, hot_spot_radius=1.0, lamp_height_units=5.0)
    opts = opts.replace(**changes)
    return render_varied(discs, BIG, np.random.default_rng(1), Variety(), opts).image.mean(axis=2)


def _big_grey(img: np.ndarray, x: float, y: float) -> float:
    u, v = BIG.project(np.array([[x, y, 0.0]]))[0]
    return float(img[round(v) - 1 : round(v) + 2, round(u) - 1 : round(u) + 2].mean())


def test_a_lamp_casts_the_discs_shadows_away_from_it() -> None:
    # a disc 4 units from the lamp's foot: its top's outline falls 0.3 x 4 / 4.7 = 0.26 further
    # out (the shadow from 0.5 to 0.76 from the centre, away from the lamp), its light missing
    # there wholly; on the lamp's side the board is lit
    disc = (SimDisc(10.0, 10.0, "white"),)
    lit = _lamp_frame(disc, (6.0, 10.0))
    room = _lamp_frame(disc, (6.0, 10.0), hot_spot_strength=0.0)
    shadow, towards = _big_grey(lit, 10.64, 10.0), _big_grey(lit, 9.36, 10.0)
    assert towards > _big_grey(room, 9.36, 10.0) + 25  # the lamp lights the board
    assert abs(shadow - _big_grey(room, 10.64, 10.0)) <= 3  # but not its shadow
    assert _big_grey(lit, 10.0, 10.64) > _big_grey(room, 10.0, 10.64) + 25  # nor beside it


def test_a_lamp_shines_into_the_rooms_soft_shadows() -> None:
    # the room's shadow lacks a share of the room's light; the lamp adds its own light there as
    # on the paper beside it (it is a second source, not a brighter room): the shadow stays as
    # many levels deep, where multiplying would deepen it by the pool's 1.5
    disc = (SimDisc(10.0, 10.0, "white"),)
    room_shadow = {"shadow": 0.5, "light_dir": (1.0, 0.0), "shadow_blur_units": 0.02}
    lamp = _lamp_frame(disc, (16.0, 10.0), **room_shadow)  # the lamp's shadow falls the other way
    room = _lamp_frame(disc, (16.0, 10.0), hot_spot_strength=0.0, **room_shadow)
    depth_lamp = _big_grey(lamp, 10.0, 13.0) - _big_grey(lamp, 10.62, 10.0)
    depth_room = _big_grey(room, 10.0, 13.0) - _big_grey(room, 10.62, 10.0)
    assert depth_room > 20
    assert _big_grey(lamp, 10.62, 10.0) > _big_grey(room, 10.62, 10.0) + 25
    assert abs(depth_lamp - depth_room) <= 3


def test_a_discs_side_turned_away_from_a_lamp_keeps_only_the_rooms_light() -> None:
    # seen from 30 degrees off the vertical, the side facing the camera (upper half: the face's
    # colour) is lit by a lamp on the camera's side of the disc and not by one behind it
    cam = look_at_board("dition", image_size=(1640, 1232), markers=True, tilt_deg=30)
    c = cam.centre_world
    n = np.array([c[0] - 10.0, c[1] - 10.0]) / math.hypot(c[0] - 10.0, c[1] - 10.0)
    disc = (SimDisc(10.0, 10.0, "white"),)

    def side(foot: np.ndarray, strength: float = 0.5) -> float:
        u, v = cam.project(np.array([[foot[0], foot[1], 0.0]]))[0]
        w, h = cam.image_size
        opts = CLEAN.replace(ambient=0.6, disc_thickness=TALL, hot_spot_xy=((u + 0.5) / w, (v + 0.5) / h),
                             hot_spot_strength=strength, hot_spot_radius=1.0, lamp_height_units=5.0)
        img = render_varied(disc, cam, np.random.default_rng(1), Variety(), opts).image.mean(axis=2)
        su, sv = cam.project(np.array([[10.0 + 0.5 * n[0], 10.0 + 0.5 * n[1], -0.22]]))[0]
        return float(img[round(sv) - 1 : round(sv) + 2, round(su)].mean())

    room = side(np.array([10.0, 10.0]), 0.0)
    assert side(10.0 + 4 * n) > room + 20
    assert abs(side(10.0 - 4 * n) - room) <= 4  # (the top face's anti-aliased rim above it is lit)


def test_a_lamps_glare_lies_where_the_faces_mirror_it_to_the_camera() -> None:
    # a flat glossy face mirrors the lamp to the camera at the board point between the lamp's
    # foot and the camera's that splits their distance as their heights: not under the lamp
    c = BIG.centre_world
    foot = np.array([2.0, 10.0])
    mirror = foot + (c[:2] - foot) * 5.0 / (5.0 + abs(c[2]))
    discs = (SimDisc(*foot, "black"), SimDisc(*mirror, "black"))
    img = _lamp_frame(discs, tuple(foot), hot_spot_strength=0.0, hot_spot_radius=0.04, glare=0.6)
    assert _big_grey(img, *mirror) > _big_grey(img, *foot) + 40
