"""From image pixels to the table plane: per-pixel board coordinates, and texture warping.

For every pixel of the (distorted) image we need the board point it sees on the plane z = 0.
The exact inverse of the lens model (Newton's method, checked against `cv2.undistortPoints`)
is computed on a coarse grid of block centres, then interpolated bilinearly
(`cv2.resize` on float32 maps, whose sample positions line up exactly with the block centres).
The maps are smooth, so the interpolation error is far below 0.01 px.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import cv2
import numpy as np

from hardware.sim.camera import SimCamera
from hardware.sim.plate import Texture

_CACHE: OrderedDict[bytes, tuple[np.ndarray, np.ndarray, int]] = OrderedDict()
_CACHE_SIZE = 8
_LOCK = threading.Lock()


def undistort_normalised(camera: SimCamera, px: np.ndarray, iterations: int = 12) -> np.ndarray:
    """(N,2) distorted pixels -> (N,2) ideal normalised coordinates (Newton's method on OpenCV's
    5-coefficient model; converges to ~1e-12 for any lens a Pi camera has)."""
    K = camera.camera_matrix
    k1, k2, p1, p2, k3 = camera.dist_coeffs
    p = np.asarray(px, np.float64).reshape(-1, 2)
    yd = (p[:, 1] - K[1, 2]) / K[1, 1]
    xd = (p[:, 0] - K[0, 2] - K[0, 1] * yd) / K[0, 0]
    x, y = xd.copy(), yd.copy()
    if not np.any(camera.dist_coeffs):
        return np.stack([x, y], 1)
    for _ in range(iterations):
        x2, y2, xy = x * x, y * y, x * y
        r2 = x2 + y2
        rad = 1 + r2 * (k1 + r2 * (k2 + r2 * k3))
        drad = k1 + r2 * (2 * k2 + 3 * k3 * r2)  # d rad / d r2
        fx = x * rad + 2 * p1 * xy + p2 * (r2 + 2 * x2) - xd
        fy = y * rad + p1 * (r2 + 2 * y2) + 2 * p2 * xy - yd
        jxx = rad + 2 * x2 * drad + 2 * p1 * y + 6 * p2 * x
        jxy = 2 * x * y * drad + 2 * p1 * x + 2 * p2 * y
        jyx = 2 * x * y * drad + 2 * p1 * x + 2 * p2 * y
        jyy = rad + 2 * y2 * drad + 6 * p1 * y + 2 * p2 * x
        det = jxx * jyy - jxy * jyx
        dx = (jyy * fx - jxy * fy) / det
        dy = (jxx * fy - jyx * fx) / det
        x -= dx
        y -= dy
        if max(float(np.abs(dx).max(initial=0.0)), float(np.abs(dy).max(initial=0.0))) < 1e-13:
            break
    return np.stack([x, y], 1)


def image_to_plane(camera: SimCamera, px: np.ndarray, z: float = 0.0) -> np.ndarray:
    """(N,2) distorted pixels -> (N,2) world (x, y) on the plane at depth `z` (NaN if the ray
    misses it)."""
    und = undistort_normalised(camera, px)
    rays_cam = np.c_[und, np.ones(len(und))]
    rays = rays_cam @ camera.R_world_to_camera  # rows: R.T @ ray
    c = camera.centre_world
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (z - c[2]) / rays[:, 2]
    t = np.where(t > 0, t, np.nan)
    return c[None, :2] + t[:, None] * rays[:, :2]


def block_px(camera: SimCamera) -> int:
    """Grid step for the coarse maps: bilinear interpolation error ~ 0.25 g^2 / f px, kept
    below ~0.01 px."""
    f = float(min(camera.camera_matrix[0, 0], camera.camera_matrix[1, 1]))
    return int(np.clip(np.sqrt(0.04 * f), 2, 16))


def coarse_plane_grid(camera: SimCamera) -> tuple[np.ndarray, np.ndarray, int]:
    """Board (x, y) at the centres of g-pixel blocks (g = `block_px`), with one extra ring of
    blocks around the image: arrays of shape (ny + 2, nx + 2), float64 (far away, 1e6, where no
    table), and g."""
    base = getattr(camera, "_scaled_from", None)
    if base is not None:
        # block centres of a k-times larger image with k-times larger blocks are the same rays
        bx, by, bg = coarse_plane_grid(base[0])
        return bx, by, bg * base[1]
    key = camera._key
    with _LOCK:
        hit = _CACHE.get(key)
        if hit is not None:
            _CACHE.move_to_end(key)
            return hit
    w, h = camera.image_size
    g = block_px(camera)
    nx, ny = -(-w // g) + 2, -(-h // g) + 2
    us = (np.arange(nx) - 1 + 0.5) * g - 0.5
    vs = (np.arange(ny) - 1 + 0.5) * g - 0.5
    uu, vv = np.meshgrid(us, vs)
    xy = image_to_plane(camera, np.stack([uu.ravel(), vv.ravel()], 1))
    xy[~np.isfinite(xy).all(axis=1)] = 1e6
    out = (xy[:, 0].reshape(ny, nx), xy[:, 1].reshape(ny, nx), g)
    with _LOCK:
        _CACHE[key] = out
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return out


def plane_maps(camera: SimCamera) -> tuple[np.ndarray, np.ndarray]:
    """(H, W) float32 maps of the board x and y seen at every pixel (1e6 where no table)."""
    mx, my, g = coarse_plane_grid(camera)
    w, h = camera.image_size
    return _expand(mx, g, 0, 0, w, h), _expand(my, g, 0, 0, w, h)


def _expand(coarse: np.ndarray, g: int, x0: int, y0: int, x1: int, y1: int) -> np.ndarray:
    """Bilinear full-resolution map for the pixel box [x0, x1) x [y0, y1) from the coarse grid."""
    # coarse index i (padded grid) sits at pixel (i - 1 + 0.5) * g - 0.5
    bx0, by0 = x0 // g, y0 // g  # padded index of the block before the box's first block
    bx1, by1 = -(-x1 // g) + 2, -(-y1 // g) + 2
    sub = coarse[by0:by1, bx0:bx1].astype(np.float32)
    big = cv2.resize(sub, (sub.shape[1] * g, sub.shape[0] * g), interpolation=cv2.INTER_LINEAR)
    ox, oy = x0 - (bx0 - 1) * g, y0 - (by0 - 1) * g
    return big[oy : oy + (y1 - y0), ox : ox + (x1 - x0)]


def warp_texture(
    canvas: np.ndarray, camera: SimCamera, texture: Texture, *, border_transparent: bool = True
) -> None:
    """Paint `texture` (lying on z = 0) into `canvas` (uint8 or float32, camera.image_size) in
    place. Only the bounding box of the texture's footprint is touched; where the texture ends
    the canvas keeps what it had (`border_transparent`) or the texture's edge is repeated."""
    mx, my, g = coarse_plane_grid(camera)
    th, tw = texture.image.shape[:2]
    x0w, y0w = texture.origin
    # texel coordinates are affine in board coordinates: convert the coarse grid, then expand
    tx = (mx - x0w) * texture.ppu - 0.5
    ty = (my - y0w) * texture.ppu - 0.5
    w, h = camera.image_size
    if border_transparent:
        inside = (tx >= -2) & (tx <= tw + 1) & (ty >= -2) & (ty <= th + 1)
        rows = np.flatnonzero(inside.any(axis=1))
        cols = np.flatnonzero(inside.any(axis=0))
        if rows.size == 0:
            return
        # padded index i covers pixels [(i-1)*g, i*g); widen by one block each side
        px0 = max((cols[0] - 2) * g, 0)
        px1 = min((cols[-1] + 1) * g, w)
        py0 = max((rows[0] - 2) * g, 0)
        py1 = min((rows[-1] + 1) * g, h)
        if px1 <= px0 or py1 <= py0:
            return
    else:
        px0, py0, px1, py1 = 0, 0, w, h
    map_x = _expand(tx, g, px0, py0, px1, py1)
    map_y = _expand(ty, g, px0, py0, px1, py1)
    if canvas.dtype == texture.image.dtype:
        src = texture.image
    elif canvas.dtype == np.uint8:
        src = _as_u8(texture)
    else:
        src = texture.image.astype(canvas.dtype)
    if border_transparent:
        dst = np.ascontiguousarray(canvas[py0:py1, px0:px1])
        cv2.remap(src, map_x, map_y, cv2.INTER_LINEAR, dst=dst, borderMode=cv2.BORDER_TRANSPARENT)
    else:
        dst = cv2.remap(src, map_x, map_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    canvas[py0:py1, px0:px1] = dst


_U8: dict[int, tuple[Texture, np.ndarray]] = {}


def _as_u8(texture: Texture) -> np.ndarray:
    with _LOCK:
        hit = _U8.get(id(texture))
    if hit is not None and hit[0] is texture:
        return hit[1]
    u8 = np.clip(texture.image + 0.5, 0, 255).astype(np.uint8)
    with _LOCK:
        if len(_U8) > 8:
            _U8.clear()
        _U8[id(texture)] = (texture, u8)
    return u8
