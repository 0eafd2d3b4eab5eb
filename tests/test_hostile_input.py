"""`referee judge`, `infer` and `detect` under hostile or broken input: every line answered,
limits checked before any work, impossible positions refused with the rule they break."""

from __future__ import annotations

import io
import json
import os
import shutil
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import cv2
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hardware.errors import SourceLostError
from hardware.sources.folder import MAX_IMAGE_PIXELS, FolderSource, image_size
from referee.commands.judge import judge_stream
from referee.jsonlines import MAX_DEPTH, MAX_INT_DIGITS
from rules.domination import MAX_HEIGHT, PIECES_PER_PLAYER, Move, State, apply_move

ROOT = Path(__file__).resolve().parent.parent
PLACE = {"game": "dition", "discs": [], "to_move": "black", "place": {"x": 5.0, "y": 5.0}}


def _judge_bytes(data: bytes) -> list[dict]:
    sink = io.StringIO()
    source = io.BufferedReader(io.BytesIO(data))
    judge_stream(source, sink)
    return [json.loads(line) for line in sink.getvalue().splitlines()]


def _line(obj: object) -> bytes:
    return json.dumps(obj).encode() + b"\n"


def test_every_line_is_answered_in_order_whatever_it_holds() -> None:
    lines = [
        _line(PLACE),
        b"\n",  # blank
        b"   \t\n",
        b'{"game": "dition", "x": "\xff\xfe"}\n',  # invalid UTF-8 (Pi OS's locale is UTF-8)
        b'{"game": "dition", "move_number": ' + b"7" * 4400 + b"}\n",  # Python's int limit
        b"[" * 3000 + b"]" * 3000 + b"\n",  # deeper than the parser's recursion
        b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1) + b"\n",
        b'{"game": "domination", "stacks": {"d4": "G"}, "heights": [1, 2], "move": 3}\n',
        b"\x00\x01\x02\n",
        _line(PLACE),
    ]
    answers = _judge_bytes(b"".join(lines))
    assert len(answers) == len(lines)
    assert answers[0]["legal"] is True and answers[-1] == answers[0]
    for number, answer in enumerate(answers[1:-1], 2):
        assert set(answer) == {"error", "line"} and answer["line"] == number, answer
    assert "empty line" in answers[1]["error"] and "empty line" in answers[2]["error"]
    assert "not valid UTF-8: byte 0xff" in answers[3]["error"]
    assert f"4400 digits: no board needs more than {MAX_INT_DIGITS}" in answers[4]["error"]
    assert "nested more than" in answers[5]["error"] and "nested more than" in answers[6]["error"]


def test_an_over_long_line_is_answered_without_reading_it_whole() -> None:
    from referee.jsonlines import MAX_LINE_BYTES

    answers = _judge_bytes(b'{"x": "' + b"a" * (3 * MAX_LINE_BYTES) + b'"}\n' + _line(PLACE))
    assert len(answers) == 2 and "longer than" in answers[0]["error"]
    assert answers[1]["legal"] is True


@pytest.mark.parametrize(("request_", "needle"), [
    ({**PLACE, "discs": [{"x": 5, "y": 5, "colour": "black"}] * 10_000},
     "'discs' has 10000 discs; a Dition board holds at most about 460"),
    ({**PLACE, "place": {"x": 1e200, "y": 3}}, "'place.x' is 1e+200: board coordinates run"),
    ({**PLACE, "discs": [{"x": -1e30, "y": 5, "colour": "white"}]}, "'discs[0].x' is -1e+30"),
    ({**PLACE, "move_number": 10**19}, "'move_number' must be an integer from 1 to 1000000"),
    ({"game": "domination", "stacks": {"d4": "G" * 10}, "move": {"place": "e5"}},
     f"stacks: d4 holds 10 pieces; a stack has at most {MAX_HEIGHT}"),
    ({"game": "domination", "stacks": {"d4": "G"}, "reserves": {"G": 10**19},
      "move": {"place": "e5"}}, f"a 2-player set has {PIECES_PER_PLAYER[2]} pieces per player"),
    ({"game": "domination", "stacks": {"d4": "G"}, "captured": {"R": {"G": 99}},
      "move": {"place": "e5"}}, "'captured.R.G' is 99"),
    ({"game": "domination", "players": ["G"] * 5, "stacks": {}, "move": {"place": "e5"}},
     "'players' must be 2 to 4 distinct letters"),
    ({"game": "domination", "stacks": {"d4": "G"}, "move_number": 10**12,
      "move": {"place": "e5"}}, "no match lasts a million moves"),
])
def test_impossible_positions_are_refused_with_the_rule_they_break(request_: dict,
                                                                   needle: str) -> None:
    (answer,) = _judge_bytes(_line(request_))
    assert needle in answer["error"], answer


