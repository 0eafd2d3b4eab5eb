"""Write the printable kit to files: a true-scale PDF (tiled when larger than the paper), an SVG
of the whole item at true size (mm units) and a PNG preview / texture.

`write_item(drawing, out_dir, stem, ...)` writes all three; the `print_*` functions build the
drawing for one item of the kit and write it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from calibration.drawing import Drawing, rasterize, to_svg
from calibration.errors import PrintLayoutError
from calibration.kit import BoardPrint, dition_board, domination_board, measuring_card
from calibration.pdf import PageLayout, PdfPlan, write_pdf
from calibration.target import CharucoSpec, charuco_sheet

#: PNG resolution: 300 dpi for pages; big boards get at most MAX_PNG_SIDE_PX (a preview)
PAGE_PNG_PX_PER_MM = 300 / 25.4
MAX_PNG_SIDE_PX = 4000
A4_LAYOUT = PageLayout()
DEFAULT_SPEC = CharucoSpec()
DEFAULT_BOARD = BoardPrint()


@dataclass(frozen=True)
class Written:
    """The files written for one item and how its PDF was paginated."""

    pdf: Path
    svg: Path
    png: Path
    plan: PdfPlan
    drawing: Drawing

    def paths(self) -> list[Path]:
        return [self.pdf, self.svg, self.png]


def write_item(drawing: Drawing, out_dir: str | Path, stem: str,
               layout: PageLayout = A4_LAYOUT) -> Written:
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise PrintLayoutError(f"cannot create the output folder {out}: {exc}") from None
    import cv2

    pdf, svg, png = out / f"{stem}.pdf", out / f"{stem}.svg", out / f"{stem}.png"
    plan = write_pdf(drawing, pdf, layout)
    svg.write_text(to_svg(drawing), encoding="utf-8")
    px_per_mm = min(PAGE_PNG_PX_PER_MM, MAX_PNG_SIDE_PX / max(drawing.size_mm))
    if not cv2.imwrite(str(png), rasterize(drawing, px_per_mm)):
        raise PrintLayoutError(f"cannot write {png}")
    return Written(pdf, svg, png, plan, drawing)


def print_charuco(out_dir: str | Path, spec: CharucoSpec = DEFAULT_SPEC,
                  paper: str = "a4") -> Written:
    return write_item(charuco_sheet(spec, paper), out_dir, f"charuco-{paper}",
                      PageLayout(paper=paper))


def print_dition_board(out_dir: str | Path, disc_mm: float, paper: str = "a4",
                       options: BoardPrint = DEFAULT_BOARD) -> Written:
    return write_item(dition_board(disc_mm, options), out_dir,
                      f"dition-board-{disc_mm:g}mm-{paper}", PageLayout(paper=paper))


def print_domination_board(out_dir: str | Path, cell_mm: float, paper: str = "a4",
                           options: BoardPrint = DEFAULT_BOARD) -> Written:
    return write_item(domination_board(cell_mm, options), out_dir,
                      f"domination-board-{cell_mm:g}mm-{paper}", PageLayout(paper=paper))


def print_card(out_dir: str | Path, disc_mm: float) -> Written:
    return write_item(measuring_card(disc_mm), out_dir, f"measuring-card-{disc_mm:g}mm",
                      PageLayout(paper="a4"))
