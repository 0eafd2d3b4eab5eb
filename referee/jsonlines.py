"""JSON Lines in and out for `referee judge` and `referee infer`: every line gets an answer.

Input is read as bytes and decoded line by line, so one line of invalid UTF-8 is answered with
an error instead of stopping the command (Python's text stdin raises on it under a UTF-8
locale, Raspberry Pi OS's default). Limits are checked before any heavy work: a line's length
(`MAX_LINE_BYTES`), an integer's digits (`MAX_INT_DIGITS`: Python refuses 4,300+ digits with a
ValueError, and no board needs more than a few) and the nesting (`MAX_DEPTH`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import IO, Any

#: A Dition board of 500 discs is about 40 KB of JSON; a Domination request about 3 KB.
MAX_LINE_BYTES = 1 << 20
MAX_INT_DIGITS = 20  # 10^20 pieces or moves: more than any board will ever hold
MAX_DEPTH = 16  # a request nests 4 levels (captured -> player -> count)


class LineError(ValueError):
    """A line that is not one JSON object within the limits; the message says why."""


def nesting_deeper_than(value: Any, limit: int) -> bool:
    """True when `value` nests lists/objects deeper than `limit` (checked without recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > limit:
                return True
            stack.extend((v, depth + 1) for v in (item.values() if isinstance(item, dict)
                                                  else item))
    return False


def _int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        raise LineError(f"an integer of {digits} digits: no board needs more than "
                        f"{MAX_INT_DIGITS}")
    return int(text)


def parse_line(raw: bytes | str) -> Any:
    """One input line -> the decoded JSON value; `LineError` naming what is wrong."""
    if isinstance(raw, bytes):
        if len(raw) > MAX_LINE_BYTES:
            raise LineError(f"line longer than {MAX_LINE_BYTES} bytes")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise LineError(f"not valid UTF-8: byte 0x{raw[exc.start]:02x} at column "
                            f"{exc.start + 1}") from None
    else:
        text = raw
        if len(text) > MAX_LINE_BYTES:
            raise LineError(f"line longer than {MAX_LINE_BYTES} bytes")
    text = text.strip()
    if not text:
        raise LineError("empty line: expected one JSON object")
    try:
        value = json.loads(text, parse_int=_int)
    except json.JSONDecodeError as exc:
        raise LineError(f"not valid JSON: {exc.msg} at column {exc.colno}") from None
    except RecursionError:
        raise LineError(f"not valid JSON: nested more than {MAX_DEPTH} levels") from None
    except ValueError as exc:  # our LineError from the hooks, or Python's own number limits
        raise LineError(str(exc)) from None
    if nesting_deeper_than(value, MAX_DEPTH):
        raise LineError(f"nested more than {MAX_DEPTH} levels: no request needs that")
    return value


def read_lines(source: IO[Any]) -> Iterator[bytes | str]:
    """The lines of `source` (binary when it has a `.buffer`), each cut at `MAX_LINE_BYTES` + 1
    (the rest of an over-long line is skipped, so it costs no memory)."""
    stream = getattr(source, "buffer", source)
    while True:
        line = stream.readline(MAX_LINE_BYTES + 1)
        if not line:
            return
        if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n" if isinstance(line, bytes)
                                                            else "\n"):
            while True:  # skip to the end of this line
                rest = stream.readline(MAX_LINE_BYTES)
                if not rest or rest.endswith(b"\n" if isinstance(rest, bytes) else "\n"):
                    break
        yield line


def dumps_answer(answer: Any) -> str:
    """One answer as a JSON line (an answer that cannot be written says so instead)."""
    try:
        return json.dumps(answer, allow_nan=False)
    except (TypeError, ValueError) as exc:
        return json.dumps({"error": f"internal error: answer not JSON-able: {exc}"})
