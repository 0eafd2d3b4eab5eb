"""`SimCamera`: a pinhole camera with OpenCV distortion, posed above the board.

World frame = the board frame of DESIGN.md in board units, right-handed with z pointing INTO the
table: a point at height h above the board has z = -h. The camera follows OpenCV's conventions
(x right, y down, z forward); `rvec`/`tvec` map world points into the camera frame.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np

from hardware.sim.layout import MARKER_QUIET_ZONE, MARKERS, PLATE_EXTENT, board_size, check_game

#: Pi camera v2, 2x2 binned mode
DEFAULT_IMAGE_SIZE = (1640, 1232)
#: Pi camera v2 horizontal field of view (degrees)
PI_V2_HFOV_DEG = 62.2


def _arr(value: Any, shape: tuple[int, ...], name: str) -> np.ndarray:
    a = np.asarray(value, dtype=np.float64)
    if a.size != math.prod(shape):
        raise ValueError(f"SimCamera.{name} must have shape {shape}, got {np.shape(value)}")
    a = a.reshape(shape).copy()
    if not np.all(np.isfinite(a)):
        raise ValueError(f"SimCamera.{name} has non-finite values: {a.tolist()}")
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class SimCamera:
    """Intrinsics, distortion and pose of the simulated camera.

    camera_matrix (3,3) px; dist_coeffs (5,) k1,k2,p1,p2,k3; rvec/tvec (3,) world->camera
    (board units); image_size (w, h) px.
    """

    camera_matrix: np.ndarray
    dist_coeffs: np.ndarray
    rvec: np.ndarray
    tvec: np.ndarray
    image_size: tuple[int, int] = DEFAULT_IMAGE_SIZE
    _key: bytes = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "camera_matrix", _arr(self.camera_matrix, (3, 3), "camera_matrix"))
        object.__setattr__(self, "dist_coeffs", _arr(self.dist_coeffs, (5,), "dist_coeffs"))
        object.__setattr__(self, "rvec", _arr(self.rvec, (3,), "rvec"))
        object.__setattr__(self, "tvec", _arr(self.tvec, (3,), "tvec"))
        w, h = (int(v) for v in self.image_size)
        if w < 1 or h < 1:
            raise ValueError(
                f"SimCamera.image_size must be at least 1x1 px, got {self.image_size}"
            )
        object.__setattr__(self, "image_size", (w, h))
        key = (
            b"".join(
                a.tobytes() for a in (self.camera_matrix, self.dist_coeffs, self.rvec, self.tvec)
            )
            + f"{w}x{h}".encode()
        )
        object.__setattr__(self, "_key", key)

    # -- identity (numpy fields make the default __eq__/__hash__ useless) ----------------------
    def __eq__(self, other: object) -> bool:
        return isinstance(other, SimCamera) and other._key == self._key

    def __hash__(self) -> int:
        return hash(self._key)

    # -- geometry --------------------------------------------------------------------------------
    @property
    def R_world_to_camera(self) -> np.ndarray:
        return cv2.Rodrigues(self.rvec)[0]

    @property
    def centre_world(self) -> np.ndarray:
        """Position of the camera's centre of projection in the world frame."""
        return -self.R_world_to_camera.T @ self.tvec

    def to_camera(self, points_world: np.ndarray) -> np.ndarray:
        """(N,3) world points -> (N,3) camera-frame points."""
        p = np.asarray(points_world, dtype=np.float64).reshape(-1, 3)
        return p @ self.R_world_to_camera.T + self.tvec

    def project(self, points_world: np.ndarray) -> np.ndarray:
        """(N,3) world points -> (N,2) float64 pixels (with distortion), via cv2.projectPoints."""
        p = np.asarray(points_world, dtype=np.float64).reshape(-1, 3)
        if p.shape[0] == 0:
            return np.zeros((0, 2))
        px, _ = cv2.projectPoints(p, self.rvec, self.tvec, self.camera_matrix, self.dist_coeffs)
        return px.reshape(-1, 2)

    @property
    def max_radius(self) -> float:
        """Largest undistorted normalised radius up to which the radial distortion is monotonic
        (inf if it is everywhere up to r = 4): beyond it a polynomial lens model folds back."""
        return _fold_radius(self.dist_coeffs)

    def project_clamped(self, points_world: np.ndarray) -> np.ndarray:
        """Like `project`, but points beyond `max_radius` (far outside the picture) continue
        outwards along a straight line instead of folding back into the image; for drawing
        large objects (an arm) that leave the field of view."""
        p = np.asarray(points_world, dtype=np.float64).reshape(-1, 3)
        px = self.project(p)
        r_max = 0.98 * self.max_radius
        if not np.isfinite(r_max):
            return px
        pc = self.to_camera(p)
        z = np.where(pc[:, 2] > 1e-9, pc[:, 2], 1e-9)
        xn, yn = pc[:, 0] / z, pc[:, 1] / z
        r = np.hypot(xn, yn)
        far = r > r_max
        if np.any(far):
            k1, k2, _, _, k3 = self.dist_coeffs
            rm2 = r_max * r_max
            rd_max = r_max * (1 + k1 * rm2 + k2 * rm2**2 + k3 * rm2**3)
            rd = rd_max + 0.3 * (r[far] - r_max)  # gentle linear continuation
            scale = rd / r[far]
            K = self.camera_matrix
            px[far, 0] = K[0, 0] * xn[far] * scale + K[0, 1] * yn[far] * scale + K[0, 2]
            px[far, 1] = K[1, 1] * yn[far] * scale + K[1, 2]
        return px

    def check_lens(self) -> None:
        """Raise ValueError if the distortion folds back inside the picture (no real lens does)."""
        r_max = self.max_radius
        if not np.isfinite(r_max):
            return
        k1, k2, _, _, k3 = self.dist_coeffs
        r2 = r_max * r_max
        rd_max = r_max * (1 + k1 * r2 + k2 * r2 * r2 + k3 * r2**3)
        w, h = self.image_size
        K = self.camera_matrix
        corners = np.array([[0, 0], [w - 1, 0], [w - 1, h - 1], [0, h - 1]], float)
        yn = (corners[:, 1] - K[1, 2]) / K[1, 1]
        xn = (corners[:, 0] - K[0, 2] - K[0, 1] * yn) / K[0, 0]
        rd_corner = float(np.max(np.hypot(xn, yn)))
        if rd_max < 1.05 * rd_corner:
            raise ValueError(
                f"lens distortion {self.dist_coeffs.tolist()} folds back at normalised radius "
                f"{rd_max:.3f}, inside the picture (corners at {rd_corner:.3f}): reduce k1/k2/k3"
            )

    def scaled(self, factor: int) -> SimCamera:
        """The same camera rendering an image `factor` times larger (pixel centres kept exact)."""
        s = float(factor)
        K = self.camera_matrix.copy()
        K[0, 0] *= s
        K[1, 1] *= s
        K[0, 1] *= s
        K[0, 2] = s * (K[0, 2] + 0.5) - 0.5
        K[1, 2] = s * (K[1, 2] + 0.5) - 0.5
        w, h = self.image_size
        out = SimCamera(K, self.dist_coeffs, self.rvec, self.tvec, (w * factor, h * factor))
        # the supersampled camera's block grid is this camera's grid (see hardware.sim.warp)
        object.__setattr__(out, "_scaled_from", (self, int(factor)))
        return out

    def with_pose(self, rvec: np.ndarray, tvec: np.ndarray) -> SimCamera:
        return SimCamera(self.camera_matrix, self.dist_coeffs, rvec, tvec, self.image_size)

    # -- serialisation ---------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {
            "camera_matrix": self.camera_matrix.tolist(),
            "dist_coeffs": self.dist_coeffs.tolist(),
            "rvec": self.rvec.tolist(),
            "tvec": self.tvec.tolist(),
            "image_size": list(self.image_size),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SimCamera:
        missing = {"camera_matrix", "dist_coeffs", "rvec", "tvec", "image_size"} - set(data)
        if missing:
            raise ValueError(f"SimCamera.from_dict: missing keys {sorted(missing)}")
        return cls(
            np.asarray(data["camera_matrix"]),
            np.asarray(data["dist_coeffs"]),
            np.asarray(data["rvec"]),
            np.asarray(data["tvec"]),
            tuple(data["image_size"]),  # type: ignore[arg-type]
        )


