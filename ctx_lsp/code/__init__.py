"""Code understanding: tree-sitter outlines and tier renderings."""
