"""vision.domination.read_tops on frames of the simulated table, compared with their ground truth."""

from __future__ import annotations

import json
from types import ModuleType

import numpy as np
import pytest

from hardware.sim import RenderOptions, look_at_board, random_camera, render_domination
from hardware.sim.layout import CUT_CELLS as SIM_CUT_CELLS
from hardware.sim.layout import playable_cells
from vision.camera import Intrinsics
from vision.domination import (
    CELLS,
    CUT_CELLS,
    DEFAULT_COLOURS,
    TopsParams,
    TopsReading,
    cell_centre_board,
    read_tops,
)
from vision.errors import (
    BoardPoseError,
    ColourModelError,
    InvalidImageError,
    InvalidIntrinsicsError,
    VisionError,
)
from vision.geometry import fit_from_corners


def _stacks(rng: np.random.Generator, letters: str, fill: float) -> dict[str, str]:
    return {
        c: "".join(rng.choice(list(letters), size=int(rng.integers(1, 6))))
        for c in playable_cells()
        if rng.random() < fill
    }


def _expected_tops(stacks: dict[str, str]) -> dict[str, str]:
    return {c: (stacks[c][-1] if c in stacks else ".") for c in CELLS}


class Scene:
    def __init__(self, seed: int, letters: str = "GRBY", fill: float = 0.6, **opts: object) -> None:
        rng = np.random.default_rng(seed)
        self.camera = random_camera(rng, "domination")
        self.stacks = _stacks(rng, letters, fill)
        colours = opts.pop("colours", None)
        self.rendered = render_domination(
            self.stacks, self.camera, rng, colours=colours,  # type: ignore[arg-type]
            options=RenderOptions.random(rng, **opts),
        )
        self.image = self.rendered.image
        self.corners_px = np.asarray(self.rendered.truth["corners_px"], dtype=np.float64)
        self.intrinsics = Intrinsics(
            self.camera.camera_matrix, self.camera.dist_coeffs, self.camera.image_size
        )


@pytest.fixture(scope="module")
def scenes() -> list[Scene]:
    return [Scene(seed, letters) for seed, letters in ((101, "GRBY"), (102, "GR"), (103, "GRB"))]


def test_vocabulary_matches_the_simulated_kit() -> None:
    assert CUT_CELLS == SIM_CUT_CELLS
    assert sorted(CELLS) == sorted(playable_cells())
    assert len(CELLS) == 52
    assert cell_centre_board("c8") == (2.5, 0.5)
    assert cell_centre_board("d4") == (3.5, 4.5)
    with pytest.raises(ValueError, match="a1"):
        cell_centre_board("a1")


def test_tops_right_on_every_cell_with_camera_model(scenes: list[Scene]) -> None:
    for scene in scenes:
        board = fit_from_corners(scene.corners_px, "domination", scene.intrinsics)
        reading = read_tops(scene.image, board, intrinsics=scene.intrinsics)
        assert set(reading.tops) == set(CELLS)
        assert dict(reading.tops) == _expected_tops(scene.stacks)
        assert all(0.0 <= v <= 1.0 for v in reading.confidence.values())


def test_tops_right_without_camera_model_and_no_heights(scenes: list[Scene]) -> None:
    for scene in scenes:
        reading = read_tops(scene.image, fit_from_corners(scene.corners_px, "domination"))
        assert dict(reading.tops) == _expected_tops(scene.stacks)
        assert reading.heights is None and reading.height_sigma is None


def test_heights_mostly_exact_and_never_far_off(scenes: list[Scene]) -> None:
    exact = total = 0
    for scene in scenes:
        board = fit_from_corners(scene.corners_px, "domination", scene.intrinsics)
        reading = read_tops(scene.image, board, intrinsics=scene.intrinsics)
        assert reading.heights is not None and reading.height_sigma is not None
        for cell in CELLS:
            true_h = len(scene.stacks.get(cell, ""))
            if true_h == 0:
                assert reading.heights[cell] == 0
                continue
            total += 1
            exact += reading.heights[cell] == true_h
            assert abs(reading.heights[cell] - true_h) <= 2, (cell, scene.stacks[cell])
            assert 1 <= reading.heights[cell] <= 5
            assert reading.height_sigma[cell] > 0
    assert total > 40
    assert exact / total >= 0.65, f"only {exact}/{total} heights exact"


def test_tall_tops_are_read_where_they_appear() -> None:
    """A camera low and far off-centre displaces the tops of 5-stacks by a good part of a cell;
    single pieces of another colour next to them must not be confused with them."""
    rng = np.random.default_rng(7)
    cam = look_at_board("domination", height_units=7.5, tilt_deg=15.0, tilt_azimuth_deg=45.0)
    stacks = {c: ("RRRRG" if (i % 2) else "B") for i, c in enumerate(CELLS) if i % 3 != 0}
    rendered = render_domination(stacks, cam, rng, options=RenderOptions.random(rng))
    intr = Intrinsics(cam.camera_matrix, cam.dist_coeffs, cam.image_size)
    board = fit_from_corners(np.asarray(rendered.truth["corners_px"]), "domination", intr)
    reading = read_tops(rendered.image, board, intrinsics=intr)
    assert dict(reading.tops) == _expected_tops(stacks)
    assert reading.heights is not None
    fives = [c for c, s in stacks.items() if len(s) == 5]
    assert sum(abs(reading.heights[c] - 5) <= 1 for c in fives) == len(fives)


