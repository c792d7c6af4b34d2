"""Names imported only for type checking are never used at run time (issue 15: start-up imports were made lazy —
engine classes imported under ``if TYPE_CHECKING:`` for annotations and imported in the functions that use them).
A use of such a name outside an annotation, in a function that does not import it itself, is a NameError waiting
for the one path that reaches it; this finds them all statically (the module's syntax tree), without running them."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "liyuan_desktop"


def _is_type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or \
        (isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")


def _imported(node: ast.AST) -> set[str]:
    return {(a.asname or a.name).split(".")[0] for a in node.names} if isinstance(node, (ast.Import, ast.ImportFrom)) \
        else set()


def misuses(source: str, name: str = "<module>") -> list[str]:
    """``file:line: name`` for every run-time use of a name the module imports only under ``if TYPE_CHECKING:``."""
    tree = ast.parse(source)
    type_only, runtime = set(), set()
    for node in tree.body:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for n in node.body:
                type_only |= _imported(n)
            for n in node.orelse:  # `else: _Window = object` — the name exists at run time too
                runtime |= _imported(n)
                if isinstance(n, ast.Assign):
                    runtime |= {t.id for t in n.targets if isinstance(t, ast.Name)}
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            runtime |= _imported(node)
        elif isinstance(node, ast.Assign):
            runtime |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            runtime.add(node.name)
    type_only -= runtime
    if not type_only:
        return []
    in_annotation: set[int] = set()
    for node in ast.walk(tree):
        for field in ("annotation", "returns"):
            a = getattr(node, field, None)
            if a is not None:
                in_annotation |= {id(n) for n in ast.walk(a)}
        if isinstance(node, ast.If) and _is_type_checking(node):
            in_annotation |= {id(n) for b in node.body for n in ast.walk(b)}
    out: list[str] = []

    def visit(node: ast.AST, local: set[str]) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            local = local | {x for n in ast.walk(node) for x in _imported(n)}
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in type_only \
                and id(node) not in in_annotation and node.id not in local:
            out.append(f"{name}:{node.lineno}: {node.id}")
        for child in ast.iter_child_nodes(node):
            visit(child, local)

    visit(tree, set())
    return out


def test_the_check_finds_a_type_only_name_used_at_run_time():
    planted = ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from x import Chat\n"
               "def f(a: Chat) -> 'Chat':\n    from x import Chat\n    return Chat()\n"
               "def g(b: Chat):\n    return Chat.create()\n")
    assert misuses(planted) == ["<module>:8: Chat"]


def test_a_name_the_else_branch_binds_is_a_run_time_name():
    face = ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from x import Face as _W\nelse:\n    _W = object\n"
            "class Mixin(_W):\n    pass\n")
    assert misuses(face) == []


def test_no_type_only_name_is_used_at_run_time():
    found = [m for p in sorted(ROOT.rglob("*.py")) for m in misuses(p.read_text("utf-8"), str(p.relative_to(ROOT)))]
    assert not found, found
