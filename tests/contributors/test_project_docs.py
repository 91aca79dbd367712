"""Tests for ctx_lsp/contributors/project_docs.py, through the Contributor protocol."""

from __future__ import annotations

import pytest

from ctx_lsp.contributors.project_docs import ProjectDocs
from ctx_lsp.params import parse_bundle
from ctx_lsp.vocabulary import ContributorName, Strategy, Tier
from tests.contributors.conftest import context, offer_of, paths, rendered, uri

CODE = {"svc/core.py": "def serve():\n    return 1\n", "other/x.py": "def x():\n    return 2\n"}

DOCS = {
    "PENGUIN.md": "# Penguin\n\nPenguin rules.\n",
    "AGENTS.md": "# Agents\n\nAgent rules.\n",
    "CLAUDE.md": "# Claude\n\nClaude rules.\n",
    "README.md": "# Readme\n\nGeneral.\n",
}

CONTRIBUTOR = ProjectDocs()


def test_protocol_identity() -> None:
    """Ensure that project docs name themselves, spend depth first and take part in every request."""
    assert CONTRIBUTOR.name == ContributorName.PROJECT_DOCS
    assert CONTRIBUTOR.strategy == Strategy.DEPTH
    assert CONTRIBUTOR.applies(parse_bundle({}))
    assert CONTRIBUTOR.applies(parse_bundle({"query": "anything", "agent": "planner"}))


@pytest.mark.parametrize(
    ("present", "chosen"),
    [
        (("PENGUIN.md", "AGENTS.md", "CLAUDE.md", "README.md"), "PENGUIN.md"),
        (("AGENTS.md", "CLAUDE.md", "README.md"), "AGENTS.md"),
        (("CLAUDE.md", "README.md"), "CLAUDE.md"),
        (("README.md",), "README.md"),
        (("PENGUIN.md", "README.md"), "PENGUIN.md"),
        (("AGENTS.md", "CLAUDE.md"), "AGENTS.md"),
    ],
)
def test_first_found_wins_in_precedence_order(make_engine, present, chosen) -> None:
    """Ensure that PENGUIN.md > AGENTS.md > CLAUDE.md > README.md, and only one is offered."""
    engine = make_engine({**CODE, **{name: DOCS[name] for name in present}})
    offer = offer_of(CONTRIBUTOR, context(engine, {"query": "serve"}))
    assert paths(offer) == [chosen]
    (candidate,) = offer.candidates
    assert candidate.salience == 1.0
    assert chosen.removesuffix(".md") in candidate.reason
    r = rendered(candidate, candidate.tier, 2000, engine.counter)
    assert DOCS[chosen].strip() in r.content


def test_readme_is_only_a_fallback(make_engine) -> None:
    """Ensure that the README says it is the fallback, with no instructions file anywhere."""
    engine = make_engine({**CODE, "README.md": DOCS["README.md"]})
    (candidate,) = offer_of(CONTRIBUTOR, context(engine, {})).candidates
    assert "README" in candidate.reason and "no PENGUIN.md, AGENTS.md or CLAUDE.md" in candidate.reason


def test_no_instructions_no_candidates(make_engine) -> None:
    """Ensure that a workspace without any of the four files offers nothing."""
    engine = make_engine({**CODE, "docs/guide.md": "# Guide\n\nNot instructions.\n"})
    assert offer_of(CONTRIBUTOR, context(engine, {"query": "guide"})).candidates == []


def test_nearest_agents_md_to_the_focus_file_wins(make_engine) -> None:
    """Ensure that the AGENTS.md nearest the focus file beats the root's instructions (even
    PENGUIN.md), and a file elsewhere gets the root's."""
    engine = make_engine(
        {
            **CODE,
            "PENGUIN.md": DOCS["PENGUIN.md"],
            "svc/AGENTS.md": "# Service rules\n\nUse the service way.\n",
        }
    )
    near = context(engine, {"focus": {"uri": uri(engine, "svc/core.py"), "position": {"line": 0}}})
    (candidate,) = offer_of(CONTRIBUTOR, near).candidates
    assert candidate.path == "svc/AGENTS.md"
    assert "nearest to the focus file" in candidate.reason
    far = context(engine, {"focus": {"uri": uri(engine, "other/x.py"), "position": {"line": 0}}})
    assert paths(offer_of(CONTRIBUTOR, far)) == ["PENGUIN.md"]
    unfocused = context(engine, {"query": "serve"})
    assert paths(offer_of(CONTRIBUTOR, unfocused)) == ["PENGUIN.md"]


def test_first_working_file_stands_in_for_the_focus(make_engine) -> None:
    """Ensure that without a cursor, the first `open` file decides which instructions are nearest."""
    engine = make_engine({**CODE, "CLAUDE.md": DOCS["CLAUDE.md"], "svc/AGENTS.md": "# Service\n\nRules.\n"})
    ctx = context(engine, {"open": [uri(engine, "svc/core.py")]})
    assert paths(offer_of(CONTRIBUTOR, ctx)) == ["svc/AGENTS.md"]


def test_nearer_readme_does_not_beat_an_instructions_file_higher_up(make_engine) -> None:
    """Ensure that a README next to the focus file loses to CLAUDE.md at the root: README.md
    is the fallback only when no instructions file exists at any level."""
    engine = make_engine({**CODE, "CLAUDE.md": DOCS["CLAUDE.md"], "svc/README.md": "# Svc\n\nAbout svc.\n"})
    ctx = context(engine, {"focus": {"uri": uri(engine, "svc/core.py"), "position": {"line": 0}}})
    assert paths(offer_of(CONTRIBUTOR, ctx)) == ["CLAUDE.md"]


