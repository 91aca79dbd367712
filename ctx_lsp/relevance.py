"""The relevance knobs: every number the development evaluation tunes, in one place.

Each knob says what it does, why it has its value, and — where one exists — the
measurement behind it (`benchmarks/eval/`, recall in % over 180 instances per mode from
click, jinja and attrs; "fn@8K" is function recall at an 8,000-token budget). Change a
knob here, re-run the evaluation, and record the new numbers next to it: a knob without
its measurement is a guess.

Structural limits that are not tuned for relevance (file sizes, protocol caps, cache
sizes) stay next to the code they bound. Budget *shares* per contributor are policy, not
relevance, and live in `config.py`'s context window types.

This module is a leaf: plain constants, no imports from the package.
"""

from __future__ import annotations

# ---------------------------------------------------------------- reference graph (index/graph/)
# All set when the graph was written (commit 6e0fc2c) and unchanged since; none has been
# swept with `benchmarks/eval/` yet. Each says where its value comes from: Aider's repo map,
# networkx, or `benchmarks/graph_bench.py` on Django.

IMPORT_EDGE_WEIGHT = 4.0
"""An import weighs as much as one plain name used 16 times (sqrt(16)): importing a module
is an explicit, unambiguous dependency, unlike a name that several files may define."""
SPECIFIC_NAME_MIN_CHARS = 8
"""Characters (leading underscores aside) from which a snake_case or CamelCase name counts
as specific (`SPECIFIC_NAME_FACTOR`); Aider's repo map uses the same length."""
SPECIFIC_NAME_FACTOR = 10.0
"""Long snake_case or CamelCase names (`get_queryset`, `CharField`) rarely collide by
chance, so a use is strong evidence of a dependency (Aider's repo map does the same)."""
PRIVATE_NAME_FACTOR = 0.1
"""`_names` are implementation details; a use from another file says little about what
the user of the name needs to see (Aider's factor)."""
COMMON_NAME_DEFINERS = 5
"""Files defining a name beyond which it is common (`COMMON_NAME_FACTOR`; Aider's threshold)."""
COMMON_NAME_FACTOR = 0.1
"""A name defined in more than 5 files (`get`, `save`) could mean any of them, so each of
its edges counts a tenth (Aider's threshold and factor)."""
MAX_DEFINERS = 25
"""A name defined in more than 25 files (`__init__`, `Migration`, `urlpatterns` in
Django) says nothing about which one is meant; it makes no edges, and mentioning it seeds
nothing. This also bounds the work of one update: a definition touches at most
25 x (files using the name) edges."""
DAMPING = 0.85
"""Probability that the walk follows an edge rather than jumping (networkx's default,
which Aider uses)."""
PERSONAL_SHARE = 0.8
"""Share of the jumps that go to the request's seeds; the rest go to any file. The global
share keeps files far from the seeds ordered by how much the repository uses them."""
MENTIONED_SHARE = 0.5
"""Share of the seed jumps that go to files defining mentioned identifiers when there are
working files too; either kind alone takes them all."""
GLOBAL_TOLERANCE = 1e-2
"""Residual the global push may leave per file, in units of one file's own jump mass (1).
The global part orders the tail, so 1 % of an ordinary file's mass is plenty, and it keeps
the correction after an edit to ~10,000 edge visits on Django (a few ms)."""
PERSONAL_TOLERANCE = 5e-5
"""Forward-push threshold of the personal part per out-edge of the pushed file (the seeds'
jump mass is 1): the work is at most 1 / ((1 - DAMPING) x 5e-5) = 133,000 edge visits and
in practice ~10,000 on Django. In a code graph most walks soon reach hub modules (settings,
fields), so much mass is still unpushed when the threshold stops the push; it is spread as
the global walk spreads, which on Django puts 19 of the exact top 20 files in the top 20
(benchmarks/graph_bench.py compares it with 1e-4, 2e-5 and 1e-5)."""
FILES_LISTED = 200
"""Files `RankResult.files` lists (every file has a score in `RankResult.scores`). A map
under any budget shows far fewer (the map's 20 % of a 32K budget holds a few dozen file
outlines), and building 3,000 result objects per request would cost ~2 ms."""
DEFINITION_FILES = 20
"""Files whose definitions `rank` scores (`rank_definitions` scores others on demand):
about what an 8K-token bundle's map shows."""
DEFINITIONS_PER_FILE = 20
"""Definitions `rank` keeps per file, best first. A focused section shows the bodies of a
few; the hub files a request ranks first define hundreds (Django's fields/__init__.py:
~400), and listing them all would cost more per request than ranking the files."""
WORKING_REFERENCE_FACTOR = 50.0
"""A definition the working files use counts as much as 50 uses from elsewhere: what the
code being edited calls is what the agent must see (Aider weighs edges from the files in
the chat by 50 for the same reason)."""
UNREFERENCED_DEFINITION_SHARE = 0.05
"""A definition nobody uses still scores 5 % of its file's score: it stays ordered by its
file instead of dropping to zero with every other unused definition."""
MAX_CALLEE_DEFINERS = 3
"""A call that neither its file nor the files it imports define is matched against every
definition of the name only if there are at most three: beyond that it is a guess."""


