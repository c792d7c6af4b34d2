"""Libraries in status-bar frames: the browser builds TavernHelper injects (jQuery, jQuery UI, lodash, Vue 3,
vue-router, pinia, zod 4, yaml, toastr, showdown, Font Awesome; ``liyuan_desktop/resources/web/vendor/lib``, rebuilt by
``scripts/vendor_libs.py``) are inlined into a frame only when the card's HTML references them; CDN ``<script src>``
/ stylesheet tags and ES module imports of them work offline (rewritten to the inlined copy); any other remote script
leaves a visible "需要联网：URL" notice in the frame.

Sync tests with qtbot (the pattern of test_statusbar_frames.py; its small helpers are repeated here)."""

from __future__ import annotations

import json
import logging

from uihelpers import probe_frame as probe
from uihelpers import view_js as js
from uihelpers import view_json as js_json
from uihelpers import wait_frame_report as wait_report
from uihelpers import wait_view as wait_js

from liyuan_desktop.ui.frames.conversation import web_dir


def frame_info(qtbot, view, name):
    return js_json(qtbot, view, f"(function(){{var f=document.getElementById({json.dumps(name)});"
                                f"return {{libs: f.dataset.libs, size: f.srcdoc.length}};}})()")


def item(i, text, role="assistant", **kw):
    return {"id": str(i), "role": role, "text": text, "beat": 1, **kw}


def bar(html):
    return "状态栏：\n\n```html\n<body>\n" + html + "\n</body>\n```"


NAME = "TH-message--3--0"


def test_vendored_bundles_exist():
    lib = web_dir() / "vendor" / "lib"
    for f in ("jquery.min.js", "lodash.min.js", "vue.global.prod.js", "toastr.min.js", "toastr.min.css",
              "showdown.min.js", "jquery-ui.min.js", "jquery-ui.min.css", "vue-router.global.prod.js",
              "pinia.iife.prod.js", "zod.min.js", "yaml.min.js", "fontawesome.min.css", "fontawesome-brands.min.css",
              "fontawesome-v5.min.css", "fontawesome-v4.min.css", "frame_libs.js", "async-wait-until.min.js",
              "klona.min.js", "dedent.min.js", "json5.min.js", "vueuse.min.js", "pinia-plugin-persistedstate.min.js"):
        assert (lib / f).stat().st_size > 1000, f
    assert (lib / "mitt.min.js").stat().st_size > 300
    assert "window.__liyuanFrameLibs" in (lib / "frame_libs.js").read_text(encoding="utf-8")[:200]


def test_host_page_sanitiser_is_vendored_but_not_a_frame_library():
    """DOMPurify (the message sanitiser of conversation.html) comes from the same npm lock file, as lib/purify.min.js,
    and is not one of the libraries offered to frames."""
    lib = web_dir() / "vendor" / "lib"
    text = (lib / "purify.min.js").read_text(encoding="utf-8")
    assert "DOMPurify" in text[:300] and "sourceMappingURL" not in text
    lock = json.loads((web_dir() / "vendor" / "package-lock.json").read_text(encoding="utf-8"))
    assert "node_modules/dompurify" in lock["packages"]
    libs = (lib / "frame_libs.js").read_text(encoding="utf-8")
    index = json.loads(libs[libs.index("=") + 1:].strip().rstrip(";"))
    assert "dompurify" not in index and all(v["package"] != "dompurify" for v in index.values())


def test_jquery_and_lodash(qtbot, view):
    view.set_transcript([item(3, bar('<b id="x">?</b>\n<script>\n$(\'#x\').text(_.sum([1, 2]));\n'
                                     '__liyuanReport({x: $(\'#x\').text(), jq: $.fn.jquery, vue: typeof window["V" + "ue"]});\n'
                                     '</script>'))], False)
    rep = wait_report(qtbot, view, NAME, lambda r: "x" in r)
    assert rep["x"] == "3"
    assert rep["jq"].startswith("3.")
    assert rep["vue"] == "undefined"          # not referenced, not injected
    assert frame_info(qtbot, view, NAME)["libs"].split() == ["jquery", "lodash"]
    assert probe(qtbot, view, NAME, "#x") == "3"


