"""PNG / APNG character-card containers, read and written by walking the chunks ourselves (no image library, the
pixels are never decoded).

File layout: the 8-byte signature, then chunks ``length(4, big-endian) type(4) data(length) crc(4)`` where the CRC
is CRC-32 over type + data. A card is base64(UTF-8 JSON) in a text chunk whose keyword is ``chara`` (V1/V2, written
by every SillyTavern version) or ``ccv3`` (V3). Like SillyTavern's ``character-card-parser.js`` ``read()``,
``ccv3`` wins over ``chara`` (keywords compared case-insensitively, the first chunk of a keyword counts); unlike
SillyTavern (``tEXt`` only) we also read ``zTXt`` and ``iTXt``, and card chunks may sit before or after ``IDAT``.
Unrelated text chunks (an image tool's ``prompt``, ``parameters`` …) are skipped without being read.

Safety: a chunk whose length runs past the end of the file is an error (never an allocation); a card chunk over
:data:`MAX_CARD_BYTES` is an error; zTXt/iTXt are inflated in bounded steps, so a zlib bomb stops at
:data:`MAX_CARD_BYTES` with a clear error; the CRC of a card chunk is checked (a mismatch is an error naming the
chunk); other chunks are skipped unchecked. An APNG is just a PNG with extra chunks (``acTL``/``fcTL``/``fdAT``)
and needs nothing special.
"""

from __future__ import annotations

import base64
import binascii
import functools
import io
import struct
import zlib
from dataclasses import dataclass, field
from typing import IO, Any, Iterator, Optional

from ..messages import Msg, message
from ._common import MAX_CARD_BYTES, PNG_SIGNATURE, CardError, MiB, fail, parse_json_bytes, shown, sniff_foreign

#: Keywords of card chunks, in order of precedence.
CARD_KEYWORDS = ("ccv3", "chara")
#: V3 spec: extra assets as text chunks ``chara-ext-asset_:{path}``, addressed in ``data.assets`` as ``__asset:{path}``.
ASSET_KEYWORD_PREFIX = "chara-ext-asset_"
#: More chunks than this is not an image anyone made on purpose (a 100 MB image in 8 KB IDATs is ~13 000 chunks).
MAX_CHUNKS = 200_000
#: Total bytes of ``chara-ext-asset_`` assets loaded from one PNG.
MAX_PNG_ASSET_BYTES = 256 * MiB

TEXT_TYPES = (b"tEXt", b"zTXt", b"iTXt")
_INFLATE_STEP = 1 * MiB


@dataclass
class Chunk:
    """One chunk's place in the file: ``start`` is the offset of its length field; the whole chunk (length, type,
    data, CRC) is ``[start, end)``."""

    index: int
    type: bytes
    start: int
    length: int

    @property
    def data_start(self) -> int:
        """File offset of the chunk's data (after the 4-byte length and the 4-byte type)."""
        return self.start + 8

    @property
    def end(self) -> int:
        """File offset just past the chunk (length, type, data and the 4-byte CRC)."""
        return self.start + 12 + self.length

    @property
    def name(self) -> str:
        """The chunk type as text (``tEXt``, ``IDAT`` …)."""
        return self.type.decode("latin-1")


@dataclass
class TextChunk:
    """A card-related text chunk: ``keyword`` as written, chunk type, the chunk data (keyword included, still
    compressed for zTXt/iTXt), and whether it came after the first IDAT."""

    keyword: str
    chunk_type: str
    data: bytes
    after_idat: bool
    index: int


@dataclass
class PngCard:
    """What :func:`read_png_card` found: the card JSON object, which chunk it came from, image size in pixels
    (from IHDR, not validated), ``chara-ext-asset_`` assets by URI (``__asset:{path}``) and warnings."""

    card: Any
    keyword: str
    chunk_type: str
    after_idat: bool
    width: int = 0
    height: int = 0
    assets: dict[str, bytes] = field(default_factory=dict)
    warnings: list[Msg] = field(default_factory=list)


