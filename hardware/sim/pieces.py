"""Pieces as 3D solids: discs (Dition) and stacks of thin discs (Domination).

Each piece is a short upright cylinder: base circle at height z_base (z = -height), top circle
`thickness` higher. Its picture is the convex hull of the two projected circles (the side band),
the camera-facing side strips shaded by their angle to the light, then the top face, then
decorations (Dition's grey centre dot). Everything is projected with the full camera model
(`cv2.projectPoints`, distortion included) and drawn with anti-aliased sub-pixel `cv2.fillPoly`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

import cv2
import numpy as np

from hardware.sim.camera import SimCamera

_N_EDGE = 72  # points on a circle outline
_SHIFT = 4  # fillPoly fractional bits
_N_SIDE = 24  # shaded strips around a side
_ANG = np.linspace(0.0, 2 * math.pi, _N_EDGE, endpoint=False)
_COS, _SIN = np.cos(_ANG), np.sin(_ANG)
#: the room's light on a piece's side relative to its top (`render`'s and `variety`'s side colours
#: are the face's times this, 0.7-0.82): a side under a lamp takes the lamp's own light instead,
#: from its albedo, the side colour over this share
ROOM_SIDE_SHARE = 0.72


@dataclass(frozen=True)
class Lamp:
    """A compact light `height` board units above the board point (`x`, `y`)."""

    x: float
    y: float
    height: float

    def side_gain(self, piece: Cylinder, normals: np.ndarray) -> np.ndarray:
        """The lamp's light on a piece's side, per outward normal (k, 2), relative to its light
        on the board there: a vertical face at horizontal distance r and height difference h
        from the lamp takes r cos(phi) / d^3 (phi its normal's angle to the lamp), the board
        h / d^3; sides turned away from it take none."""
        h = self.height + piece.z_base - piece.thickness / 2  # above the side's middle
        towards = np.array([self.x - piece.x, self.y - piece.y])
        return np.maximum(normals @ towards, 0.0) / max(h, 1e-6)


class Decor(Protocol):
    """Painting beyond the plain cylinder (`hardware.sim.men.ManDecor`): called on the piece's
    layer after its side, and after its top face."""

    def draw_side(self, canvas: np.ndarray, camera: SimCamera, piece: Cylinder,
                  bottom_px: np.ndarray, top_px: np.ndarray) -> None: ...

    def draw_top(self, canvas: np.ndarray, camera: SimCamera, piece: Cylinder) -> None: ...


@dataclass(frozen=True)
class Cylinder:
    """One piece to draw. Board units; colours BGR."""

    x: float
    y: float
    radius: float
    z_base: float  # <= 0: the height of its bottom is -z_base
    thickness: float
    top_bgr: tuple[int, int, int]
    side_upper_bgr: tuple[int, int, int]
    side_lower_bgr: tuple[int, int, int]
    dot_radius: float = 0.0
    dot_bgr: tuple[int, int, int] = (128, 128, 128)
    rim_bgr: tuple[int, int, int] | None = None  # thin outline of the top face
    decor: Decor | None = None  # ridges, stripes, rings, crown (issue 19); None: plain

    @property
    def top_centre_world(self) -> np.ndarray:
        return np.array([self.x, self.y, self.z_base - self.thickness])


#: OpenCV's anti-aliased polygon fill covers about 0.65 px more than the polygon all around
#: (measured: area excess / perimeter = 0.654 +- 0.025 px); polygons are shrunk by as much
#: so that the coverage, and hence sizes and centroids, come out unbiased.
AA_DILATION_PX = 0.65


def _fix(pts: np.ndarray) -> np.ndarray:
    return np.round(pts * (1 << _SHIFT)).astype(np.int32).reshape(-1, 1, 2)


def shrink_convex(polys: np.ndarray, d: float = AA_DILATION_PX) -> np.ndarray:
    """Move every vertex of convex polygons (k, m, 2) inwards by `d` px along its normal."""
    polys = np.asarray(polys, np.float64)
    single = polys.ndim == 2
    if single:
        polys = polys[None]
    t = np.roll(polys, -1, axis=1) - np.roll(polys, 1, axis=1)
    n = np.stack([t[..., 1], -t[..., 0]], axis=-1)
    norm = np.linalg.norm(n, axis=-1, keepdims=True)
    n = n / np.where(norm > 1e-12, norm, 1.0)
    centre = polys.mean(axis=1, keepdims=True)
    outward = np.sign(((polys - centre) * n).sum(axis=-1).sum(axis=-1))[:, None, None]
    out = polys - d * n * np.where(outward == 0, 1.0, outward)
    return out[0] if single else out


def _fill(canvas: np.ndarray, alpha: np.ndarray | None, pts: np.ndarray, colour: object) -> None:
    """Fill a convex polygon on the premultiplied layer and, identically, on its alpha: the two
    must see the same anti-aliased 'over' blends to composite without halos."""
    poly = [_fix(shrink_convex(pts))]
    cv2.fillPoly(canvas, poly, colour, cv2.LINE_AA, _SHIFT)
    if alpha is not None:
        cv2.fillPoly(alpha, poly, 255, cv2.LINE_AA, _SHIFT)


def circle_world(x: float, y: float, r: float, z: float) -> np.ndarray:
    return np.stack([x + r * _COS, y + r * _SIN, np.full(_N_EDGE, z)], axis=1)


def draw_cylinders(
    canvas: np.ndarray,
    alpha: np.ndarray | None,
    camera: SimCamera,
    pieces: list[Cylinder],
    light_dir: tuple[float, float] = (0.35, 0.25),
    lamp: Lamp | None = None,
) -> None:
    """Draw `pieces` (already in back-to-front order) onto `canvas` (and 255 into `alpha`).
    With `lamp`, as that lamp alone lights them: the tops at their colour (the board's light
    there), the sides at their albedo (`ROOM_SIDE_SHARE`) times `Lamp.side_gain`."""
    if not pieces:
        return
    # project every outline in one call
    blocks = []
    for p in pieces:
        z_top = p.z_base - p.thickness
        blocks += [
            circle_world(p.x, p.y, p.radius, p.z_base),
            circle_world(p.x, p.y, p.radius, z_top),
        ]
        blocks.append(circle_world(p.x, p.y, max(p.dot_radius, 1e-3), z_top))
        blocks.append(circle_world(p.x, p.y, p.radius, (p.z_base + z_top) / 2))
    px = camera.project(np.concatenate(blocks)).reshape(len(pieces), 4, _N_EDGE, 2)
    cam_c = camera.centre_world
    lx, ly = light_dir
    lnorm = math.hypot(lx, ly) or 1.0
    # light comes from the side opposite to where shadows fall
    light_xy = np.array([-lx / lnorm, -ly / lnorm])
    aa = cv2.LINE_AA
    normals = np.stack([_COS, _SIN], 1)
    step = _N_EDGE // _N_SIDE
    seg = np.arange(0, _N_EDGE, step)
    seg_normal = np.stack(
        [np.cos(_ANG[seg] + math.pi / _N_SIDE), np.sin(_ANG[seg] + math.pi / _N_SIDE)], 1
    )
    lam_all = 0.75 + 0.35 * (seg_normal @ light_xy)
    for p, (bottom, top, dot, mid) in zip(pieces, px):
        # the side's hull uses the top outline pulled 1.5 px inwards: where the top face's rim is
        # the silhouette, only the top face's own anti-aliased edge is drawn there (two edges on
        # the same line would blend twice and leave a dark or light halo)
        c_top = top.mean(axis=0)
        d = top - c_top
        dist = np.linalg.norm(d, axis=1, keepdims=True)
        inner = c_top + d * np.clip(1.0 - 1.5 / np.maximum(dist, 1e-9), 0.0, 1.0)
        # likewise the base's outline where it hides under the top face (not the visible side)
        db = bottom - c_top
        dist_b = np.linalg.norm(db, axis=1, keepdims=True)
        hidden = dist_b < dist + 0.5
        base = np.where(
            hidden, c_top + db * np.clip(1.0 - 1.5 / np.maximum(dist_b, 1e-9), 0, 1), bottom
        )
        hull = cv2.convexHull(np.concatenate([base, inner]).astype(np.float32))[:, 0, :]
        to_cam = cam_c[:2] - np.array([p.x, p.y])
        lam = lam_all
        hull_bgr: object = p.side_upper_bgr
        if lamp is not None:
            lam = lamp.side_gain(p, seg_normal) / ROOM_SIDE_SHARE
            cam_n = to_cam / (np.linalg.norm(to_cam) or 1.0)
            k = float(lamp.side_gain(p, cam_n[None])[0]) / ROOM_SIDE_SHARE
            hull_bgr = tuple(min(255, int(c * k)) for c in p.side_upper_bgr)
        _fill(canvas, alpha, hull, hull_bgr)
        # camera-facing strips of the side (upper and lower half), shaded by the light; strips
        # thinner than the anti-aliasing can draw faithfully are left to the hull's colour
        half_px = np.linalg.norm(top[seg] - mid[seg], axis=1)
        facing = np.flatnonzero(
            (normals[seg] @ to_cam > -0.2 * np.linalg.norm(to_cam)) & (half_px > 2 * AA_DILATION_PX)
        )
        if facing.size:
            upper_cols = np.clip(np.outer(lam, p.side_upper_bgr), 0, 255).astype(int).tolist()
            lower_cols = np.clip(np.outer(lam, p.side_lower_bgr), 0, 255).astype(int).tolist()
            idx = (seg[facing][:, None] + np.arange(step + 1)[None, :]) % _N_EDGE  # (k, step+1)
            lower = np.concatenate([bottom[idx], mid[idx[:, ::-1]]], axis=1)
            upper = np.concatenate([mid[idx], top[idx[:, ::-1]]], axis=1)
            lower_f = np.round(shrink_convex(lower) * (1 << _SHIFT)).astype(np.int32)
            upper_f = np.round(shrink_convex(upper) * (1 << _SHIFT)).astype(np.int32)
            for j, k in enumerate(facing):
                cv2.fillPoly(canvas, [lower_f[j]], lower_cols[k], aa, _SHIFT)
                cv2.fillPoly(canvas, [upper_f[j]], upper_cols[k], aa, _SHIFT)
                if alpha is not None:
                    cv2.fillPoly(alpha, [lower_f[j], upper_f[j]], 255, aa, _SHIFT)
        if p.decor is not None:
            p.decor.draw_side(canvas, camera, p, bottom, top)
        _fill(canvas, alpha, top, p.top_bgr)
        if p.rim_bgr is not None:
            rim = [_fix(shrink_convex(top, 0.5))]
            cv2.polylines(canvas, rim, True, p.rim_bgr, 1, aa, _SHIFT)
            if alpha is not None:
                cv2.polylines(alpha, rim, True, 255, 1, aa, _SHIFT)
        if p.dot_radius > 0:
            _fill(canvas, alpha, dot, p.dot_bgr)
        if p.decor is not None:
            p.decor.draw_top(canvas, camera, p)


def shadow_polygons_world(
    pieces: list[Cylinder], light_dir: tuple[float, float]
) -> list[np.ndarray]:
    """Footprints (on z = 0) of the pieces' shadows: hull of the base and the displaced top,
    a little wider than the piece (the soft occlusion at its foot under room light)."""
    out = []
    lx, ly = light_dir
    for p in pieces:
        h_top = -(p.z_base - p.thickness)
        h_bot = -p.z_base
        r = p.radius * 1.06
        a = circle_world(p.x + lx * h_bot, p.y + ly * h_bot, r, 0.0)
        b = circle_world(p.x + lx * h_top, p.y + ly * h_top, r, 0.0)
        out.append(np.concatenate([a, b]))
    return out


def lamp_shadow_polygons_world(pieces: list[Cylinder], lamp: Lamp) -> list[np.ndarray]:
    """Footprints (on z = 0) of the pieces' shadows under a compact `lamp`: the hull of the base
    and the top outlines cast from the lamp's point (a central projection: a point h high at
    horizontal distance r from the lamp's foot falls at r H / (H - h)); no widening (a compact
    source leaves no soft occlusion around the foot)."""
    out = []
    foot = np.array([lamp.x, lamp.y])
    for p in pieces:
        rings = []
        for h in (-p.z_base, -(p.z_base - p.thickness)):
            k = lamp.height / max(lamp.height - h, 1e-6)
            c = foot + (np.array([p.x, p.y]) - foot) * k
            rings.append(circle_world(float(c[0]), float(c[1]), p.radius * k, 0.0))
        out.append(np.concatenate(rings))
    return out


def depth_order(camera: SimCamera, points_world: np.ndarray) -> np.ndarray:
    """Indices ordering the points from far to near the camera's centre."""
    d = np.linalg.norm(np.asarray(points_world, np.float64) - camera.centre_world, axis=1)
    return np.argsort(-d, kind="stable")
