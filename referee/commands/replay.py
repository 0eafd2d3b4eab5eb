"""`referee replay SOURCE --game dition|domination`: referee a recorded match offline.

Prints one JSON object per event, in order (see the README for every event type). A folder of
images is taken as a sequence of still photographs (each one is read when no hand is over the
board); a video or a live source must also be still for a moment before a reading counts.
Nobody can answer questions during a replay: a borderline distance is decided by the measurement
(the question and the automatic answer are both printed) and an ambiguous Domination move stays
open until a later move settles it, or the most likely one is taken at the end.
"""

from __future__ import annotations

import argparse
import json

from referee.commands._common import (
    add_board_options,
    corners_or_exit,
    disc_thickness,
    load_calibration,
)
from referee.games import registry


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("source", help="folder of frames (name order), video file or source spec")
    parser.add_argument("--game", choices=registry.names(), required=True)
    add_board_options(parser)
    parser.add_argument("--players", metavar="G,R", help="Domination colours in turn order")
    parser.add_argument("--variant", default="standard",
                        help="Domination: standard, fast, up_to_k, anti_symmetry, individual "
                        "(4 players without partners); combine with +")
    parser.add_argument("--db", metavar="PATH", help="also keep the match in this log")
    parser.add_argument("--agree-frames", type=int, default=None,
                        help="identical settled readings needed before acting (default 1)")


def run(args: argparse.Namespace) -> int:
    from hardware.errors import CorruptFrameError, EndOfStream, HardwareError
    from referee.log import MatchLog
    from referee.loop import LoopSettings, Referee
    from referee.sources import is_still_folder, open_any

    def out(event: dict) -> None:
        print(json.dumps({k: v for k, v in event.items() if k != "highlight"}), flush=True)

    corners = corners_or_exit(args.corners)
    calibration = load_calibration(args.calibration)
    spec = registry.get_game(args.game)
    players = spec.default_players
    if spec.player_counts is not None:
        lo, hi = spec.player_counts
        players = tuple(p.strip() for p in (args.players or ",".join(players)).split(",") if p.strip())
        if not lo <= len(players) <= hi:
            print(json.dumps({"type": "error", "error": f"--players needs {lo} to {hi} colours"}))
            return 2
    variant = args.variant if spec.has_variants else "standard"
    try:
        match = spec.offline_match(players, variant)
    except ValueError as exc:
        print(json.dumps({"type": "error", "error": str(exc)}))
        return 2
    log = MatchLog(args.db or ":memory:")
    match_id = log.new_match(args.game, players, source=args.source, variant=variant)
    still = is_still_folder(args.source)
    settings = LoopSettings(
        agree_frames=args.agree_frames or 1, use_motion=not still
    )
    referee = Referee(
        match, log, match_id, corners_px=corners,
        intrinsics=getattr(calibration, "intrinsics", None),
        colours=getattr(calibration, "colours", None),
        settings=settings, listener=out, disc_thickness=disc_thickness(args, calibration),
    )
    try:
        source = open_any(args.source)
    except (HardwareError, ValueError, OSError) as exc:
        out({"type": "error", "error": f"cannot open {args.source}: {exc}"})
        return 1
    with source:
        while match.phase != "over":
            try:
                frame = source.read()
            except CorruptFrameError as exc:
                out({"type": "warning", "code": "corrupt_frame", "text": str(exc)})
                continue
            except EndOfStream:
                break
            except HardwareError as exc:
                out({"type": "warning", "code": "source", "text": str(exc)})
                break
            referee.process(frame.image)
    if match.phase != "over":
        referee.emit(match.finish())
    if match.phase != "over":
        out({"type": "end", "winner": None, "reason": "recording_ended",
             "text": "The recording ended before the match did"})
    return 0