# ---------------------------------------------------------------- lexical search (index/search.py)

BM25_K1 = 1.2
"""Term-frequency saturation: the textbook value; symbol documents are short, so it matters little."""
BM25_B = 0.75
"""Length normalisation: the textbook value."""
NAME_BOOST = 3
"""A term in a symbol's own name counts three times: names say what code is about."""
PATH_BOOST = 2
"""A term in a file's path (module and package names) counts twice for file documents."""


# ---------------------------------------------------------------- retrieval (contributors/retrieval.py)

SEARCH_HITS = 300
"""Symbol hits read per request; enough to cover ~40 distinct files on large repos."""
MAX_CANDIDATE_FILES = 40
"""Files offered: beyond ~40, lower-ranked files never fit even a 32K budget as outlines."""
EXTRA_HIT_WEIGHT = 0.3
"""Each further matching symbol in a file adds 30 % of its score: several matches beat one."""
MAX_EXTRA_HITS = 3
"""At most three further matches count: a file that repeats a word everywhere is not three times as relevant."""
TEST_FILE_FACTOR = 0.15
"""Tests match task words as well as the code they test; unless the task mentions tests, prefer
the code (issue 9: "tests only when the task concerns tests, or weighted far down"). Was 0.5
in session 1, when tests took 14–26 % of 32K bundles; 0.35 was part of the session-2 change
set that took cold fn@8K from 68.8 to 80.3. 0.35 → 0.15 (with the map's factor, session 6):
cold fn 68.5/81.6 → 68.6/81.9, open fn 50.7/77.2 → 50.7/78.3, line unchanged but open@2K
6.3 → 5.8."""
GRAPH_BLEND = 0.35
"""Share of a file's salience that comes from its personalised graph rank. Blending 60 % was
worse at 2K (measured in session 1); the graph's main use is the codebase map."""
FOCUS_SYMBOLS = 10
"""A hit file's matching symbols kept first when its outline is pruned (was 3–5 in session 1:
keeping 10 lifted fn@2K cold 38 → 44, open 15 → 21 together with the map's ranked definitions)."""
BODY_SYMBOLS = 3
"""A hit file at tier 2 shows the bodies of its best three matching symbols; its other
matches keep their signatures first in the outline (NAMED_HIT_RANK). Showing all ten
bodies took the depth room of one file and cost cold fn@2K 69 → 55."""
MID_BUDGET_TOKENS = 6000
"""From this budget on, bodies win over breadth a little more: 5 bodies per hit file and
0.8 of retrieval's allocation before breadth (measured separately, cold 2K/8K: 5 bodies
fn 64.0/85.0 line 13.9/34.9; depth 0.8 fn 65.2/86.2 line 17.4/32.5; vs 3 bodies at 0.6
fn 68.5/85.8 line 14.6/30.5 — both cost at 2K, both gain lines at 8K)."""
MID_BUDGET_BODY_SYMBOLS = 5
MID_BUDGET_DEPTH_SHARE = 0.8
LARGE_BUDGET_TOKENS = 16_000
"""From this budget on, a hit file's tier 2 shows the bodies of all its FOCUS_SYMBOLS hits:
there is room, and three bodies cost line recall at 32K (50.2 → 40.2, cold)."""
EXCERPT_LINES_BEFORE = 3
"""An excerpt (index/excerpts.py) opens this many lines above a line holding a task word…"""
EXCERPT_LINES_AFTER = 12
"""…and runs this many below it: a statement and what it leads to. 2 before and 6 after,
with EXCERPT_SHARE 0.4: cold line@8K 45.3, fn 80.9; open fn@8K 75.9 (session 5)."""
EXCERPT_FILES = 3
"""Retrieval's best files that offer excerpts (the files bodies go to first, MAX_DEPTH_FILES).
Every file: cold fn/line@8K 81.4/44.9, ~25 ms more per 8K bundle on Django than without
excerpts (p50 ~215 vs ~185 ms, 10 new queries, one warm engine); three: 81.6/44.2 and no
measurable cost (open mode unchanged, 76.7/25.8)."""
MAX_EXCERPTS = 12
"""Excerpts offered per file, best first; the rendering keeps as many as its share allows."""
EXCERPT_SHARE = 0.25
"""A focused section's excerpts take at most this share of its cap, besides its bodies;
the rest is for the outline that names everything else. Measured (seed 0, 2K/8K) against
no excerpts: cold fn 69.0/83.5 → 67.3/81.4, line 15.3/43.3 → 15.2/44.9; open fn 49.4/76.1
→ 49.4/76.7, line 6.3/25.8 → 6.3/25.8. 0.4: cold fn@8K 81.3, line 44.3. Capping bodies
too (bodies and excerpts within 0.6 of the cap) cost lines: cold line@8K 42.1."""
NAMED_HIT_RANK = 1.5
"""Outline rank of a hit symbol whose body is not shown: above any graph rank (≤ 1)."""
DEFINITIONS_RANKED = 20
"""Definitions per file ranked by the graph, kept after the matching symbols."""


