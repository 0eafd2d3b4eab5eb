"""Rendering speed of the simulated table (issue 3 target: 1640x1232 with 100 discs < 0.5 s).

Prints, for each case, the median wall time over several frames:
- cold: a new camera each frame (maps and the scene re-rendered; textures already built),
- static cached: the same scene and camera (what ScriptedTable pays per still frame),
- with hand: the same scene with a moving hand (what a hand frame costs),
plus one-off costs (texture build) and a scripted match's frame rate.
Run: .venv/bin/python benchmarks/bench_render.py
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np

from hardware.sim import (
    HandPlace,
    HandPose,
    RenderOptions,
    ScriptedTable,
    Still,
    random_camera,
    random_discs,
    random_stacks,
    render_dition,
    render_domination,
)
from hardware.sim import render as _render
from hardware.sim import warp as _warp

SIZE = (1640, 1232)
REPEATS = 7


def _median(fn, repeats: int = REPEATS) -> str:
    """Median wall time and median process CPU time (all threads) of `fn`, formatted."""
    wall, cpu = [], []
    for _ in range(repeats):
        t, c = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    return f"{statistics.median(wall):6.3f} s wall, {statistics.median(cpu):6.3f} s cpu"


def main() -> None:
    rng = np.random.default_rng(2026)
    opts = RenderOptions()
    discs = random_discs(rng, 100)
    stacks = random_stacks(rng, 30, "GRBY")
    print(
        f"render benchmark at {SIZE[0]}x{SIZE[1]}, supersample {opts.supersample}, "
        f"median of {REPEATS}; {os.cpu_count()} cpus, load average "
        f"{os.getloadavg()[0]:.1f} (wall times grow with the load, cpu times less so)"
    )

    cam = random_camera(rng, "dition", SIZE)
    t = time.perf_counter()
    render_dition(discs, cam, rng, options=opts)
    print(f"  first dition frame (builds plate/table textures): {time.perf_counter() - t:6.3f} s")
    cam_d = random_camera(rng, "domination", SIZE)
    t = time.perf_counter()
    render_domination(stacks, cam_d, rng, options=opts)
    print(f"  first domination frame (builds textures):         {time.perf_counter() - t:6.3f} s")

    def cold_dition() -> None:
        c = random_camera(rng, "dition", SIZE)
        _render._STATIC_CACHE.clear()
        _warp._CACHE.clear()
        render_dition(discs, c, rng, options=opts)

    def cold_domination() -> None:
        c = random_camera(rng, "domination", SIZE)
        _render._STATIC_CACHE.clear()
        _warp._CACHE.clear()
        render_domination(stacks, c, rng, options=opts)

    def new_scene_dition() -> None:
        _render._STATIC_CACHE.clear()
        render_dition(discs, cam, rng, options=opts)

    print(f"  dition, 100 discs, new camera each frame:          {_median(cold_dition)}")
    print(f"  dition, 100 discs, same camera, new scene:         {_median(new_scene_dition)}")
    print(
        f"  dition, 100 discs, cached scene (noise/light only): "
        f"{_median(lambda: render_dition(discs, cam, rng, options=opts))}"
    )
    hand = HandPose(10.0, 10.0, 100.0)
    print(
        f"  dition, 100 discs, cached scene + hand:            "
        f"{_median(lambda: render_dition(discs, cam, rng, options=opts, hand=hand))}"
    )
    print(f"  domination, 30 stacks, new camera each frame:      {_median(cold_domination)}")

    before = discs[:60]
    after = discs[:61]
    script = [
        Still(before, 10),
        HandPlace(None, after, (after[-1].x, after[-1].y), 12),
        Still(None, 10),
    ]
    table = ScriptedTable(script, cam, rng, options=opts)
    t = time.perf_counter()
    n = sum(1 for _ in table)
    dt = time.perf_counter() - t
    print(f"  scripted match (32 frames, 1 placement):           {n / dt:6.1f} frames/s")


if __name__ == "__main__":
    main()
