"""Tests for ctx_lsp/index/graph/: edges, imports, ranking, calls, updates."""

from __future__ import annotations

import tempfile
import textwrap
import threading
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctx_lsp import relevance
from ctx_lsp.config import Config
from ctx_lsp.index.graph import (
    ReferenceGraph,
    module_names,
    name_factor,
    push,
    reference_units,
    resolve_relative,
)
from ctx_lsp.index.graph import edges as edges_module
from ctx_lsp.index.graph import ranking as ranking_module
from ctx_lsp.index.graph.edges import WEIGHT_UNITS
from ctx_lsp.index.workspace import Workspace
from tests.conftest import write_tree


def _indexed(root: Path, files: dict[str, str]) -> tuple[Workspace, ReferenceGraph]:
    write_tree(root, {rel: textwrap.dedent(text) for rel, text in files.items()})
    config = Config()
    config.index.cache = False
    workspace = Workspace([root], config)
    graph = ReferenceGraph()
    workspace.subscribe(graph.update)
    workspace.index()
    return workspace, graph


def _abs(root: Path, rel: str) -> str:
    return str(root.resolve() / rel)


def _rebuilt(workspace: Workspace) -> ReferenceGraph:
    graph = ReferenceGraph()
    graph.update([], list(workspace.files.values()))
    return graph


# ---------------------------------------------------------------------------- pure parts


@pytest.mark.parametrize(
    ("rel_path", "names", "package"),
    [
        ("pkg/mod.py", ("pkg.mod",), "pkg"),
        ("pkg/__init__.py", ("pkg",), "pkg"),
        ("top.py", ("top",), ""),
        ("src/lib/thing.py", ("src.lib.thing", "lib.thing"), "src.lib"),
        ("pkg/stubs.pyi", ("pkg.stubs",), "pkg"),
        ("__init__.py", (), ""),
    ],
)
def test_module_names(rel_path: str, names: tuple[str, ...], package: str) -> None:
    """Ensure that files map to the dotted names Python imports them by, src layout included."""
    assert module_names(rel_path) == (names, package)


@pytest.mark.parametrize(
    ("module", "package", "expected"),
    [
        ("a.b", "x.y", "a.b"),
        (".", "x.y", "x.y"),
        (".mod", "x.y", "x.y.mod"),
        ("..mod", "x.y", "x.mod"),
        ("...", "x.y", ""),
        ("....mod", "x.y", None),
        (".mod", "", "mod"),
    ],
)
def test_resolve_relative(module: str, package: str, expected: str | None) -> None:
    """Ensure that relative imports climb one package per extra dot, and no further than the root."""
    assert resolve_relative(module, package) == expected


def test_name_factor_down_weights_common_and_private_names() -> None:
    """Ensure that specific names weigh more, private and common ones less, and names
    defined in too many files make no edges at all."""
    assert name_factor("get_queryset", 1) == 10.0
    assert name_factor("CharField", 1) == 10.0
    assert name_factor("save", 1) == 1.0
    assert name_factor("save", 6) == pytest.approx(0.1)
    assert name_factor("_helper", 1) == pytest.approx(0.1)
    assert name_factor("__init__", 1) == pytest.approx(0.1)
    assert name_factor("save", relevance.MAX_DEFINERS + 1) == 0.0
    assert name_factor("save", 0) == 0.0
    assert reference_units(4, 1.0) == 2 * WEIGHT_UNITS


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.lists(st.tuples(st.integers(0, 7), st.integers(1, 9)), max_size=4),
        min_size=1,
        max_size=8,
    ),
    st.integers(0, 7),
)
def test_push_approximates_pagerank(raw_edges: list[list[tuple[int, int]]], seed: int) -> None:
    """Ensure that forward push ends within its threshold of the exact (leaky) personalised
    PageRank of a random graph, computed by power iteration."""
    n = len(raw_edges)
    seed %= n
    rows = []
    for edges in raw_edges:
        out: dict[int, int] = {}
        for target, weight in edges:
            if target % n not in out:
                out[target % n] = weight
        total = sum(out.values())
        targets = tuple(sorted(out))
        rows.append((targets, tuple(out[t] / total for t in targets)))
    p, r = [0.0] * n, [0.0] * n
    r[seed] = 1.0
    push(rows, p, r, [seed], 1e-9, False)
    exact = [0.0] * n
    x = [0.0] * n
    x[seed] = 1.0
    for _ in range(400):
        nxt = [0.0] * n
        for u, (targets, probs) in enumerate(rows):
            exact[u] += (1 - relevance.DAMPING) * x[u]
            for v, q in zip(targets, probs):
                nxt[v] += relevance.DAMPING * x[u] * q
        x = nxt
    assert all(abs(a - b) < 1e-6 for a, b in zip(p, exact))
    assert all(abs(v) <= 1e-9 for v in r)


