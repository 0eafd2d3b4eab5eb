"""PDF output of a `Drawing` at true scale, tiled over A4 or Letter pages when it is larger.

A drawing that fits the printable area of one page (either orientation) is printed centred on
one page. A larger one is cut into tiles: each page shows `content` mm of the drawing; neighbours
repeat an overlap strip of `overlap_mm`, marked with a dashed "lay the next page's edge here" line
and registration crosses in the margins at the same drawing position on both pages, so that the
assembled board is continuous. An index page first shows the whole board with the page grid.
Page labels and a scale-check bar sit in the margins, outside the drawing.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from calibration.drawing import (
    BLACK,
    GREY,
    Circle,
    Drawing,
    Item,
    Line,
    PointMm,
    Rect,
    Text,
    bounds_mm,
)
from calibration.errors import PrintLayoutError

if TYPE_CHECKING:
    from reportlab.pdfgen.canvas import Canvas

PT_PER_MM = 72.0 / 25.4
#: paper name -> (width, height) in mm, portrait
PAPER_MM: dict[str, tuple[float, float]] = {"a4": (210.0, 297.0), "letter": (215.9, 279.4)}


@dataclass(frozen=True)
class PageLayout:
    """How a drawing is put on paper. Margins cover what printers cannot print (about 5 mm) and
    leave room for the page labels."""

    paper: str = "a4"
    margin_mm: float = 12.0
    overlap_mm: float = 12.0

    def __post_init__(self) -> None:
        if self.paper not in PAPER_MM:
            raise PrintLayoutError(f"unknown paper {self.paper!r}: expected one of "
                                   f"{', '.join(sorted(PAPER_MM))}")
        if not 5.0 <= self.margin_mm <= 40.0:
            raise PrintLayoutError(f"margin_mm must be 5..40 mm, got {self.margin_mm}")
        if not 5.0 <= self.overlap_mm <= 40.0:
            raise PrintLayoutError(f"overlap_mm must be 5..40 mm, got {self.overlap_mm}")


@dataclass(frozen=True)
class Tile:
    """One printed page of a tiled drawing: the drawing's rectangle it shows.

    `origin_mm` is the drawing point printed at the page's content corner (margin, margin);
    `size_mm` the page's content area. `row`, `col` count from 0 at the drawing's top-left.
    """

    row: int
    col: int
    origin_mm: PointMm
    size_mm: PointMm
    page_size_mm: PointMm
    rows: int
    cols: int

    @property
    def label(self) -> str:
        return f"{chr(ord('A') + self.row)}{self.col + 1}"


@dataclass(frozen=True)
class PdfPlan:
    """What `write_pdf` put on paper: page size, the tiles (empty for a single page) and the
    position of the drawing's origin on a single page."""

    page_size_mm: PointMm
    pages: int
    tiles: tuple[Tile, ...]
    single_page_origin_mm: PointMm | None
    index_page: bool


def plan_pages(drawing_size_mm: PointMm, layout: PageLayout) -> PdfPlan:
    """Choose orientation and tiling so the drawing prints at true scale on as few pages as
    possible (ties go to portrait)."""
    w, h = drawing_size_mm
    if not (w > 0 and h > 0 and math.isfinite(w) and math.isfinite(h)):
        raise PrintLayoutError(f"drawing size must be positive, got {drawing_size_mm}")
    pw, ph = PAPER_MM[layout.paper]
    m = layout.margin_mm
    for page in ((pw, ph), (ph, pw)):
        cw, ch = page[0] - 2 * m, page[1] - 2 * m
        if w <= cw + 1e-9 and h <= ch + 1e-9:
            origin = ((page[0] - w) / 2, (page[1] - h) / 2)
            return PdfPlan(page, 1, (), origin, False)
    best: tuple[int, tuple[float, float], int, int] | None = None
    for page in ((pw, ph), (ph, pw)):
        cw, ch = page[0] - 2 * m, page[1] - 2 * m
        cols = _count(w, cw, layout.overlap_mm)
        rows = _count(h, ch, layout.overlap_mm)
        if best is None or rows * cols < best[0]:
            best = (rows * cols, page, rows, cols)
    assert best is not None
    _, page, rows, cols = best
    cw, ch = page[0] - 2 * m, page[1] - 2 * m
    # centre the drawing in the tiled area so the blank rest is split between both sides
    span_w = cols * cw - (cols - 1) * layout.overlap_mm
    span_h = rows * ch - (rows - 1) * layout.overlap_mm
    x0, y0 = -(span_w - w) / 2, -(span_h - h) / 2
    tiles = tuple(
        Tile(r, c, (x0 + c * (cw - layout.overlap_mm), y0 + r * (ch - layout.overlap_mm)),
             (cw, ch), page, rows, cols)
        for r in range(rows) for c in range(cols)
    )
    return PdfPlan(page, len(tiles) + 1, tiles, None, True)


