"""Render a simulated camera frame of a Dition or Domination board, with its ground truth.

Pipeline (one frame): the table and the printed plate are warped from board-frame textures into
a supersampled canvas (exact lens model), averaged down (INTER_AREA); soft piece shadows are
multiplied in; the pieces are drawn as 3D cylinders on a supersampled premultiplied layer and
composited; an optional hand is drawn; then light, colour cast, blur, noise and JPEG. A lamp
(`RenderOptions.lamp_height_units`) lights a second picture of the same scene, with its own hard
shadows and the sides at their angle to it, which is added in its pool of light.
The static part (everything before the hand and the effects) is cached per scene and camera.
"""

from __future__ import annotations

import math
import threading
import zlib
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from hardware.sim.camera import SimCamera
from hardware.sim.chessboard import ChessBoard, chessboard_texture
from hardware.sim.effects import apply_effects
from hardware.sim.hand import HandPose, draw_hand
from hardware.sim.layout import (
    DITION_DISC_DIAMETER,
    DITION_DOT_DIAMETER,
    DOMINATION_COLOURS,
    DOMINATION_PIECE_DIAMETER,
    board_corners,
    cell_centre,
    playable_cells,
    unit_mm,
)
from hardware.sim.men import Men, spare_pieces
from hardware.sim.options import DEFAULT_OPTIONS, RenderOptions
from hardware.sim.pieces import (
    Cylinder,
    Lamp,
    depth_order,
    draw_cylinders,
    lamp_shadow_polygons_world,
    shadow_polygons_world,
)
from hardware.sim.plate import Texture, plate_ppu_cap, plate_texture, table_texture
from hardware.sim.warp import warp_texture

DISC_COLOURS = ("black", "white")
WHITE_FACE_BGR = (232, 234, 233)
BLACK_FACE_BGR = (30, 30, 34)
DOT_BGR = (128, 128, 128)
MAX_STACK = 5
_PLAYABLE = frozenset(playable_cells())

#: a scene hook (hardware.sim.variety): the printed plate at `ppu` texels per unit, or the pieces
#: of a disc list at a thickness; hashable (they are part of the render cache's key)
PlateHook = Callable[[float], Texture]
PiecesHook = Callable[[Sequence["SimDisc"], float], list[Cylinder]]


@dataclass(frozen=True)
class SimDisc:
    """A Dition disc on the board: centre (x, y) in board units, colour "black" | "white"."""

    x: float
    y: float
    colour: str

    def __post_init__(self) -> None:
        if self.colour not in DISC_COLOURS:
            raise ValueError(f"SimDisc colour must be 'black' or 'white', got {self.colour!r}")
        if not (math.isfinite(self.x) and math.isfinite(self.y)):
            raise ValueError(f"SimDisc position must be finite, got ({self.x}, {self.y})")


@dataclass(frozen=True, eq=False)
class Rendered:
    """A frame (BGR uint8, (h, w, 3)) and its JSON-able ground truth."""

    image: np.ndarray
    truth: dict[str, Any]


# ---- scene building ---------------------------------------------------------------------------


def _disc_cylinders(discs: Sequence[SimDisc], thickness: float) -> list[Cylinder]:
    out = []
    for d in discs:
        face, other = (
            (WHITE_FACE_BGR, BLACK_FACE_BGR)
            if d.colour == "white"
            else (BLACK_FACE_BGR, WHITE_FACE_BGR)
        )
        out.append(
            Cylinder(
                d.x,
                d.y,
                DITION_DISC_DIAMETER / 2,
                0.0,
                thickness,
                face,
                side_upper_bgr=tuple(int(c * 0.72) for c in face),  # type: ignore[arg-type]
                side_lower_bgr=tuple(int(c * 0.72) for c in other),  # type: ignore[arg-type]
                dot_radius=DITION_DOT_DIAMETER / 2,
                dot_bgr=DOT_BGR,
            )
        )
    return out