# ---------------------------------------------------------------------------- edges and ranks

HUB_WORKSPACE = {
    "core.py": """\
        def compute_total(items):
            return sum(items)


        class Widget:
            def render(self):
                return compute_total([1])
        """,
    "a.py": """\
        from core import compute_total, Widget

        def run_a():
            return compute_total([1]) + Widget().render()
        """,
    "b.py": """\
        from core import compute_total

        def run_b():
            return compute_total([2])
        """,
    "c.py": """\
        import core

        def run_c():
            return core.compute_total([3])
        """,
    "lonely.py": """\
        def unused_thing():
            return 1
        """,
    "README.md": "# Not code\n\nMentions compute_total.\n",
}


def test_referenced_file_outranks_isolated_one(tmp_path: Path) -> None:
    """Ensure that a file used by many ranks first (score 1) and an isolated one lower."""
    _, graph = _indexed(tmp_path, HUB_WORKSPACE)
    result = graph.rank({})
    assert result.files[0].path == "core.py"
    assert result.score(_abs(tmp_path, "core.py")) == 1.0
    assert result.score(_abs(tmp_path, "lonely.py")) < result.score(_abs(tmp_path, "core.py"))
    assert all(0.0 <= s <= 1.0 for s in result.scores.values())
    assert _abs(tmp_path, "README.md") not in result.scores
    assert len(graph) == 5


def test_edges_weigh_uses_and_imports(tmp_path: Path) -> None:
    """Ensure that an edge weighs sqrt(uses) x the name factor, plus the import weight,
    and that no file gets an edge to itself."""
    _, graph = _indexed(tmp_path, HUB_WORKSPACE)
    a, b, core = (_abs(tmp_path, f) for f in ("a.py", "b.py", "core.py"))
    # b uses compute_total once (a specific name: x10) and imports core
    assert graph.edge_weight(b, core) == pytest.approx(10.0 + relevance.IMPORT_EDGE_WEIGHT)
    # a uses compute_total (x10), Widget and render (x1 each)
    assert graph.edge_weight(a, core) == pytest.approx(10.0 + 1.0 + 1.0 + relevance.IMPORT_EDGE_WEIGHT)
    assert graph.edge_weight(core, core) == 0.0
    assert graph.edge_weight(core, a) == 0.0


def test_personalisation_moves_rank_towards_working_files(tmp_path: Path) -> None:
    """Ensure that a working file's neighbours outrank a globally stronger hub elsewhere."""
    files = {
        "a_core.py": "def alpha_helper():\n    return 1\n",
        "a_user.py": "from a_core import alpha_helper\n\ndef use_a():\n    return alpha_helper()\n",
        "b_core.py": "def beta_helper():\n    return 2\n",
    }
    for i in range(4):
        files[f"b_user{i}.py"] = "from b_core import beta_helper\n\ndef use_b():\n    return beta_helper()\n"
    _, graph = _indexed(tmp_path, files)
    a_core, b_core, a_user = (_abs(tmp_path, f) for f in ("a_core.py", "b_core.py", "a_user.py"))
    plain = graph.rank({})
    assert plain.score(b_core) > plain.score(a_core)
    personal = graph.rank({a_user: 1.0})
    assert personal.score(a_user) == 1.0
    assert personal.score(a_core) == 1.0
    assert personal.score(a_core) > personal.score(b_core)
    assert personal.working == {a_user: 1.0}