def test_instructions_wanted_as_rich_as_the_window_type_allows(make_engine) -> None:
    """Ensure that instructions are wanted whole (tier 3), or at the window type's cap (2 in
    token-efficient), whatever the agent's own tier."""
    engine = make_engine({**CODE, "AGENTS.md": DOCS["AGENTS.md"]})
    planner = offer_of(CONTRIBUTOR, context(engine, {"agent": "planner"}))
    assert planner.candidates[0].tier == Tier.FULL
    efficient = offer_of(CONTRIBUTOR, context(engine, {"profile": "token-efficient"}))
    assert efficient.candidates[0].tier == Tier.FOCUSED


def test_pruned_instructions_keep_the_sections_the_task_names(make_engine) -> None:
    """Ensure that when long instructions must be cut, the headings the task's words match are kept."""
    filler = "".join(f"## Rule {i}\n\n" + "Always follow the house style carefully. " * 15 + "\n\n" for i in range(12))
    agents = "# Agents\n\n" + filler + "## Database migrations\n\nRun alembic upgrade head before tests.\n"
    engine = make_engine({**CODE, "AGENTS.md": agents})
    (candidate,) = offer_of(CONTRIBUTOR, context(engine, {"query": "database migrations"})).candidates
    r = rendered(candidate, Tier.OUTLINE, 150, engine.counter)
    assert "Database migrations" in r.content


BADGED_README = """\
<p align="center">
  <a href="https://example.org/"><img width="350" src="https://example.org/logo.png" alt="Project"></a>
</p>

[![CI](https://github.com/o/p/actions/workflows/ci.yml/badge.svg)](https://github.com/o/p/actions) [![PyPI](https://badge.fury.io/py/p.svg)](https://pypi.org/project/p/)

# Project

Project serves things.

```html
<div>an example, kept</div>
```

<!-- maintainers: remember the release -->
## Serving

Call `serve()`.

<p align="center"><i>BSD licensed.</i></p>
"""


@pytest.mark.parametrize("name", ["README.md", "AGENTS.md"])
def test_whole_instructions_are_shown_without_html_or_badges(make_engine, name: str) -> None:
    """Ensure that instructions shown whole leave out HTML, comments and badges but keep
    prose and code, and that the range starts at the first line shown (the blanked logo
    and badges are not counted as shown) while every line keeps its number."""
    engine = make_engine({**CODE, name: BADGED_README})
    (candidate,) = offer_of(CONTRIBUTOR, context(engine, {"query": "serve"})).candidates
    whole = rendered(candidate, Tier.FULL, 2000, engine.counter)
    assert whole.tier == Tier.FULL and not whole.truncated
    for gone in ("<p", "<img", "badge", "shields", "fury", "<!--", "maintainers"):
        assert gone not in whole.content.replace("<div>an example, kept</div>", "")
    assert "<div>an example, kept</div>" in whole.content and "BSD licensed." in whole.content
    source = BADGED_README.split("\n")
    assert whole.start_line == source.index("# Project") + 1
    assert whole.end_line == len(source) - 1
    shown = whole.content.split("\n")
    for offset, line in enumerate(shown[:-1]):  # each line is the file's line at that number, or blanked
        original = source[whole.start_line - 1 + offset]
        assert line == original or not line or line in original
    focused = rendered(candidate, Tier.FOCUSED, 2000, engine.counter)
    assert "Call `serve()`." in focused.content and "BSD licensed." in focused.content
    assert "<p" not in focused.content and "<i>" not in focused.content


def test_whole_readme_without_headings_is_readable(make_engine) -> None:
    """Ensure that a README without headings (whole or nothing at every tier) is readable too."""
    text = '<p align="center"><img src="logo.png"></p>\n\nJust a paragraph about serving.\n'
    engine = make_engine({**CODE, "README.md": text})
    (candidate,) = offer_of(CONTRIBUTOR, context(engine, {})).candidates
    for tier in (Tier.OUTLINE, Tier.FULL):
        r = rendered(candidate, tier, 500, engine.counter)
        assert r.content == "Just a paragraph about serving.\n" and (r.start_line, r.end_line) == (3, 3)


BIG_README = "# Project\n\n" + "".join(
    f"## Section {i}\n\n"
    + "".join(f"Paragraph {j} about feature {i}, response handling and clients.\n\n" for j in range(8))
    for i in range(8)
)


def test_a_big_readme_shows_its_headings_unless_the_task_is_about_it(make_engine) -> None:
    """Ensure that a large README (the fallback, written for people) is offered as its
    headings for a code task, and in full when the task's words match several sections."""
    engine = make_engine({**CODE, "README.md": BIG_README})
    (skim,) = offer_of(CONTRIBUTOR, context(engine, {"query": "fix the serve loop"})).candidates
    assert skim.tier == Tier.OUTLINE
    (full,) = offer_of(CONTRIBUTOR, context(engine, {"query": "section feature paragraph"})).candidates
    assert full.tier > Tier.OUTLINE
    agents = make_engine({**CODE, "AGENTS.md": BIG_README.replace("# Project", "# Agents")})
    (rules,) = offer_of(CONTRIBUTOR, context(agents, {"query": "fix the serve loop"})).candidates
    assert rules.tier > Tier.OUTLINE  # instructions for agents are read, not skimmed
