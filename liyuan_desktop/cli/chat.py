"""``liyuan chat``: play beats headless, on the same engine and events as the window.

    liyuan chat --demo [--json]              the three recorded seed beats on the demo card (replay model)
    liyuan chat --demo-agent [--json]        the agent-mode demo (three chapters, one recorded agent turn)
    liyuan chat CARD [--chat NAME] [--model replay:FILE | --provider NAME [--model M] [--base-url URL]]
                [--say TEXT …] [--wi KEY=VALUE …] [--json]
                                             beats against a real model (or a replay file); --wi sets the chat's
                                             own world-info settings (SillyTavern's names), kept in the chat
    liyuan chat CARD … --continue-reply      SillyTavern's Continue: the model writes on from the last sealed reply
                                             (a new version of it; the old one stays a swipe away)
    liyuan chat CARD … --impersonate         the model drafts your next line in the persona's voice; printed (JSON:
                                             {"impersonation": TEXT}), nothing sent or saved
    liyuan chat CARD … --authors-note TEXT [--an-depth N] [--an-role R] [--an-position P] [--an-interval N]
                                             the chat's Author's Note (SillyTavern's semantics; "" clears it), kept
                                             in the chat; alone it only sets the note (JSON: {"authors_note": …}),
                                             with --say the beats that follow use it; --an-* alone change the
                                             current note

Exit codes: 0 ok; 1 a beat failed (model/network error); 2 bad input (card, replay file, provider, arguments).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, Optional

from .. import __version__
from .common import card_home_name, dumps, language, msg, out, readline, resolve_card, say, text
from .story import changes_line

if TYPE_CHECKING:  # the engine is imported by the functions that use it: building the parser needs none of it
    from ..core.beat.events import AskRequest
    from ..core.chat.facade import BeatResult, Chat
    from ..core.llm.types import ChatModel
    from ..core.settings import AppSettings


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register ``chat`` and its flags on the top-level subparsers; returns its parser."""
    c = sub.add_parser("chat", help=text("cli.help.chat.0"))
    c.add_argument("card", nargs="?", help=text("cli.help.chat.1"))
    c.add_argument("--demo", action="store_true", help=text("cli.help.chat.2"))
    c.add_argument("--demo-agent", action="store_true", help=text("cli.help.chat.3"))
    c.add_argument("--chat", help=text("cli.help.chat.4"))
    c.add_argument("--model", help=text("cli.help.chat.5"))
    c.add_argument("--provider", help=text("cli.help.chat.6"))
    c.add_argument("--base-url", help=text("cli.help.chat.7"))
    c.add_argument("--say", action="append", help=text("cli.help.chat.8"))
    c.add_argument("--group", help=text("cli.help.chat.group"))
    c.add_argument("--speaker", help=text("cli.help.chat.speaker"))
    c.add_argument("--chapter", help=text("cli.help.chat.chapter"))
    c.add_argument("--preset", help=text("cli.help.chat.9"))
    c.add_argument("--world", action="append", help=text("cli.help.chat.10"))
    c.add_argument("--allow-card-scripts", action="store_true", help=text("cli.help.chat.11"))
    c.add_argument("--sample", action="append", metavar="KEY=VALUE",
                   help=text("cli.help.chat.12"))
    c.add_argument("--wi", action="append", metavar="KEY=VALUE",
                   help=text("cli.help.chat.13"))
    c.add_argument("--json", action="store_true", help=text("cli.help.chat.14"))
    c.add_argument("--auto", nargs="?", const=True, default=False, type=_auto_value, metavar="N",
                   help=text("cli.help.chat.15"))
    c.add_argument("--delay-ms", type=int, default=15, help=text("cli.help.chat.16"))
    c.add_argument("--prose-only", action="store_true",
                   help=text("cli.help.chat.17"))
    c.add_argument("--seal-as-is", action="store_true", help=text("cli.help.chat.18"))
    c.add_argument("--continue", dest="continue_beat", action="store_true", help=text("cli.help.chat.19"))
    c.add_argument("--regenerate", action="store_true", help=text("cli.help.chat.20"))
    c.add_argument("--continue-reply", action="store_true",
                   help=text("cli.help.chat.21"))
    c.add_argument("--impersonate", action="store_true",
                   help=text("cli.help.chat.22"))
    c.add_argument("--authors-note", metavar="TEXT",
                   help=text("cli.help.chat.23"))
    c.add_argument("--an-depth", type=int, metavar="N", help=text("cli.help.chat.24"))
    c.add_argument("--an-role", choices=["system", "user", "assistant"], help=text("cli.help.chat.25"))
    c.add_argument("--an-position", choices=["chat", "before", "after"],
                   help=text("cli.help.chat.26"))
    c.add_argument("--an-interval", type=int, metavar="N", help=text("cli.help.chat.27"))
    return c


