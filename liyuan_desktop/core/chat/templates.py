"""A chat's prompt templates (issue 14 §4): ST-Prompt-Template's EJS and TavernHelper's variable macros in the text
the chat sends — world-info entries, card fields, preset prompts.

:func:`attach` gives a chat whose texts use them one :class:`..macros.ejs.TemplateEnv` (labels for notices, the
books' entries for ``getwi``, the preset's prompts, the card) and a prompt macro context carrying it
(``ChatContext.prompt_ctx``: ``ejs`` + ``th_variables``; the display keeps the plain context). :func:`refresh`
runs at the start of each beat's prompt, after the ledger of the previous beat was applied: it hands the env the
variables in force on the branch (the newest message's MVU table, the chat / character / global tables the status
bars wrote, the chat's ``{{setvar}}`` variables), renders the system prompt again — the prompt's prefix changes
only when a template's output changes — and moves the notices of failed templates to the next activity list.
Each beat starts the templates' time budget afresh (:data:`..macros.ejs.BEAT_BUDGET`, ``TemplateEnv.begin_beat``):
a beat's prompt, and the tool calls of that beat that read templated entries, share it; what it stops is named in
one notice.
"""

from __future__ import annotations

import re
import threading
from typing import TYPE_CHECKING, Any, Optional

from ..macros import MacroContext, apply_macros
from ..macros.ejs import TemplateEnv, TemplateRender, has_template
from ..messages import message
from ..prompt.assemble import opening_body
from .ledger import BranchLedger

if TYPE_CHECKING:  # pragma: no cover
    from ..prompt.assemble import HistoryCache
    from .context import ChatContext
    from .facade import Chat

__all__ = ["TH_MACRO", "uses_templates", "attach", "refresh", "finish", "requested_entries", "with_text",
           "render_for_display", "render_messages", "branch_values",
           "template_sources"]

#: TavernHelper's variable macros as they appear in text (``{{get_message_variable::…}}``, ``{{format_chat_variable::…}}`` …).
TH_MACRO = re.compile(r"\{\{\s*(?:get|format)_(?:message|chat|character|preset|global)_variable\s*::|\{\{ERA(?:-withmeta)?:",
                      re.IGNORECASE)  # the ERA framework's {{ERA:path}} too (macros.tavernhelper.era_macro)


def template_sources(c: "ChatContext") -> list[tuple[str, str]]:
    """``(label, raw text)`` of every text of the chat that is sent to the model and may hold templates (the label a
    catalog message, shown in the reader's language): the card's
    fields, every world-info entry (label 世界书「title」), the preset's prompts (预设「name」) and the replacements
    of the card's regex scripts when they run (正则「name」; the prompt-side scripts evaluate them with the beat's
    values, the display keeps the plain context)."""
    card = c.card
    out: list[tuple[str, str]] = [
        (message("inspect.where.description"), card.description), (message("inspect.where.personality"), card.personality),
        (message("inspect.where.scenario"), card.scenario), (message("inspect.where.examples"), card.mes_example),
        (message("tpl.where.card_system"), card.system_prompt),
        (message("tpl.where.card_post_history"), card.post_history_instructions)]
    out += [(message("inspect.where.entry", title=e.display_title), e.content) for e in c.book.entries]
    out += [(message("tpl.where.preset", name=name or "?"), text) for name, text in _preset_prompts(c).items()]
    out += [(message("inspect.where.regex", name=sc.scriptName or "?"), sc.replaceString)
            for sc in getattr(c, "scripts", None) or []]
    return [(label, text) for label, text in out if text]


def uses_templates(texts: list[tuple[str, str]]) -> bool:
    """Whether any text holds an EJS tag or a TavernHelper variable macro."""
    return any(has_template(t) or TH_MACRO.search(t) for _, t in texts)


def _prompt_fields(p: Any) -> tuple[str, Any]:
    if isinstance(p, dict):
        return str(p.get("name") or p.get("identifier") or ""), p.get("content")
    return str(getattr(p, "name", "") or getattr(p, "identifier", "") or ""), getattr(p, "content", None)


