"""The printed kit measures right: PDFs read back (page sizes, drawing operators) and rendered
independently (tests/test_print_render.py) so OpenCV can find and measure the markers."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pypdf import PdfReader
from pypdf.generic import ContentStream
from test_print_render import PT_PER_MM, page_size_mm, render_page

from calibration.errors import PrintLayoutError
from calibration.kit import dition_board, domination_board, measuring_card
from calibration.pdf import PAPER_MM, PageLayout, plan_pages
from calibration.printing import (
    print_card,
    print_charuco,
    print_dition_board,
    print_domination_board,
)
from calibration.target import CharucoSpec, charuco_board

A4_PT = (595.2756, 841.8898)
LETTER_PT = (612.0, 792.0)


def _paths(reader: PdfReader, index: int) -> list[dict]:
    """Every painted path of a page: its bounding box in mm (top-left origin, y down), the
    painting operator, fill / stroke colour (RGB 0..1) and line width in mm."""
    page = reader.pages[index]
    h_pt = float(page.mediabox.height)
    fill, stroke, width = (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), 1.0
    points: list[tuple[float, float]] = []
    out = []
    for operands, op in ContentStream(page.get_contents(), reader).operations:
        o = op.decode()
        if o == "rg":
            fill = tuple(float(v) for v in operands)
        elif o == "RG":
            stroke = tuple(float(v) for v in operands)
        elif o == "w":
            width = float(operands[0])
        elif o == "cm":
            assert [float(v) for v in operands] == [1, 0, 0, 1, 0, 0], "unexpected transform"
        elif o == "re":
            x, y, w, h = (float(v) for v in operands)
            points += [(x, y), (x + w, y + h)]
        elif o in ("m", "l"):
            points.append((float(operands[0]), float(operands[1])))
        elif o == "c":
            points += [(float(operands[i]), float(operands[i + 1])) for i in (0, 2, 4)]
        elif o in ("f", "f*", "S", "B", "B*", "n"):
            if points and o != "n":
                xs = [p[0] for p in points]
                ys = [p[1] for p in points]
                out.append({"op": o, "fill": fill, "stroke": stroke, "width_mm": width / PT_PER_MM,
                            "bbox_mm": (min(xs) / PT_PER_MM, (h_pt - max(ys)) / PT_PER_MM,
                                        max(xs) / PT_PER_MM, (h_pt - min(ys)) / PT_PER_MM)})
            points = []
    return out


def _size(p: dict) -> tuple[float, float]:
    x0, y0, x1, y1 = p["bbox_mm"]
    return x1 - x0, y1 - y0


def _markers(image: np.ndarray, px_per_mm: float) -> dict[int, np.ndarray]:
    """ArUco DICT_4X4_50 markers found in a rendering: id -> (4, 2) corners in mm."""
    dictionary = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50)
    params = cv2.aruco.DetectorParameters()
    params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
    corners, ids, _ = cv2.aruco.ArucoDetector(dictionary, params).detectMarkers(image)
    if ids is None:
        return {}
    # pixel centres sit at (i + 0.5) / px_per_mm
    return {int(i): (c.reshape(4, 2) + 0.5) / px_per_mm for i, c in zip(ids.ravel(), corners)}


def _side_mm(corners: np.ndarray) -> float:
    return float(np.mean(np.linalg.norm(corners - np.roll(corners, 1, axis=0), axis=1)))


# --- the measuring card ------------------------------------------------------------------------
def test_measuring_card_is_one_a4_page_with_the_range_circle_at_true_size(tmp_path: Path) -> None:
    written = print_card(tmp_path, 34.0)
    reader = PdfReader(str(written.pdf))
    assert len(reader.pages) == 1
    assert (float(reader.pages[0].mediabox.width), float(reader.pages[0].mediabox.height)) == \
        pytest.approx(A4_PT, abs=0.01)
    circles = [p for p in _paths(reader, 0) if abs(_size(p)[0] - _size(p)[1]) < 0.01]
    diameters = sorted(round(_size(p)[0], 2) for p in circles)
    assert 102.0 in diameters  # the range circle: 3 discs
    assert diameters.count(34.0) >= 2  # the disc and its neighbour at 2 diameters
    range_circle = next(p for p in circles if abs(_size(p)[0] - 102.0) < 0.01)
    disc = next(p for p in circles if abs(_size(p)[0] - 34.0) < 0.01
                and abs(p["bbox_mm"][0] - range_circle["bbox_mm"][0] - 34.0) < 0.01)
    assert disc["bbox_mm"][1] - range_circle["bbox_mm"][1] == pytest.approx(34.0, abs=0.01)
    bars = [p for p in _paths(reader, 0) if p["op"] == "S" and abs(_size(p)[0] - 100.0) < 0.01]
    assert bars, "the 100 mm check bar is missing"
    text = reader.pages[0].extract_text()
    assert "100 mm" in text and "within range" in text.lower()


def test_measuring_card_refuses_discs_it_cannot_show() -> None:
    with pytest.raises(PrintLayoutError, match="does not fit A4"):
        measuring_card(45.0)
    with pytest.raises(PrintLayoutError, match="disc_mm must be between"):
        measuring_card(float("nan"))


# --- Dition board, tiled -------------------------------------------------------------------------
def _mosaic(written, px_per_mm: float) -> np.ndarray:
    """Assemble the tiled pages as the index page says: row by row, each page's content area
    laid over its left and upper neighbours at its tile's place in the drawing."""
    reader = PdfReader(str(written.pdf))
    w_mm, h_mm = written.drawing.size_mm
    plan = written.plan
    margin = PageLayout().margin_mm
    cw, ch = plan.tiles[0].size_mm
    # the tiles reach beyond the drawing (it is centred in them)
    pad = max(max(-t.origin_mm[0], -t.origin_mm[1], t.origin_mm[0] + cw - w_mm,
                  t.origin_mm[1] + ch - h_mm) for t in plan.tiles) + 5.0
    canvas = np.full((round((h_mm + 2 * pad) * px_per_mm), round((w_mm + 2 * pad) * px_per_mm), 3),
                     255, np.uint8)
    for page_index, tile in enumerate(plan.tiles, start=1):
        page = render_page(reader, page_index, px_per_mm, supersample=2)
        crop = page[round(margin * px_per_mm): round((margin + ch) * px_per_mm),
                    round(margin * px_per_mm): round((margin + cw) * px_per_mm)]
        x = round((tile.origin_mm[0] + pad) * px_per_mm)
        y = round((tile.origin_mm[1] + pad) * px_per_mm)
        canvas[y: y + crop.shape[0], x: x + crop.shape[1]] = crop
    return canvas[round(pad * px_per_mm): round((pad + h_mm) * px_per_mm),
                  round(pad * px_per_mm): round((pad + w_mm) * px_per_mm)]


