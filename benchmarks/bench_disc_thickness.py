"""How much a frame tells of the discs' thickness: the side band's darkness, area against the
camera geometry (a diagnostic for issue 21's Othello-thick discs; nothing in `vision/` uses it yet).

    .venv/bin/python benchmarks/bench_disc_thickness.py [--frames 10] [--seed 1] [--choice othello]
                                                        [--board paper]

A disc t thick shows its side as a band outside its top face's rim on the camera's side, t D / (Z - t)
wide (D its distance from the camera's foot point, Z the camera's height, board units): 1-3 px on
the simulated table, under a blur of about as much, so edges cannot measure it, but areas can
(a symmetric blur moves no area). On each ray the darkness (W - v) / (W - K) (W, K: the white and the
black faces' median levels in the frame) is summed over 0.3-0.75 of a diameter from the top face's
centre; the rays within 30 degrees of the direction to the camera's foot minus the perpendicular
rays (no band and no overhang there) give one value each, fitted per frame on D / (Z - t) per
colour with a shadow-direction term (2 unknowns: the cast shadow lies one way for every disc) by
least squares with 3-sigma rejection. A black-up and a white-up disc's bands hold each side
colour's share once between them, so the two slopes add up to t (2B - K_side - W_side) / (W - K)
(B the board's level): the factor is taken as 1 here (the renderer's 0.72 shade on the sides
makes it about 0.95 on the kit's paper; on a board of mid grey it vanishes). Discs are taken at
their TRUE positions (the top face's centre through the true thickness): what the frame holds,
not what the reader makes of it. Prints per frame the estimate and its 1-sigma, and a summary.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import cv2
import numpy as np
from scipy.spatial import cKDTree

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_vision_dition import LAYOUT

from hardware.sim.camera import random_camera
from hardware.sim.options import RenderOptions
from hardware.sim.positions import random_discs
from hardware.sim.variety import OTHELLO_THICKNESS, Variety, render_varied
from vision.board import find_board
from vision.camera import Intrinsics
from vision.geometry import BoardFit, board_to_image, camera_geometry

#: radii (board units, from the top face's centre) the darkness is summed over, and their step
RADII_BOARD = np.arange(0.30, 0.75 + 1e-9, 0.01)
#: the rays towards the camera's foot (degrees off it); each one's two perpendicular rays too
ANGLES_DEG = (-30.0, -15.0, 0.0, 15.0, 30.0)
#: a ray is left out where another disc's centre lies within this (board units) and 53 degrees
NEIGHBOUR_BOARD = 1.4


def _samples(grey: np.ndarray, fit: BoardFit, intr: Intrinsics, points_board: np.ndarray) -> np.ndarray:
    """Grey levels at board points (..., P, 2), bilinear, in the captured frame (one row of the
    remap's maps per P points: remap takes fewer than 32767 rows)."""
    px = board_to_image(points_board.reshape(-1, 2), fit, intr).astype(np.float32)
    rows = px.reshape(-1, points_board.shape[-2], 2)
    v = cv2.remap(grey, np.ascontiguousarray(rows[..., 0]), np.ascontiguousarray(rows[..., 1]), cv2.INTER_LINEAR)
    return v.reshape(points_board.shape[:-1])


def frame_estimate(image: np.ndarray, fit: BoardFit, intr: Intrinsics, centres: np.ndarray, black: np.ndarray,
                   thickness: float) -> tuple[float, float, int, float, float]:
    """(thickness, its 1-sigma, rays used, the black and the white discs' slopes) of one frame, from the discs at `centres` (N, 2) on the
    board plane, `black` (N,), their top faces `thickness` above it."""
    geo = camera_geometry(fit, (image.shape[1], image.shape[0]), intr)
    foot, height = np.array(geo.centre_board), geo.height_board
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY).astype(np.float32)
    tops = centres + geo.thickness_shift(centres, thickness)
    dist = np.linalg.norm(centres - foot, axis=1)
    to_foot = (foot - centres) / np.maximum(dist, 1e-9)[:, None]
    a = np.radians(ANGLES_DEG)
    ca, sa = np.cos(a), np.sin(a)
    near = np.stack([to_foot[:, None, 0] * ca - to_foot[:, None, 1] * sa,
                     to_foot[:, None, 0] * sa + to_foot[:, None, 1] * ca], axis=-1)  # (N, A, 2)
    across = np.stack([-near[..., 1], near[..., 0]], axis=-1)
    rays = np.concatenate([near, across, -across], axis=1)  # (N, 3A, 2)
    pts = tops[:, None, None, :] + RADII_BOARD[None, None, :, None] * rays[:, :, None, :]
    v = _samples(grey, fit, intr, pts)  # (N, 3A, R)
    ring = tops[:, None, :] + 0.2 * np.stack([np.cos(np.arange(12) * np.pi / 6), np.sin(np.arange(12) * np.pi / 6)], 1)
    face = np.median(_samples(grey, fit, intr, ring), axis=1)
    if black.all() or not black.any():
        return float("nan"), float("nan"), 0, float("nan"), float("nan")
    dark, light = float(np.median(face[black])), float(np.median(face[~black]))
    area = ((light - v) / max(light - dark, 1.0)).sum(axis=2) * (RADII_BOARD[1] - RADII_BOARD[0])
    n = len(ANGLES_DEG)
    y = area[:, :n] - 0.5 * (area[:, n:2 * n] + area[:, 2 * n:])
    clean = np.ones((len(centres), n), bool)
    tree = cKDTree(centres)
    for i, c in enumerate(centres):
        for j in tree.query_ball_point(c, NEIGHBOUR_BOARD):
            d = centres[j] - c
            norm = float(np.linalg.norm(d))
            if norm > 1e-6:
                clean[i] &= (np.abs(near[i] @ (d / norm)) < 0.6) & (np.abs(across[i] @ (d / norm)) < 0.6)
    x = (dist / (height - thickness))[:, None] * ca[None, :]
    col = np.broadcast_to(black[:, None], x.shape)[clean]
    x, y, u = x[clean], y[clean], near[clean]
    design = np.column_stack([x * col, x * ~col, u])
    keep = np.ones(len(y), bool)
    sol = np.zeros(4)
    for _ in range(4):
        if keep.sum() < 8:
            return float("nan"), float("nan"), int(keep.sum()), float("nan"), float("nan")
        sol = np.linalg.lstsq(design[keep], y[keep], rcond=None)[0]
        res = y - design @ sol
        keep = np.abs(res) < 3 * max(1.4826 * float(np.median(np.abs(res[keep]))), 1e-4)
    res = y[keep] - design[keep] @ sol
    cov = np.linalg.pinv(design[keep].T @ design[keep]) * float(res @ res) / max(int(keep.sum()) - 4, 1)
    g = np.array([1.0, 1.0, 0.0, 0.0])
    return float(g @ sol), float(np.sqrt(g @ cov @ g)), int(keep.sum()), float(sol[0]), float(sol[1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--frames", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--choice", default="othello", help="disc style of hardware.sim.variety (othello, plain, ...)")
    ap.add_argument("--board", default="paper", help="board of hardware.sim.variety (paper, green_felt, wood, ...)")
    args = ap.parse_args()
    cv2.setNumThreads(1)
    variety = Variety(board=args.board, disc=args.choice)
    truth_t = OTHELLO_THICKNESS if args.choice == "othello" else RenderOptions().disc_thickness
    rng = np.random.default_rng(args.seed)
    got = []
    print(f"disc style {args.choice} on {args.board}, true thickness {truth_t}, seed {args.seed}")
    print("| frame | discs | rays used | thickness | sigma | black slope | white slope |\n|---|---|---|---|---|---|---|")
    for k in range(args.frames):
        discs = random_discs(rng, int(rng.integers(10, 151)), **LAYOUT)
        opts = RenderOptions.random(rng)
        cam = random_camera(rng, "dition", distortion=True)
        r = render_varied(discs, cam, np.random.default_rng([args.seed, k]), variety, opts)
        intr = Intrinsics(cam.camera_matrix, cam.dist_coeffs, cam.image_size)
        fit = find_board(r.image, corners_px=np.array(r.truth["corners_px"]), intrinsics=intr)
        centres = np.array([[d.x, d.y] for d in discs])
        black = np.array([d.colour == "black" for d in discs])
        t, s, used, slope_black, slope_white = frame_estimate(r.image, fit, intr, centres, black, truth_t)
        got.append(t)
        print(f"| {k} | {len(discs)} | {used} | {t:.3f} | {s:.3f} | {slope_black:.3f} | {slope_white:.3f} |",
              flush=True)
    est = np.array(got)[np.isfinite(got)]
    if len(est):
        print(f"median {np.median(est):.3f}, 10-90 %: {np.percentile(est, 10):.3f}-{np.percentile(est, 90):.3f} "
              f"(true {truth_t})")


if __name__ == "__main__":
    main()