def _count(length: float, content: float, overlap: float) -> int:
    if length <= content:
        return 1
    return math.ceil((length - overlap) / (content - overlap) - 1e-9)


def write_pdf(drawing: Drawing, path: str | Path, layout: PageLayout = PageLayout()) -> PdfPlan:
    """Write the drawing at true scale (1 mm = 72/25.4 pt) to `path`; returns the page plan."""
    from reportlab.pdfgen.canvas import Canvas

    if drawing.page:
        plan = PdfPlan(drawing.size_mm, 1, (), (0.0, 0.0), False)
    else:
        plan = plan_pages(drawing.size_mm, layout)
    pw, ph = plan.page_size_mm
    canvas = Canvas(str(path), pagesize=(pw * PT_PER_MM, ph * PT_PER_MM), pageCompression=0)
    canvas.setTitle(drawing.title)
    canvas.setCreator("tabletop-referee")
    canvas.setSubject("Print at 100% / actual size; do not fit to page.")
    if not plan.tiles:
        assert plan.single_page_origin_mm is not None
        ox, oy = plan.single_page_origin_mm
        _draw_items(canvas, drawing.items, _to_page(ph, ox, oy, 1.0), 1.0)
        canvas.showPage()
    else:
        _index_page(canvas, drawing, plan, layout)
        for number, tile in enumerate(plan.tiles, start=2):
            _tile_page(canvas, drawing, tile, layout, number, plan.pages)
    canvas.save()
    return plan


Transform = Callable[[PointMm], tuple[float, float]]


def _to_page(page_h_mm: float, ox_mm: float, oy_mm: float, scale: float) -> Transform:
    """Drawing mm -> PDF points on a page whose drawing origin sits at (ox, oy) mm from the
    page's top-left, drawn `scale` times true size (PDF y runs up)."""

    def f(p: PointMm) -> tuple[float, float]:
        return ((ox_mm + scale * p[0]) * PT_PER_MM, (page_h_mm - oy_mm - scale * p[1]) * PT_PER_MM)

    return f


def _rgb(bgr: tuple[int, int, int]) -> tuple[float, float, float]:
    return bgr[2] / 255.0, bgr[1] / 255.0, bgr[0] / 255.0



def _paint(canvas: Any, item: Any, k: float) -> tuple[bool, bool]:
    """Set the fill and stroke of a filled/outlined item; (fill?, stroke?)."""
    fill = item.fill_bgr is not None
    stroke = item.stroke_bgr is not None and item.stroke_mm > 0
    if fill:
        canvas.setFillColorRGB(*_rgb(item.fill_bgr))
    if stroke:
        canvas.setStrokeColorRGB(*_rgb(item.stroke_bgr))
        canvas.setLineWidth(item.stroke_mm * k)
    return fill, stroke

