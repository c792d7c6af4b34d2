"""``liyuan story checkpoints|restore|export CHAT …``: a long-form (agent) chat's checkpoints, restoring the chapter
folder (optionally the conversation too) and exporting the chapters as a book; ``outline|threads|codex|progress CHAT
[--json]`` print the writing room (issue 19) through Chat's queries. Errors: one ``liyuan: …`` line, exit 2.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from .common import chat_folder, open_chat, out, say

#: The writing-room sub-commands (issue 19).
WRITING_COMMANDS = ("outline", "threads", "codex", "progress")


def writing_report(chat: Any, what: str, as_json: bool) -> str:
    """The text (or JSON) of ``liyuan story outline|threads|codex|progress`` for an open ``chat``."""
    if what == "outline":
        o = chat.outline()
        if as_json:
            return json.dumps(o.model_dump(exclude={"text"}) if o else None, ensure_ascii=False, indent=1)
        if o is None:
            return "（这一局还没有大纲：在对话文件夹里写 大纲.md）"
        from ..core.story.outline import chapter_line
        lines = []
        for v in o.volumes:
            if v.title:
                lines.append(f"# {v.title}")
            for c in v.chapters:
                lines.append(chapter_line(c))
                lines += [f"    - {b}" for b in c.beats]
        return "\n".join(lines) or "（大纲还没有章节）"
    if what == "threads":
        ts = chat.threads()
        if as_json:
            return json.dumps([t.model_dump() for t in ts], ensure_ascii=False, indent=1)
        from ..core.ledger.threads import STATE_ZH
        lines = []
        for t in ts:
            where = f"第 {t.planted.chapter} 章 {t.planted.file}" if t.planted.chapter else (
                f"第 {t.planted.beat} 轮" if t.planted.beat else "")
            bits = [STATE_ZH[t.state], f"埋于{where}" if where else ""]
            if t.due_chapter:
                bits.append(f"须在第 {t.due_chapter} 章前回收")
            if t.intentional:
                bits.append("有意悬置")
            q = f"  「{t.planted.quote}」@{t.planted.offset}" if t.planted.quote else ""
            lines.append(f"{t.id}  {t.title}（{'，'.join(b for b in bits if b)}）{q}")
        return "\n".join(lines) or "（没有伏笔）"
    if what == "codex":
        es = chat.codex()
        if as_json:
            return json.dumps([e.model_dump() for e in es], ensure_ascii=False, indent=1)
        from ..core.chat.writing_room import KIND_ZH
        lines = []
        for e in es:
            head = f"{KIND_ZH[e.kind]}  {e.name}" + (f"（又名 {'、'.join(e.aliases)}）" if e.aliases else "")
            lines.append(head + (f"  首见：{e.first_seen}" if e.first_seen else ""))
            for f in e.facts[-3:]:
                lines.append(f"    {f.text}" + (f"（自第 {f.from_chapter} 章）" if f.from_chapter else ""))
            if e.chapters:
                lines.append(f"    提到 {e.mentions} 次，{len(e.chapters)} 章：" + "、".join(list(e.chapters)[:10])
                             + ("…" if len(e.chapters) > 10 else ""))
            if e.lore is not None:
                lines.append(f"    设定条目：{e.lore.title or e.lore.uid}")
        return "\n".join(lines) or "（名录还是空的）"
    p = chat.writing_progress()
    if as_json:
        return json.dumps(p.model_dump(), ensure_ascii=False, indent=1)
    lines = [f"全书 {p.words} 字" + (f" / 目标 {p.target}" if p.target else "") + f"；今天 {p.today} 字"]
    for v in p.volumes:
        lines.append(f"# {v.title or '（未分卷）'}  {v.words} 字" + (f" / {v.target}" if v.target else ""))
    for c in p.chapters:
        lines.append(f"  {c.title}  {c.words} 字" + (f" / {c.target}" if c.target else "") + ("" if c.file else "（未成文）"))
    for d in p.days[-7:]:
        lines.append(f"  {d.day}  {d.words:+d} 字（累计 {d.total}）")
    return "\n".join(lines)


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register ``story`` (with ``checkpoints``, ``restore``, ``export`` and :data:`WRITING_COMMANDS`) on the top-level subparsers; the chosen
    sub-command is ``args.story_cmd``. Returns the ``story`` parser."""
    st = sub.add_parser("story", help="写长篇（agent）模式：检查点、恢复、导出、大纲、伏笔、设定集、进度")
    ss = st.add_subparsers(dest="story_cmd")
    s1 = ss.add_parser("checkpoints", help="列出一个长篇对话的检查点")
    s1.add_argument("chat", help="对话文件夹，或 卡名/对话名")
    s1.add_argument("--json", action="store_true")
    s2 = ss.add_parser("restore", help="把正文恢复到某个检查点")
    s2.add_argument("chat")
    s2.add_argument("checkpoint", help="检查点 id（可只写开头几位）")
    s2.add_argument("--with-conversation", action="store_true", help="对话也回到那一轮之前（撤销本轮）")
    from . import story_export  # issue 28: book options, per-chapter text, flagged words

    story_export.add_arguments(ss.add_parser("export", help="把正文导出成一本书（EPUB/DOCX/Markdown/纯文本）"))
    for name, helptext in (("outline", "大纲：卷、章（状态、目标字数、文件）、情节点"), ("threads", "伏笔：当前分支的伏笔和状态"),
                           ("codex", "设定集：名录里每个名字的事实、首次出现、提到它的章节、设定条目"),
                           ("progress", "进度：每章/每卷/全书字数、目标、每日字数")):
        sp = ss.add_parser(name, help=helptext)
        sp.add_argument("chat")
        sp.add_argument("--json", action="store_true")
    from . import story_review  # issue 19 §4: review one chapter (local checks, then the configured model)

    sr = ss.add_parser("review", help="审稿：对一章做审读（重复、套话、矛盾、人物走样、伏笔……），只报告不改稿")
    sr.add_argument("chat")
    sr.add_argument("--json", action="store_true")
    story_review.add_arguments(sr)
    return st