def _fold_radius(dist: np.ndarray) -> float:
    k1, k2, _, _, k3 = (float(v) for v in dist)
    if k1 >= 0 and k2 >= 0 and k3 >= 0:
        return float("inf")
    r = np.linspace(0.0, 4.0, 4001)
    r2 = r * r
    deriv = 1 + 3 * k1 * r2 + 5 * k2 * r2 * r2 + 7 * k3 * r2**3
    bad = np.flatnonzero(deriv <= 0)
    return float(r[bad[0]]) if bad.size else float("inf")


# ---- posing ------------------------------------------------------------------------------------


def _look_at(centre_world: np.ndarray, target_world: np.ndarray, roll_deg: float) -> np.ndarray:
    """World->camera rotation for a camera at `centre_world` looking at `target_world`.

    With roll 0 the image x axis follows the board's x axis as closely as the tilt allows;
    roll turns the image about the optical axis (the board appears rotated by -roll).
    """
    z_c = target_world - centre_world
    z_c = z_c / np.linalg.norm(z_c)
    r = math.radians(roll_deg)
    ref = np.array([math.cos(r), math.sin(r), 0.0])
    x_c = ref - (ref @ z_c) * z_c
    if np.linalg.norm(x_c) < 1e-9:
        raise ValueError("camera looks along the board's reference axis: tilt too large")
    x_c /= np.linalg.norm(x_c)
    y_c = np.cross(z_c, x_c)
    return np.stack([x_c, y_c, z_c])


