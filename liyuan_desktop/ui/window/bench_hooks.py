"""Start-up bench with a status-bar card (``bench/ui_start.py --card PATH [--messages N]``; issue 15).

``liyuan --bench-start FILE`` normally opens the demo chat (``app._bench_start``). When the environment carries
:data:`CARD_ENV` (a card file: PNG, JSON or CHARX), :func:`open_card` runs instead: the card is imported into the
(fresh) data folder the way the window's 导入角色卡 does (``library.import_card`` on a worker thread), its regex
scripts are allowed (``cards.meta.set_card_scripts_allowed``: the answer 「是」 to the window's question), and a new
chat of it is opened in the window (``MainWindow.open_chat``). With :data:`MESSAGES_ENV` = N > 0 the chat is first
filled with N user/reply pairs: a SillyTavern chat file is written (each reply ends with MVU's
``<StatusPlaceHolderImpl/>``, the placeholder a status-bar card's display regex turns into its bar, and carries the
card's initial MVU variables as its ``variables[0]``, as TavernHelper saves them) and imported with
``st_import.import_st_folder`` — what 文件 → 导入 SillyTavern 聊天 does. A card whose display regex keeps the bar
to the last few messages (``maxDepth``) shows that many bars whatever N is; the stamp file says how many were built.

The chat is interactive when the send button is enabled, the display worker (regex scripts, ``regex_worker.py``)
is idle, and every status-bar frame on or near the screen has been built and has said hello to the host page (its
script ran: ``conversation.js`` "frame watchdog"; bars far from the screen are built when scrolled to, "frame
memory" there). :func:`open_card` returns then and adds to the caller's stamps ``card`` (its name), ``bars``
(status-bar blocks in the transcript), ``frames`` (live frames), ``deferred`` (bars not built yet, far from the
screen), ``asleep``, ``failed`` (frames stopped), ``messages`` and ``page_renderer`` (the process id of the host
page's renderer; the frames' is the other one).
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..infra import tasks

if TYPE_CHECKING:  # pragma: no cover
    from .main_window import MainWindow

CARD_ENV = "LIYUAN_BENCH_CARD"
"""The card file :func:`open_card` imports (set by bench/ui_start.py ``--card``)."""
MESSAGES_ENV = "LIYUAN_BENCH_MESSAGES"
"""How many user/reply pairs the bench chat is filled with before it opens (``--messages``; default 0)."""
NEAR_ENV = "LIYUAN_BENCH_NEAR_MARGIN"
"""A CSS margin (``"100% 0px"``; ``bench/ui_start.py --near-margin``): how far from the screen bars are built, for
measuring what each live frame costs (a huge margin builds every bar); bars go to sleep only beyond it too."""
PLACEHOLDER = "<StatusPlaceHolderImpl/>"
"""MVU's status-bar placeholder (MagVarUpdate; a status-bar card's display regex replaces it with its bar)."""
FRAME_WAIT_S = 40.0
"""After this many seconds :func:`open_card` gives up waiting and says why in the stamps (``error``)."""


def wanted() -> bool:
    """Whether this start should open a card (:data:`CARD_ENV` set) instead of the demo."""
    return bool(os.environ.get(CARD_ENV))


def st_chat_lines(card: Any, messages: int, variables: dict[str, Any] | None) -> list[dict[str, Any]]:
    """A SillyTavern chat (header + messages, one dict per ``.jsonl`` line) of ``card`` with its opening and
    ``messages`` user/reply pairs; every reply ends with :data:`PLACEHOLDER` and, when ``variables`` (a
    ``stat_data`` tree) is given, carries ``{"stat_data": variables}`` as the selected swipe's variables."""
    now = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())
    snap = [{"stat_data": variables}] if variables else None

    def msg(user: bool, text: str) -> dict[str, Any]:
        m: dict[str, Any] = {"name": "User" if user else card.name, "is_user": user, "is_system": False,
                             "send_date": now, "mes": text, "swipes": [text], "swipe_id": 0}
        if snap and not user:
            m["variables"] = snap
        return m

    opening = card.first_mes or f"{card.name}。"
    if PLACEHOLDER not in opening:
        opening += "\n\n" + PLACEHOLDER
    lines: list[dict[str, Any]] = [{"user_name": "User", "character_name": card.name, "create_date": now,
                                    "chat_metadata": {}}, msg(False, opening)]
    for i in range(messages):
        lines.append(msg(True, f"第 {i + 1} 句：我们接着走吧。"))
        lines.append(msg(False, f"（第 {i + 1} 段回复）她点点头，推开了门。\n\n{PLACEHOLDER}"))
    return lines