def test_calibrated_colour_model() -> None:
    colours = {"P": (160, 40, 150), "O": (30, 120, 240), "C": (200, 190, 40)}
    scene = Scene(104, "POC", colours=colours)
    # the calibrated model: each colour as the camera sees a lit top under this light
    reading = read_tops(
        scene.image,
        fit_from_corners(scene.corners_px, "domination", scene.intrinsics),
        colours=colours,
        intrinsics=scene.intrinsics,
    )
    assert dict(reading.tops) == _expected_tops(scene.stacks)


def test_empty_board_reads_all_empty(rng: np.random.Generator) -> None:
    cam = random_camera(rng, "domination")
    rendered = render_domination({}, cam, rng, options=RenderOptions.random(rng))
    board = fit_from_corners(np.asarray(rendered.truth["corners_px"]), "domination")
    reading = read_tops(rendered.image, board)
    assert set(reading.tops.values()) == {"."}


def test_reading_is_json_able(scenes: list[Scene]) -> None:
    scene = scenes[0]
    board = fit_from_corners(scene.corners_px, "domination", scene.intrinsics)
    out = read_tops(scene.image, board, intrinsics=scene.intrinsics).to_dict()
    again = json.loads(json.dumps(out))
    assert set(again) == {"tops", "confidence", "heights", "height_sigma"}
    assert len(again["tops"]) == 52 and len(again["heights"]) == 52
    assert isinstance(TopsReading({}, {}), TopsReading)


def test_bad_inputs_give_clear_errors(scenes: list[Scene]) -> None:
    scene = scenes[0]
    board = fit_from_corners(scene.corners_px, "domination")
    with pytest.raises(InvalidImageError, match="uint8"):
        read_tops(scene.image.astype(np.float32), board)
    with pytest.raises(InvalidImageError, match="shape"):
        read_tops(scene.image[:, :, 0], board)
    with pytest.raises(ColourModelError, match="grey"):
        read_tops(scene.image, board, colours={"G": (60, 160, 40), "W": (200, 200, 200)})
    with pytest.raises(ColourModelError, match="BGR"):
        read_tops(scene.image, board, colours={"G": (60, 160)})
    with pytest.raises(ColourModelError, match="letter"):
        read_tops(scene.image, board, colours={".": (60, 160, 40)})
    with pytest.raises(ValueError, match="unknown TopsParams keys: colour_radius"):
        TopsParams.from_dict({"colour_radius": 0.5})
    for fields, match in [  # each out of its range: the error names the field
        ({"disc_thickness": 0.0}, "disc_thickness"),
        ({"near_darkening": 1.5}, "near_darkening"),
        ({"refine_passes": 0}, "refine_passes"),
        ({"edge_strength_power": -1.0}, "edge_strength_power"),
        ({"n_directions": 16, "coarse_direction_step": 3}, "coarse_direction_step"),
        ({"frame_offset_sigma_px": -0.1}, "frame_offset_sigma_px"),
        ({"flank_fraction_ref": 1.0}, "flank_fraction_ref"),
        ({"candidate_top_fraction": -0.1}, "candidate_top_fraction"),
        ({"frame_near_offset_sigma_px": -0.1}, "frame_near_offset_sigma_px"),
        ({"near_depth_gain_px": 6.0}, "near_depth_gain_px"),
        ({"near_depth_reach_px": 0.0}, "near_depth_reach_px"),
        ({"saturation_level": 300.0}, "saturation_level"),
        ({"near_reference_near_px": 6.0}, "near_reference_near_px"),
        ({"glare_min": -1.0}, "glare_min"),
        ({"saturated_min_channels": 4}, "saturated_min_channels"),
        ({"saturated_near_glare_gain_px": 9.0}, "saturated_near_glare_gain_px"),
    ]:
        with pytest.raises(ValueError, match=match):
            TopsParams(**fields)
    with pytest.raises(InvalidIntrinsicsError, match="1640x1232"):
        read_tops(scene.image[:600, :800].copy(), board, intrinsics=scene.intrinsics)
    mirrored = fit_from_corners(scene.corners_px[::-1].copy(), "domination")
    with pytest.raises(BoardPoseError, match="mirrored"):
        read_tops(scene.image, mirrored)
    assert issubclass(BoardPoseError, VisionError) and issubclass(ColourModelError, ValueError)


def test_default_colours_match_the_kit() -> None:
    from hardware.sim.layout import DOMINATION_COLOURS

    assert dict(DEFAULT_COLOURS) == DOMINATION_COLOURS


def test_chromaticity_ignores_brightness() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from vision.domination import _chroma

    @settings(max_examples=60, deadline=None)
    @given(
        st.tuples(*(st.floats(5.0, 250.0),) * 3),
        st.floats(0.3, 1.0),
    )
    def check(bgr: tuple[float, float, float], gain: float) -> None:
        a = _chroma(np.asarray(bgr, dtype=np.float64))
        b = _chroma(np.asarray(bgr, dtype=np.float64) * gain)
        np.testing.assert_allclose(a, b, atol=1e-3)

    check()


