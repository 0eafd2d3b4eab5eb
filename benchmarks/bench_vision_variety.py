"""Score the Dition disc reader on the varied simulated table (hardware.sim.variety), per factor.

    .venv/bin/python benchmarks/bench_vision_variety.py [--frames 30] [--seed 1] [--factor disc] [-v]
                                                        [--board-only]

Every choice of every factor is scored on its own (the other factors stay the kit's), on the same
frames: random camera (tilt <= 15 degrees, lens distortion, intrinsics given), RenderOptions.random,
10-150 discs (a third touching another), the board's corners given ("corners+K" of
bench_vision_dition). Per choice: recall (discs found / discs), precision (readings that are a
disc / readings), "found all, no phantom" (the share of frames on which every disc is found once
and nothing else is reported: the issue's >= 99 % target), "perfect" (the same with every colour
right too), centre errors in disc diameters. For boards with drawn lines (or a board edge against
the table), "board found" is the share of frames on which find_board finds the board by itself
(no markers, intrinsics given) within 2 px of the true corners. "Of what the frame shows": the
same frame rate, not counting missed discs the frame does not show (the face clipped at the
sensor's white with no outline around it: on fewer than half of its rays does its side band or
its shadow step below the face; the count is the "not shown" column).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_vision_dition import LAYOUT, Score, hough_ms, score_frame

from hardware.sim.camera import random_camera
from hardware.sim.options import RenderOptions
from hardware.sim.positions import random_discs
from hardware.sim.variety import (
    EDGE_BOARDS,
    FACTORS,
    LINED_BOARDS,
    OTHELLO_THICKNESS,
    Variety,
    render_varied,
)
from vision.board import find_board
from vision.camera import Intrinsics
from vision.dition import DiscParams, detect_discs
from vision.errors import BoardNotFoundError
from vision.geometry import BoardParams

BOARD_TOL_PX = 2.0


Row = tuple[str, str, Score, list[bool], int, int, int]
#: a disc the frame does not show: its face clipped at the sensor's white (this share of its
#: pixels' darkest channel at this level or above) with no outline seen around it: on fewer than
#: half of 24 rays (the reader's `min_closure`) does the ring just outside its rim (its side band
#: and its shadow, 1.0-1.3 radii) fall `SHOWN_STEP` grey levels below the face in its darkest
#: channel (clipped pixels carry no noise; 8-bit steps and the codec's, a level or two, do). By
#: the issue's own definition no disc (a face that differs from the board under it, an outline
#: seen all around). (A ring of the paper's median 1.15-1.3 radii out, the former test, counted
#: discs whose shadow and side still close around them, 6-20 levels deep, as not shown.)
CLIPPED_LEVEL, CLIPPED_SHARE, SHOWN_STEP = 250, 0.97, 3.0


def _unseen_missed(frame: np.ndarray, truth: dict, got: list, fit: object) -> int:
    """How many of the discs the reader missed the frame does not show (a clipped white face
    with no outline around it): counted apart, the reader cannot be asked for them."""
    from scipy.spatial import cKDTree

    found = np.array([d.centre_board for d in got]).reshape(-1, 2)
    tree = cKDTree(found) if len(found) else None
    darkest = (frame.min(axis=2) if frame.ndim == 3 else frame).astype(np.float32)
    ang = np.linspace(0, 2 * np.pi, 24, endpoint=False)
    rad = np.linspace(0.0, 1.3, 27)
    n = 0
    for d in truth["discs"]:
        if tree is not None and tree.query([d["x"], d["y"]])[0] <= 0.3:
            continue
        (u, v), (ue, ve) = d["centre_px"], truth_edge_px(fit, d)
        r = float(np.hypot(ue - u, ve - v))
        xs = (u + r * rad[None, :] * np.cos(ang)[:, None]).astype(np.float32)
        ys = (v + r * rad[None, :] * np.sin(ang)[:, None]).astype(np.float32)
        prof = cv2.remap(darkest, xs, ys, cv2.INTER_LINEAR)  # (rays, radii)
        face = prof[:, rad < 0.9]
        if float((face >= CLIPPED_LEVEL).mean()) < CLIPPED_SHARE:
            continue
        drop = np.median(face) - prof[:, rad >= 1.0].min(axis=1)
        n += float((drop >= SHOWN_STEP).mean()) < 0.5
    return n


def truth_edge_px(fit: object, d: dict) -> tuple[float, float]:
    """A point of the disc's rim in the frame, through the board's fit (half a diameter along x)."""
    from vision.geometry import apply_homography

    p = apply_homography(fit.H_board_to_image, np.array([[d["x"] + 0.5, d["y"]]]))[0]  # type: ignore[attr-defined]
    c = apply_homography(fit.H_board_to_image, np.array([[d["x"], d["y"]]]))[0]  # type: ignore[attr-defined]
    return d["centre_px"][0] + float(p[0] - c[0]), d["centre_px"][1] + float(p[1] - c[1])


def run(frames: int, seed: int, factors: list[str], verbose: bool, board_only: bool = False) -> Iterator[Row]:
    """One row per choice, as soon as it is scored (`board_only`: only whether the board is found)."""
    cv2.setNumThreads(1)
    for factor in factors:
        # Othello-thick discs are also read with their thickness stated (DiscParams.thickness_board
        # = the set's thickness over its diameter), against the reader's default for the kit's discs
        for choice in FACTORS[factor] + (("othello+t",) if factor == "disc" else ()):
            if factor != "board" and choice == FACTORS[factor][0]:
                continue  # the kit is the first row of the board factor
            params = DiscParams(thickness_board=OTHELLO_THICKNESS) if choice == "othello+t" else DiscParams()
            v = Variety.one(factor, choice.removesuffix("+t"))
            rng = np.random.default_rng(seed)
            sc, found_board, clean, unseen, clean_seen = Score(), [], 0, 0, 0
            for k in range(frames):
                discs = random_discs(rng, int(rng.integers(10, 151)), **LAYOUT)
                opts = RenderOptions.random(rng)
                cam = random_camera(rng, "dition", distortion=True)
                r = render_varied(discs, cam, np.random.default_rng([seed, k]), v, opts)
                intr = Intrinsics(cam.camera_matrix, cam.dist_coeffs, cam.image_size)
                corners = np.array(r.truth["corners_px"])
                if not board_only:
                    fit = find_board(r.image, corners_px=corners, intrinsics=intr)
                    t0 = time.perf_counter()
                    got = detect_discs(r.image, fit, params, intrinsics=intr)
                    sc.times_ms.append((time.perf_counter() - t0) * 1000)
                    gray = cv2.cvtColor(r.image, cv2.COLOR_BGR2GRAY)
                    sc.hough_ms.append(hough_ms(gray, float(np.linalg.norm(corners[1] - corners[0])) / 20))
                    before = (sc.missed, sc.phantoms, sc.colour_wrong)
                    score_frame(discs, got, sc)
                    clean += (sc.missed, sc.phantoms) == before[:2]
                    blind = _unseen_missed(r.image, r.truth, got, fit)
                    unseen += blind
                    clean_seen += sc.phantoms == before[1] and sc.missed - before[0] == blind
                    if verbose and (sc.missed, sc.phantoms, sc.colour_wrong) != before:
                        print(f"  {factor}={choice} frame {k}: n={len(discs)} missed {sc.missed - before[0]} "
                              f"phantoms {sc.phantoms - before[1]} colour {sc.colour_wrong - before[2]}", flush=True)
                if factor == "board" and (choice in LINED_BOARDS or choice in EDGE_BOARDS):
                    plain = r if not v.markers else render_varied(
                        discs, cam, np.random.default_rng([seed, k]), v, opts.replace(markers=False))
                    try:
                        auto = find_board(plain.image, BoardParams(use_aruco=False), intrinsics=intr)
                        err = min(np.abs(np.roll(auto.corners_px, s, axis=0) - corners).max() for s in range(4))
                        found_board.append(bool(err <= BOARD_TOL_PX))
                    except BoardNotFoundError as exc:
                        found_board.append(False)
                        if verbose:
                            print(f"  {factor}={choice} frame {k}: board not found ({exc})", flush=True)
            yield factor, choice, sc, found_board, clean, unseen, clean_seen


def report(rows: Iterable[Row]) -> None:
    print("| factor | choice | frames | found all, no phantom | ... of what the frame shows | perfect | recall "
          "| precision | discs | missed | (not shown) | phantoms | colour wrong | median err | p99 err | max err "
          "| board found | time ms | HoughCircles ms |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for factor, choice, s, fb, clean, unseen, clean_seen in rows:
        e = np.array(s.errors) if s.errors else np.array([np.nan])
        board = f"{np.mean(fb):.1%} of {len(fb)}" if fb else "-"
        found = s.discs - s.missed
        reported = found + s.phantoms
        print(f"| {factor} | {choice} | {s.frames} | {clean / max(s.frames, 1):.1%} | "
              f"{clean_seen / max(s.frames, 1):.1%} | "
              f"{s.perfect / max(s.frames, 1):.1%} | {found / max(s.discs, 1):.4f} | "
              f"{found / max(reported, 1):.4f} | {s.discs} | {s.missed} | {unseen} "
              f"| {s.phantoms} | {s.colour_wrong} | {np.median(e):.4f} | {np.percentile(e, 99):.4f} | {e.max():.4f} "
              f"| {board} | {np.median(s.times_ms):.1f} | {np.median(s.hough_ms):.1f} |", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--frames", type=int, default=30)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--factor", action="append", choices=list(FACTORS), help="only this factor (repeatable)")
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--board-only", action="store_true", help="only 'board found' (no disc reading)")
    args = ap.parse_args()
    report(run(args.frames, args.seed, args.factor or list(FACTORS), args.verbose, args.board_only))


if __name__ == "__main__":
    main()
