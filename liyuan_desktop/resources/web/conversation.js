/* Conversation view host page (liyuan_desktop/ui/conversation.py drives it).
 *
 * Python -> JS: window.liyuan.<method>(json) through QWebEnginePage.runJavaScript.
 * JS -> Python: QWebChannel object "bridge" (pageReady, requestOlder, welcomeAction, linkClicked, scrolled).
 *
 * Security: the model's text is never parsed as HTML. renderText() escapes the whole text first and only then
 * adds our own tags (em, strong, code, p, br, lists, quotes, headings, links with http(s)/mailto hrefs) to the
 * escaped string; labels, badges and errors are set with textContent.
 */
(function () {
  "use strict";

  // ---- strings (Python sends the translated set with setStrings; these are the Chinese defaults) ------------
  var S = {
    you: "你",
    beat: "第 {n} 拍",
    pending: "正在写…",
    revised: "已修订",
    "outcome.unsealed": "未收笔",
    "outcome.stopped": "已停止",
    "outcome.error": "调用出错",
    "outcome.out_of_rounds": "用满 20 次调用",
    older: "向上滚动，载入更早的内容",
    "older.loading": "正在载入更早的内容…",
    "welcome.title": "欢迎来到梨园",
    "welcome.intro": "",
    "welcome.sub": "",
    "welcome.demo": "玩离线演示",
    "welcome.settings": "设置模型",
    "frame.hung": "状态栏脚本无响应，已停止",
    "frame.memory": "状态栏占用内存过多，已停止",
    "frame.flood": "状态栏发送消息过多，已停止",
    "frame.notice.error": "状态栏出错了（{n} 条）",
    "frame.notice.blocked": "状态栏要加载的内容被拦下了（{n} 条）",
    "frame.notice.empty": "状态栏没有显示任何内容",
    "frame.notice.details": "详情",
    "ask.title": "岔口",
    "ask.wrote": "你答：{answer}",
    "ask.stopped": "你没有作答，停下了这一拍",
    "ask.auto": "自动选了第一项",
    "frame.unknown_api": "状态栏读取了不存在的接口 {name}（得到 undefined，显示的可能只是默认值）"
  };

  var OLDER_THRESHOLD = 320;   // px from the top at which older items are requested
  var BOTTOM_SLACK = 48;       // px from the bottom that still counts as "at the bottom"

  var bridge = null;
  var byId = new Map();
  var state = {
    hasOlder: false,
    loadingOlder: false,
    userLabel: "",
    avatars: { char: "", user: "" },  // data: URLs (issue 17), "" = none
    speakerAvatars: {},  // a group chat's members: speaker name -> data: URL (issue 31)
    pendingText: null,
    pendingLabel: "",
    pendingDirty: false,
    frame: 0,
    timer: 0,
    pendingUpdates: 0
  };

  var $ = function (id) { return document.getElementById(id); };
  var log = $("log");
  var pendingEl = $("pending");
  var olderEl = $("older");
  var bannerEl = $("banner");

  function scroller() { return document.scrollingElement || document.documentElement; }
  function atBottom() {
    var s = scroller();
    return s.scrollHeight - s.scrollTop - s.clientHeight <= BOTTOM_SLACK;
  }
  function toBottom() { var s = scroller(); s.scrollTop = s.scrollHeight; }

  // A reader at the end of the chat stays at the end while what is shown changes height after the fact — the
  // Chinese font arriving, avatars decoding, the banner appearing, a status bar taking its height — not only when an
  // item is added (the window reopened its last chat with the newest message cut off). Only scrolling up unpins:
  // the scroll event of our own toBottom() arrives a frame later, when the page may already have grown again.
  var pinned = true, lastTop = 0, readingTimer = 0;
  window.addEventListener("scroll", function () {
    var top = scroller().scrollTop;
    if (atBottom()) pinned = true; else if (top < lastTop) pinned = false;
    lastTop = top;
    if (!readingTimer) readingTimer = setTimeout(reportReading, 150);
  }, { passive: true });

  // Where the reader is (bridge.scrolled(id, offset): the first item reaching into the view and its top's offset
  // from the view's top in CSS px; "" when pinned to the end), so a window built again (the live language switch)
  // shows the same place: restoreScroll.
  function reportReading() {
    readingTimer = 0;
    if (!bridge || !bridge.scrolled) return;
    if (pinned) { bridge.scrolled("", 0); return; }
    for (var el = log.firstElementChild; el; el = el.nextElementSibling) {
      var box = el.getBoundingClientRect();
      if (box.bottom > 0) { bridge.scrolled(el.dataset.id || "", Math.round(box.top)); return; }
    }
    bridge.scrolled("", 0);
  }
  if (window.ResizeObserver) new ResizeObserver(function () { if (pinned) toBottom(); }).observe(document.body);

  // ---- rendering text -----------------------------------------------------------------------------------------
  var PH_OPEN = "\uE000", PH_CLOSE = "\uE001";

  function esc(s) {
    return String(s)
      .replace(/&/g, "&amp;")
      .replace(/</g, "&lt;")
      .replace(/>/g, "&gt;")
      .replace(/"/g, "&quot;")
      .replace(/'/g, "&#39;");
  }

  // A URL (already escaped) we are willing to put into an href: http, https, mailto. Nothing else.
  function safeHref(escUrl) {
    return /^(https?:\/\/|mailto:)[^\s]+$/i.test(escUrl) ? escUrl : null;
  }

  function emphasis(t) {
    t = t.replace(/\*\*\*(?=\S)([\s\S]*?[^\s*])\*\*\*/g, "<strong><em>$1</em></strong>");
    t = t.replace(/\*\*(?=\S)([\s\S]*?[^\s])\*\*/g, "<strong>$1</strong>");
    t = t.replace(/\*(?=[^\s*])([^*]*?[^\s*])\*/g, "<em>$1</em>");
    t = t.replace(/\*(?=[^\s*])([^\s*])\*/g, "<em>$1</em>");
    t = t.replace(/~~(?=\S)([\s\S]*?\S)~~/g, "<del>$1</del>");
    return t;
  }

  // Inline formatting of one escaped block of text. Code spans and links are set aside first (placeholders in a
  // private-use range the input cannot contain) so that emphasis never reaches into them.
  function inline(t) {
    var stash = [];
    function keep(html) { stash.push(html); return PH_OPEN + (stash.length - 1) + PH_CLOSE; }

    t = t.replace(/(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)/g, function (_, ticks, code) {
      return keep("<code>" + code.replace(/^ (.*) $/, "$1") + "</code>");
    });
    t = t.replace(/\[([^\]\n]+)\]\(\s*([^\s)]+)(?:\s+&quot;[^\n]*?&quot;)?\s*\)/g, function (whole, label, url) {
      var href = safeHref(url);
      if (!href) return whole;            // e.g. javascript: — shown as the text it is
      return keep('<a href="' + href + '" title="' + href + '">' + emphasis(label) + "</a>");
    });
    t = t.replace(/\bhttps?:\/\/(?:&amp;|[^\s&\u3000-\u303f\uff00-\uffef\uE000-\uE003])+/gi, function (url) {
      var tail = "";
      var m = url.match(/[.,;:!?)\]]+$/);
      if (m) { tail = m[0]; url = url.slice(0, -tail.length); }
      var href = safeHref(url);
      return href ? keep('<a href="' + href + '" title="' + href + '">' + url + "</a>") + tail : url + tail;
    });
    t = emphasis(t);
    t = t.replace(/\n/g, "<br>");
    for (var guard = 0; guard < 3 && t.indexOf(PH_OPEN) !== -1; guard++) {
      t = t.replace(/\uE000(\d+)\uE001/g, function (_, i) { return stash[+i]; });
    }
    return t;
  }

  var RE_FENCE = /^\s{0,3}(`{3,}|~{3,})\s*([^`\s]*)[^`]*$/;
  var RE_HEADING = /^\s{0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$/;
  var RE_HR = /^\s{0,3}([-*_])(?:\s*\1){2,}\s*$/;
  var RE_QUOTE = /^\s{0,3}&gt;\s?/;
  var RE_UL = /^\s{0,3}[-*+]\s+/;
  var RE_OL = /^\s{0,3}(\d{1,9})[.)]\s+/;

  function startsBlock(line) {
    return RE_FENCE.test(line) || RE_HEADING.test(line) || RE_HR.test(line) || RE_QUOTE.test(line) ||
      RE_UL.test(line) || RE_OL.test(line);
  }

  // When a reply is still being written, an emphasis that has been opened but not yet closed is shown as if
  // closed, so the text does not jump from "*她说" to italics when the closing star arrives.
  function closeOpenStars(t) {
    var singles = t.replace(/\*\*/g, "").split("*").length - 1;
    var doubles = (t.match(/\*\*/g) || []).length;
    if (doubles % 2 === 1 && !/\*\*$/.test(t)) t += "**";
    if (singles % 2 === 1 && !/\*$/.test(t)) t += "*";
    return t;
  }

  // Block structure over escaped lines: fenced code, headings, rules, quotes, lists, paragraphs.
  function blocks(lines, opts) {
    var out = [];
    var i = 0, n = lines.length;
    while (i < n) {
      var line = lines[i];
      var m;
      if (/^\s*$/.test(line)) { i++; continue; }

      if ((m = line.match(RE_FENCE))) {
        var fence = m[1], lang = m[2], body = [];
        i++;
        while (i < n && !(new RegExp("^\\s{0,3}" + fence[0] + "{" + fence.length + ",}\\s*$")).test(lines[i])) {
          body.push(lines[i]); i++;
        }
        i++; // the closing fence (or the end of a still-growing text)
        out.push("<pre" + (lang ? ' data-lang="' + lang + '"' : "") + "><code>" + body.join("\n") + "</code></pre>");
        continue;
      }
      if ((m = line.match(RE_HEADING))) {
        var level = m[1].length;
        out.push("<h" + level + ">" + inline(m[2]) + "</h" + level + ">");
        i++; continue;
      }
      if (RE_HR.test(line)) { out.push("<hr>"); i++; continue; }

      if (RE_QUOTE.test(line)) {
        var q = [];
        while (i < n && RE_QUOTE.test(lines[i])) { q.push(lines[i].replace(RE_QUOTE, "")); i++; }
        out.push("<blockquote>" + blocks(q, opts) + "</blockquote>");
        continue;
      }

      var ordered = RE_OL.test(line);
      if (ordered || RE_UL.test(line)) {
        var re = ordered ? RE_OL : RE_UL;
        var items = [], cur = null;
        var start = ordered ? parseInt(line.match(RE_OL)[1], 10) : 1;
        while (i < n) {
          var l = lines[i];
          if (re.test(l)) {
            cur = [l.replace(re, "")]; items.push(cur); i++;
          } else if (/^\s*$/.test(l)) {
            // a blank line ends the list unless the next line is another item of it
            if (i + 1 < n && re.test(lines[i + 1])) { i++; continue; }
            break;
          } else if (/^\s{2,}\S/.test(l) || !startsBlock(l)) {
            cur.push(l.replace(/^\s+/, "")); i++;          // continuation of the item
          } else {
            break;
          }
        }
        var tag = ordered ? "ol" : "ul";
        out.push("<" + tag + (ordered && start !== 1 ? ' start="' + start + '"' : "") + ">" +
          items.map(function (it) { return "<li>" + inline(it.join("\n")) + "</li>"; }).join("") +
          "</" + tag + ">");
        continue;
      }

      var para = [line];
      i++;
      while (i < n && !/^\s*$/.test(lines[i]) && !startsBlock(lines[i])) { para.push(lines[i]); i++; }
      var text = para.join("\n");
      if (opts && opts.streaming && i >= n) text = closeOpenStars(text);
      out.push("<p>" + inline(text) + "</p>");
    }
    return out.join("");
  }

  // A status bar in formatting: a card's display regex puts its ```html block where the placeholder was, and models
  // wrap the placeholder in emphasis or a list item (`*<StatusPlaceHolderImpl/>*`, `**…**`, `- …`, `> …`), so the
  // fence starts mid-line and the closing markup follows the closing fence. A fenced block whose code is a status
  // bar (isFrontend) is moved onto lines of its own: the markup around it is dropped, other text on those lines
  // stays as a paragraph before / after it. Fences already on their own lines are left as they are.
  var LIFT_FENCE = /^([^\n`]*?)(`{3,})([\w-]*)[ \t]*\n([\s\S]*?)\n[ \t]*\2(?!`)([^\n]*)$/gm;
  function liftFrontendFences(text) {
    if (text.indexOf("```") === -1) return text;
    return text.replace(LIFT_FENCE, function (whole, before, fence, lang, body, after) {
      if (!before.trim() && !after.trim() || !isFrontend(body)) return whole;
      var pre = before.replace(/[*_~\s]+$/, "");
      if (/^\s*(?:(?:[-*+]|\d{1,9}[.)])\s*|>\s*)*$/.test(pre)) pre = "";
      var post = after.replace(/^[*_~\s]+/, "");
      return (pre ? pre + "\n\n" : "") + fence + lang + "\n" + body + "\n" + fence + (post ? "\n\n" + post : "");
    });
  }

  /** The HTML for a message text: escaped first, then formatted. opts.opening: a leading 【…】 line becomes the
   *  opening's small title; opts.streaming: the text is still growing. */
  function renderText(raw, opts) {
    var text = liftFrontendFences(String(raw == null ? "" : raw)
      .replace(/\r\n?/g, "\n")
      .replace(/[\uE000\uE001]/g, "\uFFFD"));
    var lines = esc(text).split("\n");
    var head = "";
    if (opts && opts.opening) {
      var first = 0;
      while (first < lines.length && /^\s*$/.test(lines[first])) first++;
      var m = first < lines.length && lines[first].match(/^\s*【([^】\n]{1,60})】\s*$/);
      if (m) {
        head = '<div class="opening-title">' + m[1] + "</div>";
        lines = lines.slice(first + 1);
      }
    }
    return head + blocks(lines, opts);
  }

  // ---- card HTML in messages (issue 13 §3) -------------------------------------------------------------------
  // SillyTavern renders message HTML after DOMPurify (messageFormatting: DOMPurify's default allow-list, classes
  // renamed custom-*, <style> blocks decoded with their selectors prefixed by the message text's selector and
  // @import dropped). Here, when DOMPurify is loaded and the text has HTML tags outside code fences: those tags are
  // set aside, the rest is escaped and formatted exactly as renderText does, the tags go back in, and the result is
  // sanitised: no script, event handler, form, embedded document or media element; URLs only data:image for images
  // and http(s)/mailto for links; classes and ids renamed custom-*; no data-* attributes (the page's own buttons use
  // them); url() in styles only data:. <style> blocks are scoped to this message (selectors under its body, classes
  // renamed, @import/@font-face dropped) and the body gets `contain: layout paint` (.md.html in conversation.css), so
  // nothing a card writes can reach or cover the app outside its message. Unknown tags such as MVU's
  // <StatusPlaceHolderImpl/> vanish (DOMPurify drops them). Text with no tags keeps renderText's escaping.
  var HTML_TAG = /<\/?[A-Za-z][A-Za-z0-9:-]*(?:\s[^<>]*)?\/?>|<!--[\s\S]*?-->/g;
  var CODE_OR_TAG = new RegExp("(`+)(?:[^`]|[^`][\\s\\S]*?[^`])\\1(?!`)|" + HTML_TAG.source, "g");
  var HAS_TAG = /<\/?[A-Za-z][A-Za-z0-9:-]*(?:\s[^<>]*)?\/?>/;
  var STYLE_BLOCK = /<style\b[^>]*>([\s\S]*?)<\/style\s*>/gi;
  var SVG_NS = "http://www.w3.org/2000/svg";
  var TAG_OPEN = "\uE002", TAG_CLOSE = "\uE003";
  var purifyReady = false;
  var OWN_CLASSES = { "opening-title": true };  // renderText's own markup keeps its classes
  var PURIFY_CONFIG = {
    FORBID_TAGS: ["style", "form", "input", "textarea", "select", "option", "link", "meta", "base", "iframe", "frame",
                  "frameset", "object", "embed", "applet", "video", "audio", "source", "track", "picture", "portal",
                  "template", "noscript", "dialog"],
    FORBID_ATTR: ["srcset", "action", "formaction", "ping", "background", "poster", "xlink:href", "lowsrc", "dynsrc",
                  "autofocus", "tabindex", "accesskey", "target"],
    ALLOW_DATA_ATTR: false,
    ADD_ATTR: ["data-lang"],                   // renderText's <pre data-lang>
    ALLOW_ARIA_ATTR: true
  };

  // ---- CSS that loads nothing (issue 29 §7) -------------------------------------------------------------------
  // The sanitiser holds without the page's CSP: every style attribute and every declaration of a <style> block is
  // parsed by the browser's own CSS parser (a style attribute on an element of an inert document: nothing loads),
  // and each declaration is kept only when its serialised value passes cssValueSafe: no backslash (escapes such as
  // `\75 rl(` or `u\rl(` spell functions the text does not show), no comment, closed strings only, and no function
  // but those in SAFE_CSS_FUNCS (colours, maths, gradients, transforms, filters, shapes, timing); url() only with
  // a data: URL (or, in an SVG attribute, a `#id` in the same message). image-set, -webkit-image-set, cross-fade,
  // element, paint, image, src, attr … are not on the list. The text that goes back into the page is checked once
  // more as a whole, so a value the per-declaration pass could not see (a shorthand waiting for var()) goes too.
  var SAFE_CSS_FUNCS = {};
  ("rgb rgba hsl hsla hwb lab lch oklab oklch color color-mix light-dark device-cmyk calc min max clamp round mod rem " +
   "abs sign sin cos tan asin acos atan atan2 pow sqrt hypot log exp var env " +
   "linear-gradient radial-gradient conic-gradient repeating-linear-gradient repeating-radial-gradient " +
   "repeating-conic-gradient -webkit-linear-gradient -webkit-radial-gradient -webkit-repeating-linear-gradient " +
   "-webkit-repeating-radial-gradient matrix matrix3d translate translatex translatey translatez translate3d scale " +
   "scalex scaley scalez scale3d rotate rotatex rotatey rotatez rotate3d skew skewx skewy perspective blur brightness " +
   "contrast drop-shadow grayscale hue-rotate invert opacity saturate sepia cubic-bezier steps linear minmax repeat " +
   "fit-content counter counters inset circle ellipse polygon rect xywh path").split(" ").forEach(function (f) { SAFE_CSS_FUNCS[f] = true; });
  var CSS_URL_FN = /url\(\s*(?:"([^"]*)"|'([^']*)'|([^"'()\s]*))\s*\)/gi;
  var inertEl = null;

  /** True when the CSS text `v` (a declaration value, or a whole declaration list) can load nothing (see above).
   *  fragments: url(#id) allowed too (SVG paint servers, filters, clip paths in the same message). */
  function cssValueSafe(v, fragments) {
    v = String(v);
    if (v.indexOf("\\") !== -1 || v.indexOf("/*") !== -1) return false;
    var bad = false;
    v = v.replace(CSS_URL_FN, function (_, dq, sq, bare) {
      var u = (dq != null ? dq : sq != null ? sq : bare || "").trim();
      if (!/^data:/i.test(u) && !(fragments && /^#[\w\u0080-\uffff-]+$/.test(u))) bad = true;
      return "none";
    });
    if (bad) return false;
    v = v.replace(/"[^"\n]*"|'[^'\n]*'/g, '""');
    if (/['"]/.test(v.replace(/""/g, ""))) return false;      // a string left open
    var fn = /([\w\u0080-\uffff-]+)\s*\(/g, m;
    while ((m = fn.exec(v))) {
      if (!SAFE_CSS_FUNCS[m[1].toLowerCase()]) return false;
    }
    return true;
  }

  /** The declarations of a serialised declaration block (`a: b; c: d`), split where a `;` stands outside strings
   *  and brackets. */
  function splitDeclarations(text) {
    var out = [], start = 0, depth = 0, quote = "";
    for (var i = 0; i < text.length; i++) {
      var c = text.charAt(i);
      if (quote) {
        if (c === "\\") i++;
        else if (c === quote) quote = "";
      } else if (c === '"' || c === "'") quote = c;
      else if (c === "(" || c === "[" || c === "{") depth++;
      else if (c === ")" || c === "]" || c === "}") depth = Math.max(0, depth - 1);
      else if (c === ";" && depth === 0) { out.push(text.slice(start, i)); start = i + 1; }
    }
    out.push(text.slice(start));
    return out.map(function (d) { return d.trim(); }).filter(Boolean);
  }

  /** The declarations of a parsed CSSStyleDeclaration that pass cssValueSafe, as CSS text ("" when none). Read from
   *  the browser's serialisation (cssText: shorthands kept, also those that wait for a var()). */
  function safeDeclarations(style) {
    var out = splitDeclarations(String(style.cssText || "")).filter(function (d) {
      var m = /^(-{0,2}[A-Za-z][\w-]*)\s*:([\s\S]*)$/.exec(d);
      return !!m && cssValueSafe(m[2]);
    });
    var text = out.join("; ");
    return cssValueSafe(text) ? text : "";
  }

  /** A style attribute's text made safe: parsed by the browser (on an element of an inert document), unsafe
   *  declarations dropped (safeDeclarations). */
  function safeStyleAttr(text) {
    if (!inertEl) inertEl = document.implementation.createHTMLDocument("").createElement("div");
    inertEl.setAttribute("style", String(text));
    var clean = safeDeclarations(inertEl.style);
    inertEl.removeAttribute("style");
    return clean;
  }

  /** An SVG element's attributes made safe: href only to a `#id` in the message (renamed custom-* like the ids) or,
   *  on <image>/<feImage>, a data:image; any other attribute whose value holds a function or an escape (fill,
   *  filter, mask, clip-path, marker-*, animation values …) must pass cssValueSafe, url(#id) renamed too. */
  function safeSvgAttrs(node) {
    var tag = String(node.localName || "").toLowerCase();
    Array.prototype.slice.call(node.attributes).forEach(function (a) {
      var name = a.name.toLowerCase(), v = a.value.trim();
      if (name === "style" || name === "class" || name === "id" || /^aria-/.test(name)) return;
      if (name === "href" || /:href$/.test(name)) {
        if (/^#[\w\u0080-\uffff-]+$/.test(v)) node.setAttribute(a.name, "#custom-" + v.slice(1));
        else if ((tag === "image" || tag === "feimage") && /^data:image\//i.test(v)) return;
        else node.removeAttribute(a.name);
        return;
      }
      if (v.indexOf("(") === -1 && v.indexOf("\\") === -1) return;
      if (!cssValueSafe(v, true)) { node.removeAttribute(a.name); return; }
      if (/url\(/i.test(v)) {
        node.setAttribute(a.name, v.replace(CSS_URL_FN, function (_, dq, sq, bare) {
          var u = (dq != null ? dq : sq != null ? sq : bare || "").trim();
          return u.charAt(0) === "#" ? 'url("#custom-' + u.slice(1) + '")' : 'url("' + u + '")';
        }));
      }
    });
  }

  function setupPurify() {
    if (purifyReady) return true;
    var P = window.DOMPurify;
    if (!P || typeof P.sanitize !== "function" || !P.isSupported) return false;
    P.addHook("afterSanitizeAttributes", function (node) {
      if (!node.getAttribute) return;
      if (node.hasAttribute("class")) {
        node.setAttribute("class", node.getAttribute("class").split(/\s+/).filter(Boolean)
          .map(function (c) { return OWN_CLASSES[c] ? c : "custom-" + c; }).join(" "));
      }
      ["id", "name", "for", "form", "list"].forEach(function (a) {
        if (node.hasAttribute(a)) node.setAttribute(a, "custom-" + node.getAttribute(a));
      });
      if (node.namespaceURI === SVG_NS) safeSvgAttrs(node);   // href only #id (renamed) or a data: image
      else if (node.hasAttribute("href") && !/^(https?:\/\/|mailto:)/i.test(node.getAttribute("href").trim())) {
        node.removeAttribute("href");
      }
      if (node.hasAttribute("src") && !/^data:image\//i.test(node.getAttribute("src").trim())) node.removeAttribute("src");
      if (node.hasAttribute("style")) {
        var st = safeStyleAttr(node.getAttribute("style"));
        if (st) node.setAttribute("style", st); else node.removeAttribute("style");
      }
      ["cite", "longdesc", "usemap", "codebase", "data", "archive", "manifest", "icon"].forEach(function (a) {
        if (node.hasAttribute(a)) node.removeAttribute(a);
      });
    });
    purifyReady = true;
    return true;
  }

  function scopeSelector(sel, scope) {
    sel = sel.trim();  // as SillyTavern: every selector is put under the message, so html/body/:root match nothing
    sel = sel.replace(/\.(-?[_a-zA-Z\u00a0-\uffff][\w\u00a0-\uffff-]*)/g, ".custom-$1")
      .replace(/#(-?[_a-zA-Z\u00a0-\uffff][\w\u00a0-\uffff-]*)/g, "#custom-$1");
    return scope + (sel ? " " + sel : "");
  }

  /** The CSS of a message's <style> blocks scoped to that message (scope: its body's selector). */
  function scopeCss(css, scope) {
    var sheet;
    try { sheet = new CSSStyleSheet(); sheet.replaceSync(css); } catch (e) { return ""; }
    function rules(list) {
      var out = [];
      Array.prototype.forEach.call(list, function (r) {
        if (r.selectorText !== undefined && r.style) {
          out.push(r.selectorText.split(",").map(function (x) { return scopeSelector(x, scope); }).join(", ") +
                   " { " + safeDeclarations(r.style) + " }");
        } else if (r.media && r.cssRules) {
          out.push("@media " + r.media.mediaText + " { " + rules(r.cssRules) + " }");
        } else if (r.name !== undefined && r.cssRules && /keyframes/i.test(r.cssText.slice(0, 20))) {
          out.push("@keyframes " + CSS.escape(r.name) + " { " + Array.prototype.map.call(r.cssRules, function (k) {
            return k.keyText + " { " + (k.style ? safeDeclarations(k.style) : "") + " }";
          }).join(" ") + " }");
        }
        // @import, @font-face, @namespace, @page … are dropped
      });
      return out.join("\n");
    }
    return rules(sheet.cssRules);
  }

  /** The HTML for a message whose text carries card HTML (see above), or null when renderText applies (no tags,
   *  or no DOMPurify). Returns {html, css}; css is the scoped text of its <style> blocks ("" when none). */
  function renderHtmlText(raw, opts, scope) {
    var text = String(raw == null ? "" : raw).replace(/\r\n?/g, "\n").replace(/[\uE002\uE003]/g, "\uFFFD");
    if (!HAS_TAG.test(text) || !setupPurify()) return null;
    text = liftFrontendFences(text);
    var lines = text.split("\n"), chunks = [], cur = [], fence = null, i;
    for (i = 0; i < lines.length; i++) {       // code fences stay exactly as they are (frames read them)
      var line = lines[i], m;
      if (fence === null && (m = line.match(RE_FENCE))) {
        chunks.push({ code: false, text: cur.join("\n") }); cur = [line]; fence = m[1];
      } else if (fence !== null && new RegExp("^\\s{0,3}" + (fence[0] === "`" ? "`" : "~") + "{" + fence.length + ",}\\s*$").test(line)) {
        cur.push(line); chunks.push({ code: true, text: cur.join("\n") }); cur = []; fence = null;
      } else {
        cur.push(line);
      }
    }
    chunks.push({ code: fence !== null, text: cur.join("\n") });
    var stash = [], css = [];
    var joined = chunks.map(function (c) {
      if (c.code) return c.text;
      var t = c.text.replace(STYLE_BLOCK, function (_, body) { css.push(body); return ""; });
      return t.replace(CODE_OR_TAG, function (tag, ticks) {
        if (ticks) return tag;                 // an inline code span stays literal text
        if (/^<!--/.test(tag)) return "";
        stash.push(tag);
        return TAG_OPEN + (stash.length - 1) + TAG_CLOSE;
      });
    }).filter(function (t, k) { return k === 0 || t !== "" || chunks[k].code; }).join("\n");
    var html = renderText(joined, opts)
      // a line holding only tags is not a paragraph of its own (<div>, <details> … stand as blocks)
      .replace(/<p>((?:\s|<br>|\uE002\d+\uE003)*)<\/p>/g, function (_, inner) { return inner.replace(/<br>/g, ""); })
      .replace(/\uE002(\d+)\uE003/g, function (_, k) { return stash[+k] || ""; });
    var clean = window.DOMPurify.sanitize(html, PURIFY_CONFIG);
    return { html: clean, css: css.length && scope ? scopeCss(css.join("\n"), scope) : "" };
  }

  /** Fill a message body: card HTML sanitised (renderHtmlText) or escaped text (renderText). */
  function fillBody(body, item, opts) {
    var scope = item.id != null ? '.msg[data-id="' + String(item.id).replace(/["\\\n]/g, "") + '"] .body' : "";
    var r = null;
    // an item still being scripted is shown for a moment only: as plain escaped text (cheap, nothing mounted)
    if (!item.scripting) { try { r = renderHtmlText(item.text, opts, scope); } catch (e) { r = null; } }
    if (!r) { body.innerHTML = renderText(item.text, opts); return; }
    body.innerHTML = r.html;
    body.classList.add("html");
    if (r.css) {
      var st = document.createElement("style");
      st.textContent = r.css;
      body.insertBefore(st, body.firstChild);
    }
  }

  // ---- status-bar frames (TavernHelper-style) ---------------------------------------------------------------
  // A fenced code block whose text contains "html>", "<head>" or "<body" becomes a sandboxed iframe
  // (sandbox="allow-scripts", never allow-same-origin) named TH-message--{id}--{n}. The frame's document is built
  // like TavernHelper's createSrcContent: reset CSS, the min-height Nvh rewrite, our th_shim.js (with the initial
  // variables inline as a JSON literal) first, then the card's HTML. The code text is the block's textContent, i.e.
  // the item's raw text between the fences (renderText escaped it, textContent un-escapes it exactly); everything
  // outside code blocks stays escaped text. Frames talk to us only with postMessage; we relay to Python.
  // Network: the frame's CSP allows no fetch/XHR/remote script. Libraries are inlined instead (see "frame
  // libraries" below): the ones a card's HTML references, and the ones its CDN <script src> tags ask for.
  // A trusted card (Python's setFrameCard, core/card_trust.py) may also load scripts, stylesheets and fonts over
  // https — nothing else is relaxed (no connect, no frames, no images from outside; the request interceptor in
  // conversation.py still refuses loopback / private addresses and plain http).
  var FRAME_CSP = "default-src 'none'; script-src 'unsafe-inline' 'unsafe-eval'; style-src 'unsafe-inline'; img-src data:; " +
    "font-src data:; connect-src 'none'; frame-src 'none'; object-src 'none'; base-uri 'none'; form-action 'none'";
  var FRAME_CSP_TRUSTED = "default-src 'none'; script-src 'unsafe-inline' 'unsafe-eval' https:; style-src 'unsafe-inline' https:; " +
    "img-src data:; font-src data: https:; connect-src 'none'; frame-src 'none'; object-src 'none'; base-uri 'none'; " +
    "form-action 'none'";
  // Sites the user allowed for this card (Python's setFrameCard "sites", core/cards/meta.py allowed_sites; issue 26
  // §3): https://HOST is added to the directives a remote page and its loads need, 'none' dropped there. The host
  // names come validated ([a-z0-9.-]); anything else is left out.
  var SITE_DIRECTIVES = ["script-src", "style-src", "font-src", "img-src", "media-src", "connect-src", "frame-src"];
  function withSites(csp, sites) {
    var src = (sites || []).filter(function (h) { return /^[a-z0-9.-]+$/.test(h); })
      .map(function (h) { return "https://" + h; }).join(" ");
    if (!src) return csp;
    var seen = {};
    var parts = csp.split(";").map(function (p) { return p.trim(); }).filter(Boolean).map(function (p) {
      var name = p.split(/\s+/)[0];
      if (SITE_DIRECTIVES.indexOf(name) < 0) return p;
      seen[name] = true;
      return p.split(/\s+/).filter(function (t) { return t !== "'none'"; }).join(" ") + " " + src;
    });
    SITE_DIRECTIVES.forEach(function (d) { if (!seen[d]) parts.push(d + " " + src); });
    return parts.join("; ");
  }
  function siteAllowed(url) {
    var m = /^https:\/\/([^\/?#:]+)/i.exec(String(url || "").trim());
    return !!m && (frames.card.sites || []).indexOf(m[1].toLowerCase()) >= 0;
  }
  function frameCsp() { return withSites(frames.card.trusted ? FRAME_CSP_TRUSTED : FRAME_CSP, frames.card.sites); }
  var FRAME_RESET = "*{box-sizing:border-box}html,body{margin:0!important;padding:0;overflow:hidden!important;" +
    "max-width:100%!important}";
  var frames = {
    shim: "",                 // th_shim.js text (Python sends it with setFrameRuntime)
    byName: new Map(),        // name -> {iframe, messageId}
    vars: new Map(),          // message id -> variables (MvuData) of that message
    context: { names: {}, chatVars: {}, characterVars: {}, globalVars: {} },
    reports: [],              // what frames reported (tests, diagnostics)
    logs: [],                 // frame console lines forwarded by the shim
    probes: new Map(),
    probeSeq: 0,
    libs: null,               // key -> {package, version, kind, text} once vendor/lib/frame_libs.js has loaded
    libsWaiting: [],          // callbacks waiting for it
    // the card whose chat is shown: its storage (all frames of the view belong to it) and its trust switch
    card: { key: "", trusted: false, sites: [], local: {}, session: {}, maxBytes: 1048576, globalKey: "card:" },
    storageTimer: 0,
    // watchdog (see "frame watchdog" below)
    watch: { pingMs: 1000, hangMs: 5000, loadMs: 15000, reuseMs: 3000, timer: 0, seq: 0, queue: [], probation: null,
             waiting: 0 },
    failed: new Map(),        // failure key (name + code hash) -> reason; such frames show an error box instead
    failedNames: [],          // names of frames stopped since the card was set (tests, Python)
    blocked: [],              // {name, url, directive}: what frames' policies refused
    // what a frame may post to us (Python's frame_guard.FLOOD): token bucket per frame, see the message listener
    flood: { rate: 200, burst: 400, frameBurst: 100, stopPerSecond: 2000, lagMs: 250, lagCount: 150 },
    // variable scopes kept per card (frame_guard.variable_scope_key): chat/character by card key, global by globalKey
    scopes: {}, globals: {}
  };

  // ---- frame libraries ---------------------------------------------------------------------------------------
  // The browser builds TavernHelper injects (vendor/lib/, rebuilt from the npm lock file by scripts/vendor_libs.py)
  // arrive once, as JSON strings in vendor/lib/frame_libs.js: our page policy allows script-src 'self' but no
  // connect-src, so a <script> tag, not fetch. The texts are inlined into a frame's srcdoc (its CSP allows only
  // inline script and style, and data: fonts and images), and only those the card needs, so that small bars stay
  // light:
  //   jquery      the card's HTML mentions  $(  $.x  or  jQuery
  //   jqueryui    $.ui / jQuery.ui or a widget call (.draggable( .sortable( .dialog( .slider( ...) (+ jquery, and
  //               the base theme CSS jqueryui_css)
  //   lodash      _.x
  //   vue         Vue
  //   vuerouter   VueRouter (+ vue)                 pinia   Pinia (+ vue)
  //   zod         z.x( / z.x.  or  Zod.x  (zod 4, as in TavernHelper; global z, alias Zod)
  //   yaml        YAML.x
  //   showdown    showdown
  //   toastr      toastr (+ jquery, which it needs); toastr's JS and CSS come after th_shim.js, whose logging stub
  //               it replaces; all the others come before the shim, as in TavernHelper.
  //   fontawesome a class with the fa- prefix (fa-solid, fa-heart ...) or the name "Font Awesome"/"FontAwesome":
  //               Font Awesome Free's CSS with the solid and regular fonts inlined; the brand font
  //               (fontawesome_brands) only for fa-brands / fab, the compatibility families only when the card's
  //               CSS names them in a font declaration: "Font Awesome 5 Free/Brands" (fontawesome_v5),
  //               "FontAwesome" (fontawesome_v4). Each is a few hundred KB of font data.
  // A classic <script src> or stylesheet <link> (or a CSS @import) pointing at a CDN copy of one of these (jsDelivr
  // incl. testingcf/fastly/gcore, unpkg, npm.elemecdn, cdnjs, bootcdn, staticfile, baomitu, code.jquery.com,
  // use/kit.fontawesome.com) is dropped and that library is injected instead. ES module imports of them (jsDelivr
  // "+esm", unpkg, esm.sh, esm.run, skypack) — static ones in <script type="module">, dynamic import("…") in any
  // script — are rewritten to read the injected global (import { createApp } from ".../vue/+esm" becomes
  // const { createApp } = <Vue as a module>), so that a card gets the one copy of Vue the others use.
  // Every other remote script (a <script src> or an ES module import of an http(s) URL) stays, is blocked by the
  // frame's CSP, and the frame shows a notice "需要联网：URL" at the top instead of a silently blank bar.
  var LIB_BEFORE_SHIM = ["jqueryui_css", "fontawesome", "fontawesome_brands", "fontawesome_v5", "fontawesome_v4",
                         "jquery", "jqueryui", "lodash", "vue", "vuerouter", "pinia", "zod", "yaml", "showdown",
                         "asyncwaituntil", "klona", "dedent", "json5", "mitt", "vueuse", "piniapersist"];
  var LIB_USE = {
    jquery: /(^|[^\w$])\$\s*(\(|\.[A-Za-z_])|\bjQuery\b/,
    lodash: /(^|[^\w$.])_\.[A-Za-z_$]/,
    vue: /\bVue\b/,
    showdown: /\bshowdown\b/,
    toastr: /\btoastr\b/,
    jqueryui: /(?:\$|\bjQuery)\.ui\b|\.(?:draggable|droppable|resizable|sortable|selectable|dialog|slider|progressbar|accordion|autocomplete|datepicker|spinner|selectmenu|checkboxradio|controlgroup|tabs|tooltip)\s*\(/,
    vuerouter: /\bVueRouter\b/,
    pinia: /\bPinia\b/,
    zod: /(^|[^\w$.])z\.[A-Za-z_]\w*\s*[(.]|\bZod\.[A-Za-z_]/,
    yaml: /\bYAML\s*\.\s*[A-Za-z_]/,
    fontawesome: /(^|[^\w-])fa-[a-z0-9]|Font ?Awesome/,
    fontawesome_brands: /(^|[^\w-])(?:fa-brands|fab)(?![\w-])|Font Awesome \d+ Brands/,
    fontawesome_v5: /\bfont(?:-family|Family)?\s*[:=][^;}]*?Font Awesome 5 (?:Free|Brands)/,
    fontawesome_v4: /\bfont(?:-family|Family)?\s*[:=][^;}]*?\bFontAwesome\b/,
    json5: /\bJSON5\s*\.\s*(?:parse|stringify)\b/,
    vueuse: /\bVueUse\s*\.\s*[A-Za-z_]/
  };
  var LIB_NEEDS = { toastr: ["jquery"], jqueryui: ["jquery", "jqueryui_css"], vuerouter: ["vue"], pinia: ["vue"],
                    vueuse: ["vue"],
                    fontawesome_brands: ["fontawesome"], fontawesome_v5: ["fontawesome"], fontawesome_v4: ["fontawesome"] };
  // npm-style (name[@version][/path]) | cdnjs-style (name/version/file) | code.jquery.com | fontawesome.com
  var CDN_PREFIX = new RegExp("^(?:https?:)?//(?:" +
    "((?:testingcf|cdn|fastly|gcore)\\.jsdelivr\\.net/npm/|unpkg\\.com/|npm\\.elemecdn\\.com/|" +
    "(?:esm\\.sh|esm\\.run|cdn\\.skypack\\.dev)/(?:v\\d+/|stable/)?)" +
    "|((?:cdnjs\\.cloudflare\\.com|cdn\\.bootcdn\\.net)/ajax/libs/|cdn\\.staticfile\\.(?:org|net)/|lib\\.baomitu\\.com/)" +
    "|(code\\.jquery\\.com/)|((?:use|kit|ka-f)\\.fontawesome\\.com/))", "i");
  var CDN_PACKAGES = { "jquery": "jquery", "lodash": "lodash", "lodash.js": "lodash", "lodash-es": "lodash",
                       "vue": "vue", "vue-demi": "vue", "showdown": "showdown", "toastr": "toastr", "toastr.js": "toastr",
                       "jquery-ui": "jqueryui", "jquery-ui-dist": "jqueryui", "jqueryui": "jqueryui",
                       "jquery-ui-touch-punch": "jqueryui", "jqueryui-touch-punch": "jqueryui",
                       "vue-router": "vuerouter", "pinia": "pinia", "zod": "zod", "yaml": "yaml",
                       "@fortawesome/fontawesome-free": "fontawesome", "font-awesome": "fontawesome",
                       // small helpers status-bar templates import (vendor/build.mjs HELPERS)
                       "async-wait-until": "asyncwaituntil", "klona": "klona", "dedent": "dedent", "json5": "json5",
                       "mitt": "mitt", "@vueuse/core": "vueuse", "@vueuse/shared": "vueuse",
                       "pinia-plugin-persistedstate": "piniapersist" };
  var CSS_LIBS = { toastr: true, jqueryui: true, fontawesome: true };
  // the global an ES module import of a library reads (a library missing here is not rewritten)
  var ESM_GLOBALS = { jquery: "jQuery", jqueryui: "jQuery", lodash: "_", vue: "Vue", vuerouter: "VueRouter",
                      pinia: "Pinia", zod: "z", yaml: "YAML", showdown: "showdown", toastr: "toastr",
                      asyncwaituntil: "__liyuanAsyncWaitUntil", klona: "__liyuanKlona", dedent: "__liyuanDedent",
                      json5: "__liyuanJSON5", mitt: "__liyuanMitt", vueuse: "__liyuanVueUse",
                      piniapersist: "__liyuanPiniaPersist" };
  // libraries whose global already is their module namespace (named exports and `default`), handed out as it is
  var ESM_NAMESPACE = { asyncwaituntil: true, klona: true, dedent: true, json5: true, mitt: true, vueuse: true,
                        piniapersist: true };

  function loadFrameLibs() {
    function done(libs) {
      if (s.parentNode) s.parentNode.removeChild(s);   // the texts are kept; the page holds only its own scripts
      frames.libs = libs;
      var waiting = frames.libsWaiting;
      frames.libsWaiting = [];
      waiting.forEach(function (fn) { try { fn(); } catch (e) { /* keep going */ } });
    }
    var s = document.createElement("script");
    s.src = "vendor/lib/frame_libs.js";
    s.onload = function () {
      var raw = window.__liyuanFrameLibs || {};
      try { delete window.__liyuanFrameLibs; } catch (e) { window.__liyuanFrameLibs = undefined; }
      var libs = {};
      Object.keys(raw).forEach(function (k) {
        var lib = raw[k] || {};
        var text = String(lib.text || "");
        text = lib.kind === "css" ? text.replace(/<\/style/gi, "<\\/style") : text.replace(/<\/script/gi, "<\\/script");
        libs[k] = { version: String(lib.version || ""), kind: lib.kind, text: text };
      });
      done(libs);
    };
    s.onerror = function () { done({}); };
    document.head.appendChild(s);
  }
  function whenFrameLibs(fn) { if (frames.libs) fn(); else frames.libsWaiting.push(fn); }
  loadFrameLibs();

  /** A CDN URL taken apart: {host: "npm"|"esm"|"cdnjs"|"jquery"|"fontawesome", name, version, path}, or null. */
  function cdnParts(url) {
    var m = CDN_PREFIX.exec(url);
    if (!m) return null;
    var rest = url.slice(m[0].length).split(/[?#]/)[0];
    if (m[3]) return { host: "jquery", name: "", version: "", path: rest };
    if (m[4]) return { host: "fontawesome", name: "@fortawesome/fontawesome-free", version: "", path: "/" + rest };
    if (m[2]) {                                   // cdnjs: name/version/file
      var parts = rest.split("/");
      return { host: "cdnjs", name: parts[0], version: parts[1] || "", path: "/" + parts.slice(2).join("/") };
    }
    var pm = /^(@[^\/@]+\/[^\/@]+|[^\/@]+)(?:@([^\/]*))?(\/.*)?$/.exec(rest);   // npm style: name[@version][/path]
    var esmOnly = /^(?:esm\.sh|esm\.run|cdn\.skypack\.dev)\//i.test(m[1]);     // these serve ES modules only
    return pm ? { host: esmOnly ? "esm" : "npm", name: pm[1], version: pm[2] || "", path: pm[3] || "" } : null;
  }

  function majorVersion(v) { var m = /^[\^~>=v\s]*(\d+)/.exec(v || ""); return m ? parseInt(m[1], 10) : null; }

  /** The bundled library a CDN package stands for, by name and version (Vue 2, vue-router 3 are other libraries). */
  function cdnPackageLib(p) {
    var lib = CDN_PACKAGES[p.name.toLowerCase()];
    if (!lib) return null;
    var major = majorVersion(p.version);
    if (major != null && ((lib === "vue" && p.name.toLowerCase() === "vue" && major !== 3) ||
                          (lib === "vuerouter" && major < 4))) return null;
    return lib;
  }

  /** The library a CDN URL stands for (one we bundle) when loaded by a classic <script src> or a stylesheet, or
   *  null. */
  function cdnLibrary(url) {
    var p = cdnParts(url);
    if (!p) return null;
    if (p.host === "jquery") {
      if (/^jquery-\d[\w.]*?(\.min)?\.js$/i.test(p.path) && !/ui|migrate|slim/i.test(p.path)) return "jquery";
      return /^ui\/[\w.]+\/(?:jquery-ui(?:\.min)?\.js|themes\/[\w-]+\/(?:jquery-ui|theme)(?:\.min)?\.css)$/i.test(p.path) ? "jqueryui" : null;
    }
    if (p.host === "fontawesome") return /\.(?:css|js)$/i.test(p.path) ? "fontawesome" : null;
    var lib = cdnPackageLib(p);
    if (!lib) return null;
    var path = p.path;
    if (p.host === "esm" || /\+esm|\.mjs|esm-|\/fp\b|\/es\//i.test(path)) return null;   // ES modules: not a classic script
    if (/\.css$/i.test(path)) return CSS_LIBS[lib] ? lib : null;
    if (path && path !== "/" && !/\.js$/i.test(path)) return null;
    if (/slim/i.test(path)) return null;
    return lib;
  }

  /** The library an ES module import of a CDN URL stands for (one we bundle and can hand out as a module), or null. */
  function esmLibrary(url) {
    var p = cdnParts(url);
    if (!p || p.host === "jquery" || p.host === "fontawesome") return null;
    var lib = cdnPackageLib(p);
    if (!lib || !ESM_GLOBALS[lib] || /\.css$|\/fp\b/i.test(p.path)) return null;
    return lib;
  }

  /** A JS expression for library `lib` as an ES module namespace: its global's members, `default` the global
   *  itself (and for zod `z`, as zod's own module exports). */
  function esmModule(lib) {
    var g = "window." + ESM_GLOBALS[lib];
    if (ESM_NAMESPACE[lib]) return g;
    return "Object.assign({}, " + g + ", {default: " + g + (lib === "zod" ? ", z: " + g : "") + "})";
  }

  /** Declarations replacing a static import clause ("X", "{ a, b as c }", "* as NS", "X, { a }") of `lib`, or null
   *  when the clause is not understood. */
  function importShim(clause, lib) {
    var mod = esmModule(lib), out = [], rest = clause.trim();
    var def = /^([A-Za-z_$][\w$]*)\s*(?:,\s*([\s\S]*))?$/.exec(rest);
    if (def) { out.push("const " + def[1] + " = " + mod + ".default;"); rest = (def[2] || "").trim(); }
    if (!rest) return out.length ? out.join(" ") : null;
    var ns = /^\*\s*as\s+([A-Za-z_$][\w$]*)$/.exec(rest);
    if (ns) { out.push("const " + ns[1] + " = " + mod + ";"); return out.join(" "); }
    var named = /^\{([\s\S]*)\}$/.exec(rest);
    if (!named) return null;
    var names = [];
    var ok = named[1].split(",").every(function (s) {
      s = s.trim();
      if (!s) return true;
      var m = /^([A-Za-z_$][\w$]*)(?:\s+as\s+([A-Za-z_$][\w$]*))?$/.exec(s);
      if (!m) return false;
      names.push(m[2] ? m[1] + ": " + m[2] : m[1]);
      return true;
    });
    if (!ok) return null;
    out.push("const { " + names.join(", ") + " } = " + mod + ";");
    return out.join(" ");
  }

  /** A script body with its imports of bundled libraries rewritten to the injected globals (static imports only in
   *  a module); `libs` collects the libraries used. */
  function rewriteImports(body, isModule, libs) {
    body = body.replace(/\bimport\s*\(\s*(["'])([^"'\n]+)\1\s*\)/g, function (whole, q, url) {
      var lib = isRemote(url.trim()) && esmLibrary(url.trim());
      if (!lib) return whole;
      libs[lib] = true;
      return "Promise.resolve(" + esmModule(lib) + ")";
    });
    if (!isModule) return body;
    body = body.replace(/\bimport\s*([\w$*{}\s,]+?)\s*from\s*(["'])([^"'\n]+)\2\s*;?/g, function (whole, clause, q, url) {
      var lib = isRemote(url.trim()) && esmLibrary(url.trim());
      var shim = lib && importShim(clause, lib);
      if (!shim) return whole;
      libs[lib] = true;
      return shim;
    });
    return body.replace(/\bimport\s*(["'])([^"'\n]+)\1\s*;?/g, function (whole, q, url) {
      var lib = isRemote(url.trim()) && esmLibrary(url.trim());
      if (!lib) return whole;
      libs[lib] = true;
      return "/* " + lib + ": inlined by Liyuan */";
    });
  }

  function attr(attrs, name) {
    var m = new RegExp("\\b" + name + "\\s*=\\s*(?:\"([^\"]*)\"|'([^']*)'|([^\\s>]+))", "i").exec(attrs);
    return m ? (m[1] != null ? m[1] : m[2] != null ? m[2] : m[3]) : null;
  }
  function isRemote(url) { return /^(?:https?:)?\/\//i.test(url); }

  /** The card's HTML with CDN tags of bundled libraries dropped (their ES module imports rewritten), the libraries
   *  it needs, the remote scripts that will be blocked. */
  function prepareCard(code) {
    var libs = {};
    var blocked = [];
    var scripts = [];   // the code the card runs (script bodies, on* handlers): where LAZY_USE looks
    code = code.replace(/<script\b([^>]*)>([\s\S]*?)<\/script\s*>/gi, function (whole, attrs, body) {
      scripts.push(body);
      var src = attr(attrs, "src");
      var type = (attr(attrs, "type") || "").toLowerCase();
      var isModule = type === "module";
      if (src != null && isRemote(src.trim())) {
        var lib = isModule ? esmLibrary(src.trim()) : cdnLibrary(src.trim());
        if (lib) { libs[lib] = true; return "<!-- " + lib + ": inlined by Liyuan -->"; }
        if (!frames.card.trusted && !siteAllowed(src)) blocked.push(src.trim());
      }
      if (src == null && (isModule || !type || /javascript|ecmascript/.test(type))) {
        var rewritten = rewriteImports(body, isModule, libs);
        if (rewritten !== body) whole = "<script" + attrs + ">" + rewritten + "</scr" + "ipt>";
        body = rewritten;
      }
      if (isModule) {
        var re = /\bimport\s*(?:[\w$*{}\s,]+?\s*from\s*|\(\s*)?(["'])((?:https?:)?\/\/[^"']+)\1/g, im;
        while ((im = re.exec(body))) if (!frames.card.trusted && !siteAllowed(im[2])) blocked.push(im[2]);
      }
      return whole;
    });
    code = code.replace(/<link\b[^>]*>/gi, function (tag) {
      var href = attr(tag, "href");
      var lib = href && /stylesheet/i.test(attr(tag, "rel") || "") ? cdnLibrary(href.trim()) : null;
      if (lib && CSS_LIBS[lib]) { libs[lib] = true; return ""; }
      return tag;
    });
    code = code.replace(/@import\s+(?:url\(\s*)?(["']?)((?:https?:)?\/\/[^"')\s;]+)\1\s*\)?[^;{}]*;/gi, function (whole, q, url) {
      var lib = cdnLibrary(url.trim());
      if (lib && CSS_LIBS[lib]) { libs[lib] = true; return "/* " + lib + ": inlined by Liyuan */"; }
      return whole;
    });
    Object.keys(LIB_USE).forEach(function (k) { if (LIB_USE[k].test(code)) libs[k] = true; });
    for (var grew = true; grew;) {
      grew = false;
      Object.keys(libs).forEach(function (k) {
        (LIB_NEEDS[k] || []).forEach(function (d) { if (!libs[d]) { libs[d] = true; grew = true; } });
      });
    }
    var lazy = {};
    code.replace(/\son[a-z]+\s*=\s*("[^"]*"|'[^']*')/gi, function (whole, v) { scripts.push(v.slice(1, -1)); return whole; });
    var run = scripts.join("\n");
    Object.keys(LAZY_USE).forEach(function (k) {
      if (!libs[k] && LAZY_USE[k].some(function (used) { return used(run); })) {
        (LAZY_NEEDS[k] || []).forEach(function (d) { if (!libs[d]) lazy[d] = true; });
        lazy[k] = true;
      }
    });
    var seen = {};
    blocked = blocked.filter(function (u) { if (seen[u]) return false; seen[u] = true; return true; });
    return { code: code, libs: Object.keys(libs), lazy: Object.keys(lazy), blocked: blocked };
  }

  /** <script>/<style> elements for the libraries `keys` (those that are loaded), in that order. */
  function libScripts(keys) {
    var out = "";
    keys.forEach(function (k) {
      var lib = frames.libs && frames.libs[k];
      if (!lib || !lib.text) return;
      out += lib.kind === "css" ? "<style>" + lib.text + "</style>" : "<script>" + lib.text + "</scr" + "ipt>";
    });
    return out;
  }

  // Libraries TavernHelper always provides as globals (z/Zod, YAML, _, $/jQuery, Vue, VueRouter, showdown), used
  // without a call LIB_USE recognises: a minified bar does `const B=z` and later `B.z.object(...)`, another reads
  // `parent.YAML` or tests `typeof Vue`. When the card's script code (script bodies and on* handlers; not its prose)
  // names such a global at all, not as its own variable (LAZY_USE: the bare
  // identifier, or window./parent./globalThis. + name) and the library is not inlined already, its text goes into the
  // frame inert (<script type="text/x-liyuan-lib">: parsed as text, never run) and th_shim.js defines the global as a
  // getter that runs the library on first read (see "lazy libraries" there). Inert text costs little; a frame whose
  // code never names them carries none (bench/frame_start.py: 20 plain bars start in ~0.4 s; with all of them inert
  // in every frame it was ~0.9 s and +80 MiB).
  function nameUse(name) {
    var n = name.replace(/\$/g, "\\$");
    var bare = new RegExp("(?:^|[^\\w$.\\-#'\"])" + n + "(?![\\w$\\-{])");
    var own = new RegExp("\\b(?:var|let|const|function|class)\\s+" + n + "(?![\\w$])");    // the card's own variable
    var via = new RegExp("\\b(?:window|parent|globalThis|self|top)\\s*(?:\\.\\s*" + n + "(?![\\w$])|\\[\\s*[\"']" + n + "[\"']\\s*\\])");
    return function (code) { return via.test(code) || (bare.test(code) && !own.test(code)); };
  }
  var LAZY_USE = { jquery: ["$", "jQuery"], lodash: ["_"], vue: ["Vue"], vuerouter: ["VueRouter"], zod: ["z", "Zod"],
                   yaml: ["YAML"], showdown: ["showdown"] };
  Object.keys(LAZY_USE).forEach(function (k) { LAZY_USE[k] = LAZY_USE[k].map(nameUse); });
  var LAZY_NEEDS = { vuerouter: ["vue"] };
  function lazyLibTexts(keys) {
    return keys.map(function (k) {
      return "<script type=\"text/x-liyuan-lib\" data-liyuan-lib=\"" + k + "\">" + frames.libs[k].text + "</scr" + "ipt>";
    }).join("");
  }

  function netNotice(urls) {
    if (!urls.length) return "";
    return "<div class=\"liyuan-net-notice\" role=\"status\" style=\"margin:4px;padding:6px 10px;border:1px solid #d9a441;" +
      "border-radius:6px;background:#fff6e0;color:#6b4a00;font:13px/1.5 sans-serif;word-break:break-all\">" +
      urls.map(function (u) { return "<div>需要联网：" + esc(u) + "</div>"; }).join("") + "</div>";
  }

  function isFrontend(text) { return /html>|<head>|<body/.test(text); }

  function rewriteMinHeight(code) {
    function calc(n) { return "calc(var(--TH-viewport-height) * " + n + " / 100)"; }
    return code
      .replace(/(min-height\s*:\s*)(\d+(?:\.\d+)?)vh/gi, function (_, p, n) { return p + calc(n); })
      .replace(/(\.minHeight\s*=\s*)(['"`])(\d+(?:\.\d+)?)vh\2/g, function (_, p, q, n) { return p + q + calc(n) + q; })
      .replace(/(setProperty\(\s*(['"`])min-height\2\s*,\s*)(['"`])(\d+(?:\.\d+)?)vh\3/g,
        function (_, p, q1, q, n) { return p + q + calc(n) + q; });
  }

  // JSON that is safe inside an inline <script>: no "</script", no "<!--".
  function scriptJson(value) {
    return JSON.stringify(value).replace(/</g, "\\u003c").replace(/\u2028/g, "\\u2028").replace(/\u2029/g, "\\u2029");
  }

  function idValue(id) { return /^-?\d+$/.test(String(id)) ? parseInt(id, 10) : String(id); }

  function chatSnapshot(extraItem) {
    var out = [];
    var seen = false;
    byId.forEach(function (el, key) {
      var it = el.__item || {};
      if (extraItem && String(extraItem.id) === key) { it = extraItem; seen = true; }
      out.push({ message_id: idValue(key), role: it.role === "user" ? "user" : (it.role === "draft" ? "system" : "assistant"),
                 name: it.name || "", is_hidden: false, message: String(it.text || ""), data: frames.vars.get(key) || {} });
    });
    if (extraItem && !seen) {
      out.push({ message_id: idValue(extraItem.id), role: extraItem.role === "user" ? "user" : "assistant",
                 name: extraItem.name || "", is_hidden: false, message: String(extraItem.text || ""),
                 data: frames.vars.get(String(extraItem.id)) || {} });
    }
    // order as shown
    var order = Array.prototype.map.call(log.children, function (el) { return el.dataset.id; });
    out.sort(function (a, b) {
      var ia = order.indexOf(String(a.message_id)), ib = order.indexOf(String(b.message_id));
      return (ia < 0 ? 1e9 : ia) - (ib < 0 ? 1e9 : ib);
    });
    return out;
  }

  // The display regex writes a card's bar into every reply, so the messages of a long chat repeat the same fenced
  // block: each frame's copy of the chat (chatSnapshot, in its srcdoc, kept by the host page and by the frame) would
  // grow with the chat times the bar (21 bars: 194,000 characters a frame, 70 % of them copies of the bar). Packed:
  // each distinct fenced block of PACK_MIN characters or more travels once (init.chatBlocks), a message's text
  // holding "\uE010<n>\uE011" where block n was (such messages are marked packed; a message that has these
  // characters of its own is left as it is). th_shim.js unpacks them as the frame starts, so getChatMessages sees
  // the texts unchanged.
  var PACK_MIN = 256, PACK_RE = /```[\s\S]*?```/g;
  function packChat(chat) {
    var blocks = [], index = new Map();
    chat.forEach(function (m) {
      if (m.message.length < PACK_MIN || /[\uE010\uE011]/.test(m.message)) return;
      var packed = m.message.replace(PACK_RE, function (whole) {
        if (whole.length < PACK_MIN) return whole;
        var k = index.get(whole);
        if (k === undefined) { k = blocks.length; blocks.push(whole); index.set(whole, k); }
        return "\uE010" + k + "\uE011";
      });
      if (packed !== m.message) { m.message = packed; m.packed = true; }
    });
    return blocks;
  }

  function buildSrc(name, item, code, card) {
    card = card || prepareCard(rewriteMinHeight(code));
    var has = {};
    card.libs.forEach(function (k) { has[k] = true; });
    var before = LIB_BEFORE_SHIM.filter(function (k) { return has[k]; });
    var after = has.toastr ? ((frames.libs && frames.libs.toastr_css ? "<style>" + frames.libs.toastr_css.text + "</style>" : "") +
                              libScripts(["toastr"])) : "";
    var lazy = (card.lazy || []).filter(function (k) { return !has[k] && frames.libs && frames.libs[k] && frames.libs[k].text; });
    var init = {
      name: name, messageId: idValue(item.id), chat: chatSnapshot(item), chatBlocks: [],
      chatVars: frames.context.chatVars || {}, characterVars: frames.context.characterVars || {},
      globalVars: frames.context.globalVars || {}, presetVars: frames.context.presetVars || {},
      names: item.speaker ? Object.assign({}, frames.context.names, { char: String(item.speaker) }) :  // a group reply: its speaker (issue 31)
        (frames.context.names || {}),
      viewportHeight: window.innerHeight,
      storage: { local: frames.card.local, session: frames.card.session, maxBytes: frames.card.maxBytes },
      lazyLibs: lazy, flood: frames.flood, script: item.__script || null
    };
    init.chatBlocks = packChat(init.chat);
    return "<!DOCTYPE html><html><head><meta charset=\"utf-8\">" +
      "<meta http-equiv=\"Content-Security-Policy\" content=\"" + frameCsp() + "\">" +
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">" +
      "<style>" + FRAME_RESET + "</style>" +
      "<script>window.__LIYUAN_TH__ = " + scriptJson(init) + ";</scr" + "ipt>" +
      libScripts(before) + lazyLibTexts(lazy) +
      "<script>" + frames.shim + "</scr" + "ipt>" + after +
      "</head><body>" + netNotice(card.blocked) + card.code + "</body></html>";
  }

  function hashCode(str) {
    var h = 5381;
    for (var i = 0; i < str.length; i++) h = ((h * 33) ^ str.charCodeAt(i)) >>> 0;
    return h.toString(36) + ":" + str.length;
  }
  function failKey(name, code) { return name + "|" + hashCode(code); }

  function failedBox(name, reason) {
    var box = document.createElement("div");
    box.className = "th-failed";
    box.setAttribute("role", "alert");
    box.dataset.frame = name;
    box.textContent = fmt(S["frame." + reason] != null ? "frame." + reason : "frame.hung");
    return box;
  }

  function mountFrames(body, item) {
    var n = 0;
    body.querySelectorAll("pre").forEach(function (pre) {
      var codeEl = pre.querySelector("code");
      var code = codeEl ? codeEl.textContent : pre.textContent;
      if (!isFrontend(code)) return;
      var name = "TH-message--" + String(item.id) + "--" + n++;
      var wrap = document.createElement("div");
      wrap.className = "TH-render";
      pre.parentNode.insertBefore(wrap, pre);
      wrap.appendChild(pre);
      pre.hidden = true;
      if (frames.failed.has(failKey(name, code)) || frames.failed.has("name:" + name)) {
        wrap.appendChild(failedBox(name, frames.failed.get(failKey(name, code)) || frames.failed.get("name:" + name)));
        return;
      }
      deferFrame(wrap, name, item, code);
    });
  }

  // ---- frame memory ---------------------------------------------------------------------------------------------
  // Every live bar costs its renderer a document, a JavaScript context and the shim's objects (~2.5 MB each on top
  // of the renderer; bench/ui_start.py --card mvu --messages 20), so only bars near the screen are live. A bar is
  // built when its block comes within nearMargin of the viewport (an IntersectionObserver; a page that never
  // reports, e.g. a hidden one, builds every bar after fallbackMs, as before); a live bar whose block is farther
  // than farMargin away is put to sleep — its frame removed, its block keeping the frame's last height so nothing
  // moves — once more than keepLive bars are live, and rebuilt when it comes near again. A rebuilt bar starts from
  // what the host keeps: its message's variables (frames.vars, also what bars wrote), the chat/character/global
  // tables (frames.context) and the card's storage (frames.card); what only lived in the old frame's own script
  // (an open <details>, a counter) starts over, as in TavernHelper when a message is re-rendered. Bars on
  // probation, not yet heard from, or stopped are never put to sleep. liyuan.frameMemory() counts them.
  // A bar not built yet holds guessPx (the last height a bar reported; DEFAULT_GUESS_PX before any did), so that
  // unbuilt bars do not all crowd into the near zone at 0 px (20 bars in a chat: 10 were built instead of 5).
  var DEFAULT_GUESS_PX = 120;
  var mem = { nearMargin: "100% 0px", farMargin: "300% 0px", keepLive: 4, fallbackMs: 400, near: null, far: null,
              slept: 0, woken: 0, guessPx: 0 };
  function memObservers() {
    if (mem.near || typeof IntersectionObserver === "undefined") return !!mem.near;
    mem.near = new IntersectionObserver(function (entries) {
      entries.forEach(function (e) {
        var wrap = e.target;
        wrap.__seen = true;
        if (!wrap.isConnected) { forgetBar(wrap); return; }
        wrap.__near = e.isIntersecting;
        if (e.isIntersecting) wakeBar(wrap);
      });
    }, { rootMargin: mem.nearMargin });
    mem.far = new IntersectionObserver(function (entries) {
      entries.forEach(function (e) {
        if (!e.target.isConnected) { forgetBar(e.target); return; }
        e.target.__far = !e.isIntersecting;
        if (!e.isIntersecting) sleepBar(e.target);
      });
    }, { rootMargin: mem.farMargin });
    return true;
  }
  function forgetBar(wrap) {
    if (mem.near) { mem.near.unobserve(wrap); mem.far.unobserve(wrap); }
  }
  function deferFrame(wrap, name, item, code) {
    wrap.__bar = { name: name, item: item, code: code };
    wrap.classList.add("th-deferred");
    if (!memObservers()) { wakeBar(wrap); return; }
    wrap.style.minHeight = (mem.guessPx || DEFAULT_GUESS_PX) + "px";
    mem.near.observe(wrap);
    mem.far.observe(wrap);
    setTimeout(function () { if (!wrap.__seen && wrap.isConnected) wakeBar(wrap); }, mem.fallbackMs);
  }
  function wakeBar(wrap) {
    var bar = wrap.__bar;
    if (!bar || !wrap.isConnected) return;
    var cur = frames.byName.get(bar.name);
    if (cur && cur.wrap === wrap && cur.iframe.isConnected) return;          // live already
    if (wrap.querySelector(":scope > .th-failed, :scope > .th-pending")) return;   // stopped, or the watchdog's
    if (frames.failed.has(failKey(bar.name, bar.code)) || frames.failed.has("name:" + bar.name)) return;
    wrap.classList.remove("th-deferred");
    if (wrap.classList.contains("th-asleep")) { wrap.classList.remove("th-asleep"); mem.woken++; }
    createFrame(wrap, bar.name, bar.item, bar.code);
    trimLive();
  }
  // Far bars that stayed live (there were no more than keepLive when they went far, or they had not said hello)
  // are put to sleep once other bars are live (called when a bar is built and when one says hello).
  function trimLive() {
    if (!mem.near || liveFrames().length <= mem.keepLive) return;
    log.querySelectorAll(".TH-render").forEach(function (wrap) { if (wrap.__far) sleepBar(wrap); });
  }
  function sleepBar(wrap) {
    var bar = wrap.__bar;
    var f = bar && frames.byName.get(bar.name);
    if (!f || f.wrap !== wrap || !f.iframe.isConnected || !f.hello || frames.watch.probation === bar.name) return;
    if (liveFrames().length <= mem.keepLive) return;
    wrap.style.minHeight = wrap.getBoundingClientRect().height + "px";   // its place is kept: nothing moves
    f.iframe.remove();                                                   // the frame's document and context go
    frames.byName.delete(bar.name);
    var notice = wrap.querySelector(":scope > .th-notice");
    if (notice) notice.remove();
    wrap.classList.add("th-asleep");
    mem.slept++;
  }

  function createFrame(wrap, name, item, code) {
    var iframe = document.createElement("iframe");
    iframe.setAttribute("sandbox", "allow-scripts");
    iframe.setAttribute("name", name);
    iframe.id = name;
    iframe.className = "th-frame";
    iframe.setAttribute("frameborder", "0");
    iframe.setAttribute("referrerpolicy", "no-referrer");
    var card = prepareCard(rewriteMinHeight(code));
    if (item.__script) card.libs = card.libs.filter(function (k) { return k !== "toastr"; });   // toasts become notices
    iframe.dataset.libs = card.libs.join(" ");
    iframe.dataset.lazyLibs = card.lazy.join(" ");
    var rec = { iframe: iframe, messageId: String(item.id), cardKey: frames.card.key, item: item, code: code,
                wrap: wrap, born: 0, hello: false, ping: null, stalls: 0, pongs: 0, script: item.__script || null };
    function go() { iframe.srcdoc = buildSrc(name, item, code, card); rec.born = Date.now(); }
    if (!(card.libs.length || card.lazy.length) || frames.libs) go();
    else whenFrameLibs(go);  // not loaded yet
    wrap.appendChild(iframe);
    watchNotice(name, rec);
    var old = frames.byName.get(name);
    if (old && old.iframe !== iframe && old.stalls) rec.stalls = old.stalls;
    frames.byName.set(name, rec);
    if (bridge && bridge.frameStarted) bridge.frameStarted(name);
    return rec;
  }

  function liveFrames() {
    var out = [];
    frames.byName.forEach(function (f, name) {
      if (!f.iframe.isConnected) { frames.byName.delete(name); return; }
      out.push({ name: name, frame: f });
    });
    return out;
  }

  function frameBySource(source) {
    var hit = null;
    liveFrames().forEach(function (x) { if (x.frame.iframe.contentWindow === source) hit = x; });
    return hit;
  }

  // ---- card storage (frames' localStorage / sessionStorage) ------------------------------------------------------
  // A frame reports each change; the host applies it to the card's copy (frames.card), passes it on to the card's
  // other live frames and, a moment later (coalesced), hands the whole area to Python with the card key the frame
  // was built for — never a key the frame names. Python persists localStorage in the card's folder.
  function onFrameStorage(name, frame, d) {
    if (frame.cardKey !== frames.card.key) return;          // a frame of a card no longer shown
    var area = d.area === "session" ? "session" : "local";
    var items = frames.card[area];
    var op = String(d.op), key = String(d.key);
    if (op === "set") items[key] = String(d.value);
    else if (op === "remove") delete items[key];
    else if (op === "clear") { frames.card[area] = items = {}; }
    else return;
    liveFrames().forEach(function (x) {
      if (x.name !== name && x.frame.cardKey === frames.card.key) {
        postTo(x.frame, { __th: "storage-sync", area: area, op: op, key: key, value: d.value });
      }
    });
    frames.card.dirty = frames.card.dirty || {};
    frames.card.dirty[area] = true;
    if (!frames.storageTimer) frames.storageTimer = setTimeout(flushStorage, 150);
  }
  function flushStorage() {
    frames.storageTimer = 0;
    var dirty = frames.card.dirty || {};
    frames.card.dirty = {};
    ["local", "session"].forEach(function (area) {
      if (dirty[area] && bridge && bridge.frameStorage) {
        bridge.frameStorage(frames.card.key, area, JSON.stringify(frames.card[area]));
      }
    });
  }

  // ---- frame watchdog ------------------------------------------------------------------------------------------
  // A bar running while(true){} must not take the window down. With site isolation (conversation.py turns it on)
  // sandboxed frames run in a renderer of their own, so the host page stays responsive; it pings every live frame
  // (pingMs) and a frame that leaves a ping unanswered for hangMs (or never says hello within loadMs) is removed —
  // which ends its renderer — and replaced by the error box 「状态栏脚本无响应，已停止」; Python hears of it
  // (bridge.frameFailed). Frames of one card share a renderer, so one endless loop silences all of them: when
  // several stall together, all are removed and re-created one at a time ("probation", each alone for 2 x hangMs):
  // the one that hangs again is the culprit and stays stopped, the others come back. A frame caught in a third
  // common stall is stopped for good.
  // Only unanswered pings count, never the host's own timer gaps (a hidden page's timers are throttled).
  function watchdogTick() {
    var w = frames.watch, now = Date.now(), stalled = [];
    liveFrames().forEach(function (x) {
      var f = x.frame;
      if (!f.born) return;                                   // srcdoc not set yet (libraries loading)
      if (!f.hello) { if (now - f.born > w.loadMs) stalled.push(x); return; }
      if (f.ping) { if (now - f.ping.at > w.hangMs) stalled.push(x); return; }
      f.ping = { seq: ++w.seq, at: now };
      postTo(f, { __th: "ping", seq: f.ping.seq });
    });
    if (stalled.length) onStalled(stalled);
    if (w.probation) {
      var p = frames.byName.get(w.probation);
      if (!p || !p.iframe.isConnected || (p.hello && Date.now() - p.born > 2 * w.hangMs && p.pongs >= 2)) {
        w.probation = null; nextProbation();
      }
    }
  }
  // Culprits are frames that had started (said hello) and then stopped answering: alone, or a second time, or
  // while on probation. A frame that never said hello did not get to run at all (Chromium keeps a renderer whose
  // last frame went away for a moment, for reuse, and a new frame can land in the stuck one): it is retried (three
  // times at most). After frames are removed the next one comes back only after reuseMs, when that renderer is gone.
  function onStalled(stalled, reason) {
    var w = frames.watch;
    var single = stalled.length === 1;
    stalled.forEach(function (x) {
      var f = x.frame;
      var onProbation = w.probation === x.name;
      if (f.hello) f.stalls++;
      else f.retries = (f.retries || 0) + 1;
      var culprit = f.hello ? (single || f.stalls >= 3 || onProbation) : f.retries > 3;
      f.iframe.remove();                                     // ends the frame's renderer, loop and all
      frames.byName.delete(x.name);
      if (onProbation) w.probation = null;
      if (culprit) stopFrame(x.name, f, reason || "hung");
      else {
        var pending = document.createElement("div");
        pending.className = "th-pending";
        pending.dataset.frame = x.name;
        f.wrap.appendChild(pending);
        f.pendingEl = pending;
        w.queue.push({ name: x.name, rec: f });
      }
    });
    if (!w.probation) laterProbation();
  }
  function laterProbation() {
    var w = frames.watch;
    if (w.waiting) return;
    w.waiting = setTimeout(function () { w.waiting = 0; nextProbation(); }, w.reuseMs);
  }
  function nextProbation() {
    var w = frames.watch;
    if (w.waiting) return;
    while (w.queue.length) {
      var q = w.queue.shift();
      if (!q.rec.wrap.isConnected) continue;                // re-rendered meanwhile
      if (q.rec.pendingEl) q.rec.pendingEl.remove();
      var rec = createFrame(q.rec.wrap, q.name, q.rec.item, q.rec.code);
      rec.stalls = q.rec.stalls;
      rec.retries = q.rec.retries || 0;
      w.probation = q.name;
      return;
    }
  }
  function stopFrame(name, f, reason, swamped) {
    frames.failed.set(failKey(name, f.code), reason);
    frames.failedNames.push(name);
    if (f.wrap && f.wrap.isConnected) f.wrap.appendChild(failedBox(name, reason));
    console.warn("status bar " + name + ": stopped (" + reason + ")");
    // swamped: this page is behind on what the frame posted (frame_guard.after_flood ends the renderer at once)
    if (bridge && bridge.frameFailed) bridge.frameFailed(name, swamped ? reason + ":swamped" : reason);
  }
  // ---- frame notices --------------------------------------------------------------------------------------------
  // A frame that errors (uncaught exceptions, failed listeners, console.error), had something refused by its policy
  // (a remote script, style, font…) or shows nothing (0 px once it has settled) gets a one-line notice under it,
  // with a details toggle listing the errors and blocked URLs; a 0 px frame takes no room (.th-frame starts at
  // height 0), so the notice stands in its place instead of a blank gap. The notice follows the frame: it updates as more arrives and goes when the frame
  // recovers (grows past 0 px with no errors) or is rebuilt. liyuan.frameNotices() lists them (card preview).
  var NOTICE_SETTLE_MS = 1200;   // after the frame's load event: scripts that render late have had their turn
  var NOTICE_MAX_LINES = 20;
  function watchNotice(name, rec) {
    var stale = rec.wrap.querySelector(":scope > .th-notice");
    if (stale) stale.remove();
    rec.iframe.addEventListener("load", function () {
      setTimeout(function () {
        if (frames.byName.get(name) !== rec) return;
        rec.settled = true;
        if (rec.wrap.style.minHeight && !(parseFloat(rec.iframe.style.height) > 0)) rec.wrap.style.minHeight = "";
        frameNotice(name, rec);
      }, NOTICE_SETTLE_MS);
    });
  }
  function frameTrouble(name, rec, kind, text) {
    var t = rec.trouble || (rec.trouble = { errors: [], blocked: [] });
    if (t[kind].indexOf(text) === -1 && t[kind].length < NOTICE_MAX_LINES) t[kind].push(text);
    if (rec.settled) frameNotice(name, rec);
  }
  function frameNotice(name, rec) {
    var t = rec.trouble || { errors: [], blocked: [] };
    var h = parseFloat(rec.iframe.style.height);
    var empty = rec.settled && (!rec.heightSeen || !(h >= 1));
    var box = rec.wrap.querySelector(":scope > .th-notice");
    if (!t.errors.length && !t.blocked.length && !empty) { if (box) box.remove(); rec.notice = null; return; }
    var parts = [];
    if (empty) parts.push(fmt("frame.notice.empty"));
    if (t.errors.length) parts.push(fmt("frame.notice.error", { n: t.errors.length }));
    if (t.blocked.length) parts.push(fmt("frame.notice.blocked", { n: t.blocked.length }));
    rec.notice = { reason: empty ? "empty" : t.errors.length ? "error" : "blocked", errors: t.errors.slice(),
                   blocked: t.blocked.slice(), text: parts.join("；") };
    if (!box) {
      box = document.createElement("details");
      box.className = "th-notice";
      box.setAttribute("role", "status");
      box.dataset.frame = name;
      rec.wrap.appendChild(box);
    }
    var lines = t.errors.map(function (e) { return "<li class=\"th-notice-error\">" + esc(e) + "</li>"; })
      .concat(t.blocked.map(function (u) { return "<li class=\"th-notice-blocked\">需要联网：" + esc(u) + "</li>"; }));
    box.innerHTML = "<summary><span class=\"th-notice-text\">" + esc(rec.notice.text) + "</span> <span class=\"th-notice-more\">" +
      esc(fmt("frame.notice.details")) + "</span></summary>" + (lines.length ? "<ul>" + lines.join("") + "</ul>" : "");
  }

  function startWatchdog() {
    if (frames.watch.timer) clearInterval(frames.watch.timer);
    frames.watch.timer = setInterval(watchdogTick, frames.watch.pingMs);
  }
  startWatchdog();

  function postTo(frame, msg) {
    try { frame.iframe.contentWindow.postMessage(msg, "*"); } catch (e) { /* gone */ }
  }

  // ---- floods and memory (ui/frame_guard.py) -------------------------------------------------------------------
  // A frame's runtime (th_shim.js) already holds what the bar posts to frames.flood.rate a second with bursts of
  // frames.flood.frameBurst, says when it starts dropping ("dropping": logged here) and when it floods ("flood":
  // stopped here). What reaches this page anyway (top.postMessage bypasses the runtime) meets this page's own rule.
  // Every message a frame posts costs a token from its bucket (frames.flood.rate a second, frames.flood.burst at
  // most); without one the message is dropped here, before any work. A burst of drops (drops less than a second
  // apart) is logged once, when it starts. Dropping is not free: Chromium delivers every message a frame posts
  // (measured here: about a millisecond each under load, and slower than the bucket refills when the machine is
  // busy), so a frame that had more than lagCount messages delivered while this page is falling behind (its 50 ms
  // heartbeat late by more than lagMs), or that drops stopPerSecond messages within a second, is removed (its
  // messages stop at the source) and stopped ("flood"); Python then throws away what it had already posted
  // (frame_guard.after_flood).
  var beat = { at: performance.now() };
  setInterval(function () { beat.at = performance.now(); }, 50);
  function warnDropping(name) {
    console.warn("status bar " + name + ": more than " + frames.flood.rate + " messages a second; dropping the excess");
  }
  function floodAllows(name, frame) {
    var cfg = frames.flood, now = performance.now();
    var b = frame.bucket || (frame.bucket = { tokens: cfg.burst, at: now, lastDrop: -1e9, windowAt: 0, windowDrops: 0 });
    if (b.beatAt !== beat.at) { b.beatAt = beat.at; b.sinceBeat = 0; }
    var swamping = ++b.sinceBeat > cfg.lagCount && now - beat.at > cfg.lagMs && document.visibilityState === "visible";
    b.tokens = Math.min(cfg.burst, b.tokens + (now - b.at) * cfg.rate / 1000);
    b.at = now;
    if (b.tokens >= 1 && !swamping) { b.tokens -= 1; return true; }
    if (now - b.lastDrop > 1000) warnDropping(name);
    b.lastDrop = now;
    if (now - b.windowAt > 1000) { b.windowAt = now; b.windowDrops = 0; }
    b.windowDrops++;
    if ((swamping || b.windowDrops >= cfg.stopPerSecond) && frames.byName.get(name) === frame) {
      frame.iframe.remove();
      frames.byName.delete(name);
      stopFrame(name, frame, "flood", swamping);
    }
    return false;
  }
  // Python's memory guard ended a frame renderer (over the cap): the frames that lived in it no longer answer. Each
  // live frame is pinged; those silent after a moment are handled like a stall with reason `reason` (alone: stopped
  // with its notice; several: brought back one at a time, and the one that grows past the cap again is stopped).
  function framesKilled(reason) {
    var seq = ++frames.watch.seq, born = [];
    liveFrames().forEach(function (x) {
      if (!x.frame.born) return;
      x.frame.killCheck = seq;
      born.push(x);
      postTo(x.frame, { __th: "ping", seq: seq });
    });
    setTimeout(function () {
      var dead = born.filter(function (x) { return x.frame.killCheck === seq && frames.byName.get(x.name) === x.frame; });
      if (dead.length) onStalled(dead, reason);
    }, Math.min(1500, frames.watch.hangMs));
    return born.length;
  }

  window.addEventListener("message", function (ev) {
    var d = ev.data;
    if (!d || typeof d !== "object" || typeof d.__th !== "string") return;
    var hit = frameBySource(ev.source);
    if (!hit) return;   // only our live frames are listened to
    var name = hit.name, frame = hit.frame;
    if (!floodAllows(name, frame)) return;
    if (d.__th === "hello") {
      frame.hello = true;
      trimLive();
      if (bridge && bridge.frameAlive) bridge.frameAlive(name);
    } else if (d.__th === "pong") {
      if (frame.ping && Number(d.seq) >= frame.ping.seq) frame.ping = null;
      if (frame.killCheck && Number(d.seq) >= frame.killCheck) frame.killCheck = 0;
      frame.pongs++;
    } else if (d.__th === "storage") {
      onFrameStorage(name, frame, d);
    } else if (d.__th === "blocked") {
      var b = { name: name, url: String(d.url || ""), directive: String(d.directive || "") };
      frames.blocked.push(b);
      if (frames.blocked.length > 500) frames.blocked.shift();
      console.warn("status bar " + name + ": blocked " + b.directive + " " + b.url);
      frameTrouble(name, frame, "blocked", b.url);
      if (bridge && bridge.frameBlocked) bridge.frameBlocked(name, b.url, b.directive);
      if (frame.script && /^script-src/.test(b.directive) && bridge && bridge.scriptMessage) {   // a refused import
        bridge.scriptMessage(name, JSON.stringify({ kind: "import", text: b.url }));
      }
    } else if (d.__th === "height") {
      var h = Math.max(0, Math.min(20000, Number(d.h) || 0));
      var stick = atBottom();             // a reader at the end of the chat stays there as the last bar grows
      frame.iframe.style.height = h + "px";
      frame.heightSeen = true;
      if (frame.wrap.style.minHeight && (h > 0 || frame.settled)) frame.wrap.style.minHeight = "";   // its own height
      if (h > 0) mem.guessPx = h;
      if (frame.settled) frameNotice(name, frame);
      if (stick) toBottom();
    } else if (d.__th === "write") {
      if (frame.cardKey !== frames.card.key) return;          // a frame of a card no longer shown
      var type = String(d.type || "chat");
      var vars = d.variables && typeof d.variables === "object" ? d.variables : {};
      var mid = d.message_id == null ? frame.messageId : String(d.message_id);
      if (type === "message") {
        frames.vars.set(mid, vars);
        liveFrames().forEach(function (x) {   // other frames' caches follow at once (no events)
          if (x.name !== name) postTo(x.frame, { __th: "cache", message_id: idValue(mid), variables: vars });
        });
      } else if (type === "chat") frames.context.chatVars = vars;
      else if (type === "character") frames.context.characterVars = vars;
      else if (type === "global") frames.context.globalVars = vars;
      else if (type === "preset") frames.context.presetVars = vars;
      if (bridge && bridge.frameVariables) {
        bridge.frameVariables(name, JSON.stringify({ type: type, message_id: type === "message" ? mid : null, variables: vars,
                                                     card: frame.cardKey }));
      }
    } else if (d.__th === "report") {
      frames.reports.push({ name: name, data: d.data });
    } else if (d.__th === "log") {
      if (typeof d.unknown === "string") d.text = fmt("frame.unknown_api", { name: d.unknown.slice(0, 200) });  // th_shim
      frames.logs.push({ name: name, level: String(d.level), text: String(d.text) });
      if (frames.logs.length > 500) frames.logs.shift();
      if (d.level === "error") console.warn("status bar " + name + ": " + String(d.text));
      if (d.level === "error" || d.level === "console-error") frameTrouble(name, frame, "errors", String(d.text));
    } else if (d.__th === "dropping") {      // its shim started dropping what it posts (th_shim send)
      warnDropping(name);
    } else if (d.__th === "flood") {         // its shim dropped messages for a second: it floods (th_shim send)
      if (frames.byName.get(name) === frame) {
        frame.iframe.remove();
        frames.byName.delete(name);
        stopFrame(name, frame, "flood");
      }
    } else if (d.__th === "probe-result") {
      frames.probes.set(String(d.id), d.text);
    } else if ((d.__th === "buttons" || d.__th === "toast" || d.__th === "slash") && frame.script) {
      // a card script's runtime asks the window for something (ui/frames/script_frames.py decides)
      if (frame.cardKey === frames.card.key && bridge && bridge.scriptMessage) {
        bridge.scriptMessage(name, JSON.stringify({ kind: d.__th, buttons: d.buttons, level: d.level, title: d.title,
                                                    text: d.text, command: d.command, args: d.args }));
      }
    }
  });

  // ---- card scripts (issue 27; ui/frames/script_frames.py) ----------------------------------------------------
  // Each allowed TavernHelper script of the card runs in a hidden frame of its own, built exactly like a status bar
  // (createFrame: the same sandbox, CSP, th_shim.js runtime, flood buckets, watchdog and egress rules), named
  // TH-script--{name}--{id} as in TavernHelper, inside one hidden box outside the conversation log (a re-render of
  // the transcript leaves them running). The script's text is the body of a <script type="module">; imports of
  // libraries we vendor are rewritten to them (prepareCard), other remote imports of an untrusted card are refused
  // by the frame's policy and reported to Python by URL. toastr stays the runtime's own (it becomes a notice).
  var scriptBox = null;
  function scriptFrames() { return liveFrames().filter(function (x) { return x.frame.script; }); }
  function createScriptFrame(s) {
    if (!scriptBox) {
      scriptBox = document.createElement("div");
      scriptBox.id = "th-scripts";
      scriptBox.hidden = true;
      scriptBox.setAttribute("aria-hidden", "true");
      document.body.appendChild(scriptBox);
    }
    var name = "TH-script--" + String(s.name || "") + "--" + String(s.id || "");
    var lastEl = log.lastElementChild;
    var base = lastEl && lastEl.__item ? lastEl.__item : { id: "0", role: "assistant", text: "" };
    var item = Object.assign({}, base, { __script: { id: String(s.id || ""), name: String(s.name || "") } });
    var code = "<script type=\"module\">\n" + String(s.content || "").replace(/<\/script/gi, "<\\/script") +
      "\n</scr" + "ipt>";
    var wrap = document.createElement("div");
    wrap.className = "th-script";
    wrap.dataset.script = String(s.id || "");
    scriptBox.appendChild(wrap);
    if (frames.failed.has(failKey(name, code)) || frames.failed.has("name:" + name)) return null;   // stopped before
    var rec = createFrame(wrap, name, item, code);
    var blocked = prepareCard(code).blocked;
    blocked.forEach(function (url) {
      if (bridge && bridge.scriptMessage) bridge.scriptMessage(name, JSON.stringify({ kind: "import", text: url }));
    });
    return rec;
  }

  window.addEventListener("resize", function () {
    liveFrames().forEach(function (x) { postTo(x.frame, { __th: "viewport", h: window.innerHeight }); });
  });

  // ---- items --------------------------------------------------------------------------------------------------
  function fmt(key, vars) {
    var s = S[key] != null ? S[key] : key;
    if (vars) for (var k in vars) s = s.split("{" + k + "}").join(String(vars[k]));
    return s;
  }

  function span(cls, text) {
    var el = document.createElement("span");
    el.className = cls;
    el.textContent = text;
    return el;
  }

  function outcomeBadge(item) {
    var o = item.outcome || "unsealed";
    if (o === "error") {
      var msg = fmt("outcome.error");
      if (item.error) msg += ": " + String(item.error);
      return span("badge error outcome", msg);
    }
    if (o === "stopped") return span("badge warn outcome", fmt("outcome.stopped"));
    if (o === "out_of_rounds") return span("badge warn outcome", fmt("outcome.out_of_rounds"));
    return span("badge warn outcome", fmt("outcome.unsealed"));
  }

  function beatLabel(item) {
    return item.beat ? span("beat", fmt("beat", { n: item.beat })) : null;
  }

  /** The avatar beside a message (issue 17): ``who`` char | user; hidden while there is no picture. */
  function avatarImg(who) {
    var img = document.createElement("img");
    img.className = "avatar " + who;
    img.alt = "";
    img.draggable = false;
    if (state.avatars[who]) img.src = state.avatars[who];
    return img;
  }

  /** What the model asked in a beat and what the user chose (item.asks: [{question, options, answer, by}]), kept
   *  in the conversation above the reply (issue 24 §3). Text only (textContent): nothing here is markup. */
  function askRecords(item) {
    if (!Array.isArray(item.asks) || !item.asks.length) return null;
    var box = document.createElement("div");
    box.className = "asks";
    item.asks.forEach(function (a) {
      if (!a || typeof a !== "object") return;
      var rec = document.createElement("div");
      rec.className = "ask-record";
      var head = document.createElement("div");
      head.className = "ask-question";
      head.appendChild(span("badge ask-badge", fmt("ask.title")));
      head.appendChild(span("ask-text", String(a.question == null ? "" : a.question)));
      rec.appendChild(head);
      var answer = a.answer == null ? null : String(a.answer);
      var opts = Array.isArray(a.options) ? a.options.map(String) : [];
      if (opts.length) {
        var list = document.createElement("div");
        list.className = "ask-options";
        opts.forEach(function (o) {
          var chosen = answer !== null && o === answer;
          var el = span("ask-option" + (chosen ? " chosen" : ""), (chosen ? "✓ " : "") + o);
          if (chosen) el.setAttribute("aria-checked", "true");
          list.appendChild(el);
        });
        rec.appendChild(list);
      }
      var note = null;
      if (a.by === "stop" || answer === null) note = fmt("ask.stopped");
      else if (opts.indexOf(answer) < 0) note = fmt("ask.wrote", { answer: answer });
      else if (a.by === "auto") note = fmt("ask.auto");
      if (note) rec.appendChild(span("ask-note" + (a.by === "stop" ? " stopped" : ""), note));
      box.appendChild(rec);
    });
    return box.childNodes.length ? box : null;
  }

  function buildItem(item) {
    var role = item.role;
    if (role !== "opening" && role !== "user" && role !== "assistant" && role !== "draft") role = "assistant";
    var el = document.createElement("article");
    el.__item = item;
    el.className = "msg role-" + role;
    el.dataset.id = String(item.id);
    el.dataset.role = role;
    if (item.beat != null) el.dataset.beat = String(item.beat);

    var body = document.createElement("div");
    body.className = "body md";
    fillBody(body, item, { opening: role === "opening" });
    if (item.variables && typeof item.variables === "object") frames.vars.set(String(item.id), item.variables);
    // item.scripting: the card's display scripts still run for it (Python fills it in): no frames from the raw text
    if (item.scripting) el.classList.add("scripting");
    else mountFrames(body, item);

    if (role === "user") {
      var bubble = document.createElement("div");
      bubble.className = "bubble";
      var who = document.createElement("div");
      who.className = "who";
      who.appendChild(span("name", item.name || state.userLabel || fmt("you")));
      var b = beatLabel(item);
      if (b) who.appendChild(b);
      bubble.appendChild(who);
      bubble.appendChild(body);
      el.appendChild(bubble);
      el.appendChild(avatarImg("user"));
      decorateBranches(el);
      return el;
    }

    var av = avatarImg("char");
    if (item.speaker) {  // a group chat: the speaker's own picture
      av.dataset.speaker = String(item.speaker);
      if (state.speakerAvatars[item.speaker]) av.src = state.speakerAvatars[item.speaker];
    }
    el.appendChild(av);
    var meta = document.createElement("div");
    meta.className = "meta";
    if (role === "draft") {
      var bl = beatLabel(item);
      if (bl) meta.appendChild(bl);
      meta.appendChild(outcomeBadge(item));
    } else if (role === "assistant" && item.revised) {
      var bl2 = beatLabel(item);
      if (bl2) meta.appendChild(bl2);
      meta.appendChild(span("badge revised", fmt("revised")));
    }
    if (item.speaker) meta.insertBefore(span("name speaker", String(item.speaker)), meta.firstChild);  // group chat
    if (meta.childNodes.length) el.appendChild(meta);
    var asked = askRecords(item);
    if (asked) el.appendChild(asked);
    el.appendChild(body);
    decorateBranches(el);
    return el;
  }

  function setOlder(hasOlder) {
    state.hasOlder = !!hasOlder;
    olderEl.hidden = !state.hasOlder;
    olderEl.classList.toggle("loading", state.loadingOlder);
    olderEl.textContent = fmt(state.loadingOlder ? "older.loading" : "older");
  }

  function oldestId() {
    var first = log.firstElementChild;
    return first ? first.dataset.id : "";
  }

  function maybeRequestOlder() {
    if (!state.hasOlder || state.loadingOlder || !log.firstElementChild) return;
    if (document.body.classList.contains("mode-welcome")) return;
    if (scroller().scrollTop > OLDER_THRESHOLD) return;
    state.loadingOlder = true;
    setOlder(true);
    if (bridge) bridge.requestOlder(oldestId());
  }

  function addItems(items, where) {
    var frag = document.createDocumentFragment();
    (items || []).forEach(function (item) {
      if (!item || item.id == null) return;
      var key = String(item.id);
      var old = byId.get(key);
      if (old) old.remove();
      var el = buildItem(item);
      byId.set(key, el);
      frag.appendChild(el);
    });
    if (where === "top") log.insertBefore(frag, log.firstChild);
    else log.appendChild(frag);
  }

  // ---- pending bubble: coalesced to one DOM update per animation frame ----------------------------------------
  function flushPending() {
    if (state.frame) { cancelAnimationFrame(state.frame); state.frame = 0; }
    if (state.timer) { clearTimeout(state.timer); state.timer = 0; }
    if (!state.pendingDirty) return;
    state.pendingDirty = false;
    state.pendingUpdates++;
    var stick = atBottom();
    if (state.pendingText == null) {
      pendingEl.hidden = true;
      pendingEl.querySelector(".body").textContent = "";
    } else {
      pendingEl.querySelector(".pending-label").textContent = state.pendingLabel || fmt("pending");
      pendingEl.querySelector(".body").innerHTML = renderText(state.pendingText, { streaming: true });
      pendingEl.hidden = false;
    }
    if (stick) toBottom();
  }

  function schedulePending() {
    state.pendingDirty = true;
    if (state.frame || state.timer) return;
    state.frame = requestAnimationFrame(flushPending);
    // A hidden or throttled page may not run animation frames: a timer makes sure the update lands anyway.
    state.timer = setTimeout(flushPending, 60);
  }

  // ---- links: never navigate; Python opens external ones --------------------------------------------------------
  document.addEventListener("click", function (ev) {
    var a = ev.target && ev.target.closest ? ev.target.closest("a") : null;
    if (a) {
      ev.preventDefault();
      var href = a.getAttribute("href") || "";
      if (/^(https?:\/\/|mailto:)/i.test(href) && bridge) bridge.linkClicked(a.href);
      return;
    }
    var btn = ev.target && ev.target.closest ? ev.target.closest("button[data-action]") : null;
    if (btn && bridge) bridge.welcomeAction(btn.dataset.action);
  }, true);
  document.addEventListener("auxclick", function (ev) {
    if (ev.target && ev.target.closest && ev.target.closest("a")) ev.preventDefault();
  }, true);
  document.addEventListener("dragstart", function (ev) { ev.preventDefault(); });

  window.addEventListener("scroll", maybeRequestOlder, { passive: true });
  window.addEventListener("resize", maybeRequestOlder);

  // ---- API called from Python ---------------------------------------------------------------------------------
  window.liyuan = {
    /** Translated UI strings (keys as in S). */
    setStrings: function (strings) {
      for (var k in strings) if (Object.prototype.hasOwnProperty.call(strings, k)) S[k] = String(strings[k]);
      $("welcome").querySelector(".welcome-title").textContent = fmt("welcome.title");
      $("welcome").querySelector(".welcome-intro").textContent = fmt("welcome.intro");
      $("welcome").querySelector(".welcome-sub").textContent = fmt("welcome.sub");
      $("welcome-demo").textContent = fmt("welcome.demo");
      $("welcome-settings").textContent = fmt("welcome.settings");
      setOlder(state.hasOlder);
    },

    /** The label shown on the user's turns (the persona's name). */
    setUserLabel: function (label) {
      state.userLabel = label ? String(label) : "";
      log.querySelectorAll(".role-user .who .name").forEach(function (el) { el.textContent = state.userLabel || fmt("you"); });
    },

    /** Replace everything with these items (oldest first); scroll to the newest. */
    setTranscript: function (items, hasOlder) {
      byId.clear();
      log.textContent = "";
      state.loadingOlder = false;
      addItems(items, "bottom");
      setOlder(hasOlder);
      toBottom();
      maybeRequestOlder();
    },

    /** Older items (oldest first) go on top; the reader's view does not move. */
    prepend: function (items, hasOlder) {
      var anchor = log.firstElementChild;
      var before = anchor ? anchor.getBoundingClientRect().top : 0;
      var s = scroller();
      state.loadingOlder = false;
      addItems(items, "top");
      setOlder(hasOlder);
      if (anchor && anchor.isConnected) s.scrollTop += anchor.getBoundingClientRect().top - before;
      maybeRequestOlder();
    },

    appendItem: function (item) {
      var stick = atBottom();
      addItems([item], "bottom");
      if (stick) toBottom();
    },

    /** Re-render the item with the same id in place (e.g. a revised reply). Unknown ids are ignored. */
    updateItem: function (item) {
      if (!item || item.id == null) return false;
      var old = byId.get(String(item.id));
      if (!old) return false;
      var stick = atBottom();
      var el = buildItem(item);
      old.replaceWith(el);
      byId.set(String(item.id), el);
      if (stick) toBottom();
      return true;
    },

    removeItem: function (id) {
      var el = byId.get(String(id));
      if (!el) return false;
      el.remove();
      byId.delete(String(id));
      return true;
    },

    setPending: function (text, label) {
      state.pendingText = text == null ? null : String(text);
      state.pendingLabel = label ? String(label) : "";
      schedulePending();
    },

    setBanner: function (text) {
      if (text == null || text === "") { bannerEl.hidden = true; bannerEl.textContent = ""; }
      else { bannerEl.textContent = String(text); bannerEl.hidden = false; }
    },

    showWelcome: function () {
      document.body.classList.remove("mode-chat");
      document.body.classList.add("mode-welcome");
      $("welcome").hidden = false;
      scroller().scrollTop = 0;
    },

    showChat: function () {
      document.body.classList.remove("mode-welcome");
      document.body.classList.add("mode-chat");
      $("welcome").hidden = true;
      toBottom();
    },

    setTheme: function (theme) {
      document.documentElement.classList.toggle("theme-dark", theme === "dark");
    },

    scrollToBottom: toBottom,

    /** Show the item ``id`` with its top ``offset`` px below the view's top (reportReading's place); an item not
     *  shown leaves the view where it is. */
    restoreScroll: function (id, offset) {
      var el = byId.get(String(id));
      if (!el) return false;
      var s = scroller();
      s.scrollTop += el.getBoundingClientRect().top - offset;
      pinned = atBottom();
      lastTop = s.scrollTop;
      return true;
    },

    /** Tell the host (bridge.painted(token)) once everything handed over before this call is on screen: two
     *  animation frames later, the first runs before the next paint, the second after it. The window covers the
     *  conversation during a chat switch until then (ConversationView.hold_until_painted). */
    afterPaint: function (token) {
      requestAnimationFrame(function () {
        requestAnimationFrame(function () { if (bridge && bridge.painted) bridge.painted(token); });
      });
    },

    /** Avatars (issue 17): data: URLs of the character's and the user's pictures ("" = none); applied to every
     *  message shown and to those added later. */
    setSpeakerAvatars: function (map) {
      state.speakerAvatars = {};
      Object.keys(map || {}).forEach(function (k) {
        if (typeof map[k] === "string" && map[k].indexOf("data:image/") === 0) state.speakerAvatars[k] = map[k];
      });
      log.querySelectorAll("img.avatar.char[data-speaker]").forEach(function (img) {
        var url = state.speakerAvatars[img.dataset.speaker];
        if (url) img.src = url;
      });
    },
    setAvatars: function (avatars) {
      avatars = avatars || {};
      ["char", "user"].forEach(function (who) {
        var url = typeof avatars[who] === "string" && avatars[who].indexOf("data:image/") === 0 ? avatars[who] : "";
        state.avatars[who] = url;
        log.querySelectorAll("img.avatar." + who).forEach(function (img) {
          if (url) img.src = url; else img.removeAttribute("src");
        });
      });
      document.body.classList.toggle("has-avatars", !!state.avatars.char);
    },

    /** Find (issue 17): scroll the item with this id to the middle, mark it for a moment and mark every
     *  case-insensitive occurrence of ``needle`` in its text (not inside frames, code is left whole). Returns
     *  how many occurrences were marked, or -1 when the item is not shown. */
    focusItem: function (id, needle) {
      log.querySelectorAll("mark.find-mark").forEach(function (m) {
        var t = document.createTextNode(m.textContent);
        m.replaceWith(t);
        if (t.parentNode) t.parentNode.normalize();
      });
      log.querySelectorAll(".msg.find-hit").forEach(function (m) { m.classList.remove("find-hit"); });
      var el = byId.get(String(id));
      if (!el) return -1;
      var n = 0, want = String(needle || "").toLowerCase();
      if (want) {
        var body = el.querySelector(".body") || el;
        var walker = document.createTreeWalker(body, NodeFilter.SHOW_TEXT, {
          acceptNode: function (node) {
            var p = node.parentNode;
            return p && /^(SCRIPT|STYLE|IFRAME|TEXTAREA)$/.test(p.nodeName) ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT;
          }
        });
        var nodes = [];
        while (walker.nextNode()) nodes.push(walker.currentNode);
        nodes.forEach(function (node) {
          var text = node.nodeValue, low = text.toLowerCase(), at = low.indexOf(want);
          if (at < 0 || low.length !== text.length) return;
          var frag = document.createDocumentFragment(), from = 0;
          while (at >= 0) {
            frag.appendChild(document.createTextNode(text.slice(from, at)));
            var mark = document.createElement("mark");
            mark.className = "find-mark";
            mark.textContent = text.slice(at, at + want.length);
            frag.appendChild(mark);
            n += 1;
            from = at + want.length;
            at = low.indexOf(want, from);
          }
          frag.appendChild(document.createTextNode(text.slice(from)));
          node.replaceWith(frag);
        });
      }
      el.classList.add("find-hit");
      var first = el.querySelector("mark.find-mark") || el;
      first.scrollIntoView({ block: "center" });
      return n;
    },

    /** Status-bar runtime: {shim: th_shim.js text, pingMs?, hangMs?, loadMs?, reuseMs?}. Sent by Python first. */
    setFrameRuntime: function (rt) {
      rt = rt || {};
      frames.shim = String(rt.shim || "").replace(/<\/script/gi, "<\\/script");
      var w = frames.watch, changed = false;
      ["pingMs", "hangMs", "loadMs", "reuseMs"].forEach(function (k) {
        if (Number(rt[k]) > 0) { w[k] = Number(rt[k]); changed = true; }
      });
      if (changed) startWatchdog();
      if (rt.flood && typeof rt.flood === "object") {
        ["rate", "burst", "frameBurst", "stopPerSecond", "lagMs", "lagCount"].forEach(function (k) { if (Number(rt.flood[k]) > 0) frames.flood[k] = Number(rt.flood[k]); });
      }
    },

    /** The card whose chat is shown: {key, trusted, local, session, maxBytes}. Frames built afterwards get this
     *  card's storage and policy; a different key forgets which frames were stopped. */
    setFrameCard: function (card) {
      card = card || {};
      var key = String(card.key || "");
      if (frames.storageTimer) { clearTimeout(frames.storageTimer); flushStorage(); }
      if (key !== frames.card.key) { frames.failed.clear(); frames.failedNames = []; frames.watch.queue = []; }
      // a frame sees its own card's variables only: the scopes of the card shown so far are put away under its key,
      // the new card's (empty at first) come out; "global" is per card unless trusted (frame_guard.variable_scope_key)
      var globalKey = String(card.globalKey || "card:" + key);
      if (key !== frames.card.key || globalKey !== frames.card.globalKey) {
        var ctx = frames.context;
        frames.scopes[frames.card.key] = { chatVars: ctx.chatVars, characterVars: ctx.characterVars };
        if (frames.card.globalKey) frames.globals[frames.card.globalKey] = ctx.globalVars;
        var mine = frames.scopes[key] || {};
        ctx.chatVars = mine.chatVars || {};
        ctx.characterVars = mine.characterVars || {};
        ctx.globalVars = frames.globals[globalKey] || {};
      }
      frames.card = { key: key, trusted: !!card.trusted, globalKey: globalKey,
                      sites: Array.isArray(card.sites) ? card.sites.map(String) : [],
                      local: card.local && typeof card.local === "object" ? card.local : {},
                      session: card.session && typeof card.session === "object" ? card.session : {},
                      maxBytes: Number(card.maxBytes) > 0 ? Number(card.maxBytes) : 1048576 };
    },

    /** Names of frames Python found stalled (it had to end the whole renderer): from now on these blocks show the
     *  error box instead of running (matched by name, whatever their code). */
    setFramesFailed: function (names) {
      if (names && !Array.isArray(names)) {   // {name: reason}
        Object.keys(names).forEach(function (n) { frames.failed.set("name:" + n, String(names[n] || "hung")); });
        return;
      }
      (names || []).forEach(function (n) { frames.failed.set("name:" + String(n), "hung"); });
    },

    /** Names and the non-message variable scopes frames see: {names:{user,char}, chatVars, characterVars, globalVars}. */
    setFrameContext: function (ctx) {
      ctx = ctx || {};
      ["names", "chatVars", "characterVars", "globalVars", "presetVars"].forEach(function (k) {
        if (ctx[k] && typeof ctx[k] === "object") frames.context[k] = ctx[k];
      });
    },

    /** New variables for a message ("*": every frame, each for its own message): update the caches of its live
     *  frames, then fire mag_variable_update_started, mag_variable_update_ended(new, old), message_updated(id). */
    pushVariables: function (messageId, variables) {
      var all = String(messageId) === "*";
      var ids = [];                                     // the messages whose variables change
      if (!all) ids.push(String(messageId));
      else log.querySelectorAll(".TH-render").forEach(function (wrap) {
        if (wrap.__bar && ids.indexOf(String(wrap.__bar.item.id)) < 0) ids.push(String(wrap.__bar.item.id));
      });
      ids.forEach(function (id) { frames.vars.set(id, variables || {}); });   // bars built later start with these
      var count = 0;
      liveFrames().forEach(function (x) {
        // other messages first (the frame's copy follows — getVariables 'latest', getChatMessages — no events), so
        // that what the frame's own message's events show already reads the new values
        ids.forEach(function (id) {
          if (id !== x.frame.messageId) postTo(x.frame, { __th: "cache", message_id: idValue(id), variables: variables || {} });
        });
        if (ids.indexOf(x.frame.messageId) >= 0) {
          postTo(x.frame, { __th: "sync", message_id: idValue(x.frame.messageId), variables: variables || {} });
          count++;
        }
      });
      return count;
    },

    /** Run the card's scripts [{id, name, content}] (each in a hidden frame of its own; those running before are
     *  removed first: their renderer and loops go with them). Returns the names of the frames built. */
    setScripts: function (list) {
      scriptFrames().forEach(function (x) { x.frame.iframe.remove(); frames.byName.delete(x.name); });
      if (scriptBox) scriptBox.textContent = "";
      var out = [];
      (list || []).forEach(function (s) { var rec = createScriptFrame(s); if (rec) out.push(rec.iframe.name); });
      return out;
    },
    /** Deliver an event on the bus of the card's script frames (only the script `scriptId` when given). */
    scriptEvent: function (type, args, scriptId) {
      var n = 0;
      scriptFrames().forEach(function (x) {
        if (scriptId != null && x.frame.script.id !== String(scriptId)) return;
        postTo(x.frame, { __th: "event", type: String(type), args: args || [] });
        n++;
      });
      return n;
    },
    /** A button of script `scriptId` was clicked: its frame's bus gets the button's event (getButtonEvent). */
    scriptButton: function (scriptId, buttonName) {
      var n = 0;
      scriptFrames().forEach(function (x) {
        if (x.frame.script.id !== String(scriptId)) return;
        postTo(x.frame, { __th: "button", name: String(buttonName) });
        n++;
      });
      return n;
    },
    /** The scribe changed message `messageId`'s variables from `before` to `after` (MvuData): each script frame
     *  plays MVU's events (mag_variable_update_started, mag_variable_updated per changed value,
     *  mag_variable_update_ended) and writes back what its listeners changed. */
    scriptMvuUpdate: function (messageId, before, after) {
      frames.vars.set(String(messageId), after || {});
      var n = 0;
      scriptFrames().forEach(function (x) {
        postTo(x.frame, { __th: "mvu-update", message_id: idValue(messageId), before: before || {}, after: after || {} });
        n++;
      });
      return n;
    },
    scriptNames: function () { return scriptFrames().map(function (x) { return x.name; }); },

    /** Deliver an event on the bus of every live frame (or only those of messageId). */
    emitFrameEvent: function (type, args, messageId) {
      liveFrames().forEach(function (x) {
        if (messageId != null && x.frame.messageId !== String(messageId)) return;
        postTo(x.frame, { __th: "event", type: String(type), args: args || [] });
      });
    },

    // for tests and diagnostics
    /** Whether a CSS value (as the browser serialises it) could load nothing (the message sanitiser's check). */
    cssValueSafe: function (v) { return cssValueSafe(v); },
    frameNames: function () { return liveFrames().map(function (x) { return x.name; }); },
    frameHeight: function (name) { var f = frames.byName.get(name); return f ? f.iframe.getBoundingClientRect().height : -1; },
    frameReports: function () { return frames.reports.slice(); },
    frameLogs: function () { return frames.logs.slice(); },
    frameBlocked: function () { return frames.blocked.slice(); },
    /** Frames showing a notice (see "frame notices"): {name: {reason: "empty"|"error"|"blocked", errors, blocked, text}}. */
    frameNotices: function () {
      var out = {};
      liveFrames().forEach(function (x) { if (x.frame.notice) out[x.name] = x.frame.notice; });
      return out;
    },
    frameFailedNames: function () { return frames.failedNames.slice(); },
    /** Status-bar blocks by state (see "frame memory"): live frames, asleep (put away, far from the screen),
     *  deferred (never built yet), near (within nearMargin and not live: about to be built), unseen (not yet
     *  placed by the observer), and how many were put to sleep / woken so far. */
    frameMemory: function () {
      var out = { live: liveFrames().length, asleep: 0, deferred: 0, near: 0, unseen: 0, slept: mem.slept,
                  woken: mem.woken, keepLive: mem.keepLive };
      log.querySelectorAll(".TH-render").forEach(function (wrap) {
        if (!wrap.__bar) return;
        var f = frames.byName.get(wrap.__bar.name);
        var live = f && f.wrap === wrap && f.iframe.isConnected;
        if (wrap.classList.contains("th-asleep")) out.asleep++;
        else if (wrap.classList.contains("th-deferred")) out.deferred++;
        if (!live && !wrap.querySelector(":scope > .th-failed")) {
          if (!wrap.__seen && mem.near) out.unseen++;
          else if (wrap.__near) out.near++;
        }
      });
      return JSON.stringify(out);
    },
    /** Change the frame-memory settings: {nearMargin, farMargin (CSS margins), keepLive, fallbackMs}; applies to
     *  bars mounted afterwards (tests shorten them). */
    setFrameMemory: function (cfg) {
      cfg = cfg || {};
      var margins = false;
      ["nearMargin", "farMargin"].forEach(function (k) { if (typeof cfg[k] === "string" && cfg[k] !== mem[k]) { mem[k] = cfg[k]; margins = true; } });
      ["keepLive", "fallbackMs"].forEach(function (k) { if (Number(cfg[k]) >= 0 && cfg[k] != null) mem[k] = Number(cfg[k]); });
      if (margins && mem.near) {
        var wraps = log.querySelectorAll(".TH-render");
        mem.near.disconnect(); mem.far.disconnect(); mem.near = mem.far = null;
        if (memObservers()) wraps.forEach(function (w) { if (w.__bar) { mem.near.observe(w); mem.far.observe(w); } });
      }
    },
    /** Python's memory guard ended a frame renderer: stop the frames that were in it (see framesKilled above). */
    framesKilled: function (reason) { return framesKilled(String(reason || "memory")); },
    frameStorage: function () { return { key: frames.card.key, local: frames.card.local, session: frames.card.session }; },
    /** For Python's watchdog: the names of frames not yet heard from since they were (re)built or last pinged. */
    watchState: function () {
      var quiet = [];
      liveFrames().forEach(function (x) { if (!x.frame.hello || x.frame.ping) quiet.push(x.name); });
      return JSON.stringify({ quiet: quiet, frames: liveFrames().length });
    },
    /** Ask a frame for the textContent of a selector; read the answer with probeResult(id) (undefined until then). */
    probeFrame: function (name, selector) {
      var f = frames.byName.get(name);
      var id = String(++frames.probeSeq);
      if (f) postTo(f, { __th: "probe", id: id, selector: String(selector) });
      return id;
    },
    probeResult: function (id) { return frames.probes.has(String(id)) ? frames.probes.get(String(id)) : undefined; },
    renderText: renderText,
    stats: function () {
      return { items: log.children.length, pendingUpdates: state.pendingUpdates, hasOlder: state.hasOlder,
               loadingOlder: state.loadingOlder, oldest: oldestId(), bridge: !!bridge };
    }
  };

  // ---- branches: swipes 「◀ i/n ▶」, 编辑 on user messages, the right-clicked message ------------------------------
  // buildItem calls decorateBranches(el) last, so the controls are part of the article before it is laid out (a
  // prepend keeps the reader's place with them included). A reply with item.swipe = [i, n] (regenerates) and a user
  // message with item.branch = [i, n] (edits) get the control; every user message gets a 编辑 button, placed beside
  // its bubble (absolutely positioned: it never changes the layout). The clicks go to Python as
  // bridge.swipe(entry id, ±1) / bridge.editUser(entry id). The session entry id is item.entry_id (item.id is the
  // message's place in the transcript).
  var BRANCH_DEFAULTS = { "branch.prev": "上一个版本", "branch.next": "下一个版本", "branch.edit": "编辑",
                          "branch.edit.tip": "改这句话：从这里长出一个新分支（原来的还在）",
                          "reply.edit": "编辑", "reply.edit.tip": "改这条回复：存为它的新版本（◀ ▶ 可以翻回原文）" };
  Object.keys(BRANCH_DEFAULTS).forEach(function (k) { if (S[k] == null) S[k] = BRANCH_DEFAULTS[k]; });
  var lastContext = null;   // {id, role} of the message last right-clicked

  function entryId(item) { return String(item.entry_id != null ? item.entry_id : item.id); }

  function branchButton(cls, text, title, data) {
    var b = document.createElement("button");
    b.type = "button";
    b.className = cls;
    b.textContent = text;
    b.title = title;
    for (var k in data) b.dataset[k] = String(data[k]);
    return b;
  }

  function swipeControl(item, pair) {
    var i = Number(pair[0]) || 1, n = Number(pair[1]) || 1;
    var box = document.createElement("span");
    box.className = "swipe";
    var id = entryId(item);
    box.appendChild(branchButton("swipe-prev", "◀", fmt("branch.prev"), { swipeId: id, swipeDelta: -1 }));
    box.appendChild(span("swipe-count", i + "/" + n));
    box.appendChild(branchButton("swipe-next", "▶", fmt("branch.next"), { swipeId: id, swipeDelta: 1 }));
    return box;
  }

  function decorateBranches(el) {
    var item = el.__item;
    if (!item || el.__branchDone) return;
    el.__branchDone = true;
    if (el.dataset.role === "user") {
      var who = el.querySelector(".who");
      var bubble = el.querySelector(".bubble");
      if (who && Array.isArray(item.branch) && Number(item.branch[1]) > 1) who.appendChild(swipeControl(item, item.branch));
      addActions(el, item);
    } else if (el.dataset.role === "assistant" || el.dataset.role === "draft" || el.dataset.role === "opening") {
      addActions(el, item);
      if (!(Array.isArray(item.swipe) && Number(item.swipe[1]) > 1)) return;
      var foot = document.createElement("div");
      foot.className = "branch-foot";
      foot.appendChild(swipeControl(item, item.swipe));
      el.appendChild(foot);
    }
  }

  // ---- message actions (issue 26 §3): 复制 · 编辑 · 分支 · 删除 on hover, as SillyTavern's message buttons -------------
  // A bar at the message's top right, shown while the pointer is over the message (or a button has keyboard focus).
  // 编辑 opens an editor in place of the text (Save / Cancel; Ctrl+Enter saves, Esc cancels): a reply's new text
  // becomes a new version of it, a user message's is played again on a new branch (Python: bridge.saveEdit). The
  // other buttons go to Python as bridge.messageAction(action, entry id): copy, delete (asked first there), branch,
  // hide / unhide (item.hidden: the message is shown dimmed with a 「不发送」 badge; SillyTavern's /hide).
  var ACTION_DEFAULTS = { "msg.copy": "复制", "msg.copy.tip": "复制这条消息的文字", "msg.edit": "编辑",
                          "msg.edit.tip": "就地修改这条消息", "msg.edit.save": "保存", "msg.edit.cancel": "取消",
                          "msg.edit.user.note": "保存后从这句话长出一个新分支，重新演一拍（原来的还在）",
                          "msg.edit.reply.note": "保存为这条回复的新版本（◀ ▶ 可以翻回原文；账本不重算）",
                          "msg.delete": "删除", "msg.delete.tip": "删除这条消息及其后的内容（原分支保留在「分支」里，可以找回）",
                          "msg.branch": "从这里分支", "msg.branch.tip": "新建一个对话，包含到这条消息为止的内容",
                          "msg.hide": "不发送", "msg.unhide": "恢复发送", "msg.hidden.badge": "不发送",
                          "msg.hide.tip": "这条消息留在对话里，但不再发送给模型（SillyTavern 的 /hide）",
                          "msg.hidden.tip": "这条消息不会发送给模型" };
  Object.keys(ACTION_DEFAULTS).forEach(function (k) { if (S[k] == null) S[k] = ACTION_DEFAULTS[k]; });

  function addActions(el, item) {
    if (/^pending-/.test(String(item.id))) return;
    var role = el.dataset.role;
    var bar = document.createElement("div");
    bar.className = "msg-actions";
    var id = entryId(item);
    bar.appendChild(branchButton("act-copy", fmt("msg.copy"), fmt("msg.copy.tip"), { act: "copy", actId: id }));
    if (role === "user" || role === "assistant") {
      bar.appendChild(branchButton("act-edit", fmt("msg.edit"), fmt("msg.edit.tip"), { act: "edit", actId: id }));
    }
    if (role !== "draft") {
      bar.appendChild(branchButton("act-branch", fmt("msg.branch"), fmt("msg.branch.tip"), { act: "branch", actId: id }));
    }
    if (role !== "draft") {
      var hid = !!item.hidden;
      bar.appendChild(branchButton("act-hide", fmt(hid ? "msg.unhide" : "msg.hide"), fmt(hid ? "msg.hidden.tip" : "msg.hide.tip"),
                                   { act: hid ? "unhide" : "hide", actId: id }));
    }
    if (item.hidden) {
      el.classList.add("hidden-msg");
      var badge = span("badge hidden-badge", fmt("msg.hidden.badge"));
      badge.title = fmt("msg.hidden.tip");
      el.appendChild(badge);
    }
    if (role === "user" || role === "assistant") {
      bar.appendChild(branchButton("act-delete", fmt("msg.delete"), fmt("msg.delete.tip"), { act: "delete", actId: id }));
    }
    el.appendChild(bar);
  }

  function articleOf(id) {
    var all = log.querySelectorAll("article.msg");
    for (var i = all.length - 1; i >= 0; i--) {
      if (all[i].__item && entryId(all[i].__item) === String(id)) return all[i];
    }
    return null;
  }

  function endEdit(el) {
    var box = el.querySelector(".inline-edit");
    if (box) box.parentNode.removeChild(box);
    var body = el.querySelector(".body");
    if (body) body.hidden = false;
    el.classList.remove("editing");
  }

  /** Open the in-place editor on the message with session entry id ``id`` (its text as stored); false when the
   *  message is not shown or cannot be edited. */
  function editMessage(id) {
    var el = articleOf(id);
    if (!el || (el.dataset.role !== "user" && el.dataset.role !== "assistant")) return false;
    if (el.classList.contains("editing")) return true;
    var body = el.querySelector(".body");
    var box = document.createElement("div");
    box.className = "inline-edit";
    var ta = document.createElement("textarea");
    var raw = el.__item.raw != null ? el.__item.raw : el.__item.text;  // the stored text, not the displayed one
    ta.value = String(raw || "");
    ta.rows = Math.min(18, Math.max(3, ta.value.split("\n").length + 1));
    box.appendChild(ta);
    var row = document.createElement("div");
    row.className = "inline-edit-row";
    row.appendChild(span("inline-edit-note", fmt(el.dataset.role === "user" ? "msg.edit.user.note" : "msg.edit.reply.note")));
    var save = branchButton("inline-save", fmt("msg.edit.save"), "", {});
    var cancel = branchButton("inline-cancel", fmt("msg.edit.cancel"), "", {});
    function commit() {
      var text = ta.value;
      endEdit(el);
      if (bridge && bridge.saveEdit && text !== String(raw || "")) bridge.saveEdit(id, text);
    }
    save.addEventListener("click", function (ev) { ev.stopPropagation(); commit(); });
    cancel.addEventListener("click", function (ev) { ev.stopPropagation(); endEdit(el); });
    ta.addEventListener("keydown", function (ev) {
      if (ev.key === "Escape") { ev.preventDefault(); endEdit(el); }
      else if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) { ev.preventDefault(); commit(); }
    });
    row.appendChild(cancel);
    row.appendChild(save);
    box.appendChild(row);
    if (body) { body.hidden = true; body.parentNode.insertBefore(box, body.nextSibling); } else el.appendChild(box);
    el.classList.add("editing");
    ta.focus();
    ta.setSelectionRange(ta.value.length, ta.value.length);
    return true;
  }
  window.liyuan.editMessage = editMessage;

  log.addEventListener("click", function (ev) {
    var a = ev.target && ev.target.closest ? ev.target.closest("button[data-act]") : null;
    if (a) {
      ev.preventDefault();
      ev.stopPropagation();
      if (a.dataset.act === "edit") editMessage(a.dataset.actId);
      else if (bridge && bridge.messageAction) bridge.messageAction(a.dataset.act, a.dataset.actId);
      return;
    }
    var b = ev.target && ev.target.closest ? ev.target.closest("button[data-swipe-id], button[data-edit-id], button[data-edit-reply-id]") : null;
    if (!b || !bridge) return;
    ev.preventDefault();
    ev.stopPropagation();
    if (b.dataset.swipeId != null && bridge.swipe) bridge.swipe(b.dataset.swipeId, Number(b.dataset.swipeDelta) || 1);
    else if (b.dataset.editId != null && bridge.editUser) bridge.editUser(b.dataset.editId);
    else if (b.dataset.editReplyId != null && bridge.editReply) bridge.editReply(b.dataset.editReplyId);
  });

  document.addEventListener("contextmenu", function (ev) {
    var el = ev.target && ev.target.closest ? ev.target.closest("#log > article.msg") : null;
    lastContext = el && el.__item ? { id: entryId(el.__item), role: el.dataset.role } : null;
  }, true);

  /** The message last right-clicked, {id: session entry id, role}, or null (Python's context menu asks). */
  window.liyuan.contextItem = function () { return lastContext; };

  // ---- channel --------------------------------------------------------------------------------------------------
  function connect() {
    if (typeof QWebChannel === "undefined" || typeof qt === "undefined" || !qt.webChannelTransport) return;
    new QWebChannel(qt.webChannelTransport, function (channel) {
      bridge = channel.objects.bridge || null;
      if (bridge) bridge.pageReady();
    });
  }
  connect();
})();