def _infer(lines: list[bytes], *args: str) -> list[dict]:
    done = subprocess.run([sys.executable, "-m", "referee", "infer", *args],
                          input=b"".join(lines), capture_output=True, cwd=ROOT, timeout=60,
                          check=False, env={**os.environ, "LC_ALL": "C.UTF-8"})
    assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr
    return [json.loads(line) for line in done.stdout.decode().splitlines()]


def test_infer_answers_every_line() -> None:
    start = State.standard_start()
    after, _ = apply_move(start, Move.step("d6", "d5", 1))
    good = {"stacks": dict(start.stacks), "observed": after.tops()}
    answers = _infer([
        _line(good), b"\n", b'{"observed": "\xc3\x28"}\n',
        _line({**good, "heights": [1, 2]}),
        _line({**good, "heights": {"d5": 1e300}}),
        _line({**good, "height_sigma": {"zz": 1}}),
        _line({**good, "observed": {f"x{i}": "." for i in range(100)}}),
        _line({**good, "stacks": {"d4": "GRGRGRG"}}),
        b'{"observed": ' + b"9" * 5000 + b"}\n",
        _line(good),
    ])
    assert len(answers) == 10
    assert answers[0] == answers[-1] == {"candidates": [{"from": "d6", "to": "d5", "count": 1}]}
    for number, answer in enumerate(answers[1:-1], 2):
        assert set(answer) == {"error", "line"} and answer["line"] == number, answer
    assert "'heights' must map cell -> pieces, got list" in answers[3]["error"]
    assert "'heights.d5' must be a number of pieces" in answers[4]["error"]
    assert "'height_sigma' names 'zz'" in answers[5]["error"]
    assert "'observed' names 100 cells" in answers[6]["error"]
    assert "holds 7 pieces" in answers[7]["error"]


def test_a_reader_that_leaves_ends_the_command_quietly() -> None:
    import threading

    lines = _line(PLACE) * 20000

    def feed(stdin) -> None:
        try:
            stdin.write(lines)
            stdin.close()
        except (BrokenPipeError, OSError):
            pass

    with subprocess.Popen([sys.executable, "-m", "referee", "judge"], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT) as proc:
        assert proc.stdout is not None and proc.stdin is not None
        threading.Thread(target=feed, args=(proc.stdin,), daemon=True).start()
        assert json.loads(proc.stdout.readline())["legal"] is True
        proc.stdout.close()  # like `| head -1`
        assert proc.wait(60) == 141
        stderr = proc.stderr.read() if proc.stderr else b""
    assert stderr == b""


# -------------------------------------------------------------------------------- detect
def _png_header_claiming(width: int, height: int) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I",
                                                                       zlib.crc32(kind + data))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2,
                                                               0, 0, 0)) + chunk(b"IEND", b""))


@pytest.mark.parametrize("ext", [".jpg", ".png", ".bmp", ".tiff", ".webp", ".ppm"])
def test_image_sizes_come_from_the_header(ext: str) -> None:
    image = np.zeros((123, 457, 3), np.uint8)
    ok, buf = cv2.imencode(ext, image)
    assert ok and image_size(buf.tobytes()) == (457, 123)
    assert image_size(_png_header_claiming(60000, 60000)) == (60000, 60000)


