"""A small, independent PDF rasterizer for the print tests (no PDF renderer is installed).

It reads a page's content stream with pypdf and paints the path operators the kit uses (`re`,
`m`, `l`, `c`, `h`, fills, strokes, `cm`, `q`/`Q`, rectangular clips; text is skipped) with
OpenCV at a known scale. The tests then look at the PDF as a printer would: detect the ArUco
markers and ChArUco corners in the rendering and measure them in millimetres. It shares no code
with `calibration/`.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field

import cv2
import numpy as np
import pytest
from pypdf import PdfReader
from pypdf.generic import ContentStream
from reportlab.pdfgen.canvas import Canvas

PT_PER_MM = 72.0 / 25.4
SHIFT = 4


@dataclass
class _State:
    ctm: np.ndarray = field(default_factory=lambda: np.eye(3))
    fill: tuple[int, int, int] = (0, 0, 0)
    stroke: tuple[int, int, int] = (0, 0, 0)
    width_pt: float = 1.0
    clip: tuple[float, float, float, float] | None = None  # device px x0, y0, x1, y1

    def copy(self) -> _State:
        return _State(self.ctm.copy(), self.fill, self.stroke, self.width_pt, self.clip)


def page_size_mm(reader: PdfReader, index: int) -> tuple[float, float]:
    box = reader.pages[index].mediabox
    return float(box.width) / PT_PER_MM, float(box.height) / PT_PER_MM


def render_page(reader: PdfReader, index: int, px_per_mm: float, supersample: int = 3) -> np.ndarray:
    """Page `index` as a BGR image, `px_per_mm` pixels per millimetre, white paper (shapes
    filled without anti-aliasing at `supersample` times the resolution, then area-averaged)."""
    if supersample > 1:
        big = render_page(reader, index, px_per_mm * supersample, 1)
        w_mm, h_mm = page_size_mm(reader, index)
        size = (round(w_mm * px_per_mm), round(h_mm * px_per_mm))
        return cv2.resize(big, size, interpolation=cv2.INTER_AREA)
    page = reader.pages[index]
    w_mm, h_mm = page_size_mm(reader, index)
    w_px, h_px = round(w_mm * px_per_mm), round(h_mm * px_per_mm)
    image = np.full((h_px, w_px, 3), 255, np.uint8)
    s = px_per_mm / PT_PER_MM
    # PDF user space (pt, y up) -> device pixels (y down); pixel centres at integer coordinates
    device = np.array([[s, 0, -0.5], [0, -s, h_px - 0.5], [0, 0, 1.0]])
    state = _State()
    stack: list[_State] = []
    path: list[list[tuple[float, float]]] = []
    pending_clip = False
    for operands, op in ContentStream(page.get_contents(), reader).operations:
        o = op.decode()
        args = [float(a) for a in operands] if o not in ("Tj", "TJ", "Tf", "d") else []
        if o == "q":
            stack.append(state.copy())
        elif o == "Q":
            state = stack.pop()
        elif o == "cm":
            a, b, c, d, e, f = args
            # PDF: CTM' = M x CTM for row vectors, i.e. CTM' = CTM @ M for column vectors
            state.ctm = state.ctm @ np.array([[a, c, e], [b, d, f], [0, 0, 1.0]])
        elif o == "w":
            state.width_pt = args[0]
        elif o == "rg":
            state.fill = _bgr(args)
        elif o == "RG":
            state.stroke = _bgr(args)
        elif o == "g":
            state.fill = _bgr(args * 3)
        elif o == "G":
            state.stroke = _bgr(args * 3)
        elif o == "re":
            x, y, w, h = args
            path.append([(x, y), (x + w, y), (x + w, y + h), (x, y + h), (x, y)])
        elif o == "m":
            path.append([(args[0], args[1])])
        elif o == "l":
            path[-1].append((args[0], args[1]))
        elif o == "c":
            p0 = np.array(path[-1][-1])
            p1, p2, p3 = np.array(args[0:2]), np.array(args[2:4]), np.array(args[4:6])
            for t in np.linspace(0, 1, 17)[1:]:
                q = ((1 - t) ** 3) * p0 + 3 * ((1 - t) ** 2) * t * p1 + 3 * (1 - t) * t * t * p2 \
                    + t ** 3 * p3
                path[-1].append((float(q[0]), float(q[1])))
        elif o == "h":
            if path and path[-1]:
                path[-1].append(path[-1][0])
        elif o in ("W", "W*"):
            pending_clip = True
        elif o in ("f", "f*", "F", "S", "s", "B", "B*", "b", "b*", "n"):
            to_px = device @ state.ctm
            polys = [_apply(to_px, p) for p in path if len(p) >= 2]
            if pending_clip:
                pts = np.concatenate(polys)
                state.clip = (pts[:, 0].min(), pts[:, 1].min(), pts[:, 0].max(), pts[:, 1].max())
                pending_clip = False
            if o in ("f", "f*", "F", "B", "B*", "b", "b*"):
                fixed = [np.round(p * (1 << SHIFT)).astype(np.int32) for p in polys]
                _paint(image, state.clip, lambda img, f=fixed, c=state.fill: cv2.fillPoly(
                    img, f, c, cv2.LINE_8, SHIFT))
            if o in ("S", "s", "B", "B*", "b", "b*"):
                scale = float(np.sqrt(abs(np.linalg.det(to_px[:2, :2]))))
                thick = max(1, round(state.width_pt * scale))
                fixed = [np.round(p * (1 << SHIFT)).astype(np.int32) for p in polys]
                _paint(image, state.clip, lambda img, f=fixed, c=state.stroke, t=thick:
                       cv2.polylines(img, f, False, c, t, cv2.LINE_8, SHIFT))
            path = []
    return image


def _apply(t: np.ndarray, pts: list[tuple[float, float]]) -> np.ndarray:
    a = np.c_[np.array(pts), np.ones(len(pts))]
    return (a @ t.T)[:, :2]


def _bgr(rgb: list[float]) -> tuple[int, int, int]:
    r, g, b = (round(255 * v) for v in rgb)
    return (b, g, r)


def _paint(image: np.ndarray, clip: tuple[float, float, float, float] | None, draw) -> None:
    if clip is None:
        draw(image)
        return
    layer = image.copy()
    draw(layer)
    h, w = image.shape[:2]
    x0, y0 = max(0, int(np.ceil(clip[0]))), max(0, int(np.ceil(clip[1])))
    x1, y1 = min(w, int(np.floor(clip[2])) + 1), min(h, int(np.floor(clip[3])) + 1)
    image[y0:y1, x0:x1] = layer[y0:y1, x0:x1]


def read_pdf(path) -> PdfReader:
    return PdfReader(str(path))


# --- the rasterizer must be right before it judges anything -----------------------------------
def _one_page(draw) -> PdfReader:
    buf = io.BytesIO()
    canvas = Canvas(buf, pagesize=(100 * PT_PER_MM, 50 * PT_PER_MM), pageCompression=0)
    draw(canvas)
    canvas.showPage()
    canvas.save()
    buf.seek(0)
    return PdfReader(buf)


def test_renders_a_known_rectangle_at_true_scale() -> None:
    # a 30 x 10 mm black rectangle whose lower-left corner is 20 mm right, 5 mm up
    reader = _one_page(lambda c: c.rect(20 * PT_PER_MM, 5 * PT_PER_MM, 30 * PT_PER_MM,
                                        10 * PT_PER_MM, stroke=0, fill=1))
    assert page_size_mm(reader, 0) == pytest.approx((100.0, 50.0))
    image = render_page(reader, 0, 10.0)
    ink = 1.0 - image[:, :, 0] / 255.0  # coverage, anti-aliased edges included
    assert ink[400].sum() == pytest.approx(300, abs=0.6)  # 30 mm at 10 px/mm
    assert ink[:, 350].sum() == pytest.approx(100, abs=0.6)
    cols = np.flatnonzero(ink[400] > 0.5)
    rows = np.flatnonzero(ink[:, 350] > 0.5)
    assert abs(cols[0] - 200) <= 1 and abs(cols[-1] + 1 - 500) <= 1
    assert abs(rows[0] - 350) <= 1 and abs(rows[-1] + 1 - 450) <= 1  # y down: 50 - 15 mm


def test_translation_and_clip_are_applied() -> None:
    def draw(c: Canvas) -> None:
        c.saveState()
        p = c.beginPath()
        p.rect(0, 0, 10 * PT_PER_MM, 50 * PT_PER_MM)
        c.clipPath(p, stroke=0, fill=0)
        c.translate(5 * PT_PER_MM, 0)
        c.rect(0, 0, 20 * PT_PER_MM, 20 * PT_PER_MM, stroke=0, fill=1)  # 5..25 mm, clipped at 10
        c.restoreState()

    image = render_page(_one_page(draw), 0, 10.0)
    dark = np.argwhere(image[:, :, 0] < 128)
    assert dark[:, 1].min() == 50 and dark[:, 1].max() + 1 <= 101

