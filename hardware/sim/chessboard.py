"""Chessboards as people play Domination on them (issue 19): the 8x8 of a wooden, vinyl or
printed board, two colours of squares, with or without a border, the twelve cut corner squares
blocked by tape, paper or spare pieces.

``ChessBoard`` is a frozen description (hashable: it keys the renderer's caches);
``chessboard_texture(board, ppu, textured)`` paints it in board units like the kit's plate
(`hardware.sim.plate`): the squares are box-filtered exactly into the texels they cover (the
checker is the XOR of two per-axis patterns, so its coverage is separable), the material's grain,
the border's labels and the corner marks on top. Board frame as for the kit: the 8x8 squares cover
[0, 8]^2, cell a8 at the origin; square (col, row) is dark when col + row is odd (a1, at (0, 7),
dark: "light square on the right"), or the other way with ``a1_dark=False``.

``CHESSBOARDS`` holds the named presets; ``ChessBoard.random(rng)`` draws one with random colours,
border and corner marks. A *drawn* 8x8 (``drawn=True``, presets ``DRAWN_BOARDS``,
``ChessBoard.random_drawn``) has no alternating squares: the 9 + 9 lines of its grid, ``line_width``
squares wide, drawn in ``dark_bgr`` on paper, card or felt of ``light_bgr``. Spare pieces on the cut corners are not painted: the renderer places them
(`hardware.sim.men.spare_pieces`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

import cv2
import numpy as np

from hardware.sim.layout import CUT_CELLS, DOMINATION_SIZE, FILES
from hardware.sim.plate import MAX_TEXTURE_PX, Texture

Material = Literal["wood", "vinyl", "print"]
CornerMarks = Literal["tape", "paper", "pieces", "none"]
MATERIALS: tuple[str, ...] = ("wood", "vinyl", "print")
CORNER_MARKS: tuple[str, ...] = ("tape", "paper", "pieces", "none")
BGR = tuple[int, int, int]

#: tape colours people have at hand: masking tape, blue painter's tape, black insulating tape,
#: white paper tape
TAPE_BGR: tuple[BGR, ...] = ((150, 196, 214), (196, 140, 52), (36, 36, 40), (226, 230, 232))
PAPER_BGR: tuple[BGR, ...] = ((236, 238, 240), (214, 228, 238), (200, 222, 206))


def description_dict(description: Any) -> dict[str, Any]:
    """A frozen description (`ChessBoard`, `hardware.sim.men.Men`) as JSON-able fields."""
    d = dataclasses.asdict(description)
    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in d.items()}


def cut_grid_cells() -> tuple[tuple[int, int], ...]:
    """The 12 cut cells as grid (col, row) = (file index, 8 - rank), sorted."""
    return tuple(sorted((FILES.index(c[0]), 8 - int(c[1])) for c in CUT_CELLS))


@dataclass(frozen=True)
class ChessBoard:
    """A chessboard on the table. Colours BGR; lengths in board units (one square = 1).

    `border`: width of the frame around the 8x8 (0: the squares end at the table); `drawn`: the
    8x8 is a grid of lines (`line_width` squares wide, centred on the squares' edges, in
    `dark_bgr`) on one colour (`light_bgr`), not a checker;
    `edge_line`: a thin dark (or, on wood, light) line just outside the squares; `labels`: a-h /
    1-8 printed on the border; `corners`: how the cut corners are blocked; `corner_bgr`: the
    tape's or paper's colour; `seed`: the board's own grain and the marks' placement."""

    name: str = "wood"
    material: Material = "wood"
    light_bgr: BGR = (150, 196, 226)
    dark_bgr: BGR = (44, 78, 128)
    border: float = 0.6
    border_bgr: BGR = (34, 60, 100)
    edge_line: bool = True
    labels: bool = True
    corners: CornerMarks = "tape"
    corner_bgr: BGR = TAPE_BGR[0]
    a1_dark: bool = True
    drawn: bool = False
    line_width: float = 0.04
    seed: int = 0

    def __post_init__(self) -> None:
        if self.material not in MATERIALS:
            raise ValueError(f"ChessBoard.material must be one of {MATERIALS}, got {self.material!r}")
        if self.corners not in CORNER_MARKS:
            raise ValueError(f"ChessBoard.corners must be one of {CORNER_MARKS}, got {self.corners!r}")
        if not 0.005 <= self.line_width <= 0.2:
            raise ValueError(f"ChessBoard.line_width must be in [0.005, 0.2] squares, got {self.line_width}")
        if not 0.0 <= self.border <= 2.0:
            raise ValueError(f"ChessBoard.border must be in [0, 2] squares, got {self.border}")
        for name in ("light_bgr", "dark_bgr", "border_bgr", "corner_bgr"):
            value = getattr(self, name)
            if len(value) != 3 or not all(0 <= int(c) <= 255 for c in value):
                raise ValueError(f"ChessBoard.{name} must be 3 values 0..255, got {value!r}")
            object.__setattr__(self, name, tuple(int(c) for c in value))

    @property
    def extent(self) -> tuple[float, float, float, float]:
        """The board's footprint (x0, y0, x1, y1) in board units."""
        b = self.border
        return (-b, -b, DOMINATION_SIZE + b, DOMINATION_SIZE + b)

    def is_dark(self, col: int, row: int) -> bool:
        return ((col + row) % 2 == 1) == self.a1_dark

    def replace(self, **changes: Any) -> ChessBoard:
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        return description_dict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ChessBoard:
        fields = {f.name for f in dataclasses.fields(cls)}
        unknown = set(data) - fields
        if unknown:
            raise ValueError(f"ChessBoard: unknown keys {sorted(unknown)}")
        return cls(**{k: (tuple(v) if isinstance(v, list) else v) for k, v in data.items()})

    @classmethod
    def random(cls, rng: np.random.Generator, **changes: Any) -> ChessBoard:
        """A preset with random border, corner marks, colour shade and grain."""
        return cls._varied(CHESSBOARDS, rng, changes)

    @classmethod
    def random_drawn(cls, rng: np.random.Generator, **changes: Any) -> ChessBoard:
        """A drawn 8x8 (`DRAWN_BOARDS`) with random line width, margin, corner marks, shade; no
        frame line round the grid (a second line a tenth of a square outside the grid's edge is a
        different drawing, which the line finder does not tell from the grid's own)."""
        return cls._varied(DRAWN_BOARDS, rng, {"line_width": float(rng.uniform(0.025, 0.07)), "edge_line": False,
                                               **changes})

    @classmethod
    def _varied(cls, presets: dict[str, ChessBoard], rng: np.random.Generator,
                changes: dict[str, Any]) -> ChessBoard:
        names = sorted(presets)
        base = presets[names[int(rng.integers(len(names)))]]
        shade = rng.uniform(0.9, 1.08, size=3)

        def tint(bgr: BGR) -> BGR:
            return tuple(int(np.clip(c * s, 0, 255)) for c, s in zip(bgr, shade))  # type: ignore[return-value]

        corners = CORNER_MARKS[int(rng.integers(3))]  # tape | paper | pieces
        corner_bgr = (
            PAPER_BGR[int(rng.integers(len(PAPER_BGR)))]
            if corners == "paper"
            else TAPE_BGR[int(rng.integers(len(TAPE_BGR)))]
        )
        has_border = rng.random() < 0.75 or base.drawn  # a drawn grid has its sheet around it
        out = base.replace(
            light_bgr=tint(base.light_bgr),
            dark_bgr=tint(base.dark_bgr),
            border_bgr=tint(base.light_bgr) if base.drawn else base.border_bgr,
            border=float(rng.uniform(0.3, 1.0)) if has_border else 0.0,
            labels=bool(has_border and rng.random() < 0.6),
            edge_line=bool(rng.random() < 0.5),
            corners=corners,
            corner_bgr=corner_bgr,
            seed=int(rng.integers(1 << 30)),
        )
        return out.replace(**changes) if changes else out


