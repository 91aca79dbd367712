"""Code units ranked across the task's best files, and what a bundle shows of them (issue 22)."""

from __future__ import annotations

import dataclasses
import textwrap
from typing import cast

from ctx_lsp.code.outline import outline_for
from ctx_lsp.code.units import CodeUnit
from ctx_lsp.contributors.base import RankedFile
from ctx_lsp.contributors.retrieval import Retrieval, best_units, could_show
from ctx_lsp.contributors.unit_ranking import (
    FileUnits,
    RankedUnit,
    UnitFile,
    UnitsCache,
    file_units,
    rank_units,
    units_of,
)
from ctx_lsp.contributors.working_files import WorkingFiles
from ctx_lsp.engine import Engine
from ctx_lsp.index.files import IndexedFile
from ctx_lsp.index.unit_postings import unit_postings
from ctx_lsp.params import parse_bundle
from ctx_lsp.relevance import BODY_FILES
from ctx_lsp.vocabulary import Tier
from tests.contributors.conftest import context, offer_of, rendered, uri


def long_function(name: str, special: str) -> str:
    """A 90-line function whose one branch, 60 lines in, holds `special`."""
    body = "\n".join(f"    step_{i} = prepare_{i}(value)\n" for i in range(30))
    return (
        f"def {name}(value):\n"
        f'    """Run every step."""\n'
        f"{body}\n"
        f"    if value.{special}:\n"
        f"        return handle_{special}(value)\n"
        f"    return value\n"
    )


FILES = {
    "pkg/runner.py": "import os\n\n\n"
    + long_function("run_all", "quarantined_charset")
    + "\n\ndef other():\n    return 1\n",
    "pkg/charset.py": textwrap.dedent(
        """\
        CHARSET_DEFAULT = "utf-8"


        def pick_charset(headers):
            return headers.get("charset", CHARSET_DEFAULT)
        """
    ),
    "pkg/unrelated.py": "def nothing_here():\n    return 0\n",
}


def test_the_unit_holding_the_task_words_ranks_first_not_the_whole_function(make_engine) -> None:
    """Ensure that the piece of a long function where the task's words are ranks above the
    piece with its signature, and that a piece is not the whole function."""
    engine = make_engine(FILES)
    ctx = context(engine, {"query": "quarantined charset handling"})
    files = [(r, ctx.workspace.files[r.abs_path]) for r in ctx.ranked]
    units = best_units(ctx, files)
    assert units, "no unit ranked"
    top = next(u for u in units if u.path == "pkg/runner.py")
    assert top.unit.owner == "run_all" and not top.unit.first
    lines = (engine.roots[0] / "pkg/runner.py").read_text().splitlines()
    shown = "\n".join(lines[top.unit.start - 1 : top.unit.end])
    assert "quarantined_charset" in shown and "def run_all" not in shown
    assert {"charset", "quarantin"} <= set(top.matched)  # terms are stemmed
    assert all(units[i].score >= units[i + 1].score for i in range(len(units) - 1))


def test_a_bundle_shows_the_units_in_line_order_with_their_outline(make_engine) -> None:
    """Ensure that retrieval offers its units, a bundle shows the branch the task names with
    line numbers, names the function around it, and stays within its budget."""
    engine = make_engine(FILES)
    ctx = context(engine, {"query": "quarantined charset handling", "budget": 1200})
    offer = offer_of(Retrieval(), ctx)
    assert offer.units and offer.depth_share > 0
    runner = next(c for c in offer.candidates if c.path == "pkg/runner.py")
    assert "units run_all" in runner.reason and "ranked units" in runner.reason
    r = rendered(runner, Tier.FOCUSED, 600, engine.counter)
    assert "return handle_quarantined_charset(value)" in r.content
    assert "def run_all(value)" in r.content  # the outline names the function the unit is in
    numbers = [int(line.split("│")[0]) for line in r.content.splitlines() if line.split("│")[0].strip().isdigit()]
    assert numbers == sorted(numbers)

    result = engine.bundle(parse_bundle({"query": "quarantined charset handling", "budget": 1200}))
    assert result.total_tokens <= 1200
    assert "return handle_quarantined_charset(value)" in result.text


