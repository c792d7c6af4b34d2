"""SillyTavern chat-completion presets (预设): import, and the mapping onto Liyuan's layered prompt.

A preset file (``default/content/presets/openai/*.json`` in SillyTavern, "Export preset" in its UI) holds
``prompts[]``, ``prompt_order[]``, samplers and model settings (../shared/design/cards.md §5). :func:`load_preset`
reads one into a :class:`~.model.Preset` (every unknown key kept), :func:`~.mapping.plan` decides where each enabled
prompt goes in *our* prompt, and :class:`~.prompter.PresetPrompter` renders that plan for one chat.

Where things go (:func:`plan`)
------------------------------
SillyTavern builds a flat message list in ``prompt_order`` order around the ``chatHistory`` marker. Liyuan keeps a
byte-stable system prompt (prefix caching) and puts per-beat data at the tail, so:

* **Relative prompts before ``chatHistory``** (``injection_position`` 0) → **system layers**, in preset order, inside
  the card part of the system prompt (after our skeleton + role-play definition, which the preset never replaces).
  Text prompts become ``## 预设 · <name>`` sections (the agent-mode definition already calls these "「预设」段落":
  writing requirements, not identity). Macros are evaluated deterministically there (see *Macros*).
* **Markers** are filled by Liyuan's own card layers, at the marker's place: ``charDescription`` → 角色设定,
  ``charPersonality`` → 性格, ``scenario`` → 场景, ``dialogueExamples`` → 对话示例, ``personaDescription`` →
  用户的角色 (+ the persona description when its position is in-prompt), ``worldInfoBefore`` → constant (常驻)
  lore entries that are not ``after_char``, ``worldInfoAfter`` → constant ``after_char`` entries. Keyword-activated
  lore is *not* placed there: Liyuan lists hit titles in the tail injection (【相关设定】) and the model pulls text with
  ``lorebook_search``. A disabled marker leaves its card layer out, as in SillyTavern.
  Markers that SillyTavern would place after the history or in-chat stay in the system prompt (card data never
  moves into the tail) — recorded in ``PresetPlan.notes``.
* ``main`` → the **card-author layer**, not our role-play definition: the card's ``system_prompt`` replaces it
  (``{{original}}`` = the preset text) unless ``forbid_overrides`` — section ``## 卡作者的系统提示`` — otherwise
  the preset text as ``## 预设 · Main Prompt``. A disabled ``main`` drops the card's system prompt too (ST).
* ``jailbreak`` (Post-History Instructions) → usually after the history, hence an **after segment**; the card's
  ``post_history_instructions`` replaces it the same way.
* **Relative prompts after ``chatHistory``** → **after segments**: separate messages, each with its own role, placed
  after the user's words (seed 002: "末端消息 = 梨园数据块 + 本拍用户原话 + 预设 after 段（各按自己的 role）").
* **In-chat prompts** (``injection_position`` 1) → **depth injections** (depth, role, order), inserted into the
  history exactly as SillyTavern's ``populationInjectionPrompts`` (see :func:`insert_depth_injections`).

Dropped (listed in ``PresetPlan.dropped`` with the reason): disabled prompts; prompts not in the active order list;
empty prompts; prompts whose ``injection_trigger`` excludes the generation type; references to ids missing from
``prompts[]`` (ST removes them too); runtime-only ids ST fills itself (``newMainChat``, ``groupNudge``,
``continueNudge``, ``impersonate``, ``authorsNote``, ``summary``, ``vectorsMemory``, ``vectorsDataBank``,
``smartContext``, ``bias``, ``quietPrompt``; Liyuan's 前情提要/ledger cover summary and memory) and markers of
extensions we do not have. Root-level texts are kept in :class:`Preset` but not used: ``new_chat_prompt`` (our
history starts with the opening), ``new_example_chat_prompt``, ``impersonation_prompt``, ``continue_nudge_prompt``,
``group_nudge_prompt``, ``send_if_empty``, ``assistant_prefill`` (Claude-only in ST); ``wi_format``,
``personality_format`` and ``scenario_format`` are replaced by our section headings; ``squash_system_messages`` and
``names_behavior`` are not applied.

Which order list (ST ``PromptManager`` with strategy "global", ``dummyId`` 100001): the ``prompt_order`` entry
whose ``character_id`` is 100001; when it is missing or empty SillyTavern falls back to its built-in default order
(``promptManagerDefaultPromptOrder``), *not* to the 100000 list — we do the same and say so in the notes. An order
entry counts as enabled only when ``enabled`` is true (ST tests ``entry.enabled``); a missing flag is disabled.

Macros
------
Preset text goes through the one macro engine (:func:`liyuan_desktop.core.macros.apply_macros`), like card
fields and world info. In the system layers it must stay byte-stable (prefix caching): the chat's
:class:`MacroContext` has its clock frozen (the chat's creation; a fixed moment when the caller gives no clock) and
``{{random}}``/``{{roll}}``/``{{pick}}`` seeded by the chat id, so they are evaluated once per chat — each volatile
macro found there is reported in ``PresetPrompter.warnings``; chat references (``{{lastMessage}}`` …) are empty
there. In the tail (after segments, depth injections) everything is evaluated fresh each beat. Variables
(``{{setvar}}``/``{{getvar}}`` …) live in one dict per chat, seeded from the caller (e.g. an imported ST chat's
``chat_metadata.variables``); values set while rendering the system layers are visible in the tail; they are
not persisted.

Modules: :mod:`.model` (the preset file model, repairs, refusals), :mod:`.store` (reading and installing preset
files), :mod:`.mapping` (:func:`~.mapping.plan`: where each prompt goes), :mod:`.prompter` (:class:`~.prompter.PresetPrompter`,
depth injections), :mod:`.manager` (:class:`~.manager.PromptManager`: the prompt list as SillyTavern's Prompt Manager
shows it, its edits, token counts, save / save as / export without losing a key).
"""