@pytest.fixture(scope="module")
def dition_a4(tmp_path_factory):
    return print_dition_board(tmp_path_factory.mktemp("dition"), 34.0, "a4")


def test_dition_board_is_tiled_over_a4_with_an_index(dition_a4) -> None:
    reader = PdfReader(str(dition_a4.pdf))
    assert len(reader.pages) == dition_a4.plan.pages == 1 + len(dition_a4.plan.tiles)
    assert len(dition_a4.plan.tiles) >= 16  # 870 mm square on A4
    for i in range(len(reader.pages)):
        assert page_size_mm(reader, i) == pytest.approx((210.0, 297.0), abs=0.01)
    index = reader.pages[0].extract_text()
    assert "page 1 (the index)" in index and "100%" in index
    labels = [reader.pages[i].extract_text() for i in range(1, len(reader.pages))]
    assert all(f"page {t.label} " in text for t, text in zip(dition_a4.plan.tiles, labels))


def test_dition_board_lines_are_006_discs_wide(dition_a4) -> None:
    reader = PdfReader(str(dition_a4.pdf))
    squares = [p for i in range(1, len(reader.pages)) for p in _paths(reader, i)
               if p["op"] == "S" and p["stroke"] == pytest.approx((34 / 255, 36 / 255, 38 / 255),
                                                                 abs=0.002)]
    assert squares and all(p["width_mm"] == pytest.approx(0.06 * 34.0, abs=1e-3) for p in squares)
    # two squares, 680 and 476 mm between line centres (bounding boxes include half the line)
    sizes = {round(_size(p)[0], 3) for p in squares}  # the path runs along the line centres
    assert sizes == {680.0, 476.0}