def test_outline_position_does_not_jump_between_the_flanks_of_a_rim_line() -> None:
    """A top face (colour A) with a thin dark rim line (1 px, 0.4-0.7 x A) at its outline, then
    whatever lies outside (colour B), blurred: depending on the contrasts the innermost edge is
    the rim's inner flank or the outer step, about 1-2 px apart. The outline position taken from
    the profile (the centroid of the edge strength 2.5 px either side of the innermost edge) must
    stay near the rim line's middle whichever it is; the alternatives it replaced strayed to
    -1.95 px (the innermost edge's own peak) and +1.4 px (a window 1 px before to 2.5 px after).

    How near depends on how visible the outline is after the blur: its largest colour change
    across 2 px of the noise-free profile. From 40 levels (4x the reader's edge floor) it stays
    within +-1.2 px (120 000 profiles near the weak end: at most 1.12 px); weaker outlines, down to
    20 levels, are still always found, within +-1.4 px (at most 1.29 px: the 1-level noise moves
    a weak edge's centroid further). Below 20 levels an outline is too close to the floor to be
    promised (hypothesis found a 1 px rim line blurred to 12 levels, rightly not taken)."""
    from hypothesis import assume, given, settings
    from hypothesis import strategies as st
    from scipy.special import ndtr

    from vision.domination import _edge_profiles, _outline_candidates

    params = TopsParams()
    step = params.profile_step_px
    s = -8.0 + step * np.arange(int(16 / step) + 1)
    colour = st.tuples(*(st.floats(30.0, 230.0),) * 3)

    @settings(max_examples=80, deadline=None)
    @given(colour, colour, st.floats(0.4, 0.7), st.floats(0.4, 1.1), st.floats(-0.5, 0.5),
           st.integers(0, 2**32 - 1))
    def check(top: tuple[float, ...], outside: tuple[float, ...], rim: float, blur_px: float,
              outline_px: float, seed: int) -> None:
        a, b = np.asarray(top), np.asarray(outside)
        f_in = ndtr((outline_px - 1.0 - s) / blur_px)
        f_out = ndtr((s - outline_px) / blur_px)
        clean = f_in[:, None] * a + (1 - f_in - f_out)[:, None] * rim * a + f_out[:, None] * b
        across_2px = round(2.0 / step)
        visible = np.linalg.norm(clean[across_2px:] - clean[:-across_2px], axis=1).max()
        assume(visible >= 20.0)  # an outline to speak of
        prof = clean + np.random.default_rng(seed).normal(0.0, 1.0, clean.shape)
        edge, s_edge0 = _edge_profiles(prof[None, None], np.array([[s[0]]]), step)
        pos, strength = _outline_candidates(edge, s_edge0, params)
        found = pos[0, 0][np.isfinite(pos[0, 0])]
        assert found.size == 1 and 0 < strength.max() <= 1.0 + 1e-9
        # the rim line spans [outline - 1, outline]; blur spreads it by about a pixel
        tolerance_px = 1.2 if visible >= 40.0 else 1.4
        assert abs(found[0] - (outline_px - 0.5)) <= tolerance_px, (found[0], outline_px, visible)

    check()


@pytest.fixture(scope="module")
def height_scenes() -> list[Scene]:
    """Six varied frames (random camera, light, noise, JPEG), about 150 stacks of 1-5."""
    return [Scene(seed, "GRBY"[: 2 + seed % 3], fill=0.55) for seed in range(201, 207)]


def _height_errors(scenes: list[Scene]) -> tuple[np.ndarray, np.ndarray]:
    """Per stack: read height minus true height, and (estimate - truth) / height_sigma."""
    errs: list[int] = []
    z: list[float] = []
    for scene in scenes:
        board = fit_from_corners(scene.corners_px, "domination", scene.intrinsics)
        reading = read_tops(scene.image, board, intrinsics=scene.intrinsics)
        assert reading.heights is not None and reading.height_sigma is not None
        assert reading.height_estimate is not None
        for cell, stack in scene.stacks.items():
            errs.append(reading.heights[cell] - len(stack))
            z.append((reading.height_estimate[cell] - len(stack)) / reading.height_sigma[cell])
    return np.asarray(errs), np.asarray(z)


def test_heights_on_varied_frames_and_sigma_calibrated(height_scenes: list[Scene]) -> None:
    """What the reader achieves today (benchmark: ~94-96 % exact, ~99.7 % within one piece;
    these six frames 92.3 %), with margin; and height_sigma honest enough for the referee's
    inference to weigh heights."""
    errs, z = _height_errors(height_scenes)
    assert errs.size >= 120
    assert np.mean(errs == 0) >= 0.83, f"only {np.mean(errs == 0):.1%} of heights exact"
    assert np.mean(np.abs(errs) <= 1) >= 0.97, f"{np.mean(np.abs(errs) <= 1):.1%} within one"
    # a Gaussian sigma: median |z| 0.67, 95 % of |z| under 1.96; allow a loose band
    assert 0.4 <= float(np.median(np.abs(z))) <= 1.0, float(np.median(np.abs(z)))
    assert np.mean(np.abs(z) <= 3.0) >= 0.9


def test_heights_of_stacks_below_the_camera() -> None:
    """Right below the camera a top barely moves with height: its apparent size (about 0.4 px of
    radius per piece here) must be measured against a well-placed circle. The near side of the
    top (where it meets its own side band) places the circle although its edge lies at an offset
    unknown per stack. 12 frames, camera 8-12 cells up, tilt <= 5 degrees, the 16 central cells
    filled with random stacks 1-5 (192 stacks; 79 % exact without the near side, 86 % with it
    at an edge centroid, 90 % with the near side where the colour first darkens off the top,
    91.1 % with the third round's tuning, 92.2 % with the frame's common edge offset fitted)."""
    exact: list[bool] = []
    for seed in range(300, 312):
        rng = np.random.default_rng(seed)
        cam = look_at_board(
            "domination",
            height_units=float(rng.uniform(8, 12)),
            tilt_deg=float(rng.uniform(0, 5)),
            tilt_azimuth_deg=float(rng.uniform(0, 360)),
            rotation_deg=float(rng.uniform(-180, 180)),
        )
        stacks = {
            f + r: "".join(rng.choice(list("GRBY"), size=int(rng.integers(1, 6))))
            for f in "cdef"
            for r in "3456"
        }
        rendered = render_domination(stacks, cam, rng, options=RenderOptions.random(rng))
        intr = Intrinsics(cam.camera_matrix, cam.dist_coeffs, cam.image_size)
        board = fit_from_corners(np.asarray(rendered.truth["corners_px"]), "domination", intr)
        reading = read_tops(rendered.image, board, intrinsics=intr)
        assert reading.heights is not None
        exact += [reading.heights[c] == len(s) for c, s in stacks.items()]
    assert len(exact) == 192
    assert np.mean(exact) >= 0.85, f"only {np.mean(exact):.1%} of the heights below the camera exact"


