"""Rendered frames: ground truth, determinism, colours, hand occlusion, planar targets, errors."""

from __future__ import annotations

import json

import cv2
import numpy as np
import pytest

from calibration.intrinsics import charuco_offset_px
from hardware.sim import (
    HandPose,
    RenderOptions,
    SimDisc,
    camera_for_target,
    look_at_board,
    random_camera,
    render_dition,
    render_domination,
    render_planar_target,
)
from hardware.sim.layout import DOMINATION_COLOURS, board_corners, playable_cells

SIZE = (820, 616)


def _discs(rng: np.random.Generator, n: int) -> list[SimDisc]:
    out: list[SimDisc] = []
    while len(out) < n:
        x, y = rng.uniform(0.5, 19.5, 2)
        if all((x - d.x) ** 2 + (y - d.y) ** 2 >= 1.0 for d in out):
            out.append(SimDisc(float(x), float(y), ("black", "white")[len(out) % 2]))
    return out


def test_truth_is_json_and_matches_the_camera() -> None:
    rng = np.random.default_rng(1)
    cam = random_camera(rng, "dition", image_size=SIZE)
    discs = _discs(rng, 12)
    r = render_dition(discs, cam, rng, options=RenderOptions.random(rng))
    truth = json.loads(json.dumps(r.truth))
    assert truth["game"] == "dition" and truth["image_size"] == list(SIZE)
    assert r.image.shape == (SIZE[1], SIZE[0], 3) and r.image.dtype == np.uint8
    corners = cam.project(np.array([[x, y, 0.0] for x, y in board_corners("dition")]))
    assert np.allclose(truth["corners_px"], corners)
    assert [(d["x"], d["y"], d["colour"]) for d in truth["discs"]] == [
        (d.x, d.y, d.colour) for d in discs
    ]
    for d in truth["discs"]:
        base = cam.project(np.array([[d["x"], d["y"], 0.0]]))[0]
        assert np.allclose(d["base_px"], base)
        assert d["occluded"] is False
    assert truth["hand"] is False and truth["options"]["supersample"] >= 1
    again = type(cam).from_dict(truth["camera"])
    assert again == cam


def test_render_is_deterministic_from_the_seed() -> None:
    def frame(seed: int) -> np.ndarray:
        rng = np.random.default_rng(seed)
        cam = random_camera(rng, "dition", image_size=SIZE)
        opts = RenderOptions.random(rng)
        return render_dition(
            _discs(rng, 5), cam, rng, options=opts, hand=HandPose(10.0, 10.0, 80.0)
        ).image

    a, b, c = frame(7), frame(7), frame(8)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)


def test_noise_is_drawn_from_the_injected_generator() -> None:
    cam = look_at_board("dition", image_size=SIZE)
    opts = RenderOptions(noise_sigma=3.0, jpeg_quality=None)
    a = render_dition([], cam, np.random.default_rng(1), options=opts).image.astype(int)
    b = render_dition([], cam, np.random.default_rng(2), options=opts).image.astype(int)
    diff = a - b
    # two independent noise draws: difference std ~ sqrt(2) * sigma * brightness factor
    assert 2.0 < diff.std() < 10.0 and abs(diff.mean()) < 0.2
    clean = RenderOptions.clean()
    assert np.array_equal(
        render_dition([], cam, np.random.default_rng(1), options=clean).image,
        render_dition([], cam, np.random.default_rng(2), options=clean).image,
    )


def test_disc_faces_have_their_colours() -> None:
    rng = np.random.default_rng(3)
    cam = look_at_board("dition", image_size=SIZE, tilt_deg=10.0)
    discs = [SimDisc(6.0, 6.0, "black"), SimDisc(14.0, 6.0, "white"), SimDisc(10.0, 14.0, "black")]
    r = render_dition(discs, cam, rng, options=RenderOptions.clean())
    grey = r.image.astype(float).mean(axis=2)
    for d, t in zip(discs, r.truth["discs"]):
        # a point between the centre dot and the rim of the top face
        p = cam.project(np.array([[d.x + 0.32, d.y, -0.08]]))[0]
        level = grey[round(float(p[1])), round(float(p[0]))]
        assert (level < 60) if d.colour == "black" else (level > 215), (d, level)
        dot = np.array(t["centre_px"]).round().astype(int)
        assert 100 < grey[dot[1], dot[0]] < 160  # the grey centre dot


