"""A tiny vector drawing model in millimetres, and its PNG and SVG back-ends.

Every printed item of the kit (boards, ChArUco target, measuring card) is first built as a
`Drawing`: a size in mm and a tuple of primitives in mm, origin top-left, x to the right, y down
(the board frames' orientation). The same drawing then becomes a PDF (`calibration.pdf`), an SVG
or a PNG, so the three can never disagree. Colours are BGR tuples of 0..255 ints, as everywhere in
the code.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from html import escape
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

Bgr = tuple[int, int, int]
PointMm = tuple[float, float]

BLACK: Bgr = (0, 0, 0)
WHITE: Bgr = (255, 255, 255)
GREY: Bgr = (128, 128, 128)
LIGHT_GREY: Bgr = (200, 200, 200)
MM_PER_INCH = 25.4


@dataclass(frozen=True)
class Rect:
    """An axis-aligned rectangle; `origin_mm` is its top-left corner.

    A stroke is centred on the rectangle's edge (as PDF and SVG stroke paths), so a line of width
    w drawn around [0, 20]^2 covers [-w/2, w/2] across the left edge.
    """

    origin_mm: PointMm
    size_mm: PointMm
    fill_bgr: Bgr | None = None
    stroke_bgr: Bgr | None = None
    stroke_mm: float = 0.0
    tag: str = ""


@dataclass(frozen=True)
class Line:
    start_mm: PointMm
    end_mm: PointMm
    width_mm: float
    colour_bgr: Bgr = BLACK
    dash_mm: tuple[float, float] | None = None
    tag: str = ""
    #: "butt" ends exactly at the end points; "square" extends by half the width
    cap: Literal["butt", "square"] = "butt"


@dataclass(frozen=True)
class Circle:
    centre_mm: PointMm
    radius_mm: float
    fill_bgr: Bgr | None = None
    stroke_bgr: Bgr | None = None
    stroke_mm: float = 0.0
    dash_mm: tuple[float, float] | None = None
    tag: str = ""


@dataclass(frozen=True)
class Text:
    """One line of text; `position_mm` is the baseline point given by `anchor`."""

    position_mm: PointMm
    text: str
    size_mm: float = 3.5
    colour_bgr: Bgr = BLACK
    anchor: Literal["start", "middle", "end"] = "start"
    tag: str = ""


Item = Rect | Line | Circle | Text


@dataclass(frozen=True)
class Drawing:
    """A printable item: its size in mm and its primitives, drawn in order.

    For a board, `board_origin_mm` is where the board frame's origin (0, 0) is printed and
    `mm_per_unit` the printed length of one board unit: board point p prints at
    `board_origin_mm + mm_per_unit * p`. `notes` are extra instructions for the index page.
    A `page` drawing is a whole sheet (margins included) and prints as exactly one page of its
    own size.
    """

    size_mm: PointMm
    items: tuple[Item, ...]
    title: str = ""
    notes: tuple[str, ...] = field(default=())
    mm_per_unit: float = 1.0
    board_origin_mm: PointMm = (0.0, 0.0)
    page: bool = False

    def board_to_mm(self, point_board: PointMm) -> PointMm:
        return (self.board_origin_mm[0] + self.mm_per_unit * point_board[0],
                self.board_origin_mm[1] + self.mm_per_unit * point_board[1])

    def tagged(self, tag: str) -> list[Item]:
        """The items carrying `tag` (markers, board lines, ...): what tests measure."""
        return [item for item in self.items if item.tag == tag]


def bounds_mm(item: Item) -> tuple[float, float, float, float]:
    """(x0, y0, x1, y1) of an item including half its stroke; text is approximated."""
    if isinstance(item, Rect):
        half = item.stroke_mm / 2 if item.stroke_bgr is not None else 0.0
        (x, y), (w, h) = item.origin_mm, item.size_mm
        return x - half, y - half, x + w + half, y + h + half
    if isinstance(item, Line):
        half = item.width_mm / 2
        (xa, ya), (xb, yb) = item.start_mm, item.end_mm
        return min(xa, xb) - half, min(ya, yb) - half, max(xa, xb) + half, max(ya, yb) + half
    if isinstance(item, Circle):
        r = item.radius_mm + (item.stroke_mm / 2 if item.stroke_bgr is not None else 0.0)
        (cx, cy) = item.centre_mm
        return cx - r, cy - r, cx + r, cy + r
    width = 0.55 * item.size_mm * len(item.text)
    x, y = item.position_mm
    x0 = x - {"start": 0.0, "middle": width / 2, "end": width}[item.anchor]
    return x0, y - item.size_mm, x0 + width, y + 0.3 * item.size_mm


def translated(item: Item, dx_mm: float, dy_mm: float) -> Item:
    """The same item moved by (dx, dy) mm."""
    from dataclasses import replace

    def move(p: PointMm) -> PointMm:
        return (p[0] + dx_mm, p[1] + dy_mm)

    if isinstance(item, Rect):
        return replace(item, origin_mm=move(item.origin_mm))
    if isinstance(item, Line):
        return replace(item, start_mm=move(item.start_mm), end_mm=move(item.end_mm))
    if isinstance(item, Circle):
        return replace(item, centre_mm=move(item.centre_mm))
    return replace(item, position_mm=move(item.position_mm))


def marker_cells(bits: npt.NDArray[np.uint8], origin_mm: PointMm, side_mm: float,
                 *, tag: str) -> list[Rect]:
    """An ArUco marker as vector rectangles: a black square of `side_mm` (the marker's outer
    border) and white rectangles for the runs of white cells of each row.

    `bits` is the marker image with one pixel per cell including the black border, as
    `cv2.aruco.generateImageMarker(dictionary, id, n_cells)` returns it (0 = black).
    """
    n = int(bits.shape[0])
    cell = side_mm / n
    x0, y0 = origin_mm
    rects = [Rect((x0, y0), (side_mm, side_mm), fill_bgr=BLACK, tag=tag)]
    for row in range(n):
        col = 0
        while col < n:
            if bits[row, col] == 0:
                col += 1
                continue
            start = col
            while col < n and bits[row, col] != 0:
                col += 1
            rects.append(Rect((x0 + start * cell, y0 + row * cell), ((col - start) * cell, cell),
                              fill_bgr=WHITE, tag=tag + ":cell"))
    return rects


# --- PNG back-end ------------------------------------------------------------------------------
_SHIFT = 4  # cv2 fixed-point sub-pixel bits
_ONE = 1 << _SHIFT


#: largest supersampled canvas (pixels) before `rasterize` falls back to no supersampling
_MAX_SUPERSAMPLED_PX = 40_000_000


def rasterize(drawing: Drawing, px_per_mm: float, *, supersample: int = 3,
              background_bgr: Bgr = WHITE) -> npt.NDArray[np.uint8]:
    """The drawing as a BGR image at `px_per_mm`; pixel (i, j) covers [i, i+1) x [j, j+1) of
    the drawing scaled to pixels.

    Axis-aligned rectangles and lines (the boards, markers and targets are made of nothing
    else) are painted with their exact area coverage, so edges are anti-aliased without bias.
    Circles, slanted lines and text are drawn by OpenCV at `supersample` times the resolution
    and area-averaged (very large images skip the supersampling).
    """
    import cv2
    import numpy as np

    w_px = max(1, round(drawing.size_mm[0] * px_per_mm))
    h_px = max(1, round(drawing.size_mm[1] * px_per_mm))
    k = max(1, int(supersample))
    if w_px * h_px * k * k > _MAX_SUPERSAMPLED_PX:
        k = 1
    image = np.empty((h_px * k, w_px * k, 3), np.uint8)
    image[:] = background_bgr
    for item in drawing.items:
        _raster_item(image, item, px_per_mm * k)
    if k > 1:
        image = cv2.resize(image, (w_px, h_px), interpolation=cv2.INTER_AREA)
    return image


def _fixed(p: PointMm, s: float) -> tuple[int, int]:
    # OpenCV puts pixel centres at integer coordinates: x_mm maps to x_mm * s - 0.5
    return round((p[0] * s - 0.5) * _ONE), round((p[1] * s - 0.5) * _ONE)


def _fill_box(image: npt.NDArray[np.uint8], x0: float, y0: float, x1: float, y1: float,
              colour: Bgr) -> None:
    """Blend `colour` over the box [x0, x1] x [y0, y1] (pixel units) by exact area coverage."""
    import numpy as np

    h, w = image.shape[:2]
    i0, i1 = max(math.floor(x0), 0), min(math.ceil(x1), w)
    j0, j1 = max(math.floor(y0), 0), min(math.ceil(y1), h)
    if i1 <= i0 or j1 <= j0:
        return
    xs = np.arange(i0, i1, dtype=np.float64)
    ys = np.arange(j0, j1, dtype=np.float64)
    cover_x = np.clip(np.minimum(xs + 1, x1) - np.maximum(xs, x0), 0.0, 1.0)
    cover_y = np.clip(np.minimum(ys + 1, y1) - np.maximum(ys, y0), 0.0, 1.0)
    alpha = np.outer(cover_y, cover_x)[..., None]
    region = image[j0:j1, i0:i1].astype(np.float32)
    region += (np.asarray(colour, np.float32) - region) * alpha
    image[j0:j1, i0:i1] = np.rint(region).astype(np.uint8)


def _raster_item(image: npt.NDArray[np.uint8], item: Item, s: float) -> None:
    import cv2

    if isinstance(item, Rect):
        (x, y), (w, h) = item.origin_mm, item.size_mm
        if item.fill_bgr is not None:
            _fill_box(image, x * s, y * s, (x + w) * s, (y + h) * s, item.fill_bgr)
        if item.stroke_bgr is not None and item.stroke_mm > 0:
            t = item.stroke_mm / 2
            c = item.stroke_bgr
            # top and bottom bands span the corners; the sides fill in between (no overlap)
            _fill_box(image, (x - t) * s, (y - t) * s, (x + w + t) * s, (y + t) * s, c)
            _fill_box(image, (x - t) * s, (y + h - t) * s, (x + w + t) * s, (y + h + t) * s, c)
            _fill_box(image, (x - t) * s, (y + t) * s, (x + t) * s, (y + h - t) * s, c)
            _fill_box(image, (x + w - t) * s, (y + t) * s, (x + w + t) * s, (y + h - t) * s, c)
        return
    if isinstance(item, Line):
        extend = item.width_mm / 2 if item.cap == "square" else 0.0
        for a, b in _dashes(item.start_mm, item.end_mm, item.dash_mm):
            _raster_band(image, a, b, item.width_mm / 2, item.colour_bgr, s, extend_mm=extend)
        return
    if isinstance(item, Circle):
        centre = _fixed(item.centre_mm, s)
        if item.fill_bgr is not None:
            # OpenCV fills pixels up to half a pixel beyond the radius: draw it that much smaller
            radius = max(0.0, item.radius_mm * s - 0.5)
            cv2.circle(image, centre, round(radius * _ONE), item.fill_bgr, -1, cv2.LINE_8, _SHIFT)
        if item.stroke_bgr is not None and item.stroke_mm > 0:
            n = max(32, int(2 * math.pi * item.radius_mm * s / 2))
            ring = [(item.centre_mm[0] + item.radius_mm * math.cos(2 * math.pi * k / n),
                     item.centre_mm[1] + item.radius_mm * math.sin(2 * math.pi * k / n))
                    for k in range(n + 1)]
            on, off = item.dash_mm if item.dash_mm else (1.0, 0.0)
            period = on + off
            step = 2 * math.pi * item.radius_mm / n
            for k in range(n):
                if (k * step) % period < on:
                    _raster_band(image, ring[k], ring[k + 1], item.stroke_mm / 2,
                                 item.stroke_bgr, s, extend_mm=0.0)
        return
    scale = item.size_mm * s / 22.0  # FONT_HERSHEY_SIMPLEX capitals are about 22 px at scale 1
    thickness = max(1, round(scale * 1.5))
    (w_px, _), _ = cv2.getTextSize(item.text, cv2.FONT_HERSHEY_SIMPLEX, scale, thickness)
    x_px, y_px = item.position_mm[0] * s, item.position_mm[1] * s
    x_px -= {"start": 0.0, "middle": w_px / 2, "end": float(w_px)}[item.anchor]
    cv2.putText(image, item.text, (round(x_px), round(y_px)), cv2.FONT_HERSHEY_SIMPLEX, scale,
                item.colour_bgr, thickness, cv2.LINE_AA)


def _raster_band(image: npt.NDArray[np.uint8], a: PointMm, b: PointMm, half_mm: float,
                 colour: Bgr, s: float, *, extend_mm: float) -> None:
    """A straight band of half-width `half_mm` from a to b (extended at both ends), filled:
    exactly when axis-aligned, else as an OpenCV polygon."""
    import cv2
    import numpy as np

    dx, dy = b[0] - a[0], b[1] - a[1]
    length = math.hypot(dx, dy)
    if length == 0:
        return
    ux, uy = dx / length, dy / length
    ax, ay = a[0] - ux * extend_mm, a[1] - uy * extend_mm
    bx, by = b[0] + ux * extend_mm, b[1] + uy * extend_mm
    if dx == 0 or dy == 0:
        x0, x1 = sorted((ax, bx))
        y0, y1 = sorted((ay, by))
        if dy == 0:
            y0, y1 = ay - half_mm, ay + half_mm
        else:
            x0, x1 = ax - half_mm, ax + half_mm
        _fill_box(image, x0 * s, y0 * s, x1 * s, y1 * s, colour)
        return
    nx, ny = -uy * half_mm, ux * half_mm
    quad = [(ax + nx, ay + ny), (bx + nx, by + ny), (bx - nx, by - ny), (ax - nx, ay - ny)]
    pts = np.array([_fixed(p, s) for p in quad], np.int32)
    cv2.fillPoly(image, [pts], colour, cv2.LINE_8, _SHIFT)


def _dashes(a: PointMm, b: PointMm,
            dash_mm: tuple[float, float] | None) -> list[tuple[PointMm, PointMm]]:
    if dash_mm is None:
        return [(a, b)]
    on, off = dash_mm
    length = math.hypot(b[0] - a[0], b[1] - a[1])
    if length == 0:
        return []
    ux, uy = (b[0] - a[0]) / length, (b[1] - a[1]) / length
    out = []
    t = 0.0
    while t < length:
        t1 = min(t + on, length)
        out.append(((a[0] + ux * t, a[1] + uy * t), (a[0] + ux * t1, a[1] + uy * t1)))
        t += on + off
    return out


# --- SVG back-end ------------------------------------------------------------------------------
def _svg_colour(bgr: Bgr | None) -> str:
    if bgr is None:
        return "none"
    b, g, r = bgr
    return f"#{r:02x}{g:02x}{b:02x}"


def _f(v: float) -> str:
    return f"{v:.4f}".rstrip("0").rstrip(".")


def to_svg(drawing: Drawing) -> str:
    """The drawing as an SVG document whose user unit is 1 mm (width/height given in mm)."""
    w, h = drawing.size_mm
    out = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        (f'<svg xmlns="http://www.w3.org/2000/svg" width="{_f(w)}mm" height="{_f(h)}mm" '
        f'viewBox="0 0 {_f(w)} {_f(h)}">'),
        f"<title>{escape(drawing.title)}</title>",
        f'<rect x="0" y="0" width="{_f(w)}" height="{_f(h)}" fill="#ffffff"/>',
    ]
    for item in drawing.items:
        out.append(_svg_item(item))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _svg_item(item: Item) -> str:
    if isinstance(item, Rect):
        (x, y), (w, h) = item.origin_mm, item.size_mm
        stroke = (f' stroke="{_svg_colour(item.stroke_bgr)}" stroke-width="{_f(item.stroke_mm)}"'
                  if item.stroke_bgr is not None else "")
        return (f'<rect x="{_f(x)}" y="{_f(y)}" width="{_f(w)}" height="{_f(h)}" '
                f'fill="{_svg_colour(item.fill_bgr)}"{stroke}/>')
    if isinstance(item, Line):
        dash = (f' stroke-dasharray="{_f(item.dash_mm[0])} {_f(item.dash_mm[1])}"'
                if item.dash_mm else "")
        (xa, ya), (xb, yb) = item.start_mm, item.end_mm
        return (f'<line x1="{_f(xa)}" y1="{_f(ya)}" x2="{_f(xb)}" y2="{_f(yb)}" '
                f'stroke="{_svg_colour(item.colour_bgr)}" stroke-width="{_f(item.width_mm)}" '
                f'stroke-linecap="{item.cap}"{dash}/>')
    if isinstance(item, Circle):
        stroke = (f' stroke="{_svg_colour(item.stroke_bgr)}" stroke-width="{_f(item.stroke_mm)}"'
                  if item.stroke_bgr is not None else "")
        dash = (f' stroke-dasharray="{_f(item.dash_mm[0])} {_f(item.dash_mm[1])}"'
                if item.dash_mm else "")
        (cx, cy) = item.centre_mm
        return (f'<circle cx="{_f(cx)}" cy="{_f(cy)}" r="{_f(item.radius_mm)}" '
                f'fill="{_svg_colour(item.fill_bgr)}"{stroke}{dash}/>')
    anchor = item.anchor
    return (f'<text x="{_f(item.position_mm[0])}" y="{_f(item.position_mm[1])}" '
            f'font-family="Helvetica, Arial, sans-serif" font-size="{_f(item.size_mm)}" '
            f'text-anchor="{anchor}" fill="{_svg_colour(item.colour_bgr)}">'
            f"{escape(item.text)}</text>")