def test_vue3_app_mounts(qtbot, view):
    # a render function (no template compiler involved)
    html = ('<div id="app"></div>\n<script>\n'
            'const { createApp, h, nextTick } = Vue;\n'
            'createApp({ data() { return { label: "好感", count: 21 }; },\n'
            '  render() { return h("span", {class: "n"}, this.label + ": " + this.count * 2); },\n'
            '  mounted() { nextTick(() => __liyuanReport({text: document.querySelector("#app .n").textContent,'
            ' version: Vue.version})); } }).mount("#app");\n</script>')
    view.set_transcript([item(3, bar(html))], False)
    rep = wait_report(qtbot, view, NAME, lambda r: "text" in r)
    assert rep["text"] == "好感: 42"
    assert rep["version"].startswith("3.")
    assert frame_info(qtbot, view, NAME)["libs"] == "vue"
    assert probe(qtbot, view, NAME, "#app") == "好感: 42"


def test_vue3_in_dom_template_and_template_option(qtbot, view):
    """Most Vue status bars write their template in the page (``{{ }}`` in the DOM) or as a ``template`` string: Vue's
    runtime compiler builds render functions with ``new Function``, so frames allow 'unsafe-eval' (no capability a
    card script does not already have inline; network access stays closed)."""
    html = ('<div id="app"><span class="n">{{ label }}: {{ count * 2 }}</span><i v-for="x in 3" :key="x">·</i></div>\n'
            '<div id="two"></div>\n<script>\n'
            'Vue.createApp({ data() { return { label: "好感", count: 21 }; } }).mount("#app");\n'
            'Vue.createApp({ template: "<b>{{ 6 * 7 }}</b>" }).mount("#two");\n'
            'Vue.nextTick(() => __liyuanReport({text: document.querySelector("#app .n").textContent,'
            ' dots: document.querySelectorAll("#app i").length, two: document.querySelector("#two").textContent}));\n'
            '</script>')
    view.set_transcript([item(3, bar(html))], False)
    rep = wait_report(qtbot, view, NAME, lambda r: "text" in r)
    assert rep == {"text": "好感: 42", "dots": 3, "two": "42"}


def test_cdn_script_tag_is_rewritten_offline(qtbot, view):
    html = ('<script src="https://cdn.jsdelivr.net/npm/jquery/dist/jquery.min.js"></script>\n'
            '<script src="https://testingcf.jsdelivr.net/npm/showdown@2/dist/showdown.min.js"></script>\n'
            '<p id="p">?</p>\n<script>\nwindow.jQuery("#p").html(new window["show" + "down"].Converter()'
            '.makeHtml("**ok**"));\n__liyuanReport({html: jQuery("#p").html()});\n</script>')
    view.set_transcript([item(3, bar(html))], False)
    rep = wait_report(qtbot, view, NAME, lambda r: "html" in r)
    assert rep["html"] == "<p><strong>ok</strong></p>"
    info = frame_info(qtbot, view, NAME)
    assert set(info["libs"].split()) == {"jquery", "showdown"}
    doc = js(qtbot, view, f"document.getElementById({json.dumps(NAME)}).srcdoc").split("</head><body>")[1]
    assert "cdn.jsdelivr.net" not in doc and "testingcf.jsdelivr.net" not in doc
    # no notice: nothing needs the network
    assert probe(qtbot, view, NAME, "body", pred=lambda v: "ok" in v).count("需要联网") == 0


def test_other_remote_script_shows_notice(qtbot, view):
    """A remote script or module we do not bundle: a 「需要联网：URL」 line in the frame, and the URL in the list of what
    the frame's policy refused (what `card preview --json` reports as `blocked`)."""
    html = ('<div id="ui"></div>\n<script src="https://example.com/ui.js"></script>\n'
            '<script type="module">import x from "https://cdn.jsdelivr.net/npm/canvas-confetti/+esm";</script>\n'
            '<script>__liyuanReport({ready: 1});</script>')
    view.set_transcript([item(3, bar(html))], False)
    wait_report(qtbot, view, NAME, lambda r: "ready" in r)
    text = probe(qtbot, view, NAME, ".liyuan-net-notice")
    assert "需要联网：https://example.com/ui.js" in text
    assert "需要联网：https://cdn.jsdelivr.net/npm/canvas-confetti/+esm" in text
    assert frame_info(qtbot, view, NAME)["libs"] == ""
    wait_js(qtbot, view, "liyuan.frameBlocked().map(b => b.url)",
            lambda urls: {"https://example.com/ui.js", "https://cdn.jsdelivr.net/npm/canvas-confetti/+esm"} <= set(urls))


