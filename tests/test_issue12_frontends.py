"""Issue 12: the window and the terminal commands use only Chat's public commands and read-only queries.

Checked on the source of ``liyuan_desktop/ui``, ``liyuan_desktop/cli``, ``app.py`` and ``runtime.py`` (the AST, so
comments and strings do not count): wherever an expression is a chat (a name ``chat`` or an attribute ``….chat``)

- no private attribute (``chat._anything``);
- none of the parts a Chat is made of (``chat.tree``, ``chat.context``, ``chat.ledger``, ``chat.branches``,
  ``chat.window``, ``chat.compactor``, ``chat.memory``, ``chat.agent``, ``chat.running``, ``chat.pending_finish``):
  these are the engine's, and a front end that reaches into them rebuilds engine work and drifts (issue 12 found
  restore and the scripts switch written twice that way);
- no ``hasattr``/``getattr`` probing of a chat: its commands and queries are a real type's methods.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "liyuan_desktop"
FRONT_ENDS = [PKG / "ui", PKG / "cli", PKG / "app.py", PKG / "runtime.py"]

#: The parts of a Chat (core/chat/view.py ChatView.__init__): engine internals, not queries.
PARTS = {"tree", "context", "ledger", "branches", "window", "compactor", "memory", "agent", "running",
         "pending_finish"}


def _files() -> list[Path]:
    out: list[Path] = []
    for p in FRONT_ENDS:
        out.extend([p] if p.suffix == ".py" else sorted(p.rglob("*.py")))
    return out


def _is_chat(node: ast.AST) -> bool:
    return (isinstance(node, ast.Name) and node.id == "chat") or (isinstance(node, ast.Attribute) and node.attr == "chat")


def _violations(source: str, where: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and _is_chat(node.value):
            if node.attr.startswith("_") and not node.attr.startswith("__"):
                found.append(f"{where}:{node.lineno} private chat.{node.attr}")
            elif node.attr in PARTS:
                found.append(f"{where}:{node.lineno} chat.{node.attr} (a part of Chat, not a command or query)")
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("hasattr", "getattr")
                and node.args and _is_chat(node.args[0])):
            found.append(f"{where}:{node.lineno} {node.func.id}() probing a chat")
    return sorted(found, key=lambda f: int(f.split(":")[1].split(" ")[0]))


def test_the_checker_finds_what_it_looks_for():
    src = ("chat.tree.append('x')\nself.chat._write_meta()\nwin.chat.context.scripts\n"
           "if hasattr(self.chat, 'undo'): pass\nx = getattr(chat, 'mode', '')\n")
    found = _violations(src, "t.py")
    assert sorted(f.split(" ", 1)[0] for f in found) == ["t.py:1", "t.py:2", "t.py:3", "t.py:4", "t.py:5"], found
    assert _violations("chat.send('x')\nself.chat.transcript_page()\nchat.model.name\n", "ok.py") == []


def test_front_ends_use_only_chat_commands_and_queries():
    found: list[str] = []
    for path in _files():
        found += _violations(path.read_text("utf-8"), str(path.relative_to(ROOT)))
    assert not found, "front ends reaching past Chat's commands and queries:\n" + "\n".join(found)
