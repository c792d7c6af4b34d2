"""CHARX character cards (character-card-spec-v3, RisuAI): a zip with ``card.json`` (a V3 card) at its root and the
assets under ``assets/…``, referenced from ``data.assets[].uri`` as ``embeded://<path in zip>`` (sic, one "d";
"embedded://" is accepted too). SillyTavern's ``importFromCharX()`` reads ``card.json`` and the first icon asset
and ignores everything else in the zip (RisuAI's ``module.risum``, ``x_meta/``); we do the same and return the
referenced assets as bytes. A RisuAI "JPEG + zip" hybrid reads like any zip (the zip directory is found from the
end of the file).

Nothing is ever extracted to disk. Limits, checked before anything is decompressed (from the zip directory) and
again while reading: at most :data:`MAX_ENTRIES` entries (the end-of-directory record is checked before the
directory is parsed), :data:`MAX_TOTAL_UNCOMPRESSED` bytes declared in total, no entry over
:data:`MAX_RATIO`:1 (entries over 1 MiB), ``card.json`` at most :data:`MAX_CARD_BYTES`, loaded assets at most
:data:`MAX_ASSET_BYTES` in total. Every read stops at the declared size, so an entry that lies about its size
fails its CRC instead of filling memory. Entry names that are absolute, carry a drive letter or contain a ``..``
component make the whole file refused (path traversal).
"""

from __future__ import annotations

import re
import struct
import zipfile
import zlib
from dataclasses import dataclass, field
from typing import IO, Any, Optional

from ..messages import Msg, message
from ._common import MAX_CARD_BYTES, CardError, MiB, fail, parse_json_bytes, shown

MAX_ENTRIES = 10_000
MAX_TOTAL_UNCOMPRESSED = 1024 * MiB
MAX_RATIO = 100
RATIO_MIN_SIZE = 1 * MiB
MAX_ASSET_BYTES = 256 * MiB
MAX_DIRECTORY_BYTES = 16 * MiB
_READ_STEP = 1 * MiB

_ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, EOFError, OSError, ValueError, struct.error,
               NotImplementedError, RuntimeError, IndexError, KeyError)
_DRIVE = re.compile(r"^[A-Za-z]:")


@dataclass
class CharxCard:
    """What :func:`read_charx` found: the ``card.json`` object, assets by URI (``embeded://…`` → bytes), the
    entry names in the zip and warnings."""

    card: Any
    assets: dict[str, bytes] = field(default_factory=dict)
    names: list[str] = field(default_factory=list)
    warnings: list[Msg] = field(default_factory=list)


def _why(e: BaseException) -> Msg | str:
    """A short reason for a zip/zlib failure: a ``zip.why.*`` catalog message, else the error's own text."""
    text = str(e)
    if isinstance(e, zlib.error):
        return message("zip.why.zlib")
    if "CRC" in text:
        return message("zip.why.crc")
    if isinstance(e, NotImplementedError) or "compression method" in text:
        return message("zip.why.method")
    if "password" in text or "encrypted" in text:
        return message("zip.why.encrypted")
    if isinstance(e, (EOFError, struct.error)) or "Truncated" in text or "truncated" in text:
        return message("zip.why.truncated")
    return shown(text or type(e).__name__)


def unsafe_member(name: str) -> bool:
    """True for a zip entry path that could escape a folder: absolute (``/x``, ``\\x``), a drive letter
    (``C:…``) or any ``..`` component (either slash)."""
    n = name.replace("\\", "/")
    return n.startswith("/") or bool(_DRIVE.match(n)) or any(part == ".." for part in n.split("/")) or "\x00" in n


