"""Where a SillyTavern data folder is: a ``data/<user>/`` folder (1.12+), a SillyTavern root (its
``data/default-user/``), the older ``public/`` layout, or a backup ``.zip`` of any of these.

SillyTavern's layout (checked against SillyTavern's ``src/endpoints/`` and users' data folders): a user folder holds
``characters/`` (cards, ``.png``/``.json``/``.charx``; sub-folders are expression sprites), ``chats/<card file
stem>/*.jsonl``, ``group chats/*.jsonl`` + ``groups/*.json``, ``worlds/*.json``, ``OpenAI Settings/*.json``,
``User Avatars/*``, ``QuickReplies/*.json``, ``extensions/<name>/``, ``themes/``, ``settings.json`` and
``secrets.json``. Before 1.12 the same folders sat under ``public/`` (``settings.json`` and ``secrets.json`` at
the root). This module only finds the folder; it opens no file but a zip's directory.

A zip is extracted into a private temp folder with checks: member names with ``..``, absolute paths or drive
letters, symlinks and device entries are refused one by one (each becomes a problem line, the rest is extracted);
a member whose data is damaged (corrupt deflate data, a bad CRC, cut short) is one problem line too and the rest is
extracted. Members whose Unix mode carries permission bits but no file type (what Python's ``ZipFile.writestr``
and some tools write) are regular files. The whole zip is refused when it holds more than :data:`MAX_MEMBERS`
entries, or would unpack to more than :func:`unpack_allowance` bytes — :data:`MAX_TOTAL_BYTES`, and never more than
:data:`MAX_RATIO` times the zip's own size (with a floor of :data:`MIN_ALLOWANCE`), so a small zip bomb is stopped
after a few hundred MB, not 8 GB — or holds one entry over :data:`MAX_ENTRY_BYTES` (the byte counts are checked
against the headers first and enforced while reading).
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
import zipfile
import zlib
from pathlib import Path, PurePosixPath
from typing import Optional

from ..messages import message

#: folder names that mark a SillyTavern user data folder
MARKERS = ("characters", "chats", "worlds", "OpenAI Settings", "User Avatars", "settings.json", "group chats",
           "QuickReplies")
MAX_MEMBERS = 200_000
MAX_TOTAL_BYTES = 8 * 1024 ** 3
MAX_ENTRY_BYTES = 1024 ** 3
#: how many times its own size a zip may unpack to (SillyTavern's JSON compresses 5–20×)
MAX_RATIO = 100
#: what any zip may unpack to, whatever its ratio
MIN_ALLOWANCE = 64 * 1024 ** 2


def unpack_allowance(zip_bytes: int) -> int:
    """The most a zip of ``zip_bytes`` bytes may unpack to: ``MAX_RATIO × zip_bytes``, at least
    :data:`MIN_ALLOWANCE`, at most :data:`MAX_TOTAL_BYTES`."""
    return min(MAX_TOTAL_BYTES, max(MIN_ALLOWANCE, MAX_RATIO * zip_bytes))


def _member_kind_refused(mode: int) -> bool:
    """A zip member's Unix mode (``external_attr >> 16``) names a link or a special file. Permission bits with no
    file type (``ZipFile.writestr``) are a regular file."""
    kind = stat.S_IFMT(mode)
    return kind not in (0, stat.S_IFREG, stat.S_IFDIR)


class MigrationError(Exception):
    """The path cannot be migrated at all (not a SillyTavern folder, a refused or unreadable zip); the message is
    one Chinese line naming the path and why."""


def _score(d: Path) -> int:
    try:
        names = set(os.listdir(d))
    except OSError:
        return 0
    return sum(1 for m in MARKERS if m in names)


def find_user_dir(root: Path) -> tuple[Optional[Path], str, list[str]]:
    """The SillyTavern user folder under ``root`` and the layout's name ("data/<user>", "public", "user folder").
    Returns ``(folder or None, layout, notes)``; notes name other users' folders that are not migrated. Looks at
    ``root`` itself, ``root/data/<user>`` (``default-user`` first), ``root/<user>`` (the ``data`` folder given),
    ``root/public`` and, for an archive's single top folder, one level further down."""
    notes: list[str] = []
    if _score(root) >= 2 or (root / "characters").is_dir() and _score(root) >= 1:
        layout = "public" if root.name == "public" else "user folder"
        return root, layout, notes
    pub = root / "public"
    if pub.is_dir() and _score(pub) >= 2:
        return pub, "public", notes
    for data in (root / "data", root):
        if not data.is_dir():
            continue
        users = sorted((d for d in data.iterdir() if d.is_dir() and not d.name.startswith(".") and _score(d) >= 2),
                       key=lambda d: (d.name != "default-user", d.name))
        if users:
            if len(users) > 1:
                notes.append(message("migrate.other_users", users=[d.name for d in users[1:]]))
            return users[0], f"data/{users[0].name}", notes
    try:
        subs = [d for d in root.iterdir() if d.is_dir() and not d.name.startswith(".")]
    except OSError:
        subs = []
    if len(subs) == 1:  # an archive with one top folder (SillyTavern-1.12.6/, default-user/ …)
        found, layout, more = find_user_dir(subs[0])
        return found, layout, notes + more
    return None, "", notes