def test_heights_exact_for_95_percent_of_stacks(height_scenes: list[Scene]) -> None:
    errs, _ = _height_errors(height_scenes)
    assert np.mean(errs == 0) >= 0.95, f"only {np.mean(errs == 0):.1%} of heights exact"


def test_line_crossings_of_displaced_circles() -> None:
    """The outline a top shows along a sampling line is where its projected circle crosses that
    line: for circles displaced sideways (as a top moving away from the nadir is, seen from a
    line anchored on a lower level) the crossing from `_line_crossings` matches the exact
    line-circle intersection within 0.01 px (displacements up to 12 px at radii of 30-60 px),
    and its shift direction matches a finite difference; the rim point's plain projection onto
    the line would be off by up to d^2 / 2R (2.4 px here)."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from vision.domination import _line_crossings

    n_j = 24
    theta = np.arange(n_j) * 2 * np.pi / n_j
    ring = np.stack([np.cos(theta), np.sin(theta)], axis=1)

    def intersect(centre: np.ndarray, radius: float, anchor: np.ndarray, n: np.ndarray) -> np.ndarray:
        # |anchor + s n - centre| = radius, the root on the n side
        rel = anchor - centre
        b = (rel * n).sum(-1)
        c = (rel * rel).sum(-1) - radius**2
        return -b + np.sqrt(b * b - c)

    @settings(max_examples=60, deadline=None)
    @given(st.floats(30.0, 60.0), st.floats(-12.0, 12.0), st.floats(-12.0, 12.0),
           st.floats(0.9, 1.1), st.floats(-1.0, 1.0), st.floats(-1.0, 1.0))
    def check(r_px: float, dx: float, dy: float, scale: float, sx: float, sy: float) -> None:
        anchor = r_px * ring  # lines through the rim of a circle of radius r_px at the origin
        normal = ring
        centre = np.array([dx, dy])
        radius = r_px * scale
        rim = (centre + radius * ring)[None, None]  # (C=1, L=1, J, 2)
        s_cross, shift_dir = _line_crossings(rim, anchor[None], normal[None])
        exact = intersect(centre, radius, anchor, normal)
        np.testing.assert_allclose(s_cross[0, 0], exact, atol=0.01)
        # moving the circle by (sx, sy) moves the crossings by shift_dir . (sx, sy), to first order
        moved = intersect(centre + 0.01 * np.array([sx, sy]), radius, anchor, normal)
        np.testing.assert_allclose(
            (shift_dir[0, 0] * np.array([sx, sy])).sum(-1), (moved - exact) / 0.01, atol=0.03
        )

    check()


def _outline_profile(
    s: np.ndarray, blur: float, top: np.ndarray, side: np.ndarray, beyond: np.ndarray,
    band_px: float = 4.0, top_gain: np.ndarray | None = None,
) -> np.ndarray:
    """A blurred profile (S, 3) across a top's near side at positions `s` px (outline at 0):
    the top (times `top_gain` per sample), its rim line (1 px at 0.55 x the top's colour), the
    side band (`side`, `band_px` wide), then what lies `beyond`."""
    from scipy.special import ndtr

    f_top = ndtr((-1.0 - s) / blur)
    f_rim = ndtr((0.0 - s) / blur) - f_top
    f_side = ndtr((band_px - s) / blur) - f_top - f_rim
    f_out = 1.0 - f_top - f_rim - f_side
    gain = np.ones_like(s) if top_gain is None else top_gain
    return (f_top[:, None] * top * gain[:, None] + f_rim[:, None] * 0.55 * top
            + f_side[:, None] * side + f_out[:, None] * beyond)


def test_darkening_crossing_sits_on_the_tops_inner_edge() -> None:
    """Where a top meets its own side band, the side's shading (0.4-1.1 of its colour, itself
    a little darker than the top) and what lies beyond it move an edge centroid around; the
    place where the colour first darkens by a tenth off the top's own colour does not: it sits
    on the inner flank of the dark rim line, within 0.35 px of the same place whatever the side
    and the outside are (blur fixed, as in one frame)."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from vision.domination import _darkening_crossings

    step = 0.5
    s = -10.0 + step * np.arange(int(20 / step) + 1)
    colour = st.tuples(*(st.floats(40.0, 230.0),) * 3)
    found: list[float] = []

    @settings(max_examples=80, deadline=None)
    @given(colour, colour, st.floats(0.4, 1.1), st.floats(1.0, 6.0), st.integers(0, 2**32 - 1))
    def check(top: tuple[float, ...], beyond: tuple[float, ...], shade: float, band_px: float,
              seed: int) -> None:
        a, b = np.asarray(top), np.asarray(beyond)
        # top | rim (1 px, 0.55 x top) | side band (0.82 x shade x top, band_px wide) | beyond
        prof = _outline_profile(s, 0.8, a, min(0.82 * shade, 0.95) * a, b, band_px)
        prof += np.random.default_rng(seed).normal(0.0, 1.0, prof.shape)
        pos, _ = _darkening_crossings(prof[None, None], np.array([[s[0]]]), step, 0.1)
        assert np.isfinite(pos[0, 0])
        found.append(float(pos[0, 0]))
        assert -2.2 <= pos[0, 0] <= -0.6, pos[0, 0]

    check()
    assert max(found) - min(found) <= 0.7, (min(found), max(found))


