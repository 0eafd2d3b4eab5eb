"""The Dition reader off the kit's table (issue 21): discs without a dot, boards with light lines
or decorations, measured on frames of the varied simulated table with their ground truth."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from scipy.spatial import cKDTree
from variety_support import bench_frame

from hardware.sim import RenderOptions, random_camera, random_discs
from hardware.sim.variety import OTHELLO_THICKNESS, Variety, render_varied
from vision.board import find_board
from vision.camera import Intrinsics
from vision.dition import DiscParams, detect_discs
from vision.errors import BoardNotFoundError
from vision.geometry import BoardParams


def _frame(seed: int, variety: Variety, n: int = 60):
    rng = np.random.default_rng(seed)
    discs = random_discs(rng, n, touching_fraction=0.33, colours="random")
    cam = random_camera(rng, "dition", distortion=True)
    r = render_varied(discs, cam, np.random.default_rng(seed), variety, RenderOptions.random(rng))
    return discs, cam, r, Intrinsics(cam.camera_matrix, cam.dist_coeffs, cam.image_size)


def _score(discs, found) -> tuple[int, int, int, float]:
    """(missed, phantoms, wrong colours, median error in diameters). A board found without
    markers has its corner 0 on the picture's top-left: the truth is taken in whichever of the
    board's quarter turns fits the readings best."""
    t0 = np.array([[d.x, d.y] for d in discs])
    f = np.array([d.centre_board for d in found]).reshape(-1, 2)
    x, y = t0[:, 0], t0[:, 1]
    turns = [np.stack(q, 1) for q in ((x, y), (20 - y, x), (20 - x, 20 - y), (y, 20 - x))]
    t = min(turns, key=lambda q: float(np.median(cKDTree(q).query(f)[0])) if len(f) else 0.0)
    dist, idx = cKDTree(t).query(f) if len(f) else (np.zeros(0), np.zeros(0, int))
    ok = dist < 0.3
    matched = set(idx[ok].tolist())
    colours = sum(found[i].colour != discs[j].colour for i, j in enumerate(idx) if ok[i])
    return len(discs) - len(matched), int((~ok).sum()) + int(ok.sum() - len(matched)), colours, float(
        np.median(dist[ok]) if ok.any() else np.nan)


@pytest.mark.parametrize(("disc", "seed"), [("plain", 3), ("othello", 4), ("ridged", 5), ("glossy", 6)])
def test_discs_without_a_dot_are_found(disc: str, seed: int) -> None:
    """The dot is extra evidence, never required: plain counters, thick Othello-like discs,
    ridged draughts men, glossy ones with a highlight are all found, with their colour."""
    discs, _cam, r, k = _frame(seed, Variety(disc=disc))
    fit = find_board(r.image, corners_px=np.array(r.truth["corners_px"]), intrinsics=k)
    missed, phantoms, colours, median = _score(discs, detect_discs(r.image, fit, intrinsics=k))
    assert (missed, phantoms, colours) == (0, 0, 0)
    # a disc 0.15 thick is seen 0.07 higher than the reader's 0.08 model corrects: its top face
    # lies up to 0.07 * (distance from the camera's foot point) / (camera height) ~ 0.04 off
    assert median < (0.05 if disc == "othello" else 0.01)


@pytest.mark.parametrize("seed", [23, 27])
def test_black_discs_on_green_felt_as_bright_as_the_felt_are_found(seed: int) -> None:
    """A black face on saturated green felt can be as bright as the felt (grey 55-67 on 75-85):
    its outline shows in colour, not in grey. Both frames lost black discs before the reader
    read the outline along the colour from the face to the board (9 and 2 of 60)."""
    discs, _cam, r, k = _frame(seed, Variety(board="green_felt"))
    fit = find_board(r.image, corners_px=np.array(r.truth["corners_px"]), intrinsics=k)
    missed, phantoms, colours, median = _score(discs, detect_discs(r.image, fit, intrinsics=k))
    assert (missed, phantoms, colours) == (0, 0, 0)
    assert median < 0.01


_bench_frame = bench_frame


