"""The on-disk cache of big world books (issue 15 item 10): a 50,000-entry card book took seconds to parse and to
compile each time a chat opened. Two kinds of file live in ``<home>/cache/lore/`` (:func:`..paths.cache_dir`):

* ``book-<key>.bin`` — a parsed book as plain rows (each entry's field values, the values as read, which raw entry
  it came from), keyed by :func:`book_key`: a SHA-256 of the book's JSON content, its name and source, and a
  fingerprint of the parsing code (:func:`_code_tag`), so an edited card, a changed parser or another Python simply
  miss. Opening a chat with an unchanged book loads the rows instead of parsing (:func:`load_rows`).
* The same ``book-<key>.bin`` rows for a book *file* (issue 29 §8), keyed by :func:`file_key`: the SHA-256 of the
  file's bytes (not its path or mtime: any edit misses, a copy hits), its name and source, and the code
  fingerprint. ``Lorebook.from_file`` then builds the book without decoding the JSON; the entries' raw JSON,
  needed only for export, is decoded from the file when export asks (:class:`RawFile`, which checks the hash
  again: a file changed since is never mixed into the book).
* ``ac-<key>.bin`` — the Aho–Corasick automaton over a book's literal keys (:func:`automaton`), keyed by the needles
  themselves, so it serves the chat's merged book however it was put together.

Every file is ``MAGIC`` + a BLAKE2b digest of the payload + the payload (a pickle); a file that is short, has
another version tag or a wrong digest is ignored and rebuilt (never trusted: the automaton is a C structure).
Files are written atomically (:func:`..fsutil.atomic_write_bytes`); a folder that refuses writes only costs speed.
This is a cache: any file may be deleted at any time, and the folder is kept under :data:`MAX_BYTES` (least
recently used first, :func:`prune`). The files are the user's own (their data folder); pickle is
only ever read from there.

Formats measured for the 50,000-entry bench book (bench/lorebook.py): pickle of plain dict rows loads in ~0.4 s
with the garbage collector paused (4.9 s with it running: the collector rescans the growing heap), JSON of the same
rows ~1.2 s; msgpack is no dependency. The automaton (150,000 needles) loads in ~35 ms, builds in ~200 ms.
"""

from __future__ import annotations

import gc
import hashlib
import inspect
import logging
import marshal
import pickle
import sys
import types
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Optional

from ..fsutil import atomic_write_bytes
from ..paths import cache_dir

log = logging.getLogger(__name__)

#: Bump when the row layout changes (the code fingerprint already covers edits to the parser).
CACHE_VERSION = 1
MAGIC = b"LYLORE1\n"
_DIGEST = 32
#: Books and needle sets below these sizes are not written to disk (they parse/build in milliseconds).
DISK_MIN_ENTRIES = 1000
DISK_MIN_NEEDLES = 2000
#: Automata kept in memory, most recent last.
_AC_MEMO: dict[str, Any] = {}
_AC_MEMO_MAX = 8
#: What happened, for tests and the bench: "parsed" (rows built by parsing), "disk_hit", "disk_miss",
#: "disk_bad" (damaged or old file ignored), "ac_built", "ac_disk_hit", "write_failed".
STATS: dict[str, int] = {}


def _count(what: str) -> None:
    STATS[what] = STATS.get(what, 0) + 1


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while building many objects at once (tens of thousands of entries):
    a collection is triggered every few hundred allocations and rescans the whole young heap, and full collections
    rescan everything — the load of a 50,000-entry book went from ~5 s to ~0.4 s. Reference counting still frees
    memory; the collector runs again afterwards."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def folder() -> Path:
    """``<home>/cache/lore`` (created)."""
    p = cache_dir() / "lore"
    p.mkdir(parents=True, exist_ok=True)
    return p


_TAG: list[bytes] = []


def _code_tag() -> bytes:
    """A fingerprint of everything that decides what a parse gives: the cache version, the Python and pydantic
    versions, and the source of the lore model/formats/lorebook modules (a changed parser misses). The same in every
    process: the first version hashed marshalled code objects and reprs of sets, whose bytes change with the string
    hash seed and with reference counts — so a new process never found the files the last one wrote (and wrote
    another 24 MB file for the same book each start)."""
    if not _TAG:
        import pydantic

        from . import formats, lorebook, model

        h = hashlib.sha256(f"{CACHE_VERSION}|{sys.version_info[:2]}|{pydantic.VERSION}".encode())
        for mod in (model, formats, lorebook):
            h.update(mod.__name__.encode() + b"\x00" + _module_text(mod))
        _TAG.append(h.digest())
    return _TAG[0]


