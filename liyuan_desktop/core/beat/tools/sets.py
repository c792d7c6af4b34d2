"""The named sets of tools a beat offers, drawn from the registry (importing this module declares every tool).

Each set is a tuple of tool names in the exact order the model sees them (the order is part of the prompt prefix the
provider caches, and of the golden runs). :func:`core.beat.tools.registry.tool_specs` turns a set into the specs sent.

- :data:`ROLEPLAY_TOOLS`: a role-play beat (seed 000 稿纸/收笔/上一轮能原位改/岔口交给用户; seed 002 world_state_get).
- :data:`COMPACT_ROLEPLAY_TOOLS`: the compact prompt's set for small / CPU models (issue 30 §6).
- :data:`MEMORY_TOOLS`: added after the role-play set once a branch has been compacted (or cut to fit the window).
- :data:`AGENT_FILE_TOOLS`, :data:`AGENT_TOOLS`: agent mode (写长篇): the file tools, then ask, the ledger, the world
  book and memory_search (the agent rules point to it: 细节可用 memory_search 查).
- :data:`WRITING_TOOLS`: added after the agent set when the chat has an outline (大纲.md; issue 19): the outline
  tools and ``chapter_review`` (the agent reviews a chapter of its own).
"""

from __future__ import annotations

from . import memory, review, roleplay, story_files, writing  # noqa: F401  (declares the tools)

ROLEPLAY_TOOLS: tuple[str, ...] = (
    "draft_write", "draft_append", "draft_read", "draft_search", "draft_edit", "draft_seal",
    "previous_draft_read", "previous_draft_edit", "ask", "world_state_get", "lorebook_search", "lorebook_list",
)
MEMORY_TOOLS: tuple[str, ...] = ("memory_search",)
#: The compact set for small / CPU models (issue 30 §6, ``ProviderSettings.compact_prompt``): write, edit and seal the
#: draft, ask the user, look the world book up — the schemas a third of the full set's size.
COMPACT_ROLEPLAY_TOOLS: tuple[str, ...] = ("draft_write", "draft_edit", "draft_seal", "ask", "lorebook_search")
AGENT_FILE_TOOLS: tuple[str, ...] = ("read", "grep", "edit", "write")
AGENT_TOOLS: tuple[str, ...] = (*AGENT_FILE_TOOLS, "ask", "world_state_get", "lorebook_search", "lorebook_list",
                                *MEMORY_TOOLS)
WRITING_TOOLS: tuple[str, ...] = ("outline_read", "outline_edit", "chapter_review")