# ---------------------------------------------------------------- code units (code/units.py, unit_ranking.py)
# Issue 22: the room for code goes to the best units across the task's best files, not to
# whole bodies of the best three files. Measured in session 10 on a development subset, 20
# instances per mode per repository (seed 0): Python = click + jinja + attrs, "langs" =
# hono + cobra + clap; "cold fn/line 2K/8K" are function and line recall in %. From
# commit 694ebaf (bodies and excerpts) to units with the values below, Python cold line
# 12.8/35.4/59.1 -> 33.1/53.6/71.9 at 2K/8K/32K, open 6.0/21.2/50.1 -> 10.1/36.5/67.6.
# Differences under ~3 points are noise at this size (one instance is 1.7 to 2.5 points).

UNIT_FILES = 15
"""Files of the search ranking whose units are ranked… 30: Python cold line@8K/32K
53.6/72.5 against 53.6/71.9, langs 67.4/85.0 against 66.7/85.5 (unchanged). Ranking reads
no text (units' postings are indexed), so no cap on their lines: the 12,000-line cap that
text reading needed changed nothing on Python (20 instances a mode, 2K/8K/32K, identical)."""
UNIT_FILES_LARGE_BUDGET = 40
"""…and from LARGE_BUDGET_TOKENS on, this many (every file retrieval offers): at 32K the
units of 15 files run out and the rest went to outlines, while the changed lines sat in
a file ranked 16th–40th (clap `e426f4e`: `env/shells.rs`, whose `Bash` script the task is
about). 32K line recall, 15 -> 40, languages (40 instances a mode each): TypeScript cold
88.1 -> 90.2, open 67.0 -> 70.2; Go cold 90.8 -> 87.2, open 82.1 -> 78.3; Rust cold 69.4 ->
74.9, open 46.0 -> 49.0 (function recall unchanged but Rust open 81.8 -> 77.9)."""
BODY_FILES = 8
"""Files found by the words in their code (the body-terms index, `index/body_terms.py`) and
not among the files retrieval offers: their units are ranked beside those of the search
ranking's best files. The search ranking reads names, signatures and docstrings, so a file
whose only mention of the task's words is in its bodies (a template string, a package
constant, a flag's help) was never ranked. Measured as a prototype against `e3e59fa`
(same instances, 2K/8K): Python cold line 35.7/59.9 -> 36.4/65.3, function 69.3/86.8 ->
70.0/87.6; TypeScript open function 69.8/85.4 -> 74.5/89.6; Go open line 19.4/49.9 ->
25.4/55.3, function at 2K 57.2 -> 66.9; Go cold line at 2K 30.4 -> 26.5. Built (`a4995ae`),
5 -> 8 files at 2K/8K (languages, 40 instances a mode; 2K unchanged): 8K line cold
TypeScript 82.1 -> 82.1, Go 67.6 -> 66.8, Rust 51.3 -> 56.7; open Go 54.9 -> 56.7; function
Go cold 93.1 -> 94.9, open 92.5 -> 92.5. 12 files: 8K line Rust cold 51.5, TypeScript cold
function 95.6."""
BODY_FILE_PRIOR = 0.5
"""Such a file's salience (its units' file prior, its candidate's score): this times its body
score over the best body score. Below the search ranking's best files (1.0): its words are
only in its code, which says less about what it is than its names do. With 8 files: 0.3
changed next to nothing (2K/8K line within 1 point in every cell); 0.8 (5 files) lost
everywhere (Rust cold line@2K 21.1 -> 18.4, function 53.3 -> 48.5; TypeScript open line
27.9/55.7 -> 25.3/51.7)."""
BODY_SEARCH_HITS = 80
"""Body documents read from the index to find BODY_FILES: the first are often files the
search ranking already has, or tests."""
BODY_BM25_K1 = 1.2
"""Term-frequency saturation over a file's code words: the textbook value."""
BODY_BM25_B = 0.0
"""No length normalisation over files: a long file that uses a rare word is as likely to be
where a change lies as a short one."""
UNIT_BM25_K1 = 1.2
"""Term-frequency saturation over a unit's text: the textbook value."""
UNIT_BM25_B = 0.75
"""Length normalisation over units: the textbook value (units are 1–40 lines). 0.4:
Python cold fn 70.9/86.1 line 27.4/51.2 against 68.1/86.3, 28.2/53.1 (unchanged)."""
UNIT_CHARS_PER_TERM = 8.0
"""A unit's length in terms, estimated from its characters, indentation included
(identifiers split into parts run ~6 characters a term with their punctuation, and
indentation adds about a third): splitting every line of 15 files into terms to learn
their lengths would cost more than ranking them."""
UNIT_NAME_WEIGHT = 3.0
"""A task word in the name of the definition a unit begins counts as three occurrences in
its text (BM25F's field weight; NAME_BOOST for symbol documents)."""
UNIT_PATH_WEIGHT = 0.5
"""A task word in the file's path counts half an occurrence in each of its units that
holds a task word itself: it says which file, not which lines (a unit matched by the path
alone is not ranked), and the file's prior already holds it."""
UNIT_PRIOR_FLOOR = 0.3
"""A unit's score is its BM25F times (floor + (1 - floor) x its file's salience): words
decide within a file and between files of similar salience; a file the ranking puts far
down needs far better words. 0.6: Python cold fn 65.0/86.1 line 27.7/54.5 (unchanged)."""
UNIT_CONTAINER_WEIGHT = 0.5
"""A task's word in the name of the class a unit's definition is in counts this much for
the unit (as the path's words do, only for units holding a task word themselves): "test
runner opens stderr…" is about `CliRunner.isolation`, whose body says `stderr` but not
`runner`. Against 0 (session 11, main 93f82d7, seed 0; Python 60 per mode per repository,
2K/8K): Python cold fn 67.0/86.4 -> 67.8/85.9, line 35.0/57.2 -> 35.9/60.0; open fn
53.5/82.5 -> 54.0/81.5, line 19.8/41.3 -> 20.0/41.0. TypeScript/Go/Rust 40 per mode,
2K/8K/32K: cold fn 68.6/86.8/95.0 -> 68.3/86.8/95.0, line 35.4/65.0/82.9 -> 35.8/65.0/82.9;
open fn 57.1/75.6/90.0 -> 56.6/75.6/90.9, line 21.4/40.3/64.9 -> 21.3/41.3/65.4.
Tried beside it and left out (same runs): BM25 times the idf-weighted share of the task's
terms a unit holds, to the power 0.5 (Python cold line 33.9 -> 32.1 at 2K, languages' Go
cold line@2K 28.6 -> 19.8); the other pieces of a ranked function at half its score
(languages' cold line 35.4/65.0 -> 36.2/65.9 but cold fn@2K 68.6 -> 66.8, Go 71.3 -> 67.3);
BM25's unit length as its counted terms instead of characters / 8 (Rust cold line
18.4/45.2/69.4 -> 20.0/45.3/70.7: no change beyond noise)."""
UNIT_HIT_BONUS = 1.5
"""A unit of a symbol the search hit (by its name, signature, docstring or calls) scores up
to 2.5 times as much, by how well the symbol matched relative to the search's best hit in
any file. 0.5 with each file's own best: Python cold fn 66.3/89.2 -> 70.1/89.8 at 1.5;
the best hit in any file rather than each file's: langs cold line 28.8/64.3 -> 35.0/68.3."""
UNIT_NEIGHBOUR_BONUS = 0.5
"""A unit of a caller or callee of the working files' symbols scores 50 % more."""
UNIT_OUTLINE_TOKENS = 60
"""Besides its units, a file shown for its units gets this much room for its outline (the
definitions around them), before breadth spends the rest. 110: unchanged within noise."""
UNIT_CALLEES_NAMED = 3
"""A file shown for its units keeps first in its outline, after the search's hits in it, up
to this many definitions of its own that its best UNIT_CALLEE_SOURCES units call (and do not
show): the code shown calls `getNextAcceptValue(acceptHeader, i)`, and the outline says
where `getNextAcceptValue` is. Measured (session 17, same instances as sessions 12–16):
TypeScript open 8K function recall 88.0 -> 89.6 (hono `c85aead0`: `parseAccept` shown, the
changed `getNextAcceptValue` it calls now named), open 32K 94.3 -> 95.8, Rust open 8K
52.7 -> 53.1; Python open 2K 55.1 -> 54.7; no line cell moved."""
UNIT_CALLEE_SOURCES = 3


