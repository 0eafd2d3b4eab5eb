"""`referee judge`: read JSON Lines on stdin, write one JSON answer per line on stdout, in order.

Request: `{"game": "dition", "discs": [{"x": 3.2, "y": 4.0, "colour": "black"}, ...],
"to_move": "black", "place": {"x": 5.0, "y": 5.5}}` (board units) or a Domination request (see
`referee.judging.domination`). A malformed line gets `{"error": "..."}`; judging goes on. Exit 0.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TextIO


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = (
        "Each answer is written and flushed as soon as its line is judged, so the command can "
        "be driven line by line through a pipe."
    )


def judge_stream(source: TextIO, sink: TextIO) -> int:
    """Judge every line of `source`; returns how many lines were judged."""
    from referee.judging import judge_line

    count = 0
    for number, line in enumerate(source, 1):
        answer = judge_line(line)
        if "error" in answer:
            answer = {**answer, "line": number}
        try:
            text = json.dumps(answer, allow_nan=False)
        except (TypeError, ValueError) as exc:
            text = json.dumps({"error": f"internal error: answer not JSON-able: {exc}"})
        sink.write(text + "\n")
        sink.flush()
        count += 1
    return count


def run(args: argparse.Namespace) -> int:
    judge_stream(sys.stdin, sys.stdout)
    return 0