def test_black_discs_lighter_than_blue_felt_in_grey_are_read_black() -> None:
    """A black face under a hot spot can be lighter than saturated felt in grey: frame 6 of the
    variety benchmark's blue felt (seed 1) has a black disc at (3.05, 11.10) whose face reads
    grey 105 on felt of grey 60. It was read white when the colour compared grey with the
    board's grey; in the felt's own (blue) channel it is darker than the felt, as black is."""
    discs, found = _bench_frame(1, 6, Variety(board="blue_felt"))
    near = [d for d in found if np.hypot(d.centre_board[0] - 3.05, d.centre_board[1] - 11.10) < 0.3]
    assert [d.colour for d in near] == ["black"]
    assert _score(discs, found)[:3] == (0, 0, 0)


def test_black_disc_under_glare_keeps_its_round_outline() -> None:
    """Glare, variety benchmark seed 1, frame 27: the black disc at (4.58, 16.75) carries its
    highlight's gradient on its face (more than the white faces' `even_face` allows) and shows
    its round dot; a dark face's roundness was asked of it with the white faces' bound and it was
    dropped (found by each of the two changes alone, missed once both were merged)."""
    discs, found = _bench_frame(1, 27, Variety.one("light", "glare"), lamp=False)
    near = [d for d in found if np.hypot(d.centre_board[0] - 4.58, d.centre_board[1] - 16.75) < 0.3]
    assert [d.colour for d in near] == ["black"]
    assert _score(discs, found)[1] == 0  # no phantom


@pytest.mark.parametrize("frame", [0, 1])
def test_printed_rings_among_discs_are_not_discs(frame: int) -> None:
    """The decorated board with discs on it (variety benchmark, seed 1): the paper inside a
    printed ring of 1.2 diameters at (5, 5) or (15, 5) is no disc, though the black discs around
    it darken the board's median over 5 diameters below that paper by 18-22 grey levels (each
    frame had that phantom white reading); every disc is found."""
    discs, found = _bench_frame(1, frame, Variety(board="decorated"))
    assert _score(discs, found)[:3] == (0, 0, 0)


def test_bare_board_between_black_discs_is_not_a_disc() -> None:
    """A light grey board with no lines under a hot spot (variety benchmark, bare board, seed 1,
    frame 8): patches of bare board hemmed in by black discs, or between black discs and the
    board's edge, have a closed outline of darker things around them and differ from a board
    median that the black discs (or the table beyond the edge) darken; three were read as white
    discs. The board under a disc lies on the board, beside no disc."""
    discs, found = _bench_frame(1, 8, Variety(board="bare_board"))
    assert _score(discs, found)[:3] == (0, 0, 0)


def test_printed_rings_stars_and_titles_are_not_discs() -> None:
    """The kit's plate with printed rings of 1.2 and 0.7 diameters, a star, a title and a logo,
    a title of letters a disc high and a disc-sized logo (a dark hexagon with a light letter;
    both read as black discs before a dark face's outline had to be round, which is asked where
    the camera is known): no reading on an empty board."""
    rng = np.random.default_rng(8)
    cam = random_camera(rng, "dition", distortion=False)
    r = render_varied((), cam, rng, Variety(board="decorated"), RenderOptions.random(rng))
    k = Intrinsics(cam.camera_matrix, cam.dist_coeffs, cam.image_size)
    fit = find_board(r.image, corners_px=np.array(r.truth["corners_px"]), intrinsics=k)
    assert detect_discs(r.image, fit, intrinsics=k) == []


@pytest.mark.parametrize("board", ["green_felt", "blue_felt"])
def test_a_board_of_light_lines_on_felt_is_found(board: str) -> None:
    _discs, _cam, r, k = _frame(11, Variety(board=board))
    fit = find_board(r.image, BoardParams(use_aruco=False), intrinsics=k)
    assert fit.extra["lines"] == "light"
    truth = np.array(r.truth["corners_px"])
    err = min(np.abs(np.roll(fit.corners_px, s, axis=0) - truth).max() for s in range(4))
    assert err < 1.0


