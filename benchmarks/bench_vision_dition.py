"""Score the Dition vision (board + discs) on frames of the simulated table; print the tables.

    .venv/bin/python benchmarks/bench_vision_dition.py [--frames 200] [--seed 1] [--quick]

Frames: 1640x1232, random camera (tilt <= 15 degrees, any rotation, height 0.9-1.6 boards,
lens distortion), RenderOptions.random (light gradient, hot spot, glare, colour cast, shadows,
noise, blur, JPEG 70-95), 10-150 discs, a third of them touching another disc.

Modes:
  corners+K   corners given (truth), calibration intrinsics given
  corners     corners given, no intrinsics, camera without lens distortion
  aruco+K     board from the ArUco markers, intrinsics given
  lines+K     board from the drawn squares (no markers rendered), intrinsics given
  lines       board from the drawn squares, no intrinsics, camera without lens distortion
  corners~D, aruco~D, lines~D
              no intrinsics on a DISTORTED camera, plain homography (find_board(...,
              estimate_lens=False)): what a homography alone gives ("before")
  corners~L, aruco~L, lines~L
              no intrinsics on a DISTORTED camera, lens estimated from the drawn lines
              (vision.lens, the default of find_board without intrinsics): "after"
  corners~N   like `corners` (no intrinsics, camera WITHOUT distortion) but no lens estimate:
              `corners` against it shows what the estimate costs where there is nothing to fix
  --scene N   also: SceneMonitor on N sequences (still, hand, still)

Without markers the square board has a 4-fold symmetry: its corner 0 is taken as the one at the
image's top-left. Scoring maps the truth through the one of the 4 symmetries closest to the fit.

A frame is "perfect" when every disc is found once, no phantom is reported and every colour is
right. Centre error = distance between reported and true centre (where the disc touches the board).
Timing: the whole detect pipeline on one frame (given corners: detect_discs; automatic: find_board
+ detect_discs), single-threaded OpenCV, against one cv2.HoughCircles pass over the same frame:
the whole frame at full size, already grey (the conversion, ~0.8 ms at 1640x1232, is not counted
for it; the reader's own colour conversions are), no median blur, HOUGH_GRADIENT at dp 1, the
radius 0.85-1.15 of the one the board's scale predicts (its edge from corner 0 to 1 over 20
diameters), centres 0.8 diameters apart, Canny 100, accumulator 20 (at 30, as on the real photos,
it is ~5 % faster and finds ~15 % fewer circles on these frames). In the `corners` modes also the
referee loop's case, the board known (its `DiscTables` kept from frame to frame): the CPU time of
detect_discs alone against one HoughCircles pass, each the least of 3 alternated runs on the same frame in the same run (`known_board_cpu_ms`; CPU time,
so other jobs on the machine enter it only through the caches and cores they share, and enter
both alike), and the median over the frames of the two's ratio on each frame.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np
from scipy.spatial import cKDTree

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hardware.sim.camera import random_camera
from hardware.sim.options import RenderOptions
from hardware.sim.positions import random_discs
from hardware.sim.render import SimDisc, render_dition
from vision.board import find_board
from vision.camera import Intrinsics
from vision.dition import DiscParams, DiscTables, detect_discs
from vision.errors import BoardNotFoundError
from vision.geometry import BoardParams

MODES = ("corners+K", "corners", "aruco+K", "lines+K", "lines",
         "corners~D", "corners~L", "aruco~D", "aruco~L", "lines~D", "lines~L", "corners~N")
DEFAULT_MODES = MODES[:5]


#: the benchmark's layouts: a third of the discs touch another, random colours
LAYOUT = {"touching_fraction": 0.33, "colours": "random"}


def symmetries(points: np.ndarray) -> list[np.ndarray]:
    """The 4 rotations of the square [0, 20]^2 applied to (N, 2) points."""
    x, y = points[:, 0], points[:, 1]
    return [np.stack(p, 1) for p in ((x, y), (20 - y, x), (20 - x, 20 - y), (y, 20 - x))]


@dataclass
class Score:
    frames: int = 0
    perfect: int = 0
    board_missed: int = 0
    missed: int = 0
    phantoms: int = 0
    colour_wrong: int = 0
    discs: int = 0
    errors: list[float] = field(default_factory=list)
    times_ms: list[float] = field(default_factory=list)
    hough_ms: list[float] = field(default_factory=list)
    cpu_ms: list[float] = field(default_factory=list)
    hough_cpu_ms: list[float] = field(default_factory=list)
    #: known board: detect_discs CPU time / HoughCircles CPU time, on each frame
    cpu_ratio: list[float] = field(default_factory=list)


def score_frame(truth: list[SimDisc], found: list, score: Score, match_radius: float = 0.3) -> None:
    score.frames += 1
    score.discs += len(truth)
    t = np.array([[d.x, d.y] for d in truth]).reshape(-1, 2)
    f = np.array([d.centre_board for d in found]).reshape(-1, 2)
    if len(f):
        best = min(symmetries(t), key=lambda s: np.median(cKDTree(s).query(f)[0]))
    else:
        best = t
    tree = cKDTree(best)
    used = set()
    missed = phantoms = colour = 0
    for d, p in zip(found, f):
        dist, i = tree.query(p)
        if dist > match_radius or i in used:
            phantoms += 1
            continue
        used.add(int(i))
        score.errors.append(float(dist))
        colour += d.colour != truth[int(i)].colour
    missed = len(truth) - len(used)
    score.missed += missed
    score.phantoms += phantoms
    score.colour_wrong += colour
    score.perfect += missed == 0 and phantoms == 0 and colour == 0


def hough_ms(gray: np.ndarray, px_per_unit: float, clock=time.perf_counter) -> float:
    r = 0.5 * px_per_unit
    t0 = clock()
    cv2.HoughCircles(gray, cv2.HOUGH_GRADIENT, 1, 0.8 * 2 * r, param1=100, param2=20,
                     minRadius=int(0.85 * r), maxRadius=int(1.15 * r) + 1)
    return (clock() - t0) * 1000


def known_board_cpu_ms(frame: np.ndarray, fit, intrinsics, px_per_unit: float, repeats: int = 3) -> tuple[float, float]:
    """The referee loop's case (the board known, its tables cached): CPU time of detect_discs on
    the frame and of one HoughCircles pass over its grey image, alternated `repeats` times, the
    least of each (CPU time of this process: other jobs on the machine inflate wall times, and
    the least of a few is the cost without their cache and scheduler noise)."""
    gray = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
    # (the referee loop keeps the board's tables from frame to frame, as DitionGame.read does)
    tables = DiscTables(fit, (frame.shape[1], frame.shape[0]), DiscParams(), intrinsics)
    det, hough = [], []
    for _ in range(repeats):
        t0 = time.process_time()
        detect_discs(frame, fit, intrinsics=intrinsics, tables=tables, name_colours=False)  # (as the loop reads)
        det.append((time.process_time() - t0) * 1000)
        hough.append(hough_ms(gray, px_per_unit, time.process_time))
    return min(det), min(hough)


def run(frames: int, seed: int, modes: tuple[str, ...], verbose: bool) -> dict[str, Score]:
    cv2.setNumThreads(1)
    rng = np.random.default_rng(seed)
    scores = {m: Score() for m in modes}
    for k in range(frames):
        n = int(rng.integers(10, 151))
        discs = random_discs(rng, n, **LAYOUT)
        opts = RenderOptions.random(rng)
        cam_d = random_camera(rng, "dition", distortion=True)
        cam_0 = random_camera(rng, "dition", distortion=False)
        for mode in modes:
            cam = cam_0 if mode in ("corners", "lines", "corners~N") else cam_d
            o = opts if not mode.startswith("lines") else opts.replace(markers=False)
            frame_rng = np.random.default_rng([seed, k])
            r = render_dition(discs, cam, frame_rng, options=o)
            intr = Intrinsics(cam.camera_matrix, cam.dist_coeffs, cam.image_size) if mode.endswith("+K") else None
            corners = np.array(r.truth["corners_px"]) if mode.startswith("corners") else None
            params = BoardParams(use_aruco=mode.startswith("aruco"), use_lines=mode.startswith("lines"))
            est = not mode.endswith(("~D", "~N"))
            sc = scores[mode]
            try:
                fit = find_board(r.image, params, corners_px=corners, intrinsics=intr, estimate_lens=est)
            except BoardNotFoundError:
                sc.frames += 1
                sc.board_missed += 1
                sc.discs += len(discs)
                sc.missed += len(discs)
                if verbose:
                    print(f"frame {k} {mode}: board not found", flush=True)
                continue
            found = detect_discs(r.image, fit, intrinsics=intr)
            # steady state: the rectification maps of a board are built once per board
            t0 = time.perf_counter()
            find_board(r.image, params, corners_px=corners, intrinsics=intr, estimate_lens=est)
            detect_discs(r.image, fit, intrinsics=intr)
            sc.times_ms.append((time.perf_counter() - t0) * 1000)
            gray = cv2.cvtColor(r.image, cv2.COLOR_BGR2GRAY)
            ppu = float(np.linalg.norm(np.subtract(r.truth["corners_px"][1], r.truth["corners_px"][0]))) / 20
            sc.hough_ms.append(hough_ms(gray, ppu))
            if mode.startswith("corners"):
                cpu, hough_cpu = known_board_cpu_ms(r.image, fit, intr, ppu)
                sc.cpu_ms.append(cpu)
                sc.hough_cpu_ms.append(hough_cpu)
                sc.cpu_ratio.append(cpu / hough_cpu)
            before = (sc.missed, sc.phantoms, sc.colour_wrong)
            score_frame(discs, found, sc)
            if verbose and (sc.missed, sc.phantoms, sc.colour_wrong) != before:
                print(f"frame {k} {mode}: n={len(discs)} missed {sc.missed - before[0]} phantoms "
                      f"{sc.phantoms - before[1]} colour {sc.colour_wrong - before[2]}", flush=True)
    return scores


def scene_eval(sequences: int, seed: int) -> None:
    """SceneMonitor on sequences: 4 still frames, 1 with a hand, 4 still again (new noise and a
    little light flicker on every frame). Prints how often each frame kind is judged right."""
    from hardware.sim import HandPose
    from vision.scene import SceneMonitor

    rng = np.random.default_rng(seed)
    still_ok = still_n = hand_ok = hand_n = settle_ok = 0
    for k in range(sequences):
        cam = random_camera(rng, "dition")
        opts = RenderOptions.random(rng)
        discs = random_discs(rng, int(rng.integers(10, 120)), **LAYOUT)
        intr = Intrinsics(cam.camera_matrix, cam.dist_coeffs, cam.image_size)
        x, y = rng.uniform(1, 19, 2)
        hand = HandPose.random(rng, float(x), float(y), math.degrees(math.atan2(y - 10, x - 10)))
        monitor = SceneMonitor(intrinsics=intr)
        board = None
        states = []
        for i in range(9):
            r = render_dition(discs, cam, np.random.default_rng([seed, k, i]), options=opts,
                              hand=hand if i == 4 else None, gain=float(rng.uniform(0.97, 1.03)))
            board = board or find_board(r.image, corners_px=np.array(r.truth["corners_px"]), intrinsics=intr)
            states.append(monitor.update(r.image, board))
        for i, st in enumerate(states):
            if i == 4:
                hand_n += 1
                hand_ok += st.hand_present and not st.settled
            elif i != 5:  # frame 5: the hand has just left (motion)
                still_n += 1
                still_ok += not st.hand_present and not st.motion
        settle_ok += states[3].settled and states[8].settled and not states[6].settled
    print()
    print("| scene sequences | hand frames seen | still frames judged still | settled exactly when expected |")
    print("|---|---|---|---|")
    print(f"| {sequences} | {hand_ok}/{hand_n} | {still_ok}/{still_n} | {settle_ok}/{sequences} |")


def print_table(scores: dict[str, Score]) -> None:
    print()
    print("| mode | frames | perfect frames | board missed | discs | missed | phantoms | colour wrong "
          "| median err | p99 err | max err | time ms (median) | HoughCircles ms | ratio "
          "| known board: detect CPU ms | HoughCircles CPU ms | CPU ratio | CPU ratio per frame (median) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for mode, s in scores.items():
        e = np.array(s.errors) if s.errors else np.array([np.nan])
        tm = float(np.median(s.times_ms)) if s.times_ms else float("nan")
        hm = float(np.median(s.hough_ms)) if s.hough_ms else float("nan")
        cpu = float(np.median(s.cpu_ms)) if s.cpu_ms else float("nan")
        hcpu = float(np.median(s.hough_cpu_ms)) if s.hough_cpu_ms else float("nan")
        per_frame = float(np.median(s.cpu_ratio)) if s.cpu_ratio else float("nan")
        print(f"| {mode} | {s.frames} | {s.perfect / max(s.frames, 1):.1%} | {s.board_missed} | {s.discs} "
              f"| {s.missed} | {s.phantoms} | {s.colour_wrong} | {np.median(e):.4f} "
              f"| {np.percentile(e, 99):.4f} | {e.max():.4f} | {tm:.1f} | {hm:.1f} | {tm / hm:.2f} "
              f"| {cpu:.1f} | {hcpu:.1f} | {cpu / hcpu:.2f} | {per_frame:.2f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--frames", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--modes", default=",".join(DEFAULT_MODES),
                    help=f"comma-separated, of: {', '.join(MODES)}")
    ap.add_argument("--quick", action="store_true", help="20 frames")
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--scene", type=int, default=0, metavar="N",
                    help="also score the SceneMonitor on N hand sequences")
    a = ap.parse_args()
    frames = 20 if a.quick else a.frames
    modes = tuple(m for m in a.modes.split(",") if m)
    bad = set(modes) - set(MODES)
    if bad:
        ap.error(f"unknown modes {sorted(bad)}; choose from {', '.join(MODES)}")
    if modes:
        load0 = os.getloadavg()[0]
        scores = run(frames, a.seed, modes, a.verbose)
        print_table(scores)
        # (the timings depend on what else the machine runs: its load, 1-minute average)
        print(f"\nmachine load (1-min average) at the start {load0:.1f}, at the end {os.getloadavg()[0]:.1f}")
    if a.scene:
        scene_eval(a.scene, a.seed)


if __name__ == "__main__":
    main()
