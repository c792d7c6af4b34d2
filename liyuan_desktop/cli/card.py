"""``liyuan card …``: look at, import and export character cards from the terminal.

    liyuan card inspect FILE [--json]                  what the card contains (Chinese summary, or JSON)
    liyuan card import FILE [--replace|--keep-both]    copy it into the library; prints the card folder. When the
                                                       library has a DIFFERENT card of that name it asks (replace /
                                                       keep both / cancel) on a terminal; without a terminal it keeps
                                                       both and says so on stderr; --replace replaces (the old card's
                                                       files go to the 回收站, its chats stay), as the window does
    liyuan card rename NAME NEW                        rename a library card's folder (its chats keep working)
    liyuan card export NAME [--format png|json] [-o OUT]
                                                       NAME = a card folder in the library, or a path to a card
                                                       file / card folder; default output ./<name>.<format>
    liyuan card new NAME [--from-json FILE]            a new card in the library (FILE: a card JSON to start from,
                                                       or {"field": value, …} by the keys of ``card set``)
    liyuan card set NAME FIELD [VALUE] [--value-file F] [--remove]
                                                       set one field of a library card and save it as a new version
                                                       (core/cards/edit.py FIELDS: description, first_mes,
                                                       depth_prompt.depth, talkativeness …; list items as
                                                       alternate_greetings.N / tags.N, N = length appends;
                                                       --remove deletes item N)
    liyuan card fields NAME [--json]                   every field of a card with its tokens (per field, total,
                                                       permanent: core/cards/edit.py TokenReport)
    liyuan card preview FILE|NAME [--greeting N] …     N: 0 the first message, 1… alternate greeting N

Wiring (``cli/__init__.py``): ``add_parser(sub)`` on the top-level subparsers, then ``return run(args)`` when
``args.cmd == "card"``. Exit codes: 0 ok; 2 a bad file or bad arguments — ONE line on stderr (``liyuan: …``),
never a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from . import card_scripts
from .common import dumps, language, msg, say, text

if TYPE_CHECKING:  # the engine is imported by the functions that use it: building the parser needs none of it
    from ..core.cards import Card


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``card`` command (with ``inspect``, ``import``, ``export``) to an argparse subparsers object and
    return its parser. The chosen sub-command is ``args.card_cmd``."""
    c = subparsers.add_parser("card", help=text("cli.help.card.0"), description=text("cli.help.card.1"))
    cs = c.add_subparsers(dest="card_cmd", metavar="{inspect,import,export,preview,rename,new,set,fields,scripts}")
    i = cs.add_parser("inspect", help=text("cli.help.card.2"))
    i.add_argument("file", help=text("cli.help.card.3"))
    i.add_argument("--json", action="store_true", help=text("cli.help.card.4"))
    im = cs.add_parser("import", help=text("cli.help.card.5"))
    im.add_argument("file", help=text("cli.help.card.6"))
    im.add_argument("--allow-scripts", action="store_true", help=text("cli.help.card.7"))
    how = im.add_mutually_exclusive_group()
    how.add_argument("--replace", action="store_true", help=text("cli.help.card.8"))
    how.add_argument("--keep-both", action="store_true", help=text("cli.help.card.9"))
    rn = cs.add_parser("rename", help=text("cli.help.card.10"))
    rn.add_argument("name", help=text("cli.help.card.11"))
    rn.add_argument("new_name", help=text("cli.help.card.12"))
    pv = cs.add_parser("preview", help=text("cli.help.card.13"))
    pv.add_argument("file", help=text("cli.help.card.14"))
    pv.add_argument("--greeting", type=int, default=0, help=text("cli.help.card.15"))
    pv.add_argument("--screenshot", help=text("cli.help.card.16"))
    pv.add_argument("--json", action="store_true", help=text("cli.help.card.17"))
    ex = cs.add_parser("export", help=text("cli.help.card.18"))
    ex.add_argument("name", help=text("cli.help.card.19"))
    ex.add_argument("--format", choices=("png", "json"), default="png", help=text("cli.help.card.20"))
    ex.add_argument("-o", "--output", help=text("cli.help.card.21"))
    nw = cs.add_parser("new", help=text("cli.help.card.22"))
    nw.add_argument("name", help=text("cli.help.card.23"))
    nw.add_argument("--from-json", help=text("cli.help.card.24"))
    st = cs.add_parser("set", help=text("cli.help.card.25"))
    st.add_argument("name", help=text("cli.help.card.26"))
    st.add_argument("field", help=text("cli.help.card.27"))
    st.add_argument("value", nargs="?", help=text("cli.help.card.28"))
    st.add_argument("--value-file", help=text("cli.help.card.29"))
    st.add_argument("--remove", action="store_true", help=text("cli.help.card.30"))
    fl = cs.add_parser("fields", help=text("cli.help.card.31"))
    fl.add_argument("name", help=text("cli.help.card.32"))
    fl.add_argument("--json", action="store_true", help=text("cli.help.card.33"))
    card_scripts.add_parser(cs)
    c.set_defaults(_card_parser=c)
    return c