@pytest.mark.parametrize(("board", "seed"), [("bare_felt", 12), ("bare_board", 13), ("bare_felt", 14)])
def test_a_board_with_no_lines_is_found_by_its_edge(board: str, seed: int) -> None:
    """No markers, no drawn lines: the board's own edge against the table is the playing area's
    edge, found with the discs on it (rows of discs make straight edges too) within a pixel."""
    discs, _cam, r, k = _frame(seed, Variety(board=board))
    fit = find_board(r.image, BoardParams(use_aruco=False), intrinsics=k)
    assert fit.method == "edge"
    truth = np.array(r.truth["corners_px"])
    err = min(np.abs(np.roll(fit.corners_px, s, axis=0) - truth).max() for s in range(4))
    assert err < 1.0
    # and the discs on it are read through that fit
    missed, phantoms, colours, median = _score(discs, detect_discs(r.image, fit, intrinsics=k))
    assert (missed, phantoms, colours) == (0, 0, 0)
    assert median < 0.01


def test_board_not_found_says_what_was_tried_and_what_to_do() -> None:
    blank = np.full((480, 640, 3), (52, 86, 128), np.uint8)  # a bare table
    with pytest.raises(BoardNotFoundError) as exc:
        find_board(blank)
    msg = str(exc.value)
    assert "markers" in msg and "dark lines" in msg and "light lines" in msg and "board edge" in msg
    assert "--corners" in msg


@pytest.mark.parametrize(("disc", "seed", "p95"), [("ridged", 7, 0.02), ("off_round", 8, 0.02), ("plain", 3, 0.009)])
def test_dotless_centres_from_the_whole_outline(disc: str, seed: int, p95: float) -> None:
    """Without a dot the centre is the outline's: a draughts man's dark rim line is found at its
    inner edge all round and a piece 0.02 off round is longer one way, so a fit of the half of
    the outline where no side shows lay a line's width (0.025) or half the excess (0.01) towards
    the camera or away from it; a white face on light paper steps down less than a dark
    neighbour beside it. Centres (where the disc touches the board) within 0.007 diameters on
    median for either colour, p95 within `p95` (before: white ridged 0.024 / 0.040, off-round
    0.021 / 0.043, plain p95 0.011 / 0.012). Ridged and off-round pieces: p95 within the issue's
    p99 target, 0.02 (white ridged: under 0.015 with OpenCV 5.0, 0.0159 with the floor's 4.10)."""
    discs, _cam, r, k = _frame(seed, Variety(disc=disc), n=80)
    fit = find_board(r.image, corners_px=np.array(r.truth["corners_px"]), intrinsics=k)
    found = detect_discs(r.image, fit, intrinsics=k)
    truth = np.array([[d.x, d.y] for d in discs])
    dist, idx = cKDTree(truth).query([d.centre_board for d in found])
    assert len(found) == len(discs) and sorted(idx.tolist()) == list(range(len(discs)))
    for colour in ("white", "black"):
        err = dist[[discs[j].colour == colour for j in idx]]
        assert np.median(err) < 0.007, colour
        assert np.percentile(err, 95) < p95, colour


#: variety benchmark (seed 1, frame 28, plain discs): the white discs clipped at 255 in all three
#: channels on paper clipped in red and green only (grey 252-253, blue 228-245 beside them)
CLIPPED_ON_WARM_PAPER = ((1.27, 3.53), (4.95, 15.29), (2.09, 6.31), (1.42, 4.99), (3.35, 4.67))


def test_white_discs_clipped_on_warm_paper_are_found() -> None:
    """Dotless white discs whose faces are clipped at the sensor's white in all three channels,
    on warm paper clipped in red and green: 9-15 levels above the board in blue, under the
    16-level floor that print is held to, and no rim step left in grey. The sensor cut their
    contrast off (ink is never lighter than its paper): the frame's noise bounds it, and their
    outline and rim are read in the colour from face to board. All 5 were missed; now found,
    their centres from that rim within 0.005 diameters (0.0012-0.0036; the vote peaks lay
    0.03-0.05 off, a rim fitted on the far half of the outline only 0.001-0.0083)."""
    discs, found = _bench_frame(1, 28, Variety(disc="plain"))
    missed, phantoms, colours, median = _score(discs, found)
    assert (missed, phantoms, colours) == (0, 0, 0)
    assert median < 0.005
    f = np.array([d.centre_board for d in found])
    for x, y in CLIPPED_ON_WARM_PAPER:
        (truth,) = [d for d in discs if np.hypot(d.x - x, d.y - y) < 0.01]
        assert truth.colour == "white"
        assert np.min(np.hypot(*(f - (truth.x, truth.y)).T)) < 0.005, (x, y)


