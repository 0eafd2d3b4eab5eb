"""Domination tops on REAL photos of draughts men on chessboards / checkers boards (issue 19).

    .venv/bin/python benchmarks/real/fetch_images.py      # once: the images are not committed
    .venv/bin/python benchmarks/bench_real_chess.py [-v] [--set NAME] [--debug-dir DIR]

The label sets are the `benchmarks/real/*.json` files with "game": "domination" (see
benchmarks/real/README.md): per photo the 8x8's four outer corners and what stands on each of
its 64 squares. The reader is the one `referee detect --game domination` and the referee use on a
chessboard: the board from `vision.board.find_board(frame, game="domination")` (no corners, no
markers: the chessboard finder), the tops from `vision.chess_tops.read_chess_tops`, with the men's
colours learnt by `learn_chess_colours` from one labelled frame of the set (its "colour_frame";
a set without one teaches each photo its own colours), as the start position or
`referee calibrate colours` would. The reader reads the 52 Domination cells (the 8x8 less three
squares at each corner) and has no 64-square mode: the 52 are scored, men on the 12 cut squares
are not (they stay in view and may disturb their neighbours).

Two boards per photo:
- "auto": the board the finder found, turned so that a8 is the labelled a8 (the players say which
  corner; the finder cannot tell the two light corners apart). Found = every corner within
  `FOUND_SQUARES` squares of the label (measured through the labelled homography). Its tops are
  scored only where it was found; the colours are learnt on the colour frame's own auto board
  (or its labelled corners where the finder missed it).
- "corners": the labelled corners given (as `referee detect --corners`); no lens model.

Printed per set and board: photos, board found automatically, cells right of the 52 per photo,
boards with all 52 right, and the errors by kind (a man missed, a phantom on a bare square, the
wrong colour); `-v` lists every wrong cell.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE / "real"))

from fetch_images import image_path, label_sets

from vision.board import find_board
from vision.chess_tops import learn_chess_colours, read_chess_tops
from vision.chessboard import turn_board
from vision.domination import CELLS, cell_centre_board
from vision.errors import VisionError
from vision.geometry import BoardFit, apply_homography, board_to_image, fit_from_corners

#: a found board counts when each corner lies within this many squares of the labelled one (a
#: man is 0.8 across: beyond a quarter square the cells' samples reach the next square)
FOUND_SQUARES = 0.25
BOARDS = ("auto", "corners")


def truth_tops(cells: list[str]) -> dict[str, str]:
    """The labelled letter ('.' for bare) of each of the 52 Domination cells."""
    return {c: cells[8 - int(c[1:])]["abcdefgh".index(c[0])] for c in CELLS}


def corner_error_squares(fit: BoardFit, label: BoardFit) -> tuple[int, float]:
    """The quarter turns taking the found corner order to the label's, and the largest corner
    distance in squares (the found corners carried onto the labelled board plane)."""
    found = apply_homography(label.H_image_to_board, np.asarray(fit.corners_px, float))
    truth = np.array([[0.0, 0.0], [8.0, 0.0], [8.0, 8.0], [0.0, 8.0]])
    errs = [float(np.linalg.norm(np.roll(found, -k, axis=0) - truth, axis=1).max()) for k in range(4)]
    k = int(np.argmin(errs))
    return k, errs[k]


@dataclass
class Tally:
    photos: int = 0
    found: int = 0
    read: int = 0
    cells: int = 0
    right: int = 0
    boards_right: int = 0
    missed: int = 0
    phantom: int = 0
    colour: int = 0

    def add(self, tops: dict[str, str], truth: dict[str, str]) -> list[str]:
        wrong = [c for c in CELLS if tops[c] != truth[c]]
        self.read += 1
        self.cells += len(CELLS)
        self.right += len(CELLS) - len(wrong)
        self.boards_right += not wrong
        for c in wrong:
            if tops[c] == ".":
                self.missed += 1
            elif truth[c] == ".":
                self.phantom += 1
            else:
                self.colour += 1
        return wrong

    def row(self, name: str, board: str) -> str:
        found = f"{self.found}/{self.photos}" if board == "auto" else "given"
        if not self.read:
            return f"| {name} | {board} | {self.photos} | {found} | - | - | - | - | - |"
        return (f"| {name} | {board} | {self.photos} | {found} | {self.right}/{self.cells} "
                f"({100 * self.right / self.cells:.1f} %) | {self.boards_right}/{self.read} | {self.missed} "
                f"| {self.phantom} | {self.colour} |")


def _auto_board(img: np.ndarray, label: BoardFit) -> tuple[BoardFit | None, str]:
    """The finder's board turned to the labelled a8, or None, and what happened."""
    try:
        fit = find_board(img, game="domination")
    except VisionError as exc:
        return None, f"not found ({str(exc)[:90]})"
    turns, err = corner_error_squares(fit, label)
    if err > FOUND_SQUARES:
        return None, f"{fit.method} found {err:.2f} squares off"
    fit = turn_board(fit, turns) if fit.method == "chessboard" else fit_from_corners(
        np.roll(np.asarray(fit.corners_px, float), -turns, axis=0), "domination")
    return fit, f"{fit.method}, corners within {err:.2f} squares"