def _unsafe(name: str) -> Optional[str]:
    n = name.replace("\\", "/")
    if n.startswith("/") or (len(n) > 1 and n[1] == ":"):
        return message("migrate.zip.absolute")
    if ".." in PurePosixPath(n).parts:
        return message("migrate.zip.dotdot")
    if "\x00" in n:
        return message("migrate.zip.nul")
    return None


def _ratio_refused(path: Path, allowance: int) -> str:
    if allowance >= MAX_TOTAL_BYTES:
        return message("migrate.bomb", name=path.name)
    return message("migrate.zip_ratio", name=path.name, ratio=MAX_RATIO)


def extract_zip(path: Path, into: Optional[Path] = None) -> tuple[Path, list[str]]:
    """Extract the zip ``path`` safely (module doc) into a new temp folder (under ``into`` when given). Returns
    ``(folder, problems)`` — one Chinese line per refused member. Raises :class:`MigrationError` for a file that
    is not a zip, an over-size archive (nothing is left behind then) or an unreadable one."""
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as e:
        raise MigrationError(message("migrate.bad_zip", name=path.name, error=str(e))) from None
    problems: list[str] = []
    with zf:
        infos = zf.infolist()
        if len(infos) > MAX_MEMBERS:
            raise MigrationError(message("migrate.too_many", name=path.name, n=len(infos), max=MAX_MEMBERS))
        try:
            allowance = unpack_allowance(path.stat().st_size)
        except OSError as e:
            raise MigrationError(message("migrate.zip.unreadable", name=path.name, error=e.strerror or str(e))) from None
        if sum(i.file_size for i in infos) > allowance:
            raise MigrationError(_ratio_refused(path, allowance))
        dest = Path(tempfile.mkdtemp(prefix="liyuan-st-", dir=str(into) if into else None))
        total = 0
        try:
            for info in infos:
                name = info.filename
                why = _unsafe(name)
                mode = info.external_attr >> 16
                if why is None and mode and _member_kind_refused(mode):
                    why = message("migrate.zip.link")
                if why:
                    problems.append(message("migrate.zip.skipped", name=name, why=why))
                    continue
                target = dest.joinpath(*[p for p in PurePosixPath(name.replace("\\", "/")).parts if p not in ("", ".")])
                if not str(target.resolve()).startswith(str(dest.resolve())):
                    problems.append(message("migrate.zip.skipped", name=name, why=message("migrate.zip.outside")))
                    continue
                if info.is_dir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                if info.file_size > MAX_ENTRY_BYTES:
                    raise MigrationError(message("migrate.member_big", name=path.name, member=name, size=info.file_size))
                target.parent.mkdir(parents=True, exist_ok=True)
                written = 0
                try:
                    with zf.open(info) as src, open(target, "wb") as out:
                        while chunk := src.read(1 << 20):
                            written += len(chunk)
                            total += len(chunk)
                            if written > MAX_ENTRY_BYTES:
                                raise MigrationError(message("migrate.bomb", name=path.name))
                            if total > allowance:
                                raise MigrationError(_ratio_refused(path, allowance))
                            out.write(chunk)
                except (zlib.error, zipfile.BadZipFile, EOFError, NotImplementedError) as e:
                    target.unlink(missing_ok=True)  # this member only: the rest is extracted
                    problems.append(message("migrate.zip_damaged", name=name, why=str(e) or type(e).__name__))
        except MigrationError:
            shutil.rmtree(dest, ignore_errors=True)
            raise
        except (zipfile.BadZipFile, OSError, EOFError, RuntimeError, zlib.error, NotImplementedError) as e:
            shutil.rmtree(dest, ignore_errors=True)
            raise MigrationError(message("migrate.unzip_failed", name=path.name, error=str(e))) from None
        except BaseException:  # Ctrl-C, a bug: the temp folder is not left behind either
            shutil.rmtree(dest, ignore_errors=True)
            raise
    return dest, problems
