"""ctx-lsp: a context engine for coding agents that lives next to the editor as a Language Server."""

__version__ = "0.1.0"
