"""The prompt inspector (查看提示词): every model call of one beat exactly as sent, and what came back.

Data: :meth:`Chat.inspect_beat` (``entry_id`` → a list of calls). Each call is a dict::

    {"round": int, "purpose"?: "scribe", "templates"?: [{"label", "output", "error"?}],
     "request": {"messages": [{"role", "content", "tool_calls"?, "tool_call_id"?}, ...], "tools": [function specs]},
     "reply": {"content", "reasoning", "tool_calls": [{"id", "name", "arguments", "result", "ok"}], "finish_reason"},
     "usage": dict, "model": str, "ms": float, "error": str | None}

The dialog lists the calls on the left (round, tools, tokens) and shows the selected one on the right as plain
text: the messages one by one (role, content, tool calls and tool results), the tool specs (names, then the JSON),
then the prompt templates the beat evaluated (where each came from and what it rendered to, ✗ for one that failed
and was not sent), then the reply (content, reasoning, tool calls with their results), usage and timing.
「复制为 JSON」 puts the whole list on the clipboard as JSON. Nothing here computes anything: the text is laid out from the dicts as given.
"""

from __future__ import annotations

import json
from typing import Any, Optional

from PySide6.QtGui import QFont, QGuiApplication
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from ..infra.i18n import register, tr
from ..infra.theme import set_role

register({  # issue 18: how a beat played, and why it ended early
    "inspect.prose": {"zh": "纯文字演出（无工具）", "en": "prose-only (no tools)"},
    "inspect.cut.length": {"zh": "被输出上限截断", "en": "cut off at the output cap"},
    "inspect.cut.repetition": {"zh": "重复，提前停下", "en": "repeating, stopped early"},
})

RULE = "─" * 60


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2, default=str)


def _args(raw: Any) -> str:
    """Tool-call arguments as readable JSON (they arrive as JSON text or as an object)."""
    if isinstance(raw, str):
        try:
            return _json(json.loads(raw))
        except ValueError:
            return raw
    return _json(raw)


def call_title(call: dict[str, Any]) -> str:
    """One line for the list of calls: 「第 n 次调用 · tools · tokens」 (or 场记)."""
    if call.get("purpose") == "scribe":
        head = tr("inspect.scribe")
    else:
        head = tr("inspect.round", n=call.get("round", "?"))
    reply = call.get("reply") or {}
    names = [str(t.get("name", "?")) for t in reply.get("tool_calls") or []]
    parts = [head]
    if names:
        parts.append(tr("sep.list").join(names))
    usage = call.get("usage") or {}
    pt = usage.get("prompt_tokens")
    if pt:
        cached = usage.get("cached_tokens", usage.get("prompt_cache_hit_tokens", 0)) or 0
        parts.append(tr("inspect.tokens", p=pt, c=cached))
    if call.get("play_mode") == "prose" and call.get("purpose") != "scribe":  # issue 18 §2
        parts.append(tr("inspect.prose"))
    if call.get("cut"):
        parts.append(tr(f"inspect.cut.{call['cut']}") if call["cut"] in ("length", "repetition") else call["cut"])
    if call.get("error"):
        parts.append("✗")
    return " · ".join(parts)


def call_text(call: dict[str, Any]) -> str:
    """The whole call as plain text: request (system, messages, templates, tools), then the reply, usage and
    timing."""
    out: list[str] = []
    req = call.get("request")
    if req is None:  # beats recorded before the engine kept what it sent
        out.append(f"【{tr('inspect.request')}】 {tr('inspect.norequest')}")
        req = {}
    msgs = req.get("messages") or []
    if call.get("request") is not None:
        out.append(f"【{tr('inspect.request')}】 {tr('inspect.messages', n=len(msgs))}" +
                   (f" · {call.get('model')}" if call.get("model") else ""))
    for i, m in enumerate(msgs):
        role = str(m.get("role", "?"))
        head = f"[{i}] {role}"
        if m.get("tool_call_id"):
            head += f"  (tool_call_id={m['tool_call_id']})"
        if m.get("name"):
            head += f"  name={m['name']}"
        out.append(RULE)
        out.append(head)
        content = m.get("content")
        if isinstance(content, list):  # content parts
            content = "\n".join(str(p.get("text", p)) if isinstance(p, dict) else str(p) for p in content)
        if content:
            out.append(str(content))
        for tc in m.get("tool_calls") or []:
            fn = tc.get("function") or tc
            out.append(f"  → {fn.get('name', '?')} ({tc.get('id', '')})")
            out.append(_indent(_args(fn.get("arguments", ""))))
    templates = call.get("templates") or []
    if templates:
        out.append(RULE)
        out.append(f"【{tr('inspect.templates', n=len(templates))}】")
        for t in templates:
            if t.get("error"):
                out.append(f"  ✗ {t.get('label', '?')}：{tr('inspect.template_error')}（{t['error']}）")
            elif not str(t.get("output") or "").strip():
                out.append(f"  · {t.get('label', '?')} {tr('inspect.template_empty')}")
            else:
                out.append(f"  ✓ {t.get('label', '?')} →")
                out.append(_indent(str(t["output"]).strip(), 6))
    tools = req.get("tools") or []
    if tools:
        out.append(RULE)
        names = [str((t.get("function") or t).get("name", "?")) for t in tools]
        out.append(f"【{tr('inspect.tools')}】 {len(tools)}{tr('sep.colon')}{tr('sep.list').join(names)}")
        out.append(_json(tools))
    reply = call.get("reply") or {}
    out.append("")
    out.append("═" * 60)
    out.append(f"【{tr('inspect.reply')}】" + (f"  finish_reason={reply.get('finish_reason')}" if reply.get("finish_reason") else ""))
    if call.get("error"):
        out.append(f"{tr('inspect.error')}{tr('sep.colon')}{call['error']}")
    if reply.get("reasoning"):
        out.append(f"〔{tr('inspect.reasoning')}〕")
        out.append(str(reply["reasoning"]))
    if reply.get("content"):
        out.append(f"〔{tr('inspect.content')}〕")
        out.append(str(reply["content"]))
    for tc in reply.get("tool_calls") or []:
        ok = tc.get("ok")
        mark = "✓" if ok else ("✗" if ok is False else "·")
        out.append(f"  {mark} {tc.get('name', '?')} ({tc.get('id', '')})")
        out.append(_indent(_args(tc.get("arguments", ""))))
        if "result" in tc:
            out.append(f"    {tr('inspect.result')}{tr('sep.colon').rstrip()}")
            res = tc.get("result")
            out.append(_indent(res if isinstance(res, str) else _json(res), 6))
    usage = call.get("usage") or {}
    tail = []
    if usage:
        tail.append(f"{tr('inspect.usage')}{tr('sep.colon')}{json.dumps(usage, ensure_ascii=False, default=str)}")
    if call.get("ms") is not None:
        tail.append(f"{tr('inspect.ms')}{tr('sep.colon')}{float(call.get('ms') or 0):.0f} ms")
    if tail:
        out.append(RULE)
        out.extend(tail)
    return "\n".join(out)