def _extent_points(game: str, markers: bool = True) -> np.ndarray:
    """Board-frame points (z=0) that a framing camera must keep in view."""
    s = board_size(game)
    pts = [(0.0, 0.0), (s, 0.0), (s, s), (0.0, s)]
    if markers:
        _, side, centres = MARKERS[game]
        half = side / 2 + side * MARKER_QUIET_ZONE
        for cx, cy in centres:
            pts += [
                (cx - half, cy - half),
                (cx + half, cy - half),
                (cx + half, cy + half),
                (cx - half, cy + half),
            ]
    arr = np.array(pts, dtype=np.float64)
    # densify the outline so distortion cannot bulge an edge out of view unnoticed
    x0, y0 = arr.min(axis=0)
    x1, y1 = arr.max(axis=0)
    t = np.linspace(0.0, 1.0, 9)
    edges = np.concatenate(
        [
            np.stack([x0 + (x1 - x0) * t, np.full_like(t, y0)], 1),
            np.stack([x0 + (x1 - x0) * t, np.full_like(t, y1)], 1),
            np.stack([np.full_like(t, x0), y0 + (y1 - y0) * t], 1),
            np.stack([np.full_like(t, x1), y0 + (y1 - y0) * t], 1),
        ]
    )
    return np.concatenate([np.c_[arr, np.zeros(len(arr))], np.c_[edges, np.zeros(len(edges))]])


def _fit_focal(
    R: np.ndarray,
    tvec: np.ndarray,
    pts_world: np.ndarray,
    image_size: tuple[int, int],
    principal_px: tuple[float, float],
    margin: float,
) -> float:
    """Largest focal length (px) that keeps every point inside the image minus `margin`."""
    pc = pts_world @ R.T + tvec
    if np.any(pc[:, 2] <= 0):
        raise ValueError("part of the board is behind the camera: reduce the tilt")
    xn = pc[:, 0] / pc[:, 2]
    yn = pc[:, 1] / pc[:, 2]
    w, h = image_size
    cx, cy = principal_px
    limits = []
    for n, lo, hi in ((xn, cx, w - 1 - cx), (yn, cy, h - 1 - cy)):
        lo_m, hi_m = lo * (1 - margin), hi * (1 - margin)
        with np.errstate(divide="ignore"):
            limits.append(
                np.where(n > 0, hi_m / np.maximum(n, 1e-12), lo_m / np.maximum(-n, 1e-12))
            )
    return float(np.min(np.concatenate(limits)))


