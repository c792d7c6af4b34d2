"""Links from outline chapters to chapter files (issue 28): ``大纲链接.json`` in the chat folder, beside ``大纲.md``.

Each outline chapter has a stable id in the Markdown (``{id=c1a2b3}``, :func:`core.story.outline_tree.ensure_ids`);
this sidecar maps that id to one file of ``正文/`` and remembers the SHA-256 of the file's content when it was
linked or last seen. So:

- renaming the *chapter* in the outline keeps the link (the id does not change);
- renaming the *file* through the engine (:meth:`core.chat.facade.Chat.rename_chapters`) moves the link;
- renaming the file any other way (a file manager, an older window) is healed on the next read: a link whose file is
  gone follows the one chapter file, linked to nothing else, whose content has the remembered hash
  (:func:`resolve`), and the sidecar is rewritten;
- a file is linked to at most one chapter (linking it elsewhere moves it).

A hand-written ``file=`` attribute in the outline is honoured for a chapter the sidecar does not link (hand edits
still read). The sidecar is a small JSON object ``{"version": 1, "links": {id: {"file": name, "sha": hex}}}``,
written atomically; a damaged or missing one reads as no links (nothing is lost but the links themselves, which
``file=`` and the agent's next ``write`` rebuild). It is not part of the checkpoints: a restore brings back the
outline (ids included) and the files; a link to a file the restore removed reads as unlinked.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Optional

from pydantic import Field, ValidationError

from ..deferred import DeferredModel
from ..errors import ToolError
from ..fsutil import atomic_write_text
from .chapters import chapter_heading
from .checkpoint_model import scan_chapters
from .layout import side_file, story_dir
from .outline import Outline, outline_path, parse_outline, set_chapter
from .outline_tree import ensure_ids

#: The sidecar's name in the chat folder.
LINKS_FILE = "大纲链接.json"
#: A sidecar bigger than this is not read (a book has thousands of chapters, not millions).
LINKS_MAX_BYTES = 4_000_000


class Link(DeferredModel):
    """One link: ``file`` (a name in ``正文/``) and ``sha`` (hex SHA-256 of its content when last seen; "" unknown)."""

    file: str
    sha: str = ""


class Links(DeferredModel):
    """The sidecar: ``links`` {outline chapter id: :class:`Link`}."""

    version: int = 1
    links: dict[str, Link] = Field(default_factory=dict)

    def chapter_of(self, file: str) -> Optional[str]:
        """The chapter id ``file`` is linked to, or None."""
        return next((cid for cid, ln in self.links.items() if ln.file == file), None)


def links_path(chat_dir: Path) -> Path:
    """``<chat folder>/大纲链接.json`` (``outline-links.json`` in the English layout, :func:`.layout.side_file`)."""
    return side_file(chat_dir, LINKS_FILE)


def load_links(chat_dir: Path) -> Links:
    """The chat's links (empty when the sidecar is missing, too big or damaged)."""
    p = links_path(chat_dir)
    try:
        if p.is_symlink() or p.stat().st_size > LINKS_MAX_BYTES:
            return Links()
        return Links.model_validate(json.loads(p.read_text("utf-8")))
    except (OSError, ValueError, ValidationError):
        return Links()


def save_links(chat_dir: Path, links: Links) -> None:
    """Write the sidecar atomically. OSError."""
    atomic_write_text(links_path(chat_dir), json.dumps(links.model_dump(), ensure_ascii=False, indent=1))


def file_sha(story_dir: Path, name: str) -> str:
    """Hex SHA-256 of chapter ``name``'s bytes, "" when unreadable."""
    try:
        return hashlib.sha256((Path(story_dir) / name).read_bytes()).hexdigest()
    except OSError:
        return ""


def chapter_files(story_dir: Path) -> list[str]:
    """The chapter files of ``正文/`` by name (the checkpoints' rule: plain ``.md`` files directly inside)."""
    if not Path(story_dir).is_dir():
        return []
    entries, _ = scan_chapters(Path(story_dir))
    return sorted(e.name for e in entries)


def link(links: Links, chapter_id: str, file: str, story_dir: Path) -> Links:
    """``links`` with chapter ``chapter_id`` linked to ``file`` (any other chapter's link to that file dropped; the
    chapter's previous link replaced). The caller saves."""
    out = links.model_copy(deep=True)
    for cid in [c for c, ln in out.links.items() if ln.file == file and c != chapter_id]:
        del out.links[cid]
    out.links[chapter_id] = Link(file=file, sha=file_sha(story_dir, file))
    return out