#: named presets (before `random`'s variation)
CHESSBOARDS: dict[str, ChessBoard] = {
    "wood": ChessBoard(),
    "walnut-maple": ChessBoard(
        name="walnut-maple", light_bgr=(128, 178, 214), dark_bgr=(30, 52, 86),
        border_bgr=(40, 70, 112),
    ),
    "vinyl": ChessBoard(
        name="vinyl", material="vinyl", light_bgr=(176, 214, 232), dark_bgr=(66, 128, 72),
        border=0.7, border_bgr=(222, 230, 234), edge_line=False,
    ),
    "print": ChessBoard(
        name="print", material="print", light_bgr=(232, 234, 234), dark_bgr=(40, 40, 42),
        border=0.4, border_bgr=(234, 236, 236),
    ),
    "checkers": ChessBoard(
        name="checkers", material="print", light_bgr=(46, 50, 178), dark_bgr=(34, 32, 34),
        border=0.4, border_bgr=(40, 38, 40), labels=False,
    ),
}

#: drawn 8x8 grids (the squares one colour, the lines `dark_bgr`; the sheet round it the same)
DRAWN_BOARDS: dict[str, ChessBoard] = {
    "drawn-paper": ChessBoard(
        name="drawn-paper", material="print", drawn=True, light_bgr=(228, 232, 234), dark_bgr=(52, 46, 44),
        border=0.8, border_bgr=(228, 232, 234), edge_line=False, labels=False,
    ),
    "drawn-card": ChessBoard(
        name="drawn-card", material="print", drawn=True, light_bgr=(150, 186, 206), dark_bgr=(40, 52, 70),
        border=0.8, border_bgr=(150, 186, 206), edge_line=False, labels=False,
    ),
    "drawn-felt": ChessBoard(
        name="drawn-felt", material="vinyl", drawn=True, light_bgr=(70, 120, 46), dark_bgr=(214, 226, 226),
        border=0.8, border_bgr=(70, 120, 46), edge_line=False, labels=False,
    ),
}


