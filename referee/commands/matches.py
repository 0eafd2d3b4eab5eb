"""`referee matches`: list the matches in the log."""

from __future__ import annotations

import argparse
import json
from typing import Any

from referee.commands._common import add_club_source, add_db, open_club, open_log


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_db(parser)
    parser.add_argument("--json", action="store_true", help="one JSON object per match")
    add_club_source(parser)


def run(args: argparse.Namespace) -> int:
    if args.club:
        return list_club(args)
    log = open_log(args.db, read_only=True)
    matches = log.list_matches()
    if args.json:
        for m in matches:
            print(json.dumps(m.to_json()))
        return 0
    if not matches:
        print("no matches in", log.path)
        return 0
    print_table(matches)
    return 0


def list_club(args: argparse.Namespace) -> int:
    """The club's matches: each as `--json` prints a table's, with its `table`."""
    with open_club(args.club) as store:
        matches = store.list_matches(limit=10**9)
    if args.json:
        for m in matches:
            print(json.dumps(m.to_json()))
        return 0
    if not matches:
        print("no matches in the club database", store.shown_url)
        return 0
    print_table([m.record for m in matches], tables=[m.table for m in matches])
    return 0


def print_table(matches: list[Any], tables: list[str] | None = None) -> None:
    width = max(len("started"), *(len(m.started_at) for m in matches))
    head = f"{'table':<12} " if tables else ""
    print(f"{head}{'id':>4}  {'game':<10} {'players':<14} {'started':<{width}} {'events':>6}  "
          "result")
    for n, m in enumerate(matches):
        result = "in progress" if m.ended_at is None else (
            (m.result or {}).get("text") or (m.result or {}).get("winner") or "draw")
        table = f"{tables[n]:<12} " if tables else ""
        print(f"{table}{m.id:>4}  {m.game:<10} {','.join(m.players):<14} {m.started_at:<{width}} "
              f"{m.events:>6}  {result}")
