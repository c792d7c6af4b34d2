"""UI strings, Chinese first with English available. ``tr(key)`` looks a key up in the current language;
``set_language("en")`` switches (the settings dialog persists the choice). Unknown keys fall back to Chinese,
then to the key itself, so a missing translation never breaks the window. A language beyond Chinese and English
comes from a translator's compiled gettext catalog (``core/catalog_files.py``), English for a key it lacks."""

from __future__ import annotations

from ...core.messages import CATALOG as _CORE_CATALOG
from ...core.messages import Msg, other_language_text
from ...core.messages import render as _render

_LANG = "zh"

STRINGS: dict[str, dict[str, str]] = {
    "app.title": {"zh": "梨园", "en": "Liyuan"},
    "send": {"zh": "发送", "en": "Send"},
    "stop": {"zh": "停止", "en": "Stop"},
    "regenerate": {"zh": "重来", "en": "Regenerate"},
    "input.placeholder": {"zh": "写下你这一拍的话……（Ctrl+Enter 发送）", "en": "Your words for this beat… (Ctrl+Enter to send)"},
    "cards": {"zh": "角色卡与对话", "en": "Cards and chats"},
    "import.card": {"zh": "导入角色卡…", "en": "Import card…"},
    "new.chat": {"zh": "新对话…", "en": "New chat…"},
    "settings": {"zh": "设置…", "en": "Settings…"},
    "draft": {"zh": "稿纸", "en": "Draft"},
    "ledger": {"zh": "账本", "en": "Ledger"},
    "replay.banner": {"zh": "回放模型 · 离线演示：模型的话来自录制，引擎的一切现算", "en": "Replay model · offline demo: the model's words are recorded, everything else is computed live"},
    "unsealed": {"zh": "本拍尚未收笔", "en": "This beat is not sealed"},
    "sealed": {"zh": "已收笔", "en": "Sealed"},
    "seal.as.is": {"zh": "按现稿收笔", "en": "Seal as is"},
    "continue": {"zh": "继续", "en": "Continue"},
    "recover.gaps": {"zh": "上次中断时有 {n} 拍回复没记上账", "en": "{n} replies lost their ledger update in a crash"},
    "recover.repair": {"zh": "补记账", "en": "Update ledger"},
    "recover.unanswered": {"zh": "这句话上次没有得到回应：「{text}」", "en": "This message got no reply last time: “{text}”"},
    "recover.resend": {"zh": "重发", "en": "Resend"},
    "recover.edit": {"zh": "改了再发", "en": "Edit"},
    "recover.drop": {"zh": "撤下", "en": "Drop"},
    "ask.title": {"zh": "岔口 · 由你拍板", "en": "Your call"},
    "ask.free": {"zh": "或者自己写一句……（回车发送）", "en": "Or write your own… (Enter to send)"},
    "ask.send": {"zh": "就这样", "en": "Answer"},
    "ask.stop": {"zh": "停止（把笔收回）", "en": "Stop (take the pen back)"},
    "welcome.title": {"zh": "欢迎来到梨园", "en": "Welcome to Liyuan"},
    "welcome.demo": {"zh": "玩离线演示", "en": "Play the offline demo"},
    "welcome.settings": {"zh": "设置模型", "en": "Set up a model"},
    "mode.roleplay": {"zh": "扮演", "en": "Role-play"},
    "mode.agent": {"zh": "写长篇（agent）", "en": "Long-form (agent)"},
    "save": {"zh": "保存", "en": "Save"},
    "edit": {"zh": "编辑", "en": "Edit"},
    "cancel": {"zh": "取消", "en": "Cancel"},
    # --- settings dialog (liyuan_desktop/ui/settings/settings.py) ---
    "settings.title": {"zh": "设置", "en": "Settings"},
    "settings.tab.models": {"zh": "模型服务", "en": "Models"},
    "settings.tab.persona": {"zh": "我的角色", "en": "Persona"},
    "settings.tab.appearance": {"zh": "语言与外观", "en": "Language and theme"},
    "settings.providers": {"zh": "服务商", "en": "Providers"},
    "settings.add": {"zh": "添加", "en": "Add"},
    "settings.remove": {"zh": "删除", "en": "Remove"},
    "settings.preset.custom": {"zh": "自定义 OpenAI 兼容", "en": "Custom OpenAI-compatible"},
    "settings.empty": {"zh": "还没有配置模型。\n在左下角选一个预设，点“添加”。\n\n不配置也可以先玩离线演示。",
                       "en": "No model configured yet.\nPick a preset at the bottom left and click Add.\n\nYou can play the offline demo without one."},
    "settings.current.mark": {"zh": "当前", "en": "current"},
    "settings.name": {"zh": "名称", "en": "Name"},
    "settings.base_url": {"zh": "Base URL", "en": "Base URL"},
    "settings.model": {"zh": "模型", "en": "Model"},
    "settings.scribe_model": {"zh": "场记模型", "en": "Scribe model"},
    "settings.scribe_model.placeholder": {"zh": "场记用的便宜模型（可选，留空则用上面的模型）",
                                          "en": "A cheaper model for the scribe (optional; empty = same model)"},
    "settings.context_window": {"zh": "上下文窗口", "en": "Context window"},
    # the provider's time limits (ui/settings/settings.py SettingsDialog._build_timeouts; core/llm/providers.py)
    "settings.timeouts": {"zh": "时限", "en": "Time limits"},
    "settings.timeout.connect": {"zh": "连接", "en": "Connect"},
    "settings.timeout.read": {"zh": "读取间隔", "en": "Between reads"},
    "settings.timeout.idle": {"zh": "无新内容", "en": "No new content"},
    "settings.timeout.total": {"zh": "单次调用总时限", "en": "Whole call"},
    "settings.timeout.rate": {"zh": "最低速度", "en": "Minimum rate"},
    "settings.timeout.rate.per": {"zh": "字 / 每", "en": "chars per"},
    "settings.timeout.seconds": {"zh": " 秒", "en": " s"},
    "settings.timeout.rate.off": {"zh": "不限", "en": "off"},
    "settings.timeouts.hint": {"zh": "超过任一时限，本次调用停止，已收到的文字留作未收笔的稿件。最低速度从收到第一个字起计算，0 为不限。",
                               "en": "When a limit runs out the call stops and what arrived stays as an unsealed draft. "
                                     "The minimum rate counts from the first character; 0 switches it off."},
    "settings.api_key_env": {"zh": "密钥环境变量", "en": "Key env variable"},
    "settings.api_key_env.placeholder": {"zh": "例如 DEEPSEEK_API_KEY（可选）", "en": "e.g. DEEPSEEK_API_KEY (optional)"},
    "settings.api_key": {"zh": "API 密钥", "en": "API key"},
    "settings.api_key.placeholder": {"zh": "粘贴密钥（不会写进设置文件）", "en": "Paste the key (never written to the settings file)"},
    "settings.key.save": {"zh": "保存密钥", "en": "Save key"},
    "settings.key.forget": {"zh": "清除", "en": "Forget"},
    "settings.key.status.keyring": {"zh": "已保存在系统钥匙串", "en": "Stored in the system keyring"},
    "settings.key.status.env": {"zh": "来自环境变量 {var}", "en": "From environment variable {var}"},
    "settings.key.status.session": {"zh": "只在本次运行中有效（没有存进钥匙串）", "en": "This run only (not in a keyring)"},
    "settings.key.status.none": {"zh": "未设置", "en": "Not set"},
    "settings.key.status.pending": {"zh": "已填写，点“保存密钥”或“保存”后生效", "en": "Entered; takes effect on Save"},
    "settings.key.status.file": {"zh": "已保存在本机文件（不在系统钥匙串中）", "en": "Stored in a file on this computer (not in the system keyring)"},
    "settings.key.nokeyring": {"zh": "本机没有可用的系统钥匙串：密钥保存在本机的一个文件里（只有你的账户能读，不在系统钥匙串中）；环境变量 {var} 仍然优先",
                               "en": "No system keyring on this machine: keys are stored in a file on this computer that only your account can read (not in the system keyring); the environment variable {var} still wins"},
    "settings.key.env.unnamed": {"zh": "（先在“密钥环境变量”一栏填一个变量名）", "en": "(name one in “Key env variable” first)"},
    "settings.active": {"zh": "设为当前模型", "en": "Use as the current model"},
    "settings.scribe_provider": {"zh": "场记服务商", "en": "Scribe provider"},
    "settings.scribe_provider.same": {"zh": "同当前模型", "en": "Same as the current model"},
    "settings.test": {"zh": "测试连接", "en": "Test connection"},
    "settings.testing": {"zh": "正在测试……", "en": "Testing…"},
    "settings.test.fix": {"zh": "请先改正上面的错误再测试。", "en": "Fix the errors above first."},
    "settings.err.required": {"zh": "不能为空", "en": "Required"},
    "settings.err.url": {"zh": "必须以 http:// 或 https:// 开头", "en": "Must start with http:// or https://"},
    "settings.err.url.host": {"zh": "地址里缺少主机名", "en": "The address has no host"},
    "settings.err.dup": {"zh": "这个名称已被另一个服务商使用", "en": "Another provider already has this name"},
    "settings.err.env": {"zh": "变量名只能包含英文字母、数字和下划线，且不能以数字开头",
                         "en": "Letters, digits and underscores only, not starting with a digit"},
    "settings.err.fix": {"zh": "有错误没有改正，设置没有保存。", "en": "There are errors; nothing was saved."},
    "settings.err.save": {"zh": "保存失败：{error}", "en": "Could not save: {error}"},
    "settings.persona.name": {"zh": "你的名字", "en": "Your name"},
    "settings.persona.name.placeholder": {"zh": "故事里别人怎么称呼你", "en": "What others call you in the story"},
    "settings.persona.description": {"zh": "你的设定", "en": "About you"},
    "settings.persona.description.placeholder": {"zh": "你在故事里是谁：身份、外貌、说话方式……",
                                                 "en": "Who you are in the story: role, looks, way of speaking…"},
    "settings.persona.hint": {"zh": "角色卡里的 {{user}} 会换成你的名字；你的设定会告诉模型你是谁。",
                              "en": "{{user}} in cards becomes your name; the description tells the model who you are."},
    "settings.language": {"zh": "界面语言", "en": "Language"},
    "settings.theme": {"zh": "主题", "en": "Theme"},
    "settings.theme.system": {"zh": "跟随系统", "en": "Follow the system"},
    "settings.theme.light": {"zh": "浅色", "en": "Light"},
    "settings.theme.dark": {"zh": "深色", "en": "Dark"},
    # --- conversation view (liyuan_desktop/ui/frames/conversation.py); "welcome.sub" is the English line under the intro ---
    "welcome.intro": {"zh": "和角色一起写故事：模型先在稿纸上写、改，满意了才收笔；世界的变化都记在账本上。",
                      "en": "Write stories with characters: the model drafts and revises on a page before it seals "
                            "each beat, and a ledger keeps track of the world."},
    "welcome.sub": {"zh": "Write stories with characters: the model drafts and revises before it seals each beat, "
                          "and a ledger keeps track of the world.",
                    "en": ""},
    "conv.you": {"zh": "你", "en": "You"},
    "conv.beat": {"zh": "第 {n} 拍", "en": "Beat {n}"},
    "conv.pending": {"zh": "正在写…", "en": "Writing…"},
    "conv.writing": {"zh": "{name}正在写…", "en": "{name} is writing…"},
    "conv.revised": {"zh": "已修订", "en": "Revised"},
    "conv.outcome.unsealed": {"zh": "未收笔", "en": "Not sealed"},
    "conv.outcome.stopped": {"zh": "已停止", "en": "Stopped"},
    "conv.outcome.error": {"zh": "调用出错", "en": "Call failed"},
    "conv.outcome.out_of_rounds": {"zh": "用满 20 次调用", "en": "Used all 20 calls"},
    "conv.older": {"zh": "向上滚动，载入更早的内容", "en": "Scroll up for earlier messages"},
    "conv.older.loading": {"zh": "正在载入更早的内容…", "en": "Loading earlier messages…"},
    # --- chapters and checkpoints of agent chats (liyuan_desktop/ui/writing/chapter_tree.py, checkpoint_timeline.py) ---
    "story.chapters": {"zh": "章节", "en": "Chapters"},
    "story.timeline": {"zh": "检查点", "en": "Checkpoints"},
    "story.title": {"zh": "正文", "en": "Story"},
    "story.not.agent": {"zh": "只有「写长篇（agent）」对话有正文文件。", "en": "Only long-form (agent) chats have chapter files."},
    "story.col.name": {"zh": "章节文件", "en": "Chapter file"},
    "story.col.size": {"zh": "字数", "en": "Size"},
    "story.size": {"zh": "{n} 字", "en": "{n} chars"},
    "story.new": {"zh": "新建", "en": "New"},
    "story.new.tip": {"zh": "在最后新建一章（编号接着最后一章）", "en": "Add a chapter at the end (next number)"},
    "story.insert": {"zh": "插入", "en": "Insert"},
    "story.insert.tip": {"zh": "在选中的章节后面插入一章（如 001a-标题.md，别的文件不改名）",
                         "en": "Insert a chapter after the selected one (e.g. 001a-title.md; no other file is renamed)"},
    "story.rename": {"zh": "改名", "en": "Rename"},
    "story.rename.tip": {"zh": "改标题（保留编号）；输入以 .md 结尾的完整文件名可以挪到别的位置",
                         "en": "Change the title (the number stays); a full name ending in .md moves the chapter"},
    "story.delete": {"zh": "删除", "en": "Delete"},
    "story.delete.tip": {"zh": "删除选中的章节（先记检查点，可以恢复）", "en": "Delete the chapter (a checkpoint first, so it can be restored)"},
    "story.up.tip": {"zh": "上移（和上一章交换编号）", "en": "Move up (swap numbers with the previous chapter)"},
    "story.down.tip": {"zh": "下移（和下一章交换编号）", "en": "Move down (swap numbers with the next chapter)"},
    "story.open": {"zh": "打开", "en": "Open"},
    "story.ask.title": {"zh": "新章节的标题：", "en": "Title of the new chapter:"},
    "story.ask.insert": {"zh": "插在「{name}」后面的新章节标题：", "en": "Title of the chapter to insert after “{name}”:"},
    "story.ask.rename": {"zh": "「{name}」的新标题（编号不变）；或者输入以 .md 结尾的完整文件名：",
                         "en": "New title for “{name}” (the number stays), or a full file name ending in .md:"},
    "story.confirm.delete": {"zh": "删除「{name}」？\n删除前会先记一个检查点，之后可以在「检查点」里恢复。",
                             "en": "Delete “{name}”?\nA checkpoint is made first, so it can be restored from Checkpoints."},
    "story.confirm.delete.unsaved": {"zh": "编辑器里还有没保存的修改，会一起丢掉。", "en": "The unsaved changes in the editor are lost too."},
    "story.confirm.renumber": {"zh": "两章之间排不下新文件名，要给 {n} 个文件重新编号。继续吗？（先记检查点，可以恢复）",
                               "en": "No name fits between the two chapters: {n} files will be renumbered. Continue? (a checkpoint is made first)"},
    "story.confirm.discard": {"zh": "「{name}」有没保存的修改。放弃这些修改吗？", "en": "“{name}” has unsaved changes. Discard them?"},
    "story.err.name": {"zh": "「{name}」不能当章节文件名：只能是正文目录里的 .md 文件名。", "en": "“{name}” is not a usable chapter file name."},
    "story.err.exists": {"zh": "已经有「{name}」了，换一个名字。", "en": "“{name}” already exists; pick another name."},
    "story.err.open": {"zh": "打不开「{name}」：{error}", "en": "Cannot open “{name}”: {error}"},
    "story.err.save": {"zh": "「{name}」没存上：{error}", "en": "“{name}” was not saved: {error}"},
    "story.err.restore": {"zh": "恢复没有完成：{error}", "en": "The restore did not finish: {error}"},
    "story.done.new": {"zh": "已新建 {name}", "en": "Created {name}"},
    "story.done.rename": {"zh": "已改名：{old} → {new}", "en": "Renamed {old} → {new}"},
    "story.done.delete": {"zh": "已删除 {name}（可在「检查点」里恢复）", "en": "Deleted {name} (restorable from Checkpoints)"},
    "story.done.move": {"zh": "已挪到 {name}", "en": "Moved to {name}"},
    "story.done.save": {"zh": "已保存 {name}，记了检查点", "en": "Saved {name} (checkpoint made)"},
    "story.editor.none": {"zh": "双击上面的章节打开", "en": "Double-click a chapter above to open it"},
    "story.editor.unsaved": {"zh": "（未保存）", "en": "(unsaved)"},
    "story.editor.reload": {"zh": "重新载入", "en": "Reload"},
    "story.editor.reloaded": {"zh": "文件在磁盘上被改过（agent 或恢复），已重新载入。", "en": "The file changed on disk (agent or restore) and was reloaded."},
    "story.editor.conflict": {"zh": "打开以后，这个文件在磁盘上被改过（agent 或恢复）。你的修改还没保存。",
                              "en": "The file changed on disk since you opened it (agent or restore). Your edits are not saved."},
    "story.editor.gone": {"zh": "「{name}」已经不在磁盘上了（被删除或改名）。", "en": "“{name}” is no longer on disk (deleted or renamed)."},
    "story.editor.overwrite": {"zh": "用编辑器里的文字覆盖「{name}」吗？（覆盖前的版本在检查点里）",
                               "en": "Overwrite “{name}” with the editor's text? (The version on disk is kept in the checkpoints.)"},
    "story.tl.time": {"zh": "时间", "en": "Time"},
    "story.tl.who": {"zh": "谁", "en": "Who"},
    "story.tl.message": {"zh": "说明", "en": "Message"},
    "story.tl.changed": {"zh": "改动", "en": "Changes"},
    "story.tl.aborted": {"zh": "（中途停下）", "en": "(stopped)"},
    "story.ch.modified": {"zh": "改", "en": "mod"},
    "story.ch.added": {"zh": "新", "en": "new"},
    "story.ch.removed": {"zh": "删", "en": "del"},
    "story.ch.renamed": {"zh": "改名", "en": "ren"},
    "story.ch.none": {"zh": "无改动", "en": "no change"},
    "story.diff.added": {"zh": "新增 {name}", "en": "Added {name}"},
    "story.diff.modified": {"zh": "修改 {name}", "en": "Modified {name}"},
    "story.diff.removed": {"zh": "删除 {name}", "en": "Removed {name}"},
    "story.diff.renamed": {"zh": "改名 {old} → {name}（内容不变）", "en": "Renamed {old} → {name} (same content)"},
    "story.diff.empty": {"zh": "（空文件）", "en": "(empty file)"},
    "story.diff.more": {"zh": "……还有 {n} 行没有显示", "en": "… {n} more lines not shown"},
    "story.diff.nochange": {"zh": "这个检查点没有改动文件。", "en": "This checkpoint changed no file."},
    "story.diff.error": {"zh": "读不出这个检查点的内容：{error}", "en": "Cannot read this checkpoint: {error}"},
    "story.restore.files": {"zh": "只恢复正文", "en": "Restore the files only"},
    "story.restore.files.tip": {"zh": "正文文件变回这个检查点的样子，对话不动", "en": "The chapter files become this checkpoint; the conversation stays"},
    "story.restore.turn": {"zh": "正文和对话一起回到这一轮之前", "en": "Files and conversation back to before this turn"},
    "story.restore.turn.tip": {"zh": "撤销本轮：正文回到这一轮之前，对话也回到你说这句话之前（只对 agent 的轮次）",
                               "en": "Undo this turn: files and conversation go back to before it (agent turns only)"},
    "story.restore.undo": {"zh": "撤销刚才的恢复", "en": "Undo that restore"},
    "story.plan.rewritten": {"zh": "· 改写：{names}", "en": "· rewritten: {names}"},
    "story.plan.removed": {"zh": "· 删除：{names}", "en": "· removed: {names}"},
    "story.plan.added": {"zh": "· 加回：{names}", "en": "· added back: {names}"},
    "story.plan.same": {"zh": "· 正文文件和现在一样，不会改动任何文件", "en": "· the files are already like that; nothing changes"},
    "story.confirm.files": {"zh": "把正文恢复到检查点「{message}」（{time}）时的样子：",
                            "en": "Make the chapter files as they were at checkpoint “{message}” ({time}):"},
    "story.confirm.files.talk": {"zh": "对话不动。", "en": "The conversation stays as it is."},
    "story.confirm.undo": {"zh": "恢复前会先把现在的正文记成检查点：时间线上紧挨在恢复之前的那个检查点就是现在的样子，恢复它就能撤销。",
                           "en": "The current files are recorded first: the checkpoint just before the restore is how things are now; restore it to undo."},
    "story.confirm.turn": {"zh": "撤销这一轮「{message}」（{time}）。正文回到这一轮之前：",
                           "en": "Undo the turn “{message}” ({time}). The files go back to before it:"},
    "story.confirm.turn.talk": {"zh": "对话也回到这一轮之前：你说的「{said}」和之后的回复不再显示（没有删除，仍留在对话记录里）。",
                                "en": "The conversation goes back to before this turn too: your “{said}” and what followed are no longer shown (kept in the chat file, not deleted)."},
    "story.confirm.undo.turn": {"zh": "恢复前会先把现在的正文记成检查点：恢复紧挨在前面的那个检查点，正文就回来；「撤销刚才的恢复」会把正文和对话一起拿回来。",
                                "en": "The current files are recorded first: restoring the checkpoint just before brings them back; “Undo that restore” brings back files and conversation."},
    "story.confirm.undo.files": {"zh": "撤销刚才的恢复：正文回到检查点「{message}」（{time}）：",
                                 "en": "Undo that restore: the files go back to checkpoint “{message}” ({time}):"},
    "story.confirm.undo.talk": {"zh": "对话也回到恢复之前的位置。", "en": "The conversation goes back to where it was, too."},
    "story.done.files": {"zh": "正文已恢复到「{message}」；对话没动。", "en": "Files restored to “{message}”; the conversation is unchanged."},
    "story.done.turn": {"zh": "已撤销「{message}」这一轮：正文和对话都回到了它之前。", "en": "Undid the turn “{message}”: files and conversation are back to before it."},
    "story.done.undo": {"zh": "已撤销刚才的恢复。", "en": "The restore was undone."},
    # --- branches, inspector, context meter, summaries (issue 7) ---
    "branch.prev": {"zh": "上一个版本", "en": "Previous version"},
    "branch.next": {"zh": "下一个版本", "en": "Next version"},
    "branch.edit": {"zh": "编辑", "en": "Edit"},
    "branch.edit.tip": {"zh": "改这句话：从这里长出一个新分支（原来的还在）", "en": "Edit: a new branch grows from here (the old one stays)"},
    "reply.edit": {"zh": "编辑", "en": "Edit"},  # the conversation page's 编辑 on a reply (ui.reply_actions)
    "reply.edit.tip": {"zh": "改这条回复：存为它的新版本（◀ ▶ 可以翻回原文）",
                       "en": "Edit this reply: saved as a new version of it (◀ ▶ reaches the old text)"},
    "branch.edit.title": {"zh": "改这句话", "en": "Edit your message"},
    "branch.edit.label": {"zh": "改好后从这里重新演（原来的分支还在，可以用 ◀ ▶ 切回去）：",
                          "en": "The story is played again from here (the old branch stays; ◀ ▶ switch back):"},
    "branch.demo": {"zh": "回放模型只能按录制的剧情演，不能改写或重来；接真模型的对话可以。",
                    "en": "The replay model can only play the recording; edits and regenerates need a real model."},
    "undo": {"zh": "撤销本轮", "en": "Undo turn"},
    "undo.done": {"zh": "已撤销最后一拍（没有删除，可在「分支」里找回）", "en": "Undid the last beat (nothing deleted; find it under Branches)"},
    "undo.agent": {"zh": "写长篇的对话在「检查点」里撤销一轮：正文和对话一起回去。", "en": "In a long-form chat, undo a turn in the checkpoint timeline: files and conversation go back together."},
    "undo.none": {"zh": "没有可以撤销的一拍。", "en": "No beat to undo."},
    "menu.chat": {"zh": "对话", "en": "Chat"},
    "menu.branches": {"zh": "分支", "en": "Branches"},
    "menu.summaries": {"zh": "前情提要…", "en": "Story so far…"},
    "menu.inspect": {"zh": "查看最近一拍的提示词…", "en": "Inspect the latest beat's prompt…"},
    "nav.tab": {"zh": "分支", "en": "Branches"},
    "nav.beat": {"zh": "第 {n} 拍", "en": "Beat {n}"},
    "nav.version": {"zh": "版本 {i}/{n}", "en": "version {i}/{n}"},
    "nav.replies": {"zh": "{n} 个回复", "en": "{n} replies"},
    "nav.fold": {"zh": "… {n} 拍 …（第 {a}–{b} 拍）", "en": "… {n} beats … (beats {a}–{b})"},
    "nav.summary": {"zh": "{nodes} 句话 · 当前分支 {shown} 拍 · {forks} 处改写分叉 · {swipes} 处重来",
                    "en": "{nodes} messages · {shown} beats shown · {forks} edit forks · {swipes} regenerated"},
    "nav.empty": {"zh": "还没有分支：说第一句话吧。", "en": "No branches yet: say something first."},
    "nav.refresh": {"zh": "刷新", "en": "Refresh"},
    "nav.hint": {"zh": "粗体是正在看的分支，● 是它的最后一拍。点一行切换到那里（只移动指针，什么都不删）。",
                 "en": "Bold: the branch shown; ●: its last beat. Click a row to switch there (only a pointer moves; nothing is deleted)."},
    "nav.switched": {"zh": "已切换分支", "en": "Switched branch"},
    "inspect.action": {"zh": "查看提示词", "en": "Inspect prompt"},
    "conv.copy": {"zh": "复制", "en": "Copy"},
    "scripts.action": {"zh": "允许这张卡的正则脚本（状态栏、美化）", "en": "Allow this card's regex scripts (status bars, styling)"},
    "scripts.on": {"zh": "已允许「{name}」的正则脚本", "en": "Regex scripts of “{name}” allowed"},
    "scripts.off": {"zh": "已停用「{name}」的正则脚本", "en": "Regex scripts of “{name}” switched off"},
    "conv.select_all": {"zh": "全选", "en": "Select all"},
    "inspect.title": {"zh": "查看提示词", "en": "Prompt inspector"},
    "inspect.round": {"zh": "第 {n} 次调用", "en": "Call {n}"},
    "inspect.scribe": {"zh": "场记", "en": "Scribe"},
    "inspect.tokens": {"zh": "输入 {p}（缓存 {c}）", "en": "in {p} (cached {c})"},
    "inspect.request": {"zh": "发出的请求", "en": "Request"},
    "inspect.messages": {"zh": "{n} 条消息", "en": "{n} messages"},
    "inspect.tools": {"zh": "工具", "en": "Tools"},
    "inspect.reply": {"zh": "模型的回复", "en": "Reply"},
    "inspect.reasoning": {"zh": "思考", "en": "Reasoning"},
    "inspect.content": {"zh": "正文输出", "en": "Content"},
    "inspect.result": {"zh": "结果", "en": "Result"},
    "inspect.error": {"zh": "出错", "en": "Error"},
    "inspect.usage": {"zh": "用量", "en": "Usage"},
    "inspect.ms": {"zh": "耗时", "en": "Time"},
    "inspect.copy": {"zh": "复制为 JSON", "en": "Copy as JSON"},
    "inspect.copied": {"zh": "已复制（{n} 字符）", "en": "Copied ({n} characters)"},
    "inspect.head": {"zh": "这一拍共 {n} 次模型调用 · 输入 {p} · 输出 {c} tokens", "en": "{n} model calls in this beat · {p} in · {c} out tokens"},
    "inspect.none": {"zh": "这一拍没有记录到模型调用。", "en": "No model calls recorded for this beat."},
    "inspect.unavailable": {"zh": "这个版本的引擎还不能列出一拍的模型调用。", "en": "This engine cannot list a beat's model calls yet."},
    "inspect.norequest": {"zh": "这一拍记录时引擎还没有保存请求原文，只有模型的回复。", "en": "This beat was recorded before the engine kept its requests; only the replies are here."},
    "inspect.nobeat": {"zh": "还没有可以查看的一拍。", "en": "No beat to inspect yet."},
    "inspect.templates": {"zh": "提示词模板（EJS / TavernHelper 宏）：{n} 处", "en": "Prompt templates (EJS / TavernHelper macros): {n}"},
    "inspect.template_empty": {"zh": "（输出为空，未发送）", "en": "(rendered nothing; not sent)"},
    "inspect.template_error": {"zh": "出错，未发送", "en": "failed; not sent"},
    "ctx.unknown": {"zh": "上下文 —", "en": "Context —"},
    "ctx.label": {"zh": "上下文 {used} / {window}", "en": "Context {used} / {window}"},
    "ctx.tip": {"zh": "下一拍的提示词约占模型上下文窗口的 {pct}%", "en": "The next prompt fills about {pct}% of the model's window"},
    "ctx.cache": {"zh": "缓存命中 {pct}%", "en": "Cache hits {pct}%"},
    "ctx.cache.tip": {"zh": "上一拍：{p} 个输入 token 中 {c} 个来自缓存", "en": "Last beat: {c} of {p} prompt tokens from the cache"},
    "ctx.compacted": {"zh": "已压缩前情：第 {a}–{b} 拍写成第 {layer} 层前情提要（提示词 {before} → {after} tokens）",
                      "en": "Compacted: beats {a}–{b} became a layer-{layer} summary (prompt {before} → {after} tokens)"},
    "ctx.compact.failed": {"zh": "压缩前情没成功（没有删减任何内容，下一拍再试）：{err}",
                           "en": "Compaction failed (nothing was cut; tried again next beat): {err}"},
    "sum.title": {"zh": "前情提要", "en": "Story so far"},
    "sum.note": {"zh": "较早的剧情被压缩成这些提要随每一拍发给模型。改动会作为你的新版本追加（原文仍在记录里），下一拍起生效。",
                 "en": "Older beats are compressed into these summaries, sent with every beat. An edit is appended as your version (the old text stays on record) and applies from the next beat."},
    "sum.beats": {"zh": "第 {a}–{b} 拍", "en": "Beats {a}–{b}"},
    "sum.layer": {"zh": "第 {n} 层", "en": "layer {n}"},
    "sum.source.scribe": {"zh": "场记写的", "en": "by the scribe"},
    "sum.source.user": {"zh": "你改过", "en": "edited by you"},
    "sum.empty": {"zh": "这条分支还没有前情提要：对话变长后会自动压缩出来。", "en": "No summaries on this branch yet: they appear once the chat grows long."},
    "sum.unavailable": {"zh": "这个版本的引擎还没有前情提要。", "en": "This engine has no summaries yet."},
    "sum.saved": {"zh": "已保存：下一拍起用你的版本。", "en": "Saved: your version is used from the next beat."},
    "sum.failed": {"zh": "没存上：{err}", "en": "Not saved: {err}"},
}