# ---- painting --------------------------------------------------------------------------------


def _odd_measure(t: np.ndarray) -> np.ndarray:
    """Length of the odd squares ([1, 2], [3, 4], ...) of [0, 8] within [0, t]."""
    t = np.clip(t, 0.0, DOMINATION_SIZE)
    pairs = np.floor(t / 2.0)
    return pairs + np.clip(t - 2.0 * pairs - 1.0, 0.0, 1.0)


def _axis_coverage(n: int, origin: float, ppu: float) -> tuple[np.ndarray, np.ndarray]:
    """Per texel along one axis: the fraction of it on even and on odd squares of the 8x8."""
    lo = origin + np.arange(n) / ppu
    hi = lo + 1.0 / ppu
    inside = (np.clip(hi, 0, DOMINATION_SIZE) - np.clip(lo, 0, DOMINATION_SIZE)) * ppu
    odd = (_odd_measure(hi) - _odd_measure(lo)) * ppu
    return (inside - odd).astype(np.float32), odd.astype(np.float32)


def _smooth_noise(shape: tuple[int, int], rng: np.random.Generator, cells: tuple[int, int]) -> np.ndarray:
    small = rng.normal(0.0, 1.0, (max(2, cells[0]), max(2, cells[1]))).astype(np.float32)
    return cv2.resize(small, (shape[1], shape[0]), interpolation=cv2.INTER_CUBIC)


def _rect_mask(shape: tuple[int, int], origin: tuple[float, float], ppu: float,
               polys_board: list[np.ndarray]) -> np.ndarray:
    """Anti-aliased coverage (float32 0..1) of polygons given in board units."""
    mask = np.zeros(shape, np.uint8)
    shift = 4
    for poly in polys_board:
        px = (np.asarray(poly, np.float64) - np.asarray(origin)) * ppu - 0.5
        cv2.fillPoly(mask, [np.round(px * (1 << shift)).astype(np.int32)], 255, cv2.LINE_AA, shift)
    return mask.astype(np.float32) / 255.0


