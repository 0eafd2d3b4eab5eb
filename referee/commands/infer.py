"""`referee infer`: which Domination moves explain the observed stack tops?

stdin: JSON Lines, each a judge-style state (`players`, `stacks`, `reserves`, `captured`,
`to_move`, optional `variant`) plus `"observed": {cell: letter or "."}` for all 52 cells and
optional `"heights": {cell: pieces}` and `"height_sigma": {cell: pieces}`.
stdout: one line per input line, `{"candidates": [move, ...]}` best first (moves as
`{"from", "to", "count"}` or `{"place"}`); with `--details` also `"details"`: per candidate its
score, `invisible` flag and `group` (candidates of one group lead to the same state).
Every line gets an answer: a malformed one (blank, invalid UTF-8, not JSON, over the limits of
`referee.jsonlines`, an impossible position) gives `{"error": "...", "line": n}` and the next
line is read. Exit status 0 (141 when the reader of stdout left).
"""

from __future__ import annotations

import argparse
import sys
import traceback
from typing import Any


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--max-mismatches", type=int, default=0, metavar="N",
        help="accept moves whose prediction disagrees with the picture on up to N cells "
             "(default 0: exact tops only)",
    )
    parser.add_argument(
        "--details", action="store_true",
        help="add score, invisible flag and same-state group per candidate",
    )


def infer_line(obj: Any, *, max_mismatches: int = 0, details: bool = False) -> dict[str, Any]:
    """Answer one parsed input line (raises ValueError/KeyError/TypeError on malformed input)."""
    from referee.judging.domination import check_observation, state_from_json
    from rules.domination_infer import InferParams, infer_moves
    from rules.errors import InvalidObservationError

    if not isinstance(obj, dict):
        raise InvalidObservationError(f"expected a JSON object, got {type(obj).__name__}")
    if "observed" not in obj:
        raise InvalidObservationError("missing 'observed' (all 52 cells -> letter or '.')")
    check_observation(obj)
    state = state_from_json(obj)
    params = InferParams(max_mismatches=max_mismatches)
    cands = infer_moves(state, obj["observed"], obj.get("heights"), obj.get("height_sigma"),
                        params)
    out: dict[str, Any] = {"candidates": [c.move.to_json() for c in cands]}
    if details:
        groups: dict[object, int] = {}
        out["details"] = [
            {"move": c.move.to_json(), "score": round(c.score, 4), "invisible": c.invisible,
             "mismatches": c.mismatches,
             "group": groups.setdefault(c.state_after, len(groups))}
            for c in cands
        ]
    return out


def run(args: argparse.Namespace) -> int:
    if args.max_mismatches < 0:
        print("referee infer: --max-mismatches must be >= 0", file=sys.stderr)
        return 2
    from referee.jsonlines import LineError, dumps_answer, parse_line, read_lines

    for number, line in enumerate(read_lines(sys.stdin), 1):
        try:
            out = infer_line(parse_line(line), max_mismatches=args.max_mismatches,
                             details=args.details)
        except LineError as exc:
            out = {"error": str(exc), "line": number}
        except (ValueError, KeyError, TypeError) as exc:
            out = {"error": str(exc), "line": number}
        except Exception as exc:  # noqa: BLE001 - a bug must not stop the stream: report, go on
            traceback.print_exc(file=sys.stderr)
            out = {"error": f"internal error on this line: {type(exc).__name__}: {exc}",
                   "line": number}
        sys.stdout.write(dumps_answer(out) + "\n")
        sys.stdout.flush()
    return 0
