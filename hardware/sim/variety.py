"""A simulated table as varied as real tables (issue 21): other boards, other discs, other light,
other cameras, things on the table that are not discs.

`Variety` names one choice per factor; `render_varied(discs, camera, rng, variety, options)`
renders a Dition frame with them (through the hooks of `render_dition`; `Variety()` is the kit
and renders exactly what `render_dition` renders). `FACTORS` lists every factor's choices, the
first being the kit's; `Variety.one(factor, choice)` changes one factor only (the benchmark
scores each choice against the kit).

Boards (`board`): "paper" (the kit's printed plate), "green_felt" / "blue_felt" (light lines on
felt, no markers), "wood" (grain, dark burnt lines, no markers), "printed" (office paper, thin
black laser lines, no markers), "decorated" (the kit's plate plus printed rings of 1.2 and 0.7
diameters, a star, a title (letters half a disc high), a small logo, a title of letters a disc
high and a disc-sized logo: a dark hexagon with a light letter); boards with no drawn lines,
whose own edge against the table is the playing area's edge: "bare_felt" (a square of green felt)
and "bare_board" (a board painted light grey).
Discs (`disc`): "dition" (the kit: grey centre dot), "plain" (no dot), "othello" (0.15 thick, no
dot, two-coloured side), "glossy" (no dot, a specular highlight off the centre towards the light),
"ridged" (draughts men: a dark rim and a raised inner ring), "off_round" (the whole piece 0.02
of a diameter longer one way, centred on its position: its outline's best-fit circle's centre).
Light (`light`): "room" (as given), "hard_shadow", "glare" (a strong hot spot with specular
glare), "warm" / "cool" (colour casts of tungsten and daylight), "lamp" (a lamp switched on: 15 %
brighter, warmer, a hot spot).
Camera (`camera`): "plain", "defocus" (blur 2 px), "motion" (a 7-px motion blur), "noise"
(sigma 7), "jpeg" (quality 60).
Distractors (`distractors`): "none", "objects" (two coins and a die off the board, a pencil
across its edge).
"""

from __future__ import annotations

import dataclasses
import math
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import cv2
import numpy as np

from hardware.sim.camera import SimCamera
from hardware.sim.effects import apply_effects
from hardware.sim.layout import (
    DITION_DISC_DIAMETER,
    DITION_DOT_DIAMETER,
    DITION_INNER,
    DITION_SIZE,
    PLATE_EXTENT,
)
from hardware.sim.options import DEFAULT_OPTIONS, RenderOptions
from hardware.sim.pieces import Cylinder
from hardware.sim.plate import INK_BGR, Texture, plate_texture
from hardware.sim.render import (
    BLACK_FACE_BGR,
    DOT_BGR,
    WHITE_FACE_BGR,
    Rendered,
    SimDisc,
    render_dition,
)

FACTORS: dict[str, tuple[str, ...]] = {
    "board": ("paper", "green_felt", "blue_felt", "wood", "printed", "decorated", "bare_felt", "bare_board"),
    "disc": ("dition", "plain", "othello", "glossy", "ridged", "off_round"),
    "light": ("room", "hard_shadow", "glare", "warm", "cool", "lamp"),
    "camera": ("plain", "defocus", "motion", "noise", "jpeg"),
    "distractors": ("none", "objects"),
}
#: boards with drawn lines (the board finder must find them) and the lines' polarity
LINED_BOARDS: dict[str, str] = {
    "paper": "dark", "green_felt": "light", "blue_felt": "light", "wood": "dark",
    "printed": "dark", "decorated": "dark",
}
#: boards with no drawn lines: the board's own edge against the table is the playing area's edge
EDGE_BOARDS: tuple[str, ...] = ("bare_felt", "bare_board")
OTHELLO_THICKNESS = 0.15


