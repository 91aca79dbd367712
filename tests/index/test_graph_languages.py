"""The reference graph across languages: imports resolved to files per language (the keys
and candidates each language module declares), name references weighted as for Python."""

from __future__ import annotations

import textwrap
from pathlib import Path

from ctx_lsp import relevance
from ctx_lsp.config import Config
from ctx_lsp.index.graph import ReferenceGraph
from ctx_lsp.index.workspace import Workspace
from tests.conftest import write_tree

IMPORT = relevance.IMPORT_EDGE_WEIGHT


def _indexed(root: Path, files: dict[str, str]) -> tuple[Workspace, ReferenceGraph]:
    write_tree(root, {rel: textwrap.dedent(text).lstrip("\n") for rel, text in files.items()})
    config = Config()
    config.index.cache = False
    workspace = Workspace([root], config)
    graph = ReferenceGraph()
    workspace.subscribe(graph.update)
    workspace.index()
    return workspace, graph


def _graph(root: Path, files: dict[str, str]) -> ReferenceGraph:
    return _indexed(root, files)[1]


def _weight(graph: ReferenceGraph, root: Path, source: str, target: str) -> float:
    return graph.edge_weight(str(root.resolve() / source), str(root.resolve() / target))


def test_typescript_relative_specifiers_resolve_with_extensions_and_index_files(tmp_path: Path) -> None:
    """Ensure that `./store` finds store.ts, `./utils` finds utils/index.ts, `./view.js`
    finds view.tsx (ESM style), and a bare package specifier finds nothing."""
    graph = _graph(
        tmp_path,
        {
            "src/app.ts": """
                import { a } from "./store"
                import { b } from "./utils"
                import { c } from "./view.js"
                import React from "react"
                """,
            "src/store.ts": "export const a = 1\n",
            "src/utils/index.ts": "export const b = 2\n",
            "src/view.tsx": "export const c = () => <div />\n",
            "react.ts": "export default 1\n",
        },
    )
    for target in ("src/store.ts", "src/utils/index.ts", "src/view.tsx"):
        assert _weight(graph, tmp_path, "src/app.ts", target) >= IMPORT, target
    assert _weight(graph, tmp_path, "src/app.ts", "react.ts") == 0.0


def test_go_imports_reach_every_file_of_the_package_through_go_mod(tmp_path: Path) -> None:
    """Ensure that an import of `example.com/shop/cart` links to each file of `cart/`."""
    graph = _graph(
        tmp_path,
        {
            "go.mod": "module example.com/shop\n\ngo 1.22\n",
            "main.go": 'package main\n\nimport "example.com/shop/cart"\n\nfunc main() { cart.Run() }\n',
            "cart/cart.go": "package cart\n\nfunc Run() {}\n",
            "cart/item.go": "package cart\n\ntype Item struct{}\n",
            "other/other.go": "package other\n\nfunc Run() {}\n",
        },
    )
    assert _weight(graph, tmp_path, "main.go", "cart/cart.go") >= IMPORT
    assert _weight(graph, tmp_path, "main.go", "cart/item.go") >= IMPORT
    assert _weight(graph, tmp_path, "main.go", "other/other.go") < IMPORT


def test_rust_mod_and_use_resolve_inside_the_crate(tmp_path: Path) -> None:
    """Ensure that `mod parser;` finds src/parser.rs and `use crate::codec::Decoder` finds
    src/codec/mod.rs."""
    graph = _graph(
        tmp_path,
        {
            "src/lib.rs": "mod parser;\nmod codec;\nuse crate::codec::Decoder;\n",
            "src/parser.rs": "pub fn parse() {}\n",
            "src/codec/mod.rs": "pub struct Decoder;\n",
        },
    )
    assert _weight(graph, tmp_path, "src/lib.rs", "src/parser.rs") >= IMPORT
    assert _weight(graph, tmp_path, "src/lib.rs", "src/codec/mod.rs") >= IMPORT