def _module_text(mod: types.ModuleType) -> bytes:
    """The module's source file as bytes; without one (a frozen build), its functions' bytecode and names in a
    process-independent form (sorted; no marshal, no set reprs)."""
    try:
        return inspect.getsource(mod).encode("utf-8", "surrogatepass")
    except (OSError, TypeError):
        pass
    out: list[bytes] = []

    def code_bytes(code: types.CodeType) -> bytes:
        parts = [code.co_code, repr(code.co_names).encode(), repr(code.co_varnames).encode()]
        for c in code.co_consts:
            if isinstance(c, types.CodeType):
                parts.append(code_bytes(c))
            elif isinstance(c, frozenset):
                parts.append(repr(sorted(map(repr, c))).encode("utf-8", "surrogatepass"))
            else:
                parts.append(repr(c).encode("utf-8", "surrogatepass"))
        return b"\x00".join(parts)

    for name, obj in sorted(vars(mod).items()):
        fn = obj
        if isinstance(fn, types.FunctionType) and fn.__module__ == mod.__name__:
            out.append(name.encode() + code_bytes(fn.__code__))
        elif isinstance(obj, type) and obj.__module__ == mod.__name__:
            for an, av in sorted(vars(obj).items()):
                f = getattr(av, "__func__", av)
                if isinstance(f, types.FunctionType):
                    out.append(f"{name}.{an}".encode() + code_bytes(f.__code__))
    return b"\x01".join(out)


def book_key(kind: str, obj: Any, name: str, source: str) -> Optional[str]:
    """The content key of a book about to be parsed: SHA-256 over :func:`_code_tag`, ``kind`` ("card" | "wi"), the
    JSON value ``obj`` (marshal format 0: a faithful encoding of dicts/lists/strings/numbers, ~4x faster than
    ``json.dumps`` on a 20 MB book), ``name`` and ``source``. None when ``obj`` holds something marshal cannot
    encode (then nothing is cached)."""
    try:
        data = marshal.dumps([kind, obj, name, source], 0)
    except (ValueError, TypeError, RecursionError):
        return None
    h = hashlib.sha256(_code_tag())
    h.update(data)
    return h.hexdigest()


#: The cache folder is kept under this many bytes: after each write the least recently used files go (a hit
#: touches its file). A 50,000-entry book is ~24 MB of rows + ~16 MB of automaton.
MAX_BYTES = 512 * 1024 * 1024


def prune(limit: Optional[int] = None, keep: Optional[Path] = None) -> int:
    """Delete the least recently used cache files (by modification time, which a hit refreshes) until the folder
    holds at most ``limit`` bytes (default :data:`MAX_BYTES`); ``keep`` (the file just written) is never deleted. Returns the number deleted;
    never raises (a file another process removed meanwhile is skipped)."""
    limit = MAX_BYTES if limit is None else limit
    files = []
    for f in folder().glob("*.bin"):
        try:
            st = f.stat()
        except OSError:
            continue
        files.append((st.st_mtime, st.st_size, f))
    total = sum(size for _, size, _ in files)
    gone = 0
    for _, size, f in sorted(files, key=lambda t: t[0]):
        if total <= limit:
            break
        if keep is not None and f == keep:
            continue
        try:
            f.unlink()
        except OSError:
            continue
        total -= size
        gone += 1
    if gone:
        log.info("lore cache pruned: %d file(s) removed, %d bytes kept", gone, total)
    return gone


def _touch(path: Path) -> None:
    try:
        path.touch(exist_ok=True)
    except OSError:
        pass


def _write(path: Path, payload: Any) -> None:
    try:
        data = pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)
        atomic_write_bytes(path, MAGIC + hashlib.blake2b(data, digest_size=_DIGEST).digest() + data)
    except (OSError, pickle.PicklingError, TypeError, ValueError, RecursionError) as e:
        _count("write_failed")
        log.info("lore cache %s not written: %s", path.name, e)
        return
    prune(keep=path)


