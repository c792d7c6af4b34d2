"""Issue 12's documentation rules for the reorganised core, checked on the source:

- every public module, class and function in ``liyuan_desktop/core`` has a docstring (the tool argument models are
  the one exception: pydantic would copy a docstring into the JSON schema the model sees, which would change the
  tool block byte for byte and break the provider's prefix cache and the golden runs);
- every module path a docstring or comment in core names (``core.beat.tools.sets``, ``:mod:`.registry```…) still
  exists after the move into packages, so a newcomer following a reference lands in the right room.
"""

from __future__ import annotations

import ast
import importlib
import re
import typing
from pathlib import Path

from pydantic import BaseModel

ROOT = Path(__file__).resolve().parent.parent
CORE = ROOT / "liyuan_desktop" / "core"


def _tool_argument_models() -> set[str]:
    """Qualified names (module.Class) of the registered tools' argument models and the models nested in them."""
    from liyuan_desktop.core.beat.tools import registry, sets  # noqa: F401  (importing sets declares every tool)

    seen: set[type] = set()
    todo = [registry.get_tool(n).args for n in sets.ROLEPLAY_TOOLS + sets.AGENT_TOOLS + sets.MEMORY_TOOLS]
    todo.append(registry.NoArgs)
    while todo:
        model = todo.pop()
        if model in seen:
            continue
        seen.add(model)
        for field in model.model_fields.values():
            stack = [field.annotation]
            while stack:
                t = stack.pop()
                if isinstance(t, type) and issubclass(t, BaseModel):
                    todo.append(t)
                stack.extend(typing.get_args(t))
    return {f"{m.__module__}.{m.__qualname__}" for m in seen}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _is_setter(node: ast.AST) -> bool:
    return any(ast.unparse(d).endswith((".setter", ".deleter")) for d in getattr(node, "decorator_list", []))


def test_every_public_core_definition_has_a_docstring():
    exempt = _tool_argument_models()
    missing: list[str] = []
    for path in sorted(CORE.rglob("*.py")):
        tree = ast.parse(path.read_text("utf-8"))
        mod = _module_name(path)
        if ast.get_docstring(tree) is None:
            missing.append(f"{path.relative_to(ROOT)}:1 (module)")

        def walk(node: ast.AST, prefix: str) -> None:
            for child in ast.iter_child_nodes(node):
                if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    continue
                if child.name.startswith("_") or _is_setter(child):
                    continue
                qual = prefix + child.name
                if ast.get_docstring(child) is None and f"{mod}.{qual}" not in exempt:
                    missing.append(f"{path.relative_to(ROOT)}:{child.lineno} {qual}")
                if isinstance(child, ast.ClassDef):
                    walk(child, qual + ".")

        walk(tree, "")
    assert not missing, "public definitions without a docstring:\n" + "\n".join(missing)


def test_tool_argument_models_carry_no_docstring():
    """The exemption above is real: an argument model's docstring would land in the schema sent to the model."""
    from liyuan_desktop.core.beat.tools import registry, sets  # noqa: F401

    for name in sets.ROLEPLAY_TOOLS + sets.AGENT_TOOLS:
        assert "description" not in registry.schema_of(registry.get_tool(name).args), name


# A dotted module path written out in full (``core.beat.tools.sets``, ``liyuan_desktop.core.chat.Chat``) …
_DOTTED = re.compile(r"(?<![\w./])((?:liyuan_desktop\.)?core(?:\.[A-Za-z_]\w*)+)")
# … or a Sphinx :mod: role, which may be relative to the package it is written in (``:mod:`.registry```).
_MOD_ROLE = re.compile(r":mod:`~?([.\w]+)`")


def _resolves(dotted: str) -> bool:
    """True when ``dotted`` is a module, or a module followed by attributes (pydantic fields count)."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            fields = getattr(obj, "model_fields", {}) if isinstance(obj, type) else {}
            if attr in fields:
                return True
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def test_module_paths_named_in_core_exist():
    stale: list[str] = []
    for path in sorted(CORE.rglob("*.py")):
        mod = _module_name(path)
        package = mod if path.name == "__init__.py" else mod.rsplit(".", 1)[0]
        for n, line in enumerate(path.read_text("utf-8").splitlines(), 1):
            refs = [m.group(1).rstrip(".") for m in _DOTTED.finditer(line)]
            refs = [r if r.startswith("liyuan_desktop.") else "liyuan_desktop." + r for r in refs]
            for m in _MOD_ROLE.finditer(line):
                ref = m.group(1)
                if ref.startswith("."):
                    up = len(ref) - len(ref.lstrip("."))
                    base = package.split(".")[: len(package.split(".")) - (up - 1)]
                    refs.append(".".join(base + [ref.lstrip(".")]))
                elif not ref.startswith(("liyuan_desktop", "core.")):
                    # a short name (``chat``, ``cards.meta``, ``zipfile``): a room of core, a module beside this one, or any
                    if not any(_resolves(c) for c in (f"liyuan_desktop.core.{ref}", f"{package}.{ref}", ref)):
                        stale.append(f"{path.relative_to(ROOT)}:{n} {m.group(0)}")
            for ref in refs:
                if not _resolves(ref):
                    stale.append(f"{path.relative_to(ROOT)}:{n} {ref}")
    assert not stale, "references to modules that moved or no longer exist:\n" + "\n".join(stale)