def _auto_value(raw: str) -> "int | str":
    """``--auto N``: N group auto-mode turns (issue 31); a word that is not a number is the card a bare ``--auto``
    stood before (``liyuan chat --auto 青梧``), put back by :func:`_auto_turns_wanted`."""
    return int(raw) if raw.lstrip("-").isdigit() else raw


def _auto_turns_wanted(args: argparse.Namespace) -> int:
    """How many group auto-mode turns ``--auto N`` asks for (0 for a bare ``--auto``); a card name ``--auto`` took
    goes back to ``card``."""
    if isinstance(args.auto, str):
        if not args.card:
            args.card = args.auto
        args.auto = True
    return args.auto if isinstance(args.auto, int) and not isinstance(args.auto, bool) else 0


def _note_from_args(chat: Chat, args: argparse.Namespace) -> Optional[Any]:
    """The Author's Note the ``--authors-note``/``--an-*`` flags ask for (the chat's current note with those
    fields changed), or None when no such flag was given. ValueError (Chinese) for a bad value."""
    from pydantic import ValidationError

    from ..core.prompt.authors_note import AuthorsNote

    fields = {"text": args.authors_note, "depth": args.an_depth, "role": args.an_role, "position": args.an_position,
              "interval": args.an_interval}
    fields = {k: v for k, v in fields.items() if v is not None}
    if not fields:
        return None
    try:
        return AuthorsNote.model_validate({**chat.authors_note().model_dump(), **fields})
    except ValidationError as e:
        raise ValueError(msg("cli.out.chat.bad_note", errors="; ".join(
            f"{'.'.join(map(str, x['loc']))} {x['msg']}" for x in e.errors()))) from None


def unique_chat_name(card_name: str, base: str) -> str:
    """``base`` when no chat of ``card_name`` has that folder yet, else ``base-2``, ``base-3`` … (two demo runs in
    the same second must not continue one chat)."""
    from ..core.paths import chat_dir

    name, n = base, 1
    while chat_dir(card_name, name).exists():
        n += 1
        name = f"{base}-{n}"
    return name


def _ledger_json(r: BeatResult) -> tuple[str, str]:
    """The beat's ``state`` and ``roster`` for ``--json`` in the reader's language (issue 32): in Chinese the
    formatted 【世界状态】/【登场名录】 texts as the engine made them (byte for byte); otherwise said from the ledger
    itself (``core.ledger.wording``: the app's labels in the reader's language, the story's values as written)."""
    lang = language()
    if lang == "zh" or r.ledger is None:
        return r.state, r.roster
    from ..core.ledger.wording import roster_in_words, state_in_words

    return state_in_words(r.ledger, lang), roster_in_words(r.ledger, lang)


def _beat_json(r: BeatResult) -> dict[str, Any]:
    state, roster = _ledger_json(r)
    return {"user": r.user, "injection": r.injection, "calls": r.calls, "final": r.final, "sealed": r.sealed,
            "revised_previous": r.revised_previous, "state": state, "roster": roster, "warnings": r.warnings,
            "outcome": r.outcome, "activated": r.activated, "activity": r.activity, **({"error": r.error} if r.error else {}),
            "asks": [{"question": q.question, "options": q.options, "answer": a.answer, "by": a.by} for q, a in (r.output.asks if r.output else [])],
            **({"draft": r.output.draft.text, "draft_version": r.output.draft.version} if r.output and not r.sealed and r.output.draft.text else {}),
            **({"revised_text": r.revised_text} if r.revised_text is not None else {}),
            **({"tokens": r.tokens} if r.tokens else {})}


