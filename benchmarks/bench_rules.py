"""Speed of the rules engines on this machine: prints each figure next to its target.

Dition (issue 2): judging one placement on a board of 300 discs (< 0.2 ms), the danger map at
0.05-diameter resolution for 200 discs (< 50 ms), "is there any non-suicide placement" (< 50 ms).
Then the Domination figures, if `benchmarks/rules_domination.py` exists (its `figures()`).

Run: `.venv/bin/python benchmarks/bench_rules.py` (or `make bench`). Boards are random but
seeded; each figure is the median over repeated runs.
"""

from __future__ import annotations

import importlib.util
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rules import dition as rd
from rules import dition_analysis as da


class Figure(NamedTuple):
    name: str
    median_ms: float
    best_ms: float | None  #: fastest run: less disturbed by other load on the machine
    target: str


def timed(name: str, fn: Callable[[], object], target: str, repeat: int, number: int = 1) -> Figure:
    """Median (and best) wall time of `fn` in ms over `repeat` runs of `number` calls each."""
    fn()  # warm-up (imports, caches)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - start) / number * 1000.0)
    return Figure(name, statistics.median(times), min(times), target)


def dense_board(
    n_discs: int, rng: np.random.Generator
) -> tuple[rd.Position, list[tuple[float, float]]]:
    """`n_discs` settled discs on a jittered lattice, colours in clusters, and free sites.

    Lattice pitch 1.05 (361 sites); discs on random sites, colours by 3x3-site blocks (fronts
    between the colours, as in play), then every disc with 4+ opponents in range removed."""
    pitch = 1.05
    sites = [(0.5 + i * pitch, 0.5 + j * pitch) for j in range(19) for i in range(19)]
    block = rng.integers(0, 2, size=(7, 7))
    order = rng.permutation(len(sites))
    discs: list[rd.Disc] = []
    free: list[tuple[float, float]] = []
    for k in order:
        x, y = sites[k]
        if len(discs) >= n_discs + 60:  # spare discs: some disappear when settling
            free.append((x, y))
            continue
        jx, jy = rng.uniform(-0.02, 0.02, size=2)
        i, j = k % 19, k // 19
        colour = rd.Colour.BLACK if block[j // 3, i // 3] else rd.Colour.WHITE
        discs.append(
            rd.Disc(float(np.clip(x + jx, 0.5, 19.5)), float(np.clip(y + jy, 0.5, 19.5)), colour)
        )
    doomed = set(rd.status(discs).should_have_disappeared)
    kept = tuple(d for i, d in enumerate(discs) if i not in doomed)
    free += [(d.x, d.y) for d in kept[n_discs:]]
    kept = kept[:n_discs]  # removing discs only lowers counts: still settled
    assert len(kept) == n_discs and rd.status(kept).valid
    position = rd.Position(kept, rd.Colour.BLACK, len(kept) + 1)
    free = [p for p in free if rd.check_placement(position, *p).legal]
    return position, free


def suicide_board() -> rd.Position:
    """White discs on a 14 x 14 square lattice spanning the board (pitch 19/13): the only legal
    spots are small patches round the square centres (1.03 from 4 discs), each within range of
    exactly 4 white discs: every legal placement is suicide for Black, so the search for a
    non-suicide placement must examine every candidate."""
    pitch = 19 / 13
    discs = tuple(
        rd.Disc(0.5 + i * pitch, 0.5 + j * pitch, rd.Colour.WHITE)
        for j in range(14)
        for i in range(14)
    )
    return rd.Position(discs, rd.Colour.BLACK)


def dition_figures() -> list[Figure]:
    rng = np.random.default_rng(20261130)
    rows: list[Figure] = []

    board300, free300 = dense_board(300, rng)
    n300 = len(board300.discs)
    spots = free300[:50]
    state = {"k": 0}

    def judge_one() -> None:
        x, y = spots[state["k"] % len(spots)]
        state["k"] += 1
        rd.apply_placement(board300, x, y)

    def judge_cold() -> None:
        fresh = rd.Position(board300.discs, board300.to_move, board300.move_number)
        x, y = spots[state["k"] % len(spots)]
        state["k"] += 1
        rd.apply_placement(fresh, x, y)

    from referee.judging.dition import judge

    request = {
        "game": "dition",
        "discs": [{"x": d.x, "y": d.y, "colour": d.colour.value} for d in board300.discs],
        "to_move": "black",
        "place": {"x": spots[0][0], "y": spots[0][1]},
    }
    rows += [
        timed(
            f"dition: judge one placement, {n300} discs (check + apply)",
            judge_one,
            "< 0.2 ms",
            30,
            200,
        ),
        timed(
            f"dition: same on a fresh Position (arrays rebuilt), {n300} discs",
            judge_cold,
            "(info)",
            30,
            100,
        ),
        timed(
            f"dition: referee judge, one JSON request, {n300} discs (+ tie checks)",
            lambda: judge(request),
            "(info)",
            15,
            5,
        ),
    ]

    board200, _ = dense_board(200, rng)
    hard = suicide_board()
    assert da.has_legal_placement(hard) and not da.has_safe_placement(hard)
    assert da.has_safe_placement(board200)
    rows += [
        timed(
            f"dition: danger map at 0.05 (381x381), {len(board200.discs)} discs",
            lambda: da.danger_map(board200, resolution=0.05),
            "< 50 ms",
            15,
        ),
        timed(
            f"dition: any non-suicide placement? {len(board200.discs)} discs (yes)",
            lambda: da.has_safe_placement(board200),
            "< 50 ms",
            15,
        ),
        timed(
            f"dition: any non-suicide placement? {len(hard.discs)} discs (no: full search)",
            lambda: da.has_safe_placement(hard),
            "< 50 ms",
            15,
        ),
        timed(
            f"dition: any legal placement (tie rule)? {len(hard.discs)} discs (yes)",
            lambda: da.has_legal_placement(hard),
            "(info)",
            15,
        ),
    ]
    return rows


def domination_figures() -> list[Figure]:
    path = ROOT / "benchmarks" / "rules_domination.py"
    if not path.exists():
        return []
    spec = importlib.util.spec_from_file_location("rules_domination_bench", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return [Figure(name, ms, None, target) for name, ms, target in module.figures()]


def main() -> int:
    rows = dition_figures() + domination_figures()
    width = max(len(row.name) for row in rows)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"# {os.cpu_count()} CPUs, load average {load:.2f} (other load inflates the medians)")
    print(f"{'figure':<{width}}  {'median':>10}  {'best':>10}  target")
    for row in rows:
        best = f"{row.best_ms:7.3f} ms" if row.best_ms is not None else " " * 10
        print(f"{row.name:<{width}}  {row.median_ms:7.3f} ms  {best}  {row.target}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
