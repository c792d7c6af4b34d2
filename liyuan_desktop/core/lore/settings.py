"""SillyTavern's world-info settings (the 「世界书设置」 of the app and of one chat): :class:`WorldInfoSettings`, how they
are read from a SillyTavern ``settings.json`` (:func:`from_st_settings`), written as ``KEY=VALUE`` on the command
line (:func:`parse_assignments`) and applied to a book before activation (:meth:`WorldInfoSettings.apply`).

SillyTavern keeps these settings globally (``public/scripts/world-info.js``: the ``world_info_*`` variables,
``getWorldInfoSettings`` / ``setWorldInfoSettings``; stored in ``settings.json`` under ``world_info_settings``, older
files have the keys at the top level). It ignores a card book's own ``scan_depth`` / ``recursive_scanning`` /
``token_budget``: the global settings rule, and so do we once these are applied. The field names here are
SillyTavern's own, so a ``settings.json`` block, ``liyuan chat --wi world_info_depth=4`` and the saved app settings
all use one vocabulary. Defaults are those of a new SillyTavern install (``default/content/settings.json``; the
code's fallbacks for a file without the keys are recursion off and whole words off, which no new install has).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Iterable, Optional

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..messages import message

if TYPE_CHECKING:  # type only: applying settings sets the book's scan fields
    from .lorebook import Lorebook

#: SillyTavern's insertion strategies (``world_info_insertion_strategy``): the order card and global lore are processed.
STRATEGY_NAMES = {0: "evenly", 1: "character_first", 2: "global_first"}
_PREFIX = "world_info_"


class BudgetBasis(BaseModel):
    """What a chat's world-info budget is computed from (:meth:`WorldInfoSettings.budget_basis`): ``source``
    "preset" (the preset's ``openai_max_context`` minus its ``openai_max_tokens``, as SillyTavern) or "window"
    (the chat's context window); ``context`` the tokens the percentage is taken of; ``preset`` the preset's name and
    ``preset_context`` / ``preset_reply`` its two values (source "preset" only); ``tokens`` the budget (None = no
    budget)."""

    source: str = "window"
    context: int = 0
    preset: str = ""
    preset_context: int = 0
    preset_reply: int = 0
    tokens: Optional[int] = None


class WorldInfoSettings(BaseModel):
    """SillyTavern's global world-info settings, one field per ``world_info_*`` setting (same names, same meaning).

    * ``world_info_depth`` (2): how many of the newest chat messages are scanned for keys (0 = only injected and
      recursed text; an entry's own ``scanDepth`` overrides it); SillyTavern's slider runs 0–100, the engine caps at
      1000.
    * ``world_info_budget`` (25): the budget in percent of the context: ``round(budget × max_context / 100)`` tokens
      (at least 1); 1–100 (SillyTavern resets a stored value above 100 to 25).
    * ``world_info_budget_cap`` (0): an upper bound on that budget in tokens; 0 = none.
    * ``world_info_include_names`` (on): scan each message as ``"Name: text"`` (else the text alone).
    * ``world_info_recursive`` (on): the content of activated entries is scanned again for more keys.
    * ``world_info_case_sensitive`` (off) / ``world_info_match_whole_words`` (on): how plain keys match unless an entry
      says otherwise (regex keys ignore both).
    * ``world_info_character_strategy`` (1): 0 evenly (card and global lore sorted together by order), 1 character
      lore first, 2 global lore first; chat and persona lore always come first.
    * ``world_info_min_activations`` (0): when fewer entries than this activated, the scan widens one message at a
      time (0 = off), up to ``world_info_min_activations_depth_max`` messages (0 = the whole chat).
    * ``world_info_max_recursion_steps`` (0): stop after this many scan passes (0 = no limit). SillyTavern's page sets
      the other one to 0 when either of these two is set; the engine, like SillyTavern's, honours both if a file sets
      both.
    * ``world_info_use_group_scoring`` (off): inclusion groups keep only the members whose keys matched most.
    * ``world_info_overflow_alert`` (off): tell the user when the budget stopped the scan (SillyTavern: a toast
      "World info budget reached after N entries").

    What the budget counts (:meth:`budget_tokens`): as in SillyTavern, the macro-expanded contents of every entry
    that activates, constants and @depth entries included (``ignoreBudget`` entries excepted), counted with
    :func:`.budget.approx_tokens` — so the same entries make it in as in SillyTavern. Liyuan then sends a keyed hit
    to the model only as its *title* in 【相关设定】 (the model reads the text with ``lorebook_search``): those few
    title tokens are not counted against the budget, and the budget decides *which* titles are listed, exactly as
    it decides which contents SillyTavern inserts.
    """

    model_config = ConfigDict(extra="ignore", validate_assignment=True)

    world_info_depth: int = Field(default=2, ge=0, le=1000)
    world_info_budget: int = Field(default=25, ge=1, le=100)
    world_info_budget_cap: int = Field(default=0, ge=0)
    world_info_include_names: bool = True
    world_info_recursive: bool = True
    world_info_case_sensitive: bool = False
    world_info_match_whole_words: bool = True
    world_info_character_strategy: int = Field(default=1, ge=0, le=2)
    world_info_min_activations: int = Field(default=0, ge=0)
    world_info_min_activations_depth_max: int = Field(default=0, ge=0)
    world_info_max_recursion_steps: int = Field(default=0, ge=0)
    world_info_use_group_scoring: bool = False
    world_info_overflow_alert: bool = False

    @classmethod
    def from_book(cls, book: "Lorebook") -> "WorldInfoSettings":
        """The scan settings ``book`` carries now (a card book's own ``scan_depth`` / ``recursive_scanning`` as read,
        SillyTavern's defaults for the rest; budget, cap and overflow alert at their defaults — a book has none): what
        activation uses when no app settings are given (library use, the recorded demo)."""
        return cls(world_info_depth=min(max(book.scan_depth, 0), 1000), world_info_recursive=book.recursive,
                   world_info_include_names=book.include_names, world_info_case_sensitive=book.case_sensitive,
                   world_info_match_whole_words=book.match_whole_words,
                   world_info_character_strategy=book.strategy if book.strategy in STRATEGY_NAMES else 1,
                   world_info_use_group_scoring=book.use_group_scoring,
                   world_info_min_activations=max(book.min_activations, 0),
                   world_info_min_activations_depth_max=max(book.min_activations_depth_max, 0),
                   world_info_max_recursion_steps=max(book.max_recursion_steps, 0))

    # -- use ------------------------------------------------------------------------------------------------------
    def budget_tokens(self, max_context: int) -> Optional[int]:
        """The world-info budget in tokens for a context of ``max_context`` tokens (SillyTavern's ``checkWorldInfo``:
        ``Math.round(budget × maxContext / 100) || 1``, then the cap when it is > 0), or None (no budget) when
        ``max_context`` is not positive. SillyTavern passes the preset's context size minus its response length;
        Liyuan does the same when the chat's preset sets a context size, else it passes the chat's context window
        (:meth:`budget_basis`)."""
        if not max_context or max_context <= 0:
            return None
        b = int(math.floor(self.world_info_budget * max_context / 100 + 0.5)) or 1
        cap = self.world_info_budget_cap
        return min(b, cap) if cap > 0 else b

    def budget_basis(self, window: int, preset_context: Optional[int] = None, preset_reply: Optional[int] = None,
                     preset_name: str = "") -> "BudgetBasis":
        """What the budget of a chat is computed from, and the budget. SillyTavern (chat completion) passes
        ``checkWorldInfo`` the preset's context size minus its reply length (``script.js`` ``getMaxContextSize``:
        ``openai_max_context - openai_max_tokens``), not the model's: with a preset that sets
        ``openai_max_context`` (``preset_context``; ``preset_reply`` = its ``openai_max_tokens``, None = 0) the
        budget follows it; without one (or when that leaves nothing) it follows the chat's context ``window``, as
        before. Never raises."""
        if preset_context and preset_context > 0:
            context = int(preset_context) - max(int(preset_reply or 0), 0)
            if context > 0:
                return BudgetBasis(source="preset", context=context, preset=preset_name,
                                   preset_context=int(preset_context), preset_reply=max(int(preset_reply or 0), 0),
                                   tokens=self.budget_tokens(context))
        return BudgetBasis(source="window", context=int(window or 0), tokens=self.budget_tokens(int(window or 0)))

    def apply(self, book: "Lorebook") -> None:
        """Put these settings on ``book`` (its scan fields: depth, recursion, names, case, whole words, strategy, group
        scoring, min activations, max recursion steps), replacing whatever the book file said — SillyTavern ignores a
        book's own scan settings. Fields already equal are left alone, so the compiled keys are kept unless case,
        whole words or the strategy really changed."""
        want = {
            "scan_depth": self.world_info_depth, "recursive": self.world_info_recursive,
            "include_names": self.world_info_include_names, "case_sensitive": self.world_info_case_sensitive,
            "match_whole_words": self.world_info_match_whole_words, "strategy": self.world_info_character_strategy,
            "use_group_scoring": self.world_info_use_group_scoring,
            "min_activations": self.world_info_min_activations,
            "min_activations_depth_max": self.world_info_min_activations_depth_max,
            "max_recursion_steps": self.world_info_max_recursion_steps,
        }
        for name, value in want.items():
            if getattr(book, name) != value:
                setattr(book, name, value)

    def scan_messages_needed(self, entry_depths: Iterable[int] = ()) -> Optional[int]:
        """How many of the newest chat messages activation can read: the scan depth (or a larger entry ``scanDepth``
        from ``entry_depths``) — plus, with min activations, as many as it may widen to (its depth max, or the
        whole chat: None). At least 2, so the user's words and the reply before them are always there."""
        depth = max([self.world_info_depth, *entry_depths])
        if self.world_info_min_activations > 0:
            cap = self.world_info_min_activations_depth_max
            if cap <= 0:
                return None
            depth = max(depth, cap)
        return max(2, depth + 1)

    def merged(self, overrides: dict[str, Any]) -> "WorldInfoSettings":
        """These settings with ``overrides`` (field → value, SillyTavern names) on top; ValueError (Chinese) for an
        unknown name or a value out of range."""
        return WorldInfoSettings.model_validate({**self.model_dump(), **check_overrides(overrides)})

    def differences(self, base: "WorldInfoSettings") -> dict[str, Any]:
        """The fields where these settings differ from ``base`` (field → value): what a chat stores as its override."""
        mine, theirs = self.model_dump(), base.model_dump()
        return {k: v for k, v in mine.items() if theirs.get(k) != v}

    def to_st(self) -> dict[str, Any]:
        """The ``world_info_settings`` block of a SillyTavern ``settings.json`` with these values (without the
        ``world_info`` book selection, which stays SillyTavern's)."""
        return self.model_dump()


# ----------------------------------------------------------------------------------------------------------------
# names and values

def field_name(key: str) -> str:
    """The setting called ``key``: a SillyTavern name (``world_info_depth``) or the same without its ``world_info_``
    prefix (``depth``), any case, ``-`` for ``_``. ValueError (Chinese, listing the names) when there is none."""
    k = key.strip().lower().replace("-", "_")
    fields = WorldInfoSettings.model_fields
    for cand in (k, _PREFIX + k):
        if cand in fields:
            return cand
    raise ValueError(message("wiset.unknown", key=key, names=list(fields)))


def parse_value(name: str, text: str) -> Any:
    """A command-line value for the field ``name``: booleans as true/false, 1/0, on/off, yes/no, 是/否; numbers as
    integers; the strategy also as evenly / character_first / global_first. ValueError (Chinese) otherwise."""
    t = text.strip()
    ann = WorldInfoSettings.model_fields[name].annotation
    if ann is bool:
        low = t.lower()
        if low in ("true", "1", "on", "yes", "是", "开"):
            return True
        if low in ("false", "0", "off", "no", "否", "关"):
            return False
        raise ValueError(message("wiset.bool", name=name, text=text))
    if name == "world_info_character_strategy":
        by_name = {v: k for k, v in STRATEGY_NAMES.items()}
        if t.lower() in by_name:
            return by_name[t.lower()]
    try:
        return int(t)
    except ValueError:
        raise ValueError(message("wiset.int", name=name, text=text)) from None


def check_overrides(overrides: dict[str, Any]) -> dict[str, Any]:
    """``overrides`` with every name made a field name (:func:`field_name`) and every value checked against the
    field's range; ValueError (Chinese) for the first problem."""
    out: dict[str, Any] = {}
    for key, value in overrides.items():
        name = field_name(key)
        try:
            out[name] = getattr(WorldInfoSettings.model_validate({name: value}), name)
        except ValidationError as e:
            msg = e.errors(include_input=False, include_url=False)[0].get("msg", "")
            raise ValueError(message("wiset.value", name=name, value=value, msg=msg)) from None
    return out


def parse_assignments(items: Iterable[str]) -> dict[str, Any]:
    """``["world_info_depth=4", "recursive=false", …]`` (``liyuan chat --wi``) as overrides ``{field: value}``, later
    items winning. ValueError (Chinese) for an item without ``=``, an unknown name or a bad value."""
    out: dict[str, Any] = {}
    for item in items:
        if "=" not in item:
            raise ValueError(message("wiset.syntax", item=item))
        key, _, text = item.partition("=")
        name = field_name(key)
        out.update(check_overrides({name: parse_value(name, text)}))
    return out


# ----------------------------------------------------------------------------------------------------------------
# SillyTavern settings.json

def _js_number(v: Any) -> Optional[float]:
    """JavaScript's ``Number(v)`` for JSON values (None when it gives NaN)."""
    if isinstance(v, bool):
        return 1.0 if v else 0.0
    if isinstance(v, (int, float)):
        return float(v)
    if v is None:
        return 0.0
    if isinstance(v, str):
        s = v.strip()
        if not s:
            return 0.0
        try:
            return float(int(s, 0)) if s.lower().startswith(("0x", "0o", "0b")) else float(s)
        except ValueError:
            return None
    return None


def _js_boolean(v: Any) -> bool:
    """JavaScript's ``Boolean(v)`` for JSON values (a non-empty string, even "false", is true; lists and objects
    are true)."""
    if isinstance(v, str):
        return v != ""
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return v != 0 and not (isinstance(v, float) and math.isnan(v))
    return v is not None and v is not False


def from_st_settings(data: Any, base: Optional[WorldInfoSettings] = None) -> tuple[WorldInfoSettings, list[str]]:
    """Read the world-info settings of a SillyTavern ``settings.json`` (the parsed object): its ``world_info_settings``
    block, else ``world_info_*`` keys at the top level (older files; SillyTavern reads
    ``settings.world_info_settings ?? settings``). Each key that is present replaces the value of ``base`` (default:
    SillyTavern's defaults), converted as ``setWorldInfoSettings`` does (``Number(…)`` / ``Boolean(…)``; a budget
    above 100 becomes 25). Returns the settings and notes in Chinese, one line each: what was read, values that were
    out of range and kept at ``base``, and what is not taken over (the global book selection ``world_info``, keys
    this version does not know). ValueError (Chinese) when ``data`` has no world-info settings at all."""
    if not isinstance(data, dict):
        raise ValueError(message("wiset.not_settings"))
    block = data.get("world_info_settings")
    if not isinstance(block, dict):
        block = data
    values = (base or WorldInfoSettings()).model_dump()
    fields = WorldInfoSettings.model_fields
    notes: list[str] = []
    read: list[str] = []
    for name, info in fields.items():
        if name not in block:
            continue
        raw = block[name]
        if info.annotation is bool:
            value: Any = _js_boolean(raw)
        else:
            num = _js_number(raw)
            if num is None or not math.isfinite(num) or num != int(num):
                notes.append(message("wiset.st_not_int", name=name, raw=repr(raw), kept=values[name]))
                continue
            value = int(num)
            if name == "world_info_budget" and value > 100:  # SillyTavern's migration of old absolute budgets
                notes.append(message("wiset.st_old_budget", name=name, value=value))
                value = 25
        try:
            WorldInfoSettings.model_validate({name: value})
        except ValidationError:
            notes.append(message("wiset.st_out_of_range", name=name, raw=repr(raw), kept=values[name]))
            continue
        values[name] = value
        read.append(name)
    if not read and not any(k in block for k in fields):
        raise ValueError(message("wiset.none"))
    settings = WorldInfoSettings.model_validate(values)
    if read:
        notes.insert(0, message("wiset.st_read", n=len(read), items=[f"{n}={getattr(settings, n)}" for n in read]))
    sel = block.get("world_info")
    books = sel.get("globalSelect") if isinstance(sel, dict) else sel if isinstance(sel, list) else None
    if books:
        notes.append(message("wiset.st_global_books", books=[str(b) for b in books]))
    unknown = sorted(k for k in block if isinstance(k, str) and k.startswith(_PREFIX) and k not in fields)
    if unknown:
        notes.append(message("wiset.st_unknown", names=unknown))
    return settings, notes