def register(strings: dict[str, dict[str, str]]) -> None:
    """Add a module's strings to the one catalog (``{key: {"zh": …, "en": …}}``). A window module that owns a
    screen keeps its strings beside its code and registers them at import; a key registered twice keeps the last
    text (modules must use distinct key prefixes)."""
    STRINGS.update(strings)


def set_language(lang: str) -> None:
    """Switch the UI language: "zh", "en", or a language with a translator's compiled catalog
    (``core/catalog_files.available``); anything else means the system locale's language
    (``core.settings.fallback_language``: English unless the locale is Chinese; the start-up in ``app.py`` has
    already warned about an unknown ``LIYUAN_LANG``)."""
    global _LANG
    if lang in ("zh", "en") or lang in available_languages():
        _LANG = lang
    else:
        from ...core.settings import fallback_language

        _LANG = fallback_language()
    from ...core.paths import set_reader_language

    set_reader_language(_LANG)  # a new data folder's folder names follow the window's language (core.paths)


def available_languages() -> list[str]:
    """Every language the window can show: "zh", "en", then those with a compiled translator's catalog (sorted)."""
    from ...core.catalog_files import available

    return ["zh", "en", *available()]


def language() -> str:
    """The current UI language."""
    return _LANG


def show(value: object) -> str:
    """An engine message in the current language: a ``core.messages.Msg`` (or an exception carrying one) rendered,
    anything else as ``str(value)`` (issue 17: the engine returns keys, the window renders them)."""
    return _render(value, _LANG)


