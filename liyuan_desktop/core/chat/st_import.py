"""A SillyTavern chat file (``.jsonl``) imported as a new Liyuan chat: the file format is read by
:mod:`core.cards.st_chat` (the one place for that format); this module writes the new chat folder all or nothing
(:func:`import_st_folder`) and opens it as a :class:`Chat` (:func:`import_st_chat`). It lives with the chat facade
because it creates a chat (cards/ sits below chat/).

Long imports (issue 15 item 11: a 100,000-message chat takes seconds) report progress and can be cancelled:
``progress(done, total)`` in per-mille of the whole import (:data:`PROGRESS_TOTAL`; reading the file is the first
40 %, writing the session the rest) and ``cancelled()`` → :class:`~core.cards.st_chat.StChatCancelled`. The folder
is written under a temporary name beside its destination and renamed into place at the end, so a cancel, an error
or a kill never leaves a half-written chat where the chat list looks, and the list never sees one being written (a
killed import leaves only a hidden ``.liyuan-import-*`` folder, removed by a later import into the same place a day on)."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import time
from pathlib import Path
from typing import Callable, Optional

from ..cards import Card
from ..cards.st_chat import Cancelled, Progress, read_st_chat, write_session
from ..fsutil import atomic_write_text
from ..llm.types import ChatModel
from ..messages import message
from ..session.tree import SessionError
from .facade import Chat

#: ``progress`` totals of :func:`import_st_folder` (per-mille).
PROGRESS_TOTAL = 1000
_READ_SHARE = 400
_TMP_PREFIX = ".liyuan-import-"
_STALE_S = 24 * 3600


def _scaled(progress: Progress, lo: int, hi: int) -> Optional[Callable[[int, int], None]]:
    """A step's ``progress(done, total)`` mapped onto ``[lo, hi]`` of :data:`PROGRESS_TOTAL`."""
    if progress is None:
        return None
    return lambda done, total: progress(lo + (hi - lo) * done // max(1, total), PROGRESS_TOTAL)


def _sweep(parent: Path) -> None:
    """Remove temporary folders a killed import left in ``parent`` more than :data:`_STALE_S` ago (a younger one may
    belong to an import still running in another process); never raises."""
    try:
        for d in parent.iterdir():
            if d.name.startswith(_TMP_PREFIX) and d.is_dir() and time.time() - d.stat().st_mtime > _STALE_S:
                shutil.rmtree(d, ignore_errors=True)
    except OSError:
        pass


def import_st_folder(path: str | Path, card: Card, dest_dir: str | Path, title: str = "",
                     progress: Progress = None, cancelled: Cancelled = None) -> list[str]:
    """Write an ST chat file as a new chat of ``card`` in ``dest_dir`` (which must not hold a session; an empty
    folder is fine) without opening it; returns what the import noticed (skipped lines, repaired swipes, another
    card's chat). All or nothing: the folder is built as a hidden sibling and renamed into place last.
    ``progress``/``cancelled``: see the module doc. Raises :class:`~core.cards.st_chat.StChatError` for a file that
    is not a chat (:class:`~core.cards.st_chat.StChatCancelled` when cancelled), SessionError when ``dest_dir``
    already holds a session, OSError when the disk refuses; nothing is left behind after any of them."""
    d = Path(dest_dir)
    if (d / "session.jsonl").exists():
        raise SessionError(message("stchat.session_exists", path=str(d / "session.jsonl")))
    st = read_st_chat(path, _scaled(progress, 0, _READ_SHARE), cancelled)
    d.parent.mkdir(parents=True, exist_ok=True)
    _sweep(d.parent)
    # built one level down in a hidden box, so a chat list scanning the folder meanwhile sees no session there
    box = d.parent / f"{_TMP_PREFIX}{secrets.token_hex(4)}"
    tmp = box / "chat"
    tmp.mkdir(parents=True)
    try:
        tree = write_session(st, tmp / "session.jsonl", card_name=card.name, card_path=card.path, title=title,
                             progress=_scaled(progress, _READ_SHARE, PROGRESS_TOTAL - 10), cancelled=cancelled,
                             language=card.language)
        # the folder's meta.json as Chat.write_meta writes it, so a chat list never has to read the session
        atomic_write_text(tmp / "meta.json", json.dumps(
            {"mode": tree.header.mode, "leaf": tree.leaf_id, "title": tree.header.title, "card": card.name,
             "updated": int(time.time() * 1000)}, ensure_ascii=False, indent=1))
        if d.exists():
            d.rmdir()  # an empty folder made for it (OSError when it is not empty: nothing is overwritten)
        os.rename(tmp, d)
    except BaseException:
        shutil.rmtree(box, ignore_errors=True)
        raise
    shutil.rmtree(box, ignore_errors=True)
    if progress is not None:
        progress(PROGRESS_TOTAL, PROGRESS_TOTAL)
    return list(tree.load_warnings)


def import_st_chat(path: str | Path, card: Card, dest_dir: str | Path, model: ChatModel,
                   scribe_model: Optional[ChatModel] = None, title: str = "", progress: Progress = None,
                   cancelled: Cancelled = None) -> Chat:
    """Import an ST chat file as a new Liyuan chat in ``dest_dir`` (e.g. ``paths.chat_dir(card.name, stem)``) and
    open it (:func:`import_st_folder`, then :meth:`Chat.open`). The persona is the chat's ``user_name``. Warnings
    (skipped lines, repaired swipes, another card's chat) are in ``chat.load_warnings``. Raises :class:`StChatError`
    for a file that is not a chat (:class:`StChatCancelled` when ``cancelled()``), SessionError when ``dest_dir``
    already holds a session, OSError when the disk refuses (nothing is left behind then)."""
    warnings = import_st_folder(path, card, dest_dir, title, progress, cancelled)
    chat = Chat.open(Path(dest_dir), card, model, scribe_model)
    chat.tree.load_warnings.extend(warnings)  # the import's own findings (skipped lines …)
    return chat
