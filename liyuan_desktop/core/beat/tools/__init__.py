"""The one tool registry (issue 12): every tool the model can call, declared once.

- :class:`core.errors.ToolError` — the one refusal type (a machine-readable ``code`` + message + extra fields); it
  lives in core/errors.py so the draft and the story folder can raise it without importing the registry.
- :mod:`.registry` — :class:`ToolSpec` (name, mode, argument model, description, handler, summary), registration,
  the byte-stable JSON specs and argument parsing.
- :mod:`.context` — :class:`ToolContext`, what a handler gets from the beat.
- :mod:`.roleplay`, :mod:`.story_files`, :mod:`.memory` — the declarations.
- :mod:`.sets` — the named sets a beat offers (role-play, memory, agent); importing it declares every tool.

This file imports nothing: the declarations import the draft and the story folder, never the other way round.
"""
