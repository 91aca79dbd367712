"""Tests for ctx_lsp/code/languages/typescript.py (TypeScript and TSX, on the shared walker)."""

from __future__ import annotations

from ctx_lsp.code.languages import language_for
from ctx_lsp.code.tiers import render
from ctx_lsp.tokens import counter_for
from ctx_lsp.vocabulary import Tier
from tests.code.languages.conftest import by_qualname, outline_of

STORE = """
/**
 * Vanilla stores.
 */

import { useSyncExternalStore } from "react"
import type { StoreApi, Mutate } from "./vanilla"
import * as utils from "../utils"
export * from "./middleware"

/** The default equality check.
 * Compares by reference. */
export const DEFAULT_EQUALITY = Object.is

/**
 * Creates a store with a getter and a setter.
 * @param createState the initializer
 */
export const createStore = <T,>(createState: StateCreator<T>): StoreApi<T> => {
  const api = buildApi(createState)
  return api
}

export function useStore<T, U>(api: StoreApi<T>, selector: (state: T) => U): U {
  return useSyncExternalStore(api.subscribe, () => selector(api.getState()))
}

// Keeps listeners.
@sealed
export abstract class Emitter<E> extends Base implements Disposable {
  private listeners = new Set<E>()
  onEvent = (event: E) => { this.emit(event) }
  constructor(name: string) { super(name) }
  /** Emits one event. */
  async emit(event: E): Promise<void> { notifyAll(this.listeners, event) }
  abstract dispose(): void
}

export interface Listener<T> {
  (state: T): void
  select(state: T): unknown
}

export type Selector<T, U> = (state: T) => U

export enum Phase { Idle, Running }

export namespace Internal {
  export function reset(): void {}
}

export const create = ((init) => build(init)) as Creator

export const api = {
  get(key: string) { return lookup(key) },
  set: (key: string, value: number) => store(key, value),
}
"""


def test_typescript_definitions_are_qualified_by_their_owner() -> None:
    """Ensure that classes, members, components, interfaces, types, enums, namespaces and
    object-literal methods are outlined with owner-qualified names and shared kinds."""
    o = outline_of("src/store.ts", STORE)
    symbols = by_qualname(o)
    assert o.language == "typescript" and not o.has_errors
    kinds = {q: s.kind for q, s in symbols.items()}
    assert kinds == {
        "createStore": "function",
        "useStore": "function",
        "Emitter": "class",
        "Emitter.onEvent": "method",
        "Emitter.constructor": "method",
        "Emitter.emit": "method",
        "Emitter.dispose": "method",
        "Listener": "interface",
        "Listener.select": "method",
        "Selector": "type",
        "Phase": "enum",
        "Internal": "module",
        "Internal.reset": "function",
        "create": "function",
        "api": "module",
        "api.get": "function",
        "api.set": "function",
    }
    assert symbols["Emitter.emit"].parent == "Emitter" and symbols["Emitter.emit"].depth == 1
    assert symbols["Emitter.emit"].is_async


def test_typescript_signatures_docs_and_decorators() -> None:
    """Ensure that signatures are one line up to the body (parameters and return types
    kept, `export const` included), doc comments above definitions give their first line
    (JSDoc tags skipped), and decorators above a class belong to it."""
    symbols = by_qualname(outline_of("src/store.ts", STORE))
    create = symbols["createStore"]
    assert create.signature == "export const createStore = <T,>(createState: StateCreator<T>): StoreApi<T> =>"
    assert create.doc == "Creates a store with a getter and a setter."
    use = symbols["useStore"]
    assert use.signature == "export function useStore<T, U>(api: StoreApi<T>, selector: (state: T) => U): U"
    emitter = symbols["Emitter"]
    assert emitter.signature == "export abstract class Emitter<E> extends Base implements Disposable"
    assert emitter.decorators == ("@sealed",) and emitter.doc == "Keeps listeners."
    assert emitter.start_line == STORE.lstrip("\n").split("\n").index("@sealed") + 1
    assert symbols["Emitter.emit"].doc == "Emits one event."
    assert symbols["Selector"].signature == "export type Selector<T, U> = (state: T) => U"


