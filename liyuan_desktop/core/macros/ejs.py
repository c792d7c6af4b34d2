"""EJS prompt templates as the ST-Prompt-Template extension runs them (issue 14 §4), in our own QuickJS sandbox.

Cards written for SillyTavern's ST-Prompt-Template extension put JavaScript in their text: phase-gated guidance
(``<%_ if (getvar('stat_data.阶段') == 2) { _%> … <%_ } _%>``), status lines (``<%- stat_data.好感度 %>``) and
nested look-ups with defaults. This module compiles such a template to JavaScript (our own small compiler, in
``resources/ejs/ejs_runtime.js``: a template becomes the body of an async function, cached by its text) and runs it in a QuickJS-ng context (one per thread, as :mod:`..cards.regex_engine` does)
with lodash loaded and the extension's common API (``ejs_runtime.js``) over the values of the beat
(:class:`TemplateEnv`). There is no network, file, module or host access in that context; each render has a time
limit (:data:`TIME_LIMIT`) and the context a memory limit (:data:`MEMORY_LIMIT`).

**Syntax** (ejs, which the extension uses; checked with the search tool against ejs's syntax docs and the extension's
``docs/features.md``/``docs/reference.md``): ``<% code %>`` runs code; ``<%= expr %>`` outputs HTML-escaped
(``& < > " '`` → ``&amp; &lt; &gt; &#34; &#39;``); ``<%- expr %>`` outputs raw; ``undefined``/``null`` output
nothing; ``<%# … %>`` is a comment; ``<%%``/``%%>`` are a literal ``<%``/``%>``; ``<%_`` removes the spaces and tabs
before it on its line; ``_%>`` removes the spaces and tabs after it and one newline; ``-%>`` removes one newline after
it. A trailing ``;`` in an output tag is ignored. Templates are async functions (``await getwi(…)`` works).

**API** (names and behaviour from the extension's reference; what differs is said here):

* ``variables``: the merged variables — message (the newest message's MVU table: ``stat_data`` …) over chat over
  global, objects and arrays merged (lodash ``merge``); ``stat_data``: the MVU tree of that message.
* ``getvar(key, {scope, defaults, index})``: lodash ``_.get`` with dotted paths; ``scope`` ``cache`` (default:
  ``variables``), ``message``, ``local``/``chat``, ``global``; ``defaults`` when the value is ``undefined``.
  ``getLocalVar``/``getGlobalVar``/``getMessageVar`` fix the scope.
* ``setvar(key, value, {scope, flags, results, index, merge})`` (default scope ``message``; flags ``n``/``nx``/``xx``
  /``nxs``/``xxs``; results ``new``/``old``/``fullcache``), ``incvar``/``decvar`` (``inscope``, ``outscope``,
  ``min``, ``max``, ``defaults`` 0): they change the values this beat's templates see (``variables`` included), and
  are **not saved** — a prompt is rendered again whenever it is rebuilt, so a saved write would apply twice (the
  extension's own "preparation phase" rule, ``dryRun`` false, for the same reason). The scribe keeps the variables.
* ``getwi([book,] title | uid | RegExp, data)`` / ``getWorldInfo``: an entry's content of the chat's books (macros
  applied, then evaluated as a template with ``data``; '' when not found; nesting limited to 8).
* ``activewi([book,] title)`` / ``activateWorldInfo``: asks for the entry to be in this beat's prompt (it joins the
  turn's constants); returns the entry's data, or null.
* ``getchar``/``getchr``/``getChara(name, template, data)``: the card's definition in the extension's default layout
  (``<name>`` … ``</name>``), or ``template`` evaluated with the card's fields; only the chat's own card.
* ``getpreset``/``getprp``/``getPresetPrompt(name | RegExp, data)``: a prompt of the chat's preset by name, evaluated.
* ``print(...)``, ``define(name, value, merge)`` (kept for the rest of the beat's templates; a function defined
  with ``function`` sees the API as ``this``), ``evalTemplate(text, data)``.
* ``char``/``user``/``charName``/``userName``, ``lastMessage``, ``lastUserMessage``, ``lastCharMessage`` and their
  ``…Id`` indices, ``chat_index`` (the index of the message the prompt is for, the new user message), ``runType``
  (always ``'generate'``), lodash ``_``.

**Errors**: a template that does not compile, throws, runs past the time limit or out of memory renders as ``''``
(its raw text is never sent) and adds a notice naming where it came from (:attr:`TemplateEnv.notices`).

**Budget per beat** (issue 29 §2: 30 looping world-book entries, each stopped after :data:`TIME_LIMIT`, made one
beat take 93 s): all the templates of one beat run :data:`BEAT_BUDGET` seconds in all, counted from
:meth:`TemplateEnv.begin_beat`. Once it is spent the rest render as ``''`` without running, and one notice names
them all (catalog ``ejs.budget``); a template that failed this beat (same text, or same source) is not run again
until the next beat.
"""