def _make_asker(interactive: bool, recorded: list[str], json_mode: bool, replay: bool):
    from ..core.beat.events import AskAnswer
    from ..core.messages import message

    async def ask(req: AskRequest) -> AskAnswer:
        default = recorded.pop(0) if recorded else None
        if not interactive:
            by = "user" if default is not None else "auto"
            if default is None:
                default = req.options[0] if req.options else ""
            if not json_mode:
                out(say(message("cli.ask.recorded" if by == "user" else "cli.ask.auto", answer=default)))
            return AskAnswer(answer=default, by=by)
        hint = say(message("cli.ask.hint", answer=default)) if default else ""
        while True:
            out(say(message("cli.ask.prompt", n=len(req.options), hint=hint)), end="")
            line = await readline()
            if line == "":
                return AskAnswer(answer=None, by="stop")
            text = line.strip()
            if not text and default:
                out(f"     → {default}")
                return AskAnswer(answer=default, by="user")
            if text.lower() in ("s", "stop", "停止"):
                return AskAnswer(answer=None, by="stop")
            if text.isdigit():
                if 1 <= int(text) <= len(req.options):
                    text = req.options[int(text) - 1]
                    out(f"     → {text}")
                else:
                    out(say(message("cli.ask.no_option", n=text)))
                    continue
            if text:
                if replay and default and text != default:
                    out(say(message("cli.ask.replay")))
                return AskAnswer(answer=text, by="user")

    return ask


def _replay_for(beats: list[Any]) -> ChatModel:
    from ..core.llm import ReplayModel

    return ReplayModel(actor=[c for b in beats for c in b.actor], scribe=[x for b in beats for x in b.scribe],
                       label="演示", beats=beats)


def _build_model(args: argparse.Namespace, settings: "AppSettings") -> tuple[ChatModel, Optional[ChatModel]]:
    """The story and scribe models ``--model replay:FILE`` or ``--provider NAME [--base-url U] [--model M]`` name,
    made the way the window makes them (core/chat/build.py :func:`chat_models`: the configured provider, the settings'
    scribe provider). ValueError (shown, exit 2) for a missing provider or key."""
    from ..core.llm import ReplayModel, resolve_api_key
    from ..core.messages import message

    if args.model and args.model.startswith("replay:"):
        return ReplayModel.from_file(args.model[len("replay:"):]), None
    if not args.provider:
        raise ValueError(message("cli.no_model"))
    from ..core.chat.build import chat_models

    try:
        models = chat_models(settings, args.provider, base_url=args.base_url, model=args.model)
    except KeyError as e:
        raise ValueError(e.args[0]) from None
    prov = models.provider
    assert prov is not None and models.main is not None  # a named provider always gives a model
    if prov.api_key_env and not resolve_api_key(prov):
        raise ValueError(message("cli.no_key", name=prov.name, env=prov.api_key_env))
    return models.main, models.scribe


@contextlib.contextmanager
def ctrl_c_stops(chat: Chat) -> Iterator[None]:
    """While a beat runs, the first Ctrl-C stops it as the window's Stop does (prose a tool-less reply had streamed
    stays as the unsealed draft; 继续 / --seal-as-is later); a Ctrl-C with no beat running, or a second one, quits
    as before (exit 130). Without signal support (not the main thread, Windows' loop) nothing changes."""
    loop = asyncio.get_running_loop()
    presses: list[int] = []

    def on_int() -> None:
        if chat.beat_running() and not presses:
            presses.append(1)
            print("\n" + text("cli.out.chat.stopped"), file=sys.stderr)
            chat.stop()
            return
        loop.remove_signal_handler(signal.SIGINT)
        signal.raise_signal(signal.SIGINT)

    try:
        loop.add_signal_handler(signal.SIGINT, on_int)
        installed = True
    except (NotImplementedError, RuntimeError, ValueError):
        installed = False
    try:
        yield
    finally:
        if installed:
            loop.remove_signal_handler(signal.SIGINT)


def _commanded(args: argparse.Namespace, note_counts: bool = True) -> bool:
    """Whether the flags ask for a command on the chat (seal, continue, regenerate, continue-reply,
    impersonate, a group's ``--auto N`` turns, and — with ``note_counts`` — setting the Author's Note) rather than
    playing beats."""
    note = note_counts and any(v is not None for v in (args.authors_note, args.an_depth, args.an_role,
                                                        args.an_position, args.an_interval))
    group_auto = bool(getattr(args, "group", None)) and type(args.auto) is int and args.auto > 0  # --auto N
    return bool(args.seal_as_is or args.continue_beat or args.regenerate or args.continue_reply or args.impersonate
                or note or group_auto)