def test_cdn_helpers_of_status_bar_templates_are_bundled(qtbot, view, caplog):
    """The small helpers Vue status-bar templates import from CDNs come from the npm lock file: async-wait-until,
    klona, dedent, json5, mitt, @vueuse/core (on the frame's one Vue) and pinia-plugin-persistedstate."""
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    html = ('<div id="app"></div>\n<script type="module">\n'
            "import { waitUntil } from 'https://testingcf.jsdelivr.net/npm/async-wait-until/+esm';\n"
            "import { klona } from 'https://testingcf.jsdelivr.net/npm/klona/+esm';\n"
            "import dedent from 'https://testingcf.jsdelivr.net/npm/dedent/+esm';\n"
            "import JSON5 from 'https://esm.sh/json5@2';\n"
            "import mitt from 'https://unpkg.com/mitt@3/dist/mitt.mjs';\n"
            "import { useIntervalFn, useLocalStorage } from 'https://testingcf.jsdelivr.net/npm/@vueuse/core/+esm';\n"
            "import { createPersistedState } from 'https://testingcf.jsdelivr.net/npm/pinia-plugin-persistedstate/+esm';\n"
            "import { ref, effectScope } from 'https://testingcf.jsdelivr.net/npm/vue/+esm';\n"
            "let n = 0; const t = setInterval(() => n++, 10);\n"
            "await waitUntil(() => n >= 2, { timeout: 5000 }); clearInterval(t);\n"
            "const a = { x: [1] }, b = klona(a); b.x.push(2);\n"
            "const bus = mitt(); let got = null; bus.on('e', v => { got = v; }); bus.emit('e', 5);\n"
            "const scope = effectScope(); let ticks = 0, stored;\n"
            "scope.run(() => { useIntervalFn(() => ticks++, 5); stored = useLocalStorage('k', { v: 1 }); });\n"
            "await waitUntil(() => ticks >= 2); scope.stop();\n"
            "__liyuanReport({ waited: n >= 2, klona: a.x.length, dedent: dedent`\n    a\n      b`,"
            " json5: JSON5.parse('{a: 1, /* c */ b: [2,],}'), mitt: got, vueuse: ticks >= 2,"
            " stored: localStorage.getItem('k'), persist: typeof createPersistedState });\n"
            '</script>')
    view.set_transcript([item(3, bar(html))], False)
    rep = wait_report(qtbot, view, NAME, lambda r: "waited" in r)
    assert rep == {"waited": True, "klona": 1, "dedent": "a\n  b", "json5": {"a": 1, "b": [2]}, "mitt": 5,
                   "vueuse": True, "stored": '{"v":1}', "persist": "function"}
    assert set(frame_info(qtbot, view, NAME)["libs"].split()) == {
        "asyncwaituntil", "klona", "dedent", "json5", "mitt", "vueuse", "piniapersist", "vue"}
    assert probe(qtbot, view, NAME, "body", pred=lambda v: v is not None).count("需要联网") == 0
    assert console_errors(qtbot, view, caplog) == []


def test_plain_bar_gets_no_library(qtbot, view):
    view.set_transcript([item(3, bar('<b id="v">7</b>\n<script>var w = window; __liyuanReport({t: '
                                     'typeof w["jQ" + "uery"] + typeof w["_"] + typeof w["V" + "ue"], v: document.getElementById("v").textContent});</script>'))], False)
    rep = wait_report(qtbot, view, NAME, lambda r: "t" in r)
    assert rep == {"t": "undefinedundefinedundefined", "v": "7"}
    info = frame_info(qtbot, view, NAME)
    assert info["libs"] == ""
    assert info["size"] < 80_000       # the shim and the bar, no 80 KB jQuery