def check_stacks(stacks: Mapping[str, str], colours: Mapping[str, tuple[int, int, int]]) -> None:
    for cell, stack in stacks.items():
        if cell not in _PLAYABLE:
            raise ValueError(f"stack on {cell!r}: not one of the 52 playable cells")
        if not isinstance(stack, str) or not 0 <= len(stack) <= MAX_STACK:
            raise ValueError(
                f"stack on {cell}: {stack!r} must be a string of 0..{MAX_STACK} colours"
            )
        unknown = set(stack) - set(colours)
        if unknown:
            raise ValueError(
                f"stack on {cell}: unknown colour letters {sorted(unknown)}; "
                f"known: {sorted(colours)}"
            )


def _stack_cylinders(
    stacks: Mapping[str, str],
    colours: Mapping[str, tuple[int, int, int]],
    thickness: float,
    men: Men | None = None,
) -> tuple[list[list[Cylinder]], list[str]]:
    """Per non-empty cell, its pieces bottom to top (each placed with a small, stable jitter);
    the kit's pieces, or `men` (draughts men, chips, counters)."""
    groups, cells = [], []
    for cell in sorted(stacks):
        stack = stacks[cell]
        if not stack:
            continue
        cx, cy = cell_centre(cell)
        # jitter depends only on the cell and its stack, so a scene re-renders identically
        jr = np.random.default_rng(zlib.crc32(f"{cell}:{stack}".encode()))
        if men is not None:
            offs = jr.normal(0.0, men.jitter, size=(len(stack), 2)).clip(
                -2.8 * men.jitter, 2.8 * men.jitter
            )
        else:
            offs = jr.normal(0.0, 0.018, size=(len(stack), 2)).clip(-0.05, 0.05)
        pieces = []
        for i, letter in enumerate(stack):
            bgr = tuple(int(c) for c in colours[letter])
            if men is not None:
                pieces.append(
                    men.piece(cx + offs[i, 0], cy + offs[i, 1], -i * thickness, thickness,
                              bgr, f"{cell}:{stack}:{i}")  # type: ignore[arg-type]
                )
                continue
            pieces.append(
                Cylinder(
                    cx + offs[i, 0],
                    cy + offs[i, 1],
                    DOMINATION_PIECE_DIAMETER / 2,
                    -i * thickness,
                    thickness,
                    bgr,  # type: ignore[arg-type]
                    side_upper_bgr=tuple(int(c * 0.82) for c in bgr),  # type: ignore[arg-type]
                    side_lower_bgr=tuple(int(c * 0.82) for c in bgr),  # type: ignore[arg-type]
                    rim_bgr=tuple(int(c * 0.55) for c in bgr),  # type: ignore[arg-type]
                )
            )
        groups.append(pieces)
        cells.append(cell)
    return groups, cells


# ---- the static render ------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class _Static:
    """The cached part of a frame (uint8 to keep a dozen scenes in ~100 MB)."""

    image: np.ndarray  # uint8 BGR at output size, lens-blurred, before light and noise
    gloss: np.ndarray  # uint8 (h, w) 0..255, glossy piece faces
    lamp: np.ndarray | None = None  # uint8 BGR: the scene as the lamp alone lights it, or None


def _px_per_unit(camera: SimCamera, game: str) -> float:
    """Largest local scale (px per board unit) over the board."""
    s = 20.0 if game == "dition" else 8.0
    pts = np.array([[x, y, 0.0] for x in (0, s / 2, s) for y in (0, s / 2, s)])
    d = np.array([[0.05, 0, 0]])
    a = camera.project(pts)
    b = camera.project(pts + d)
    return float(np.max(np.linalg.norm(b - a, axis=1)) / 0.05)


def _texture_ppu(scale_px_per_unit: float) -> float:
    """Texture resolution for a canvas of this scale: a level at least as fine as the canvas."""
    level = 16.0
    while level < scale_px_per_unit * 1.05 and level < 512:
        level *= 1.5
    return round(level, 3)