def test_mentioned_identifier_boosts_its_definer(tmp_path: Path) -> None:
    """Ensure that a file defining an identifier the task mentions rises to the top, says
    so in `mentioned_in`, and that the mentioned definition leads its file."""
    files = dict(HUB_WORKSPACE)
    files["lonely.py"] = "def unused_thing():\n    return 1\n\n\ndef special_helper():\n    return 2\n"
    _, graph = _indexed(tmp_path, files)
    lonely = _abs(tmp_path, "lonely.py")
    assert graph.rank({}).files[0].abs_path != lonely
    result = graph.rank({}, ["special_helper"])
    assert result.files[0].abs_path == lonely
    assert result.mentioned_in == {lonely: ("special_helper",)}
    top_definition = next(d for d in result.definitions if d.abs_path == lonely)
    assert top_definition.qualname == "special_helper"
    assert top_definition.score == result.score(lonely)


def test_mentioned_module_name_seeds_the_module(tmp_path: Path) -> None:
    """Ensure that mentioning a module's name (`expressions`) seeds that module."""
    _, graph = _indexed(tmp_path, {"expressions.py": "X = 1\n", "other.py": "Y = 2\n"})
    assert graph.seeds({}, ["expressions"]) == {_abs(tmp_path, "expressions.py"): 1.0}


def test_definitions_ranked_by_use(tmp_path: Path) -> None:
    """Ensure that a file's definitions are ordered by how much others use them, and that
    what a working file uses comes first."""
    files = {
        "lib.py": """\
            def popular_function():
                return 1


            def rarely_used():
                return 2


            def never_used():
                return 3
            """,
        "u1.py": "from lib import popular_function\n\ndef f():\n    return popular_function()\n",
        "u2.py": "from lib import popular_function\n\ndef g():\n    return popular_function()\n",
        "u3.py": "from lib import rarely_used\n\ndef h():\n    return rarely_used()\n",
    }
    _, graph = _indexed(tmp_path, files)
    lib = _abs(tmp_path, "lib.py")
    plain = [d.qualname for d in graph.rank({}).definitions if d.abs_path == lib]
    assert plain == ["popular_function", "rarely_used", "never_used"]
    result = graph.rank({_abs(tmp_path, "u3.py"): 1.0})
    focused = [d for d in result.definitions if d.abs_path == lib]
    assert focused[0].qualname == "rarely_used"
    assert focused[-1].score == pytest.approx(result.score(lib) * relevance.UNREFERENCED_DEFINITION_SHARE)
    assert graph.rank_definitions(result, [lib]) == tuple(focused)


def test_rank_is_deterministic(tmp_path: Path) -> None:
    """Ensure that the same request on the same index gives the same result, ties by path."""
    files = {f"m{i}.py": f"def only_here_{i}():\n    return {i}\n" for i in range(6)}
    workspace, graph = _indexed(tmp_path, files)
    request = ({_abs(tmp_path, "m3.py"): 1.0}, ["only_here_1"])
    first = graph.rank(*request)
    for again in (graph.rank(*request), _rebuilt(workspace).rank(*request)):
        assert (again.files, again.scores, again.definitions) == (first.files, first.scores, first.definitions)
    tied = [fr.path for fr in graph.rank({}).files]
    assert tied == sorted(tied)  # isolated files all score the same


def test_empty_graph_ranks_nothing() -> None:
    """Ensure that ranking an empty graph returns an empty result, not an error."""
    result = ReferenceGraph().rank({"/nowhere.py": 1.0}, ["x"])
    assert result.files == () and result.scores == {} and result.definitions == ()


# ---------------------------------------------------------------------------- imports

IMPORT_WORKSPACE = {
    "pkg/__init__.py": "from .core import engine_start\n",
    "pkg/core.py": "def engine_start():\n    return 1\n",
    "pkg/sub/__init__.py": "",
    "pkg/sub/leaf.py": "from .. import core\nfrom ..core import engine_start\nfrom . import sibling\n",
    "pkg/sub/sibling.py": "VALUE = 1\n",
    "app.py": (
        "import pkg\nimport pkg.sub.leaf\nfrom pkg import core\nfrom pkg.sub import sibling as sib\n"
        "import missing.module\n"
    ),
    "src/lib/thing.py": "THING = 1\n",
    "uses_src.py": "from lib.thing import THING\nfrom lib import thing\n",
}


