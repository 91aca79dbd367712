"""Ruby: modules, classes, methods and singleton methods (`def self.build`), nested
modules qualifying their members (`Outer.Greeter.greet`), `require`/`require_relative`
as imports, and top-level constants. `#` lines above a definition are its doc.
"""

from __future__ import annotations

from tree_sitter import Node

from ctx_lsp.code.languages.paths import joined, path_key, suffix_keys
from ctx_lsp.code.languages.spec import LanguageSpec, node_text, path_module_names
from ctx_lsp.code.outline import Import

__all__ = ["LANGUAGES"]

QUERY = """
(module) @definition.module
(class) @definition.class
(singleton_class) @definition.class
(method) @definition.function
(singleton_method) @definition.method

(call method: (identifier) @call)

(call method: (identifier) @_require arguments: (argument_list (string))
  (#any-of? @_require "require" "require_relative" "load" "autoload")) @import

(program (assignment left: (constant)) @constant)
"""

REFERENCES = """
(identifier) @reference
(constant) @reference
"""

BUILTINS = frozenset(
    [
        "puts",
        "p",
        "pp",
        "print",
        "push",
        "pop",
        "shift",
        "unshift",
        "require",
        "require_relative",
        "load",
        "autoload",
        "attr_reader",
        "attr_writer",
        "attr_accessor",
        "include",
        "extend",
        "prepend",
        "private",
        "protected",
        "public",
        "module_function",
        "raise",
        "fail",
        "new",
        "each",
        "each_with_index",
        "map",
        "select",
        "reject",
        "find",
        "detect",
        "reduce",
        "inject",
        "to_s",
        "to_i",
        "to_f",
        "to_a",
        "to_h",
        "to_sym",
        "inspect",
        "length",
        "size",
        "empty?",
        "nil?",
        "include?",
        "respond_to?",
        "is_a?",
        "kind_of?",
        "send",
        "public_send",
        "define_method",
        "instance_variable_get",
        "instance_variable_set",
        "freeze",
        "frozen?",
        "dup",
        "clone",
        "merge",
        "keys",
        "values",
        "first",
        "last",
        "join",
        "split",
        "strip",
        "gsub",
        "sub",
        "format",
        "block_given?",
        "lambda",
        "proc",
        "loop",
        "sleep",
        "String",
        "Integer",
        "Float",
        "Array",
        "Hash",
        "Symbol",
        "Object",
        "Class",
        "Module",
        "Kernel",
        "Comparable",
        "Enumerable",
        "StandardError",
        "ArgumentError",
        "RuntimeError",
        "NotImplementedError",
        "TypeError",
        "KeyError",
        "NameError",
        "Struct",
        "Time",
        "File",
        "Dir",
        "IO",
        "JSON",
        "Set",
        "describe",
        "it",
        "context",
        "let",
        "let!",
        "subject",
        "before",
        "after",
        "expect",
        "eq",
        "be",
        "to",
        "not_to",
        "allow",
        "receive",
        "and_return",
    ]
)


def _name(node: Node) -> Node | None:
    """A class or module's name without its scope (`Foo::Bar` → `Bar`)."""
    name = node.child_by_field_name("name")
    if name is not None and name.type == "scope_resolution":
        return name.child_by_field_name("name")
    return name


def _singleton_name(node: Node) -> Node | None:
    return node.child_by_field_name("value")


def _imports(node: Node, src: bytes) -> list[Import]:
    arguments = node.child_by_field_name("arguments")
    target = arguments.named_child(0) if arguments is not None and arguments.named_child_count else None
    text = node_text(src, target)
    module = text[1:-1] if len(text) >= 2 and text[0] in "'\"" else text
    line_text = " ".join(node_text(src, node).split())
    return [Import(node.start_point[0] + 1, line_text, module, (module.rsplit("/", 1)[-1],))]


def _constants(node: Node, src: bytes) -> list[tuple[str, Node]]:
    left = node.child_by_field_name("left")
    return [] if left is None else [(node_text(src, left), node)]


def _import_keys(rel_path: str) -> tuple[str, ...]:
    """Its path, and its tails without `.rb` (`require "shop/cart"` finds `lib/shop/cart.rb`)."""
    stem = rel_path[:-3] if rel_path.endswith(".rb") else rel_path
    return (path_key(rel_path), *suffix_keys(stem, prefix="rb:"))


def _import_probes(rel_path: str, imp: Import, root: str) -> list[tuple[str, ...]]:
    module = imp.module[:-3] if imp.module.endswith(".rb") else imp.module
    if imp.text.startswith("require_relative"):
        beside = joined(rel_path, module + ".rb")
        return [(path_key(beside),)] if beside else []
    return [(f"rb:{module}",)]


LANGUAGES = [
    LanguageSpec(
        name="ruby",
        extensions=(".rb", ".rake", ".gemspec"),
        grammar=("tree_sitter_ruby", "language"),
        query=QUERY,
        reference_query=REFERENCES,
        names={"class": _name, "module": _name, "singleton_class": _singleton_name},
        imports=_imports,
        constants=_constants,
        doc_line_markers=(b"#",),
        block_comments=False,
        builtins=BUILTINS,
        comment="# ",
        multiline_quotes=(("=begin", "=end"),),
        module_doc_format="# {}",
        fence="ruby",
        test_suffixes=("_spec.rb", "_test.rb"),
        test_dirs=("spec",),
        module_names=path_module_names,
        import_keys=_import_keys,
        import_probes=_import_probes,
    )
]
