"""Score Domination on chessboards on the simulated table and print the figures (issue 19).

Per table: a random chessboard (`ChessBoard.random`: wood, walnut-maple, vinyl, print, checkers;
border or none; cut corners taped, papered or blocked by spare pieces), a random set of men
(`Men.random`: draughts men, chips, counters) in 2-4 colours (`random_men_colours`: black and/or
white, sometimes one close to a square's colour), a random camera (tilt up to 15 degrees, lens
distortion) and light (`RenderOptions.random`). The first frame of a table teaches the colours
(`learn_chess_colours` with its true tops, as `referee calibrate colours` would); then `--per`
frames of random positions (1-5 high, 20-95 % of the cells filled) are read. Reported:

- board found automatically (`vision.board.find_board`, no corners, no markers), and the largest
  corner error against the truth modulo quarter turns; a8 put on the right light corner (the
  finder cannot tell the two light corners apart: half of them, the players say which);
- tops (`read_chess_tops`, the board turned to the true a8): right per cell and per whole board,
  overall and per board material and kind of men;
- heights (`vision.chess_heights.stack_heights`, on the cells read as occupied, the men's
  thickness the table was rendered with): exact per stack and |error| / height_sigma, from the
  uncalibrated frame (the camera the chessboard finder estimated from the board's own grid) and
  with the camera model (the board found with the true intrinsics); a stack read empty counts
  as wrong;
- CPU time per frame of the board search, of the reading and of the heights (one thread: the
  wall time of a loaded machine says more about the other jobs).

With `--drawn` the boards are 8x8s drawn as lines (`ChessBoard.random_drawn`: ink on paper or
card, chalk on felt; no alternating squares), found by the same `find_board`.

Usage: .venv/bin/python benchmarks/bench_vision_chess.py [--tables 20] [--per 2] [--seed 3] [--no-heights] [--drawn]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hardware.sim import RenderOptions, random_camera, render_domination
from hardware.sim.layout import playable_cells
from hardware.sim.men import random_chess_table
from vision.board import find_board
from vision.camera import Intrinsics
from vision.chess_heights import stack_heights
from vision.chess_tops import learn_chess_colours, read_chess_tops
from vision.chessboard import turn_board
from vision.domination import CELLS
from vision.errors import VisionError


def random_stacks(rng: np.random.Generator, letters: list[str]) -> dict[str, str]:
    fill = rng.uniform(0.2, 0.95)
    return {
        c: "".join(rng.choice(letters, size=int(rng.integers(1, 6))))
        for c in playable_cells()
        if rng.random() < fill
    }


#: a board fit is right when no corner is further than this from the truth, in squares (the tops
#: are sampled 0.42 squares off a cell's centre: a tenth of a square keeps them on the square)
RIGHT_SQUARES = 0.1


def square_px(corners_px: list[list[float]]) -> float:
    """The mean side of a square (px) of the 8x8 with these corners."""
    c = np.asarray(corners_px, float)
    return float(np.mean(np.linalg.norm(c - np.roll(c, 1, axis=0), axis=1)) / 8.0)


def quarter_turn_to_truth(found: np.ndarray, truth: np.ndarray) -> tuple[int, float]:
    """The quarter turns taking the found corner order to the truth's, and the corner error."""
    errs = [float(np.linalg.norm(np.roll(found, -k, axis=0) - truth, axis=1).max()) for k in range(4)]
    k = int(np.argmin(errs))
    return k, errs[k]


class Heights:
    """Heights exact per stack, and |error| / sigma, of one camera model."""

    def __init__(self) -> None:
        self.stacks = self.exact = 0
        self.z: list[float] = []

    def add(self, stacks: dict[str, str], got: object) -> None:
        for cell, stack in stacks.items():
            self.stacks += 1
            if got is None or cell not in got.heights:  # type: ignore[attr-defined]
                continue
            self.exact += got.heights[cell] == len(stack)  # type: ignore[attr-defined]
            self.z.append((got.estimate[cell] - len(stack)) / got.sigma[cell])  # type: ignore[attr-defined]

    def text(self) -> str:
        z = np.median(np.abs(self.z)) if self.z else float("nan")
        return (f"exact {100 * self.exact / max(self.stacks, 1):.1f} % of {self.stacks} stacks, "
                f"|error| / height_sigma median {z:.2f} (0.67 if calibrated)")


