"""Which way a chat plays its beats: the tool loop, or prose-only play (issue 18 §2; the prompt side is
:mod:`..prompt.prose_only`).

A beat is played prose-only when the chat is switched to it (``Chat.set_prose_only(True)``, kept on the tree as a
``chat-settings`` entry with ``prose_only``), or — when the chat has no switch of its own — when the provider's
capabilities (``core.provider_caps``, issue 18 §1) say the server rejects ``tools`` or the model ignores them.
``set_prose_only(False)`` forces tool play; ``None`` goes back to following the capabilities.

Two things move a chat to prose-only on their own, each told to the user once:

* the server rejects ``tools`` (``ModelError`` kind "config", ``config`` "jinja"/"tools"): the capability is
  stored as "rejected" and the beat is played again at once without tools (:func:`tools_rejected`);
* the model answered 3 sealed beats in a row without a single tool call (:data:`IGNORED_AFTER`, counted from the
  chat's own beat entries, :func:`tool_less_beats`, so one CLI call per beat counts too): the capability is stored
  as "ignored" (``provider_caps.mark_tools_ignored``: with the configured provider for the server's real base URL,
  or — a built-in preset used by name — in ``AppSettings.endpoint_capabilities``) and the next beats are
  prose-only (:meth:`ProseMode.after_beat`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional

from .. import provider_caps
from ..beat.text_calls import is_text_call
from ..messages import message
from ..settings import load_settings

if TYPE_CHECKING:  # pragma: no cover
    from .facade import Chat

log = logging.getLogger(__name__)

__all__ = ["IGNORED_AFTER", "ProseMode", "prose_mode", "stored_switch", "REJECTED_NOTICE", "IGNORED_NOTICE",
           "PROSE_LIMITS"]

#: Sealed beats in a row without a tool call after which a model counts as ignoring tools.
IGNORED_AFTER = 3
# catalog messages (core/messages.py), carried by key to the front ends; their Chinese text is what it always was
REJECTED_NOTICE = message("beat.prose_rejected")
IGNORED_NOTICE = message("beat.prose_ignored", n=IGNORED_AFTER)
#: What prose-only play cannot do (the window and the CLI show it).
PROSE_LIMITS = message("beat.prose_limits")


def stored_switch(tree: Any) -> Optional[bool]:
    """The chat's own prose-only switch from its newest ``chat-settings`` entry that carries one (an extra key
    ``prose_only``: true / false / null = follow the provider), None when never set. O(entries), once per open."""
    for i in reversed(tree.order):
        e = tree.entries[i]
        if e.type != "chat-settings":
            continue
        extra = e.model_extra or {}
        if "prose_only" in extra:
            v = extra["prose_only"]
            return None if v is None else bool(v)
    return None


def _caps_tools(model: Any) -> str:
    """The stored tool support of the server and model ``model`` talks to ("works" / "rejected" / "ignored" /
    "unknown"): a configured provider, a built-in preset used by name, or an overridden base URL alike
    (``provider_caps.model_capabilities``, issue 30 §4)."""
    if not (getattr(model, "provider_name", "") or ""):
        return "unknown"
    try:
        return provider_caps.model_capabilities(model).tools
    except Exception:  # settings unreadable: play as configured
        log.exception("capabilities of %s not readable", getattr(model, "provider_name", ""))
        return "unknown"


#: The tools whose native use shows that a local model looks the world book up itself (:func:`tools_unproven`).
LORE_LOOKUPS: tuple[str, ...] = ("lorebook_search", "lorebook_list")

#: How many entries back from the leaf :func:`tool_less_beats` looks (a beat writes about 3-5 entries).
_LOOK_BACK = 12 * IGNORED_AFTER


def tool_less_beats(tree: Any) -> int:
    """Sealed tool-play beats in a row without a single tool call at the end of the active branch, read from the
    chat's own beat entries (issue 30 §4: counted in memory, a CLI call per beat never reached
    :data:`IGNORED_AFTER`). A beat with a tool call or a prose-only beat ends the run; unsealed beats are skipped.
    Looks at most :data:`_LOOK_BACK` entries back."""
    n = 0
    path = tree.path_to()
    for e in reversed(path[-_LOOK_BACK:]):
        if e.type != "beat":
            continue
        if (e.model_extra or {}).get("play_mode") == "prose" or any(c.tool_calls for c in e.calls):
            break
        if e.outcome == "sealed":
            n += 1
    return n


@dataclass
class ProseMode:
    """The per-chat state: the switch (read from the tree once), tool-less sealed beats in a row, and whether the
    chat fell back after a rejection (for the rest of this session, even when the capability could not be saved)."""

    switch: Optional[bool]
    tool_less: int = 0
    fell_back: bool = False
    told_limits: bool = False

    def decide(self, chat: "Chat") -> tuple[bool, str]:
        """(prose-only?, why): "switch" (the chat's own), "rejected" / "ignored" (the provider's capabilities or this
        session's fallback), "" for tool play."""
        if chat.mode == "agent":
            return False, ""
        if self.switch is not None:
            return self.switch, "switch" if self.switch else ""
        if self.fell_back:
            return True, "rejected"
        tools = _caps_tools(chat.model)
        if tools in ("rejected", "ignored"):
            return True, tools
        return False, ""

    def set(self, chat: "Chat", on: Optional[bool]) -> None:
        """Set the chat's switch (None = follow the provider), kept on the tree. OSError."""
        chat.tree.append("chat-settings", parent_id=None, move_leaf=False, prose_only=on)
        chat.tree.commit()
        self.switch = on
        self.tool_less = 0
        if on is False:
            self.fell_back = False

    def tools_rejected(self, chat: "Chat") -> None:
        """The server refused ``tools``: store "rejected" with the provider (when it is a configured one) and fall
        back to prose-only for this chat."""
        self.fell_back = True
        name = getattr(chat.model, "provider_name", "") or ""
        if not name:
            return
        try:
            settings = load_settings()
            if settings.provider(name) is None:  # a built-in preset used by name (issue 30 §4)
                provider_caps.mark_endpoint_tools(settings, getattr(chat.model, "base_url", None),
                                                  getattr(chat.model, "model", None), "rejected")
                return
            caps = provider_caps.capabilities_of(name, getattr(chat.model, "model", None))
            if "tools" not in caps.overridden:
                provider_caps.record_capabilities(name, caps.model_copy(update={"tools": "rejected"}))
        except Exception:  # the fallback holds for this session anyway
            log.exception("tools-rejected mark of %s not saved", name)

    def after_beat(self, chat: "Chat", out: Any) -> Optional[str]:
        """Count a finished tool-play beat: a sealed one without any tool call adds one, one with a tool call
        resets. At :data:`IGNORED_AFTER` the model is marked as ignoring tools (persisted) and the notice to show
        once is returned; None otherwise."""
        if out.play_mode != "tools" or self.switch is not None or getattr(chat.model, "is_replay", False):
            return None
        if out.used_tools or not out.sealed:
            return None
        # this beat (not on the tree yet) and the ones before it, from the chat's own history
        self.tool_less = 1 + tool_less_beats(chat.tree)
        if self.tool_less < IGNORED_AFTER:
            return None
        # only a configured provider is marked (a replay or hand-built model has none; a user override wins)
        return IGNORED_NOTICE if provider_caps.mark_tools_ignored(chat.model) else None


def tools_unproven(chat: "Chat") -> bool:
    """True while a live model has not shown that it calls tools (issue 30 §4): its stored tool support is not
    "works" and no recent beat of the branch (:data:`_LOOK_BACK` entries) made a native tool call (a call written as
    text, ``beat.text_calls``, does not count: such a model does not look lore up either). Tool play then sends the activated entries' text
    too (bounded, :data:`..prompt.prose_only.INLINE_LORE_MAX_CHARS`), so the first beats do not invent the world.
    False for a replay (recorded runs play as recorded) and in agent mode.

    A model on this machine or its network (``is_local``; issue 30 §4, a30): only a native *lore lookup*
    (:data:`LORE_LOOKUPS`) in a recent beat counts, and the stored capability does not — the 1.5B on llama.cpp
    wrote its draft with native calls from the first beat on yet never looked a fact up, and every later beat got
    the entries' titles only and invented the world."""
    if chat.mode == "agent" or getattr(chat.model, "is_replay", False):
        return False
    path = chat.tree.path_to()
    if getattr(chat.model, "is_local", False):
        return not any(e.type == "beat" and any(not is_text_call(t.id) and t.name in LORE_LOOKUPS
                                                for c in e.calls for t in c.tool_calls)
                       for e in path[-_LOOK_BACK:])
    if any(e.type == "beat" and any(not is_text_call(t.id) for c in e.calls for t in c.tool_calls)
           for e in path[-_LOOK_BACK:]):
        return False  # a native call; calls written as text (a 1.5B's ```json draft_write) prove nothing of lookups
    return _caps_tools(chat.model) != "works"


def prose_mode(chat: "Chat") -> ProseMode:
    """The chat's :class:`ProseMode`, made on first use (the switch read from the tree)."""
    pm = chat.__dict__.get("_prose_mode")
    if pm is None:
        pm = ProseMode(stored_switch(chat.tree))
        chat.__dict__["_prose_mode"] = pm
    return pm