def _rotated_rect(cx: float, cy: float, length: float, width: float, angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    u, v = np.array([c, s]) * length / 2, np.array([-s, c]) * width / 2
    centre = np.array([cx, cy])
    return np.array([centre - u - v, centre + u - v, centre + u + v, centre - u + v])


def _corner_groups() -> list[list[tuple[int, int]]]:
    """The cut cells per board corner (three each)."""
    cells = cut_grid_cells()
    groups: dict[tuple[bool, bool], list[tuple[int, int]]] = {}
    for col, row in cells:
        groups.setdefault((col < 4, row < 4), []).append((col, row))
    return [groups[k] for k in sorted(groups)]


def corner_mark_polygons(board: ChessBoard) -> list[np.ndarray]:
    """Where the tape strips or paper sheets lie (board units), as polygons; [] otherwise."""
    rng = np.random.default_rng(board.seed + 1)
    polys: list[np.ndarray] = []
    if board.corners == "tape":
        for col, row in cut_grid_cells():
            cx, cy = col + 0.5 + rng.normal(0, 0.03), row + 0.5 + rng.normal(0, 0.03)
            width = rng.uniform(0.32, 0.5)
            style = int(rng.integers(3))
            base = rng.normal(0, 0.06)
            if style == 0:  # a cross
                polys += [_rotated_rect(cx, cy, 1.15, width, base + np.pi / 4),
                          _rotated_rect(cx, cy, 1.15, width, base - np.pi / 4)]
            elif style == 1:  # two strips side by side covering most of the square
                for off in (-0.22, 0.22):
                    polys.append(_rotated_rect(cx, cy + off, 1.0, width, base))
            else:  # one strip across
                polys.append(_rotated_rect(cx, cy, 1.0, max(width, 0.45), base + np.pi / 2))
    elif board.corners == "paper":
        for group in _corner_groups():
            cells = np.array(group, np.float64)
            # the L of three squares: the union of their unit squares, as the hull of each
            # square pair along the L (drawn as three slightly overlapping rectangles)
            angle = rng.normal(0, 0.015)
            shift = rng.normal(0, 0.02, 2)
            centre = cells.mean(axis=0) + 0.5
            c, s = np.cos(angle), np.sin(angle)
            R = np.array([[c, -s], [s, c]])
            for col, row in cells:
                sq = np.array([[col - 0.02, row - 0.02], [col + 1.02, row - 0.02],
                               [col + 1.02, row + 1.02], [col - 0.02, row + 1.02]])
                polys.append((sq - centre) @ R.T + centre + shift)
    return polys


@lru_cache(maxsize=6)
def chessboard_texture(board: ChessBoard, ppu: float, textured: bool) -> Texture:
    """The board's picture in board units at `ppu` texels per square (uint8 BGR)."""
    x0, y0, x1, y1 = board.extent
    ppu = min(float(ppu), MAX_TEXTURE_PX / (x1 - x0))
    w, h = round((x1 - x0) * ppu), round((y1 - y0) * ppu)
    ex, ox = _axis_coverage(w, x0, ppu)
    ey, oy = _axis_coverage(h, y0, ppu)
    odd_sum = np.outer(ey, ox) + np.outer(oy, ex)  # col + row odd
    even_sum = np.outer(ey, ex) + np.outer(oy, ox)
    dark_cov, light_cov = (odd_sum, even_sum) if board.a1_dark else (even_sum, odd_sum)
    if board.drawn:  # one colour under the grid's lines (painted below)
        dark_cov, light_cov = np.zeros_like(dark_cov), dark_cov + light_cov
    inside = dark_cov + light_cov
    img = np.empty((h, w, 3), np.float32)
    img[:] = board.border_bgr
    img *= (1.0 - inside)[..., None]
    img += dark_cov[..., None] * np.asarray(board.dark_bgr, np.float32)
    img += light_cov[..., None] * np.asarray(board.light_bgr, np.float32)
    rng = np.random.default_rng(board.seed)
    # texel centres in board units, and the square each lies on
    xs = x0 + (np.arange(w, dtype=np.float32) + 0.5) / ppu
    ys = y0 + (np.arange(h, dtype=np.float32) + 0.5) / ppu
    if textured:
        img *= _material(board, rng, xs, ys)[..., None]
    if board.edge_line and board.border > 0.15:
        gap, lw = 0.08, 0.035
        outer = [(-gap - lw, -gap - lw, 8 + gap + lw, -gap), (-gap - lw, 8 + gap, 8 + gap + lw, 8 + gap + lw),
                 (-gap - lw, -gap - lw, -gap, 8 + gap + lw), (8 + gap, -gap - lw, 8 + gap + lw, 8 + gap + lw)]
        polys = [np.array([[a, b], [c, b], [c, d], [a, d]]) for a, b, c, d in outer]
        line = _rect_mask((h, w), (x0, y0), ppu, polys)
        ink = (200, 214, 222) if board.material == "wood" else (40, 40, 42)
        img += (np.asarray(ink, np.float32) - img) * line[..., None]
    if board.drawn:
        img += (np.asarray(board.dark_bgr, np.float32) - img) * _grid_lines((h, w), (x0, y0), ppu, board)[..., None]
    if board.labels and board.border >= 0.3:
        img = _labels(img, board, ppu)
    polys = corner_mark_polygons(board)
    if polys:
        mark = _rect_mask((h, w), (x0, y0), ppu, polys)
        colour = np.asarray(board.corner_bgr, np.float32)
        if textured:  # crepe tape and paper are not perfectly even
            colour = colour * (1.0 + 0.02 * _smooth_noise((h, w), rng, (h // 24, w // 24)))[..., None]
        opacity = 0.93 if board.corners == "tape" else 1.0
        img += (colour - img) * (opacity * mark)[..., None]
    return Texture(np.clip(img + 0.5, 0, 255).astype(np.uint8), (x0, y0), ppu)


def _grid_lines(shape: tuple[int, int], origin: tuple[float, float], ppu: float, board: ChessBoard) -> np.ndarray:
    """Coverage (0..1) of the drawn grid's 9 + 9 lines, each a little uneven in width and off its
    place (a hand with a ruler and a pen)."""
    rng = np.random.default_rng(board.seed + 2)
    half, polys = board.line_width / 2, []
    for k in range(9):
        w = half * rng.uniform(0.85, 1.15)
        d = rng.normal(0.0, 0.01, 2)
        polys.append(np.array([[k + d[0] - w, -half], [k + d[0] + w, -half],
                               [k + d[1] + w, 8 + half], [k + d[1] - w, 8 + half]]))
        polys.append(np.array([[-half, k + d[0] - w], [8 + half, k + d[1] - w],
                               [8 + half, k + d[1] + w], [-half, k + d[0] + w]]))
    return _rect_mask(shape, origin, ppu, polys)


def _material(board: ChessBoard, rng: np.random.Generator, xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """Multiplicative texture around 1: wood grain per square (alternating direction, each square
    its own tone), a vinyl's faint mottle, paper fibres."""
    h, w = len(ys), len(xs)
    if board.material == "wood":
        col = np.clip(np.floor(xs), -1, 8).astype(int) + 1  # 0..9 (0, 9: the border)
        row = np.clip(np.floor(ys), -1, 8).astype(int) + 1
        tone = rng.normal(0.0, 0.05, (10, 10)).astype(np.float32)
        # the frame is four long strips of one wood: one tone, grain along each strip
        tone[0, :] = tone[9, :] = tone[:, 0] = tone[:, 9] = tone[0, 0]
        phase = rng.uniform(0, 10, (10, 10)).astype(np.float32)
        warp = _smooth_noise((h, w), rng, (h // 40 + 2, w // 40 + 2)) * 0.08
        along_x = (col[None, :] + row[:, None]) % 2 == 0
        frame_row = (row[:, None] == 0) | (row[:, None] == 9)
        frame_col = (col[None, :] == 0) | (col[None, :] == 9)
        along_x = np.where(frame_row, True, np.where(frame_col, False, along_x))
        coord = np.where(along_x, ys[:, None], xs[None, :]) + warp + phase[row[:, None], col[None, :]]
        grain = np.sin(2 * np.pi * coord / 0.09) ** 2
        streak = _smooth_noise((h, w), rng, (h // 6 + 2, w // 90 + 2))
        streak_t = _smooth_noise((h, w), rng, (h // 90 + 2, w // 6 + 2))
        streaks = np.where(along_x, streak, streak_t)
        return (1.0 + tone[row[:, None], col[None, :]] - 0.07 * grain + 0.03 * streaks).astype(np.float32)
    if board.material == "vinyl":
        return (1.0 + 0.012 * _smooth_noise((h, w), rng, (h // 60 + 2, w // 60 + 2))).astype(np.float32)
    fine = _smooth_noise((h, w), rng, (h // 3 + 2, w // 3 + 2))
    return (1.0 + 0.008 * fine).astype(np.float32)


def _labels(img: np.ndarray, board: ChessBoard, ppu: float) -> np.ndarray:
    """a-h along the top and bottom border, 1-8 along the left and right, upright."""
    h, w = img.shape[:2]
    mask = np.zeros((h, w), np.uint8)
    x0, y0 = board.extent[:2]
    scale_px = 0.3 * min(board.border, 0.7) * ppu  # glyph height in texels
    font = cv2.FONT_HERSHEY_SIMPLEX
    font_scale = scale_px / 22.0
    thick = max(1, round(scale_px / 9))
    mid = board.border / 2
    spots: list[tuple[str, float, float]] = []
    for i in range(8):
        spots += [(FILES[i], i + 0.5, -mid), (FILES[i], i + 0.5, 8 + mid)]
        spots += [(str(8 - i), -mid, i + 0.5), (str(8 - i), 8 + mid, i + 0.5)]
    for text, bx, by in spots:
        (tw, th), _ = cv2.getTextSize(text, font, font_scale, thick)
        org = (round((bx - x0) * ppu - tw / 2), round((by - y0) * ppu + th / 2))
        cv2.putText(mask, text, org, font, font_scale, 255, thick, cv2.LINE_AA)
    ink = (190, 208, 220) if board.material == "wood" else (60, 60, 62)
    if board.name == "checkers":
        ink = (200, 204, 206)
    a = (mask.astype(np.float32) / 255.0)[..., None]
    return img + (np.asarray(ink, np.float32) - img) * a
