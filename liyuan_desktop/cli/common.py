"""What every ``liyuan`` subcommand shares: writing to a terminal that may go away, reading a line without blocking
the event loop, and finding a card or a chat folder from what the user typed.

Errors follow the CLI's one rule: the functions here raise (``CardError``, ``ValueError``); the subcommand turns that
into one ``liyuan: …`` line on stderr and exit code 2.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Optional

if TYPE_CHECKING:  # the engine is imported by the functions that use it: the window's start needs none of it
    from ..core.cards import Card
    from ..core.chat.facade import Chat


async def readline() -> str:
    """One line from stdin without blocking the loop ("" at end of input); read on a daemon thread so Ctrl-C at a
    prompt exits at once (a default-executor thread would keep the process waiting for Enter)."""
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


def out(text: str = "", end: str = "\n") -> None:
    """Write ``text + end`` to stdout and flush at once (streamed drafts must show as they grow)."""
    sys.stdout.write(text + end)
    sys.stdout.flush()


class PipeSafeStdout:
    """stdout for the terminal commands: when the reader goes away (``liyuan inspect … | head``) the rest of the
    output is dropped quietly instead of raising BrokenPipeError in the middle of a beat — the command goes on and
    saves what it was doing. Everything else is delegated to the real stream (``inner``)."""

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
        """Write like the real stream; after the reader has gone, swallow ``text`` and report it written."""
        if not self._gone:
            try:
                return self._inner.write(text)
            except BrokenPipeError:
                self._drop()
        return len(text)

    def flush(self) -> None:
        """Flush the real stream unless the reader has gone."""
        if not self._gone:
            try:
                self._inner.flush()
            except BrokenPipeError:
                self._drop()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def resolve_card(spec: str) -> Card:
    """A card by file path, by the name of an imported card (``<data folder>/cards/NAME/card.json``, what
    ``liyuan card import`` prints), a card folder, or the name of a shipped sample card. Raises CardError."""
    from ..core.cards import CardError, load_card
    from ..core.paths import home, sample_cards_dir

    p = Path(spec)
    if p.is_dir() and (p / "card.json").is_file():
        return load_card(p / "card.json")
    if not p.exists():
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


def card_home_name(spec: str, card: "Card") -> str:
    """The folder under ``<data folder>/cards/`` that holds the chats of the card given as ``spec`` (see
    :func:`resolve_card`): the library folder's own name when ``spec`` names one (a card renamed with ``liyuan card
    rename``, or a second card of the same name imported as ``NAME-2``, lives in a folder whose name is not the
    card's), else the card's name."""
    from ..core.paths import home

    root = home() / "cards"
    p = Path(spec)
    if p.is_dir() and (p / "card.json").is_file():
        folder = p
    elif not p.exists() and "/" not in spec and "\\" not in spec and (root / spec / "card.json").is_file():
        folder = root / spec
    else:
        return card.name
    try:
        folder.resolve().relative_to(root.resolve())
    except (ValueError, OSError):
        return card.name
    return folder.name


def chat_folder(spec: str) -> Path:
    """The folder of an existing chat from a folder path, ``card name/chat name`` or ``group name/chat name`` (a
    group chat, ``core/group``); ValueError (a catalog message) when there is no ``session.jsonl`` there."""
    from ..core.group.model import group_dir
    from ..core.messages import message
    from ..core.paths import chat_dir, chats_dir, safe_name

    p = Path(spec)
    if (p / "session.jsonl").exists():
        return p
    if "/" in spec:
        card, chat = spec.split("/", 1)
        for d in (chat_dir(card, chat), chats_dir(group_dir(card)) / safe_name(chat)):
            if (d / "session.jsonl").exists():
                return d
    raise ValueError(message("cli.chat_not_found", spec=spec))


def open_chat(spec: str) -> Chat:
    """Open an existing chat read-mostly for the terminal commands (``branches``, ``inspect``, ``memory``): the
    folder from ``spec`` (see ``chat_folder``), the card it lives in (``library.card_of_chat``), else the card its
    header names (path first, then name, via ``resolve_card``), and a replay model that has nothing to say. ValueError when the card cannot be found;
    SessionError for a broken session file."""
    from ..core.cards import CardError
    from ..core.cards.library import card_of_chat
    from ..core.chat.folder import chat_info
    from ..core.llm.replay import ReplayModel

    d = chat_folder(spec)
    header = chat_info(d)
    card = None
    home_card = card_of_chat(d)  # the card folder the chat lives in first: a renamed card keeps its chats
    for cand in ((home_card.dir,) if home_card is not None else ()) + (header.card, header.card_name):
        if not cand:
            continue
        try:
            card = resolve_card(cand)
            break
        except (CardError, OSError, ValueError):
            continue
    if card is None:
        raise ValueError(msg("cli.out.no_chat_card", card=header.card or header.card_name))
    from ..core.chat.build import build_chat
    from ..core.settings import load_settings

    # opened as the window opens it (the app's world-info settings, compaction share, profile sampling)
    return build_chat(d, card, load_settings(), ReplayModel(actor=[], scribe=[], label="只读"))


# -- language (issue 17): engine messages in the chosen language -------------------------------------------------
_LANG: list[str] = []


def take_lang(argv: list[str]) -> list[str]:
    """Remove ``--lang zh|en`` / ``--lang=zh|en`` from ``argv`` (anywhere) and choose that language; returns the
    rest. Without it the language is ``LIYUAN_LANG``, else the settings' ``ui_language``, else the system locale's
    (English unless it is Chinese) — chosen
    afresh for each command line (a ``--lang`` of an earlier :func:`~liyuan_desktop.cli.main` call in the same
    process does not stick)."""
    from ..core.paths import set_reader_language

    _LANG.clear()
    set_reader_language(language)  # a new data folder's layout (core.paths): this command line's language
    out, i = [], 0
    while i < len(argv):
        a = argv[i]
        if a == "--lang" and i + 1 < len(argv):
            set_language(argv[i + 1])
            i += 2
            continue
        if a.startswith("--lang="):
            set_language(a.split("=", 1)[1])
        else:
            out.append(a)
        i += 1
    return out


def set_language(lang: str) -> None:
    """Choose the language of the CLI's engine messages ("zh", "en" or a language with a translator's compiled
    catalog). Any other code prints one English warning line on stderr naming the languages there are and falls
    back to the system locale's language (``core.settings.fallback_language``: English unless the locale is
    Chinese)."""
    from ..core.paths import set_reader_language
    from ..core.settings import fallback_language, is_known_language, unknown_language_warning

    if not is_known_language(lang):
        print(unknown_language_warning(lang), file=sys.stderr)
        lang = fallback_language()
    _LANG[:] = [lang]
    set_reader_language(lang)  # a new data folder's folder names (core.paths)


def language() -> str:
    """The chosen language (see :func:`take_lang`; without ``--lang`` the same rule as the window's,
    ``core.settings.language_for_run``: ``LIYUAN_LANG``, the settings' language, the system locale)."""
    if not _LANG:
        forced = os.environ.get("LIYUAN_LANG", "")
        if forced:  # an unknown code: set_language warns and falls back (language_for_run would fall back silently)
            set_language(forced)
            return _LANG[0]
        try:
            from ..core.settings import language_for_run, load_settings

            lang: str = language_for_run(load_settings())
        except Exception:  # noqa: BLE001 - an unreadable settings file never stops the CLI
            lang = os.environ.get("LIYUAN_LANG", "zh")
        set_language(lang)
    return _LANG[0]


def lang_flag() -> Optional[str]:
    """The language ``--lang`` gave on this command line (after :func:`take_lang`), or None."""
    return _LANG[0] if _LANG else None


def say(value: Any) -> str:
    """An engine message (``core/messages.Msg``, or an exception carrying one) in the chosen language; anything
    else as ``str``."""
    from ..core.messages import render

    return render(value, language())


def file_error(e: OSError) -> Any:
    """An OSError as one catalog message (``cardfile.io``: the file's path, the system's reason) instead of
    Python's ``[Errno 2] …`` text."""
    from ..core.messages import message

    return message("cardfile.io", name=str(e.filename or ""), error=e.strerror or str(e))


def said(value: Any) -> Any:
    """``value`` (a JSON-ready tree: dicts, lists, tuples, scalars) with every engine message in it
    (``core/messages.Msg``) said in the chosen language, for ``--json`` output (issue 32: a program reading the
    JSON gets the same field names in every language; only the human-readable texts the app chose follow the
    reader). Plain strings — names, story text, paths — stay as they are; dict keys are never changed. In Chinese a
    Msg is its own text, so the output is unchanged."""
    from ..core.messages import Msg

    if isinstance(value, Msg):
        return say(value)
    if isinstance(value, dict):
        return {k: said(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [said(v) for v in value]
    return value


def dumps(value: Any, **kw: Any) -> str:
    """``json.dumps(said(value), ensure_ascii=False, **kw)``: a command's ``--json`` output with the app's own
    messages in the reader's language (:func:`said`)."""
    import json

    kw.setdefault("ensure_ascii", False)
    return json.dumps(said(value), **kw)


def text(key: str, **params: Any) -> str:
    """The catalog text ``key`` (``core/messages.CATALOG``; the CLI's help texts: ``cli/help_catalog.py``) in the
    chosen language, formatted with ``params``."""
    from ..core.messages import message
    from . import help_catalog, out_catalog  # noqa: F401  register the help texts, the commands' own lines

    return say(message(key, **params))


def msg(key: str, **params: Any) -> Any:
    """The catalog message ``key`` (a ``core.messages.Msg``, the CLI's own lines registered first) — for an
    exception or a value rendered later with :func:`say`."""
    from ..core.messages import message
    from . import out_catalog  # noqa: F401  registers the commands' own lines

    return message(key, **params)


def find_entry(chat: Chat, prefix: str) -> str:
    """The one transcript entry id that starts with ``prefix``; ValueError when none or several match."""
    return chat.find_entry(prefix)


def run_on_chat(spec: str, body: Callable[[Chat], int]) -> int:
    """Open the chat ``spec`` (``open_chat``) and run ``body`` on it; returns its exit code, or 2 with one
    ``liyuan: …`` line on stderr for a bad chat, id or argument (SessionError, ValueError, KeyError, RuntimeError) or
    a session file that cannot be written, and 0 when the reader of stdout went away (``| head``)."""
    from ..core.session.tree import SessionError

    try:
        return body(open_chat(spec))
    except (SessionError, ValueError, KeyError, RuntimeError) as e:
        msg = say(e.args[0]) if isinstance(e, KeyError) and e.args else say(e)
        print(f"liyuan: {msg}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader went away (| head): nothing to say
        return 0
    except OSError as e:
        print(text("cli.out.session_not_written", error=str(e)), file=sys.stderr)
        return 2