def _err(msg: str) -> None:
    print(f"liyuan: {' '.join(say(msg).splitlines())}", file=sys.stderr)  # a catalog text in the --lang language


def _resolve(name: str) -> tuple[Card, Optional[bytes]]:
    """The card to export and the image to put it on (None → default image)."""
    from ..core.cards import CardError, icon_bytes, load_card
    from ..core.cards.library import card_folder, cards_root
    from ..core.paths import safe_name

    p = Path(name)
    if p.is_file():
        card = load_card(p)
        return card, (p.read_bytes() if card.source_format == "png" else icon_bytes(card))
    folder: Optional[Path] = p if p.is_dir() else None
    if folder is None:
        for cand in (cards_root() / name, cards_root() / safe_name(name), card_folder(name)):
            if (cand / "card.json").is_file():
                folder = cand
                break
    if folder is None:
        raise CardError(msg("cli.out.card.not_found", name=name))
    if not (folder / "card.json").is_file():
        raise CardError(msg("cli.out.card.no_card_json", name=folder.name))
    card = load_card(folder / "card.json")
    image: Optional[bytes] = None
    orig_png = folder / "original.png"
    orig_charx = folder / "original.charx"
    if orig_png.is_file():
        image = orig_png.read_bytes()
    elif orig_charx.is_file():
        try:
            image = icon_bytes(load_card(orig_charx))
        except CardError:
            image = None
    return card, image


def _out_path(card: Card, fmt: str, output: Optional[str]) -> Path:
    from ..core.paths import safe_name

    stem = safe_name(card.name)
    if output:
        o = Path(output)
        return o / f"{stem}.{fmt}" if o.is_dir() or output.endswith(("/", os.sep)) else o
    out = Path.cwd() / f"{stem}.{fmt}"
    n = 2
    while out.exists():
        out = Path.cwd() / f"{stem}-{n}.{fmt}"
        n += 1
    return out


def _import(args: argparse.Namespace) -> Optional[Any]:
    """``card import``: the library card (``cards.library.CardRef``), or None when the user cancelled. A different
    card of the same name (``library.existing_card``) is never replaced silently: ``--replace`` replaces
    (``chat.manage.replace_card``), ``--keep-both`` keeps both, else a terminal is asked and a run without one keeps
    both and says so on stderr. CardError / OSError propagate."""
    from ..core.cards.library import existing_card, import_card
    from ..core.chat.manage import replace_card
    from ..core.messages import message

    old = existing_card(args.file)
    if old is None or args.keep_both:
        return import_card(args.file)
    if args.replace:
        ref, item = replace_card(Path(args.file))
        print(say(message("card.replaced", name=ref.name, trash=item.id if item else "-")), file=sys.stderr)
        return ref
    if sys.stdin.isatty():
        try:
            answer = input(say(message("card.exists_ask", name=old.name))).strip().lower()
        except EOFError:
            answer = "c"
        if answer in ("c", "cancel", "取消", "q"):
            print(say(message("card.import_cancelled")), file=sys.stderr)
            return None
        if answer in ("r", "replace", "替换"):
            ref, item = replace_card(Path(args.file))
            print(say(message("card.replaced", name=ref.name, trash=item.id if item else "-")), file=sys.stderr)
            return ref
        return import_card(args.file)
    ref = import_card(args.file)
    print(say(message("card.kept_both", name=old.name, dir=ref.dir)), file=sys.stderr)
    return ref