def test_imports_resolve_absolute_relative_and_packages(tmp_path: Path) -> None:
    """Ensure that absolute, relative, submodule and src-layout imports resolve to files,
    with `__init__.py` standing for its package, and unknown modules to nothing."""
    _, graph = _indexed(tmp_path, IMPORT_WORKSPACE)
    f = lambda rel: _abs(tmp_path, rel)  # noqa: E731
    assert graph.imports_of(f("app.py")) == sorted(
        [f("pkg/__init__.py"), f("pkg/sub/leaf.py"), f("pkg/core.py"), f("pkg/sub/sibling.py")]
    )
    assert graph.imports_of(f("pkg/sub/leaf.py")) == sorted([f("pkg/core.py"), f("pkg/sub/sibling.py")])
    assert graph.imports_of(f("pkg/__init__.py")) == [f("pkg/core.py")]
    assert graph.imports_of(f("uses_src.py")) == [f("src/lib/thing.py")]
    assert graph.edge_weight(f("app.py"), f("pkg/__init__.py")) == relevance.IMPORT_EDGE_WEIGHT


def test_imports_follow_files_that_come_and_go(tmp_path: Path) -> None:
    """Ensure that an import of a missing module resolves once the module appears, and
    falls back to its package when the module goes again."""
    workspace, graph = _indexed(tmp_path, IMPORT_WORKSPACE)
    app, target = _abs(tmp_path, "app.py"), tmp_path / "missing" / "module.py"
    assert _abs(tmp_path, "missing/module.py") not in graph.imports_of(app)
    write_tree(tmp_path, {"missing/__init__.py": "", "missing/module.py": "X = 1\n"})
    workspace.refresh([tmp_path / "missing"])
    assert _abs(tmp_path, "missing/module.py") in graph.imports_of(app)
    target.unlink()
    workspace.refresh([target])
    assert _abs(tmp_path, "missing/module.py") not in graph.imports_of(app)
    assert _abs(tmp_path, "missing/__init__.py") in graph.imports_of(app)
    assert graph.snapshot() == _rebuilt(workspace).snapshot()


# ---------------------------------------------------------------------------- calls

CALLS_WORKSPACE = {
    "util.py": "def shared_step():\n    return 1\n\n\ndef local_only():\n    return shared_step()\n",
    "models.py": """\
        from util import shared_step


        class Model:
            def save(self):
                self.validate()
                return shared_step()

            def validate(self):
                return True
        """,
    "runner.py": """\
        import models


        def run():
            m = models.Model()
            m.save()
            return helper()


        def helper():
            return 2
        """,
    "far.py": "def save():\n    return 0\n",
}


def test_callees_resolve_same_file_then_imports(tmp_path: Path) -> None:
    """Ensure that calls resolve to the caller's own file first, then its imports."""
    _, graph = _indexed(tmp_path, CALLS_WORKSPACE)
    util, models, runner = (_abs(tmp_path, f) for f in ("util.py", "models.py", "runner.py"))
    assert graph.callees_of(models, "Model.save") == [(util, "shared_step"), (models, "Model.validate")]
    # `Model` and `save` come through `import models`; `helper` is runner's own
    assert graph.callees_of(runner, "run") == [(models, "Model"), (runner, "helper"), (models, "Model.save")]
    assert graph.callees_of(util, "local_only") == [(util, "shared_step")]
    assert graph.callees_of(util, "nothing") == []


def test_callers_of_name_and_qualname(tmp_path: Path) -> None:
    """Ensure that callers are the symbols whose calls resolve to the definition."""
    _, graph = _indexed(tmp_path, CALLS_WORKSPACE)
    util, models, runner, far = (_abs(tmp_path, f) for f in ("util.py", "models.py", "runner.py", "far.py"))
    assert graph.callers_of("shared_step") == [(models, "Model.save"), (util, "local_only")]
    assert graph.callers_of("Model.validate") == [(models, "Model.save")]
    assert graph.callers_of("Model.save") == [(runner, "run")]
    # far.py's top-level save is not what runner reaches through `import models`
    assert graph.callers_of("save", far) == []
    assert graph.callers_of("save") == [(runner, "run")]
    assert graph.callers_of("no_such_name") == []


