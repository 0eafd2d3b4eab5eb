"""`referee club init URL` (create or migrate the club database) and `referee club serve URL`
(the club page: every table live, the archive, the standings)."""

from __future__ import annotations

import argparse
import sys

from referee.club.errors import ClubError
from referee.club.url import redact

URL_HELP = "postgresql://USER:PASSWORD@HOST/DB[?sslmode=...]"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    init = sub.add_parser("init", help="create the club database's schema or migrate it")
    init.add_argument("url", metavar="URL", help=URL_HELP)
    serve = sub.add_parser("serve", help="serve the club page")
    serve.add_argument("url", metavar="URL", help=URL_HELP)
    serve.add_argument("--host", default="127.0.0.1",
                       help="address to listen on (0.0.0.0 for the room; then a PIN protects "
                       "the organiser's controls)")
    serve.add_argument("--port", type=int, default=8100)
    serve.add_argument("--pin", default=None, help="the organiser's PIN")


def run(args: argparse.Namespace) -> int:
    try:
        if args.action == "init":
            return _init(args.url)
        return _serve(args)
    except ClubError as exc:
        print(f"referee club: {exc}", file=sys.stderr)
        return 1


def _init(url: str) -> int:
    from referee.club import schema
    from referee.club.url import connect

    with connect(url, autocommit=True) as conn:
        before = schema.version(conn)
        applied = schema.migrate(conn)
        after = schema.version(conn)
    if applied:
        print(f"club database {redact(url)}: schema {before} -> {after} "
              f"(applied {', '.join(map(str, applied))})")
    else:
        print(f"club database {redact(url)}: schema {after}, up to date")
    return 0


def _serve(args: argparse.Namespace) -> int:
    from referee.club.store import ClubStore
    from referee.commands.serve import check_pin
    from web.club.server import serve_club
    from web.errors import ServerStartError

    check_pin(args.host, args.pin)
    store = ClubStore(args.url)
    print(f"club page for {store.shown_url}", file=sys.stderr, flush=True)
    try:
        serve_club(store, host=args.host, port=args.port, pin=args.pin)
    except ServerStartError as exc:
        print(f"referee club: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        pass
    finally:
        store.close()
    return 0
