"""Reach the referee service stored on the app, and make its answers JSON-able."""

from __future__ import annotations

import dataclasses
import enum
import json
import math
from collections.abc import Mapping
from typing import Any

from flask import current_app

SERVICE_KEY = "referee_service"


def get_service() -> Any:
    """The `RefereeService` this app presents (set by `create_app(service=...)`)."""
    service = current_app.extensions.get(SERVICE_KEY)
    if service is None:
        raise RuntimeError("no referee service: build the app with create_app(service=...)")
    return service


def to_jsonable(value: Any) -> Any:
    """Records (`to_json()`), dataclasses, enums, tuples and numpy values become plain JSON."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    to_json = getattr(value, "to_json", None)
    if callable(to_json) and not isinstance(value, type):
        return to_jsonable(to_json())
    if isinstance(value, enum.Enum):
        return to_jsonable(value.value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_jsonable(v) for v in value]
    if hasattr(value, "tolist") and callable(value.tolist):  # numpy array or scalar
        return to_jsonable(value.tolist())
    if isinstance(value, bytes):
        return None
    return str(value)


def json_text(value: Any) -> str:
    """Compact JSON of `value`: what `to_jsonable` makes of it, written by json's C encoder
    straight from the plain dicts, lists, strings and numbers (most of a state), with only the
    rest converted (`default`). A state through `to_jsonable` first took ~2,500 Python calls;
    a non-finite float or a key json cannot write sends the whole value through `to_jsonable`."""
    try:
        return json.dumps(value, separators=(",", ":"), allow_nan=False, default=to_jsonable)
    except (TypeError, ValueError):
        return json.dumps(to_jsonable(value), separators=(",", ":"))