class Tally:
    def __init__(self) -> None:
        self.cells = self.bad_cells = self.boards = self.bad_boards = 0

    def add(self, n_wrong: int) -> None:
        self.cells += len(CELLS)
        self.bad_cells += n_wrong
        self.boards += 1
        self.bad_boards += bool(n_wrong)

    def row(self, name: str) -> str:
        if not self.boards:
            return f"| {name} | - | - | 0 |"
        return (f"| {name} | {100 * (1 - self.bad_cells / self.cells):.3f} % | "
                f"{100 * (1 - self.bad_boards / self.boards):.1f} % | {self.boards} |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tables", type=int, default=20)
    parser.add_argument("--per", type=int, default=2, help="frames read per table")
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--drawn", action="store_true", help="8x8s drawn as lines instead of chessboards")
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--no-heights", dest="heights", action="store_false",
                        help="skip the heights (about 50 ms a frame)")
    args = parser.parse_args(argv)
    cv2.setNumThreads(1)
    rng = np.random.default_rng(args.seed)
    tallies: dict[str, Tally] = defaultdict(Tally)
    frames = found = a8_right = 0
    corner_errs: list[float] = []
    corner_errs_sq: list[float] = []  # in squares
    methods: dict[str, int] = defaultdict(int)
    find_ms: list[float] = []
    read_ms: list[float] = []
    heights_ms: list[float] = []
    uncalibrated, calibrated = Heights(), Heights()
    for t in range(args.tables):
        board, men, colours = random_chess_table(rng, drawn=args.drawn)
        letters = list(colours)
        cam = random_camera(rng, "domination")
        opts = RenderOptions.random(rng)
        learn = render_domination(random_stacks(rng, letters), cam, rng, colours=colours, options=opts,
                                  board=board, men=men)
        frames += 1
        try:
            fit = find_board(learn.image, game="domination")
        except VisionError as exc:
            print(f"table {t}: board not found on the colour frame ({exc})")
            continue
        found += 1
        turns, err = quarter_turn_to_truth(fit.corners_px, np.array(learn.truth["corners_px"]))
        corner_errs.append(err)
        corner_errs_sq.append(err / square_px(learn.truth["corners_px"]))
        methods[fit.method] += 1
        a8_right += turns == 0
        model = learn_chess_colours(learn.image, turn_board(fit, turns),
                                    {c: s[-1] for c, s in learn.truth["stacks"].items()})
        for _ in range(args.per):
            stacks = random_stacks(rng, letters)
            r = render_domination(stacks, cam, rng, colours=colours, options=opts, board=board, men=men)
            frames += 1
            t0 = time.thread_time()
            try:
                fit = find_board(r.image, game="domination")
            except VisionError as exc:
                print(f"table {t}: board not found ({exc})")
                continue
            find_ms.append(1000 * (time.thread_time() - t0))
            found += 1
            turns, err = quarter_turn_to_truth(fit.corners_px, np.array(r.truth["corners_px"]))
            corner_errs.append(err)
            corner_errs_sq.append(err / square_px(r.truth["corners_px"]))
            methods[fit.method] += 1
            a8_right += turns == 0
            fit = turn_board(fit, turns)  # a8 where the players said
            t0 = time.thread_time()
            reading = read_chess_tops(r.image, fit, model)
            read_ms.append(1000 * (time.thread_time() - t0))
            wrong = [c for c in CELLS if reading.tops[c] != (stacks[c][-1] if c in stacks else ".")]
            if args.heights:
                occupied = [c for c in CELLS if reading.tops[c] != "."]
                t0 = time.thread_time()
                uncalibrated.add(stacks, stack_heights(r.image, fit, occupied, thickness=opts.piece_thickness,
                                                       tops=reading.tops))
                heights_ms.append(1000 * (time.thread_time() - t0))
                intr = Intrinsics(cam.camera_matrix, cam.dist_coeffs, cam.image_size)
                try:
                    fit_k = find_board(r.image, game="domination", intrinsics=intr)
                    fit_k = turn_board(fit_k, quarter_turn_to_truth(fit_k.corners_px, np.array(r.truth["corners_px"]))[0],
                                       intr)
                    calibrated.add(stacks, stack_heights(r.image, fit_k, occupied, intrinsics=intr,
                                                         thickness=opts.piece_thickness, tops=reading.tops))
                except VisionError:
                    calibrated.add(stacks, None)
            for key in ("all", f"board {board.name}", f"men {men.kind}", f"corners {board.corners}"):
                tallies[key].add(len(wrong))
            if args.verbose and wrong:
                print(t, board.name, men.kind, board.corners, [(c, reading.tops[c], stacks.get(c, ".")[-1:]) for c in wrong])
    right = sum(e <= RIGHT_SQUARES for e in corner_errs_sq)
    print(f"{'drawn 8x8s' if args.drawn else 'chessboards'}: {args.tables} tables, {frames} frames, seed {args.seed}")
    print(f"board found within {RIGHT_SQUARES} squares at every corner: {right}/{frames} "
          f"({100 * right / max(frames, 1):.1f} %); by finder: {dict(sorted(methods.items()))}")
    print(f"board found automatically: {found}/{frames} ({100 * found / max(frames, 1):.1f} %); "
          f"largest corner error median {np.median(corner_errs):.2f} px, 95th percentile "
          f"{np.percentile(corner_errs, 95):.2f} px; a8 on the true corner without being told "
          f"{a8_right}/{found}")
    print("| set | cells right | boards right | boards |")
    print("|---|---|---|---|")
    for key in sorted(tallies, key=lambda k: (k != "all", k)):
        print(tallies[key].row(key))
    if args.heights:
        print(f"heights from the uncalibrated frame (camera from the board's grid): {uncalibrated.text()}")
        print(f"heights with the camera model: {calibrated.text()}")
    if find_ms:
        extra = f", heights {np.median(heights_ms):.0f} ms" if heights_ms else ""
        print(f"CPU time per frame (one thread): board search median {np.median(find_ms):.0f} ms "
              f"(95th {np.percentile(find_ms, 95):.0f}), tops {np.median(read_ms):.1f} ms{extra}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