def _draw_items(canvas: Canvas, items: tuple[Item, ...] | list[Item], to_pt: Transform,
                scale: float) -> None:
    k = PT_PER_MM * scale
    for item in items:
        canvas.saveState()
        if isinstance(item, Rect):
            x0, y1 = to_pt(item.origin_mm)
            x1, y0 = to_pt((item.origin_mm[0] + item.size_mm[0], item.origin_mm[1] + item.size_mm[1]))
            fill, stroke = _paint(canvas, item, k)
            canvas.setLineJoin(0)
            canvas.rect(x0, y0, x1 - x0, y1 - y0, stroke=int(stroke), fill=int(fill))
        elif isinstance(item, Line):
            canvas.setStrokeColorRGB(*_rgb(item.colour_bgr))
            canvas.setLineWidth(item.width_mm * k)
            canvas.setLineCap(2 if item.cap == "square" else 0)
            if item.dash_mm:
                canvas.setDash(item.dash_mm[0] * k, item.dash_mm[1] * k)
            (xa, ya), (xb, yb) = to_pt(item.start_mm), to_pt(item.end_mm)
            canvas.line(xa, ya, xb, yb)
        elif isinstance(item, Circle):
            fill, stroke = _paint(canvas, item, k)
            if stroke and item.dash_mm:
                canvas.setDash(item.dash_mm[0] * k, item.dash_mm[1] * k)
            cx, cy = to_pt(item.centre_mm)
            canvas.circle(cx, cy, item.radius_mm * k, stroke=int(stroke), fill=int(fill))
        else:
            canvas.setFillColorRGB(*_rgb(item.colour_bgr))
            canvas.setFont("Helvetica", item.size_mm * k)
            x, y = to_pt(item.position_mm)
            if item.anchor == "middle":
                canvas.drawCentredString(x, y, item.text)
            elif item.anchor == "end":
                canvas.drawRightString(x, y, item.text)
            else:
                canvas.drawString(x, y, item.text)
        canvas.restoreState()