def test_toastr_replaces_stub(qtbot, view):
    view.set_transcript([item(3, bar('<script>toastr.success("存档完成");\n'
                                     '__liyuanReport({n: document.querySelectorAll("#toast-container .toast").length,'
                                     ' jq: typeof jQuery});</script>'))], False)
    rep = wait_report(qtbot, view, NAME, lambda r: "n" in r)
    assert rep == {"n": 1, "jq": "function"}
    assert set(frame_info(qtbot, view, NAME)["libs"].split()) == {"toastr", "jquery"}


def test_cdn_url_forms(qtbot, view):
    html = ('<script src="https://unpkg.com/vue@3.4.0/dist/vue.global.js"></script>\n'
            '<script src="//cdnjs.cloudflare.com/ajax/libs/lodash.js/4.17.21/lodash.min.js"></script>\n'
            "<script src='https://code.jquery.com/jquery-3.7.1.min.js'></script>\n"
            '<script src="https://cdn.jsdelivr.net/npm/vue@2.7.16/dist/vue.min.js"></script>\n'
            '<link rel="stylesheet" href="https://testingcf.jsdelivr.net/npm/toastr@2/build/toastr.min.css">\n'
            '<script>__liyuanReport({ready: 1});</script>')
    view.set_transcript([item(3, bar(html))], False)
    wait_report(qtbot, view, NAME, lambda r: "ready" in r)
    assert set(frame_info(qtbot, view, NAME)["libs"].split()) == {"vue", "lodash", "jquery", "toastr"}
    text = probe(qtbot, view, NAME, ".liyuan-net-notice")
    assert text == "需要联网：https://cdn.jsdelivr.net/npm/vue@2.7.16/dist/vue.min.js"   # Vue 2 is not ours


# ---- the libraries added for issue 5: jQuery UI, vue-router, pinia, zod, yaml, Font Awesome -----------------------

LOGGER = "liyuan_desktop.ui.frames.conversation"


def console_errors(qtbot, view, caplog):
    """Errors a frame wrote to the console (the page logs them as warnings), reported to the shim, or refused by its
    policy."""
    js(qtbot, view, "1")  # one more round trip, so that console messages sent before the report have arrived
    logged = [r.getMessage() for r in caplog.records if r.name == LOGGER and r.levelno >= logging.WARNING]
    shim = [x["text"] for x in js_json(qtbot, view, "liyuan.frameLogs()") if x["level"] == "error"]
    return logged + shim + [b["url"] for b in js_json(qtbot, view, "liyuan.frameBlocked()")]


def srcdoc_body(qtbot, view, name=NAME):
    return js(qtbot, view, f"document.getElementById({json.dumps(name)}).srcdoc").split("</head><body>")[1]


def test_jquery_ui_from_cdn_tags(qtbot, view, caplog):
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    # TavernHelper's own tags (third_party_message.html) and the code.jquery.com forms
    html = ('<script src="https://testingcf.jsdelivr.net/npm/jquery/dist/jquery.min.js"></script>\n'
            '<script src="https://testingcf.jsdelivr.net/npm/jquery-ui/dist/jquery-ui.min.js"></script>\n'
            '<link rel="stylesheet" href="https://testingcf.jsdelivr.net/npm/jquery-ui/themes/base/theme.min.css" />\n'
            '<script src="https://testingcf.jsdelivr.net/npm/jquery-ui-touch-punch"></script>\n'
            '<script src="https://code.jquery.com/ui/1.13.2/jquery-ui.min.js"></script>\n'
            '<link rel="stylesheet" href="https://code.jquery.com/ui/1.13.2/themes/base/jquery-ui.css">\n'
            '<div id="box" class="ui-widget ui-widget-content" style="width:50px;height:20px">'
            '<span class="ui-icon ui-icon-heart"></span></div>\n'
            '<script>\nvar J = window["jQ" + "uery"];\nJ("#box")["drag" + "gable"]();\n'
            '__liyuanReport({ui: typeof J["u" + "i"], drag: typeof J.fn["drag" + "gable"], version: J["u" + "i"].version,'
            ' cls: document.getElementById("box").className,'
            ' icon: getComputedStyle(document.querySelector(".ui-icon")).backgroundImage.slice(0, 26)});\n</script>')
    view.set_transcript([item(3, bar(html))], False)
    rep = wait_report(qtbot, view, NAME, lambda r: "ui" in r)
    assert rep["ui"] == "object" and rep["drag"] == "function"
    assert rep["version"].startswith("1.")
    assert "ui-draggable" in rep["cls"]
    assert rep["icon"] == 'url("data:image/png;base64'     # the theme's icons, inlined
    assert set(frame_info(qtbot, view, NAME)["libs"].split()) == {"jquery", "jqueryui", "jqueryui_css"}
    body = srcdoc_body(qtbot, view)
    assert "jsdelivr" not in body and "code.jquery.com" not in body
    assert probe(qtbot, view, NAME, "body", pred=lambda v: v is not None).count("需要联网") == 0
    assert console_errors(qtbot, view, caplog) == []