def test_darkening_depth_is_how_dark_it_gets_just_past_the_crossing() -> None:
    """The depth `_darkening_crossings` returns with each crossing (the near side's correction
    for how far inside the outline blur puts the crossing) is the deepest darkening, relative to
    the top's brightness along its own colour, within `reach_px` past it: the side band's own
    level where a wide dark band follows the rim line, only the blurred rim line's dip where the
    band is about as light as the top; nan where the colour never darkens."""

    from vision.domination import _darkening_crossings

    step, blur = 0.5, 0.8
    s = -10.0 + step * np.arange(int(20 / step) + 1)
    top = np.array([60.0, 170.0, 90.0])
    beyond = np.array([200.0, 205.0, 210.0])

    def profile(band_level: float) -> np.ndarray:
        # top | rim (1 px, 0.55 x top) | side band (band_level x top, 4 px) | the light board
        return _outline_profile(s, blur, top, band_level * top, beyond)

    dark_band, light_band = 0.82 * 0.4, 0.95
    profs = np.stack([profile(dark_band), profile(light_band), np.tile(top, (s.size, 1))])
    pos, depth = _darkening_crossings(profs[:, None], np.full((3, 1), s[0]), step, 0.1, 3.0)
    assert np.all(np.isfinite(pos[:2, 0])) and not np.isfinite(pos[2, 0])
    assert abs(depth[0, 0] - (1.0 - dark_band)) < 0.05, depth[0, 0]
    # a 1 px line 0.45 deep blurred by 0.8 px keeps about half of its depth
    assert 0.15 <= depth[1, 0] <= 0.4, depth[1, 0]
    assert np.isnan(depth[2, 0])


@pytest.mark.parametrize("top", [(40.0, 120.0, 300.0), (60.0, 290.0, 330.0)])
def test_darkening_crossing_leaves_out_the_channels_a_top_saturates(top: tuple[float, ...]) -> None:
    """An overexposed top clipped at 255 in some channel stays 255 there until its true value
    falls below it, past the outline: measured with that channel, the near side's darkening
    crossing comes out too far out; without it, where the same top would put it unclipped."""

    from vision.domination import _darkening_crossings

    step, blur = 0.5, 0.9
    s = -10.0 + step * np.arange(int(20 / step) + 1)
    beyond = np.array([190.0, 195.0, 200.0])

    def profile(colour: np.ndarray) -> np.ndarray:
        return _outline_profile(s, blur, colour, 0.66 * colour, beyond)

    true_top = np.asarray(top)
    clipped = np.minimum(profile(true_top), 255.0)[None, None]
    # the same top without its clipped channels (unsaturated reference)
    kept = true_top < 255
    reference = profile(np.where(kept, true_top, 0.0))[None, None]
    s_lo = np.array([[s[0]]])
    with_all, _ = _darkening_crossings(clipped, s_lo, step, 0.1, 3.0, saturation_level=0.0)
    left_out, _ = _darkening_crossings(clipped, s_lo, step, 0.1, 3.0, saturation_level=253.0)
    expected, _ = _darkening_crossings(reference, s_lo, step, 0.1, 3.0)
    assert abs(left_out[0, 0] - expected[0, 0]) < 0.05, (left_out[0, 0], expected[0, 0])
    assert with_all[0, 0] > expected[0, 0] + 0.5  # the clipped channel hides the darkening


def test_glare_level_from_the_top_colour_against_the_colour_model() -> None:
    """Glare adds the light's own colour (grey before the white balance) to a glossy top: its
    white-balanced colour is L x (its model colour) + g x (the white balance's gains). The fit
    recovers g whatever the brightness L, also with a channel clipped at 255 (left out)."""
    from vision.domination import _glare_levels

    wb = np.array([1.05, 0.98, 0.97])
    model = np.array([[40.0, 160.0, 60.0], [50.0, 50.0, 200.0], [30.0, 200.0, 230.0]])
    letter = np.array([0, 1, 2, 2])
    brightness = np.array([1.1, 0.8, 0.9, 1.0])
    glare = np.array([30.0, 0.0, 12.0, 40.0])
    true_raw = (brightness[:, None] * model[letter] + glare[:, None] * wb) / wb
    raw = np.minimum(true_raw, 255.0)
    assert raw[3, 2] == 255.0 and raw[3, 1] < 250.0  # the last top saturates its red channel only
    np.testing.assert_allclose(_glare_levels(raw, wb, model, letter, 253.0), glare, atol=1e-6)
    # with the clipped channel kept, the last one's glare would come out wrong
    assert abs(_glare_levels(raw, wb, model, letter, 0.0)[3] - glare[3]) > 2.0


