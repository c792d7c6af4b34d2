"""Lazy re-exports for package ``__init__`` modules (PEP 562 module ``__getattr__``), issue 15 (start-up time).

A package that re-exports its submodules' names (``from .llm import OpenAIChatModel``) used to import every
submodule — and what they import (httpx, tenacity, yaml…) — as soon as any one submodule was imported, because
importing ``pkg.sub`` runs ``pkg/__init__.py`` first. With :func:`lazy_exports` the package imports a submodule only
when one of its names is first read from the package; the value is then stored in the package's namespace, so later
reads are plain attribute reads. ``from pkg import Name`` works the same (it reads the attribute).

    # pkg/__init__.py
    from typing import TYPE_CHECKING
    from ..lazy_exports import lazy_exports

    __getattr__, __dir__ = lazy_exports(__name__, {"OpenAIChatModel": ".openai_client", ...})
    if TYPE_CHECKING:  # for type checkers and readers: the same names, imported eagerly
        from .openai_client import OpenAIChatModel
"""

from __future__ import annotations

import importlib
import sys
from typing import Any, Callable


def lazy_exports(package: str, names: dict[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``(__getattr__, __dir__)`` pair for the package ``package`` (its ``__name__``) that re-exports
    ``names``: export name → submodule, relative (``".types"``) or absolute. ``__getattr__(name)`` imports the
    submodule, stores the value in the package and returns it; an unknown name raises AttributeError as a module
    does. ``__dir__()`` lists the package's own names and every lazy one."""

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(names))

    return __getattr__, __dir__