def iter_chunks(f: IO[bytes], size: int, label: str) -> Iterator[Chunk]:
    """Yield every chunk of the PNG in ``f`` (``size`` bytes long) up to and including ``IEND``.

    Only the 8-byte chunk headers are read; the caller may read a chunk's data (the walk re-seeks afterwards).
    Raises :class:`CardError` (message starting with ``label``) for a wrong signature, a chunk header cut off, a
    chunk type that is not four ASCII letters, a length over 2^31-1 or past the end of the file, a first chunk
    other than ``IHDR``, or more than :data:`MAX_CHUNKS` chunks. A file that simply ends without ``IEND`` ends the
    iteration (the caller decides)."""
    f.seek(0)
    if f.read(8) != PNG_SIGNATURE:
        raise fail(label, message("png.not_png"))
    pos, index = 8, 0
    while pos < size:
        if index >= MAX_CHUNKS:
            raise fail(label, message("png.too_many_chunks", n=MAX_CHUNKS))
        f.seek(pos)
        head = f.read(8)
        if len(head) < 8:
            raise fail(label, message("png.truncated_at", pos=pos))
        length, ctype = struct.unpack(">I4s", head)
        if not all(65 <= c <= 90 or 97 <= c <= 122 for c in ctype):
            raise fail(label, message("png.bad_chunk_at", pos=pos))
        name = ctype.decode("latin-1")
        if length > 0x7FFFFFFF:
            raise fail(label, message("png.chunk_too_long", name=name, length=length))
        chunk = Chunk(index, ctype, pos, length)
        if chunk.end > size:
            raise fail(label, message("png.chunk_cut", name=name, length=length, left=max(0, size - pos - 12)))
        if index == 0 and ctype != b"IHDR":
            raise fail(label, message("png.first_not_ihdr", name=name))
        yield chunk
        if ctype == b"IEND":
            return
        index += 1
        pos = chunk.end


def _keyword_of(f: IO[bytes], chunk: Chunk) -> tuple[Optional[str], bytes]:
    """The keyword of a text chunk (Latin-1, at most 79 bytes before a NUL) and the bytes read so far."""
    f.seek(chunk.data_start)
    prefix = f.read(min(chunk.length, 80))
    nul = prefix.find(b"\x00")
    if nul < 1:
        return None, prefix
    return prefix[:nul].decode("latin-1"), prefix


def _read_checked(f: IO[bytes], chunk: Chunk, prefix: bytes) -> tuple[bytes, bool]:
    """The chunk data (``prefix`` already read) and whether its CRC matches."""
    data = prefix + f.read(chunk.length - len(prefix))
    crc = f.read(4)
    return data, len(crc) == 4 and zlib.crc32(data, zlib.crc32(chunk.type)) == int.from_bytes(crc, "big")