def test_assembled_dition_board_has_its_markers_at_true_size(dition_a4) -> None:
    px_per_mm = 2.0
    board = _mosaic(dition_a4, px_per_mm)
    found = _markers(board, px_per_mm)
    assert set(found) == {0, 1, 2, 3}
    u = 34.0
    for corners in found.values():
        assert _side_mm(corners) == pytest.approx(1.5 * u, abs=0.6)
    centres = {i: c.mean(axis=0) for i, c in found.items()}
    assert np.linalg.norm(centres[1] - centres[0]) == pytest.approx(22.5 * u, abs=0.8)
    assert np.linalg.norm(centres[3] - centres[0]) == pytest.approx(22.5 * u, abs=0.8)
    # the outer square's left line is centred on board x = 0, 1.25 discs right of the centre of
    # marker 0 (at board (-1.25, -1.25)); it is 0.06 discs wide
    origin_mm = centres[0] + 1.25 * u
    row = board[round((origin_mm[1] + 10 * u) * px_per_mm), :, :].mean(axis=1)
    dark_mm = (np.flatnonzero(row < 120) + 0.5) / px_per_mm
    left_line = dark_mm[np.abs(dark_mm - origin_mm[0]) < 5]
    assert left_line.size and abs(left_line.mean() - origin_mm[0]) < 0.6
    assert left_line.size / px_per_mm == pytest.approx(0.06 * u, abs=1.0)


def test_letter_paper_gives_letter_pages(tmp_path: Path) -> None:
    written = print_domination_board(tmp_path, 35.0, "letter")
    reader = PdfReader(str(written.pdf))
    assert len(reader.pages) == written.plan.pages > 1
    for i in range(len(reader.pages)):
        w, h = (float(reader.pages[i].mediabox.width), float(reader.pages[i].mediabox.height))
        assert sorted((w, h)) == pytest.approx(sorted(LETTER_PT), abs=0.01)
    board = _mosaic(written, 4.0)
    found = _markers(board, 4.0)
    assert set(found) == {4, 5, 6, 7}
    assert all(_side_mm(c) == pytest.approx(0.6 * 35.0, abs=0.3) for c in found.values())
    centres = {i: c.mean(axis=0) for i, c in found.items()}
    assert np.linalg.norm(centres[5] - centres[4]) == pytest.approx(7 * 35.0, abs=0.5)


# --- Domination board, one page ------------------------------------------------------------------
def test_domination_board_on_one_page_has_52_cells_and_its_markers(tmp_path: Path) -> None:
    written = print_domination_board(tmp_path, 20.0, "a4")
    reader = PdfReader(str(written.pdf))
    assert len(reader.pages) == 1 and written.plan.tiles == ()
    paths = _paths(reader, 0)
    cell_rgb = (232 / 255, 222 / 255, 205 / 255)
    cells = [p for p in paths if p["op"] in ("f", "f*") and p["fill"] == pytest.approx(cell_rgb, abs=0.002)]
    assert len(cells) == 52
    assert all(_size(p) == pytest.approx((20.0, 20.0), abs=1e-3) for p in cells)
    grid = [p for p in paths if p["op"] == "S"]
    assert grid and all(p["width_mm"] == pytest.approx(0.8, abs=1e-3) for p in grid)
    image = render_page(reader, 0, 8.0)
    found = _markers(image, 8.0)
    assert set(found) == {4, 5, 6, 7}
    # the markers sit in the cut corner cells: a8 (4), h8 (5), h1 (6), a1 (7)
    x0 = min(p["bbox_mm"][0] for p in cells)  # file a (a3..a6 are playable)
    y0 = min(p["bbox_mm"][1] for p in cells)  # rank 8 row (c8..f8 are playable)
    expected = {4: (0.5, 0.5), 5: (7.5, 0.5), 6: (7.5, 7.5), 7: (0.5, 7.5)}
    for marker_id, (bx, by) in expected.items():
        centre = found[marker_id].mean(axis=0)
        assert centre == pytest.approx((x0 + 20 * bx, y0 + 20 * by), abs=0.3)
        assert _side_mm(found[marker_id]) == pytest.approx(12.0, abs=0.3)


