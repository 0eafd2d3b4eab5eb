"""The simulated camera's geometry against OpenCV's own camera model, and the rendered pixels
against the geometry (sub-pixel)."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hardware.sim import (
    RenderOptions,
    SimCamera,
    SimDisc,
    look_at_board,
    random_camera,
    render_dition,
    render_domination,
)
from hardware.sim.layout import MARKERS, board_corners
from hardware.sim.render import BLACK_FACE_BGR, DOT_BGR, WHITE_FACE_BGR
from hardware.sim.warp import image_to_plane, plane_maps
from vision.camera import undistort_iterated

SIZE = (820, 616)  # half the Pi v2 binned mode: fast, same geometry code


def _darkness_centroid(
    image: np.ndarray, centre: np.ndarray, radius: float, paper: float
) -> np.ndarray:
    grey = image.astype(np.float64).mean(axis=2)
    x0, y0 = (np.floor(centre - radius)).astype(int)
    x1, y1 = (np.ceil(centre + radius)).astype(int) + 1
    win = np.clip(paper - grey[y0:y1, x0:x1], 0, None)
    ys, xs = np.mgrid[y0:y1, x0:x1]
    return np.array([(win * xs).sum() / win.sum(), (win * ys).sum() / win.sum()])


def _polygon_centroid(px: np.ndarray) -> tuple[np.ndarray, float]:
    m = cv2.moments(px.astype(np.float32))
    return np.array([m["m10"] / m["m00"], m["m01"] / m["m00"]]), m["m00"]


@given(seed=st.integers(0, 10_000))
@settings(max_examples=25, deadline=None)
def test_distortion_round_trips_through_undistort_points(seed: int) -> None:
    rng = np.random.default_rng(seed)
    game = ("dition", "domination")[seed % 2]
    cam = random_camera(rng, game, image_size=SIZE)
    s = 20.0 if game == "dition" else 8.0
    pts = np.c_[rng.uniform(0, s, (50, 2)), -rng.uniform(0, 0.6, 50)]
    px = cam.project(pts)
    # what the pinhole camera (no distortion) sees, in normalised coordinates
    pc = cam.to_camera(pts)
    ideal = pc[:, :2] / pc[:, 2:]
    crit = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 50, 1e-14)
    und = undistort_iterated(px, cam.camera_matrix, cam.dist_coeffs, crit)
    err_px = np.abs(und.reshape(-1, 2) - ideal).max() * cam.camera_matrix[0, 0]
    assert err_px < 1e-3
    # and our own inverse (pixels -> table plane) on points lying on the table
    on_table = pts.copy()
    on_table[:, 2] = 0
    back = image_to_plane(cam, cam.project(on_table))
    assert np.abs(back - on_table[:, :2]).max() < 1e-6 * s


def test_project_matches_cv2_and_conventions() -> None:
    cam = look_at_board("dition", image_size=SIZE, height_units=30.0)
    # straight down, no roll: board x runs right, board y runs down the image
    c = cam.project(
        np.array([[10.0, 10.0, 0.0], [11.0, 10.0, 0.0], [10.0, 11.0, 0.0], [10, 10, -1.0]])
    )
    assert np.allclose(c[0], [(SIZE[0] - 1) / 2, (SIZE[1] - 1) / 2], atol=1e-9)
    assert c[1, 0] > c[0, 0] and abs(c[1, 1] - c[0, 1]) < 1e-9
    assert c[2, 1] > c[0, 1] and abs(c[2, 0] - c[0, 0]) < 1e-9
    # a point above the board (z = -1) is nearer the camera: same image point when straight below
    assert np.allclose(c[3], c[0])
    assert np.allclose(cam.centre_world, [10.0, 10.0, -30.0])
    # whole board in view, with the default margin
    corners = cam.project(np.array([[x, y, 0.0] for x, y in board_corners("dition")]))
    assert (
        np.all(corners >= 0) and np.all(corners[:, 0] < SIZE[0]) and np.all(corners[:, 1] < SIZE[1])
    )


def test_rotation_turns_the_board_in_the_image() -> None:
    cam = look_at_board("domination", image_size=SIZE, rotation_deg=90.0)
    a, b = cam.project(np.array([[4.0, 4.0, 0.0], [5.0, 4.0, 0.0]]))
    d = b - a
    # rolling the camera by +90 degrees makes board +x point up the image
    assert abs(d[0]) < 1e-6 and d[1] < 0


def test_camera_round_trips_through_dict() -> None:
    cam = random_camera(np.random.default_rng(3), "dition")
    again = SimCamera.from_dict(cam.to_dict())
    assert again == cam and hash(again) == hash(cam)
    with pytest.raises(ValueError, match="missing keys"):
        SimCamera.from_dict({"rvec": [0, 0, 0]})
    with pytest.raises(ValueError, match="dist_coeffs"):
        SimCamera(np.eye(3), np.zeros(4), np.zeros(3), np.ones(3), SIZE)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_camera_frames_board_and_markers(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for game in ("dition", "domination"):
        cam = random_camera(rng, game, image_size=SIZE, max_tilt_deg=15.0)
        _, side, centres = MARKERS[game]
        pts = [(x, y) for x, y in board_corners(game)]
        pts += [
            (cx + dx * side / 2, cy + dy * side / 2)
            for cx, cy in centres
            for dx in (-1, 1)
            for dy in (-1, 1)
        ]
        px = cam.project(np.array([[x, y, 0.0] for x, y in pts]))
        assert np.all(px >= 0) and np.all(px[:, 0] < SIZE[0]) and np.all(px[:, 1] < SIZE[1])
        # and the board is not tiny: its diagonal spans a good part of the image
        c = px[:4]
        assert np.linalg.norm(c[2] - c[0]) > 0.5 * min(SIZE)


def test_plane_maps_agree_with_projection() -> None:
    cam = random_camera(np.random.default_rng(11), "dition", image_size=SIZE)
    mx, my = plane_maps(cam)
    rng = np.random.default_rng(0)
    pts = np.c_[rng.uniform(0, 20, (200, 2)), np.zeros(200)]
    px = cam.project(pts)
    xi, yi = np.round(px).astype(int).T
    # the map at the nearest pixel centre sees the point within the local scale of that rounding
    back = np.c_[mx[yi, xi], my[yi, xi]]
    exact = image_to_plane(cam, np.c_[xi, yi].astype(float))
    # in pixels: board-unit error times the local scale (px per unit) at each point
    scale = np.linalg.norm(cam.project(pts + [0.01, 0, 0]) - px, axis=1) / 0.01
    assert (np.linalg.norm(back - exact, axis=1) * scale).max() < 0.015


@pytest.mark.parametrize("seed", [5, 6])
@pytest.mark.parametrize("colour", ["black", "white"])
def test_rendered_disc_centre_matches_the_camera_model(seed: int, colour: str) -> None:
    """Image moments of a clean, thin disc land on the centroid of its projected outline."""
    rng = np.random.default_rng(seed)
    cam = random_camera(rng, "dition", image_size=SIZE, max_tilt_deg=15.0)
    opts = RenderOptions.clean(markers=False, disc_thickness=0.002, supersample=3)
    empty = render_dition([], cam, rng, options=opts).image.astype(np.float64).mean(axis=2)
    face_level = float(np.mean(WHITE_FACE_BGR if colour == "white" else BLACK_FACE_BGR))
    dot_level = float(np.mean(DOT_BGR))
    ring = np.linspace(0, 2 * math.pi, 721)
    for _ in range(3):
        # away from the printed lines (x or y = 3, 17), which a disc would hide
        x, y = rng.uniform(3.7, 16.3, 2)
        r = render_dition([SimDisc(x, y, colour)], cam, rng, options=opts)
        signal = r.image.astype(np.float64).mean(axis=2) - empty  # linear in coverage
        face = cam.project(
            np.c_[x + 0.5 * np.cos(ring), y + 0.5 * np.sin(ring), np.full(721, -0.002)]
        )
        dot = cam.project(
            np.c_[x + 0.125 * np.cos(ring), y + 0.125 * np.sin(ring), np.full(721, -0.002)]
        )
        cf, af = _polygon_centroid(face)
        cd, ad = _polygon_centroid(dot)
        paper = float(
            np.median(empty[int(cf[1]) - 3 : int(cf[1]) + 4, int(cf[0]) - 3 : int(cf[0]) + 4])
        )
        s_face, s_dot = face_level - paper, dot_level - paper
        # expected: signal-weighted centroid of the face ring and the dot, each a projected circle
        expected = (s_face * (af * cf - ad * cd) + s_dot * ad * cd) / (
            s_face * (af - ad) + s_dot * ad
        )
        rad = math.sqrt(af / math.pi) + 3
        x0, y0 = np.floor(cf - rad).astype(int)
        x1, y1 = np.ceil(cf + rad).astype(int) + 1
        win = signal[y0:y1, x0:x1]
        ys, xs = np.mgrid[y0:y1, x0:x1]
        got = np.array([(win * xs).sum() / win.sum(), (win * ys).sum() / win.sum()])
        # a white face has little contrast on paper (about 20 grey levels), so the 8-bit rounding
        # of its anti-aliased edge weighs more
        tol_px, tol_size = (0.06, 0.01) if colour == "black" else (0.1, 0.03)
        assert np.linalg.norm(got - expected) < tol_px, (got, expected)
        # total signal = face and dot areas: the rendered disc has the right size
        assert abs(win.sum() / (s_face * (af - ad) + s_dot * ad) - 1.0) < tol_size
        # the truth's centre_px is the projected centre of the top face
        assert np.allclose(
            r.truth["discs"][0]["centre_px"], cam.project(np.array([[x, y, -0.002]]))[0]
        )


def _line_offsets_px(
    grey: np.ndarray, cam: SimCamera, segments, samples=(0.2, 0.35, 0.5, 0.65, 0.8)
):
    """Signed distance (px) of the printed line's ink centroid from where the camera model puts
    the line, at points along each board segment: a 2D window of pixel centres around the
    predicted line (no interpolation of the image), weighted by ink darkness."""
    out = []
    for (ax, ay), (bx, by) in segments:
        for t in samples:
            p = np.array([ax + t * (bx - ax), ay + t * (by - ay)])
            tan_b = np.array([bx - ax, by - ay], float) / math.hypot(bx - ax, by - ay)
            on, fwd = cam.project(np.array([[*p, 0.0], [*(p + 0.2 * tan_b), 0.0]]))
            tan = (fwd - on) / np.linalg.norm(fwd - on)
            nrm = np.array([-tan[1], tan[0]])
            x0, y0 = np.floor(on - 12).astype(int)
            ys, xs = np.mgrid[y0 : y0 + 25, x0 : x0 + 25]
            rel = np.stack([xs - on[0], ys - on[1]], -1)
            along, across = rel @ tan, rel @ nrm
            win = grey[y0 : y0 + 25, x0 : x0 + 25]
            paper = np.median(win[(np.abs(across) > 4) & (np.abs(across) < 8)])
            keep = (np.abs(along) < 8) & (np.abs(across) < 4)
            ink = np.clip(paper - win, 0, None) * keep
            out.append(float((ink * across).sum() / ink.sum()))
    return np.array(out)


OUTER = [((0, 0), (20, 0)), ((20, 0), (20, 20)), ((20, 20), (0, 20)), ((0, 20), (0, 0))]
INNER = [((3, 3), (17, 3)), ((17, 3), (17, 17)), ((17, 17), (3, 17)), ((3, 17), (3, 3))]


@pytest.mark.parametrize("distorted", [False, True])
def test_printed_lines_land_where_the_model_says(distorted: bool) -> None:
    """The centre of the outer and inner squares' lines, measured across them along each edge,
    lies on the projected edge (lines are centred on the square's edge, INTERFACES.md)."""
    dist = np.array([-0.18, 0.06, 0.001, -0.001, 0.0]) if distorted else None
    cam = look_at_board(
        "dition",
        image_size=SIZE,
        tilt_deg=12.0,
        rotation_deg=20.0,
        tilt_azimuth_deg=60.0,
        distortion=dist,
        margin=0.1,
    )
    rng = np.random.default_rng(0)
    r = render_dition([], cam, rng, options=RenderOptions.clean(markers=False, supersample=3))
    grey = r.image.astype(np.float64).mean(axis=2)
    offsets = _line_offsets_px(grey, cam, OUTER + INNER)
    assert np.abs(offsets).max() < 0.05, offsets.round(3)
    # the test can see a shift: the same board drawn 0.1 px off is caught
    shifted = np.roll(grey, 1, axis=1) * 0.1 + grey * 0.9
    assert np.abs(_line_offsets_px(shifted, cam, OUTER + INNER)).max() > 0.05


def test_markers_are_found_by_opencv_where_the_layout_says() -> None:
    rng = np.random.default_rng(4)
    for game in ("dition", "domination"):
        cam = random_camera(rng, game, image_size=(1640, 1232), max_tilt_deg=12.0)
        r = render_dition([], cam, rng) if game == "dition" else render_domination({}, cam, rng)
        params = cv2.aruco.DetectorParameters()
        params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
        det = cv2.aruco.ArucoDetector(
            cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50), params
        )
        corners, ids, _ = det.detectMarkers(r.image)
        ids_expected, side, centres = MARKERS[game]
        assert ids is not None and sorted(ids.ravel().tolist()) == sorted(ids_expected)
        for c, i in zip(corners, ids.ravel()):
            cx, cy = centres[ids_expected.index(int(i))]
            h = side / 2
            # marker corners: its own top-left at the smallest (x, y), then clockwise
            world = np.array(
                [[cx - h, cy - h, 0], [cx + h, cy - h, 0], [cx + h, cy + h, 0], [cx - h, cy + h, 0]]
            )
            assert np.abs(c.reshape(4, 2) - cam.project(world)).max() < 0.5


