"""The engine's user-facing messages in one catalog (issue 17): keys → {"zh", "en"}.

What the engine says *to the user* (errors, load warnings, recovery notes) is built with :func:`message`, which
returns a :class:`Msg`: a ``str`` whose text is the Chinese wording (byte-identical to what the engine said before,
so logs, session files and existing callers see no change) that also carries its key and parameters, so a front
end renders it in the chosen language with :func:`render` (the window through ``ui.i18n.show``, the CLI through
``--lang``). What the engine says *to the model* (prompts, tool results, the scribe's lines) never goes through
here: its language is the card's (golden runs stay byte-identical).

Parameters may themselves be Msg values (rendered in the same language). A key missing from the catalog renders
as the key; a language missing from an entry falls back to Chinese. Exceptions carry a Msg as their first
argument; :func:`render` accepts the exception itself.
"""

from __future__ import annotations

from typing import Any

LANGUAGES = ("zh", "en")

CATALOG: dict[str, dict[str, str]] = {
    # a command refused while a beat runs (core/chat/facade.py Chat._idle)
    "chat.busy": {"zh": "本拍还在进行，先停下再{what}", "en": "A beat is still running: stop it before you {what}"},
    # the actions that can be refused (the {what} above), keyed by their Chinese verb as the facade names them
    "act.修改回复": {"zh": "修改回复", "en": "edit a reply"},
    "act.续写": {"zh": "续写", "en": "continue the reply"},
    "act.代拟": {"zh": "代拟", "en": "impersonate"},
    "act.改作者注": {"zh": "改作者注", "en": "change the author's note"},
    "act.切换分支": {"zh": "切换分支", "en": "switch branches"},
    "act.撤销": {"zh": "撤销", "en": "undo"},
    "act.撤下": {"zh": "撤下", "en": "drop the message"},
    "act.补记账": {"zh": "补记账", "en": "update the ledger"},
    "act.保存状态栏变量": {"zh": "保存状态栏变量", "en": "save status-bar variables"},
    "act.换预设": {"zh": "换预设", "en": "change the preset"},
    "act.改世界书设置": {"zh": "改世界书设置", "en": "change the world-info settings"},
    "act.恢复": {"zh": "恢复", "en": "restore"},
    "act.换角色": {"zh": "换角色", "en": "change the persona"},
    "act.改世界书": {"zh": "改世界书", "en": "change the world books"},
    # session loading (core/session/tree.py): repairs reported in load_warnings
    "load.bom": {"zh": "{file}：开头有 BOM（记事本保存过？），已忽略",
                 "en": "{file}: starts with a BOM (saved by Notepad?); ignored"},
    "load.dup_id": {"zh": "{file}：第 {line} 行 id 重复（{id}），已跳过", "en": "{file}: line {line} repeats an id ({id}); skipped"},
    "load.head_cycle": {"zh": "{file}：开头记录指向了上级记录（环），已断开",
                        "en": "{file}: the first record pointed at a parent (a cycle); cut"},
    "load.orphans": {"zh": "{file}：{n} 条记录的上级记录已损坏，已接到它前一条记录之后",
                     "en": "{file}: {n} records had a damaged parent; each was attached after the record before it"},
    # chat context (core/chat/context.py, core/chat/world_info.py)
    "ctx.preset_missing": {"zh": "这个对话用的预设「{name}」读不到了（{error}）：这次不用预设打开，系统提示词会短一些。",
                           "en": "This chat's preset “{name}” cannot be read ({error}): it opens without a preset this "
                                 "time, so the system prompt is shorter."},
    "ctx.wi_setting_bad": {"zh": "这个对话保存的世界书设置有一项用不了，已忽略：{error}",
                           "en": "One of this chat's saved world-info settings cannot be used and was ignored: {error}"},
    # persona / world books per chat (core/chat/facade.py)
    "persona.unknown": {"zh": "没有名为「{name}」的角色（我的角色）", "en": "There is no persona named “{name}”"},
    "persona.changed": {"zh": "这个对话的角色已换成「{name}」，下一拍起生效", "en": "This chat's persona is now “{name}”; it applies from the next beat"},
    # managing chats and cards (core/chat/manage.py)
    "manage.not_chat": {"zh": "「{name}」不是一个对话文件夹", "en": "“{name}” is not a chat folder"},
    "manage.not_card": {"zh": "「{name}」不是资料库里的角色卡", "en": "“{name}” is not a card in the library"},
    "manage.empty_name": {"zh": "新名字是空的", "en": "The new name is empty"},
    "manage.chat_taken": {"zh": "已经有叫「{name}」的对话了", "en": "There is already a chat named “{name}”"},
    "manage.card_taken": {"zh": "已经有叫「{name}」的角色卡了", "en": "There is already a card named “{name}”"},
    "manage.no_message": {"zh": "对话里没有这条消息：{id}", "en": "The chat has no message {id}"},
    "manage.outside_home": {"zh": "「{name}」不在数据文件夹里", "en": "“{name}” is not inside the data folder"},
    "manage.trash_none": {"zh": "回收站里没有「{id}」", "en": "The trash holds no “{id}”"},
    "manage.trash_many": {"zh": "回收站里不止一个「{id}」", "en": "The trash holds more than one “{id}”"},
    # liyuan card import / rename (cli/card.py)
    "card.exists_ask": {"zh": "资料库里已经有一张叫「{name}」的卡（内容不同）。替换它（r）、保留两个（k）还是取消（c）？[k] ",
                        "en": "The library already has a different card named “{name}”. Replace it (r), keep both "
                              "(k) or cancel (c)? [k] "},
    "card.kept_both": {"zh": "资料库里已经有一张叫「{name}」的卡（内容不同）：两个都保留，新卡在 {dir}（要替换旧卡用 --replace）",
                       "en": "The library already has a different card named “{name}”: both are kept, the new one is "
                             "in {dir} (use --replace to replace the old card)"},
    "card.replaced": {"zh": "已替换「{name}」：它的对话都还在，旧卡的文件在回收站（{trash}）",
                      "en": "Replaced “{name}”: its chats are kept, the old card's files are in the trash ({trash})"},
    "card.import_cancelled": {"zh": "已取消导入", "en": "Import cancelled"},
    "card.renamed": {"zh": "角色卡已改名为「{name}」：{dir}", "en": "The card is renamed to “{name}”: {dir}"},
}