def look_at_board(
    game: str,
    *,
    image_size: tuple[int, int] = DEFAULT_IMAGE_SIZE,
    height_units: float | None = None,
    tilt_deg: float = 0.0,
    rotation_deg: float = 0.0,
    tilt_azimuth_deg: float = 90.0,
    fov_deg: float | None = None,
    focal_px: float | None = None,
    distortion: np.ndarray | tuple[float, ...] | None = None,
    target_offset: tuple[float, float] = (0.0, 0.0),
    margin: float = 0.06,
    markers: bool = True,
    rng: np.random.Generator | None = None,
) -> SimCamera:
    """A camera above the board centre looking at it.

    height_units: camera height above the board (default 1.25 board sides). tilt_deg: angle
    between the optical axis and the table normal; the camera is displaced towards
    `tilt_azimuth_deg` (board frame, 90 = towards +y, the players' side at the bottom).
    rotation_deg: roll about the optical axis. Focal length from `focal_px`, else from the
    horizontal `fov_deg`, else chosen so the board (and its markers) fill the image less `margin`.
    distortion: (5,) k1,k2,p1,p2,k3 (default none). `rng` is unused (accepted for symmetry).
    """
    check_game(game)
    if not 0.0 <= tilt_deg < 70.0:
        raise ValueError(f"tilt_deg must be in [0, 70), got {tilt_deg}")
    s = board_size(game)
    height = 1.25 * s if height_units is None else float(height_units)
    if height <= 0:
        raise ValueError(f"height_units must be positive, got {height_units}")
    target = np.array([s / 2 + target_offset[0], s / 2 + target_offset[1], 0.0])
    t, a = math.radians(tilt_deg), math.radians(tilt_azimuth_deg)
    horiz = height * math.tan(t)
    centre = target + np.array([horiz * math.cos(a), horiz * math.sin(a), -height])
    R = _look_at(centre, target, rotation_deg)
    tvec = -R @ centre
    w, h = int(image_size[0]), int(image_size[1])
    principal = ((w - 1) / 2.0, (h - 1) / 2.0)
    if focal_px is not None:
        f = float(focal_px)
    elif fov_deg is not None:
        f = (w / 2.0) / math.tan(math.radians(fov_deg) / 2.0)
    else:
        f = _fit_focal(R, tvec, _extent_points(game, markers), (w, h), principal, margin)
    if not f > 0:
        raise ValueError(f"focal length must be positive, got {f}")
    K = np.array([[f, 0.0, principal[0]], [0.0, f, principal[1]], [0.0, 0.0, 1.0]])
    dist = np.zeros(5) if distortion is None else np.asarray(distortion, dtype=np.float64)
    rvec = cv2.Rodrigues(R)[0].ravel()
    cam = SimCamera(K, dist, rvec, tvec, (w, h))
    cam.check_lens()
    return cam


def random_distortion(rng: np.random.Generator, strength: float = 1.0) -> np.ndarray:
    """Plausible Pi-camera-like lens distortion (k1,k2,p1,p2,k3)."""
    k1 = rng.uniform(-0.12, 0.08) * strength
    k2 = rng.uniform(-0.05, 0.08) * strength
    p1, p2 = rng.uniform(-0.002, 0.002, size=2) * strength
    return np.array([k1, k2, p1, p2, 0.0])


def random_camera(
    rng: np.random.Generator,
    game: str,
    image_size: tuple[int, int] = DEFAULT_IMAGE_SIZE,
    max_tilt_deg: float = 15.0,
    distortion: bool = True,
) -> SimCamera:
    """A varied camera (tilt, azimuth, roll, height, small offsets, lens distortion) that frames
    the whole board and its markers with some margin."""
    check_game(game)
    s = board_size(game)
    dist = random_distortion(rng) if distortion else None
    for _ in range(20):
        try:
            cam = look_at_board(
                game,
                image_size=image_size,
                height_units=s * rng.uniform(0.9, 1.6),
                tilt_deg=rng.uniform(0.0, max_tilt_deg),
                tilt_azimuth_deg=rng.uniform(0.0, 360.0),
                rotation_deg=rng.uniform(-180.0, 180.0),
                target_offset=tuple(rng.uniform(-0.03, 0.03, size=2) * s),  # type: ignore[arg-type]
                margin=rng.uniform(0.04, 0.12),
                distortion=dist,
            )
        except ValueError:
            dist = None if dist is None else dist * 0.5  # a wide view: a milder lens
            continue
        cam = _jitter_principal_point(cam, rng)
        if _in_view(cam, _extent_points(game, markers=True), margin_px=4.0):
            return cam
    raise RuntimeError("random_camera: could not frame the board (distortion too strong?)")


def _jitter_principal_point(cam: SimCamera, rng: np.random.Generator) -> SimCamera:
    K = cam.camera_matrix.copy()
    w, h = cam.image_size
    K[0, 2] += rng.uniform(-0.01, 0.01) * w
    K[1, 2] += rng.uniform(-0.01, 0.01) * h
    K[1, 1] = K[0, 0] * rng.uniform(0.999, 1.001)
    return SimCamera(K, cam.dist_coeffs, cam.rvec, cam.tvec, cam.image_size)


