"""`referee demo`: the simulated table plays a match, the referee judges it, the page shows it."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from referee.commands.serve import add_server_options, check_pin, run_service
from referee.games import registry


def demo_db_path() -> Path:
    """The demo's log when no --db is given: in the temporary directory."""
    return Path(tempfile.gettempdir()) / "tabletop-referee-demo.sqlite"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--game", choices=registry.names(), default=registry.default_name())
    parser.add_argument("--seed", type=int, default=7, help="which generated match to play")
    parser.add_argument("--speed", type=float, default=1.0,
                        help="frames per second = 5 x speed (the referee keeps up to ~10)")
    parser.add_argument("--quiet", action="store_true", help="do not print the verdicts")
    add_server_options(parser, db_default=str(demo_db_path()))


def run(args: argparse.Namespace) -> int:
    from referee.service import create_demo_service

    check_pin(args.host, args.pin)
    db = Path(args.db) if args.db else demo_db_path()
    service = create_demo_service(db, game=args.game, seed=args.seed, speed=args.speed)
    if not args.quiet:
        sub = service.subscribe()

        def show() -> None:
            for event in sub:
                if event.get("type") in ("move", "end", "warning", "question", "instruction",
                                          "board", "start"):
                    text = event.get("text") or json.dumps(event)
                    print(f"[{event.get('type')}] {text}", flush=True)

        import threading

        threading.Thread(target=show, name="demo-printer", daemon=True).start()
    print(f"referee demo: match log {db}", file=sys.stderr, flush=True)
    return run_service(service, args)
