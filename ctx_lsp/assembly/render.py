"""Render a bundle's sections as one text an agent can read, cite and act on.

Each section is headed by its path and line range, so the agent can open or cite the
exact place. Markdown fences grow longer than any backtick run inside the content, so a
file that itself contains ``` cannot break out of its block.

The windowed conversation, when a bundle has one, is the text's last part: an agent
pastes `text` as is, so what the budget paid for must be in it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from ctx_lsp.code.languages import language_for
from ctx_lsp.history.messages import content_text
from ctx_lsp.vocabulary import Format, Section

TIER_NAMES = {1: "outline", 2: "focused", 3: "full"}

_FENCE_LANG = {
    ".md": "markdown",
    ".toml": "toml",
    ".json": "json",
    ".yaml": "yaml",
    ".yml": "yaml",
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
    """The fence label: a code file's language's (`LanguageSpec.fence`), else by suffix."""
    spec = language_for(path)
    if spec is not None:
        return spec.fence
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


# --- the conversation --------------------------------------------------------------------

CONVERSATION_HEADING = "## Conversation"
XML_CONTEXT_END = "</context>\n"
_XML_CLOSERS = re.compile(r"</(message|tool_call|conversation)>")


def render_conversation(messages: Sequence[Mapping[str, Any]], fmt: Format = Format.MARKDOWN) -> str:
    """The windowed messages as the bundle text's last part, compactly: role, tool name
    and call id, content. Tool output is fenced (markdown) or kept inside its element
    (xml): it is arbitrary text, and a line like `### user` in a file must not read as a
    new message."""
    if not messages:
        return ""
    names = _tool_names(messages)
    if fmt == Format.XML:
        body = "".join(_xml_message(m, names.get(k)) for k, m in enumerate(messages))
        return f"<conversation>\n{body}</conversation>\n"
    return CONVERSATION_HEADING + "\n\n" + "\n".join(_markdown_message(m, names.get(k)) for k, m in enumerate(messages))


def with_conversation(text: str, conversation: str, fmt: Format = Format.MARKDOWN) -> str:
    """`text` (the rendered sections) with the rendered conversation as its last part."""
    if not conversation:
        return text
    if fmt == Format.XML:
        if text.endswith(XML_CONTEXT_END):
            return text[: -len(XML_CONTEXT_END)] + conversation + XML_CONTEXT_END
        return conversation
    return text + "\n" + conversation if text.strip() else conversation


def _tool_names(messages: Sequence[Mapping[str, Any]]) -> dict[int, str]:
    """Position of each tool message → the name of the call it answers (the latest
    earlier call with its id, as windowing pairs them)."""
    latest: dict[str, str] = {}
    names: dict[int, str] = {}
    for k, m in enumerate(messages):
        for call in m.get("tool_calls") or ():
            latest[call["id"]] = call["function"]["name"]
        if m["role"] == "tool":
            names[k] = latest.get(m.get("tool_call_id") or "", "tool")
    return names


def _arguments(call: Mapping[str, Any]) -> str:
    arguments = call["function"].get("arguments")
    if arguments is None:
        return ""
    return arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False, sort_keys=True)


def _markdown_message(m: Mapping[str, Any], tool: str | None) -> str:
    text = content_text(m.get("content"))
    body = text if text.endswith("\n") or not text else text + "\n"
    if m["role"] == "tool":
        fence = _fence_for(text)
        return f"### tool result: {tool} ({m.get('tool_call_id')})\n{fence}\n{body}{fence}\n"
    calls = "".join(
        f"→ call {call['function']['name']} ({call['id']}): {_arguments(call)}\n" for call in m.get("tool_calls") or ()
    )
    return f"### {m['role']}\n{body}{calls}"


def _xml_message(m: Mapping[str, Any], tool: str | None) -> str:
    text = _XML_CLOSERS.sub(r"&lt;/\1>", content_text(m.get("content")))
    body = text if text.endswith("\n") or not text else text + "\n"
    if m["role"] == "tool":
        attrs = f'role="tool" name={quoteattr(tool or "tool")} tool_call_id={quoteattr(m.get("tool_call_id") or "")}'
        return f"<message {attrs}>\n{body}</message>\n"
    calls = "".join(
        f"<tool_call id={quoteattr(call['id'])} name={quoteattr(call['function']['name'])}>"
        f"{escape(_arguments(call))}</tool_call>\n"
        for call in m.get("tool_calls") or ()
    )
    return f"<message role={quoteattr(m['role'])}>\n{body}{calls}</message>\n"
