"""A player's hand and forearm reaching over the board (drawn at output resolution).

The hand is built in a local frame whose origin is the fingertips: `u` points from the
fingertips back towards the wrist (the `angle_deg` direction of the board frame), `v` is
perpendicular. Sizes are physical (mm) and converted with the game's unit size. The arm rises
from the wrist towards the player, so it grows towards the camera as a real arm does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from hardware.sim.camera import SimCamera

SKIN_TONES_BGR: tuple[tuple[int, int, int], ...] = (
    (150, 180, 225),
    (120, 155, 205),
    (95, 125, 175),
    (70, 95, 140),
    (165, 190, 230),
)
SLEEVE_BGR: tuple[tuple[int, int, int], ...] = (
    (120, 60, 40),
    (60, 60, 60),
    (190, 190, 190),
    (40, 40, 120),
    (60, 110, 60),
)


@dataclass(frozen=True)
class HandPose:
    """Where the hand is: the point under the index and middle finger pads at board (x, y) (the
    fingertips reach ~1 cm beyond, as when holding a piece there), the arm extending towards
    `angle_deg` (board frame, 0 = +x, 90 = +y). `height_mm`: fingertips above the table.
    `spread` 0..1 opens the fingers; `scale` 1.0 = an average adult hand. `blur_units`: how far
    the hand moves during the exposure (board units), which smears it (motion blur)."""

    x: float
    y: float
    angle_deg: float
    height_mm: float = 25.0
    spread: float = 0.3
    scale: float = 1.0
    skin_bgr: tuple[int, int, int] = SKIN_TONES_BGR[0]
    sleeve_bgr: tuple[int, int, int] | None = SLEEVE_BGR[0]
    blur_units: tuple[float, float] = (0.0, 0.0)

    def to_dict(self) -> dict:
        return {
            "x": self.x,
            "y": self.y,
            "angle_deg": self.angle_deg,
            "height_mm": self.height_mm,
            "spread": self.spread,
            "scale": self.scale,
            "skin_bgr": list(self.skin_bgr),
            "sleeve_bgr": None if self.sleeve_bgr is None else list(self.sleeve_bgr),
            "blur_units": list(self.blur_units),
        }

    @classmethod
    def random(cls, rng: np.random.Generator, x: float, y: float, angle_deg: float) -> HandPose:
        sleeve = None if rng.random() < 0.3 else SLEEVE_BGR[int(rng.integers(len(SLEEVE_BGR)))]
        return cls(
            x,
            y,
            angle_deg,
            height_mm=float(rng.uniform(15, 45)),
            spread=float(rng.uniform(0, 0.8)),
            scale=float(rng.uniform(0.85, 1.15)),
            skin_bgr=SKIN_TONES_BGR[int(rng.integers(len(SKIN_TONES_BGR)))],
            sleeve_bgr=sleeve,
        )


def _capsule(
    u0: float, v0: float, u1: float, v1: float, r: float, n: int = 10, r1: float | None = None
) -> np.ndarray:
    """Outline (N,2) in (u, v) of a (tapered) capsule from (u0,v0), radius r, to (u1,v1), radius
    r1 (default r)."""
    r1 = r if r1 is None else r1
    d = math.atan2(v1 - v0, u1 - u0)
    a0 = np.linspace(d + math.pi / 2, d + 3 * math.pi / 2, n)
    a1 = np.linspace(d - math.pi / 2, d + math.pi / 2, n)
    return np.concatenate(
        [
            np.stack([u0 + r * np.cos(a0), v0 + r * np.sin(a0)], 1),
            np.stack([u1 + r1 * np.cos(a1), v1 + r1 * np.sin(a1)], 1),
        ]
    )


def _hand_parts_mm(pose: HandPose) -> list[tuple[str, np.ndarray]]:
    """Outlines in the local (u, v) frame, in mm, drawn in this order. The pose's point (u = 0)
    lies under the pads of the index and middle fingers, whose tips reach a little beyond it,
    as when holding a piece."""
    s = pose.scale
    parts: list[tuple[str, np.ndarray]] = []
    # thumb first: the palm partly covers its root
    parts.append(
        (
            "finger",
            _capsule(
                (22 + 40 * pose.spread) * s,
                (16 + 40 * pose.spread) * s,
                108 * s,
                30 * s,
                9.5 * s,
                8,
                13 * s,
            ),
        )
    )
    parts.append(
        (
            "nail",
            _capsule(
                (27 + 40 * pose.spread) * s,
                (17 + 40 * pose.spread) * s,
                (37 + 40 * pose.spread) * s,
                (19 + 40 * pose.spread) * s,
                5.5 * s,
                6,
            ),
        )
    )
    lengths = (62, 78, 74, 58)  # little .. index finger
    offsets = (-27, -9, 9, 26)
    converge = 0.45 + 0.55 * pose.spread
    for length, off in zip(lengths, offsets):
        v_tip = off * s * converge
        u_tip = (96 - length - 14) * s
        parts.append(("finger", _capsule(u_tip, v_tip, 100 * s, off * s, 8.0 * s, 8, 9.5 * s)))
        t = 11 * s / max(math.hypot(100 * s - u_tip, off * s - v_tip), 1e-9)
        nu, nv = u_tip + t * (100 * s - u_tip), v_tip + t * (off * s - v_tip)
        parts.append(
            ("nail", _capsule(u_tip + 1.5 * s, v_tip + 0.1 * (nv - v_tip), nu, nv, 5.0 * s, 6))
        )
    parts.append(("palm", _capsule(108 * s, 0, 150 * s, 0, 40 * s, 14, 36 * s)))
    return parts


def _height_mm(u_mm: np.ndarray, pose: HandPose) -> np.ndarray:
    """Height above the table along the hand/arm (mm)."""
    wrist = 165 * pose.scale
    h = pose.height_mm + 0.18 * np.clip(u_mm, 0, wrist)
    return h + 0.35 * np.clip(u_mm - wrist, 0, None)


def _to_world(uv_mm: np.ndarray, pose: HandPose, unit_mm: float) -> np.ndarray:
    a = math.radians(pose.angle_deg)
    du = np.array([math.cos(a), math.sin(a)])
    dv = np.array([-math.sin(a), math.cos(a)])
    u, v = uv_mm[:, 0], uv_mm[:, 1]
    xy = np.array([pose.x, pose.y]) + (np.outer(u, du) + np.outer(v, dv)) / unit_mm
    z = -_height_mm(u, pose) / unit_mm
    return np.c_[xy, z]


def _arm_outline_mm(pose: HandPose, camera: SimCamera, unit_mm: float) -> np.ndarray:
    """Forearm from the wrist out to beyond the image edge (or until it nears the camera)."""
    s = pose.scale
    u_wrist = 150 * s
    w, h = camera.image_size
    us = [u_wrist]
    step = 40.0
    cam_h = -camera.centre_world[2] * unit_mm
    while us[-1] < 2500:
        u = us[-1] + step
        p = _to_world(np.array([[u, 0.0]]), pose, unit_mm)
        if camera.to_camera(p)[0, 2] < 0.25 * cam_h / unit_mm or -p[0, 2] * unit_mm > 0.8 * cam_h:
            break
        us.append(u)
        q = camera.project_clamped(p)[0]
        if q[0] < -0.3 * w or q[0] > 1.3 * w or q[1] < -0.3 * h or q[1] > 1.3 * h:
            break
    u_arr = np.array(us)
    half = (33 + 0.04 * (u_arr - u_wrist)) * s
    left = np.stack([u_arr, half], 1)
    right = np.stack([u_arr, -half], 1)[::-1]
    return np.concatenate([left, right])


def _bbox(polys: list[np.ndarray], w: int, h: int, pad: int) -> tuple[int, int, int, int] | None:
    pts = np.concatenate(polys)
    x0 = int(np.clip(np.floor(pts[:, 0].min()) - pad, 0, w))
    x1 = int(np.clip(np.ceil(pts[:, 0].max()) + pad + 1, 0, w))
    y0 = int(np.clip(np.floor(pts[:, 1].min()) - pad, 0, h))
    y1 = int(np.clip(np.ceil(pts[:, 1].max()) + pad + 1, 0, h))
    return None if x1 <= x0 or y1 <= y0 else (x0, y0, x1, y1)


def _soft_darken(
    image: np.ndarray, polys: list[np.ndarray], sigma: float, strength: float
) -> tuple[int, int, int, int] | None:
    """Multiply `image` by 1 - strength * (blurred union of `polys`), at quarter resolution."""
    h, w = image.shape[:2]
    pad = int(3 * sigma) + 4
    box = _bbox(polys, w, h, pad)
    if box is None:
        return None
    x0, y0, x1, y1 = box
    q = 4
    sw, sh = -(-(x1 - x0) // q), -(-(y1 - y0) // q)
    small = np.zeros((sh, sw), np.uint8)
    fixed = [np.round(((p - [x0, y0] + 0.5) / q - 0.5) * 16).astype(np.int32) for p in polys]
    cv2.fillPoly(small, fixed, 255, cv2.LINE_AA, 4)
    small = cv2.GaussianBlur(small, (0, 0), max(0.5, sigma / q))
    soft = cv2.resize(small, (sw * q, sh * q), interpolation=cv2.INTER_LINEAR)[: y1 - y0, : x1 - x0]
    region = image[y0:y1, x0:x1]
    region *= (1.0 - (strength / 255.0) * soft.astype(np.float32))[..., None]
    return box


def draw_hand(
    image: np.ndarray,
    camera: SimCamera,
    pose: HandPose,
    unit_mm: float,
    *,
    shadow: float = 0.35,
    light_dir: tuple[float, float] = (0.35, 0.25),
) -> tuple[np.ndarray, tuple[int, int, int, int] | None]:
    """Draw the hand and its soft shadow onto float32 `image` in place; return its uint8 mask
    (255 where the hand covers the image) and the box (x0, y0, x1, y1) of the pixels changed."""
    h, w = image.shape[:2]
    parts = _hand_parts_mm(pose)
    arm = _arm_outline_mm(pose, camera, unit_mm)
    sleeve_from = 150 * pose.scale + 120
    boxes: list[tuple[int, int, int, int]] = []
    # shadow: every outline dropped onto the table along the light, blurred with the height
    if shadow > 0:
        shadow_polys = []
        for _, outline in [("arm", arm)] + parts:
            p = _to_world(outline, pose, unit_mm)
            height = -p[:, 2]
            flat = np.c_[
                p[:, 0] + light_dir[0] * height, p[:, 1] + light_dir[1] * height, np.zeros(len(p))
            ]
            if np.any(camera.to_camera(flat)[:, 2] <= 0):
                continue
            shadow_polys.append(camera.project_clamped(flat))
        if shadow_polys:
            sigma = max(2.0, 0.012 * w * (1 + pose.height_mm / 40))
            sbox = _soft_darken(image, shadow_polys, sigma, 0.8 * shadow)
            if sbox is not None:
                boxes.append(sbox)
    skin = np.asarray(pose.skin_bgr, np.float32)
    outlines: list[tuple[np.ndarray, np.ndarray]] = []
    if pose.sleeve_bgr is not None and np.any(arm[:, 0] > sleeve_from):
        bare = arm.copy()
        bare[:, 0] = np.minimum(bare[:, 0], sleeve_from)
        sleeve = arm.copy()
        sleeve[:, 0] = np.maximum(sleeve[:, 0], sleeve_from - 5)
        outlines += [(bare, skin * 0.97), (sleeve, np.asarray(pose.sleeve_bgr, np.float32))]
    else:
        outlines.append((arm, skin * 0.97))
    tint = {"finger": 0.95, "palm": 0.97, "nail": 1.12}
    nail_colour = np.minimum(skin * tint["nail"] + 12, 255)
    for kind, outline in parts:
        outlines.append((outline, nail_colour if kind == "nail" else skin * tint[kind]))
    projected = [camera.project_clamped(_to_world(o, pose, unit_mm)) for o, _ in outlines]
    motion = _motion_px(camera, pose, unit_mm)
    mask = np.zeros((h, w), np.uint8)
    box = _bbox(projected, w, h, 2 + int(np.ceil(np.abs(motion).max())))
    if box is None:
        return mask, _union(boxes)
    boxes.append(box)
    x0, y0, x1, y1 = box
    bw, bh = x1 - x0, y1 - y0
    layer8 = np.zeros((bh, bw, 3), np.uint8)
    sub = mask[y0:y1, x0:x1]
    n_arm = len(outlines) - len(parts)
    for k, (pts, (_, colour)) in enumerate(zip(projected, outlines)):
        poly = [np.round((pts - [x0, y0]) * 16).astype(np.int32)]
        cv2.fillPoly(layer8, poly, tuple(int(c) for c in colour), cv2.LINE_AA, 4)
        kind = parts[k - n_arm][0] if k >= n_arm else "arm"
        if kind == "finger":  # the creases between fingers
            cv2.polylines(
                layer8, poly, True, tuple(int(c * 0.78) for c in colour), 1, cv2.LINE_AA, 4
            )
        cv2.fillPoly(sub, poly, 255, cv2.LINE_AA, 4)
    # soft shading: darker towards the hand's outline, so it is not a flat sticker
    q = 4
    small = cv2.resize(sub, (max(1, bw // q), max(1, bh // q)), interpolation=cv2.INTER_AREA)
    small = cv2.GaussianBlur(small, (0, 0), max(1.0, 0.0025 * w))
    shade = cv2.resize(small, (bw, bh), interpolation=cv2.INTER_LINEAR).astype(np.float32) / 255.0
    a = sub.astype(np.float32) / 255.0
    layer = layer8.astype(np.float32) * (0.8 + 0.25 * shade)[..., None]
    if np.hypot(*motion) >= 1.0:
        kernel = _line_kernel(motion)
        layer = cv2.filter2D(layer, -1, kernel, borderType=cv2.BORDER_CONSTANT)
        a = cv2.filter2D(a, -1, kernel, borderType=cv2.BORDER_CONSTANT)
        sub[:] = np.clip(a * 255.0 + 0.5, 0, 255).astype(np.uint8)
    region = image[y0:y1, x0:x1]
    region *= (1.0 - a)[..., None]
    region += layer
    return mask, _union(boxes)


def _motion_px(camera: SimCamera, pose: HandPose, unit_mm: float) -> np.ndarray:
    """The hand's smear in the image (px) from its motion during the exposure."""
    bx, by = pose.blur_units
    if bx == 0 and by == 0:
        return np.zeros(2)
    z = -(pose.height_mm + 30.0) / unit_mm  # about the back of the hand
    a, b = camera.project_clamped(np.array([[pose.x, pose.y, z], [pose.x + bx, pose.y + by, z]]))
    return b - a


def _line_kernel(motion: np.ndarray) -> np.ndarray:
    """A normalised kernel that averages along the segment `motion` (px), centred."""
    half = int(np.ceil(np.abs(motion).max() / 2)) + 1
    n = 2 * half + 1
    k = np.zeros((n * 4, n * 4), np.uint8)  # drawn 4x finer, then averaged down
    c = np.array([n * 2 - 0.5, n * 2 - 0.5])
    p0 = np.round((c - 2 * motion) * 16).astype(int)
    p1 = np.round((c + 2 * motion) * 16).astype(int)
    cv2.line(k, (int(p0[0]), int(p0[1])), (int(p1[0]), int(p1[1])), 255, 4, cv2.LINE_AA, 4)
    small = cv2.resize(k, (n, n), interpolation=cv2.INTER_AREA).astype(np.float32)
    return small / small.sum()


def _union(boxes: list[tuple[int, int, int, int]]) -> tuple[int, int, int, int] | None:
    if not boxes:
        return None
    b = np.array(boxes)
    return int(b[:, 0].min()), int(b[:, 1].min()), int(b[:, 2].max()), int(b[:, 3].max())