def inflate_bounded(comp: bytes, label: str, what: Msg, limit: int = MAX_CARD_BYTES) -> bytes:
    """zlib-inflate ``comp`` in 1 MiB steps, stopping with :class:`CardError` as soon as the output passes
    ``limit`` bytes (so a zlib bomb costs at most ``limit`` of memory) or when the stream is corrupt/truncated.
    ``what`` names the chunk (the ``cardfile.where.png`` message: its ``kw`` and ``type`` go into the error)."""
    d = zlib.decompressobj()
    pieces: list[bytes] = []
    total = 0
    buf = comp
    try:
        while not d.eof:
            out = d.decompress(buf, _INFLATE_STEP)
            tail = d.unconsumed_tail
            if out:
                total += len(out)
                if total > limit:
                    raise fail(label, _chunk_msg("png.bomb", what, mib=limit // MiB))
                pieces.append(out)
            elif len(tail) >= len(buf):
                break  # no input consumed and no output: the stream ends here
            buf = tail
    except zlib.error:
        raise fail(label, _chunk_msg("png.zlib_damaged", what)) from None
    if not d.eof:
        raise fail(label, _chunk_msg("png.zlib_cut", what))
    return b"".join(pieces)


def _chunk_msg(key: str, what: Msg, **params: Any) -> Msg:
    """The ``png.*`` message ``key`` about the chunk ``what`` names (its ``kw`` and ``type``)."""
    return message(key, kw=what.params["kw"], type=what.params["type"], **params)


def _unlabelled(err: Exception) -> Msg | str:
    """The sentence of a card error without its file label (the ``msg`` of a ``labelled`` message)."""
    first = err.args[0] if err.args else ""
    if isinstance(first, Msg) and first.key == "labelled":
        inner = first.params["msg"]
        return inner if isinstance(inner, str) else str(inner)
    return first if isinstance(first, Msg) else str(err)


def text_of(chunk: TextChunk, label: str) -> bytes:
    """The text bytes of a tEXt/zTXt/iTXt chunk (after the keyword; inflated when compressed, bounded by
    :data:`MAX_CARD_BYTES`). Raises :class:`CardError` for a malformed chunk."""
    what = message("cardfile.where.png", kw=shown(chunk.keyword), type=chunk.chunk_type)
    rest = chunk.data[len(chunk.keyword.encode("latin-1")) + 1:]
    if chunk.chunk_type == "tEXt":
        return rest
    if chunk.chunk_type == "zTXt":
        if not rest:
            raise fail(label, _chunk_msg("png.chunk_empty", what))
        if rest[0] != 0:
            raise fail(label, _chunk_msg("png.method_n", what, method=rest[0]))
        return inflate_bounded(rest[1:], label, what)
    # iTXt: flag(1) method(1) language\0 translated-keyword\0 text
    if len(rest) < 2:
        raise fail(label, _chunk_msg("png.short", what))
    flag, method, body = rest[0], rest[1], rest[2:]
    i1 = body.find(b"\x00")
    i2 = body.find(b"\x00", i1 + 1) if i1 >= 0 else -1
    if i2 < 0:
        raise fail(label, _chunk_msg("png.no_lang", what))
    text = body[i2 + 1:]
    if flag == 0:
        return text
    if flag != 1 or method != 0:
        raise fail(label, _chunk_msg("png.method", what))
    return inflate_bounded(text, label, what)


def decode_card_text(text: bytes, label: str, where: Msg | str) -> Any:
    """base64 → UTF-8 → JSON, as SillyTavern does (``Buffer.from(b64, 'base64').toString('utf8')``), with
    whitespace ignored and missing ``=`` padding tolerated. Text that is already a JSON object (starts with
    ``{``) is accepted too. Raises :class:`CardError` for invalid base64, invalid UTF-8 or invalid JSON."""
    s = text.strip()
    if s.startswith((b"{", b"\xef\xbb\xbf{")):
        return parse_json_bytes(s, label, where)
    try:
        ascii_text = s.decode("ascii")
    except UnicodeDecodeError:
        raise fail(label, message("png.base64_ascii", where=where)) from None
    compact = "".join(ascii_text.split())
    if not compact:
        raise fail(label, message("cardfile.empty_in", where=where))
    if len(compact) % 4:
        compact += "=" * (-len(compact) % 4)
    try:
        if "-" in compact or "_" in compact:
            raw = base64.urlsafe_b64decode(compact)
        else:
            raw = base64.b64decode(compact, validate=True)
    except (binascii.Error, ValueError):
        raise fail(label, message("png.base64", where=where)) from None
    return parse_json_bytes(raw, label, where)


def read_png_card(f: IO[bytes], size: int, label: str) -> PngCard:
    """Read the card from a PNG/APNG (``f`` seekable, ``size`` bytes).

    Precedence: the first ``ccv3`` chunk, else the first ``chara`` chunk (any of tEXt/zTXt/iTXt, keyword
    case-insensitive, before or after IDAT). If ``ccv3`` cannot be decoded (bad base64/UTF-8/JSON/zlib) but a
    ``chara`` chunk can, the ``chara`` card is used with a warning; a CRC mismatch on a card chunk is always an
    error. ``chara-ext-asset_`` chunks referenced by ``data.assets`` (``__asset:{path}``) are loaded (CRC checked,
    base64-decoded, at most :data:`MAX_PNG_ASSET_BYTES` in total).

    Raises :class:`CardError` for a broken PNG structure (see :func:`iter_chunks`), no card chunk ("没有角色卡
    数据"), an oversize or corrupt card chunk."""
    found: dict[str, TextChunk] = {}
    asset_chunks: dict[str, Chunk] = {}
    warnings: list[Msg] = []
    width = height = 0
    seen_idat = has_iend = False
    for chunk in iter_chunks(f, size, label):
        if chunk.type == b"IHDR":
            if chunk.length != 13:
                raise fail(label, message("png.ihdr_length"))
            f.seek(chunk.data_start)
            width, height = struct.unpack(">II", f.read(8))
        elif chunk.type in (b"IDAT", b"fdAT"):
            seen_idat = True
        elif chunk.type == b"IEND":
            has_iend = True
        elif chunk.type in TEXT_TYPES:
            kw, prefix = _keyword_of(f, chunk)
            if kw is None:
                continue
            low = kw.lower()
            if low.startswith(ASSET_KEYWORD_PREFIX):
                asset_chunks.setdefault(kw[len(ASSET_KEYWORD_PREFIX):].lstrip(":"), chunk)
                continue
            if low not in CARD_KEYWORDS or low in found:
                continue
            ctype = chunk.name
            if chunk.length > MAX_CARD_BYTES:
                raise fail(label, message("png.card_chunk_big", kw=kw, type=ctype, mib=chunk.length // MiB,
                                              max=MAX_CARD_BYTES // MiB))
            data, ok = _read_checked(f, chunk, prefix)
            if not ok:
                raise fail(label, message("png.crc", kw=kw, type=ctype))
            found[low] = TextChunk(kw, ctype, data, seen_idat, chunk.index)
    if not found:
        if not has_iend:
            raise fail(label, message("png.no_iend"))
        raise fail(label, message("png.no_card"))
    if not has_iend:
        warnings.append(message("cardwarn.no_iend"))
    obj: Any = None
    used: Optional[TextChunk] = None
    first_error: Optional[Exception] = None
    for kw in CARD_KEYWORDS:
        tc = found.get(kw)
        if tc is None:
            continue
        where = message("cardfile.where.png", kw=tc.keyword, type=tc.chunk_type)
        try:
            obj = decode_card_text(text_of(tc, label), label, where)
        except CardError as e:  # decoding failed; fall back to chara once
            if first_error is None:
                first_error = e
            continue
        used = tc
        break
    if used is None:
        assert first_error is not None
        raise first_error
    if first_error is not None:
        warnings.append(message("cardwarn.ccv3_fallback", why=_unlabelled(first_error)))
    out = PngCard(card=obj, keyword=used.keyword, chunk_type=used.chunk_type, after_idat=used.after_idat,
                  width=width, height=height, warnings=warnings)
    if asset_chunks:
        _load_png_assets(f, obj, asset_chunks, out, label)
    return out


def _load_png_assets(f: IO[bytes], obj: Any, chunks: dict[str, Chunk], out: PngCard, label: str) -> None:
    data = obj.get("data") if isinstance(obj, dict) else None
    assets = data.get("assets") if isinstance(data, dict) else None
    budget = MAX_PNG_ASSET_BYTES
    for a in assets if isinstance(assets, list) else []:
        uri = a.get("uri") if isinstance(a, dict) else None
        if not isinstance(uri, str) or not uri.startswith("__asset:") or uri in out.assets:
            continue
        chunk = chunks.get(uri[len("__asset:"):])
        if chunk is None:
            out.warnings.append(message("cardwarn.asset_not_in_png", uri=shown(uri)))
            continue
        if chunk.length > budget:
            out.warnings.append(message("cardwarn.asset_big", uri=shown(uri)))
            continue
        kw, prefix = _keyword_of(f, chunk)
        blob, ok = _read_checked(f, chunk, prefix)
        if not ok or kw is None:
            out.warnings.append(message("cardwarn.asset_crc", uri=shown(uri)))
            continue
        tc = TextChunk(kw, chunk.name, blob, True, chunk.index)
        try:
            raw = base64.b64decode(b"".join(text_of(tc, label).split()), validate=True)
        except (CardError, binascii.Error, ValueError):
            out.warnings.append(message("cardwarn.asset_base64", uri=shown(uri)))
            continue
        budget -= len(raw)
        out.assets[uri] = raw


# -- writing -------------------------------------------------------------------------------------------------


def make_chunk(ctype: bytes, data: bytes) -> bytes:
    """One encoded chunk: length, type, data, CRC-32(type + data)."""
    return struct.pack(">I", len(data)) + ctype + data + struct.pack(">I", zlib.crc32(data, zlib.crc32(ctype)))


def text_chunk(keyword: str, text: str) -> bytes:
    """A ``tEXt`` chunk (keyword and text Latin-1; card text is base64 ASCII)."""
    return make_chunk(b"tEXt", keyword.encode("latin-1") + b"\x00" + text.encode("latin-1"))


@functools.lru_cache(maxsize=1)
def default_png() -> bytes:
    """The avatar used when a card is exported without an image: a plain 256×384 (2:3, SillyTavern's avatar
    shape) warm-grey RGB PNG, about 1 KB."""
    w, h = 256, 384
    row = b"\x00" + bytes((0xE9, 0xE4, 0xDA)) * w
    ihdr = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    return PNG_SIGNATURE + make_chunk(b"IHDR", ihdr) + make_chunk(b"IDAT", zlib.compress(row * h, 9)) + make_chunk(b"IEND", b"")


def replace_card_chunks(image: bytes, texts: list[tuple[str, str]], label: str = "") -> bytes:
    """``image`` (PNG/APNG bytes) with every existing ``chara``/``ccv3`` text chunk (tEXt/zTXt/iTXt, any case)
    removed and ``texts`` (keyword, base64 text) inserted as tEXt chunks just before ``IEND`` — what
    SillyTavern's ``write()`` does. All other chunks are copied byte for byte; anything after IEND is dropped; a
    missing IEND is added. Raises :class:`CardError` if ``image`` is not a readable PNG (a JPEG/WEBP/GIF is
    named)."""
    label = label or message("cardfile.label.image")
    foreign = sniff_foreign(image[:16])
    if foreign:
        raise fail(label, message("png.export_needs_png", kind=foreign))
    f = io.BytesIO(image)
    parts = [PNG_SIGNATURE]
    for chunk in iter_chunks(f, len(image), label):
        if chunk.type == b"IEND":
            break
        if chunk.type in TEXT_TYPES:
            kw, _ = _keyword_of(f, chunk)
            if kw is not None and kw.lower() in CARD_KEYWORDS:
                continue
        parts.append(image[chunk.start:chunk.end])
    parts.extend(text_chunk(kw, text) for kw, text in texts)
    parts.append(make_chunk(b"IEND", b""))
    return b"".join(parts)