def test_typescript_imports_constants_calls_and_references() -> None:
    """Ensure that imports keep their text and module as written (re-exports too), exported
    constants are listed, calls are recorded per symbol and builtins are not references."""
    o = outline_of("src/store.ts", STORE)
    assert o.docstring == "Vanilla stores."
    assert [(i.module, i.names) for i in o.imports] == [
        ("react", ("useSyncExternalStore",)),
        ("./vanilla", ("StoreApi", "Mutate")),
        ("../utils", ("*",)),
        ("./middleware", ("*",)),
    ]
    assert o.imports[0].text == 'import { useSyncExternalStore } from "react"'
    assert [c.name for c in o.constants] == ["DEFAULT_EQUALITY"]
    symbols = by_qualname(o)
    assert symbols["createStore"].calls == ("buildApi",)
    assert symbols["Emitter.emit"].calls == ("notifyAll",)
    references = dict(o.references)
    assert "buildApi" in references and "StateCreator" in references
    assert "Object" not in references and "Promise" not in references and "useStore" not in references


TSX = """
import React from "react"

type Props = { title: string }

/** The page header. */
export const Header = ({ title }: Props) => {
  return <h1 className="title">{format(title)}</h1>
}

export default function App(): JSX.Element {
  return <Header title="x" />
}
"""


def test_tsx_components_use_the_tsx_grammar() -> None:
    """Ensure that .tsx files parse with the TSX grammar (JSX is not an error) and arrow
    components are definitions with their doc comment."""
    assert language_for("a.tsx").grammar == ("tree_sitter_typescript", "language_tsx")
    assert language_for("a.ts").grammar == ("tree_sitter_typescript", "language_typescript")
    o = outline_of("src/App.tsx", TSX)
    assert o.language == "typescript" and not o.has_errors
    symbols = by_qualname(o)
    assert set(symbols) == {"Props", "Header", "App"}
    assert symbols["Header"].doc == "The page header."
    assert symbols["Header"].calls == ("format",)
    assert symbols["App"].calls == ("Header",)  # a rendered component is called


def test_a_typescript_file_with_syntax_errors_is_still_outlined() -> None:
    """Ensure that a broken file is outlined from the parser's recovery and marked."""
    o = outline_of("broken.ts", "export function ok(a: number) { return a }\nclass Broken {\n  m( {\n}\n")
    assert o.has_errors
    assert "ok" in by_qualname(o)


def test_typescript_outline_renders_with_comments_not_python_syntax() -> None:
    """Ensure that a TypeScript outline reads as TypeScript: `//` doc comments, no `:`
    after class headers, imports as written, and a focused body shown whole."""
    o = outline_of("src/store.ts", STORE)
    text = STORE.lstrip("\n")
    counter = counter_for("o200k_base")
    outline = render("src/store.ts", text, o, Tier.OUTLINE, counter).content
    assert "// Vanilla stores." in outline
    assert "export abstract class Emitter<E> extends Base implements Disposable  // Keeps listeners." in outline
    assert '"""' not in outline and "# " not in outline
    focused = render("src/store.ts", text, o, Tier.FOCUSED, counter, focus=("useStore",))
    assert "useSyncExternalStore(api.subscribe" in focused.content
    assert "useStore" in focused.shown_symbols


def test_comments_inside_a_multi_line_type_are_not_its_signature() -> None:
    """Ensure that a `// note` ending a line of a multi-line type alias is left out of the
    one-line signature (it would comment out the rest), while `//` inside a string stays."""
    o = outline_of(
        "src/types.ts",
        """
        type Constraint =
          | { partitioned: true } // must be secure
          | { partitioned?: boolean }
        type Url = "http://example.com" | "https://example.com"
        """,
    )
    symbols = by_qualname(o)
    assert symbols["Constraint"].signature == "type Constraint = | { partitioned: true } | { partitioned?: boolean }"
    assert symbols["Url"].signature == 'type Url = "http://example.com" | "https://example.com"'