def test_domination_stacks_show_their_top_colour() -> None:
    rng = np.random.default_rng(4)
    cam = random_camera(rng, "domination", image_size=SIZE, distortion=False)
    cells = playable_cells()
    letters = "GRBY"
    stacks = {
        c: "".join(rng.choice(list(letters), size=int(rng.integers(1, 6)))) for c in cells[::3]
    }
    r = render_domination(stacks, cam, rng, options=RenderOptions.clean())
    json.dumps(r.truth)
    assert r.truth["stacks"] == stacks
    for cell, stack in stacks.items():
        x, y = np.round(r.truth["tops_px"][cell]).astype(int)
        got = r.image[y - 1 : y + 2, x - 1 : x + 2].reshape(-1, 3).mean(axis=0)
        want = np.array(DOMINATION_COLOURS[stack[-1]], float)
        assert np.abs(got - want).max() < 25, (cell, stack, got, want)


def test_custom_colours_and_errors() -> None:
    rng = np.random.default_rng(5)
    cam = look_at_board("domination", image_size=SIZE)
    r = render_domination(
        {"d4": "PQ"},
        cam,
        rng,
        colours={"P": (200, 0, 200), "Q": (0, 200, 200)},
        options=RenderOptions.clean(),
    )
    x, y = np.round(r.truth["tops_px"]["d4"]).astype(int)
    assert np.abs(r.image[y, x].astype(int) - [0, 200, 200]).max() < 20
    with pytest.raises(ValueError, match="a1"):
        render_domination({"a1": "G"}, cam, rng)  # a cut corner
    with pytest.raises(ValueError, match="0..5"):
        render_domination({"d4": "GGGGGG"}, cam, rng)
    with pytest.raises(ValueError, match="unknown colour"):
        render_domination({"d4": "GX"}, cam, rng)
    with pytest.raises(ValueError, match="'black' or 'white'"):
        SimDisc(1.0, 1.0, "red")
    with pytest.raises(ValueError, match="supersample"):
        RenderOptions(supersample=0)
    with pytest.raises(ValueError, match="unknown game"):
        look_at_board("chess")


def test_hand_covers_the_pieces_under_it() -> None:
    rng = np.random.default_rng(6)
    cam = look_at_board("dition", image_size=SIZE, tilt_deg=8.0)
    discs = [SimDisc(10.0, 10.0, "black"), SimDisc(3.0, 3.0, "white")]
    opts = RenderOptions.clean(shadow=0.3)
    bare = render_dition(discs, cam, rng, options=opts)
    pose = HandPose(10.0, 10.0, 90.0, height_mm=15.0)
    r = render_dition(discs, cam, rng, options=opts, hand=pose)
    assert r.truth["hand"] is True and r.truth["hand_pose"]["x"] == 10.0
    occluded = [d["occluded"] for d in r.truth["discs"]]
    assert occluded == [True, False]
    # the covered disc's centre now shows skin, the far disc is untouched
    c = np.round(r.truth["discs"][0]["centre_px"]).astype(int)
    got = r.image[c[1], c[0]].astype(float)
    skin = np.array(pose.skin_bgr, float)
    # shaded skin: the same chromaticity, any brightness
    assert np.abs(got / got.sum() - skin / skin.sum()).max() < 0.03, got
    far = np.round(r.truth["discs"][1]["centre_px"]).astype(int)
    assert np.array_equal(
        r.image[far[1] - 3 : far[1] + 4, far[0] - 3 : far[0] + 4],
        bare.image[far[1] - 3 : far[1] + 4, far[0] - 3 : far[0] + 4],
    )
    # the arm reaches from the fingertips towards +y (angle 90) and leaves the image there
    changed = np.abs(r.image.astype(int) - bare.image.astype(int)).max(axis=2) > 30
    rows = np.flatnonzero(changed.any(axis=1))
    assert rows.max() == SIZE[1] - 1
    x0, y0, x1, y1 = r.truth["hand_box_px"]
    assert y1 == SIZE[1] and x0 <= c[0] < x1 and y0 <= c[1] < y1
    assert bare.truth["hand_box_px"] is None


def test_random_options_are_valid_and_varied() -> None:
    rng = np.random.default_rng(9)
    many = [RenderOptions.random(rng) for _ in range(20)]
    assert len({o.noise_sigma for o in many}) == 20
    assert all(o.jpeg_quality is not None and 60 <= o.jpeg_quality <= 100 for o in many)
    assert all(abs(np.mean(o.colour_cast) - 1) < 1e-9 for o in many)


