"""Textures in board coordinates: the printed plate (lines, cells, ArUco markers) and the table.

The plate is painted analytically: every axis-aligned rectangle (line, cell, marker module) is
box-filtered exactly into the texels it covers, so the texture is already anti-aliased and its
geometry exact to the texel's sub-area. A texel (i, j) has its centre at board
(x0 + (i + 0.5) / ppu, y0 + (j + 0.5) / ppu).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np

from hardware.sim.layout import (
    CUT_CELLS,
    DITION_INNER,
    DITION_LINE_WIDTH,
    DITION_SIZE,
    DITION_UNIT_MM,
    DOMINATION_LINE_WIDTH,
    DOMINATION_SIZE,
    DOMINATION_UNIT_MM,
    FILES,
    MARKER_QUIET_ZONE,
    MARKERS,
    PLATE_EXTENT,
    check_game,
)

#: BGR colours of the kit
PAPER_BGR = (196, 214, 226)
INK_BGR = (38, 36, 34)
DOMINATION_PLATE_BGR = (120, 148, 178)
DOMINATION_CELL_BGR = (205, 222, 232)
TABLE_BGR = (52, 86, 128)
MARKER_WHITE_BGR = (238, 240, 240)
MARKER_BLACK_BGR = (22, 22, 22)


@dataclass(frozen=True)
class Texture:
    """A BGR image (uint8 or float32) covering board rectangle `origin` + shape / ppu."""

    image: np.ndarray
    origin: tuple[float, float]
    ppu: float

    def texel_of(self, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return (x - self.origin[0]) * self.ppu - 0.5, (y - self.origin[1]) * self.ppu - 0.5


def _coverage(n: int, origin: float, ppu: float, a: float, b: float) -> tuple[slice, np.ndarray]:
    """Fraction of each texel (along one axis) inside [a, b]; only the touched slice."""
    i0 = max(int(np.floor((a - origin) * ppu)), 0)
    i1 = min(int(np.ceil((b - origin) * ppu)), n)
    if i1 <= i0:
        return slice(0, 0), np.zeros(0, np.float32)
    lo = origin + np.arange(i0, i1) / ppu
    hi = lo + 1.0 / ppu
    cov = (np.minimum(hi, b) - np.maximum(lo, a)).clip(0.0, None) * ppu
    return slice(i0, i1), cov.astype(np.float32)


class _Painter:
    def __init__(self, extent: tuple[float, float, float, float], ppu: float, bgr: tuple) -> None:
        x0, y0, x1, y1 = extent
        self.origin = (x0, y0)
        self.ppu = ppu
        w = round(float((x1 - x0) * ppu))
        h = round(float((y1 - y0) * ppu))
        self.image = np.empty((h, w, 3), np.float32)
        self.image[:] = bgr

    def alpha_rect(
        self, x0: float, y0: float, x1: float, y1: float
    ) -> tuple[slice, slice, np.ndarray]:
        h, w = self.image.shape[:2]
        sx, cx = _coverage(w, self.origin[0], self.ppu, x0, x1)
        sy, cy = _coverage(h, self.origin[1], self.ppu, y0, y1)
        return sy, sx, np.outer(cy, cx)

    def fill(self, x0: float, y0: float, x1: float, y1: float, bgr: tuple) -> None:
        sy, sx, a = self.alpha_rect(x0, y0, x1, y1)
        if a.size:
            region = self.image[sy, sx]
            region += (np.asarray(bgr, np.float32) - region) * a[..., None]

    def mask_of_rects(self, rects: list[tuple[float, float, float, float]]) -> np.ndarray:
        """Union (max) of the rectangles' coverage; overlapping rectangles do not double-ink."""
        mask = np.zeros(self.image.shape[:2], np.float32)
        for r in rects:
            sy, sx, a = self.alpha_rect(*r)
            if a.size:
                np.maximum(mask[sy, sx], a, out=mask[sy, sx])
        return mask

    def ink(self, mask: np.ndarray, bgr: tuple) -> None:
        self.image += (np.asarray(bgr, np.float32) - self.image) * mask[..., None]

    def marker(self, marker_id: int, cx: float, cy: float, side: float) -> None:
        q = side * MARKER_QUIET_ZONE
        half = side / 2
        self.fill(cx - half - q, cy - half - q, cx + half + q, cy + half + q, MARKER_WHITE_BGR)
        dictionary = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50)
        bits = cv2.aruco.generateImageMarker(dictionary, marker_id, 6)  # 4x4 + border, 1 px/module
        black = (bits < 128).astype(np.float32)
        h, w = self.image.shape[:2]
        mod = side / 6
        x0, y0 = cx - half, cy - half
        sx, _ = _coverage(w, self.origin[0], self.ppu, x0, x0 + side)
        sy, _ = _coverage(h, self.origin[1], self.ppu, y0, y0 + side)
        cols = np.stack(
            [
                _coverage_dense(w, self.origin[0], self.ppu, x0 + k * mod, x0 + (k + 1) * mod, sx)
                for k in range(6)
            ],
            axis=1,
        )  # (nx, 6)
        rows = np.stack(
            [
                _coverage_dense(h, self.origin[1], self.ppu, y0 + k * mod, y0 + (k + 1) * mod, sy)
                for k in range(6)
            ],
            axis=1,
        )  # (ny, 6)
        alpha = rows @ black @ cols.T
        region = self.image[sy, sx]
        region += (np.asarray(MARKER_BLACK_BGR, np.float32) - region) * alpha[..., None]