@dataclass(frozen=True)
class Variety:
    """One choice per factor (see the module's doc); the defaults are the kit's."""

    board: str = "paper"
    disc: str = "dition"
    light: str = "room"
    camera: str = "plain"
    distractors: str = "none"

    def __post_init__(self) -> None:
        for factor, choices in FACTORS.items():
            value = getattr(self, factor)
            if value not in choices:
                raise ValueError(f"Variety.{factor} must be one of {', '.join(choices)}; got {value!r}")

    @classmethod
    def one(cls, factor: str, choice: str) -> Variety:
        """The kit with one factor changed."""
        if factor not in FACTORS:
            raise ValueError(f"unknown factor {factor!r}; factors: {', '.join(FACTORS)}")
        return cls(**{factor: choice})

    @property
    def markers(self) -> bool:
        """Whether the board carries the kit's ArUco markers."""
        return self.board in ("paper", "decorated")

    def options(self, base: RenderOptions = DEFAULT_OPTIONS, *, lamp: bool = True) -> RenderOptions:
        """`base` with this variety's light, camera and disc thickness. `lamp=False`: the glare and
        lamp choices' hot spot lights the frame as the room's own light does (no
        `RenderOptions.lamp_height_units`: it multiplies the room's soft shadows, casts none of its own,
        its glare centred on it), as they were rendered before 2026-12-03: the frames the
        reader's tests of those days describe."""
        ch: dict[str, Any] = {}
        if not self.markers:
            ch["markers"] = False
        if self.disc == "othello":
            ch["disc_thickness"] = OTHELLO_THICKNESS
        if self.disc == "glossy":
            ch["glare"] = max(base.glare, 0.4)
        ch.update({
            "room": {},
            "hard_shadow": {"shadow": 0.65, "shadow_blur_units": 0.03,
                            "light_dir": (0.7 * math.copysign(1, base.light_dir[0] or 1), 0.45)},
            # a lamp's hot spot is a lamp (`RenderOptions.lamp_height_units`): its light adds to the
            # room's, casts its own hard shadows and lights the sides at their angle to it; it
            # hangs where its pool's half-width (0.15 / 0.3 of the diagonal: 7-9 / 14-18 board
            # units under the benchmark's cameras) is a beam 40 degrees off its axis
            "glare": {"hot_spot_strength": 0.45, "hot_spot_radius": 0.15, "glare": 0.6, "lamp_height_units": 10.0},
            "warm": {"colour_cast": (0.82, 1.0, 1.18)},
            "cool": {"colour_cast": (1.15, 1.0, 0.87)},
            "lamp": {"ambient": base.ambient * 1.15, "hot_spot_strength": 0.25, "hot_spot_radius": 0.3,
                     "colour_cast": (0.92, 1.0, 1.08), "lamp_height_units": 20.0},
        }[self.light])
        ch.update({
            "plain": {},
            "defocus": {"blur_sigma_px": 2.0},
            "motion": {},
            "noise": {"noise_sigma": 7.0},
            "jpeg": {"jpeg_quality": 60},
        }[self.camera])
        if not lamp:
            ch.pop("lamp_height_units", None)
        return base.replace(**ch)

    def to_dict(self) -> dict[str, str]:
        return dataclasses.asdict(self)


# ---- boards -------------------------------------------------------------------------------------


def _noise(shape: tuple[int, int], seed: int, scale_px: float) -> np.ndarray:
    """Smooth zero-mean noise of unit spread at about `scale_px` (fixed seed: the same board)."""
    rng = np.random.default_rng(seed)
    h, w = shape
    small = rng.normal(0.0, 1.0, (max(2, int(h / scale_px)), max(2, int(w / scale_px)))).astype(np.float32)
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_CUBIC)


def _axis_cover(n: int, origin: float, ppu: float, a: float, b: float) -> np.ndarray:
    """Share of each of `n` texels along one axis inside [a, b] (exact box filter)."""
    lo = origin + np.arange(n) / ppu
    return ((np.minimum(lo + 1 / ppu, b) - np.maximum(lo, a)).clip(0.0, None) * ppu).astype(np.float32)


def _square_lines(shape: tuple[int, int], origin: float, ppu: float, width: float) -> np.ndarray:
    """Coverage (h, w) of the Dition board's two drawn squares (lines `width` wide)."""
    h, w = shape
    cover = np.zeros((h, w), np.float32)
    half = width / 2
    for lo, hi in ((0.0, DITION_SIZE), DITION_INNER):
        along_x = _axis_cover(w, origin, ppu, lo - half, hi + half)
        along_y = _axis_cover(h, origin, ppu, lo - half, hi + half)
        for c in (lo, hi):
            across_x = _axis_cover(w, origin, ppu, c - half, c + half)
            across_y = _axis_cover(h, origin, ppu, c - half, c + half)
            cover = np.maximum(cover, np.outer(across_y, along_x))  # horizontal lines
            cover = np.maximum(cover, np.outer(along_y, across_x))  # vertical lines
    return cover


@dataclass(frozen=True)
class BoardPlate:
    """`render_dition`'s plate hook: the printed plate of a board material at `ppu`."""

    board: str

    def __call__(self, ppu: float) -> Texture:
        return _board_texture(self.board, round(float(ppu), 3))