from __future__ import annotations

import json
import logging
import re
import time
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Optional

from ..jsruntime import PerThread, new_context, time_limit
from ..messages import message as catalog_message

log = logging.getLogger(__name__)

__all__ = ["TIME_LIMIT", "BEAT_BUDGET", "MEMORY_LIMIT", "EjsSyntaxError", "has_template", "check_template",
           "TemplateEnv", "TemplateRender", "merge_tables"]

#: Seconds one template (with what it pulls in through ``getwi``) may run.
TIME_LIMIT = 1.0
#: Seconds all the templates of one beat may run together (module doc, "Budget per beat"); the one place it is set.
BEAT_BUDGET = 2.0
#: Bytes of memory the template engine of one thread may use.
MEMORY_LIMIT = 128 * 1024 * 1024



class EjsSyntaxError(ValueError):
    """A template that does not compile (an unclosed tag, a JavaScript syntax error)."""


def has_template(text: Any) -> bool:
    """Whether ``text`` holds an EJS tag (``<%`` not written as the literal ``<%%``)."""
    return isinstance(text, str) and "<%" in text and re.search(r"<%(?!%)", text) is not None


# ---- the engine (one QuickJS context per thread) -----------------------------------------------------------------

class _Engine:
    def __init__(self) -> None:
        self.quickjs, ctx = new_context(MEMORY_LIMIT)
        self.ctx = ctx
        lodash = resources.files("liyuan_desktop").joinpath("resources", "web", "vendor", "lib", "lodash.min.js")
        ctx.eval(lodash.read_text("utf-8"))
        ctx.eval(resources.files("liyuan_desktop").joinpath("resources", "ejs", "ejs_runtime.js").read_text("utf-8"))
        self.set_book = ctx.eval("(function (j) { __ejs.setBook(j); })")
        self.set_env = ctx.eval("(function (j) { __ejs.setEnv(j); })")
        self.start = ctx.eval("(function (t) { __ejs.start(t); })")
        self.take = ctx.eval("(function () { return __ejs.take(); })")
        self.activated = ctx.eval("(function () { return __ejs.activated(); })")
        self.check = ctx.eval("(function (b) { return __ejs.check(b); })")
        self.env_key: Any = None
        self.book_key: Any = None


_engines: PerThread[_Engine] = PerThread(_Engine)
_engine_error: Optional[str] = None


def _engine() -> Optional[_Engine]:
    global _engine_error
    eng = _engines.get()
    if eng is None and _engine_error is None and _engines.failure is not None:
        # no engine: templates render as '' with a notice, the app keeps working
        _engine_error = catalog_message("ejs.no_engine", error=str(_engines.failure))
        log.error(_engine_error)
    return eng


def check_template(text: str) -> Optional[str]:
    """Why ``text`` would not compile (an unclosed tag, a JavaScript syntax error), or None when it compiles.
    Nothing runs. Used by ``liyuan card inspect``."""
    eng = _engine()
    if eng is None:
        return _engine_error
    try:
        with time_limit(eng.ctx, TIME_LIMIT):
            msg = eng.check(text)
    except eng.quickjs.JSException as e:
        _engines.drop()
        return str(e).splitlines()[0] if str(e) else "out of memory"
    return msg or None


