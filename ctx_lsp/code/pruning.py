"""Pruning an outline to whole units: the rows a kept set of units shows (compact, with
fold notes for what is left out), and each unit's rows found without a pass over all of
them. `tiers.py` decides how many units fit a cap; this module is what keeping them shows.
"""

from __future__ import annotations

import itertools
from array import array
from collections import Counter
from collections.abc import Sequence

from ctx_lsp.code.outline_rows import KEY_FOCUS, Row, Unit

__all__ = ["FOCUS_SIGNATURE_MAX_CHARS", "RowGroups", "closure", "pruned_rows"]

FOCUS_SIGNATURE_MAX_CHARS = 200
"""A pruned outline shows the request's own symbols with their whole signature, unless it
is longer than this (a constructor with twenty parameters): then short, like the rest."""


class RowGroups:
    """Each unit's rows of a rows list with their positions, for pruning, which keeps or
    leaves out whole units and reads only the kept ones. Positions sorted by unit in one
    array with each unit's bounds in another: a basis keeps one per layout, and as a dict
    of lists of (position, row) pairs they took 8.8 MB over Django's 512 kept bases."""

    __slots__ = ("_bounds", "_order", "rows")

    def __init__(self, rows: list[Row]):
        self.rows = rows
        # C-level passes (a counter, a sort keyed by a list's items): every focused
        # rendering groups its rows anew. Positions by unit, in order (the sort is stable);
        # those of rows outside every unit (-1) sort first and are left out.
        of_row = [row.unit for row in rows]
        sizes = Counter(of_row)
        units = max(of_row, default=-1) + 1
        self._bounds = array("I", itertools.accumulate([0, *(sizes[u] for u in range(units))]))
        self._order = array("I", sorted(range(len(rows)), key=of_row.__getitem__)[len(rows) - self._bounds[-1] :])

    def positions(self, unit: int) -> Sequence[int]:
        """Positions in `rows` of the unit's rows, in order (none for an unknown unit)."""
        if not 0 <= unit < len(self._bounds) - 1:
            return ()
        return self._order[self._bounds[unit] : self._bounds[unit + 1]]

    def rows_of(self, unit: int) -> list[Row]:
        rows = self.rows
        return [rows[i] for i in self.positions(unit)]


def closure(order: Sequence[int], units: Sequence[Unit]) -> set[int]:
    """The first units of `order` and every unit enclosing one of them."""
    kept: set[int] = set()
    for u in order:
        while u >= 0 and u not in kept:
            kept.add(u)
            u = units[u].parent
    return kept


def pruned_rows(groups: RowGroups, units: Sequence[Unit], kept: set[int], noun: str, comment: str = "# ") -> list[Row]:
    """The rows of the kept units (`groups`: each unit's rows with their positions, from
    `OutlineRenderer._grouped`), compact (short signatures, no docstrings) but for the
    request's own symbols. A kept outline row of a symbol with left-out members
    says how many (`class Option:  # (+12 members)`); left-out top-level definitions are
    counted on a last line."""
    compact = {u for u in kept if units[u].key[0] != KEY_FOCUS}
    hidden_under: dict[int, int] = {}
    hidden_top = 0
    for i, candidate in enumerate(units):
        if i in kept or not candidate.definition:
            continue
        if candidate.parent < 0:
            hidden_top += 1
        elif candidate.parent in kept:
            hidden_under[candidate.parent] = hidden_under.get(candidate.parent, 0) + 1
    out: list[Row] = []
    last_row_of: dict[int, int] = {}  # unit -> index in `out` of its last outline row
    rows = groups.rows  # shortened rows built positionally: `_replace` costs ~3x (every pruned outline)
    positions: list[int] = []
    for unit in kept:
        positions.extend(groups.positions(unit))
    positions.sort()
    for i in positions:
        row = rows[i]
        shorten = row.short and (row.unit in compact or len(row.text) > FOCUS_SIGNATURE_MAX_CHARS)
        out.append(
            Row(row.line, row.short, row.starts_symbol, row.unit, row.ends, row.source, row.short) if shorten else row
        )
        if not row.source:
            last_row_of[row.unit] = len(out) - 1
    for unit, count in hidden_under.items():
        index = last_row_of.get(unit)
        if index is None:
            continue
        row = out[index]
        note = f"(+{count} {noun}{'' if count == 1 else 's'})"
        marker = comment.rstrip()
        commented = f"  {marker} " in row.text or row.text.startswith(marker)
        out[index] = row._replace(text=f"{row.text} {note}" if commented else f"{row.text}  {comment}{note}")
    if hidden_top:
        out.append(Row(0, f"… {hidden_top} more definition{'' if hidden_top == 1 else 's'} not shown"))
    return out