def test_white_discs_under_a_cool_light_are_found() -> None:
    """A cool (daylight) cast on warm paper (variety benchmark, seed 1, frame 28): white faces at
    grey 249-252, clipped in blue and green, show only 10-14 grey levels over their paper, under
    the 16-level floor print is held to; each shows its round grey dot, its rim at the predicted
    radius and its outline closed all around, and differs from what lies right beyond its rim
    all around. 7 of them were missed."""
    discs, found = _bench_frame(1, 28, Variety(light="cool"))
    missed, phantoms, colours, median = _score(discs, found)
    assert (missed, phantoms, colours) == (0, 0, 0)
    assert median < 0.005


def test_white_discs_in_a_defocused_frame_are_found() -> None:
    """A 2-px defocus (variety benchmark, seed 1, frame 4: 140 discs) spreads a white face's
    rim step of 27 grey levels over 0.16 diameters; over 0.04 diameters it steps less than 4
    noise sigmas (3.1 levels), and 50 white discs were missed. The outline's step is taken over
    the rim's width this frame shows (its sigma measured on the fitted rims): every disc found."""
    discs, found = _bench_frame(1, 4, Variety(camera="defocus"))
    missed, phantoms, colours, median = _score(discs, found)
    assert (missed, phantoms, colours) == (0, 0, 0)
    assert median < 0.01


def test_white_discs_clipped_in_glare_show_their_outline_in_blue() -> None:
    """Glare (variety benchmark, seed 1, frame 2): white faces clipped at 255 in all three
    channels, their dots washed out, on warm paper clipped in red and green; the paper keeps
    15-20 levels of blue under the face, and there the outline is a circle of the disc's size all
    around. The discs at (16.22, 12.73) and (18.76, 13.56) were missed; so was (14.64, 10.62), on
    paper clipped around it but for its shadow's ring, 11-22 levels below the face in blue on
    every ray (counted as a disc the frame does not show: its vote peak was below a free face's,
    and the halfway crossings of a shadow's soft fall-off scatter by more than a rim's width);
    and (17.6, 10.0), whose shadow's fall-off runs on past the rim's reach on most rays (see the
    frame 14 test below). No phantom."""
    discs, found = _bench_frame(1, 2, Variety(light="glare"), lamp=False)
    for x, y in ((16.22, 12.73), (18.76, 13.56), (14.64, 10.62)):
        near = [d for d in found if np.hypot(d.centre_board[0] - x, d.centre_board[1] - y) < 0.3]
        assert [d.colour for d in near] == ["white"]
    _missed, phantoms, colours, median = _score(discs, found)
    assert (phantoms, colours) == (0, 0)
    assert median < 0.005
    f = np.array([d.centre_board for d in found])
    lost = sorted((round(d.x, 1), round(d.y, 1)) for d in discs if np.min(np.hypot(*(f - (d.x, d.y)).T)) > 0.3)
    assert lost == []


def test_white_discs_clipped_in_glare_closed_by_their_shadows_fall_off() -> None:
    """Glare (variety benchmark, seed 1, frame 14): five white faces clipped at 255 in all three
    channels on warm paper, their blue stepping 10-23 levels down on every ray, were missed: on
    most rays their shadow's soft fall-off runs on past the rim's reach (no lighter ring beyond,
    as a side band has) and its halfway crossing scatters by more than a rim's width. A shadow
    stays lighter than `black_ratio` of the face, a black neighbour's face does not, and the
    face holds at the sensor's white up to the rim: all five found, no phantom ((12.19, 12.69),
    its blue 4-9 levels under the face on most rays, under two steps of 4 on a single sample,
    once the mean over the window outside the circle is asked a step deep)."""
    discs, found = _bench_frame(1, 14, Variety(light="glare"), lamp=False)
    missed, phantoms, colours, median = _score(discs, found)
    assert (phantoms, colours) == (0, 0)
    assert missed == 0
    assert median < 0.005