def units_share(budget: int, working: bool) -> float:
    """The one budget rule between showing code and pointing at it (issue 22): the share
    of retrieval's allocation spent on the best units before the outlines and skeletons
    that name the rest; with `UNITS_MAP_SHRINK` (the map's share retrieval takes when it
    has units) it is the whole split."""
    if working:
        return UNITS_SHARE_WITH_WORKING_FILES
    return UNITS_SHARE if budget >= MID_BUDGET_TOKENS else SMALL_BUDGET_UNITS_SHARE


UNITS_SHARE = 1.0
"""Without working files, from MID_BUDGET_TOKENS on: all of retrieval's allocation (the map
points, and growth rounds spend what units leave). 0.75 / 0.9 / 1.0 (the last with the
map shrunk by 0.8, not 0.5): Python cold line@8K 48.8 / 51.7 / 53.2, fn@8K 86.4 / 85.7 / 89.2."""
SMALL_BUDGET_UNITS_SHARE = 0.8
"""Below MID_BUDGET_TOKENS, a fifth of retrieval's room is left for skeletons that name
the other files: at 2K cold, 1.0 -> 0.8 gave langs fn 58.6 -> 68.6 (Rust 39.0 -> 53.9) for
line 35.3 -> 31.0, Python fn 65.8 -> 65.5, line 33.1 -> 31.8."""
UNITS_SHARE_WITH_WORKING_FILES = 0.75
"""With working files (which show the units the task touches in them already). 0.5, the
map also shrunk by 0.5: Python open fn 44.9/76.9 line 9.9/29.4 against 41.5/84.1, 9.9/36.0."""
WORKING_UNIT_MIN_RELATIVE_SCORE = 0.5
"""A working file without a cursor or edits shows its units that score at least half its
best for the task (at most MAX_TASK_SYMBOLS of them)…"""
WORKING_OUTLINE_TOKENS = 150
"""…in an outline of about this many tokens around them (issue 22: "with a file open, its
own outline shrinks to the units the task touches"). Instead of the whole file when small,
or its outline with the task's bodies: Python open line 12.0/34.0 -> 13.1/35.7 at 2K/8K;
80 tokens with units over 0.7 of the best: unchanged within noise."""
SMALL_BUDGET_WORKING_UNITS = 1
"""Below MID_BUDGET_TOKENS such a working file shows only its best unit…"""
SMALL_BUDGET_WORKING_OUTLINE_TOKENS = 60
"""…in an outline of about this many tokens: the room it leaves goes to the units and
outlines of other files (issue 22 item 3). Against 3 units in 150 tokens, open mode at 2K
(same run, 60 instances per mode per repository for Python, 40 for the languages):
Python fn 47.9 -> 50.4, line 18.7 -> 20.1, file 64.5 -> 67.8; TypeScript + Go + Rust fn
52.1 -> 52.2, line 18.9 -> 21.7 (TypeScript 25.9 -> 31.1, Go 17.8 -> 19.8, Rust 12.7 ->
14.0). 20 tokens instead of 60: Python fn 51.0, line 20.1 (within noise)."""
SMALL_BUDGET_WORKING_UNIT_TOKENS = 80
"""…and of that unit only about this many tokens' worth of lines, the run of them that
holds the most of the task's words (`excerpts.densest_window`; its signature when they are
there): a 300-token body of a file the agent has open was a sixth of a 2K bundle, and the
units of other files are what it cannot see. Against the whole unit (session 16, open
mode at 2K, same instances): TypeScript + Go + Rust fn 56.7 -> 57.0, line 24.9 -> 26.7
(Go fn 65.8 -> 67.4, line 29.7 -> 32.8; TypeScript fn 75.5 -> 72.4, line 25.1 -> 26.1;
Rust fn 32.8 -> 34.9, line 19.7 -> 20.9); Python fn 55.2 -> 55.1, line 21.2 -> 22.1,
file 74.1 -> 75.8. The unit's first lines instead (its head) scored the same on the
languages, but showed an agent the start of a long function whose last lines the task is
about. 120 / 160 tokens (heads): languages fn 56.2 / 57.3, line 26.7 / 26.1."""
UNITS_MAP_SHRINK = 0.8
"""The share of the codebase map's allocation that goes to retrieval when it has units
(the adjustment `code_units_shrink_map`)…"""
UNITS_MAP_SHRINK_WITH_WORKING_FILES = 0.0
"""…and with working files, none below LARGE_BUDGET_TOKENS: the map is ranked towards
them and points at their neighbourhood. 0.4 (with a working file's outline of 80 tokens):
Python open line 14.6/35.1 but fn 39.5/74.0, against 9.9/36.0 and 41.5/84.1. From
LARGE_BUDGET_TOKENS on, UNITS_MAP_SHRINK as without working files (with
UNIT_FILES_LARGE_BUDGET's units to spend it on), open 32K line: TypeScript 70.2 -> 71.5,
Go 78.3 -> 78.3, Rust 49.0 -> 51.2 (function 77.9 -> 73.8); Python 66.6 (15 files, map
kept) -> 66.5 (function 97.3 -> 95.9), 60 instances a mode a repository."""