def test_darkening_against_the_local_reference_of_a_top_whose_light_falls_off() -> None:
    """Glare and light vary across a top: where it is a few % darker next to its outline than
    at the samples taken as its colour, the 10 % crossing comes too early (too far in).
    Measured against the brightness just before each crossing (within the allowed change) it
    returns to where a uniformly lit top puts it; a uniform top is left as it was."""

    from vision.domination import _darkening_crossings

    step, blur = 0.5, 0.8
    s = -10.0 + step * np.arange(int(20 / step) + 1)
    top = np.array([60.0, 170.0, 90.0])
    beyond = np.array([200.0, 205.0, 210.0])

    def profile(falloff: float) -> np.ndarray:
        gain = 1.0 - falloff * np.clip((s + 9.0) / 8.0, 0.0, 1.0)  # darker towards the outline
        return _outline_profile(s, blur, top, 0.66 * top, beyond, top_gain=gain)

    profs = np.stack([profile(0.0), profile(0.04)])[:, None]
    s_lo = np.full((2, 1), s[0])
    plain, _ = _darkening_crossings(profs, s_lo, step, 0.1)
    local, _ = _darkening_crossings(
        profs, s_lo, step, 0.1, local_ref=(5.0, 2.0, 0.05), local=np.ones(2, dtype=bool)
    )
    flat = plain[0, 0]
    assert plain[1, 0] < flat - 0.15  # the fall-off pulls the crossing in
    assert abs(local[1, 0] - flat) < 0.1, (local[1, 0], flat)
    assert abs(local[0, 0] - flat) < 0.01


def test_flank_fraction_is_the_outer_flanks_share_of_the_rim_contrast() -> None:
    """Across a top's outline (top | 1 px rim line at 0.55 x the top's colour | what lies
    beyond), `_flank_fraction` gives the outer flank's share |O - R| / (|T - R| + |O - R|) of the
    contrast, R the darker (along the top's colour) of the rim and the outside: within 0.045 of
    the levels the profile was made of for sharp edges (the profile's 0.5 px samples leave up
    to 0.042: 17,000 random cases measured, 4 past 0.04), wherever within 1 px of the outline the
    edge was found (unless the rim and the outside are about as dark); nan where no outline was
    found."""
    from hypothesis import assume, given, settings
    from hypothesis import strategies as st
    from scipy.special import ndtr

    from vision.domination import _flank_fraction

    step = 0.5
    s = -12.0 + step * np.arange(int(24 / step) + 1)
    colour = st.tuples(*(st.floats(30.0, 230.0),) * 3)

    @settings(max_examples=60, deadline=None)
    @given(colour, colour, st.floats(-1.0, 1.0))
    def check(top: tuple[float, ...], beyond: tuple[float, ...], found_at: float) -> None:
        t, o = np.asarray(top), np.asarray(beyond)
        rim = 0.55 * t
        blur = 0.3
        f_top = ndtr((-0.5 - s) / blur)
        f_out = 1.0 - ndtr((0.5 - s) / blur)
        prof = f_top[:, None] * t + (1.0 - f_top - f_out)[:, None] * rim + f_out[:, None] * o
        # the rim and the outside of about the same brightness along the top's colour: either
        # may be the darkest sample, the share is ill-defined there
        assume(abs((o - rim) @ t) / np.linalg.norm(t) >= 0.2 * np.linalg.norm(t - rim))
        darkest = rim if rim @ t <= o @ t else o
        w_in, w_out = np.linalg.norm(t - darkest), np.linalg.norm(o - darkest)
        expected = w_out / max(w_in + w_out, 1e-6)
        pos = np.array([[found_at, np.inf]])
        frac = _flank_fraction(np.stack([prof, prof])[None], np.full((1, 2), s[0]), step, pos)
        assert abs(frac[0, 0] - expected) <= 0.045, (frac[0, 0], expected)
        assert np.isnan(frac[0, 1])

    check()


def test_repeated_reads_on_the_same_board_reuse_nothing_stale(scenes: list[Scene]) -> None:
    """The board-only geometry is cached per board fit, camera model and parameters: reading a
    second board in between, or the same frame again, gives exactly what a cold read gives."""
    import vision.domination as dom

    a, b = scenes[0], scenes[1]
    board_a = fit_from_corners(a.corners_px, "domination", a.intrinsics)
    board_b = fit_from_corners(b.corners_px, "domination", b.intrinsics)
    dom._GEOMETRY_CACHE.clear()
    cold_b = read_tops(b.image, board_b, intrinsics=b.intrinsics).to_dict()
    dom._GEOMETRY_CACHE.clear()
    cold_a = read_tops(a.image, board_a, intrinsics=a.intrinsics).to_dict()
    again_b = read_tops(b.image, board_b, intrinsics=b.intrinsics).to_dict()
    again_a = read_tops(a.image, board_a, intrinsics=a.intrinsics).to_dict()
    plain_a = read_tops(a.image, fit_from_corners(a.corners_px, "domination")).to_dict()
    assert again_a == cold_a and again_b == cold_b
    assert "heights" in again_a and "heights" not in plain_a  # the camera model is in the key
    # another board in the same frame size must not reuse the geometry: its tops differ
    assert cold_a["tops"] != cold_b["tops"]
    assert len(dom._GEOMETRY_CACHE) <= dom._GEOMETRY_CACHE_SIZE


def _counted(monkeypatch: pytest.MonkeyPatch, module: ModuleType, name: str) -> list[int]:
    """`module.name` wrapped to count its calls (one entry a call), the geometry cache emptied."""
    calls: list[int] = []
    real = getattr(module, name)
    monkeypatch.setattr(module, name, lambda *args, **kw: calls.append(1) or real(*args, **kw))
    module._GEOMETRY_CACHE.clear()
    return calls


