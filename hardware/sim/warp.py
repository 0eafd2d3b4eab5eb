"""From image pixels to the table plane: per-pixel board coordinates, and texture warping.

For every pixel of the (distorted) image we need the board point it sees on the plane z = 0.
The exact inverse of the lens model is computed with OpenCV (`cv2.undistortPoints` with tight
iteration criteria) on a coarse grid of block centres, then interpolated bilinearly
(`cv2.resize` on float32 maps, whose sample positions line up exactly with the block centres).
The maps are smooth, so the interpolation error is far below 0.01 px.
"""

from __future__ import annotations

from collections import OrderedDict

import cv2
import numpy as np

from hardware.sim.camera import SimCamera
from hardware.sim.plate import Texture

_BLOCK_PX = 8
_CACHE: "OrderedDict[bytes, tuple[np.ndarray, np.ndarray]]" = OrderedDict()
_CACHE_SIZE = 8


def image_to_plane(camera: SimCamera, px: np.ndarray, z: float = 0.0) -> np.ndarray:
    """(N,2) distorted pixels -> (N,2) world (x, y) on the plane at depth `z` (NaN if the ray
    misses it)."""
    pts = np.asarray(px, np.float64).reshape(-1, 1, 2)
    crit = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 40, 1e-12)
    und = cv2.undistortPoints(pts, camera.camera_matrix, camera.dist_coeffs, criteria=crit)
    und = und.reshape(-1, 2)
    rays_cam = np.c_[und, np.ones(len(und))]
    rays = rays_cam @ camera.R_world_to_camera  # rows: R.T @ ray
    c = camera.centre_world
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (z - c[2]) / rays[:, 2]
    t = np.where(t > 0, t, np.nan)
    return c[None, :2] + t[:, None] * rays[:, :2]


def coarse_plane_grid(camera: SimCamera) -> tuple[np.ndarray, np.ndarray]:
    """Board (x, y) at the centres of _BLOCK_PX blocks, with one extra ring of blocks around
    the image: arrays of shape (ny + 2, nx + 2), float64; far away (1e6) where no table."""
    key = camera._key
    hit = _CACHE.get(key)
    if hit is not None:
        _CACHE.move_to_end(key)
        return hit
    w, h = camera.image_size
    g = _BLOCK_PX
    nx, ny = -(-w // g) + 2, -(-h // g) + 2
    us = (np.arange(nx) - 1 + 0.5) * g - 0.5
    vs = (np.arange(ny) - 1 + 0.5) * g - 0.5
    uu, vv = np.meshgrid(us, vs)
    xy = image_to_plane(camera, np.stack([uu.ravel(), vv.ravel()], 1))
    xy[~np.isfinite(xy).all(axis=1)] = 1e6
    out = (xy[:, 0].reshape(ny, nx), xy[:, 1].reshape(ny, nx))
    _CACHE[key] = out
    if len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return out


def plane_maps(camera: SimCamera) -> tuple[np.ndarray, np.ndarray]:
    """(H, W) float32 maps of the board x and y seen at every pixel (1e6 where no table)."""
    mx, my = coarse_plane_grid(camera)
    w, h = camera.image_size
    return _expand(mx, 0, 0, w, h), _expand(my, 0, 0, w, h)


def _expand(coarse: np.ndarray, x0: int, y0: int, x1: int, y1: int) -> np.ndarray:
    """Bilinear full-resolution map for the pixel box [x0, x1) x [y0, y1) from the coarse grid."""
    g = _BLOCK_PX
    # coarse index i (padded grid) sits at pixel (i - 1 + 0.5) * g - 0.5
    bx0, by0 = x0 // g, y0 // g  # padded index of the block before the box's first block
    bx1, by1 = -(-x1 // g) + 2, -(-y1 // g) + 2
    sub = coarse[by0:by1, bx0:bx1].astype(np.float32)
    big = cv2.resize(sub, (sub.shape[1] * g, sub.shape[0] * g), interpolation=cv2.INTER_LINEAR)
    ox, oy = x0 - (bx0 - 1) * g, y0 - (by0 - 1) * g
    return big[oy:oy + (y1 - y0), ox:ox + (x1 - x0)]


def warp_texture(
    canvas: np.ndarray, camera: SimCamera, texture: Texture, *, border_transparent: bool = True
) -> None:
    """Paint `texture` (lying on z = 0) into `canvas` (uint8 or float32, camera.image_size) in
    place. Only the bounding box of the texture's footprint is touched; where the texture ends
    the canvas keeps what it had (`border_transparent`) or the texture's edge is repeated."""
    mx, my = coarse_plane_grid(camera)
    th, tw = texture.image.shape[:2]
    x0w, y0w = texture.origin
    # texel coordinates are affine in board coordinates: convert the coarse grid, then expand
    tx = (mx - x0w) * texture.ppu - 0.5
    ty = (my - y0w) * texture.ppu - 0.5
    w, h = camera.image_size
    g = _BLOCK_PX
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
    map_x = _expand(tx, px0, py0, px1, py1)
    map_y = _expand(ty, px0, py0, px1, py1)
    src = texture.image if canvas.dtype == np.float32 else _as_u8(texture)
    if border_transparent:
        dst = np.ascontiguousarray(canvas[py0:py1, px0:px1])
        cv2.remap(src, map_x, map_y, cv2.INTER_LINEAR, dst=dst, borderMode=cv2.BORDER_TRANSPARENT)
    else:
        dst = cv2.remap(src, map_x, map_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    canvas[py0:py1, px0:px1] = dst


_U8: dict[int, tuple[Texture, np.ndarray]] = {}


def _as_u8(texture: Texture) -> np.ndarray:
    hit = _U8.get(id(texture))
    if hit is not None and hit[0] is texture:
        return hit[1]
    u8 = np.clip(texture.image + 0.5, 0, 255).astype(np.uint8)
    if len(_U8) > 8:
        _U8.clear()
    _U8[id(texture)] = (texture, u8)
    return u8
