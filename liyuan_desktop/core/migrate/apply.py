"""``run(plan, progress, cancel) -> MigrationReport``: import what :func:`.scan.scan` planned.

Order: world books, presets, cards (through :func:`core.cards.library.import_card`), each card's chats (through
:func:`core.chat.st_import.import_st_folder`, which reads the file with :mod:`core.cards.st_chat`: swipes become
branches, per-message variables snapshots, ``send_date`` timestamps; all or nothing, cancellable inside a long
chat), persona avatars; then, in one step that is
not cancelled any more, personas, settings, the hash index and the report.

World books and their links, as SillyTavern plays them: books in ``world_info.globalSelect`` go to the global folder
(``<home>/世界书/``, active in every chat), the others to the library (``lore.books.library_books_dir``). A card's
linked books (``extensions.world`` and ``charLore`` extra books) are recorded on the card under the names they got
here (``cards.meta`` ``world_books``), so every chat of the card — the imported ones and those started later — reads
them from the library (``cards.book_links``: one shared file, as in SillyTavern; a global one or one whose entries the
card carries embedded is not read twice); a chat's own book (``chat_metadata.world_info``) is attached to that chat
(a copy in ``<chat>/世界书/``). The card keeps ``extensions.world`` in its card.json. A card whose regex scripts were allowed in SillyTavern
(``extension_settings.character_allowed_regex``) gets them allowed here (``cards.meta``), as a new card only.

A re-run over an updated SillyTavern folder (issue 33 §4): a book or card planned ``update`` (its name is here with
other content) replaces the library's one through the library's own paths — a book through
``chat.book_update.update_library_book`` (the old version kept in the version store), a card through
``chat.manage.replace_card`` (the old files to the 回收站; its chats and switches stay) — so every chat using it is
offered what changed (the card-update bar, ``liyuan book updates``). A cancel puts the replaced files back.

Nothing half-written on cancel: every file and folder the run creates is recorded and removed again when ``cancel``
turns true (or an unexpected error or Ctrl-C stops the run); personas.json and settings.json are only written after
the last cancel check, and the hash index is put back as it was. A killed run leaves only whole items (each chat is
written all or nothing, books and presets atomically) and the index line of each finished item, so the next run
skips what it finished. An item that fails (a damaged file, a full disk) becomes an ``error`` item and
the rest goes on. Settings are taken over only where ours are unset (user name, default preset, default persona,
world-info settings still at SillyTavern's defaults, an API connection not yet configured); what was kept is listed.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import threading
import time
from pathlib import Path
from typing import Any, Callable, Optional, Union

from ..cards import CardError
from ..cards.library import CardRef, cards_root, import_card
from ..cards.meta import card_linked_books, set_card_linked_books, set_card_scripts_allowed
from ..cards.personas import Persona, load_personas, save_personas
from ..cards.st_chat import StChatCancelled, StChatError
from ..chat.st_import import import_st_folder
from ..fsutil import atomic_write_bytes, atomic_write_text
from ..group.model import group_dir
from ..group.st import import_st_group
from ..lore.books import global_books_dir, library_books_dir
from ..messages import joined_semi, message
from ..paths import chat_books_dir, chats_dir, home, home_folder, safe_name
from ..prompt.presets.model import PresetError
from ..prompt.presets.store import install_preset, presets_dir
from ..session.tree import SessionError
from ..settings import load_settings, save_settings
from .index import IndexEntry, MigrationIndex
from .merge import imported_provider, merge_settings
from .model import MigrationPlan, MigrationReport, PlanItem, error_text, kind_label
from .scan import inside, numbered, persona_key

Progress = Callable[[int, int, str], None]
Cancel = Union[Callable[[], bool], threading.Event, None]


class _Cancelled(Exception):
    pass


def _is_cancelled(cancel: Cancel) -> bool:
    if cancel is None:
        return False
    if isinstance(cancel, threading.Event):
        return cancel.is_set()
    return bool(cancel())


def _rel(p: Path) -> str:
    try:
        return p.relative_to(home()).as_posix()
    except ValueError:
        return str(p)


def _remove(p: Path) -> None:
    if p.is_dir() and not p.is_symlink():
        shutil.rmtree(p, ignore_errors=True)
    else:
        try:
            p.unlink()
        except FileNotFoundError:
            pass


def _restore(path: Path, size: Optional[int]) -> None:
    """Cut the index back to ``size`` bytes (the lines this run appended go), or remove it when it did not exist."""
    try:
        if size is None:
            path.unlink(missing_ok=True)
        else:
            os.truncate(path, size)
    except OSError:
        pass  # a stale index only names items that no longer exist: harmless (MigrationIndex.exists)


class _Run:
    def __init__(self, plan: MigrationPlan, report: MigrationReport, cancel: Cancel = None):
        self.plan, self.report = plan, report
        self.cancel = cancel
        self.root = Path(plan.root)
        self.created: list[Path] = []
        #: files an ``update`` item replaced (their old bytes; None: a file it added), put back on cancel
        self.replaced: list[tuple[Path, Optional[bytes]]] = []
        self.index = MigrationIndex.load()
        self.book_file: dict[str, Path] = {}  # SillyTavern book name -> our file (library or global)
        self.book_global: set[str] = set()
        self.cards: dict[str, CardRef] = {}  # card file stem -> library card
        self.card_items: dict[str, PlanItem] = {}
        self.chat_personas: list[tuple[Path, str]] = []
        self.avatar_names: dict[str, str] = {}  # persona id -> avatar file name here

    # -- items ----------------------------------------------------------------------------------------------
    def _source(self, item: PlanItem) -> Path:
        """The item's file in the SillyTavern folder, checked again now (a link may have been put there since the
        scan): OSError when it leads out of the folder."""
        p = self.root / item.source
        if not inside(p, self.root):
            raise OSError(message("migrate.link_out", name=item.source, target=str(p.resolve())))
        return p

    def _record(self, item: PlanItem, dest: Path, digest: Optional[str]) -> None:
        if digest:
            self.index.record(IndexEntry(sha256=digest, kind=item.kind, dest=_rel(dest), target=item.target))

    def book(self, item: PlanItem) -> None:
        folder = global_books_dir() if item.detail.get("global") else library_books_dir()
        dest = folder / f"{item.target}.json"
        if dest.exists():  # taken since the scan: never overwrite
            item.target = numbered(item.target, lambda n: (folder / f"{n}.json").exists())
            item.action, dest = "rename", folder / f"{item.target}.json"
        atomic_write_bytes(dest, self._source(item).read_bytes())
        self.created.append(dest)
        self._record(item, dest, item.detail.get("sha256"))

    def _created_for(self, p: Path) -> None:
        """Note that ``p`` is about to be written: its first missing folder (or itself) is removed on cancel."""
        top = p
        while not top.parent.exists():
            top = top.parent
        if not top.exists():
            self.created.append(top)

    def book_update(self, item: PlanItem) -> None:
        """Replace the library's book ``item.target`` by SillyTavern's newer one (module doc)."""
        from ..chat.book_update import update_library_book, versions_dir
        from ..lore.bookcache import file_digest

        src = self._source(item)
        dest = Path(str(item.detail.get("replaces") or ""))
        old = dest.read_bytes()  # OSError (the item fails) when it went away since the scan
        self._created_for(versions_dir(item.target) / f"{file_digest(old)}.json")
        self.replaced.append((dest, old))
        update_library_book(item.target, src)
        self._record(item, dest, item.detail.get("sha256"))

    def card_update(self, item: PlanItem) -> None:
        """Replace the library's card ``item.target`` by SillyTavern's newer one (module doc)."""
        from ..chat.manage import replace_card, trash_root

        folder = cards_root() / item.target
        files = [folder / "card.json", *folder.glob("original.*")]
        self.replaced += [(f, f.read_bytes()) for f in files if f.is_file()]
        before = set(files)
        ref, trashed = replace_card(self._source(item))
        self.replaced += [(f, None) for f in folder.glob("original.*") if f not in before]
        if trashed is not None:
            self.created.append(trash_root() / trashed.id)
        if item.detail.get("regex_allowed"):
            set_card_scripts_allowed(ref.dir, True)
        self._link_books(item, ref)
        item.target = ref.name
        self.cards[item.owner] = ref
        self._record_card(item, ref)

    def put_back(self) -> None:
        """Cancel: the files ``update`` items replaced, as they were (newest change first)."""
        for p, old in reversed(self.replaced):
            try:
                if old is None:
                    p.unlink(missing_ok=True)
                else:
                    atomic_write_bytes(p, old)
            except OSError:
                pass

    def preset(self, item: PlanItem) -> None:
        folder = presets_dir()
        if (folder / f"{safe_name(item.target, 'preset')}.json").exists():
            item.target = numbered(item.target, lambda n: (folder / f"{safe_name(n, 'preset')}.json").exists())
            item.action = "rename"
        dest = folder / f"{safe_name(item.target, 'preset')}.json"
        install_preset(self._source(item), name=item.target)
        self.created.append(dest)
        self._record(item, dest, item.detail.get("sha256"))

    def card(self, item: PlanItem) -> None:
        before = {p.name for p in cards_root().iterdir()}
        ref = import_card(self._source(item))
        if ref.name not in before:
            self.created.append(Path(ref.dir))
            if item.detail.get("regex_allowed"):  # allowed in SillyTavern: the same answer here (cards.meta)
                set_card_scripts_allowed(ref.dir, True)
            self._link_books(item, ref)
        else:
            item.action = "same"
        item.target = ref.name
        self.cards[item.owner] = ref
        self._record_card(item, ref)

    def _record_card(self, item: PlanItem, ref: CardRef) -> None:
        """The card in the import record under the name it has here: a later run may replace it by SillyTavern's
        newer version (``MigrationIndex.brought``; a same-named card made here is never replaced)."""
        digest = hashlib.sha256(self._source(item).read_bytes()).hexdigest()
        self._record(item, Path(ref.dir) / "card.json", digest)

    def _link_books(self, item: PlanItem, ref: CardRef) -> None:
        """Record the card's SillyTavern links (``extensions.world``, then its ``charLore`` books) under the names
        the books got here (cards.meta ``world_books``): every chat of the card reads them (cards.book_links), the
        imported ones and the new ones. A name with no book in ``worlds/`` is said in the plan's notes."""
        names: list[str] = []
        for name in dict.fromkeys(item.links):
            f = self.book_file.get(name)
            if f is None:
                self.plan.notes.append(message("migrate.book_missing.card", card=item.name, book=name))
                continue
            names.append(f.stem)
        set_card_linked_books(ref.dir, names)

    def chat(self, item: PlanItem) -> None:
        ref = self.cards.get(item.owner)
        if ref is None:
            raise StChatError(message("migrate.card_missing", owner=item.owner))
        base = chats_dir(ref.dir)
        if (base / item.target).exists():
            item.target = numbered(item.target, lambda n: (base / n).exists())
            item.action = "rename"
        dest = base / item.target
        card = ref.load()
        warnings = import_st_folder(self._source(item), card, dest, title=item.name,
                                    cancelled=lambda: _is_cancelled(self.cancel))  # all or nothing
        self.created.append(dest)
        warnings = list(dict.fromkeys(warnings))
        if warnings:
            item.detail["warnings"] = warnings
            item.reason = message("migrate.chat_warnings", items=warnings[:3], more="……" if len(warnings) > 3 else "")
        try:
            attached = self._attach_books(item, card, dest)
        except BaseException:
            self.created.remove(dest)
            _remove(dest)
            raise
        item.links = attached  # what the chat reads now, beside the card's own book and the global ones
        if item.detail.get("persona"):
            self.chat_personas.append((dest, str(item.detail["persona"])))
        self._record(item, dest / "session.jsonl", item.detail.get("sha256"))

    def _attach_books(self, item: PlanItem, card: Any, dest: Path) -> list[str]:
        """Copy the chat's own book (``chat_metadata.world_info``) into ``<chat>/世界书/``; the card's linked books
        are not copied: the card links them (:meth:`_link_books`), as SillyTavern shares one file among the
        character's chats. A book that is global already, or one of the card's links, is not attached."""
        card_item = self.card_items.get(item.owner)
        linked = set(card_item.links if card_item else [])
        out: list[str] = []
        for name in dict.fromkeys(item.links):
            f = self.book_file.get(name)
            if f is None:
                if name not in self.book_global:
                    self.plan.notes.append(message("migrate.book_missing.chat", chat=item.name, book=name))
                continue
            if f.parent == global_books_dir() or name in linked:
                continue  # global already, or the card's: every chat of the card reads it
            atomic_write_bytes(chat_books_dir(dest) / f.name, f.read_bytes())
            out.append(f.stem)
        return out

    def group(self, item: PlanItem) -> None:
        """A SillyTavern group and its chats (core/group/st.py); members by their card file's stem, as imported
        in this run or before."""
        def member_of(avatar: str) -> Optional[str]:
            ref = self.cards.get(Path(avatar).stem)
            return ref.name if ref is not None else None

        group, notes = import_st_group(self._source(item), member_of, name=item.target)
        self.created.append(group_dir(group.name))
        if notes:
            listed = joined_semi(notes[:3])
            item.reason = message("join.more", a=listed) if len(notes) > 3 else listed

    def avatar(self, item: PlanItem) -> None:
        folder = home_folder("persona_avatars")  # 人设头像/ or persona-avatars/ (core.paths)
        dest = folder / item.target
        if dest.exists():
            stem, suffix = Path(item.target).stem, Path(item.target).suffix
            item.target = numbered(stem, lambda n: (folder / f"{n}{suffix}").exists()) + suffix
            item.action, dest = "rename", folder / item.target
        atomic_write_bytes(dest, self._source(item).read_bytes())
        self.created.append(dest)
        self.avatar_names[item.owner] = item.target

    # -- the commit step (personas, settings, index, report) --------------------------------------------------
    def link_known_cards(self) -> None:
        """Cards that were here already (an earlier import of the same file) and have no links recorded get them
        now: after the last cancel check, as their folder is not this run's to remove."""
        for owner, ref in self.cards.items():
            item = self.card_items.get(owner)
            if item is not None and item.action == "same" and Path(ref.dir).is_dir() \
                    and card_linked_books(ref.dir) is None:
                self._link_books(item, ref)

    def personas(self) -> None:
        items = self.plan.of("persona")
        if not items:
            return
        store = load_personas()
        by_key = {persona_key(p): p.id for p in store.personas}
        ids: dict[str, str] = {}  # SillyTavern avatar id -> our persona id
        for item in items:
            p = Persona.model_validate(item.detail["persona"])
            if item.action in ("new", "rename"):
                p.id = str(item.detail.get("id") or p.id)
                if item.owner in self.avatar_names:
                    p.avatar = self.avatar_names[item.owner]
                store.personas.append(p)
                ids[item.owner] = p.id
            elif item.action == "same":
                ids[item.owner] = by_key.get(persona_key(p), p.id)
        st_default = self.plan.settings.get("default_persona")
        if st_default in ids:
            if store.default is None or store.get(store.default) is None:
                store.default = ids[st_default]
                self.report.settings_changed.append(message("migrate.set.persona", name=store.get(ids[st_default]).name))  # type: ignore[union-attr]
            elif store.default != ids[st_default]:
                self.report.settings_kept.append(message("migrate.kept.persona", name=store.default_persona.name))  # type: ignore[union-attr]
        for chat_dir, st_id in self.chat_personas:
            if st_id in ids:
                store.select_for_chat(chat_dir, ids[st_id])
        save_personas(store)

    def settings(self) -> None:
        if not self.plan.settings:
            return
        app = load_settings()
        changed, kept, notes = merge_settings(app, self.plan)
        self.report.settings_changed += changed
        self.report.settings_kept += kept
        self.plan.notes += notes
        for item in self.plan.of("settings"):
            if item.action != "error":
                item.action = "new" if changed else "same"
        prov = imported_provider(app, self.plan)
        if prov is not None and app.active_provider != prov.name:
            self.report.provider = prov.name  # added, not switched to (merge): the window offers the switch
        if changed:
            save_settings(app)


