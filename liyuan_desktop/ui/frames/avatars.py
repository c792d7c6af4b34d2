"""Avatars (issue 17): SillyTavern players recognise characters by face. The card's picture is shown in the card list
and beside the character's messages in the conversation, the persona's beside the user's; a card or persona without
a picture gets a drawn default — its first letter on a colour derived from its name (the same name always gets the
same colour, as SillyTavern's default avatars are stable per character).

Pictures: the card's own PNG (``core.cards.export.card_image``: the imported PNG, or a CHARX/asset icon); a persona's
``avatar`` file when it names an image that exists (absolute, or in the persona-avatar folder the SillyTavern import
fills — ``<home>/人设头像/`` or ``<home>/persona-avatars/``, ``core.paths.home_folder`` — or under ``<home>/头像/`` /
``<home>/avatars/``; the import keeps the file name). Each is cut to a centred square (card art is usually 2:3, the face near
the top: the square is taken from the top third) and scaled to :data:`SIZE` px.

The conversation page gets them as ``data:`` URLs (its CSP allows ``img-src data:`` only; card frames are
unaffected) through ``ConversationView.set_avatars``. Images are cached by file and modification time, so the
list and each chat open decode a picture once.
"""

from __future__ import annotations

import base64
import hashlib
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QRect, Qt
from PySide6.QtGui import QColor, QFont, QIcon, QImage, QPainter, QPixmap

if TYPE_CHECKING:  # pragma: no cover
    from ...core.chat import Chat

log = logging.getLogger(__name__)

SIZE = 96  # px of the square avatar handed out (shown at 40 px in the page, 24 px in the list: sharp on HiDPI)
_cache: dict[tuple[str, float, int], QImage] = {}


def name_colour(name: str) -> QColor:
    """A calm colour derived from ``name`` (hue from its SHA-1; fixed saturation and lightness)."""
    h = int.from_bytes(hashlib.sha1((name or "?").encode("utf-8")).digest()[:2], "big") % 360
    return QColor.fromHsl(h, 110, 120)


def default_avatar(name: str, size: int = SIZE) -> QImage:
    """The drawn default: the first letter of ``name`` (upper-cased; "?" for an empty name) on a circle of
    :func:`name_colour`."""
    img = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    img.fill(Qt.GlobalColor.transparent)
    p = QPainter(img)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    p.setPen(Qt.PenStyle.NoPen)
    p.setBrush(name_colour(name))
    p.drawEllipse(0, 0, size, size)
    letter = (name.strip()[:1] or "?").upper()
    f = QFont()
    f.setPixelSize(int(size * 0.5))
    f.setBold(True)
    p.setFont(f)
    p.setPen(QColor("white"))
    p.drawText(QRect(0, 0, size, size), Qt.AlignmentFlag.AlignCenter, letter)
    p.end()
    return img


