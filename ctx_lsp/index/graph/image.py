"""The reference graph's state as one image of flat arrays, so a fresh process restores it.

Building the graph in a new process meant decoding every Python file's outline for its
facts and weighing every edge again: ~1.1 s of a 2.8 s warm CLI call on Django (issue 11,
"warm start from disk: persist the graph"). The image holds what that work produces —
each file's facts (less its outline, which the index already keeps), the weighted
out-edges, the resolved import targets and the module names each file's imports tried —
as integer arrays over one table of strings. Reading it back is a JSON decode of the
strings and a few `array.frombytes` calls.

This module only packs and unpacks; `index/derived.py` stores an image under a digest of
its bytes and the version of the code that derived it, and `edges.Edges` exports and
restores one. Every array is checked against the layout (lengths, and ranges of every id)
before it is used, so bytes that pass the digest but not the layout are refused, never
indexed with.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, fields
from typing import Any

from ctx_lsp.index import packed

__all__ = ["GraphImage", "pack", "unpack"]


@dataclass(frozen=True, slots=True)
class GraphImage:
    """The graph over `files` (abs paths, sorted). Per-file columns are flat arrays cut by
    an `*_ends` array (file i's slice is `ends[i-1]:ends[i]`); strings are ids into
    `names`, files are indexes into `files`.

    `imports` holds each statement as `module, is_from, n, name_1 … name_n`.
    """

    files: list[str]
    hashes: list[str]  # content hash of each file as it was derived
    paths: list[str]  # display path of each file
    names: list[str]  # every string the facts use
    roots: array  # name id of each file's workspace folder
    packages: array  # name id of each file's package
    module_ends: array
    modules: array
    define_ends: array
    defines: array
    called_ends: array
    called: array
    used_ends: array
    used: array
    uses: array  # parallel to `used`: how often
    import_ends: array
    imports: array
    probe_ends: array
    probes: array  # module names each file's imports tried
    out_ends: array
    out_to: array  # file indexes
    out_units: array  # parallel to `out_to`: weight units
    target_ends: array
    targets: array  # file indexes each file's imports resolve to
    name_units: array  # per name: weight units of its uses summed over every file (0: unused)


_STRINGS = ("files", "hashes", "paths", "names")
_ARRAYS = tuple(f.name for f in fields(GraphImage) if f.name not in _STRINGS)
_CUTS = (  # (ends, column, what its ids index: "names", "files" or "" for counts)
    ("module_ends", "modules", "names"),
    ("define_ends", "defines", "names"),
    ("called_ends", "called", "names"),
    ("used_ends", "used", "names"),
    ("import_ends", "imports", ""),
    ("probe_ends", "probes", "names"),
    ("out_ends", "out_to", "files"),
    ("target_ends", "targets", "files"),
)


def pack(image: GraphImage) -> bytes:
    return packed.pack(
        {name: getattr(image, name) for name in _STRINGS}, {name: getattr(image, name) for name in _ARRAYS}
    )


def unpack(value: bytes) -> GraphImage | None:
    """The image packed in `value`, or None if it does not hold to the layout."""
    columns = packed.unpack(value, _STRINGS, _ARRAYS)
    if columns is None:
        return None
    strings, arrays = columns
    fields_: dict[str, Any] = {**strings, **arrays}
    image = GraphImage(**fields_)
    return image if _holds(image) else None


def _holds(image: GraphImage) -> bool:
    """Every length and id in range: what `Edges.restore` indexes with cannot fail."""
    n_files, n_names = len(image.files), len(image.names)
    if not (len(image.hashes) == len(image.paths) == len(image.roots) == len(image.packages) == n_files):
        return False
    if len(image.used) != len(image.uses) or len(image.out_to) != len(image.out_units):
        return False
    if len(image.name_units) != n_names or (image.name_units and min(image.name_units) < 0):
        return False
    for per_file in (image.roots, image.packages):
        if per_file and (min(per_file) < 0 or max(per_file) >= n_names):
            return False
    for ends_name, column_name, kind in _CUTS:
        ends, column = getattr(image, ends_name), getattr(image, column_name)
        if len(ends) != n_files or (n_files and ends[-1] != len(column)):
            return False
        if any(b < a for a, b in zip((0, *ends), ends)):
            return False
        bound = {"names": n_names, "files": n_files}.get(kind)
        if bound is not None and column and (min(column) < 0 or max(column) >= bound):
            return False
    if image.uses and min(image.uses) < 0:
        return False
    return _imports_hold(image.imports, image.import_ends, n_names)


def _imports_hold(imports: array, ends: array, n_names: int) -> bool:
    """Each file's statements end exactly at its cut, and every id names a string."""
    start = 0
    for end in ends:
        i = start
        while i < end:
            if i + 3 > end:
                return False
            module, is_from, n = imports[i], imports[i + 1], imports[i + 2]
            if not 0 <= module < n_names or is_from not in (0, 1) or n < 0 or i + 3 + n > end:
                return False
            names = imports[i + 3 : i + 3 + n]
            if names and (min(names) < 0 or max(names) >= n_names):
                return False
            i += 3 + n
        start = end
    return True
