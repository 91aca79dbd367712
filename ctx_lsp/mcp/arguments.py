"""MCP tool arguments → the plain dicts `ctx_lsp.params` parses, and the MCP output cap.

Agents name files as a bundle shows them, relative to the workspace (`pkg/mod.py`), and
lines as people do, from 1 (`pkg/mod.py:42`); the parsers take what an editor sends (file
URIs or absolute paths, 0-based positions). Converting here, and nothing more, keeps the
parsers the one set of rules: a bad value still fails there, with their message.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from ctx_lsp.assembly.pipeline import plan
from ctx_lsp.config import Config
from ctx_lsp.errors import InvalidParam
from ctx_lsp.vocabulary import BundleRequest, WindowRequest

MCP_OUTPUT_CAP_TOKENS = 20_000
"""No tool answers with more: Claude Code warns above 10K tokens of tool output and refuses
above 25K (`MAX_MCP_OUTPUT_TOKENS`). Larger asks are capped and say how to get the rest."""
WINDOW_CAP_TOKENS = 15_000
"""A windowed conversation goes back as JSON, whose keys and escapes cost more than the
windowing's own per-message framing: its budget keeps a quarter of the cap for that."""


def absolute(root: Path, value: Any) -> Any:
    """A workspace-relative path made absolute; URIs, absolute paths and anything that is
    not a string are passed on unchanged, for the parser to accept or refuse."""
    if not isinstance(value, str) or not value.strip() or value.startswith("file:") or "://" in value:
        return value
    path = Path(value.strip())
    return str(path if path.is_absolute() else root / path)


def absolute_all(root: Path, value: Any) -> Any:
    return [absolute(root, v) for v in value] if isinstance(value, list) else value


def focus(root: Path, value: Any) -> Any:
    """`path:line` (1-based) → the parser's `{uri, position}`; an object (the LSP shape)
    is passed on as it is."""
    if not isinstance(value, str):
        return value
    path, sep, line = value.strip().rpartition(":")
    if not sep or not path or not line.isdigit() or int(line) < 1:
        raise InvalidParam(
            "focus", f"{value!r} is not PATH:LINE", "pass the file and its 1-based line, e.g. 'pkg/mod.py:42'"
        )
    return {"uri": absolute(root, path), "position": {"line": int(line) - 1}}


def present(params: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments given: MCP sends an omitted optional argument as null."""
    return {k: v for k, v in params.items() if v is not None}


def capped_bundle(request: BundleRequest, config: Config, reserve: int) -> tuple[BundleRequest, int, list[str]]:
    """The request with an explicit budget: what it asked for (a budget, a model's window or
    the agent's default), at most the MCP cap, less up to `reserve` tokens (never more than
    a tenth) for what the tool adds after the bundle's text. Returns the request, the tokens
    kept back, and notes saying when the cap applied."""
    planned = plan(request, config).budget.total
    budget = min(planned, MCP_OUTPUT_CAP_TOKENS)
    kept = min(reserve, budget // 10)
    capped = replace(request, budget=budget - kept, model=None, utilization=None)
    return capped, kept, _cap_notes(request.model, planned, MCP_OUTPUT_CAP_TOKENS)


def capped_window(request: WindowRequest, config: Config) -> tuple[WindowRequest, list[str]]:
    """The window request with an explicit budget of at most `WINDOW_CAP_TOKENS`, computed
    the way `Engine.window` does (the default agent and context window type)."""
    planned = plan(
        BundleRequest(budget=request.budget, model=request.model, utilization=request.utilization), config
    ).budget.total
    budget = min(planned, WINDOW_CAP_TOKENS)
    return replace(request, budget=budget, model=None, utilization=None), _cap_notes(
        request.model, planned, WINDOW_CAP_TOKENS
    )


def _cap_notes(model: str | None, planned: int, cap: int) -> list[str]:
    if planned <= cap:
        return []
    asked = f"model {model} allows {planned}" if model else f"{planned} asked"
    return [f"budget capped at {cap} tokens for MCP tool output ({asked})"]
