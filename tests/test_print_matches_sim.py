"""The printed board is the simulated board is what the vision expects (docs/INTERFACES.md)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from calibration import kit
from calibration.drawing import rasterize
from hardware.sim import layout, plate
from vision import markers


def test_kit_constants_agree_with_the_simulated_table_and_the_vision() -> None:
    assert kit.PLATE_EXTENT == layout.PLATE_EXTENT
    assert kit.DITION_LINE_WIDTH == layout.DITION_LINE_WIDTH
    assert kit.DITION_INNER == layout.DITION_INNER
    assert kit.DOMINATION_LINE_WIDTH == layout.DOMINATION_LINE_WIDTH
    assert kit.CUT_CELLS == layout.CUT_CELLS
    assert kit.DITION_PAPER_BGR == plate.PAPER_BGR
    assert kit.INK_BGR == plate.INK_BGR
    assert kit.DOMINATION_PLATE_BGR == plate.DOMINATION_PLATE_BGR
    assert kit.DOMINATION_CELL_BGR == plate.DOMINATION_CELL_BGR
    for game in ("dition", "domination"):
        ids, side, centres = layout.MARKERS[game]
        ours = markers.layout_for(game)
        assert (ids, side, centres) == (ours.ids, ours.side_board, ours.centres_board)
    assert markers.QUIET_ZONE_FRACTION == layout.MARKER_QUIET_ZONE


@pytest.mark.parametrize(("game", "unit_mm"), [("dition", 30.0), ("domination", 35.0)])
def test_printed_board_looks_like_the_simulated_plate(game: str, unit_mm: float) -> None:
    """Ink where the simulator puts ink: the dark pixels (darker than halfway between ink and
    paper) of the print and of the sim's plate texture (same scale, no paper texture)
    coincide, and the plate colours agree elsewhere."""
    ppu = 24.0  # texels per board unit
    options = kit.BoardPrint(labels=False)
    drawing = (kit.dition_board(unit_mm, options) if game == "dition"
               else kit.domination_board(unit_mm, options))
    printed = rasterize(drawing, ppu / unit_mm)
    texture = plate.plate_texture(game, ppu, True, False).image
    simulated = np.clip(texture, 0, 255).astype(np.uint8)
    assert abs(printed.shape[0] - simulated.shape[0]) <= 1
    h = min(printed.shape[0], simulated.shape[0])
    w = min(printed.shape[1], simulated.shape[1])
    dark_p = cv2.cvtColor(printed[:h, :w], cv2.COLOR_BGR2GRAY) < 130
    dark_s = cv2.cvtColor(simulated[:h, :w], cv2.COLOR_BGR2GRAY) < 130
    iou = np.logical_and(dark_p, dark_s).sum() / np.logical_or(dark_p, dark_s).sum()
    assert iou > 0.95
    # and the plate colour where neither has ink
    light = ~(dark_p | dark_s)
    diff = np.abs(printed[:h, :w].astype(int) - simulated[:h, :w].astype(int)).max(axis=2)
    assert np.median(diff[light]) <= 3


@pytest.mark.parametrize(("game", "unit_mm"), [("dition", 30.0), ("domination", 32.0)])
def test_a_photo_of_the_printed_board_is_found_where_it_is(game: str, unit_mm: float) -> None:
    """Photograph the print itself (its raster as a flat sheet, world units = mm) and let the
    vision find the board: the corners land where the drawing says board corners are."""
    from hardware.sim.camera import camera_for_target
    from hardware.sim.options import RenderOptions
    from hardware.sim.render import render_planar_target
    from vision.board import find_board

    drawing = kit.dition_board(unit_mm) if game == "dition" else kit.domination_board(unit_mm)
    px_per_mm = 1000.0 / max(drawing.size_mm)  # about 1000 px across
    texture = rasterize(drawing, px_per_mm)
    size = (texture.shape[1] / px_per_mm, texture.shape[0] / px_per_mm)  # mm, as rasterized
    rng = np.random.default_rng(3)
    cam = camera_for_target(rng, size, (1640, 1232), max_tilt_deg=20, distortion=False,
                            fill=(0.85, 0.95))
    image = render_planar_target(texture, size, cam, rng, options=RenderOptions(supersample=2))
    fit = find_board(image, game=game)
    side = 20.0 if game == "dition" else 8.0
    corners_mm = [drawing.board_to_mm(c) for c in ((0, 0), (side, 0), (side, side), (0, side))]
    truth_px = cam.project(np.array([[x, y, 0.0] for x, y in corners_mm]))
    assert np.max(np.linalg.norm(fit.corners_px - truth_px, axis=1)) < 1.0
