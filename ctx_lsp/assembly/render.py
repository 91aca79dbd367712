"""Render a bundle's sections as one text an agent can read, cite and act on.

Each section is headed by its path and line range, so the agent can open or cite the
exact place. Markdown fences grow longer than any backtick run inside the content, so a
file that itself contains ``` cannot break out of its block.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from xml.sax.saxutils import quoteattr

from ctx_lsp.vocabulary import Format, Section

TIER_NAMES = {1: "outline", 2: "focused", 3: "full"}

_FENCE_LANG = {
    ".py": "python",
    ".pyi": "python",
    ".md": "markdown",
    ".toml": "toml",
    ".json": "json",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".js": "javascript",
    ".ts": "typescript",
    ".sh": "bash",
    ".rst": "rst",
    ".cfg": "ini",
    ".ini": "ini",
    ".html": "html",
    ".css": "css",
    ".txt": "",
}


def _fence_for(content: str) -> str:
    longest = max((len(m) for m in re.findall(r"`{3,}", content)), default=0)
    return "`" * max(3, longest + 1)


def _lang(path: str) -> str:
    dot = path.rfind(".")
    return _FENCE_LANG.get(path[dot:].lower(), "") if dot != -1 else ""


def section_heading(section: Section) -> str:
    r = section.range
    return f"{section.path} (lines {r.start_line}-{r.end_line}, {TIER_NAMES.get(section.tier, section.tier)})"


def render_markdown(sections: Sequence[Section], title: str) -> str:
    parts = [f"# {title}"] if title else []
    for s in sections:
        fence = _fence_for(s.content)
        body = s.content if s.content.endswith("\n") else s.content + "\n"
        parts.append(f"## {section_heading(s)}\n{fence}{_lang(s.path)}\n{body}{fence}")
    return "\n\n".join(parts) + "\n"


def render_xml(sections: Sequence[Section], title: str) -> str:
    parts = [f"<context title={quoteattr(title)}>"]
    for s in sections:
        r = s.range
        body = s.content.replace("</document>", "&lt;/document>")
        parts.append(
            f'<document path={quoteattr(s.path)} lines="{r.start_line}-{r.end_line}" '
            f'tier="{TIER_NAMES.get(s.tier, s.tier)}" contributor={quoteattr(s.contributor)}>\n'
            f"{body.rstrip(chr(10))}\n</document>"
        )
    parts.append("</context>")
    return "\n".join(parts) + "\n"


def render(sections: Sequence[Section], title: str, fmt: Format = Format.MARKDOWN) -> str:
    return render_xml(sections, title) if fmt == Format.XML else render_markdown(sections, title)