def test_vue_router_and_pinia_from_cdn_tags(qtbot, view, caplog):
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    html = ('<script src="https://testingcf.jsdelivr.net/npm/vue/dist/vue.runtime.global.prod.min.js"></script>\n'
            '<script src="https://testingcf.jsdelivr.net/npm/vue-router/dist/vue-router.global.prod.min.js"></script>\n'
            '<script src="https://unpkg.com/pinia@3/dist/pinia.iife.prod.js"></script>\n'
            '<div id="app"></div>\n<script>\n'
            'var W = window, V = W["V" + "ue"], R = W["Vue" + "Router"], P = W["Pi" + "nia"];\n'
            'var useStore = P.defineStore("bar", { state: function () { return { n: 21 }; },'
            ' getters: { twice: function (s) { return s.n * 2; } } });\n'
            'var router = R.createRouter({ history: R.createMemoryHistory(), routes: [\n'
            '  { path: "/", component: { render: function () { return V.h("i", "home"); } } },\n'
            '  { path: "/stats", component: { render: function () { return V.h("b", {class: "n"}, String(useStore().twice)); } } }] });\n'
            'var app = V.createApp({ render: function () { return V.h(R.RouterView); } });\n'
            'app.use(P.createPinia()); app.use(router); router.push("/stats");\n'
            'router.isReady().then(function () { app.mount("#app"); return V.nextTick(); }).then(function () {\n'
            '  __liyuanReport({path: router.currentRoute.value.path, text: document.querySelector("#app").textContent,'
            ' router: typeof R.createRouter, pinia: typeof P.createPinia}); });\n</script>')
    view.set_transcript([item(3, bar(html))], False)
    rep = wait_report(qtbot, view, NAME, lambda r: "path" in r)
    assert rep == {"path": "/stats", "text": "42", "router": "function", "pinia": "function"}
    assert set(frame_info(qtbot, view, NAME)["libs"].split()) == {"vue", "vuerouter", "pinia"}
    body = srcdoc_body(qtbot, view)
    assert "jsdelivr" not in body and "unpkg" not in body
    assert console_errors(qtbot, view, caplog) == []


def test_zod_and_yaml_globals(qtbot, view, caplog):
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    # TavernHelper provides z (zod 4: .prefault, z.prettifyError) and YAML without any tag
    html = ('<script>\n'
            'const Schema = z.object({ 好感: z.coerce.number().transform(v => Math.min(100, v)).prefault(0),'
            ' 名字: z.string().prefault("") });\n'
            'const ok = Schema.parse({ 好感: "120" });\n'
            'const bad = z.object({ a: z.string() }).safeParse({ a: 1 });\n'
            '__liyuanReport({ zod: typeof z.object, parsed: ok, msg: z.prettifyError(bad.error).length > 0,'
            ' yaml: YAML.parse("a: 1").a, dumped: YAML.stringify({ 列表: [1, 2] }) });\n</script>')
    view.set_transcript([item(3, bar(html))], False)
    rep = wait_report(qtbot, view, NAME, lambda r: "zod" in r)
    assert rep == {"zod": "function", "parsed": {"好感": 100, "名字": ""}, "msg": True, "yaml": 1,
                   "dumped": "列表:\n  - 1\n  - 2\n"}
    assert set(frame_info(qtbot, view, NAME)["libs"].split()) == {"zod", "yaml"}
    assert console_errors(qtbot, view, caplog) == []     # zod runs jitless: no eval, nothing for the CSP to refuse


