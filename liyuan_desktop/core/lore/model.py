"""The world-info entry model: :class:`LoreEntry` (one SillyTavern entry, in the names and defaults of
``public/scripts/world-info.js``), :class:`ScanMessage` (a chat message as the scanner sees it), the constants of
SillyTavern's numbering (positions, roles, selective logic, sources) and the ``@@`` decorator lines of a content.

How an entry is read from / written to a card book or a World Info file is in :mod:`.formats`; when it activates in
:mod:`.activation`. The package docstring (:mod:`liyuan_desktop.core.lore`) summarises the semantics.
"""

from __future__ import annotations

from typing import Any, Optional

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

# ---------------------------------------------------------------------------------------------------------------
# constants
# ---------------------------------------------------------------------------------------------------------------

#: Entry positions in SillyTavern's numbering (index = the number in a WI file / ``extensions.position``).
POSITIONS = ("before_char", "after_char", "an_top", "an_bottom", "at_depth", "em_top", "em_bottom", "outlet")
#: ``role`` of an @depth entry.
ROLES = ("system", "user", "assistant")
#: ``selectiveLogic`` values.
AND_ANY, NOT_ALL, NOT_ANY, AND_ALL = 0, 1, 2, 3
LOGIC_NAMES = {AND_ANY: "AND_ANY", NOT_ALL: "NOT_ALL", NOT_ANY: "NOT_ANY", AND_ALL: "AND_ALL"}
#: Where a book is attached; the first four ranks are ST's source order (chat lore first).
SOURCES = ("chat", "persona", "card", "global")
MAX_SCAN_DEPTH = 1000  # ST's MAX_SCAN_DEPTH
DEFAULT_DEPTH = 4
DEFAULT_WEIGHT = 100

ASCII_WORD = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
#: The six card fields an entry may opt in to scanning (ST 2025 ``match*`` flags) → ``global_scan`` keys.
GLOBAL_SCAN_FIELDS = ("persona_description", "character_description", "character_personality",
                      "character_depth_prompt", "scenario", "creator_notes")

# Bumped on every attribute assignment of a LoreEntry/Lorebook, so compiled matchers know when to rebuild.
ENTRY_EDITS = [0]


# ---------------------------------------------------------------------------------------------------------------
# models
# ---------------------------------------------------------------------------------------------------------------

class LoreEntry(BaseModel):
    """One world-info entry.

    ``title`` is SillyTavern's ``comment`` (a card entry's ``name`` as fallback). ``order`` is the insertion order
    (higher = later / closer to the end of the prompt). ``position`` is one of :data:`POSITIONS`; ``depth``/``role``
    (0 system, 1 user, 2 assistant) apply to ``at_depth``. ``case_sensitive`` / ``match_whole_words`` /
    ``use_group_scoring`` / ``scan_depth``: ``None`` = the book's setting. ``delay_until_recursion``: 0 off, else
    the recursion level (``true`` in JSON ≙ 1). ``sticky`` / ``cooldown`` / ``delay`` count chat messages, 0 = none.
    ``extensions`` is the entry's own ``extensions`` object as read (unknown keys kept). ``book`` / ``source``
    say where the entry came from (book name; "card" | "chat" | "persona" | "global" | "").

    Mutating a list in place (``entry.keys.append``) is not noticed by the matcher cache — assign a new list or call
    :meth:`Lorebook.invalidate`.
    """

    model_config = ConfigDict(extra="allow")

    uid: int = 0
    title: str = ""
    keys: list[str] = Field(default_factory=list)
    secondary_keys: list[str] = Field(default_factory=list)
    selective_logic: int = 0
    content: str = ""
    constant: bool = False
    enabled: bool = True
    order: int = 100
    position: str = "before_char"
    case_sensitive: Optional[bool] = None
    match_whole_words: Optional[bool] = None
    probability: int = 100
    use_probability: bool = True
    group: str = ""
    sticky: int = 0
    cooldown: int = 0
    delay: int = 0
    extensions: dict[str, Any] = Field(default_factory=dict)
    # -- SillyTavern fields added with the full activation --
    selective: bool = True
    depth: int = DEFAULT_DEPTH
    role: int = 0
    exclude_recursion: bool = False
    prevent_recursion: bool = False
    delay_until_recursion: int = 0
    scan_depth: Optional[int] = None
    group_override: bool = False
    group_weight: int = DEFAULT_WEIGHT
    use_group_scoring: Optional[bool] = None
    automation_id: str = ""
    vectorized: bool = False
    display_index: Optional[int] = None
    ignore_budget: bool = False
    triggers: list[str] = Field(default_factory=list)
    outlet_name: str = ""
    character_filter: Optional[dict[str, Any]] = None
    match_persona_description: bool = False
    match_character_description: bool = False
    match_character_personality: bool = False
    match_character_depth_prompt: bool = False
    match_scenario: bool = False
    match_creator_notes: bool = False
    book: str = ""
    source: str = ""

    _raw: Optional[dict[str, Any]] = PrivateAttr(default=None)
    _kind: Optional[str] = PrivateAttr(default=None)  # "card" | "wi": the shape _raw has
    _parsed: Optional[dict[str, Any]] = PrivateAttr(default=None)  # field values as read from _raw
    #: where _raw and _parsed come from while not built yet (lorebook._RowSource: an entry of a book opened from
    #: the rows cache by Lorebook.from_file); formats.entry_raw / entry_parsed resolve them when export asks
    _lazy: Optional[Any] = PrivateAttr(default=None)

    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(name, value)
        ENTRY_EDITS[0] += 1

    @property
    def display_title(self) -> str:
        """Title shown in injections and tool results: the comment/name, else the first key, else ``#uid``."""
        return self.title or (self.keys[0] if self.keys else f"#{self.uid}")

    @property
    def body(self) -> str:
        """The content without SillyTavern decorator lines (leading ``@@activate`` / ``@@dont_activate`` …)."""
        return parse_decorators(self.content)[1]

    @property
    def role_name(self) -> str:
        """The message role of an at-depth entry: SillyTavern's ``role`` number (0 system, 1 user, 2 assistant) as
        a name; any other number counts as system."""
        return ROLES[self.role] if 0 <= self.role < len(ROLES) else "system"


class ScanMessage(BaseModel):
    """A chat message as the activation scanner sees it."""

    name: str
    text: str

    def scan_text(self) -> str:
        """``"Name: text"`` — the form SillyTavern scans."""
        return f"{self.name}: {self.text}"


# ---------------------------------------------------------------------------------------------------------------
# decorators
# ---------------------------------------------------------------------------------------------------------------

def parse_decorators(content: str) -> tuple[tuple[str, ...], str]:
    """ST ``parseDecorators``: leading ``@@`` lines; known ones are ``@@activate`` / ``@@dont_activate``
    (``@@@x`` is a fallback used only after an unknown decorator). Returns (decorators, content without them)."""
    if not content.startswith("@@"):
        return (), content
    lines = content.split("\n")
    decorators: list[str] = []
    fallbacked = False
    new_content = content
    for i, line in enumerate(lines):
        if line.startswith("@@"):
            if line.startswith("@@@") and not fallbacked:
                continue
            probe = line[1:] if line.startswith("@@@") else line
            if probe.startswith(("@@activate", "@@dont_activate")):
                decorators.append(probe)
                fallbacked = False
            else:
                fallbacked = True
        else:
            new_content = "\n".join(lines[i:])
            break
    # ST quirk kept: content made only of decorator lines stays as written
    return tuple(decorators), new_content
