"""No slot in liyuan_desktop/ui receives Qt's ``checked`` by accident (issue 24 §2).

``clicked``, ``triggered`` and ``toggled`` carry a bool. PySide6 passes it to a slot that can take a positional
argument, so ``button.clicked.connect(self.purge_selected)`` with ``def purge_selected(self, confirm=True)`` calls
``purge_selected(False)``: the trash was emptied without the question, 探测能力 probed a provider named ``False``.

This test reads the source (AST, no import) of every module in ``liyuan_desktop/ui`` and, for each connection of one
of those signals — ``x.clicked.connect(slot)``, ``x.triggered.connect(slot)``, ``x.toggled.connect(slot)`` and
``menu.addAction(text, slot)`` / ``addAction(icon, text, slot)`` — resolves ``slot`` to its definition and fails when
the bool would land in a parameter that is not meant for it:

* a named function or method (``self.m``, ``other.m``, a bare name, ``functools.partial(f, …)``) whose first free
  positional parameter has a default (the bool replaces the default), or has none and is not annotated ``bool``
  (the bool becomes a required argument that means something else — a QAction parameter is accepted for the
  ``triggered(QAction)`` of menus and action groups);
* a lambda whose first parameter has a default that is not a bool constant (``lambda n=name: open(n)`` — the usual
  way of capturing a loop variable, which the bool overwrites).

The fix at a flagged line is to connect through a lambda that drops the bool (``lambda: self.m()``,
``lambda _=False: slot()``), or to give the bool a parameter of its own.
``self.m`` is looked up in the enclosing class and its bases (by name, across ui modules); ``other.m`` in every ui
class that defines ``m`` (any bad definition fails: the name alone cannot tell which class it is). Names the ui
package does not define (Qt's own ``close``, ``accept``…) are not checked, nor ``self.someSignal.emit`` (PySide6
calls it with the signal's own arguments only).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Union

import pytest

UI = Path(__file__).resolve().parent.parent / "liyuan_desktop" / "ui"
SIGNALS = {"clicked", "triggered", "toggled"}

FuncDef = Union[ast.FunctionDef, ast.AsyncFunctionDef]


@dataclass
class Module:
    path: Path
    tree: ast.Module
    functions: dict[str, FuncDef] = field(default_factory=dict)     # module-level functions
    classes: dict[str, ast.ClassDef] = field(default_factory=dict)


def _load(paths: list[Path]) -> list[Module]:
    out = []
    for p in paths:
        tree = ast.parse(p.read_text("utf-8"), str(p))
        m = Module(p, tree)
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                m.functions[node.name] = node
            elif isinstance(node, ast.ClassDef):
                m.classes[node.name] = node
        out.append(m)
    return out


def _methods(cls: ast.ClassDef) -> dict[str, FuncDef]:
    return {n.name: n for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


def _is_static(fn: FuncDef) -> bool:
    return any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in fn.decorator_list)


def _positional(fn: Union[FuncDef, ast.Lambda], bound: bool) -> tuple[list[ast.arg], list[Optional[ast.expr]]]:
    """The positional parameters of ``fn`` (without ``self`` when ``bound``) and their defaults (None: none)."""
    args = list(fn.args.posonlyargs) + list(fn.args.args)
    defaults: list[Optional[ast.expr]] = [None] * (len(args) - len(fn.args.defaults)) + list(fn.args.defaults)
    if bound and args:
        args, defaults = args[1:], defaults[1:]
    return args, defaults


def _takes_bool(arg: ast.arg) -> bool:
    ann = ast.unparse(arg.annotation) if arg.annotation is not None else ""
    return ann.strip("'\"") in ("bool", "Any") or "QAction" in ann


def _function_problem(fn: FuncDef, bound: bool, skip: int = 0, fixed_kw: frozenset = frozenset()) -> Optional[str]:
    """Why the bool would land in the wrong parameter of ``fn`` (None when it would not). ``skip`` positional
    parameters and the ``fixed_kw`` names are filled already (``functools.partial``)."""
    args, defaults = _positional(fn, bound and not _is_static(fn))
    free = [(a, d) for a, d in list(zip(args, defaults))[skip:] if a.arg not in fixed_kw]
    if not free:
        return None  # takes nothing more: PySide6 calls it without the bool (a *args swallows it)
    a, d = free[0]
    if d is not None:
        return f"{fn.name}({a.arg}={ast.unparse(d)}) would get the bool in {a.arg}"
    if not _takes_bool(a):
        return f"{fn.name}({a.arg}) would get the bool as {a.arg}"
    return None


def _lambda_problem(lam: ast.Lambda) -> Optional[str]:
    args, defaults = _positional(lam, False)
    if not args:
        return None
    d = defaults[0]
    if d is not None and not (isinstance(d, ast.Constant) and isinstance(d.value, bool)):
        return f"lambda {args[0].arg}={ast.unparse(d)}: the bool replaces the captured {ast.unparse(d)}"
    return None


class Checker:
    """Resolves connected callables in the ui modules and collects the bad connections."""

    def __init__(self, modules: list[Module], root: Path):
        self.modules = modules
        self.root = root
        self.classes: dict[str, list[ast.ClassDef]] = {}
        self.by_method: dict[str, list[FuncDef]] = {}
        self.functions: dict[str, list[FuncDef]] = {}
        for m in modules:
            for name, c in m.classes.items():
                self.classes.setdefault(name, []).append(c)
                for mn, fn in _methods(c).items():
                    self.by_method.setdefault(mn, []).append(fn)
            for name, fn in m.functions.items():
                self.functions.setdefault(name, []).append(fn)
        self.problems: list[str] = []
        self.seen = 0

    def _class_method(self, cls: ast.ClassDef, name: str, depth: int = 0) -> Optional[FuncDef]:
        meth = _methods(cls).get(name)
        if meth is not None or depth > 5:
            return meth
        for base in cls.bases:
            bname = base.id if isinstance(base, ast.Name) else base.attr if isinstance(base, ast.Attribute) else ""
            for bc in self.classes.get(bname, []):
                found = self._class_method(bc, name, depth + 1)
                if found is not None:
                    return found
        return None

    def _local(self, scopes: list[ast.AST], name: str, module: Module) -> list[FuncDef]:
        for scope in reversed(scopes):
            if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for node in ast.walk(scope):
                    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name \
                            and node is not scope:
                        return [node]
        if name in module.functions:
            return [module.functions[name]]
        return self.functions.get(name, [])

    def problem(self, slot: ast.expr, scopes: list[ast.AST], module: Module) -> Optional[str]:
        """Why ``slot``, connected to a signal carrying a bool, would take it wrongly (None: fine or unknown)."""
        if isinstance(slot, ast.Lambda):
            return _lambda_problem(slot)
        skip, kw = 0, frozenset()
        if isinstance(slot, ast.Call) and ast.unparse(slot.func) in ("partial", "functools.partial") and slot.args:
            skip = len(slot.args) - 1
            kw = frozenset(k.arg for k in slot.keywords if k.arg)
            slot = slot.args[0]
        if isinstance(slot, ast.Name):
            looped = _loop_values(scopes, slot.id)
            if looped is not None:  # for text, slot in ((…, self.m), …): each value in turn
                return next((w for v in looped if (w := self.problem(v, scopes, module))), None)
            for fn in self._local(scopes, slot.id, module):
                why = _function_problem(fn, bound=False, skip=skip, fixed_kw=kw)
                if why:
                    return why
            return None
        if isinstance(slot, ast.Attribute) and slot.attr == "emit" and isinstance(slot.value, ast.Attribute):
            return None  # self.someSignal.emit: PySide6 trims the call to the signal's own arguments
        if isinstance(slot, ast.Attribute):
            cls = next((s for s in reversed(scopes) if isinstance(s, ast.ClassDef)), None)
            if isinstance(slot.value, ast.Name) and slot.value.id == "self" and cls is not None:
                meth = self._class_method(cls, slot.attr)
                if meth is not None:
                    return _function_problem(meth, bound=True, skip=skip, fixed_kw=kw)
                return None  # a Qt method of the base class (close, accept, setFocus…)
            for fn in self.by_method.get(slot.attr, []) + self.functions.get(slot.attr, []):
                why = _function_problem(fn, bound=fn in self.by_method.get(slot.attr, []), skip=skip, fixed_kw=kw)
                if why:
                    return why
        return None

    def visit(self, module: Module) -> None:
        def walk(node: ast.AST, scopes: list[ast.AST]) -> None:
            if isinstance(node, ast.Call):
                self._call(node, scopes, module)
            inner = scopes + [node] if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef,
                                                         ast.For)) else scopes
            for child in ast.iter_child_nodes(node):
                walk(child, inner)

        walk(module.tree, [])

    def _call(self, call: ast.Call, scopes: list[ast.AST], module: Module) -> None:
        f = call.func
        if not isinstance(f, ast.Attribute):
            return
        slot: Optional[ast.expr] = None
        what = ""
        if f.attr == "connect" and isinstance(f.value, ast.Attribute) and f.value.attr in SIGNALS and call.args:
            slot, what = call.args[0], f.value.attr
        elif f.attr == "addAction" and len(call.args) >= 2:
            # addAction(text, slot[, shortcut]) or addAction(icon, text, slot[, shortcut]): the callable argument
            for a in call.args[1:3]:
                if isinstance(a, (ast.Lambda, ast.Name, ast.Attribute, ast.Call)) and not _is_text(a):
                    slot, what = a, "addAction"
                    break
        if slot is None:
            return
        self.seen += 1
        why = self.problem(slot, scopes, module)
        if why:
            rel = module.path.relative_to(self.root)
            self.problems.append(f"{rel}:{call.lineno}: {what} → {ast.unparse(slot)}: {why}")


def _loop_values(scopes: list[ast.AST], name: str) -> Optional[list[ast.expr]]:
    """The values ``name`` takes in an enclosing ``for a, b in ((x, y), …)`` over a literal (None: not a loop name)."""
    for scope in reversed(scopes):
        if not isinstance(scope, ast.For) or not isinstance(scope.iter, (ast.Tuple, ast.List)):
            continue
        target = scope.target
        if isinstance(target, ast.Name) and target.id == name:
            return list(scope.iter.elts)
        if isinstance(target, ast.Tuple):
            idx = next((i for i, t in enumerate(target.elts) if isinstance(t, ast.Name) and t.id == name), None)
            if idx is not None:
                return [e.elts[idx] for e in scope.iter.elts if isinstance(e, (ast.Tuple, ast.List)) and
                        len(e.elts) > idx]
    return None


def _is_text(node: ast.expr) -> bool:
    """A label argument (``tr("…")``, a string, a name that holds one) rather than the slot: ``tr`` calls and
    constants; a bare name is taken as the slot only when it is not followed by anything callable-looking."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.Call) and ast.unparse(node.func) in ("tr", "str", "self.tr", "QIcon", "QKeySequence"):
        return True
    return False


