"""How a beat looks in the terminal: ``HumanView`` renders the engine's events as text (the draft as it grows, tool
activity, ask cards, the ledger), ``print_ledger`` the world state after a beat. Used by ``liyuan chat``."""

from __future__ import annotations

from typing import Any

from ..core.chat.facade import BeatResult
from .common import out


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
            out(self.style("1;36", f"\n━━ 第 {ev.beat} 拍 ━━") + ("  " + self.style("33", "［回放模型·离线演示］") if ev.is_replay else ""))
            out(self.style("1", "你：") + ev.user)
            if ev.activated:
                out(self.style("2", f"  命中设定：{'、'.join(ev.activated)}"))
            for why in ev.lore:
                if "常驻" not in why:
                    out(self.style("2", f"    · {why}"))
        elif k == "call_started":
            self._reasoning = 0
            out(self.style("2", f"  · 第 {ev.round}/{ev.max_rounds} 次调用"))
        elif k == "delta":
            if ev.channel == "reasoning":
                self._reasoning += len(ev.text)
            elif ev.channel == "content":
                if not self._streaming:
                    out(self.style("2", "    文字："), end="")
                    self._streaming = True
                out(ev.text, end="")
        elif k == "call_finished":
            self._end_stream()
            bits = []
            if self._reasoning:
                bits.append(f"思考 {self._reasoning} 字")
            if ev.prompt_tokens:
                share = f"{100 * ev.cached_tokens / ev.prompt_tokens:.0f}%" if ev.prompt_tokens else "-"
                bits.append(f"输入 {ev.prompt_tokens} token（缓存命中 {ev.cached_tokens}，{share}），输出 {ev.completion_tokens}")
            if bits:
                out(self.style("2", "    " + "；".join(bits)))
        elif k == "tool_finished":
            mark = self.style("32", "✓") if ev.ok else self.style("31", "✗")
            out(f"    {mark} {ev.name}" + (f"  {ev.summary}" if ev.summary else ""))
        elif k == "draft_changed":
            if ev.sealed:
                out(self.style("35", f"  ■ 已收笔 · 版本 {ev.version} · {ev.chars} 字"))
            else:
                out(self.style("35", f"  ┌─ 稿纸 · 版本 {ev.version} · {ev.chars} 字"))
                for line in ev.text.splitlines():
                    out(self.style("35", "  │ ") + line)
                out(self.style("35", "  └─"))
        elif k == "activity":
            self._said.append(ev.text)
            color = {"info": "36", "warning": "33", "error": "31"}.get(ev.level, "36")
            out(self.style(color, f"  ※ {ev.text}"))
        elif k == "ask":
            out(self.style("1;33", f"  ？ {ev.question}"))
            for i, o in enumerate(ev.options, 1):
                out(f"     {i}. {o}")
        elif k == "revised":
            out(self.style("35", f"  ↺ 上一拍已原位修订（版本 {ev.version}）："))
            for line in ev.text.splitlines():
                out(self.style("35", "  │ ") + line)
        elif k == "scribe_finished":
            if ev.error:
                out(self.style("31", f"  场记失败：{ev.error}（本拍已保存，账本未变）"))
            else:
                out(self.style("2", "  场记记账：" + ("；".join(ev.applied) or "无变化")))
                for w in ev.warnings:
                    out(self.style("33", f"  场记告警：{w}"))
        elif k == "beat_finished":
            if ev.outcome == "discussed":  # agent mode: the reply was streamed as it came
                self._end_stream()
            elif ev.sealed:
                out(self.style("1", "\n定稿：\n") + ev.final)
            elif ev.outcome == "revised_previous":
                out(self.style("2", "  （本拍修订了上一拍，没有新回复）"))
            elif not any(ev.message and ev.message in said for said in self._said):
                out(self.style("33", f"  {ev.message}"))


def print_ledger(res: BeatResult, view: HumanView) -> None:
    """The world state, the roster and the context meter after a beat, in ``view``'s colours."""
    out(view.style("1;34", "\n【世界状态】"))
    out(res.state)
    out(view.style("1;34", "【登场名录】") + res.roster)
    ctx = (res.tokens or {}).get("context")
    if ctx:
        hit = res.tokens.get("cache_hit_share")
        out(view.style("2", f"上下文 {ctx['used']:,} / {ctx['window']:,} token（{ctx['share']:.0%}）"
                          + (f"，本拍缓存命中 {hit:.0%}" if hit is not None else "")))
