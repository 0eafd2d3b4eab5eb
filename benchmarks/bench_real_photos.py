"""Score the Dition disc reader on real photos (benchmarks/real/); print recall, precision, colour
accuracy and centre error per set, for the reader and for a plain cv2.HoughCircles baseline.

    .venv/bin/python benchmarks/real/fetch_images.py      # once: the images are not committed
    .venv/bin/python benchmarks/bench_real_photos.py [--set NAME] [--debug-dir DIR] [-v]

The board's corners are given (as `referee detect --corners` would be): each label file gives the
corners of the photo's board area and that area's size in disc diameters (benchmarks/real/README.md);
the Dition board (20 x 20 diameters) is laid centred on that area through the same homography, so the
board's scale predicts the disc size as on a real Dition board. Images larger than 2000 px are
scaled down to 2000 px (phone photos; the referee's camera gives 1640 x 1232).

Scoring: a reading matches the nearest label within 0.5 diameters (each label once). Readings
outside the labelled area (more than 0.5 diameters beyond it: the table, the box, the board's frame)
are not counted; everything else unmatched is a phantom. Centre error: distance in diameters
between the reading and the label's centre mapped to the board (the label is the centre of the
visible disc outline; for thick pieces seen at an angle that is the top face, see the README).
Colour ("colour right"): the colour the reading says the piece shows (`DiscReading.seen`: black,
white, red, yellow, green, blue) against the label's (black, white, red, green, blue), over the
pieces found. "player right": the player colour (`DiscReading.colour`, black or white) against
the label, over the black- and white-labelled pieces found (a red piece has no right player colour).

Baseline ("hough"): one cv2.HoughCircles pass over the grey frame (median blur 5) with the radius the
board's scale predicts at the area's centre (0.8-1.2 of it), centres at least 0.9 diameters apart,
player colour from the face's mean brightness (inner 0.6 radius) against the ring 1.3-1.8 radii
around it, and the seen colour named from its centres and that player colour by the reader's own
`vision.colour_names.seen_colours` (so both are scored on the same naming).
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent / "real"))

from fetch_images import image_path, label_sets

from vision.colour_names import seen_colours
from vision.dition import detect_discs
from vision.geometry import apply_homography, fit_from_corners

MAX_SIDE_PX = 2000
MATCH_D = 0.5
BOARD_D = 20.0


@dataclass
class Score:
    images: int = 0
    discs: int = 0
    found: int = 0
    readings: int = 0
    phantoms: int = 0
    colour_wrong: int = 0
    player_scored: int = 0
    player_wrong: int = 0
    errors: list[float] = field(default_factory=list)
    times_ms: list[float] = field(default_factory=list)

    def add(self, other: Score) -> None:
        for k in ("images", "discs", "found", "readings", "phantoms", "colour_wrong", "player_scored", "player_wrong"):
            setattr(self, k, getattr(self, k) + getattr(other, k))
        self.errors += other.errors
        self.times_ms += other.times_ms


def load_image(s: dict, im: dict) -> tuple[np.ndarray, float]:
    """The image (BGR) and the factor its pixel coordinates were scaled by."""
    path = image_path(s, im)
    img = cv2.imread(str(path))
    if img is None:
        sys.exit(f"bench_real_photos: {path} missing or unreadable: run benchmarks/real/fetch_images.py")
    k = min(1.0, MAX_SIDE_PX / max(img.shape[:2]))
    if k < 1.0:
        img = cv2.resize(img, None, fx=k, fy=k, interpolation=cv2.INTER_AREA)
    return img, k


def board_corners(im: dict, k: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The Dition board's corners (px), the area's corners on the board (board units) and
    H_image_to_board (plane homography, scaled pixels)."""
    w, h = im["area_size_d"]
    x0, y0 = (BOARD_D - w) / 2, (BOARD_D - h) / 2
    area_board = np.array([[x0, y0], [x0 + w, y0], [x0 + w, y0 + h], [x0, y0 + h]])
    area_px = np.asarray(im["area_corners_px"], dtype=np.float64) * k
    H = cv2.getPerspectiveTransform(area_px.astype(np.float32), area_board.astype(np.float32)).astype(np.float64)
    corners = apply_homography(np.linalg.inv(H), np.array([[0, 0], [BOARD_D, 0], [BOARD_D, BOARD_D], [0, BOARD_D]]))
    return corners, area_board, H