def test_domination_tops_are_the_top_face_centres() -> None:
    rng = np.random.default_rng(8)
    cam = look_at_board("domination", image_size=SIZE, tilt_deg=14.0, tilt_azimuth_deg=45.0)
    stacks = {"d4": "GRGRG", "e5": "R", "c6": "BY"}
    r = render_domination(stacks, cam, rng, options=RenderOptions.clean())
    tops = r.truth["tops_px"]
    for cell, stack in stacks.items():
        bx, by = r.truth["tops_board"][cell]
        # the top face is the stack's height up (z = -height) near the cell centre
        expect = cam.project(np.array([[bx, by, -0.12 * len(stack)]]))[0]
        assert np.allclose(tops[cell], expect)
        f, rank = "abcdefgh".index(cell[0]), int(cell[1])
        assert abs(bx - (f + 0.5)) < 0.06 and abs(by - (8 - rank + 0.5)) < 0.06
    # a tall stack leans away from the image centre: its top is further out than its base
    base = cam.project(np.array([[*r.truth["tops_board"]["d4"], 0.0]]))[0]
    centre = np.array([(SIZE[0] - 1) / 2, (SIZE[1] - 1) / 2])
    assert np.linalg.norm(np.array(tops["d4"]) - centre) > np.linalg.norm(base - centre)


def test_a_lens_that_folds_back_inside_the_picture_is_refused() -> None:
    with pytest.raises(ValueError, match="folds back"):
        look_at_board("dition", image_size=SIZE, distortion=np.array([-0.6, 0.0, 0.0, 0.0, 0.0]))
    # random cameras never get such a lens, and far points (an arm leaving the picture) keep
    # moving outwards instead of folding back into it
    rng = np.random.default_rng(21)
    for _ in range(10):
        cam = random_camera(rng, "domination", image_size=SIZE)
        cam.check_lens()
        centre = np.array([(SIZE[0] - 1) / 2, (SIZE[1] - 1) / 2])
        ray = np.array([[4.0 + 3.0 * k, 4.0, -0.5] for k in range(30)])
        px = cam.project_clamped(ray)
        d = np.linalg.norm(px - centre, axis=1)
        assert np.all(np.diff(d[2:]) > 0)
