"""Open any source spec, including the simulated table (which needs the rules, so lives here).

`sim:dition[:SEED]` and `sim:domination[:SEED]` play a generated match on the simulated table;
everything else goes to `hardware.open_source` (Pi camera, webcam, video file, URL, folder).
"""

from __future__ import annotations

from typing import Any

from referee.errors import SourceSpecError
from referee.games import registry

SIM_PREFIX = "sim"


def parse_sim_spec(spec: str) -> tuple[str, int]:
    parts = spec.split(":")
    if parts[0] != SIM_PREFIX or len(parts) > 3:
        raise SourceSpecError(f"not a simulated-table spec: {spec!r} (use sim:dition[:SEED])")
    game = parts[1] if len(parts) > 1 and parts[1] else registry.default_name()
    if registry.find_game(game) is None:
        raise SourceSpecError(f"unknown game {game!r} in {spec!r}: use "
                              f"{' or '.join(registry.names())}")
    try:
        seed = int(parts[2]) if len(parts) > 2 else 1
    except ValueError:
        raise SourceSpecError(f"the seed in {spec!r} must be a whole number") from None
    return game, seed


def open_any(spec: str, *, restart: int = 0, **options: Any) -> Any:
    """A `FrameSource` for `spec`; `restart` advances the simulated table's seed."""
    if spec == SIM_PREFIX or spec.startswith(SIM_PREFIX + ":"):
        from referee.simtable import scripted_table

        game, seed = parse_sim_spec(spec)
        return scripted_table(game, seed + restart, **options)
    import hardware

    return hardware.open_source(spec, **options)


def is_still_folder(spec: str) -> bool:
    """A folder of images (or one image): every frame is a separate still photograph."""
    from pathlib import Path

    p = Path(spec)
    return p.is_dir() or (p.is_file() and p.suffix.lower() in (".jpg", ".jpeg", ".png", ".bmp"))


def register_sim() -> None:
    """Make `sim:` specs known to `hardware.open_source` too (for `referee detect` and others)."""
    try:
        import hardware

        register = getattr(hardware, "register_source", None)
        if register is not None:
            register(SIM_PREFIX, lambda spec, **kw: open_any(spec, **kw),
                     description="the simulated table playing a generated match")
    except ImportError:  # pragma: no cover
        pass
