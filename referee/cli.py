"""The `referee` command line.

Each sub-command lives in its own module `referee.commands.<name>` with two functions,
`add_arguments(parser)` and `run(args) -> int` (the exit code). Only the module of the command
being run is imported, so `referee judge` does not pay for OpenCV or Flask.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

#: name -> (module, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "demo": ("referee.commands.demo", "referee a scripted match on the simulated table and serve the page"),
    "serve": ("referee.commands.serve", "watch a real board through a camera and serve the page"),
    "judge": ("referee.commands.judge", "judge positions and moves given as JSON Lines on stdin"),
    "infer": ("referee.commands.infer", "list the Domination moves that explain observed stack tops"),
    "detect": ("referee.commands.detect", "read the pieces on images or any frame source, print JSON"),
    "replay": ("referee.commands.replay", "referee a recorded match offline, print one JSON event per line"),
    "render": ("referee.commands.render", "render simulated camera frames with ground truth"),
    "calibrate": ("referee.commands.calibrate", "calibrate the camera, the board or the piece colours"),
    "print": ("referee.commands.print_kit", "print a board, a calibration target or a measuring card"),
    "matches": ("referee.commands.matches", "list the matches in the log"),
    "export": ("referee.commands.export", "export one match as json, csv or txt"),
    "sources": ("referee.commands.sources", "list the frame sources available on this machine"),
    "capture": ("referee.commands.capture", "take calibration photos from any source, target shown live"),
    "install-service": ("referee.commands.install_service", "start the referee at boot (systemd), as you"),
    "club": ("referee.commands.club", "set up the club database (init) or serve the club page"),
}


def _top_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="referee",
        description="Tabletop referee: a camera that referees Dition and Domination.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="commands:\n" + "\n".join(f"  {n:<10} {h}" for n, (_, h) in COMMANDS.items()),
    )
    parser.add_argument("command", choices=sorted(COMMANDS), metavar="COMMAND")
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in COMMANDS:
        parser = _top_parser()
        if not argv or argv[0] in ("-h", "--help"):
            parser.print_help()
            return 0 if argv else 2
        parser.parse_args(argv[:1])  # exits with a clear "invalid choice" message
        return 2
    name, rest = argv[0], argv[1:]
    module_name, help_text = COMMANDS[name]
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name == module_name:
            print(f"referee {name}: not available yet in this version", file=sys.stderr)
            return 2
        raise
    parser = argparse.ArgumentParser(prog=f"referee {name}", description=help_text)
    module.add_arguments(parser)
    args = parser.parse_args(rest)
    try:
        return int(module.run(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader of stdout left (`referee judge < big.jsonl | head`): stop quietly, with
        # the status a shell gives a process ended by SIGPIPE, and no error at exit's flush.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
