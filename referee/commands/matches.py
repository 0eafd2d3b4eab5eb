"""`referee matches`: list the matches in the log."""

from __future__ import annotations

import argparse
import json

from referee.commands._common import add_db, open_log


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_db(parser)
    parser.add_argument("--json", action="store_true", help="one JSON object per match")


def run(args: argparse.Namespace) -> int:
    log = open_log(args.db, read_only=True)
    matches = log.list_matches()
    if args.json:
        for m in matches:
            print(json.dumps(m.to_json()))
        return 0
    if not matches:
        print("no matches in", log.path)
        return 0
    width = max(len("started"), *(len(m.started_at) for m in matches))
    print(f"{'id':>4}  {'game':<10} {'players':<14} {'started':<{width}} {'events':>6}  result")
    for m in matches:
        result = "in progress" if m.ended_at is None else (
            (m.result or {}).get("text") or (m.result or {}).get("winner") or "draw")
        print(f"{m.id:>4}  {m.game:<10} {','.join(m.players):<14} {m.started_at:<{width}} "
              f"{m.events:>6}  {result}")
    return 0