async def demo_agent(json_mode: bool, on_event: Any = None) -> dict[str, Any]:
    """The agent-mode demo (seed 000, 写长篇) in the ``--lang`` language's demo (``core.paths.demo_set``): play the
    role-play demo's first two beats (for the ledger), make an agent chat (the plan's ``chat``: 「局C」, "Chat-C")
    whose chapters are the opening and the two finals (a user checkpoint, the plan's ``message``), then replay the
    recorded agent turn (read three chapters, edit two) — every result, the state block and both checkpoints computed
    live. Returns ``{"system", "state_block", "checkpoints", "chapters", "chat"}``."""
    import tempfile

    from ..core.beat.events import AskAnswer
    from ..core.cards import load_card
    from ..core.chat.facade import Chat
    from ..core.llm import ReplayModel
    from ..core.paths import chat_dir, demo_set, home

    demo = demo_set(language())
    card = load_card(demo.card)
    plan = json.loads(demo.agent_plan.read_text("utf-8"))
    d = chat_dir(card.name, plan["chat"])
    if (d / "session.jsonl").exists():  # the recorded paths name the plan's chat: a second run goes to a fresh folder
        os.environ["LIYUAN_HOME"] = tempfile.mkdtemp(prefix="liyuan-agent-demo-")
        d = chat_dir(card.name, plan["chat"])
        if not json_mode:
            out(text("cli.out.chat.demo_elsewhere", name=plan["chat"], home=str(home())))
    rp_model = ReplayModel.from_file(demo.replay)
    beats = rp_model.beats[:2]
    rp = Chat.create(chat_dir(card.name, plan.get("roleplay_chat") or "局C-扮演"), card, _replay_for(beats))
    answers = [a for b in beats for a in b.ask_answers]

    async def ask(req: AskRequest) -> AskAnswer:
        return AskAnswer(answer=answers.pop(0) if answers else req.options[0], by="user")

    finals = []
    for b in beats:
        r = await rp.send(b.user, ask=ask)
        finals.append(r.final)
    agent_replay = ReplayModel.from_file(demo.agent_replay)
    chat = Chat.create(d, card, agent_replay, mode="agent")
    chat.seed_ledger(rp.current_state())
    texts = [card.first_mes, *finals]
    chat.import_chapters(list(zip(plan["chapters"], texts)), message=plan["message"])
    res = await chat.send(agent_replay.beats[0].user, on_event=on_event)
    return {"system": chat.agent_system(), "state_block": res.injection,
            "checkpoints": [c.model_dump(exclude_none=True) for c in chat.history_log.checkpoints()],
            "chapters": {p.name: p.read_text("utf-8") for p in sorted((d / chat.novel_layout().story).glob("*.md"))},
            "chat": str(d), "story": chat.novel_layout().story, "reply": res.final}


@dataclass
class _Run:
    """One ``liyuan chat`` run once its chat is open: what :func:`_open_run` resolved, what the beat loop uses."""

    args: argparse.Namespace
    json_mode: bool
    view: Any
    card: Any
    model: "ChatModel"
    chat: "Chat"
    chat_name: str
    folder: Path
    says: list[str]
    recorded: list[str]
    note: Optional[Any]
    repaired: int = 0
    results: list["BeatResult"] = field(default_factory=list)


async def run(args: argparse.Namespace) -> int:
    """Run ``liyuan chat`` from parsed ``args`` on the running loop; returns the exit code (see the module doc)."""
    from .view import HumanView

    json_mode = bool(args.json)
    view = HumanView(color=sys.stdout.isatty() and not json_mode)
    auto_turns = _auto_turns_wanted(args)
    if _bad_auto_turns(args.auto):
        return 2
    if args.demo_agent:
        return await _run_demo_agent(json_mode, view)
    opened = _open_run(args, json_mode, view)
    if isinstance(opened, int):
        return opened
    r = opened
    status = await _report_opened(r)
    if status is not None:
        return status
    status = await _before_beats(r)
    if status is not None:
        return status
    status = await _play(r)
    if status == 0 and auto_turns:
        status = await _auto_turns(r, auto_turns)
    _say_goodbye(r, status)
    return status


def _bad_auto_turns(auto: Any) -> bool:
    """``--auto N`` with N outside 1–``MAX_TURNS``: says so in one line (True); nothing is played."""
    from ..core.group.auto import MAX_TURNS
    from ..core.messages import message

    if type(auto) is not int or 1 <= auto <= MAX_TURNS:
        return False
    print(f"liyuan: {say(message('group.auto.bad_turns', n=auto, max=MAX_TURNS))}", file=sys.stderr)
    return True


