"""The Pi deployment: the systemd unit (`referee install-service`), `make install` on a Pi."""

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


# --- referee install-service ----------------------------------------------------------------------
def test_the_shipped_unit_is_what_install_service_writes() -> None:
    from referee.commands.install_service import ServiceUser, env_text, unit_text

    user = ServiceUser("referee", "referee", Path("/home/referee"))
    checkout = Path("/home/referee/tabletop-referee")
    assert UNIT.read_text() == unit_text(user, checkout / ".venv/bin/referee", checkout,
                                         groups=["video"])
    assert ENV.read_text() == env_text("205817", user)
    assert "/home/pi" not in UNIT.read_text() and "User=pi\n" not in UNIT.read_text()


def _some_user() -> str:
    import pwd

    users = [p for p in pwd.getpwall() if p.pw_uid != 0]
    if not users:
        pytest.skip("no non-root user on this machine")
    return users[0].pw_name


def test_install_service_writes_the_unit_for_its_user_and_uninstalls(tmp_path: Path) -> None:
    import grp
    import pwd
    import sys

    from referee.cli import main
    from web.security import pin_weakness

    name = _some_user()
    entry = pwd.getpwnam(name)
    unit_dir, env_file = tmp_path / "systemd", tmp_path / "default" / "tabletop-referee"
    common = ["--unit-dir", str(unit_dir), "--env-file", str(env_file), "--no-systemctl"]
    assert main(["install-service", "--user", name, *common]) == 0
    unit = (unit_dir / "tabletop-referee.service").read_text()
    service = {k: v for k, _, v in (line.partition("=") for line in unit.splitlines()) if v}
    assert service["User"] == name
    assert service["Group"] == grp.getgrgid(entry.pw_gid).gr_name
    exe = Path(sys.prefix).resolve() / "bin" / "referee"
    assert service["ExecStart"] == f"{exe} serve $REFEREE_ARGS"
    assert service["WorkingDirectory"] == str(Path(sys.prefix).resolve().parent)
    has_video = any(g.gr_name == "video" for g in grp.getgrall())
    assert (service.get("SupplementaryGroups") == "video") == has_video
    env = env_file.read_text()
    pin = _env_args(env)[_env_args(env).index("--pin") + 1]
    assert pin_weakness(pin) is None, pin
    # a second install keeps the edited env file
    env_file.write_text(env.replace(pin, "918273"))
    assert main(["install-service", "--user", name, *common]) == 0
    assert "918273" in env_file.read_text()
    assert main(["install-service", "--uninstall", *common]) == 0
    assert not (unit_dir / "tabletop-referee.service").exists() and env_file.exists()


def test_install_service_refuses_an_unknown_user(tmp_path: Path) -> None:
    from referee.cli import main

    with pytest.raises(SystemExit, match="no user 'no-such-user-x'"):
        main(["install-service", "--user", "no-such-user-x", "--print"])


# --- make install on a Raspberry Pi -----------------------------------------------------------------
def _make_dry_run(model_file: Path) -> str:
    import shutil
    import subprocess

    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    result = subprocess.run(["make", "-n", "-B", "install", f"PI_MODEL_FILE={model_file}"],
                            cwd=ROOT, capture_output=True, text=True, check=True)
    return result.stdout


def test_make_install_takes_the_pi_path_on_a_raspberry_pi_only(tmp_path: Path) -> None:
    pi = tmp_path / "model"
    pi.write_bytes(b"Raspberry Pi 5 Model B Rev 1.0\x00")  # as /proc/device-tree/model reads
    pc = tmp_path / "pc-model"
    pc.write_bytes(b"QEMU Standard PC (Q35 + ICH9, 2009)\x00")
    on_pi = _make_dry_run(pi)
    assert "deploy/install-pi.sh" in on_pi and "pi-constraints.txt" in on_pi
    elsewhere = _make_dry_run(pc)
    assert "install-pi" not in elsewhere and "-m venv" in elsewhere
    assert "--system-site-packages" not in elsewhere
    assert "install-pi" not in _make_dry_run(tmp_path / "missing")


FAKE_PYTHON = """#!/bin/sh
# a python3 that logs what install-pi.sh asks of it
echo "$*" >> "$FAKE_LOG"
case "$*" in
  *"-m venv"*) dir=$(eval echo \\${$#}); mkdir -p "$dir/bin"; cp "$0" "$dir/bin/python" ;;
  *"import picamera2"*) exit "${FAKE_PICAMERA2_RC:-0}" ;;
  *"import simplejpeg"*) exit "${FAKE_SIMPLEJPEG_RC:-0}" ;;
  *"import numpy, cv2"*) echo "install-pi: numpy 1.26.4 OpenCV 4.11.0" ;;
esac
exit 0
"""


@pytest.mark.parametrize("simplejpeg_ok", [True, False])
def test_install_pi_makes_a_system_site_venv_and_fixes_simplejpeg(
    tmp_path: Path, simplejpeg_ok: bool
) -> None:
    import os
    import subprocess

    python = tmp_path / "python3"
    python.write_text(FAKE_PYTHON)
    python.chmod(0o755)
    log = tmp_path / "calls.log"
    model = tmp_path / "model"
    model.write_bytes(b"Raspberry Pi 4 Model B Rev 1.5\x00")
    inherited = {k: v for k, v in os.environ.items() if k != "CONSTRAINTS"}  # CI's floor run
    env = inherited | {"PYTHON": str(python), "VENV": str(tmp_path / "venv"),
                        "PI_MODEL_FILE": str(model), "FAKE_LOG": str(log),
                        "FAKE_SIMPLEJPEG_RC": "0" if simplejpeg_ok else "1"}
    result = subprocess.run(["sh", str(ROOT / "deploy" / "install-pi.sh")], cwd=ROOT, env=env,
                            capture_output=True, text=True, check=True)
    calls = log.read_text().splitlines()
    assert "Raspberry Pi 4 Model B Rev 1.5" in result.stdout
    assert any("-m venv --system-site-packages" in c for c in calls)
    install = next(c for c in calls if "pip install" in c and "-e" in c)
    assert "-c deploy/pi-constraints.txt" in install and ".[pi,test]" in install
    reinstalled = any("--force-reinstall --no-deps simplejpeg" in c for c in calls)
    assert reinstalled is not simplejpeg_ok
    assert ("installing pip's into the venv" in result.stdout) is not simplejpeg_ok
    constraints = (ROOT / "deploy" / "pi-constraints.txt").read_text()
    assert "numpy<2" in constraints, "apt's simplejpeg is built for numpy 1"
