"""The shipped systemd unit starts a `referee serve` whose arguments the CLI accepts."""

from __future__ import annotations

import argparse
import configparser
import shlex
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
UNIT = ROOT / "deploy" / "tabletop-referee.service"
ENV = ROOT / "deploy" / "tabletop-referee.env"


def _unit() -> configparser.ConfigParser:
    parser = configparser.ConfigParser(strict=False, interpolation=None,
                                       empty_lines_in_values=False)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read_string(UNIT.read_text(encoding="utf-8"))
    return parser


def _serve_parser() -> argparse.ArgumentParser:
    from referee.commands import serve

    parser = argparse.ArgumentParser(prog="referee serve", exit_on_error=False)
    serve.add_arguments(parser)
    return parser


def _env_args(text: str) -> list[str]:
    for line in text.splitlines():
        if line.startswith("REFEREE_ARGS="):
            return shlex.split(shlex.split(line.partition("=")[2])[0])
    raise AssertionError("no REFEREE_ARGS line")


def test_unit_has_the_sections_systemd_needs() -> None:
    unit = _unit()
    assert unit["Service"]["ExecStart"].split()[1:3] == ["serve", "$REFEREE_ARGS"]
    assert unit["Service"]["ExecStart"].split()[0].endswith("/.venv/bin/referee")
    assert unit["Service"]["Restart"] in ("always", "on-failure")
    assert unit["Install"]["WantedBy"] == "multi-user.target"
    assert "network-online.target" in unit["Unit"]["After"]


@pytest.mark.parametrize("source", ["unit defaults", "example env file"])
def test_the_serve_arguments_parse(source: str) -> None:
    if source == "unit defaults":
        line = next(v for v in UNIT.read_text().splitlines() if "REFEREE_ARGS=" in v)
        args = _env_args(line.removeprefix("Environment=").strip('"').replace(
            "REFEREE_ARGS=", "REFEREE_ARGS='", 1) + "'")
    else:
        args = _env_args(ENV.read_text())
    parsed = _serve_parser().parse_args(args)
    assert parsed.source.startswith("picamera2")
    from referee.commands.serve import check_pin

    check_pin(parsed.host, parsed.pin)  # SystemExit: a reachable page without a PIN
    if source == "example env file":
        assert parsed.host == "0.0.0.0" and parsed.pin