def tr(key: str, **fmt: object) -> str:
    """The string for ``key`` in the current language, formatted with ``fmt``. A key the window does not know is
    looked up in the engine's catalog (``core/messages.py``); engine messages and exceptions among ``fmt`` are
    rendered in the current language. An entry may hold a singular as ``"<lang>_one"`` (e.g. ``"en_one"``), used
    when ``n`` is 1 (gettext's ngettext for the languages that inflect; Chinese does not)."""
    entry = STRINGS.get(key)
    if entry is None:
        entry = _CORE_CATALOG.get(key)
    if fmt:
        fmt = {k: show(v) if isinstance(v, (Msg, BaseException)) else v for k, v in fmt.items()}
    # an entry may be empty on purpose in one language (e.g. "welcome.sub", the English line under the Chinese
    # intro, is not repeated in English); only a missing language falls back to Chinese
    if entry and _LANG not in ("zh", "en") and _LANG not in entry:
        text = other_language_text(key, entry, _LANG)  # a translator's catalog, English for a key it lacks
    else:
        text = (entry[_LANG] if entry.get(_LANG) is not None else entry.get("zh") or key) if entry else key
        if entry and fmt.get("n") == 1 and entry.get(_LANG + "_one"):
            text = entry[_LANG + "_one"]  # English "1 message", not "1 messages" (an entry's singular, "en_one")
    return text.format(**fmt) if fmt else text