def run(args: argparse.Namespace) -> int:
    """Run ``liyuan card <inspect|import|export|preview|rename>`` from parsed ``args``; returns the exit code (0 ok,
    1 an import the user cancelled, 2 bad file or arguments with one ``liyuan: …`` line on stderr)."""
    from ..core.cards import (
        CardError,
        card_json_bytes,
        export_json,
        export_png,
        format_inspect,
        inspect_loaded,
        load_card,
    )
    from ..core.messages import message

    cmd = getattr(args, "card_cmd", None)
    try:
        if cmd in ("new", "set"):
            return _edit(args)
        if cmd == "fields":
            return _fields(args)
        if cmd == "inspect":
            card = load_card(args.file)
            info = inspect_loaded(card)
            print(dumps(info, indent=1) if args.json else format_inspect(info, language()))
            return 0
        if cmd == "preview":
            return _preview(args)
        if cmd == "import":
            ref = _import(args)
            if ref is None:
                return 1
            from ..core.cards.meta import set_card_scripts_allowed

            set_card_scripts_allowed(Path(ref.dir), bool(getattr(args, "allow_scripts", False)))
            for note in ref.notes:  # e.g. the card's linked world book is not in the library (cards.book_links)
                print(say(note), file=sys.stderr)
            print(ref.dir)
            return 0
        if cmd == "rename":
            from ..core.cards.library import cards_root
            from ..core.chat.manage import ManageError, rename_card

            try:
                ref = rename_card(cards_root() / args.name, args.new_name)
            except ManageError as e:
                _err(say(e))
                return 2
            print(say(message("card.renamed", name=ref.name, dir=ref.dir)))
            return 0
        if cmd == "export":
            card, image = _resolve(args.name)
            out = _out_path(card, args.format, args.output)
            if args.format == "json":
                blob = card_json_bytes(export_json(card), indent=2)
            else:
                blob = export_png(card, image)
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(blob)
            print(out)
            return 0
    except CardError as e:
        _err(say(e))
        return 2
    except UnicodeError:  # a lone UTF-16 surrogate in the card text cannot be written as UTF-8
        _err(text("cli.out.card.surrogate", name=Path(getattr(args, 'file', '') or getattr(args, 'name', '')).name))
        return 2
    except OSError as e:
        where = getattr(e, "filename", None)
        _err(text("cli.out.io_failed_at", name=Path(where).name, error=e.strerror or str(e)) if where
             else text("cli.out.io_failed", error=e.strerror or str(e)))
        return 2
    parser = getattr(args, "_card_parser", None)
    if parser is not None:
        parser.print_usage(sys.stderr)
    _err(text("cli.out.card.need_sub"))
    return 2


def _library_card(name: str) -> Path:
    """The card file ``card set`` edits: a library card by folder name, or a card folder / JSON card path."""
    from ..core.cards import CardError
    from ..core.cards.library import card_folder, cards_root
    from ..core.messages import message
    from ..core.paths import safe_name

    p = Path(name)
    if p.is_file():
        return p
    if (p / "card.json").is_file() and (os.sep in name or "/" in name):
        return p / "card.json"
    for cand in (cards_root() / name, cards_root() / safe_name(name), card_folder(name)):
        if (cand / "card.json").is_file():
            return cand / "card.json"
    raise CardError(message("card.not_in_library", name=name))


