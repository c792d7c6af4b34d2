"""Shared pieces of the card readers: the error type, size limits, strict JSON decoding with catalog messages
(``core/messages.py``: every error carries its key) and file-type sniffing. Internal module; the public names are re-exported by :mod:`liyuan_desktop.core.cards`."""

from __future__ import annotations

import json
from typing import Any, Optional

from ..messages import Msg, message

MiB = 1024 * 1024

#: Largest card JSON we accept, in bytes, wherever it comes from: a .json file, one PNG text chunk (raw or after
#: zTXt/iTXt decompression), ``card.json`` inside a CHARX. Real cards are 10 KB – a few MB; 64 MiB is far above
#: any real card and keeps a hostile file from making us allocate gigabytes.
MAX_CARD_BYTES = 64 * MiB


class CardError(Exception):
    """A card file cannot be read (or written). ``str(err)`` is ONE line in Chinese that names the file and the
    problem; ``args[0]`` is a :class:`~liyuan_desktop.core.messages.Msg` (``messages.render(err, lang)`` gives the
    line in the user's language), fit for the UI and for ``liyuan: …`` on stderr."""

    def __init__(self, message: str):
        msg = str(message)
        if len(msg.splitlines()) > 1:
            super().__init__(" ".join(msg.splitlines()))
        else:  # a Msg stays one (core/messages.py): the front ends render it in the user's language
            super().__init__(message if isinstance(message, Msg) else msg)


def shown(text: str, limit: int = 60) -> str:
    """``text`` safe to put inside a one-line message: control characters escaped, cut to ``limit`` characters."""
    out = "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in text[:limit])
    return out + ("…" if len(text) > limit else "")


def fail(label: str, msg: Msg) -> CardError:
    """``CardError`` for ``<label>：<msg>`` (callers ``raise fail(...)``): ``msg`` is a catalog message
    (``cardfile.*``/``png.*``/``charx.*``), ``label`` the file's name (a value, or the ``cardfile.label`` Msg). The
    error carries the ``labelled`` :class:`~liyuan_desktop.core.messages.Msg` — its text is the Chinese line, and
    ``messages.render(err, "en")`` gives ``"<label>: <msg in English>"`` by key (issue 32: nothing is matched back
    from the Chinese). Without a label the error carries ``msg`` itself."""
    if not label:
        return CardError(msg)
    return CardError(message("labelled", label=label, msg=msg))


_JSON_MSGS = {  # Python's JSON error → its catalog key (the words in every language)
    "Expecting value": "json.expecting_value",
    "Unterminated string starting at": "json.unterminated",
    "Expecting property name enclosed in double quotes": "json.property_quotes",
    "Expecting ',' delimiter": "json.comma",
    "Expecting ':' delimiter": "json.colon",
    "Extra data": "json.extra",
    "Invalid control character at": "json.control",
    "Invalid \\escape": "json.escape",
    "Invalid \\uXXXX escape": "json.u_escape",
}


def json_error_words(msg: str) -> Msg | str:
    """Python's ``json`` error text (``e.msg``) in words: the catalog message for the known ones (Chinese
    「这里缺少值」, English "a value is missing here"…), else the text as it is."""
    for en, key in _JSON_MSGS.items():
        if msg.startswith(en):
            return message(key)
    return msg


def parse_json_bytes(data: bytes, label: str, where: Msg | str = "") -> Any:
    """Decode UTF-8 (a BOM is allowed) and parse JSON. ``where`` prefixes the message: "" or a catalog message
    naming the part of the file (``cardfile.where.png``/``cardfile.where.charx``).

    Raises :class:`CardError` for invalid UTF-8, empty text, invalid JSON (line/column given), nesting too deep
    or numbers too long. A JSON-lines chat file is recognised and named as such."""
    if len(data) > MAX_CARD_BYTES:
        raise fail(label, message("cardfile.too_big_in", where=where, mib=len(data) // MiB, max=MAX_CARD_BYTES // MiB))
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise fail(label, message("cardfile.not_utf8", where=where, pos=e.start)) from None
    if not text.strip():
        raise fail(label, message("cardfile.empty_in", where=where))
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        if e.msg == "Extra data" and _looks_like_chat_jsonl(text):
            raise fail(label, message("cardfile.chat_jsonl")) from None
        raise fail(label, message("cardfile.bad_json", where=where, line=e.lineno, col=e.colno,
                                  why=json_error_words(e.msg))) from None
    except RecursionError:
        raise fail(label, message("cardfile.too_deep", where=where)) from None
    except ValueError as e:  # e.g. an integer with more digits than Python's conversion limit
        why = message("cardfile.digits") if "digits" in str(e) else shown(str(e))
        raise fail(label, message("cardfile.bad_value", where=where, why=why)) from None


def _looks_like_chat_jsonl(text: str) -> bool:
    first = text.lstrip().split("\n", 1)[0]
    try:
        head = json.loads(first)
    except (ValueError, RecursionError):
        return False
    return isinstance(head, dict) and ("user_name" in head or "character_name" in head or "mes" in head)


def sniff_foreign(head: bytes) -> Optional[str]:
    """Name of a well-known non-card file type from its first bytes ("JPEG", "WEBP", "GIF", … — a format's own
    name, or a ``filekind.*`` catalog message such as "PDF 文件"/"a PDF file"), else None. PNG, zip and text are
    *not* reported here."""
    if head.startswith(b"\xff\xd8\xff"):
        return "JPEG"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "GIF"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "WEBP"
    if head.startswith(b"BM") and len(head) >= 14 and head[6:10] == b"\x00\x00\x00\x00":
        return "BMP"
    if head.startswith((b"II*\x00", b"MM\x00*")):
        return "TIFF"
    if head[4:8] == b"ftyp":
        brand = head[8:12]
        if brand in (b"avif", b"avis"):
            return "AVIF"
        if brand in (b"heic", b"heix", b"mif1", b"msf1"):
            return "HEIC"
        return message("filekind.video")
    if head.startswith(b"%PDF"):
        return message("filekind.pdf")
    if head.startswith(b"\x1f\x8b"):
        return message("filekind.gzip")
    if head.startswith(b"7z\xbc\xaf\x27\x1c"):
        return message("filekind.7z")
    if head.startswith((b"Rar!\x1a\x07",)):
        return message("filekind.rar")
    if head.startswith(b"\x00\x00\x01\x00"):
        return message("filekind.ico")
    return None


PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def is_zip_head(head: bytes) -> bool:
    """True for a zip local-file header or an empty zip's end record."""
    return head.startswith((b"PK\x03\x04", b"PK\x05\x06"))
