"""JSON from files a user brings (SillyTavern folders, cards, world books, presets, chat files): the one place such
JSON is parsed, so the same two rules hold for every caller — a nesting depth limit and a size limit checked before
a byte is read.

Why: Python's ``json`` recurses once per nesting level, so a file nested 100,000 deep raises ``RecursionError`` (not
a ``ValueError``) from the parser, and one nested just under the interpreter's limit parses but breaks the first
recursive consumer after it (``json.dumps``, pydantic, a variable walker). No real SillyTavern file nests more than
a few dozen levels (an MVU variable tree is the deepest, ~10–20), so :data:`MAX_DEPTH` is far above real data and far
below the interpreter's limit. A 2 GB file read whole costs its size in memory several times over before it is found
wanting: :func:`read_json_file` checks the size on disk first (:data:`MAX_FILE_BYTES` unless the caller gives its
own limit).

The depth check costs nothing for small documents (fewer opening brackets than the limit cannot nest deeper) and is
linear in C otherwise: string literals are cut out, the brackets kept and folded to one kind, and the innermost
pairs removed once per level until none are left or the limit is passed (:func:`too_deep`). Errors are ``ValueError``
subclasses carrying a catalog message (``core.messages``), so every caller that already reports a bad JSON file
reports these too.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Optional

__all__ = ["MAX_DEPTH", "MAX_FILE_BYTES", "JsonFileError", "JsonTooDeep", "JsonTooBig", "too_deep", "loads",
           "read_json_file", "check_size",
           "object_at"]

#: the deepest nesting accepted (levels of ``[``/``{``); real SillyTavern data stays below ~20
MAX_DEPTH = 256
#: the default size limit of :func:`read_json_file` (bytes): a settings.json, preset or world book is far smaller
MAX_FILE_BYTES = 256 * 1024 ** 2

_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_FOLD = bytes.maketrans(b"{}", b"[]")
_NOT_BRACKET = bytes(b for b in range(256) if b not in b"[]{}")


class JsonFileError(ValueError):
    """A user's JSON file refused by a rule of this module; ``args[0]`` is a catalog message naming the file."""


class JsonTooDeep(JsonFileError):
    """The document nests deeper than the limit (:data:`MAX_DEPTH`)."""


class JsonTooBig(JsonFileError):
    """The file is larger than the limit given (checked on disk, before reading)."""


def too_deep(data: bytes | str, limit: int = MAX_DEPTH) -> bool:
    """Whether the JSON text ``data`` nests arrays/objects deeper than ``limit`` levels (brackets inside string
    literals do not count). Linear, in C (module doc); a text that is not valid JSON gives an answer the parser
    will overrule anyway."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return False
    # first counting the brackets inside strings too (an upper bound, no regex); exact only when that is too deep
    return _deeper(raw.translate(_FOLD, _NOT_BRACKET), limit) and \
        _deeper(_STRING.sub(b"", raw).translate(_FOLD, _NOT_BRACKET), limit)


def _deeper(brackets: bytes, limit: int) -> bool:
    for _ in range(limit):
        if not brackets:
            return False
        fewer = brackets.replace(b"[]", b"")  # one level per pass: replace() does not rescan what it produced
        if len(fewer) == len(brackets):
            return False  # unbalanced leftovers: the parser says what is wrong
        brackets = fewer
    return b"[]" in brackets


def loads(data: bytes | str, name: str = "JSON", *, max_depth: int = MAX_DEPTH) -> Any:
    """Parse JSON text (bytes are UTF-8, a BOM is allowed) from a user's file called ``name`` (for the message).
    Raises :class:`JsonTooDeep` when it nests deeper than ``max_depth``, ``UnicodeDecodeError`` /
    ``json.JSONDecodeError`` as ``json`` does (all three are ``ValueError``)."""
    from .messages import message

    if too_deep(data, max_depth):
        raise JsonTooDeep(message("jsonfile.too_deep", name=name, max=max_depth))
    text = data.decode("utf-8-sig") if isinstance(data, (bytes, bytearray)) else data
    try:
        return json.loads(text)
    except RecursionError:  # only with a limit set near the interpreter's own
        raise JsonTooDeep(message("jsonfile.too_deep", name=name, max=max_depth)) from None


def check_size(path: str | Path, limit: int, name: Optional[str] = None) -> int:
    """The size of ``path`` in bytes (``os.stat``; nothing is read); :class:`JsonTooBig` naming the size and the
    limit when it is over ``limit``. OSError when the file cannot be stat'ed."""
    from .messages import message

    p = Path(path)
    size = os.stat(p).st_size
    if size > limit:
        raise JsonTooBig(message("jsonfile.too_big", name=name or p.name, size=_mib(size), max=_mib(limit)))
    return size


def read_json_file(path: str | Path, *, max_bytes: int = MAX_FILE_BYTES, max_depth: int = MAX_DEPTH,
                   name: Optional[str] = None) -> Any:
    """Read and parse a user's JSON file: its size is checked before reading (:func:`check_size`), then
    :func:`loads`. Raises OSError (unreadable), :class:`JsonTooBig`, :class:`JsonTooDeep`, ``ValueError`` (not
    UTF-8, not JSON)."""
    p = Path(path)
    label = name or p.name
    check_size(p, max_bytes, label)
    with open(p, "rb") as f:
        data = f.read(max_bytes + 1)  # the file may have grown since the stat
    if len(data) > max_bytes:
        from .messages import message

        raise JsonTooBig(message("jsonfile.too_big", name=label, size=_mib(len(data)), max=_mib(max_bytes)))
    return loads(data, label, max_depth=max_depth)


def _mib(n: int) -> str:
    return f"{n / 1024 ** 2:.1f}"


def object_at(d: Mapping[Any, Any], key: Any) -> dict[str, Any]:
    """``d[key]`` when it is a JSON object (a ``dict``), else a new empty dict — the same object, never a copy.

    For reading nested parts of a file a user brings, where any level may be missing or of the wrong kind
    (``st["oai_settings"]`` in a SillyTavern ``settings.json`` that lacks it or holds a string).
    """
    v = d.get(key)
    return v if isinstance(v, dict) else {}