# ---------------------------------------------------------------- working files (contributors/working_files.py)

FOCUS_SALIENCE = 1.0
"""The file under the cursor: nothing is more relevant."""
OPEN_SALIENCE = 0.9
"""A file the request names as being worked on."""
RECENCY_DECAY = 0.85
"""Each step back in edit recency keeps 85 % of the salience: the last few edits dominate."""
RECENT_EDIT_HALF_LIFE_S = 600.0
"""An edit ten minutes ago counts half as much as one now."""
MAX_CALL_NEIGHBOURS = 6
"""Callers/callees of the cursor symbol shown in full: more turns focus into a dump."""
MAX_TASK_SYMBOLS = 3
"""A working file without a cursor or edits shows the bodies of at most this many symbols
the task names (issue 9: `--open` alone showed no bodies, even at 32K)."""
TASK_SYMBOL_MIN_RELATIVE_SCORE = 0.5
"""…those scoring at least half the file's best hit: weak matches stay in the outline."""
NEIGHBOUR_RANK = 2.0
"""Definition rank given to the callers and callees (in other files) of the working files'
symbols that matter: above any graph rank, so an outline of their file keeps them first."""
WHOLE_WORKING_MAX_SHARE = 0.8
"""Working files asked for whole (tier 3) may take up to this share of the budget, above
their policy's max share, when that is what showing them whole takes."""
SMALL_FILE_TOKENS = 1500
"""A working file with no cursor or edits is shown whole only when this small; a larger one is
outlined (its signatures), leaving room for what the task touches elsewhere. Showing such
files' query-matching bodies at tier 2 instead lowered open fn@32K 98.7 → 97.8 and
fn@8K 71.5 → 70.8 (session 2, reverted)."""


