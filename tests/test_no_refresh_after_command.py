"""Issue 25: no pane is refreshed by hand after a chat command — the command's change notice does it (ui/infra/session.py
``changed``). Read from the code: in a ui module, a statement that calls a known refresh method (refresh_state,
reload_transcript, refresh_tree, _refresh_branches, refresh, …) within the two statements after one that runs a
``Chat`` command (a name in core/chat/changes.py COMMAND_CHANGES, called on something named ``chat``) fails, unless
its function is on the shrinking list below."""

from __future__ import annotations

import ast
from pathlib import Path

from liyuan_desktop.core.chat import facade  # noqa: F401 - fills COMMAND_CHANGES
from liyuan_desktop.core.chat.changes import COMMAND_CHANGES

UI = Path(__file__).resolve().parents[1] / "liyuan_desktop" / "ui"
REFRESH = {"refresh_state", "reload_transcript", "refresh_tree", "_refresh_branches", "refresh", "reload",
           "_branches_changed", "_story_changed", "refresh_panes"}
#: (module, function) still refreshing by hand after a command; only shrinks
ALLOWED: set[tuple[str, str]] = set()


def _runs_command(node: ast.AST) -> bool:
    for n in ast.walk(node):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in COMMAND_CHANGES:
            owner = n.func.value
            name = owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", "")
            if "chat" in name:
                return True
    return False


def _refreshes(stmt: ast.stmt) -> bool:
    if not isinstance(stmt, ast.Expr) or not isinstance(stmt.value, ast.Call):
        return False
    f = stmt.value.func
    return isinstance(f, ast.Attribute) and f.attr in REFRESH


def offenders() -> set[tuple[str, str]]:
    found = set()
    for path in sorted(UI.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for block in ast.walk(fn):
                body = getattr(block, "body", None)
                if not isinstance(body, list):
                    continue
                for i, stmt in enumerate(body):
                    if isinstance(stmt, ast.stmt) and _runs_command(stmt) and not isinstance(
                            stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        if any(_refreshes(s) for s in body[i + 1:i + 4]):
                            found.add((path.stem, fn.name))
    return found


def test_no_refresh_by_hand_after_a_chat_command():
    extra = offenders() - ALLOWED
    assert not extra, f"refreshed by hand after a chat command (broadcast the notice instead): {sorted(extra)}"


def test_the_list_only_shrinks():
    gone = ALLOWED - offenders()
    assert not gone, f"no longer refreshing by hand, take them off ALLOWED: {sorted(gone)}"