# --- About dialog, crash dialog, sandbox note (ui/dialogs/about.py, app.py; packaging issue) ---
STRINGS.update({
    "menu.help": {"zh": "帮助", "en": "Help"},
    "about.action": {"zh": "关于梨园", "en": "About Liyuan"},
    "about.title": {"zh": "关于梨园", "en": "About Liyuan"},
    "about.heading": {"zh": "梨园 Liyuan Desktop", "en": "Liyuan Desktop"},
    "about.tagline": {"zh": "大模型角色扮演与长篇写作：先落稿，再收笔。",
                      "en": "LLM role-play and long-form fiction: the model drafts, edits, then seals."},
    "about.version": {"zh": "版本", "en": "Version"},
    "about.build": {"zh": "构建", "en": "Build"},
    "about.from_source": {"zh": "源码运行", "en": "from source"},
    "about.runtime": {"zh": "运行环境", "en": "Runtime"},
    "about.sandbox": {"zh": "网页沙箱", "en": "Web sandbox"},
    "about.data": {"zh": "数据文件夹", "en": "Data folder"},
    "about.logs": {"zh": "日志文件夹", "en": "Log folder"},
    "sandbox.on": {"zh": "开启", "en": "on"},
    "sandbox.off.root": {"zh": "关闭（以 root 运行）", "en": "off (running as root)"},
    "sandbox.off.userns": {"zh": "关闭（系统不允许普通用户创建命名空间）",
                           "en": "off (this system does not let users create namespaces)"},
    "sandbox.off.user": {"zh": "关闭（按环境变量设置）", "en": "off (set by an environment variable)"},
    "crash.title": {"zh": "梨园出错了", "en": "Liyuan hit an error"},
    "crash.body": {"zh": "{error}\n\n对话都已存盘，没有丢失；可以继续使用，必要时重启梨园。\n详细日志：{log}",
                   "en": "{error}\n\nYour chats are saved on disk and nothing is lost; carry on, or restart Liyuan if "
                         "something looks wrong.\nFull log: {log}"},
    "crash.open_logs": {"zh": "打开日志文件夹", "en": "Open the log folder"},
})