# ---- the values of a beat -----------------------------------------------------------------------------------------

def merge_tables(*tables: Any) -> dict[str, Any]:
    """lodash ``_.merge({}, *tables)`` for JSON data: later tables win (``null`` included); where both sides are
    objects (or both arrays) they merge key by key (index by index); tables that are not dicts are skipped. The
    inputs are not changed."""
    def merge(a: Any, b: Any) -> Any:
        if isinstance(a, dict) and isinstance(b, dict):
            out = dict(a)
            for k, v in b.items():
                out[k] = merge(a.get(k), v) if k in a else _copy(v)
            return out
        if isinstance(a, list) and isinstance(b, list):
            out_l = list(a) + [None] * max(0, len(b) - len(a))
            for i, v in enumerate(b):
                out_l[i] = merge(a[i], v) if i < len(a) else _copy(v)
            return out_l
        return _copy(b)
    result: dict[str, Any] = {}
    for t in tables:
        if isinstance(t, dict):
            result = merge(result, t)
    return result


def _copy(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _copy(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_copy(x) for x in v]
    return v


@dataclass
class TemplateRender:
    """One template evaluated for a prompt: ``label`` (where it came from: 「世界书「title」」, 「角色设定」 …),
    ``output`` (what went into the prompt; '' = dropped), ``error`` (why it failed, else None)."""

    label: str
    output: str
    error: Optional[str] = None


@dataclass
class TemplateEnv:
    """The values the templates of one chat see, updated per beat (:meth:`update`), and what they did.

    A chat keeps one (``MacroContext.ejs``: the one macro engine calls :meth:`render` on text that still holds a
    tag after its macros). :meth:`set_book` hands over the chat's entries, preset prompts and card once (texts with
    macros applied). ``labels`` maps a raw source text (an entry's content, a card field, a preset prompt) to the
    name its notices and the inspector use. ``notices``: one line per failed template since the last
    :meth:`take_notices`; ``renders``: every template evaluated since the last :meth:`take_renders`;
    ``activated``: titles ``activewi`` asked for since the last :meth:`take_activated`; ``version``: grows whenever
    the values or the book change (a cache key for text rendered with them)."""

    labels: dict[str, str] = field(default_factory=dict)
    notices: list[str] = field(default_factory=list)
    renders: list[TemplateRender] = field(default_factory=list)
    activated: list[str] = field(default_factory=list)
    message: dict[str, Any] = field(default_factory=dict)
    chat: dict[str, Any] = field(default_factory=dict)
    globals_: dict[str, Any] = field(default_factory=dict)
    character: dict[str, Any] = field(default_factory=dict)
    version: int = 0
    _json: str = ""
    _book_json: str = '{"wi": [], "presets": [], "card": {}}'
    _titles: list[str] = field(default_factory=list)
    _memo: dict[str, tuple[str, Optional[str]]] = field(default_factory=dict)
    #: seconds the templates of this beat have run (:meth:`begin_beat` starts again from 0)
    spent: float = 0.0
    #: seconds a beat may spend (:data:`BEAT_BUDGET`; a test may lower it)
    budget: float = BEAT_BUDGET
    _failed: dict[str, str] = field(default_factory=dict)  # text or label → why it failed this beat
    _stopped: list[str] = field(default_factory=list)  # labels the budget stopped, not yet in a notice
    _stopped_beat: set[str] = field(default_factory=set)  # every label the budget stopped this beat

    def begin_beat(self) -> None:
        """A new beat: its templates get :attr:`budget` seconds again, and those that failed in the previous beat
        are tried again (with the new values)."""
        self.spent = 0.0
        self._failed.clear()
        self._stopped.clear()
        self._stopped_beat.clear()

    def set_book(self, entries: list[tuple[Any, str, str, str, bool]], presets: Optional[dict[str, str]] = None,
                 card: Optional[dict[str, Any]] = None) -> None:
        """The chat's world-info entries ``(uid, title, content, book name, constant)`` for ``getwi``/``activewi``,
        the preset's prompts ``{name: content}`` for ``getpreset`` and the card's fields for ``getchar``
        (``name``, ``description``, ``personality``, ``scenario``, ``system_prompt``, ``message_example``,
        ``first_message``, ``depth_prompt`` …); texts with the chat's macros applied."""
        wi = [{"uid": u, "comment": t, "content": c, "world": w, "constant": k} for u, t, c, w, k in entries]
        self._titles = [t for _, t, _, _, _ in entries]
        self._memo.clear()
        self.version += 1
        self._book_json = json.dumps({"wi": wi, "presets": [{"name": n, "content": c} for n, c in (presets or {}).items()],
                                      "card": card or {}}, ensure_ascii=False, default=str)

    def update(self, *, message: Optional[dict[str, Any]] = None, chat: Optional[dict[str, Any]] = None,
               global_: Optional[dict[str, Any]] = None, character: Optional[dict[str, Any]] = None,
               char: str = "", user: str = "", last_user: str = "", last_char: str = "", last_user_id: int = -1,
               last_char_id: int = -1, chat_index: int = -1) -> None:
        """Set the values of the beat: variable tables (``message`` = the newest message's MVU table with
        ``stat_data``; ``chat``; ``global_``; ``character``), names, the newest messages and their indices (-1 =
        none) and the index of the message the prompt is for. Cheap when nothing changed (the engine is handed
        the values again only when they differ)."""
        self.message, self.chat = message or {}, chat or {}
        self.globals_, self.character = global_ or {}, character or {}
        merged = merge_tables(self.globals_, self.chat, self.message)
        stat = self.message.get("stat_data") if isinstance(self.message.get("stat_data"), dict) else \
            merged.get("stat_data", {})
        data = {
            "variables": merged, "stat_data": stat, "message": self.message, "chat": self.chat,
            "global": self.globals_, "char": char, "user": user,
            "lastMessage": last_user if last_user_id >= last_char_id else last_char,
            "lastUserMessage": last_user, "lastCharMessage": last_char,
            "lastMessageId": max(last_user_id, last_char_id), "lastUserMessageId": last_user_id,
            "lastCharMessageId": last_char_id, "chatIndex": chat_index,
        }
        new = json.dumps(data, ensure_ascii=False, default=str)
        if new != self._json:
            self._json = new
            self._memo.clear()
            self.version += 1

    def with_same_book(self) -> "TemplateEnv":
        """A new environment with this one's book, preset prompts, card and labels, and no values yet (for
        evaluating with other values — a message's own, for the display — without touching this one)."""
        other = TemplateEnv(labels=self.labels)
        other._book_json, other._titles = self._book_json, list(self._titles)
        return other

    def th_lookup(self, scope: str) -> Optional[dict[str, Any]]:
        """The table of TavernHelper scope ``scope`` for its macros (``MacroContext.th_variables``): message, chat,
        character, global; preset is empty."""
        return {"message": self.message, "chat": self.chat, "global": self.globals_,
                "character": self.character}.get(scope, {})

    # -- rendering ------------------------------------------------------------------------------------------------
    def label_of(self, source: str) -> str:
        """The name notices use for raw text ``source``: its label, else its first words."""
        found = self.labels.get(source)
        if found:
            return found
        first = re.sub(r"\s+", " ", source[:200]).strip()  # the first words are enough (a source may be huge)
        return catalog_message("ejs.label", words=f"{first[:24]}{'…' if len(first) > 24 else ''}")

    def render(self, text: str, source: Optional[str] = None) -> str:
        """``text`` (macros already applied) with its templates evaluated; '' and a notice when it fails (module
        doc). ``source``: the raw text it came from (for the label). The same text is evaluated once per set of
        values (:meth:`update` with other values, or :meth:`set_book`, starts afresh): building one prompt asks for
        an entry more than once (the system prompt, activation, the titles offered) and must get one answer."""
        if not has_template(text):
            return text
        label = self.label_of(source if source is not None else text)
        hit = self._memo.get(text)
        if hit is not None:  # the same text with the same values: the prompt asks for a text more than once
            if hit[1] is not None:
                return self._fail(label, hit[1])
            self.renders.append(TemplateRender(label=label, output=hit[0]))
            return hit[0]
        if label in self._stopped_beat:
            return self._stop(label)
        failed = self._failed.get(text) or self._failed.get(label)
        if failed is not None:  # failed already this beat (other values, or its text built otherwise): not again
            return self._fail(label, failed, notify=False)
        remaining = self.budget - self.spent
        if remaining <= 0:
            return self._stop(label)
        started = time.monotonic()
        try:
            return self._run(text, label, remaining)
        finally:
            self.spent += time.monotonic() - started

    def _run(self, text: str, label: str, remaining: float) -> str:
        """:meth:`render` in the engine, within ``min(TIME_LIMIT, remaining)`` seconds."""
        limit = min(TIME_LIMIT, remaining)
        eng = _engine()
        if eng is None:
            return self._fail(label, _engine_error or catalog_message("ejs.unavailable"))
        try:
            book_key = (id(self), self._book_json)
            if eng.book_key != book_key:
                eng.set_book(self._book_json)
                eng.book_key, eng.env_key = book_key, None
            key = (id(self), self._json)
            if eng.env_key != key:
                if not self._json:
                    self.update()
                eng.set_env(self._json)
                eng.env_key = (id(self), self._json)
            with time_limit(eng.ctx, limit):
                eng.start(text)
                while eng.ctx.execute_pending_job():
                    pass
                raw = eng.take()
                acts = json.loads(eng.activated())
        except eng.quickjs.JSException as exc:
            _engines.drop()  # interrupted or out of memory: the next render gets a fresh context
            msg = str(exc).splitlines()[0] if str(exc) else "out of memory"
            if "interrupted" in msg and limit < TIME_LIMIT:  # cut by what was left of the beat's budget
                return self._stop(label)
            return self._fail(label, catalog_message("ejs.timeout", seconds="%.1f" % TIME_LIMIT) if "interrupted" in msg
                              else msg, text)
        for i in acts:
            if 0 <= i < len(self._titles) and self._titles[i] not in self.activated:
                self.activated.append(self._titles[i])
        if not raw:
            return self._fail(label, catalog_message("ejs.unfinished"), text)
        result = json.loads(raw)
        if "e" in result:
            return self._fail(label, str(result["e"]), text)
        out = str(result.get("o", ""))
        self.renders.append(TemplateRender(label=label, output=out))
        self._memo[text] = (out, None)
        return out

    def _stop(self, label: str) -> str:
        """A template not run because the beat's budget is spent: '' and its label in the one budget notice."""
        if label not in self._stopped_beat:
            self._stopped_beat.add(label)
            self._stopped.append(label)
        self.renders.append(TemplateRender(label=label, output="", error=catalog_message("ejs.budget_spent", seconds="%g" % self.budget)))
        return ""

    def _fail(self, label: str, message: str, text: Optional[str] = None, notify: bool = True) -> str:
        if text is not None:
            self._memo[text] = ("", message)
            self._failed[text] = self._failed[label] = message
        self.renders.append(TemplateRender(label=label, output="", error=message))
        if not notify:  # a repeat within the beat: its notice was given the first time
            return ""
        line = catalog_message("ejs.failed", label=label, error=message)  # the window says it in the reader's language
        if line not in self.notices:
            self.notices.append(line)
        return ""

    def take_notices(self) -> list[str]:
        """The notices since the last call (and forget them); the templates the beat's budget stopped since the
        last call are named in one more notice (catalog ``ejs.budget``)."""
        out, self.notices = self.notices, []
        if self._stopped:
            from ..messages import message

            out.append(message("ejs.budget", seconds=f"{self.budget:g}", labels=list(self._stopped)))
            self._stopped = []
        return out

    def take_renders(self) -> list[TemplateRender]:
        """The templates evaluated since the last call (and forget them)."""
        out, self.renders = self.renders, []
        return out

    def take_activated(self) -> list[str]:
        """The titles ``activewi`` asked for since the last call (and forget them)."""
        out, self.activated = self.activated, []
        return out