def test_detect_refuses_huge_and_truncated_images_and_reads_the_rest(tmp_path: Path,
                                                                     rng) -> None:
    huge = tmp_path / "huge.png"
    huge.write_bytes(_png_header_claiming(60000, 60000))  # 45 bytes, 10 GB decoded
    picture = rng.integers(0, 255, (240, 320, 3), dtype=np.uint8)
    _, buf = cv2.imencode(".jpg", picture)
    truncated = tmp_path / "cut.jpg"
    truncated.write_bytes(buf.tobytes()[: len(buf) // 2])
    whole = tmp_path / "whole.jpg"
    whole.write_bytes(buf.tobytes())
    done = subprocess.run(
        [sys.executable, "-m", "referee", "detect", str(huge), str(truncated), str(whole),
         "--corners", "10,10,300,10,300,220,10,220"],
        capture_output=True, text=True, cwd=ROOT, timeout=120, check=False)
    results = [json.loads(line) for line in done.stdout.splitlines()]
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert [r["image"] for r in results] == [str(huge), str(truncated), str(whole)]
    assert "60000x60000 pixels is larger than any camera picture" in results[0]["error"]
    assert f"at most {MAX_IMAGE_PIXELS // 1_000_000} MP" in results[0]["error"]
    assert "truncated JPEG" in results[1]["error"]
    assert "error" not in results[2] and "discs" in results[2]


def test_a_folder_deleted_mid_run_is_a_lost_source(tmp_path: Path) -> None:
    folder = tmp_path / "frames"
    folder.mkdir()
    for i in range(3):
        cv2.imwrite(str(folder / f"{i}.png"), np.zeros((20, 30, 3), np.uint8))
    source = FolderSource(folder)
    source.read()
    shutil.rmtree(folder)
    with pytest.raises(SourceLostError, match="is gone"):
        source.read()


# ----------------------------------------------------------------------------- fuzzing
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True)
    | st.text(max_size=12),
    lambda children: st.lists(children, max_size=5)
    | st.dictionaries(st.text(max_size=8), children, max_size=5),
    max_leaves=30,
)
cells = st.sampled_from(["a1", "c1", "d4", "d5", "d6", "e5", "h8", "zz", ""])
domination_like = st.fixed_dictionaries(
    {"game": st.just("domination")},
    optional={
        "players": st.one_of(st.just(["G", "R"]), st.lists(st.text(max_size=2), max_size=5),
                             json_values),
        "stacks": st.one_of(st.dictionaries(cells, st.text("GRBY.", max_size=8), max_size=6),
                            json_values),
        "reserves": st.one_of(st.dictionaries(st.sampled_from("GRX"), st.integers(), max_size=3),
                              json_values),
        "captured": json_values, "to_move": json_values, "variant": json_values,
        "totals": json_values, "move_number": json_values,
        "move": st.one_of(st.fixed_dictionaries({"place": cells}),
                          st.fixed_dictionaries({"from": cells, "to": cells,
                                                 "count": st.integers(-2, 8)}), json_values),
        "observed": st.one_of(st.dictionaries(cells, st.text("GR.", max_size=2)), json_values),
        "heights": json_values, "height_sigma": json_values,
    })
dition_like = st.fixed_dictionaries(
    {"game": st.just("dition")},
    optional={
        "discs": st.one_of(st.lists(st.fixed_dictionaries(
            {"x": st.floats(-30, 50) | json_values, "y": st.floats(-30, 50),
             "colour": st.sampled_from(["black", "white", "red"])}), max_size=20), json_values),
        "to_move": st.sampled_from(["black", "white", "green"]) | json_values,
        "place": st.fixed_dictionaries({"x": st.floats() | json_values, "y": st.floats()})
        | json_values,
        "move_number": json_values, "winner": json_values, "tolerance": json_values,
    })
any_request = st.one_of(dition_like, domination_like, json_values)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(requests=st.lists(any_request, min_size=1, max_size=4),
       junk=st.lists(st.binary(max_size=40), max_size=3))
def test_judge_never_crashes_and_answers_each_line(requests: list, junk: list[bytes]) -> None:
    lines = [json.dumps(r).encode() for r in requests] + [j.replace(b"\n", b" ") for j in junk]
    answers = _judge_bytes(b"\n".join(lines) + b"\n")
    assert len(answers) == len(lines)
    for answer in answers:
        assert "internal error" not in answer.get("error", ""), answer


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(request_=st.one_of(domination_like, json_values))
def test_infer_never_crashes(request_: object) -> None:
    from referee.commands.infer import infer_line

    try:
        out = infer_line(request_)
    except (ValueError, KeyError, TypeError) as exc:  # answered as {"error": ...}
        assert str(exc)
    else:
        assert isinstance(out["candidates"], list)