def test_java_c_and_ruby_imports_resolve(tmp_path: Path) -> None:
    """Ensure that Java imports find their class's file, `#include "x.h"` its header and
    `require_relative` / `require` their Ruby files."""
    graph = _graph(
        tmp_path,
        {
            "src/main/java/com/acme/App.java": "package com.acme;\nimport com.acme.shop.Cart;\nclass App {}\n",
            "src/main/java/com/acme/shop/Cart.java": "package com.acme.shop;\npublic class Cart {}\n",
            "src/list.c": '#include "list.h"\nint f(void) { return 0; }\n',
            "include/list.h": "int f(void);\n",
            "lib/shop.rb": 'require_relative "shop/cart"\nrequire "shop/item"\n',
            "lib/shop/cart.rb": "class Cart; end\n",
            "lib/shop/item.rb": "class Item; end\n",
        },
    )
    java = "src/main/java/com/acme/"
    assert _weight(graph, tmp_path, java + "App.java", java + "shop/Cart.java") >= IMPORT
    assert _weight(graph, tmp_path, "src/list.c", "include/list.h") >= IMPORT
    assert _weight(graph, tmp_path, "lib/shop.rb", "lib/shop/cart.rb") >= IMPORT
    assert _weight(graph, tmp_path, "lib/shop.rb", "lib/shop/item.rb") >= IMPORT


def test_name_references_link_files_across_languages(tmp_path: Path) -> None:
    """Ensure that a Go file using a name another Go file defines is linked without an
    import (same package), as Python's name references are."""
    graph = _graph(
        tmp_path,
        {
            "cart/cart.go": "package cart\n\nfunc Total() int { return computeTotal(3) }\n",
            "cart/math.go": "package cart\n\nfunc computeTotal(n int) int { return n }\n",
        },
    )
    assert _weight(graph, tmp_path, "cart/cart.go", "cart/math.go") > 0.0


def test_typescript_bare_specifiers_resolve_through_tsconfig_paths_and_base_url(tmp_path: Path) -> None:
    """Ensure that `@/lib/api` resolves through `paths` (declared in an extended config,
    with comments and trailing commas) and `shared/util` through `baseUrl`."""
    graph = _graph(
        tmp_path,
        {
            "tsconfig.base.json": """
                {
                  // shared options
                  "compilerOptions": {
                    "baseUrl": ".",
                    "paths": { "@/*": ["src/*"], },
                  },
                }
                """,
            "tsconfig.json": '{ "extends": "./tsconfig.base.json", "compilerOptions": { "strict": true } }\n',
            "src/app.ts": 'import { get } from "@/lib/api"\nimport { u } from "src/shared/util"\n',
            "src/lib/api.ts": "export function get() {}\n",
            "src/shared/util.ts": "export const u = 1\n",
        },
    )
    assert _weight(graph, tmp_path, "src/app.ts", "src/lib/api.ts") >= IMPORT
    assert _weight(graph, tmp_path, "src/app.ts", "src/shared/util.ts") >= IMPORT


def test_call_neighbours_cross_files_in_typescript_and_go(tmp_path: Path) -> None:
    """Ensure that callees and callers of a symbol are found through resolved imports
    (TypeScript) and a package's files (Go)."""
    graph = _graph(
        tmp_path,
        {
            "src/cart.ts": 'import { price } from "./price"\nexport function total(): number { return price(2) }\n',
            "src/price.ts": "export function price(n: number): number { return n * 3 }\n",
            "shop/cart.go": "package shop\n\nfunc (c *Cart) Total() int { return priceOf(c) }\n",
            "shop/price.go": "package shop\n\nfunc priceOf(c *Cart) int { return 3 }\n",
        },
    )
    root = tmp_path.resolve()
    assert graph.callees_of(str(root / "src/cart.ts"), "total") == [(str(root / "src/price.ts"), "price")]
    assert graph.callers_of("price") == [(str(root / "src/cart.ts"), "total")]
    assert graph.callees_of(str(root / "shop/cart.go"), "Cart.Total") == [(str(root / "shop/price.go"), "priceOf")]