@lru_cache(maxsize=4)
def _board_texture(board: str, ppu: float) -> Texture:
    if board in ("paper", "decorated"):
        base = plate_texture("dition", ppu, True, True)
        if board == "paper":
            return base
        img = base.image.copy()
        _decorate(img, base.origin[0], ppu)
        return Texture(img, base.origin, ppu)
    x0, _, x1, _ = (0.0, 0.0, DITION_SIZE, DITION_SIZE) if board in EDGE_BOARDS else PLATE_EXTENT["dition"]
    n = round((x1 - x0) * ppu)
    shape = (n, n)
    if board in EDGE_BOARDS:  # no lines: the board ends where the playing area does
        colour = np.array((46, 112, 38) if board == "bare_felt" else (188, 196, 198), np.float32)
        tone = (1.0 + 0.05 * _noise(shape, 51, max(1.5, 0.03 * ppu)) + 0.03 * _noise(shape, 52, 3.0 * ppu)
                if board == "bare_felt" else 1.0 + 0.015 * _noise(shape, 53, max(1.5, 0.05 * ppu)))
        img = colour[None, None, :] * tone[..., None]
        return Texture(np.clip(img + 0.5, 0, 255).astype(np.uint8), (x0, x0), ppu)
    if board in ("green_felt", "blue_felt"):
        colour = np.array((46, 112, 38) if board == "green_felt" else (118, 62, 26), np.float32)
        # felt: fibres (fine) and a coarse unevenness of the dye
        tone = 1.0 + 0.05 * _noise(shape, 21, max(1.5, 0.03 * ppu)) + 0.03 * _noise(shape, 22, 3.0 * ppu)
        img = colour[None, None, :] * tone[..., None]
        line_bgr, width = np.array((214, 222, 220), np.float32), 0.08
    elif board == "wood":
        yy = (np.arange(n, dtype=np.float32) + 0.5) / ppu
        warp = 0.25 * _noise(shape, 31, 2.0 * ppu)
        grain = 0.5 + 0.5 * np.sin(2 * np.pi * (yy[:, None] + warp) / 0.35) ** 3
        tone = 1.0 - 0.10 * grain + 0.02 * _noise(shape, 32, max(1.5, 0.05 * ppu))
        img = np.array((118, 168, 214), np.float32)[None, None, :] * tone[..., None]
        line_bgr, width = np.array((40, 52, 70), np.float32), 0.07
    else:  # printed: office paper, laser toner
        tone = 1.0 + 0.012 * _noise(shape, 41, max(1.5, 0.05 * ppu))
        img = np.array((236, 238, 238), np.float32)[None, None, :] * tone[..., None]
        line_bgr, width = np.array((28, 28, 28), np.float32), 0.04
    a = _square_lines(shape, x0, ppu, width)[..., None]
    img = img * (1 - a) + line_bgr[None, None, :] * a
    return Texture(np.clip(img + 0.5, 0, 255).astype(np.uint8), (x0, x0), ppu)


def _decorate(img: np.ndarray, origin: float, ppu: float) -> None:
    """Print rings, a star, a title and a logo on the plate (in place, uint8 BGR)."""
    def px(x: float, y: float) -> tuple[int, int]:
        return round((x - origin) * ppu * 16), round((y - origin) * ppu * 16)

    ink = tuple(int(c) for c in INK_BGR)
    red = (40, 40, 170)
    thick = max(1, round(0.04 * ppu))
    for (x, y), d in (((5.0, 5.0), 1.2), ((15.0, 5.0), 1.2), ((5.0, 15.0), 0.7), ((15.0, 15.0), 0.7),
                      ((10.0, 1.5), 1.2), ((1.5, 10.0), 0.7)):
        cv2.circle(img, px(x, y), round(d / 2 * ppu * 16), ink, thick, cv2.LINE_AA, 4)
    c = np.array([10.0, 10.0])
    pts = []
    for k in range(16):
        r = 1.6 if k % 2 == 0 else 0.35
        a = k * math.pi / 8
        pts.append(px(*(c + r * np.array([math.cos(a), math.sin(a)]))))
    cv2.fillPoly(img, [np.array(pts, np.int32)], red, cv2.LINE_AA, 4)
    scale = 0.018 * ppu  # letters ~0.5 of a disc high (a title of disc-sized rings is a limit)
    cv2.putText(img, "DITION", (round((7.4 - origin) * ppu), round((18.6 - origin) * ppu)),
                cv2.FONT_HERSHEY_TRIPLEX, scale, ink, max(1, round(scale * 1.5)), cv2.LINE_AA)
    cv2.putText(img, "TR", (round((18.2 - origin) * ppu), round((1.6 - origin) * ppu)),
                cv2.FONT_HERSHEY_SCRIPT_SIMPLEX, scale * 0.8, red, max(1, round(scale)), cv2.LINE_AA)
    # a title of letters a disc high (bold strokes, 0.1 of a diameter) and a logo of a disc's
    # size: a dark hexagon with a light letter in it (a closed outline, but neither round nor
    # one surface inside)
    font = cv2.FONT_HERSHEY_DUPLEX
    cap_px = cv2.getTextSize("H", font, 1.0, 1)[0][1]  # a capital's height at font scale 1
    stroke = max(1, round(0.1 * ppu))
    big = (ppu - stroke) / cap_px
    cv2.putText(img, "TABLETOP", (round((3.4 - origin) * ppu), round((13.4 - origin) * ppu)), font, big, ink,
                stroke, cv2.LINE_AA)
    hexagon = [px(13.2 + 0.5 * math.cos(k * math.pi / 3), 13.0 + 0.5 * math.sin(k * math.pi / 3)) for k in range(6)]
    cv2.fillPoly(img, [np.array(hexagon, np.int32)], ink, cv2.LINE_AA, 4)
    small_cap = 0.6 * ppu / cap_px
    cv2.putText(img, "R", (round((13.02 - origin) * ppu), round((13.3 - origin) * ppu)), font, small_cap,
                (236, 240, 242), max(1, round(0.07 * ppu)), cv2.LINE_AA)