# --- ChArUco target ----------------------------------------------------------------------------
@pytest.mark.parametrize("paper", ["a4", "letter"])
def test_charuco_target_prints_at_true_size(tmp_path: Path, paper: str) -> None:
    spec = CharucoSpec()
    written = print_charuco(tmp_path, spec, paper)
    reader = PdfReader(str(written.pdf))
    assert len(reader.pages) == 1
    ph, pw = PAPER_MM[paper]
    assert page_size_mm(reader, 0) == pytest.approx((pw, ph), abs=0.01)  # landscape
    px_per_mm = 6.0
    image = render_page(reader, 0, px_per_mm)
    board = charuco_board(spec)
    corners, ids, _, _ = cv2.aruco.CharucoDetector(board).detectBoard(image)
    assert ids is not None and len(ids) == (spec.squares[0] - 1) * (spec.squares[1] - 1)
    obj, img = board.matchImagePoints(corners, ids)
    obj = obj.reshape(-1, 3)[:, :2].astype(np.float64)
    img_mm = (img.reshape(-1, 2).astype(np.float64) + 0.5) / px_per_mm
    # a similarity from target mm to page mm: its scale is the print scale
    m, _ = cv2.estimateAffinePartial2D(obj, img_mm)
    scale = float(np.hypot(m[0, 0], m[1, 0]))
    assert scale == pytest.approx(1.0, abs=0.002)
    residual = img_mm - (obj @ m[:, :2].T + m[:, 2])
    assert np.max(np.linalg.norm(residual, axis=1)) < 0.15
    # and no board marker (DICT_4X4_50) can be seen in it
    assert _markers(image, px_per_mm) == {}


# --- page planning ------------------------------------------------------------------------------
@settings(max_examples=60, deadline=None)
@given(st.floats(20, 1500), st.floats(20, 1500), st.sampled_from(["a4", "letter"]))
def test_tiles_cover_the_drawing_with_the_promised_overlap(w: float, h: float, paper: str) -> None:
    layout = PageLayout(paper=paper)
    plan = plan_pages((w, h), layout)
    pw, ph = PAPER_MM[paper]
    assert sorted(plan.page_size_mm) == pytest.approx(sorted((pw, ph)))
    if not plan.tiles:
        assert plan.pages == 1
        cw, ch = plan.page_size_mm[0] - 2 * layout.margin_mm, plan.page_size_mm[1] - 2 * layout.margin_mm
        assert w <= cw + 1e-6 and h <= ch + 1e-6
        return
    assert plan.pages == len(plan.tiles) + 1  # the index page
    rows, cols = plan.tiles[0].rows, plan.tiles[0].cols
    by_rc = {(t.row, t.col): t for t in plan.tiles}
    assert len(by_rc) == rows * cols
    cw, ch = plan.tiles[0].size_mm
    # every point of the drawing lies on some page's content area
    xs, ys = np.meshgrid(np.linspace(0, w, 23), np.linspace(0, h, 23))
    for x, y in zip(xs.ravel(), ys.ravel()):
        assert any(t.origin_mm[0] - 1e-6 <= x <= t.origin_mm[0] + cw + 1e-6 and
                   t.origin_mm[1] - 1e-6 <= y <= t.origin_mm[1] + ch + 1e-6 for t in plan.tiles)
    for (r, c), t in by_rc.items():
        if c + 1 < cols:
            right = by_rc[(r, c + 1)]
            assert t.origin_mm[0] + cw - right.origin_mm[0] == pytest.approx(layout.overlap_mm)
        if r + 1 < rows:
            below = by_rc[(r + 1, c)]
            assert t.origin_mm[1] + ch - below.origin_mm[1] == pytest.approx(layout.overlap_mm)
    # no wasted row or column: one fewer would not cover the drawing
    assert (cols - 1) * cw - (cols - 2) * layout.overlap_mm < w or cols == 1
    assert (rows - 1) * ch - (rows - 2) * layout.overlap_mm < h or rows == 1


def test_no_tint_prints_ink_only(tmp_path: Path) -> None:
    from calibration.kit import BoardPrint

    written = print_domination_board(tmp_path, 20.0, "a4", BoardPrint(tint=False))
    reader = PdfReader(str(written.pdf))
    fills = {tuple(round(v, 3) for v in p["fill"]) for p in _paths(reader, 0)
             if p["op"] in ("f", "f*")}
    assert fills <= {(0.0, 0.0, 0.0), (1.0, 1.0, 1.0)}  # marker black, cells / quiet zones white
    image = render_page(reader, 0, 8.0)
    assert set(_markers(image, 8.0)) == {4, 5, 6, 7}


def test_bad_sizes_and_papers_are_refused() -> None:
    with pytest.raises(PrintLayoutError, match="disc_mm must be between 10 and 80"):
        dition_board(5.0)
    with pytest.raises(PrintLayoutError, match="cell_mm"):
        domination_board(200.0)
    with pytest.raises(PrintLayoutError, match="unknown paper 'a3'"):
        PageLayout(paper="a3")
    with pytest.raises(PrintLayoutError, match="DICT_4X4_50"):
        CharucoSpec(dictionary="DICT_4X4_50")