def test_csharp_using_reaches_the_folder_that_mirrors_the_namespace(tmp_path: Path) -> None:
    """Ensure that `using Shop.Core.Models;` links to the files of `.../Shop.Core/Models/`."""
    graph = _graph(
        tmp_path,
        {
            "src/Shop.Api/Program.cs": "using System;\nusing Shop.Core.Models;\nclass Program {}\n",
            "src/Shop.Core/Models/Cart.cs": "namespace Shop.Core.Models;\npublic class Cart {}\n",
            "src/Shop.Core/Services/Pay.cs": "namespace Shop.Core.Services;\npublic class Pay {}\n",
        },
    )
    assert _weight(graph, tmp_path, "src/Shop.Api/Program.cs", "src/Shop.Core/Models/Cart.cs") >= IMPORT
    assert _weight(graph, tmp_path, "src/Shop.Api/Program.cs", "src/Shop.Core/Services/Pay.cs") < IMPORT


def test_typescript_workspace_packages_resolve_to_their_sources(tmp_path: Path) -> None:
    """Ensure that `@acme/ui` (a package of the repository's workspaces, built to dist/)
    resolves to its source entry, `@acme/ui/button` to the file in its `src/`, and
    `@acme/ui/forms/input` through its `exports` pattern (dist/ mapped to src/)."""
    graph = _graph(
        tmp_path,
        {
            "package.json": '{"private": true, "workspaces": ["packages/*"]}\n',
            "packages/ui/package.json": (
                '{"name": "@acme/ui", "main": "./dist/index.js",'
                ' "exports": {".": "./dist/index.js", "./forms/*": {"import": "./dist/controls/*.js"}}}\n'
            ),
            "packages/ui/src/index.ts": 'export * from "./button"\n',
            "packages/ui/src/button.ts": "export function Button() {}\n",
            "packages/ui/src/controls/input.ts": "export function Input() {}\n",
            "packages/app/package.json": '{"name": "@acme/app"}\n',
            "packages/app/src/main.ts": (
                'import { Button } from "@acme/ui"\nimport { Button as B } from "@acme/ui/button"\n'
                'import { Input } from "@acme/ui/forms/input"\n'
            ),
        },
    )
    main = "packages/app/src/main.ts"
    assert _weight(graph, tmp_path, main, "packages/ui/src/index.ts") >= IMPORT
    assert _weight(graph, tmp_path, main, "packages/ui/src/button.ts") >= IMPORT
    assert _weight(graph, tmp_path, main, "packages/ui/src/controls/input.ts") >= IMPORT  # an exports pattern


def test_a_changed_tsconfig_resolves_the_imports_again(tmp_path: Path) -> None:
    """Ensure that when tsconfig.json's `paths` change, the files importing through them
    are linked to the new targets (the config is read again, not kept from before)."""
    workspace, graph = _indexed(
        tmp_path,
        {
            "tsconfig.json": '{"compilerOptions": {"paths": {"@lib/*": ["old/*"]}}}\n',
            "src/app.ts": 'import { api } from "@lib/api"\n',
            "old/api.ts": "export const api = 1\n",
            "new/api.ts": "export const api = 2\n",
        },
    )
    assert _weight(graph, tmp_path, "src/app.ts", "old/api.ts") >= IMPORT
    (tmp_path / "tsconfig.json").write_text('{"compilerOptions": {"paths": {"@lib/*": ["new/*"]}}}\n')
    workspace.index()
    assert _weight(graph, tmp_path, "src/app.ts", "new/api.ts") >= IMPORT
    assert _weight(graph, tmp_path, "src/app.ts", "old/api.ts") < IMPORT