# --- status-bar frames and Liyuan panels (issue 5) ---
STRINGS.update({
    "conv.frame.hung": {"zh": "状态栏脚本无响应，已停止", "en": "The status bar's script stopped responding and was stopped"},
    "conv.frame.memory": {"zh": "状态栏占用内存过多，已停止", "en": "The status bar used too much memory and was stopped"},
    "conv.frame.flood": {"zh": "状态栏发送消息过多，已停止", "en": "The status bar sent too many messages and was stopped"},
    "conv.frame.notice.error": {"zh": "状态栏出错了（{n} 条）", "en": "The status bar had errors ({n})"},
    "conv.frame.notice.blocked": {"zh": "状态栏要加载的内容被拦下了（{n} 条）", "en": "Things the status bar tried to load were blocked ({n})"},
    "conv.frame.notice.empty": {"zh": "状态栏没有显示任何内容", "en": "The status bar shows nothing"},
    "conv.frame.notice.details": {"zh": "详情", "en": "Details"},
    "conv.frame.unknown_api": {"zh": "状态栏读取了不存在的接口 {name}（得到 undefined，显示的可能只是默认值）",
                               "en": "The status bar read {name}, which does not exist (it got undefined; what it shows may be only defaults)"},
    "conv.link.title": {"zh": "打开链接", "en": "Open link"},
    "conv.link.ask": {"zh": "在浏览器中打开这个地址吗？\n\n{url}", "en": "Open this address in your browser?\n\n{url}"},
    "conv.link.refused.scheme": {"zh": "只打开 http(s) 链接，这个没有打开：\n\n{url}",
                                 "en": "Only http(s) links are opened; this one was not:\n\n{url}"},
    "conv.link.refused.private": {"zh": "这个链接指向本机或局域网地址，没有打开：\n\n{url}",
                                  "en": "This link points to this computer or the local network and was not opened:\n\n{url}"},
    "frames.trust.action": {"zh": "信任这张卡的状态栏（允许联网加载脚本）", "en": "Trust this card's status bars (load scripts from the internet)"},
    "frames.trust.nocard": {"zh": "先打开一张卡的对话。", "en": "Open a chat of a card first."},
    "frames.trust.warn": {"zh": "信任「{name}」的状态栏后，它的状态栏可以从网上（https）加载脚本、样式和字体——脚本的作者可以随时改动这些文件，"
                                "状态栏里就会运行你没见过的代码。\n\n状态栏仍然关在沙箱里：不能读写你的文件、不能访问本机和局域网地址、不能发请求或打开窗口，"
                                "也看不到别的卡的数据。\n\n只信任你了解来源的卡。确定信任吗？",
                          "en": "Once “{name}” is trusted, its status bars may load scripts, styles and fonts from the internet (https) — their "
                                "authors can change those files at any time, so code you have never seen may run in the bar.\n\nThe bars stay "
                                "sandboxed: no access to your files, to this machine or your local network, no requests, no windows, no other "
                                "card's data.\n\nTrust only cards whose source you know. Trust it?"},
    "frames.trust.on": {"zh": "已信任「{name}」的状态栏（可联网加载脚本）", "en": "“{name}”'s status bars are trusted (may load scripts online)"},
    "frames.trust.off": {"zh": "已取消信任「{name}」的状态栏", "en": "“{name}”'s status bars are no longer trusted"},
    "frame.vars.unsaved": {"zh": "状态栏改的变量没有保存：{error}", "en": "The status bar's variable change was not saved: {error}"},
    "panels.title": {"zh": "面板", "en": "Panels"},
    "panels.empty": {"zh": "这张卡没有面板。", "en": "This card has no panels."},
})