def _coverage_dense(
    n: int, origin: float, ppu: float, a: float, b: float, window: slice
) -> np.ndarray:
    lo = origin + np.arange(window.start, window.stop) / ppu
    hi = lo + 1.0 / ppu
    return ((np.minimum(hi, b) - np.maximum(lo, a)).clip(0.0, None) * ppu).astype(np.float32)


def _mottle(
    shape: tuple[int, int], rng: np.random.Generator, scale_px: float, amp: float
) -> np.ndarray:
    """Smooth multiplicative noise around 1 (paper fibres, print unevenness)."""
    h, w = shape
    sh, sw = max(2, int(h / scale_px)), max(2, int(w / scale_px))
    small = rng.normal(0.0, 1.0, (sh, sw)).astype(np.float32)
    big = cv2.resize(small, (w, h), interpolation=cv2.INTER_CUBIC)
    return 1.0 + amp * big


@lru_cache(maxsize=6)
def plate_texture(game: str, ppu: float, markers: bool, textured: bool) -> Texture:
    """The printed board of `game` at `ppu` texels per board unit (float32 BGR)."""
    check_game(game)
    extent = PLATE_EXTENT[game]
    if game == "dition":
        p = _Painter(extent, ppu, PAPER_BGR)
        w = DITION_LINE_WIDTH / 2
        rects = []
        for lo, hi in ((0.0, DITION_SIZE), DITION_INNER):
            rects += [
                (lo - w, lo - w, hi + w, lo + w),
                (lo - w, hi - w, hi + w, hi + w),
                (lo - w, lo - w, lo + w, hi + w),
                (hi - w, lo - w, hi + w, hi + w),
            ]
        p.ink(p.mask_of_rects(rects), INK_BGR)
    else:
        p = _Painter(extent, ppu, DOMINATION_PLATE_BGR)
        w = DOMINATION_LINE_WIDTH / 2
        rects = []
        for r in range(1, 9):
            for f in range(8):
                cell = f"{FILES[f]}{r}"
                if cell in CUT_CELLS:
                    continue
                x, y = f, 8 - r
                p.fill(x, y, x + 1, y + 1, DOMINATION_CELL_BGR)
                rects += [
                    (x - w, y - w, x + 1 + w, y + w),
                    (x - w, y + 1 - w, x + 1 + w, y + 1 + w),
                    (x - w, y - w, x + w, y + 1 + w),
                    (x + 1 - w, y - w, x + 1 + w, y + 1 + w),
                ]
        p.ink(p.mask_of_rects(rects), INK_BGR)
    if markers:
        ids, side, centres = MARKERS[game]
        for marker_id, (cx, cy) in zip(ids, centres):
            p.marker(marker_id, cx, cy, side)
    img = p.image
    if textured:
        rng = np.random.default_rng(7)  # fixed: the same printed sheet in every frame
        # fibres (fine) and a faint unevenness of the print (coarse)
        img *= _mottle(img.shape[:2], rng, scale_px=max(2.0, ppu * 0.08), amp=0.01)[..., None]
        img *= _mottle(img.shape[:2], rng, scale_px=ppu * 5.0, amp=0.01)[..., None]
    return Texture(np.clip(img + 0.5, 0, 255).astype(np.uint8), p.origin, ppu)


