"""``liyuan preset import|list|show|delete|default``: the preset library (``<home>/预设/``, issue 14 §3).

    liyuan preset import FILE…            copy SillyTavern chat-completion presets into the library
    liyuan preset list [--json]           the installed presets (the default for new chats marked ★)
    liyuan preset show NAME [--provider KIND] [--json]
                                          what the preset does here: where each prompt goes, what is dropped and
                                          why, the sampling sent (and what the provider KIND does not take)
    liyuan preset delete NAME             remove it from the library
    liyuan preset default [NAME | --none] show or set the preset new chats get (saved in settings.json)

Errors print one ``liyuan: …`` line and exit 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .common import say

KINDS = ("openai", "deepseek", "openrouter", "ollama", "llamacpp", "lmstudio", "other")


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register ``preset`` on the top-level subparsers; returns its parser."""
    p = sub.add_parser("preset", help="预设库：导入、列出、查看、删除 SillyTavern 预设，设默认预设")
    ps = p.add_subparsers(dest="preset_cmd")
    imp = ps.add_parser("import", help="把预设文件导入预设库")
    imp.add_argument("files", nargs="+")
    ls = ps.add_parser("list", help="列出预设库")
    ls.add_argument("--json", action="store_true")
    sh = ps.add_parser("show", help="这个预设在梨园里怎么用：映射、丢弃的部分及原因、采样参数")
    sh.add_argument("name")
    sh.add_argument("--provider", choices=KINDS, default="other", help="按这个服务商检查哪些采样参数发不出去")
    sh.add_argument("--json", action="store_true")
    de = ps.add_parser("delete", help="从预设库删除")
    de.add_argument("name")
    df = ps.add_parser("default", help="查看或设置新对话的默认预设")
    df.add_argument("name", nargs="?")
    df.add_argument("--none", action="store_true", help="新对话不用预设")
    return p


def _fail(msg: str) -> int:
    print(f"liyuan: {msg}", file=sys.stderr)
    return 2


def run(args: argparse.Namespace) -> int:
    """Run ``liyuan preset …``; returns the exit status (0 ok, 2 with one ``liyuan: …`` line)."""
    from ..core.prompt.presets.model import PresetError
    from ..core.prompt.presets.store import (
        delete_preset,
        describe_preset,
        install_preset,
        list_presets,
        load_installed_preset,
    )
    from ..core.settings import load_settings, save_settings

    cmd = getattr(args, "preset_cmd", None)
    try:
        if cmd == "import":
            for f in args.files:
                p = install_preset(f)
                print(f"已导入预设「{p.name}」")
                for w in p.warnings:
                    print(f"  · {say(w)}")  # what the reader repaired, in the --lang language
            return 0
        if cmd == "list":
            default = load_settings().default_preset
            names = list_presets()
            if args.json:
                print(json.dumps({"presets": names, "default": default}, ensure_ascii=False))
            elif not names:
                print("预设库是空的：liyuan preset import FILE")
            else:
                for n in names:
                    print(("★ " if n == default else "  ") + n)
            return 0
        if cmd == "show":
            report = describe_preset(load_installed_preset(args.name), args.provider)
            if args.json:
                print(json.dumps(report.model_dump(), ensure_ascii=False, indent=1))
            else:
                print(report.text())
            return 0
        if cmd == "delete":
            if not delete_preset(args.name):
                return _fail(f"预设库里没有「{args.name}」")
            s = load_settings()
            if s.default_preset == args.name:
                s.default_preset = None
                save_settings(s)
            print(f"已删除预设「{args.name}」")
            return 0
        if cmd == "default":
            s = load_settings()
            if args.none or args.name:
                if args.name:
                    load_installed_preset(args.name)  # must exist
                s.default_preset = None if args.none else args.name
                save_settings(s)
            print(f"新对话的默认预设：{s.default_preset or '（无）'}")
            return 0
    except PresetError as e:
        return _fail(say(e))  # the engine's message in the --lang language
    except OSError as e:
        return _fail(f"写入失败：{e}")
    print("用法：liyuan preset import|list|show|delete|default …", file=sys.stderr)
    return 2