# ---- discs --------------------------------------------------------------------------------------


def _shade(bgr: tuple[int, int, int], k: float) -> tuple[int, int, int]:
    return tuple(int(min(255, c * k)) for c in bgr)  # type: ignore[return-value]


@dataclass(frozen=True)
class DiscPieces:
    """`render_dition`'s pieces hook: a disc style, plus distractor coins when asked."""

    disc: str
    coins: tuple[tuple[float, float], ...] = ()
    light_dir: tuple[float, float] = (0.35, 0.25)

    def __call__(self, discs: Sequence[SimDisc], thickness: float) -> list[Cylinder]:
        out = []
        r = DITION_DISC_DIAMETER / 2
        for d in discs:
            face, other = ((WHITE_FACE_BGR, BLACK_FACE_BGR) if d.colour == "white"
                           else (BLACK_FACE_BGR, WHITE_FACE_BGR))
            dot = DITION_DOT_DIAMETER / 2 if self.disc == "dition" else 0.0
            rim = _shade(face, 0.55) if self.disc == "ridged" else None
            flat = 1e-3  # a print on the top face: no side of its own
            if self.disc == "off_round":
                # the whole piece 0.02 longer along a direction of its own, top to bottom: two
                # round pieces 0.02 apart, centred on the disc's position (the centre of its
                # outline's best-fit circle), their top faces printed again over both sides
                a = (zlib.crc32(f"{d.x:.4f},{d.y:.4f}".encode()) % 360) * math.pi / 180
                ends = [(d.x + k * 0.01 * math.cos(a), d.y + k * 0.01 * math.sin(a)) for k in (-1, 1)]
                for x, y in ends:
                    out.append(Cylinder(x, y, r, 0.0, thickness, face, _shade(face, 0.72), _shade(other, 0.72)))
                for x, y in ends:
                    out.append(Cylinder(x, y, r, -thickness, flat, face, face, face))
                continue
            out.append(Cylinder(d.x, d.y, r, 0.0, thickness, face, _shade(face, 0.72), _shade(other, 0.72),
                                dot_radius=dot, dot_bgr=DOT_BGR, rim_bgr=rim))
            if self.disc == "ridged":  # the raised inner ring of a draughts man
                out.append(Cylinder(d.x, d.y, 0.36, -thickness, flat, face, face, face,
                                    rim_bgr=_shade(face, 0.55) if d.colour == "white" else _shade(face, 2.2)))
            elif self.disc == "glossy":  # the lamp's reflection, off the centre towards the light
                lx, ly = self.light_dir
                n = math.hypot(lx, ly) or 1.0
                out.append(Cylinder(d.x - 0.22 * lx / n, d.y - 0.22 * ly / n, 0.07, -thickness, flat,
                                    (250, 250, 250), face, face))
        for x, y in self.coins:
            metal = (150, 160, 168)
            out.append(Cylinder(x, y, 0.39, 0.0, 0.06, metal, _shade(metal, 0.7), _shade(metal, 0.7),
                                rim_bgr=_shade(metal, 0.6)))
        return out


# ---- distractors drawn on the frame -------------------------------------------------------------