def test_a_working_file_without_a_cursor_shows_the_units_the_task_touches(make_engine) -> None:
    """Ensure that an open file without a cursor or edits shows the piece the task's words
    are in, in a short outline, not the whole long function."""
    engine = make_engine(FILES)
    ctx = context(engine, {"query": "quarantined charset", "open": [uri(engine, "pkg/runner.py")]})
    offer = offer_of(WorkingFiles(), ctx)
    (candidate,) = offer.candidates
    assert "the task's words are in run_all" in candidate.reason
    r = rendered(candidate, Tier.FOCUSED, 5000, engine.counter)
    assert "return handle_quarantined_charset(value)" in r.content
    assert "step_3 = prepare_3(value)" not in r.content  # the first piece is not the task's


def test_at_a_small_budget_an_open_file_shows_only_the_densest_lines_of_its_best_unit(make_engine) -> None:
    """Ensure that below MID_BUDGET_TOKENS an open file's best unit is shown by the few of
    its lines the task's words are in (here its signature: the agent has the file open, and
    the room goes to other files' units), and whole at a larger budget."""
    body = "".join(f"    step_{i} = prepare_{i}(value)\n" for i in range(30))
    files = {"pkg/rules.py": f"def quarantined_charset_rules(value):\n{body}    return value\n"}
    engine = make_engine(files)
    shown = {}
    for budget in (2000, 8000):
        request = {"query": "quarantined charset rules", "budget": budget, "open": [uri(engine, "pkg/rules.py")]}
        (candidate,) = offer_of(WorkingFiles(), context(engine, request)).candidates
        shown[budget] = rendered(candidate, Tier.FOCUSED, 5000, engine.counter).content
    assert "def quarantined_charset_rules(value):" in shown[2000] and "step_0 = prepare_0" in shown[2000]
    assert "step_29" not in shown[2000] and len(shown[2000]) < len(shown[8000]) / 2
    assert "step_29 = prepare_29(value)" in shown[8000]


def test_a_unit_shown_in_part_keeps_the_lines_its_cost_allows() -> None:
    unit = RankedUnit("/w/a.py", "a.py", CodeUnit(10, 39, "f", "definition", True), 1.0, ("f",), 300)
    assert unit.lines_within(80) == 8  # 30 lines * 80 / 300
    assert unit.lines_within(300) == 30 and unit.lines_within(1) == 3


def test_test_units_rank_low_unless_the_task_is_about_tests(make_engine) -> None:
    """Ensure that a test naming the task's words word for word ranks below the code, and
    above it when the task is about tests."""
    files = {
        **FILES,
        "tests/test_charset.py": "def test_quarantined_charset():\n    assert handle_quarantined_charset(1)\n",
    }
    engine = make_engine(files)

    def first_paths(query: str) -> list[str]:
        ctx = context(engine, {"query": query})
        units = best_units(ctx, [(r, ctx.workspace.files[r.abs_path]) for r in ctx.ranked])
        return list(dict.fromkeys(u.path for u in units))

    assert first_paths("quarantined charset handling")[0] == "pkg/runner.py"
    assert first_paths("tests for quarantined charset handling")[0] == "tests/test_charset.py"


def test_a_warm_start_ranks_units_from_the_cache_without_reading_text(make_engine) -> None:
    """Ensure that a second process over the same folder ranks units from its cache rows:
    with the file's text replaced on disk behind its back (no watcher), the units are still
    those indexed, which only the cache could know."""
    first = make_engine(FILES)
    root = first.roots[0]
    first.close()
    warm = Engine([root], {"index": {"watch": False}})
    try:
        warm.index()
        entry = warm.workspace.files[str((root / "pkg/runner.py").resolve())]
        assert entry.units_blob, "the cache row carried no units"
        indexed = entry.unit_postings
        (root / "pkg/runner.py").write_text("def replaced():\n    return 0\n")
        ctx = context(warm, {"query": "quarantined charset handling"})
        found = units_of(ctx.workspace, ctx.renders.units, entry)
        assert found is not None and indexed is not None
        assert found.units == indexed.units and len(found.units) > 2
    finally:
        warm.close()


