"""Shared pieces of the card readers: the error type, size limits, strict JSON decoding with Chinese messages and
file-type sniffing. Internal module; the public names are re-exported by :mod:`liyuan_desktop.core.cards`."""

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
    problem, fit for the UI and for ``liyuan: …`` on stderr."""

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


def fail(label: str, msg: str) -> CardError:
    """``CardError("<label>：<msg>")`` with newlines flattened (callers ``raise fail(...)``). The error carries a
    :class:`~liyuan_desktop.core.messages.Msg` (key ``labelled``): its text is that Chinese line, and
    ``messages.render(err, "en")`` gives ``"<label>: <msg in English>"`` — ``msg`` is found again in the catalog by
    its Chinese wording (``messages.translate``), so every sentence raised here needs a ``cardfile.*``/``png.*``/
    ``charx.*`` catalog entry whose Chinese template matches it exactly."""
    if not label:
        return CardError(msg)
    return CardError(message("labelled", label=label, msg=msg))


_JSON_MSGS = {
    "Expecting value": "这里缺少值",
    "Unterminated string starting at": "字符串没有结束",
    "Expecting property name enclosed in double quotes": "属性名要用双引号",
    "Expecting ',' delimiter": "缺少逗号",
    "Expecting ':' delimiter": "缺少冒号",
    "Extra data": "JSON 结束后还有多余内容",
    "Invalid control character at": "字符串里有非法的控制字符",
    "Invalid \\escape": "非法的转义符",
    "Invalid \\uXXXX escape": "非法的 \\u 转义",
}


def _json_msg_zh(msg: str) -> str:
    for en, zh in _JSON_MSGS.items():
        if msg.startswith(en):
            return zh
    return msg


def parse_json_bytes(data: bytes, label: str, where: str = "") -> Any:
    """Decode UTF-8 (a BOM is allowed) and parse JSON. ``where`` prefixes the message (e.g. "ccv3 块里的").

    Raises :class:`CardError` for invalid UTF-8, empty text, invalid JSON (line/column given), nesting too deep
    or numbers too long. A JSON-lines chat file is recognised and named as such."""
    if len(data) > MAX_CARD_BYTES:
        raise fail(label, f"{where}内容有 {len(data) // MiB} MiB，超过角色卡的上限 {MAX_CARD_BYTES // MiB} MiB，不像角色卡")
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise fail(label, f"{where}不是有效的 UTF-8 文本（第 {e.start} 字节处），不是可读的 JSON 角色卡") from None
    if not text.strip():
        raise fail(label, f"{where}内容是空的，没有角色卡数据")
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        if e.msg == "Extra data" and _looks_like_chat_jsonl(text):
            raise fail(label, "这是聊天记录（.jsonl），不是角色卡") from None
        raise fail(label, f"{where}不是有效的 JSON（第 {e.lineno} 行第 {e.colno} 列：{_json_msg_zh(e.msg)}）") from None
    except RecursionError:
        raise fail(label, f"{where}JSON 嵌套太深，无法读取") from None
    except ValueError as e:  # e.g. an integer with more digits than Python's conversion limit
        why = "数字的位数太多" if "digits" in str(e) else shown(str(e))
        raise fail(label, f"{where}JSON 里有无法读取的值（{why}）") from None


def _looks_like_chat_jsonl(text: str) -> bool:
    first = text.lstrip().split("\n", 1)[0]
    try:
        head = json.loads(first)
    except (ValueError, RecursionError):
        return False
    return isinstance(head, dict) and ("user_name" in head or "character_name" in head or "mes" in head)


def sniff_foreign(head: bytes) -> Optional[str]:
    """Name of a well-known non-card file type from its first bytes ("JPEG", "WEBP", "GIF", …), else None.
    PNG, zip and text are *not* reported here."""
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
        return "MP4/MOV 视频文件"
    if head.startswith(b"%PDF"):
        return "PDF 文件"
    if head.startswith(b"\x1f\x8b"):
        return "gzip 压缩包"
    if head.startswith(b"7z\xbc\xaf\x27\x1c"):
        return "7z 压缩包"
    if head.startswith((b"Rar!\x1a\x07",)):
        return "RAR 压缩包"
    if head.startswith(b"\x00\x00\x01\x00"):
        return "ICO 图标"
    return None


PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def is_zip_head(head: bytes) -> bool:
    """True for a zip local-file header or an empty zip's end record."""
    return head.startswith((b"PK\x03\x04", b"PK\x05\x06"))