def _shifted(camera: SimCamera, dx: float, dy: float, size: tuple[int, int]) -> SimCamera:
    K = camera.camera_matrix.copy()
    K[0, 2] -= dx
    K[1, 2] -= dy
    return SimCamera(K, camera.dist_coeffs, camera.rvec, camera.tvec, size)


def _background(
    game: str,
    camera: SimCamera,
    options: RenderOptions,
    board: ChessBoard | None = None,
    plate_hook: PlateHook | None = None,
) -> np.ndarray:
    """Table + plate (or the chessboard `board`, or what `plate_hook` draws), supersampled and
    averaged down: float32 BGR at output size.

    The table has no fine detail, so it is warped at output resolution and enlarged; the printed
    plate is warped into the supersampled canvas (only over its own footprint)."""
    ss = options.supersample
    w, h = camera.image_size
    table = np.empty((h, w, 3), np.uint8)
    warp_texture(
        table, camera, table_texture(game, options.table_texture), border_transparent=False
    )
    if ss == 1:
        canvas = table
    else:
        canvas = cv2.resize(table, (w * ss, h * ss), interpolation=cv2.INTER_NEAREST)
    cam_ss = camera.scaled(ss)
    ppu = min(_texture_ppu(_px_per_unit(cam_ss, game)), round(plate_ppu_cap(game), 3))
    plate: Texture
    if board is not None:
        plate = chessboard_texture(board, _texture_ppu(_px_per_unit(cam_ss, game)), options.table_texture)
    elif plate_hook is not None:
        plate = plate_hook(ppu)
    else:
        plate = plate_texture(game, ppu, options.markers, options.table_texture)
    warp_texture(canvas, cam_ss, plate)
    small = canvas if ss == 1 else cv2.resize(canvas, (w, h), interpolation=cv2.INTER_AREA)
    return small.astype(np.float32)


