"""UI strings, Chinese first with English available. ``tr(key)`` looks a key up in the current language;
``set_language("en")`` switches (the settings dialog persists the choice). Unknown keys fall back to Chinese,
then to the key itself, so a missing translation never breaks the window."""

from __future__ import annotations

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
    # --- settings dialog (liyuan_desktop/ui/settings.py) ---
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
    "settings.key.nokeyring": {"zh": "本机没有可用的系统钥匙串：密钥只在本次运行中有效；想长期使用请设置环境变量 {var}",
                               "en": "No system keyring on this machine: the key lasts for this run only; for long-term use set the environment variable {var}"},
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
    "settings.theme.light": {"zh": "浅色", "en": "Light"},
    "settings.theme.dark": {"zh": "深色", "en": "Dark"},
    # --- conversation view (liyuan_desktop/ui/conversation.py); "welcome.sub" is the English line under the intro ---
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
}


def set_language(lang: str) -> None:
    """Switch the UI language ("zh" or "en"); anything else means Chinese."""
    global _LANG
    _LANG = lang if lang in ("zh", "en") else "zh"


def language() -> str:
    """The current UI language."""
    return _LANG


def tr(key: str, **fmt: object) -> str:
    """The string for ``key`` in the current language, formatted with ``fmt``."""
    entry = STRINGS.get(key)
    text = (entry.get(_LANG) or entry.get("zh") or key) if entry else key
    return text.format(**fmt) if fmt else text
