"""Preset files: reading one (:func:`load_preset`) and the installed presets under ``<home>/presets``."""

from __future__ import annotations

import json
from pathlib import Path

from .model import SENSITIVE_KEYS, Preset, PresetError

__all__ = ["load_preset", "presets_dir", "install_preset", "list_presets", "load_installed_preset"]


def load_preset(path: str | Path) -> Preset:
    """Read a preset file (UTF-8, BOM tolerated). Its name is the file name without extension.
    Raises :class:`PresetError` for unreadable files, bad JSON and files that are not chat-completion presets."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as e:
        raise PresetError(f"无法读取预设 {p}：{e.strerror or e}") from e
    if raw[:8] == b"\x89PNG\r\n\x1a\n":
        raise PresetError(f"{p.name}：这是 PNG 图片（多半是角色卡），不是预设")
    try:
        obj = json.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError as e:
        raise PresetError(f"{p.name}：不是 UTF-8 文本，不是预设") from e
    except json.JSONDecodeError as e:
        hint = "（看起来是 .jsonl 聊天记录）" if p.suffix.lower() == ".jsonl" else ""
        raise PresetError(f"{p.name}：不是有效的 JSON{hint}（第 {e.lineno} 行：{e.msg}）") from e
    return Preset.from_json(obj, name=p.stem)


def presets_dir() -> Path:
    """``<home>/presets`` (created on demand)."""
    from ...paths import home

    d = home() / "presets"
    d.mkdir(parents=True, exist_ok=True)
    return d


def install_preset(path: str | Path) -> Preset:
    """Validate a preset file and copy it into :func:`presets_dir` as ``<name>.json`` (an existing one with that
    name is replaced). The copy drops :data:`SENSITIVE_KEYS` (proxy passwords, custom URLs/headers), as ST's own
    export does. Returns the loaded preset. Raises PresetError / OSError."""
    from ...paths import safe_name

    preset = load_preset(path)
    clean = {k: v for k, v in preset.raw.items() if k not in SENSITIVE_KEYS}
    dest = presets_dir() / f"{safe_name(preset.name, 'preset')}.json"
    tmp = dest.with_name(dest.name + ".tmp")
    tmp.write_text(json.dumps(clean, ensure_ascii=False, indent=4), encoding="utf-8")
    tmp.replace(dest)
    return preset


def list_presets() -> list[str]:
    """Names of the installed presets (file stems in :func:`presets_dir`), sorted."""
    return sorted(p.stem for p in presets_dir().glob("*.json"))


def load_installed_preset(name: str) -> Preset:
    """An installed preset by name (PresetError when missing or broken)."""
    from ...paths import safe_name

    return load_preset(presets_dir() / f"{safe_name(name, 'preset')}.json")
