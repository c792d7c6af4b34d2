"""A generated corpus of malformed card files. Each one must either import correctly or give a CardError whose
message is ONE line, in Chinese, starts with the file name and names the problem — never another exception,
never a hang (timeout marks), never unbounded memory (tracemalloc peak checked on the bomb cases)."""

from __future__ import annotations

import base64
import io
import json
import os
import re
import struct
import tracemalloc
import zipfile
import zlib
from pathlib import Path
from typing import Callable, Optional, Union

import pytest

from liyuan_desktop.core.cards import Card, CardError, card_json_bytes, export_json, export_png, load_card
from liyuan_desktop.core.cards._common import MAX_CARD_BYTES, MiB

SIG = b"\x89PNG\r\n\x1a\n"
CJK = re.compile(r"[\u4e00-\u9fff]")


def chunk(ctype: bytes, data: bytes, crc: Optional[int] = None) -> bytes:
    c = zlib.crc32(ctype + data) if crc is None else crc
    return struct.pack(">I", len(data)) + ctype + data + struct.pack(">I", c)


def ihdr(w: int = 2, h: int = 2) -> bytes:
    return chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))


IDAT = chunk(b"IDAT", zlib.compress(b"\x00" + b"\x80" * 6 + b"\x00" + b"\x80" * 6))
IEND = chunk(b"IEND", b"")
CARD = {"spec": "chara_card_v3", "spec_version": "3.0",
        "data": {"name": "样卡", "description": "d", "first_mes": "你好", "extensions": {}, "group_only_greetings": []}}
B64 = base64.b64encode(json.dumps(CARD, ensure_ascii=False).encode())


def text(kw: bytes, payload: bytes, ctype: bytes = b"tEXt") -> bytes:
    return chunk(ctype, kw + b"\0" + payload)


def png(*middle: bytes, after: tuple = (), end: bytes = IEND, w: int = 2, h: int = 2) -> bytes:
    return SIG + ihdr(w, h) + b"".join(middle) + IDAT + b"".join(after) + end


GOOD_PNG = png(after=(text(b"chara", B64),))


