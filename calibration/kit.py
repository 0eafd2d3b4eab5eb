"""The printable boards and the measuring card, as `Drawing`s at true scale (mm).

The boards follow the shared physical kit of docs/INTERFACES.md exactly: line widths centred on
the edges, ArUco markers (`vision.markers`) with their white quiet zones, the plate extent and
colours the simulated table renders (a test checks the copies agree with `hardware/sim`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from calibration.drawing import (
    BLACK,
    GREY,
    WHITE,
    Bgr,
    Circle,
    Drawing,
    Item,
    Line,
    Rect,
    Text,
    marker_cells,
)
from calibration.errors import PrintLayoutError
from vision.markers import ARUCO_DICTIONARY, QUIET_ZONE_FRACTION, MarkerLayout, layout_for

# --- the kit (board units: Dition = disc diameter, Domination = cell) --------------------------
DITION_SIZE = 20.0
DITION_INNER = (3.0, 17.0)
DITION_LINE_WIDTH = 0.06
DOMINATION_SIZE = 8
DOMINATION_LINE_WIDTH = 0.04
FILES = "abcdefgh"
CUT_CELLS = frozenset({"a1", "b1", "a2", "g1", "h1", "h2", "a7", "a8", "b8", "g8", "h8", "h7"})
#: the plate (printed sheet) in board units (x0, y0, x1, y1), as the simulated table renders it
PLATE_EXTENT: dict[str, tuple[float, float, float, float]] = {
    "dition": (-2.8, -2.8, 22.8, 22.8),
    "domination": (-0.45, -0.45, 8.45, 8.45),
}

#: BGR colours of the printed kit (the simulated table uses the same)
DITION_PAPER_BGR: Bgr = (196, 214, 226)
INK_BGR: Bgr = (38, 36, 34)
DOMINATION_PLATE_BGR: Bgr = (120, 148, 178)
DOMINATION_CELL_BGR: Bgr = (205, 222, 232)

#: accepted printed sizes (mm per board unit)
DISC_MM_RANGE = (10.0, 80.0)
CELL_MM_RANGE = (15.0, 80.0)


@dataclass(frozen=True)
class BoardPrint:
    """Options of a printed board. `tint` paints the plate and cells in the kit's colours (what
    the vision is tuned on); without it the paper stays white and only ink is printed."""

    tint: bool = True
    labels: bool = True


def _check_size(name: str, value: float, allowed: tuple[float, float]) -> float:
    if not (isinstance(value, (int, float)) and math.isfinite(value)
            and allowed[0] <= value <= allowed[1]):
        raise PrintLayoutError(f"{name} must be between {allowed[0]:g} and {allowed[1]:g} mm, "
                               f"got {value!r}")
    return float(value)


def _markers(layout: MarkerLayout, to_mm: float, origin: tuple[float, float]) -> list[Item]:
    import cv2

    dictionary = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, ARUCO_DICTIONARY))
    cells = dictionary.markerSize + 2
    side = layout.side_board * to_mm
    quiet = side * QUIET_ZONE_FRACTION
    items: list[Item] = []
    for marker_id, (cx, cy) in zip(layout.ids, layout.centres_board):
        x0 = origin[0] + cx * to_mm - side / 2
        y0 = origin[1] + cy * to_mm - side / 2
        items.append(Rect((x0 - quiet, y0 - quiet), (side + 2 * quiet, side + 2 * quiet),
                          fill_bgr=WHITE, tag=f"quiet-zone:{marker_id}"))
        bits = cv2.aruco.generateImageMarker(dictionary, int(marker_id), cells)
        items += marker_cells(bits, (x0, y0), side, tag=f"marker:{marker_id}")
    return items


def _plate(game: str, u: float, options: BoardPrint, tint_bgr: tuple[int, int, int]) -> tuple[
        tuple[float, float], tuple[float, float], Callable[[float, float], tuple[float, float]],
        list[Item]]:
    """The plate of a board at `u` mm per board unit: its origin and size in mm, the board-unit
    to mm mapping, and the plate drawn (tinted, or outlined for ink-only prints)."""
    x0, y0, x1, y1 = PLATE_EXTENT[game]
    origin = (-x0 * u, -y0 * u)
    size = ((x1 - x0) * u, (y1 - y0) * u)

    def mm(x: float, y: float) -> tuple[float, float]:
        return origin[0] + x * u, origin[1] + y * u

    items: list[Item] = []
    if options.tint:
        items.append(Rect((0.0, 0.0), size, fill_bgr=tint_bgr, tag="plate"))
    else:
        items.append(Rect((0.0, 0.0), size, stroke_bgr=GREY, stroke_mm=0.2, tag="plate"))
    return origin, size, mm, items


def dition_board(disc_mm: float, options: BoardPrint = BoardPrint()) -> Drawing:
    """The Dition board for discs of `disc_mm` diameter: outer square [0,20]^2 and inner square
    [3,17]^2 as lines of 0.06 disc centred on the edges, markers 0..3 outside the corners."""
    u = _check_size("disc_mm", disc_mm, DISC_MM_RANGE)
    origin, size, mm, items = _plate("dition", u, options, DITION_PAPER_BGR)
    for lo, hi in ((0.0, DITION_SIZE), DITION_INNER):
        items.append(Rect(mm(lo, lo), ((hi - lo) * u, (hi - lo) * u), stroke_bgr=INK_BGR,
                          stroke_mm=DITION_LINE_WIDTH * u, tag=f"square:{lo:g}-{hi:g}"))
    items += _markers(layout_for("dition"), u, origin)
    if options.labels:
        items.append(Text(mm(DITION_SIZE / 2, DITION_SIZE + 1.55),
                          f"Dition - discs of {u:g} mm - playing area {DITION_SIZE * u:g} mm "
                          "square - print at 100%", max(3.0, 0.3 * u), GREY, anchor="middle",
                          tag="label"))
    notes = ((f"Board for discs of {u:g} mm: the outer square measures {DITION_SIZE * u:g} mm "
             f"between line centres, the inner one {(DITION_INNER[1] - DITION_INNER[0]) * u:g} mm."),)
    return Drawing(size, tuple(items), title=f"Dition board, {u:g} mm discs", notes=notes,
                   mm_per_unit=u, board_origin_mm=origin)


def _grid_segments(cells: set[tuple[int, int]]
                   ) -> list[tuple[tuple[float, float], tuple[float, float]]]:
    """The borders of the given unit cells (x, y = top-left corner) as maximal straight lines,
    each drawn once (cells sharing a border share its line)."""
    horizontal = {(x, y) for x, y in cells} | {(x, y + 1) for x, y in cells}  # edge from (x, y)
    vertical = {(x, y) for x, y in cells} | {(x + 1, y) for x, y in cells}
    out = []
    for y in sorted({y for _, y in horizontal}):
        xs = sorted(x for x, yy in horizontal if yy == y)
        for run in _runs(xs):
            out.append(((float(run[0]), float(y)), (float(run[-1] + 1), float(y))))
    for x in sorted({x for x, _ in vertical}):
        ys = sorted(y for xx, y in vertical if xx == x)
        for run in _runs(ys):
            out.append(((float(x), float(run[0])), (float(x), float(run[-1] + 1))))
    return out


def _runs(values: list[int]) -> list[list[int]]:
    runs: list[list[int]] = []
    for v in values:
        if runs and v == runs[-1][-1] + 1:
            runs[-1].append(v)
        else:
            runs.append([v])
    return runs


def domination_board(cell_mm: float, options: BoardPrint = BoardPrint()) -> Drawing:
    """The Domination board with cells of `cell_mm`: 52 cells (corners cut), grid lines of 0.04
    cell centred on the borders, markers 4..7 centred in the cut corner cells a8, h8, h1, a1."""
    u = _check_size("cell_mm", cell_mm, CELL_MM_RANGE)
    origin, size, mm, items = _plate("domination", u, options, DOMINATION_PLATE_BGR)
    cells = [(f, r) for r in range(8, 0, -1) for f in range(8) if f"{FILES[f]}{r}" not in CUT_CELLS]
    for f, r in cells:
        items.append(Rect(mm(f, 8 - r), (u, u),
                          fill_bgr=DOMINATION_CELL_BGR if options.tint else WHITE,
                          tag=f"cell:{FILES[f]}{r}"))
    for (xa, ya), (xb, yb) in _grid_segments({(f, 8 - r) for f, r in cells}):
        items.append(Line(mm(xa, ya), mm(xb, yb), DOMINATION_LINE_WIDTH * u, INK_BGR,
                          tag="grid", cap="square"))
    items += _markers(layout_for("domination"), u, origin)
    if options.labels:
        size_mm = min(0.25 * u, 0.7 * -PLATE_EXTENT["domination"][0] * u)
        for f in range(1, 7):
            items.append(Text(mm(f + 0.5, 8 + 0.33), FILES[f], size_mm, WHITE, anchor="middle",
                              tag="label"))
        for r in range(2, 8):
            items.append(Text(mm(-0.22, 8 - r + 0.6), str(r), size_mm, WHITE, anchor="middle",
                              tag="label"))
    return Drawing(size, tuple(items), title=f"Domination board, {u:g} mm cells",
                   notes=(f"Cells of {u:g} mm; the 8 x 8 frame measures {8 * u:g} mm.",),
                   mm_per_unit=u, board_origin_mm=origin)


def measuring_card(disc_mm: float) -> Drawing:
    """One A4 page: a disc and its range circle (3 diameters) at true size, with instructions."""
    u = _check_size("disc_mm", disc_mm, DISC_MM_RANGE)
    pw, ph = 210.0, 297.0
    if 5 * u > pw - 30:
        raise PrintLayoutError(f"a card for {u:g} mm discs does not fit A4 (at most "
                               f"{(pw - 30) / 5:.0f} mm)")
    cx, cy = pw / 2 - u, 62.0 + 1.5 * u
    items: list[Item] = [
        Text((15, 20), f"Dition measuring card - discs of {u:g} mm", 7.0, BLACK, tag="title"),
        Text((15, 29), "Print at 100% ('actual size'). The bar below must measure 100 mm:", 3.5,
             BLACK),
        Line((15, 37), (115, 37), 0.4, BLACK, tag="scale-bar"),
    ]
    for k in range(11):
        items.append(Line((15 + 10 * k, 34.5 if k % 5 else 33.5), (15 + 10 * k, 37), 0.25, BLACK))
    items += [
        Circle((cx, cy), 1.5 * u, fill_bgr=(235, 235, 235), stroke_bgr=BLACK, stroke_mm=0.35,
               dash_mm=(2.0, 1.5), tag="range-circle"),
        Circle((cx, cy), 0.5 * u, fill_bgr=WHITE, stroke_bgr=BLACK, stroke_mm=0.35, tag="disc"),
        Circle((cx, cy), 0.125 * u, fill_bgr=GREY, tag="centre-dot"),
        # a neighbour just touching the range circle: centre distance 2 diameters
        Circle((cx + 2 * u, cy), 0.5 * u, stroke_bgr=GREY, stroke_mm=0.3, dash_mm=(1.0, 1.0),
               tag="neighbour"),
        Line((cx, cy), (cx + 2 * u, cy), 0.2, GREY, dash_mm=(1.0, 1.0), tag="distance"),
        Text((cx + u, cy - 0.2 * u), "2 diameters", 3.0, GREY, anchor="middle"),
    ]
    y = cy + 1.5 * u + 14
    lines = [
        "Range circle: the dashed circle, 3 disc diameters across, around the disc in its centre.",
        "A disc is WITHIN RANGE of another when it touches that disc's range circle, that is",
        "when their centres are less than 2 diameters apart (the grey neighbour is exactly at 2).",
        "",
        "To check by eye, cut out the range circle, centre it on one disc and see whether the",
        "other disc reaches into it. The measuring test of the rules agrees: lay a third disc",
        "across the gap between the two; if it rests on both at once, the gap is less than one",
        "diameter and the two discs are within range of each other.",
        "",
        "A disc within range of 4 or more opponent discs disappears after a placement.",
        f"Your discs should measure {u:g} mm across: check one against the disc drawn above.",
    ]
    items += [Text((15, y + 6 * i), line, 3.5, BLACK, tag="instructions")
              for i, line in enumerate(lines) if line]
    return Drawing((pw, ph), tuple(items), title=f"Dition measuring card, {u:g} mm discs",
                   mm_per_unit=u, board_origin_mm=(cx, cy), page=True)
