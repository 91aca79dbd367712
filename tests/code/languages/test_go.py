"""Tests for ctx_lsp/code/languages/go.py."""

from __future__ import annotations

from tests.code.languages.conftest import by_qualname, outline_of

SOURCE = """
// Package stack implements generic stacks.
package stack

import (
	"fmt"
	str "strings"
)

const MaxSize = 10

var ErrEmpty = errors.New("empty")
var counter = 0

// Stack is a LIFO of T.
type Stack[T any] struct {
	items []T
}

// Pusher pushes values.
type Pusher interface {
	Push(v int)
}

type ID = int

// Push adds v on top.
// It grows the stack when full.
func (s *Stack[T]) Push(v T) {
	s.items = append(s.items, v)
	fmt.Println(str.ToUpper("x"))
	s.grow(1)
}

func (s Stack[T]) Len() int { return len(s.items) }

func New[T any]() *Stack[T] { return &Stack[T]{} }
"""


def test_go_methods_are_qualified_by_their_receiver_type() -> None:
    """Ensure that `func (s *Stack[T]) Push` is `Stack.Push` (pointer and type parameters
    stripped), with the receiver's type as parent, beside structs, interfaces and aliases."""
    o = outline_of("stack/stack.go", SOURCE)
    symbols = by_qualname(o)
    assert {q: s.kind for q, s in symbols.items()} == {
        "Stack": "struct",
        "Pusher": "interface",
        "Pusher.Push": "method",
        "ID": "type",
        "Stack.Push": "method",
        "Stack.Len": "method",
        "New": "function",
    }
    push = symbols["Stack.Push"]
    assert push.parent == "Stack" and push.signature == "func (s *Stack[T]) Push(v T)"
    assert push.doc == "Push adds v on top." and push.calls == ("grow",)
    assert symbols["Stack"].signature == "type Stack[T any] struct"
    assert symbols["Stack"].doc == "Stack is a LIFO of T."


def test_go_imports_constants_and_package_doc() -> None:
    """Ensure that each import spec is an import (aliases kept), constants and exported
    variables are listed, the package comment is the module doc and builtins/stdlib
    names are not references."""
    o = outline_of("stack/stack.go", SOURCE)
    assert o.docstring == "Package stack implements generic stacks."
    assert [(i.module, i.names, i.text) for i in o.imports] == [
        ("fmt", ("fmt",), 'import "fmt"'),
        ("strings", ("str",), 'import str "strings"'),
    ]
    assert [c.name for c in o.constants] == ["MaxSize", "ErrEmpty"]
    references = dict(o.references)
    assert "items" in references and "len" not in references and "fmt" not in references
