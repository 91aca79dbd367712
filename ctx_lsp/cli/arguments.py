"""Option values read from files or `KEY=VALUE` forms (`--messages`, `--artifact`, `--docs`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ctx_lsp.errors import InvalidParam


def read_json(path: Path, field: str) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise InvalidParam(
            field, f"cannot read JSON from {path}: {err}", "pass a file holding a JSON list of messages"
        ) from err


def artifact(raw: str) -> dict[str, str]:
    key, sep, file = raw.partition("=")
    if not sep or not key or not file:
        raise InvalidParam("artifacts", f"{raw!r} is not KEY=FILE", "e.g. --artifact spec=docs/spec.md")
    try:
        return {"key": key, "content": Path(file).read_text(encoding="utf-8", errors="replace")}
    except OSError as err:
        raise InvalidParam("artifacts", f"cannot read {file}: {err.strerror}", "pass a readable file") from err


def docs_request(raw: str) -> dict[str, str]:
    library, _, topic = raw.partition(":")
    return {"library": library.strip(), **({"topic": topic.strip()} if topic.strip() else {})}