def test_units_whose_cached_bytes_are_damaged_are_derived_from_the_text(make_engine) -> None:
    """Ensure that an entry whose units do not read back still ranks: its units come from
    its text, read through the gate, as for an editor buffer."""
    engine = make_engine(FILES)
    ctx = context(engine, {"query": "quarantined charset handling"})
    entry = ctx.workspace.files[str((engine.roots[0] / "pkg/runner.py").resolve())]
    damaged = dataclasses.replace(entry, units=b"\x00garbage")
    assert damaged.unit_postings is None
    found = units_of(ctx.workspace, UnitsCache(), damaged)
    assert found is not None
    assert found.units == entry.unit_postings.units  # type: ignore[union-attr]


def test_a_task_word_in_the_class_name_counts_for_its_methods_units(make_engine) -> None:
    """Ensure that a method whose body holds one task word ranks above a method elsewhere
    holding the same word when the task's other word names its class."""
    files = {
        "pkg/streams.py": textwrap.dedent(
            """\
            class Capture:
                def isolation(self):
                    return self.stderr


            class Runner:
                def isolation(self):
                    return self.stderr
            """
        ),
    }
    engine = make_engine(files)
    ctx = context(engine, {"query": "runner stderr"})
    units = best_units(ctx, [(r, ctx.workspace.files[r.abs_path]) for r in ctx.ranked])
    owners = [u.unit.owner for u in units]
    assert owners.index("Runner.isolation") < owners.index("Capture.isolation")
    assert "runner" in units[owners.index("Runner.isolation")].matched


def test_a_word_rare_among_names_but_common_in_bodies_weighs_as_little_as_in_bodies(make_engine) -> None:
    """Ensure that a task word every other body holds (`after`, named by one function only)
    does not outweigh the task's distinctive word (`blank`): units are bodies, and a word is
    weighed by the lower of its rarity among names and among units."""
    steps = "".join(
        f"\n\ndef step_{i}(before):\n    after = before + {i}\n    return after * after\n" for i in range(20)
    )
    files = {
        "pkg/steps.py": "def after_hook():\n    return None\n"
        + steps
        + "\n\ndef tidy(text):\n    blank = text.strip()\n    return blank or text\n",
    }
    engine = make_engine(files)
    ctx = context(engine, {"query": "blank line after"})
    units = best_units(ctx, [(r, ctx.workspace.files[r.abs_path]) for r in ctx.ranked])
    owners = [u.unit.owner for u in units]
    assert "tidy" in owners, owners
    assert all(owners.index("tidy") < owners.index(f"step_{i}") for i in range(20) if f"step_{i}" in owners)


def test_a_32k_bundle_ranks_units_of_the_twentieth_file(make_engine) -> None:
    """Ensure that a file the search ranks twentieth has its units ranked at 32K, not at 8K."""
    files = {f"pkg/mod_{i:02d}.py": f"def charset_{i}(value):\n    return value + {i}\n" for i in range(24)}
    engine = make_engine(files)
    paths = {}
    for budget in (8000, 32000):
        ctx = context(engine, {"query": "charset value", "budget": budget})
        ranked = [(r, ctx.workspace.files[r.abs_path]) for r in ctx.ranked]
        assert len(ranked) >= 20
        paths[budget] = {u.path for u in best_units(ctx, ranked)}
    assert len(paths[8000]) == 15 and len(paths[32000]) >= 20


def test_a_file_whose_code_alone_holds_the_task_words_has_its_units_shown(make_engine) -> None:
    """Ensure that a file the search ranking never finds (the task's words are only in a
    string in its body) is found by its code's words: retrieval offers it with a reason that
    says so, ranks its units, and a bundle shows the line; a test using the same words is
    not added, and no more than BODY_FILES such files are."""
    hint = "        return 'This is a command line tool; the mousetrap stops a double click start.'\n"
    files = {
        **FILES,
        "pkg/launcher.py": "def start_hint(shell):\n    if shell == 'explorer':\n" + hint + "    return ''\n",
        "tests/test_launcher.py": "def test_hint():\n    assert 'mousetrap double click' in start_hint('explorer')\n",
        **{f"pkg/more_{i}.py": f"def f_{i}():\n    return 'mousetrap'\n" for i in range(BODY_FILES + 2)},
    }
    engine = make_engine(files)
    query = "mousetrap double click"
    assert not any(h.path == "pkg/launcher.py" for h in engine.search(query))
    ctx = context(engine, {"query": query, "budget": 2000})
    offer = offer_of(Retrieval(), ctx)
    launcher = next(c for c in offer.candidates if c.path == "pkg/launcher.py")
    assert "found by the words in its bodies" in launcher.reason and "mousetrap" in launcher.reason
    assert launcher.id in {cid for cid, _ in offer.units}
    assert not any(c.path.startswith("tests/") for c in offer.candidates)
    assert len([c for c in offer.candidates if "found by the words in its bodies" in c.reason]) == BODY_FILES

    result = engine.bundle(parse_bundle({"query": query, "budget": 2000}))
    assert result.total_tokens <= 2000
    assert "the mousetrap stops a double click start" in result.text