def _read(path: Path) -> Any:
    """The payload of a cache file, or None when missing; raises ValueError when damaged or of another version."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    head = len(MAGIC) + _DIGEST
    if len(data) < head or not data.startswith(MAGIC):
        raise ValueError("not a cache file of this version")
    body = memoryview(data)[head:]
    if hashlib.blake2b(body, digest_size=_DIGEST).digest() != data[len(MAGIC):head]:
        raise ValueError("digest mismatch")
    with gc_paused():
        return pickle.loads(body)


def _drop(path: Path, why: Exception) -> None:
    _count("disk_bad")
    log.warning("lore cache %s ignored (%s); rebuilding it", path.name, why)
    try:
        path.unlink()
    except OSError:
        pass


def load_rows(key: str) -> Any:
    """The rows stored under ``key`` by :func:`save_rows`, or None (missing, damaged — then deleted — or unreadable)."""
    path = folder() / f"book-{key}.bin"
    try:
        got = _read(path)
    except Exception as e:  # noqa: BLE001 - any damage: ignore and rebuild
        _drop(path, e)
        return None
    if got is None:
        _count("disk_miss")
        return None
    if not (isinstance(got, tuple) and len(got) == 2 and got[0] == key):
        _drop(path, ValueError("key mismatch"))
        return None
    _count("disk_hit")
    _touch(path)  # least recently used goes first when the folder is pruned
    return got[1]


def save_rows(key: str, rows: Any) -> None:
    """Store ``rows`` (plain data) under ``key``; failures are logged, never raised."""
    _write(folder() / f"book-{key}.bin", (key, rows))


def automaton(needles: list[str], base: int) -> Any:
    """An ``ahocorasick.Automaton`` over ``needles`` (value of needle ``i`` = ``base + i``), from memory, from the
    disk cache (needle sets of :data:`DISK_MIN_NEEDLES` or more) or built (and then stored). None when the
    ``pyahocorasick`` package is missing (activation then looks at every entry, as before)."""
    try:
        import ahocorasick
    except ImportError:  # pragma: no cover - a declared dependency
        return None
    h = hashlib.sha256(f"ac|{CACHE_VERSION}|{getattr(ahocorasick, '__version__', '')}|{base}\x00".encode())
    h.update("\x00".join(needles).encode("utf-8", "surrogatepass"))
    key = h.hexdigest()
    got = _AC_MEMO.pop(key, None)
    if got is None and len(needles) >= DISK_MIN_NEEDLES:
        path = folder() / f"ac-{key}.bin"
        try:
            loaded = _read(path)
        except Exception as e:  # noqa: BLE001
            _drop(path, e)
            loaded = None
        if isinstance(loaded, tuple) and len(loaded) == 2 and loaded[0] == key \
                and isinstance(loaded[1], ahocorasick.Automaton) and len(loaded[1]) == len(needles):
            got = loaded[1]
            _count("ac_disk_hit")
            _touch(path)
        elif loaded is not None:
            _drop(path, ValueError("key mismatch"))
    if got is None:
        got = ahocorasick.Automaton()
        for i, n in enumerate(needles):
            got.add_word(n, base + i)
        got.make_automaton()
        _count("ac_built")
        if len(needles) >= DISK_MIN_NEEDLES:
            _write(folder() / f"ac-{key}.bin", (key, got))
    _AC_MEMO[key] = got
    while len(_AC_MEMO) > _AC_MEMO_MAX:
        _AC_MEMO.pop(next(iter(_AC_MEMO)))
    return got


# -- world-info files (issue 29 §8) ---------------------------------------------------------------------------
#: Book files smaller than this are read as before (json.loads: milliseconds); bigger ones go through
#: :func:`file_key` and the rows cache, so a warm open decodes no JSON at all.
FILE_MIN_BYTES = 256 * 1024


def file_digest(data: bytes) -> str:
    """SHA-256 of a book file's bytes, hex (the whole file, not a sample: ~80 ms for 98 MB with the CPU's SHA
    instructions, ~250 ms without — cheap beside the 1.5 s JSON decode it spares)."""
    return hashlib.sha256(data).hexdigest()


def file_key(digest: str, name: str, source: str) -> str:
    """The rows-cache key of a book file with content hash ``digest`` (:func:`file_digest`) read as ``name`` and
    ``source``: SHA-256 over :func:`_code_tag` (the parser's code), "file", the three values. The content hash makes
    the key follow the bytes alone: an edited file (same size, any mtime) misses, a copied or touched one hits."""
    h = hashlib.sha256(_code_tag())
    h.update(f"file\x00{digest}\x00{name}\x00{source}".encode("utf-8", "surrogatepass"))
    return h.hexdigest()


class RawFile:
    """The JSON of a book file, decoded only when asked (:meth:`get`): a book opened from the rows cache keeps its
    entries' raw JSON here, for export (which rewrites only what changed) and nothing else. ``path`` is the file,
    ``digest`` its :func:`file_digest` when the book was opened. :meth:`get` reads the file again and returns the
    decoded object when its bytes still hash to ``digest``; when the file changed or vanished since, None (logged):
    the caller exports the entries from their fields (SillyTavern's conversion), never another file's JSON.
    Shared, never copied (a deep copy of a book shares it)."""

    def __init__(self, path: Path, digest: str) -> None:
        self.path, self.digest = Path(path), digest
        self._obj: Any = None
        self._tried = False

    def __deepcopy__(self, memo: dict[int, Any]) -> "RawFile":
        return self

    def get(self) -> Any:
        """The decoded JSON (a dict) or None (file changed since it was opened, unreadable, or not JSON)."""
        if not self._tried:
            self._tried = True
            import json

            try:
                data = self.path.read_bytes()
                if file_digest(data) != self.digest:
                    log.warning("world info %s changed since it was opened: exported from its fields", self.path)
                else:
                    with gc_paused():
                        self._obj = json.loads(data.decode("utf-8-sig"))
            except (OSError, ValueError, RecursionError) as e:
                log.warning("world info %s not read again: %s", self.path, e)
        return self._obj