def hough_baseline(img: np.ndarray, H_i2b: np.ndarray, area_board: np.ndarray, fit) -> list[tuple[np.ndarray, str, str]]:
    """(centre_board, seen colour, player colour) of every circle one HoughCircles pass finds."""
    grey = cv2.medianBlur(cv2.cvtColor(img, cv2.COLOR_BGR2GRAY), 5)
    c = area_board.mean(axis=0)
    H_b2i = np.linalg.inv(H_i2b)
    p = apply_homography(H_b2i, np.array([c, c + [0.5, 0], c + [0, 0.5]]))
    r = 0.5 * (np.linalg.norm(p[1] - p[0]) + np.linalg.norm(p[2] - p[0]))
    circles = cv2.HoughCircles(grey, cv2.HOUGH_GRADIENT, 1, 0.9 * 2 * r, param1=100, param2=30,
                               minRadius=int(0.8 * r), maxRadius=int(1.2 * r) + 1)
    out = []
    yy, xx = np.mgrid[: grey.shape[0], : grey.shape[1]]
    for x, y, rr in ([] if circles is None else circles[0]):
        x0, y0, x1, y1 = int(max(x - 2 * rr, 0)), int(max(y - 2 * rr, 0)), int(x + 2 * rr) + 1, int(y + 2 * rr) + 1
        d = np.hypot(xx[y0:y1, x0:x1] - x, yy[y0:y1, x0:x1] - y)
        g = grey[y0:y1, x0:x1]
        face, ring = g[d < 0.6 * rr], g[(d > 1.3 * rr) & (d < 1.8 * rr)]
        if len(face) == 0 or len(ring) == 0:
            continue
        colour = "white" if face.mean() > np.median(ring) else "black"
        out.append((apply_homography(H_i2b, np.array([[x, y]]))[0], colour))
    if not out:
        return []
    seen = seen_colours(img, fit, np.array([c for c, _ in out]), [p for _, p in out])
    return [(c, sn, p) for (c, p), sn in zip(out, seen)]


def score_image(readings: list[tuple[np.ndarray, str, str]], truth: list[tuple[np.ndarray, str]],
                area_board: np.ndarray) -> Score:
    """`readings`: (centre_board, seen colour, player colour) each."""
    sc = Score(images=1, discs=len(truth))
    lo, hi = area_board.min(axis=0) - MATCH_D, area_board.max(axis=0) + MATCH_D
    inside = [r for r in readings if np.all(r[0] >= lo) and np.all(r[0] <= hi)]
    sc.readings = len(inside)
    pairs = sorted(((float(np.linalg.norm(r[0] - t)), i, j) for i, r in enumerate(inside)
                    for j, (t, _) in enumerate(truth)), key=lambda p: p[0])
    used_r, used_t = set(), set()
    for d, i, j in pairs:
        if d > MATCH_D or i in used_r or j in used_t:
            continue
        used_r.add(i)
        used_t.add(j)
        sc.found += 1
        sc.errors.append(d)
        sc.colour_wrong += inside[i][1] != truth[j][1]
        if truth[j][1] in ("black", "white"):
            sc.player_scored += 1
            sc.player_wrong += inside[i][2] != truth[j][1]
    sc.phantoms = sc.readings - sc.found
    return sc


