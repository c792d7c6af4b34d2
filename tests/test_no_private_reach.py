"""No ui module reads or writes another module's private members (issue 25: "0 private members read across ui
modules").

A ui module may use ``x._name`` only when ``x`` is ``self``/``cls`` or when ``_name`` belongs to the module itself: a
private method or attribute of a class defined there (a view and its page bridge in ui/frames/conversation.py), or a private
module-level name. Everything else — ``win._items``, ``window._desk_sizes``, ``i18n._LANG``, also spelt
``getattr(win, "_x")`` / ``setattr`` / ``hasattr`` — is an offender: the owner gives it a public name (the window's
session, ui/infra/session.py, holds what panes share).
"""

from __future__ import annotations

import ast
from pathlib import Path

UI = Path(__file__).resolve().parent.parent / "liyuan_desktop" / "ui"
_BY_NAME = {"getattr", "setattr", "hasattr", "delattr"}


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _own_names(tree: ast.Module) -> set[str]:
    """The private names this module defines: its module-level names, its classes' methods and class attributes,
    and the attributes its code assigns on ``self``/``cls``."""
    own: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            own.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            own.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) \
                and isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
            own.add(node.attr)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            own.add(node.target.id)
    return {n for n in own if _private(n)}


def offenders_in(source: str, label: str) -> list[str]:
    """``label:line: expression`` for every reach into another module's private member in ``source``."""
    tree = ast.parse(source)
    own = _own_names(tree)
    found: list[str] = []
    for node in ast.walk(tree):
        name, target = None, None
        if isinstance(node, ast.Attribute):
            name, target = node.attr, node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _BY_NAME \
                and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) \
                and isinstance(node.args[1].value, str):
            name, target = node.args[1].value, node.args[0]
        if name is None or target is None or not _private(name):
            continue
        if isinstance(target, ast.Name) and target.id in ("self", "cls"):
            continue
        if name in own:
            continue
        found.append(f"{label}:{node.lineno}: {ast.unparse(node)}")
    return found


def all_offenders() -> list[str]:
    """Offenders over every module under liyuan_desktop/ui (sorted)."""
    out: list[str] = []
    for path in sorted(UI.rglob("*.py")):
        out += offenders_in(path.read_text(encoding="utf-8"), str(path.relative_to(UI.parent.parent)))
    return out


def test_no_ui_module_reaches_into_another_modules_private_members():
    offenders = all_offenders()
    assert offenders == [], "private members read across ui modules (give them a public name):\n" + "\n".join(offenders)


def test_the_check_sees_each_spelling():
    src = '''
import i18n

class Pane:
    def __init__(self, win):
        self._mine = 1
        self._view = View()

    def go(self, win, window):
        win._items = []
        window._desk_sizes = None
        x = getattr(win, "_find_browsing", False)
        setattr(win, "_busy", True)
        return i18n._LANG, self._mine, self._view._paint(), _helper(), win.__class__

class View:
    def _paint(self):
        return 0

def _helper():
    return 0
'''
    found = [line.split(": ", 1)[1] for line in offenders_in(src, "m.py")]
    assert sorted(found) == sorted(["win._items", "window._desk_sizes", "getattr(win, '_find_browsing', False)",
                                    "setattr(win, '_busy', True)", "i18n._LANG"])
