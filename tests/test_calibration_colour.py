"""The colour model: sampled from simulated frames, refused when colours are too close."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calibration.board import calibrate_board
from calibration.colour import (
    ColourModel,
    colours_from_start,
    fit_colour_model,
    sample_pieces,
    standard_start_cells,
)
from calibration.errors import ColourSampleError, ColoursTooCloseError, MalformedCalibrationError
from hardware.sim import RenderOptions, SimDisc, look_at_board, render_dition, render_domination

SIZE = (1640, 1232)


@pytest.fixture(scope="module")
def domination_start():
    rng = np.random.default_rng(12)
    cam = look_at_board("domination", image_size=SIZE, tilt_deg=15, tilt_azimuth_deg=60)
    frame = render_domination(standard_start_cells(("G", "R")), cam, rng,
                              options=RenderOptions.random(rng, supersample=2))
    board = calibrate_board(frame.image, game="domination").to_board_fit()
    return cam, frame, board


def test_standard_start_matches_the_rules_engine() -> None:
    from rules.domination import State

    state = State.standard_start(("G", "R"))
    text = state.to_text() if hasattr(state, "to_text") else ""
    cells = standard_start_cells(("G", "R"))
    assert len(cells) == 36 and sorted(cells.values()).count("G") == 18
    for cell, letter in cells.items():
        assert state.stacks[cell] == letter, (cell, text)


def test_model_from_the_start_position_reads_a_new_position(domination_start) -> None:
    from vision.domination import read_tops

    cam, frame, board = domination_start
    model = colours_from_start(frame.image, board, players=("G", "R"))
    assert set(model.names()) == {"G", "R"}
    # what the camera saw, not the paint: but green stays greenest, red reddest
    g, r = model.vision_colours()["G"], model.vision_colours()["R"]
    assert g[1] > max(g[0], g[2]) and r[2] > max(r[0], r[1])
    rng = np.random.default_rng(5)
    position = {"d4": "G", "e5": "RG", "c3": "R", "f6": "GGR", "b4": "RRG"}
    later = render_domination(position, cam, rng, options=RenderOptions.random(rng, supersample=2))
    board2 = calibrate_board(later.image, game="domination").to_board_fit()
    tops = read_tops(later.image, board2, colours=model.vision_colours()).tops
    assert {c: v for c, v in tops.items() if v != "."} == {c: s[-1] for c, s in position.items()}


def test_too_close_piece_colours_are_refused(domination_start) -> None:
    cam, _, board = domination_start
    rng = np.random.default_rng(6)
    close = {"G": (60, 160, 40), "R": (66, 165, 48)}  # two greens
    frame = render_domination(standard_start_cells(("G", "R")), cam, rng, colours=close,
                              options=RenderOptions.random(rng, supersample=2))
    with pytest.raises(ColoursTooCloseError, match="'G' and 'R'"):
        colours_from_start(frame.image, board, players=("G", "R"))


def test_a_wrongly_named_piece_is_caught(domination_start) -> None:
    from calibration.colour import cell_centre_board

    _, frame, board = domination_start
    # b7 is green but d7 is red: "G" sampled on both is no colour at all
    positions = {"G": [cell_centre_board("b7"), cell_centre_board("d7")],
                 "R": [cell_centre_board("e7")]}
    samples = sample_pieces(frame.image, board, positions, piece_diameter_board=0.8)
    with pytest.raises(ColoursTooCloseError, match="really 'G' pieces"):
        fit_colour_model(samples, game="domination")


def test_dition_black_and_white_discs() -> None:
    rng = np.random.default_rng(14)
    cam = look_at_board("dition", image_size=SIZE, tilt_deg=12)
    discs = [SimDisc(5, 5, "black"), SimDisc(7, 5, "white"), SimDisc(9, 5, "black"),
             SimDisc(11, 5, "white")]
    frame = render_dition(discs, cam, rng, options=RenderOptions.random(rng, supersample=2))
    board = calibrate_board(frame.image, game="dition").to_board_fit()
    samples = sample_pieces(frame.image, board, {"black": [(5, 5), (9, 5)],
                                                 "white": [(7, 5), (11, 5)]},
                            piece_diameter_board=1.0)
    model = fit_colour_model(samples, game="dition")
    lab = {p.name: p.lab for p in model.pieces}
    assert lab["white"][0] - lab["black"][0] > 50  # lightness
    # a black disc shown as "white" by mistake: both samples are black, refused
    wrong = sample_pieces(frame.image, board, {"black": [(5, 5)], "white": [(9, 5)]},
                          piece_diameter_board=1.0)
    with pytest.raises(ColoursTooCloseError, match="'black' and 'white'"):
        fit_colour_model(wrong, game="dition")
    with pytest.raises(ColourSampleError, match="outside the image"):
        sample_pieces(frame.image, board, {"black": [(90.0, 5.0)]}, piece_diameter_board=1.0)


def _cloud(bgr: tuple[float, float, float], n: int, sigma: float,
           rng: np.random.Generator) -> np.ndarray:
    return np.clip(np.asarray(bgr) + rng.normal(0, sigma, (n, 3)), 0, 255)


@settings(max_examples=40, deadline=None)
@given(st.tuples(*[st.integers(30, 225)] * 3), st.tuples(*[st.integers(-2, 2)] * 3))
def test_nearly_equal_colours_are_always_refused(base, delta) -> None:
    rng = np.random.default_rng(0)
    other = tuple(b + d for b, d in zip(base, delta))
    samples = {"A": _cloud(base, 200, 2.0, rng), "B": _cloud(other, 200, 2.0, rng)}
    with pytest.raises(ColoursTooCloseError):
        fit_colour_model(samples, game="domination")


@settings(max_examples=30, deadline=None)
@given(st.permutations(["G", "R", "B", "Y"]), st.integers(0, 2**31))
def test_distinct_palette_is_accepted_and_classifies_its_own_pixels(order, seed) -> None:
    palette = {"G": (60, 160, 40), "R": (40, 40, 200), "B": (200, 90, 30), "Y": (30, 200, 230)}
    rng = np.random.default_rng(seed)
    samples = {k: _cloud(palette[k], 100, 4.0, rng) for k in order}
    model = fit_colour_model(samples, game="domination")
    for k in order:
        assert model.classify(samples[k]).count(k) >= 95
    stored = model.to_dict()
    assert ColourModel.from_dict(stored).to_dict() == stored


def test_bad_samples_are_named() -> None:
    rng = np.random.default_rng(0)
    with pytest.raises(ColourSampleError, match="at least two"):
        fit_colour_model({"G": _cloud((60, 160, 40), 100, 2, rng)}, game="domination")
    with pytest.raises(ColourSampleError, match="'black' and 'white'"):
        fit_colour_model({"G": _cloud((0, 0, 0), 100, 2, rng),
                          "R": _cloud((255, 255, 255), 100, 2, rng)}, game="dition")
    with pytest.raises(ColourSampleError, match="'R': 3 pixels"):
        fit_colour_model({"G": _cloud((60, 160, 40), 100, 2, rng),
                          "R": _cloud((40, 40, 200), 3, 2, rng)}, game="domination")
    with pytest.raises(MalformedCalibrationError, match="game"):
        ColourModel.from_dict({"game": "go", "pieces": {}})
