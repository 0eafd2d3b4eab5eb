"""`referee print`: the printable kit at true scale (PDF tiled over A4/Letter, SVG, PNG).

    referee print charuco [--paper a4|letter] [--out DIR]
    referee print board --game dition --disc-mm D [--paper a4|letter] [--no-tint] [--out DIR]
    referee print board --game domination --cell-mm C [--paper a4|letter] [--no-tint] [--out DIR]
    referee print card --disc-mm D [--out DIR]

Prints one JSON object on stdout: the files written, the page count and the paper. Exit code 0,
or 2 with a message on stderr when the item cannot be laid out.
"""

from __future__ import annotations

import argparse
import json
import sys

from referee.games import registry


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="item", required=True, metavar="ITEM")
    charuco = sub.add_parser("charuco", help="the ChArUco camera calibration target (one page)")
    charuco.add_argument("--paper", choices=("a4", "letter"), default="a4")
    charuco.add_argument("--out", default=".", metavar="DIR", help="output folder (default .)")

    board = sub.add_parser("board", help="a board at true scale with its corner markers")
    board.add_argument("--game", choices=registry.names(), required=True)
    board.add_argument("--disc-mm", type=float, help="Dition: disc diameter in mm")
    board.add_argument("--cell-mm", type=float, help="Domination: cell side in mm")
    board.add_argument("--paper", choices=("a4", "letter"), default="a4")
    board.add_argument("--no-tint", action="store_true",
                       help="print ink only (white paper) instead of the kit's plate colours")
    board.add_argument("--out", default=".", metavar="DIR", help="output folder (default .)")

    card = sub.add_parser("card", help="the Dition measuring card (one A4 page)")
    card.add_argument("--disc-mm", type=float, required=True, help="disc diameter in mm")
    card.add_argument("--out", default=".", metavar="DIR", help="output folder (default .)")


def run(args: argparse.Namespace) -> int:
    from calibration.errors import CalibrationError
    from calibration.kit import BoardPrint
    from calibration.printing import print_card, print_charuco
    from referee.errors import CommandError

    try:
        if args.item == "charuco":
            written = print_charuco(args.out, paper=args.paper)
        elif args.item == "card":
            written = print_card(args.out, args.disc_mm)
        else:
            options = BoardPrint(tint=not args.no_tint)
            written = registry.get_game(args.game).print_board(
                args.out, {"disc-mm": args.disc_mm, "cell-mm": args.cell_mm}, args.paper, options)
    except (CalibrationError, CommandError) as exc:
        return _fail(str(exc))
    w, h = written.plan.page_size_mm
    print(json.dumps({
        "item": args.item,
        "title": written.drawing.title,
        "files": [str(p) for p in written.paths()],
        "pages": written.plan.pages,
        "page_mm": [round(w, 2), round(h, 2)],
        "tiles": [t.label for t in written.plan.tiles],
        "size_mm": [round(v, 2) for v in written.drawing.size_mm],
    }))
    return 0


def _fail(message: str) -> int:
    print(f"referee print: {message}", file=sys.stderr)
    return 2
