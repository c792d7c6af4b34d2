"""Engine models whose pydantic validators are built on first use, not at import (issue 15: start-up).

pydantic builds a model's core schema, validator and serializer when the class statement runs (~0.5–2 ms a model
on this machine's warm start); the window imports ~90 engine models before the demo chat is interactive and uses
fewer than 40 of them by then (beat events, chapter review, the writing room's codex, outline and progress models,
checkpoints, plot threads… are used later or never). A model built on :class:`DeferredModel` is completed by pydantic
the first time it is validated, constructed, dumped or asked for its JSON schema (pydantic's ``defer_build``), so
behaviour, schemas and dumps are byte-identical — only the moment of the build moves. :func:`build_deferred` builds
them ahead of need, for a caller with idle time (the window, after it is interactive), so the first beat does not pay.
"""

from __future__ import annotations

import sys
from typing import Iterable

from pydantic import BaseModel, ConfigDict

__all__ = ["DeferredModel", "build_deferred"]


class DeferredModel(BaseModel):
    """Base of an engine model not needed to open a chat: ``defer_build`` (module doc). Subclasses add their own
    ``model_config`` keys as usual (pydantic merges the configs)."""

    model_config = ConfigDict(defer_build=True)


def build_deferred(modules: Iterable[str] = ()) -> int:
    """Complete every not-yet-built model defined in the already imported modules named in ``modules`` (every
    imported ``liyuan_desktop`` module when empty); returns how many were built. Never imports anything itself and
    never raises for a model that cannot be built yet (a forward reference not defined): pydantic then builds it on
    first use as it would have anyway."""
    wanted = set(modules)
    built = 0
    seen: set[type[BaseModel]] = set()
    stack: list[type[BaseModel]] = [BaseModel]
    while stack:
        cls = stack.pop()
        for sub in cls.__subclasses__():
            if sub in seen:
                continue
            seen.add(sub)
            stack.append(sub)
            mod = sub.__module__
            if (mod in wanted if wanted else mod.startswith("liyuan_desktop.")) and mod in sys.modules \
                    and not sub.__pydantic_complete__:
                try:
                    if sub.model_rebuild(raise_errors=False):
                        built += 1
                except Exception:  # noqa: BLE001 - first use builds it (and reports a real error) as before
                    continue
    return built