def _apply_shadows(
    image: np.ndarray, camera: SimCamera, pieces: list[Cylinder], options: RenderOptions, game: str
) -> None:
    if options.shadow <= 0 or not pieces:
        return
    h, w = image.shape[:2]
    sigma = max(0.5, options.shadow_blur_units * _px_per_unit(camera, game))
    # soft: drawn and blurred at a lower resolution when the blur is wide
    q = int(np.clip(sigma // 3, 1, 4))
    sh, sw = -(-h // q), -(-w // q)
    mask = np.zeros((sh, sw), np.uint8)
    outlines = shadow_polygons_world(pieces, options.light_dir)
    px = camera.project(np.concatenate(outlines)).astype(np.float32).reshape(len(outlines), -1, 2)
    px = (px + 0.5) / q - 0.5
    polys = [np.round(cv2.convexHull(p)[:, 0, :] * 16).astype(np.int32) for p in px]
    cv2.fillPoly(mask, polys, 255, cv2.LINE_AA, 4)
    soft = cv2.GaussianBlur(mask, (0, 0), sigma / q)
    if q > 1:
        soft = cv2.resize(soft, (sw * q, sh * q), interpolation=cv2.INTER_LINEAR)[:h, :w]
    image *= (1.0 - (options.shadow / 255.0) * soft.astype(np.float32))[..., None]


#: a lamp's aperture (a shade's mouth or a bulb, 4-5 cm: 1.5 Dition units): its shadows'
#: penumbra is this wide times a piece's height over the lamp's height above it (0.012 of a
#: diameter for a 0.08-high disc under a lamp 10 high: a hard shadow)
LAMP_APERTURE_UNITS = 1.5


def lamp_over_board(camera: SimCamera, options: RenderOptions) -> Lamp | None:
    """The lamp of `options` (None without `lamp_height_units`): its pool of light (the hot spot) is
    brightest right under it, so it hangs above the board point seen at `hot_spot_xy`."""
    if options.lamp_height_units is None:
        return None
    w, h = camera.image_size
    px = np.array([[[options.hot_spot_xy[0] * w - 0.5, options.hot_spot_xy[1] * h - 0.5]]])
    xn, yn = cv2.undistortPoints(px, camera.camera_matrix, camera.dist_coeffs)[0, 0]
    ray = camera.R_world_to_camera.T @ np.array([xn, yn, 1.0])
    c = camera.centre_world
    if abs(ray[2]) < 1e-9 or -c[2] / ray[2] <= 0:
        return None  # the hot spot above the horizon: no board point under it
    foot = c + ray * (-c[2] / ray[2])
    return Lamp(float(foot[0]), float(foot[1]), float(options.lamp_height_units))


def lamp_glare_xy(camera: SimCamera, lamp: Lamp) -> tuple[float, float] | None:
    """Where a flat glossy face mirrors `lamp` to the camera (image fractions): the board point
    on the line between the two feet that splits it as their heights do (the lamp's mirror image
    under the board seen through it), between the lamp's foot and the camera's, nearer the lower
    one; None if it falls behind the camera."""
    c = camera.centre_world
    h_cam = abs(float(c[2]))
    k = lamp.height / (lamp.height + h_cam)
    x = lamp.x + (c[0] - lamp.x) * k
    y = lamp.y + (c[1] - lamp.y) * k
    if camera.to_camera(np.array([[x, y, 0.0]]))[0, 2] <= 0:
        return None
    u, v = camera.project(np.array([[x, y, 0.0]]))[0]
    w, h = camera.image_size
    return (float(u) + 0.5) / w, (float(v) + 0.5) / h


def _apply_lamp_shadows(
    image: np.ndarray, camera: SimCamera, pieces: list[Cylinder], lamp: Lamp, game: str
) -> None:
    """The lamp's own shadows on the picture it lights: its light wholly missing there."""
    if not pieces:
        return
    h, w = image.shape[:2]
    height = max(-(p.z_base - p.thickness) for p in pieces)
    sigma = max(0.5, 0.5 * LAMP_APERTURE_UNITS * height / lamp.height * _px_per_unit(camera, game))
    mask = np.zeros((h, w), np.uint8)
    outlines = lamp_shadow_polygons_world(pieces, lamp)
    px = camera.project(np.concatenate(outlines)).astype(np.float32).reshape(len(outlines), -1, 2)
    polys = [np.round(cv2.convexHull(p)[:, 0, :] * 16).astype(np.int32) for p in px]
    cv2.fillPoly(mask, polys, 255, cv2.LINE_AA, 4)
    soft = cv2.GaussianBlur(mask, (0, 0), sigma)
    image *= (1.0 - soft.astype(np.float32) / 255.0)[..., None]


def _draw_pieces(
    image: np.ndarray, camera: SimCamera, pieces: list[Cylinder], options: RenderOptions,
    lamp: Lamp | None = None,
) -> np.ndarray:
    """Composite the pieces (given back to front) over float32 `image`; return the 0..1 coverage."""
    h, w = image.shape[:2]
    cover = np.zeros((h, w), np.float32)
    if not pieces:
        return cover
    ss = options.supersample
    cam_ss = camera.scaled(ss)
    # bounding box of everything drawn, in output pixels, so the supersampled layer stays small
    outline_pts = []
    for p in pieces:
        for z in (p.z_base, p.z_base - p.thickness):
            outline_pts.append(
                np.array(
                    [
                        [p.x - p.radius, p.y - p.radius, z],
                        [p.x + p.radius, p.y - p.radius, z],
                        [p.x + p.radius, p.y + p.radius, z],
                        [p.x - p.radius, p.y + p.radius, z],
                    ]
                )
            )
    px = camera.project(np.concatenate(outline_pts))
    x0 = int(np.clip(np.floor(px[:, 0].min()) - 2, 0, w))
    x1 = int(np.clip(np.ceil(px[:, 0].max()) + 3, 0, w))
    y0 = int(np.clip(np.floor(px[:, 1].min()) - 2, 0, h))
    y1 = int(np.clip(np.ceil(px[:, 1].max()) + 3, 0, h))
    if x1 <= x0 or y1 <= y0:
        return cover
    sub_w, sub_h = (x1 - x0) * ss, (y1 - y0) * ss
    cam_sub = _shifted(cam_ss, x0 * ss, y0 * ss, (sub_w, sub_h))
    layer = np.zeros((sub_h, sub_w, 3), np.uint8)
    alpha = np.zeros((sub_h, sub_w), np.uint8)
    draw_cylinders(layer, alpha, cam_sub, pieces, options.light_dir, lamp)
    small = cv2.resize(layer, (x1 - x0, y1 - y0), interpolation=cv2.INTER_AREA).astype(np.float32)
    a = (
        cv2.resize(alpha, (x1 - x0, y1 - y0), interpolation=cv2.INTER_AREA).astype(np.float32)
        / 255.0
    )
    region = image[y0:y1, x0:x1]
    region *= (1.0 - a)[..., None]
    region += small
    cover[y0:y1, x0:x1] = a
    return cover


_STATIC_CACHE: OrderedDict[tuple, _Static] = OrderedDict()
_STATIC_CACHE_SIZE = 12
_STATIC_LOCK = threading.Lock()  # sources may render from their own threads


def _static_render(
    game: str,
    key: tuple,
    pieces: list[Cylinder],
    camera: SimCamera,
    options: RenderOptions,
    board: ChessBoard | None = None,
    plate_hook: PlateHook | None = None,
) -> _Static:
    full_key = (game, key, camera, options, board, plate_hook)
    with _STATIC_LOCK:
        hit = _STATIC_CACHE.get(full_key)
        if hit is not None:
            _STATIC_CACHE.move_to_end(full_key)
            return hit
    image = _background(game, camera, options, board, plate_hook)
    lamp = lamp_over_board(camera, options)
    lit = None
    if lamp is not None:
        # the same scene as the lamp alone lights it: none of the room's soft shadows (the lamp
        # shines into them), its own hard ones, the sides at their angle to it
        lit = image.copy()
        _apply_lamp_shadows(lit, camera, pieces, lamp, game)
        _draw_pieces(lit, camera, pieces, options, lamp)
    _apply_shadows(image, camera, pieces, options, game)
    gloss = _draw_pieces(image, camera, pieces, options)
    if options.blur_sigma_px > 0:
        # the lens blur is linear and the light field smooth: blur once per scene, not per frame
        image = cv2.GaussianBlur(image, (0, 0), options.blur_sigma_px)
        gloss = cv2.GaussianBlur(gloss, (0, 0), options.blur_sigma_px)
        if lit is not None:
            lit = cv2.GaussianBlur(lit, (0, 0), options.blur_sigma_px)
    image8 = cv2.convertScaleAbs(cv2.max(image, 0.0))
    gloss8 = cv2.convertScaleAbs(gloss, alpha=255.0)
    image8.setflags(write=False)
    gloss8.setflags(write=False)
    lit8 = None
    if lit is not None:
        lit8 = cv2.convertScaleAbs(cv2.max(lit, 0.0))
        lit8.setflags(write=False)
    out = _Static(image8, gloss8, lit8)
    with _STATIC_LOCK:
        _STATIC_CACHE[full_key] = out
        while len(_STATIC_CACHE) > _STATIC_CACHE_SIZE:
            _STATIC_CACHE.popitem(last=False)
    return out


def _finish(
    static: _Static,
    game: str,
    camera: SimCamera,
    rng: np.random.Generator,
    options: RenderOptions,
    hand: HandPose | None,
    gain: float = 1.0,
) -> tuple[np.ndarray, np.ndarray | None]:
    image = static.image.astype(np.float32)  # already blurred by the lens (see _static_render)
    hand_mask = None
    if hand is not None:
        hand_mask, box = draw_hand(
            image, camera, hand, unit_mm(game), shadow=options.shadow, light_dir=options.light_dir
        )
        if box is not None and options.blur_sigma_px > 0:
            pad = int(4 * options.blur_sigma_px) + 2
            h, w = image.shape[:2]
            x0, y0 = max(box[0] - pad, 0), max(box[1] - pad, 0)
            x1, y1 = min(box[2] + pad, w), min(box[3] + pad, h)
            image[y0:y1, x0:x1] = cv2.GaussianBlur(
                image[y0:y1, x0:x1], (0, 0), options.blur_sigma_px
            )
    gloss = static.gloss.astype(np.float32) * np.float32(1.0 / 255.0)
    lit = None if static.lamp is None else static.lamp.astype(np.float32)
    if hand_mask is not None:
        gloss *= 1.0 - hand_mask.astype(np.float32) * np.float32(1.0 / 255.0)
        if lit is not None:  # the hand hides what the lamp lit under it (the hand: room light)
            lit *= (1.0 - hand_mask.astype(np.float32) * np.float32(1.0 / 255.0))[..., None]
    lamp = lamp_over_board(camera, options)
    glare_xy = None if lamp is None else lamp_glare_xy(camera, lamp)
    out = apply_effects(image, options, rng, gain=gain, gloss=gloss, blurred=True, lamp=lit, glare_xy=glare_xy)
    return out, hand_mask


def _base_truth(
    game: str,
    camera: SimCamera,
    options: RenderOptions,
    hand: HandPose | None,
    hand_mask: np.ndarray | None,
) -> dict[str, Any]:
    corners = np.array([[x, y, 0.0] for x, y in board_corners(game)])
    box = None
    if hand_mask is not None:
        rows = np.flatnonzero(hand_mask.max(axis=1) > 127)
        cols = np.flatnonzero(hand_mask.max(axis=0) > 127)
        if rows.size:
            box = [int(cols[0]), int(rows[0]), int(cols[-1]) + 1, int(rows[-1]) + 1]
    return {
        "game": game,
        "image_size": list(camera.image_size),
        "corners_px": camera.project(corners).tolist(),
        "camera": camera.to_dict(),
        "hand": hand is not None,
        "hand_pose": None if hand is None else hand.to_dict(),
        "hand_box_px": box,  # [x0, y0, x1, y1) of the pixels the hand covers, or None
        "options": options.to_dict(),
    }


def _occluded(px: np.ndarray, mask: np.ndarray | None) -> list[bool]:
    if mask is None:
        return [False] * len(px)
    h, w = mask.shape
    out = []
    for x, y in px:
        xi, yi = round(float(x)), round(float(y))
        out.append(bool(0 <= xi < w and 0 <= yi < h and mask[yi, xi] > 127))
    return out


# ---- public entry points ----------------------------------------------------------------------


def dition_scene(
    discs: Sequence[SimDisc],
    camera: SimCamera,
    options: RenderOptions,
    pieces_hook: PiecesHook | None = None,
) -> tuple[tuple, list[Cylinder], list[SimDisc]]:
    discs = [d if isinstance(d, SimDisc) else SimDisc(*d) for d in discs]
    cyl = (_disc_cylinders if pieces_hook is None else pieces_hook)(discs, options.disc_thickness)
    order = depth_order(camera, np.array([c.top_centre_world for c in cyl]).reshape(-1, 3))
    cyl = [cyl[i] for i in order]
    key = tuple((d.x, d.y, d.colour) for d in discs)
    if pieces_hook is not None:
        key = (key, pieces_hook)
    return key, cyl, discs


def render_dition(
    discs: Sequence[SimDisc],
    camera: SimCamera,
    rng: np.random.Generator,
    *,
    options: RenderOptions = DEFAULT_OPTIONS,
    hand: HandPose | None = None,
    gain: float = 1.0,
    plate_hook: PlateHook | None = None,
    pieces_hook: PiecesHook | None = None,
) -> Rendered:
    """A camera frame of a Dition board with `discs` on it (and a hand if given).

    `gain` multiplies the light level (per-frame flicker of a scripted match). The static part of
    the picture is cached per (discs, camera, options), so re-rendering a scene with a new hand
    pose or new noise is cheap. `plate_hook` / `pieces_hook` replace the kit's printed plate and
    its discs (other boards and pieces: hardware.sim.variety); None renders the kit."""
    key, cyl, discs = dition_scene(discs, camera, options, pieces_hook)
    static = _static_render("dition", key, cyl, camera, options, plate_hook=plate_hook)
    image, hand_mask = _finish(static, "dition", camera, rng, options, hand, gain)
    truth = _base_truth("dition", camera, options, hand, hand_mask)
    t = options.disc_thickness
    tops = camera.project(np.array([[d.x, d.y, -t] for d in discs]).reshape(-1, 3))
    bases = camera.project(np.array([[d.x, d.y, 0.0] for d in discs]).reshape(-1, 3))
    occl = _occluded(tops, hand_mask)
    truth["discs"] = [
        {
            "x": float(d.x),
            "y": float(d.y),
            "colour": d.colour,
            "centre_px": tops[i].tolist(),
            "base_px": bases[i].tolist(),
            "occluded": occl[i],
        }
        for i, d in enumerate(discs)
    ]
    return Rendered(image, truth)


def domination_scene(
    stacks: Mapping[str, str],
    camera: SimCamera,
    options: RenderOptions,
    colours: Mapping[str, tuple[int, int, int]] | None = None,
    board: ChessBoard | None = None,
    men: Men | None = None,
) -> tuple[tuple, list[Cylinder], dict[str, list[Cylinder]]]:
    pal = dict(DOMINATION_COLOURS if colours is None else colours)
    check_stacks(stacks, pal)
    groups, cells = _stack_cylinders(stacks, pal, options.piece_thickness, men)
    by_cell = dict(zip(cells, groups))
    if board is not None:
        groups = groups + spare_pieces(board, men or Men(kind="counter"), pal, options.piece_thickness)
    if groups:
        bases = np.array(
            [[g[0].x, g[0].y, -0.5 * len(g) * options.piece_thickness] for g in groups]
        )
        order = depth_order(camera, bases)
    else:
        order = np.zeros(0, int)
    flat = [p for i in order for p in groups[i]]
    key: tuple = (
        tuple(sorted((c, s) for c, s in stacks.items() if s)),
        tuple(sorted((k, tuple(v)) for k, v in pal.items())),
    )
    if men is not None:
        key += (men,)
    return key, flat, by_cell


def render_domination(
    stacks: Mapping[str, str],
    camera: SimCamera,
    rng: np.random.Generator,
    *,
    colours: Mapping[str, tuple[int, int, int]] | None = None,
    options: RenderOptions = DEFAULT_OPTIONS,
    hand: HandPose | None = None,
    gain: float = 1.0,
    board: ChessBoard | None = None,
    men: Men | None = None,
) -> Rendered:
    """A camera frame of a Domination board; `stacks` maps cells ("d4") to bottom-to-top
    colour letters ("GRG"); `colours` maps letters to BGR (default: G R B Y of the kit).
    `board`: a chessboard instead of the kit's printed board (no markers); `men`: draughts
    men, chips or counters instead of the kit's pieces (issue 19)."""
    key, flat, by_cell = domination_scene(stacks, camera, options, colours, board, men)
    static = _static_render("domination", key, flat, camera, options, board)
    image, hand_mask = _finish(static, "domination", camera, rng, options, hand, gain)
    truth = _base_truth("domination", camera, options, hand, hand_mask)
    cells = sorted(by_cell)
    tops = camera.project(np.array([by_cell[c][-1].top_centre_world for c in cells]).reshape(-1, 3))
    occl = _occluded(tops, hand_mask)
    truth["stacks"] = {c: stacks[c] for c in cells}
    truth["tops_px"] = {c: tops[i].tolist() for i, c in enumerate(cells)}
    truth["tops_board"] = {c: [float(by_cell[c][-1].x), float(by_cell[c][-1].y)] for c in cells}
    truth["occluded"] = {c: occl[i] for i, c in enumerate(cells)}
    truth["colours"] = {
        k: list(v) for k, v in (DOMINATION_COLOURS if colours is None else colours).items()
    }
    if board is not None:
        truth["board"] = board.to_dict()
    if men is not None:
        truth["men"] = men.to_dict()
    return Rendered(image, truth)


def render_planar_target(
    texture_bgr: np.ndarray,
    size_units: tuple[float, float],
    camera: SimCamera,
    rng: np.random.Generator,
    *,
    options: RenderOptions = DEFAULT_OPTIONS,
    table: bool = True,
) -> np.ndarray:
    """A flat printed sheet (`texture_bgr`, uint8 BGR or grey) lying on z = 0 with its top-left
    corner at the world origin and size `size_units` (w, h), seen by `camera` with the same
    effects as the board renders. Returns the BGR uint8 frame."""
    tex = np.asarray(texture_bgr)
    if tex.ndim == 2:
        tex = cv2.cvtColor(tex, cv2.COLOR_GRAY2BGR)
    if tex.ndim != 3 or tex.shape[2] != 3 or tex.dtype != np.uint8:
        raise ValueError(
            f"texture_bgr must be a uint8 BGR or grey image, got {tex.dtype} {tex.shape}"
        )
    tw, th = float(size_units[0]), float(size_units[1])
    if tw <= 0 or th <= 0:
        raise ValueError(f"size_units must be positive, got {size_units}")
    ppu_x, ppu_y = tex.shape[1] / tw, tex.shape[0] / th
    if abs(ppu_x - ppu_y) > 1e-3 * max(ppu_x, ppu_y):
        tex = cv2.resize(
            tex, (tex.shape[1], round(float(tex.shape[1] * th / tw))), interpolation=cv2.INTER_AREA
        )
    ss = options.supersample
    cam_ss = camera.scaled(ss)
    w, h = cam_ss.image_size
    canvas = np.empty((h, w, 3), np.uint8)
    if table:
        warp_texture(
            canvas, cam_ss, table_texture("dition", options.table_texture), border_transparent=False
        )
    else:
        canvas[:] = 90
    # an image pyramid level close to the canvas scale keeps the warp alias-free
    need = _target_scale(cam_ss, tw, th)
    level = tex.astype(np.float32)
    ppu = tex.shape[1] / tw
    while ppu > 2.0 * need and min(level.shape[:2]) > 32:
        level = cv2.pyrDown(level)
        ppu = level.shape[1] / tw
    warp_texture(
        canvas,
        cam_ss,
        Texture(np.clip(level + 0.5, 0, 255).astype(np.uint8).astype(np.float32), (0.0, 0.0), ppu),
    )
    image = cv2.resize(canvas, camera.image_size, interpolation=cv2.INTER_AREA).astype(np.float32)
    return apply_effects(image, options, rng)


def _target_scale(camera: SimCamera, tw: float, th: float) -> float:
    pts = np.array([[x, y, 0.0] for x in (0, tw / 2, tw) for y in (0, th / 2, th)])
    d = 0.01 * max(tw, th)
    a = camera.project(pts)
    b = camera.project(pts + np.array([[d, 0, 0]]))
    return float(np.max(np.linalg.norm(b - a, axis=1)) / d)
