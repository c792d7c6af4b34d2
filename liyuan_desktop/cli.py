"""Command line: ``liyuan chat`` plays beats headless, on the same engine and events as the window.

    liyuan                                   the desktop window (see app.py); --self-test plays the demo through it
    liyuan chat --demo [--json]              the three recorded seed beats on the demo card (replay model)
    liyuan chat CARD [--chat NAME] [--model replay:FILE | --provider NAME [--model M] [--base-url URL]]
                [--say TEXT …] [--json]      beats against a real model (or a replay file)

Exit codes: 0 ok; 1 a beat failed (model/network error); 2 bad input (card, replay file, provider, arguments).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Optional

from . import __version__
from .core.cards import Card, CardError, load_card
from .core.chat.facade import BeatResult, Chat
from .core.beat.events import AskAnswer, AskRequest
from .core.llm.types import ChatModel
from .core.paths import chat_dir, demo_card_path, demo_replay_path, sample_cards_dir
from .core.session.tree import SessionError


async def _readline() -> str:
    """One line from stdin without blocking the loop; read on a daemon thread so Ctrl-C at a prompt exits at once
    (a default-executor thread would keep the process waiting for Enter)."""
    import threading

    loop = asyncio.get_running_loop()
    fut: asyncio.Future[str] = loop.create_future()

    def work() -> None:
        try:
            line = sys.stdin.readline()
        except (OSError, ValueError):
            line = ""
        loop.call_soon_threadsafe(lambda: fut.done() or fut.set_result(line))

    threading.Thread(target=work, daemon=True).start()
    return await fut


def _out(text: str = "", end: str = "\n") -> None:
    sys.stdout.write(text + end)
    sys.stdout.flush()


class _PipeSafeStdout:
    """stdout for the terminal commands: when the reader goes away (``liyuan inspect … | head``) the rest of the
    output is dropped quietly instead of raising BrokenPipeError in the middle of a beat — the command goes on and
    saves what it was doing. Everything else is delegated to the real stream."""

    def __init__(self, inner: Any):
        self._inner = inner
        self._gone = False

    def _drop(self) -> None:
        self._gone = True
        try:  # later writes, and the interpreter's flush at exit, go to /dev/null
            os.dup2(os.open(os.devnull, os.O_WRONLY), self._inner.fileno())
        except (OSError, ValueError):
            pass

    def write(self, text: str) -> int:
        if not self._gone:
            try:
                return self._inner.write(text)
            except BrokenPipeError:
                self._drop()
        return len(text)

    def flush(self) -> None:
        if not self._gone:
            try:
                self._inner.flush()
            except BrokenPipeError:
                self._drop()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class HumanView:
    """Renders engine events as text: the draft as it grows, tool activity, ask cards, the ledger."""

    def __init__(self, color: bool):
        self.color = color
        self._reasoning = 0
        self._streaming = False
        self._said: list[str] = []

    def _c(self, code: str, text: str) -> str:
        return f"\033[{code}m{text}\033[0m" if self.color else text

    def _end_stream(self) -> None:
        if self._streaming:
            _out()
            self._streaming = False

    def __call__(self, ev: Any) -> None:
        k = getattr(ev, "kind", "")
        if k == "beat_started":
            self._said = []
            _out(self._c("1;36", f"\n━━ 第 {ev.beat} 拍 ━━") + ("  " + self._c("33", "［回放模型·离线演示］") if ev.is_replay else ""))
            _out(self._c("1", "你：") + ev.user)
            if ev.activated:
                _out(self._c("2", f"  命中设定：{'、'.join(ev.activated)}"))
            for why in ev.lore:
                if "常驻" not in why:
                    _out(self._c("2", f"    · {why}"))
        elif k == "call_started":
            self._reasoning = 0
            _out(self._c("2", f"  · 第 {ev.round}/{ev.max_rounds} 次调用"))
        elif k == "delta":
            if ev.channel == "reasoning":
                self._reasoning += len(ev.text)
            elif ev.channel == "content":
                if not self._streaming:
                    _out(self._c("2", "    文字："), end="")
                    self._streaming = True
                _out(ev.text, end="")
        elif k == "call_finished":
            self._end_stream()
            bits = []
            if self._reasoning:
                bits.append(f"思考 {self._reasoning} 字")
            if ev.prompt_tokens:
                share = f"{100 * ev.cached_tokens / ev.prompt_tokens:.0f}%" if ev.prompt_tokens else "-"
                bits.append(f"输入 {ev.prompt_tokens} token（缓存命中 {ev.cached_tokens}，{share}），输出 {ev.completion_tokens}")
            if bits:
                _out(self._c("2", "    " + "；".join(bits)))
        elif k == "tool_finished":
            mark = self._c("32", "✓") if ev.ok else self._c("31", "✗")
            _out(f"    {mark} {ev.name}" + (f"  {ev.summary}" if ev.summary else ""))
        elif k == "draft_changed":
            if ev.sealed:
                _out(self._c("35", f"  ■ 已收笔 · 版本 {ev.version} · {ev.chars} 字"))
            else:
                _out(self._c("35", f"  ┌─ 稿纸 · 版本 {ev.version} · {ev.chars} 字"))
                for line in ev.text.splitlines():
                    _out(self._c("35", "  │ ") + line)
                _out(self._c("35", "  └─"))
        elif k == "activity":
            self._said.append(ev.text)
            color = {"info": "36", "warning": "33", "error": "31"}.get(ev.level, "36")
            _out(self._c(color, f"  ※ {ev.text}"))
        elif k == "ask":
            _out(self._c("1;33", f"  ？ {ev.question}"))
            for i, o in enumerate(ev.options, 1):
                _out(f"     {i}. {o}")
        elif k == "revised":
            _out(self._c("35", f"  ↺ 上一拍已原位修订（版本 {ev.version}）："))
            for line in ev.text.splitlines():
                _out(self._c("35", "  │ ") + line)
        elif k == "scribe_finished":
            if ev.error:
                _out(self._c("31", f"  场记失败：{ev.error}（本拍已保存，账本未变）"))
            else:
                _out(self._c("2", "  场记记账：" + ("；".join(ev.applied) or "无变化")))
                for w in ev.warnings:
                    _out(self._c("33", f"  场记告警：{w}"))
        elif k == "beat_finished":
            if ev.outcome == "discussed":  # agent mode: the reply was streamed as it came
                self._end_stream()
            elif ev.sealed:
                _out(self._c("1", "\n定稿：\n") + ev.final)
            elif ev.outcome == "revised_previous":
                _out(self._c("2", "  （本拍修订了上一拍，没有新回复）"))
            elif not any(ev.message and ev.message in said for said in self._said):
                _out(self._c("33", f"  {ev.message}"))


def _print_ledger(res: BeatResult, view: HumanView) -> None:
    _out(view._c("1;34", "\n【世界状态】"))
    _out(res.state)
    _out(view._c("1;34", "【登场名录】") + res.roster)
    ctx = (res.tokens or {}).get("context")
    if ctx:
        hit = res.tokens.get("cache_hit_share")
        _out(view._c("2", f"上下文 {ctx['used']:,} / {ctx['window']:,} token（{ctx['share']:.0%}）"
                          + (f"，本拍缓存命中 {hit:.0%}" if hit is not None else "")))


def _beat_json(r: BeatResult) -> dict[str, Any]:
    return {"user": r.user, "injection": r.injection, "calls": r.calls, "final": r.final, "sealed": r.sealed,
            "revised_previous": r.revised_previous, "state": r.state, "roster": r.roster, "warnings": r.warnings,
            "outcome": r.outcome, "activated": r.activated, "activity": r.activity, **({"error": r.error} if r.error else {}),
            "asks": [{"question": q.question, "options": q.options, "answer": a.answer, "by": a.by} for q, a in (r.output.asks if r.output else [])],
            **({"draft": r.output.draft.text, "draft_version": r.output.draft.version} if r.output and not r.sealed and r.output.draft.text else {}),
            **({"revised_text": r.revised_text} if r.revised_text is not None else {}),
            **({"tokens": r.tokens} if r.tokens else {})}


def _make_asker(interactive: bool, recorded: list[str], json_mode: bool, replay: bool):
    async def ask(req: AskRequest) -> AskAnswer:
        default = recorded.pop(0) if recorded else None
        if not interactive:
            by = "user" if default is not None else "auto"
            if default is None:
                default = req.options[0] if req.options else ""
            if not json_mode:
                why = "按录制的选择作答" if by == "user" else "非交互运行，自动选第一项"
                _out(f"     → {default}（{why}）")
            return AskAnswer(answer=default, by=by)
        hint = f"回车选录制的「{default}」，" if default else ""
        while True:
            _out(f"     选 1-{len(req.options)}，或直接写一句；{hint}输入 s 停止：", end="")
            line = await _readline()
            if line == "":
                return AskAnswer(answer=None, by="stop")
            text = line.strip()
            if not text and default:
                _out(f"     → {default}")
                return AskAnswer(answer=default, by="user")
            if text.lower() in ("s", "stop", "停止"):
                return AskAnswer(answer=None, by="stop")
            if text.isdigit():
                if 1 <= int(text) <= len(req.options):
                    text = req.options[int(text) - 1]
                    _out(f"     → {text}")
                else:
                    _out(f"     没有第 {text} 项。")
                    continue
            if text:
                if replay and default and text != default:
                    _out("     （回放模型只会按录制的剧情演下去；接真模型时才会按你的选择走）")
                return AskAnswer(answer=text, by="user")

    return ask


def _replay_for(beats: list[Any]) -> ChatModel:
    from .core.llm import ReplayModel

    return ReplayModel(actor=[c for b in beats for c in b.actor], scribe=[x for b in beats for x in b.scribe],
                       label="演示", beats=beats)


def _resolve_card(spec: str) -> Card:
    """A card by file path, by the name of an imported card (``<data folder>/cards/NAME/card.json``, what
    ``liyuan card import`` prints), a card folder, or the name of a shipped sample card. Raises CardError."""
    p = Path(spec)
    if p.is_dir() and (p / "card.json").is_file():
        return load_card(p / "card.json")
    if not p.exists():
        from .core.paths import home

        imported = home() / "cards" / spec / "card.json"
        if "/" not in spec and "\\" not in spec and imported.is_file():
            return load_card(imported)
        cand = sample_cards_dir() / spec
        if cand.is_dir():  # the card file of a sample folder (beside its replay scripts)
            for x in sorted(cand.glob("*.json")):
                try:
                    return load_card(x)
                except CardError:
                    continue
    return load_card(p)


def _build_model(args: argparse.Namespace) -> tuple[ChatModel, Optional[ChatModel]]:
    from .core.llm import ReplayModel, build_model, preset

    if args.model and args.model.startswith("replay:"):
        return ReplayModel.from_file(args.model[len("replay:"):]), None
    if not args.provider:
        raise ValueError("没有配置模型：用 --provider 指定服务商（如 deepseek、openai、ollama），或 --model replay:FILE，或 --demo")
    from pydantic import ValidationError

    from .core.llm import ProviderSettings, resolve_api_key

    settings = preset(args.provider)
    try:
        settings = ProviderSettings.model_validate({**settings.model_dump(), **({"base_url": args.base_url} if args.base_url else {}),
                                                    **({"model": args.model} if args.model else {})})
    except ValidationError as e:
        raise ValueError("；".join(str(x.get("ctx", {}).get("error", x["msg"])) for x in e.errors())) from None
    if settings.api_key_env and not resolve_api_key(settings):
        raise ValueError(f"没有 {settings.name} 的 API key：请设置环境变量 {settings.api_key_env}（或在窗口的「设置」里保存到系统钥匙串）")
    main = build_model(settings)
    scribe = build_model(settings, scribe=True) if settings.scribe_model else None
    return main, scribe


async def demo_agent(json_mode: bool, on_event: Any = None) -> dict[str, Any]:
    """The agent-mode demo (seed 000, 写长篇): play the role-play demo's first two beats (for the ledger), make an
    agent chat 「局C」 whose chapters are the opening and the two finals (a user checkpoint 「导入三章」), then replay the
    seed's agent turn (read three chapters, edit two) — every result, the state block and both checkpoints computed
    live. Returns ``{"system", "state_block", "checkpoints", "chapters", "chat"}``."""
    import tempfile

    from .core.llm import ReplayModel
    from .core.paths import home, sample_cards_dir

    card = load_card(demo_card_path())
    plan = json.loads((sample_cards_dir() / "青梧" / "agent-demo.json").read_text("utf-8"))
    d = chat_dir(card.name, plan["chat"])
    if (d / "session.jsonl").exists():  # the seed's paths name 局C: a second run goes to a fresh data folder
        os.environ["LIYUAN_HOME"] = tempfile.mkdtemp(prefix="liyuan-agent-demo-")
        d = chat_dir(card.name, plan["chat"])
        if not json_mode:
            _out(f"（「局C」已存在，这次演示放在临时数据文件夹 {home()}）")
    rp_model = ReplayModel.from_file(demo_replay_path())
    beats = rp_model.beats[:2]
    rp = Chat.create(chat_dir(card.name, "局C-扮演"), card, _replay_for(beats))
    answers = [a for b in beats for a in b.ask_answers]

    async def ask(req: AskRequest) -> AskAnswer:
        return AskAnswer(answer=answers.pop(0) if answers else req.options[0], by="user")

    finals = []
    for b in beats:
        r = await rp.send(b.user, ask=ask)
        finals.append(r.final)
    agent_replay = ReplayModel.from_file(sample_cards_dir() / "青梧" / "agent-replay.json")
    chat = Chat.create(d, card, agent_replay, mode="agent")
    chat.tree.append("rp-state", state=rp.current_state().to_dict(), source="init")
    chat.tree.commit()
    texts = [card.first_mes, *finals]
    chat.import_chapters(list(zip(plan["chapters"], texts)), message=plan["message"])
    res = await chat.send(agent_replay.beats[0].user, on_event=on_event)
    return {"system": chat.agent_system(), "state_block": res.injection,
            "checkpoints": [c.model_dump(exclude_none=True) for c in chat.history_log.checkpoints()],
            "chapters": {p.name: p.read_text("utf-8") for p in sorted((d / "正文").glob("*.md"))},
            "chat": str(d), "reply": res.final}


async def _run_chat(args: argparse.Namespace) -> int:
    json_mode = bool(args.json)
    view = HumanView(color=sys.stdout.isatty() and not json_mode)
    if args.demo_agent:
        out = await demo_agent(json_mode, None if json_mode else view)
        if json_mode:
            _out(json.dumps({k: out[k] for k in ("system", "state_block", "checkpoints", "chapters")}, ensure_ascii=False, indent=1))
        else:
            _out(view._c("1", "\n检查点："))
            for c in out["checkpoints"]:
                _out(f"  {c['id']}  {c['author']}  {c['message'][:30]}  改动：{c['changed']}")
            _out(f"\n正文在 {out['chat']}/正文")
        return 0
    recorded: list[str] = []
    says: list[str] = list(args.say or [])
    try:
        if args.demo:
            from .core.llm import ReplayModel

            card = load_card(demo_card_path())
            model: ChatModel = ReplayModel.from_file(demo_replay_path(), delay_ms=0 if json_mode else args.delay_ms)
            scribe: Optional[ChatModel] = None
            beats = getattr(model, "beats", [])
            says = says or [b.user for b in beats]
            recorded = [a for b in beats for a in b.ask_answers]
            chat_name = args.chat or time.strftime("演示-%Y%m%d-%H%M%S")
        else:
            if not args.card:
                raise ValueError("需要角色卡：liyuan chat CARD …（或 --demo）")
            card = _resolve_card(args.card)
            model, scribe = _build_model(args)
            if getattr(model, "is_replay", False) and not (args.seal_as_is or args.continue_beat or args.regenerate):
                beats = getattr(model, "beats", [])
                says = says or [b.user for b in beats]
                recorded = [a for b in beats for a in b.ask_answers]
            chat_name = args.chat or "默认"
        preset = None
        if args.preset:
            from .core.prompt.presets import PresetError, load_installed_preset, load_preset

            try:
                preset = load_preset(args.preset) if Path(args.preset).exists() else load_installed_preset(args.preset)
            except PresetError as e:
                raise ValueError(str(e)) from None
        d = chat_dir(card.name, chat_name)
        for w in args.world or []:  # chat-level world info: a copy in the chat folder
            from .core.lore.lorebook import Lorebook

            wpath = Path(w)
            try:
                Lorebook.from_any(json.loads(wpath.read_text("utf-8")), wpath.stem, source="chat")
            except (OSError, ValueError) as e:
                raise ValueError(f"{wpath.name}：不是可用的世界书（{e}）") from None
            (d / "世界书").mkdir(parents=True, exist_ok=True)
            (d / "世界书" / wpath.name).write_bytes(wpath.read_bytes())
        chat = (Chat.open(d, card, model, scribe, preset=preset) if (d / "session.jsonl").exists()
                else Chat.create(d, card, model, scribe_model=scribe, preset=preset))
        if args.allow_card_scripts:
            from .core.cards.regex_scripts import scripts_from_card

            chat.scripts = scripts_from_card(card.raw)
        if chat.prompter is not None and not json_mode:
            for w in chat.prompter.warnings:
                print(f"liyuan: 预设：{w}", file=sys.stderr)
    except (CardError, SessionError, ValueError, KeyError, FileNotFoundError) as e:
        msg = e.args[0] if isinstance(e, KeyError) and e.args else str(e)
        print(f"liyuan: {msg}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"liyuan: 数据文件夹写不进去：{e}（可以用 LIYUAN_HOME 换一个位置）", file=sys.stderr)
        return 2
    for w in chat.load_warnings + card.warnings:
        print(f"liyuan: 注意：{w}", file=sys.stderr)
    interactive = sys.stdin.isatty() and not json_mode and not args.auto
    if not json_mode:
        _out(view._c("1", f"梨园 {__version__} · {card.name} · 对话「{chat_name}」") + f"  （存于 {d}）")
        _out(view._c("2", f"模型：{model.name}"))
        if chat.tree.latest("user") is None:
            opening = chat.tree.latest("opening")
            if opening is not None:
                _out("\n" + opening.text)
    results: list[BeatResult] = []
    status = 0
    is_replay = bool(getattr(model, "is_replay", False))
    if is_replay and not says and not (args.seal_as_is or args.continue_beat or args.regenerate):
        print("liyuan: 回放脚本里没有可演的拍（beats 为空）", file=sys.stderr)
        return 2
    replay_beats = list(getattr(model, "beats", [])) if is_replay else []
    asker = _make_asker(interactive, recorded, json_mode, is_replay)
    free_play = not says and interactive and not (args.seal_as_is or args.continue_beat or args.regenerate)
    commands: list[str] = ((["seal"] if args.seal_as_is else []) + (["continue"] if args.continue_beat else [])
                           + (["regenerate"] if args.regenerate else []))
    on_event = None if json_mode else view
    played = 0
    while commands or says or free_play:
        try:
            if commands:
                cmd = commands.pop(0)
                if cmd == "seal":
                    res = await chat.seal_as_is(on_event=on_event)
                elif cmd == "regenerate":
                    res = await chat.regenerate(ask=asker, on_event=on_event)
                else:
                    res = await chat.continue_beat(ask=asker, on_event=on_event)
            else:
                if says:
                    text = says.pop(0)
                else:
                    _out(view._c("1", "\n你（空行退出）："), end="")
                    text = (await _readline()).strip()
                    if not text:
                        break
                if replay_beats and args.demo:
                    # each demo beat plays its own recorded calls, so a stopped beat never shifts the next one
                    chat.model = _replay_for(replay_beats[played:])
                res = await chat.send(text, ask=asker, on_event=on_event)
                played += 1
        except ValueError as e:
            print(f"liyuan: {e}", file=sys.stderr)
            return 2
        except OSError as e:  # the disk refused a write: before the beat (nothing played) or after it
            from .core.chat.facade import BeatSaveError

            print(f"liyuan: {e.strerror or e}", file=sys.stderr)
            if not isinstance(e, BeatSaveError):
                return 2  # nothing was played; what was saved before is untouched
            kept = e.result
            if kept is not None and e.stage != "ledger":
                text_kept = kept.final or (kept.output.draft.text if kept.output else "")
                if text_kept:
                    print("liyuan: 本拍的正文（没存上，先抄在这里）：\n" + text_kept, file=sys.stderr)
            return 1
        results.append(res)
        if res.outcome == "error":
            status = 1
        if not json_mode:
            _print_ledger(res, view)
        if res.outcome == "error":
            break
        if res.outcome == "stopped" and args.demo and says:
            _out(view._c("33", "\n演示在这里停下了：回放模型只会按录制的剧情演。要接着演，请重新开始演示或配置真模型。"))
            break
    if json_mode:
        _out(json.dumps({"beats": [_beat_json(r) for r in results]}, ensure_ascii=False, indent=1))
    elif args.demo and status == 0:
        _out(view._c("1;36", "\n演示结束。") + f"对话已保存在 {d}。")
        _out(f"配置模型后可以接着演：liyuan chat {card.name} --chat {chat_name} --provider deepseek   （密钥放在 DEEPSEEK_API_KEY）")
    return status


def _chat_folder(spec: str) -> Path:
    p = Path(spec)
    if (p / "session.jsonl").exists():
        return p
    if "/" in spec:
        card, chat = spec.split("/", 1)
        d = chat_dir(card, chat)
        if (d / "session.jsonl").exists():
            return d
    raise ValueError(f"找不到对话：{spec}（给对话文件夹，或「卡名/对话名」）")


def _story(args: argparse.Namespace) -> int:
    """``liyuan story checkpoints|restore|export``."""
    from .core.story.checkpoints import StoryHistory

    if not getattr(args, "story_cmd", None):
        print("liyuan: 用法：liyuan story checkpoints|restore|export CHAT …", file=sys.stderr)
        return 2
    try:
        d = _chat_folder(args.chat)
        hist = StoryHistory(d / "正文", d / "历史")
        if args.story_cmd == "checkpoints":
            cps = hist.checkpoints()
            if args.json:
                _out(json.dumps([c.model_dump(exclude_none=True) for c in cps], ensure_ascii=False, indent=1))
            else:
                for c in reversed(cps):
                    ch = c.changed
                    what = "，".join(x for x in (f"新增 {len(ch.added)}" if ch.added else "", f"修改 {len(ch.modified)}" if ch.modified else "",
                                                 f"改名 {len(ch.renamed)}" if ch.renamed else "", f"删除 {len(ch.removed)}" if ch.removed else "") if x)
                    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(c.ts / 1000))
                    _out(f"{c.id}  {when}  {'你' if c.author == 'user' else 'agent'}  {what or '无变化'}  {c.message[:40]}")
            return 0
        if args.story_cmd == "restore":
            cps = [c for c in hist.checkpoints() if c.id.startswith(args.checkpoint)]
            if len(cps) != 1:
                raise ValueError(f"检查点「{args.checkpoint}」{'找不到' if not cps else '不唯一'}")
            target = cps[0]
            if not args.with_conversation:
                new = hist.restore(target.id)
                _out(f"已恢复到 {target.id}（新检查点 {new.id}；对话没动）")
                return 0
            # 撤销本轮 (seed 000): files AND conversation back to before the turn that ended in this checkpoint
            from .core.session.tree import SessionTree

            tree = SessionTree.open(d / "session.jsonl")
            turn = target.turnId
            if not turn or turn not in tree.entries:
                raise ValueError(f"检查点 {target.id} 不是某一轮的结尾（没有对应的对话轮次），只能恢复正文")
            all_cps = hist.checkpoints()
            before = all_cps[[c.id for c in all_cps].index(target.id) - 1] if all_cps.index(target) > 0 else None
            if before is None:
                raise ValueError(f"检查点 {target.id} 之前没有检查点，正文无处可回")
            new = hist.restore(before.id)
            parent = tree.get(turn).parent_id
            if parent:
                tree.set_leaf(parent)
                tree.commit()
            _out(f"已撤销那一轮：正文回到 {before.id}（新检查点 {new.id}），对话也回到了那一轮之前")
            return 0
        if args.story_cmd == "export":
            from .core.story import export as book_export

            from .core.session.tree import SessionTree

            try:
                title = SessionTree.open(d / "session.jsonl").header.title or d.name
            except SessionError:
                title = d.name
            fn = {"md": book_export.export_markdown, "epub": book_export.export_epub, "docx": book_export.export_docx}[args.format]
            fn(d / "正文", Path(args.output), title)
            _out(args.output)
            return 0
    except (ValueError, KeyError, SessionError) as e:
        print(f"liyuan: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"liyuan: {e}", file=sys.stderr)
        return 2
    build_parser().print_help()
    return 2


def _chat_file(args: argparse.Namespace) -> int:
    """``liyuan import-chat`` / ``liyuan export-chat``: SillyTavern .jsonl chats in and out."""
    from .core.session.tree import SessionTree
    from .core.cards.st_chat import StChatError, default_chat_name, export_st_chat, read_st_chat, write_session

    try:
        card = _resolve_card(args.card)
        if args.cmd == "import-chat":
            st = read_st_chat(args.file)
            d = chat_dir(card.name, args.chat or default_chat_name(args.file))
            if (d / "session.jsonl").exists():
                raise ValueError(f"对话「{d.name}」已存在；用 --chat 换个名字")
            tree = write_session(st, d / "session.jsonl", card_name=card.name, card_path=card.path)
            for w in tree.load_warnings + list(getattr(st, "warnings", [])):
                print(f"liyuan: 注意：{w}", file=sys.stderr)
            print(d)
        else:
            d = chat_dir(card.name, args.chat)
            tree = SessionTree.open(d / "session.jsonl")
            export_st_chat(tree, args.out)
            print(args.out)
    except (CardError, StChatError, SessionError, ValueError) as e:
        print(f"liyuan: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"liyuan: {e.strerror or e}：{getattr(e, 'filename', '') or ''}", file=sys.stderr)
        return 2
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="liyuan", description="梨园 Liyuan Desktop — 角色扮演与长篇写作")
    p.add_argument("--version", action="version", version=f"liyuan {__version__}")
    sub = p.add_subparsers(dest="cmd")
    c = sub.add_parser("chat", help="在终端里演几拍（无窗口）")
    c.add_argument("card", nargs="?", help="角色卡文件，或随附示例卡的名字（如 青梧）")
    c.add_argument("--demo", action="store_true", help="离线演示：青梧卡上的三拍录制对局（回放模型）")
    c.add_argument("--demo-agent", action="store_true", help="离线演示写长篇：把演示的开场和前两拍存成三章，回放种子的 agent 一轮")
    c.add_argument("--chat", help="对话名（同名则接着演）")
    c.add_argument("--model", help="replay:FILE 用回放脚本；否则为服务商的模型名")
    c.add_argument("--provider", help="服务商预设：deepseek、openai、openrouter、ollama、lmstudio …")
    c.add_argument("--base-url", help="覆盖服务商的 API 地址（OpenAI 兼容）")
    c.add_argument("--say", action="append", help="用户这一拍的话（可重复，按顺序演）")
    c.add_argument("--preset", help="SillyTavern 对话补全预设：JSON 文件，或已安装预设的名字")
    c.add_argument("--world", action="append", help="给这个对话挂一本世界书（SillyTavern World Info JSON，可重复）")
    c.add_argument("--allow-card-scripts", action="store_true", help="允许角色卡自带的正则脚本运行")
    c.add_argument("--json", action="store_true", help="输出 JSON：{beats:[{user, injection, calls, final, sealed, …}]}")
    c.add_argument("--auto", action="store_true", help="不交互：ask 用录制的或第一个选项作答")
    c.add_argument("--delay-ms", type=int, default=15, help="演示回放的流式间隔（毫秒）")
    from .cli_card import add_card_parser

    add_card_parser(sub)
    st = sub.add_parser("story", help="写长篇（agent）模式：检查点、恢复、导出")
    ss = st.add_subparsers(dest="story_cmd")
    s1 = ss.add_parser("checkpoints", help="列出一个长篇对话的检查点")
    s1.add_argument("chat", help="对话文件夹，或 卡名/对话名")
    s1.add_argument("--json", action="store_true")
    s2 = ss.add_parser("restore", help="把正文恢复到某个检查点")
    s2.add_argument("chat")
    s2.add_argument("checkpoint", help="检查点 id（可只写开头几位）")
    s2.add_argument("--with-conversation", action="store_true", help="对话也回到那一轮之前（撤销本轮）")
    s3 = ss.add_parser("export", help="把正文导出成一本书")
    s3.add_argument("chat")
    s3.add_argument("--format", choices=("md", "epub", "docx"), default="md")
    s3.add_argument("-o", "--output", required=True)
    ic = sub.add_parser("import-chat", help="导入 SillyTavern 聊天记录（.jsonl），滑动备选变成分支")
    ic.add_argument("file")
    ic.add_argument("--card", required=True, help="角色卡文件或示例卡名")
    ic.add_argument("--chat", help="对话名（默认取文件名）")
    ec = sub.add_parser("export-chat", help="把一个对话导出成 SillyTavern 聊天记录（.jsonl）")
    ec.add_argument("out")
    ec.add_argument("--card", required=True)
    ec.add_argument("--chat", required=True)
    c.add_argument("--seal-as-is", action="store_true", help="把这个对话里没收笔的稿件按现稿收笔（然后场记记账）")
    c.add_argument("--continue", dest="continue_beat", action="store_true", help="让模型接着写没收笔的稿件")
    c.add_argument("--regenerate", action="store_true", help="重来：最后一句话再演一次，新回复成为旧回复的兄弟分支")
    from .cli_branch import add_parsers

    add_parsers(sub)
    return p


def main(argv: Optional[list[str]] = None) -> int:
    """Console entry point ``liyuan``. Without a command it opens the window (app.py)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] == "app" or (argv[0].startswith("--") and argv[0] not in ("--version", "--help")):
        from .app import main as app_main

        return app_main([a for a in argv if a != "app"])
    args = build_parser().parse_args(argv)
    if not isinstance(sys.stdout, _PipeSafeStdout):
        sys.stdout = _PipeSafeStdout(sys.stdout)
    if args.cmd == "card":
        from .cli_card import run_card

        return run_card(args)
    if args.cmd in ("import-chat", "export-chat"):
        return _chat_file(args)
    if args.cmd == "story":
        return _story(args)
    if args.cmd in ("branches", "inspect", "memory"):
        from .cli_branch import run as run_branch

        return run_branch(args)
    if args.cmd != "chat":
        build_parser().print_help()
        return 2
    try:
        return asyncio.run(_run_chat(args))
    except KeyboardInterrupt:
        print("\nliyuan: 已中断（已写入的内容都在会话文件里）", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