def test_a_found_file_joins_only_if_one_of_its_units_could_be_shown() -> None:
    """Ensure that a file found by its code's words is kept only when one of its units is
    among the best units whose costs add up to the budget, and that the other found files'
    units leave the ranking with them (the search ranking's files keep all theirs)."""

    def unit(path: str, cost: int) -> RankedUnit:
        return RankedUnit(f"/ws/{path}", path, CodeUnit(1, 5, "f", "definition", True), 1.0, ("w",), cost)

    def found(path: str) -> tuple[RankedFile, IndexedFile]:
        return RankedFile(f"/ws/{path}", path, 0.0, 0.5, ()), cast(IndexedFile, None)

    units = [unit("a.py", 600), unit("near.py", 300), unit("a.py", 500), unit("far.py", 400), unit("b.py", 50)]
    kept, left = could_show([found("near.py"), found("far.py")], units, 1000)
    assert [r.path for r, _ in kept] == ["near.py"]
    assert [u.path for u in left] == ["a.py", "near.py", "a.py", "b.py"]
    kept, left = could_show([found("near.py"), found("far.py")], units, 2000)
    assert [r.path for r, _ in kept] == ["near.py", "far.py"] and left == units


def test_units_of_equal_score_rank_by_path_then_line() -> None:
    """Ensure that the ranking is best first and, among units scoring the same (the same
    code in two files of the same salience), ordered by path and then by line: a bundle is
    the same whatever order the files were read in."""
    code = "def alpha_reader():\n    return reader\n\n\ndef gamma_reader():\n    return reader\n"
    postings = unit_postings(outline_for("x.py", code.encode()), code)

    def read(path: str) -> tuple[UnitFile, FileUnits]:
        entry = IndexedFile("/ws", path, path, f"/ws/{path}", "python", len(code), 0, "h", 20, 6, 2, False, "")
        return UnitFile(entry, 1.0, {}), file_units(postings, entry)

    ranked = rank_units([read("b.py"), read("a.py")], "reader", {})
    assert len({u.score for u in ranked}) == 1  # four units alike: the order is the tie-break's
    assert [(u.path, u.unit.start) for u in ranked] == [("a.py", 1), ("a.py", 5), ("b.py", 1), ("b.py", 5)]


def test_a_pruned_outline_around_shown_units_keeps_what_they_call(make_engine) -> None:
    """Ensure that a file shown for its units keeps, in an outline too small for all its
    definitions, the definition of its own that the best unit calls (`create_result`,
    returned by the `handle` the task is about), and names why the file is there."""
    helpers = "\n\n".join(f"def helper_{i}(value):\n    return value + {i}\n" for i in range(40))
    files = {
        "pkg/edge.py": (
            "def handle(event):\n"
            "    request = convert_lambda_event(event)\n"
            "    return create_result(request)\n\n\n"
            f"{helpers}\n\n"
            "def create_result(response):\n    return {'status': response.status}\n"
        ),
    }
    engine = make_engine(files)
    ctx = context(engine, {"query": "convert lambda event handle", "budget": 2000})
    edge = next(c for c in offer_of(Retrieval(), ctx).candidates if c.path == "pkg/edge.py")
    r = rendered(edge, Tier.FOCUSED, 160, engine.counter)
    assert "convert_lambda_event(event)" in r.content  # the unit
    assert "def create_result(response)" in r.content  # what it calls, named
    assert "def helper_39" not in r.content  # the outline was pruned
    assert "names what they call: create_result" in edge.reason