def test_zod_umd_tag_gives_zod_global(qtbot, view, caplog):
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    html = ('<script src="https://cdn.jsdelivr.net/npm/zod@3.23.8/lib/index.umd.js"></script>\n'
            '<script>var Z = window["Zo" + "d"]; __liyuanReport({ok: Z["obj" + "ect"]({n: Z["num" + "ber"]()})'
            '.safeParse({n: 1}).success, same: Z === window["z"]});</script>')
    view.set_transcript([item(3, bar(html))], False)
    rep = wait_report(qtbot, view, NAME, lambda r: "ok" in r)
    assert rep == {"ok": True, "same": True}
    assert frame_info(qtbot, view, NAME)["libs"] == "zod"
    assert console_errors(qtbot, view, caplog) == []


def test_esm_imports_of_bundled_libraries_are_rewritten(qtbot, view, caplog):
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    html = ('<div id="app"></div>\n<script type="module">\n'
            "import { createApp, h as hh } from 'https://testingcf.jsdelivr.net/npm/vue/+esm';\n"
            "import { createPinia, defineStore } from 'https://testingcf.jsdelivr.net/npm/pinia@3/+esm';\n"
            "import { z } from 'https://testingcf.jsdelivr.net/npm/zod/+esm';\n"
            'import YAML, { parse } from "https://esm.sh/yaml@2";\n'
            "import * as VR from 'https://unpkg.com/vue-router@4?module';\n"
            "import 'https://cdn.jsdelivr.net/npm/lodash-es/+esm';\n"
            "const zod2 = await import('https://esm.run/zod');\n"
            "const useS = defineStore('s', { state: () => ({ n: 2 }) });\n"
            "const app = createApp({ render: () => hh('b', String(useS().n)) });\n"
            "app.use(createPinia()); app.mount('#app');\n"
            "__liyuanReport({ text: document.querySelector('#app').textContent,"
            " zod: z.object({ a: z.number() }).parse({ a: 1 }).a, dyn: typeof zod2.z.object,"
            " def: typeof zod2.default.string, yaml: YAML.stringify(parse('b: [1]')), router: typeof VR.createRouter });\n"
            '</script>')
    view.set_transcript([item(3, bar(html))], False)
    rep = wait_report(qtbot, view, NAME, lambda r: "text" in r)
    assert rep == {"text": "2", "zod": 1, "dyn": "function", "def": "function", "yaml": "b:\n  - 1\n",
                   "router": "function"}
    assert set(frame_info(qtbot, view, NAME)["libs"].split()) == {"vue", "pinia", "zod", "yaml", "vuerouter", "lodash"}
    body = srcdoc_body(qtbot, view)
    assert "+esm" not in body and "esm.sh" not in body and "esm.run" not in body
    assert probe(qtbot, view, NAME, "#app", pred=lambda v: v == "2")
    assert probe(qtbot, view, NAME, "body", pred=lambda v: v is not None).count("需要联网") == 0
    assert console_errors(qtbot, view, caplog) == []


FA_PROBE = ('<script>\n'
            'document.fonts.ready.then(function () {\n'
            '  var els = Array.prototype.slice.call(document.querySelectorAll("i"));\n'
            '  return Promise.all(els.map(function (el) { var cs = getComputedStyle(el, "::before");\n'
            '    return document.fonts.load(getComputedStyle(el).fontWeight + " 16px " + getComputedStyle(el).fontFamily,'
            ' cs.content.replace(/"/g, "")).then(function (faces) {\n'
            '      return { id: el.id, width: el.getBoundingClientRect().width, family: getComputedStyle(el).fontFamily,'
            ' faces: faces.map(function (f) { return f.family; }) }; }); }));\n'
            '}).then(function (icons) { __liyuanReport({icons: icons}); });\n</script>')