def _preset_prompts(c: "ChatContext") -> dict[str, str]:
    preset = getattr(c, "preset", None)
    out: dict[str, str] = {}
    for p in (getattr(preset, "prompts", None) or []) if preset is not None else []:
        name, content = _prompt_fields(p)
        if isinstance(content, str) and content:
            out.setdefault(name, content)
    return out


def attach(c: "ChatContext", values: Optional[dict[str, Any]] = None) -> MacroContext:
    """The macro context the chat's prompt is built with: ``c.ctx`` itself when no text uses templates, else a
    copy carrying a :class:`TemplateEnv` (kept as ``c.templates``) filled with the values at open (``values``:
    keyword arguments of :meth:`TemplateEnv.update`, default the values in force on the branch as opened). Called
    by ``ChatContext.use_preset`` (the preset's prompts are sources too)."""
    sources = template_sources(c)
    if not uses_templates(sources):
        c.templates = None
        return c.ctx
    env = TemplateEnv()
    env.labels = {text: label for label, text in reversed(sources)}
    for e in c.book.entries:  # the body without @@decorator lines is what the lore renderers evaluate
        if e.body and e.body != e.content:
            env.labels.setdefault(e.body, message("inspect.where.entry", title=e.display_title))
    plain = c.ctx
    card = c.card
    env.set_book([(e.uid, e.display_title, apply_macros(e.body, plain), "", bool(e.constant)) for e in c.book.entries],
                 {k: apply_macros(v, plain) for k, v in _preset_prompts(c).items()},
                 {"name": card.name, "description": card.description, "personality": card.personality,
                  "scenario": card.scenario, "system_prompt": card.system_prompt, "message_example": card.mes_example,
                  "first_message": card.first_mes, "creatorcomment": card.creator_notes,
                  "alternate_greetings": list(card.alternate_greetings),
                  "depth_prompt": str(((card.extensions or {}).get("depth_prompt") or {}).get("prompt") or "")})
    if values is None:  # the values in force on the branch as opened
        led = BranchLedger(c._tree, card, c.mvu_initial)
        mvu, frames = led.mvu(), led.frame_variables()
        values = {"message": mvu.to_dict() if mvu is not None else {},
                  "chat": {**c.ctx.variables, **(frames.get("chat") or {})}, "global_": frames.get("global") or {},
                  "character": frames.get("character") or {}}
    env.update(char=card.name, user=c.persona, **values)
    c.templates = env
    return plain.model_copy(update={"ejs": env, "th_variables": env.th_lookup})


def branch_values(chat: "Chat", h: "HistoryCache", user_text: str) -> dict[str, Any]:
    """The values the templates of the next beat read (keyword arguments of :meth:`TemplateEnv.update`): the
    newest message's MVU table, the tables status bars wrote, the chat's ``{{setvar}}`` variables under the chat
    table, the newest messages and their indices (SillyTavern numbering: the greeting is 0; the user's new
    message is the last)."""
    mvu = chat.ledger.mvu()
    frames = chat.ledger.frame_variables()
    c = chat.context
    chat_vars = dict(c.ctx.variables)
    chat_vars.update(frames.get("chat") or {})
    n = len(h.messages)  # the greeting and the past messages; the new user message gets index n
    last_char_id = -1
    last_char = ""
    for i in range(n - 1, -1, -1):
        m = h.messages[i]
        if getattr(m, "role", "") == "assistant":  # the greeting without Liyuan's 【开场 · 名字】 line
            last_char_id, last_char = i, opening_body(m.content) if i == 0 and h.opening is not None else m.content
            break
    return {"message": mvu.to_dict() if mvu is not None else {}, "chat": chat_vars,
            "global_": frames.get("global") or {}, "character": frames.get("character") or {},
            "last_user": user_text, "last_char": last_char, "last_user_id": n, "last_char_id": last_char_id,
            "chat_index": n}


def refresh(chat: "Chat", h: "HistoryCache", user_text: str) -> None:
    """Before a beat's prompt is built (module doc): a new time budget for the beat's templates, new values for
    them, the system prompt rendered again with them (``ChatContext.beat_system``), notices of failed templates
    queued for the activity list. Nothing happens for a chat without templates."""
    c = chat.context
    env: Optional[TemplateEnv] = getattr(c, "templates", None)
    if env is None:
        return
    env.begin_beat()
    env.update(char=c.card.name, user=c.persona, **branch_values(chat, h, user_text))
    env.take_renders()
    c.refresh_system()