def check(paths: list[Path], root: Path) -> Checker:
    """Run the check over ``paths`` (resolving names across all of them; problems named relative to ``root``)."""
    c = Checker(_load(paths), root)
    for m in c.modules:
        c.visit(m)
    return c


def test_no_ui_slot_takes_checked_by_accident():
    c = check(sorted(UI.rglob("*.py")), UI.parent.parent)
    assert c.seen > 50, "the walker found almost no connections: has the ui package moved?"
    assert not c.problems, "slots that would receive Qt's checked bool:\n" + "\n".join(c.problems)


# -- the checker itself catches each shape (a module written to tmp_path) --------------------------------------------
BAD = '''
import functools
from PySide6.QtWidgets import QPushButton

def helper(name=None): ...

class Pane:
    def __init__(self):
        self.purge_btn.clicked.connect(self.purge_selected)           # 1 defaulted first parameter
        self.probe_btn.clicked.connect(self.probe)                    # 2 required, not a bool
        self.edit_btn.clicked.connect(functools.partial(self.start_edit))  # 3 partial fixes nothing
        for n in ("a", "b"):
            self.menu.addAction(n, lambda n=n: self.open(n))          # 4 captured loop variable
        self.x.triggered.connect(helper)                              # 5 bare function
        for text, slot in (("a", self.refresh), ("b", self.probe)):
            self.z.clicked.connect(slot)                              # 7 a loop over (label, slot) pairs
        def local(what="all"): ...
        self.y.toggled.connect(local)                                 # 6 nested function

    def purge_selected(self, confirm=True): ...
    def probe(self, provider): ...
    def start_edit(self, advanced=False): ...
    def open(self, n): ...
'''