def test_white_discs_clipped_in_glare_closed_by_a_shallow_shadow() -> None:
    """Glare (variety benchmark, seed 1, frame 11): white faces clipped at 255 in all three
    channels whose shadow falls only 5-15 levels in blue below the face at their rim, under the
    two steps (8.4 levels) a single least sample had to clear on most rays. The mean over the
    window just outside the circle stands one step under the face: (8.65, 6.07) and
    (9.34, 3.16) were missed and are found, no phantom. Left: five discs touching other clipped
    faces, whose outline the frame shows on half to two thirds of the rays."""
    discs, found = _bench_frame(1, 11, Variety(light="glare"), lamp=False)
    for x, y in ((8.65, 6.07), (9.34, 3.16)):
        near = [d for d in found if np.hypot(d.centre_board[0] - x, d.centre_board[1] - y) < 0.3]
        assert len(near) == 1 and near[0].colour == "white"
    missed, phantoms, colours, median = _score(discs, found)
    assert (phantoms, colours) == (0, 0)
    assert missed <= 5
    assert median < 0.005


@pytest.mark.parametrize(("frame", "centres"), [
    (29, ((19.27, 18.66),)),
    (24, ((18.6, 5.87),)),
])
def test_white_discs_clipped_in_glare_showing_half_their_outline_are_found(frame, centres) -> None:
    """Glare (variety benchmark, seed 1, frames 29 and 24): white faces clipped at 255 in all three
    channels on paper clipped as white, whose side band and shadow, the only things darker than
    the paper's white, show a crescent: a circle of the disc's size, fitted to 0.006-0.011, on
    0.5-0.62 of the rays, no neighbour on those rays (re-rendered without the disc, the frame
    changes by 6 levels or more on 0.67-0.79 of the rays just outside it). Held to three
    quarters of the rays, they were missed; half of the rays that point at no reading nearby now
    count. No phantom. Left in frame 24: (17.18, 4.69), whose crescent's circle is located to
    0.010-0.013 only, and (17.98, 0.6), whose rays towards the board's edge line, 0.6 away, cannot
    speak (a line's edge is ink)."""
    discs, found = _bench_frame(1, frame, Variety(light="glare"), lamp=False)
    for x, y in centres:
        near = [d for d in found if np.hypot(d.centre_board[0] - x, d.centre_board[1] - y) < 0.1]
        assert [d.colour for d in near] == ["white"]
    _missed, phantoms, colours, median = _score(discs, found)
    assert (phantoms, colours) == (0, 0)
    assert median < 0.005


def test_bare_paper_beside_a_drawn_line_and_discs_is_not_a_disc() -> None:
    """JPEG 60 (variety benchmark, seed 1, frame 8): bare paper clipped at 255 at (2.50, 12.39),
    the inner square's line 0.5 away and five discs 1.3-1.8 away: the line's edge and the discs'
    halos close a circle on half of its rays. The rays across the line are ink's, not a rim's."""
    discs, found = _bench_frame(1, 8, Variety(camera="jpeg"))
    assert _score(discs, found)[:3] == (0, 0, 0)


def test_bare_paper_ringed_by_the_halos_of_discs_in_glare_is_not_a_disc() -> None:
    """Glare (variety benchmark, seed 1, frame 9): bare paper clipped at 255 at (7.04, 9.82), five
    discs 1.12-1.27 away: their rims and shadows' soft fall-off cross halfway at a disc's radius
    on 0.71 of its rays, a circle fitted to 0.005. Counted on every ray at half of them it was a
    phantom; those rays point at the discs whose halos they are, and speak for them."""
    discs, found = _bench_frame(1, 9, Variety(light="glare"), lamp=False)
    assert not [d for d in found if np.hypot(d.centre_board[0] - 7.04, d.centre_board[1] - 9.82) < 0.3]
    assert _score(discs, found)[1:3] == (0, 0)


def test_bare_paper_among_shadows_in_glare_is_not_a_disc() -> None:
    """Glare (variety benchmark, seed 1, frame 17): patches of bare paper clipped at 255 among
    discs whose soft shadows close around them cross halfway between paper and shadow along a
    ragged line; a circle fitted through it is no outline (three were read as white discs while
    the clipped face's outline rule counted rays by the spread of the fit's own residuals)."""
    discs, found = _bench_frame(1, 17, Variety(light="glare"), lamp=False)
    assert _score(discs, found)[:3] == (0, 0, 0)


