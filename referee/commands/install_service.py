"""`referee install-service`: start the referee at boot as a systemd service, as this user.

The unit is written for the user who runs the command (under sudo: the one who called sudo),
with this venv's `referee`, the directory holding the venv as working directory, and the camera
group (`video`) as a supplementary group. The arguments of `referee serve` live in an
environment file (`/etc/default/tabletop-referee`), written once with a random PIN and never
overwritten. `--uninstall` stops, disables and removes the unit (the environment file and the
match log stay). `--print` shows the unit without installing anything.
"""

from __future__ import annotations

import argparse
import grp
import os
import pwd
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

UNIT_NAME = "tabletop-referee.service"
UNIT_DIR = Path("/etc/systemd/system")
ENV_FILE = Path("/etc/default/tabletop-referee")
#: groups that own the camera nodes on Raspberry Pi OS and Debian (/dev/video*, /dev/media*)
CAMERA_GROUPS = ("video",)
DEFAULT_ARGS = "--port 8000 --source picamera2:0 --game dition"


@dataclass(frozen=True)
class ServiceUser:
    name: str
    group: str
    home: Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--uninstall", action="store_true",
                        help="stop, disable and remove the unit (keeps the env file and the log)")
    parser.add_argument("--user", default=None,
                        help="run the referee as this user (default: you; under sudo, the user "
                             "who called sudo)")
    parser.add_argument("--print", dest="print_only", action="store_true",
                        help="print the unit and change nothing")
    parser.add_argument("--unit-dir", type=Path, default=UNIT_DIR, help=argparse.SUPPRESS)
    parser.add_argument("--env-file", type=Path, default=ENV_FILE,
                        help=f"arguments of `referee serve` (default {ENV_FILE})")
    parser.add_argument("--no-systemctl", action="store_true",
                        help="write the files only (no daemon-reload, enable or start)")


def service_user(name: str | None = None) -> ServiceUser:
    """The named user, else the one who called sudo, else the one running this."""
    if name is None:
        name = os.environ.get("SUDO_USER") or pwd.getpwuid(os.getuid()).pw_name
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        raise SystemExit(f"referee install-service: no user {name!r} on this machine") from None
    try:
        group = grp.getgrgid(entry.pw_gid).gr_name
    except KeyError:
        group = str(entry.pw_gid)
    return ServiceUser(name, group, Path(entry.pw_dir))


def camera_groups() -> list[str]:
    """The camera groups this machine has (a unit naming a missing group fails to start)."""
    found = []
    for name in CAMERA_GROUPS:
        try:
            grp.getgrnam(name)
        except KeyError:
            continue
        found.append(name)
    return found


def unit_text(user: ServiceUser, referee_exe: Path, workdir: Path, *,
              groups: list[str], env_file: Path = ENV_FILE) -> str:
    supplementary = f"SupplementaryGroups={' '.join(groups)}\n" if groups else ""
    return f"""\
# systemd unit written by `referee install-service` for user {user.name}; remove it with
# `sudo {referee_exe} install-service --uninstall`. Logs: journalctl -u tabletop-referee -f

[Unit]
Description=Tabletop referee: a camera that referees Dition and Domination
Documentation=file://{workdir}/README.md
Wants=network-online.target
After=network-online.target

[Service]
Type=simple
User={user.name}
Group={user.group}
# the camera nodes (/dev/video*, /dev/media*) belong to group video on Raspberry Pi OS
{supplementary}WorkingDirectory={workdir}
Environment=PYTHONUNBUFFERED=1
Environment=LIBCAMERA_LOG_LEVELS=*:ERROR
# Without {env_file} the page is served to this machine only; that file opens it to the
# phones on the network (--host 0.0.0.0, which needs a --pin).
Environment="REFEREE_ARGS={DEFAULT_ARGS}"
EnvironmentFile=-{env_file}
ExecStart={referee_exe} serve $REFEREE_ARGS
# The camera may appear a little after boot, and a crash must not end the evening: restart.
# The match log resumes from its last committed event.
Restart=always
RestartSec=3
# Give the camera thread time to stop and the match log time to close cleanly.
TimeoutStopSec=20
KillSignal=SIGINT
NoNewPrivileges=true
PrivateTmp=true
ProtectSystem=full

[Install]
WantedBy=multi-user.target
"""