def run(set_names: list[str] | None, debug_dir: Path | None, verbose: bool) -> dict[str, dict[str, Score]]:
    cv2.setNumThreads(1)
    results: dict[str, dict[str, Score]] = {}
    for s in label_sets("dition"):
        if set_names and s["set"] not in set_names:
            continue
        per = {"reader": Score(), "hough": Score()}
        for im in s["images"]:
            img, k = load_image(s, im)
            corners, area_board, H = board_corners(im, k)
            fit = fit_from_corners(corners, "dition")
            truth = [(apply_homography(H, np.array([d["centre_px"]]) * k)[0], d["colour"]) for d in im["discs"]]
            t0 = time.perf_counter()
            found = detect_discs(img, fit)
            t_reader = (time.perf_counter() - t0) * 1000
            t0 = time.perf_counter()
            base = hough_baseline(img, H, area_board, fit)
            t_hough = (time.perf_counter() - t0) * 1000
            reader = [(np.array(d.centre_board), d.seen or d.colour, d.colour) for d in found]
            for name, rd, t in (("reader", reader, t_reader), ("hough", base, t_hough)):
                sc = score_image(rd, truth, area_board)
                sc.times_ms.append(t)
                per[name].add(sc)
                if verbose:
                    print(f"  {s['set']}/{im['name']} {name}: {sc.found}/{sc.discs} found, {sc.phantoms} phantoms, "
                          f"{sc.colour_wrong} colour wrong, {t:.0f} ms")
            if debug_dir is not None:
                _draw(debug_dir / f"{s['set']}_{im['name']}.png", img, fit, truth, reader, area_board)
        results[s["set"]] = per
    return results


def _draw(path: Path, img: np.ndarray, fit, truth, reader, area_board) -> None:
    out = img.copy()
    H_b2i = fit.H_board_to_image
    q = apply_homography(H_b2i, area_board).astype(np.int32)
    cv2.polylines(out, [q], True, (0, 255, 255), 1)
    for c, col in truth:
        p = apply_homography(H_b2i, c[None])[0]
        e = apply_homography(H_b2i, (c + [0.5, 0])[None])[0]
        cv2.circle(out, tuple(int(v) for v in p), int(np.linalg.norm(e - p)), (0, 200, 0), 2)
    for c, _, col in reader:
        p = apply_homography(H_b2i, c[None])[0]
        cv2.drawMarker(out, tuple(int(v) for v in p), (0, 0, 255) if col == "white" else (255, 0, 0),
                       cv2.MARKER_TILTED_CROSS, 14, 2)
    path.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(path), out)


def report(results: dict[str, dict[str, Score]]) -> None:
    print("| set | method | images | discs | found | readings | phantoms | recall | precision | colour right "
          "| player right | median err | p95 err | max err | time ms (median) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    total = {"reader": Score(), "hough": Score()}
    rows = list(results.items())
    for name, per in rows:
        for m, sc in per.items():
            total[m].add(sc)
    for name, per in rows + [("all", total)]:
        for m, sc in per.items():
            e = np.array(sc.errors) if sc.errors else np.array([np.nan])
            rec = sc.found / sc.discs if sc.discs else float("nan")
            prec = sc.found / sc.readings if sc.readings else (1.0 if sc.found == 0 else float("nan"))
            col = 1 - sc.colour_wrong / sc.found if sc.found else float("nan")
            pl = 1 - sc.player_wrong / sc.player_scored if sc.player_scored else float("nan")
            print(f"| {name} | {m} | {sc.images} | {sc.discs} | {sc.found} | {sc.readings} | {sc.phantoms} "
                  f"| {rec:.3f} | {prec:.3f} | {col:.3f} | {pl:.3f} | {np.median(e):.3f} | {np.percentile(e, 95):.3f} "
                  f"| {e.max():.3f} | {np.median(sc.times_ms):.0f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--set", action="append", help="only this set (repeatable)")
    ap.add_argument("--debug-dir", type=Path, help="write each image with labels (green) and readings drawn")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    report(run(args.set, args.debug_dir, args.verbose))


if __name__ == "__main__":
    main()
