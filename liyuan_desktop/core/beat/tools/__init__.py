"""The one tool registry (issue 12): every tool the model can call, declared once.

- :mod:`.errors` — :class:`ToolError`, the one refusal type (a machine-readable ``code`` + message + extra fields).
- :mod:`.registry` — :class:`ToolSpec` (name, mode, argument model, description, handler, summary), registration,
  the byte-stable JSON specs and argument parsing.
- :mod:`.context` — :class:`ToolContext`, what a handler gets from the beat.
- :mod:`.roleplay`, :mod:`.story_files`, :mod:`.memory` — the declarations.
- :mod:`.sets` — the named sets a beat offers (role-play, memory, agent); importing it declares every tool.

This file imports nothing: the draft and the story folder import :mod:`.errors`, and the declarations import them.
"""