def test_bare_paper_sloping_into_the_shadows_around_it_is_not_a_disc() -> None:
    """Printed office paper (variety benchmark, seed 1, frame 17): bare paper clipped in a hot
    spot, ringed by black discs' shadows, crosses halfway between its level and the darkest
    within the rim's reach at a disc's radius on 0.83 of the rays, and was read as a white disc.
    A disc's own ring is darkest by its rim; the paper slopes on down past the reach, by more
    than a step, on 0.8 of those rays (the clipped faces of the glare, lamp and glossy frames:
    at most 0.4)."""
    discs, found = _bench_frame(1, 17, Variety(board="printed"))
    assert _score(discs, found)[:3] == (0, 0, 0)


def test_a_thick_white_disc_clipped_among_neighbours_closes_on_its_circle() -> None:
    """Othello-thick discs read with their thickness stated (variety benchmark, seed 1, frame 11):
    a white face clipped at the sensor's white among touching neighbours, its vote peak 0.057 off
    its centre, was missed: its side band widens its outline on the far side, where the halfway
    crossings lie on the fitted circle but beyond the rim's reach of the predicted radius from
    that peak; rays are now counted on the circle wherever they cross it."""
    discs, found = _bench_frame(1, 11, Variety(disc="othello"), DiscParams(thickness_board=OTHELLO_THICKNESS))
    assert _score(discs, found)[:3] == (0, 0, 0)


def test_lit_black_discs_on_green_felt_are_found() -> None:
    """Two black discs near the edge of green felt, lit: grey faces (91, 90, 96 BGR) on felt of
    (46, 105, 38), lighter than it in grey, blue and red and only 14 levels darker in green, under
    the 16-level floor. Held to being darker than the board, as a white reading is held to being
    lighter, both were missed; a dark reading differs from the felt by its lack of colour."""
    discs, found = _bench_frame(1, 10, Variety(board="green_felt"))
    missed, phantoms, colours, median = _score(discs, found)
    assert (missed, phantoms, colours) == (0, 0, 0)
    assert median < 0.005


def _errors(discs, found) -> np.ndarray:
    """Every disc found once, nothing else: the centre errors (diameters)."""
    dist, idx = cKDTree(np.array([[d.x, d.y] for d in discs])).query([d.centre_board for d in found])
    assert len(found) == len(discs) and sorted(idx.tolist()) == list(range(len(discs)))
    return dist


def test_motion_blurred_rims_are_centred_on_their_steps() -> None:
    """A 7-px motion blur (variety benchmark, seed 1, frames 2 and 4: 246 discs) spreads every
    rim and dot step into a plateau up to 11 samples wide across the blur's direction, on which
    the derivative's peak lands anywhere: centres scattered along the blur by up to 0.036
    diameters (median 0.0089, p99 0.029 over both). The step is taken at the centre of that
    plateau (a symmetric blur leaves it on the edge): 0.0048 and 0.017."""
    err = np.concatenate([_errors(*_bench_frame(1, k, Variety(camera="motion"))) for k in (2, 4)])
    assert np.median(err) < 0.006
    assert np.percentile(err, 99) < 0.02


@pytest.mark.parametrize(("camera", "frame"), [("noise", 1), ("motion", 4)])
def test_bare_paper_among_noisy_or_blurred_rims_is_not_a_disc(camera: str, frame: int) -> None:
    """Bare paper between discs (variety benchmark, seed 1: noise sigma 7, frame 1; a 7-px
    motion blur, frame 4) whose face ring runs over the neighbours' noisy or smeared rims: its
    spread was 2.8 noise sigmas, within the 3 a white face on a light board was allowed, and it
    was read as a white disc. A face as even as the noise is within twice it and a grey level."""
    discs, found = _bench_frame(1, frame, Variety(camera=camera))
    assert _score(discs, found)[:3] == (0, 0, 0)