def _scale_bar(x_mm: float, y_mm: float, length_mm: float) -> list[Item]:
    """A bar `length_mm` long with 10 mm ticks, its left end at (x, y): for checking the print."""
    items: list[Item] = [Line((x_mm, y_mm), (x_mm + length_mm, y_mm), 0.3, BLACK, tag="scale-bar")]
    for k in range(int(length_mm // 10) + 1):
        tick = 1.6 if k % 5 == 0 else 1.0
        items.append(Line((x_mm + 10 * k, y_mm - tick), (x_mm + 10 * k, y_mm), 0.2, BLACK))
    items.append(Text((x_mm + length_mm + 2, y_mm), f"{length_mm:g} mm: check with a ruler",
                      2.5, GREY))
    return items


def _cross(x_mm: float, y_mm: float, arm_mm: float = 3.0) -> list[Item]:
    return [Line((x_mm - arm_mm, y_mm), (x_mm + arm_mm, y_mm), 0.2, BLACK, tag="registration"),
            Line((x_mm, y_mm - arm_mm), (x_mm, y_mm + arm_mm), 0.2, BLACK, tag="registration")]


def _tile_page(canvas: Canvas, drawing: Drawing, tile: Tile, layout: PageLayout, number: int,
               pages: int) -> None:
    pw, ph = tile.page_size_mm
    m = layout.margin_mm
    cw, ch = tile.size_mm
    tx, ty = tile.origin_mm
    # the drawing, clipped to the content area
    window = (tx, ty, tx + cw, ty + ch)
    visible = [it for it in drawing.items if _overlaps(bounds_mm(it), window)]
    canvas.saveState()
    clip = canvas.beginPath()
    clip.rect(m * PT_PER_MM, m * PT_PER_MM, cw * PT_PER_MM, ch * PT_PER_MM)
    canvas.clipPath(clip, stroke=0, fill=0)
    _draw_items(canvas, visible, _to_page(ph, m - tx, m - ty, 1.0), 1.0)
    canvas.restoreState()
    # marks in page mm (top-left origin)
    ov = layout.overlap_mm
    marks: list[Item] = []
    if tile.col + 1 < tile.cols:  # overlap strip at the right: the next page's edge goes here
        x = m + cw - ov
        marks.append(Line((x, m), (x, m + ch), 0.25, GREY, dash_mm=(3.0, 2.0), tag="overlap"))
        marks += _cross(m + cw - ov / 2, m / 2) + _cross(m + cw - ov / 2, ph - m / 2)
        marks.append(Text((x - 1, m + ch + 4), f"lay page {_label(tile.row, tile.col + 1)} "
                          "here", 2.5, GREY, anchor="end"))
    if tile.row + 1 < tile.rows:  # overlap strip at the bottom
        y = m + ch - ov
        marks.append(Line((m, y), (m + cw, y), 0.25, GREY, dash_mm=(3.0, 2.0), tag="overlap"))
        marks += _cross(m / 2, m + ch - ov / 2) + _cross(pw - m / 2, m + ch - ov / 2)
        # inside the strip the page below will cover
        marks.append(Text((m + cw / 2, m + ch - ov / 2 + 1.0),
                          f"lay page {_label(tile.row + 1, tile.col)} over this strip", 2.5, GREY,
                          anchor="middle"))
    if tile.col > 0:  # this page's left margin is cut off: crop marks at the content edge
        marks += _crop_marks_vertical(m, m, ch)
        marks += _cross(m + ov / 2, m / 2) + _cross(m + ov / 2, ph - m / 2)
    if tile.row > 0:
        marks += _crop_marks_horizontal(m, m, cw)
        marks += _cross(m / 2, m + ov / 2) + _cross(pw - m / 2, m + ov / 2)
    cut = []
    if tile.col > 0:
        cut.append("left")
    if tile.row > 0:
        cut.append("top")
    cut_text = f"; cut off the {' and '.join(cut)} margin" if cut else ""
    marks.append(Text((m, ph - m / 2 + 1.2),
                      f"{drawing.title} - page {tile.label} ({number}/{pages}): row "
                      f"{tile.row + 1} of {tile.rows}, column {tile.col + 1} of {tile.cols}"
                      f"{cut_text}", 2.6, BLACK, tag="page-label"))
    marks += _scale_bar(m + (12.0 if tile.col > 0 else 0.0), m / 2 + 1.5, 50.0)
    _draw_items(canvas, marks, _to_page(ph, 0.0, 0.0, 1.0), 1.0)
    canvas.showPage()


def _label(row: int, col: int) -> str:
    return f"{chr(ord('A') + row)}{col + 1}"


def _crop_marks_vertical(x_mm: float, y0_mm: float, length_mm: float) -> list[Item]:
    return [Line((x_mm, y0_mm - 8.0), (x_mm, y0_mm - 2.0), 0.25, BLACK, tag="cut"),
            Line((x_mm, y0_mm + length_mm + 2.0), (x_mm, y0_mm + length_mm + 8.0), 0.25, BLACK,
                 tag="cut")]


def _crop_marks_horizontal(y_mm: float, x0_mm: float, length_mm: float) -> list[Item]:
    return [Line((x0_mm - 8.0, y_mm), (x0_mm - 2.0, y_mm), 0.25, BLACK, tag="cut"),
            Line((x0_mm + length_mm + 2.0, y_mm), (x0_mm + length_mm + 8.0, y_mm), 0.25, BLACK,
                 tag="cut")]


def _overlaps(b: tuple[float, float, float, float], w: tuple[float, float, float, float]) -> bool:
    return b[0] < w[2] and b[2] > w[0] and b[1] < w[3] and b[3] > w[1]


def _index_page(canvas: Canvas, drawing: Drawing, plan: PdfPlan, layout: PageLayout) -> None:
    pw, ph = plan.page_size_mm
    m = layout.margin_mm
    first = plan.tiles[0]
    rows, cols = first.rows, first.cols
    cw, ch = first.size_mm
    ov = layout.overlap_mm
    span_w = cols * cw - (cols - 1) * ov
    span_h = rows * ch - (rows - 1) * ov
    box_w, box_h = pw - 2 * m, ph - 2 * m - 95.0
    scale = min(box_w / span_w, box_h / span_h)
    ox = m + (box_w - span_w * scale) / 2 - first.origin_mm[0] * scale
    oy = m + 28.0 - first.origin_mm[1] * scale
    header: list[Item] = [
        Text((m, m + 6), drawing.title, 6.0, BLACK, tag="title"),
        Text((m, m + 13), f"{len(plan.tiles)} pages ({rows} rows x {cols} columns) on "
             f"{layout.paper.upper()}, overlap {ov:g} mm. This is page 1 (the index).", 3.2,
             BLACK),
    ]
    _draw_items(canvas, header, _to_page(ph, 0, 0, 1.0), 1.0)
    # the whole drawing, small, with the page grid over it
    _draw_items(canvas, [it for it in drawing.items if not isinstance(it, Text)],
                _to_page(ph, ox, oy, scale), scale)
    grid: list[Item] = []
    # the markers' white squares on the index page: a page label must not cover one
    markers = [(ox + it.origin_mm[0] * scale, oy + it.origin_mm[1] * scale,
                it.size_mm[0] * scale, it.size_mm[1] * scale)
               for it in drawing.items if isinstance(it, Rect) and it.tag.startswith("quiet-zone")]
    for tile in plan.tiles:
        x, y = ox + tile.origin_mm[0] * scale, oy + tile.origin_mm[1] * scale
        grid.append(Rect((x, y), (cw * scale, ch * scale), None, (40, 40, 220), 0.35,
                         tag="index-tile"))
        size = max(3.0, min(8.0, ch * scale / 4))
        grid.append(Text(_label_spot(x, y, cw * scale, ch * scale, tile.label, size, markers),
                         tile.label, size, (40, 40, 220), anchor="middle", tag="index-label"))
    _draw_items(canvas, grid, _to_page(ph, 0, 0, 1.0), 1.0)
    y = oy + first.origin_mm[1] * scale + span_h * scale + 9
    lines = [
        "Print every page at 100% ('actual size'; never 'fit to page'); check the 50 mm bar.",
        "Lay the pages out as the grid shows: rows A, B, ... from the top, columns 1, 2, ...",
        "Cut off the left margin of every page not in column 1 and the top margin of every",
        "page not in row A, exactly on the corner marks. Lay each page over its left and upper",
        "neighbour so that its cut edge sits on their dashed line and the crosses in the",
        "margins coincide; the drawing continues across. Tape from the back.",
        *drawing.notes,
    ]
    text: list[Item] = [Text((m, y + 5.2 * i), line, 3.2, BLACK) for i, line in enumerate(lines)]
    text += _scale_bar(m, ph - m / 2 - 1.0, 50.0)
    _draw_items(canvas, text, _to_page(ph, 0, 0, 1.0), 1.0)
    canvas.showPage()


def label_box(position_mm: tuple[float, float], text: str, size_mm: float) -> tuple[float, ...]:
    """(x, y, w, h) that a middle-anchored label of Helvetica at `size_mm` covers (the widest
    capital or digit is 0.72 em; the cap height 0.72 em above the baseline)."""
    w = 0.72 * size_mm * len(text)
    return (position_mm[0] - w / 2, position_mm[1] - 0.72 * size_mm, w, 0.72 * size_mm)


def _overlaps(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    return a[0] < b[0] + b[2] and b[0] < a[0] + a[2] and a[1] < b[1] + b[3] and b[1] < a[1] + a[3]


def _label_spot(x: float, y: float, w: float, h: float, text: str, size: float,
                avoid: list[tuple[float, float, float, float]]) -> tuple[float, float]:
    """Where a page's label goes on the index: its centre, or else the first of a few spots
    inside the page that covers no marker."""
    spots = [(0.5, 0.5), (0.5, 0.3), (0.5, 0.75), (0.3, 0.5), (0.7, 0.5), (0.3, 0.3),
             (0.7, 0.3), (0.3, 0.75), (0.7, 0.75)]
    for fx, fy in spots:
        point = (x + fx * w, y + fy * h + 0.36 * size)
        if not any(_overlaps(label_box(point, text, size), m) for m in avoid):
            return point
    return (x + w / 2, y + h / 2 + 0.36 * size)


__all__ = ["PAPER_MM", "PT_PER_MM", "PageLayout", "PdfPlan", "Tile", "plan_pages", "write_pdf"]