def _preview(args: argparse.Namespace) -> int:
    """``card preview FILE|NAME [--greeting N]``: a card file as given, else the library card of that name; a
    greeting the card does not have is said before the (slow) offscreen window starts. CardError propagates."""
    from ..core.cards import load_card
    from ..core.cards.edit import with_greeting

    file = args.file if Path(args.file).is_file() else str(_library_card(args.file))
    if args.greeting:
        with_greeting(load_card(file), args.greeting)
    from ..ui.frames.preview import run_preview

    info = run_preview(file, args.screenshot, greeting=args.greeting)
    if args.json:
        print(dumps(info))
    else:
        print(text("cli.out.card.preview", frames=info["frames"], heights=[str(h) for h in info["height_px"]] or "-",
                   errors=len(info["errors"]), blocked=len(info["blocked"])))
        for e in info["errors"]:
            print(text("cli.out.card.preview_error", error=str(e)))
    return 0


def _value(args: argparse.Namespace) -> Any:
    """``card set``'s new value: the file's text, or VALUE (a JSON array for a whole list field)."""
    from ..core.cards import CardError
    from ..core.messages import message

    if args.value_file:
        return Path(args.value_file).read_text("utf-8")
    if args.value is None:
        raise CardError(message("card.value_needed"))
    if args.field == "alternate_greetings" or (args.field == "tags" and args.value.lstrip().startswith("[")):
        try:
            return json.loads(args.value)
        except ValueError:
            return args.value  # the editor says it is not a list
    return args.value


def _fields(args: argparse.Namespace) -> int:
    """``card fields NAME [--json]``: each field's value (texts cut to one line of 60 characters) and tokens."""
    from ..core.cards.edit import FIELDS, CardEditor
    from ..core.messages import message

    ed = CardEditor.open(_library_card(args.name))
    values, tokens = ed.values(), ed.tokens()
    if args.json:
        print(dumps({"fields": values, "tokens": tokens.model_dump()}, indent=1))
        return 0
    for f in FIELDS:
        v = values[f.key]
        shown = " | ".join(v) if isinstance(v, list) else str(v)
        shown = " ".join(shown.split())
        n = tokens.fields.get(f.key)
        print(f"{f.key:<28} {'' if n is None else n:>6}  {shown[:60] + ('…' if len(shown) > 60 else '')}")
    print(say(message("card.tokens_total", total=tokens.total, permanent=tokens.permanent)))
    return 0


def _edit(args: argparse.Namespace) -> int:
    """``card new`` and ``card set`` (core/cards/edit.py). CardError (CardEditError) and OSError propagate to
    :func:`run`, which prints one line."""
    from ..core.cards import CardError
    from ..core.cards.edit import CardEditor, create_card, fields_or_card
    from ..core.messages import message

    if args.card_cmd == "new":
        base: Optional[dict[str, Any]] = None
        fields: dict[str, Any] = {}
        if args.from_json:
            f = Path(args.from_json)
            base, fields = fields_or_card(f.read_text("utf-8-sig"), f.name)
        ed = create_card(args.name, fields, base)
        print(say(message("card.created", name=ed.card.name, dir=ed.path.parent)), file=sys.stderr)
        print(ed.path.parent)
        return 0
    ed = CardEditor.open(_library_card(args.name))
    if args.remove:
        key, _, index = args.field.rpartition(".")
        if key not in ("alternate_greetings", "tags") or not index.lstrip("-").isdigit():
            raise CardError(message("card.remove_needs_index"))
        ed.remove_item(key, int(index))
    else:
        ed.set(args.field, _value(args))
    path = ed.save()
    print(say(message("card.field_set", name=ed.card.name, key=args.field, versions=path.parent / "versions")))
    return 0