def test_board_only_work_is_done_once_per_fit(scenes: list[Scene], monkeypatch: pytest.MonkeyPatch) -> None:
    """What depends on the board fit alone is worked out with it, not on every frame: where each
    height and shift puts its circle on the coarse fit's edge profiles, once for three frames;
    the tops stay the truth (three reads of one frame)."""
    import vision.domination as dom

    a = scenes[0]
    board = fit_from_corners(a.corners_px, "domination", a.intrinsics)
    calls = _counted(monkeypatch, dom, "_coarse_indices")
    for _ in range(3):
        assert read_tops(a.image, board, intrinsics=a.intrinsics).tops == _expected_tops(a.stacks)
    assert len(calls) == 1


def test_stacks_cells_are_worked_out_once_per_set(scenes: list[Scene], monkeypatch: pytest.MonkeyPatch) -> None:
    """The stacks' cells' part of the geometry (their rows of it and their profile maps) is kept
    with the board fit per set of cells: three reads of one frame work it out once, and a read
    after it is dropped gives exactly the reading made with it."""
    import vision.domination as dom

    a = scenes[0]
    board = fit_from_corners(a.corners_px, "domination", a.intrinsics)
    calls = _counted(monkeypatch, dom, "_profile_maps")
    readings = [read_tops(a.image, board, intrinsics=a.intrinsics).to_dict() for _ in range(3)]
    assert len(calls) == 1
    for geo in dom._GEOMETRY_CACHE.values():
        geo.stacks.clear()
    assert read_tops(a.image, board, intrinsics=a.intrinsics).to_dict() == readings[0] == readings[2]
    assert len(calls) == 2
    assert readings[0]["tops"] == _expected_tops(a.stacks)


def test_edge_profiles_match_smoothed_central_differences(rng: np.random.Generator) -> None:
    """The one-kernel edge operator equals the direct form: [1 2 1]/4 smoothing along the
    profile, then the colour difference +-k samples apart, its Euclidean length."""
    from vision.domination import _edge_profiles

    prof = rng.uniform(0, 255, size=(3, 5, 40, 3)).astype(np.float32)
    s_lo = rng.uniform(-20, -10, size=(3, 5))
    for halfwidth, step in ((1.0, 0.5), (1.5, 0.5), (0.5, 0.5)):
        edge, s0 = _edge_profiles(prof, s_lo, step, halfwidth)
        k = max(1, round(halfwidth / step))
        p64 = prof.astype(np.float64)
        smooth = (p64[:, :, :-2] + 2 * p64[:, :, 1:-1] + p64[:, :, 2:]) / 4
        diff = smooth[:, :, 2 * k :] - smooth[:, :, : -2 * k]
        ref = np.linalg.norm(diff, axis=-1)
        assert edge.shape == ref.shape
        np.testing.assert_allclose(edge, ref, rtol=1e-4, atol=1e-3)
        # the first edge sample sits k + 1 samples into the profile
        np.testing.assert_allclose(s0, s_lo + (k + 1) * step)


def test_frame_offset_takes_a_common_edge_offset_off_the_heights(rng: np.random.Generator) -> None:
    """An edge offset shared by every stack of a frame (blur, light) reads as height where only
    the top's size tells it (below the camera), while stacks far from the nadir, whose
    displacement pins the height, show it in their residuals: `_frame_offset`, fitted on the
    occupied cells, gives back the heights of the stacks below the camera within 0.03 cells
    (uncorrected they are off by offset / size rate, 0.1 cells here); cells not occupied (their
    'edges' anything at all) do not count."""
    from vision.domination import _frame_offset

    n_far, n_below, n_empty, n_j = 40, 6, 6, 32
    n_c = n_far + n_below + n_empty
    theta = np.arange(n_j) * 2 * np.pi / n_j
    size_rate = 3.0  # px of outline per cell of height, all around
    disp_rate = np.r_[rng.uniform(6, 12, n_far), np.zeros(n_below), rng.uniform(0, 12, n_empty)]
    ds = disp_rate[:, None] * np.cos(theta)[None] + size_rate  # (C, J) px per cell
    near = ds < 0
    a = np.stack(
        [ds, np.tile(np.cos(theta), (n_c, 1)), np.tile(np.sin(theta), (n_c, 1)), near * 1.0], axis=-1
    )
    u_true = np.c_[
        rng.uniform(-0.06, 0.06, (n_c, 1)), rng.normal(0, 0.1, (n_c, 2)), np.zeros((n_c, 1))
    ]
    offset_px = 0.3
    resid = np.einsum("cjk,ck->cj", a, u_true) + offset_px + rng.normal(0, 0.02, (n_c, n_j))
    resid[n_far + n_below :] += rng.uniform(-3, 3, (n_empty, n_j))  # empty cells: grid lines
    w = np.ones((n_c, n_j))
    prior = np.diag([0.0, 0.05, 0.05, (1.0 / 0.15) ** 2])
    nmat = np.einsum("cj,cjk,cjl->ckl", w, a, a) + prior + 1e-9 * np.eye(4)
    u = np.linalg.solve(nmat, np.einsum("cj,cjk,cj->ck", w, a, resid)[..., None])[..., 0]
    r = resid - np.einsum("cjk,ck->cj", a, u)
    occupied = np.arange(n_c) < n_far + n_below
    params = TopsParams(frame_offset_sigma_px=1.0)
    corrected = u[:, 0] - _frame_offset(w, a, r, nmat, occupied, params)
    below = slice(n_far, n_far + n_below)
    # without the correction the offset shows as height below the camera
    assert np.all(np.abs(u[below, 0] - u_true[below, 0] - offset_px / size_rate) < 0.02)
    np.testing.assert_allclose(corrected[below], u_true[below, 0], atol=0.03)
    # no frame offset, no change beyond the noise (the near sides' own offsets)
    resid0 = resid - offset_px
    u0 = np.linalg.solve(nmat, np.einsum("cj,cjk,cj->ck", w, a, resid0)[..., None])[..., 0]
    r0 = resid0 - np.einsum("cjk,ck->cj", a, u0)
    change = _frame_offset(w, a, r0, nmat, occupied, params)
    assert np.all(np.abs(change[below]) < 0.03)
    # the prior holds it: a vanishing sigma leaves the heights as they are
    tight = _frame_offset(w, a, r, nmat, occupied, TopsParams(frame_offset_sigma_px=1e-4))
    assert np.all(np.abs(tight) < 1e-3)


