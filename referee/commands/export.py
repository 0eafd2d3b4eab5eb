"""`referee export MATCH --format json|csv|txt|apgamerecord`: one match from the log."""

from __future__ import annotations

import argparse
import sys

from referee.apgamerecord import GameRecordError
from referee.commands._common import add_db, open_log
from referee.log import EXPORT_FORMATS, UnknownMatchError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("match", type=int, help="match id (see `referee matches`)")
    parser.add_argument("--format", choices=sorted(EXPORT_FORMATS), default="txt")
    parser.add_argument("--out", metavar="FILE", help="write here instead of stdout")
    add_db(parser)


def run(args: argparse.Namespace) -> int:
    log = open_log(args.db, read_only=True)
    try:
        _, body = log.export(args.match, args.format)
    except (UnknownMatchError, GameRecordError) as exc:
        print(f"referee export: {exc}", file=sys.stderr)
        return 1
    if args.out:
        with open(args.out, "wb") as fh:
            fh.write(body)
    else:
        sys.stdout.write(body.decode("utf-8"))
    return 0