def env_text(pin: str, user: ServiceUser) -> str:
    return f"""\
# {ENV_FILE} - arguments of `referee serve` for the systemd unit (written once by
# `referee install-service`; edit it, then `sudo systemctl restart tabletop-referee`).
# Change the PIN (at least 6 characters, not one repeated nor a run like 123456).
# Sources: picamera2:0, webcam:0, http://PHONE:8080/video, ... (`referee sources`).
# Add --calibration {user.home}/calibration.json once `referee calibrate` has written one.
REFEREE_ARGS="--host 0.0.0.0 --port 8000 --pin {pin} --source picamera2:0 --game dition"
"""


def _this_referee() -> tuple[Path, Path]:
    """(this venv's `referee`, the directory holding the venv: the checkout)."""
    venv = Path(sys.prefix).resolve()
    exe = venv / "bin" / "referee"
    if not exe.exists():
        exe = Path(sys.argv[0]).resolve()
    return exe, venv.parent


def _say(text: str) -> None:
    print(f"referee install-service: {text}", file=sys.stderr)


def _systemctl(*args: str) -> None:
    print(f"referee install-service: systemctl {' '.join(args)}", file=sys.stderr)
    result = subprocess.run(["systemctl", *args], check=False)
    if result.returncode != 0:
        raise SystemExit(f"referee install-service: `systemctl {' '.join(args)}` failed "
                         f"(exit {result.returncode})")


def run(args: argparse.Namespace) -> int:
    from web.security import strong_random_pin

    unit_path = args.unit_dir / UNIT_NAME
    if args.uninstall:
        return _uninstall(unit_path, args)
    user = service_user(args.user)
    if user.name == "root" and args.user is None:
        raise SystemExit("referee install-service: run it as the user who will own the referee "
                         "(sudo keeps that user: `sudo .venv/bin/referee install-service`), or "
                         "name one with --user")
    exe, workdir = _this_referee()
    text = unit_text(user, exe, workdir, groups=camera_groups(), env_file=args.env_file)
    if args.print_only:
        sys.stdout.write(text)
        return 0
    try:
        args.unit_dir.mkdir(parents=True, exist_ok=True)
        unit_path.write_text(text, encoding="utf-8")
        wrote_env = False
        if not args.env_file.exists():
            args.env_file.parent.mkdir(parents=True, exist_ok=True)
            pin = strong_random_pin()
            args.env_file.write_text(env_text(pin, user), encoding="utf-8")
            wrote_env = True
    except PermissionError as exc:
        raise SystemExit(f"referee install-service: cannot write {exc.filename}: run it with "
                         f"sudo (`sudo {exe} install-service`)") from None
    _say(f"wrote {unit_path} (user {user.name}, group {user.group}, {exe})")
    if wrote_env:
        _say(f"wrote {args.env_file}: the page's PIN is {pin} (change it there)")
    else:
        _say(f"kept {args.env_file} as it is")
    if not args.no_systemctl:
        _systemctl("daemon-reload")
        _systemctl("enable", "--now", UNIT_NAME)
        _say("started; open http://<this machine>:8000 (logs: journalctl -u tabletop-referee -f)")
    return 0


def _uninstall(unit_path: Path, args: argparse.Namespace) -> int:
    if not args.no_systemctl and unit_path.exists():
        _systemctl("disable", "--now", UNIT_NAME)
    try:
        unit_path.unlink(missing_ok=True)
    except PermissionError:
        raise SystemExit(f"referee install-service: cannot remove {unit_path}: run it with "
                         "sudo") from None
    if not args.no_systemctl:
        _systemctl("daemon-reload")
    print(f"referee install-service: removed {unit_path}; kept {args.env_file} and the match "
          "log", file=sys.stderr)
    return 0