# ---------------------------------------------------------------------------- updates


def test_updates_wait_for_a_query(tmp_path: Path) -> None:
    """Ensure that `update` only queues, and the next query applies the queue."""
    workspace, graph = _indexed(tmp_path, {"a.py": "X = 1\n"})
    assert graph._edges.facts == {}  # nothing built until asked
    assert len(graph) == 1
    write_tree(tmp_path, {"b.py": "Y = 2\n"})
    workspace.refresh([tmp_path / "b.py"])
    assert _abs(tmp_path, "b.py") not in graph._edges.facts
    assert _abs(tmp_path, "b.py") in graph


def test_editor_buffer_updates_edges(tmp_path: Path) -> None:
    """Ensure that an edited buffer changes the graph, and that the rank after the edit
    equals a rebuilt graph's rank."""
    workspace, graph = _indexed(tmp_path, HUB_WORKSPACE)
    lonely, core = _abs(tmp_path, "lonely.py"), _abs(tmp_path, "core.py")
    graph.rank({})
    assert graph.edge_weight(lonely, core) == 0.0
    workspace.change_document(lonely, "from core import compute_total\nX = compute_total([])\n", 1)
    assert graph.edge_weight(lonely, core) > 0.0
    ours, rebuilt = graph.rank({lonely: 1.0}), _rebuilt(workspace).rank({lonely: 1.0})
    assert [fr.abs_path for fr in ours.files] == [fr.abs_path for fr in rebuilt.files]
    assert all(ours.scores[f] == pytest.approx(v, abs=0.02) for f, v in rebuilt.scores.items())


def test_concurrent_queries_and_updates(tmp_path: Path) -> None:
    """Ensure that queries from worker threads while the index changes neither fail nor
    leave the graph different from a rebuild."""
    workspace, graph = _indexed(tmp_path, HUB_WORKSPACE)
    errors: list[BaseException] = []

    def query() -> None:
        try:
            for _ in range(30):
                graph.rank({_abs(tmp_path, "a.py"): 1.0}, ["compute_total"])
                graph.callers_of("compute_total")
        except BaseException as err:
            errors.append(err)

    threads = [threading.Thread(target=query) for _ in range(3)]
    for t in threads:
        t.start()
    for i in range(30):
        text = f"from core import compute_total\nV{i} = compute_total([{i}])\n"
        workspace.change_document(_abs(tmp_path, "b.py"), text, i)
    for t in threads:
        t.join()
    assert not errors
    assert graph.snapshot() == _rebuilt(workspace).snapshot()


NAMES = ["alpha_value", "beta", "Gamma", "_delta", "epsilon_thing", "zeta"]
PATHS = ["m0.py", "m1.py", "pkg/__init__.py", "pkg/m2.py", "pkg/sub/m3.py", "src/lib/m4.py"]
IMPORTS = [
    "import m0",
    "import pkg",
    "from pkg import m2",
    "import pkg.sub.m3",
    "from lib.m4 import zeta",
    "from . import m2",
    "from .. import m2",
    "from .sub import m3",
    "import nowhere",
]


@st.composite
def sources(draw: st.DrawFn) -> str:
    """A small module: some imports, definitions of shared names, and calls of them."""
    lines = draw(st.lists(st.sampled_from(IMPORTS), unique=True, max_size=3))
    for name in draw(st.lists(st.sampled_from(NAMES), unique=True, max_size=3)):
        calls = draw(st.lists(st.sampled_from(NAMES), max_size=3))
        body = " + ".join(f"{c}()" for c in calls) or "None"
        if name[0].isupper():
            method = draw(st.sampled_from(NAMES)).lower()
            lines.append(f"class {name}:\n    def {method}(self):\n        return {body}")
        else:
            lines.append(f"def {name}():\n    return {body}")
    if draw(st.booleans()):
        lines.append(f"{draw(st.sampled_from(NAMES)).upper()} = {draw(st.sampled_from(NAMES))}")
    return "\n\n".join(lines) + "\n"