def test_font_awesome_from_cdn_link(qtbot, view, caplog):
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    html = ('<link rel="stylesheet" href="https://testingcf.jsdelivr.net/npm/@fortawesome/fontawesome-free/css/all.min.css" />\n'
            '<link rel="stylesheet" href="https://cdnjs.cloudflare.com/ajax/libs/font-awesome/6.5.1/css/all.min.css">\n'
            '<style>@import url("https://use.fontawesome.com/releases/v5.15.4/css/all.css");</style>\n'
            '<p><i id="heart" class="fa-solid fa-heart"></i> <i id="star" class="far fa-star"></i></p>\n' + FA_PROBE)
    view.set_transcript([item(3, bar(html))], False)
    icons = {i["id"]: i for i in wait_report(qtbot, view, NAME, lambda r: "icons" in r)["icons"]}
    for name in ("heart", "star"):
        assert icons[name]["width"] > 0
        assert "Font Awesome" in icons[name]["family"]
        assert icons[name]["faces"] and all("Font Awesome" in f for f in icons[name]["faces"])   # the font loaded
    info = frame_info(qtbot, view, NAME)
    assert info["libs"] == "fontawesome"                 # no brand font, no compatibility families
    assert info["size"] < 400_000
    body = srcdoc_body(qtbot, view)
    assert "jsdelivr" not in body and "cdnjs" not in body and "use.fontawesome.com" not in body
    assert console_errors(qtbot, view, caplog) == []


def test_font_awesome_by_class_brands_and_v5_family(qtbot, view, caplog):
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    # no link at all: the fa- classes are enough (TavernHelper always has Font Awesome); an old bar's own CSS names
    # the Font Awesome 5 family
    html = ('<style>.mark::before { font-family: "Font Awesome 5 Free"; font-weight: 900; content: "\\f005"; }</style>\n'
            '<p><i id="gh" class="fab fa-github"></i> <i id="mark" class="mark"></i></p>\n' + FA_PROBE)
    view.set_transcript([item(3, bar(html))], False)
    icons = {i["id"]: i for i in wait_report(qtbot, view, NAME, lambda r: "icons" in r)["icons"]}
    assert icons["gh"]["width"] > 0 and icons["gh"]["faces"] == ["Font Awesome 7 Brands"]
    assert set(frame_info(qtbot, view, NAME)["libs"].split()) == {"fontawesome", "fontawesome_brands", "fontawesome_v5"}
    # the compatibility family loads too
    view.set_transcript([item(3, bar('<style>b::before{font-family:"Font Awesome 5 Free";font-weight:900;content:"\\f005"}</style>'
                                     '<b id="b"></b><script>document.fonts.load(\'900 16px "Font Awesome 5 Free"\', "\\uf005")'
                                     '.then(function (f) { __liyuanReport({v5: f.map(function (x) { return x.family; })}); });'
                                     '</script>'))], False)
    rep = wait_report(qtbot, view, NAME, lambda r: "v5" in r)
    assert rep["v5"] == ["Font Awesome 5 Free"]
    assert set(frame_info(qtbot, view, NAME)["libs"].split()) == {"fontawesome", "fontawesome_v5"}
    assert console_errors(qtbot, view, caplog) == []


def test_bar_without_them_gets_none_of_the_new_libraries(qtbot, view):
    # words that are no reference: prose about YAML, a variable named z, a "fa" that is no class prefix
    html = ('<p id="t">状态：YAML 格式；sofa-bed；z = 3</p>\n<script>\nvar z = {x: 1}, w = window;\n'
            '__liyuanReport({g: ["Zo", "YA", "VueRou", "Pin", "jQu", "V"].map(function (k) { return k + {Zo: "d", YA: "ML", VueRou: "ter", Pin: "ia", jQu: "ery", V: "ue"}[k]; }).map(function (k) { return typeof w[k]; }),'
            ' z: z.x, fonts: document.fonts.size, sheets: document.styleSheets.length});\n</script>')
    view.set_transcript([item(3, bar(html))], False)
    rep = wait_report(qtbot, view, NAME, lambda r: "g" in r)
    assert rep == {"g": ["undefined"] * 6, "z": 1, "fonts": 0, "sheets": 1}    # only our reset style
    info = frame_info(qtbot, view, NAME)
    assert info["libs"] == ""
    assert info["size"] < 80_000