def unlink(links: Links, chapter_id: Optional[str] = None, file: Optional[str] = None) -> Links:
    """``links`` without the link of ``chapter_id`` and/or the link to ``file``. The caller saves."""
    out = links.model_copy(deep=True)
    for cid in [c for c, ln in out.links.items() if c == chapter_id or (file is not None and ln.file == file)]:
        del out.links[cid]
    return out


def rename(links: Links, mapping: dict[str, str]) -> Links:
    """``links`` after files were renamed ``{old: new}``."""
    out = links.model_copy(deep=True)
    for ln in out.links.values():
        if ln.file in mapping:
            ln.file = mapping[ln.file]
    return out


def resolve(outline: Outline, links: Links, story_dir: Path) -> tuple[dict[str, str], Links, bool]:
    """Each outline chapter's file: ``({chapter id or "#<index>": file}, links, healed)``.

    Order: the sidecar's link when its file exists; else, when the file is gone, the one unlinked chapter file
    whose content has the remembered hash (the link follows it: ``healed`` True and the returned ``links`` say so);
    else the chapter's hand-written ``file=`` when that file exists and no other chapter links it. A chapter
    without an id is keyed ``#<0-based index>``. Links of ids the outline no longer has are kept (a restore may
    bring the chapter back)."""
    files = chapter_files(story_dir)
    present = set(files)
    out = links.model_copy(deep=True)
    healed = False
    taken = {ln.file for ln in out.links.values() if ln.file in present}
    by_hash: Optional[dict[str, list[str]]] = None
    result: dict[str, str] = {}
    for c in outline.chapters():
        key = c.id or f"#{c.index}"
        ln = out.links.get(c.id) if c.id else None
        if ln is not None and ln.file in present:
            result[key] = ln.file
            continue
        if ln is not None and ln.sha:
            if by_hash is None:
                by_hash = {}
                for f in files:
                    if f not in taken:
                        by_hash.setdefault(file_sha(story_dir, f), []).append(f)
            cands = [f for f in by_hash.get(ln.sha, []) if f not in taken]
            if len(cands) == 1:
                ln.file = cands[0]
                taken.add(cands[0])
                result[key] = cands[0]
                healed = True
                continue
        if c.file and c.file in present and (c.file not in taken or out.chapter_of(c.file) in (None, c.id)):
            result[key] = c.file
            taken.add(c.file)
    return result, out, healed


def refresh_hashes(links: Links, story_dir: Path) -> bool:
    """Update each link's remembered hash to its file's content now (so a later rename is followed). Returns True
    when one changed."""
    changed = False
    for ln in links.links.values():
        h = file_sha(story_dir, ln.file)
        if h and h != ln.sha:
            ln.sha = h
            changed = True
    return changed


def _outline_text(chat_dir: Path) -> str:
    p = outline_path(chat_dir)
    if not p.is_file() or p.is_symlink():
        raise ToolError("not_found", "这一局还没有大纲（大纲.md）。", en="This story has no outline yet.")
    return p.read_text("utf-8", errors="replace")


def _norm(name: str) -> str:
    name = (name or "").strip().replace("\\", "/")
    return name.rsplit("/", 1)[-1]


def link_chapter(chat_dir: Path, ref: str | int, file: str, *, must_exist: bool = False) -> Outline:
    """Link outline chapter ``ref`` (id, 1-based number, title, file) to chapter file ``file`` (a name in
    ``正文/``; a path's folders are dropped) and save: ids are added to the outline where missing, the chapter's
    hand-written ``file=`` is dropped (the sidecar is the one link), another chapter linked to the file loses it.
    ``file`` "" unlinks the chapter. Returns the outline as saved (``file`` fields as written, not resolved).
    Raises ToolError ``not_found`` (no outline, no chapter, or — ``must_exist`` — no such file), OSError."""
    text = ensure_ids(_outline_text(chat_dir))
    c = parse_outline(text).find(ref)
    name = _norm(file)
    story = story_dir(chat_dir)
    if name and must_exist and name not in chapter_files(story):
        raise ToolError("not_found", f"正文里没有「{name}」。", en=f"The chapter folder has no \"{name}\".")
    links = load_links(chat_dir)
    links = link(links, c.id, name, story) if name else unlink(links, chapter_id=c.id)
    if "file" in c.attrs:
        text = set_chapter(text, c.id, file="")
    if text != _outline_text(chat_dir):
        atomic_write_text(outline_path(chat_dir), text)
    save_links(chat_dir, links)
    return parse_outline(text)


