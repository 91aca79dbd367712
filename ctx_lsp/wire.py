"""Results → JSON-ready structures, shared by every adapter (LSP, CLI, MCP).

Field names are the contract's snake_case names: the dataclass field names themselves.
"""

from __future__ import annotations

import dataclasses
from enum import Enum
from typing import Any


def to_wire(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_wire(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, (list, tuple)):
        return [to_wire(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_wire(v) for k, v in value.items()}
    return value
