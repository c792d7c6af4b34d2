"""The engine's user-facing messages in one catalog (issue 17): keys → {"zh", "en"}.

What the engine says *to the user* (errors, load warnings, recovery notes) is built with :func:`message`, which
returns a :class:`Msg`: a ``str`` whose text is the Chinese wording (byte-identical to what the engine said before,
so logs, session files and existing callers see no change) that also carries its key and parameters, so a front
end renders it in the chosen language with :func:`render` (the window through ``ui.i18n.show``, the CLI through
``--lang``). What the engine says *to the model* (prompts, tool results, the scribe's lines) never goes through
here: its language is the card's (golden runs stay byte-identical).

Parameters may themselves be Msg values (rendered in the same language); a list parameter is joined with the
language's list separator (「、」, ", "). A key missing from the catalog renders
as the key; Chinese or English missing from an entry falls back to Chinese. Other languages come from translators'
gettext catalogs (``core/catalog_files.py``, ``scripts/catalog.py``), English for a key they lack. Exceptions carry
a Msg as their first argument; :func:`render` accepts the exception itself.

**Carried by key (issue 32).** A model or event field that holds a message is typed :data:`MsgText` (a ``str``
that stays a Msg); a session file keeps activity lines and the scribe's lines as ``{key, params}``
(``core/session/entries.MessageRef``). The beat's events, tool summaries and refusals, lore reasons, the scribe's
applied lines and warnings, notices, the summary error and the settings warning all reach the window and the CLI
this way, and the front ends render them from the key (``tests/test_engine_lines_by_key.py`` plays a beat and
renders it in both languages). A message's plain-text parameters are values (names, files, story text, the reason a
tool call was refused in the card's language) and are shown as they are (:func:`_shown`); a Msg parameter is
rendered in the same language.

**No reverse matching (issue 32).** Every producer of user-facing engine text builds a Msg — card-file errors
(``labelled``: the file name as a parameter, the sentence a nested Msg), import warnings and notes, session and
preset repairs — so :func:`render` never has to guess a key from Chinese text: a plain ``str`` is returned as it is
(story text, names, a line written by an earlier version that stored text instead of ``{key, params}``). The old
matcher (``translate``/``find_message``, which turned a Chinese sentence back into its key) is gone rather than kept
for such old lines: they are few (session files store keys since issue 32, the index cache was bumped so its
warnings are rebuilt by key), showing them as they were written is truthful, and a matcher kept "only for old files"
would stay one call away from every live path. ``tests/test_no_reverse_matching.py`` holds this: no module calls a
matcher, and broken cards, books, presets, chats and a SillyTavern folder all render in English by key (the
matcher's hints ``"nest"``/``"strict"`` and its pattern builder ``template_pattern`` are gone with it; ``"match":
"no"`` on an entry is a remark for readers, no code reads it). ``tests/test_no_chinese_raises.py`` holds the raising
side: no ``raise`` in core or the CLI passes a Chinese literal unless it is a model-facing refusal that also
passes its English (``en=``).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

LANGUAGES = ("zh", "en")

CATALOG: dict[str, dict[str, str]] = {
    # a command refused while a beat runs (core/chat/facade.py Chat._idle)
    "chat.busy": {"zh": "本拍还在进行，先停下再{what}", "en": "A beat is still running: stop it before you {what}"},
    # Chat.seal_as_is / continue_beat with nothing to seal or continue (the window's buttons, liyuan chat --continue)
    "chat.no_draft": {"zh": "没有未收笔的稿件", "en": "There is no unsealed draft to continue or seal"},
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
    "act.改写": {"zh": "改写", "en": "rewrite a passage"},
    "act.改章节摘要": {"zh": "改章节摘要", "en": "change the chapter summaries"},
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
    # Chinese); the front ends render them by key — the model never sees them. -----------------------------------
    # tool summaries of successful calls (core/beat/tools/*.py, the ``summary`` of each tool)
    "tool.version_chars": {"zh": "版本 {version}，{chars} 字", "en": "version {version}, {chars} chars"},
    "tool.matches": {"zh": "匹配：{m}", "en": "matched: {m}"},
    "tool.stopped": {"zh": "用户停止了这一拍", "en": "the user stopped this beat"},
    "tool.answer": {"zh": "答：{answer}", "en": "answer: {answer}"},
    "tool.lore": {"zh": "查「{query}」→ {hits}", "en": "looked up “{query}” → {hits}"},
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
                              "kept and this beat is not sealed: Continue, or Seal as is."},
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
    "cli.model": {"zh": "模型：{name}", "en": "Model: {name}"},
    "llm.replay_name": {"zh": "回放模型（离线演示，不连网）", "en": "replay model (offline demo, no network)"},
    "llm.replay_named": {"zh": "回放模型（离线演示，不连网）: {label}", "en": "replay model (offline demo, no network): {label}"},
    # which version of a message a search hit is, and the count (core/chat/search.py; 搜索所有对话, liyuan search)
    "search.version": {"zh": "第 {n} 版", "en": "version {n}"},
    "search.version.revised": {"zh": "第 {n} 版（修订后）", "en": "version {n} (revised)"},
    "search.versions": {"zh": "{n} 个版本", "en": "{n} versions"},
    "search.found": {"zh": "找到 {n} 条消息", "en": "{n} messages found"},
    "search.found.versions": {"zh": "找到 {n} 条消息（共 {v} 个版本）", "en": "{n} messages found ({v} versions)"},
    # a model call cut by one of its clocks (core/llm/client_messages.py _deadline_error; core/llm/rate.py)
    "llm.deadline.idle": {"zh": "模型 {s} 秒没有输出新内容（服务器只在保持连接）：已停止等待，已收到 {got} 个字符，"
                                "本次回复不完整，可以重试（时限可在服务商设置里调整）。",
                          "en": "The model sent no new content for {s} s (the server only kept the connection open): "
                                "stopped waiting after {got} characters. The reply is incomplete; you can retry (the "
                                "limits are in the provider settings)."},
    "llm.deadline.rate": {"zh": "模型输出太慢：最近 {window} 秒只收到 {n} 个字符（下限 {min} 个）：已停止等待，已收到 {got} "
                                "个字符，本次回复不完整，可以重试（最低速度可在服务商设置里调整）。",
                          "en": "The model is writing too slowly: {n} characters in the last {window} s (at least "
                                "{min} are required): stopped waiting after {got} characters. The reply is incomplete; "
                                "you can retry (the minimum rate is in the provider settings)."},
    "llm.deadline.total": {"zh": "模型调用超过总时限 {s} 秒：已停止等待，已收到 {got} 个字符，本次回复不完整，可以重试"
                                 "（时限可在服务商设置里调整）。",
                           "en": "The model call ran past its total limit of {s} s: stopped waiting after {got} "
                                 "characters. The reply is incomplete; you can retry (the limits are in the provider "
                                 "settings)."},
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
    "cli.note": {"zh": "注意：{w}", "en": "note: {w}"},
    # -- errors about the user's files (card, world book, preset, SillyTavern chat, migration). The engine raises
    # the Chinese text as before, carried by these keys (module doc). -------------------------------------------
    # "<file>：<sentence>" (core/cards/_common.py fail(): the file name and the sentence as a nested Msg)
    "labelled": {"zh": "{label}：{msg}", "en": "{label}: {msg}"},
    # cards (core/cards/__init__.py, png.py, charx.py, _common.py)
    "cardfile.label": {"zh": "角色卡", "en": "Card"},
    "cardfile.where.png": {"zh": "PNG 里的 {kw} 块（{type}）", "en": "the PNG's {kw} chunk ({type}): "},
    "cardfile.where.charx": {"zh": "CHARX 里的 card.json ", "en": "card.json in the CHARX: "},
    "cardfile.too_big_in": {"zh": "{where}内容有 {mib} MiB，超过角色卡的上限 {max} MiB，不像角色卡",
                            "en": "{where}the content is {mib} MiB, over the card limit of {max} MiB; not a card"},
    "cardfile.not_utf8": {"zh": "{where}不是有效的 UTF-8 文本（第 {pos} 字节处），不是可读的 JSON 角色卡",
                          "en": "{where}not valid UTF-8 text (at byte {pos}); not a readable JSON card"},
    "cardfile.empty_in": {"zh": "{where}内容是空的，没有角色卡数据", "en": "{where}empty; there is no card data"},
    "cardfile.chat_jsonl": {"zh": "这是聊天记录（.jsonl），不是角色卡", "en": "This is a chat log (.jsonl), not a card"},
    "cardfile.bad_json": {"zh": "{where}不是有效的 JSON（第 {line} 行第 {col} 列：{why}）",
                          "en": "{where}not valid JSON (line {line}, column {col}: {why})"},
    "cardfile.too_deep": {"zh": "{where}JSON 嵌套太深，无法读取", "en": "{where}the JSON is nested too deeply to read"},
    "cardfile.bad_value": {"zh": "{where}JSON 里有无法读取的值（{why}）",
                           "en": "{where}the JSON has a value that cannot be read ({why})"},
    "cardfile.digits": {"zh": "数字的位数太多", "en": "a number with too many digits"},
    # Python's JSON error messages in words (core/cards/_common.py _JSON_MSGS)
    "json.expecting_value": {"zh": "这里缺少值", "en": "a value is missing here"},
    "json.unterminated": {"zh": "字符串没有结束", "en": "a string is not closed"},
    "json.property_quotes": {"zh": "属性名要用双引号", "en": "property names need double quotes"},
    "json.comma": {"zh": "缺少逗号", "en": "a comma is missing"},
    "json.colon": {"zh": "缺少冒号", "en": "a colon is missing"},
    "json.extra": {"zh": "JSON 结束后还有多余内容", "en": "more text after the end of the JSON"},
    "json.control": {"zh": "字符串里有非法的控制字符", "en": "a control character inside a string"},
    "json.escape": {"zh": "非法的转义符", "en": "an invalid escape"},
    "json.u_escape": {"zh": "非法的 \\u 转义", "en": "an invalid \\u escape"},
    # card_from_json / not_a_card (core/cards/__init__.py)
    "cardfile.top.array": {"zh": "JSON 的最外层是数组，不是对象，不是角色卡", "en": "The JSON's top level is an array, not an object; not a card"},
    "cardfile.top.string": {"zh": "JSON 的最外层是字符串，不是对象，不是角色卡", "en": "The JSON's top level is a string, not an object; not a card"},
    "cardfile.top.number": {"zh": "JSON 的最外层是数字，不是对象，不是角色卡", "en": "The JSON's top level is a number, not an object; not a card"},
    "cardfile.top.bool": {"zh": "JSON 的最外层是布尔值，不是对象，不是角色卡", "en": "The JSON's top level is a boolean, not an object; not a card"},
    "cardfile.top.null": {"zh": "JSON 的最外层是空值，不是对象，不是角色卡", "en": "The JSON's top level is null, not an object; not a card"},
    "cardfile.top": {"zh": "JSON 的最外层是{kind}，不是对象，不是角色卡", "en": "The JSON's top level is {kind}, not an object; not a card"},
    "cardfile.is.lorebook_v3": {"zh": "这是世界书（lorebook_v3）文件，不是角色卡", "en": "This is a world book (lorebook_v3) file, not a card"},
    "cardfile.is.cc_preset": {"zh": "这是 SillyTavern 的对话补全预设（preset），不是角色卡",
                              "en": "This is a SillyTavern chat-completion preset, not a card"},
    "cardfile.is.instruct": {"zh": "这是 SillyTavern 的文本补全 / 指令模板预设（preset），不是角色卡",
                             "en": "This is a SillyTavern text-completion / instruct template preset, not a card"},
    "cardfile.is.world_info": {"zh": "这是世界书（World Info）文件，不是角色卡", "en": "This is a world book (World Info) file, not a card"},
    "cardfile.is.chat": {"zh": "这是聊天记录，不是角色卡", "en": "This is a chat log, not a card"},
    "cardfile.is.sampler": {"zh": "这是 SillyTavern 的采样参数预设（preset），不是角色卡",
                            "en": "This is a SillyTavern sampler preset, not a card"},
    "cardfile.no_fields": {"zh": "这个 JSON 里没有角色卡的字段（name、description、first_mes…），不像角色卡",
                           "en": "This JSON has none of a card's fields (name, description, first_mes…); not a card"},
    # load_card (core/cards/__init__.py)
    "cardfile.empty": {"zh": "文件是空的（0 字节），不是角色卡", "en": "The file is empty (0 bytes); not a card"},
    "cardfile.foreign_image": {"zh": "这是 {kind} 图片，不是 PNG 角色卡（角色卡只能是 PNG、JSON 或 CHARX）",
                               "en": "This is an image ({kind}), not a PNG card (cards are PNG, JSON or CHARX files)"},
    "cardfile.foreign": {"zh": "这是 {kind}，不是角色卡（角色卡只能是 PNG、JSON 或 CHARX）",
                         "en": "This is {kind}, not a card (cards are PNG, JSON or CHARX files)"},
    "filekind.video": {"zh": "MP4/MOV 视频文件", "en": "an MP4/MOV video"},
    "filekind.pdf": {"zh": "PDF 文件", "en": "a PDF file"},
    "filekind.gzip": {"zh": "gzip 压缩包", "en": "a gzip archive"},
    "filekind.7z": {"zh": "7z 压缩包", "en": "a 7z archive"},
    "filekind.rar": {"zh": "RAR 压缩包", "en": "a RAR archive"},
    "filekind.ico": {"zh": "ICO 图标", "en": "an ICO icon"},
    "cardfile.too_big": {"zh": "文件有 {mib} MiB，超过角色卡的上限 {max} MiB，不像角色卡",
                         "en": "The file is {mib} MiB, over the card limit of {max} MiB; not a card"},
    "cardfile.unknown_format": {"zh": "无法识别的文件格式（不是 PNG、JSON 或 CHARX 角色卡）",
                                "en": "Unknown file format (not a PNG, JSON or CHARX card)"},
    "cardfile.folder": {"zh": "这是一个文件夹，不是角色卡文件", "en": "This is a folder, not a card file"},
    "cardfile.not_regular": {"zh": "这不是普通文件，不是角色卡", "en": "This is not a regular file; not a card"},
    "cardfile.not_found": {"zh": "找不到这个文件", "en": "File not found"},
    "cardfile.no_permission": {"zh": "没有权限读取这个文件", "en": "No permission to read this file"},
    "cardfile.cannot_read": {"zh": "无法读取：{error}", "en": "Cannot read it: {error}"},
    "cardfile.read_error": {"zh": "读取时出错：{error}", "en": "Error while reading: {error}"},
    "cardfile.no_memory": {"zh": "内存不足，无法读取这个文件", "en": "Not enough memory to read this file"},
    "cardfile.no_memory_short": {"zh": "内存不足，无法读取", "en": "Not enough memory to read it"},
    "cardfile.surrogate": {"zh": "{name}：卡里有无法保存为 UTF-8 的字符（孤立的代理字符）",
                           "en": "{name}: the card has characters that cannot be saved as UTF-8 (lone surrogates)"},
    "cardfile.io": {"zh": "{name}：读写文件失败：{error}", "en": "{name}: reading or writing the file failed: {error}"},
    "cardfile.io_bare": {"zh": "读写文件失败：{error}", "en": "Reading or writing the file failed: {error}"},
    # CHARX (core/cards/charx.py)
    "charx.no_directory": {"zh": "不是有效的 CHARX（zip）文件：找不到 zip 目录，文件可能被截断",
                           "en": "Not a valid CHARX (zip) file: no zip directory found; the file may be truncated"},
    "charx.too_many": {"zh": "CHARX 里有 {n} 个文件，超过上限 {max}，已拒绝", "en": "The CHARX holds {n} files, over the limit of {max}; refused"},
    "charx.big_directory": {"zh": "CHARX 的 zip 目录有 {mib} MiB，文件数异常，已拒绝",
                            "en": "The CHARX's zip directory is {mib} MiB (an abnormal number of files); refused"},
    "charx.member_big": {"zh": "CHARX 里的 {name} 解压后超过 {mib} MiB，已拒绝", "en": "{name} in the CHARX is over {mib} MiB unpacked; refused"},
    "charx.invalid": {"zh": "不是有效的 CHARX（zip）文件：{why}", "en": "Not a valid CHARX (zip) file: {why}"},
    "charx.unsafe": {"zh": "CHARX 里有不安全的路径「{name}」（绝对路径或 ..），已拒绝",
                     "en": "The CHARX has an unsafe path “{name}” (absolute or ..); refused"},
    "charx.ratio": {"zh": "CHARX 里的 {name} 压缩比异常（{a} → {b} 字节），疑似压缩炸弹，已拒绝",
                    "en": "{name} in the CHARX has an abnormal compression ratio ({a} → {b} bytes), likely a zip bomb; refused"},
    "charx.total": {"zh": "CHARX 解压后共 {mib} MiB，超过上限 {max} MiB，已拒绝",
                    "en": "The CHARX unpacks to {mib} MiB, over the limit of {max} MiB; refused"},
    "charx.no_card": {"zh": "这个 zip 里没有 card.json，不是 CHARX 角色卡", "en": "This zip has no card.json; not a CHARX card"},
    "charx.encrypted": {"zh": "CHARX 里的 card.json 被加密了，无法读取", "en": "card.json in the CHARX is encrypted and cannot be read"},
    "charx.card_big": {"zh": "CHARX 里的 card.json 有 {mib} MiB，超过角色卡的上限 {max} MiB",
                       "en": "card.json in the CHARX is {mib} MiB, over the card limit of {max} MiB"},
    "charx.card_damaged": {"zh": "CHARX 里的 card.json 已损坏（{why}）", "en": "card.json in the CHARX is damaged ({why})"},
    "zip.why.zlib": {"zh": "压缩数据损坏", "en": "damaged compressed data"},
    "zip.why.crc": {"zh": "校验和（CRC）不对", "en": "wrong checksum (CRC)"},
    "zip.why.method": {"zh": "用了不支持的压缩方式", "en": "an unsupported compression method"},
    "zip.why.encrypted": {"zh": "被加密了", "en": "encrypted"},
    "zip.why.truncated": {"zh": "文件被截断", "en": "the file is truncated"},
    # PNG (core/cards/png.py)
    "png.not_png": {"zh": "不是 PNG 文件（文件头不对）", "en": "Not a PNG file (wrong header)"},
    "png.too_many_chunks": {"zh": "PNG 结构异常：超过 {n} 个块，不像正常的图片",
                            "en": "Abnormal PNG structure: more than {n} chunks; not a normal image"},
    "png.truncated_at": {"zh": "PNG 文件不完整：在第 {pos} 字节处被截断", "en": "Incomplete PNG file: truncated at byte {pos}"},
    "png.bad_chunk_at": {"zh": "PNG 结构损坏：第 {pos} 字节处不是合法的块（文件被截断或改写过）",
                         "en": "Damaged PNG structure: no valid chunk at byte {pos} (the file was truncated or altered)"},
    "png.chunk_too_long": {"zh": "PNG 结构损坏：{name} 块声称长度 {length} 字节，超过 PNG 的上限",
                           "en": "Damaged PNG structure: the {name} chunk claims {length} bytes, over the PNG limit"},
    "png.chunk_cut": {"zh": "PNG 文件不完整：{name} 块声称 {length} 字节，但文件只剩 {left} 字节",
                      "en": "Incomplete PNG file: the {name} chunk claims {length} bytes but only {left} bytes are left"},
    "png.first_not_ihdr": {"zh": "PNG 结构损坏：第一个块是 {name}，不是 IHDR", "en": "Damaged PNG structure: the first chunk is {name}, not IHDR"},
    "png.ihdr_length": {"zh": "PNG 结构损坏：IHDR 块长度不对", "en": "Damaged PNG structure: the IHDR chunk has a wrong length"},
    "png.bomb": {"zh": "PNG 里的 {kw} 块（{type}）解压后超过 {mib} MiB，疑似压缩炸弹，已拒绝",
                 "en": "The PNG's {kw} chunk ({type}) is over {mib} MiB unpacked, likely a zip bomb; refused"},
    "png.zlib_damaged": {"zh": "PNG 里的 {kw} 块（{type}）的压缩数据损坏（zlib 解压失败）",
                         "en": "The PNG's {kw} chunk ({type}) has damaged compressed data (zlib failed)"},
    "png.zlib_cut": {"zh": "PNG 里的 {kw} 块（{type}）的压缩数据不完整（zlib 流被截断）",
                     "en": "The PNG's {kw} chunk ({type}) has incomplete compressed data (the zlib stream is cut)"},
    "png.chunk_empty": {"zh": "PNG 里的 {kw} 块（{type}）是空的", "en": "The PNG's {kw} chunk ({type}) is empty"},
    "png.method_n": {"zh": "PNG 里的 {kw} 块（{type}）用了未知的压缩方式 {method}",
                     "en": "The PNG's {kw} chunk ({type}) uses an unknown compression method {method}"},
    "png.method": {"zh": "PNG 里的 {kw} 块（{type}）用了未知的压缩方式", "en": "The PNG's {kw} chunk ({type}) uses an unknown compression method"},
    "png.short": {"zh": "PNG 里的 {kw} 块（{type}）格式不对（太短）", "en": "The PNG's {kw} chunk ({type}) is malformed (too short)"},
    "png.no_lang": {"zh": "PNG 里的 {kw} 块（{type}）格式不对（缺少语言标记）",
                    "en": "The PNG's {kw} chunk ({type}) is malformed (no language tag)"},
    "png.base64_ascii": {"zh": "{where}不是有效的 base64（含非 ASCII 字符）", "en": "{where}not valid base64 (non-ASCII characters)"},
    "png.base64": {"zh": "{where}不是有效的 base64", "en": "{where}not valid base64"},
    "png.card_chunk_big": {"zh": "PNG 里的 {kw} 块（{type}）有 {mib} MiB，超过角色卡的上限 {max} MiB",
                           "en": "The PNG's {kw} chunk ({type}) is {mib} MiB, over the card limit of {max} MiB"},
    "png.crc": {"zh": "PNG 里的 {kw} 块（{type}）校验和（CRC）不对，文件已损坏",
                "en": "The PNG's {kw} chunk ({type}) has a wrong checksum (CRC); the file is damaged"},
    "png.no_iend": {"zh": "PNG 文件不完整（没有 IEND 结束块），也没找到角色卡数据",
                    "en": "Incomplete PNG file (no IEND chunk), and no card data found"},
    "png.no_card": {"zh": "这张 PNG 里没有角色卡数据（没有 chara / ccv3 文本块），只是普通图片",
                    "en": "This PNG holds no card data (no chara / ccv3 text chunk); it is just an image"},
    "png.export_needs_png": {"zh": "这是 {kind} 图片，不是 PNG；导出 PNG 角色卡需要 PNG 图片",
                             "en": "This image is not a PNG ({kind}); exporting a PNG card needs a PNG image"},
    # presets (core/prompt/presets/model.py, store.py)
    "presetfile.prompts_type": {"zh": "{label}：prompts 不是数组（是 {type}），无法导入",
                                "en": "{label}: prompts is not an array (it is {type}); cannot import"},
    "presetfile.field": {"zh": "{label}：字段 {loc} 不对（{msg}）", "en": "{label}: the field {loc} is wrong ({msg})"},
    "presetfile.not_object": {"zh": "{label}：不是 JSON 对象（是 {type}），不是 SillyTavern 预设",
                              "en": "{label}: not a JSON object (it is {type}); not a SillyTavern preset"},
    "presetfile.is_card": {"zh": "{label}：这是角色卡，不是预设（请用「导入角色卡」）",
                           "en": "{label}: this is a character card, not a preset (use Import card)"},
    "presetfile.is_book": {"zh": "{label}：这是世界书（World Info），不是预设（请作为世界书导入）",
                           "en": "{label}: this is a world book (World Info), not a preset (import it as a world book)"},
    "presetfile.is_chat": {"zh": "{label}：这是 SillyTavern 聊天记录的开头，不是预设（请用「导入聊天记录」）",
                           "en": "{label}: this is the start of a SillyTavern chat log, not a preset (use Import chat)"},
    "presetfile.is_instruct": {"zh": "{label}：这是 instruct 模板（文本补全用），不是对话补全（chat completion）预设",
                               "en": "{label}: this is an instruct template (for text completion), not a chat-completion preset"},
    "presetfile.is_context": {"zh": "{label}：这是 context 模板（文本补全用），不是对话补全（chat completion）预设",
                              "en": "{label}: this is a context template (for text completion), not a chat-completion preset"},
    "presetfile.is_settings": {"zh": "{label}：这是 SillyTavern 的设置文件，不是单个预设（请在 SillyTavern 里导出预设）",
                               "en": "{label}: this is SillyTavern's settings file, not a single preset (export the preset "
                                     "in SillyTavern)"},
    "presetfile.is_textgen": {"zh": "{label}：这是文本补全（Text Completion）的采样预设，不是对话补全（chat completion）预设",
                              "en": "{label}: this is a Text Completion sampler preset, not a chat-completion preset"},
    "presetfile.no_prompts": {"zh": "{label}：没有 prompts / prompt_order，不像 SillyTavern 的对话补全（chat completion）预设",
                              "en": "{label}: no prompts / prompt_order; not a SillyTavern chat-completion preset"},
    "presetfile.cannot_read": {"zh": "无法读取预设 {path}：{error}", "en": "Cannot read the preset {path}: {error}"},
    "presetfile.png": {"zh": "{name}：这是 PNG 图片（多半是角色卡），不是预设", "en": "{name}: this is a PNG image (probably a card), not a preset"},
    "presetfile.not_utf8": {"zh": "{name}：不是 UTF-8 文本，不是预设", "en": "{name}: not UTF-8 text; not a preset"},
    "presetfile.bad_json": {"zh": "{name}：不是有效的 JSON{hint}（第 {line} 行：{error}）",
                            "en": "{name}: not valid JSON{hint} (line {line}: {error})"},
    "presetfile.jsonl_hint": {"zh": "（看起来是 .jsonl 聊天记录）", "en": " (it looks like a .jsonl chat log)"},
    "presetfile.missing": {"zh": "预设库里没有「{name}」", "en": "The preset library has no “{name}”"},
    # SillyTavern chat files (core/cards/st_chat.py, core/chat/st_import.py)
    "stchat.png": {"zh": "{name}：这是 PNG 图片（多半是角色卡），不是聊天记录", "en": "{name}: this is a PNG image (probably a card), not a chat log"},
    "stchat.empty": {"zh": "{name}：文件是空的，不是聊天记录", "en": "{name}: the file is empty; not a chat log"},
    "stchat.is_card": {"zh": "{name}：这是角色卡，不是 SillyTavern 聊天记录", "en": "{name}: this is a character card, not a SillyTavern chat log"},
    "stchat.is_preset": {"zh": "{name}：这是对话补全预设，不是 SillyTavern 聊天记录",
                         "en": "{name}: this is a chat-completion preset, not a SillyTavern chat log"},
    "stchat.is_book": {"zh": "{name}：这是世界书（World Info），不是 SillyTavern 聊天记录",
                       "en": "{name}: this is a world book (World Info), not a SillyTavern chat log"},
    "stchat.first_not_json": {"zh": "{name}：第一行不是 JSON，不是 SillyTavern 聊天记录（.jsonl）",
                              "en": "{name}: the first line is not JSON; not a SillyTavern chat log (.jsonl)"},
    "stchat.first_neither": {"zh": "{name}：第一行既不是聊天记录的头（user_name）也不是消息（mes），不是 SillyTavern 聊天记录",
                             "en": "{name}: the first line is neither a chat header (user_name) nor a message (mes); not a "
                                   "SillyTavern chat log"},
    "stchat.cannot_read": {"zh": "无法读取聊天记录 {path}：{error}", "en": "Cannot read the chat log {path}: {error}"},
    "stchat.headerless": {"zh": "{name}：没有头一行（user_name/character_name），已按消息读取并补上",
                          "en": "{name}: no header line (user_name/character_name); read as messages and a header added"},
    "stchat.torn_last": {"zh": "{name}：最后一行不完整（多半是写入时中断），已跳过",
                         "en": "{name}: the last line is incomplete (probably cut while writing); skipped"},
    "stchat.bad_line": {"zh": "{name}：第 {n} 行不是有效的 JSON，已跳过（{error}）", "en": "{name}: line {n} is not valid JSON; skipped ({error})"},
    "stchat.line_too_deep": {"zh": "{name}：第 {n} 行 JSON 嵌套太深，已跳过", "en": "{name}: line {n} is nested too deeply; skipped"},
    "stchat.line_not_object": {"zh": "{name}：第 {n} 行不是 JSON 对象，已跳过", "en": "{name}: line {n} is not a JSON object; skipped"},
    "stchat.line_no_mes": {"zh": "{name}：第 {n} 行没有 mes，不像一条消息，已跳过", "en": "{name}: line {n} has no mes, not a message; skipped"},
    "stchat.session_exists": {"zh": "会话文件已存在：{path}", "en": "The session file already exists: {path}"},
    # world-book files (core/lore/books.py import_book_file)
    "bookfile.empty": {"zh": "{name}：文件是空的，不是世界书", "en": "{name}: the file is empty; not a world book"},
    "bookfile.png": {"zh": "{name}：这是 PNG 图片（多半是角色卡），不是世界书", "en": "{name}: this is a PNG image (probably a card), not a world book"},
    "bookfile.not_utf8": {"zh": "{name}：不是 UTF-8 文本（第 {pos} 字节处），不是世界书",
                          "en": "{name}: not UTF-8 text (at byte {pos}); not a world book"},
    "bookfile.bad_json": {"zh": "{name}：不是有效的 JSON（第 {line} 行第 {col} 列：{why}），不是世界书",
                          "en": "{name}: not valid JSON (line {line}, column {col}: {why}); not a world book"},
    "bookfile.too_deep": {"zh": "{name}：JSON 嵌套太深，无法读取", "en": "{name}: the JSON is nested too deeply to read"},
    "bookfile.not_object": {"zh": "{name}：JSON 的最外层不是对象，不是世界书", "en": "{name}: the JSON's top level is not an object; not a world book"},
    "bookfile.is_card": {"zh": "{name}：这是角色卡，不是世界书（卡里的世界书随卡导入）",
                         "en": "{name}: this is a character card, not a world book (a card's book comes in with the card)"},
    "bookfile.no_entries": {"zh": "{name}：没有 entries（条目），不是世界书", "en": "{name}: no entries; not a world book"},
    # SillyTavern migration (core/migrate/)
    "migrate.bad_zip": {"zh": "{name}：不是可读的 zip 文件（{error}）", "en": "{name}: not a readable zip file ({error})"},
    "migrate.too_many": {"zh": "{name}：条目太多（{n} 个，上限 {max}），拒绝解压",
                         "en": "{name}: too many entries ({n}, the limit is {max}); not unpacked"},
    "migrate.member_big": {"zh": "{name}：「{member}」解压后太大（{size} 字节），拒绝解压",
                           "en": "{name}: “{member}” is too big unpacked ({size} bytes); not unpacked"},
    "migrate.bomb": {"zh": "{name}：解压后超过大小上限，拒绝解压（可能是压缩炸弹）",
                     "en": "{name}: over the size limit unpacked; not unpacked (possibly a zip bomb)"},
    "migrate.unzip_failed": {"zh": "{name}：解压失败（{error}）", "en": "{name}: unpacking failed ({error})"},
    "migrate.not_found": {"zh": "找不到 {path}", "en": "Not found: {path}"},
    "migrate.pick_folder": {"zh": "{name}：请选择 SillyTavern 的数据文件夹（data/<用户名>/）或它的备份 .zip",
                            "en": "{name}: choose SillyTavern's data folder (data/<user name>/) or its backup .zip"},
    "migrate.no_data": {"zh": "{path}：这里没有 SillyTavern 的数据（要有 characters、chats、worlds 或 settings.json；"
                              "可以选 SillyTavern 文件夹、它的 data/<用户名>/、旧版的 public/ 或备份 zip）",
                        "en": "{path}: no SillyTavern data here (it needs characters, chats, worlds or settings.json; "
                              "choose the SillyTavern folder, its data/<user name>/, an old public/ or a backup zip)"},
    "migrate.card_missing": {"zh": "它的角色卡没有导入（characters/{owner}.*）", "en": "Its card was not imported (characters/{owner}.*)"},
    "migrate.top_not_object": {"zh": "顶层不是对象", "en": "the top level is not an object"},
    "migrate.no_entries": {"zh": "没有 entries，不是世界书", "en": "no entries; not a world book"},
    # -- what reading such a file repaired or skipped (load warnings: the window's notices, `liyuan card inspect`) --
    "cardwarn.v1_flat": {"zh": "卡声明为 {spec}，但没有 data 对象，已按 V1 平铺格式读取",
                         "en": "The card declares {spec} but has no data object; read as a flat V1 card"},
    "cardwarn.v2_no_spec": {"zh": "卡里没有 spec，但字段都在 data 里，已按 V2 读取", "en": "The card has no spec but its fields are in data; read as V2"},
    "cardwarn.not_text": {"zh": "{key} 不是文本（{type}），已忽略", "en": "{key} is not text ({type}); ignored"},
    "cardwarn.no_name": {"zh": "卡里没有名字，已用文件名「{name}」", "en": "The card has no name; the file name “{name}” is used"},
    "cardwarn.greetings_items": {"zh": "alternate_greetings 里有 {n} 项不是文本，已忽略", "en": "{n} items of alternate_greetings are not text; ignored"},
    "cardwarn.greetings": {"zh": "alternate_greetings 不是数组，已忽略", "en": "alternate_greetings is not an array; ignored"},
    "cardwarn.extensions": {"zh": "extensions 不是对象（{type}），已忽略", "en": "extensions is not an object ({type}); ignored"},
    "cardwarn.book": {"zh": "character_book 不是对象（{type}），世界书已忽略",
                      "en": "character_book is not an object ({type}); the world book is ignored"},
    "cardwarn.book_entries": {"zh": "character_book.entries 不是数组，世界书已忽略",
                              "en": "character_book.entries is not an array; the world book is ignored"},
    "cardwarn.newer": {"zh": "卡的版本是 {v}，比梨园认识的 V3 新，可能有字段没读到",
                       "en": "The card's version is {v}, newer than the V3 Liyuan knows; some fields may not be read"},
    "cardwarn.charx_no_spec": {"zh": "CHARX 的 card.json 没有 spec（规范要求 V3），已尽量读取",
                               "en": "The CHARX's card.json has no spec (the format requires V3); read as far as possible"},
    "cardwarn.asset_unsafe": {"zh": "资源地址不安全，已忽略：{uri}", "en": "Unsafe asset address, ignored: {uri}"},
    "cardwarn.asset_not_in_charx": {"zh": "资源 {uri} 在 CHARX 里找不到", "en": "Asset {uri} is not in the CHARX"},
    "cardwarn.asset_encrypted": {"zh": "资源 {uri} 被加密，没有载入", "en": "Asset {uri} is encrypted; not loaded"},
    "cardwarn.asset_big": {"zh": "资源 {uri} 太大，没有载入", "en": "Asset {uri} is too big; not loaded"},
    "cardwarn.asset_unreadable_big": {"zh": "资源 {uri} 读不出来（太大），没有载入", "en": "Asset {uri} cannot be read (too big); not loaded"},
    "cardwarn.asset_unreadable": {"zh": "资源 {uri} 读不出来（{why}），没有载入", "en": "Asset {uri} cannot be read ({why}); not loaded"},
    "cardwarn.no_iend": {"zh": "PNG 缺少 IEND 结束块，文件可能不完整（角色卡数据已读出）",
                         "en": "The PNG has no IEND chunk and may be incomplete (the card data was read)"},
    "cardwarn.ccv3_fallback": {"zh": "ccv3 块读不出来（{why}），已改用 chara 块",
                               "en": "The ccv3 chunk cannot be read ({why}); the chara chunk is used instead"},
    "cardwarn.asset_not_in_png": {"zh": "资源 {uri} 在 PNG 里找不到", "en": "Asset {uri} is not in the PNG"},
    "cardwarn.asset_crc": {"zh": "资源 {uri} 的块已损坏（CRC 不对），没有载入", "en": "The chunk of asset {uri} is damaged (wrong CRC); not loaded"},
    "cardwarn.asset_base64": {"zh": "资源 {uri} 的 base64 无效，没有载入", "en": "Asset {uri} has invalid base64; not loaded"},
    # SillyTavern chat messages (core/cards/st_chat.py)
    "stchat.mes_not_text": {"zh": "{label}：mes 不是文本（{type}），已按文本读取", "en": "{label}: mes is not text ({type}); read as text"},
    "stchat.swipes_not_text": {"zh": "{label}：swipes 里有非文本项（Chub 格式？），已取其文本",
                               "en": "{label}: swipes holds items that are not text (Chub format?); their text was taken"},
    "stchat.swipe_id": {"zh": "{label}：swipe_id {sid} 不在 swipes 范围内，按第 {n} 个处理",
                        "en": "{label}: swipe_id {sid} is outside swipes; swipe {n} is used"},
    "stchat.other_card": {"zh": "{name}：这份聊天记录属于「{char}」，导入到角色卡「{card}」下",
                          "en": "{name}: this chat belongs to “{char}”; imported under the card “{card}”"},
    # presets (core/prompt/presets/model.py)
    "presetwarn.legacy": {"zh": "旧式预设（main_prompt/nsfw_prompt/jailbreak_prompt 在顶层）：已按 SillyTavern 的方式转成 prompts",
                          "en": "Old-style preset (main_prompt/nsfw_prompt/jailbreak_prompt at the top level): converted to "
                                "prompts as SillyTavern does"},
    "presetwarn.no_prompts": {"zh": "预设里没有 prompts：用 SillyTavern 的默认提示词", "en": "The preset has no prompts: SillyTavern's default prompts are used"},
    "presetwarn.sampler": {"zh": "采样参数 {key} 的值 {value} 不是数字，已忽略", "en": "The sampler setting {key} = {value} is not a number; ignored"},
    "presetwarn.prompt_not_object": {"zh": "prompts 第 {i} 项不是对象，已跳过", "en": "Item {i} of prompts is not an object; skipped"},
    "presetwarn.no_identifier": {"zh": "prompts 第 {i} 项（{name}）没有 identifier，记作 {ident}",
                                 "en": "Item {i} of prompts ({name}) has no identifier; recorded as {ident}"},
    "presetwarn.unnamed": {"zh": "无名", "en": "unnamed"},
    "presetwarn.dup_identifier": {"zh": "identifier 重复：{ident}（第 {i} 项），按 SillyTavern 只用第一个",
                                  "en": "Repeated identifier: {ident} (item {i}); only the first is used, as in SillyTavern"},
    "presetwarn.role": {"zh": "提示词「{name}」的 role {role} 不认识，按 system 处理", "en": "Prompt “{name}”: unknown role {role}; treated as system"},
    "presetwarn.number": {"zh": "提示词「{name}」的 {key} {value} 不是数字，用默认值 {default}",
                          "en": "Prompt “{name}”: {key} {value} is not a number; the default {default} is used"},
    "presetwarn.injection": {"zh": "提示词「{name}」的 injection_position {pos} 不认识，按相对位置处理",
                             "en": "Prompt “{name}”: unknown injection_position {pos}; treated as relative"},
    "presetwarn.order_type": {"zh": "prompt_order 不是数组（是 {type}），已忽略", "en": "prompt_order is not an array (it is {type}); ignored"},
    "presetwarn.order_item": {"zh": "prompt_order 第 {i} 项不是 {{character_id, order[]}}，已跳过",
                              "en": "Item {i} of prompt_order is not {{character_id, order[]}}; skipped"},
    "presetwarn.order_cid": {"zh": "prompt_order 第 {i} 项的 character_id {cid} 不对，已跳过",
                             "en": "Item {i} of prompt_order has a wrong character_id {cid}; skipped"},
    "presetwarn.order_entry": {"zh": "prompt_order（character_id {cid}）里有一项不是 {{identifier, enabled}}，已跳过",
                               "en": "prompt_order (character_id {cid}) has an item that is not {{identifier, enabled}}; skipped"},
    "presetwarn.order_enabled": {"zh": "prompt_order（character_id {cid}）有 {n} 项没写 enabled，按 SillyTavern 视为关闭",
                                 "en": "prompt_order (character_id {cid}) has {n} items without enabled; off, as in SillyTavern"},
    # world-book entries (core/lore/lorebook.py)
    "bookwarn.entry_not_object": {"zh": "世界书第 {i} 条不是对象，已跳过", "en": "World-book entry {i} is not an object; skipped"},
    "bookwarn.no_enabled": {"zh": "世界书条目 {uid} 没有 enabled 字段，按 SillyTavern 视为禁用",
                            "en": "World-book entry {uid} has no enabled field; disabled, as in SillyTavern"},
    "bookwarn.key_not_object": {"zh": "世界书条目 {k} 不是对象，已跳过", "en": "World-book entry {k} is not an object; skipped"},
    # personas (core/cards/personas.py)
    "persona.cannot_read": {"zh": "无法读取 {path}：{error}", "en": "Cannot read {path}: {error}"},
    "persona.bad_json": {"zh": "{name}：不是有效的 JSON（{error}）", "en": "{name}: not valid JSON ({error})"},
    "persona.not_object": {"zh": "{name}：不是 JSON 对象，不是 SillyTavern 的人设导出", "en": "{name}: not a JSON object; not a SillyTavern persona export"},
    "persona.none_inside": {"zh": "{name}：里面没有 personas（SillyTavern 的设置导出或人设备份才有），无法导入人设",
                            "en": "{name}: no personas inside (only SillyTavern's settings export or persona backup has them); "
                                  "nothing to import"},
    "persona.no_such": {"zh": "没有这个人设：{id}", "en": "No such persona: {id}"},
    "persona.position": {"zh": "人设「{name}」的位置 {pos} 不认识，按「写进提示词」处理",
                         "en": "Persona “{name}”: unknown position {pos}; treated as “in the prompt”"},
    "persona.fields": {"zh": "人设「{name}」字段不对，已跳过（{msg}）", "en": "Persona “{name}” has wrong fields; skipped ({msg})"},
    "persona.empty": {"zh": "{name}：personas 是空的，没有导入任何人设", "en": "{name}: personas is empty; no persona imported"},
    "persona.file": {"zh": "人设文件", "en": "Persona file"},
    # world-info settings given by name (core/lore/settings.py: --wi, a SillyTavern settings.json)
    "wiset.unknown": {"zh": "没有叫「{key}」的世界书设置；可用的名字：{names}",
                      "en": "There is no world-info setting named “{key}”; the names are: {names}"},
    "wiset.bool": {"zh": "{name} 要填 true 或 false，不是「{text}」", "en": "{name} takes true or false, not “{text}”"},
    "wiset.int": {"zh": "{name} 要填整数，不是「{text}」", "en": "{name} takes an integer, not “{text}”"},
    "wiset.value": {"zh": "世界书设置 {name} 的值「{value}」不行：{msg}", "en": "The world-info setting {name} cannot be “{value}”: {msg}"},
    "wiset.syntax": {"zh": "--wi 要写成 名字=值（如 world_info_depth=4），不是「{item}」",
                     "en": "--wi is written name=value (e.g. world_info_depth=4), not “{item}”"},
    "wiset.not_settings": {"zh": "这不是 SillyTavern 的 settings.json（顶层不是对象）",
                           "en": "This is not SillyTavern's settings.json (the top level is not an object)"},
    "wiset.none": {"zh": "这个文件里没有 SillyTavern 的世界书设置（world_info_settings 或 world_info_* 键）",
                   "en": "This file has no SillyTavern world-info settings (world_info_settings or world_info_* keys)"},
    # a search / grep pattern Python's own parser cannot even read (core/linear_regex.py compile_python_pattern)
    "regex.too_deep": {"zh": "正则表达式嵌套太深（括号里套括号太多层），无法使用：请简化后再试",
                       "en": "The regular expression is nested too deeply (too many brackets inside brackets) to be "
                             "used: simplify it and try again"},
    # the templates of one beat ran out of their time budget (core/macros/ejs.py BEAT_BUDGET)
    "ejs.budget": {"zh": "本拍的模板已用满 {seconds} 秒，以下几段没有执行，也没有发给模型：{labels}",
                   "en": "This beat's templates used up their {seconds} seconds; these were not run and not sent to "
                         "the model: {labels}"},
    # agent-mode checkpoints (core/story/checkpoints.py ObjectStore.read)
    "story.object_missing": {"zh": "对象 {h} 不在 {dir}", "en": "Object {h} is not in {dir}"},
    "story.object_damaged": {"zh": "对象 {h} 已损坏（内容与哈希不符）", "en": "Object {h} is damaged (its content does not match its hash)"},
    # JSON from a user's file (core/jsonfile.py: the depth and size rules of every reader)
    "jsonfile.too_deep": {"zh": "{name}：JSON 嵌套超过 {max} 层，不像正常的文件，没有读取",
                          "en": "{name}: the JSON nests more than {max} levels deep; not a normal file, not read"},
    "jsonfile.too_big": {"zh": "{name}：文件有 {size} MB，超过上限 {max} MB，没有读取",
                         "en": "{name}: the file is {size} MB, over the limit of {max} MB; not read"},
    # the SillyTavern import (core/migrate): what it refuses and why, one line per file
    "migrate.link_out": {"zh": "{name}：是指向 SillyTavern 文件夹外面的链接（{target}），没有读取",
                         "en": "{name}: a link pointing outside the SillyTavern folder ({target}); not read"},
    "migrate.too_big": {"zh": "{name}：文件有 {size} MB，超过{what}的上限 {max} MB，没有导入",
                        "en": "{name}: the file is {size} MB, over the {what} limit of {max} MB; not imported"},
    "migrate.empty_chat": {"zh": "{name}：文件是空的，不是聊天记录", "en": "{name}: the file is empty; not a chat"},
    "migrate.zip_damaged": {"zh": "压缩包里的「{name}」已损坏，没有解压（{why}）",
                            "en": "“{name}” in the archive is damaged and was not extracted ({why})"},
    "migrate.zip_ratio": {"zh": "{name}：解压后会是压缩包的 {ratio} 倍以上（可能是压缩炸弹），拒绝解压",
                          "en": "{name}: it would unpack to more than {ratio} times its size (possibly a zip bomb); refused"},
    "migrate.provider_added": {"zh": "连接：{name}（{url}，模型 {model}）已加入服务商，没有设为当前连接；密钥没有导入，请在设置里填写",
                               "en": "Connection: {name} ({url}, model {model}) was added to the providers, not made the current one; the key was not imported, enter it in Settings"},
    "migrate.authors_note": {"zh": "作者注：{summary}", "en": "Author's Note: {summary}"},
    # editing character cards (core/cards/edit.py, issue 26 §1): CardEditError texts
    "cardedit.unknown_field": {"zh": "没有「{key}」这个字段。可以改的字段：{known}（列表项用 alternate_greetings.N、tags.N）",
                               "en": "There is no field “{key}”. Fields you can set: {known} (list items as "
                                     "alternate_greetings.N, tags.N)"},
    "cardedit.not_text": {"zh": "「{key}」要填文字", "en": "“{key}” takes text"},
    "cardedit.too_long": {"zh": "「{key}」有 {n} 个字，超过上限 {max}", "en": "“{key}” has {n} characters, over the limit of {max}"},
    "cardedit.one_line": {"zh": "「{key}」只能是一行文字", "en": "“{key}” must be a single line"},
    "cardedit.not_number": {"zh": "「{key}」要填数字，「{value}」不是数字", "en": "“{key}” takes a number; “{value}” is not one"},
    "cardedit.not_int": {"zh": "「{key}」要填整数，「{value}」不是整数", "en": "“{key}” takes a whole number; “{value}” is not one"},
    "cardedit.out_of_range": {"zh": "「{key}」是 {value}，要在 {min} 到 {max} 之间",
                              "en": "“{key}” is {value}; it must be between {min} and {max}"},
    "cardedit.bad_choice": {"zh": "「{key}」不能是「{value}」，只能是：{choices}", "en": "“{key}” cannot be “{value}”; choose one of: {choices}"},
    "cardedit.name_empty": {"zh": "角色卡的名字不能是空的", "en": "The card's name cannot be empty"},
    "cardedit.not_json": {"zh": "{file}：只能编辑资料库里的卡（或 JSON 角色卡文件）；PNG、CHARX 卡先导入资料库再编辑",
                          "en": "{file}: only cards in the library (or JSON card files) can be edited; import a PNG or "
                                "CHARX card into the library first"},
    "cardedit.not_list": {"zh": "「{key}」不是列表（列表字段：alternate_greetings、tags）",
                          "en": "“{key}” is not a list (the list fields: alternate_greetings, tags)"},
    "cardedit.bad_index": {"zh": "「{key}」：没有第 {i} 项（现有 {n} 项，从 0 数起；新增一项用序号 {n}）",
                           "en": "“{key}”: there is no item {i} ({n} items, counted from 0; use index {n} to add one)"},
    "cardedit.too_many": {"zh": "「{key}」最多 {max} 项", "en": "“{key}” holds at most {max} items"},
    "cardedit.bad_book_name": {"zh": "「{name}」不是世界书的名字（不能含 / 或 \\）", "en": "“{name}” is not a world book name (no / or \\)"},
    "cardedit.bad_script": {"zh": "正则脚本要是一个对象，scriptName、findRegex、replaceString 都是文字",
                            "en": "A regex script must be an object whose scriptName, findRegex and replaceString are text"},
    "cardedit.avatar_big": {"zh": "头像图片超过 {max} MiB", "en": "The avatar image is over {max} MiB"},
    "cardedit.avatar_not_png": {"zh": "头像只能是 PNG 图片（这是 {kind}）；JPEG、WebP 请在窗口里选择，会先转换成 PNG",
                                "en": "The avatar must be a PNG image (this is {kind}); choose a JPEG or WebP in the "
                                      "window, which converts it to PNG"},
    "cardedit.avatar_broken": {"zh": "头像图片是损坏的 PNG", "en": "The avatar image is a damaged PNG"},
    "cardedit.cannot_save": {"zh": "没有保存：「{key}」{msg}", "en": "Not saved: “{key}”: {msg}"},
    "cardedit.card_big": {"zh": "角色卡会有 {mib} MiB，超过上限 {max} MiB，没有保存",
                          "en": "The card would be {mib} MiB, over the limit of {max} MiB; not saved"},
    "cardedit.no_version": {"zh": "这张卡没有版本「{id}」", "en": "The card has no version “{id}”"},
    "cardedit.no_greeting": {"zh": "没有第 {n} 条开场白（0 是第一条开场白，1…{max} 是备选开场白）",
                             "en": "There is no greeting {n} (0 is the first message, 1…{max} the alternate greetings)"},
    "cardedit.bad_json": {"zh": "{file}：不是有效的 JSON 对象（{error}）", "en": "{file}: not a valid JSON object ({error})"},
    # a chat playing a card that was edited (core/chat/facade.py Chat.refresh_card; the beat's activity list)
    "card.edited_notice": {"zh": "角色卡「{name}」改过了：从这一拍起用新版本（服务商缓存的提示词前缀会重建一次）。",
                           "en": "The card “{name}” was edited: from this beat on the chat uses the new version (the "
                                 "provider's cached prompt prefix is rebuilt once)."},
    # liyuan card new / set / preview --greeting (cli/card.py)
    "card.created": {"zh": "已新建角色卡「{name}」：{dir}", "en": "Created the card “{name}”: {dir}"},
    "card.field_set": {"zh": "已保存「{name}」的 {key}（旧版本在 {versions}）",
                       "en": "Saved {key} of “{name}” (the previous version is in {versions})"},
    "card.not_in_library": {"zh": "{name}：资料库里没有这张卡", "en": "{name}: there is no such card in the library"},
    "card.value_needed": {"zh": "要给出新值（VALUE，或 --value-file 文件，或 --remove 删除列表项）",
                          "en": "Give the new value (VALUE, or --value-file FILE, or --remove for a list item)"},
    "card.remove_needs_index": {"zh": "--remove 只能删除列表项（alternate_greetings.N 或 tags.N）",
                                "en": "--remove only removes a list item (alternate_greetings.N or tags.N)"},
    "card.tokens_total": {"zh": "合计 {total} token（其中每一拍都发送的 {permanent}）",
                          "en": "Total {total} tokens ({permanent} of them sent on every beat)"},
    # the fields of the card editor (core/cards/edit.py FieldSpec.label), as SillyTavern's character panel names them
    "cardfield.name": {"zh": "名字", "en": "Name"},
    "cardfield.description": {"zh": "角色描述", "en": "Description"},
    "cardfield.personality": {"zh": "性格摘要", "en": "Personality summary"},
    "cardfield.scenario": {"zh": "场景", "en": "Scenario"},
    "cardfield.first_mes": {"zh": "开场白", "en": "First message"},
    "cardfield.alternate_greetings": {"zh": "备选开场白", "en": "Alternate greetings"},
    "cardfield.mes_example": {"zh": "对话示例", "en": "Examples of dialogue"},
    "cardfield.system_prompt": {"zh": "系统提示词", "en": "Main prompt"},
    "cardfield.post_history_instructions": {"zh": "历史后指令", "en": "Post-history instructions"},
    "cardfield.depth_prompt.prompt": {"zh": "角色备注", "en": "Character's Note"},
    "cardfield.depth_prompt.depth": {"zh": "角色备注深度", "en": "Character's Note depth"},
    "cardfield.depth_prompt.role": {"zh": "角色备注身份", "en": "Character's Note role"},
    "cardfield.talkativeness": {"zh": "健谈度", "en": "Talkativeness"},
    "cardfield.creator_notes": {"zh": "作者的话", "en": "Creator's notes"},
    "cardfield.tags": {"zh": "标签", "en": "Tags"},
    "cardfield.creator": {"zh": "作者", "en": "Created by"},
    "cardfield.character_version": {"zh": "版本", "en": "Character version"},
    # the preset's prompt manager (core/prompt/presets/manager.py, liyuan preset prompts)
    "prompts.not_found": {"zh": "预设「{preset}」里没有提示词「{ident}」", "en": "The preset “{preset}” has no prompt “{ident}”"},
    "prompts.not_listed": {"zh": "提示词「{ident}」不在顺序表里（先把它插入列表）",
                           "en": "The prompt “{ident}” is not in the prompt list (insert it first)"},
    "prompts.already_listed": {"zh": "提示词「{ident}」已经在顺序表里", "en": "The prompt “{ident}” is already in the list"},
    "prompts.no_toggle": {"zh": "「{name}」是扩展的占位符，不能开关（SillyTavern 也不允许）",
                          "en": "“{name}” is an extension's marker and cannot be switched on or off (SillyTavern does not allow it either)"},
    "prompts.marker_text": {"zh": "「{name}」是占位符（由角色卡、人设、世界书或对话历史填充），没有可编辑的文字",
                            "en": "“{name}” is a marker (filled from the card, persona, world info or chat history); it has no text to edit"},
    "prompts.marker_fixed": {"zh": "「{name}」是占位符，它的设置不能改（SillyTavern 也不允许）",
                             "en": "“{name}” is a marker whose settings cannot be changed (SillyTavern does not allow it either)"},
    "prompts.cannot_delete": {"zh": "「{name}」是内置提示词或占位符，不能删除（可以关闭它）",
                              "en": "“{name}” is a built-in prompt or a marker and cannot be deleted (switch it off instead)"},
    "prompts.bad_role": {"zh": "角色 {value} 不对：只能是 system、user 或 assistant",
                         "en": "Role {value} is wrong: it must be system, user or assistant"},
    "prompts.bad_position": {"zh": "位置 {value} 不对：只能是 relative（相对）或 in_chat（按深度插入）",
                             "en": "Position {value} is wrong: it must be relative or in_chat"},
    "prompts.bad_number": {"zh": "{key} 的值 {value} 不对：要是 {min} 到 {max} 之间的整数",
                           "en": "{key} = {value} is wrong: it must be a whole number from {min} to {max}"},
    "prompts.not_text": {"zh": "{what} 要是文字（不是 {type}）", "en": "{what} must be text (not {type})"},
    "prompts.too_long": {"zh": "{what} 太长：{n} 个字符，上限 {max}", "en": "{what} is too long: {n} characters, the limit is {max}"},
    "prompts.empty_name": {"zh": "预设需要名字", "en": "The preset needs a name"},
    "prompts.name_taken": {"zh": "预设库里已经有「{name}」（换个名字，或选择覆盖）",
                           "en": "The preset library already has “{name}” (choose another name, or overwrite it)"},
    "prompts.cli.saved": {"zh": "已保存预设「{name}」", "en": "Saved the preset “{name}”"},
    "prompts.cli.exported": {"zh": "已把预设「{name}」导出到 {path}", "en": "Exported the preset “{name}” to {path}"},
    "prompts.cli.added": {"zh": "已添加提示词「{name}」（{ident}）", "en": "Added the prompt “{name}” ({ident})"},
    "prompts.cli.default_order": {"zh": "（预设没有自己的 100001 顺序表：显示的是 SillyTavern 的默认顺序，改动时会写入）",
                                  "en": "(the preset has no 100001 list of its own: SillyTavern's default order is shown, and written on the first change)"},
    "prompts.cli.header": {"zh": "序号  开关  角色       位置            词元  名称（id）", "en": "#     on    role       position        tokens  name (id)"},
    "prompts.cli.unlisted": {"zh": "不在列表里的提示词：", "en": "Prompts not in the list:"},
    "prompts.cli.need_text": {"zh": "--edit 需要 --text-file、--role、--name、--position、--depth 或 --order 之一",
                              "en": "--edit needs one of --text-file, --role, --name, --position, --depth or --order"},
    "prompts.cli.bad_file": {"zh": "读不了 {path}：{error}", "en": "Cannot read {path}: {error}"},
    # quick replies (core/cards/quick_replies.py, liyuan qr)
    "qr.no_entry": {"zh": "快速回复集「{name}」里没有编号 {id} 的回复", "en": "The quick reply set “{name}” has no reply {id}"},
    "qr.not_text": {"zh": "{what} 要是文字（不是 {type}）", "en": "{what} must be text (not {type})"},
    "qr.too_long": {"zh": "{what} 太长：{n} 个字符，上限 {max}", "en": "{what} is too long: {n} characters, the limit is {max}"},
    "qr.bad_mode": {"zh": "方式 {value} 不对：只能是 send（直接发送）或 insert（放进输入框）",
                    "en": "Mode {value} is wrong: it must be send or insert"},
    "qr.not_object": {"zh": "{file}：不是 JSON 对象（是 {type}），不是快速回复集", "en": "{file}: not a JSON object (it is {type}); not a quick reply set"},
    "qr.not_a_set": {"zh": "{file}：不像 SillyTavern 的快速回复集（要有整数 version 和文字 name）",
                     "en": "{file}: does not look like a SillyTavern quick reply set (it needs an integer version and a text name)"},
    "qr.bad_list": {"zh": "{file}：回复列表不是数组（是 {type}），无法导入", "en": "{file}: the reply list is not an array (it is {type}); cannot import"},
    "qr.too_many": {"zh": "{file}：有 {n} 条回复，超过上限 {max}，没有导入", "en": "{file}: {n} replies, over the limit of {max}; not imported"},
    "qr.bad_field": {"zh": "{file}：字段 {loc} 不对（{error}）", "en": "{file}: the field {loc} is wrong ({error})"},
    "qr.not_utf8": {"zh": "{file}：不是 UTF-8 文本，不是快速回复集", "en": "{file}: not UTF-8 text; not a quick reply set"},
    "qr.bad_json": {"zh": "{file}：不是有效的 JSON（第 {line} 行：{error}）", "en": "{file}: not valid JSON (line {line}: {error})"},
    "qr.cannot_read": {"zh": "无法读取快速回复集 {file}：{error}", "en": "Cannot read the quick reply set {file}: {error}"},
    "qr.missing": {"zh": "快速回复库里没有「{name}」", "en": "The quick reply library has no “{name}”"},
    "qr.exists": {"zh": "快速回复库里已经有「{name}」（要替换请加 --replace）",
                  "en": "The quick reply library already has “{name}” (add --replace to replace it)"},
    "qr.choices_damaged": {"zh": "快速回复的启用设置 {file} 损坏，已改名为 .bad，按没有启用任何集打开",
                           "en": "The quick reply choices file {file} was damaged and renamed to .bad; no set is active"},
    "qr.v1": {"zh": "{file}：旧版（v1）快速回复，已转换", "en": "{file}: an old (v1) quick reply preset; converted"},
    "qr.entry_not_object": {"zh": "第 {i} 条回复不是对象，已跳过", "en": "Reply {i} is not an object; skipped"},
    "qr.entry_bad_field": {"zh": "第 {i} 条回复的 {key} 不是文字（是 {type}），已跳过",
                           "en": "Reply {i}: {key} is not text (it is {type}); skipped"},
    "qr.entry_too_long": {"zh": "第 {i} 条回复「{label}」太长（{n} 个字符，上限 {max}），已跳过",
                          "en": "Reply {i} “{label}” is too long ({n} characters, the limit is {max}); skipped"},
    "qr.entry_field_text": {"zh": "{key} 不是文字，已按文字保存", "en": "{key} was not text; kept as text"},
    "qr.entry_cut": {"zh": "{key} 太长，截到 {max} 个字符", "en": "{key} was too long; cut to {max} characters"},
    "qr.entry_id": {"zh": "编号 {old} 不能用（缺失、不是整数或重复），改为 {new}",
                    "en": "The id {old} cannot be used (missing, not a whole number or repeated); renumbered {new}"},
    "qr.script_command": {"zh": "以 / 开头，是 STscript 命令：梨园不运行脚本，按文字保留，点击时放进输入框而不直接发送",
                          "en": "Starts with /, an STscript command: Liyuan runs no scripts; kept as text, put into the input box instead of being sent"},
    "qr.script_pipe": {"zh": "含有 STscript 管道（| /命令）：梨园不运行脚本，按文字保留，点击时放进输入框而不直接发送",
                       "en": "Holds an STscript pipe (| /command): Liyuan runs no scripts; kept as text, put into the input box instead of being sent"},
    "qr.auto_exec": {"zh": "设了自动执行（{flags}）：梨园不自动执行快速回复", "en": "Set to run automatically ({flags}): Liyuan never runs quick replies by itself"},
    "qr.context_menu": {"zh": "带右键子菜单（contextList）：梨园不支持，已保留", "en": "Has a context menu (contextList): not supported in Liyuan; kept"},
    "qr.entry_note": {"zh": "{label}：{note}", "en": "{label}: {note}"},
    "qr.cli.imported": {"zh": "已导入快速回复集「{name}」（{n} 条）", "en": "Imported the quick reply set “{name}” ({n} replies)"},
    "qr.cli.deleted": {"zh": "已删除快速回复集「{name}」", "en": "Deleted the quick reply set “{name}”"},
    "qr.cli.empty": {"zh": "快速回复库是空的：liyuan qr import FILE", "en": "The quick reply library is empty: liyuan qr import FILE"},
    "qr.cli.active": {"zh": "启用中", "en": "active"},
    "qr.cli.set_line": {"zh": "「{name}」：{n} 条；{mode}", "en": "“{name}”: {n} replies; {mode}"},
    "qr.cli.mode_send": {"zh": "默认直接发送", "en": "sent by default"},
    "qr.cli.mode_insert": {"zh": "默认放进输入框（disableSend）", "en": "inserted by default (disableSend)"},
    "qr.cli.hidden": {"zh": "（隐藏）", "en": " (hidden)"},
    "qr.cli.script": {"zh": "（STscript，不运行）", "en": " (STscript, not run)"},
    # regex keys of a world book that are never matched (core/lore/keys.py Refused; Lorebook.warnings)
    "lorekey.unsafe": {"zh": "正则关键词 {key} 无法安全运行：{why}（JavaScript 引擎不可用）",
                       "en": "The regex key {key} cannot be run safely: {why} (the JavaScript engine is not available)"},
    "lorekey.unusable": {"zh": "正则关键词 {key} 无法使用：{why}（JavaScript 引擎不可用）",
                         "en": "The regex key {key} cannot be used: {why} (the JavaScript engine is not available)"},
    # what reading a SillyTavern settings.json took over (core/lore/settings.py from_st_settings)
    "wiset.st_not_int": {"zh": "{name} = {raw} 不是整数，保留 {kept}", "en": "{name} = {raw} is not an integer; kept {kept}"},
    "wiset.st_old_budget": {"zh": "{name} = {value} 大于 100（旧版的写法），按 SillyTavern 改为 25",
                            "en": "{name} = {value} is over 100 (the old way of writing it); changed to 25, as SillyTavern does"},
    "wiset.st_out_of_range": {"zh": "{name} = {raw} 超出范围，保留 {kept}", "en": "{name} = {raw} is out of range; kept {kept}"},
    "wiset.st_read": {"zh": "读入 {n} 项世界书设置：{items}", "en": "Read {n} world-info settings: {items}"},
    "wiset.st_global_books": {"zh": "SillyTavern 里全局启用的世界书（{books}）没有一起导入：把它们的 JSON 放进梨园数据文件夹的「世界书」文件夹即可全局启用",
                              "en": "The world books SillyTavern enables globally ({books}) were not imported with it: put "
                                    "their JSON files in the world books folder of Liyuan's data folder to enable them "
                                    "globally"},
    "wiset.st_unknown": {"zh": "这些设置梨园还不认识，已忽略：{names}", "en": "Settings Liyuan does not know yet, ignored: {names}"},
    # book and transcript export (core/story/export.py, core/chat/transcript_export.py; liyuan story export,
    # liyuan export-chat --format md|html)
    "export.bad_chapters": {"zh": "看不懂的章节范围「{spec}」：写成 1-3,5 这样",
                            "en": "Cannot read the chapter range “{spec}”: write it like 1-3,5"},
    "export.no_such_chapter": {"zh": "没有第 {numbers} 章（全书共 {total} 章）",
                               "en": "There is no chapter {numbers} (the book has {total})"},
    "export.no_chapters": {"zh": "没有可导出的章节（{dir} 里没有 .md 章节，或一章也没选）",
                           "en": "No chapter to export (no .md chapter in {dir}, or none chosen)"},
    "export.bad_cover": {"zh": "封面必须是 PNG 或 JPEG 图片（不超过 20 MB）：{path}",
                         "en": "The cover must be a PNG or JPEG image (at most 20 MB): {path}"},
    "export.words_too_big": {"zh": "屏蔽词表 {path} 超过 {max} MB，没有读取",
                             "en": "The word list {path} is over {max} MB; not read"},
    "export.flagged_refused": {"zh": "有 {n} 处屏蔽词（{words}），没有导出",
                               "en": "{n} flagged words found ({words}); nothing exported"},
    "export.flagged_hit": {"zh": "第 {chapter} 章「{title}」第 {line} 行：{word}（{context}）",
                           "en": "Chapter {chapter} “{title}”, line {line}: {word} ({context})"},
    "export.flagged_warned": {"zh": "注意：有 {n} 处屏蔽词，已照样导出",
                              "en": "Note: {n} flagged words found; exported all the same"},
    "export.chapters_written": {"zh": "已写出 {n} 章到 {dir}", "en": "Wrote {n} chapters to {dir}"},
    "export.bad_format": {"zh": "不认识的导出格式「{fmt}」（可用：{formats}）",
                          "en": "Unknown export format “{fmt}” (available: {formats})"},
    "export.need_output": {"zh": "需要 -o 输出文件，或 --per-chapter-dir 文件夹",
                           "en": "Give -o OUTPUT, or --per-chapter-dir FOLDER"},
    "export.no_chat": {"zh": "找不到对话「{chat}」", "en": "No chat “{chat}”"},
    "export.bad_language": {"zh": "看不懂的语言代码「{language}」：写成 zh、zh-Hans、en 这样",
                            "en": "Cannot read the language tag “{language}”: write it like zh, zh-Hans, en"},
    # issue 28: a new novel without a character card (core/chat/build.py create_novel, liyuan novel new)
    "novel.first_steps": {"zh": "新书建好了。先做三件事：① 在大纲里写下卷和章，每章一两句情节点；② 在设定里添上主要人物和地点"
                                "（描述、别名）；③ 对 agent 说「按大纲写第一章」，写好的章会挂到大纲的那一章下面。",
                          "en": "Your book is ready. First: ① write volumes and chapters in the outline, a beat or two "
                                "per chapter; ② add the main people and places to the codex (description, aliases); "
                                "③ tell the agent “write chapter 1 from the outline” — the chapter it writes is "
                                "linked to that outline entry."},
    "novel.created": {"zh": "已建新书《{title}》：{path}", "en": "Created the novel “{title}”: {path}"},
    "novel.bad_title": {"zh": "书名要是一行非空文字", "en": "The title must be one non-empty line"},
    "act.改名": {"zh": "改名", "en": "rename chapters"},
    "act.保存大纲": {"zh": "保存大纲", "en": "save the outline"},
    # issue 28: chapter links and the written codex (liyuan story link / codex)
    "story.linked": {"zh": "已把大纲第 {n} 章「{title}」（{id}）挂上 {file}",
                     "en": "Linked outline chapter {n} “{title}” ({id}) to {file}"},
    "story.unlinked": {"zh": "已取下 {file} 与大纲的链接", "en": "Unlinked {file} from the outline"},
    "story.not_linked": {"zh": "{file} 没有挂在大纲的哪一章下面", "en": "{file} is not linked to any outline chapter"},
    "codex.saved": {"zh": "名录已保存：{name}", "en": "Codex entry saved: {name}"},
    "codex.removed": {"zh": "已从名录删去：{name}", "en": "Removed from the codex: {name}"},
    "codex.not_found": {"zh": "名录里没有「{name}」：先 add", "en": "The codex has no “{name}”: add it first"},
    "codex.exists": {"zh": "名录里已经有「{name}」了：用 set 改它", "en": "The codex already has “{name}”: change it with set"},
    "codex.damaged": {"zh": "{file} 读不出来（不是有效的名录），没有覆盖它：先修好或移走它",
                      "en": "{file} cannot be read (not a valid codex); it was not overwritten: fix or move it first"},
    "codex.bad_kind": {"zh": "种类只能是 people/places/things/event/lore（人物/地点/物品/剧情线/设定），不是「{kind}」",
                       "en": "The kind must be people/places/things/event/lore, not “{kind}”"},
    "codex.bad_args": {"zh": "名录条目不对：{why}", "en": "Bad codex entry: {why}"},
    # TavernHelper script libraries in cards and presets (core/cards/th_scripts.py, cli/card_scripts.py)
    "th.not_list": {"zh": "{where}：酒馆助手脚本列表不是数组（是 {kind}），已忽略",
                    "en": "{where}: the TavernHelper script list is not an array (it is {kind}); ignored"},
    "th.bad_item": {"zh": "{where}：酒馆助手脚本第 {item} 项不是对象（是 {kind}），已跳过",
                    "en": "{where}: TavernHelper script item {item} is not an object (it is {kind}); skipped"},
    "th.bad_type": {"zh": "{where}：酒馆助手脚本第 {item} 项的类型「{kind}」不认识，已跳过",
                    "en": "{where}: TavernHelper script item {item} has an unknown type “{kind}”; skipped"},
    "th.bad_field": {"zh": "{where}：脚本「{item}」的 {field} 类型不对（是 {kind}），按默认值读取",
                     "en": "{where}: the {field} of script “{item}” has the wrong type ({kind}); read as the default"},
    "th.too_deep": {"zh": "{where}：脚本文件夹「{item}」嵌套超过 {max} 层，已跳过",
                    "en": "{where}: script folder “{item}” nests more than {max} levels deep; skipped"},
    "th.nested_folder": {"zh": "{where}：脚本文件夹「{item}」在另一个文件夹里（酒馆助手只有一层文件夹），照样读取",
                         "en": "{where}: script folder “{item}” sits inside another folder (TavernHelper has one level); "
                               "read anyway"},
    "th.too_big": {"zh": "{where}：脚本「{item}」有 {size} KB，超过上限 {max} KB，只列出、不运行",
                   "en": "{where}: script “{item}” is {size} KB, over the limit of {max} KB; listed, never run"},
    "th.too_many": {"zh": "{where}：酒馆助手脚本超过 {max} 个，其余 {dropped} 个没有读取",
                    "en": "{where}: more than {max} TavernHelper scripts; the other {dropped} were not read"},
    "th.bad_root": {"zh": "{where}：tavern_helper 不是对象（是 {kind}），脚本库按空的读取",
                    "en": "{where}: tavern_helper is not an object (it is {kind}); the script library reads as empty"},
    "th.bad_variables": {"zh": "{where}：酒馆助手变量不是对象（是 {kind}），已忽略",
                         "en": "{where}: the TavernHelper variables are not an object (it is {kind}); ignored"},
    "th.duplicate_id": {"zh": "{where}：两个脚本的 id 都是「{id}」，后一个改名加了编号",
                        "en": "{where}: two scripts share the id “{id}”; the later one got a number added"},
    "th.unknown_script": {"zh": "没有 id 为「{id}」的脚本", "en": "No script has the id “{id}”"},
    "th.kind.mvu_loader": {"zh": "MVU 加载器（不运行：变量由场记按 MVU 规则更新）",
                           "en": "MVU loader (not run: the scribe updates the variables by MVU's rules)"},
    "th.kind.era_framework": {"zh": "ERA 变量框架（变量指令由账本执行）",
                              "en": "ERA variable framework (its variable commands are applied by the ledger)"},
    "th.kind.plain": {"zh": "脚本", "en": "script"},
    "th.allowed": {"zh": "已允许运行", "en": "allowed to run"},
    "th.not_asked": {"zh": "未允许运行（还没问过）", "en": "not allowed to run (not asked yet)"},
    "th.refused": {"zh": "未允许运行（用户拒绝过）", "en": "not allowed to run (the user said no)"},
    "th.none": {"zh": "{name}：没有酒馆助手脚本", "en": "{name}: no TavernHelper scripts"},
    "th.header": {"zh": "{name}：{n} 个酒馆助手脚本，{allowed}", "en": "{name}: {n} TavernHelper scripts, {allowed}"},
    "th.line.on": {"zh": "开", "en": "on"},
    "th.line.off": {"zh": "关", "en": "off"},
    "th.line.folder": {"zh": "文件夹：{folder}", "en": "folder: {folder}"},
    "th.line.buttons": {"zh": "按钮：{names}", "en": "buttons: {names}"},
    "th.line.imports": {"zh": "加载：{urls}", "en": "imports: {urls}"},
    "th.line.runs": {"zh": "会运行", "en": "runs"},
    "th.line.switched": {"zh": "（用户切换过）", "en": " (switched by the user)"},
    "th.saved": {"zh": "已记下：{what}", "en": "Recorded: {what}"},
    "th.no_preset": {"zh": "预设库里没有「{name}」", "en": "The preset library has no “{name}”"},
    # --- webnovel (issue 28: norms, 日更 streak, 存稿) ---
    "webnovel.help": {"zh": "网文：章节字数规范、日更目标与连更天数、存稿；--publish/--unpublish 标记已发布的章节",
                      "en": "Web novel: chapter length norm, daily target and streak, buffer; --publish/--unpublish "
                            "mark chapters published", "match": "no"},
    "webnovel.norm": {"zh": "章节字数规范：{min}–{max} 字", "en": "Chapter length norm: {min}–{max} words"},
    "webnovel.norm.none": {"zh": "章节字数规范：不限", "en": "Chapter length norm: none"},
    "webnovel.daily": {"zh": "今日 {today}/{target} 字 · 连更 {streak} 天（最长 {best} 天）",
                       "en": "Today {today}/{target} words · streak {streak} days (best {best})"},
    "webnovel.daily.none": {"zh": "今日 {today} 字 · 连续写作 {streak} 天（最长 {best} 天）；未设日更目标",
                            "en": "Today {today} words · writing {streak} days in a row (best {best}); no daily target"},
    "webnovel.buffer": {"zh": "存稿 {n} 章（{words} 字）· 已发布 {published} 章",
                        "en": "Buffer {n} chapters ({words} words) · published {published}"},
    "webnovel.short": {"zh": "偏短：{titles}", "en": "Too short: {titles}"},
    "webnovel.long": {"zh": "偏长：{titles}", "en": "Too long: {titles}"},
    "webnovel.saved": {"zh": "已保存网文设置", "en": "Web-novel settings saved"},
    "webnovel.bad_norm": {"zh": "每章至少 {min} 字，却至多 {max} 字：下限不能高于上限",
                          "en": "At least {min} and at most {max} words a chapter: the lower bound is above the upper"},
    "webnovel.negative": {"zh": "字数不能是负数", "en": "Word counts cannot be negative"},
    "webnovel.not_chapter": {"zh": "「{file}」不是这本书的章节", "en": "“{file}” is not a chapter of this book"},
    "webnovel.opt.min": {"zh": "章节字数下限（0 = 不限）", "en": "chapter norm: fewest words (0 = none)", "match": "no"},
    "webnovel.opt.max": {"zh": "章节字数上限（0 = 不限）", "en": "chapter norm: most words (0 = none)", "match": "no"},
    "webnovel.opt.daily": {"zh": "日更目标字数（0 = 不设）", "en": "daily target in words (0 = none)", "match": "no"},
    "webnovel.opt.publish": {"zh": "把一章（正文文件名）标记为已发布", "en": "mark a chapter file published", "match": "no"},
    "webnovel.opt.unpublish": {"zh": "取消已发布（回到存稿）", "en": "mark it unpublished (back to the buffer)", "match": "no"},

    # --- rewrite a selection (issue 28) ---
    "rewrite.bad_mode": {"zh": "不认识的改写方式「{mode}」（rewrite / expand / condense）",
                         "en": "Unknown way to rewrite “{mode}” (rewrite / expand / condense)"},
    "rewrite.bad_range": {"zh": "选区不在这一章里（章节可能刚改过，请重新选）",
                          "en": "The selection is not inside this chapter (it may have just changed: select again)"},
    "rewrite.empty": {"zh": "先选中要改写的一段", "en": "Select the passage to rewrite first"},
    "rewrite.too_long": {"zh": "一次最多改写 {n} 字，请选短一些", "en": "At most {n} characters at a time: select less"},
    "rewrite.failed": {"zh": "改写调用失败：{error}", "en": "The rewrite call failed: {error}"},
    "rewrite.nothing": {"zh": "模型没有给出新的一段", "en": "The model gave no new passage"},
    "rewrite.conflict": {"zh": "「{file}」在这段位置上的文字已经变了，没有写入；请重新选中再改写",
                         "en": "“{file}” no longer has that text at that place; nothing was written — select it "
                               "again and rewrite"},
    "rewrite.no_chapter": {"zh": "没有「{file}」这一章", "en": "There is no chapter “{file}”"},
    "rewrite.not_text": {"zh": "「{file}」不是 UTF-8 文本", "en": "“{file}” is not UTF-8 text"},
    # --- chapter summaries (issue 28) ---
    "chsum.failed": {"zh": "「{file}」的章节摘要没做成：{error}", "en": "No summary for “{file}”: {error}"},
    "chsum.empty": {"zh": "「{file}」：模型没有给出摘要", "en": "“{file}”: the model gave no summary"},
    "chsum.unreadable": {"zh": "「{file}」读写不了：{error}", "en": "“{file}” cannot be read or written: {error}"},
    "chsum.help": {"zh": "章节摘要：每章的要点与是否过时；--make 让模型补做，--set 写自己的",
                   "en": "Chapter summaries: each chapter's gist and whether it is stale; --make has the model write "
                         "them, --set stores your own", "match": "no"},
    "chsum.opt.make": {"zh": "让模型为缺摘要或摘要过时的章节做摘要", "en": "have the model summarise the stale chapters", "match": "no"},
    "chsum.opt.chapter": {"zh": "只做这一章（可多次）", "en": "only this chapter (repeatable)", "match": "no"},
    "chsum.opt.set": {"zh": "写这一章的摘要（配合 --text）", "en": "store this chapter's summary (with --text)", "match": "no"},
    "chsum.opt.text": {"zh": "摘要文字（空 = 删去）", "en": "the summary (empty = remove it)", "match": "no"},
    "chsum.opt.provider": {"zh": "服务商名（默认：设置里当前使用的）", "en": "provider name (default: the active one)", "match": "no"},
    "chsum.opt.model": {"zh": "模型名；replay:FILE 播放录好的回答", "en": "model name; replay:FILE plays recorded answers", "match": "no"},
    "chsum.opt.base_url": {"zh": "服务商地址（覆盖设置）", "en": "the provider's URL (overrides the settings)", "match": "no"},
    "chsum.stale": {"zh": "（过时）", "en": " (stale)"},
    "chsum.none": {"zh": "（还没有摘要）", "en": "(no summary yet)"},
    "chsum.made": {"zh": "已为 {n} 章做了摘要：{files}", "en": "Summarised {n} chapters: {files}"},
    # --- x30small ---
    "agent.scribe_skipped_chapter": {"zh": "场记没有读到章节 {name}：{error}",
                                     "en": "The scribe could not read the chapter {name}: {error}"},
    "cli.say_next": {"zh": "这一拍失败了，接着发下一句 --say（还剩 {n} 句）",
                     "en": "This beat failed; going on with the next --say ({n} left)"},
    "cli.say_stop": {"zh": "这一拍失败了（{error}），下一拍也会同样失败：剩下的 {n} 句 --say 没有发送",
                     "en": "This beat failed ({error}) and the next one would fail the same way: the remaining {n} "
                           "--say lines were not sent"},
    "beat.cut.echo": {"zh": "回复两次都照抄了已有的内容（开场、之前的回复或设定），没有收笔：请点「重新生成」，或换一个更大的模型",
                      "en": "The reply copied existing text twice (the opening, an earlier reply or the lore), so it was not "
                            "sealed: press Regenerate, or use a larger model"},
    "beat.lore_retry": {"zh": "回复没有用上世界书里你问到的设定（另编了）：已提示模型照设定重写一次",
                        "en": "The reply did not use what the world book says about what you asked (it made something "
                              "up): the model was asked once to rewrite it from the book"},
    "beat.echo_retry.opening": {"zh": "回复照抄了开场，没有收笔：已提示模型重写，并调高温度重试一次",
                                "en": "The reply copied the opening and was not sealed: the model was asked to rewrite "
                                      "and tried once more at a higher temperature"},
    "beat.echo_retry.previous": {"zh": "回复照抄了之前的回复，没有收笔：已提示模型重写，并调高温度重试一次",
                                 "en": "The reply copied an earlier reply and was not sealed: the model was asked to "
                                       "rewrite and tried once more at a higher temperature"},
    "beat.echo_retry.data": {"zh": "回复照抄了提示里的设定和数据，没有收笔：已提示模型重写，并调高温度重试一次",
                             "en": "The reply copied the lore and data blocks of the prompt and was not sealed: the "
                                   "model was asked to rewrite and tried once more at a higher temperature"},
    "beat.echo_gave_up.opening": {"zh": "回复又一次照抄了开场：本拍没有收笔，照抄的文字没有收进稿子。请点「重新生成」，或换一个更大的模型。",
                                  "en": "The reply copied the opening again: this beat is not sealed and the copy was "
                                        "not kept. Press Regenerate, or use a larger model."},
    "beat.echo_gave_up.previous": {"zh": "回复又一次照抄了之前的回复：本拍没有收笔，照抄的文字没有收进稿子。请点「重新生成」，或换一个更大的模型。",
                                   "en": "The reply copied an earlier reply again: this beat is not sealed and the copy "
                                         "was not kept. Press Regenerate, or use a larger model."},
    "beat.echo_gave_up.data": {"zh": "回复又一次照抄了提示里的设定和数据：本拍没有收笔，照抄的文字没有收进稿子。请点「重新生成」，或换一个更大的模型。",
                               "en": "The reply copied the lore and data blocks again: this beat is not sealed and the "
                                     "copy was not kept. Press Regenerate, or use a larger model."},
    # --- x31group ---
    "group.why.named": {"zh": "{name} 发言：上一条消息里提到了 {name}（自然顺序）",
                        "en": "{name} speaks: the last message names {name} (natural order)"},
    "group.why.talkative": {"zh": "{name} 发言：健谈度 {t} ≥ 掷骰 {roll}（自然顺序）",
                            "en": "{name} speaks: talkativeness {t} ≥ roll {roll} (natural order)"},
    "group.why.random": {"zh": "{name} 发言：没有人被提到或掷中，随机选中（自然顺序）",
                         "en": "{name} speaks: nobody was named or rolled, picked at random (natural order)"},
    "group.why.list": {"zh": "{name} 发言：按列表顺序轮到 {name}", "en": "{name} speaks: their turn in list order"},
    "group.why.pooled": {"zh": "{name} 发言：在发言最少的成员里随机选中（已发言 {n} 次）",
                         "en": "{name} speaks: picked among the members who spoke least ({n} replies so far)"},
    "group.why.chosen": {"zh": "{name} 发言：由你指定", "en": "{name} speaks: you chose them"},
    "group.why.manual": {"zh": "手动模式：请指定由哪位成员发言",
                         "en": "Manual mode: choose which member speaks"},
    "group.why.nobody": {"zh": "没有可以发言的成员（都被静音了，或群组是空的）",
                         "en": "No member can speak (all are muted, or the group is empty)"},
    "group.unknown_member": {"zh": "「{name}」不是群组「{group}」的成员",
                             "en": "“{name}” is not a member of the group “{group}”"},
    "group.no_cards": {"zh": "群组「{name}」的成员都不在卡库里", "en": "None of the group “{name}”'s members is in the card library"},
    "group.not_found": {"zh": "没有名为「{name}」的群组", "en": "There is no group named “{name}”"},
    "group.member_missing": {"zh": "群组成员「{name}」的角色卡不在卡库里",
                             "en": "The group member “{name}” has no card in the library"},
    "group.strategy.natural": {"zh": "自然顺序", "en": "natural order"},
    "group.strategy.list": {"zh": "列表顺序", "en": "list order"},
    "group.strategy.pooled": {"zh": "发言最少者优先", "en": "pooled (who spoke least)"},
    "group.strategy.manual": {"zh": "手动", "en": "manual"},
    "group.cli.created": {"zh": "已保存群组「{name}」（{n} 位成员）", "en": "Saved the group “{name}” ({n} members)"},
    "group.cli.exists": {"zh": "已有名为「{name}」的群组", "en": "A group named “{name}” exists already"},
    "group.cli.header": {"zh": "群组「{name}」：{strategy}，角色卡字段 {join}",
                         "en": "Group “{name}”: {strategy}, card fields {join}"},
    "group.cli.muted": {"zh": "（静音）", "en": " (muted)"},
    "group.cli.no_card": {"zh": "（角色卡不在卡库里）", "en": "(card not in the library)"},
    "group.cli.chats": {"zh": "对话 {n} 个：{names}", "en": "{n} chats: {names}"},
    "group.cli.none": {"zh": "还没有群组（liyuan group create 名字 --member 卡 …）",
                       "en": "No groups yet (liyuan group create NAME --member CARD …)"},
    "group.cli.need_yes": {"zh": "删除群组「{name}」会连同它的对话一起永久删除：确认请加 --yes",
                           "en": "Deleting the group “{name}” removes its chats for good: add --yes to confirm"},
    "group.cli.deleted": {"zh": "已删除群组「{name}」", "en": "Deleted the group “{name}”"},
    "group.cli.usage": {"zh": "用法：liyuan group create|list|show|delete|import-st|export-st …",
                        "en": "Usage: liyuan group create|list|show|delete|import-st|export-st …"},
    # --- reply is the chapter (issue 30 §5) ---
    "agent.reply_chapter.written": {"zh": "回复已写入 {name}", "en": "The reply was written to {name}"},
    "agent.reply_chapter.empty": {"zh": "模型没有写出正文，{name} 没有改动", "en": "The model wrote no text; {name} is unchanged"},
    "agent.reply_chapter.failed": {"zh": "没能写入 {name}：{error}", "en": "Could not write {name}: {error}"},
    # --- x33ledger ---
    "act.撤回账本改动": {"zh": "撤回账本改动", "en": "revert a ledger change"},
    "act.改账本的值": {"zh": "改账本的值", "en": "set a ledger value"},
    "act.改角色卡": {"zh": "改角色卡", "en": "change the card"},
    "ledger.history.nothing": {"zh": "第 {beat} 拍没有改动 {path}", "en": "Beat {beat} changed nothing at {path}"},
    "ledger.history.any": {"zh": "（任何路径）", "en": "(any path)"},
    "ledger.history.no_beat": {"zh": "当前分支上没有第 {beat} 拍", "en": "The shown branch has no beat {beat}"},
    "ledger.who.scribe": {"zh": "场记", "en": "scribe"},
    "ledger.who.bar": {"zh": "状态栏", "en": "status bar"},
    "ledger.who.user": {"zh": "你", "en": "you"},
    "ledger.who.script": {"zh": "卡的初始值", "en": "card's initial values"},
    "ledger.beat.title": {"zh": "第 {beat} 拍 {text}", "en": "Beat {beat} {text}"},
    "ledger.beat.opening": {"zh": "开场", "en": "Opening"},
    "ledger.history.empty": {"zh": "这条分支上的账本还没有改动。", "en": "The ledger has no changes on this branch yet."},
    "cli.ledger.plan": {"zh": "撤回第 {beat} 拍的改动（{n} 处）：", "en": "Reverting beat {beat}'s changes ({n}):"},
    "cli.ledger.conflicts": {"zh": "之后的拍也改过这些路径（撤回会覆盖它们）：",
                             "en": "Later beats changed these paths too (the revert overwrites them):"},
    "cli.ledger.ask_yes": {"zh": "没有写入。加 --yes 才会撤回（一条新的账本快照，可用 liyuan branches --undo 撤销）。",
                           "en": "Nothing written. Add --yes to revert (a new ledger snapshot; liyuan branches --undo undoes it)."},
    "cli.ledger.done": {"zh": "已撤回：账本多了一条你的快照（liyuan branches --undo 可撤销）。",
                        "en": "Reverted: the ledger has a new snapshot from you (liyuan branches --undo undoes it)."},
    "ledger.set.bad_path": {"zh": "账本里没有可以改的路径 {path}（账本字段如 time、characters.名字.affinity，变量以 vars. 开头）",
                            "en": "No ledger path {path} to set (ledger fields like time or characters.NAME.affinity; "
                                  "variables start with vars.)"},
    "cli.ledger.bad_beat": {"zh": "拍号要是整数（收到「{beat}」）", "en": "BEAT must be a whole number (got “{beat}”)"},
    # --- x32english ---
    # default names per language (issue 32): new chats, demo chats, a duplicate, a role-play chat made a novel
    # ("match": "no": never a pattern for texts that lost their key — a chat's name is data once it is given)
    "name.chat": {"zh": "对话-{stamp}", "en": "Chat-{stamp}", "match": "no"},
    "name.demo": {"zh": "演示-{stamp}", "en": "Demo-{stamp}", "match": "no"},
    "name.copy": {"zh": "{name} 的副本", "en": "{name} copy", "match": "no"},
    "name.novel": {"zh": "{name}-长篇", "en": "{name}-novel", "match": "no"},
    "name.novel_default": {"zh": "对话", "en": "Chat"},
    # the user's label when no persona name is set (the conversation, exported transcripts and .jsonl)
    "name.you": {"zh": "你", "en": "You"},
    # sampling fields (core/llm/sampling.py field_label): one language each
    "sampling.temperature": {"zh": "温度", "en": "Temperature"},
    "sampling.top_p": {"zh": "top_p", "en": "Top P"},
    "sampling.top_k": {"zh": "top_k", "en": "Top K"},
    "sampling.min_p": {"zh": "min_p", "en": "Min P"},
    "sampling.top_a": {"zh": "top_a", "en": "Top A"},
    "sampling.frequency_penalty": {"zh": "频率惩罚", "en": "Frequency penalty"},
    "sampling.presence_penalty": {"zh": "存在惩罚", "en": "Presence penalty"},
    "sampling.repetition_penalty": {"zh": "重复惩罚", "en": "Repetition penalty"},
    "sampling.dry_multiplier": {"zh": "DRY 强度", "en": "DRY multiplier"},
    "sampling.dry_base": {"zh": "DRY 底数", "en": "DRY base"},
    "sampling.dry_allowed_length": {"zh": "DRY 允许长度", "en": "DRY allowed length"},
    "sampling.dry_penalty_last_n": {"zh": "DRY 回看词元数", "en": "DRY penalty range"},
    "sampling.max_tokens": {"zh": "回复上限", "en": "Max response tokens"},
    "sampling.seed": {"zh": "种子", "en": "Seed"},
    "sampling.stop": {"zh": "停止词", "en": "Stop strings"},
    "sampling.reasoning_effort": {"zh": "思考力度", "en": "Reasoning effort"},
    "sampling.stream": {"zh": "流式输出", "en": "Streaming"},
    "sampling.not_accepted": {"zh": "{field}（{name}）：{kind} 不接受这个参数，没有发送",
                              "en": "{field} ({name}): {kind} does not accept this parameter; not sent"},
    "sampling.stop_limit": {"zh": "{field}（{name}）：{kind} 最多接受 {limit} 个，只发送前 {limit} 个",
                            "en": "{field} ({name}): {kind} accepts at most {limit}; only the first {limit} are sent"},
    "sampling.out_of_range": {"zh": "{field}（{name}）= {value} 超出接口允许的范围，没有使用",
                              "en": "{field} ({name}) = {value} is outside the range the API allows; not used"},
    "sampling.effort_unknown": {"zh": "{field}（{name}）「{value}」不认识，没有使用",
                                "en": "{field} ({name}) “{value}” is not known; not used"},
    # the preset report (core/prompt/presets/store.py PresetReport.text)
    "preset.report.repairs": {"zh": "导入时修复：", "en": "Repaired on import:"},
    "preset.report.sampling": {"zh": "采样参数：", "en": "Sampling:"},
    "preset.report.no_sampling": {"zh": "采样参数：（预设没有设置，用服务商的默认值）",
                                  "en": "Sampling: (the preset sets none; the provider's defaults apply)"},
    # beat notices that had no key (core/beat/loop.py, core/chat/agent.py); carried as Msg in the events
    "beat.text_calls": {"zh": "回复把工具调用写成了文字（{names}），已按工具调用执行",
                        "en": "The reply wrote its tool calls as text ({names}); they were run as tool calls"},
    "beat.tool_surrogate": {"zh": "{name}：模型输出里有不成对的 UTF-16 代理字符（半个表情等），已替换为 �",
                            "en": "{name}: the model's output had unpaired UTF-16 surrogates (half an emoji…); "
                                  "replaced with �"},
    "agent.no_edits": {"zh": "这一轮没有改动任何文件", "en": "No files were changed this turn"},
    # the window's start (app.py main) before any window exists
    "app.no_display": {"zh": "liyuan: 这里没有图形界面（DISPLAY 未设置）；要看窗口请在桌面环境里运行。",
                       "en": "liyuan: there is no graphical display here (DISPLAY is not set); run it on a desktop to "
                             "see the window."},
    "app.no_display_demo": {"zh": "liyuan: 这里没有图形界面（DISPLAY 未设置），改在终端里演示；要看窗口请在桌面环境里运行。",
                            "en": "liyuan: there is no graphical display here (DISPLAY is not set), so the demo plays "
                                  "in the terminal; run it on a desktop to see the window."},
    # --- connection errors and "no model" (issue 32: said by key) ---
    "llm.tried": {"zh": "已重试 {n} 次。", "en": "Retried {n} times. "},
    "llm.read_timeout": {"zh": "等待模型响应超时（{seconds} 秒内没有收到数据）：服务器可能过载或模型还在加载，请稍后再试。({detail})",
                         "en": "The model did not answer in time (nothing received in {seconds} s): the server may be "
                               "busy or still loading the model; try again later. ({detail})"},
    "llm.connect_timeout": {"zh": "连接模型服务器超时（{seconds} 秒）：{host} 连不上，请检查网络、代理和 base URL。{tried}({detail})",
                            "en": "Connecting to the model server timed out ({seconds} s): {host} cannot be reached; "
                                  "check the network, the proxy and the base URL. {tried}({detail})"},
    "llm.cannot_connect": {"zh": "无法连接模型服务器 {host}：请检查网络或代理设置、base URL 是否正确；本地模型（Ollama / LM Studio）"
                                 "要先启动服务。{tried}({detail})",
                           "en": "Cannot connect to the model server {host}: check the network or proxy settings and "
                                 "the base URL; a local model (Ollama / LM Studio) must be started first. {tried}({detail})"},
    "cli.no_model": {"zh": "没有配置模型：用 --provider 指定服务商（如 deepseek、openai、ollama），或 --model replay:FILE，或 --demo",
                     "en": "No model is configured: name a provider with --provider (e.g. deepseek, openai, ollama), or "
                           "use --model replay:FILE, or --demo"},
    "cli.no_model.review": {"zh": "没有配置模型：用 --provider 指定服务商，或 --local 只做本地检查",
                            "en": "No model is configured: name a provider with --provider, or use --local for the "
                                  "local checks only"},
    # --- z31auto ---
    "group.why.auto_random": {"zh": "{name} 发言：手动模式下自动续聊，随机选中",
                              "en": "{name} speaks: auto-mode in manual order, picked at random"},
    "group.nudge": {"zh": "（轮到{name}发言）", "en": "({name}'s turn)"},
    "group.auto.none": {"zh": "没有可以接着发言的成员", "en": "No member can go on"},
    "group.auto.done": {"zh": "自动续聊结束：演了 {n} 轮（上限 {limit}）",
                        "en": "Auto-mode ended: {n} turns played (limit {limit})"},
    "group.auto.stopped": {"zh": "自动续聊已停止：演了 {n} 轮", "en": "Auto-mode stopped (turns played: {n})"},
    # --- z33books ---
    # library world books replaced while chats use them (core/chat/book_update.py; the beat's activity list, the CLI)
    "book_update.taken": {"zh": "世界书「{name}」已更新，这一拍起用新版。",
                          "en": "The world book “{name}” was updated; this beat uses the new version."},
    "book_update.none": {"zh": "这个对话用的书库世界书都没有更新。",
                         "en": "No library world book this chat uses was updated."},
    "book_update.line": {"zh": "世界书「{name}」：{what}{prefix}",
                         "en": "World book “{name}”: {what}{prefix}"},
    "book_update.counts": {"zh": "条目 {entries} 条、设置 {settings} 处", "en": "entries: {entries}, settings: {settings}"},
    "book_update.prefix": {"zh": "（含常驻条目：提示词缓存的前缀会变一次）",
                           "en": " (constant entries: the prompt's cached prefix changes once)"},
    "book_update.used": {"zh": "世界书「{name}」下一拍起用新版（旧版留作检查点，可撤销）。",
                         "en": "The world book “{name}” is used in its new version from the next beat (the old one is "
                               "kept as a checkpoint; undo returns to it)."},
    "book_update.kept": {"zh": "这个对话继续用世界书「{name}」的旧版（书再更新时会再问）。",
                         "en": "This chat keeps the old version of the world book “{name}” (a later update asks again)."},
    "book_update.picked": {"zh": "世界书「{name}」：下一拍起用勾选的 {n} 处改动，其余保持旧版。",
                           "en": "World book “{name}”: the {n} checked change(s) are used from the next beat; the rest "
                                 "stays as it was."},
    "book_update.undone": {"zh": "世界书「{name}」回到了上一个版本。", "en": "The world book “{name}” is back to its previous version."},
    "book_update.no_such": {"zh": "没有世界书「{name}」的更新。", "en": "There is no update of the world book “{name}”."},
    "book_update.no_picks": {"zh": "--pick 要和 --entries 一起用（条目键，逗号分隔；settings 表示设置）。",
                             "en": "--pick needs --entries (entry keys, comma-separated; settings for the settings)."},
    "book_update.no_book": {"zh": "书库里没有世界书「{name}」。", "en": "The library has no world book “{name}”."},
    "book_update.would_replace": {"zh": "会用「{file}」替换书库里的世界书「{name}」（旧版留在历史版本里）。加 --yes 才会替换。",
                                  "en": "Would replace the library's world book “{name}” by “{file}” (the old version is "
                                        "kept). Add --yes to replace it."},
    "book_update.replaced": {"zh": "已替换书库里的世界书「{name}」：{path}。用它的对话会收到改动提示。",
                             "en": "Replaced the library's world book “{name}”: {path}. Chats that use it are shown what "
                                   "changed."},
    # `liyuan book` help (cli/book.py)
    "cli.help.book.0": {"zh": "书库世界书的更新：对话里看改动、用新版或保留旧版", "en": "library world-book updates: "
                        "see what changed in a chat, use the new version or keep the old"},
    "cli.help.book.1": {"zh": "列出对话所用书库世界书的改动，或回答某本书的更新",
                        "en": "list the changes of the library books a chat reads, or answer a book's update"},
    "cli.help.book.2": {"zh": "对话文件夹，或 卡名/对话名", "en": "a chat folder, or card/chat"},
    "cli.help.book.3": {"zh": "输出 JSON", "en": "print JSON"},
    "cli.help.book.4": {"zh": "这本书下一拍起用新版（旧版留作检查点，--undo 可回）",
                        "en": "use this book's new version from the next beat (the old one is kept; --undo returns)"},
    "cli.help.book.5": {"zh": "这个对话继续用这本书的旧版", "en": "this chat keeps the old version of this book"},
    "cli.help.book.6": {"zh": "只取这本书的部分改动（配合 --entries）", "en": "take only some changes of this book (with --entries)"},
    "cli.help.book.7": {"zh": "这本书回到上一个版本", "en": "this book goes back to its previous version"},
    "cli.help.book.8": {"zh": "要取的条目键，逗号分隔；settings 表示书的设置",
                        "en": "the entry keys to take, comma-separated; settings for the book's settings"},
    "cli.help.book.9": {"zh": "用文件替换书库里的一本世界书", "en": "replace a library world book by a file"},
    "cli.help.book.10": {"zh": "书库里的世界书名（文件名，不含 .json）", "en": "the library book's name (file name without .json)"},
    "cli.help.book.11": {"zh": "新版本的世界书文件（SillyTavern World Info JSON）",
                         "en": "the new version's file (SillyTavern World Info JSON)"},
    "cli.help.book.12": {"zh": "真的替换（不加只说会做什么）", "en": "really replace it (without: only say what it would do)"},
    # --- z31bars ---
    "group.cli.vars.shared": {"zh": "  变量：全组共用一份", "en": "  Variables: one set shared by the group"},
    "group.cli.vars.per_card": {"zh": "  变量：每张卡各有各的", "en": "  Variables: each card keeps its own"},
    # --- z32engine --- (issue 32 §1: engine lines carried by key end to end; never matched back from text)
    "tool.outline.all": {"zh": "大纲", "en": "outline", "match": "no"},
    # a refused tool call's activity line (core/beat/loop.py): in Chinese the reason the model was told, in English
    # what the refusal code means (``{message:.0}`` keeps the placeholder and prints nothing: the model's reason
    # is in the card's language, not the reader's)
    "tool.failed": {"zh": "失败", "en": "failed", "match": "no"},
    "tool.refused": {"zh": "{message}{code:.0}", "en": "refused ({code}){message:.0}; the model was told why", "match": "no"},
    "tool.refused.stopped": {"zh": "{message}", "en": "not run{message:.0}: the user stopped this beat", "match": "no"},
    "tool.refused.beat_ended": {"zh": "{message}", "en": "not run{message:.0}: the beat had already ended (sealed, "
                                "or the previous reply revised)", "match": "no"},
    "tool.refused.unknown_tool": {"zh": "{message}", "en": "no such tool{message:.0}; the model was told which it "
                                  "has", "match": "no"},
    "tool.refused.echo": {"zh": "{message}", "en": "not sealed{message:.0}: the draft repeats the prompt's data; "
                          "the model was asked to rewrite it", "match": "no"},
    "tool.refused.bad_args": {"zh": "{message}", "en": "refused{message:.0}: the arguments were not valid; the model "
                              "was told why", "match": "no"},
    "tool.refused.not_found": {"zh": "{message}", "en": "refused{message:.0}: what it named was not found; the model "
                               "was told why", "match": "no"},
    "tool.refused.not_unique": {"zh": "{message}", "en": "refused{message:.0}: the text to replace occurs more than "
                                "once; the model was told why", "match": "no"},
    "tool.refused.stale_version": {"zh": "{message}", "en": "refused{message:.0}: the draft changed since the model "
                                   "read it; it was given the new version", "match": "no"},
    "tool.refused.too_large": {"zh": "{message}", "en": "refused{message:.0}: too large; the model was told the "
                               "limit", "match": "no"},
    "tool.refused.no_change": {"zh": "{message}", "en": "nothing changed{message:.0}; the model was told why",
                               "match": "no"},
    "tool.refused.unavailable": {"zh": "{message}", "en": "not available in this chat{message:.0}", "match": "no"},
    "tool.refused.sealed": {"zh": "{message}", "en": "refused{message:.0}: the draft is already sealed",
                            "match": "no"},
    "tool.refused.empty_draft": {"zh": "{message}", "en": "refused{message:.0}: the draft is empty", "match": "no"},
    # the scribe's patch (core/ledger/state.py apply_patch): the applied lines and warnings as the seed words them
    # (the session, the golden runs and the scribe's next prompt keep the Chinese text byte for byte)
    "led.patch.time": {"zh": "time → {v}", "en": "time → {v}", "match": "no"},
    "led.patch.location": {"zh": "location → {v}", "en": "location → {v}", "match": "no"},
    "led.patch.char": {"zh": "characters.{name} 已更新", "en": "characters.{name} updated", "match": "no"},
    "led.patch.inventory": {"zh": "inventory → [{v}]", "en": "inventory → [{v}]", "match": "no"},
    "led.patch.plot_threads": {"zh": "plot_threads → [{v}]", "en": "plot_threads → [{v}]", "match": "no"},
    "led.patch.flag": {"zh": "flags.{k} → {v}", "en": "flags.{k} → {v}", "match": "no"},
    "led.applied.var": {"zh": "变量 {x}", "en": "variable {x}", "match": "no"},
    "led.applied.panel": {"zh": "面板 {x}", "en": "panel {x}", "match": "no"},
    "led.actor_vars": {"zh": "演员输出的变量更新：{w}", "en": "The reply's own variable update: {w}", "match": "no"},
    "led.warn.not_array": {"zh": "{key} 不是数组已忽略（{value}）——本字段是字符串数组，请给出变化后的完整清单。",
                           "en": "{key} is not an array and was ignored ({value}) — this field is an array of strings: give the full list after the change.", "match": "no"},
    "led.warn.items_dropped": {"zh": "{key} 有 {n} 项不是字符串已丢弃（{shown}{more}）——"
                                     "本字段是字符串数组，请写成 [\"补气丹（已服用）\"] 这样的一句话条目。",
                               "en": "{key} had {n} items that are not strings, dropped ({shown}{more}) — this field is an array of strings: write one-line items such as [\"healing draught (drunk)\"].", "match": "no"},
    "led.warn.patch_not_object": {"zh": "patch 不是 JSON 对象已忽略（{value}）——请输出形如 {{\"patch\":{{...}}}} 的对象。",
                                  "en": "patch is not a JSON object and was ignored ({value}) — output an object such as {{\"patch\":{{...}}}}.", "match": "no"},
    "led.warn.not_string": {"zh": "{key} 不是字符串已忽略（{value}）——请写成一句话的字符串。",
                            "en": "{key} is not a string and was ignored ({value}) — write it as a one-line string.", "match": "no"},
    "led.warn.chars_not_object": {"zh": "{key} 不是对象已忽略——请写成 {{\"名字\": {{\"affinity\": 5}}}} 的形式。",
                                  "en": "{key} is not an object and was ignored — write it as {{\"name\": {{\"affinity\": 5}}}}.", "match": "no"},
    "led.warn.char_not_object": {"zh": "characters.{name} 不是对象已忽略（{value}）",
                                 "en": "characters.{name} is not an object and was ignored ({value})", "match": "no"},
    "led.warn.affinity": {"zh": "characters.{name}.affinity 不是数字已忽略（{value}）——请写 -100..100 的整数。",
                          "en": "characters.{name}.affinity is not a number and was ignored ({value}) — write an integer from -100 to 100.", "match": "no"},
    "led.warn.field": {"zh": "characters.{name}.{field} 不是字符串已忽略（{value}）",
                       "en": "characters.{name}.{field} is not a string and was ignored ({value})", "match": "no"},
    "led.warn.flags_not_object": {"zh": "{key} 不是对象已忽略——请写成 {{\"键\": \"值\"}} 的形式。",
                                  "en": "{key} is not an object and was ignored — write it as {{\"key\": \"value\"}}.", "match": "no"},
    "led.warn.flag_value": {"zh": "flags.{k} 的值不是字符串已丢弃（{value}）——flags 的值请写成一句话的字符串。",
                            "en": "The value of flags.{k} is not a string and was dropped ({value}) — write flags' values as one-line strings.", "match": "no"},
    "led.warn.short_field": {"zh": "{key} 像是一句正文已拒收（{value}）——{key} 请写成不超过 {n} 字的短语，例如「傍晚」「听雨轩大堂」。",
                             "en": "{key} looks like a sentence of prose and was refused ({value}) — write {key} as a "
                                   "phrase of at most {n} characters, such as \"dusk\" or \"the inn's front hall\".",
                             "match": "no"},
    "led.warn.unknown_key": {"zh": "未知字段 {key}，允许的顶层字段：{allowed}",
                             "en": "Unknown field {key}; the top-level fields allowed: {allowed}", "match": "no"},
    # the scribe's own problems with its answer (core/ledger/scribe.py), fed back to it in Chinese as before
    "scribe.repaired": {"zh": "场记输出不是严格的 JSON，已自动修复后使用",
                        "en": "The scribe's output was not strict JSON; it was repaired and used", "match": "no"},
    "scribe.no_object": {"zh": "场记没有输出 JSON 对象，本拍账本未更新",
                         "en": "The scribe gave no JSON object; the ledger was not updated this beat", "match": "no"},
    "scribe.no_wrapper": {"zh": "场记输出缺少 patch 外层，已按 patch 使用",
                          "en": "The scribe's output had no patch wrapper; it was used as the patch", "match": "no"},
    "scribe.no_patch": {"zh": "场记输出里没有 patch 字段，本拍账本未更新",
                        "en": "The scribe's output has no patch field; the ledger was not updated this beat",
                        "match": "no"},
    "scribe.pronoun": {"zh": "characters.{name} 不是人名（是对用户的称呼），已忽略——用户角色写作「{user}」，不必建条目。",
                       "en": "characters.{name} is no name (it addresses the user, “{user}”); ignored",
                       "match": "no"},
    "scribe.call_failed": {"zh": "场记调用失败：{error}", "en": "The scribe call failed: {error}", "match": "no"},
    # a template that failed (core/macros/ejs.py), queued on Chat.pending_notices
    "ejs.failed": {"zh": "{label}：模板出错（{error}），这段没有发给模型",
                   "en": "{label}: the template failed ({error}); this part was not sent to the model", "match": "no"},
    # the scribe's panel patch (core/ledger/panels.py apply_panel_patch), fed back to the scribe in Chinese as before
    "panel.kind.number": {"zh": "数字", "en": "a number", "match": "no"},
    "panel.kind.bool": {"zh": "布尔值", "en": "true/false", "match": "no"},
    "panel.kind.string": {"zh": "字符串", "en": "a string", "match": "no"},
    "panel.kind.object": {"zh": "对象", "en": "an object", "match": "no"},
    "panel.kind.array": {"zh": "数组", "en": "an array", "match": "no"},
    "panel.kind.null": {"zh": "空值", "en": "null", "match": "no"},
    "panel.patch_not_object": {"zh": "{key} 必须是对象 {{ 面板名: {{ 路径: 新值 }} }}，本拍面板未更新",
                               "en": "{key} must be an object {{ panel: {{ path: value }} }}; the panels were not "
                                     "updated this beat", "match": "no"},
    "panel.unknown": {"zh": "panel_patch 里的面板「{name}」不存在，已忽略",
                      "en": "The panel “{name}” in panel_patch does not exist; ignored", "match": "no"},
    "panel.no_data": {"zh": "面板「{name}」只显示账本，没有数据树，已忽略",
                      "en": "The panel “{name}” only shows the ledger and has no data; ignored", "match": "no"},
    "panel.changes_not_object": {"zh": "面板「{name}」的补丁必须是 {{ 路径: 新值 }} 对象，已忽略",
                                 "en": "The patch of the panel “{name}” must be a {{ path: value }} object; ignored",
                                 "match": "no"},
    "panel.bad_path": {"zh": "面板「{name}」的路径「{path}」无效，已忽略",
                       "en": "The path “{path}” of the panel “{name}” is not valid; ignored", "match": "no"},
    "panel.no_path": {"zh": "面板「{name}」没有路径「{path}」，已忽略",
                      "en": "The panel “{name}” has no path “{path}”; ignored", "match": "no"},
    "panel.out_of_range": {"zh": "面板「{name}」的路径「{path}」超出数组范围，已忽略",
                           "en": "The path “{path}” of the panel “{name}” is past the end of its list; ignored",
                           "match": "no"},
    "panel.wrong_kind": {"zh": "面板「{name}」的「{path}」应为{kind}，收到 {value}，已忽略",
                         "en": "“{path}” of the panel “{name}” should be {kind}, got {value}; ignored", "match": "no"},
    "panel.bad_value": {"zh": "面板「{name}」的「{path}」的值无法使用，已忽略",
                        "en": "The value for “{path}” of the panel “{name}” cannot be used; ignored", "match": "no"},
    # notices while a model call streams (core/llm/openai_client.py retries, core/llm/sse.py)
    "llm.retry": {"zh": "连接模型失败（{reason}），{wait} 秒后第 {n} 次重试…",
                  "en": "Connecting to the model failed ({reason}); retry {n} in {wait} s…", "match": "no"},
    "llm.lone_surrogate": {"zh": "模型输出里有不成对的 UTF-16 代理字符（半个表情等），已替换为 �",
                           "en": "The model's output had unpaired UTF-16 surrogates (half an emoji…); replaced with �",
                           "match": "no"},
    # the card's variable tree (core/ledger/mvu: apply, patch, paths, era, initvar): applied lines and warnings,
    # the Chinese as the scribe and the session have always read it
    "mvu.root": {"zh": "(根)", "en": "(root)", "match": "no"},
    "mvu.missing_delete": {"zh": "{where} 不存在，删除已忽略。", "en": "{where} does not exist; the delete was ignored.", "match": "no"},
    "mvu.missing_op": {"zh": "{where} 不存在，{op} 已忽略。", "en": "{where} does not exist; {op} was ignored.", "match": "no"},
    "mvu.add_needs_number": {"zh": "{where} 的 _.add 需要数字（原值 {old}，增量 {delta}），已忽略。", "en": "_.add on {where} needs numbers (value {old}, increment {delta}); ignored.", "match": "no"},
    "mvu.insert_bad_index": {"zh": "{where} 是数组，插入位置 {pos} 不是下标，已忽略。", "en": "{where} is a list and the position {pos} is no index; ignored.", "match": "no"},
    "mvu.inserted": {"zh": "{where}[{pos}]：插入 {value}", "en": "{where}[{pos}]: inserted {value}", "match": "no"},
    "mvu.insert_needs_key": {"zh": "{where} 是对象，_.insert 需要键名或对象，已忽略。", "en": "{where} is an object; _.insert needs a key or an object; ignored.", "match": "no"},
    "mvu.added": {"zh": "{where}：新增 {value}", "en": "{where}: added {value}", "match": "no"},
    "mvu.not_container": {"zh": "{where} 不是数组或对象，{op} 已忽略。", "en": "{where} is neither a list nor an object; {op} was ignored.", "match": "no"},
    "mvu.not_container_delete": {"zh": "{where} 不是数组或对象，删除已忽略。", "en": "{where} is neither a list nor an object; the delete was ignored.", "match": "no"},
    "mvu.no_delete_root": {"zh": "不能删除整棵状态树，已忽略。", "en": "The whole variable tree cannot be deleted; ignored.", "match": "no"},
    "mvu.removed": {"zh": "{where}：删除 {value}", "en": "{where}: deleted {value}", "match": "no"},
    "mvu.not_in": {"zh": "{where} 里没有 {value}，删除已忽略。", "en": "{where} has no {value}; the delete was ignored.", "match": "no"},
    "mvu.move_parent": {"zh": "{where} 的上级不是对象，move 已忽略。", "en": "The parent of {where} is not an object; move was ignored.", "match": "no"},
    "mvu.moved": {"zh": "{src} → {where}", "en": "{src} → {where}", "match": "no"},
    "mvu.unknown_op": {"zh": "不认识的指令 {op}，已忽略。", "en": "Unknown command {op}; ignored.", "match": "no"},
    "mvu.era": {"zh": "ERA {what}：{msg}", "en": "ERA {what}: {msg}", "match": "no"},
    "mvu.era.insert": {"zh": "插入", "en": "insert", "match": "no"},
    "mvu.era.edit": {"zh": "修改", "en": "edit", "match": "no"},
    "mvu.era.delete": {"zh": "删除", "en": "delete", "match": "no"},
    "mvu.era.not_object": {"zh": "{where} 的值不是对象，已忽略。", "en": "the value of {where} is not an object; ignored.", "match": "no"},
    "mvu.era.no_insert": {"zh": "{where} 禁止新增（unInsertAble），{key} 已忽略。", "en": "{where} allows no new keys (unInsertAble); {key} ignored.", "match": "no"},
    "mvu.era.no_parent": {"zh": "{where} 的上级不存在，已忽略。", "en": "the parent of {where} does not exist; ignored.", "match": "no"},
    "mvu.era.no_insert_self": {"zh": "{where} 禁止新增直属键（unInsertAble: self），{key} 已忽略。", "en": "{where} allows no new keys of its own (unInsertAble: self); {key} ignored.", "match": "no"},
    "mvu.era.protected": {"zh": "{where} 受保护（{rule}），已忽略。", "en": "{where} is protected ({rule}); ignored.", "match": "no"},
    "mvu.era.missing_edit": {"zh": "{where} 不存在，已忽略（VariableEdit 只改已有的值）。", "en": "{where} does not exist; ignored (VariableEdit only changes existing values).", "match": "no"},
    "mvu.era.not_object_below": {"zh": "{where} 不是对象，其下的路径不存在，已忽略。", "en": "{where} is not an object, so the path below it does not exist; ignored.", "match": "no"},
    "mvu.era.not_object_or_path": {"zh": "{where} 的值不是对象或路径，已忽略。", "en": "the value of {where} is neither an object nor a path; ignored.", "match": "no"},
    "mvu.era.missing": {"zh": "{where} 不存在，已忽略。", "en": "{where} does not exist; ignored.", "match": "no"},
    "mvu.changed": {"zh": "{where}：{old} → {new}", "en": "{where}: {old} → {new}", "match": "no"},
    "mvu.era.unreadable": {"zh": "ERA 指令无法读取，已忽略。", "en": "An ERA command could not be read; ignored.", "match": "no"},
    "mvu.era.too_deep": {"zh": "ERA 指令嵌套太深，已停止执行。", "en": "ERA commands are nested too deep; stopped.", "match": "no"},
    "mvu.initvar_greeting_bad": {"zh": "[MVU] 开场白里的 <initvar> 块解析失败：{why}", "en": "[MVU] The <initvar> block in the greeting could not be read: {why}", "match": "no"},
    "mvu.initvar_greeting_not_object": {"zh": "[MVU] 开场白里的 <initvar> 块不是对象，已跳过", "en": "[MVU] The <initvar> block in the greeting is not an object; skipped", "match": "no"},
    "mvu.initvar_entry_bad": {"zh": "[MVU] 解析世界书条目'{title}'失败（这张卡的初始变量没有读到）：{why}", "en": "[MVU] The lorebook entry '{title}' could not be read (the card's initial variables were not loaded): {why}", "match": "no"},
    "mvu.initvar_entry_not_object": {"zh": "[MVU] 世界书条目'{title}'不是对象（顶层必须是键值对），已跳过", "en": "[MVU] The lorebook entry '{title}' is not an object (the top level must be key-value pairs); skipped", "match": "no"},
    "mvu.empty_path": {"zh": "空路径已忽略。", "en": "An empty path was ignored.", "match": "no"},
    "mvu.no_parent_path": {"zh": "{where} 的上级路径不存在，已忽略——路径请照抄【状态树·当前值】里的写法。", "en": "The parent path of {where} does not exist; ignored.", "match": "no"},
    "mvu.missing": {"zh": "{where} 不存在，已忽略。", "en": "{where} does not exist; ignored.", "match": "no"},
    "mvu.bad_index": {"zh": "{where} 超出数组范围或不是下标，已忽略——改数组请给完整新数组。", "en": "{where} is past the end of the list or no index; ignored.", "match": "no"},
    "mvu.parent_not_object": {"zh": "{where} 的上级不是对象（是 {parent}），不能新建子路径，已忽略。", "en": "The parent of {where} is not an object (it is {parent}); no new path below it; ignored.", "match": "no"},
    "mvu.patch_not_object": {"zh": "{key} 不是 JSON 对象已忽略（{value}）——请输出形如 {{\"路径.用点分隔\": 新值}} 的对象。", "en": "{key} is not a JSON object ({value}); ignored.", "match": "no"},
    "mvu.derived": {"zh": "{path} 是派生值（{prefix} 开头的键由卡自己计算），不能写入，已忽略。", "en": "{path} is a derived value (keys starting with {prefix} are computed by the card); it cannot be written; ignored.", "match": "no"},
    "mvu.read_only": {"zh": "{path} 是只读值（路径里有 _ 开头的键），不能写入，已忽略。", "en": "{path} is read-only (the path has a key starting with _); it cannot be written; ignored.", "match": "no"},
    "mvu.want_number": {"zh": "{where} 原值是数字（{old}），新值 {new} 不是数字，已忽略——请给数字。", "en": "{where} holds a number ({old}); the new value {new} is no number; ignored.", "match": "no"},
    "mvu.want_bool": {"zh": "{where} 原值是布尔值（{old}），新值 {new} 不是 true/false，已忽略。", "en": "{where} holds true/false ({old}); the new value {new} is neither; ignored.", "match": "no"},
    "mvu.want_string": {"zh": "{where} 原值是字符串，新值 {new} 是对象/数组，已忽略——请给字符串。", "en": "{where} holds a string; the new value {new} is an object or a list; ignored.", "match": "no"},
    "mvu.want_object": {"zh": "{where} 原值是对象，新值 {new} 不是对象，已忽略——整段替换请给完整对象，改单项请写到子路径。", "en": "{where} holds an object; the new value {new} is not an object; ignored.", "match": "no"},
    "mvu.want_array": {"zh": "{where} 原值是数组，新值 {new} 不是数组，已忽略——请给变化后的完整数组。", "en": "{where} holds a list; the new value {new} is not a list; ignored.", "match": "no"},
    # the compaction summary call (core/memory/search.py summarize)
    "mem.summary_failed": {"zh": "压缩前情失败：{error}", "en": "The summary of earlier beats failed: {error}",
                           "match": "no"},
    "mem.summary_empty": {"zh": "压缩前情失败：模型没有给出摘要", "en": "The summary of earlier beats failed: the "
                          "model gave no summary", "match": "no"},
    # the app settings file (core/settings.py load_settings)
    "settings.unreadable": {"zh": "无法读取设置文件 {path}（{error}），已使用默认设置。",
                            "en": "Cannot read the settings file {path} ({error}); the defaults are used.",
                            "match": "no"},
    "settings.broken": {"zh": "设置文件 settings.json 已损坏：{problem}。已改用默认设置，{note}。",
                        "en": "The settings file settings.json is damaged: {problem}. The defaults are used; {note}.",
                        "match": "no"},
    "settings.invalid": {"zh": "设置文件 settings.json 有无效内容，已忽略：{what}。其余设置照常读取，{note}。",
                         "en": "The settings file settings.json has invalid content, ignored: {what}. The other "
                               "settings were read; {note}.", "match": "no"},
    "settings.not_utf8": {"zh": "不是 UTF-8 文本", "en": "it is not UTF-8 text", "match": "no"},
    "settings.bad_json": {"zh": "不是有效的 JSON（{error}）", "en": "it is not valid JSON ({error})", "match": "no"},
    "settings.not_object": {"zh": "顶层不是 JSON 对象", "en": "the top level is not a JSON object", "match": "no"},
    "settings.renamed": {"zh": "原文件已改名为 {name} 保留", "en": "the file was kept as {name}", "match": "no"},
    "settings.copied": {"zh": "原文件已复制为 {name} 保留", "en": "the file was copied to {name}", "match": "no"},
    "settings.not_kept": {"zh": "原文件无法另存（{error}），保存设置时会被覆盖",
                          "en": "the file could not be kept ({error}) and will be overwritten when settings are saved",
                          "match": "no"},
    # why a world-info entry fired, the labels without a key before (core/chat/turn.py lore_reasons)
    "lore.why.decorator": {"zh": "{title}：@@activate", "en": "{title}: @@activate", "match": "no"},
    "lore.why.other": {"zh": "{title}：{kind}", "en": "{title}: {kind}", "match": "no"},
    # a chat's preset changed (core/chat/facade.py set_preset), said in the next beat's activity list
    "chat.preset_use": {"zh": "换用预设「{name}」", "en": "now uses the preset “{name}”", "match": "no"},
    "chat.preset_none": {"zh": "不再使用预设", "en": "no longer uses a preset", "match": "no"},
    "chat.preset_notice": {"zh": "本对话{what}：系统提示词变了，服务商缓存的提示词前缀下一拍会重建一次（这一拍的缓存命中会很低，之后恢复）。",
                           "en": "This chat {what}: the system prompt changed, so the provider's cached prompt prefix "
                                 "is rebuilt once on the next beat (its cache hits are low this beat, then recover).",
                           "match": "no"},
    "lore.why.in": {"zh": "{title}：关键词「{kw}」出现在{where}", "en": "{title}: the key “{kw}” is in {where}",
                    "match": "no"},
    # --- z31fix ---
    "group.cut_turn": {"zh": "liyuan: 注意：上次{name}在群聊里的发言被中断了。--regenerate 让TA接着说；--say 说的新话从这里重新开始",
                       "en": "liyuan: note: {name}'s group-chat reply was cut off last time. --regenerate lets them reply; "
                             "--say starts afresh from here"},
    # --- z32cli ---
    # (carried by key only, never patterns for reverse matching: "match": "no")
    # the SillyTavern import's plan and report (core/migrate/model.py; `liyuan import-sillytavern`, the window's dialog)
    "migrate.kind.card": {"match": "no", "zh": "角色卡", "en": "Card"},
    "migrate.kind.chat": {"match": "no", "zh": "聊天记录", "en": "Chat"},
    "migrate.kind.book": {"match": "no", "zh": "世界书", "en": "World book"},
    "migrate.kind.preset": {"match": "no", "zh": "预设", "en": "Preset"},
    "migrate.kind.persona": {"match": "no", "zh": "人设", "en": "Persona"},
    "migrate.kind.avatar": {"match": "no", "zh": "人设头像", "en": "Persona avatar"},
    "migrate.kind.settings": {"match": "no", "zh": "设置", "en": "Settings"},
    "migrate.kind.group": {"match": "no", "zh": "群组", "en": "Group"},
    "migrate.kinds.card": {"match": "no", "zh": "角色卡", "en": "Cards"},
    "migrate.kinds.chat": {"match": "no", "zh": "聊天记录", "en": "Chats"},
    "migrate.kinds.book": {"match": "no", "zh": "世界书", "en": "World books"},
    "migrate.kinds.preset": {"match": "no", "zh": "预设", "en": "Presets"},
    "migrate.kinds.persona": {"match": "no", "zh": "人设", "en": "Personas"},
    "migrate.kinds.avatar": {"match": "no", "zh": "人设头像", "en": "Persona avatars"},
    "migrate.kinds.settings": {"match": "no", "zh": "设置", "en": "Settings"},
    "migrate.kinds.group": {"match": "no", "zh": "群组", "en": "Groups"},
    "migrate.action.new": {"match": "no", "zh": "导入", "en": "imported"},
    "migrate.action.rename": {"match": "no", "zh": "改名导入", "en": "imported under a new name"},
    "migrate.action.same": {"match": "no", "zh": "已有相同的，跳过", "en": "already here, skipped"},
    "migrate.action.skip": {"match": "no", "zh": "不导入", "en": "not imported"},
    "migrate.action.error": {"match": "no", "zh": "损坏，跳过", "en": "damaged, skipped"},
    "migrate.chat_warnings": {"match": "no", "zh": "{items}{more}", "en": "{items}{more}"},  # a chat's first warnings
    # SillyTavern group import (core/group/st.py)
    "group.st.member_missing": {"match": "no", "zh": "群组「{group}」的成员 {member} 不在卡库里，未加入",
                                "en": "The member {member} of the group “{group}” is not in the card library; left out"},
    "group.st.no_members": {"match": "no", "zh": "群组「{group}」的成员都不在卡库里",
                            "en": "None of the members of the group “{group}” is in the card library"},
    "group.st.not_group": {"zh": "{name}：不是 SillyTavern 的群组文件（要有 members 列表的 JSON 对象）",
                           "en": "{name}: not a SillyTavern group file (a JSON object with a members list)"},
    "group.st.chat_missing": {"match": "no", "zh": "群组「{group}」的聊天记录 {file} 没有找到",
                              "en": "The group “{group}”'s chat {file} was not found"},
    "group.st.chat_failed": {"match": "no", "zh": "群组「{group}」的聊天记录 {file} 未导入：{error}",
                             "en": "The group “{group}”'s chat {file} was not imported: {error}"},
    "migrate.action.update": {"match": "no", "zh": "替换为新版", "en": "replaced by the newer version"},
    "migrate.update.card": {"match": "no", "zh": "梨园里已有同名的角色卡（上次迁移导入的），用这个新版替换它（旧版放进回收站）",
                            "en": "an earlier migration brought a card of this name; this newer version replaces it "
                                  "(the old one goes to the trash)"},
    "migrate.update.book": {"match": "no", "zh": "梨园里已有同名的世界书（上次迁移导入的），用这个新版替换它（旧版留在历史版本里）",
                            "en": "an earlier migration brought a world book of this name; this newer version replaces "
                                  "it (the old one is kept among its versions)"},
    "migrate.sum.head": {"match": "no", "zh": "SillyTavern 数据：{source}（{layout}）", "en": "SillyTavern data: {source} ({layout})"},
    "migrate.sum.kind": {"match": "no", "zh": "  {label}：{n} 个（{parts}），{size}", "en": "  {label}: {n} ({parts}), {size}"},
    "migrate.sum.part": {"match": "no", "zh": "{action} {n}", "en": "{action}: {n}"},
    "migrate.sum.sep": {"match": "no", "zh": "，", "en": "; "},
    "migrate.sum.conflict": {"match": "no", "zh": "  同名冲突：{kind}「{name}」→「{target}」",
                             "en": "  Name taken: {kind} “{name}” → “{target}”"},
    "migrate.sum.authors_note": {"match": "no", "zh": "  {kind}「{name}」带上{note}", "en": "  {kind} “{name}” comes with its {note}"},
    "migrate.sum.change": {"match": "no", "zh": "  设置将改为：{change}", "en": "  Settings to take over: {change}"},
    "migrate.sum.keep": {"match": "no", "zh": "  设置保留梨园现有的：{kept}", "en": "  Settings kept as they are here: {kept}"},
    "migrate.sum.not_imported": {"match": "no", "zh": "  不导入：{what} {n} 个——{why}", "en": "  Not imported: {what} ({n}): {why}"},
    "migrate.sum.problem": {"match": "no", "zh": "  问题：{text}", "en": "  Problem: {text}"},
    "migrate.sum.note": {"match": "no", "zh": "  注意：{text}", "en": "  Note: {text}"},
    "migrate.md.title": {"match": "no", "zh": "# 从 SillyTavern 导入{head}", "en": "# Import from SillyTavern{head}"},
    "migrate.md.dry_run": {"match": "no", "zh": "（试运行，什么都没写）", "en": " (dry run: nothing was written)"},
    "migrate.md.cancelled": {"match": "no", "zh": "（已取消，什么都没写）", "en": " (cancelled: nothing was written)"},
    "migrate.md.source": {"match": "no", "zh": "- 来源：`{source}`（{layout}）", "en": "- Source: `{source}` ({layout})"},
    "migrate.md.home": {"match": "no", "zh": "- 梨园数据文件夹：`{home}`", "en": "- Liyuan data folder: `{home}`"},
    "migrate.md.totals": {"match": "no", "zh": "## 合计", "en": "## Totals"},
    "migrate.md.table": {"match": "no", "zh": "| 种类 | 导入 | 已有相同 | 失败/跳过 |", "en": "| Kind | Imported | Already here | Failed or skipped |"},
    "migrate.md.details": {"match": "no", "zh": "## 明细", "en": "## Details"},
    "migrate.md.item": {"match": "no", "zh": "- {kind}「{name}」{to}：{action}{reason}{links}{note}",
                        "en": "- {kind} “{name}”{to}: {action}{reason}{links}{note}"},
    "migrate.md.to": {"match": "no", "zh": " →「{target}」", "en": " → “{target}”"},
    "migrate.md.reason": {"match": "no", "zh": "（{reason}）", "en": " ({reason})"},
    "migrate.md.links": {"match": "no", "zh": "；世界书：{books}", "en": "; world books: {books}"},
    "migrate.md.note": {"match": "no", "zh": "；{note}", "en": "; {note}"},
    "migrate.md.settings": {"match": "no", "zh": "## 设置", "en": "## Settings"},
    "migrate.md.kept": {"match": "no", "zh": "- 保留梨园现有的：{kept}", "en": "- Kept as it is here: {kept}"},
    "migrate.md.not_imported_head": {"match": "no", "zh": "## 没有导入的", "en": "## Not imported"},
    "migrate.md.not_imported": {"match": "no", "zh": "- {what}：{n} 个——{why}", "en": "- {what} ({n}): {why}"},
    "migrate.md.problems": {"match": "no", "zh": "## 问题与说明", "en": "## Problems and notes"},
    "migrate.progress.settings": {"match": "no", "zh": "人设与设置", "en": "personas and settings"},
    "migrate.progress.cancelled": {"match": "no", "zh": "已取消", "en": "cancelled"},
    "migrate.progress.done": {"match": "no", "zh": "完成", "en": "done"},
    "migrate.progress.item": {"match": "no", "zh": "{kind}「{name}」", "en": "{kind} “{name}”"},
    "migrate.report_not_saved": {"match": "no", "zh": "报告没有保存：{error}", "en": "The report was not saved: {error}"},
    "migrate.cli.progress": {"match": "no", "zh": "liyuan: 导入 {pct}%  {label}", "en": "liyuan: importing {pct}%  {label}"},
    "migrate.cli.saved": {"match": "no", "zh": "报告已保存：{dir}", "en": "Report saved: {dir}"},
    "migrate.cli.cancelled": {"match": "no", "zh": "liyuan: 已取消，这次导入的东西都已删除",
                              "en": "liyuan: cancelled; everything this import had written was removed"},
    # what the scan says about an item (core/migrate/scan.py, source.py, merge.py, apply.py)
    "migrate.api_unsupported": {"match": "no", "zh": "SillyTavern 用的接口是 {source}，梨园目前只接 OpenAI 兼容的接口，没有导入连接设置",
                                "en": "SillyTavern uses the {source} API; Liyuan talks only to OpenAI-compatible APIs "
                                      "for now, so the connection was not imported"},
    "migrate.api_incomplete": {"match": "no", "zh": "SillyTavern 的接口 {source} 没有可用的地址或模型名，没有导入连接设置",
                               "en": "SillyTavern's {source} API has no usable address or model name; the connection "
                                     "was not imported"},
    "migrate.api_textgen": {"match": "no", "zh": "SillyTavern 用的是文本补全（{kind}），梨园用它的 OpenAI 兼容地址 {base}",
                            "en": "SillyTavern uses text completion ({kind}); Liyuan uses its OpenAI-compatible "
                                  "address {base}"},
    "migrate.api_textgen_no_url": {"match": "no", "zh": "SillyTavern 的文本补全（{kind}）没有服务器地址，没有导入连接设置",
                                   "en": "SillyTavern's text completion ({kind}) has no server address; the connection "
                                         "was not imported"},
    "migrate.api_other": {"match": "no", "zh": "SillyTavern 用的接口是 {main}，梨园接不了，没有导入连接设置",
                          "en": "SillyTavern uses the {main} API, which Liyuan cannot use; the connection was not "
                                "imported"},
    "migrate.settings_same": {"match": "no", "zh": "梨园的设置已经是这样，或已经由你设置过",
                              "en": "Liyuan's settings are already like this, or you set them yourself"},
    "migrate.no_settings": {"match": "no", "zh": "没有 settings.json：世界书设置、人设、默认预设和连接设置都没有导入",
                            "en": "No settings.json: the world-info settings, personas, default preset and connection "
                                  "were not imported"},
    "migrate.settings_unreadable": {"match": "no", "zh": "读不了 settings.json：{error}", "en": "Cannot read settings.json: {error}"},
    "migrate.book_not_json": {"match": "no", "zh": "不是有效的 JSON（第 {line} 行第 {col} 列），不是可用的世界书",
                              "en": "not valid JSON (line {line}, column {col}); not a usable world book"},
    "migrate.book_bad": {"match": "no", "zh": "不是可用的世界书：{error}", "en": "not a usable world book: {error}"},
    "migrate.rename.book": {"match": "no", "zh": "梨园里已有同名但内容不同的世界书",
                            "en": "a different world book of this name is already here"},
    "migrate.rename.preset": {"match": "no", "zh": "预设库里已有同名但内容不同的预设",
                              "en": "a different preset of this name is already in the library"},
    "migrate.rename.card": {"match": "no", "zh": "梨园里已有同名但内容不同的角色卡", "en": "a different card of this name is already here"},
    "migrate.rename.chat": {"match": "no", "zh": "这张卡下已有同名的对话", "en": "this card already has a chat of this name"},
    "migrate.rename.persona": {"match": "no", "zh": "已有同一头像文件的另一个人设，这个存为 {id}",
                               "en": "another persona has the same avatar file; this one is saved as {id}"},
    "migrate.rename.avatar": {"match": "no", "zh": "已有同名但内容不同的头像", "en": "a different avatar of this name is already here"},
    "migrate.rename.group": {"match": "no", "zh": "已有同名的群组", "en": "a group of this name is already here"},
    "migrate.no_card": {"match": "no", "zh": "找不到它的角色卡 characters/{name}.*", "en": "its card characters/{name}.* is not there"},
    "migrate.torn": {"match": "no", "zh": "最后一行不完整（多半是写入时中断），导入时跳过这一行",
                     "en": "the last line is incomplete (most likely cut off while saving); it is skipped on import"},
    "migrate.unreadable": {"match": "no", "zh": "读不了：{error}", "en": "cannot be read: {error}"},
    "migrate.book_missing.card": {"match": "no", "zh": "角色卡「{card}」链接的世界书「{book}」在 worlds/ 里没有找到",
                                  "en": "The world book “{book}” linked by the card “{card}” is not in worlds/"},
    "migrate.book_missing.chat": {"match": "no", "zh": "对话「{chat}」链接的世界书「{book}」在 worlds/ 里没有找到",
                                  "en": "The world book “{book}” linked by the chat “{chat}” is not in worlds/"},
    "migrate.set.persona": {"match": "no", "zh": "默认人设：{name}", "en": "Default persona: {name}"},
    "migrate.kept.persona": {"match": "no", "zh": "默认人设「{name}」", "en": "the default persona “{name}”"},
    "migrate.set.user_name": {"match": "no", "zh": "用户名：{name}", "en": "User name: {name}"},
    "migrate.kept.user_name": {"match": "no", "zh": "用户名「{name}」", "en": "the user name “{name}”"},
    "migrate.set.world_info": {"match": "no", "zh": "世界书设置：{items}", "en": "World-info settings: {items}"},
    "migrate.kept.world_info": {"match": "no", "zh": "世界书设置（梨园里已经改过）", "en": "the world-info settings (already changed here)"},
    "migrate.preset_absent": {"match": "no", "zh": "SillyTavern 正在用的预设「{preset}」不在 OpenAI Settings/ 里，没有设为默认",
                              "en": "The preset SillyTavern uses, “{preset}”, is not in OpenAI Settings/; not made the "
                                    "default"},
    "migrate.set.preset": {"match": "no", "zh": "默认预设：{name}", "en": "Default preset: {name}"},
    "migrate.kept.preset": {"match": "no", "zh": "默认预设「{name}」", "en": "the default preset “{name}”"},
    "migrate.other_users": {"match": "no", "zh": "还有其他 SillyTavern 用户的数据没有导入：{users}（每次导入一个用户文件夹，可以再选 data/<用户名>/ 导入）",
                            "en": "Other SillyTavern users' data was not imported: {users} (one user folder is "
                                  "imported at a time; choose data/<user name>/ to import another)"},
    "migrate.zip.absolute": {"match": "no", "zh": "绝对路径", "en": "an absolute path"},
    "migrate.zip.dotdot": {"match": "no", "zh": "路径里有 ..（会写到解压文件夹外面）",
                           "en": "the path has .. (it would be written outside the unpack folder)"},
    "migrate.zip.nul": {"match": "no", "zh": "名字里有空字符", "en": "the name has a NUL character"},
    "migrate.zip.unreadable": {"match": "no", "zh": "{name}：读不了（{error}）", "en": "{name}: cannot be read ({error})"},
    "migrate.zip.link": {"match": "no", "zh": "符号链接或特殊文件", "en": "a symbolic link or special file"},
    "migrate.zip.outside": {"match": "no", "zh": "会写到解压文件夹外面", "en": "it would be written outside the unpack folder"},
    "migrate.zip.skipped": {"match": "no", "zh": "压缩包里的「{name}」没有解压：{why}", "en": "“{name}” in the archive was not unpacked: {why}"},
    "migrate.ni.group_chats": {"match": "no", "zh": "群聊记录", "en": "Group chats"},
    "migrate.ni.group_chats.why": {"match": "no", "zh": "不属于任何群组（groups/ 里没有群组列出它）",
                                   "en": "they belong to no group (no group in groups/ lists them)"},
    "migrate.ni.quick_replies": {"match": "no", "zh": "快速回复（Quick Replies）", "en": "Quick Replies"},
    "migrate.ni.quick_replies.why": {"match": "no", "zh": "快速回复要单独导入（liyuan qr import，或窗口的快速回复面板）",
                                     "en": "import them on their own (liyuan qr import, or the window's quick-reply panel)"},
    "migrate.ni.extensions": {"match": "no", "zh": "扩展", "en": "Extensions"},
    "migrate.ni.extensions.why": {"match": "no", "zh": "SillyTavern 的扩展是网页脚本，梨园不运行它们（卡里的状态栏照常显示）",
                                  "en": "SillyTavern's extensions are web-page scripts, which Liyuan does not run (a "
                                        "card's status bars still show)"},
    "migrate.ni.themes": {"match": "no", "zh": "主题", "en": "Themes"},
    "migrate.ni.themes.why": {"match": "no", "zh": "自定义 CSS 和主题不导入", "en": "custom CSS and themes are not imported"},
    "migrate.ni.textgen": {"match": "no", "zh": "文本补全预设", "en": "Text-completion presets"},
    "migrate.ni.kobold": {"match": "no", "zh": "KoboldAI 预设", "en": "KoboldAI presets"},
    "migrate.ni.novelai": {"match": "no", "zh": "NovelAI 预设", "en": "NovelAI presets"},
    "migrate.ni.chat_only.why": {"match": "no", "zh": "梨园只用对话补全（Chat Completion）预设",
                                 "en": "Liyuan uses only Chat Completion presets"},
    "migrate.ni.instruct": {"match": "no", "zh": "指令模板", "en": "Instruct templates"},
    "migrate.ni.context": {"match": "no", "zh": "上下文模板", "en": "Context templates"},
    "migrate.ni.textgen_only.why": {"match": "no", "zh": "只用于文本补全", "en": "used only for text completion"},
    "migrate.ni.regex": {"match": "no", "zh": "全局正则脚本", "en": "Global regex scripts"},
    "migrate.ni.regex.why": {"match": "no", "zh": "梨园只运行角色卡自带的正则脚本", "en": "Liyuan runs only the regex scripts a card brings"},
    "migrate.limit.book": {"match": "no", "zh": "世界书", "en": "world-book"},
    "migrate.limit.preset": {"match": "no", "zh": "预设", "en": "preset"},
    "migrate.limit.card": {"match": "no", "zh": "角色卡", "en": "card"},
    "migrate.limit.chat": {"match": "no", "zh": "聊天记录", "en": "chat"},
    "migrate.limit.avatar": {"match": "no", "zh": "头像", "en": "avatar"},
    # `liyuan card inspect` (core/cards/inspect.py format_inspect) and where a card's templates are
    "inspect.head": {"match": "no", "zh": "{name}（{spec} · {format}）", "en": "{name} ({spec} · {format})"},
    "inspect.greetings": {"match": "no", "zh": "  开场白：{n} 条", "en": "  Greetings: {n}"},
    "inspect.book": {"match": "no", "zh": "  世界书：{n} 条", "en": "  Lorebook entries: {n}"},
    "inspect.book_constant": {"match": "no", "zh": "  世界书：{n} 条，其中常驻 {constant} 条", "en": "  Lorebook entries: {n}, {constant} always on"},
    "inspect.regex": {"match": "no", "zh": "  正则脚本：{n} 个", "en": "  Regex scripts: {n}"},
    "inspect.html_yes": {"match": "no", "zh": "  状态栏 HTML：有", "en": "  Status-bar HTML: yes"},
    "inspect.html_no": {"match": "no", "zh": "  状态栏 HTML：无", "en": "  Status-bar HTML: no"},
    "inspect.mvu": {"match": "no", "zh": "  MVU 初始变量条目：{n} 条", "en": "  MVU initial-variable entries: {n}"},
    "inspect.templates": {"match": "no", "zh": "  提示词模板：EJS {ejs} 处，TavernHelper 变量宏 {th} 处",
                          "en": "  Prompt templates: EJS in {ejs} texts, TavernHelper variable macros in {th}"},
    "inspect.templates_where": {"match": "no", "zh": "（EJS 在：{where}）", "en": " (EJS in: {where})"},
    "inspect.broken": {"match": "no", "zh": "  模板无法编译：{where}：{error}", "en": "  Template does not compile: {where}: {error}"},
    "inspect.th": {"match": "no", "zh": "  酒馆助手脚本：{n} 个（卡里启用 {enabled} 个，按钮 {buttons} 个{more}；运行前会问；liyuan card scripts 查看）",
                   "en": "  TavernHelper scripts: {n} ({enabled} enabled by the card, {buttons} buttons{more}; asked "
                         "before they run; see liyuan card scripts)"},
    "inspect.th_mvu": {"match": "no", "zh": "，MVU 加载器 {n} 个（不运行）", "en": ", {n} MVU loaders (not run)"},
    "inspect.th_era": {"match": "no", "zh": "，ERA 变量框架", "en": ", the ERA variable framework"},
    "inspect.th_remote": {"match": "no", "zh": "，远程加载 {n} 处", "en": ", {n} remote imports"},
    "inspect.note": {"match": "no", "zh": "  注意：{text}", "en": "  Note: {text}"},
    "inspect.initvar_failed": {"match": "no", "zh": "[MVU] 读取初始变量失败：{error}", "en": "[MVU] reading the initial variables failed: {error}"},
    "inspect.where.description": {"match": "no", "zh": "角色设定", "en": "description"},
    "inspect.where.personality": {"match": "no", "zh": "性格", "en": "personality"},
    "inspect.where.scenario": {"match": "no", "zh": "场景", "en": "scenario"},
    "inspect.where.examples": {"match": "no", "zh": "对话示例", "en": "example dialogue"},
    "inspect.where.system": {"match": "no", "zh": "系统提示", "en": "system prompt"},
    "inspect.where.post_history": {"match": "no", "zh": "补充要求", "en": "post-history instructions"},
    "inspect.where.first_mes": {"match": "no", "zh": "开场白", "en": "greeting"},
    "inspect.where.alt": {"match": "no", "zh": "备选开场白 {n}", "en": "alternate greeting {n}"},
    "inspect.where.entry": {"match": "no", "zh": "世界书「{title}」", "en": "lorebook “{title}”"},
    "inspect.where.regex": {"match": "no", "zh": "正则「{name}」", "en": "regex “{name}”"},
    # the preset plan (core/prompt/presets/mapping.py PresetPlan.describe; `liyuan preset show`, the preset dialog)
    "plan.head": {"match": "no", "zh": "预设「{name}」（顺序表 {order}）", "en": "Preset “{name}” (prompt order {order})"},
    "plan.system": {"match": "no", "zh": "系统提示层：{items}", "en": "System prompt layer: {items}"},
    "plan.after": {"match": "no", "zh": "用户原话之后：{items}", "en": "After the user's words: {items}"},
    "plan.depth": {"match": "no", "zh": "按深度插入：{items}", "en": "Inserted at depth: {items}"},
    "plan.none": {"match": "no", "zh": "（无）", "en": "(none)"},
    "plan.after_item": {"match": "no", "zh": "{name}（{role}）", "en": "{name} ({role})"},
    "plan.depth_item": {"match": "no", "zh": "{name}（深度 {depth}，{role}）", "en": "{name} (depth {depth}, {role})"},
    "plan.dropped": {"match": "no", "zh": "不用：{name}——{reason}", "en": "Not used: {name}: {reason}"},
    "plan.no_order": {"match": "no", "zh": "预设里没有 character_id 100001 的顺序表，按 SillyTavern 的做法用默认顺序",
                      "en": "The preset has no prompt order for character_id 100001; the default order is used, as "
                            "SillyTavern does"},
    "plan.no_order_legacy": {"match": "no", "zh": "预设里没有 character_id 100001 的顺序表（只有 100000 的旧表，SillyTavern 不读它），按 SillyTavern 的做法用默认顺序",
                             "en": "The preset has no prompt order for character_id 100001 (only the old 100000 one, "
                                   "which SillyTavern does not read); the default order is used, as SillyTavern does"},
    "plan.dup": {"match": "no", "zh": "顺序表里重复出现，只用第一次", "en": "listed twice in the prompt order; only the first is used"},
    "plan.missing": {"match": "no", "zh": "prompts 里没有这个提示词（SillyTavern 也会丢掉这条引用）",
                     "en": "no such prompt in prompts (SillyTavern drops this reference too)"},
    "plan.disabled": {"match": "no", "zh": "预设里是关闭的", "en": "turned off in the preset"},
    "plan.trigger": {"match": "no", "zh": "只在 {kinds} 生成时发送", "en": "sent only for {kinds} generations"},
    "plan.not_in_order": {"match": "no", "zh": "不在当前使用的顺序表里", "en": "not in the prompt order in use"},
    "plan.no_history": {"match": "no", "zh": "顺序表里没有启用的 chatHistory：梨园照常发送对话历史，所有相对位置的提示词都放进系统提示",
                        "en": "The prompt order has no enabled chatHistory: Liyuan sends the chat history as usual and "
                              "puts every relative prompt in the system prompt"},
    "plan.runtime": {"match": "no", "zh": "由 SillyTavern 运行时填写（梨园用自己的前情提要与账本）",
                     "en": "filled in by SillyTavern at run time (Liyuan uses its own summary and ledger)"},
    "plan.extension": {"match": "no", "zh": "扩展的占位符，梨园没有这个扩展", "en": "an extension's placeholder; Liyuan does not have that extension"},
    "plan.marker_depth": {"match": "no", "zh": "「{label}」在预设里是按深度插入，梨园把角色卡数据固定放在系统提示里",
                          "en": "“{label}” is inserted at depth in the preset; Liyuan always puts the card's data in the "
                                "system prompt"},
    "plan.marker_after": {"match": "no", "zh": "「{label}」在预设里排在对话历史之后，梨园把角色卡数据固定放在系统提示里",
                          "en": "“{label}” comes after the chat history in the preset; Liyuan always puts the card's "
                                "data in the system prompt"},
    "plan.empty": {"match": "no", "zh": "内容为空", "en": "empty"},
    "plan.role_merged": {"match": "no", "zh": "「{label}」在预设里是 {role} 消息，梨园把它并进系统提示（系统提示要逐字节稳定）",
                         "en": "“{label}” is a {role} message in the preset; Liyuan merges it into the system prompt "
                               "(the system prompt must stay byte-stable)"},
    "plan.max_tokens": {"match": "no", "zh": "回复上限 openai_max_tokens = {n}：没有使用（梨园的工具调用要带整段正文，预设给普通回复定的上限会把它截断；需要时在本对话或连接配置里设回复上限）",
                        "en": "Reply limit openai_max_tokens = {n}: not used (Liyuan's tool calls carry the whole "
                              "text, which a limit meant for plain replies would cut off; set a reply limit in the "
                              "chat or the connection if you need one)"},
    "plan.n": {"match": "no", "zh": "n = {n}：没有使用（梨园每次只取一个回答）", "en": "n = {n}: not used (Liyuan takes one answer at a time)"},
    "cli.no_key": {"match": "no", "zh": "没有 {name} 的 API key：请设置环境变量 {env}（或在窗口的「设置」里保存到系统钥匙串）",
                   "en": "No API key for {name}: set the environment variable {env} (or save it to the system keyring "
                         "in the window's Settings)"},
    # `liyuan models probe` / the local-models dialog (core/llm/capabilities.py probe notes; each language its own)
    "caps.stream_fallback": {"match": "no", "zh": "流式输出失败，非流式可用",
                             "en": "streaming failed, non-streaming works"},
    "caps.plain_failed": {"match": "no", "zh": "普通请求失败：{error}", "en": "plain request failed: {error}"},
    "caps.tools_stream_fallback": {"match": "no", "zh": "流式工具调用失败，非流式可用",
                                   "en": "streamed tool calls failed, non-streaming works"},
    "caps.tools_failed": {"match": "no", "zh": "带工具的请求失败：{error}",
                          "en": "request with tools failed: {error}"},
    # a chat's Author's Note as the SillyTavern import reports it (core/migrate/scan.py; the wording of AuthorsNote.summary)
    "migrate.an.summary": {"match": "no", "zh": "作者注：{where}，{every}", "en": "Author's Note: {where}, {every}"},
    "migrate.an.none": {"match": "no", "zh": "作者注：无", "en": "Author's Note: none"},
    "migrate.an.chat": {"match": "no", "zh": "对话中深度 {depth}（{role}）", "en": "in the chat at depth {depth} ({role})"},
    "migrate.an.before": {"match": "no", "zh": "场景之前（本拍数据块）", "en": "before the scene (the beat's data blocks)"},
    "migrate.an.after": {"match": "no", "zh": "场景之后（本拍数据块）", "en": "after the scene (the beat's data blocks)"},
    "migrate.an.off": {"match": "no", "zh": "已关闭（间隔 0）", "en": "off (interval 0)"},
    "migrate.an.every": {"match": "no", "zh": "每 {n} 条用户消息插入一次", "en": "inserted every {n} user messages"},
    "migrate.ni.secrets": {"match": "no", "zh": "secrets.json（API 密钥）", "en": "secrets.json (API keys)"},
    "migrate.ni.secrets.why": {"match": "no", "zh": "从不读取：密钥请在梨园的设置里重新填写",
                               "en": "never read: enter your keys again in Liyuan's settings"},
    # --- z99break ---
    "cli.chat_not_found": {"zh": "找不到对话：{spec}（给对话文件夹，或「卡名/对话名」「群组名/对话名」）",
                           "en": "No chat {spec} (give a chat folder, or card/chat, or group/chat)"},
    "group.st.bad_json": {"zh": "{name}：不是有效的 JSON（第 {line} 行第 {col} 列：{why}），不是 SillyTavern 的群组文件",
                          "en": "{name}: not valid JSON (line {line}, column {col}: {why}); not a SillyTavern group file"},
    "group.st.unreadable": {"zh": "{name}：读不了这个文件（{error}）", "en": "{name}: the file cannot be read ({error})"},
    "group.cli.bad_name": {"zh": "「{name}」当不了群组名：请至少写一个字（首尾的空格和点不算），不用控制字符和文字方向符",
                           "en": "“{name}” cannot name a group: write at least one character (spaces and dots at either end do not count), with no control or text-direction characters"},
    "group.auto.bad_turns": {"zh": "--auto 的轮数要在 1 到 {max} 之间（给的是 {n}）",
                             "en": "--auto wants a number of turns from 1 to {max} (got {n})"},
    # --- z32llm --- (issue 32 §1: the model client's errors carried by key; server text and URLs redacted first)
    "llm.err.said": {"match": "no", "zh": " 服务器说：{message}", "en": " The server said: {message}"},
    "llm.err.no_key": {"match": "no", "zh": "没有设置 API key (401)：{host} 需要密钥，请在设置里填写。{said}",
                       "en": "No API key set (401): {host} needs a key; enter it in Settings.{said}"},
    "llm.err.bad_key": {"match": "no", "zh": "API key 无效或无权限 ({status})：请在设置里检查 {host} 的密钥是否正确、未过期、"
                                             "有权使用模型 “{model}”。{said}",
                        "en": "The API key is invalid or not allowed ({status}): check in Settings that the key for "
                              "{host} is correct, not expired and allowed to use the model “{model}”.{said}"},
    "llm.err.payment": {"match": "no", "zh": "账户余额不足或需要付费 (402)：请检查 {host} 的账户。{said}",
                        "en": "Insufficient balance or payment required (402): check your account at {host}.{said}"},
    "llm.err.not_found": {"match": "no", "zh": "找不到接口或模型 (404)：请检查 base URL 和模型名。请求地址 {where}，模型 “{model}”。{said}",
                          "en": "Endpoint or model not found (404): check the base URL and the model name. "
                                "Requested {where}, model “{model}”.{said}"},
    "llm.err.quota": {"match": "no", "zh": "额度已用完 (429)：{host} 的账户没有可用额度，请充值或换一个密钥。{said}",
                      "en": "Quota used up (429): the account at {host} has no quota left; top it up or use another "
                            "key.{said}"},
    "llm.err.rate_limit": {"match": "no", "zh": "请求太频繁，被限流 (429)：已重试 {retries} 次仍不行，请稍后再试，或检查账户额度。{said}",
                           "en": "Too many requests, rate limited (429): still failing after retrying ({retries}×); try "
                                 "again later or check your account's quota.{said}"},
    "llm.err.again": {"match": "no", "zh": "已重试 {n} 次仍失败，", "en": "still failing after retrying ({n}×); "},
    "llm.err.server": {"match": "no", "zh": "模型服务器出错 ({status})：{again}请稍后再试。{said}",
                       "en": "The model server failed ({status}): {again}try again later.{said}"},
    "llm.err.no_reason": {"match": "no", "zh": "服务器没有说明原因", "en": "the server gave no reason"},
    "llm.err.bad_request": {"match": "no", "zh": "请求被服务器拒绝 ({status})：{message}",
                            "en": "The server rejected the request ({status}): {message}"},
    "llm.err.unexpected": {"match": "no", "zh": "服务器返回了意外的状态 ({status})：请检查 base URL {where}。{said}",
                           "en": "The server answered with an unexpected status ({status}): check the base URL "
                                 "{where}.{said}"},
    "llm.err.redirect": {"match": "no", "zh": "服务器要求重定向 ({status}) 到 {location}：请把 base URL 改成新的地址。",
                         "en": "The server redirects ({status}) to {location}: change the base URL to the new "
                               "address."},
    "llm.err.cut.timeout": {"match": "no", "zh": "读取超时（{s} 秒没有新数据）",
                            "en": "Read timed out (no new data for {s} s)"},
    "llm.err.cut.network": {"match": "no", "zh": "网络中断", "en": "Connection lost"},
    "llm.err.cut": {"match": "no", "zh": "{lead}：模型输出中途断开，已收到 {got} 个字符，本次回复不完整，可以重试。(stream cut: {detail})",
                    "en": "{lead}: the model's output stopped midway after {got} characters; this reply is "
                          "incomplete, you can retry. (stream cut: {detail})"},
    "llm.err.not_chat.json": {"match": "no", "zh": "是 JSON 但不是聊天补全", "en": "JSON, but not a chat completion"},
    "llm.err.not_chat.text": {"match": "no", "zh": "不是 SSE 也不是 JSON", "en": "neither SSE nor JSON"},
    "llm.err.not_chat.empty": {"match": "no", "zh": "（空）", "en": "(empty)"},
    "llm.err.not_chat": {"match": "no", "zh": "服务器的回答不是聊天补全格式（{what}）：{where} 可能不是 OpenAI 兼容接口"
                                              "（是否少了 /v1？是否被代理或登录页拦截？）。开头是：{snippet}",
                         "en": "The server's answer is not a chat completion ({what}): {where} may not be an "
                               "OpenAI-compatible endpoint (is /v1 missing? is a proxy or a login page in the way?). "
                               "It starts with: {snippet}"},
    "llm.err.chunk_not_json": {"match": "no", "zh": "流式数据里有一段不是 JSON：{snippet}",
                               "en": "A piece of the streamed data is not JSON: {snippet}"},
    "llm.err.mid_stream": {"match": "no", "zh": "模型服务器在输出途中报错：{message}",
                           "en": "The model server reported an error while answering: {message}"},
    "llm.err.server_said": {"match": "no", "zh": "模型服务器报错：{message}",
                            "en": "The model server reported an error: {message}"},
    "llm.err.empty.why": {"match": "no", "zh": "（finish_reason: {reason}）", "en": " (finish_reason: {reason})"},
    "llm.err.empty": {"match": "no", "zh": "服务器返回了空回复{why}：没有文字，也没有工具调用。可能是模型不支持工具调用或模板出错、"
                                           "输出上限太小，可以换用纯文字演出或检查服务器日志",
                      "en": "The server returned an empty reply{why}: no text and no tool call. The model may not "
                            "support tool calls, its template may be broken or the output limit too small; switch to "
                            "prose-only play or check the server's log"},
    "llm.err.config": {"match": "no", "zh": "服务器不接受这个请求{code}：{hint}。服务器说：{said}",
                       "en": "The server does not accept this request{code}: {hint}. The server said: {said}"},
    "llm.err.hint.jinja": {"match": "no", "zh": "请用 --jinja 参数启动 llama.cpp 服务器（llama-server --jinja …），或在服务商设置里关闭工具调用",
                           "en": "start the llama.cpp server with --jinja (llama-server --jinja …), or turn tools off "
                                 "for this provider"},
    "llm.err.hint.tools": {"match": "no", "zh": "这个服务器或模型不接受工具调用：请在服务商设置里关闭工具（改用纯文字演出）",
                           "en": "this server or model rejects tool calls: turn tools off for this provider (prose-only "
                                 "play)"},
    "llm.err.hint.argument": {"match": "no", "zh": "服务器不认识请求里的某个参数：请在服务商设置里去掉它（额外请求体或采样参数）",
                              "en": "the server rejects a field of the request: remove it from this provider's "
                                    "settings (extra body or sampling)"},
    "llm.err.context": {"match": "no", "zh": "提示词超出了模型的上下文{code}：{window}。{hint}。服务器说：{said}",
                        "en": "The prompt is longer than the model's context{code}: {window}. {hint}. The server said: "
                              "{said}"},
    "llm.err.ctx.theirs": {"match": "no", "zh": "服务器的上下文窗口是 {n} tokens", "en": "the server's window is {n} tokens"},
    "llm.err.ctx.ours": {"match": "no", "zh": "梨园按 {n} tokens 计算", "en": "Liyuan counts with {n} tokens"},
    "llm.err.ctx.both": {"match": "no", "zh": "{theirs}；{ours}", "en": "{theirs}; {ours}"},
    "llm.err.ctx.unknown": {"match": "no", "zh": "服务器没有说明窗口大小", "en": "the server did not say its window"},
    "llm.err.ctx.set": {"match": "no", "zh": "把服务商设置里的上下文窗口改成 {n}，或用更大的上下文启动服务器",
                        "en": "Set this provider's context window to {n}, or start the server with a larger context"},
    "llm.err.ctx.shorten": {"match": "no", "zh": "缩短对话或调大服务器的上下文",
                            "en": "Shorten the chat or start the server with a larger context"},
    # the provider's connection test in Settings (core/settings.test_connection)
    "llm.test.ok": {"match": "no", "zh": "连接成功 · {ms} ms · {model}", "en": "Connected · {ms} ms · {model}"},
    "llm.test.failed": {"match": "no", "zh": "连接测试失败：{error}", "en": "Connection test failed: {error}"},
    "llm.review.failed": {"match": "no", "zh": "审稿调用失败：{error}", "en": "The review call failed: {error}"},
    # the replay model (offline demo) ran out of recorded answers (core/llm/replay.py)
    "llm.err.replay.actor": {"match": "no", "zh": "演员（actor）", "en": "actor"},
    "llm.err.replay.scribe": {"match": "no", "zh": "记录员（scribe/summary）", "en": "scribe/summary"},
    "llm.err.replay_exhausted": {"match": "no", "zh": "回放脚本已播完：{what}的 {total} 条录制回复都已用完，第 {n} 次调用没有可回放的内容。"
                                                      "回放模型只能重演录好的对话。",
                                 "en": "The replay script is used up: all {total} recorded {what} replies have been "
                                       "played, call {n} has nothing to replay. The replay model can only replay a "
                                       "recorded chat."},
    # -- a32demo: the opening's title as a reader sees it (core/cards/st_chat.py opening_title; the window's
    #    conversation and `liyuan chat` show it in the reader's language, the model is sent the stored header)
    "opening.title": {"match": "no", "zh": "开场 · {name}", "en": "Opening · {name}"},
    # a30loop (issue 30): a small local model's looping reply sealed with the prose before the loop (core/beat/loop.py)
    "beat.cut_repeat_sealed": {"zh": "回复开始重复自己（{what}），已提前停下：重复的尾巴已剪掉，前面的正文已收笔。",
                               "en": "The reply started repeating itself ({what}) and was stopped: the repeated tail "
                                     "was cut and the prose before it sealed."},
    # -- a32plain: engine texts that used to be raised as plain Chinese and found again by their wording (issue 32)
    "cardfile.label.image": {"zh": "图片", "en": "Image"},
    "cardfile.label.export_image": {"zh": "导出用的图片", "en": "The image for the export"},
    "persona.need_name": {"zh": "人设需要名字", "en": "A persona needs a name"},
    "persona.file_damaged": {"zh": "人设文件 {file} 损坏（{kind}），已按空的人设列表打开{where}",
                             "en": "The persona file {file} is damaged ({kind}); it opened as an empty persona list{where}"},
    "persona.damaged.fields": {"zh": "字段不对", "en": "wrong fields"},
    "persona.damaged.json": {"zh": "不是有效的 JSON", "en": "not valid JSON"},
    "persona.moved_aside": {"zh": "，原文件已改名为 {name}", "en": "; the file was renamed to {name}"},
    "stchat.default_name": {"zh": "聊天记录", "en": "Chat log"},
    "stchat.message_label": {"zh": "{name} 第 {n} 条消息", "en": "{name}, message {n}"},
    # a session file that cannot be opened or was repaired (core/session/tree.py)
    "session.cannot_read": {"zh": "无法读取会话文件 {path}：{error}", "en": "Cannot read the session file {path}: {error}"},
    "session.no_header_line": {"zh": "{path} 不是梨园会话文件（缺少 header）",
                               "en": "{path} is not a Liyuan session file (no header)"},
    "session.header_unfixable": {"zh": "会话文件缺少开头记录，也无法修复：{error}",
                                 "en": "The session file has no header record and cannot be repaired: {error}"},
    "session.was_empty": {"zh": "是空的", "en": " was empty"},
    "session.no_header": {"zh": "缺少开头记录（原文件另存为 .damaged 副本）",
                          "en": " had no header record (the old file is kept as a .damaged copy)"},
    "session.header_rebuilt": {"zh": "{file}{what}：已按对话文件夹和角色卡重建开头记录",
                               "en": "{file}{what}: its header was rebuilt from the chat folder and the card"},
    "session.torn_last": {"zh": "最后一行不完整（上次写入时中断）", "en": "the last line is incomplete (the last write was cut)"},
    "session.bad_line": {"zh": "第 {n} 行损坏", "en": "line {n} is damaged"},
    "session.line_skipped": {"zh": "{file}：{where}，已跳过（{error}）", "en": "{file}: {where}; skipped ({error})"},
    "session.parent_after": {"zh": "{file}：{n} 条记录的上级记录写在它之后（上级链成环或被改乱），已断开并接到它前一条记录之后",
                             "en": "{file}: {n} records had their parent written after them (a cycle or a hand-edited "
                                   "file); each was attached after the record before it"},
    # the echo guard's lines when the model copied the user's own words (core/beat/loop.py, like the entries above)
    "beat.echo_retry.user": {"zh": "回复照抄了你这一拍的话，没有收笔：已提示模型重写，并调高温度重试一次",
                             "en": "The reply copied your words of this beat and was not sealed: the model was told to "
                                   "rewrite it and is tried once more at a higher temperature"},
    "beat.echo_gave_up.user": {"zh": "回复又一次照抄了你这一拍的话：本拍没有收笔，照抄的文字没有收进稿子。请点「重新生成」，或换一个更大的模型。",
                               "en": "The reply copied your words of this beat again: this beat is not sealed and the "
                                     "copied text was not kept. Click Regenerate, or use a larger model."},
    # the provider's tools switched off after beats without a tool call (core/provider_caps.py mark_tools_ignored)
    "caps.prose_only": {"match": "no", "zh": "连续 3 拍没有调用工具：改为纯文字演出", "en": "no tool call in 3 beats: prose only"},
    # finding a transcript entry, searching the library (core/chat/view.py find_entry, core/chat/search.py)
    "entry.empty_id": {"zh": "条目 id 是空的", "en": "The entry id is empty"},
    "entry.not_found": {"zh": "条目「{id}」找不到", "en": "No entry “{id}”"},
    "entry.ambiguous": {"zh": "条目「{id}」不唯一", "en": "More than one entry starts with “{id}”"},
    "search.empty_query": {"zh": "搜索内容是空的", "en": "The search text is empty"},
    "search.no_card": {"zh": "找不到角色卡「{card}」", "en": "No card “{card}”"},
    # a provider named on the command line that does not exist (core/chat/build.py)
    "provider.configured": {"zh": "已配置的：{names}；", "en": "configured: {names}; "},
    "provider.unknown": {"zh": "没有名为 {name} 的服务商（{mine}内置预设：{presets}）",
                         "en": "There is no provider named {name} ({mine}built-in presets: {presets})"},
    # restoring an agent-mode checkpoint with its turn (core/chat/agent.py)
    "checkpoint.not_turn_end": {"zh": "检查点 {id} 不是某一轮的结尾（没有对应的对话轮次），只能恢复正文",
                                "en": "Checkpoint {id} does not end a turn (no chat turn belongs to it); only the text "
                                      "can be restored"},
    "checkpoint.first": {"zh": "检查点 {id} 之前没有检查点，正文无处可回",
                         "en": "There is no checkpoint before {id}, so the text has nothing to go back to"},
    # a status bar writing variables (core/chat/ledger.py)
    "frame.bad_scope": {"zh": "未知的变量作用域：{scope}", "en": "Unknown variable scope: {scope}"},
    "frame.vars_not_object": {"zh": "变量表必须是对象", "en": "The variables must be an object"},
    "frame.vars_not_on_branch": {"zh": "状态栏写入的变量不属于当前分支上的开场或回复（消息 {id}）",
                                 "en": "The status bar wrote variables for a message that is not an opening or reply on "
                                       "this branch (message {id})"},
    # the session file refused a write (core/chat/results.py BeatSaveError, SessionWriteError)
    "save.ledger_unwritten": {"zh": "会话文件写不进去：{error}。本拍的正文已经保存，场记记的账还在内存里，腾出空间或恢复写权限后可以重试保存。",
                              "en": "The session file cannot be written: {error}. This beat's text is saved; the "
                                    "scribe's ledger is still in memory. Free some space or restore write access, "
                                    "then retry saving."},
    "save.beat_unwritten": {"zh": "会话文件写不进去：{error}。本拍的内容还在内存里，腾出空间或恢复写权限后可以重试保存。",
                            "en": "The session file cannot be written: {error}. This beat is still in memory; free "
                                  "some space or restore write access, then retry saving."},
    "save.where": {"zh": "（{file}）", "en": " ({file})"},
    "save.nothing_played": {"zh": "会话文件写不进去：{error}{where}。这一拍没有开始；已经保存的内容都还在。",
                            "en": "The session file cannot be written: {error}{where}. This beat did not start; "
                                  "everything saved before is still there."},
    # -- end a32plain
    # -- lead: the chat's command refusals and the replay file's errors carry their key (issue 32)
    "chat.refuse.nothing_to_regenerate": {"zh": "还没有可以重来的一拍", "en": "There is no beat to regenerate yet"},
    "chat.refuse.edit_user_only": {"zh": "只能修改用户的话", "en": "Only your own words can be edited here"},
    "chat.refuse.reply_only": {"zh": "只能修改或续写角色的回复", "en": "Only a character's reply can be edited or continued"},
    "chat.refuse.reply_off_branch": {"zh": "这条回复不在当前显示的分支上", "en": "This reply is not on the branch on screen"},
    "chat.refuse.empty_reply": {"zh": "回复不能是空的", "en": "A reply cannot be empty"},
    "chat.refuse.nothing_to_continue": {"zh": "没有可以续写的回复（最后一条不是已收笔的回复）", "en": "There is no reply to continue (the last message is not a sealed reply)"},
    "chat.refuse.continue_opening": {"zh": "开场白不能续写", "en": "The opening cannot be continued"},
    "chat.refuse.delete_kind": {"zh": "只能删除你的话或角色的回复", "en": "Only your words or a character's reply can be deleted"},
    "chat.refuse.message_off_branch": {"zh": "这条消息不在当前显示的分支上", "en": "This message is not on the branch on screen"},
    "chat.refuse.no_stop_before": {"zh": "这条消息之前没有可以停下的地方", "en": "There is no earlier point to go back to before this message"},
    "chat.refuse.hide_kind": {"zh": "只能隐藏开场白、你的话或角色的回复", "en": "Only the opening, your words or a character's reply can be hidden"},
    "chat.refuse.no_unsealed": {"zh": "没有未收笔的稿件", "en": "There is no unsealed draft"},
    "chat.refuse.no_unanswered": {"zh": "没有未得到回应的话", "en": "There are no words waiting for a reply"},
    "chat.refuse.no_ledger_pending": {"zh": "没有等着记账的一拍", "en": "No beat is waiting for the scribe"},
    "chat.refuse.no_folder.regex": {"zh": "这张卡没有文件夹，无法记住正则脚本的设置", "en": "This card has no folder, so its regex script settings cannot be remembered"},
    "chat.refuse.no_folder.books": {"zh": "这张卡没有文件夹，无法记住链接的世界书", "en": "This card has no folder, so its linked world books cannot be remembered"},
    "chat.refuse.no_folder.trust": {"zh": "这张卡没有文件夹，无法记住信任设置", "en": "This card has no folder, so its trust setting cannot be remembered"},
    "replay.file.cannot_read": {"zh": "无法读取回放文件 {path}：{error}", "en": "Cannot read the replay file {path}: {error}"},
    "replay.file.bad_json": {"zh": "回放文件 {path} 不是有效的 JSON：{error}", "en": "The replay file {path} is not valid JSON: {error}"},
    "replay.file.not_replay": {"zh": "回放文件 {path} 格式不对：缺少 \"format\": \"liyuan-replay\"，这不是梨园的回放文件。",
                               "en": "The replay file {path} has the wrong format: no \"format\": \"liyuan-replay\"; it is not a Liyuan replay file."},
    "replay.file.root": {"zh": "(根): {msg}", "en": "(root): {msg}"},
    "replay.file.more": {"zh": "……还有 {n} 处", "en": "… {n} more"},
    "replay.file.bad_shape": {"zh": "回放文件 {path} 格式不对：{error}", "en": "The replay file {path} has the wrong format: {error}"},
    # -- lead: more errors that were raised as plain Chinese (issue 32)
    "secret.empty_key": {"zh": "API key 为空，没有保存。", "en": "The API key is empty; nothing was saved."},
    "provider.no_preset": {"zh": "没有名为 '{name}' 的预设服务商，可选：{presets}", "en": "There is no built-in provider '{name}'; choose one of: {presets}"},
    "settings.provider_twice": {"zh": "服务商名称重复：{name}", "en": "Two providers are named {name}"},
    "settings.profile_twice": {"zh": "连接配置名称重复", "en": "Two connection profiles have the same name"},
    "settings.no_profile": {"zh": "没有名为「{name}」的连接配置", "en": "There is no connection profile “{name}”"},
    "settings.profile_provider_missing": {"zh": "连接配置「{name}」用的服务商「{provider}」没有配置",
                                         "en": "The connection profile “{name}” uses the provider “{provider}”, which is not configured"},
    "sampling.bad_pair": {"zh": "采样参数写成 KEY=VALUE，KEY 是 {fields} 之一：{pair}",
                          "en": "Write sampling settings as KEY=VALUE, KEY one of {fields}: {pair}"},
    "sampling.invalid": {"zh": "采样参数不对：{where}", "en": "Bad sampling settings: {where}"},
    "checkpoint.object_missing": {"zh": "对象 {hash} 不在 {folder}", "en": "Object {hash} is not in {folder}"},
    "checkpoint.object_damaged": {"zh": "对象 {hash} 已损坏（内容与哈希不符）", "en": "Object {hash} is damaged (its content does not match its hash)"},
    "prose_import.named": {"zh": "「{name}」", "en": "“{name}”"},
    "prose_import.the_file": {"zh": "文件", "en": "The file"},
    "prose_import.not_text": {"zh": "{label}不是可读的文本（试过 UTF-8 和 GB18030），没有导入任何内容。请另存为 UTF-8 文本再导入。",
                              "en": "{label} is not readable text (tried UTF-8 and GB18030); nothing was imported. Save it as UTF-8 text and import it again."},
    "prose_import.cannot_read": {"zh": "读不了「{name}」：{error}", "en": "Cannot read “{name}”: {error}"},
    "prose_import.not_folder": {"zh": "「{path}」不是文件夹。", "en": "“{path}” is not a folder."},
    "paths.no_sample_cards": {"zh": "找不到随附的示例角色卡（cards/）", "en": "The bundled sample cards (cards/) are missing"},
    "caps.no_provider": {"zh": "没有名为「{name}」的服务商", "en": "There is no provider “{name}”"},
    "caps.not_settable": {"zh": "不能手动设置的能力：{field}", "en": "This capability cannot be set by hand: {field}"},
    # a32misc: the roster said for a reader in another language than Chinese (core/ledger/wording.py
    # roster_in_words; Chinese readers see format_roster's text, these zh texts are its shapes)
    "led.places": {"zh": "地点：{v}", "en": "Places: {v}"},
    "led.first_seen": {"zh": "{names}（{t}）", "en": "{names} — first seen {t}"},
    # a32keys (issue 32): the last errors raised as plain Chinese, and notes that reached the reader as plain Chinese
    # a field that must not be blank (core/llm/providers.py, profiles.py validators: the provider form, the CLI)
    "field.required": {"zh": "不能为空", "en": "Required"},
    "provider.bad_base_url": {"zh": "base_url 必须以 http:// 或 https:// 开头",
                              "en": "The base URL must start with http:// or https://"},
    # the keyring refused a key (core/secrets.py keyring_set)
    "secret.keyring_refused": {"zh": "无法把 {name} 的 API key 存进系统钥匙串（{error}）：可以改用环境变量提供密钥。",
                               "en": "Could not store the API key of {name} in the system keyring ({error}): provide "
                                     "the key in an environment variable instead."},
    # an InitVar / JSONPatch body that does not parse (core/ledger/mvu/initvar.py parse_data)
    "mvu.parse.empty": {"zh": "空内容", "en": "the body is empty"},
    "mvu.parse.failed": {"zh": "无法解析", "en": "it cannot be parsed"},
    # the MVU variable tree could not be read when the chat opened (core/chat/context.py)
    "mvu.initvar_failed": {"zh": "[MVU] 读取初始变量失败：{error}",
                           "en": "[MVU] Reading the initial variables failed: {error}. The scribe keeps no variables "
                                 "in this chat until the card's [InitVar] entry is fixed."},
    # a pattern the linear-time engine refuses (core/linear_regex.py; search, the find bar, the model's grep)
    "regex.re2_refused": {"zh": "线性时间正则引擎（RE2）不支持：{detail}",
                          "en": "The linear-time regex engine (RE2) cannot run this: {detail}"},
    "regex.python_only": {"zh": "正则里用了{what}，这类写法可能让搜索卡死，不支持（{error}）",
                          "en": "The pattern uses {what}, which can make a search hang; rewrite it without it "
                                "({error})"},
    "regex.what.lookahead": {"zh": "前向查找 (?=…) / (?!…)", "en": "lookahead (?=…) / (?!…)"},
    "regex.what.lookbehind": {"zh": "后向查找 (?<=…) / (?<!…)", "en": "lookbehind (?<=…) / (?<!…)"},
    "regex.what.backref": {"zh": "反向引用 \\1 / (?P=name)", "en": "a backreference \\1 / (?P=name)"},
    "regex.what.conditional": {"zh": "条件分组 (?(1)…)", "en": "a conditional group (?(1)…)"},
    "regex.what.atomic": {"zh": "原子分组 (?>…) / 占有量词 *+", "en": "an atomic group (?>…) / a possessive quantifier *+"},
    # Chat.edit_summary with an empty text (core/memory/compaction.py)
    "summary.empty": {"zh": "摘要不能为空", "en": "The summary is empty: write the summary text"},
    # the calls behind a reply asked for where there were none (core/prompt/inspect.py; the inspector, liyuan inspect)
    "calls.reply_none": {"zh": "这条回复没有模型调用记录（导入的或开场）",
                         "en": "This reply has no record of model calls (it was imported, or it is the greeting)"},
    "calls.none": {"zh": "这一项没有模型调用记录", "en": "This item has no record of model calls"},
    # undo with nothing to undo (core/session/branches.py undo_target)
    "undo.nothing": {"zh": "没有可以撤销的一拍", "en": "There is no beat to undo"},
    # a codex entry's name (core/story/codex.py)
    "codex.bad_name": {"zh": "名字要是一行非空文字", "en": "The name must be one line of text, not empty"},
    # the outline binder's refusals (core/story/outline_tree.py, core/chat/writing_room.py)
    "outline.none": {"zh": "这一局还没有大纲（大纲.md）。", "en": "This story has no outline yet: write one in the Outline tab first."},
    "outline.no_volume": {"zh": "大纲里没有卷「{ref}」。", "en": "The outline has no volume “{ref}”."},
    "outline.no_volume_n": {"zh": "大纲里没有第 {n} 卷（共 {total} 卷）。",
                            "en": "The outline has no volume {n} (it has {total})."},
    "outline.what.title": {"zh": "标题", "en": "The title"},
    "outline.what.beat": {"zh": "情节点", "en": "The plot point"},
    "outline.blank": {"zh": "{what}不能是空的。", "en": "{what} cannot be empty."},
    "outline.one_line": {"zh": "{what}只能是一行。", "en": "{what} must be a single line."},
    "outline.too_long": {"zh": "{what}最多 {max} 个字符。", "en": "{what} can have at most {max} characters."},
    "outline.negative_position": {"zh": "位置不能是负数。", "en": "The position cannot be negative."},
    "outline.bad_status": {"zh": "状态只能是 {statuses}，不是「{status}」。",
                           "en": "The status must be one of {statuses}, not “{status}”."},
    "outline.negative_target": {"zh": "目标字数不能是负数。", "en": "The target length cannot be negative."},
    "outline.no_beat": {"zh": "「{chapter}」没有第 {n} 个情节点（共 {total} 个）。",
                        "en": "“{chapter}” has no plot point {n} (it has {total})."},
    "outline.unnamed_volume": {"zh": "未分卷的章节没有卷标题，不能整卷移动；先给它起个卷名。",
                               "en": "The chapters outside any volume have no volume heading, so they cannot move as "
                                     "a volume; give them a volume name first."},
    # the scribe could not read the chapter a turn changed (core/chat/turn.py _chapter_for_scribe)
    "scribe.chapter_unread": {"zh": "场记没有读到章节 {file}：{error}",
                              "en": "The scribe could not read the chapter {file} and skipped it: {error}"},
    # a text the engine has in both languages already (a model-facing refusal's ``message`` and ``en``; ``:.0``
    # prints nothing, so each language shows its own text)
    "text.both": {"zh": "{zh}{en:.0}", "en": "{en}{zh:.0}"},
    # a macro that changes between chats or beats, met in the system prompt (core/prompt/presets/prompter.py)
    "preset.macro.random": {"zh": "{where}：{{{{{name}}}}} 在系统提示里每个对话只抽一次（固定）",
                            "en": "{where}: {{{{{name}}}}} in the system prompt is drawn once per chat (fixed)"},
    "preset.macro.chat_ref": {"zh": "{where}：{{{{{name}}}}} 随对话变化，系统提示里展开为空（要逐字节稳定）",
                              "en": "{where}: {{{{{name}}}}} changes with the chat, so it is empty in the system prompt "
                                    "(which must stay byte-stable); move it to a prompt sent in the chat"},
    "preset.macro.time": {"zh": "{where}：{{{{{name}}}}} 是时间宏，系统提示里按对话开始的时间展开一次（固定）",
                          "en": "{where}: {{{{{name}}}}} is a time macro; in the system prompt it shows the time the "
                                "chat began (fixed)"},
    "preset.where.prompt": {"zh": "提示词", "en": "a prompt"},
    "preset.where.persona": {"zh": "用户的角色", "en": "the user's persona"},
    # the prompt manager's note on a prompt that is not sent (core/prompt/presets/manager.py)
    "prompts.note.unlisted": {"zh": "不在当前使用的顺序表里", "en": "Not in the prompt order in use"},
    "prompts.note.duplicate": {"zh": "顺序表里重复出现，只用第一次",
                               "en": "Listed more than once in the order: only the first is used"},
    # a list of problems joined with the reader's semicolon (joined_semi below)
    "join.one": {"zh": "{a}", "en": "{a}"},
    "join.semi": {"zh": "{a}；{b}", "en": "{a}; {b}"},
    # story threads (whole clauses that may hold commas): 「、」 as in any Chinese list, "; " in English (joined_clauses)
    "join.clauses": {"zh": "{a}、{b}", "en": "{a}; {b}"},
    # a list cut after its first items (core/migrate/apply.py: a group's import notes)
    "join.more": {"zh": "{a}……", "en": "{a}…"},
    # beat lines without a key before (core/beat/loop.py, core/chat/facade.py seal_as_is)
    "beat.no_prose": {"zh": "模型没有写任何正文就结束了", "en": "The model ended without writing any prose: regenerate, or "
                                                     "continue the beat"},
    "beat.sealed_as_is": {"zh": "按现稿收笔", "en": "Sealed as is"},
    # the review model's answer needed repair or had unusable items (core/chat/review.py; liyuan story review)
    "review.repaired": {"zh": "审稿输出不是严格的 JSON，已自动修复后使用",
                        "en": "The review was not strict JSON; it was repaired and used"},
    "review.no_findings": {"zh": "审稿输出里没有 findings 列表", "en": "The review has no findings list; run it again"},
    "review.item_incomplete": {"zh": "审稿输出里有一条缺 kind 或 note，已略过",
                               "en": "A finding without kind or note was skipped"},
    "review.quote_missing": {"zh": "审稿引文在本章里没找到：「{quote}」",
                             "en": "A quoted passage was not found in this chapter: “{quote}”"},
    # what a damaged settings.json lost (core/settings.py _salvage, _describe_errors), inside settings.invalid
    "settings.loc.top": {"zh": "（顶层）", "en": "(top level)"},
    "field.error": {"zh": "{loc}: {msg}", "en": "{loc}: {msg}"},
    # a validator's catalog message inside pydantic's complaint (validation_reason below): pydantic's prefix kept in
    # Chinese as it always read, the reason alone in English
    "pydantic.value_error": {"zh": "Value error, {error}", "en": "{error}"},
    "settings.more": {"zh": "……另有 {n} 处", "en": "… {n} more"},
    "settings.providers_not_list": {"zh": "providers: 不是列表", "en": "providers: not a list"},
    "settings.provider_dropped": {"zh": "providers.{i}（{what}）", "en": "providers.{i} ({what})"},
    "settings.provider_dup": {"zh": "providers.{i}: 名称重复 {name}", "en": "providers.{i}: the name {name} is used twice"},
    # the actions a running beat refuses that had no key (core/chat/facade.py Chat._idle; chat.busy's {what})
    "act.删除消息": {"zh": "删除消息", "en": "delete a message"},
    "act.隐藏消息": {"zh": "隐藏消息", "en": "hide a message"},
    "act.切换演出方式": {"zh": "切换演出方式", "en": "switch between tool play and prose-only play"},
    "act.修改伏笔": {"zh": "修改伏笔", "en": "change a plot thread"},
    # a beat whose save failed finishes once the ledger is caught up (core/chat/pipeline.py after_turn late_message)
    "beat.ledger_late": {"zh": "补记账", "en": "Ledger updated"},
    # where API keys are kept (core/secrets.py storage_status; the settings dialog's key status tooltip)
    "secret.keyring_unusable": {"zh": "无法使用系统钥匙串（{error}）", "en": "The system keyring cannot be used ({error})"},
    "secret.keyring_none": {"zh": "本机没有可用的系统钥匙串", "en": "This computer has no usable system keyring"},
    "secret.in_file": {"zh": "{why}：密钥保存在本机文件 {where} 里（只有你的账户能读，不在系统钥匙串中）；环境变量仍然优先。",
                       "en": "{why}: keys are kept in the local file {where} (readable by your account only, not in "
                             "the system keyring); environment variables still come first."},
    "secret.in_keyring": {"zh": "密钥会保存在系统钥匙串（{name}）里，不会写进设置文件。",
                          "en": "Keys are kept in the system keyring ({name}), never in the settings file."},
    # an ERA block that was not run (core/ledger/mvu/era.py parse_era_blocks; the scribe's warnings)
    "mvu.era.too_big": {"zh": "<{tag}> 超过 {kb} KB，没有执行", "en": "<{tag}> is over {kb} KB; not run"},
    "mvu.era.not_run": {"zh": "<{tag}> {problem}，没有执行", "en": "<{tag}> {problem}; not run"},
    "mvu.era.bad_json": {"zh": "JSON 无法解析", "en": "its JSON cannot be parsed"},
    # the scribe wrote one sentence for both time and location (core/ledger/state.py apply_patch), like led.warn.*
    "led.warn.same_line": {"zh": "{key} 与 {other} 写成了同一句话已拒收（{value}）——time 写时间，location 写地点。",
                           "en": "{key} and {other} were the same sentence and were refused ({value}): time holds the "
                                 "time, location the place."},
    # where a template is and why it failed (core/macros/ejs.py, core/chat/templates.py; ejs.failed, the inspector)
    "tpl.where.card_system": {"zh": "卡作者的系统提示", "en": "the card's system prompt"},
    "tpl.where.card_post_history": {"zh": "卡作者的补充要求", "en": "the card's post-history instructions"},
    "tpl.where.preset": {"zh": "预设「{name}」", "en": "preset prompt “{name}”"},
    "tpl.where.message": {"zh": "第 {n} 条消息", "en": "message {n}"},
    "ejs.label": {"zh": "模板「{words}」", "en": "Template “{words}”"},
    "ejs.no_engine": {"zh": "模板引擎无法启动（{error}）", "en": "the template engine cannot start ({error})"},
    "ejs.unavailable": {"zh": "模板引擎不可用", "en": "the template engine is not available"},
    "ejs.timeout": {"zh": "超时（超过 {seconds} 秒）", "en": "timed out after {seconds} s"},
    "ejs.unfinished": {"zh": "模板没有执行完（等待的操作没有完成）",
                       "en": "the template did not finish (something it waited for never completed)"},
    "ejs.budget_spent": {"zh": "本拍模板用时已满（{seconds} 秒），没有执行",
                         "en": "this beat's time for templates ({seconds} s) was used up; not run"},
    # a card's panel declarations that were skipped (core/ledger/panels.py panels_from_card; not shown yet)
    "panels.not_list": {"zh": "extensions.liyuan.panels 不是列表，已忽略", "en": "extensions.liyuan.panels is not a list; ignored"},
    "panels.bad": {"zh": "第 {n} 个面板格式不对，已跳过：{error}", "en": "Panel {n} is malformed and was skipped: {error}"},
    "panels.bad_id": {"zh": "第 {n} 个面板的 id 为空或重复（{id}），已跳过", "en": "Panel {n} has an empty or repeated id ({id}); skipped"},
    # -- end a32keys
    # lead (issue 32): the labels the app writes for its own checkpoints, in the story's language (StoryHistory.label)
    "cp.label.autosave": {"zh": "恢复前自动保存", "en": "Saved before restoring"},
    "cp.label.restored_to_id": {"zh": "恢复到检查点 {id}", "en": "Restored to checkpoint {id}"},
    "cp.label.restored_to": {"zh": "恢复到「{message}」", "en": "Restored to “{message}”"},
    "cp.label.undo_turn": {"zh": "撤销本轮「{message}」", "en": "Undid the turn “{message}”"},
    "cp.label.undo_restore": {"zh": "撤销恢复", "en": "Undid the restore"},
    "cp.label.imported": {"zh": "导入章节", "en": "Imported chapters"},
    "cp.label.imported_n": {"zh": "导入 {n} 章", "en": "Chapters imported: {n}"},
    "cp.label.rewrote": {"zh": "改写 {file}", "en": "Rewrote {file}"},
    "beat.quiet_after_tools": {"zh": "模型调用工具之后没有再说话：这一轮的改动已保存，只是没有回复。",
                               "en": "The model said nothing after its tool calls: this turn's changes are saved; there is just no reply."},
    "name.untitled": {"zh": "未命名", "en": "Untitled"},
    "name.group_chat": {"zh": "群聊", "en": "Group chat"},
    "preview.no_card_file": {"zh": "找不到角色卡文件：{path}", "en": "Card file not found: {path}"},
    "cp.label.from_roleplay": {"zh": "从扮演对话导入 {n} 章", "en": "Chapters imported from the role-play chat: {n}"},
    # a30 (issue 30): a small local model's repeated clause and its reply cut by the output cap (core/beat/loop.py)
    "beat.repeat.clause": {"zh": "同一个短句出现了 3 次", "en": "the same clause 3 times"},
    "beat.cut_length_sealed": {"zh": "回复到了输出上限被截断：没写完的半句已剪掉，前面完整的正文已收笔。",
                               "en": "The reply reached the output limit and was cut: the unfinished sentence was "
                                     "dropped and the complete prose before it sealed."},
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
        """The text in ``lang``: "zh", "en", or a translator's language (``core/catalog_files.py``; a key it lacks
        in English)."""
        return _format(self.key, lang, self.params)

    def __reduce__(self) -> tuple[Callable[[str, dict[str, Any]], Msg], tuple[str, dict[str, Any]]]:  # pickles as its Chinese text plus the key (for worker processes)
        return (_rebuild, (self.key, self.params))


def _rebuild(key: str, params: dict[str, Any]) -> Msg:
    return Msg(key, **params)


def _format(key: str, lang: str, params: dict[str, Any]) -> str:
    entry = CATALOG.get(key)
    if entry is None:
        template = key
    elif lang not in LANGUAGES and lang not in entry:
        template = other_language_text(key, entry, lang)
    else:
        template = entry.get(lang) or entry["zh"]
    if not params:
        return template
    shown = {k: _shown(v, lang) for k, v in params.items()}
    try:
        return template.format(**shown)
    except (KeyError, IndexError, ValueError):
        return template


def other_language_text(key: str, entry: dict[str, str], lang: str) -> str:
    """``key``'s text in a language the dicts do not hold (``ja``…): a translator's compiled catalog
    (``core/catalog_files.py``), else the English text (else the Chinese). Used by :func:`render` and the window's
    ``tr``."""
    from .catalog_files import lookup  # only for a translator's language: zh/en never read catalog files

    english = entry.get("en")
    found = lookup(key, english, lang)
    if found:
        return found
    return english if english is not None else entry.get("zh") or key  # "" stays empty (left out on purpose)


def _shown(value: Any, lang: str) -> str:
    """A parameter as text in ``lang``: a list or tuple joined with the language's list separator (「、」 / ", "),
    each item shown; a Msg (or an exception carrying one) rendered; a plain ``str`` as it is — a parameter is a
    value (a name, a file, story text, a reason the model was told), never matched back to a key (issue 32)."""
    if isinstance(value, (list, tuple)):
        sep = _format("cli.sep.list", lang, {})  # a translator's language too (other_language_text)
        return sep.join(_shown(v, lang) for v in value)  # list items are values (titles, names, files)
    return render(value, lang)


def message(key: str, /, **params: Any) -> Msg:
    """A catalog message (see :class:`Msg`). Unknown keys are allowed (they render as the key)."""
    return Msg(key, **params)


def action(verb: str) -> Msg | str:
    """The action named by its Chinese verb (``"切换分支"``) as a message, when the catalog knows it."""
    return Msg("act." + verb) if "act." + verb in CATALOG else verb


def joined_semi(parts: Sequence[Any], key: str = "join.semi") -> Msg:
    """``parts`` joined with the reader's semicolon (「；」 in Chinese, "; " in English) as one message: its Chinese
    text is ``"；".join(str(p) for p in parts)`` byte for byte. Each part is shown like any parameter (a Msg, or an
    exception carrying one, rendered in the reader's language; other text as it is). ``""`` for no parts. ``key``:
    the catalog's joining entry (``{a}`` and ``{b}``)."""
    if len(parts) <= 1:
        return Msg("join.one", a=parts[0] if parts else "")
    half = len(parts) // 2  # a balanced tree: a long list nests log2(n) deep, never near the recursion limit
    return Msg(key, a=joined_semi(parts[:half], key), b=joined_semi(parts[half:], key))


def joined_clauses(parts: Sequence[Any]) -> Msg:
    """Items that are whole clauses and may hold commas (story threads) joined for the reader: 「、」 in Chinese
    (byte-identical with a plain Chinese list), "; " in English, where ", " would not show where one ends."""
    return joined_semi(parts, "join.clauses")


def validation_reason(err: Any) -> Any:
    """One complaint of a pydantic ``ValidationError.errors()`` as a shown value: when a validator raised a catalog
    message (``ValueError(message(…))``), a message whose Chinese is pydantic's own ``"Value error, <text>"`` (as
    such complaints always read) and whose English is the reason alone; otherwise pydantic's own ``msg`` (English,
    a plain value)."""
    raised = (err.get("ctx") or {}).get("error")
    if err.get("type") == "value_error" and isinstance(raised, BaseException) and raised.args \
            and isinstance(raised.args[0], Msg):
        return Msg("pydantic.value_error", error=raised.args[0])
    return err.get("msg", "")


def render(value: Any, lang: str) -> str:
    """``value`` as text in ``lang``: a Msg rendered; an exception whose first argument is a Msg rendered (other
    exceptions as their text); a plain ``str`` as it is — never matched back to a catalog key (module doc);
    anything else ``str(value)``."""
    if isinstance(value, Msg):
        return value.render(lang)
    if isinstance(value, BaseException):
        if value.args and isinstance(value.args[0], Msg):
            return value.args[0].render(lang)
        return str(value)
    return value if isinstance(value, str) else str(value)


# -- a message inside a pydantic model (issue 32) --------------------------------------------------------------------
def _keep_msg(value: Any) -> str:
    """A ``str`` field's validator that keeps a :class:`Msg` as it is (pydantic's ``str`` would copy it into a plain
    ``str`` and lose its key); any other str as given; anything else refused like pydantic's ``str``."""
    if isinstance(value, str):
        return value
    raise ValueError("expected a string")


def _msg_text() -> Any:
    from typing import Annotated

    from pydantic import PlainValidator

    return Annotated[str, PlainValidator(_keep_msg, json_schema_input_type=str)]


#: The type of an event or model field holding a user-facing engine message: a ``str`` that stays a :class:`Msg`
#: (its key and parameters carried to the front end, which renders it in its language — no reverse matching).
MsgText = _msg_text()