# --- the rest of the window: menus, status bar, message boxes, draft pane, ledger pane (English UI issue) ---
STRINGS.update({
    # punctuation that differs between the languages (list separators, colons, quotes)
    "sep.list": {"zh": "、", "en": ", "},
    "sep.semi": {"zh": "；", "en": "; "},
    "sep.colon": {"zh": "：", "en": ": "},
    "quote": {"zh": "「{text}」", "en": "“{text}”"},
    "paren": {"zh": "（{text}）", "en": " ({text})"},
    # the app menu
    "menu.import.prose": {"zh": "导入章节（文件夹或长 .txt）…", "en": "Import chapters (folder or long .txt)…"},
    "menu.to.agent": {"zh": "把这个扮演对话变成长篇…", "en": "Turn this role-play chat into long-form…"},
    "menu.demo": {"zh": "离线演示", "en": "Offline demo"},
    "menu.quit": {"zh": "退出", "en": "Quit"},
    # main window: status bar, banners, message boxes
    "status.stopping": {"zh": "正在停下这一拍并保存稿件……", "en": "Stopping this beat and saving the draft…"},
    "banner.pick": {"zh": "在左边选一张角色卡，双击对话打开，或点「新对话…」开始。",
                    "en": "Pick a card on the left and double-click a chat to open it, or click “New chat…” to start."},
    "status.model.ready": {"zh": "已配置模型：选一张卡开始", "en": "A model is configured: pick a card to start"},
    "model.none.why": {"zh": "还没有配置模型：打开「设置」添加一个服务商，或先玩离线演示。",
                       "en": "No model is configured yet: open Settings to add a provider, or play the offline demo first."},
    "model.none.settings": {"zh": "还没有配置模型：打开「设置」添加一个服务商。",
                            "en": "No model is configured yet: open Settings to add a provider."},
    "model.none": {"zh": "还没有配置模型。", "en": "No model is configured yet."},
    "model.none.name": {"zh": "未配置模型", "en": "no model"},
    "model.replay.name": {"zh": "回放模型（离线演示，不连网）", "en": "replay model (offline demo, no network)"},
    "status.chat": {"zh": "{card} · {chat} · 模型：{model}", "en": "{card} · {chat} · Model: {model}"},
    "status.chat.short": {"zh": "{card} · 模型：{model}", "en": "{card} · Model: {model}"},
    "confirm.switch.unsaved": {"zh": "正在编辑的章节还没保存，换对话会丢掉这些改动。继续吗？",
                               "en": "The chapter in the editor has unsaved changes; opening another chat discards them. Continue?"},
    "err.open.chat": {"zh": "打不开这个对话：{error}", "en": "Cannot open this chat: {error}"},
    "demo.done": {"zh": "演示的三拍都演完了。配置模型后，可以新建对话接着演。",
                  "en": "All three demo beats are played. Configure a model to start a new chat and carry on."},
    "err.demo": {"zh": "演示打不开：{error}", "en": "Cannot open the demo: {error}"},
    "pick.card.first": {"zh": "先在左边选一张角色卡（或导入一张）。", "en": "Pick a card on the left first (or import one)."},
    "new.chat.mode": {"zh": "模式（建好后不能切换）：", "en": "Mode (cannot be changed later):"},
    "err.new.chat": {"zh": "新建对话失败：{error}", "en": "Could not create the chat: {error}"},
    "import.card.filter": {"zh": "角色卡 (*.json *.png *.charx);;所有文件 (*)", "en": "Character cards (*.json *.png *.charx);;All files (*)"},
    "err.import": {"zh": "导入失败：{error}", "en": "Import failed: {error}"},
    "import.card.done": {"zh": "已导入角色卡「{name}」", "en": "Imported the card “{name}”"},
    "scripts.unnamed": {"zh": "（无名）", "en": "(unnamed)"},
    "scripts.ask": {"zh": "这张卡带了 {n} 个正则脚本：{names}\n\n它们会改变对话的显示和发给模型的文字"
                          "（只在显示和发送时生效，存下的原文不变）。允许这张卡运行它们吗？以后可以在菜单「梨园 › 允许这张卡的正则脚本」里改。",
                    "en": "This card has {n} regex scripts: {names}\n\nThey change how the chat is shown and the text sent to "
                          "the model (only when showing and sending; the stored text stays as it is). Allow this card to run "
                          "them? You can change this later in the menu “Liyuan › Allow this card's regex scripts”."},
    "prose.need.agent": {"zh": "先打开一个写长篇（agent）模式的对话。", "en": "Open a long-form (agent) chat first."},
    "prose.pick.txt": {"zh": "导入长篇 .txt（取消则选文件夹）", "en": "Import a long .txt (cancel to pick a folder)"},
    "prose.filter": {"zh": "文本 (*.txt *.md)", "en": "Text (*.txt *.md)"},
    "prose.pick.folder": {"zh": "选一个放章节的文件夹", "en": "Pick a folder of chapters"},
    "prose.none": {"zh": "没有可导入的章节", "en": "No chapters to import"},
    "to.agent.need.rp": {"zh": "先打开一个扮演对话。", "en": "Open a role-play chat first."},
    "err.convert": {"zh": "转换失败：{error}", "en": "The conversion failed: {error}"},
    "pending.draft": {"zh": "稿纸 · 版本 {v}", "en": "Draft · version {v}"},
    "err.beat": {"zh": "本拍出错：{error}", "en": "This beat failed: {error}"},
    "err.disk.refused": {"zh": "{error}\n腾出空间或恢复写权限后再发送。",
                         "en": "{error}\nFree some space or restore write permission, then send again."},
    "err.disk.write": {"zh": "写入磁盘失败：{error}\n已写好的内容都还在；腾出空间后再试。",
                       "en": "Writing to disk failed: {error}\nEverything written so far is kept; free some space and try again."},
    "err.beat.unexpected": {"zh": "本拍意外出错：{error}", "en": "Unexpected error in this beat: {error}"},
    "save.retry": {"zh": "重试保存", "en": "Retry saving"},
    "save.later": {"zh": "稍后", "en": "Later"},
    "saved": {"zh": "已保存", "en": "Saved"},
    "demo.ask.note": {"zh": "演示：回放模型只会按录制的选择演下去（「{answer}」）；接真模型时才按你的选择走。",
                      "en": "Demo: the replay model always follows the recorded choice (“{answer}”); with a real model "
                            "the story follows yours."},
    "demo.no.regen": {"zh": "回放模型只能按录制的剧情演，不能重来；接真模型的对话可以。",
                      "en": "The replay model can only play the recording and cannot regenerate; chats with a real model can."},
    "regen.none": {"zh": "还没有可以重来的一拍。", "en": "No beat to regenerate yet."},
    "err.ledger.save": {"zh": "账本没存上：{error}", "en": "The ledger was not saved: {error}"},
    "ledger.updated": {"zh": "账本已更新（追加了一份你写的快照，下一拍起生效）",
                       "en": "Ledger updated (your snapshot was appended; it applies from the next beat)"},
    # draft pane
    "draft.empty": {"zh": "稿纸还空着", "en": "The draft is empty"},
    "draft.reasoning": {"zh": "思考 {arrow}", "en": "Reasoning {arrow}"},
    "draft.reasoning.chars": {"zh": "思考 {arrow} {n} 字", "en": "Reasoning {arrow} {n} chars"},
    "draft.output": {"zh": "模型输出", "en": "Model output"},
    "draft.status.version": {"zh": "{state} · 版本 {version}", "en": "{state} · version {version}"},
    "draft.status.chars": {"zh": "{state} · 版本 {version} · {chars} 字", "en": "{state} · version {version} · {chars} chars"},
    "draft.running": {"zh": "第 {n} 拍 · 进行中", "en": "Beat {n} · in progress"},
    "draft.lore": {"zh": "本拍命中设定：{names}", "en": "Lore matched in this beat: {names}"},
    "draft.replay": {"zh": "回放模型：模型的话来自录制（离线演示）", "en": "Replay model: the model's words are recorded (offline demo)"},
    "draft.calls": {"zh": "模型调用 {n}/{max}", "en": "Model calls {n}/{max}"},
    "draft.call.head": {"zh": "\n── 第 {n} 次调用 ──\n", "en": "\n── call {n} ──\n"},
    "draft.tokens": {"zh": "#{n}: 输入 {p}（缓存 {c}，{share}%）输出 {o}", "en": "#{n}: in {p} (cached {c}, {share}%) out {o}"},
    "draft.tokens.approx": {"zh": "约 ", "en": "~ "},
    "draft.revised": {"zh": "↺ 上一拍已原位修订（版本 {version}）", "en": "↺ The previous beat was revised in place (version {version})"},
    "draft.revising": {"zh": "回改上一拍 · 版本 {version}", "en": "Revising the previous beat · version {version}"},
    "draft.scribe.failed": {"zh": "场记失败：{error}", "en": "Scribe failed: {error}"},
    "draft.scribe.applied": {"zh": "场记记账：{items}", "en": "Scribe's ledger: {items}"},
    "draft.scribe.nochange": {"zh": "无变化", "en": "no change"},
    "draft.scribe.warning": {"zh": "场记告警：{warning}", "en": "Scribe warning: {warning}"},
    # ledger pane
    "ledger.time": {"zh": "时间", "en": "Time"},
    "ledger.place": {"zh": "地点", "en": "Place"},
    "ledger.unset": {"zh": "未记", "en": "not recorded"},
    "ledger.characters": {"zh": "人物", "en": "Characters"},
    "ledger.col.name": {"zh": "名字", "en": "Name"},
    "ledger.col.affinity": {"zh": "好感", "en": "Affinity"},
    "ledger.col.status": {"zh": "状态", "en": "Status"},
    "ledger.col.at": {"zh": "所在", "en": "Where"},
    "ledger.col.notes": {"zh": "备注", "en": "Notes"},
    "ledger.here": {"zh": "在场", "en": "here"},
    "ledger.items": {"zh": "物品", "en": "Items"},
    "ledger.flags": {"zh": "标记", "en": "Flags"},
    "ledger.threads": {"zh": "剧情线", "en": "Plot threads"},
    "ledger.roster": {"zh": "登场名录", "en": "Roster"},
    "ledger.places": {"zh": "地点", "en": "Places"},
    "ledger.applied.user": {"zh": "你最近一次记账", "en": "Your last ledger edit"},
    "ledger.applied.scribe": {"zh": "场记最近一次记账", "en": "The scribe's last entries"},
    "ledger.warnings": {"zh": "场记告警", "en": "Scribe warnings"},
    "ledger.err.json": {"zh": "不是合法的 JSON：第 {line} 行第 {col} 列，{msg}", "en": "Not valid JSON: line {line}, column {col}: {msg}"},
    "ledger.err.format": {"zh": "账本格式不对：{errors}", "en": "The ledger's format is wrong: {errors}"},
})