# ---------------------------------------------------------------- codebase map (contributors/codebase_map.py)

MAX_MAP_FILES = 200
"""Files offered to the map (the graph lists its best 200), however low their rank: a large
budget maps most of a mid-sized repository, the unreferenced files last."""
MAP_TEST_FILE_FACTOR = TEST_FILE_FACTOR
"""Tests rank high in the graph (they import everything) but say little about the code an
agent will change; unless the task mentions tests, the map ranks them down like retrieval
does. Adding it (0.35, session 6): open fn@2K/8K 49.4/76.7 → 50.7/77.2, cold unchanged."""
MAP_DEFINITIONS_PER_FILE = 20
"""Definitions ranked per map file: an entry shows the best of them first (as many as its room
allows), then the file's other top-level names."""


# ---------------------------------------------------------------- assembly (orchestrator, budget, adjustments)

BREADTH_SHARE = 0.75
"""Breadth contributors (retrieval, the map) first spend up to three quarters of their
allocation on skeletons of as many candidates as fit, then grow the best: an agent told where
ten relevant things are does better than one shown two files in full. Session 1 used half,
with full outlines; skeletons over 3/4 were part of session 2's 2K gains (cold file@2K
68.6 → 82.6)."""
DEPTH_SHARE = 0.6
"""Bodies before breadth: with no working files, retrieval first spends up to this share of
its allocation showing its best files at tier 2 — the bodies of the symbols the task hits —
because an agent must read the code it will change (issue 9: without a cursor, no key body
appeared in 30 httpx bundles). 0.6 vs 0.4, cold, 2K/8K: fn 68.5/85.8 vs 65.1/86.0, line
14.6/30.5 vs 10.5/28.3."""
DEPTH_SHARE_WITH_WORKING_FILES = 0.4
"""…and with working files, which already show the bodies the task names in them. Open
mode, 2K/8K: 0.4 gives fn 47.5/75.0, file@2K 68.8; 0.6 gave 41.7/75.7, file@2K 61.4."""
DEPTH_MIN_RELATIVE_SALIENCE = 0.5
"""Only files at least half as salient as the best get their bodies before breadth."""
MAX_DEPTH_FILES = 3
"""At most this many files' bodies before breadth."""
MIN_DEPTH_TOKENS = 300
"""Bodies are not worth starting below this much depth room (a 2K bundle's retrieval share
still shows one short body)."""
SKELETON_TOKENS = 110
"""A breadth contributor's first placement of a file: its few most relevant definitions (an
outline pruned to this size) — where things are, before what they are. 12 definitions per
skeleton instead of 8 was worse at 2K (session 1)."""
SMALL_BUDGET_SKELETON_TOKENS = 70
"""Below MID_BUDGET_TOKENS a skeleton is smaller, so that more files are named…"""
SMALL_BUDGET_UNIT_OUTLINE_TOKENS = 100
"""…and a file shown for its units names more of the definitions around them (both
against 110 and 60 at 2K, same run, base 14e567d; Python 60 instances per mode per
repository, TypeScript/Go/Rust 40): Python cold fn 66.3 -> 67.0, line 33.9 -> 35.0, file
77.4 -> 79.4; open fn 50.4 -> 53.5, line 20.1 -> 19.8, file 67.8 -> 73.0. Languages cold fn
64.4 -> 66.4, line 36.1 -> 35.1 (Go fn 63.2 -> 71.3, line 30.5 -> 28.6; Rust fn 46.3 ->
43.2, line 19.1 -> 17.5); open fn 52.2 -> 56.6, line 21.7 -> 20.6 (TypeScript fn 64.0 ->
72.9, line 31.1 -> 26.7; Go line 19.8 -> 17.9; Rust line 14.0 -> 17.1). Skeletons alone
(70, unit outline 60): Python cold fn 65.6, line 33.9; open fn 52.9, line 19.9; 50: cold
fn 64.9, open fn 53.3, file 81.1 / 77.2. The unit outline at 100 at 8K too: Python fn
86.4 -> 85.1 cold, 82.5 -> 80.9 open, so 8K keeps 60."""


