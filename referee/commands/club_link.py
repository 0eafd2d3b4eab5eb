"""`--club URL --table NAME` on `referee serve` and `referee demo`: report to the club database."""

from __future__ import annotations

import argparse
import os
from typing import Any

from referee.club.errors import ClubError
from referee.club.url import ENV_URL, redact, url_from

ENV_TABLE = "REFEREE_TABLE"


def add_club_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--club", metavar="postgresql://...", default=None,
                        help=f"also send every event to this club database (or ${ENV_URL}); "
                        "sslmode and other libpq options go in the URL's query")
    parser.add_argument("--table", metavar="NAME", default=None,
                        help=f"this table's name in the club (or ${ENV_TABLE}); needs --club")


def start_club(service: Any, args: argparse.Namespace) -> Any:
    """The started club sender for `args`, or None without a club URL; exits on bad options."""
    try:
        url = url_from(getattr(args, "club", None))
    except ClubError as exc:
        raise SystemExit(f"referee: --club: {exc}") from None
    if url is None:
        return None
    table = getattr(args, "table", None) or os.environ.get(ENV_TABLE)
    if not table or not table.strip():
        raise SystemExit(f"referee: --club {redact(url)} needs --table NAME (the name the club "
                         "page shows for this table)")
    from referee.club.link import attach

    return attach(service, url, table)
