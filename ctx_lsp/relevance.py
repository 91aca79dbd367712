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

# ---------------------------------------------------------------- reference graph
# (filled in with the graph split; see ctx_lsp/index/graph/)


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
TEST_FILE_FACTOR = 0.35
"""Tests match task words as well as the code they test; unless the task mentions tests, prefer
the code. Was 0.5 in session 1, when tests took 14–26 % of 32K bundles (a quarter at 32K);
0.35 is part of the session-2 change set that took cold fn@8K from 68.8 to 80.3."""
GRAPH_BLEND = 0.35
"""Share of a file's salience that comes from its personalised graph rank. Blending 60 % was
worse at 2K (measured in session 1); the graph's main use is the codebase map."""
FOCUS_SYMBOLS = 10
"""A hit file's matching symbols kept first when its outline is pruned (was 3–5 in session 1:
keeping 10 lifted fn@2K cold 38 → 44, open 15 → 21 together with the map's ranked definitions)."""
DEFINITIONS_RANKED = 20
"""Definitions per file ranked by the graph, kept after the matching symbols."""


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
SMALL_FILE_TOKENS = 1500
"""A working file with no cursor or edits is shown whole only when this small; a larger one is
outlined (its signatures), leaving room for what the task touches elsewhere. Showing such
files' query-matching bodies at tier 2 instead lowered open fn@32K 98.7 → 97.8 and
fn@8K 71.5 → 70.8 (session 2, reverted)."""


# ---------------------------------------------------------------- codebase map (contributors/codebase_map.py)

MAX_MAP_FILES = 200
"""Files offered to the map (the graph lists its best 200), however low their rank: a large
budget maps most of a mid-sized repository, the unreferenced files last."""
MAP_DEFINITIONS_PER_FILE = 20
"""Definitions ranked per map file: an entry shows the best of them first (as many as its room
allows), then the file's other top-level names."""


# ---------------------------------------------------------------- assembly (assembly/orchestrator.py, budget.py, adjustments.py)

BREADTH_SHARE = 0.75
"""Breadth contributors (retrieval, the map) first spend up to three quarters of their
allocation on skeletons of as many candidates as fit, then grow the best: an agent told where
ten relevant things are does better than one shown two files in full. Session 1 used half,
with full outlines; skeletons over 3/4 were part of session 2's 2K gains (cold file@2K
68.6 → 82.6)."""
SKELETON_TOKENS = 110
"""A breadth contributor's first placement of a file: its few most relevant definitions (an
outline pruned to this size) — where things are, before what they are. 12 definitions per
skeleton instead of 8 was worse at 2K (session 1)."""
MEDIUM_OUTLINE_TOKENS = 400
"""The first growth step of a breadth contributor's files: enough for a module's main classes
and functions, before any one file grows to its whole outline."""
MEDIUM_MIN_RELATIVE_SALIENCE = 0.2
"""Only files at least this salient relative to the contributor's best take the medium step:
a long tail of medium outlines would starve the best files."""
MIN_CUT_SECTION_TOKENS = 80
"""An outline cut below ~80 tokens shows a path and a line or two: not worth its slot."""
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