def unlink_file(chat_dir: Path, file: str) -> Optional[str]:
    """Unlink chapter file ``file`` from whichever outline chapter links it (sidecar and hand-written ``file=``).
    Returns that chapter's id ("" for a chapter without one), or None when the file was not linked. OSError."""
    name = _norm(file)
    links = load_links(chat_dir)
    cid = links.chapter_of(name)
    if cid is not None:
        save_links(chat_dir, unlink(links, file=name))
    p = outline_path(chat_dir)
    if p.is_file() and not p.is_symlink():
        text = p.read_text("utf-8", errors="replace")
        hand = next((c for c in parse_outline(text).chapters() if c.attrs.get("file") and c.file == name), None)
        if hand is not None:
            atomic_write_text(p, set_chapter(text, hand.index + 1, file=""))
            cid = cid if cid is not None else hand.id
    return cid


def _title_key(s: str) -> str:
    h = chapter_heading(s)
    t = h[1] if h is not None and h[1] else s
    return "".join(ch for ch in t if ch.isalnum())


def link_written(chat_dir: Path, name: str, created: bool) -> Optional[str]:
    """After the agent's ``write`` of chapter ``name``: when the chat has an outline and the file is linked to no
    chapter, link it to the outline chapter it was written for — the unlinked chapter whose title is the file's
    title (``003-雨夜.md`` ↔ ``## 第三章 雨夜``), else the unlinked chapter numbered as the file (``003-…`` ↔ the
    3rd chapter), else, for a new file, the first unlinked chapter in book order — and mark that chapter
    ``drafted`` when it was ``planned``. A file already linked only has its remembered hash updated. Returns the
    chapter id linked, or None (no outline, nothing fitting). Never raises for a damaged outline or sidecar
    (OSError only when the disk refuses the write)."""
    p = outline_path(chat_dir)
    if not p.is_file() or p.is_symlink():
        return None
    story = story_dir(chat_dir)
    text = p.read_text("utf-8", errors="replace")
    outline = parse_outline(text)
    if not outline.chapters():
        return None
    links = load_links(chat_dir)
    resolved, links, _healed = resolve(outline, links, story)
    owner = next((k for k, f in resolved.items() if f == name), None)
    if owner is not None:
        if not owner.startswith("#") and owner in links.links:
            links.links[owner].sha = file_sha(story, name)
            save_links(chat_dir, links)
        return owner if not owner.startswith("#") else None
    free = [c for c in outline.chapters() if (c.id or f"#{c.index}") not in resolved]
    stem = name[:-3] if name.lower().endswith(".md") else name
    num, _, rest = stem.partition("-")
    key = _title_key(rest if num.isdigit() else stem)
    pick = next((c for c in free if key and _title_key(c.title) == key), None)
    if pick is None and num.isdigit() and int(num) > 0:
        pick = next((c for c in free if c.index + 1 == int(num)), None)
    if pick is None and created and not (num.isdigit() and int(num) == 0):
        pick = free[0] if free else None
    if pick is None:
        return None
    text = ensure_ids(text)
    pick = parse_outline(text).chapters()[pick.index]
    if pick.status == "planned":
        text = set_chapter(text, pick.id, status="drafted")
    atomic_write_text(p, text)
    save_links(chat_dir, link(links, pick.id, name, story))
    return pick.id


__all__ = ["LINKS_FILE", "Link", "Links", "chapter_files", "file_sha", "link", "links_path", "load_links",
           "refresh_hashes", "rename", "resolve", "save_links", "unlink", "follow_renames", "link_chapter", "link_written",
           "unlink_file"]


def follow_renames(chat_dir: Path, mapping: dict[str, str]) -> None:
    """After chapter files were renamed ``{old: new}``: move the sidecar's links along (nothing when the chat has
    no sidecar; a sidecar that cannot be written is healed by hash on the next read)."""
    if not mapping or not links_path(chat_dir).is_file():
        return
    links = load_links(chat_dir)
    moved = rename(links, mapping)
    if moved != links:
        try:
            save_links(chat_dir, moved)
        except OSError:
            pass