def pointing_tokens(budget: int) -> tuple[int, int]:
    """A skeleton's size and the outline's room beside a file's units, for this budget."""
    if budget >= MID_BUDGET_TOKENS:
        return SKELETON_TOKENS, UNIT_OUTLINE_TOKENS
    return SMALL_BUDGET_SKELETON_TOKENS, SMALL_BUDGET_UNIT_OUTLINE_TOKENS


MEDIUM_OUTLINE_TOKENS = 400
"""The first growth step of a breadth contributor's files: enough for a module's main classes
and functions, before any one file grows to its whole outline."""
MEDIUM_MIN_RELATIVE_SALIENCE = 0.2
"""Only files at least this salient relative to the contributor's best take the medium step:
a long tail of medium outlines would starve the best files."""
GROWTH_MIN_RELATIVE_SALIENCE = 0.2
"""Below LARGE_BUDGET_TOKENS, a breadth contributor's file below this share of its best
file's salience is shown as a skeleton and never grows (to a medium or whole outline, or
cut to the room left): a test the task is not about (x0.15), or a file the graph ranks
far down, is worth naming, but its whole outline (800 tokens for cobra's
`command_test.go`) is worth less than the units and outlines of the files the task is
about, which get that room instead. Such files grew in the last growth round and in the
fill's last pass: cobra open 8K bundles spent 818 of the map's 1,918 tokens on tests.
Against no floor (session 12, branch `golang` from 478d49a; 40 instances a mode for
TypeScript/Go/Rust, 60 a repository for Python; 2K/8K, 32K unchanged): Go open line
17.9/43.4 -> 17.9/50.4 (bm25-chunks 30.1/44.9), fn 67.4/91.6 -> 67.4/91.1; Go cold line
67.2 -> 66.5 at 8K, fn unchanged; TypeScript and Rust identical; Python open line
20.0/41.0 -> 20.4/40.7, fn 54.0/81.5 -> 53.8/81.0, cold line@8K 60.0 -> 60.5. The floor
at every budget also lifted Go line@32K (cold 90.8 -> 95.1, open 82.1 -> 83.4) but cost
function recall at 32K (Python cold 96.4 -> 94.5, open 97.3 -> 96.3; Rust open 81.8 ->
79.1): there the tail's outlines name the functions of files the search ranks low, and
the files the task is about have their room already, so from LARGE_BUDGET_TOKENS on the
tail grows as before."""