# --- World-info settings page (ui/settings/world_info_settings.py; issue 14 §1, SillyTavern's world_info_* settings) ---
STRINGS.update({
    "wi.menu": {"zh": "世界书设置…", "en": "World info…"},
    "wi.title": {"zh": "世界书设置", "en": "World info"},
    "wi.scope": {"zh": "设置对象", "en": "Applies to"},
    "wi.scope.app": {"zh": "所有对话（应用设置）", "en": "All chats (app settings)"},
    "wi.scope.chat": {"zh": "只有这个对话：{title}", "en": "This chat only: {title}"},
    "wi.scope.chat.note": {"zh": "与所有对话的设置不同的项会记在这个对话里，其余跟随应用设置。",
                           "en": "Values that differ from the app's settings are kept in this chat; the rest follow the app."},
    "wi.depth": {"zh": "扫描深度（条消息）", "en": "Scan depth (messages)"},
    "wi.budget": {"zh": "预算（上下文的百分比）", "en": "Budget (% of context)"},
    "wi.budget_cap": {"zh": "预算上限（token，0 = 不限）", "en": "Budget cap (tokens, 0 = none)"},
    # what the budget is a percentage of (ui/settings/world_info_settings.py; core/lore/settings.py budget_basis)
    "wi.basis.preset": {"zh": "这个对话的预算按预设「{name}」的上下文大小计算（与 SillyTavern 相同）：{ctx} − 回复长度 {reply} = "
                              "{context} token，预算 {tokens} token。",
                        "en": "This chat's budget follows the context size of the preset “{name}” (as SillyTavern): "
                              "{ctx} − reply length {reply} = {context} tokens; budget {tokens} tokens."},
    "wi.basis.window": {"zh": "这个对话的预算按模型的上下文窗口 {context} token 计算（它的预设没有设定上下文大小），预算 {tokens} token。",
                        "en": "This chat's budget follows the model's context window of {context} tokens (its preset sets "
                              "no context size); budget {tokens} tokens."},
    "wi.basis.app": {"zh": "预算按对话所用预设的上下文大小（减去回复长度）计算，与 SillyTavern 相同；对话没有预设或预设没有设定时，"
                           "按模型的上下文窗口计算。",
                     "en": "The budget is a share of the context size of the chat's preset (minus its reply length), as "
                           "in SillyTavern; without a preset that sets one, of the model's context window."},
    "wi.min_activations": {"zh": "最少激活条数（0 = 关）", "en": "Min activations (0 = off)"},
    "wi.min_activations_depth_max": {"zh": "最少激活的最大深度（0 = 整个对话）", "en": "Max depth for min activations (0 = whole chat)"},
    "wi.max_recursion_steps": {"zh": "最多递归步数（0 = 不限）", "en": "Max recursion steps (0 = unlimited)"},
    "wi.strategy": {"zh": "插入策略", "en": "Insertion strategy"},
    "wi.strategy.0": {"zh": "平均（角色与全局混排）", "en": "Sorted evenly"},
    "wi.strategy.1": {"zh": "角色世界书优先", "en": "Character lore first"},
    "wi.strategy.2": {"zh": "全局世界书优先", "en": "Global lore first"},
    "wi.include_names": {"zh": "扫描时带上说话人名字", "en": "Include names"},
    "wi.recursive": {"zh": "递归扫描", "en": "Recursive scan"},
    "wi.case_sensitive": {"zh": "区分大小写", "en": "Case-sensitive"},
    "wi.match_whole_words": {"zh": "整词匹配", "en": "Match whole words"},
    "wi.use_group_scoring": {"zh": "组内评分", "en": "Use group scoring"},
    "wi.overflow_alert": {"zh": "预算用完时提醒", "en": "Alert on overflow"},
    "wi.import": {"zh": "从 SillyTavern 导入…", "en": "Import from SillyTavern…"},
    "wi.import.pick": {"zh": "选择 SillyTavern 的 settings.json", "en": "Choose SillyTavern's settings.json"},
    "wi.import.failed": {"zh": "导入失败：{error}", "en": "Import failed: {error}"},
    "wi.reset": {"zh": "恢复 SillyTavern 默认", "en": "SillyTavern defaults"},
    "wi.exclusive": {"zh": "「最少激活」和「最多递归步数」只能用一个（与 SillyTavern 相同），另一个已改为 0。",
                     "en": "Min activations and max recursion steps exclude each other (as in SillyTavern); the other was set to 0."},
    "wi.saved": {"zh": "世界书设置已保存，下一拍起生效。", "en": "World info settings saved; they apply from the next beat."},
    "wi.err.save": {"zh": "保存失败：{error}", "en": "Could not save: {error}"},
})