def square(img: QImage, size: int = SIZE) -> QImage:
    """A centred square of ``img`` (from the top third of a tall picture, where a portrait's face is), scaled."""
    w, h = img.width(), img.height()
    side = min(w, h)
    x = (w - side) // 2
    y = min((h - side) // 3, h - side) if h > w else 0
    return img.copy(x, y, side, side).scaled(size, size, Qt.AspectRatioMode.IgnoreAspectRatio,
                                             Qt.TransformationMode.SmoothTransformation)


def _from_bytes(data: Optional[bytes], key: tuple[str, float, int]) -> Optional[QImage]:
    if key in _cache:
        return _cache[key]
    img = QImage()
    if not data or not img.loadFromData(data):
        return None
    out = square(img)
    _cache[key] = out
    return out


def card_avatar(card: Any, name: str = "") -> QImage:
    """The avatar of a card (``core.cards.Card``, or a library ``CardRef`` whose card is read only when its
    picture is not cached), or the drawn default for ``name`` / the card's name. Never raises for a damaged card
    (the default is drawn)."""
    from ...core.cards.export import card_image

    key: Optional[tuple[str, float, int]] = None
    try:
        if hasattr(card, "card_file"):  # a CardRef
            name = name or card.name
            folder = Path(card.dir)
        else:
            name = name or card.name
            folder = Path(card.path).parent if card.path else None
        if folder is not None:
            probe = folder / "original.png" if (folder / "original.png").exists() else folder / "card.json"
            st = probe.stat()
            key = (str(probe), st.st_mtime, st.st_size)
            if key in _cache:
                return _cache[key]
        if key is not None and Path(key[0]).name == "original.png":
            # the picture the user imported, kept byte for byte: read it, not the card (whose book can be 50,000
            # entries: parsing it for an icon cost 780 ms on the UI thread)
            data = Path(key[0]).read_bytes()
            img = _from_bytes(data if data.startswith(b"\x89PNG\r\n\x1a\n") else None, key)
        else:
            if hasattr(card, "card_file"):
                card = card.load()
            img = _from_bytes(card_image(card), key or ("mem:" + name, 0.0, 0))
    except Exception as e:  # a card that cannot be read: the default
        log.debug("no card picture for %s: %s", name, e)
        img = None
    if img is None:
        img = default_avatar(name)
        if key is not None:
            _cache[key] = img
    return img


def persona_avatar(persona: Any, name: str) -> QImage:
    """The avatar of a persona (``core.cards.personas.Persona`` or None) called ``name`` (module doc)."""
    from ...core.paths import home, home_folder

    file = str(getattr(persona, "avatar", "") or "")
    if file:  # the persona-avatar folder the SillyTavern import fills: 人设头像/ or persona-avatars/ (core.paths)
        for cand in (Path(file), home_folder("persona_avatars") / file, home() / "头像" / file, home() / "avatars" / file):
            try:
                if cand.is_file():
                    st = cand.stat()
                    img = _from_bytes(cand.read_bytes(), (str(cand), st.st_mtime, st.st_size))
                    if img is not None:
                        return img
            except OSError:
                continue
    return default_avatar(name)


def data_url(img: QImage) -> str:
    """``img`` as a ``data:image/png;base64,…`` URL."""
    ba = QByteArray()
    buf = QBuffer(ba)
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    img.save(buf, "PNG")
    buf.close()
    return "data:image/png;base64," + base64.b64encode(bytes(ba.data())).decode("ascii")


def icon(img: QImage) -> QIcon:
    """A list icon of ``img`` (round: the picture clipped to a circle)."""
    size = img.width()
    out = QPixmap(size, size)
    out.fill(Qt.GlobalColor.transparent)
    p = QPainter(out)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    from PySide6.QtGui import QPainterPath

    path = QPainterPath()
    path.addEllipse(0, 0, size, size)
    p.setClipPath(path)
    p.drawImage(0, 0, img)
    p.end()
    return QIcon(out)


def card_icon(card_ref: Any) -> QIcon:
    """The card list's icon for a library card."""
    return icon(card_avatar(card_ref))


def chat_avatars(chat: Chat) -> dict[str, str]:
    """``{"char": data URL, "user": data URL}`` for an open chat: its card's picture, its persona's."""
    from ...core.cards.personas import load_personas

    info = chat.persona_info()
    persona = None
    try:
        store = load_personas()
        persona = store.get(info.get("id")) or store.find(info.get("name") or "")
    except Exception:
        persona = None
    from ..infra.i18n import tr

    # no persona of its own (the language's default user name): the letter of the window's "You" / 「你」 (issue 32)
    name = chat.user_label or tr("conv.you")
    return {"char": data_url(card_avatar(chat.card)), "user": data_url(persona_avatar(persona, name))}


def install_avatars(win: Any) -> None:
    """Keep the conversation's avatars in step with the open chat (set after each open and branch switch: the
    window's busy flag falls then) and give the card list its icons (``win.tree`` rows of cards)."""
    shown: list[Any] = [None, None]

    def sync(busy: bool) -> None:
        chat = win.chat
        if busy or chat is None:
            return
        key = (id(chat), chat.persona)
        if shown[0] == key:
            return
        shown[0] = key
        try:
            av = chat_avatars(chat)
        except Exception as e:
            log.warning("avatars: %s", e)
            return
        win.view.set_avatars(av["char"], av["user"])

    win.busyChanged.connect(sync)


def decorate_tree(win: Any) -> None:
    """Icons for the card rows of ``win.tree`` (after ``refresh_tree``)."""
    tree = win.tree
    for i in range(tree.topLevelItemCount()):
        it = tree.topLevelItem(i)
        data = it.data(0, Qt.ItemDataRole.UserRole)
        if data and data[0] == "card":
            it.setIcon(0, card_icon(data[1]))


__all__ = ["SIZE", "card_avatar", "card_icon", "chat_avatars", "data_url", "decorate_tree", "default_avatar",
           "icon", "install_avatars", "name_colour", "persona_avatar", "square"]
