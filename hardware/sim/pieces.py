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

import cv2
import numpy as np

from hardware.sim.camera import SimCamera

_N_EDGE = 72  # points on a circle outline
_SHIFT = 4  # fillPoly fractional bits
_N_SIDE = 24  # shaded strips around a side
_ANG = np.linspace(0.0, 2 * math.pi, _N_EDGE, endpoint=False)
_COS, _SIN = np.cos(_ANG), np.sin(_ANG)


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

    @property
    def top_centre_world(self) -> np.ndarray:
        return np.array([self.x, self.y, self.z_base - self.thickness])


def _fix(pts: np.ndarray) -> np.ndarray:
    return np.round(pts * (1 << _SHIFT)).astype(np.int32).reshape(-1, 1, 2)


def circle_world(x: float, y: float, r: float, z: float) -> np.ndarray:
    return np.stack([x + r * _COS, y + r * _SIN, np.full(_N_EDGE, z)], axis=1)


def draw_cylinders(
    canvas: np.ndarray,
    alpha: np.ndarray | None,
    camera: SimCamera,
    pieces: list[Cylinder],
    light_dir: tuple[float, float] = (0.35, 0.25),
) -> None:
    """Draw `pieces` (already in back-to-front order) onto `canvas` (and 255 into `alpha`)."""
    if not pieces:
        return
    # project every outline in one call
    blocks = []
    for p in pieces:
        z_top = p.z_base - p.thickness
        blocks += [circle_world(p.x, p.y, p.radius, p.z_base), circle_world(p.x, p.y, p.radius, z_top)]
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
    seg_normal = np.stack([np.cos(_ANG[seg] + math.pi / _N_SIDE), np.sin(_ANG[seg] + math.pi / _N_SIDE)], 1)
    lam_all = 0.75 + 0.35 * (seg_normal @ light_xy)
    for p, (bottom, top, dot, mid) in zip(pieces, px):
        hull = cv2.convexHull(np.concatenate([bottom, top]).astype(np.float32))[:, 0, :]
        hull_i = [_fix(hull)]
        cv2.fillPoly(canvas, hull_i, p.side_lower_bgr, aa, _SHIFT)
        if alpha is not None:
            cv2.fillPoly(alpha, hull_i, 255, aa, _SHIFT)
        # camera-facing strips of the side (upper and lower half), shaded by the light
        to_cam = cam_c[:2] - np.array([p.x, p.y])
        facing = normals[seg] @ to_cam > -0.2 * np.linalg.norm(to_cam)
        upper_cols = np.clip(np.outer(lam_all, p.side_upper_bgr), 0, 255).astype(int).tolist()
        lower_cols = np.clip(np.outer(lam_all, p.side_lower_bgr), 0, 255).astype(int).tolist()
        fb, ft, fm = _fix(bottom), _fix(top), _fix(mid)
        for k in np.flatnonzero(facing):
            i = seg[k]
            idx = [(i + d) % _N_EDGE for d in range(step + 1)]
            lower = np.concatenate([fb[idx], fm[idx[::-1]]])
            upper = np.concatenate([fm[idx], ft[idx[::-1]]])
            cv2.fillPoly(canvas, [lower], lower_cols[k], aa, _SHIFT)
            cv2.fillPoly(canvas, [upper], upper_cols[k], aa, _SHIFT)
        cv2.fillPoly(canvas, [ft], p.top_bgr, aa, _SHIFT)
        if p.rim_bgr is not None:
            cv2.polylines(canvas, [ft], True, p.rim_bgr, 1, aa, _SHIFT)
        if p.dot_radius > 0:
            cv2.fillPoly(canvas, [_fix(dot)], p.dot_bgr, aa, _SHIFT)


def shadow_polygons_world(pieces: list[Cylinder], light_dir: tuple[float, float]) -> list[np.ndarray]:
    """Footprints (on z = 0) of the pieces' shadows: hull of the base and the displaced top."""
    out = []
    lx, ly = light_dir
    for p in pieces:
        h_top = -(p.z_base - p.thickness)
        h_bot = -p.z_base
        a = circle_world(p.x + lx * h_bot, p.y + ly * h_bot, p.radius, 0.0)
        b = circle_world(p.x + lx * h_top, p.y + ly * h_top, p.radius, 0.0)
        out.append(np.concatenate([a, b]))
    return out


def depth_order(camera: SimCamera, points_world: np.ndarray) -> np.ndarray:
    """Indices ordering the points from far to near the camera's centre."""
    d = np.linalg.norm(np.asarray(points_world, np.float64) - camera.centre_world, axis=1)
    return np.argsort(-d, kind="stable")