def finish(chat: "Chat") -> list[dict[str, Any]]:
    """After the prompt of a beat was built: the templates it evaluated (``{"label", "output", "error"?}``, each
    label once, the last evaluation kept) for the beat entry and the inspector, also kept as
    ``ChatContext.last_templates``; the notices of failed ones are queued on ``chat.pending_notices``. [] for a
    chat without templates."""
    env: Optional[TemplateEnv] = getattr(chat.context, "templates", None)
    chat.context.last_templates = []
    if env is None:
        return []
    for line in env.take_notices():
        if line not in chat.pending_notices:
            chat.pending_notices.append(line)
    seen: dict[str, TemplateRender] = {}
    for r in env.take_renders():
        seen[r.label] = r
    out = [{"label": r.label, "output": r.output, **({"error": r.error} if r.error else {})} for r in seen.values()]
    chat.context.last_templates = out
    return out


def with_text(entries: list[Any], ctx: MacroContext) -> list[Any]:
    """``entries`` without those whose template renders to nothing with ``ctx`` (the beat's context): the
    extension drops such entries from the prompt, so their title is not offered either. Entries without a
    template are kept unevaluated."""
    if ctx.ejs is None:
        return list(entries)
    return [e for e in entries if not has_template(e.body) or apply_macros(e.body, ctx).strip()]


def requested_entries(chat: "Chat", lore: Any) -> list[Any]:
    """The entries ``activewi`` asked for while this beat's system prompt and activation ran that the activation
    did not return, in book order (they join the turn's constants). [] without templates."""
    env: Optional[TemplateEnv] = getattr(chat.context, "templates", None)
    if env is None:
        return []
    wanted = set(env.take_activated())
    if not wanted:
        return []
    have = {id(e) for e in lore.entries}
    return [e for e in chat.context.book.entries if e.display_title in wanted and id(e) not in have]


def render_messages(chat: "Chat", messages: list[Any]) -> list[Any]:
    """``messages`` (a beat's first call) with the EJS templates in the chat messages evaluated with the beat's
    values, as the extension evaluates the whole prompt: a model reply that wrote ``<% … %>`` (or words the user
    typed with it) never reaches the model as code; one that fails is sent without that message's text. The system
    message (rendered already) is left alone; messages without a tag are the same objects. Unchanged without
    templates."""
    env: Optional[TemplateEnv] = getattr(chat.context, "templates", None)
    if env is None:
        return messages
    out = list(messages)
    for i, m in enumerate(out):
        if i == 0 or not isinstance(m.content, str) or not has_template(m.content):
            continue
        env.labels.setdefault(m.content, message("tpl.where.message", n=i))
        out[i] = m.model_copy(update={"content": env.render(m.content, m.content)})
    return out


_display_lock = threading.Lock()


def render_for_display(c: "ChatContext", text: str, item: dict[str, Any]) -> str:
    """``text`` of transcript ``item`` with its EJS templates evaluated for the conversation view, as the extension
    does when it renders a message: ``variables``/``stat_data`` are the item's own snapshot (``item["variables"]``),
    the chat and global tables those of the latest beat. A template that fails leaves the text as it was (the
    reader sees the code; nothing of it is sent anywhere). Text unchanged when the chat has no templates. Safe from
    worker threads (one display environment per chat, behind a lock); slow templates are bounded by the engine's
    time limit and each call by one beat's budget, so call it off the UI thread."""
    env: Optional[TemplateEnv] = getattr(c, "templates", None)
    if env is None or not has_template(text):
        return text
    with _display_lock:
        d = c.display_templates
        if d is None:
            d = c.display_templates = env.with_same_book()
        d.begin_beat()  # each message shown gets the budget of a beat
        d.update(message=item.get("variables") if isinstance(item.get("variables"), dict) else {}, chat=env.chat,
                 global_=env.globals_, character=env.character, char=c.card.name, user=c.persona)
        out = d.render(text)
        failed = d.take_notices()
        d.take_renders()
        d.take_activated()
    return text if failed else out
