"""A test card in the shape of the official StageDog Vue template status bar (tavern_helper_template's 角色卡示例:
a Vue 3 app on TavernHelper's globals — `Vue`, `_`, `$`, `z` kept in a variable and used as `Z.z.object`, as the
bundled bar does — a zod schema that parses `stat_data` and writes the parsed data back with `updateVariablesWith`,
`async-wait-until` imported from jsDelivr's +esm, a display regex that puts the bar where the model wrote
<StatusPlaceHolderImpl/>, and an [InitVar] world-info entry with the initial variables). Written for these tests
from that public structure; no code of the template is in it.

The bar shows the time and place, 「{{user}} 与 {{char}}」 (SillyTavern.name1 / substitudeMacros in the frame: the macro is spelled in two pieces, because SillyTavern
substitutes {{user}} in a regex's replacement text before the frame ever sees it), 梧桐's 信赖 with
− / + buttons (#dec, #inc; the value in #trust) and the persona's 体力 under the persona's own key (the [InitVar]
key is `{{user}}`, so the tree is built with the persona's name). Used by tests/ui/test_statusbar_frames.py and
tests/ui/test_card_preview.py."""

from __future__ import annotations

import json
from pathlib import Path

BAR = r"""<head>
<style>
  * { box-sizing: border-box; margin: 0; padding: 0; }
  .card { max-width: 640px; margin: 0 auto; border: 2px solid #3c493f; background: #f0f7f4; color: #3c493f;
          font: 13px/1.5 sans-serif; box-shadow: 3px 3px 0 rgba(60, 73, 63, .16); }
  .meta { padding: 6px 10px; border-bottom: 2px dashed #7e8d85; font-weight: bold; display: flex; gap: 12px; }
  .row { display: flex; align-items: center; gap: 8px; padding: 6px 10px; }
  .track { flex: 1; height: 10px; border: 1.5px solid #3c493f; background: #fff; position: relative; }
  .fill { position: absolute; left: 0; top: 0; bottom: 0; background: #a2e3c4; }
  button { width: 26px; height: 22px; border: 1.5px solid #3c493f; background: #fff; font-weight: bold; cursor: pointer; }
</style>
</head>
<body>
<div id="app"></div>
<script type="module">
import { waitUntil } from 'https://testingcf.jsdelivr.net/npm/async-wait-until/+esm';

const { createApp, h, ref, watch } = Vue;
const Z = z;                                  // a bundled bar keeps TavernHelper's zod in a variable
const user = SillyTavern.name1;
const Schema = Z.z.object({
  世界: Z.z.object({ 时间: Z.z.string(), 地点: Z.z.string() }),
  梧桐: Z.z.object({ 信赖: Z.z.coerce.number().transform(v => _.clamp(v, 0, 100)) }),
  [user]: Z.z.object({ 体力: Z.z.coerce.number().prefault(100) }),
});
const where = { type: 'message', message_id: getCurrentMessageId() };

$(errorCatched(async () => {
  await waitGlobalInitialized('Mvu');
  await waitUntil(() => _.has(getVariables(where), 'stat_data'), { timeout: 10000 });
  const data = ref(Schema.parse(_.get(getVariables(where), 'stat_data', {})));
  watch(data, (value) => {
    const parsed = Schema.safeParse(value);
    if (!parsed.success || _.isEqual(parsed.data, _.get(getVariables(where), 'stat_data'))) return;
    updateVariablesWith(vars => _.set(vars, 'stat_data', parsed.data), where);
  }, { deep: true });
  eventOn(Mvu.events.VARIABLE_UPDATE_ENDED, (fresh) => {
    const parsed = Schema.safeParse(_.get(fresh, 'stat_data', {}));
    if (parsed.success && !_.isEqual(parsed.data, data.value)) data.value = parsed.data;
  });
  const step = (d) => { data.value.梧桐.信赖 = _.clamp(data.value.梧桐.信赖 + d, 0, 100); };
  createApp({
    setup() {
      return () => h('div', { class: 'card' }, [
        h('div', { class: 'meta' }, [h('span', { id: 'when' }, data.value.世界.时间), h('span', { id: 'where' }, data.value.世界.地点),
                                     h('span', { id: 'who' }, substitudeMacros('{{' + 'user}} 与 {{' + 'char}}'))]),
        h('div', { class: 'row' }, [
          h('span', '信赖'),
          h('button', { id: 'dec', type: 'button', disabled: data.value.梧桐.信赖 <= 0, onClick: () => step(-1) }, '−'),
          h('div', { class: 'track' }, [h('div', { class: 'fill', style: { width: data.value.梧桐.信赖 + '%' } })]),
          h('b', { id: 'trust' }, String(data.value.梧桐.信赖)),
          h('button', { id: 'inc', type: 'button', disabled: data.value.梧桐.信赖 >= 100, onClick: () => step(1) }, '+'),
        ]),
        h('div', { class: 'row', id: 'hp' }, `${user} 体力 ${data.value[user].体力}`),
      ]);
    },
  }).mount('#app');
}));
</script>
</body>"""

INITVAR = """世界:
  时间: 第一日 清晨
  地点: 梧桐小院
梧桐:
  信赖: 40
'{{user}}':
  体力: 80
"""

FIRST_MES = "清晨，院里的梧桐叶落了一地。她抬头看你，笑了一下。\n\n<StatusPlaceHolderImpl/>"


def card_json(first_mes: str = FIRST_MES, bar: bool = True) -> dict:
    """The card as a chara_card_v3 JSON object (without its display regex when ``bar`` is false)."""
    raw = {
        "spec": "chara_card_v3", "spec_version": "3.0",
        "data": {
            "name": "梧桐", "description": "院子里的姑娘。", "personality": "", "scenario": "", "first_mes": first_mes,
            "mes_example": "", "alternate_greetings": [], "tags": [],
            "character_book": {"name": "梧桐", "entries": [
                {"id": 0, "keys": [], "comment": "[InitVar]初始变量", "content": INITVAR, "enabled": False,
                 "constant": False, "insertion_order": 100, "extensions": {}},
            ]},
            "extensions": {"regex_scripts": [
                {"id": "vue-bar", "scriptName": "状态栏", "findRegex": "/<StatusPlaceHolderImpl\\/>/g",
                 "replaceString": "```html\n" + BAR + "\n```", "trimStrings": [], "placement": [2],
                 "disabled": False, "markdownOnly": True, "promptOnly": False, "runOnEdit": True,
                 "substituteRegex": 0, "minDepth": None, "maxDepth": None},
            ]},
        },
    }
    if not bar:
        raw["data"]["extensions"]["regex_scripts"] = []
    return raw


def write_card(folder: Path, first_mes: str = FIRST_MES, bar: bool = True) -> Path:
    """Write the card into ``folder`` (created) as ``card.json``; returns its path."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "card.json"
    path.write_text(json.dumps(card_json(first_mes, bar), ensure_ascii=False, indent=1), encoding="utf-8")
    return path