def test_frame_offset_of_the_near_side_alone(rng: np.random.Generator) -> None:
    """Blur moves the near side's darkening crossings inwards on every stack of a frame, and
    not the far side's outline: a second frame offset, on the near side's directions only, takes
    that out of the heights of stacks away from the nadir (their near side pins the top's place)
    where the single common offset cannot."""
    from vision.domination import _frame_offset

    n_c, n_j = 48, 32
    theta = np.arange(n_j) * 2 * np.pi / n_j
    size_rate = 3.0
    disp_rate = rng.uniform(6, 12, n_c)
    ds = disp_rate[:, None] * np.cos(theta)[None] + size_rate  # (C, J) px per cell
    near = ds < 0
    a = np.stack(
        [ds, np.tile(np.cos(theta), (n_c, 1)), np.tile(np.sin(theta), (n_c, 1)), near * 1.0], axis=-1
    )
    u_true = np.c_[rng.uniform(-0.06, 0.06, (n_c, 1)), rng.normal(0, 0.1, (n_c, 2)), np.zeros((n_c, 1))]
    near_offset_px = -0.4
    resid = np.einsum("cjk,ck->cj", a, u_true) + near_offset_px * near + rng.normal(0, 0.02, (n_c, n_j))
    w = np.ones((n_c, n_j))
    prior = np.diag([0.0, 0.05, 0.05, (1.0 / 0.1) ** 2])
    nmat = np.einsum("cj,cjk,cjl->ckl", w, a, a) + prior + 1e-9 * np.eye(4)
    u = np.linalg.solve(nmat, np.einsum("cj,cjk,cj->ck", w, a, resid)[..., None])[..., 0]
    r = resid - np.einsum("cjk,ck->cj", a, u)
    occupied = np.ones(n_c, dtype=bool)
    params = TopsParams(frame_offset_sigma_px=1.0, frame_near_offset_sigma_px=1.0)
    err_raw = np.abs(u[:, 0] - u_true[:, 0])
    err_common = np.abs(u[:, 0] - _frame_offset(w, a, r, nmat, occupied, params) - u_true[:, 0])
    err_both = np.abs(u[:, 0] - _frame_offset(w, a, r, nmat, occupied, params, near) - u_true[:, 0])
    assert np.median(err_raw) > 0.01  # the near side's offset shows in the heights
    assert np.median(err_common) > 0.005  # one common offset cannot take it out
    assert np.median(err_both) < 0.003 and np.max(err_both) < 0.01, (np.median(err_both), np.max(err_both))
    # switched off by its prior
    off = TopsParams(frame_offset_sigma_px=1.0, frame_near_offset_sigma_px=0.0)
    np.testing.assert_allclose(
        _frame_offset(w, a, r, nmat, occupied, off, near), _frame_offset(w, a, r, nmat, occupied, off)
    )


@pytest.mark.parametrize(
    "dist_coeffs, skew",
    [
        ([], 0.0),
        ([-0.08, 0.05, 0.001, -0.002], 0.0),
        ([-0.05, 0.08, -0.0007, 0.0012, -0.01], 0.0),
        ([-0.05, 0.08, -0.0007, 0.0012, -0.01], 0.8),  # skew: the general path
        ([0.1, -0.05, 0.001, 0.002, 0.01, 0.12, -0.04, 0.02], 0.0),  # rational model
        ([-0.05, 0.02, 0.0, 0.001, 0.0, 0.0, 0.0, 0.0, 0.001, -0.0005, 0.0008, 0.0002], 0.0),
        ([-0.05, 0.02, 0.0, 0.001, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.01, -0.005], 0.0),
    ],
)
def test_reader_projection_equals_opencv(dist_coeffs: list[float], skew: float) -> None:
    """The tops reader projects its ~12 000 circle points itself (numpy pinhole + the shared
    lens model); it must give cv2.projectPoints' numbers for every OpenCV lens model."""
    import cv2

    from vision.domination import _Camera

    k = np.array([[1300.0, skew, 820.0], [0.0, 1302.0, 610.0], [0.0, 0.0, 1.0]])
    d = np.asarray(dist_coeffs, dtype=np.float64)
    rvec = np.array([2.9, 0.15, -0.1])
    tvec = np.array([-4.1, 3.8, 11.0])
    cam = _Camera(k, d, rvec, tvec)
    rng = np.random.default_rng(7)
    pts = np.c_[rng.uniform(-1, 9, size=(500, 2)), rng.uniform(0, 0.8, size=500)]  # height up
    obj = pts.copy()
    obj[:, 2] = -obj[:, 2]  # board frame: z into the table
    ref, _ = cv2.projectPoints(obj, rvec, tvec, k, d if d.size else None)
    assert np.max(np.abs(cam.project(pts) - ref.reshape(-1, 2))) < 1e-3  # float32 output