# ---- libraries by need (issue 13 §2): TavernHelper's globals without a visible call ---------------------------------
def lazy_info(qtbot, view, name=NAME):
    return js_json(qtbot, view, f"(function(){{var f=document.getElementById({json.dumps(name)});"
                                f"return {{libs: f.dataset.libs, lazy: f.dataset.lazyLibs, size: f.srcdoc.length}};}})()")


def test_minified_bar_gets_zod_by_name_with_z_z(qtbot, view, caplog):
    """A bundled bar (webpack/vite output) keeps TavernHelper's `z` in a variable and calls `B.z.object` (zod's module
    namespace has `z`): no `z.x(` for the eager rule to see, yet zod is there, brought in when first read."""
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    html = ('<script>\n!function(){"use strict";const B=z;const S=B.z.object({hp:B.z.coerce.number().prefault(1)});'
            '__liyuanReport({hp:S.parse({hp:"7"}).hp,same:B.z.object===B.object,alias:window["Zo"+"d"]===B})}();\n</script>')
    view.set_transcript([item(3, bar(html))], False)
    rep = wait_report(qtbot, view, NAME, lambda r: "hp" in r)
    assert rep == {"hp": 7, "same": True, "alias": True}
    info = lazy_info(qtbot, view)
    assert info["libs"] == "" and info["lazy"] == "zod"
    assert console_errors(qtbot, view, caplog) == []


def test_globals_read_through_parent_window_and_a_variable(qtbot, view, caplog):
    """`parent.YAML` (TavernHelper's same-origin habit), `window._`, `$` kept in a variable: each library runs on first
    read, once; one the code names but never reads (`z` in a function nobody calls) stays inert text."""
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    html = ('<p id="p">x</p><script>\nvar Y = parent.YAML, L = window._, J = $;\n'
            'J("#p").text(L.sum([1, 2]));\n'
            '__liyuanReport({y: Y.parse("a: 2").a, p: J("#p").text(), same: window["jQ" + "uery"] === J && window._ === L,'
            ' inert: Array.from(document.querySelectorAll("script[data-liyuan-lib]"))'
            '.filter(s => s.textContent).map(s => s.dataset.liyuanLib),'
            ' unread: typeof Object.getOwnPropertyDescriptor(window, "z").get});\n'
            'function never() { return z; }\n</script>')
    view.set_transcript([item(3, bar(html))], False)
    rep = wait_report(qtbot, view, NAME, lambda r: "y" in r)
    assert rep == {"y": 2, "p": "3", "same": True, "inert": ["zod"], "unread": "function"}
    info = lazy_info(qtbot, view)
    assert info["libs"] == "" and set(info["lazy"].split()) == {"yaml", "lodash", "jquery", "zod"}
    assert console_errors(qtbot, view, caplog) == []


def test_card_own_dollar_and_underscore_win(qtbot, view, caplog):
    """A bar's own `const $ = …` / `window._ = …` is its own: the library does not replace it and nothing breaks."""
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    html = ('<b id="b">1</b><script>\nconst $ = (s) => document.querySelector(s);\nwindow._ = "mine";\n'
            '__liyuanReport({t: $("#b").textContent, u: window._});\n</script>')
    view.set_transcript([item(3, bar(html))], False)
    rep = wait_report(qtbot, view, NAME, lambda r: "t" in r)
    assert rep == {"t": "1", "u": "mine"}
    assert console_errors(qtbot, view, caplog) == []


def test_ejs_template_stand_in(qtbot, view, caplog):
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    html = ('<script>\nEjsTemplate.prepareContext({n: 2}).then(env => EjsTemplate.evalTemplate('
            '"<% if (variables.stat_data.hp > 1) { %>hp <%= variables.stat_data.hp %><% } -%>\\n'
            '<%_ const d = await Promise.resolve(n * 2) _%>\\n[<%- d %>]<%# no %>", env))'
            '.then(t => __liyuanReport({t: t}));\n</script>')
    view.set_transcript([item(3, bar(html), variables={"stat_data": {"hp": 5}})], False)
    rep = wait_report(qtbot, view, NAME, lambda r: "t" in r)
    assert rep == {"t": "hp 5[4]"}
    assert console_errors(qtbot, view, caplog) == []