def test_white_discs_on_office_paper_as_light_as_them_are_found() -> None:
    """White discs on office paper (variety benchmark, seed 1, frame 4: 140 discs): the face is
    as light as the paper (no contrast to show), its outline a soft shadow 15-25 grey levels deep
    on paper of 3 levels of noise, which steps 8-14 levels over 0.04 diameters on one ray, under
    4 noise sigmas on half of them; 21 white discs were missed. Read on each ray averaged with its
    neighbours (the outline runs on round the circle, the noise does not) it closes all round."""
    discs, found = _bench_frame(1, 4, Variety(board="printed"))
    missed, phantoms, colours, median = _score(discs, found)
    # (OpenCV draws the frame: the floor's 4.10 draws another one, 22 missed before, where one
    # white disc hemmed in by its neighbours has only its dot's candidate, its rim fitted on 11
    # rays of 24, one short of the half a dot-only candidate needs)
    floor_cv = tuple(int(v) for v in cv2.__version__.split(".")[:2]) < (4, 11)
    assert (missed, phantoms, colours) in ((0, 0, 0), (1, 0, 0) if floor_cv else (0, 0, 0))
    assert median < 0.005


def test_a_white_face_is_read_around_its_dot_when_its_vote_peak_lies_off_it() -> None:
    """A white disc on office paper beside a corner of the drawn squares (variety benchmark, seed
    1, frame 29, at (1.53, 19.46)) votes with its shadow side: its peak lies 0.12 off its centre,
    and its fits start from its dot. Its face read around the peak took in the dot on one side
    and the rim on the other (spread 7.4 levels, as uneven as print) and it was missed; read
    around its dot it is as even as the paper's noise."""
    discs, found = _bench_frame(1, 29, Variety(board="printed"))
    missed, phantoms, colours, median = _score(discs, found)
    assert (missed, phantoms, colours) == (0, 0, 0)
    assert median < 0.005


def test_a_dark_rim_beside_a_drawn_line_is_fitted_on_the_rays_clear_of_the_ink() -> None:
    """A glossy black disc (no dot) in a corner of the drawn squares (variety benchmark, seed 1,
    frame 21, at (3.52, 3.54)): on the rays towards the corner the rim's step lies on the line's
    edge, and the fit over all rays is 0.011 off round, over the bound a dark face's outline is
    held to (a letter's 0.02-0.05), and the disc was missed. Fitted on the rays clear of the ink
    it is round to 0.004 and found, within 0.01 of its centre."""
    discs, found = _bench_frame(1, 21, Variety(disc="glossy"))
    missed, phantoms, colours, _median = _score(discs, found)
    assert (missed, phantoms, colours) == (0, 0, 0)
    f = np.array([d.centre_board for d in found])
    assert np.min(np.hypot(*(f - (_truth_at(discs, 3.52, 3.54))).T)) < 0.01


def _truth_at(discs, x: float, y: float) -> tuple[float, float]:
    (d,) = [d for d in discs if np.hypot(d.x - x, d.y - y) < 0.01]
    return d.x, d.y


def test_a_white_disc_in_a_motion_blurred_hot_spot_is_found() -> None:
    """A 7-px motion blur over a hot spot on the kit's paper (variety benchmark, seed 1, frame 8):
    a white disc at (1.29, 3.26), its face at grey 253 on paper as light, its outline a crescent
    of shadow smeared along the blur, its grey dot in view, was missed. Its vote peak lies off
    its centre and its fits start from its dot: its face is read there too (it is found with the
    across-rays closure left out as well)."""
    discs, found = _bench_frame(1, 8, Variety(camera="motion"))
    missed, phantoms, colours, _median = _score(discs, found)
    assert (missed, phantoms, colours) == (0, 0, 0)


def test_bare_paper_clipped_among_black_discs_shadows_is_not_a_disc() -> None:
    """Office paper in a hot spot (variety benchmark, seed 1, frame 17): at (7.35, 2.45) bare
    paper clipped in all three channels, hemmed in by three black discs whose shadows close half
    a ring around it, 22 levels over the board 5 diameters around, was read as a white disc. It
    shows no dot and no rim; the ring of shadows alone must close on three quarters of the rays."""
    discs, found = _bench_frame(1, 17, Variety(board="printed"))
    missed, _phantoms, colours, _median = _score(discs, found)
    assert (missed, colours) == (0, 0)
    f = np.array([d.centre_board for d in found])
    assert np.min(np.hypot(*(f - (7.35, 2.45)).T)) > 0.3