COINS_BOARD = ((-1.2, 6.0), (21.4, 13.5))
DIE_BOARD = (22.0, 3.0)
PENCIL_BOARD = ((-1.5, 17.0), (3.5, 21.5))


def _draw_objects(image: np.ndarray, camera: SimCamera) -> None:
    """A die (0.5 high) and a pencil (0.25 thick) on the frame (float32 BGR, in place)."""
    def poly(pts_world: np.ndarray, bgr: tuple[float, float, float]) -> None:
        p = camera.project(np.asarray(pts_world, np.float64))
        cv2.fillPoly(image, [np.round(p * 16).astype(np.int32)], bgr, cv2.LINE_AA, 4)

    x, y, s = DIE_BOARD[0], DIE_BOARD[1], 0.5
    top = np.array([[x, y, -s], [x + s, y, -s], [x + s, y + s, -s], [x, y + s, -s]])
    poly(np.array([[x, y + s, 0], [x + s, y + s, 0], [x + s, y + s, -s], [x, y + s, -s]]), (170, 172, 175))
    poly(np.array([[x + s, y, 0], [x + s, y + s, 0], [x + s, y + s, -s], [x + s, y, -s]]), (200, 202, 205))
    poly(top, (238, 240, 242))
    for fx, fy in ((0.25, 0.25), (0.75, 0.75), (0.5, 0.5)):
        c = camera.project(np.array([[x + fx * s, y + fy * s, -s]]))[0]
        e = camera.project(np.array([[x + fx * s + 0.06, y + fy * s, -s]]))[0]
        cv2.circle(image, (round(c[0] * 16), round(c[1] * 16)), max(1, round(np.linalg.norm(e - c) * 16)),
                   (30, 30, 30), -1, cv2.LINE_AA, 4)
    (ax, ay), (bx, by) = PENCIL_BOARD
    d = np.array([bx - ax, by - ay])
    n = np.array([-d[1], d[0]]) / np.linalg.norm(d) * 0.125
    h = -0.25
    body = np.array([[ax + n[0], ay + n[1], h], [bx + n[0], by + n[1], h],
                     [bx - n[0], by - n[1], h], [ax - n[0], ay - n[1], h]])
    poly(body, (40, 190, 230))


# ---- the frame ----------------------------------------------------------------------------------


def render_varied(
    discs: Sequence[SimDisc],
    camera: SimCamera,
    rng: np.random.Generator,
    variety: Variety = Variety(),
    options: RenderOptions = DEFAULT_OPTIONS,
    *,
    lamp: bool = True,
    **kwargs: Any,
) -> Rendered:
    """A Dition frame of `discs` on `variety`'s table, `options` changed by `variety.options`
    (with its `lamp`). Further keyword arguments (hand, gain) go to `render_dition`. `Variety()`
    renders the kit (the same frame as `render_dition`)."""
    opts = variety.options(options, lamp=lamp)
    coins = COINS_BOARD if variety.distractors == "objects" else ()
    pieces = None if (variety.disc == "dition" and not coins) else DiscPieces(variety.disc, coins, opts.light_dir)
    plate = None if variety.board == "paper" else BoardPlate(variety.board)
    post = variety.camera == "motion" or variety.distractors == "objects"
    if not post:
        out = render_dition(discs, camera, rng, options=opts, plate_hook=plate, pieces_hook=pieces, **kwargs)
    else:
        # what comes after the lens (motion, objects drawn on the frame) is added before the
        # sensor: render without noise and codec, then add both
        raw = render_dition(discs, camera, rng, options=opts.replace(noise_sigma=0.0, jpeg_quality=None),
                            plate_hook=plate, pieces_hook=pieces, **kwargs)
        img = raw.image.astype(np.float32)
        if variety.distractors == "objects":
            _draw_objects(img, camera)
        if variety.camera == "motion":
            k = np.zeros((7, 7), np.float32)
            a = (zlib.crc32(repr(camera.tvec.tolist()).encode()) % 180) * math.pi / 180
            cv2.line(k, (round(3 - 3 * math.cos(a)), round(3 - 3 * math.sin(a))),
                     (round(3 + 3 * math.cos(a)), round(3 + 3 * math.sin(a))), 1.0, 1, cv2.LINE_AA)
            img = cv2.filter2D(img, -1, k / k.sum())
        sensor = RenderOptions.clean(noise_sigma=opts.noise_sigma, jpeg_quality=opts.jpeg_quality)
        out = Rendered(apply_effects(img, sensor, rng), raw.truth)
    out.truth["variety"] = variety.to_dict()
    return out