async def _auto_turns(r: "_Run", n: int) -> int:
    """``--auto N`` (issue 31): N auto-mode turns of a group chat after the ``--say`` lines, each a beat by the
    member the group's strategy picks (core/group/auto.py; no delay between them here). Returns the exit code."""
    from ..core.group.auto import AutoRun
    from ..core.messages import message
    from .view import print_ledger

    on_event = None if r.json_mode else r.view
    asker = _make_asker(False, r.recorded, r.json_mode, bool(getattr(r.model, "is_replay", False)))
    run = AutoRun(n)

    async def turn() -> "BeatResult":
        with ctrl_c_stops(r.chat):
            res = await r.chat.group_reply(ask=asker, on_event=on_event)
        r.results.append(res)
        if not r.json_mode:
            print_ledger(res, r.view)
        return res

    try:
        await run.run(turn)
    except OSError as e:
        return _disk_refused(e)
    if run.ended is not None and not r.json_mode:
        print(f"liyuan: {say(run.ended)}", file=sys.stderr)
    if run.ended == message("group.auto.none"):
        return 2
    return 1 if any(x.outcome == "error" for x in r.results) else 0


async def _run_demo_agent(json_mode: bool, view: Any) -> int:
    """``--demo-agent``: the seed's agent turn on three chapters (:func:`demo_agent`), printed."""
    demo = await demo_agent(json_mode, None if json_mode else view)
    if json_mode:
        out(dumps({k: demo[k] for k in ("system", "state_block", "checkpoints", "chapters")}, indent=1))
    else:
        out(view.style("1", "\n" + text("cli.out.chat.checkpoints")))
        for c in demo["checkpoints"]:
            what = changes_line(c["changed"] or {}) or text("cli.out.story.no_change")
            out(f"  {c['id']}  {c['author']}  {c['message'][:30]}  " + text("cli.out.chat.changed", what=what))
        out("\n" + text("cli.out.chat.prose_in", dir=f"{demo['chat']}/{demo['story']}"))
    return 0


def _models_and_words(args: argparse.Namespace, json_mode: bool, app_settings: Any) -> tuple[Any, ...]:
    """(card, card folder, model, scribe, chat name, words to say, recorded ask answers) for ``--demo`` or a card
    with ``--provider`` / ``--model``. Raises CardError / ValueError / KeyError (exit 2)."""
    from ..core.cards import load_card
    from ..core.paths import demo_set

    says: list[str] = list(args.say or [])
    recorded: list[str] = []
    if args.demo:
        from ..core.cards import library
        from ..core.llm import ReplayModel

        demo = demo_set(language())  # the --lang language's demo (青梧, or Qingwu in English)
        library.ensure_demo_card(demo.language)  # in the library, so `chats list`, `search` and the window see this chat
        card = load_card(demo.card)
        model: ChatModel = ReplayModel.from_file(demo.replay, delay_ms=0 if json_mode else args.delay_ms)
        scribe: Optional[ChatModel] = None
        beats = getattr(model, "beats", [])
        says = says or [b.user for b in beats]
        recorded = [a for b in beats for a in b.ask_answers]
        chat_name = args.chat or unique_chat_name(card.name, library.dated_chat_name("demo", language()))
        return card, card.name, model, scribe, chat_name, says, recorded
    if args.group:  # a group chat (cli/group.py): the card is the first member's until a member speaks
        model, scribe = _build_model(args, app_settings)
        return None, "", model, scribe, args.chat or text("cli.out.chat.group_name"), says, recorded
    if not args.card:
        raise ValueError(msg("cli.out.chat.need_card"))
    card = resolve_card(args.card)
    folder = card_home_name(args.card, card)  # a renamed card's folder, or NAME-2
    model, scribe = _build_model(args, app_settings)
    if getattr(model, "is_replay", False) and not _commanded(args):
        beats = getattr(model, "beats", [])
        says = says or [b.user for b in beats]
        recorded = [a for b in beats for a in b.ask_answers]
    return card, folder, model, scribe, args.chat or text("cli.out.chat.default_name"), says, recorded