def growth_floor(budget: int) -> float:
    """The share of a breadth contributor's best salience below which a file is only named."""
    return GROWTH_MIN_RELATIVE_SALIENCE if budget < LARGE_BUDGET_TOKENS else 0.0


MIN_CUT_SECTION_TOKENS = 80
"""An outline cut below ~80 tokens shows a path and a line or two: not worth its slot."""
MIN_GROWTH_TOKENS = 16
"""A placed file grows only when it may gain at least this much: growing by less adds a
row or two at the cost of re-rendering it at every tier (Django 8K, 10 new queries: ~570
growth attempts with under 16 tokens to spare, none grown, ~30 ms of a bundle's ~100)."""
MIN_UNITS_GROWTH_TOKENS = 100
"""A file sized to its units tries its whole focused tier, in the last round, only with
this much to spare: under it the try never placed anything (Django, 20 queries twice at
8K and 2K: 46 tries with 16-77 tokens to spare, none grown), and each renders the file's
focused tier at its full cap (~30 ms of the slowest bundles: benchmarks/README.md)."""
OUTLINE_CAP_SHARE = 5
"""Above a 5K budget one outline may grow to 1/5 of it (and a focused section to 2/5): a big
module's whole outline is 3–6K tokens (click's core.py: 5.9K) and a 1K cap hid most of its
methods (cold fn@32K 95.1 → 99.3 in session 2, with the other changes)."""
MAX_OUTLINE_CAP = 8000
"""No outline above 8K tokens, however large the budget."""
MAX_FOCUSED_CAP = 10000
"""No focused section above 10K tokens, however large the budget."""
DOMINANT_HIT_RATIO = 2.0
"""A top retrieval hit scoring ≥ 2× the runner-up means the task names its target: the wide
codebase map matters less than that target's neighbourhood."""
DOMINANT_HIT_MAP_SHRINK = 0.5
"""How much of the map's share then moves to retrieval."""


# ---------------------------------------------------------------- history (index/history_signals.py)
# The repository's own history as a file-level prior in retrieval (issue 22, item 4).
# Measured with `benchmarks/eval/run.py --with-history` (workspaces that hold the history
# up to the parent commit and nothing after it), history on against off on the same
# commit: benchmarks/eval/README.md, "History signals (issue 22 item 4)".

HISTORY_BLEND = 0.3
"""How far history moves a file's retrieval salience towards 1: `s + 0.3 × prior × (1 − s)`.
It only ever adds, so a file history says nothing about keeps its lexical and graph score.
Measured with every value below as set (not swept), off → on with the units engine
(`history2` 44ff197; Python 60/mode, TypeScript, Go, Rust 15/mode): Python cold file@2K/8K
72.3/84.7 → 76.2/89.7, line@8K 53.6 → 55.9, open fn@2K 40.8 → 38.8 (one instance); Rust
open fn@8K 33.8 → 42.3; Go cold line@8K 60.7 → 56.0 and TypeScript open fn@2K 86.1 → 81.9
(one instance each). No function or line loss beyond one instance in any language, so not
tuned and `history` stays on by default (README, "History signals")."""
HISTORY_NEW_FILES = 5
"""Files the task's words did not find that history may add to the ranking (co-changed with
the seeds, or changed by commits whose messages match the task), best first."""
HISTORY_SEED_FILES = 3
"""Without working files, co-change is seeded with the best three lexical files."""
HISTORY_CO_CHANGE_SHARE = 0.5
"""Share of the prior from co-change with the seeds."""
HISTORY_MESSAGE_SHARE = 0.4
"""Share of the prior from commits whose messages match the task."""
HISTORY_RECENCY_SHARE = 0.1
"""Share of the prior from recency, for files the task's words found: a tie-breaker."""
HISTORY_CO_CHANGE_SMOOTHING = 1.0
"""Added to a seed's commit count: a file that changed once with the seed scores at most
1/2 (damped by commit size), one that changed with it in 4 of 4 commits 4/5."""
HISTORY_MESSAGE_COMMITS = 10
"""Commits whose messages best match the task that point at files."""
HISTORY_RECENCY_HALF_LIFE_COMMITS = 50
"""A file last changed 50 commits ago counts half as recent as one changed by HEAD."""
HISTORY_MIN_SCORE = 0.05
"""A prior below this is noise: not applied, not mentioned in the explanation."""
