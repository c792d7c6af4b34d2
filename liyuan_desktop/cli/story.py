"""``liyuan story checkpoints|restore|export CHAT …``: a long-form (agent) chat's checkpoints, restoring the chapter
folder (optionally the conversation too) and exporting the chapters as a book; ``outline|threads|codex|progress CHAT
[--json]`` print the writing room (issue 19) through Chat's queries. Errors: one ``liyuan: …`` line, exit 2.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any, Optional

from .common import chat_folder, dumps, msg, open_chat, out, say, text

#: The writing-room sub-commands (issue 19).
WRITING_COMMANDS = ("outline", "threads", "codex", "progress")



def changes_line(changed: dict[str, Any]) -> str:
    """A checkpoint's ``changed`` (``CheckpointChanges.to_dict()``: lists under added / modified / renamed /
    removed) as one line of counts in the reader's language (「新增 3 个」 / "3 added"); "" when nothing changed."""
    return text("cli.out.story.changes", items=[
        text("cli.out.story.changed." + k, n=len(changed.get(k) or []))
        for k in ("added", "modified", "renamed", "removed") if changed.get(k)]) if any(changed.values()) else ""

def outline_report(chat: Any, as_json: bool) -> str:
    """``liyuan story outline``: each volume and chapter — stable id, number, title, status, target, the linked file
    and its 字数 — then the chapter files no chapter links (in the chosen language). JSON: ``{"volumes": [{"id",
    "title", "chapters": [{"id", "number", "title", "status", "target", "file", "words", "beats"}]}], "unlinked":
    [file], "reached": n|null}``."""
    o = chat.outline()
    if o is None:
        return "null" if as_json else text("cli.out.story.no_outline", file=chat.novel_layout().outline)
    prog = chat.writing_progress().chapters
    words = {i: p.words for i, p in enumerate(prog[:len(o.chapters())])}
    vols = [{"id": v.id, "title": v.title, "chapters": [
        {"id": c.id, "number": c.index + 1, "title": c.title, "status": c.status, "target": c.target,
         "file": c.file, "words": words.get(c.index, 0), "beats": c.beats} for c in v.chapters]} for v in o.volumes]
    unlinked = chat.unlinked_chapter_files()
    if as_json:
        return dumps({"volumes": vols, "unlinked": unlinked, "reached": chat.chapter_reached()},
                          indent=1)
    lines = []
    for v, vd in zip(o.volumes, vols):
        if v.title:
            lines.append(f"# {v.title}" + (f"  [{v.id}]" if v.id else ""))
        for c, cd in zip(v.chapters, vd["chapters"]):
            bits = [text("cli.out.story.status." + c.status)]
            if c.target:
                bits.append(text("cli.out.story.target", n=c.target))
            bits.append(c.file or text("cli.out.story.unwritten"))
            lines.append(text("cli.out.story.chapter", n=c.index + 1, title=c.title,
                              bits=text("cli.out.story.bits_sep").join(bits), words=cd["words"])
                         + (f"  [{c.id}]" if c.id else ""))
            lines += [f"    - {b}" for b in c.beats]
    if unlinked:
        lines.append(text("cli.out.story.unlinked", files=list(unlinked)))
    return "\n".join(lines) or text("cli.out.story.no_chapters")


def _threads_text(ts: list[Any]) -> str:
    lines = []
    for t in ts:
        where = text("cli.out.story.in_chapter", n=t.planted.chapter, file=t.planted.file) if t.planted.chapter else (
            text("cli.out.story.in_round", n=t.planted.beat) if t.planted.beat else "")
        bits = [text("cli.out.story.thread." + t.state), text("cli.out.story.planted", where=where) if where else ""]
        if t.due_chapter:
            bits.append(text("cli.out.story.due", n=t.due_chapter))
        if t.intentional:
            bits.append(text("cli.out.story.intentional"))
        q = text("cli.out.story.quote", quote=t.planted.quote, at=t.planted.offset) if t.planted.quote else ""
        lines.append(text("cli.out.story.thread", id=t.id, title=t.title, bits=[b for b in bits if b]) + q)
    return "\n".join(lines) or text("cli.out.story.no_threads")


