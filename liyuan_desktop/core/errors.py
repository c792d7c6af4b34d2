"""The one error type of every tool: :class:`ToolError` with a machine-readable ``code``.

A tool refuses a call by raising it; nothing has changed when it is raised. The beat loop turns it into the tool
result the model reads, ``{"ok": false, "error": code, "message": …, …extra}`` (seed 000: bad model output becomes a
tool error the model can act on). The draft (:mod:`core.beat.draft`), the chapter folder
(:mod:`core.story.workspace`) and every tool handler raise it; specialised subclasses exist only where the kind of
error carries meaning of its own (:class:`core.story.workspace.StoryPathError`, code ``bad_path``).

This module imports nothing of the project, so the draft and the story folder can use it without depending on the
registry or the tools declared in it.
"""

from __future__ import annotations

from typing import Any


class ToolError(Exception):
    """A tool call was refused; nothing changed.

    ``code``: a stable snake_case word the model and the tests can branch on (``stale_version``, ``not_found``,
    ``not_unique``, ``bad_path``, ``bad_args``, ``too_large``…; each raiser documents its own). ``message``: Chinese
    text the model (and the user) can act on — what was wrong and what to do next. ``extra``: further fields of the
    result (``version``, ``count``, ``index``…), JSON-serialisable."""

    def __init__(self, code: str, message: str, **extra: Any):
        super().__init__(message)
        self.code = code
        self.message = message
        self.extra = extra

    def to_result(self) -> dict[str, Any]:
        """The tool result the model sees: ``{"ok": false, "error": code, "message": …, …extra}``."""
        return {"ok": False, "error": self.code, "message": self.message, **self.extra}
