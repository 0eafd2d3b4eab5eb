"""`open_source(spec, **options)`: pick a frame source by its spec, importing it only then.

Specs (first match wins):
1. `KIND` or `KIND:...` where KIND was registered with `register_source` (the referee registers
   `sim` for `sim:dition[:SEED]`): `factory(spec, **options)` with the whole spec.
2. `picamera2` / `picamera2:N` - the Raspberry Pi camera N (default 0); options after `?`:
   `size=WxH`, `lens_position=DIOPTRES` (manual focus, 1 / distance in m; Camera Module 3).
3. `webcam` / `webcam:N` - /dev/videoN (default 0); options `size=WxH`, `fps=N`.
4. `http://`, `https://`, `rtsp://`, `rtsps://` URLs - network streams via FFmpeg.
5. a path, optionally followed by `?key=value&...` options (`frames/?fps=2`):
   a folder of images, an image file, or any other file read as a video.
Anything else raises `UnknownSourceError` naming the spec and the known kinds; a path that does
not exist raises `SourceUnavailableError`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hardware.errors import SourceOptionError, SourceUnavailableError, UnknownSourceError
from hardware.source import FrameSource

SourceFactory = Callable[..., FrameSource]

#: the built-in kinds, for messages and `available_sources`
BUILTIN_KINDS: dict[str, str] = {
    "picamera2": "picamera2[:N] - Raspberry Pi camera module N (libcamera)",
    "webcam": "webcam[:N] - USB/V4L2 camera /dev/videoN",
    "url": "http(s)://..., rtsp(s)://... - network stream (phone app, IP camera) or remote video",
    "video": "PATH.mp4|.avi|.mkv|... - a recorded video file",
    "folder": "DIR[?fps=2] - a folder of images in natural order",
    "image": "PATH.png|.jpg[?loop=1] - a single image",
}

_URL_SCHEMES = ("http://", "https://", "rtsp://", "rtsps://")
_VIDEO_SUFFIXES = frozenset({".mp4", ".avi", ".mkv", ".mov", ".webm", ".mjpeg", ".mjpg", ".h264",
                             ".m4v", ".mpg", ".mpeg", ".ts"})


@dataclass(frozen=True)
class _Registered:
    factory: SourceFactory
    description: str
    available: Callable[[], tuple[bool, str]] | None


_registry: dict[str, _Registered] = {}
_registry_lock = threading.Lock()


def register_source(
    kind: str,
    factory: SourceFactory,
    *,
    description: str,
    available: Callable[[], tuple[bool, str]] | None = None,
) -> None:
    """Make `KIND` and `KIND:...` specs open with `factory(spec, **options)` (the whole spec).

    `available()` (optional) returns (usable on this machine, detail) for `referee sources`.
    Registering a kind again replaces it; built-in kinds cannot be replaced.
    """
    if not kind or not kind.isidentifier() or kind != kind.lower():
        raise ValueError(f"source kind must be a lower-case identifier, got {kind!r}")
    if kind in BUILTIN_KINDS or kind in ("http", "https", "rtsp", "rtsps", "file"):
        raise ValueError(f"source kind {kind!r} is built in and cannot be registered")
    with _registry_lock:
        _registry[kind] = _Registered(factory, description, available)


def unregister_source(kind: str) -> None:
    with _registry_lock:
        _registry.pop(kind, None)


def registered_kinds() -> dict[str, str]:
    with _registry_lock:
        return {k: r.description for k, r in _registry.items()}


def known_kinds() -> list[str]:
    return [*BUILTIN_KINDS, *registered_kinds()]


def _parse_bool(key: str, text: str) -> bool:
    lowered = text.lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off"):
        return False
    raise SourceOptionError(f"option {key}={text!r}: expected true/false")


def _parse_size(key: str, text: str) -> tuple[int, int]:
    width, sep, height = text.lower().partition("x")
    if not sep or not width.isdigit() or not height.isdigit():
        raise SourceOptionError(f"option {key}={text!r}: expected WIDTHxHEIGHT, e.g. 1280x720")
    return int(width), int(height)


def _parse_float(key: str, text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise SourceOptionError(f"option {key}={text!r} is not a number") from None


#: options a spec may carry after `?`, per kind: spec key -> (keyword argument, parser)
_QUERY_OPTIONS: dict[str, dict[str, tuple[str, Callable[[str, str], Any]]]] = {
    "path": {"fps": ("fps", _parse_float), "loop": ("loop", _parse_bool),
             "realtime": ("realtime", _parse_bool)},
    "picamera2": {"size": ("size", _parse_size),
                  "lens_position": ("lens_position_dioptres", _parse_float)},
    "webcam": {"size": ("size", _parse_size), "fps": ("fps", _parse_float)},
}


def _parse_query(spec: str, query: str, kind: str = "path") -> dict[str, Any]:
    """`fps=2&loop=1` -> {"fps": 2.0, "loop": True}, with the keys `kind` accepts."""
    accepted = _QUERY_OPTIONS[kind]
    options: dict[str, Any] = {}
    for part in filter(None, query.split("&")):
        key, sep, value = part.partition("=")
        if not sep:
            raise SourceOptionError(f"{spec!r}: option {part!r} needs a value (key=value)")
        if key not in accepted:
            raise SourceOptionError(
                f"{spec!r}: unknown option {key!r} ({kind} options: {', '.join(accepted)})"
            )
        name, parse = accepted[key]
        options[name] = parse(key, value)
    return options


def _index(spec: str, kind: str, rest: str) -> int:
    if rest == "":
        return 0
    try:
        index = int(rest)
    except ValueError:
        raise UnknownSourceError(f"{spec!r}: {kind} takes a camera index ({kind}:0), not {rest!r}") \
            from None
    if index < 0:
        raise UnknownSourceError(f"{spec!r}: camera index must be >= 0")
    return index


def _call(kind: str, factory: Callable[..., FrameSource], *args: Any,
          allowed: frozenset[str], **options: Any) -> FrameSource:
    unknown = sorted(set(options) - allowed)
    if unknown:
        raise SourceOptionError(
            f"{kind} source: unknown option(s) {', '.join(unknown)}; it accepts "
            f"{', '.join(sorted(allowed)) or 'none'}"
        )
    return factory(*args, **options)


def open_source(spec: str, **options: Any) -> FrameSource:
    """Open the frame source that `spec` names (see the module docstring for the forms)."""
    if not isinstance(spec, str) or not spec.strip():
        raise UnknownSourceError(f"empty source spec; known kinds: {', '.join(known_kinds())}")
    spec = spec.strip()
    head, colon, rest = spec.partition(":")

    with _registry_lock:
        registered = _registry.get(head) if colon or spec in _registry else None
    if registered is not None:
        return registered.factory(spec, **options)

    camera_kind = head.partition("?")[0]
    if camera_kind in ("picamera2", "webcam"):
        base, _, query = spec.partition("?")
        head, _, rest = base.partition(":")
        options = {**_parse_query(spec, query, camera_kind), **options}
    if head == "picamera2":
        from hardware.sources.picamera2_source import Picamera2Source

        return _call("picamera2", Picamera2Source, _index(spec, head, rest),
                     allowed=frozenset({"size", "controls", "lens_position_dioptres",
                                        "picamera2_class", "params"}), **options)
    if head == "webcam":
        from hardware.sources.opencv_source import open_webcam

        return _call("webcam", open_webcam, _index(spec, head, rest),
                     allowed=frozenset({"size", "fps", "read_timeout_s"}), **options)
    if spec.startswith(_URL_SCHEMES):
        from hardware.sources.opencv_source import open_url

        return _call("url", open_url, spec, allowed=frozenset(
            {"open_timeout_s", "read_timeout_s", "realtime", "loop", "live"}), **options)

    path_text, _, query = spec.partition("?")
    if Path(spec).expanduser().exists():  # a file whose name has a "?" in it
        path_text, query = spec, ""
    path_text = path_text.removeprefix("file://")
    merged = {**_parse_query(spec, query), **options}
    path = Path(path_text).expanduser()
    if path.is_dir():
        from hardware.sources.folder import FolderSource

        return _call("folder", FolderSource, path, allowed=frozenset(
            {"fps", "loop", "sleep", "clock"}), **merged)
    if path.is_file():
        from hardware.sources.folder import IMAGE_SUFFIXES, ImageFileSource

        if path.suffix.lower() in IMAGE_SUFFIXES:
            return _call("image", ImageFileSource, path, allowed=frozenset(
                {"fps", "loop", "sleep", "clock"}), **merged)
        from hardware.sources.opencv_source import VideoFileSource

        return _call("video", VideoFileSource, path, allowed=frozenset(
            {"realtime", "loop", "sleep", "clock"}), **merged)

    looks_like_path = (
        "/" in path_text or "\\" in path_text or path_text.startswith((".", "~"))
        or Path(path_text).suffix.lower() in _VIDEO_SUFFIXES
        or Path(path_text).suffix.lower() in {".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff",
                                              ".webp"}
    )
    kind_like = bool(colon) and head.isidentifier() and not _is_drive(head)
    if looks_like_path and not kind_like:
        raise SourceUnavailableError(f"source {spec!r}: no such file or folder")
    raise UnknownSourceError(
        f"unknown source {spec!r}: not a known kind and no file or folder of that name; "
        f"known kinds: {', '.join(known_kinds())}"
    )


def _is_drive(head: str) -> bool:
    return len(head) == 1 and head.isalpha()


def available_sources() -> list[tuple[str, bool, str]]:
    """(kind, usable on this machine, detail) for each kind: what `referee sources` prints."""
    from hardware.sources.availability import builtin_availability

    rows = builtin_availability()
    with _registry_lock:
        registered = dict(_registry)
    for kind, entry in registered.items():
        if entry.available is None:
            rows.append((kind, True, entry.description))
        else:
            try:
                ok, detail = entry.available()
            except Exception as exc:  # noqa: BLE001 - a broken probe must not break the listing
                ok, detail = False, f"probe failed: {exc}"
            rows.append((kind, ok, detail))
    return rows


__all__ = [
    "BUILTIN_KINDS",
    "available_sources",
    "known_kinds",
    "open_source",
    "register_source",
    "registered_kinds",
    "unregister_source",
]