def _preset_and_worlds(args: argparse.Namespace, d: Path) -> Optional[Any]:
    """The ``--preset`` (a file or a library name; None without one) and the ``--world`` files copied into the chat
    folder ``d`` (each checked first). ValueError for a preset or world book that cannot be used."""
    preset = None
    if args.preset:
        from ..core.prompt.presets.model import PresetError
        from ..core.prompt.presets.store import load_installed_preset, load_preset

        try:
            preset = load_preset(args.preset) if Path(args.preset).exists() else load_installed_preset(args.preset)
        except PresetError as e:
            raise ValueError(str(e)) from None
    for w in args.world or []:  # chat-level world info: a copy in the chat folder
        from ..core.lore import Lorebook
        from ..core.paths import chat_books_dir

        wpath = Path(w)
        try:
            Lorebook.from_any(json.loads(wpath.read_text("utf-8")), wpath.stem, source="chat")
        except (OSError, ValueError) as e:
            raise ValueError(msg("cli.out.chat.bad_world", name=wpath.name, error=say(e))) from None
        books = chat_books_dir(d)  # 世界书/ or world-books/ (core.paths)
        books.mkdir(parents=True, exist_ok=True)
        (books / wpath.name).write_bytes(wpath.read_bytes())
    return preset


def _apply_chat_flags(chat: "Chat", args: argparse.Namespace, wi_overrides: dict[str, Any], json_mode: bool) -> Any:
    """The flags that change the chat itself (world-info overrides, sampling, scripts, Author's Note, prose-only);
    returns the Author's Note the flags set (None: untouched)."""
    if wi_overrides:
        chat.set_world_info(wi_overrides, replace=False)
    if args.sample:  # the chat's own sampling overrides (issue 14 §3), kept on the tree
        from ..core.llm.sampling import Sampling

        chat.set_sampling(Sampling.from_pairs(args.sample, chat.sampling_overrides()))
    if args.allow_card_scripts:
        chat.set_scripts_allowed(True, remember=False)
    note = _note_from_args(chat, args)
    if note is not None:
        chat.set_authors_note(note)
    if args.prose_only and not chat.prose_only()["switch"]:
        chat.set_prose_only(True)
    if chat.prompter is not None and not json_mode:
        for w in chat.prompter.warnings:
            print(text("cli.out.chat.preset_warning", text=w), file=sys.stderr)
    return note


def _open_run(args: argparse.Namespace, json_mode: bool, view: Any) -> "_Run | int":
    """Resolve the card and models, open (or create) the chat the one way the window does (core/chat/build.py) and
    apply the flags; an exit code (2, said on stderr) when something named cannot be used or the disk refuses."""
    from ..core.cards import CardError
    from ..core.chat.build import NewChat, build_chat
    from ..core.lore.settings import parse_assignments
    from ..core.paths import chat_dir
    from ..core.session.tree import SessionError
    from ..core.settings import load_settings
    from .group import chat_target as group_chat_target

    try:
        app_settings = load_settings()
        card, folder, model, scribe, chat_name, says, recorded = _models_and_words(args, json_mode, app_settings)
        wi_overrides = parse_assignments(args.wi or [])  # ValueError: exit 2 before anything is written
        d, new = chat_dir(folder, chat_name) if card is not None else Path(), NewChat(demo=bool(args.demo))
        if args.group:
            card, d, new.header = group_chat_target(args.group, chat_name)
        preset = _preset_and_worlds(args, d)
        # the one way from settings to a chat (the window's too); the recorded demo keeps its card book's own
        # world-info settings and no persona (it reproduces a golden run)
        chat = build_chat(d, card, app_settings, model, scribe, preset=preset, new=new)
        note = _apply_chat_flags(chat, args, wi_overrides, json_mode)
    except (CardError, SessionError, ValueError, KeyError, FileNotFoundError) as e:
        shown = say(e.args[0]) if isinstance(e, KeyError) and e.args else say(e)  # a broken card in the --lang language
        print(f"liyuan: {shown}", file=sys.stderr)
        return 2
    except OSError as e:
        print(text("cli.out.chat.home_not_writable", error=str(e)), file=sys.stderr)
        return 2
    return _Run(args=args, json_mode=json_mode, view=view, card=card, model=model, chat=chat, chat_name=chat_name,
                folder=d, says=says, recorded=recorded, note=note)


