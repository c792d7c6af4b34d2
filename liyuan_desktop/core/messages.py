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

**Texts that lost their key.** A Msg put into a pydantic ``str`` field (the beat's events, ``core/beat/events.py``)
or written to disk comes back as a plain ``str``. :func:`translate` finds such a text's key again: every catalog
entry's Chinese template is also a pattern (its literal text fixed, each ``{param}`` any text), and a text that
matches one whole is rendered in English with the captured values (those named in the entry's ``"nest"`` — a
space-separated list — translated in turn, e.g. 「无命中」 inside a lorebook search summary). :func:`render` does this
for plain strings, so a front end renders every engine line the same way whatever carried it. Templates with fewer
than two literal characters never match (they would match anything), so story text is left alone unless it is
exactly a catalog sentence.
"""

from __future__ import annotations

import re
import string
from typing import Any, Optional

LANGUAGES = ("zh", "en")

CATALOG: dict[str, dict[str, str]] = {
    # a command refused while a beat runs (core/chat/facade.py Chat._idle)
    "chat.busy": {"zh": "本拍还在进行，先停下再{what}", "en": "A beat is still running: stop it before you {what}"},
    # after Chat.edit_reply (the window's status line, the CLI)
    "chat.reply_edited": {"zh": "已存为这条回复的新版本（◀ ▶ 可以翻回原文）；账本没有按改后的文字重算。",
                          "en": "Saved as a new version of this reply (◀ ▶ reaches the old text); the ledger was not "
                                "recomputed."},
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
    # a card's linked world books (core/cards/book_links.py)
    "books.link_missing": {"zh": "角色卡链接的世界书「{name}」不在书库里（世界书/ 或 世界书/未启用/），这个对话没有读它。",
                           "en": "The card's linked world book “{name}” is not in the library (the world books folder or "
                                 "its inactive subfolder); this chat does not read it."},
    "books.link_broken": {"zh": "角色卡链接的世界书「{name}」读不了，这个对话没有读它。",
                          "en": "The card's linked world book “{name}” cannot be read; this chat does not read it."},
    "books.link_not_found": {"zh": "角色卡「{card}」链接的世界书「{name}」不在书库里，没有链接；把它导入书库后可在「世界书…」里链接。",
                             "en": "The world book “{name}” linked to the card “{card}” is not in the library, so it is "
                                   "not linked; import it into the library, then link it in World books…."},
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
    # -- what a beat shows the user (issue 17 "English throughout"). The engine builds these texts as before (the same
    # Chinese); the front ends find them here (translate) — the model never sees them. ---------------------------
    # tool summaries of successful calls (core/beat/tools/*.py, the ``summary`` of each tool)
    "tool.version_chars": {"zh": "版本 {version}，{chars} 字", "en": "version {version}, {chars} chars"},
    "tool.matches": {"zh": "匹配：{m}", "en": "matched: {m}"},
    "tool.stopped": {"zh": "用户停止了这一拍", "en": "the user stopped this beat"},
    "tool.answer": {"zh": "答：{answer}", "en": "answer: {answer}"},
    "tool.lore": {"zh": "查「{query}」→ {hits}", "en": "looked up “{query}” → {hits}", "nest": "hits"},
    "tool.lore.none": {"zh": "无命中", "en": "no hits"},
    "tool.review": {"zh": "审稿 {path}：{n} 条", "en": "review of {path}: {n} findings"},
    "tool.outline": {"zh": "大纲 {chapter}", "en": "outline {chapter}"},
    "tool.grep": {"zh": "找「{pattern}」", "en": "search “{pattern}”"},
    # why a world-info entry fired (core/chat/turn.py lore_reasons)
    "lore.why.this": {"zh": "{title}：关键词「{kw}」出现在你这一拍的话里", "en": "{title}: the key “{kw}” is in your words this beat"},
    "lore.why.back": {"zh": "{title}：关键词「{kw}」出现在往前第 {n} 条消息里", "en": "{title}: the key “{kw}” is in the message {n} back"},
    "lore.why.recursion": {"zh": "{title}：关键词「{kw}」出现在条目「{via}」的正文里（递归）",
                           "en": "{title}: the key “{kw}” is in the text of the entry “{via}” (recursion)"},
    "lore.why.scan": {"zh": "{title}：关键词「{kw}」出现在扫描文本里", "en": "{title}: the key “{kw}” is in the scanned text"},
    "lore.why.constant": {"zh": "{title}：常驻", "en": "{title}: constant"},
    "lore.why.sticky": {"zh": "{title}：黏滞（上次命中后仍在生效）", "en": "{title}: sticky (still in effect since it last fired)"},
    # notices during a beat (core/beat/loop.py, core/chat/turn.py, core/chat/prose_mode.py, core/chat/recovery.py)
    "beat.captured": {"zh": "直出正文已代收为 draft_write", "en": "Prose written outside the draft was taken in as draft_write"},
    "beat.captured_append": {"zh": "稿纸之后的直出文字已代收为 draft_append，并自动收笔",
                             "en": "Text after the draft was taken in as draft_append and the beat sealed"},
    "beat.unsealed": {"zh": "本拍尚未收笔", "en": "This beat is not sealed yet"},
    "beat.cut_length": {"zh": "回复到了输出上限被截断，本拍尚未收笔：可以「继续」，或「按现稿收笔」。",
                        "en": "The reply hit the output limit and was cut; this beat is not sealed: Continue, or Seal as is."},
    "beat.cut_repeat": {"zh": "回复开始重复自己（{what}），已提前停下；重复的部分没有收进稿子，本拍尚未收笔：可以「继续」，或「按现稿收笔」。",
                        "en": "The reply started repeating itself ({what}) and was stopped early; the repeats were not "
                              "kept and this beat is not sealed: Continue, or Seal as is.", "nest": "what"},
    "beat.repeat.paragraph": {"zh": "同一段出现了 3 次", "en": "the same paragraph 3 times"},
    "beat.repeat.sentence": {"zh": "同一句出现了 3 次", "en": "the same sentence 3 times"},
    "beat.repeat.periodic": {"zh": "末尾在循环", "en": "the end loops"},
    "beat.cut.length": {"zh": "回复被截断（到了输出上限），本拍尚未收笔", "en": "The reply was cut (output limit); this beat is not sealed"},
    "beat.cut.repetition": {"zh": "回复开始重复，已提前停下，本拍尚未收笔", "en": "The reply started repeating and was stopped; this beat is not sealed"},
    "beat.echo": {"zh": "回复里复述了提示里的数据块（或仿写了开场标签），已去掉",
                  "en": "The reply repeated data blocks of the prompt (or imitated the opening label); removed"},
    "beat.echo_only": {"zh": "回复只复述了提示里的数据块，没有正文：本拍尚未收笔",
                       "en": "The reply only repeated the prompt's data blocks, no prose: this beat is not sealed"},
    "beat.stop_kept": {"zh": "已流出的正文收进了稿子（未收笔）", "en": "The prose streamed so far was kept in the draft (not sealed)"},
    "beat.out_of_rounds": {"zh": "已用满 {n} 次模型调用，本拍尚未收笔；稿件已保存，可按现稿收笔或继续。",
                           "en": "All {n} model calls used; this beat is not sealed. The draft is saved: seal it as is or continue."},
    "beat.call_failed": {"zh": "模型调用失败：{error}", "en": "The model call failed: {error}"},
    "beat.stopped_unsealed": {"zh": "已停止：笔交还给你。本拍尚未收笔", "en": "Stopped: the pen is back with you. This beat is not sealed"},
    "beat.stopped": {"zh": "已停止：笔交还给你。", "en": "Stopped: the pen is back with you."},
    "beat.lore_budget": {"zh": "世界书预算用完了：激活 {n} 条后停止扫描（世界书设置里可以调预算和上限）",
                         "en": "The world-info budget ran out: scanning stopped after {n} entries (budget and cap are in "
                               "the world-info settings)"},
    "beat.lore_safety": {"zh": "世界书激活条目过多：已激活 {n} 条（约 {chars} 字）后停止扫描，其余条目这一拍不发送（可在世界书设置里设预算或递归步数上限）",
                         "en": "Too many world-info entries activated: scanning stopped after {n} entries (about {chars} "
                               "characters); the rest are not sent this beat (set a budget or a recursion limit in the "
                               "world-info settings)"},
    "beat.window_fixed_over": {"zh": "角色卡、常驻设定和预设本身就约有 {tokens} token，超过了这个模型的上下文窗口（{window}）：请求很可能被服务商拒绝，换一个窗口更大的模型，或在设置里把窗口调成模型的真实大小。",
                               "en": "The card, the constant lore and the preset alone are about {tokens} tokens, more than "
                                     "this model's context window ({window}): the provider will likely refuse the request. "
                                     "Use a model with a larger window, or set the window to the model's real size."},
    "beat.window_dropped": {"zh": "提示词超出上下文窗口（{window} token）：最早的 {n} 条历史消息这一拍没有发送（仍在记录里，模型可用 memory_search 查；前情压缩会逐拍补上）",
                            "en": "The prompt is over the context window ({window} tokens): the {n} oldest messages were "
                                  "not sent this beat (still recorded; the model can find them with memory_search, and "
                                  "compaction catches up beat by beat)"},
    "beat.prose_rejected": {"zh": "服务器不接受工具调用（tools）：这个对话改为纯文字演出，本拍已按纯文字重演。设定原文直接随每拍发送。",
                            "en": "The server does not accept tool calls: this chat now plays prose-only and this beat "
                                  "was played again that way. Lore text is sent with every beat."},
    "beat.prose_ignored": {"zh": "模型连续 {n} 拍都没有调用工具：已把它标记为「只写正文」，之后的拍改为纯文字演出（设定原文随每拍发送）。可以在对话菜单里切回工具演出。",
                           "en": "The model called no tools for {n} beats in a row: it is marked “prose only” and later "
                                 "beats play prose-only (lore text sent with every beat). The Chat menu switches tool "
                                 "play back on."},
    "beat.prose_limits": {"zh": "纯文字演出：不能原位修改上一拍，模型也不能向你提问（ask）。",
                          "en": "Prose-only play: the previous reply cannot be revised in place and the model cannot ask you (ask)."},
    "beat.recovered": {"zh": "程序上次在写稿时意外退出：稿件已从草稿记录恢复（本拍尚未收笔）：{n} 字，可以继续写或按现稿收笔",
                       "en": "The app quit unexpectedly while drafting last time: the draft was recovered from the "
                             "draft log (not sealed): {n} chars; continue writing or seal it as is"},
    "beat.recovered_short": {"zh": "程序上次在写稿时意外退出：稿件已从草稿记录恢复（本拍尚未收笔）",
                             "en": "The app quit unexpectedly while drafting last time: the draft was recovered from the "
                                   "draft log (not sealed)"},
    # the ledger (core/ledger/state.py format_state / the scribe's applied lines), for the terminal's 【世界状态】
    "led.time": {"zh": "时间：{v}", "en": "Time: {v}"},
    "led.location": {"zh": "地点：{v}", "en": "Place: {v}"},
    "led.items": {"zh": "物品：{v}", "en": "Items: {v}"},
    "led.threads": {"zh": "剧情线：{v}", "en": "Plot threads: {v}"},
    "led.people": {"zh": "人物：{v}", "en": "Characters: {v}"},
    "led.affinity": {"zh": "{name}：好感 {v}", "en": "{name}: affinity {v}"},
    "led.status": {"zh": "状态：{v}", "en": "status: {v}"},
    "led.at": {"zh": "在：{v}", "en": "at: {v}"},
    "led.present": {"zh": "在场", "en": "present"},
    "led.notes": {"zh": "备注：{v}", "en": "notes: {v}"},
    "led.empty": {"zh": "（尚无记录）", "en": "(nothing recorded yet)"},
    "led.roster_empty": {"zh": "（尚无登记）", "en": "(nobody listed yet)"},
    # the scribe's applied lines in words (core/ledger/wording.py), in both languages
    "led.applied.char": {"zh": "{name}：状态已更新", "en": "{name}: state updated"},
    "led.applied.time": {"zh": "时间：{v}", "en": "Time: {v}"},
    "led.applied.location": {"zh": "地点：{v}", "en": "Place: {v}"},
    "led.applied.inventory": {"zh": "随身物品：{v}", "en": "Inventory: {v}"},
    "led.applied.plot_threads": {"zh": "情节线：{v}", "en": "Story threads: {v}"},
    "led.applied.flag": {"zh": "标记「{k}」：{v}", "en": "Flag “{k}”: {v}"},
    # the terminal's beat view (cli/view.py) and chat header (cli/chat.py)
    "cli.beat": {"zh": "\n━━ 第 {n} 拍 ━━", "en": "\n━━ Beat {n} ━━"},
    "cli.replay": {"zh": "［回放模型·离线演示］", "en": "[replay model · offline demo]"},
    "cli.you": {"zh": "你：", "en": "You: "},
    "cli.lore": {"zh": "  命中设定：{names}", "en": "  Lore: {names}"},
    "cli.call": {"zh": "  · 第 {n}/{max} 次调用", "en": "  · model call {n}/{max}"},
    "cli.text": {"zh": "    文字：", "en": "    Text: "},
    "cli.reasoning": {"zh": "思考 {n} 字", "en": "reasoning {n} chars"},
    "cli.tokens": {"zh": "输入 {p} token（缓存命中 {c}，{share}），输出 {o}",
                   "en": "input {p} tokens (cache hit {c}, {share}), output {o}"},
    "cli.sealed": {"zh": "  ■ 已收笔 · 版本 {version} · {chars} 字", "en": "  ■ Sealed · version {version} · {chars} chars"},
    "cli.draft": {"zh": "  ┌─ 稿纸 · 版本 {version} · {chars} 字", "en": "  ┌─ Draft · version {version} · {chars} chars"},
    "cli.revised": {"zh": "  ↺ 上一拍已原位修订（版本 {version}）：", "en": "  ↺ The previous reply was revised in place (version {version}):"},
    "cli.scribe_failed": {"zh": "  场记失败：{error}（本拍已保存，账本未变）", "en": "  The scribe failed: {error} (the beat is saved, the ledger unchanged)"},
    "cli.scribe": {"zh": "  场记记账：{items}", "en": "  Scribe's ledger: {items}"},
    "cli.scribe_none": {"zh": "无变化", "en": "no change"},
    "cli.scribe_warning": {"zh": "  场记告警：{w}", "en": "  Scribe warning: {w}"},
    "cli.final": {"zh": "\n定稿：\n", "en": "\nFinal:\n"},
    "cli.revised_previous": {"zh": "  （本拍修订了上一拍，没有新回复）", "en": "  (this beat revised the previous reply; no new reply)"},
    "cli.state": {"zh": "\n【世界状态】", "en": "\n[World state]"},
    "cli.roster": {"zh": "【登场名录】", "en": "[Roster] "},
    "cli.context": {"zh": "上下文 {used} / {window} token（{share}）", "en": "Context {used} / {window} tokens ({share})"},
    "cli.context_hit": {"zh": "，本拍缓存命中 {hit}", "en": ", cache hit this beat {hit}"},
    "cli.header": {"zh": "梨园 {version} · {card} · 对话「{chat}」", "en": "Liyuan {version} · {card} · chat “{chat}”"},
    "cli.saved_in": {"zh": "  （存于 {dir}）", "en": "  (saved in {dir})"},
    "cli.model": {"zh": "模型：{name}", "en": "Model: {name}", "nest": "name"},
    "llm.replay_name": {"zh": "回放模型（离线演示，不连网）", "en": "replay model (offline demo, no network)"},
    "llm.replay_named": {"zh": "回放模型（离线演示，不连网）: {label}", "en": "replay model (offline demo, no network): {label}"},
    "cli.ask.recorded": {"zh": "     → {answer}（按录制的选择作答）", "en": "     → {answer} (the recorded choice)"},
    "cli.ask.auto": {"zh": "     → {answer}（非交互运行，自动选第一项）", "en": "     → {answer} (not interactive: the first option)"},
    "cli.ask.prompt": {"zh": "     选 1-{n}，或直接写一句；{hint}输入 s 停止：", "en": "     Choose 1-{n}, or write a line; {hint}s stops: "},
    "cli.ask.hint": {"zh": "回车选录制的「{answer}」，", "en": "Enter takes the recorded “{answer}”, "},
    "cli.ask.no_option": {"zh": "     没有第 {n} 项。", "en": "     There is no option {n}."},
    "cli.ask.replay": {"zh": "     （回放模型只会按录制的剧情演下去；接真模型时才会按你的选择走）",
                       "en": "     (the replay model only plays the recorded story; with a real model your choice is followed)"},
    "cli.demo.stopped": {"zh": "\n演示在这里停下了：回放模型只会按录制的剧情演。要接着演，请重新开始演示或配置真模型。",
                         "en": "\nThe demo stops here: the replay model only plays the recorded story. Start the demo "
                               "again or configure a real model to go on."},
    "cli.demo.done": {"zh": "\n演示结束。", "en": "\nThe demo is over. "},
    "cli.demo.saved": {"zh": "对话已保存在 {dir}。", "en": "The chat is saved in {dir}."},
    "cli.demo.next": {"zh": "配置模型后可以接着演：liyuan chat {card} --chat {chat} --provider deepseek   （密钥放在 DEEPSEEK_API_KEY）",
                      "en": "With a model configured, go on: liyuan chat {card} --chat {chat} --provider deepseek   "
                            "(the key in DEEPSEEK_API_KEY)"},
    "cli.you_input": {"zh": "\n你（空行退出）：", "en": "\nYou (empty line quits): "},
    "cli.sep.list": {"zh": "、", "en": ", "},
    "cli.sep.semi": {"zh": "；", "en": "; "},
}


class Msg(str):
    """A user-facing message: the Chinese text as a ``str``, plus ``key`` and ``params`` to render it in another
    language (:meth:`render`). Immutable like any str; pickles and compares as its Chinese text."""

    key: str
    params: dict[str, Any]

    def __new__(cls, key: str, /, **params: Any) -> "Msg":
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


def message(key: str, /, **params: Any) -> Msg:
    """A catalog message (see :class:`Msg`). Unknown keys are allowed (they render as the key)."""
    return Msg(key, **params)


def action(verb: str) -> Msg | str:
    """The action named by its Chinese verb (``"切换分支"``) as a message, when the catalog knows it."""
    return Msg("act." + verb) if "act." + verb in CATALOG else verb


def render(value: Any, lang: str) -> str:
    """``value`` as text in ``lang``: a Msg rendered; an exception whose first argument is a Msg rendered (other
    exceptions as their text, through :func:`translate`); a plain ``str`` through :func:`translate`; anything else
    ``str(value)``."""
    if isinstance(value, Msg):
        return value.render(lang)
    if isinstance(value, BaseException):
        if value.args and isinstance(value.args[0], Msg):
            return value.args[0].render(lang)
        return translate(str(value), lang)
    if isinstance(value, str):
        return translate(value, lang)
    return str(value)


# -- texts that lost their key (module doc) -------------------------------------------------------------------------
_PATTERNS: list[tuple[str, "re.Pattern[str]", str]] = []  # (the longest literal chunk, pattern, key), specific first
_PATTERNS_FOR: list[int] = [-1]  # the catalog size the patterns were built for (entries may be added at import)


def template_pattern(text: str, strip: bool = False) -> Optional[tuple[int, str, "re.Pattern[str]"]]:
    """A ``str.format`` template as a pattern that matches the texts it makes: ``(literal, chunk, pattern)`` —
    how many literal characters it has (whitespace not counted when ``strip``), its longest literal chunk (a cheap
    ``in`` test before matching), the compiled pattern (each ``{name}`` a lazy group, a repeated name a
    backreference). None when the template has fewer than 2 literal characters or a field that is no identifier.
    Used by :func:`find_message` and by the window's live language switch (``ui/retranslate.py``)."""
    regex, names, chunks = "", [], []
    try:
        for lit, field, _spec, _conv in string.Formatter().parse(text):
            regex += re.escape(lit)
            chunks.append(lit)
            if field is None:
                continue
            if not field.isidentifier():
                return None
            regex += f"(?P={field})" if field in names else f"(?P<{field}>.*?)"
            names.append(field)
    except ValueError:
        return None
    literal = sum(len(c.strip() if strip else c) for c in chunks)
    if literal < 2:
        return None
    return literal, max(chunks, key=len), re.compile(regex, re.S)


def _patterns() -> list[tuple[str, "re.Pattern[str]", str]]:
    if _PATTERNS_FOR[0] == len(CATALOG):
        return _PATTERNS
    built: list[tuple[int, str, "re.Pattern[str]", str]] = []
    for key, entry in CATALOG.items():
        zh, en = entry.get("zh") or "", entry.get("en")
        if not en or en == zh:
            continue
        pat = template_pattern(zh)
        if pat is not None:
            built.append((*pat, key))
    built.sort(key=lambda b: -b[0])
    _PATTERNS[:] = [(chunk, pat, key) for _n, chunk, pat, key in built]
    _PATTERNS_FOR[0] = len(CATALOG)
    return _PATTERNS


def find_message(text: str) -> Optional[Msg]:
    """The catalog message whose Chinese text ``text`` is, whole (module doc), or None. The most specific template
    (most literal text) wins."""
    if not text:
        return None
    for chunk, pat, key in _patterns():
        if chunk not in text:
            continue
        m = pat.fullmatch(text)
        if m is None:
            continue
        params: dict[str, Any] = dict(m.groupdict())
        for name in (CATALOG[key].get("nest") or "").split():
            inner = find_message(params.get(name) or "")
            if inner is not None:
                params[name] = inner
        return Msg(key, **params)
    return None


def translate(text: str, lang: str) -> str:
    """``text`` in ``lang``: a Msg rendered; a plain Chinese engine sentence found in the catalog (:func:`find_message`)
    rendered; anything else unchanged (story text, card data, a sentence the catalog does not know). Chinese is
    returned as is."""
    if isinstance(text, Msg):
        return text.render(lang)
    if lang == "zh" or not text:
        return text
    found = find_message(text)
    return found.render(lang) if found is not None else text