def _draw(path: Path, img: np.ndarray, fit: BoardFit, tops: dict[str, str], truth: dict[str, str]) -> None:
    """The photo with the 8x8 and, per cell, the reading (green: right, red: wrong, with the truth)."""
    out = img.copy()
    thick = max(1, round(img.shape[1] / 800))
    for k in range(9):
        for a, b in (((k, 0), (k, 8)), ((0, k), (8, k))):
            p = board_to_image(np.linspace(a, b, 17), fit)
            cv2.polylines(out, [np.round(p).astype(np.int32)], False, (255, 0, 255), thick)
    for c in CELLS:
        x, y = board_to_image(np.array([cell_centre_board(c)]), fit)[0]
        ok = tops[c] == truth[c]
        text = tops[c] if ok else f"{tops[c]}/{truth[c]}"
        cv2.putText(out, text, (int(x) - 6 * thick, int(y) + 5 * thick), cv2.FONT_HERSHEY_SIMPLEX,
                    0.5 * thick, (0, 200, 0) if ok else (0, 0, 255), 2 * thick)
    path.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(path), out)


def run(set_names: list[str] | None, debug_dir: Path | None, verbose: bool) -> dict[str, dict[str, Tally]]:
    results: dict[str, dict[str, Tally]] = {}
    for s in label_sets("domination"):
        if set_names and s["set"] not in set_names:
            continue
        images = []
        for im in s["images"]:
            img = cv2.imread(str(image_path(s, im)))
            if img is None:
                sys.exit(f"bench_real_chess: {image_path(s, im)} missing: run benchmarks/real/fetch_images.py")
            label = fit_from_corners(np.array(im["corners_px"], float), "domination")
            auto, note = _auto_board(img, label)
            images.append((im, img, {"corners": label, "auto": auto}, note))
        tallies = {b: Tally() for b in BOARDS}
        models: dict[str, dict] = {}
        teacher = s.get("colour_frame")
        for b in BOARDS:
            if teacher is not None:
                im, img, fits, _ = next(x for x in images if x[0]["name"] == teacher)
                fit = fits[b] or fits["corners"]
                models[b] = learn_chess_colours(img, fit, {c: t for c, t in truth_tops(im["cells"]).items() if t != "."})
        for im, img, fits, note in images:
            truth = truth_tops(im["cells"])
            for b in BOARDS:
                t = tallies[b]
                t.photos += 1
                fit = fits[b]
                if b == "auto":
                    t.found += fit is not None
                    if verbose:
                        print(f"{s['set']}/{im['name']}: board {note}")
                if fit is None:
                    continue
                model = models.get(b) or learn_chess_colours(
                    img, fit, {c: v for c, v in truth.items() if v != "."})
                tops = dict(read_chess_tops(img, fit, model).tops)
                wrong = t.add(tops, truth)
                if verbose:
                    print(f"  {b}: {len(CELLS) - len(wrong)}/{len(CELLS)} right"
                          + (f"; wrong (read/true): {' '.join(f'{c}:{tops[c]}/{truth[c]}' for c in wrong)}"
                             if wrong else ""))
                if debug_dir is not None:
                    _draw(debug_dir / s["set"] / f"{im['name']}_{b}.png", img, fit, tops, truth)
        results[s["set"]] = tallies
    return results


def report(results: dict[str, dict[str, Tally]]) -> None:
    print("| set | board | photos | found automatically | cells right (52 a photo) | boards all right "
          "| men missed | phantoms | wrong colour |")
    print("|---|---|---|---|---|---|---|---|---|")
    total = {b: Tally() for b in BOARDS}
    for name, tallies in results.items():
        for b in BOARDS:
            print(tallies[b].row(name, b))
            for k in vars(total[b]):
                setattr(total[b], k, getattr(total[b], k) + getattr(tallies[b], k))
    for b in BOARDS:
        print(total[b].row("all", b))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--set", action="append", help="only this set (repeatable)")
    ap.add_argument("--debug-dir", type=Path, help="write each photo with the reading drawn")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    cv2.setNumThreads(1)
    report(run(args.set, args.debug_dir, args.verbose))


if __name__ == "__main__":
    main()
