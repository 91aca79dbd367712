"""A Python sample with every construct an outline records, shared by the outline tests."""

from __future__ import annotations

import textwrap

import pytest

from ctx_lsp.code.languages.python import outline_python
from ctx_lsp.code.outline import Outline

SAMPLE = textwrap.dedent(
    '''\
    #!/usr/bin/env python
    # -*- coding: utf-8 -*-
    """Sample module for outlines.

    More text that is not the first line.
    """
    from __future__ import annotations

    import os, sys as system
    import xml.etree.ElementTree
    from collections import OrderedDict as OD, defaultdict
    from . import sibling
    from ..pkg.mod import (
        alpha,  # the first
        beta,
    )
    from star import *

    MAX_SIZE = 10
    timeout: float = 2.5
    Pair = tuple[int, int]
    type Alias = list[int]
    __all__ = ["Foo", "top"]
    obj.attr = 3
    left, right = 1, 2

    if TYPE_CHECKING:
        from typing import Iterator
        OnlyForTypes = int
    else:
        AtRuntime = 1

    try:
        import ujson as json
    except ImportError:
        import json

    if sys.version_info >= (3, 11):
        def compat(x):
            return os.fspath(x)
    else:
        def compat(x):
            return str(x)


    @dataclass(frozen=True)
    @other.decorator
    class Foo(Base, metaclass=Meta):  # trailing comment after the colon
        """Foo does things."""

        size: int = 1

        @property
        def bar(self) -> int:
            return helper(self.size)

        async def baz(self, *args, key: str = "k", **kw) -> "Foo":
            """Bazzes."""
            def inner(y):
                return deep_call(y)
            return inner(3).finish()

        class Inner:
            def method(self): ...

        if DEBUG:
            def debug_only(self):
                pass


    def top(a, /, b={1: 2}, *, c=lambda x: x, d: dict[str, "int"] = {"k:v": 1}) -> None:
        r"""Raw docstring."""
        pkg.mod.run(a)
        print(b)


    async def multi(
        a: int,  # the a
        b: str = ":",
    ) -> tuple[
        int, str
    ]:  # done
        await other()


    with context():
        def in_with(): pass


    if __name__ == "__main__":
        SCRIPT_STATE = 1
        top(1)
    '''
)


@pytest.fixture(scope="module")
def sample() -> Outline:
    return outline_python(SAMPLE.encode())