def _precheck_directory(f: IO[bytes], size: int, label: str) -> None:
    """Refuse a zip whose end-of-central-directory record announces too many entries or a huge directory, before
    :mod:`zipfile` builds an object per entry."""
    tail_len = min(size, 22 + 65535)
    f.seek(size - tail_len)
    tail = f.read(tail_len)
    i = tail.rfind(b"PK\x05\x06")
    if i < 0 or len(tail) - i < 22:
        raise fail(label, message("charx.no_directory"))
    _, _, _, _, total, cd_size, _, _ = struct.unpack("<4sHHHHIIH", tail[i:i + 22])
    if total != 0xFFFF and total > MAX_ENTRIES:
        raise fail(label, message("charx.too_many", n=total, max=MAX_ENTRIES))
    if cd_size != 0xFFFFFFFF and cd_size > MAX_DIRECTORY_BYTES:
        raise fail(label, message("charx.big_directory", mib=cd_size // MiB))


def _read_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, limit: int, label: str) -> bytes:
    """The entry's bytes, read in 1 MiB steps and never more than ``limit`` (CardError past it)."""
    pieces: list[bytes] = []
    total = 0
    with zf.open(info) as fh:
        while True:
            b = fh.read(_READ_STEP)
            if not b:
                break
            total += len(b)
            if total > limit:
                raise fail(label, message("charx.member_big", name=shown(info.filename), mib=limit // MiB))
            pieces.append(b)
    return b"".join(pieces)


def read_charx(f: IO[bytes], size: int, label: str) -> CharxCard:
    """Read a CHARX from the seekable binary ``f`` (``size`` bytes).

    Returns the parsed ``card.json`` (any JSON value; the caller checks it is a card) and the assets referenced
    as ``embeded://path`` in ``data.assets`` that exist in the zip (missing ones are warnings). Raises
    :class:`CardError` for: not a zip / damaged zip (bad CRC, truncated), too many entries, a suspected zip bomb
    (declared total or per-entry ratio), unsafe entry paths, no ``card.json``, an encrypted ``card.json``, or
    ``card.json`` that is not valid UTF-8 JSON."""
    _precheck_directory(f, size, label)
    try:
        zf = zipfile.ZipFile(f)
    except _ZIP_ERRORS as e:
        raise fail(label, message("charx.invalid", why=_why(e))) from None
    with zf:
        infos = zf.infolist()
        if len(infos) > MAX_ENTRIES:
            raise fail(label, message("charx.too_many", n=len(infos), max=MAX_ENTRIES))
        total = 0
        for info in infos:
            if unsafe_member(info.filename):
                raise fail(label, message("charx.unsafe", name=shown(info.filename)))
            total += info.file_size
            if info.file_size > RATIO_MIN_SIZE and info.file_size > MAX_RATIO * max(info.compress_size, 1):
                raise fail(label, message("charx.ratio", name=shown(info.filename), a=info.compress_size, b=info.file_size))
        if total > MAX_TOTAL_UNCOMPRESSED:
            raise fail(label, message("charx.total", mib=total // MiB, max=MAX_TOTAL_UNCOMPRESSED // MiB))
        by_name = {i.filename: i for i in infos if not i.is_dir()}
        card_info = by_name.get("card.json") or next((i for n, i in by_name.items() if n.lower() == "card.json"), None)
        if card_info is None:
            raise fail(label, message("charx.no_card"))
        if card_info.flag_bits & 0x1:
            raise fail(label, message("charx.encrypted"))
        if card_info.file_size > MAX_CARD_BYTES:
            raise fail(label, message("charx.card_big", mib=card_info.file_size // MiB, max=MAX_CARD_BYTES // MiB))
        try:
            raw = _read_member(zf, card_info, MAX_CARD_BYTES, label)
        except _ZIP_ERRORS as e:
            raise fail(label, message("charx.card_damaged", why=_why(e))) from None
        obj = parse_json_bytes(raw, label, message("cardfile.where.charx"))
        out = CharxCard(card=obj, names=[i.filename for i in infos])
        _load_assets(zf, obj, by_name, out, label)
    return out


def asset_path(uri: str) -> Optional[str]:
    """The zip path of an ``embeded://`` (or ``embedded://``) URI, else None."""
    low = uri.lower()
    for scheme in ("embeded://", "embedded://"):
        if low.startswith(scheme):
            path = uri[len(scheme):]
            while path.startswith("./"):
                path = path[2:]
            return path
    return None


def _load_assets(zf: zipfile.ZipFile, obj: Any, by_name: dict[str, zipfile.ZipInfo], out: CharxCard, label: str) -> None:
    data = obj.get("data") if isinstance(obj, dict) else None
    assets = data.get("assets") if isinstance(data, dict) else None
    budget = MAX_ASSET_BYTES
    for a in assets if isinstance(assets, list) else []:
        uri = a.get("uri") if isinstance(a, dict) else None
        if not isinstance(uri, str) or uri in out.assets:
            continue
        path = asset_path(uri)
        if path is None:
            continue
        if unsafe_member(path):
            out.warnings.append(message("cardwarn.asset_unsafe", uri=shown(uri)))
            continue
        info = by_name.get(path)
        if info is None:
            out.warnings.append(message("cardwarn.asset_not_in_charx", uri=shown(uri)))
            continue
        if info.flag_bits & 0x1 or info.file_size > budget:
            out.warnings.append(message("cardwarn.asset_encrypted" if info.flag_bits & 0x1 else "cardwarn.asset_big", uri=shown(uri)))
            continue
        try:
            blob = _read_member(zf, info, budget, label)
        except (CardError, *_ZIP_ERRORS) as e:
            out.warnings.append(message("cardwarn.asset_unreadable_big", uri=shown(uri)) if isinstance(e, CardError)
                                else message("cardwarn.asset_unreadable", uri=shown(uri), why=_why(e)))
            continue
        budget -= len(blob)
        out.assets[uri] = blob
