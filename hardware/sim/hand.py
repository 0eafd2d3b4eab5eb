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
    (150, 180, 225), (120, 155, 205), (95, 125, 175), (70, 95, 140), (165, 190, 230),
)
SLEEVE_BGR: tuple[tuple[int, int, int], ...] = (
    (120, 60, 40), (60, 60, 60), (190, 190, 190), (40, 40, 120), (60, 110, 60),
)


@dataclass(frozen=True)
class HandPose:
    """Where the hand is: fingertips at board (x, y), the arm extending towards `angle_deg`
    (board frame, 0 = +x, 90 = +y). `height_mm`: fingertips above the table. `spread` 0..1
    opens the fingers; `scale` 1.0 = an average adult hand."""

    x: float
    y: float
    angle_deg: float
    height_mm: float = 25.0
    spread: float = 0.3
    scale: float = 1.0
    skin_bgr: tuple[int, int, int] = SKIN_TONES_BGR[0]
    sleeve_bgr: tuple[int, int, int] | None = SLEEVE_BGR[0]

    def to_dict(self) -> dict:
        return {
            "x": self.x, "y": self.y, "angle_deg": self.angle_deg, "height_mm": self.height_mm,
            "spread": self.spread, "scale": self.scale, "skin_bgr": list(self.skin_bgr),
            "sleeve_bgr": None if self.sleeve_bgr is None else list(self.sleeve_bgr),
        }

    @classmethod
    def random(cls, rng: np.random.Generator, x: float, y: float, angle_deg: float) -> "HandPose":
        sleeve = None if rng.random() < 0.3 else SLEEVE_BGR[int(rng.integers(len(SLEEVE_BGR)))]
        return cls(
            x, y, angle_deg, height_mm=float(rng.uniform(15, 45)), spread=float(rng.uniform(0, 0.8)),
            scale=float(rng.uniform(0.85, 1.15)),
            skin_bgr=SKIN_TONES_BGR[int(rng.integers(len(SKIN_TONES_BGR)))], sleeve_bgr=sleeve,
        )


def _capsule(u0: float, v0: float, u1: float, v1: float, r: float, n: int = 10) -> np.ndarray:
    """Outline (N,2) in (u, v) of a capsule from (u0,v0) to (u1,v1) with radius r."""
    d = math.atan2(v1 - v0, u1 - u0)
    a0 = np.linspace(d + math.pi / 2, d + 3 * math.pi / 2, n)
    a1 = np.linspace(d - math.pi / 2, d + math.pi / 2, n)
    return np.concatenate([
        np.stack([u0 + r * np.cos(a0), v0 + r * np.sin(a0)], 1),
        np.stack([u1 + r * np.cos(a1), v1 + r * np.sin(a1)], 1),
    ])


def _hand_parts_mm(pose: HandPose) -> list[tuple[str, np.ndarray]]:
    """Outlines in the local (u, v) frame, in mm, fingertip line at u = 0."""
    s = pose.scale
    parts: list[tuple[str, np.ndarray]] = []
    # palm: a rounded quadrilateral from the knuckles (u=70) to the wrist (u=165)
    palm = _capsule(95 * s, 0, 150 * s, 0, 42 * s, 14)
    parts.append(("palm", palm))
    lengths = (62, 75, 72, 58)
    offsets = (-27, -9, 9, 26)
    for length, off in zip(lengths, offsets):
        v_tip = off * s * (1 + pose.spread * 0.6)
        u_tip = (75 - length) * s + abs(off) * 0.15 * s
        parts.append(("finger", _capsule(u_tip + 8 * s, v_tip, 92 * s, off * s, 9 * s, 8)))
    # thumb: out to the side
    side = 1.0
    parts.append(("finger", _capsule(95 * s, side * 30 * s, (60 - 25 * pose.spread) * s,
                                     side * (55 + 25 * pose.spread) * s, 11 * s, 8)))
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
        q = camera.project(p)[0]
        if q[0] < -0.3 * w or q[0] > 1.3 * w or q[1] < -0.3 * h or q[1] > 1.3 * h:
            break
    u_arr = np.array(us)
    half = (33 + 0.04 * (u_arr - u_wrist)) * s
    left = np.stack([u_arr, half], 1)
    right = np.stack([u_arr, -half], 1)[::-1]
    return np.concatenate([left, right])


def draw_hand(
    image: np.ndarray,
    camera: SimCamera,
    pose: HandPose,
    unit_mm: float,
    *,
    shadow: float = 0.35,
    light_dir: tuple[float, float] = (0.35, 0.25),
) -> np.ndarray:
    """Draw the hand and its soft shadow onto float32 `image` in place; return its uint8 mask."""
    h, w = image.shape[:2]
    parts = _hand_parts_mm(pose)
    arm = _arm_outline_mm(pose, camera, unit_mm)
    sleeve_from = 150 * pose.scale + 120
    # shadow: every outline dropped onto the table along the light
    if shadow > 0:
        smask = np.zeros((h, w), np.uint8)
        for _, outline in [("arm", arm)] + parts:
            p = _to_world(outline, pose, unit_mm)
            height = -p[:, 2]
            flat = np.c_[p[:, 0] + light_dir[0] * height, p[:, 1] + light_dir[1] * height,
                         np.zeros(len(p))]
            if np.any(camera.to_camera(flat)[:, 2] <= 0):
                continue
            cv2.fillPoly(smask, [np.round(camera.project(flat) * 16).astype(np.int32)], 255,
                         cv2.LINE_AA, 4)
        sigma = max(2.0, 0.012 * w * (1 + pose.height_mm / 40))
        soft = cv2.GaussianBlur(smask, (0, 0), sigma).astype(np.float32) / 255.0
        image *= (1.0 - 0.8 * shadow * soft)[..., None]
    mask = np.zeros((h, w), np.uint8)
    skin = np.asarray(pose.skin_bgr, np.float32)
    layer8 = np.zeros((h, w, 3), np.uint8)
    arm_split = arm[:, 0] > sleeve_from
    outlines: list[tuple[np.ndarray, np.ndarray]] = []
    if pose.sleeve_bgr is not None and arm_split.any():
        bare = arm.copy()
        bare[:, 0] = np.minimum(bare[:, 0], sleeve_from)
        sleeve = arm.copy()
        sleeve[:, 0] = np.maximum(sleeve[:, 0], sleeve_from - 5)
        outlines += [(bare, skin * 0.95), (sleeve, np.asarray(pose.sleeve_bgr, np.float32))]
    else:
        outlines.append((arm, skin * 0.95))
    for kind, outline in parts:
        outlines.append((outline, skin * (0.92 if kind == "finger" else 1.0)))
    for outline, colour in outlines:
        pts = camera.project(_to_world(outline, pose, unit_mm))
        poly = [np.round(pts * 16).astype(np.int32)]
        cv2.fillPoly(layer8, poly, tuple(int(c) for c in colour), cv2.LINE_AA, 4)
        cv2.polylines(layer8, poly, True, tuple(int(c * 0.8) for c in colour), 1, cv2.LINE_AA, 4)
        cv2.fillPoly(mask, poly, 255, cv2.LINE_AA, 4)
    # soft shading across the hand so it is not a flat sticker
    a = (mask.astype(np.float32) / 255.0)[..., None]
    shade = cv2.GaussianBlur(a[..., 0], (0, 0), max(3.0, 0.01 * w))[..., None]
    layer = layer8.astype(np.float32) * (0.8 + 0.25 * shade)
    image *= 1.0 - a
    image += layer  # premultiplied: anti-aliased edges were blended with black
    return mask
