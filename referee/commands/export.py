"""`referee export MATCH --format json|csv|txt|apgamerecord`: one match from the log."""

from __future__ import annotations

import argparse
import sys

from referee.apgamerecord import GameRecordError
from referee.club.errors import ClubNotFoundError
from referee.commands._common import add_club_source, add_db, open_club, open_log
from referee.log import EXPORT_FORMATS, UnknownMatchError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("match", type=int, help="match id (see `referee matches`)")
    parser.add_argument("--format", choices=sorted(EXPORT_FORMATS), default="txt")
    parser.add_argument("--out", metavar="FILE", help="write here instead of stdout")
    add_db(parser)
    add_club_source(parser)


def run(args: argparse.Namespace) -> int:
    try:
        if args.club:
            with open_club(args.club) as store:
                _, body = store.export(args.match, args.format)
        else:
            _, body = open_log(args.db, read_only=True).export(args.match, args.format)
    except (UnknownMatchError, GameRecordError, ClubNotFoundError) as exc:
        print(f"referee export: {exc}", file=sys.stderr)
        return 1
    if args.out:
        with open(args.out, "wb") as fh:
            fh.write(body)
    else:
        sys.stdout.write(body.decode("utf-8"))
    return 0