def _indent(text: str, n: int = 4) -> str:
    pad = " " * n
    return "\n".join(pad + line for line in str(text).splitlines())


def calls_json(calls: list[dict[str, Any]]) -> str:
    """The whole beat as JSON text (what 「复制为 JSON」 copies)."""
    return json.dumps(calls, ensure_ascii=False, indent=2, default=str)


class InspectorDialog(QDialog):
    """Shows :meth:`Chat.inspect_beat` for one beat. ``set_calls`` fills it; ``copy_json`` copies everything."""

    def __init__(self, calls: list[dict[str, Any]], title: str = "", parent: Optional[QWidget] = None):
        super().__init__(parent)
        self.setWindowTitle(title or tr("inspect.title"))
        self.resize(980, 720)
        lay = QVBoxLayout(self)
        self.head = QLabel("")
        self.head.setObjectName("inspectHead")
        self.head.setWordWrap(True)
        lay.addWidget(self.head)
        self.notes = QLabel("")  # the chat's Author's Note and the card's Character's Note (ui.authors_note)
        self.notes.setObjectName("inspectNotes")
        self.notes.setWordWrap(True)
        set_role(self.notes, "muted")
        self.notes.setVisible(False)
        lay.addWidget(self.notes)
        split = QSplitter()
        self.list = QListWidget()
        self.list.setObjectName("inspectCalls")
        self.list.currentRowChanged.connect(self._show)
        split.addWidget(self.list)
        self.text = QPlainTextEdit()
        self.text.setObjectName("inspectText")
        self.text.setReadOnly(True)
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        mono = QFont("monospace")
        mono.setStyleHint(QFont.StyleHint.Monospace)
        self.text.setFont(mono)
        split.addWidget(self.text)
        split.setSizes([340, 640])
        lay.addWidget(split, 1)
        row = QHBoxLayout()
        self.copy_btn = QPushButton(tr("inspect.copy"))
        self.copy_btn.clicked.connect(self.copy_json)
        row.addWidget(self.copy_btn)
        self.note = QLabel("")
        set_role(self.note, "muted")
        row.addWidget(self.note, 1)
        box = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        box.rejected.connect(self.reject)
        box.accepted.connect(self.accept)
        row.addWidget(box)
        lay.addLayout(row)
        self.calls: list[dict[str, Any]] = []
        self.set_calls(calls)

    def set_calls(self, calls: list[dict[str, Any]]) -> None:
        """Show these calls (the first one selected)."""
        self.calls = list(calls or [])
        self.list.clear()
        total_p = sum(int((c.get("usage") or {}).get("prompt_tokens") or 0) for c in self.calls)
        total_c = sum(int((c.get("usage") or {}).get("completion_tokens") or 0) for c in self.calls)
        self.head.setText(tr("inspect.head", n=len(self.calls), p=total_p, c=total_c) if self.calls else tr("inspect.none"))
        for c in self.calls:
            self.list.addItem(QListWidgetItem(call_title(c)))
        if self.calls:
            self.list.setCurrentRow(0)
        else:
            self.text.setPlainText("")

    def set_notes(self, text: str) -> None:
        """Show the chat's notes line above the calls ("" hides it)."""
        self.notes.setText(text)
        self.notes.setVisible(bool(text))

    def _show(self, row: int) -> None:
        if 0 <= row < len(self.calls):
            self.text.setPlainText(call_text(self.calls[row]))

    def all_text(self) -> str:
        """Every call as text, one after another (for tests and for reading it all at once)."""
        return "\n\n".join(call_text(c) for c in self.calls)

    def copy_json(self) -> str:
        """Copy the whole beat as JSON to the clipboard; returns the text."""
        text = calls_json(self.calls)
        QGuiApplication.clipboard().setText(text)
        self.note.setText(tr("inspect.copied", n=len(text)))
        return text
