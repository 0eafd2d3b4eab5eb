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
        with open_club(args.club) as store:
            club = store.list_matches(limit=10**9)
        return show(args, club, [m.record for m in club], [m.table for m in club],
                    f"the club database {store.shown_url}")
    log = open_log(args.db, read_only=True)
    matches = log.list_matches()
    return show(args, matches, matches, None, str(log.path))


def show(args: argparse.Namespace, items: list[Any], records: list[Any],
         tables: list[str] | None, where: str) -> int:
    """`--json`: one `to_json()` per line (a club match's adds its `table`); else a table."""
    if args.json:
        for m in items:
            print(json.dumps(m.to_json()))
    elif not records:
        print("no matches in", where)
    else:
        print_table(records, tables)
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
