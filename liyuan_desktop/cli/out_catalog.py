"""What the ``liyuan`` commands themselves print (issue 32 §1), in both languages: keys ``cli.out.*`` added to the one
catalog (``core/messages.CATALOG``) with the help texts (``cli/help_catalog.py``), rendered in the chosen language
by ``cli.common.text``. What the engine says comes with its own keys (``core/messages.py``); these are the lines only
the terminal prints (headings, confirmations, usage errors). Marked ``"match": "no"``: printed by key, never matched
back from Chinese text."""

from __future__ import annotations

from ..core.messages import CATALOG

OUT: dict[str, dict[str, str]] = {
    # card (cli/card.py)
    "cli.out.card.not_found": {"zh": "{name}：资料库里没有这张卡，也不是卡文件的路径",
                               "en": "{name}: no such card in the library, and not the path of a card file"},
    "cli.out.card.no_card_json": {"zh": "{name}：这个文件夹里没有 card.json，不是资料库里的卡",
                                  "en": "{name}: this folder has no card.json; not a card of the library"},
    "cli.out.card.surrogate": {"zh": "{name}：卡里有无法保存为 UTF-8 的字符（孤立的代理字符）",
                               "en": "{name}: the card has characters that cannot be saved as UTF-8 (lone surrogates)"},
    "cli.out.io_failed": {"zh": "读写文件失败：{error}", "en": "Reading or writing a file failed: {error}"},
    "cli.out.io_failed_at": {"zh": "{name}：读写文件失败：{error}", "en": "{name}: reading or writing the file failed: {error}"},
    "cli.out.card.need_sub": {"zh": "需要子命令：inspect、import、export、preview、rename、new、set 或 fields",
                              "en": "A subcommand is needed: inspect, import, export, preview, rename, new, set or fields"},
    "cli.out.card.preview": {"zh": "状态栏框：{frames} 个，高度 {heights} px；错误 {errors} 条；被拦下 {blocked} 条",
                             "en": "Status-bar frames: {frames}, heights {heights} px; {errors} errors; {blocked} blocked"},
    "cli.out.card.preview_error": {"zh": "  错误：{error}", "en": "  Error: {error}"},
    # preset (cli/preset.py)
    "cli.out.preset.imported": {"zh": "已导入预设「{name}」", "en": "Imported the preset “{name}”"},
    "cli.out.preset.empty": {"zh": "预设库是空的：liyuan preset import FILE",
                             "en": "The preset library is empty: liyuan preset import FILE"},
    "cli.out.preset.missing": {"zh": "预设库里没有「{name}」", "en": "There is no “{name}” in the preset library"},
    "cli.out.preset.deleted": {"zh": "已删除预设「{name}」", "en": "Deleted the preset “{name}”"},
    "cli.out.preset.default": {"zh": "新对话的默认预设：{name}", "en": "Default preset for new chats: {name}"},
    "cli.out.preset.none": {"zh": "（无）", "en": "(none)"},
    "cli.out.write_failed": {"zh": "写入失败：{error}", "en": "Writing failed: {error}"},
    "cli.out.preset.usage": {"zh": "用法：liyuan preset import|list|show|delete|default|prompts|export …",
                             "en": "usage: liyuan preset import|list|show|delete|default|prompts|export …"},
    "cli.out.prompt_row": {"zh": "{label}（{ident}）", "en": "{label} ({ident})"},
    # qr (cli/quick_replies.py)
    "cli.out.qr.name_one": {"zh": "--name 只能用于一个文件", "en": "--name works with one file only"},
    "cli.out.qr.usage": {"zh": "用法：liyuan qr import|list|show|delete …", "en": "usage: liyuan qr import|list|show|delete …"},
    # models (cli/models.py)
    "cli.out.models.no_active": {"zh": "没有当前使用的服务商：给出服务商名，或先在设置里配置一个",
                                 "en": "No provider is in use: name one, or set one up in Settings first"},
    "cli.out.models.none_local": {"zh": "本机没有找到正在运行的模型服务器（Ollama 11434、LM Studio 1234、llama.cpp 8080、"
                                        "KoboldCpp 5001、vLLM 8000、text-generation-webui 5000、Jan 1337）。",
                                  "en": "No model server is running on this machine (Ollama 11434, LM Studio 1234, "
                                        "llama.cpp 8080, KoboldCpp 5001, vLLM 8000, text-generation-webui 5000, Jan 1337)."},
    "cli.out.models.needs_key": {"zh": "（需要 API key）", "en": " (needs an API key)"},
    "cli.out.models.no_models": {"zh": "  （没有列出模型）", "en": "  (no models listed)"},
    "cli.out.models.usage": {"zh": "liyuan: 用法：liyuan models probe|local|list …", "en": "liyuan: usage: liyuan models probe|local|list …"},
    "cli.out.field": {"zh": "  {label}：{value}", "en": "  {label}: {value}"},
    # inspect (cli/inspect.py)
    "cli.out.inspect.no_calls": {"zh": "这个对话还没有模型调用", "en": "This chat has no model calls yet"},
    "cli.out.inspect.prose": {"zh": " · 纯文字演出（无工具）", "en": " · prose only (no tools)"},
    "cli.out.inspect.cut.length": {"zh": " · 被输出上限截断", "en": " · cut off at the output limit"},
    "cli.out.inspect.cut.repetition": {"zh": " · 重复，提前停下", "en": " · repeating itself, stopped early"},
    "cli.out.inspect.cut.echo": {"zh": " · 照抄已有内容，未收笔", "en": " · copied existing text, not sealed"},
    "cli.out.inspect.call": {"zh": "══ 第 {n} 次调用 · {who} · {model}{tokens}{mode}{cut}",
                             "en": "══ Call {n} · {who} · {model}{tokens}{mode}{cut}"},
    "cli.out.inspect.scribe": {"zh": "场记", "en": "scribe"},
    "cli.out.inspect.actor": {"zh": "演员", "en": "actor"},
    "cli.out.inspect.tokens": {"zh": " · 输入 {n} token", "en": " · {n} input tokens"},
    "cli.out.inspect.too_old": {"zh": "（这一拍早于检查器记录，发送内容无法还原）",
                                "en": "(this beat is older than the inspector's records; what was sent cannot be restored)"},
    "cli.out.inspect.tools": {"zh": "── 工具：{names}", "en": "── Tools: {names}"},
    "cli.out.inspect.reply": {"zh": "── 回复", "en": "── Reply"},
    "cli.out.inspect.reply_thinking": {"zh": "── 回复（思考 {n} 字）", "en": "── Reply ({n} characters of thinking)"},
    # settings (cli/settings_cli.py)
    "cli.out.settings.head": {"zh": "世界书设置（{path}）：", "en": "World-info settings ({path}):"},
    "cli.out.settings.usage": {"zh": "liyuan: 用法：liyuan settings show | liyuan settings import-st PATH",
                               "en": "liyuan: usage: liyuan settings show | liyuan settings import-st PATH"},
    "cli.out.cannot_read": {"zh": "liyuan: 读不了 {path}：{error}", "en": "liyuan: cannot read {path}: {error}"},
    "cli.out.not_json": {"zh": "liyuan: {name} 不是 JSON：{error}", "en": "liyuan: {name} is not JSON: {error}"},
    "cli.out.settings.not_saved": {"zh": "liyuan: 设置写不进去：{error}", "en": "liyuan: the settings could not be saved: {error}"},
    "cli.out.settings.saved": {"zh": "已存入 {path}：", "en": "Saved in {path}:"},
    # chats (cli/chats.py)
    "cli.out.chats.exists": {"zh": "对话「{name}」已存在；用 --chat 换个名字",
                             "en": "The chat “{name}” already exists; choose another name with --chat"},
    "cli.out.chats.importing": {"zh": "导入 {name}", "en": "Importing {name}"},
    "cli.out.chats.import_cancelled": {"zh": "liyuan: 已取消导入，没有留下任何文件",
                                       "en": "liyuan: import cancelled; no files were left behind"},
    "cli.out.chats.no_entry": {"zh": "条目「{id}」找不到", "en": "No entry “{id}”"},
    "cli.out.chats.entry_ambiguous": {"zh": "条目「{id}」不唯一", "en": "More than one entry starts with “{id}”"},
    "cli.out.chats.trashed": {"zh": "已移到回收站：{id}", "en": "Moved to the trash: {id}"},
    "cli.out.chats.no_card": {"zh": "资料库里没有角色卡「{name}」", "en": "There is no card “{name}” in the library"},
    "cli.out.chats.kind_card": {"zh": "角色卡", "en": "card"},
    "cli.out.chats.kind_chat": {"zh": "对话", "en": "chat"},
    "cli.out.chats.emptied": {"zh": "已永久删除 {n} 项", "en": "Deleted {n} items for good"},
    "cli.out.os_error": {"zh": "liyuan: {error}：{file}", "en": "liyuan: {error}: {file}"},
    # common (cli/common.py, cli/__init__.py)
    "cli.out.no_chat": {"zh": "找不到对话：{spec}（给对话文件夹，或「卡名/对话名」）",
                        "en": "No such chat: {spec} (give a chat folder, or “card/chat”)"},
    "cli.out.no_chat_card": {"zh": "找不到这个对话的角色卡：{card}", "en": "The card of this chat cannot be found: {card}"},
    "cli.out.session_not_written": {"zh": "liyuan: 会话文件写不进去：{error}",
                                    "en": "liyuan: the session file could not be written: {error}"},
    "cli.out.interrupted": {"zh": "liyuan: 已中断（已写入的内容都在会话文件里）",
                            "en": "liyuan: interrupted (everything already written is in the session file)"},
    "cli.out.novel.usage": {"zh": "liyuan: 用法：liyuan novel new TITLE [--author A] [--language zh|en] [--cast NAME]…",
                            "en": "liyuan: usage: liyuan novel new TITLE [--author A] [--language zh|en] [--cast NAME]…"},
    # story export --list (cli/story_export.py)
    "cli.out.export.row": {"zh": "{mark} {n:>3}  {title}  〔{source}｜{words} 字｜{file}〕",
                           "en": "{mark} {n:>3}  {title}  [{source} | {words} words | {file}]"},
    # search (cli/search.py): the match marked in a snippet
    "cli.out.search.mark": {"zh": "【{text}】", "en": "[{text}]"},
}

for _entry in OUT.values():  # printed by key only: never a pattern for texts that lost theirs (core/messages.py)
    _entry["match"] = "no"
CATALOG.update(OUT)