@pytest.mark.parametrize("disc", ["plain", "othello"])
def test_a_clipped_white_disc_is_read_again_from_its_circles_centre(disc: str) -> None:
    """Variety benchmark, seed 1, frame 8: white faces on paper clipped at 255 in all three
    channels. The dotless white disc at (2.78, 1.67) votes with its shadow side only; its vote
    peak lies 0.13 off its centre, where the rays on the far side run out of the face early and
    the halfway crossings of its outline close on 0.71 of the rays, under the 0.75 a clipped
    face's outline needs. The circle through them lies 0.05 from the centre: read again from
    there (twice), its outline closes, in every style (the Othello set's (5.70, 3.03) too). No
    phantom."""
    discs, found = _bench_frame(1, 8, Variety(disc=disc))
    assert _score(discs, found)[:3] == (0, 0, 0)


def test_a_white_disc_clipped_beside_its_white_neighbour_is_read_from_its_circles_centre() -> None:
    """Glare (variety benchmark, seed 2, frame 1): a white face clipped at 255 touching another
    one at (2.04, 1.88); from its vote peak, and again from the circle's centre 0.05 off, its
    outline closes on 0.71 of the rays, from that circle's own centre (0.016 further) on 0.88."""
    discs, found = _bench_frame(2, 1, Variety(light="glare"), lamp=False)
    assert _score(discs, found)[:3] == (0, 0, 0)


def test_a_white_disc_with_its_dot_washed_to_a_smudge_is_found() -> None:
    """A lamp's hot spot (variety benchmark, seed 1, frame 11): the white disc at (16.65, 8.92),
    its face clipped at 254-255, on paper 10 levels darker in blue, with its grey dot washed out
    to a smudge 10 levels deep and 0.07 of a diameter across (the dot fit misses it), closes its
    outline on 0.54 of the rays, and differs from what lies right beyond its rim on every ray:
    a face clipped white with no rim fit was held to the print's floor of 16 levels. Its smudge
    stands in for the rim fit; bare paper clipped between discs is as light at the centre of
    its ring as around it."""
    discs, found = _bench_frame(1, 11, Variety(light="lamp"), lamp=False)
    assert _score(discs, found)[:3] == (0, 0, 0)


def test_bare_paper_ringed_by_soft_shadows_in_glare_is_not_a_disc() -> None:
    """Glare (variety benchmark, seed 2, frame 7): bare paper clipped at 255 between four white
    discs and a black one, ringed by their soft shadows, had a rim fitted around it on a third
    of the rays and was read as a white disc; those rims scatter by 0.047 (a clipped disc's side
    and shadow, at most 0.032 on the varied table's frames)."""
    discs, found = _bench_frame(2, 7, Variety(light="glare"), lamp=False)
    f = np.array([d.centre_board for d in found])
    assert np.min(np.hypot(*(f - (7.91, 10.53)).T)) > 0.3
    assert _score(discs, found)[1:3] == (0, 0)


def test_black_discs_lifted_by_a_lamps_glare_keep_their_round_outline() -> None:
    """Glare with the lamp a lamp (variety benchmark, seed 1, frame 23): its glare lies where the
    faces mirror it to the camera, and lifts four black faces there to 127-183 on clipped paper,
    4-8 levels of slope across their face ring; touching neighbours, their outlines fitted 0.011-0.014
    off round; their vote peaks 0.06 off their centres, where the ring takes in the dot's edge.
    Asked as even as `face_snr` noise sigmas (3.15) around the vote peak they spread 5.9-7.4 and
    were dropped; around their fitted centre, the slope taken off, 1.4-2.1."""
    discs, found = _bench_frame(1, 23, Variety(light="glare"))
    for x, y in ((12.08, 8.14), (11.08, 8.16), (15.45, 7.66), (12.32, 11.16)):
        near = [d for d in found if np.hypot(d.centre_board[0] - x, d.centre_board[1] - y) < 0.1]
        assert [d.colour for d in near] == ["black"]
    assert _score(discs, found)[2] == 0