def test_planar_target_chessboard_corners_land_on_the_model() -> None:
    rng = np.random.default_rng(10)
    squares = (9, 7)
    px_per_square = 60
    board = np.kron(
        (np.indices(squares[::-1]).sum(axis=0) % 2), np.ones((px_per_square, px_per_square))
    )
    tex = np.full(
        (board.shape[0] + 2 * px_per_square, board.shape[1] + 2 * px_per_square), 255, np.uint8
    )
    tex[px_per_square:-px_per_square, px_per_square:-px_per_square] = (board * 255).astype(np.uint8)
    size_units = ((squares[0] + 2) * 1.0, (squares[1] + 2) * 1.0)  # 1 unit per square
    errs = []
    for _ in range(3):
        cam = camera_for_target(rng, size_units, SIZE, max_tilt_deg=35.0)
        img = render_planar_target(
            tex, size_units, cam, rng, options=RenderOptions.clean(supersample=3)
        )
        grey = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
        ok, corners = cv2.findChessboardCorners(grey, (squares[0] - 1, squares[1] - 1))
        assert ok
        corners = cv2.cornerSubPix(
            grey,
            corners,
            (5, 5),
            (-1, -1),
            (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, 50, 1e-4),
        ).reshape(-1, 2)
        inner = np.array(
            [[1 + i, 1 + j, 0.0] for j in range(1, squares[1]) for i in range(1, squares[0])]
        )
        model = cam.project(inner)
        # OpenCV may list the grid from either end: match each found corner to its nearest
        d = np.linalg.norm(corners[:, None, :] - model[None, :, :], axis=2)
        errs.append(d.min(axis=1).max())
    assert max(errs) < 0.15, errs


def test_camera_for_target_keeps_it_in_view() -> None:
    rng = np.random.default_rng(12)
    for _ in range(10):
        cam = camera_for_target(rng, (10.0, 7.0), SIZE, max_tilt_deg=40.0)
        px = cam.project(np.array([[0, 0, 0], [10, 0, 0], [10, 7, 0], [0, 7, 0]], float))
        assert np.all(px >= 0) and np.all(px[:, 0] < SIZE[0]) and np.all(px[:, 1] < SIZE[1])


def test_planar_charuco_target_is_detected_where_the_model_says() -> None:
    """What the calibration needs: a ChArUco sheet seen under varied poses and picture effects."""
    dictionary = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_5X5_100)
    board = cv2.aruco.CharucoBoard((9, 6), 1.0, 0.75, dictionary)
    tex = board.generateImage((900, 600), marginSize=0)
    detector = cv2.aruco.CharucoDetector(board)
    rng = np.random.default_rng(3)
    # exact picture: the detector's sub-pixel corners agree with the model; with noise, blur,
    # glare and JPEG the detector itself is the limit
    # (OpenCV 4.x refines corners less exactly: 0.24 px worst on the clean picture, 5.0 < 0.2)
    clean_tol_px = 0.2 if charuco_offset_px() == 0 else 0.3
    for opts, tol_px in ((RenderOptions.clean(), clean_tol_px), (RenderOptions.random(rng), 0.5)):
        cam = camera_for_target(rng, (9.0, 6.0), SIZE)
        img = render_planar_target(tex, (9.0, 6.0), cam, rng, options=opts)
        corners, ids, _, _ = detector.detectBoard(img)
        assert ids is not None and len(ids) >= 30
        model = cam.project(board.getChessboardCorners()[ids.ravel()])
        # OpenCV 4.x's detector is half a pixel off (calibration corrects it the same way)
        found = corners.reshape(-1, 2) - charuco_offset_px()
        err = np.linalg.norm(model - found, axis=1)
        assert err.max() < tol_px and err.mean() < tol_px / 2.5


def test_a_moving_hand_is_smeared_along_its_motion() -> None:
    rng = np.random.default_rng(13)
    cam = look_at_board("dition", image_size=SIZE)
    opts = RenderOptions.clean()
    still = render_dition([], cam, rng, options=opts, hand=HandPose(10.0, 10.0, 90.0))
    moving = render_dition(
        [], cam, rng, options=opts, hand=HandPose(10.0, 10.0, 90.0, blur_units=(1.5, 0.0))
    )
    empty = render_dition([], cam, rng, options=opts).image.astype(float)

    def coverage(img: np.ndarray) -> np.ndarray:
        return np.abs(img.astype(float) - empty).max(axis=2) > 8

    def soft_edge(img: np.ndarray) -> int:
        # pixels changed a little but not fully: the blurred rim of the hand
        d = np.abs(img.astype(float) - empty).max(axis=2)
        return int(((d > 8) & (d < 40)).sum())

    a, b = coverage(still.image), coverage(moving.image)
    cols_a, cols_b = np.flatnonzero(a.any(axis=0)), np.flatnonzero(b.any(axis=0))
    # smeared along x (board x = image x here) by about 1.5 units each way around its centre
    scale = np.linalg.norm(
        cam.project(np.array([[11.0, 10, 0]])) - cam.project(np.array([[10.0, 10, 0]]))
    )
    assert cols_b[0] < cols_a[0] - 0.4 * scale
    assert soft_edge(moving.image) > 2 * soft_edge(still.image)
    assert moving.truth["hand_pose"]["blur_units"] == [1.5, 0.0]