class Msg(str):
    """A user-facing message: the Chinese text as a ``str``, plus ``key`` and ``params`` to render it in another
    language (:meth:`render`). Immutable like any str; pickles and compares as its Chinese text."""

    key: str
    params: dict[str, Any]

    def __new__(cls, key: str, **params: Any) -> "Msg":
        obj = super().__new__(cls, _format(key, "zh", params))
        obj.key = key
        obj.params = dict(params)
        return obj

    def render(self, lang: str) -> str:
        """The text in ``lang`` ("zh" or "en"; anything else = "zh")."""
        return _format(self.key, lang, self.params)

    def __reduce__(self):  # pickles as its Chinese text plus the key (for worker processes)
        return (_rebuild, (self.key, self.params))


def _rebuild(key: str, params: dict[str, Any]) -> Msg:
    return Msg(key, **params)


def _format(key: str, lang: str, params: dict[str, Any]) -> str:
    entry = CATALOG.get(key)
    if entry is None:
        template = key
    else:
        template = entry.get(lang) or entry["zh"]
    if not params:
        return template
    shown = {k: render(v, lang) for k, v in params.items()}
    try:
        return template.format(**shown)
    except (KeyError, IndexError, ValueError):
        return template


def message(key: str, **params: Any) -> Msg:
    """A catalog message (see :class:`Msg`). Unknown keys are allowed (they render as the key)."""
    return Msg(key, **params)


def action(verb: str) -> Msg | str:
    """The action named by its Chinese verb (``"切换分支"``) as a message, when the catalog knows it."""
    return Msg("act." + verb) if "act." + verb in CATALOG else verb


def render(value: Any, lang: str) -> str:
    """``value`` as text in ``lang``: a Msg rendered; an exception whose first argument is a Msg rendered (other
    exceptions as ``str(e)``); anything else ``str(value)``."""
    if isinstance(value, Msg):
        return value.render(lang)
    if isinstance(value, BaseException):
        if value.args and isinstance(value.args[0], Msg):
            return value.args[0].render(lang)
        return str(value)
    return str(value)
