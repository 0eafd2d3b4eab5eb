"""What the web tests share: the real referee service to present, and what must not change."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def make_service(db_path: str | Path, *, game: str = "dition", seed: int = 1) -> Any:
    """The real referee service on the simulated table, not started (no frame thread yet)."""
    try:
        from referee.service import create_demo_service
    except ImportError:  # until the lead's factory exists: build it the way `referee demo` does
        from referee.log import MatchLog
        from referee.service import RefereeService
        from referee.simtable import scripted_table

        return RefereeService(MatchLog(db_path),
                              lambda restart: scripted_table(game, seed + restart),
                              game=game, source_spec=f"sim:{game}:{seed}", resume=False,
                              demo=True, max_fps=10.0)
    return create_demo_service(db_path, game=game, seed=seed, realtime=False)


def observable(service: Any) -> dict[str, Any]:
    """What a refused request must leave unchanged: the state (minus clocks) and the whole log."""
    state = service.state()
    state.pop("camera", None)
    log = service.log
    matches = [m.to_json() for m in log.list_matches()]
    events = {m["id"]: [e.to_json() for e in log.events(m["id"])] for m in matches}
    return {"state": state, "matches": matches, "events": events}