def _codex_text(es: list[Any]) -> str:
    lines = []
    for e in es:
        head = f"{text('cli.out.story.kind.' + e.kind)}  {e.name}"
        head += text("cli.out.story.aka", names=list(e.aliases)) if e.aliases else ""
        lines.append(head + (text("cli.out.story.first_seen", where=e.first_seen) if e.first_seen else ""))
        if e.description:
            lines.append(f"    {e.description}" + (text("cli.out.story.since", n=e.true_from) if e.true_from else ""))
        if e.tags:
            lines.append(text("cli.out.story.tags", tags=list(e.tags)))
        if e.relations:
            lines.append(text("cli.out.story.relations", items=[
                text("cli.out.story.relation", to=r.to, kind=r.kind) if r.kind else r.to for r in e.relations]))
        for f in e.facts[-3:]:
            lines.append(f"    {f.text}" + (text("cli.out.story.since", n=f.from_chapter) if f.from_chapter else ""))
        if e.chapters:
            lines.append(text("cli.out.story.mentions", n=e.mentions, chapters=len(e.chapters),
                              files=list(e.chapters)[:10]) + ("…" if len(e.chapters) > 10 else ""))
        if e.lore is not None:
            lines.append(text("cli.out.story.lore", title=e.lore.title or e.lore.uid))
    return "\n".join(lines) or text("cli.out.story.no_codex")


def _progress_text(p: Any) -> str:
    lines = [text("cli.out.story.book_words", n=p.words)
             + (text("cli.out.story.of_target", n=p.target) if p.target else "")
             + text("cli.out.story.today", n=p.today)]
    for v in p.volumes:
        lines.append(f"# {v.title or text('cli.out.story.no_volume')}  " + text("cli.out.story.words", n=v.words)
                     + (f" / {v.target}" if v.target else ""))
    for c in p.chapters:
        lines.append(f"  {c.title}  " + text("cli.out.story.words", n=c.words) + (f" / {c.target}" if c.target else "")
                     + ("" if c.file else text("cli.out.story.not_written")))
    for d in p.days[-7:]:
        lines.append(f"  {d.day}  " + text("cli.out.story.day", n=f"{d.words:+d}", total=d.total))
    return "\n".join(lines)


