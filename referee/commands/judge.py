"""`referee judge`: read JSON Lines on stdin, write one JSON answer per line on stdout, in order.

Request: `{"game": "dition", "discs": [{"x": 3.2, "y": 4.0, "colour": "black"}, ...],
"to_move": "black", "place": {"x": 5.0, "y": 5.5}}` (board units) or a Domination request (see
`referee.judging.domination`). Every line gets an answer: a malformed one (blank, invalid UTF-8,
not JSON, over the limits of `referee.jsonlines`, an impossible position) gets
`{"error": "...", "line": n}`; judging goes on. Exit 0 (141 when the reader of stdout left).
"""

from __future__ import annotations

import argparse
import sys
from typing import IO, Any, TextIO


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = (
        "Each answer is written and flushed as soon as its line is judged, so the command can "
        "be driven line by line through a pipe."
    )


def judge_stream(source: IO[Any], sink: TextIO) -> int:
    """Judge every line of `source` (read as bytes when it has a `.buffer`); returns how many
    lines were judged."""
    from referee.jsonlines import dumps_answer, read_lines
    from referee.judging import judge_line

    count = 0
    for number, line in enumerate(read_lines(source), 1):
        answer = judge_line(line)
        if "error" in answer:
            answer = {**answer, "line": number}
        sink.write(dumps_answer(answer) + "\n")
        sink.flush()
        count += 1
    return count


def run(args: argparse.Namespace) -> int:
    judge_stream(sys.stdin, sys.stdout)
    return 0
