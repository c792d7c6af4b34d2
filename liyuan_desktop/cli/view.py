"""How a beat looks in the terminal: ``HumanView`` renders the engine's events as text (the draft as it grows, tool
activity, ask cards, the ledger), ``print_ledger`` the world state after a beat. Used by ``liyuan chat``."""

from __future__ import annotations

from typing import Any

from ..core.chat.facade import BeatResult
from ..core.ledger.wording import applied_in_words, ledger_in_words, roster_in_words, state_in_words
from ..core.messages import Msg, message
from .common import language, out, say, text


def _t(key: str, **params: Any) -> str:
    """A catalog line (``core/messages.py``, the ``cli.*`` keys) in the CLI's language (``--lang``)."""
    return say(message(key, **params))


def _say(value: Any) -> str:
    """An engine line of an event in the CLI's language: a message (``core.messages.Msg``) rendered from its key;
    anything else — story text, names, a line made without a key — as it is, never matched back to a catalog key
    (issue 32)."""
    return say(value) if isinstance(value, Msg) else ("" if value is None else str(value))


class HumanView:
    """Renders engine events as text: the draft as it grows, tool activity, ask cards, the ledger."""

    def __init__(self, color: bool):
        """``color``: wrap text in ANSI colour codes (a terminal) or not (a pipe, ``--json``)."""
        self.color = color
        self._reasoning = 0
        self._streaming = False
        self._said: list[str] = []

    def style(self, code: str, text: str) -> str:
        """``text`` in the ANSI SGR style ``code`` (e.g. ``"1;36"``) when colour is on, else unchanged."""
        return f"\033[{code}m{text}\033[0m" if self.color else text

    def _end_stream(self) -> None:
        if self._streaming:
            out()
            self._streaming = False

    def __call__(self, ev: Any) -> None:
        """Print one engine event (``ev.kind`` selects how; unknown kinds print nothing)."""
        k = getattr(ev, "kind", "")
        if k == "beat_started":
            self._said = []
            out(self.style("1;36", _t("cli.beat", n=ev.beat)) + ("  " + self.style("33", _t("cli.replay")) if ev.is_replay else ""))
            out(self.style("1", _t("cli.you")) + ev.user)
            if ev.activated:
                out(self.style("2", _t("cli.lore", names=_t("cli.sep.list").join(ev.activated))))
            for why in ev.lore:
                if getattr(why, "key", "") != "lore.why.constant":  # constant entries are always there: not said
                    out(self.style("2", f"    · {_say(why)}"))
        elif k == "call_started":
            self._reasoning = 0
            out(self.style("2", _t("cli.call", n=ev.round, max=ev.max_rounds)))
        elif k == "delta":
            if ev.channel == "reasoning":
                self._reasoning += len(ev.text)
            elif ev.channel == "content":
                if not self._streaming:
                    out(self.style("2", _t("cli.text")), end="")
                    self._streaming = True
                out(ev.text, end="")
        elif k == "call_finished":
            self._end_stream()
            bits = []
            if self._reasoning:
                bits.append(_t("cli.reasoning", n=self._reasoning))
            if ev.prompt_tokens:
                share = f"{100 * ev.cached_tokens / ev.prompt_tokens:.0f}%" if ev.prompt_tokens else "-"
                bits.append(_t("cli.tokens", p=ev.prompt_tokens, c=ev.cached_tokens, share=share, o=ev.completion_tokens))
            if bits:
                out(self.style("2", "    " + _t("cli.sep.semi").join(bits)))
        elif k == "tool_finished":
            mark = self.style("32", "✓") if ev.ok else self.style("31", "✗")
            out(f"    {mark} {ev.name}" + (f"  {_say(ev.summary)}" if ev.summary else ""))
        elif k == "draft_changed":
            if ev.sealed:
                out(self.style("35", _t("cli.sealed", version=ev.version, chars=ev.chars)))
            else:
                out(self.style("35", _t("cli.draft", version=ev.version, chars=ev.chars)))
                for line in ev.text.splitlines():
                    out(self.style("35", "  │ ") + line)
                out(self.style("35", "  └─"))
        elif k == "activity":
            self._said.append(ev.text)
            color = {"info": "36", "warning": "33", "error": "31"}.get(ev.level, "36")
            out(self.style(color, f"  ※ {_say(ev.text)}"))
        elif k == "ask":
            out(self.style("1;33", text("cli.out.chat.ask", question=ev.question)))
            for i, o in enumerate(ev.options, 1):
                out(f"     {i}. {o}")
        elif k == "revised":
            out(self.style("35", _t("cli.revised", version=ev.version)))
            for line in ev.text.splitlines():
                out(self.style("35", "  │ ") + line)
        elif k == "scribe_finished":
            if ev.error:
                out(self.style("31", _t("cli.scribe_failed", error=ev.error)))
            else:
                items = _t("cli.sep.semi").join(_say(applied_in_words(a)) for a in ev.applied) or _t("cli.scribe_none")
                out(self.style("2", _t("cli.scribe", items=items)))
                for w in ev.warnings:
                    out(self.style("33", _t("cli.scribe_warning", w=_say(w))))
        elif k == "beat_finished":
            if ev.outcome == "discussed":  # agent mode: the reply was streamed as it came
                self._end_stream()
            elif ev.sealed:
                out(self.style("1", _t("cli.final")) + ev.final)
            elif ev.outcome == "revised_previous":
                out(self.style("2", _t("cli.revised_previous")))
            elif not any(ev.message and ev.message in said for said in self._said):
                out(self.style("33", f"  {_say(ev.message)}"))


def print_ledger(res: BeatResult, view: HumanView) -> None:
    """The world state, the roster and the context meter after a beat, in ``view``'s colours."""
    out(view.style("1;34", _t("cli.state")))
    lang = language()
    st = res.ledger
    out(state_in_words(st, lang) if st is not None else ledger_in_words(res.state, lang))
    roster = roster_in_words(st, lang) if st is not None else ledger_in_words(res.roster, lang)
    head = _t("cli.roster")
    if "\n" in roster:  # one line per section (English): the heading on its own line, as the world state's
        out(view.style("1;34", head.rstrip()))
        out(roster)
    else:
        out(view.style("1;34", head) + roster)
    ctx = (res.tokens or {}).get("context")
    if ctx:
        hit = res.tokens.get("cache_hit_share")
        out(view.style("2", _t("cli.context", used=f"{ctx['used']:,}", window=f"{ctx['window']:,}", share=f"{ctx['share']:.0%}")
                          + (_t("cli.context_hit", hit=f"{hit:.0%}") if hit is not None else "")))
