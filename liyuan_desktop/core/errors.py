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
    text the model (and the user) can act on — what was wrong and what to do next; ``en``: the same in English, for
    a chat in English (issue 32: every text sent to the model follows the chat's language; "" when the raiser has
    none: an English chat then reads :data:`GENERIC_EN` for the code). ``extra``: further fields of the result
    (``version``, ``count``, ``index``…), JSON-serialisable."""

    def __init__(self, code: str, message: str, *, en: str = "", **extra: Any):
        super().__init__(message)
        self.code = code
        self.message = message
        self.en = en
        self.extra = extra

    def message_for(self, language: str = "zh") -> str:
        """The message in the chat's ``language``: Chinese for "zh" (or none), English for every other language
        (``en``, else a generic English line naming the code)."""
        if not language or language == "zh":
            return self.message
        return self.en or GENERIC_EN.format(code=self.code)

    def to_result(self, language: str = "zh") -> dict[str, Any]:
        """The tool result the model sees: ``{"ok": false, "error": code, "message": …, …extra}``, the message in
        the chat's ``language`` (:meth:`message_for`)."""
        return {"ok": False, "error": self.code, "message": self.message_for(language), **self.extra}


#: The English message of a refusal whose raiser wrote no English text (``{code}``: the machine-readable code).
GENERIC_EN = "The call was refused ({code}); nothing changed. Check the arguments against the tool's description and try again."
