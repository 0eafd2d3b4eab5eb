"""How long after the hand leaves the board is a move judged? (issue 5: target < 1 s)

Plays generated matches on the simulated table at the camera's frame rate and measures, for every
move, the time from the first frame without a hand over the board to the frame on which the
referee committed the verdict, plus the referee's own processing time on that frame. Also prints
the referee's per-frame processing time.

    python benchmarks/bench_referee.py [--game dition|domination] [--seeds 3] [--fps 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hardware.source import iter_frames
from referee.dition_match import DitionMatch
from referee.domination_match import DominationMatch
from referee.log import MatchLog
from referee.loop import Referee
from referee.simsteps import Pace
from referee.simtable import scripted_match


def measure(game: str, seed: int, fps: float, size: tuple[int, int]) -> tuple[list[float], list[float]]:
    table, _ = scripted_match(game, seed, pace=Pace(still=3, hand=4, verdict=6, end=3), fps=fps,
                              size=size)
    log = MatchLog(Path(tempfile.mkdtemp()) / "bench.sqlite")
    match = DitionMatch() if game == "dition" else DominationMatch(players=("G", "R"))
    mid = log.new_match(game, match.players)
    moves: list[dict] = []
    referee = Referee(match, log, mid, listener=moves.append, intrinsics=table.intrinsics)
    latencies: list[float] = []
    per_frame_ms: list[float] = []
    hand_left_at: float | None = None
    with table:
        for frame in iter_frames(table):
            hand = bool(frame.meta["truth"].get("hand"))
            t_frame = frame.index / fps
            if hand:
                hand_left_at = None
            elif hand_left_at is None:
                hand_left_at = t_frame
            n_before = len(moves)
            t0 = time.perf_counter()
            referee.process(frame.image)
            spent = time.perf_counter() - t0
            per_frame_ms.append(spent * 1e3)
            if any(e["type"] == "move" for e in moves[n_before:]) and hand_left_at is not None:
                latencies.append(t_frame - hand_left_at + spent)
    return latencies, per_frame_ms


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--game", choices=("dition", "domination"), default="dition")
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--fps", type=float, default=5.0)
    parser.add_argument("--size", default="1640x1232")
    args = parser.parse_args()
    size = tuple(int(v) for v in args.size.split("x"))
    latencies: list[float] = []
    frames: list[float] = []
    for seed in range(1, args.seeds + 1):
        lat, per = measure(args.game, seed, args.fps, size)  # type: ignore[arg-type]
        latencies += lat
        frames += per
    if not latencies:
        print("no move was judged", file=sys.stderr)
        return 1
    lat_sorted = sorted(latencies)
    print(f"{args.game}: {len(latencies)} moves at {args.fps:g} fps, {size[0]}x{size[1]}")
    print(f"  hand off -> verdict: median {statistics.median(latencies):.2f} s, "
          f"max {lat_sorted[-1]:.2f} s (target < 1 s)")
    print(f"  referee per frame: median {statistics.median(frames):.1f} ms, "
          f"p95 {sorted(frames)[int(0.95 * (len(frames) - 1))]:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