#: largest side of a plate texture (texels): beyond it a texel is allowed to cover a little more
#: than a canvas pixel (bilinear sampling stays unbiased, only slightly softer)
MAX_TEXTURE_PX = 4096


def plate_ppu_cap(game: str) -> float:
    x0, y0, x1, y1 = PLATE_EXTENT[check_game(game)]
    return MAX_TEXTURE_PX / max(x1 - x0, y1 - y0)


#: the table: its size and resolution are physical, whatever the game's unit
TABLE_SIZE_MM = 2400.0
TABLE_PX_PER_MM = 0.75
TABLE_DARK_BGR = (34, 58, 92)


@lru_cache(maxsize=4)
def table_texture(game: str, textured: bool) -> Texture:
    """A wooden table (planks with grain) centred under the board, in board units."""
    check_game(game)
    n = int(TABLE_SIZE_MM * TABLE_PX_PER_MM)
    light = np.asarray(TABLE_BGR, np.float32)
    img = np.empty((n, n, 3), np.float32)
    img[:] = light
    if textured:
        rng = np.random.default_rng(11)
        mm = (np.arange(n, dtype=np.float32) + 0.5) / TABLE_PX_PER_MM
        # planks along x, ~140 mm wide, each with its own tone and grain phase
        plank_w = 140.0
        plank = np.floor(mm / plank_w).astype(int)
        n_planks = int(plank.max()) + 1
        tone = rng.normal(0.0, 0.06, n_planks).astype(np.float32)
        phase = rng.uniform(0, 50, n_planks).astype(np.float32)
        warp = (
            cv2.resize(
                rng.normal(0, 1, (24, 24)).astype(np.float32), (n, n), interpolation=cv2.INTER_CUBIC
            )
            * 9.0
        )
        yy = mm[:, None] + warp + phase[plank][:, None]
        grain = 0.5 + 0.5 * np.sin(2 * np.pi * yy / 11.0) ** 3
        streak = cv2.resize(
            rng.normal(0, 1, (n, max(2, n // 60))).astype(np.float32),
            (n, n),
            interpolation=cv2.INTER_LINEAR,
        )
        mix = np.clip(0.45 * grain + 0.12 * streak + tone[plank][:, None] + 0.2, 0, 1)
        dark = np.asarray(TABLE_DARK_BGR, np.float32)
        img = light + (dark - light) * mix[..., None]
        # the gaps between planks
        gap = np.abs(mm - (plank + 0.5) * plank_w) > plank_w / 2 - 0.8
        img[gap] *= 0.6
    unit = DITION_UNIT_MM if game == "dition" else DOMINATION_UNIT_MM
    ppu = TABLE_PX_PER_MM * unit
    centre = DITION_SIZE / 2 if game == "dition" else DOMINATION_SIZE / 2
    half_units = TABLE_SIZE_MM / 2 / unit
    tex = np.clip(img + 0.5, 0, 255).astype(np.uint8)
    return Texture(tex, (centre - half_units, centre - half_units), ppu)
