"""Issue 25: the UI holds the chat as :class:`~liyuan_desktop.core.chat.Chat`, never ``Any`` — a parameter,
attribute or variable named ``chat`` (or ``…_chat``) in ui/ is annotated ``Chat`` / ``Optional[Chat]``, so mypy
checks every use of the engine's facade from the window. Read from the code (AST)."""
from __future__ import annotations

import ast
from pathlib import Path

UI = Path(__file__).resolve().parents[1] / "liyuan_desktop" / "ui"


def _is_any(ann: ast.expr | None) -> bool:
    if ann is None:
        return False
    text = ast.unparse(ann).replace("'", "").replace('"', "")
    return text in {"Any", "Optional[Any]", "Any | None", "None | Any"}


def _named_chat(name: str) -> bool:
    return name == "chat" or name.endswith("_chat")


def offenders() -> list[str]:
    """``path:line name`` for every ``chat`` annotated Any in ui/."""
    out = []
    for path in sorted(UI.rglob("*.py")):
        rel = path.relative_to(UI.parent.parent).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                args = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
                out += [f"{rel}:{a.lineno} {a.arg}" for a in args if _named_chat(a.arg) and _is_any(a.annotation)]
            elif isinstance(node, ast.AnnAssign) and _is_any(node.annotation):
                target = node.target
                name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
                if _named_chat(name):
                    out.append(f"{rel}:{node.lineno} {name}")
    return out


def test_no_chat_held_as_any_in_the_ui():
    found = offenders()
    assert found == [], "annotate as Chat (under TYPE_CHECKING: from ...core.chat import Chat): " + ", ".join(found)