async def _report_opened(r: _Run) -> Optional[int]:
    """What opening found (load warnings, ledger gaps — repaired with ``--continue`` —, words left unanswered) and
    the header with the opening; an exit code when the repair could not be saved, else None."""
    from ..core.messages import message

    chat, args = r.chat, r.args
    for w in chat.load_warnings + r.card.warnings:
        print(text("cli.out.chat.note", text=w), file=sys.stderr)
    gaps = chat.ledger_gaps()  # replies a crash left without their ledger snapshot
    if gaps and args.continue_beat:
        try:
            r.repaired = len(await chat.repair_ledger(on_event=None if r.json_mode else r.view))
        except OSError as e:
            print(text("cli.out.chat.repair_not_saved", error=str(e)), file=sys.stderr)
            return 1
        print(text("cli.out.chat.repaired", n=r.repaired), file=sys.stderr)
    elif gaps:
        print(text("cli.out.chat.gaps", n=len(gaps)), file=sys.stderr)
    left = chat.unanswered()
    if left is not None:  # never sent along silently: the user resends, edits or drops them
        print(text("cli.out.chat.unanswered", text=left.text[:60]), file=sys.stderr)
    if chat.cut_turn() is not None:  # a group chat's follow-up cut off: never shown as the user's words
        print(say(message("group.cut_turn", name=chat.cut_turn() or "?")), file=sys.stderr)
    if not r.json_mode:
        view = r.view
        out(view.style("1", say(message("cli.header", version=__version__, card=r.card.name, chat=r.chat_name)))
            + say(message("cli.saved_in", dir=r.folder)))
        out(view.style("2", say(message("cli.model", name=r.model.name))))
        if chat.prose_only()["on"]:
            out(view.style("2", chat.prose_only()["limits"]))
        if chat.last_user_text() is None:
            opening = chat.opening()
            if opening is not None:
                out("\n" + _opening_shown(opening))
    return None


def _opening_shown(opening: str) -> str:
    """The opening as ``liyuan chat`` prints it: its stored header line (「【开场 · 青梧】」 / "[Opening · Qingwu]",
    whatever the chat's language) shown as the ``--lang`` language's title line (「【开场 · 青梧】」, "— Opening ·
    Qingwu —"), then the text; an opening without a header as it is."""
    from ..core.cards.st_chat import opening_title

    title, body = opening_title(opening)
    return opening if title is None else text("cli.out.chat.opening", title=say(title)) + "\n" + body


async def _before_beats(r: _Run) -> Optional[int]:
    """What runs before any beat: only the Author's Note asked for (printed, exit 0), ``--impersonate``, and a
    replay script with nothing to play (exit 2); None when the beats should follow."""
    chat, args = r.chat, r.args
    if r.note is not None and not r.says and not _commanded(args, note_counts=False):  # only the note was asked for
        if r.json_mode:
            n = chat.authors_note()
            out(dumps({"authors_note": n.model_dump() if n.text.strip() else None}))
        else:
            out(say(chat.authors_note().summary()))
        return 0
    if args.impersonate:
        from ..core.llm.types import ModelError

        try:
            line = await chat.impersonate()
        except ModelError as e:
            print(f"liyuan: {say(e)}", file=sys.stderr)
            return 1
        out(dumps({"impersonation": line}) if r.json_mode else line)
        if not (r.says or args.seal_as_is or args.continue_beat or args.regenerate or args.continue_reply):
            return 0
    if getattr(r.model, "is_replay", False) and not r.says and not _commanded(args):
        print(text("cli.out.chat.no_beats"), file=sys.stderr)
        return 2
    return None