def writing_report(chat: Any, what: str, as_json: bool, name: Optional[str] = None) -> str:
    """The text (or JSON) of ``liyuan story outline|threads|codex|progress`` for an open ``chat`` (``name``: only
    that codex entry), in the chosen language."""
    if what == "outline":
        return outline_report(chat, as_json)
    if what == "threads":
        ts = chat.threads()
        if as_json:
            return dumps([t.model_dump() for t in ts], indent=1)
        return _threads_text(ts)
    if what == "codex":
        es = chat.codex(name)
        if as_json:
            return dumps([e.model_dump() for e in es], indent=1)
        return _codex_text(es)
    p = chat.writing_progress()
    if as_json:
        return dumps(p.model_dump(), indent=1)
    return _progress_text(p)


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register ``story`` (with ``checkpoints``, ``restore``, ``export`` and :data:`WRITING_COMMANDS`) on the top-level subparsers; the chosen
    sub-command is ``args.story_cmd``. Returns the ``story`` parser."""
    st = sub.add_parser("story", help=text("cli.help.story.0"))
    ss = st.add_subparsers(dest="story_cmd")
    s1 = ss.add_parser("checkpoints", help=text("cli.help.story.1"))
    s1.add_argument("chat", help=text("cli.help.story.2"))
    s1.add_argument("--json", action="store_true")
    s2 = ss.add_parser("restore", help=text("cli.help.story.3"))
    s2.add_argument("chat")
    s2.add_argument("checkpoint", help=text("cli.help.story.4"))
    s2.add_argument("--with-conversation", action="store_true", help=text("cli.help.story.5"))
    from . import story_export  # issue 28: book options, per-chapter text, flagged words

    story_export.add_arguments(ss.add_parser("export", help=text("cli.help.story.6")))
    for name in ("outline", "threads", "codex", "progress"):
        sp = ss.add_parser(name, help=text(f"cli.help.story.{name}"))
        sp.add_argument("chat")
        sp.add_argument("--json", action="store_true")
        if name == "codex":
            add_codex_arguments(sp)
    sl = ss.add_parser("link", help=text("cli.help.story.7"))
    sl.add_argument("chat")
    sl.add_argument("outline_id", help=text("cli.help.story.8"))
    sl.add_argument("file", nargs="?", default="", help=text("cli.help.story.9"))
    sl.add_argument("--unlink", action="store_true", help=text("cli.help.story.10"))
    from . import story_review  # issue 19 §4: review one chapter (local checks, then the configured model)

    sr = ss.add_parser("review", help=text("cli.help.story.11"))
    sr.add_argument("chat")
    sr.add_argument("--json", action="store_true")
    story_review.add_arguments(sr)
    from . import story_webnovel  # issue 28: norms, 日更 streak, 存稿

    sw = ss.add_parser("webnovel", help=text("webnovel.help"))
    sw.add_argument("chat")
    sw.add_argument("--json", action="store_true")
    story_webnovel.add_arguments(sw)
    from . import story_summaries  # issue 28: a summary per chapter

    sm = ss.add_parser("summaries", help=text("chsum.help"))
    sm.add_argument("chat")
    sm.add_argument("--json", action="store_true")
    story_summaries.add_arguments(sm)
    return st


def run(args: argparse.Namespace) -> int:
    """Run ``liyuan story checkpoints|restore|export|outline|threads|codex|progress`` from parsed ``args``; returns the exit code (0 ok, 2 a bad
    chat, checkpoint or file with one ``liyuan: …`` line on stderr, or no sub-command: usage)."""
    from ..core.errors import ToolError
    from ..core.session.tree import SessionError
    from ..core.story.checkpoints import StoryHistory
    from ..core.story.layout import history_dir, story_dir

    if not getattr(args, "story_cmd", None):
        print(text("cli.out.story.usage"), file=sys.stderr)
        return 2
    try:
        d = chat_folder(args.chat)
        hist = StoryHistory(story_dir(d), history_dir(d))
        if args.story_cmd == "checkpoints":
            cps = hist.checkpoints()
            if args.json:
                out(dumps([c.model_dump(exclude_none=True) for c in cps], indent=1))
            else:
                for c in reversed(cps):
                    what = changes_line(c.changed.to_dict() if c.changed else {})
                    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(c.ts / 1000))
                    who = text("cli.out.story.you") if c.author == "user" else "agent"
                    out(f"{c.id}  {when}  {who}  {what or text('cli.out.story.no_change')}  {c.message[:40]}")
            return 0
        if args.story_cmd == "restore":
            cps = [c for c in hist.checkpoints() if c.id.startswith(args.checkpoint)]
            if len(cps) != 1:
                raise ValueError(msg("cli.out.story.no_checkpoint" if not cps else "cli.out.story.checkpoint_ambiguous",
                                     id=args.checkpoint))
            target = cps[0]
            # one command for the window and the CLI (撤销本轮 with --with-conversation, seed 000)
            res = open_chat(args.chat).restore_checkpoint(target.id, with_conversation=args.with_conversation)
            if not args.with_conversation:
                out(text("cli.out.story.restored", id=target.id, new=res.checkpoint.id))
            else:
                out(text("cli.out.story.undone", id=res.files_to.id, new=res.checkpoint.id))
            return 0
        if args.story_cmd == "review":
            from ..core.errors import ToolError
            from . import story_review

            try:
                return story_review.run(args)
            except ToolError as e:
                raise ValueError(e.message) from None
        if args.story_cmd == "summaries":
            from . import story_summaries

            return story_summaries.run(args)
        if args.story_cmd == "webnovel":
            from . import story_webnovel

            return story_webnovel.run(args)
        if args.story_cmd == "codex" and args.action:
            return run_codex(open_chat(args.chat), args)
        if args.story_cmd == "link":
            return run_link(open_chat(args.chat), args)
        if args.story_cmd in WRITING_COMMANDS:
            out(writing_report(open_chat(args.chat), args.story_cmd, args.json))
            return 0
        if args.story_cmd == "export":
            from . import story_export  # core.story.export, as the window's export dialog

            return story_export.run(args)
    except ToolError as e:
        print(f"liyuan: {e.message}", file=sys.stderr)
        return 2
    except (ValueError, KeyError, SessionError) as e:
        print(f"liyuan: {say(e.args[0]) if isinstance(e, KeyError) and e.args else say(e)}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"liyuan: {say(e)}", file=sys.stderr)  # a damaged checkpoint object names itself (catalog)
        return 2
    return 2  # argparse admits only the sub-commands above


def add_codex_arguments(sp: argparse.ArgumentParser) -> None:
    """``liyuan story codex CHAT [add|set|show|remove NAME] [--kind …] [--description …] [--alias …]…``."""
    sp.add_argument("action", nargs="?", choices=("add", "set", "show", "remove"), help=text("cli.help.story.12"))
    sp.add_argument("name", nargs="?", help=text("cli.help.story.13"))
    sp.add_argument("--kind", help=text("cli.help.story.14"))
    sp.add_argument("--description", help=text("cli.help.story.15"))
    sp.add_argument("--alias", action="append", help=text("cli.help.story.16"))
    sp.add_argument("--tag", action="append", help=text("cli.help.story.17"))
    sp.add_argument("--relation", action="append", help=text("cli.help.story.18"))
    sp.add_argument("--from", dest="true_from", type=int, help=text("cli.help.story.19"))
    sp.add_argument("--rename", help=text("cli.help.story.20"))


def run_codex(chat: Any, args: argparse.Namespace) -> int:
    """``liyuan story codex CHAT add|set|show|remove NAME …`` through the Chat facade. Exit 0, or 2 with one
    ``liyuan: …`` line (an unknown name, a name taken, a bad kind, a damaged 名录.json)."""
    from pydantic import ValidationError

    from ..core.messages import joined_semi, message, validation_reason
    from ..core.story.codex import CodexRecord, parse_kind, parse_relations

    if not args.name:
        raise ValueError(message("codex.bad_args", why="NAME"))
    if args.action == "show":
        if not chat.codex(args.name):
            raise ValueError(message("codex.not_found", name=args.name))
        out(writing_report(chat, "codex", args.json, args.name))
        return 0
    if args.action == "remove":
        if not chat.codex_remove(args.name):
            raise ValueError(message("codex.not_found", name=args.name))
        out(say(message("codex.removed", name=args.name)))
        return 0
    fields: dict[str, Any] = {}
    if args.kind:
        fields["kind"] = parse_kind(args.kind)
    if args.description is not None:
        fields["description"] = args.description
    for key, values in (("aliases", args.alias), ("tags", args.tag)):
        if values is not None:
            fields[key] = values
    if args.relation is not None:
        fields["relations"] = parse_relations(args.relation)
    if args.true_from is not None:
        fields["true_from"] = args.true_from or None
    if args.action == "add":
        try:
            rec = CodexRecord.model_validate({"name": args.name, **fields})
        except ValidationError as e:  # each complaint "<field>: <reason>" (the reason in the reader's language)
            raise ValueError(message("codex.bad_args", why=joined_semi([
                message("field.error", loc=".".join(map(str, err["loc"])), msg=validation_reason(err))
                for err in e.errors()]))) from None
        chat.codex_add(rec)
    else:
        if args.rename:
            fields["rename"] = args.rename
        rec = chat.codex_set(args.name, **fields)
    out(say(message("codex.saved", name=rec.name)))
    return 0


def run_link(chat: Any, args: argparse.Namespace) -> int:
    """``liyuan story link CHAT OUTLINE_ID FILE`` / ``--unlink``: link an outline chapter to a chapter file (by its
    stable id; renames keep the link) or take a link off. Exit 0, or 2 with one ``liyuan: …`` line."""
    from ..core.messages import message

    ref = args.outline_id
    if args.unlink:
        if ref.lower().endswith(".md") and not args.file:
            if chat.unlink_chapter_file(ref) is None:
                raise ValueError(message("story.not_linked", file=ref))
            out(say(message("story.unlinked", file=ref)))
            return 0
        o = chat.outline()
        c = o.find(ref) if o is not None else None
        chat.link_chapter(ref, "")
        out(say(message("story.unlinked", file=(c.file if c is not None and c.file else ref))))
        return 0
    if not args.file:
        raise ValueError(msg("cli.out.story.link_needs_file"))
    o = chat.link_chapter(ref, args.file)
    c = o.find(ref)
    out(say(message("story.linked", n=c.index + 1, title=c.title, id=c.id, file=c.file)))
    return 0