def run(plan: MigrationPlan, progress: Optional[Progress] = None, cancel: Cancel = None, *,
        dry_run: bool = False, lang: str = "zh") -> MigrationReport:
    """Import ``plan`` into the data folder (module doc). ``progress(done, total, label)`` is called before each
    item (label: 「种类「名字」」, e.g. 聊天记录「第一局」) and once at the end (``done == total``); ``cancel`` is a callable returning True or a
    :class:`threading.Event` — when it turns true, everything created so far is removed and the report says
    ``cancelled`` (nothing is left half-written; personas, settings and the index are untouched). ``dry_run``:
    write nothing, report what would be imported. The report is saved in ``<home>/导入记录/<time>/`` as
    ``报告.md`` and ``report.json`` (not for a dry run or a cancel). The extracted zip (``plan.temp_dir``) is
    removed at the end; the Markdown report is written in ``lang`` (``zh``: ``报告.md``, ``en``: ``report.md``).
    Raises only what cannot be reported per item (OSError when the data folder itself is not
    writable at the commit step — what was created is removed first — and KeyboardInterrupt, after the same
    clean-up)."""
    report = MigrationReport(plan=plan, started=int(time.time() * 1000), dry_run=dry_run)
    say = progress or (lambda done, total, label: None)
    if dry_run:
        for i in plan.items:
            if i.action in ("new", "rename", "update"):
                report.imported[i.kind] = report.imported.get(i.kind, 0) + 1
            elif i.action == "same":
                report.skipped[i.kind] = report.skipped.get(i.kind, 0) + 1
            elif i.action == "error":  # known damaged by the scan (st_chat.read_header, the size limits …)
                report.failed[i.kind] = report.failed.get(i.kind, 0) + 1
        report.finished = int(time.time() * 1000)
        plan.discard()
        return report
    r = _Run(plan, report, cancel)
    for i in plan.of("book"):
        if i.action in ("same", "new", "rename", "update"):
            folder = global_books_dir() if i.detail.get("global") else library_books_dir()
            r.book_file[i.name] = Path(i.detail["replaces"]) if i.detail.get("replaces") else folder / f"{i.target}.json"
    r.book_global = {i.name for i in plan.of("book") if i.detail.get("global")}
    for i in plan.of("card"):
        r.card_items[i.owner] = i
        if i.action == "same":
            r.cards[i.owner] = CardRef(name=i.target, dir=str(cards_root() / i.target))
    order = ("book", "preset", "card", "chat", "avatar", "group")
    work = [i for kind in order for i in plan.of(kind) if i.action in ("new", "rename", "update")]
    handlers = {"book": r.book, "preset": r.preset, "card": r.card, "chat": r.chat, "avatar": r.avatar,
                "group": r.group}
    updates = {"book": r.book_update, "card": r.card_update}
    total = len(work) + 1
    index_file = MigrationIndex.path()
    old_index = index_file.stat().st_size if index_file.is_file() else None
    try:
        for n, item in enumerate(work):
            if _is_cancelled(cancel):
                raise _Cancelled
            say(n, total, message("migrate.progress.item", kind=kind_label(item.kind), name=item.name))
            try:
                (updates if item.action == "update" else handlers)[item.kind](item)
            except StChatCancelled:
                raise _Cancelled from None
            except (OSError, ValueError, CardError, StChatError, SessionError, PresetError) as e:
                item.action, item.reason = "error", error_text(e)
        if _is_cancelled(cancel):
            raise _Cancelled
        say(total - 1, total, message("migrate.progress.settings"))
        r.link_known_cards()
        r.personas()
        r.settings()
    except _Cancelled:
        for p in reversed(r.created):
            _remove(p)
        r.put_back()
        _restore(index_file, old_index)
        report.cancelled = True
        report.created = []
        report.finished = int(time.time() * 1000)
        plan.discard()
        say(total, total, message("migrate.progress.cancelled"))
        return report
    except BaseException:
        for p in reversed(r.created):
            _remove(p)
        r.put_back()
        _restore(index_file, old_index)
        plan.discard()
        raise
    for i in plan.items:
        bucket = {"new": report.imported, "rename": report.imported, "update": report.imported, "same": report.skipped,
                  "error": report.failed}.get(i.action)
        if bucket is not None:
            bucket[i.kind] = bucket.get(i.kind, 0) + 1
    report.created = [_rel(p) for p in r.created]
    report.finished = int(time.time() * 1000)
    plan.discard()
    try:
        save_report(report, lang)
    except OSError as e:
        plan.problems.append(message("migrate.report_not_saved", error=e.strerror or str(e)))
    say(total, total, message("migrate.progress.done"))
    return report


def save_report(report: MigrationReport, lang: str = "zh") -> Path:
    """Write the Markdown report in ``lang`` (``报告.md`` in Chinese, ``report.md`` in English) and ``report.json``
    into a new ``<home>/导入记录/<YYYYmmdd-HHMMSS>/`` folder; sets and returns ``report.report_dir``. Raises
    OSError."""
    base = home_folder("import_reports")  # 导入记录/ or import-reports/ (core.paths)
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(report.started / 1000))
    d = base / numbered(stamp, lambda n: (base / n).exists())
    d.mkdir(parents=True)
    report.report_dir = str(d)
    atomic_write_text(d / ("report.md" if lang == "en" else "报告.md"), report.markdown(lang))
    atomic_write_text(d / "report.json", report.to_json(lang))
    return d