def bomb_stream(total: int, step: int = 4 * MiB) -> bytes:
    """zlib stream that inflates to ``total`` bytes of 'A' (built in steps so building it stays small)."""
    c = zlib.compressobj(9)
    block = b"A" * step
    parts = [c.compress(block) for _ in range(total // step)]
    parts.append(c.flush())
    return b"".join(parts)


def streamed_bomb_charx(name: str, fill: bytes, total: int, card: bool = True) -> bytes:
    """A CHARX with one deflated entry of ``total`` bytes of ``fill``, written in 4 MiB steps."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        if card:
            z.writestr("card.json", CARD_JSON)
        info = zipfile.ZipInfo(name)
        info.compress_type = zipfile.ZIP_DEFLATED
        with z.open(info, "w", force_zip64=True) as w:
            block = fill * (4 * MiB // len(fill))
            for _ in range(total // len(block)):
                w.write(block)
    return buf.getvalue()


def charx(files: dict[str, bytes], method: int = zipfile.ZIP_DEFLATED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", method) as z:
        for name, data in files.items():
            z.writestr(name, data)
    return buf.getvalue()


CARD_JSON = json.dumps(CARD, ensure_ascii=False).encode()


def patch_central(data: bytes, name: bytes, *, file_size: Optional[int] = None, compress_size: Optional[int] = None,
                  flag_or: int = 0) -> bytes:
    """Rewrite fields of ``name``'s central-directory header (and the flag in its local header)."""
    b = bytearray(data)
    i = b.find(b"PK\x01\x02" )
    while i >= 0:
        nlen = struct.unpack("<H", b[i + 28:i + 30])[0]
        if bytes(b[i + 46:i + 46 + nlen]) == name:
            if file_size is not None:
                b[i + 24:i + 28] = struct.pack("<I", file_size)
            if compress_size is not None:
                b[i + 20:i + 24] = struct.pack("<I", compress_size)
            if flag_or:
                flags = struct.unpack("<H", b[i + 8:i + 10])[0] | flag_or
                b[i + 8:i + 10] = struct.pack("<H", flags)
                local = struct.unpack("<I", b[i + 42:i + 46])[0]
                b[local + 6:local + 8] = struct.pack("<H", struct.unpack("<H", b[local + 6:local + 8])[0] | flag_or)
        i = b.find(b"PK\x01\x02", i + 4)
    return bytes(b)


def lying_card_json() -> bytes:
    """card.json whose real content is 8 MiB but whose directory entry claims 100 bytes."""
    big = json.dumps({**CARD, "pad": "x" * (8 * MiB)}).encode()
    return patch_central(charx({"card.json": big}), b"card.json", file_size=100)


def sparse_claim(path: Path) -> None:
    """A 1.1 GB sparse PNG whose chara chunk claims 1 GiB (inside the file, so only the size limit can stop it)."""
    head = SIG + ihdr() + struct.pack(">I", 1 << 30) + b"tEXt" + b"chara\0"
    with open(path, "wb") as f:
        f.write(head)
        f.truncate((1 << 30) + 100 * MiB)


def many_entries() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        z.writestr("card.json", CARD_JSON)
        for i in range(10_001):
            z.writestr(f"a/{i}", b"")
    return buf.getvalue()


Maker = Union[bytes, Callable[[], bytes], Callable[[Path], None]]

# (id, file name, content or builder, expectation): expectation "ok", or a regex the message must match.
CASES: list[tuple[str, str, Maker, str]] = [
    # -- PNG structure
    ("png-signature-only", "a.png", SIG, "不完整|没有角色卡"),
    ("png-cut-in-chunk-header", "a.png", SIG + ihdr()[:5], "不完整"),
    ("png-cut-in-idat", "a.png", GOOD_PNG[: len(SIG) + 25 + 10], "不完整"),
    ("png-cut-in-card-chunk", "a.png", GOOD_PNG[:-40], "不完整"),
    ("png-no-iend", "a.png", GOOD_PNG[: -len(IEND)], "ok"),
    ("png-trailing-garbage", "a.png", GOOD_PNG + b"garbage" * 100, "ok"),
    ("png-wrong-magic", "a.png", b"\x88" + GOOD_PNG[1:], "无法识别"),
    ("png-first-not-ihdr", "a.png", SIG + IDAT + text(b"chara", B64) + IEND, "IHDR"),
    ("png-bad-chunk-type", "a.png", SIG + ihdr() + struct.pack(">I", 4) + b"\x01\x02\x03\x04abcd\0\0\0\0" + IEND, "结构损坏"),
    ("png-length-past-eof", "a.png", SIG + ihdr() + struct.pack(">I", 1000) + b"tEXt" + b"chara\0abc", "不完整"),
    ("png-1gb-claimed-chunk", "a.png", SIG + ihdr() + struct.pack(">I", 1 << 30) + b"IDAT" + b"\0" * 100, "不完整"),
    ("png-length-over-2^31", "a.png", SIG + ihdr() + struct.pack(">I", 0xFFFFFFF0) + b"tEXt" + b"\0" * 20, "上限"),
    ("png-1gb-card-chunk-sparse", "a.png", sparse_claim, "超过角色卡的上限"),
    ("png-huge-dimensions", "a.png", png(text(b"chara", B64), w=20000, h=20000), "ok"),
    ("png-too-many-chunks", "a.png", SIG + ihdr() + chunk(b"zzZz", b"") * 200_001 + text(b"chara", B64) + IEND, "块"),
    ("png-plain-image", "a.png", png(), "没有角色卡数据"),
    # -- CRC
    ("png-bad-crc-chara", "a.png", png(chunk(b"tEXt", b"chara\0" + B64, crc=1)), "chara.*CRC"),
    ("png-bad-crc-ccv3", "a.png", png(chunk(b"tEXt", b"ccv3\0" + B64, crc=1), text(b"chara", B64)), "ccv3.*CRC"),
    ("png-bad-crc-foreign-text", "a.png", png(chunk(b"tEXt", b"prompt\0{}", crc=1), text(b"chara", B64)), "ok"),
    ("png-bad-crc-idat", "a.png", SIG + ihdr() + chunk(b"IDAT", b"xx", crc=7) + text(b"chara", B64) + IEND, "ok"),
    # -- card payload
    ("png-invalid-base64", "a.png", png(text(b"chara", b"!!!not*base64@@@")), "base64"),
    ("png-base64-of-invalid-utf8", "a.png", png(text(b"chara", base64.b64encode(b'{"name":"\xff\xfe"}'))), "UTF-8"),
    ("png-base64-of-garbage-json", "a.png", png(text(b"chara", base64.b64encode(b'{"name": '))), "JSON"),
    ("png-base64-json-array", "a.png", png(text(b"chara", base64.b64encode(b"[1,2]"))), "不是对象"),
    ("png-base64-json-string", "a.png", png(text(b"chara", base64.b64encode(b'"card"'))), "不是对象"),
    ("png-empty-chara", "a.png", png(text(b"chara", b"")), "空"),
    ("png-non-ascii-payload", "a.png", png(text(b"chara", "卡".encode("utf-8"))), "base64"),
    ("png-raw-json-payload", "a.png", png(text(b"chara", json.dumps(CARD).encode())), "ok"),
    ("png-ccv3-broken-chara-good", "a.png", png(text(b"ccv3", b"@@@"), text(b"chara", B64)), "ok"),
    ("png-keyword-without-nul", "a.png", png(chunk(b"tEXt", b"nokeywordhere"), text(b"chara", B64)), "ok"),
    ("png-not-a-card-json", "a.png", png(text(b"chara", base64.b64encode(b'{"entries": {}}'))), "世界书"),
    # -- zTXt / iTXt
    ("ztxt-bad-zlib", "a.png", png(text(b"chara", b"\0" + b"this is not zlib", b"zTXt")), "压缩数据"),
    ("ztxt-truncated-zlib", "a.png", png(text(b"chara", b"\0" + zlib.compress(B64)[:-8], b"zTXt")), "不完整|损坏"),
    ("ztxt-unknown-method", "a.png", png(text(b"chara", b"\x07" + zlib.compress(B64), b"zTXt")), "压缩方式"),
    ("ztxt-empty", "a.png", png(text(b"chara", b"", b"zTXt")), "空"),
    ("ztxt-good", "a.png", png(text(b"chara", b"\0" + zlib.compress(B64), b"zTXt")), "ok"),
    ("ztxt-bomb", "a.png", lambda: png(text(b"ccv3", b"\0" + bomb_stream(1024 * MiB), b"zTXt")), "压缩炸弹"),
    ("itxt-bomb", "a.png", lambda: png(text(b"ccv3", b"\x01\x00zh\0\0" + bomb_stream(256 * MiB), b"iTXt")), "压缩炸弹"),
    ("itxt-no-language-nul", "a.png", png(text(b"chara", b"\x00\x00zh", b"iTXt")), "格式不对"),
    ("itxt-too-short", "a.png", png(text(b"chara", b"\x00", b"iTXt")), "格式不对"),
    # -- JSON files
    ("empty-file", "a.json", b"", "空"),
    ("whitespace-only", "a.json", b"  \n\t ", "空"),
    ("bom-only", "a.json", b"\xef\xbb\xbf", "空"),
    ("json-invalid-utf8", "a.json", b'{"name": "\xc3\x28"}', "UTF-8"),
    ("json-truncated", "a.json", CARD_JSON[:30], "不是有效的 JSON"),
    ("json-array", "a.json", b"[{}]", "数组"),
    ("json-string", "a.json", b'"hello"', "字符串"),
    ("json-null", "a.json", b"null", "空值"),
    ("json-number", "a.json", b"42", "数字"),
    ("json-deeply-nested", "a.json", b'{"name":"x","d":' + b"[" * 200_000 + b"]" * 200_000 + b"}", "嵌套太深|ok"),
    ("json-huge-integer", "a.json", b'{"name": "x", "n": ' + b"9" * 50_000 + b"}", "无法读取的值"),
    ("json-with-bom", "a.json", b"\xef\xbb\xbf" + CARD_JSON, "ok"),
    ("json-no-card-fields", "a.json", b'{"foo": 1}', "不像角色卡"),
    ("json-sampler-preset", "a.json", b'{"temperature": 1, "top_p": 0.9}', "预设"),
    ("json-world-info", "a.json", b'{"entries": {"0": {"key": ["a"]}}}', "世界书"),
    ("json-lorebook-v3", "a.json", b'{"spec": "lorebook_v3", "data": {"entries": []}}', "世界书"),
    ("chat-jsonl", "a.jsonl", b'{"user_name": "u", "character_name": "c"}\n{"name": "u", "mes": "hi"}\n', "聊天记录"),
    ("json-data-not-object", "a.json", b'{"spec": "chara_card_v2", "data": "oops", "name": "n", "description": "d"}', "ok"),
    ("json-book-is-string", "a.json", json.dumps({**CARD, "data": {**CARD["data"], "character_book": "x"}}).encode(), "ok"),
    ("json-entries-is-number", "a.json", json.dumps({**CARD, "data": {**CARD["data"], "character_book": {"entries": 3}}}).encode(), "ok"),
    ("json-weird-types", "a.json", json.dumps({"name": 123, "description": ["x"], "first_mes": None,
                                                "alternate_greetings": "one", "tags": "a, b", "extensions": []}).encode(), "ok"),
    ("json-lone-surrogate", "a.json", b'{"name": "x\\ud800y", "description": "d"}', "ok"),
    ("binary-garbage", "a.json", bytes(range(256)) * 8, "无法识别"),
    ("nul-bytes", "a.png", b"\0" * 1000, "无法识别"),
    # -- other files renamed
    ("jpeg-renamed", "a.png", b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + b"\0" * 500 + b"\xff\xd9", "JPEG 图片，不是 PNG 角色卡"),
    ("webp-renamed", "a.png", b"RIFF\x24\0\0\0WEBPVP8 " + b"\0" * 300, "WEBP 图片"),
    ("gif-renamed", "a.png", b"GIF89a\x01\x00\x01\x00\x80\x00\x00" + b"\0" * 100, "GIF 图片"),
    ("bmp-renamed", "a.png", b"BM" + struct.pack("<I", 100) + b"\0\0\0\0" + b"\x36\0\0\0" + b"\0" * 90, "BMP 图片"),
    ("pdf-renamed", "a.json", b"%PDF-1.7\n" + b"\0" * 100, "PDF 文件"),
    ("gzip-renamed", "a.charx", b"\x1f\x8b\x08\x00" + b"\0" * 100, "gzip"),
    # -- CHARX
    ("charx-good", "a.charx", charx({"card.json": CARD_JSON}), "ok"),
    ("charx-zip-bomb", "a.charx", lambda: streamed_bomb_charx("assets/other/bomb.bin", b"\0", 512 * MiB), "压缩炸弹"),
    ("charx-card-json-bomb", "a.charx", lambda: streamed_bomb_charx("card.json", b" ", 200 * MiB, card=False), "压缩炸弹|上限"),
    ("charx-lying-size", "a.charx", lying_card_json, "损坏"),
    ("charx-total-too-big", "a.charx", lambda: patch_central(patch_central(
        charx({"card.json": CARD_JSON, "a.bin": b"1", "b.bin": b"2"}, zipfile.ZIP_STORED),
        b"a.bin", file_size=700 * MiB, compress_size=10 * MiB), b"b.bin", file_size=700 * MiB, compress_size=10 * MiB), "上限"),
    ("charx-dotdot", "a.charx", charx({"card.json": CARD_JSON, "../../evil.txt": b"x"}), "不安全的路径"),
    ("charx-dotdot-inside", "a.charx", charx({"card.json": CARD_JSON, "assets/../../evil": b"x"}), "不安全的路径"),
    ("charx-backslash-dotdot", "a.charx", charx({"card.json": CARD_JSON, "..\\..\\evil": b"x"}), "不安全的路径"),
    ("charx-absolute", "a.charx", charx({"card.json": CARD_JSON, "/etc/passwd": b"x"}), "不安全的路径"),
    ("charx-drive-letter", "a.charx", charx({"card.json": CARD_JSON, "C:/Windows/evil": b"x"}), "不安全的路径"),
    ("charx-too-many-entries", "a.charx", many_entries, "超过上限"),
    ("charx-no-card-json", "a.charx", charx({"readme.txt": b"hi"}), "没有 card.json"),
    ("charx-empty-zip", "a.charx", charx({}), "没有 card.json"),
    ("charx-card-json-not-json", "a.charx", charx({"card.json": b"not json"}), "不是有效的 JSON"),
    ("charx-card-json-bad-utf8", "a.charx", charx({"card.json": b'{"name": "\xff"}'}), "UTF-8"),
    ("charx-card-json-array", "a.charx", charx({"card.json": b"[]"}), "数组"),
    ("charx-truncated", "a.charx", charx({"card.json": CARD_JSON})[:60], "CHARX"),
    ("charx-encrypted-flag", "a.charx", patch_central(charx({"card.json": CARD_JSON}), b"card.json", flag_or=1), "加密"),
    ("charx-corrupt-deflate", "a.charx", lambda: _corrupt_deflate(), "损坏"),
    ("charx-asset-traversal-uri", "a.charx", charx({"card.json": json.dumps(
        {**CARD, "data": {**CARD["data"], "assets": [{"type": "icon", "uri": "embeded://../../x.png", "name": "main", "ext": "png"}]}}).encode()}), "ok"),
    ("charx-preset-inside", "a.charx", charx({"card.json": b'{"prompts": [], "temperature": 1}'}), "预设"),
    ("jpeg-zip-hybrid", "a.jpg", b"\xff\xd8\xff\xe0" + b"\0" * 64 + b"\xff\xd9" + charx({"card.json": CARD_JSON}), "ok"),
]


def _corrupt_deflate() -> bytes:
    data = bytearray(charx({"card.json": CARD_JSON * 20}))
    start = 30 + len(b"card.json")
    for i in range(start + 10, start + 40):
        data[i] ^= 0x5A
    return bytes(data)


BOMBS = {"ztxt-bomb", "itxt-bomb", "charx-zip-bomb", "charx-card-json-bomb", "charx-lying-size", "png-1gb-card-chunk-sparse",
         "charx-total-too-big", "png-1gb-claimed-chunk"}


def check_error(err: CardError, filename: str, pattern: str) -> None:
    msg = str(err)
    assert "\n" not in msg and "\r" not in msg, msg
    assert msg.startswith(filename + "："), msg
    assert CJK.search(msg), msg
    assert len(msg) < 300, msg
    assert re.search(pattern, msg), f"{msg!r} does not match {pattern!r}"


def test_corpus_is_big_enough():
    assert len(CASES) >= 40 and len({c[0] for c in CASES}) == len(CASES)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("case_id,filename,maker,expect", CASES, ids=[c[0] for c in CASES])
def test_malformed(tmp_path, case_id, filename, maker, expect):
    path = tmp_path / filename
    if callable(maker):
        import inspect

        if inspect.signature(maker).parameters:
            maker(path)
        else:
            path.write_bytes(maker())
    else:
        path.write_bytes(maker)
    if case_id in BOMBS:
        tracemalloc.start()
    try:
        try:
            card = load_card(path)
        except CardError as e:
            if expect == "ok":
                raise AssertionError(f"expected a correct import, got: {e}") from None
            check_error(e, filename, expect)
            return
        finally:
            if case_id in BOMBS:
                _, peak = tracemalloc.get_traced_memory()
                tracemalloc.stop()
                assert peak < MAX_CARD_BYTES + 32 * MiB, f"peak {peak // MiB} MiB"
        assert "ok" in expect.split("|"), f"expected an error matching {expect!r}, got a card {card.name!r}"
        assert isinstance(card, Card) and card.name
        assert all("\n" not in w for w in card.warnings)
        # whatever imported can be exported and read back
        assert card_json_bytes(export_json(card))
        again = load_card(_write(tmp_path / "again.png", export_png(card)))
        assert again.name == card.name
    finally:
        if path.exists() and path.stat().st_size > 100 * MiB:
            path.unlink()


def _write(p: Path, data: bytes) -> Path:
    p.write_bytes(data)
    return p


@pytest.mark.timeout(10)
def test_directory_and_missing_file(tmp_path):
    d = tmp_path / "卡.png"
    d.mkdir()
    with pytest.raises(CardError) as ei:
        load_card(d)
    check_error(ei.value, "卡.png", "文件夹")
    with pytest.raises(CardError) as ei:
        load_card(tmp_path / "不存在.json")
    check_error(ei.value, "不存在.json", "找不到")
    if hasattr(os, "mkfifo"):  # a FIFO would block a plain open(); it is refused before
        fifo = tmp_path / "管道.json"
        os.mkfifo(fifo)
        with pytest.raises(CardError) as ei:
            load_card(fifo)
        check_error(ei.value, "管道.json", "不是普通文件")


@pytest.mark.timeout(10)
def test_huge_dimensions_are_instant(tmp_path):
    import time

    p = tmp_path / "big.png"
    p.write_bytes(png(after=(text(b"chara", B64),), w=20000, h=20000))
    t = time.perf_counter()
    card = load_card(p)
    assert card.name == "样卡" and time.perf_counter() - t < 1.0


def test_fallbacks_are_warned(tmp_path):
    p = tmp_path / "c.png"
    p.write_bytes(png(text(b"ccv3", b"@@@"), text(b"chara", B64)))
    card = load_card(p)
    assert card.name == "样卡" and any("chara" in w for w in card.warnings)
    p.write_bytes(GOOD_PNG[: -len(IEND)])
    assert any("IEND" in w for w in load_card(p).warnings)
