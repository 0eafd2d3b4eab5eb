"""`referee render`: write simulated camera frames (JPEG) and their ground truth (JSON).

    referee render --game dition|domination --seed N --out DIR [--frames] [--discs N]
                   [--size WxH] [--clean] [--quality Q]

Without --frames: one random position, DIR/000000.jpg and DIR/000000.json. With --frames: a
short scripted sequence (still board, a hand placing a piece, a hand removing pieces, a dropped
frame, a small camera bump), DIR/NNNNNN.jpg + .json per frame. The truth JSON is the renderer's
(see `hardware.sim`) plus "frame" meta (step, label, phase) for sequences. One JSON line per
written frame goes to stdout; DIR/index.jsonl lists them too.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from referee.games import registry


def _size(text: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"--size must look like 1640x1232, got {text!r}") from None
    if w < 64 or h < 48:
        raise argparse.ArgumentTypeError(f"--size must be at least 64x48, got {text!r}")
    return w, h


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--game", choices=registry.names(), required=True)
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--out", type=Path, required=True, help="output directory (created)")
    parser.add_argument(
        "--frames",
        action="store_true",
        help="render a short scripted sequence instead of one still frame",
    )
    parser.add_argument(
        "--discs",
        type=int,
        default=None,
        help="pieces on the board: Dition discs (default 40) or Domination stacks (default 20)",
    )
    parser.add_argument(
        "--size",
        type=_size,
        default=(1640, 1232),
        help="image size WxH (default 1640x1232, the Pi camera v2 binned mode)",
    )
    parser.add_argument(
        "--clean",
        action="store_true",
        help="no noise, blur, glare or JPEG artefacts (geometry checks)",
    )
    parser.add_argument("--quality", type=int, default=95, help="JPEG quality of the files")


def _write(out: Path, index: int, image: Any, truth: dict, quality: int) -> dict[str, Any]:
    import cv2

    jpg = out / f"{index:06d}.jpg"
    js = out / f"{index:06d}.json"
    if not cv2.imwrite(str(jpg), image, [cv2.IMWRITE_JPEG_QUALITY, quality]):
        raise OSError(f"could not write {jpg}")
    js.write_text(json.dumps(truth, indent=1), encoding="utf-8")
    return {"index": index, "image": str(jpg), "truth": str(js)}


def _script(game: str, rng: Any, n: int, camera: Any) -> list:
    """A short, rule-free sequence: place one piece, remove two, glitch, bump."""
    from hardware.sim.script import Bump, Drop, HandPlace, HandRemove, Still

    before, after, final, place_target, remove_targets = registry.get_game(game).place_and_remove(rng, n)
    bumped = camera.with_pose(
        camera.rvec + rng.normal(0, 0.004, 3), camera.tvec + rng.normal(0, 0.08, 3)
    )
    return [
        Still(before, 4, label="start"),
        HandPlace(None, after, place_target, 12, label="place"),
        Still(None, 4, label="placed"),
        HandRemove(None, final, remove_targets, 14, label="remove"),
        Drop(1, label="dropped"),
        Still(None, 3, label="removed"),
        Bump(bumped, label="bump"),
        Still(None, 3, label="bumped"),
    ]


def run(args: argparse.Namespace) -> int:
    import numpy as np

    from hardware.errors import CorruptFrameError
    from hardware.sim import RenderOptions, random_camera
    from hardware.sim.script import ScriptedTable

    if args.discs is not None and args.discs < 0:
        print(f"referee render: --discs must be >= 0, got {args.discs}", file=sys.stderr)
        return 2
    rng = np.random.default_rng(args.seed)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    camera = random_camera(rng, args.game, image_size=args.size)
    options = RenderOptions.clean() if args.clean else RenderOptions.random(rng)
    spec = registry.get_game(args.game)
    n = args.discs if args.discs is not None else spec.render_pieces
    written = []
    try:
        if not args.frames:
            r = spec.render_still(rng, n, camera, options)
            written.append(_write(out, 0, r.image, r.truth, args.quality))
        else:
            table = ScriptedTable(
                _script(args.game, rng, n, camera), camera, rng, game=args.game, options=options
            )
            for index in range(len(table)):
                try:
                    frame = table.read()
                except CorruptFrameError:
                    written.append({"index": index, "dropped": True})
                    continue
                truth = dict(frame.meta["truth"])
                truth["frame"] = {
                    "index": frame.index,
                    "timestamp_s": frame.timestamp_s,
                    "step": frame.meta["step"],
                    "label": frame.meta["label"],
                    "phase": frame.meta["phase"],
                }
                written.append(_write(out, frame.index, frame.image, truth, args.quality))
    except ValueError as exc:
        print(f"referee render: {exc}", file=sys.stderr)
        return 2
    with open(out / "index.jsonl", "w", encoding="utf-8") as fh:
        for row in written:
            line = json.dumps(row)
            fh.write(line + "\n")
            print(line)
    return 0