def run(args: argparse.Namespace) -> int:
    """Run ``liyuan story checkpoints|restore|export|outline|threads|codex|progress`` from parsed ``args``; returns the exit code (0 ok, 2 a bad
    chat, checkpoint or file with one ``liyuan: …`` line on stderr, or no sub-command: usage)."""
    from ..core.session.tree import SessionError
    from ..core.story.checkpoints import StoryHistory

    if not getattr(args, "story_cmd", None):
        print("liyuan: 用法：liyuan story checkpoints|restore|export|outline|threads|codex|progress|review CHAT …", file=sys.stderr)
        return 2
    try:
        d = chat_folder(args.chat)
        hist = StoryHistory(d / "正文", d / "历史")
        if args.story_cmd == "checkpoints":
            cps = hist.checkpoints()
            if args.json:
                out(json.dumps([c.model_dump(exclude_none=True) for c in cps], ensure_ascii=False, indent=1))
            else:
                for c in reversed(cps):
                    ch = c.changed
                    what = "，".join(x for x in (f"新增 {len(ch.added)}" if ch.added else "", f"修改 {len(ch.modified)}" if ch.modified else "",
                                                 f"改名 {len(ch.renamed)}" if ch.renamed else "", f"删除 {len(ch.removed)}" if ch.removed else "") if x)
                    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(c.ts / 1000))
                    out(f"{c.id}  {when}  {'你' if c.author == 'user' else 'agent'}  {what or '无变化'}  {c.message[:40]}")
            return 0
        if args.story_cmd == "restore":
            cps = [c for c in hist.checkpoints() if c.id.startswith(args.checkpoint)]
            if len(cps) != 1:
                raise ValueError(f"检查点「{args.checkpoint}」{'找不到' if not cps else '不唯一'}")
            target = cps[0]
            # one command for the window and the CLI (撤销本轮 with --with-conversation, seed 000)
            res = open_chat(args.chat).restore_checkpoint(target.id, with_conversation=args.with_conversation)
            if not args.with_conversation:
                out(f"已恢复到 {target.id}（新检查点 {res.checkpoint.id}；对话没动）")
            else:
                out(f"已撤销那一轮：正文回到 {res.files_to.id}（新检查点 {res.checkpoint.id}），对话也回到了那一轮之前")
            return 0
        if args.story_cmd == "review":
            from ..core.errors import ToolError
            from . import story_review

            try:
                return story_review.run(args)
            except ToolError as e:
                raise ValueError(e.message) from None
        if args.story_cmd in WRITING_COMMANDS:
            out(writing_report(open_chat(args.chat), args.story_cmd, args.json))
            return 0
        if args.story_cmd == "export":
            from . import story_export  # core.story.export, as the window's export dialog

            return story_export.run(args)
    except (ValueError, KeyError, SessionError) as e:
        print(f"liyuan: {say(e.args[0]) if isinstance(e, KeyError) and e.args else say(e)}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"liyuan: {say(e)}", file=sys.stderr)  # a damaged checkpoint object names itself (catalog)
        return 2
    return 2  # argparse admits only the sub-commands above
