"""What an agent already has: its conversation, windowed at turn boundaries, and the
outputs of earlier workflow steps (artifacts), each fitted to its own token budget."""

from ctx_lsp.history.artifacts import (
    DEFAULT_ARTIFACT_BUDGET,
    DEFAULT_ARTIFACT_ORDER,
    ArtifactPiece,
    ArtifactsResult,
    fill_artifacts,
    render_artifacts,
    validate_artifacts,
)
from ctx_lsp.history.messages import validate_messages
from ctx_lsp.history.windowing import (
    RoleBreakdown,
    WindowError,
    WindowMetadata,
    WindowResult,
    essential_messages,
    window_messages,
)

__all__ = [
    "DEFAULT_ARTIFACT_BUDGET",
    "DEFAULT_ARTIFACT_ORDER",
    "ArtifactPiece",
    "ArtifactsResult",
    "RoleBreakdown",
    "WindowError",
    "WindowMetadata",
    "WindowResult",
    "essential_messages",
    "fill_artifacts",
    "render_artifacts",
    "validate_artifacts",
    "validate_messages",
    "window_messages",
]