async def _play(r: _Run) -> int:
    """The beat loop: the commands asked for (seal, continue, regenerate, continue-reply) first, then each ``--say``
    (or, at a terminal, what the user types) — in a group chat followed by every other member it activated —;
    stops at a beat that failed. Returns the exit code."""
    from ..core.chat.group_play import waiting
    from ..core.group.auto import GOOD_OUTCOMES
    from ..core.messages import message
    from .view import print_ledger

    chat, args = r.chat, r.args
    is_replay = bool(getattr(r.model, "is_replay", False))
    interactive = sys.stdin.isatty() and not r.json_mode and not args.auto
    replay_beats = list(getattr(r.model, "beats", [])) if is_replay else []
    asker = _make_asker(interactive, r.recorded, r.json_mode, is_replay)
    free_play = not r.says and interactive and not _commanded(args)
    continuing = args.continue_beat and not (r.repaired and chat.pending_draft() is None)  # the repair was the work
    commands: list[str] = ((["seal"] if args.seal_as_is else []) + (["continue"] if continuing else [])
                           + (["regenerate"] if args.regenerate else [])
                           + (["continue-reply"] if args.continue_reply else []))
    on_event = None if r.json_mode else r.view
    played = 0
    status = 0
    while commands or r.says or free_play:
        try:
            with ctrl_c_stops(chat):  # Ctrl-C during a beat stops it (the streamed prose kept), a second one quits
                if commands:
                    res = await _command(chat, commands.pop(0), asker, on_event)
                else:
                    if r.says:
                        text = r.says.pop(0)
                    else:
                        out(r.view.style("1", say(message("cli.you_input"))), end="")
                        text = (await readline()).strip()
                        if not text:
                            break
                    if replay_beats and args.demo:
                        # each demo beat plays its own recorded calls, so a stopped beat never shifts the next one
                        chat.model = _replay_for(replay_beats[played:])
                    res = await chat.send(text, ask=asker, on_event=on_event, speaker=args.speaker,
                                          chapter=getattr(args, "chapter", None))
                    played += 1
        except ValueError as e:
            print(f"liyuan: {say(e)}", file=sys.stderr)
            return 2
        except OSError as e:  # the disk refused a write: before the beat (nothing played) or after it
            return _disk_refused(e)
        r.results.append(res)
        if res.outcome in GOOD_OUTCOMES and waiting(chat):  # a group chat: the other members the words activated
            commands.insert(0, "group")
        if res.outcome == "error":
            status = 1
        if not r.json_mode:
            print_ledger(res, r.view)
        if res.outcome == "error" and not _after_failed_beat(res, r.says, is_replay):
            break
        if res.outcome == "stopped" and args.demo and r.says:
            out(r.view.style("33", say(message("cli.demo.stopped"))))
            break
    return status


#: Model error kinds a next beat would meet again (the request, the key or the server's setup is wrong).
_FATAL_KINDS = ("auth", "not_found", "config", "context", "replay_exhausted")


def _after_failed_beat(res: "BeatResult", says: list[str], is_replay: bool) -> bool:
    """A beat failed: True when the next ``--say`` should still be sent (said on stderr); False when the run stops
    — with the reason on stderr when ``--say`` lines are left (issue 30 §3: a timeout dropped them silently)."""
    from ..core.messages import message

    if not says:
        return False
    kind = res.output.error_kind if res.output is not None else ""
    if is_replay or kind in _FATAL_KINDS:
        print(f"liyuan: {say(message('cli.say_stop', n=len(says), error=res.error or kind))}", file=sys.stderr)
        return False
    print(f"liyuan: {say(message('cli.say_next', n=len(says)))}", file=sys.stderr)
    return True


async def _command(chat: "Chat", cmd: str, asker: Any, on_event: Any) -> "BeatResult":
    """One of the commands ``--seal-as-is`` (seal), ``--regenerate``, ``--continue-reply``, ``--continue``."""
    if cmd == "seal":
        return await chat.seal_as_is(on_event=on_event)
    if cmd == "regenerate":
        return await chat.regenerate(ask=asker, on_event=on_event)
    if cmd == "continue-reply":
        return await chat.continue_reply(ask=asker, on_event=on_event)
    if cmd == "group":  # the next member the user's words activated (issue 31)
        return await chat.group_reply(ask=asker, on_event=on_event)
    return await chat.continue_beat(ask=asker, on_event=on_event)


def _disk_refused(e: OSError) -> int:
    """A write the disk refused during the loop: 2 when nothing was played (what was saved before is untouched),
    1 after a beat (its prose printed on stderr when it was not saved)."""
    from ..core.chat.results import BeatSaveError

    print(f"liyuan: {say(e.strerror) if e.strerror else e}", file=sys.stderr)
    if not isinstance(e, BeatSaveError):
        return 2
    kept = e.result
    if kept is not None and e.stage != "ledger":
        text_kept = kept.final or (kept.output.draft.text if kept.output else "")
        if text_kept:
            print(text("cli.out.chat.kept") + "\n" + text_kept, file=sys.stderr)
    return 1


def _say_goodbye(r: _Run, status: int) -> None:
    """The JSON of every beat (``--json``), or the demo's closing lines."""
    from ..core.messages import message

    if r.json_mode:
        out(dumps({"beats": [_beat_json(x) for x in r.results]}, indent=1))
    elif r.args.demo and status == 0:
        out(r.view.style("1;36", say(message("cli.demo.done"))) + say(message("cli.demo.saved", dir=r.folder)))
        out(say(message("cli.demo.next", card=r.card.name, chat=r.chat_name)))