def _in_view(cam: SimCamera, pts_world: np.ndarray, margin_px: float) -> bool:
    if np.any(cam.to_camera(pts_world)[:, 2] <= 0):
        return False
    px = cam.project(pts_world)
    w, h = cam.image_size
    return bool(
        np.all(px[:, 0] >= margin_px)
        and np.all(px[:, 0] <= w - 1 - margin_px)
        and np.all(px[:, 1] >= margin_px)
        and np.all(px[:, 1] <= h - 1 - margin_px)
    )


def plate_in_view_fraction(cam: SimCamera, game: str) -> float:
    """Fraction of the plate outline (densely sampled) that projects inside the image."""
    x0, y0, x1, y1 = PLATE_EXTENT[game]
    t = np.linspace(0, 1, 50)
    pts = np.concatenate(
        [
            np.stack([x0 + (x1 - x0) * t, np.full_like(t, y0), 0 * t], 1),
            np.stack([x0 + (x1 - x0) * t, np.full_like(t, y1), 0 * t], 1),
        ]
    )
    px = cam.project(pts)
    w, h = cam.image_size
    ok = (px[:, 0] >= 0) & (px[:, 0] < w) & (px[:, 1] >= 0) & (px[:, 1] < h)
    return float(ok.mean())


def camera_for_target(
    rng: np.random.Generator,
    size_units: tuple[float, float],
    image_size: tuple[int, int] = DEFAULT_IMAGE_SIZE,
    *,
    max_tilt_deg: float = 40.0,
    distortion: bool | np.ndarray = True,
    focal_px: float | None = None,
    fill: tuple[float, float] = (0.35, 0.85),
) -> SimCamera:
    """A varied pose looking at a flat target of `size_units` (w, h) whose top-left corner is the
    world origin (it lies on z=0). The whole target stays in view; it fills a random share `fill`
    of the image's smaller side. Focal length fixed (`focal_px`, default the Pi v2's) so a series
    of views suits an intrinsic calibration."""
    tw, th = float(size_units[0]), float(size_units[1])
    if tw <= 0 or th <= 0:
        raise ValueError(f"size_units must be positive, got {size_units}")
    w, h = int(image_size[0]), int(image_size[1])
    f = focal_px if focal_px is not None else (w / 2.0) / math.tan(math.radians(PI_V2_HFOV_DEG) / 2)
    if isinstance(distortion, np.ndarray):
        dist: np.ndarray | None = distortion
    else:
        dist = random_distortion(rng) if distortion else None
    K = np.array([[f, 0, (w - 1) / 2.0], [0, f, (h - 1) / 2.0], [0, 0, 1.0]])
    corners = np.array([[0, 0, 0], [tw, 0, 0], [tw, th, 0], [0, th, 0]], dtype=np.float64)
    t = np.linspace(0, 1, 7)
    outline = np.concatenate(
        [
            np.stack([tw * t, 0 * t, 0 * t], 1),
            np.stack([tw * t, th + 0 * t, 0 * t], 1),
            np.stack([0 * t, th * t, 0 * t], 1),
            np.stack([tw + 0 * t, th * t, 0 * t], 1),
        ]
    )
    diag = math.hypot(tw, th)
    for _ in range(200):
        tilt = rng.uniform(0.0, max_tilt_deg)
        share = rng.uniform(*fill)
        # distance at which the target's diagonal spans `share` of the image's smaller side
        dist_units = f * diag / (share * min(w, h))
        target = np.array([tw / 2, th / 2, 0.0]) + np.r_[rng.uniform(-0.15, 0.15, 2) * (tw, th), 0]
        a = rng.uniform(0, 2 * math.pi)
        tr = math.radians(tilt)
        centre = target + dist_units * np.array(
            [math.sin(tr) * math.cos(a), math.sin(tr) * math.sin(a), -math.cos(tr)]
        )
        R = _look_at(centre, target, rng.uniform(-180, 180))
        # aim slightly off-centre so the target visits the image's corners too
        tvec = -R @ centre + np.r_[rng.uniform(-0.25, 0.25, 2) * dist_units * (w, h) / (2 * f), 0]
        cam = SimCamera(
            K, np.zeros(5) if dist is None else dist, cv2.Rodrigues(R)[0].ravel(), tvec, (w, h)
        )
        try:
            cam.check_lens()
        except ValueError:
            dist = None if dist is None else dist * 0.5
            continue
        if _in_view(cam, np.concatenate([corners, outline]), margin_px=0.03 * min(w, h)):
            return cam
    raise RuntimeError(f"camera_for_target: no pose keeps a {tw}x{th} target in view")