edits = st.lists(st.tuples(st.sampled_from(PATHS), st.one_of(st.none(), sources()), st.booleans()), max_size=6)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.sampled_from(PATHS), sources(), min_size=1), edits)
def test_incremental_updates_equal_a_rebuild(initial: dict[str, str], changes: list) -> None:
    """Ensure that after any sequence of file edits, additions and deletions (some ranked
    in between, which corrects the global rank incrementally), the graph equals one built
    from scratch, and ranks the same."""
    # Low thresholds so that small workspaces cross them (re-weighing every edge of a name),
    # patched where the graph reads them.
    with (
        mock.patch.multiple(edges_module, COMMON_NAME_DEFINERS=1, MAX_DEFINERS=3),
        mock.patch.object(ranking_module, "MAX_DEFINERS", 3),
        tempfile.TemporaryDirectory() as tmp,
    ):
        root = Path(tmp)
        workspace, graph = _indexed(root, initial)
        graph.rank({})
        for rel, content, rank_now in changes:
            path = root / rel
            if content is None:
                path.unlink(missing_ok=True)
            else:
                write_tree(root, {rel: content})
            workspace.refresh([path])
            if rank_now:
                graph.rank({str(path.resolve()): 1.0})
        rebuilt = _rebuilt(workspace)
        assert graph.snapshot() == rebuilt.snapshot()
        personal = {_abs(root, rel): 1.0 for rel in PATHS[:2]}
        ours, theirs = graph.rank(personal, ["beta"]), rebuilt.rank(personal, ["beta"])
        assert ours.scores.keys() == theirs.scores.keys()
        assert all(ours.scores[f] == pytest.approx(v, abs=0.02) for f, v in theirs.scores.items())
        for name in NAMES:
            assert graph.callers_of(name) == rebuilt.callers_of(name)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.sampled_from(PATHS), sources(), min_size=2))
def test_a_build_leaves_the_change_tables_its_facts_give(initial: dict[str, str]) -> None:
    """Ensure that the tables a build leaves to a pause (every name's users) and those
    it computes itself (factors, the weight units of each name's uses) are the ones
    derived from its facts."""
    with tempfile.TemporaryDirectory() as tmp:
        _, graph = _indexed(Path(tmp), initial)
        graph.warm_up()
        built = graph._edges
        assert not built.prepared
        graph.prepare_for_changes()
        users: dict[str, dict[str, int]] = {}
        use_units: dict[str, int] = {}
        for f, ff in built.facts.items():
            for name, count in zip(ff.used, ff.uses):
                users.setdefault(name, {})[f] = count
                use_units[name] = use_units.get(name, 0) + edges_module.sqrt_units(count)
        factors = {n: k for n, fs in built.definers.items() if (k := edges_module.name_factor(n, len(fs)))}
        assert built.prepared
        assert (built._users, built._use_units, built._factors) == (users, use_units, factors)


def test_imports_prefer_their_own_folder(tmp_path: Path) -> None:
    """Ensure that in a multi-root workspace an import resolves to the module of its own
    folder when both folders have one, and across folders otherwise."""
    write_tree(tmp_path / "one", {"util.py": "X = 1\n", "app.py": "import util\nimport shared\n"})
    write_tree(tmp_path / "two", {"util.py": "Y = 2\n", "shared.py": "Z = 3\n"})
    config = Config()
    config.index.cache = False
    workspace = Workspace([tmp_path / "one", tmp_path / "two"], config)
    graph = ReferenceGraph()
    workspace.subscribe(graph.update)
    workspace.index()
    app = _abs(tmp_path, "one/app.py")
    assert graph.imports_of(app) == [_abs(tmp_path, "one/util.py"), _abs(tmp_path, "two/shared.py")]
    assert [fr.path for fr in graph.rank({app: 1.0}).files][:1] == ["one/app.py"]


def test_warm_up_builds_the_global_rank(tmp_path: Path) -> None:
    """Ensure that `warm_up` leaves nothing for the first request to build."""
    _, graph = _indexed(tmp_path, HUB_WORKSPACE)
    graph.warm_up()
    assert graph.global_visits > 0
    graph.rank({})
    assert graph.global_visits == 0
    ReferenceGraph().warm_up()  # an empty graph too
