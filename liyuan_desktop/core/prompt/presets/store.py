"""The preset library (预设): reading one preset file (:func:`load_preset`) and the installed presets under
``<home>/预设/`` — import, list, load, delete, and a report of what a preset does in Liyuan (:func:`describe_preset`).

A Chinese-layout data folder names its folders in Chinese (对话, 世界书, 预设); an English-layout one calls the
library ``presets/`` (:mod:`core.paths`). Earlier versions kept presets in ``<home>/presets/``: in a
Chinese-layout data folder, on first use of the library its files are moved into ``预设/`` (a name already there wins
and the old file stays), and for one release both folders are still read (``预设/`` first); in an English-layout one
``presets/`` is the library itself.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Optional

from pydantic import BaseModel, Field

from ...fsutil import atomic_write_text
from ...jsonfile import JsonFileError, check_size, loads
from ...llm.sampling import apply_sampling, field_label
from ...messages import message, render
from ...paths import home, home_folder, safe_name
from .mapping import plan
from .model import SENSITIVE_KEYS, Preset, PresetError

__all__ = ["load_preset", "presets_dir", "install_preset", "list_presets", "load_installed_preset",
           "delete_preset", "preset_path", "write_preset", "without_secrets", "describe_preset", "PresetReport", "PRESETS_FOLDER", "LEGACY_FOLDER"]

#: the library folder of a Chinese-layout data folder (core.paths), and the one earlier versions used
PRESETS_FOLDER = "预设"
LEGACY_FOLDER = "presets"


#: the largest preset file read (bytes; checked on disk before reading): real presets are well under 1 MB
MAX_PRESET_BYTES = 32 * 1024 ** 2


def load_preset(path: str | Path) -> Preset:
    """Read a preset file (UTF-8, BOM tolerated) through the one reader of users' JSON (``core.jsonfile``: the size
    is checked before reading, :data:`MAX_PRESET_BYTES`; nesting is bounded). Its name is the file name without
    extension. Raises :class:`PresetError` for unreadable, too big or too deeply nested files, bad JSON and files
    that are not chat-completion presets."""
    p = Path(path)
    try:
        check_size(p, MAX_PRESET_BYTES)
        raw = p.read_bytes()
    except JsonFileError as e:
        raise PresetError(e.args[0] if e.args else str(e)) from None
    except OSError as e:
        raise PresetError(message("presetfile.cannot_read", path=str(p), error=e.strerror or str(e))) from e
    if raw[:8] == b"\x89PNG\r\n\x1a\n":
        raise PresetError(message("presetfile.png", name=p.name))
    try:
        obj = loads(raw, p.name)
    except JsonFileError as e:
        raise PresetError(e.args[0] if e.args else str(e)) from None
    except UnicodeDecodeError as e:
        raise PresetError(message("presetfile.not_utf8", name=p.name)) from e
    except json.JSONDecodeError as e:
        hint = message("presetfile.jsonl_hint") if p.suffix.lower() == ".jsonl" else ""
        raise PresetError(message("presetfile.bad_json", name=p.name, hint=hint, line=e.lineno, error=e.msg)) from e
    return Preset.from_json(obj, name=p.stem)


def _legacy_dir() -> Path:
    return home() / LEGACY_FOLDER


def presets_dir() -> Path:
    """``<home>/预设`` (``<home>/presets`` in an English-layout data folder, :mod:`core.paths`; created on
    demand). Every call first moves any file left in the old ``<home>/presets`` folder in (module doc); a file that
    cannot be moved stays where it is and is still read."""
    d = home_folder("presets")
    d.mkdir(parents=True, exist_ok=True)
    old = _legacy_dir()
    if old.is_dir() and old != d:  # an English-layout folder: presets/ is the library itself
        for f in old.glob("*.json"):
            target = d / f.name
            if target.exists():
                continue
            try:
                os.replace(f, target)
            except OSError:
                pass
        try:
            old.rmdir()  # only when empty
        except OSError:
            pass
    return d


def preset_path(name: str) -> Optional[Path]:
    """The file of the installed preset ``name`` (``预设/`` first, then the old ``presets/``), or None."""
    file = f"{safe_name(name, 'preset')}.json"
    for d in (presets_dir(), _legacy_dir()):
        if (d / file).is_file():
            return d / file
    return None


def install_preset(path: str | Path, name: Optional[str] = None) -> Preset:
    """Validate a preset file and copy it into :func:`presets_dir` as ``<name>.json`` (``name``: the library name,
    default the file's stem; an existing one with that name is replaced). The copy drops the :data:`SENSITIVE_KEYS`
    that hold something (proxy passwords, custom URLs/headers), as ST's own export does (:func:`without_secrets`). Returns the loaded preset. Raises
    PresetError / OSError."""
    preset = load_preset(path)
    if name:
        preset.name = name
    write_preset(preset.name, preset.raw)
    return preset


def without_secrets(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` (a preset's JSON) without the :data:`SENSITIVE_KEYS` that hold something (a proxy password, a custom
    URL…). Keys present but empty (``""``, null, false, ``[]``, ``{}`` — SillyTavern's own ``Default.json`` ships
    them so) are kept: nothing secret is in them, and keeping them lets an unedited preset export JSON-equal to the
    file imported."""
    return {k: v for k, v in doc.items() if k not in SENSITIVE_KEYS or not v}


def write_preset(name: str, doc: dict[str, Any]) -> Path:
    """Write the preset JSON ``doc`` into the library as ``<name>.json`` (atomic; an existing file of that name is
    replaced; :func:`without_secrets` first; 4-space indent, UTF-8, as SillyTavern writes presets). Returns the
    path. Raises OSError when the disk refuses (the old file is untouched then)."""
    dest = presets_dir() / f"{safe_name(name, 'preset')}.json"
    return atomic_write_text(dest, json.dumps(without_secrets(doc), ensure_ascii=False, indent=4))


def list_presets() -> list[str]:
    """Names of the installed presets (file stems in ``预设/`` and, for one release, the old ``presets/``), sorted."""
    names = {p.stem for p in presets_dir().glob("*.json")}
    old = _legacy_dir()
    if old.is_dir():
        names |= {p.stem for p in old.glob("*.json")}
    return sorted(names)


def load_installed_preset(name: str) -> Preset:
    """An installed preset by name (PresetError when missing or broken)."""
    p = preset_path(name)
    if p is None:
        raise PresetError(message("presetfile.missing", name=name))
    return load_preset(p)


def delete_preset(name: str) -> bool:
    """Remove the installed preset ``name`` from the library (both folders). True if a file was removed. Chats
    that use it open without it afterwards (with a notice). Raises OSError when the disk refuses."""
    removed = False
    while (p := preset_path(name)) is not None:
        p.unlink()
        removed = True
    return removed


class PresetReport(BaseModel):
    """What a preset does in Liyuan, for the 预设 dialog and ``liyuan preset show``: ``lines`` (the mapping:
    where each prompt goes, what is dropped and why, how it differs from SillyTavern — ``PresetPlan.describe``),
    ``repairs`` (what was repaired on import), ``sampling`` (the values sent, by field name), ``sampling_notes``
    (values not used and why), ``sent``/``not_sent`` (for a given provider kind: fields sent, and the ones that
    provider does not take)."""

    name: str
    lines: list[Any] = Field(default_factory=list)  # catalog messages (Msg, PresetPlan.describe), kept as such
    repairs: list[str] = Field(default_factory=list)
    sampling: dict[str, Any] = Field(default_factory=dict)
    sampling_notes: list[Any] = Field(default_factory=list)  # catalog messages (Msg), kept as such
    not_sent: list[Any] = Field(default_factory=list)

    def text(self, lang: str = "zh") -> str:
        """The report as plain text in ``lang`` ("zh"/"en"), one line each (sections: the mapping, repaired on
        import, sampling — the sampling labels and notes are catalog messages)."""
        out = [render(line, lang) for line in self.lines]
        if self.repairs:
            out.append("")
            out.append(render(message("preset.report.repairs"), lang))
            out.extend(f"  · {render(r, lang)}" for r in self.repairs)
        out.append("")
        out.append(render(message("preset.report.sampling" if self.sampling else "preset.report.no_sampling"), lang))
        out.extend(f"  · {render(field_label(k), lang)} = {v}" for k, v in self.sampling.items())
        out.extend(f"  · {render(n, lang)}" for n in self.sampling_notes + self.not_sent)
        return "\n".join(out)


def describe_preset(preset: Preset, provider: str = "other") -> PresetReport:
    """The :class:`PresetReport` of ``preset`` for a connection to provider kind ``provider`` (see
    :func:`liyuan_desktop.core.llm.sampling.provider_kind`)."""
    sampling, notes = preset.request_sampling()
    not_sent = apply_sampling({}, sampling, provider) if provider != "other" else []  # type: ignore[arg-type]
    return PresetReport(name=preset.name, lines=plan(preset).describe(), repairs=list(preset.warnings),
                        sampling=sampling.values(), sampling_notes=notes, not_sent=not_sent)
