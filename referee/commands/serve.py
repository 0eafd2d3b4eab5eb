"""`referee serve`: watch a real board through a camera and serve the page."""

from __future__ import annotations

import _thread
import argparse
import os
import signal
import sys
import threading
from typing import Any

from referee.commands._common import (
    add_board_options,
    add_db,
    corners_or_exit,
    disc_thickness,
    load_calibration,
    open_log,
    say,
)
from referee.commands.club_link import add_club_options, start_club
from referee.games import registry
from web.server import is_loopback


def add_server_options(parser: argparse.ArgumentParser, *, default_port: int = 8000,
                       db_default: str | None = None) -> None:
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (0.0.0.0 for phones on the network; "
                        "then --pin is required)")
    parser.add_argument("--port", type=int, default=default_port)
    parser.add_argument("--pin", default=None,
                        help="PIN that protects the controls (spectators can still watch); at "
                        "least 6 characters, not one repeated nor a run like 123456")
    parser.add_argument("--allowed-host", action="append", default=[], metavar="NAME",
                        help="also answer requests for this host name (a DNS alias, a proxy); "
                        "loopback names, this machine's name, NAME.local and its addresses "
                        "always work, any other Host gets 421 (repeatable)")
    add_db(parser, default_text=db_default)
    add_club_options(parser)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--source", default="auto",
                        help="frame source spec: picamera2[:N], webcam[:N], a video file, a URL, "
                        "a folder of images, sim:dition[:SEED] (default: auto)")
    parser.add_argument("--game", choices=registry.names(), default=registry.default_name())
    parser.add_argument("--players", metavar="G,R", help="Domination colours in turn order")
    parser.add_argument("--variant", default="standard",
                        help="Domination: standard, fast, up_to_k, anti_symmetry, individual "
                        "(4 players without partners); combine with +")
    add_board_options(parser)
    add_server_options(parser)
    parser.add_argument("--no-resume", action="store_true",
                        help="start a new match even if the log has an unfinished one")
    parser.add_argument("--max-fps", type=float, default=8.0)
    parser.add_argument("--lens-position", type=float, default=None, metavar="DIOPTRES",
                        help="Pi Camera Module 3: fixed focus, 1 / distance in m (default: the "
                        "calibration's, else one autofocus cycle at start)")


def check_pin(host: str, pin: str | None) -> None:
    from web.security import pin_weakness

    if not is_loopback(host) and not pin:
        raise SystemExit(
            f"referee: listening on {host} makes the page reachable from other machines: "
            "set a PIN for the controls with --pin"
        )
    weakness = pin_weakness(pin) if pin else None
    if weakness is not None:
        raise SystemExit(f"referee: --pin: {weakness}")


def auto_source() -> str:
    """The Pi camera when this machine has one, else the first webcam."""
    import hardware

    for kind, available, _ in hardware.available_sources():
        if kind == "picamera2" and available:
            return "picamera2"
    return "webcam:0"


def camera_options(spec: str, lens_position: float | None,
                   calibration: Any = None) -> dict[str, Any]:
    """What `open_any` gets for `spec`: the focus, from `--lens-position` or else the one stored
    in the calibration; a lens position only means something to the Pi camera."""
    stored = (getattr(calibration, "camera_controls", None) or {}).get("LensPosition")
    if lens_position is None and (stored is None or not spec.startswith("picamera2")):
        return {}
    if not spec.startswith("picamera2"):
        raise SystemExit(f"referee: --lens-position is for the Pi camera (picamera2), not {spec}")
    return {"lens_position_dioptres": float(lens_position if lens_position is not None
                                            else stored)}


def _stop_signals(service: Any) -> dict[int, Any]:
    """Ctrl-C and SIGTERM (`kill`, a container stop) end the pages' event streams first, then
    interrupt the server in the main thread (KeyboardInterrupt for both).

    The web server waits for its worker threads when it stops, and a worker streaming events to
    an open page would otherwise sit out its keep-alive wait. Returns the previous handlers.
    """
    def on_signal(signum: int, frame: object) -> None:
        service.end_streams()
        raise KeyboardInterrupt

    return {signum: signal.signal(signum, on_signal)
            for signum in (signal.SIGINT, signal.SIGTERM)}


def run_service(service: Any, args: argparse.Namespace) -> int:
    """Serve until Ctrl-C or SIGTERM; either stops the loop, closes the camera and the log, exit 0."""
    from referee.service import STOP_TIMEOUT_S
    from web.errors import ServerStartError
    from web.server import serve

    club = start_club(service, args)
    in_main_thread = threading.current_thread() is threading.main_thread()
    previous = _stop_signals(service) if in_main_thread else {}
    status = 0
    if in_main_thread:
        # The frame thread ending by surprise stops the process (status 1): a service manager
        # restarts it and the match resumes from the log, instead of a page stuck on "waiting".
        service.on_loop_died = lambda exc: _thread.interrupt_main()
    service.start()
    try:
        serve(service, host=args.host, port=args.port, pin=args.pin,
              allowed_hosts=tuple(getattr(args, "allowed_host", None) or ()))
    except ServerStartError as exc:
        print(f"referee: {exc}", file=sys.stderr)
        status = 1
    except KeyboardInterrupt:
        pass
    finally:
        stopped = service.stop()
        if club is not None:
            club.stop()
        if stopped:
            service.log.close()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    failure = getattr(service, "loop_failure", None)
    if failure is not None:
        print(f"referee: the match loop stopped ({type(failure).__name__}: {failure}); exiting "
              "with status 1 so that the service manager restarts the referee", file=sys.stderr,
              flush=True)
        status = 1
    if not stopped:
        # A thread stuck in a camera driver cannot be interrupted, and letting the interpreter
        # shut down under it aborts in native code. Every committed event is already on disk.
        print(f"referee: the frame thread did not stop within {STOP_TIMEOUT_S:g} s (a camera "
              "stuck in its driver?); exiting without it, the match log keeps every committed "
              "event", file=sys.stderr, flush=True)
        sys.stdout.flush()
        os._exit(1)
    print("referee: stopped; the match log is closed", file=sys.stderr, flush=True)
    return status


def run(args: argparse.Namespace) -> int:
    from referee.faults import FaultSpecError, with_faults
    from referee.loop import LoopSettings
    from referee.service import RefereeService
    from referee.sources import is_still_folder, open_any

    check_pin(args.host, args.pin)
    spec = auto_source() if args.source == "auto" else args.source
    players = [p.strip() for p in args.players.split(",")] if args.players else None
    log = open_log(args.db)
    say(f"referee: match log {log.path}; source {spec}")
    still = is_still_folder(spec)
    calibration = load_calibration(args.calibration)
    options = camera_options(spec, args.lens_position, calibration)
    try:  # tests only: $REFEREE_TEST_FAULT plants a fault (referee.faults); unset, no change
        open_source = with_faults(lambda restart: open_any(spec, restart=restart, **options))
    except FaultSpecError as exc:
        raise SystemExit(f"referee: {exc}") from None
    service = RefereeService(
        log,
        open_source,
        game=args.game,
        players=players,
        variant=args.variant,
        source_spec=spec,
        corners_px=corners_or_exit(args.corners),
        calibration=calibration,
        settings=LoopSettings(agree_frames=1, use_motion=not still),
        max_fps=args.max_fps,
        resume=not args.no_resume,
        disc_thickness=disc_thickness(args),
    )
    return run_service(service, args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(1)