def _prepare(card_path: str, messages: int) -> tuple[Any, Path]:
    """On a worker thread: import the card, allow its scripts, make the chat folder (filled when ``messages``).
    Returns (card ref, chat folder)."""
    from ...core.cards import library
    from ...core.cards.meta import set_card_scripts_allowed
    from ...core.chat import Chat
    from ...core.chat.st_import import import_st_folder
    from ...core.ledger.mvu.initvar import initial_tree
    from .chat_flow import _NoModel

    ref = library.import_card(card_path)
    set_card_scripts_allowed(Path(ref.dir), True)
    card = ref.load()
    d = library.new_chat_dir(ref, "bench")
    if messages <= 0:
        Chat.create(d, card, _NoModel(""))
        return ref, d
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "bench.jsonl"
        src.write_text("\n".join(json.dumps(line, ensure_ascii=False)
                                 for line in st_chat_lines(card, messages, initial_tree(card))) + "\n",
                       encoding="utf-8")
        import_st_folder(src, card, d)
    return ref, d


async def _page(win: "MainWindow", script: str) -> Any:
    box: list = []
    win.view.eval_js(script, box.append)
    while not box:
        await asyncio.sleep(0.005)
    return box[0]


async def open_card(win: "MainWindow", stamps: dict[str, Any]) -> None:
    """Import the card named by :data:`CARD_ENV`, open a new (filled) chat of it in ``win`` and wait until it is
    interactive (module doc); adds ``card``, ``bars``, ``frames``, ``deferred``, ``asleep``, ``failed`` and
    ``messages`` to ``stamps``; when the frames do not all say hello within :data:`FRAME_WAIT_S` seconds, ``error``
    (what the page said last) instead. RuntimeError when the chat cannot be opened."""
    from ...core.cards import library

    messages = int(os.environ.get(MESSAGES_ENV, "0") or 0)
    card_path = os.environ[CARD_ENV]
    ref, d = await tasks.run(lambda _w: _prepare(card_path, messages))
    win.refresh_tree()
    if os.environ.get(NEAR_ENV):  # an experiment: how far from the screen bars are built (conversation.js)
        win.view.eval_js("liyuan.setFrameMemory(%s)" % json.dumps({"nearMargin": os.environ[NEAR_ENV],
                                                                     "farMargin": os.environ[NEAR_ENV]}))
    if not win.open_chat(ref, library.ChatRef(name=d.name, dir=str(d))):
        raise RuntimeError(f"could not open the bench chat {d}")
    t0 = time.monotonic()
    probe = ("JSON.stringify({w: JSON.parse(window.liyuan.watchState()), m: JSON.parse(window.liyuan.frameMemory()), "
             "wraps: document.querySelectorAll('#log .TH-render').length, "
             "failed: document.querySelectorAll('#log .th-failed').length})")
    s: dict[str, Any] = {}
    while True:
        if win.chat is not None and win.send_btn.isEnabled() and win.display_worker.idle():
            s = json.loads(await _page(win, probe))
            m = s["m"]
            if not s["w"]["quiet"] and not m["unseen"] and not m["near"]:
                stamps.update(card=ref.name, frames=m["live"], bars=s["wraps"], failed=s["failed"],
                              deferred=m["deferred"], asleep=m["asleep"], messages=messages,
                              page_renderer=win.view.page().renderProcessPid())
                return
        if time.monotonic() - t0 > FRAME_WAIT_S:
            stamps.update(card=ref.name, error=f"the status-bar frames did not all say hello: {s}")
            return
        await asyncio.sleep(0.01)
