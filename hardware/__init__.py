"""Frame sources: Raspberry Pi camera, webcams, video, URLs, image folders, the simulated table.

`open_source(spec, **options)` opens one by name (`picamera2:0`, `webcam:1`, `match.mp4`,
`http://phone:8080/video`, `frames/?fps=2`, `sim:dition:7` once the referee registered `sim`);
`ResilientSource` keeps frames coming through unplugs and dropouts.
"""

from hardware.errors import (
    CameraBusyError,
    CorruptFrameError,
    EndOfStream,
    HardwareError,
    MissingBackendError,
    NoCameraError,
    SourceLostError,
    SourceOptionError,
    SourceUnavailableError,
    UnknownSourceError,
)
from hardware.source import Frame, FrameSource, SourceBase
from hardware.sources.registry import (
    available_sources,
    known_kinds,
    open_source,
    register_source,
    unregister_source,
)
from hardware.sources.resilient import ResilientSource

__all__ = [
    "CameraBusyError",
    "CorruptFrameError",
    "EndOfStream",
    "Frame",
    "FrameSource",
    "HardwareError",
    "MissingBackendError",
    "NoCameraError",
    "ResilientSource",
    "SourceBase",
    "SourceLostError",
    "SourceOptionError",
    "SourceUnavailableError",
    "UnknownSourceError",
    "available_sources",
    "known_kinds",
    "open_source",
    "register_source",
    "unregister_source",
]