# A data folder that cannot be written (issue 15 item 8): the window starts read-only and offers another folder.
STRINGS.update({
    "home.readonly.title": {"zh": "数据文件夹不能写入", "en": "The data folder cannot be written"},
    "home.readonly.text": {
        "zh": "梨园的数据文件夹不能写入：\n{error}\n\n现在是只读模式：可以浏览已有的对话，但不能开始或继续对话（写不进去的内容会丢失）。"
              "可以选择另一个可写的文件夹（本次运行有效；要一直使用，请设置环境变量 LIYUAN_HOME）。",
        "en": "Liyuan's data folder cannot be written:\n{error}\n\nThe window is read-only: existing chats can be browsed, "
              "but nothing can be started or continued (it could not be saved). Choose another, writable folder "
              "(for this run; set LIYUAN_HOME to keep it)."},
    "home.readonly.choose": {"zh": "选择其他文件夹…", "en": "Choose another folder…"},
    "home.readonly.keep": {"zh": "只读浏览", "en": "Browse read-only"},
    "home.readonly.pick": {"zh": "选择梨园的数据文件夹", "en": "Choose Liyuan's data folder"},
    "home.readonly.blocked": {"zh": "只读模式：数据文件夹不能写入，无法保存，所以不能开始或继续对话。",
                              "en": "Read-only: the data folder cannot be written, so nothing can be started or continued."},
    "home.readonly.status": {"zh": "只读模式（数据文件夹不能写入）", "en": "Read-only (the data folder cannot be written)"},
})

# Issue 26 §3, from card to chat in one step: the card list (search, favourites, sort, tags, each chat's last message),
# the send keys, the message actions in the conversation, the offer to start a chat after an import.
STRINGS.update({
    "input.placeholder.enter": {"zh": "写下你这一拍的话……（Enter 发送，Shift+Enter 换行）",
                                "en": "Your words for this beat… (Enter to send, Shift+Enter for a new line)"},
    "input.placeholder.ctrl": {"zh": "写下你这一拍的话……（Enter 换行，Ctrl+Enter 发送）",
                               "en": "Your words for this beat… (Enter for a new line, Ctrl+Enter to send)"},
    "settings.enter_sends": {"zh": "按 Enter 发送（Shift+Enter 换行；不勾选则 Enter 换行、Ctrl+Enter 发送）",
                             "en": "Enter sends (Shift+Enter for a new line; unticked: Enter for a new line, Ctrl+Enter sends)"},
    "cards.search": {"zh": "搜索名字或标签…", "en": "Search by name or tag…"},
    "cards.sort.recent": {"zh": "最近", "en": "Recent"},
    "cards.sort.name": {"zh": "名字", "en": "Name"},
    "cards.sort.created": {"zh": "导入时间", "en": "Created"},
    "cards.sort.tip": {"zh": "排序（收藏的卡总在前面）", "en": "Sort (favourites always first)"},
    "cards.fav": {"zh": "收藏", "en": "Favourite"},
    "cards.fav.tip": {"zh": "收藏或取消收藏选中的角色卡", "en": "Star or unstar the selected card"},
    "cards.fav.only": {"zh": "只看收藏", "en": "Favourites only"},
    "cards.fav.only.short": {"zh": "只看★", "en": "★ only"},
    "cards.fav.on": {"zh": "已收藏「{name}」", "en": "Starred “{name}”"},
    "cards.fav.off": {"zh": "已取消收藏「{name}」", "en": "Unstarred “{name}”"},
    "cards.fav.failed": {"zh": "收藏没有存下：{error}", "en": "Could not save the star: {error}"},
    "cards.chat.line": {"zh": "{date} · {n} 条 · {text}", "en": "{date} · {n} messages · {text}",
                        "en_one": "{date} · {n} message · {text}"},
    "cards.chat.empty": {"zh": "{date} · 还没有消息", "en": "{date} · no messages yet"},
    "cards.none": {"zh": "没有名字或标签含「{query}」的角色卡", "en": "No card has “{query}” in its name or tags"},
    "cards.opening": {"zh": "正在打开「{name}」最近的对话…", "en": "Opening the latest chat of “{name}”…"},
    "cards.started": {"zh": "和「{name}」开始了新对话", "en": "Started a new chat with “{name}”"},
    "import.offer.chat": {"zh": "「{name}」已导入。现在就和它开始对话吗？", "en": "“{name}” was imported. Start a chat with it now?"},
    "msg.copy": {"zh": "复制", "en": "Copy"},
    "msg.copy.tip": {"zh": "复制这条消息的文字", "en": "Copy this message's text"},
    "msg.copied": {"zh": "已复制这条消息", "en": "Message copied"},
    "msg.edit": {"zh": "编辑", "en": "Edit"},
    "msg.edit.tip": {"zh": "就地修改这条消息", "en": "Edit this message in place"},
    "msg.edit.save": {"zh": "保存", "en": "Save"},
    "msg.edit.cancel": {"zh": "取消", "en": "Cancel"},
    "msg.edit.user.note": {"zh": "保存后从这句话长出一个新分支，重新演一拍（原来的还在）",
                           "en": "Saving grows a new branch from this message and plays it again (the old one stays)"},
    "msg.edit.reply.note": {"zh": "保存为这条回复的新版本（◀ ▶ 可以翻回原文；账本不重算）",
                            "en": "Saved as a new version of this reply (◀ ▶ reaches the old text; the ledger is not recomputed)"},
    "msg.delete": {"zh": "删除", "en": "Delete"},
    "msg.delete.tip": {"zh": "删除这条消息及其后的内容（原分支保留在「分支」里，可以找回）",
                       "en": "Delete this message and what follows (the branch stays in Branches, recoverable)"},
    "msg.delete.ask": {"zh": "删除这条消息和它之后的 {n} 条消息吗？\n\n「{text}」\n\n它们会离开当前显示的分支，但不会被抹掉：在「分支」里仍能找回。",
                       "en": "Delete this message and the {n} after it?\n\n“{text}”\n\nThey leave the branch shown but are "
                             "not erased: Branches still reaches them."},
    "msg.deleted": {"zh": "已删除；原来的分支在「分支」里", "en": "Deleted; the old branch is in Branches"},
    "msg.branch": {"zh": "从这里分支", "en": "Branch here"},
    "msg.branch.tip": {"zh": "新建一个对话，包含到这条消息为止的内容", "en": "A new chat holding the branch up to this message"},
    "msg.hide": {"zh": "不发送", "en": "Hide"},
    "msg.unhide": {"zh": "恢复发送", "en": "Unhide"},
    "msg.hide.tip": {"zh": "这条消息留在对话里，但不再发送给模型（SillyTavern 的 /hide）",
                     "en": "The message stays in the chat but is no longer sent to the model (SillyTavern's /hide)"},
    "msg.hidden.badge": {"zh": "不发送", "en": "hidden"},
    "msg.hidden.tip": {"zh": "这条消息不会发送给模型", "en": "This message is not sent to the model"},
    "msg.hidden": {"zh": "这条消息不再发送给模型", "en": "This message is no longer sent to the model"},
    "msg.unhidden": {"zh": "这条消息又会发送给模型了", "en": "This message is sent to the model again"},
})
