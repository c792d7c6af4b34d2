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
    warnings: list[str] = field(default_factory=list)


def _why(e: BaseException) -> str:
    """A short Chinese reason for a zip/zlib failure."""
    text = str(e)
    if isinstance(e, zlib.error):
        return "压缩数据损坏"
    if "CRC" in text:
        return "校验和（CRC）不对"
    if isinstance(e, NotImplementedError) or "compression method" in text:
        return "用了不支持的压缩方式"
    if "password" in text or "encrypted" in text:
        return "被加密了"
    if isinstance(e, (EOFError, struct.error)) or "Truncated" in text or "truncated" in text:
        return "文件被截断"
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
        raise fail(label, "不是有效的 CHARX（zip）文件：找不到 zip 目录，文件可能被截断")
    _, _, _, _, total, cd_size, _, _ = struct.unpack("<4sHHHHIIH", tail[i:i + 22])
    if total != 0xFFFF and total > MAX_ENTRIES:
        raise fail(label, f"CHARX 里有 {total} 个文件，超过上限 {MAX_ENTRIES}，已拒绝")
    if cd_size != 0xFFFFFFFF and cd_size > MAX_DIRECTORY_BYTES:
        raise fail(label, f"CHARX 的 zip 目录有 {cd_size // MiB} MiB，文件数异常，已拒绝")


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
                raise fail(label, f"CHARX 里的 {shown(info.filename)} 解压后超过 {limit // MiB} MiB，已拒绝")
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
        raise fail(label, f"不是有效的 CHARX（zip）文件：{_why(e)}") from None
    with zf:
        infos = zf.infolist()
        if len(infos) > MAX_ENTRIES:
            raise fail(label, f"CHARX 里有 {len(infos)} 个文件，超过上限 {MAX_ENTRIES}，已拒绝")
        total = 0
        for info in infos:
            if unsafe_member(info.filename):
                raise fail(label, f"CHARX 里有不安全的路径「{shown(info.filename)}」（绝对路径或 ..），已拒绝")
            total += info.file_size
            if info.file_size > RATIO_MIN_SIZE and info.file_size > MAX_RATIO * max(info.compress_size, 1):
                raise fail(label, f"CHARX 里的 {shown(info.filename)} 压缩比异常（{info.compress_size} → {info.file_size} 字节），疑似压缩炸弹，已拒绝")
        if total > MAX_TOTAL_UNCOMPRESSED:
            raise fail(label, f"CHARX 解压后共 {total // MiB} MiB，超过上限 {MAX_TOTAL_UNCOMPRESSED // MiB} MiB，已拒绝")
        by_name = {i.filename: i for i in infos if not i.is_dir()}
        card_info = by_name.get("card.json") or next((i for n, i in by_name.items() if n.lower() == "card.json"), None)
        if card_info is None:
            raise fail(label, "这个 zip 里没有 card.json，不是 CHARX 角色卡")
        if card_info.flag_bits & 0x1:
            raise fail(label, "CHARX 里的 card.json 被加密了，无法读取")
        if card_info.file_size > MAX_CARD_BYTES:
            raise fail(label, f"CHARX 里的 card.json 有 {card_info.file_size // MiB} MiB，超过角色卡的上限 {MAX_CARD_BYTES // MiB} MiB")
        try:
            raw = _read_member(zf, card_info, MAX_CARD_BYTES, label)
        except _ZIP_ERRORS as e:
            raise fail(label, f"CHARX 里的 card.json 已损坏（{_why(e)}）") from None
        obj = parse_json_bytes(raw, label, "CHARX 里的 card.json ")
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
            out.warnings.append(f"资源地址不安全，已忽略：{shown(uri)}")
            continue
        info = by_name.get(path)
        if info is None:
            out.warnings.append(f"资源 {shown(uri)} 在 CHARX 里找不到")
            continue
        if info.flag_bits & 0x1 or info.file_size > budget:
            out.warnings.append(f"资源 {shown(uri)} {'被加密' if info.flag_bits & 0x1 else '太大'}，没有载入")
            continue
        try:
            blob = _read_member(zf, info, budget, label)
        except (CardError, *_ZIP_ERRORS) as e:
            out.warnings.append(f"资源 {shown(uri)} 读不出来（{_why(e) if not isinstance(e, CardError) else '太大'}），没有载入")
            continue
        budget -= len(blob)
        out.assets[uri] = blob