GOOD = '''
import functools
from PySide6.QtWidgets import QPushButton

class Pane:
    def __init__(self):
        self.purge_btn.clicked.connect(lambda: self.purge_selected())
        self.probe_btn.clicked.connect(self.refresh)
        self.edit_btn.clicked.connect(functools.partial(self.start_edit, True))
        self.menu.addAction("a", lambda _=False, n="a": self.open(n))
        self.check.toggled.connect(self.set_on)
        self.menu.triggered.connect(self.picked)
        self.close_btn.clicked.connect(self.close)
        for text, slot in (("a", self.refresh), ("b", lambda: self.probe_btn)):
            self.z.clicked.connect(slot)

    def purge_selected(self, confirm=True): ...
    def refresh(self): ...
    def start_edit(self, advanced=False): ...
    def open(self, n): ...
    def set_on(self, on: bool): ...
    def picked(self, action: "QAction"): ...
'''


@pytest.mark.parametrize("src, expected", [(BAD, 7), (GOOD, 0)], ids=["bad", "good"])
def test_the_checker_sees_each_shape(tmp_path, src, expected):
    p = tmp_path / "pane.py"
    p.write_text(src, "utf-8")
    c = check([p], tmp_path)
    assert len(c.problems) == expected, "\n".join(c.problems)