# --- the command line ---------------------------------------------------------------------------
def test_cli_prints_json_and_writes_pdf_svg_png(tmp_path: Path, capsys) -> None:
    from referee.cli import main

    assert main(["print", "board", "--game", "dition", "--disc-mm", "30", "--paper", "letter",
                 "--out", str(tmp_path)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["pages"] == len(report["tiles"]) + 1 and report["page_mm"] == [215.9, 279.4]
    pdf, svg, png = (Path(p) for p in report["files"])
    assert pdf.suffix == ".pdf" and len(PdfReader(str(pdf)).pages) == report["pages"]
    assert 'width="768mm"' in svg.read_text()  # 25.6 discs of 30 mm
    image = cv2.imread(str(png))
    assert image is not None and abs(image.shape[1] / image.shape[0] - 1.0) < 0.01
    assert png.stat().st_size > 1000

    assert main(["print", "card", "--disc-mm", "30", "--out", str(tmp_path)]) == 0
    assert json.loads(capsys.readouterr().out)["pages"] == 1
    assert main(["print", "charuco", "--out", str(tmp_path)]) == 0
    capsys.readouterr()


def test_svg_is_at_true_size(tmp_path: Path) -> None:
    import xml.etree.ElementTree as ET

    written = print_dition_board(tmp_path, 32.0, "a4")
    root = ET.parse(written.svg).getroot()
    ns = {"s": "http://www.w3.org/2000/svg"}
    assert root.get("width") == "819.2mm" and root.get("viewBox") == "0 0 819.2 819.2"
    black = [r for r in root.findall("s:rect", ns) if r.get("fill") == "#000000"]
    assert len(black) == 4
    assert all(float(r.get("width")) == pytest.approx(48.0) for r in black)  # 1.5 discs
    squares = [r for r in root.findall("s:rect", ns) if r.get("stroke") is not None
               and float(r.get("stroke-width")) == pytest.approx(0.06 * 32)]
    assert sorted(float(r.get("width")) for r in squares) == pytest.approx([14 * 32, 20 * 32])


def test_cli_refuses_bad_sizes_with_a_message(tmp_path: Path, capsys) -> None:
    from referee.cli import main

    assert main(["print", "board", "--game", "dition", "--disc-mm", "3", "--out", str(tmp_path)]) == 2
    assert "disc_mm must be between" in capsys.readouterr().err
    assert main(["print", "board", "--game", "domination", "--disc-mm", "30",
                 "--out", str(tmp_path)]) == 2
    assert "--cell-mm" in capsys.readouterr().err


def test_index_page_labels_do_not_cover_the_markers(dition_a4) -> None:
    """Issue 17: the index printed A1/A6/D1/D6 over the ArUco markers. The markers are found on
    the rendered index page; every page label's box (Helvetica metrics, from the PDF's own text
    operators) must stay clear of their squares."""
    from reportlab.pdfbase.pdfmetrics import stringWidth

    reader = PdfReader(str(dition_a4.pdf))
    px_per_mm = 6.0
    found = _markers(render_page(reader, 0, px_per_mm, supersample=2), px_per_mm)
    assert sorted(found) == [0, 1, 2, 3]
    _, h_mm = page_size_mm(reader, 0)
    boxes = []
    labels = {t.label for t in dition_a4.plan.tiles}

    def visit(text, cm, tm, font, size) -> None:
        if text.strip() in labels:
            scale = cm[0] * tm[0] if cm[0] else tm[0]
            x_pt, y_pt = cm[0] * tm[4] + cm[4], cm[3] * tm[5] + cm[5]
            w_pt = stringWidth(text.strip(), "Helvetica", size) * scale
            h_pt = 0.72 * size * scale
            boxes.append((text.strip(), x_pt / PT_PER_MM, h_mm - (y_pt + h_pt) / PT_PER_MM,
                          w_pt / PT_PER_MM, h_pt / PT_PER_MM))

    reader.pages[0].extract_text(visitor_text=visit)
    assert {b[0] for b in boxes} == labels
    for corners in found.values():
        (x0, y0), (x1, y1) = corners.min(axis=0), corners.max(axis=0)
        for label, x, y, w, h in boxes:
            clear = x + w <= x0 or x1 <= x or y + h <= y0 or y1 <= y
            assert clear, f"page label {label} covers a marker on the index page"
