"""No engine module imports a private name (``_x``) from another module (issue 25): a name another module needs is
the owning module's API — public, with a docstring — or it moves to the module that uses it.

Read from the code (an AST walk over ``from … import …`` in ``liyuan_desktop/core``). The modules still doing it are
listed in :data:`KNOWN` with their count; the list only shrinks (a count that went down must be lowered here)."""
from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

CORE = Path(__file__).resolve().parent.parent / "liyuan_desktop" / "core"

#: module path under core/ → how many private names it still imports from another module. Only shrinks.
KNOWN: dict[str, int] = {}


def private_imports() -> Counter[str]:
    """Per module (path relative to core/, ``/``-separated): how many ``_x`` names it imports from another module
    (dunders such as ``__version__`` are not private)."""
    found: Counter[str] = Counter()
    for path in sorted(CORE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if alias.name.startswith("_") and not alias.name.startswith("__"):
                        found[path.relative_to(CORE).as_posix()] += 1
    return found


def test_no_core_module_imports_a_private_name_beyond_the_known_list():
    found = private_imports()
    over = {m: n for m, n in found.items() if n > KNOWN.get(m, 0)}
    assert not over, f"private names imported across core modules (make them the owner's API): {over}"


def test_the_known_list_only_shrinks():
    found = private_imports()
    stale = {m: (n, found.get(m, 0)) for m, n in KNOWN.items() if found.get(m, 0) < n}
    assert not stale, f"fewer private imports than listed — lower KNOWN (listed, found): {stale}"


def test_lore_imports_no_private_name():
    assert not {m: n for m, n in private_imports().items() if m.startswith("lore/")}
