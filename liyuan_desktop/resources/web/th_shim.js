/* th_shim.js — Liyuan's own TavernHelper / MVU runtime shim for status-bar frames (our code; facts from
 * ../shared/design/card-runtime.md §2 and §4).
 *
 * Runs first inside every sandboxed status-bar frame (<iframe sandbox="allow-scripts">, opaque origin, no network).
 * The host page puts the initial state in window.__LIYUAN_TH__ (an inline JSON literal, so everything is
 * synchronous before the card's own script runs):
 *   {name, messageId, chat:[{message_id, role, name, is_hidden, message, data}], chatVars, characterVars,
 *    globalVars, names:{user, char}, viewportHeight, storage:{local:{k:v}, session:{k:v}, maxBytes}}
 * Host <-> frame protocol: window.postMessage objects with a "__th" key.
 *   frame -> host: {__th:"hello"} (first thing, before the card's code) {__th:"pong", seq}
 *                  {__th:"height", h} {__th:"write", type, message_id, variables} {__th:"report", data}
 *                  {__th:"log", level, text} {__th:"probe-result", id, text}
 *                  {__th:"storage", area:"local"|"session", op:"set"|"remove"|"clear", key, value}
 *                  {__th:"blocked", url, directive} (a Content-Security-Policy violation: what the frame may not load)
 *   host -> frame: {__th:"sync", message_id, variables} {__th:"viewport", h} {__th:"probe", id, selector}
 *                  {__th:"event", type, args} {__th:"ping", seq} {__th:"storage-sync", area, op, key, value}
 * The host answers no other requests: a frame cannot name a card, so it can only ever reach the storage the host
 * gave it (the one of the card whose chat is shown).
 */
(function () {
  "use strict";
  var init = window.__LIYUAN_TH__ || {};
  var W = window;
  var host = W.parent;
  try { host.postMessage({ __th: "hello" }, "*"); } catch (e) { /* no host */ }  // alive: the watchdog starts pinging

  // ---- window.parent ---------------------------------------------------------------------------------------------
  // Under TavernHelper a frame is same-origin, so bars read the API from the chat page: `window.parent.Mvu`,
  // `parent.TavernHelper`, `parent.getVariables`… Here the frame is sandboxed (opaque origin), so those reads would
  // throw SecurityError. `parent` is a [Replaceable] window attribute: it is shadowed by a facade that answers with
  // what this frame itself defines after this point (the shim's API, the injected libraries, the card's own globals)
  // and, for anything a browser window has by itself (document, location, localStorage, qt…) or anything unknown,
  // throws the same SecurityError a cross-origin parent would — and reports it. postMessage still reaches the host
  // page, which decides on its own which card a message belongs to. (`top` is unforgeable and stays cross-origin.)
  // ---- what this frame may post (issue 29 §9) ---------------------------------------------------------------------
  // Every message the shim or the card sends through `parent.postMessage` passes a token bucket here, in the frame,
  // before it crosses to the host page: init.flood.rate a second, init.flood.frameBurst saved up (frame_guard.FLOOD:
  // fewer than the host page's lagCount, so what passes never swamps it); the excess is dropped on this side, so a bar in a runaway loop cannot queue
  // thousands of messages that the host page must take delivery of one by one (a view frozen for seconds). A frame
  // that starts dropping says so ({__th:"dropping"}, at most once a second: the host logs it), and one that drops
  // init.flood.stopPerSecond messages within a second tells the host ({__th:"flood"}) and sends nothing more; the
  // host stops it with its notice. (`top.postMessage` bypasses this: the host page's own bucket and
  // frame_guard.after_flood stay for that.)
  var fcfg = init.flood && typeof init.flood === "object" ? init.flood : {};
  var flood = { rate: Number(fcfg.rate) > 0 ? Number(fcfg.rate) : 200,
                burst: Number(fcfg.frameBurst) > 0 ? Number(fcfg.frameBurst) : 100,
                stop: Number(fcfg.stopPerSecond) > 0 ? Number(fcfg.stopPerSecond) : 2000, at: 0, windowAt: 0, drops: 0,
                lastDrop: -1e9, done: false };
  flood.tokens = flood.burst;
  function send(msg, target) {
    if (flood.done) return;
    var now = Date.now();
    flood.tokens = Math.min(flood.burst, flood.tokens + (now - flood.at) * flood.rate / 1000);
    flood.at = now;
    if (flood.tokens >= 1) { flood.tokens -= 1; host.postMessage(msg, target); return; }
    if (now - flood.lastDrop > 1000) host.postMessage({ __th: "dropping" }, "*");   // a burst of drops starts: logged once
    flood.lastDrop = now;
    if (now - flood.windowAt > 1000) { flood.windowAt = now; flood.drops = 0; }
    if (++flood.drops >= flood.stop) {
      flood.done = true;
      host.postMessage({ __th: "flood" }, "*");
    }
  }

  var builtins = Object.create(null);
  Object.getOwnPropertyNames(W).forEach(function (k) { builtins[k] = true; });
  var facade = null;
  try {
    if (typeof Proxy === "function" && host && host !== W) {
      facade = new Proxy(Object.create(null), {
        get: function (t, key) {
          if (key === "postMessage") return function (msg, target) { return send(msg, target === undefined ? "*" : target); };
          if (typeof key === "symbol") return undefined;
          if (key === "window" || key === "self" || key === "parent") return facade;
          if (!builtins[key] && key in W) return W[key];
          post({ __th: "log", level: "warning", text: "[th_shim] blocked parent." + String(key) + " (the chat page is out of a status bar's reach)" });
          throw new DOMException("Blocked a frame from accessing parent." + String(key) + " (sandboxed status bar)", "SecurityError");
        },
        has: function (t, key) { return typeof key === "string" && !builtins[key] && key in W; },
        set: function () { throw new DOMException("Blocked a frame from writing to its parent (sandboxed status bar)", "SecurityError"); }
      });
      W.parent = facade;
    }
  } catch (e) { /* keep the real (cross-origin) parent */ }

  function clone(v) { return v === undefined ? undefined : JSON.parse(JSON.stringify(v)); }
  function isObj(v) { return v !== null && typeof v === "object" && !Array.isArray(v); }
  function post(msg) { try { send(msg, "*"); } catch (e) { /* no host */ } }
  function logToHost(level, args) {
    var text = Array.prototype.map.call(args, function (a) {
      try { return typeof a === "string" ? a : JSON.stringify(a); } catch (e) { return String(a); }
    }).join(" ");
    post({ __th: "log", level: level, text: text });
  }
  function stub(name, value) {
    return function () {
      logToHost("info", ["[th_shim] card called unsupported " + name + "()"]);
      return typeof value === "function" ? value.apply(null, arguments) : value;
    };
  }

  // ---- cache -----------------------------------------------------------------------------------------------------
  // the chat arrives packed (conversation.js packChat): each repeated fenced block once, in init.chatBlocks; a packed
  // message holds "\uE010<n>\uE011" where block n was
  var chatBlocks = Array.isArray(init.chatBlocks) ? init.chatBlocks : [];
  (Array.isArray(init.chat) ? init.chat : []).forEach(function (m) {
    if (!m || !m.packed) return;
    m.message = String(m.message).replace(/\uE010(\d+)\uE011/g, function (whole, k) {
      return typeof chatBlocks[+k] === "string" ? chatBlocks[+k] : whole;
    });
    delete m.packed;
  });
  init.chatBlocks = null;
  var cache = {
    name: String(init.name || W.name || ""),
    chat: Array.isArray(init.chat) ? init.chat : [],
    chat_vars: isObj(init.chatVars) ? init.chatVars : {},
    character_vars: isObj(init.characterVars) ? init.characterVars : {},
    global_vars: isObj(init.globalVars) ? init.globalVars : {},
    preset_vars: isObj(init.presetVars) ? init.presetVars : {},
    names: init.names || {},
    script_vars: {}
  };
  var currentId = init.messageId;

  function sameId(a, b) { return String(a) === String(b); }
  function findMessage(id, allowMissing) {
    var chat = cache.chat;
    if (id === undefined || id === null || id === "latest") {
      for (var i = chat.length - 1; i >= 0; i--) if (chat[i].role !== "system") return chat[i];
      if (allowMissing) return null;
      throw new Error("no message");
    }
    for (var j = 0; j < chat.length; j++) if (sameId(chat[j].message_id, id)) return chat[j];
    if (typeof id === "number" && id < 0 && -id <= chat.length) return chat[chat.length + id];
    if (allowMissing) return null;
    throw new Error("message_id " + id + " out of range");
  }
  function ensureMessage(id) {
    var m = findMessage(id, true);
    if (!m) {
      m = { message_id: id == null || id === "latest" ? currentId : id, role: "assistant", name: "", is_hidden: false,
            message: "", data: {} };
      cache.chat.push(m);
    }
    return m;
  }
  function scopeOf(option) {
    option = option || { type: "chat" };
    return option.type || "chat";
  }
  function readScope(option) {
    var type = scopeOf(option);
    if (type === "message") { var m = findMessage(option.message_id, true); return m ? (m.data || {}) : {}; }
    if (type === "chat") return cache.chat_vars;
    if (type === "character") return cache.character_vars;
    if (type === "global") return cache.global_vars;
    if (type === "script") return cache.script_vars;
    if (type === "preset") return cache.preset_vars;
    return {};  // extension: not kept
  }
  function writeScope(vars, option) {
    var type = scopeOf(option);
    vars = isObj(vars) ? vars : {};
    var messageId = null;
    if (type === "message") {
      var m = ensureMessage(option && option.message_id);
      m.data = vars; messageId = m.message_id;
    } else if (type === "chat") cache.chat_vars = vars;
    else if (type === "character") cache.character_vars = vars;
    else if (type === "global") cache.global_vars = vars;
    else if (type === "preset") cache.preset_vars = vars;
    else if (type === "script") { cache.script_vars = vars; return; }
    else { logToHost("info", ["[th_shim] variables of type " + type + " are not kept"]); return; }
    post({ __th: "write", type: type, message_id: messageId, variables: clone(vars) });
  }

  function getVariables(option) { return clone(readScope(option || { type: "chat" })); }
  function replaceVariables(vars, option) { writeScope(clone(vars), option || { type: "chat" }); }
  function updateVariablesWith(updater, option) {
    option = option || { type: "chat" };
    var vars = getVariables(option);
    var out = updater(vars);
    if (out && typeof out.then === "function") {
      return out.then(function (r) { var v = r === undefined ? vars : r; replaceVariables(v, option); return getVariables(option); });
    }
    replaceVariables(out === undefined ? vars : out, option);
    return getVariables(option);
  }
  function mergeInto(dst, src, onlyMissing) {
    Object.keys(src || {}).forEach(function (k) {
      var s = src[k];
      if (isObj(s) && isObj(dst[k])) mergeInto(dst[k], s, onlyMissing);
      else if (!onlyMissing || !(k in dst)) dst[k] = clone(s);
    });
    return dst;
  }
  function insertOrAssignVariables(vars, option) {
    return updateVariablesWith(function (v) { return mergeInto(v, vars, false); }, option);
  }
  function insertVariables(vars, option) {
    return updateVariablesWith(function (v) { return mergeInto(v, vars, true); }, option);
  }
  function splitPath(path) {
    return String(path).replace(/\[(\w+)\]/g, ".$1").split(".").filter(function (p) { return p !== ""; });
  }
  function getPath(obj, path) {
    var parts = splitPath(path), cur = obj;
    for (var i = 0; i < parts.length; i++) { if (cur == null) return undefined; cur = cur[parts[i]]; }
    return cur;
  }
  function hasPath(obj, path) {
    var parts = splitPath(path), cur = obj;
    for (var i = 0; i < parts.length; i++) {
      if (cur == null || typeof cur !== "object" || !(parts[i] in cur)) return false;
      cur = cur[parts[i]];
    }
    return true;
  }
  function setPath(obj, path, value) {
    var parts = splitPath(path), cur = obj;
    for (var i = 0; i < parts.length - 1; i++) {
      if (cur[parts[i]] == null || typeof cur[parts[i]] !== "object") cur[parts[i]] = {};
      cur = cur[parts[i]];
    }
    cur[parts[parts.length - 1]] = value;
  }
  function deleteVariable(path, option) {
    option = option || { type: "chat" };
    var vars = getVariables(option), parts = splitPath(path), cur = vars, occurred = false;
    for (var i = 0; i < parts.length - 1 && cur != null; i++) cur = cur[parts[i]];
    if (cur != null && typeof cur === "object" && parts[parts.length - 1] in cur) {
      if (Array.isArray(cur)) cur.splice(+parts[parts.length - 1], 1); else delete cur[parts[parts.length - 1]];
      occurred = true;
      replaceVariables(vars, option);
    }
    return { variables: vars, delete_occurred: occurred };
  }
  function getAllVariables() {
    var out = Object.assign({}, clone(cache.global_vars), clone(cache.character_vars), clone(cache.chat_vars));
    for (var i = 0; i < cache.chat.length; i++) {
      Object.assign(out, clone(cache.chat[i].data || {}));
      if (sameId(cache.chat[i].message_id, currentId)) break;
    }
    return out;
  }

  // ---- messages ----------------------------------------------------------------------------------------------------
  function toChatMessage(m) {
    return { message_id: m.message_id, name: m.name || "", role: m.role || "assistant", is_hidden: !!m.is_hidden,
             message: m.message || "", data: clone(m.data || {}), extra: {} };
  }
  function getChatMessages(range, opts) {
    opts = opts || {};
    var chat = cache.chat, picked;
    var r = typeof range === "string" ? substitudeMacros(range) : range;
    var mm = typeof r === "string" && r.match(/^\s*(-?\d+)\s*-\s*(-?\d+)\s*$/);
    if (mm) {
      var a = +mm[1], b = +mm[2];
      picked = chat.filter(function (m, i) { var id = typeof m.message_id === "number" ? m.message_id : i; return id >= a && id <= b; });
    } else {
      var m = findMessage(typeof r === "string" && /^-?\d+$/.test(r.trim()) ? +r : r, true);
      picked = m ? [m] : [];
    }
    if (opts.role && opts.role !== "all") picked = picked.filter(function (m) { return m.role === opts.role; });
    if (opts.hide_state === "hidden") picked = picked.filter(function (m) { return m.is_hidden; });
    if (opts.hide_state === "unhidden") picked = picked.filter(function (m) { return !m.is_hidden; });
    return picked.map(function (m) {
      var cm = toChatMessage(m);
      if (opts.include_swipes) { cm.swipe_id = 0; cm.swipes = [cm.message]; cm.swipes_data = [clone(cm.data)]; cm.swipes_info = [{}]; }
      return cm;
    });
  }
  function getIframeName() { return cache.name; }
  function getCurrentMessageId() {
    var m = cache.name.match(/^TH-message--(.+)--\d+$/);
    if (!m) throw new Error("not a message iframe: " + cache.name);
    return /^-?\d+$/.test(m[1]) ? +m[1] : m[1];
  }
  function getMessageId(name) {
    var m = String(name).match(/^TH-message--(.+)--\d+$/);
    if (!m) throw new Error("not a message iframe: " + name);
    return /^-?\d+$/.test(m[1]) ? +m[1] : m[1];
  }
  function getLastMessageId() {
    var last = cache.chat[cache.chat.length - 1];
    if (!last) return -1;
    return typeof last.message_id === "number" ? last.message_id : cache.chat.length - 1;
  }

  // ---- macros ------------------------------------------------------------------------------------------------------
  function substitudeMacros(text) {
    var user = cache.names.user || "User", ch = cache.names.char || "Character";
    return String(text)
      .replace(/\{\{user\}\}|<user>/gi, user)
      .replace(/\{\{char\}\}|<char>/gi, ch)
      .replace(/\{\{lastMessageId\}\}/g, String(getLastMessageId()))
      .replace(/\{\{(get|format)_(message|chat|character|global)_variable::([^}]+)\}\}/g, function (_, kind, type, path) {
        var v = getPath(readScope({ type: type }), path.trim());
        if (v === undefined) return "";
        return typeof v === "string" ? v : JSON.stringify(v, null, kind === "format" ? 2 : 0);
      });
  }

  // ---- events --------------------------------------------------------------------------------------------------
  var listeners = {};
  function list(type) { return listeners[type] || (listeners[type] = []); }
  function eventOn(type, fn) { list(type).push({ fn: fn, once: false }); return { stop: function () { eventRemoveListener(type, fn); } }; }
  function eventOnce(type, fn) { list(type).push({ fn: fn, once: true }); return { stop: function () { eventRemoveListener(type, fn); } }; }
  function eventMakeFirst(type, fn) { eventRemoveListener(type, fn); list(type).unshift({ fn: fn, once: false }); return { stop: function () { eventRemoveListener(type, fn); } }; }
  function eventMakeLast(type, fn) { eventRemoveListener(type, fn); return eventOn(type, fn); }
  function eventRemoveListener(type, fn) { listeners[type] = list(type).filter(function (l) { return l.fn !== fn; }); }
  function eventClearEvent(type) { delete listeners[type]; }
  function eventClearListener(fn) { Object.keys(listeners).forEach(function (t) { eventRemoveListener(t, fn); }); }
  function eventClearAll() { listeners = {}; }
  function emitLocal(type, args) {
    var ls = list(type).slice(), results = [];
    listeners[type] = list(type).filter(function (l) { return !l.once; });
    ls.forEach(function (l) {
      try { results.push(l.fn.apply(null, args)); }
      catch (e) { logToHost("error", ["[th_shim] listener of " + type + " failed: " + (e && e.stack || e)]); }
    });
    return results;
  }
  function eventEmit(type) {
    var args = Array.prototype.slice.call(arguments, 1);
    return Promise.all(emitLocal(type, args)).then(function () {});
  }
  function eventEmitAndWait(type) { emitLocal(type, Array.prototype.slice.call(arguments, 1)); }

  var tavern_events = {
    APP_READY: "app_ready", EXTRAS_CONNECTED: "extras_connected", MESSAGE_SWIPED: "message_swiped",
    MESSAGE_SENT: "message_sent", MESSAGE_RECEIVED: "message_received", MESSAGE_EDITED: "message_edited",
    MESSAGE_DELETED: "message_deleted", MESSAGE_UPDATED: "message_updated", MESSAGE_FILE_EMBEDDED: "message_file_embedded",
    MESSAGE_SWIPE_DELETED: "message_swipe_deleted", MORE_MESSAGES_LOADED: "more_messages_loaded",
    IMPERSONATE_READY: "impersonate_ready", CHAT_CHANGED: "chat_id_changed", GENERATION_AFTER_COMMANDS: "GENERATION_AFTER_COMMANDS",
    GENERATION_STARTED: "generation_started", GENERATION_STOPPED: "generation_stopped", GENERATION_ENDED: "generation_ended",
    EXTENSIONS_FIRST_LOAD: "extensions_first_load", EXTENSION_SETTINGS_LOADED: "extension_settings_loaded",
    SETTINGS_LOADED: "settings_loaded", SETTINGS_UPDATED: "settings_updated", GROUP_UPDATED: "group_updated",
    MOVABLE_PANELS_RESET: "movable_panels_reset", SETTINGS_LOADED_BEFORE: "settings_loaded_before",
    SETTINGS_LOADED_AFTER: "settings_loaded_after", CHATCOMPLETION_SOURCE_CHANGED: "chatcompletion_source_changed",
    CHATCOMPLETION_MODEL_CHANGED: "chatcompletion_model_changed", OAI_PRESET_CHANGED_BEFORE: "oai_preset_changed_before",
    OAI_PRESET_CHANGED_AFTER: "oai_preset_changed_after", OAI_PRESET_EXPORT_READY: "oai_preset_export_ready",
    OAI_PRESET_IMPORT_READY: "oai_preset_import_ready", WORLDINFO_SETTINGS_UPDATED: "worldinfo_settings_updated",
    WORLDINFO_UPDATED: "worldinfo_updated", CHARACTER_EDITED: "character_edited", CHARACTER_PAGE_LOADED: "character_page_loaded",
    CHARACTER_GROUP_OVERLAY_STATE_CHANGE_BEFORE: "character_group_overlay_state_change_before",
    CHARACTER_GROUP_OVERLAY_STATE_CHANGE_AFTER: "character_group_overlay_state_change_after",
    USER_MESSAGE_RENDERED: "user_message_rendered", CHARACTER_MESSAGE_RENDERED: "character_message_rendered",
    FORCE_SET_BACKGROUND: "force_set_background", CHAT_DELETED: "chat_deleted", CHAT_CREATED: "chat_created",
    GROUP_CHAT_DELETED: "group_chat_deleted", GROUP_CHAT_CREATED: "group_chat_created",
    GENERATE_BEFORE_COMBINE_PROMPTS: "generate_before_combine_prompts", GENERATE_AFTER_COMBINE_PROMPTS: "generate_after_combine_prompts",
    GENERATE_AFTER_DATA: "generate_after_data", GROUP_MEMBER_DRAFTED: "group_member_drafted",
    WORLD_INFO_ACTIVATED: "world_info_activated", TEXT_COMPLETION_SETTINGS_READY: "text_completion_settings_ready",
    CHAT_COMPLETION_SETTINGS_READY: "chat_completion_settings_ready", CHAT_COMPLETION_PROMPT_READY: "chat_completion_prompt_ready",
    CHARACTER_FIRST_MESSAGE_SELECTED: "character_first_message_selected", CHARACTER_DELETED: "characterDeleted",
    CHARACTER_DUPLICATED: "character_duplicated", STREAM_TOKEN_RECEIVED: "stream_token_received",
    FILE_ATTACHMENT_DELETED: "file_attachment_deleted", WORLDINFO_FORCE_ACTIVATE: "worldinfo_force_activate",
    OPEN_CHARACTER_LIBRARY: "open_character_library", ONLINE_STATUS_CHANGED: "online_status_changed",
    IMAGE_SWIPED: "image_swiped", CONNECTION_PROFILE_LOADED: "connection_profile_loaded",
    TOOL_CALLS_PERFORMED: "tool_calls_performed", TOOL_CALLS_RENDERED: "tool_calls_rendered"
  };
  var iframe_events = {
    MESSAGE_IFRAME_RENDER_STARTED: "message_iframe_render_started",
    MESSAGE_IFRAME_RENDER_ENDED: "message_iframe_render_ended",
    GENERATION_STARTED: "js_generation_started",
    STREAM_TOKEN_RECEIVED_FULLY: "js_stream_token_received_fully",
    STREAM_TOKEN_RECEIVED_INCREMENTALLY: "js_stream_token_received_incrementally",
    GENERATION_ENDED: "js_generation_ended"
  };

  // ---- MVU ---------------------------------------------------------------------------------------------------------
  function unwrap(v) { return Array.isArray(v) && v.length === 2 && typeof v[1] === "string" ? v[0] : v; }
  var Mvu = {
    events: {
      VARIABLE_INITIALIZED: "mag_variable_initialized",
      VARIABLE_UPDATE_STARTED: "mag_variable_update_started",
      COMMAND_PARSED: "mag_command_parsed",
      VARIABLE_UPDATE_ENDED: "mag_variable_update_ended",
      BEFORE_MESSAGE_UPDATE: "mag_before_message_update",
      SINGLE_VARIABLE_UPDATED: "mag_variable_updated"
    },
    getMvuData: function (option) { return getVariables(option || { type: "message" }); },
    replaceMvuData: function (data, option) { replaceVariables(data, option || { type: "message" }); return Promise.resolve(); },
    getCurrentMvuData: function () { return getVariables({ type: "message" }); },
    replaceCurrentMvuData: function (data) { replaceVariables(data, { type: "message" }); return Promise.resolve(); },
    parseMessage: function (text, oldData) {
      logToHost("info", ["[th_shim] Mvu.parseMessage is not supported; data returned unchanged"]);
      return Promise.resolve(clone(oldData));
    },
    isDuringExtraAnalysis: function () { return false; },
    reloadInitVar: function () { return Promise.resolve(false); },
    getMvuVariable: function (data, path, opts) {
      opts = opts || {};
      var cat = opts.category === "display" ? "display_data" : opts.category === "delta" ? "delta_data" : "stat_data";
      var v = getPath((data || {})[cat], path);
      return v === undefined ? opts.default_value : unwrap(v);
    },
    setMvuVariable: function (data, path, value) {
      if (!data || !data.stat_data || !hasPath(data.stat_data, path)) return Promise.resolve(false);
      var old = getPath(data.stat_data, path);
      if (Array.isArray(old) && old.length === 2 && typeof old[1] === "string") {
        old[0] = typeof old[0] === "number" ? Number(value) : value;
      } else {
        setPath(data.stat_data, path, typeof old === "number" ? Number(value) : value);
      }
      return Promise.resolve(true);
    },
    getRecordFromMvuData: function (data, category) {
      var cat = category === "display" ? "display_data" : category === "delta" ? "delta_data" : "stat_data";
      return (data || {})[cat] || {};
    }
  };

  // ---- storage polyfill: per card, kept by the host ------------------------------------------------------------
  // localStorage / sessionStorage of a sandboxed frame throw; cards use them, so both are replaced by a synchronous
  // Storage look-alike filled from init.storage (the card's items, inlined by the host before any card code runs).
  // Every change is posted to the host, which keeps the card's copy (localStorage on disk, in the card's folder;
  // sessionStorage for the run of the app) and passes it on to the card's other frames. A write that would take the
  // card's storage over maxBytes (UTF-8 of keys + values, 1 MiB) throws QuotaExceededError, as a browser does, and
  // says so on the console.
  var storageInit = isObj(init.storage) ? init.storage : {};
  var MAX_STORAGE = Number(storageInit.maxBytes) > 0 ? Number(storageInit.maxBytes) : 1048576;
  var encoder = W.TextEncoder ? new W.TextEncoder() : null;
  function utf8Len(str) {
    if (encoder) return encoder.encode(str).length;
    return unescape(encodeURIComponent(str)).length;
  }
  var METHODS = { getItem: 1, setItem: 1, removeItem: 1, clear: 1, key: 1, length: 1 };
  function makeStorage(area, items) {
    var d = {}, size = 0;
    Object.keys(isObj(items) ? items : {}).forEach(function (k) {
      var v = String(items[k]);
      d[k] = v; size += utf8Len(k) + utf8Len(v);
    });
    function has(k) { return Object.prototype.hasOwnProperty.call(d, k); }
    function put(k, v, fromHost) {
      var old = has(k) ? d[k] : null;
      var next = size - (old == null ? 0 : utf8Len(k) + utf8Len(old)) + utf8Len(k) + utf8Len(v);
      if (!fromHost && next > MAX_STORAGE) {
        var msg = "[liyuan] " + area + "Storage of this card is full (" + MAX_STORAGE + " bytes): setItem(" +
          JSON.stringify(k.slice(0, 40)) + ") was not saved / 这张卡的存储已满（上限 1 MB），这次写入没有保存";
        try { console.warn(msg); } catch (e) { /* no console */ }
        logToHost("error", [msg]);
        var err;
        try { err = new DOMException(msg, "QuotaExceededError"); } catch (e) { err = new Error(msg); err.name = "QuotaExceededError"; }
        throw err;
      }
      d[k] = v; size = next;
      if (!fromHost) post({ __th: "storage", area: area, op: "set", key: k, value: v });
    }
    function drop(k, fromHost) {
      if (!has(k)) return;
      size -= utf8Len(k) + utf8Len(d[k]);
      delete d[k];
      if (!fromHost) post({ __th: "storage", area: area, op: "remove", key: k });
    }
    function wipe(fromHost) {
      d = {}; size = 0;
      if (!fromHost) post({ __th: "storage", area: area, op: "clear" });
    }
    var api = {
      getItem: function (k) { k = String(k); return has(k) ? d[k] : null; },
      setItem: function (k, v) { put(String(k), String(v), false); },
      removeItem: function (k) { drop(String(k), false); },
      clear: function () { wipe(false); },
      key: function (i) { var ks = Object.keys(d); i = Number(i); return i >= 0 && i < ks.length ? ks[i] : null; }
    };
    var target = {
      __apply: function (op, k, v) {   // a change another frame of this card made (host -> frame)
        var old = has(k) ? d[k] : null;
        if (op === "set") put(String(k), String(v), true);
        else if (op === "remove") drop(String(k), true);
        else if (op === "clear") wipe(true);
        try {
          W.dispatchEvent(new StorageEvent("storage", { key: op === "clear" ? null : String(k), oldValue: old,
                                                        newValue: op === "set" ? String(v) : null, url: "" }));
        } catch (e) { /* old engine */ }
      }
    };
    // A Proxy, so that localStorage.foo / localStorage["foo"] = "x" / Object.keys(localStorage) work as in a browser.
    if (typeof Proxy !== "function") { api.__apply = target.__apply; Object.defineProperty(api, "length", { get: function () { return Object.keys(d).length; } }); return api; }
    return new Proxy(target, {
      get: function (t, p) {
        if (p === "__apply") return t.__apply;
        if (p === "length") return Object.keys(d).length;
        if (typeof p === "string" && Object.prototype.hasOwnProperty.call(api, p)) return api[p];
        if (p === Symbol.toStringTag) return "Storage";
        return typeof p === "string" && has(p) ? d[p] : undefined;
      },
      set: function (t, p, v) { if (typeof p === "string" && !METHODS[p]) put(p, String(v), false); return true; },
      deleteProperty: function (t, p) { if (typeof p === "string") drop(p, false); return true; },
      has: function (t, p) { return typeof p === "string" && (has(p) || Object.prototype.hasOwnProperty.call(api, p)); },
      ownKeys: function () { return Object.keys(d); },
      getOwnPropertyDescriptor: function (t, p) {
        return typeof p === "string" && has(p) ? { value: d[p], writable: true, enumerable: true, configurable: true } : undefined;
      }
    });
  }
  var storages = {
    local: makeStorage("local", storageInit.local),
    session: makeStorage("session", storageInit.session)
  };
  [["localStorage", "local"], ["sessionStorage", "session"]].forEach(function (pair) {
    var s = storages[pair[1]];
    try { Object.defineProperty(W, pair[0], { configurable: true, get: function () { return s; } }); }
    catch (e) { logToHost("error", ["[th_shim] could not install " + pair[0] + ": " + e]); }
  });

  // ---- misc --------------------------------------------------------------------------------------------------
  var toastr = {};
  ["success", "info", "warning", "error", "clear", "remove"].forEach(function (k) {
    toastr[k] = function (msg, title) { logToHost("info", ["[toastr." + k + "]", title || "", msg || ""]); return {}; };
  });
  toastr.options = {};
  // ---- card scripts (issue 27): a script frame (init.script) is hidden, so what it shows goes to the window ----------
  // toastr becomes a notice there; replaceScriptButtons changes the buttons above the input; triggerSlash runs a safe
  // subset (/setvar and /getvar here, on the chat scope; /send, /trigger, /echo by the window; anything else is
  // refused by the window with a notice naming the command); eventOnButton listens to a button of this script.
  var isScript = !!(init.script && typeof init.script === "object");
  if (isScript) {
    ["success", "info", "warning", "error"].forEach(function (k) {
      toastr[k] = function (msg, title) {
        post({ __th: "toast", level: k, title: String(title == null ? "" : title).slice(0, 500),
               text: String(msg == null ? "" : msg).slice(0, 2000) });
        return {};
      };
    });
  }
  var scriptButtons = [];
  function replaceScriptButtons(a, b) {
    var list = Array.isArray(a) ? a : Array.isArray(b) ? b : [];
    scriptButtons = list.slice(0, 100).map(function (x) {
      return typeof x === "string" ? { name: x, visible: true } : { name: String(x && x.name || ""), visible: !(x && x.visible === false) };
    }).filter(function (x) { return x.name; });
    post({ __th: "buttons", buttons: clone(scriptButtons) });
  }
  function slashArgs(text) {
    var named = {}, rest = [], re = /(\w+)=("(?:[^"\\]|\\.)*"|\S+)|("(?:[^"\\]|\\.)*"|\S+)/g, m;
    while ((m = re.exec(text))) {
      if (m[1]) named[m[1]] = m[2].charAt(0) === '"' ? m[2].slice(1, -1) : m[2];
      else rest.push(m[3].charAt(0) === '"' ? m[3].slice(1, -1) : m[3]);
    }
    return { named: named, rest: rest };
  }
  function triggerSlash(command) {
    var out = "";
    String(command == null ? "" : command).split(/\|(?![^{]*\})/).forEach(function (part) {
      var m = /^\s*\/(\w+)\s*([\s\S]*)$/.exec(part);
      if (!m) return;
      var cmd = m[1].toLowerCase(), body = m[2].replace(/\{\{pipe\}\}/g, out).trim();
      if (cmd === "setvar") {
        var a = slashArgs(body), key = a.named.key || a.rest.shift();
        var value = a.named.key ? a.rest.join(" ") : a.rest.join(" ");
        var vars = getVariables({ type: "chat" });
        setPath(vars, key, value);
        replaceVariables(vars, { type: "chat" });
        out = value;
      } else if (cmd === "getvar") {
        var g = slashArgs(body), v = getPath(getVariables({ type: "chat" }), g.named.key || g.rest[0] || "");
        out = v === undefined ? "" : typeof v === "object" ? JSON.stringify(v) : String(v);
      } else {
        post({ __th: "slash", command: cmd, args: body.slice(0, 20000) });
        if (cmd === "echo") out = body;
      }
    });
    return Promise.resolve(out);
  }
  function playMvuUpdate(d) {
    // MVU's order (card-runtime.md §2): update started, one mag_variable_updated(stat_data, path, old, new) per value
    // the scribe changed, update ended(variables, before). Listeners change `variables` in place, as under MVU; what
    // they changed is written back as the message's variables (the ledger keeps it, like a bar's write).
    var m = ensureMessage(d.message_id);
    var before = clone(d.before || {}), after = clone(d.after || {});
    m.data = clone(after);
    var vars = m.data;
    var changes = [];
    (function walk(a, b, path) {
      if (isObj(a) && isObj(b)) {
        var keys = {};
        Object.keys(a).forEach(function (k) { keys[k] = true; });
        Object.keys(b).forEach(function (k) { keys[k] = true; });
        Object.keys(keys).forEach(function (k) { walk(a[k], b[k], path ? path + "." + k : k); });
      } else if (JSON.stringify(a) !== JSON.stringify(b)) changes.push([path, a, b]);
    })(isObj(before.stat_data) ? before.stat_data : {}, isObj(vars.stat_data) ? vars.stat_data : {}, "");
    var waits = [];
    waits = waits.concat(emitLocal(Mvu.events.VARIABLE_UPDATE_STARTED, [vars]));
    if (!isObj(vars.stat_data)) vars.stat_data = {};
    changes.forEach(function (c) {
      waits = waits.concat(emitLocal(Mvu.events.SINGLE_VARIABLE_UPDATED, [vars.stat_data, c[0], clone(c[1]), clone(c[2])]));
    });
    waits = waits.concat(emitLocal(Mvu.events.VARIABLE_UPDATE_ENDED, [vars, before]));
    Promise.all(waits).then(function () {}, function () {}).then(function () {
      if (JSON.stringify(vars) !== JSON.stringify(after)) replaceVariables(vars, { type: "message", message_id: m.message_id });
    });
  }

  function errorCatched(fn) {
    return function () {
      try {
        var r = fn.apply(this, arguments);
        if (r && typeof r.catch === "function") {
          return r.catch(function (e) { toastr.error(String(e && e.stack || e)); throw e; });
        }
        return r;
      } catch (e) { toastr.error(String(e && e.stack || e)); throw e; }
    };
  }
  function waitGlobalInitialized(name) {
    if (name === "Mvu") return Promise.resolve(api.Mvu);
    if (W[name] !== undefined) return Promise.resolve(W[name]);
    return new Promise(function (resolve) {
      eventOnce("global_" + name + "_initialized", function () { resolve(W[name]); });
    });
  }
  function initializeGlobal(name, value) { W[name] = value; eventEmit("global_" + name + "_initialized"); }

  function context() {
    var ctx = {
      chat: cache.chat.map(function (m) {
        return { name: m.name, is_user: m.role === "user", is_system: m.role === "system", mes: m.message,
                 variables: [clone(m.data || {})], swipe_id: 0 };
      }),
      name1: cache.names.user || "User", name2: cache.names.char || "Character",
      characterId: init.characterId != null ? init.characterId : 0,
      chatMetadata: { variables: clone(cache.chat_vars) },
      getCurrentChatId: function () { return init.chatId || ""; },
      eventSource: { on: eventOn, once: eventOnce, emit: eventEmit, removeListener: eventRemoveListener },
      eventTypes: tavern_events
    };
    ctx.getContext = function () { return context(); };
    return ctx;
  }

  var api = {
    getVariables: getVariables, replaceVariables: replaceVariables, updateVariablesWith: updateVariablesWith,
    insertOrAssignVariables: insertOrAssignVariables, insertVariables: insertVariables, deleteVariable: deleteVariable,
    getAllVariables: getAllVariables, getChatMessages: getChatMessages, getCurrentMessageId: getCurrentMessageId,
    getLastMessageId: getLastMessageId, getIframeName: getIframeName, getMessageId: getMessageId,
    eventOn: eventOn, eventOnce: eventOnce, eventMakeFirst: eventMakeFirst, eventMakeLast: eventMakeLast,
    eventEmit: eventEmit, eventEmitAndWait: eventEmitAndWait, eventRemoveListener: eventRemoveListener,
    eventClearEvent: eventClearEvent, eventClearListener: eventClearListener, eventClearAll: eventClearAll,
    tavern_events: tavern_events, iframe_events: iframe_events, Mvu: Mvu, waitGlobalInitialized: waitGlobalInitialized,
    initializeGlobal: initializeGlobal, substitudeMacros: substitudeMacros, errorCatched: errorCatched, toastr: toastr,
    getTavernHelperVersion: function () { return "4.0.0"; },
    registerVariableSchema: function () {},
    // safe stubs (§4.3): they log what the card asked for
    triggerSlash: isScript ? triggerSlash : stub("triggerSlash", function () { return Promise.resolve(""); }),
    generate: stub("generate", function () { return Promise.reject(new Error("generate is not available")); }),
    generateRaw: stub("generateRaw", function () { return Promise.reject(new Error("generateRaw is not available")); }),
    setChatMessages: stub("setChatMessages", function (msgs) {
      (msgs || []).forEach(function (m) {
        var t = findMessage(m.message_id, true);
        if (t && m.data) { t.data = clone(m.data); post({ __th: "write", type: "message", message_id: t.message_id, variables: clone(m.data) }); }
        if (t && typeof m.message === "string") t.message = m.message;
      });
      return Promise.resolve();
    }),
    createChatMessages: stub("createChatMessages", function () { return Promise.resolve(); }),
    deleteChatMessages: stub("deleteChatMessages", function () { return Promise.resolve(); }),
    getLorebooks: stub("getLorebooks", function () { return []; }),
    getCharLorebooks: stub("getCharLorebooks", function () { return { primary: null, additional: [] }; }),
    getLorebookEntries: stub("getLorebookEntries", function () { return Promise.resolve([]); }),
    getWorldbook: stub("getWorldbook", function () { return Promise.resolve([]); }),
    getWorldbookNames: stub("getWorldbookNames", function () { return []; }),
    getCharWorldbookNames: stub("getCharWorldbookNames", function () { return { primary: null, additional: [] }; }),
    getPreset: stub("getPreset", function () { return {}; }),
    getCharData: stub("getCharData", null),
    getCharAvatarPath: stub("getCharAvatarPath", null),
    getTavernRegexes: stub("getTavernRegexes", function () { return []; }),
    formatAsTavernRegexedString: function (text) { return String(text); },
    playAudio: stub("playAudio"), pauseAudio: stub("pauseAudio"),
    getButtonEvent: function (name) { return "button_" + name; },
    eventOnButton: function (name, fn) { return eventOn("button_" + name, fn); },
    replaceScriptButtons: replaceScriptButtons, getScriptButtons: function () { return clone(scriptButtons); },
    getScriptId: function () { return isScript ? String(init.script.id || "") : ""; },
    reloadIframe: function () { logToHost("info", ["[th_shim] reloadIframe is not supported yet"]); },
    getExtensionType: stub("getExtensionType", null),
    isAdmin: function () { return false; },
    __liyuanReport: function (data) { post({ __th: "report", data: clone(data) }); }
  };
  // ---- reads of APIs that do not exist (issue 29 §10) --------------------------------------------------------------
  // A bar that reads, say, `Mvu.variables` (not an MVU API) gets undefined and quietly shows its defaults. The Mvu and
  // TavernHelper globals report each property read that they do not have, once per name, as an error line the
  // host page shows in the bar's notice ({__th:"log", level:"error", unknown:"Mvu.variables"}). Reads that library
  // code makes of any object while probing it (then, toJSON, length, __*, $*, @@*) are not reported; `in` is not.
  var PROBES = { then: true, toJSON: true, length: true, nodeType: true, prototype: true, asymmetricMatch: true };
  function diagnosed(obj, label) {
    if (typeof Proxy !== "function") return obj;
    var told = Object.create(null);
    return new Proxy(obj, {
      get: function (t, key, recv) {
        if (typeof key === "symbol" || key in t) return Reflect.get(t, key, recv);
        if (!told[key] && !PROBES[key] && !/^(__|\$|@@)/.test(key)) {
          told[key] = true;
          post({ __th: "log", level: "error", unknown: label + "." + key,
                 text: "[th_shim] " + label + "." + key + " does not exist (the bar got undefined)" });
        }
        return undefined;
      }
    });
  }
  api.Mvu = diagnosed(Mvu, "Mvu");
  Object.keys(api).forEach(function (k) { W[k] = api[k]; });
  W.TavernHelper = diagnosed(api, "TavernHelper");

  // ---- EjsTemplate (stand-in) ------------------------------------------------------------------------------------
  // The Prompt Template extension's `EjsTemplate` (ST-Prompt-Template; TavernHelper's @types declare it): templates
  // in EJS syntax — `<% code %>`, `<%= expr %>` and `<%- expr %>` (both output unescaped there), `<%# comment %>`,
  // `<%_`/`_%>` and `-%>` trim the whitespace / newline beside the tag; code may `await`. The context from
  // prepareContext(extra) has `variables` (all variable scopes merged, getAllVariables()), `getvar(path)`,
  // `setvar(path, value)` (chat scope here), `_`, `$`, `SillyTavern` and `extra`'s own keys. Needs the frame's CSP to
  // allow evaluation (it compiles the template with the AsyncFunction constructor); otherwise evalTemplate rejects.
  function ejsCompile(code) {
    var src = "var __out = [];\n", re = /<%([_=\-#]?)([\s\S]*?)([_\-]?)%>/g, last = 0, m, trimNext = null;
    function text(t) {
      if (trimNext === "_") t = t.replace(/^[ \t]*\n?/, "");
      else if (trimNext === "-") t = t.replace(/^\r?\n/, "");
      trimNext = null;
      return t;
    }
    var pending = [];
    while ((m = re.exec(code))) {
      var before = text(code.slice(last, m.index));
      if (m[1] === "_") before = before.replace(/[ \t]*$/, "");
      if (before) pending.push("__out.push(" + JSON.stringify(before) + ");\n");
      if (m[1] === "=" || m[1] === "-") pending.push("__out.push(__str(" + m[2] + "));\n");
      else if (m[1] !== "#") pending.push(m[2] + "\n");
      trimNext = m[3] || null;
      last = re.lastIndex;
    }
    var rest = text(code.slice(last));
    if (rest) pending.push("__out.push(" + JSON.stringify(rest) + ");\n");
    return src + pending.join("") + "return __out.join(\"\");";
  }
  var AsyncFunction = Object.getPrototypeOf(async function () {}).constructor;
  var EjsTemplate = {
    prepareContext: function (extra) {
      var env = {
        variables: getAllVariables(),
        getvar: function (path, opts) { var v = getPath(getAllVariables(), path); return v === undefined && opts ? opts.defaults : v; },
        setvar: function (path, value) { var vars = getVariables({ type: "chat" }); setPath(vars, path, value); replaceVariables(vars, { type: "chat" }); return value; },
        SillyTavern: context(),
        _: W._, $: W.$
      };
      return Promise.resolve(Object.assign(env, extra || {}));
    },
    evalTemplate: function (code, env) {
      return Promise.resolve(env || EjsTemplate.prepareContext()).then(function (ctx) {
        var names = Object.keys(ctx).filter(function (k) { return /^[A-Za-z_$][\w$]*$/.test(k); });
        var fn = new AsyncFunction("__str", names.join(",") || "__none", ejsCompile(String(code)));
        return fn.apply(null, [function (v) { return v == null ? "" : typeof v === "object" ? JSON.stringify(v) : String(v); }]
          .concat(names.map(function (k) { return ctx[k]; })));
      });
    },
    getSyntaxErrorInfo: function (code) {
      try { new AsyncFunction("__str", ejsCompile(String(code))); return Promise.resolve(""); }
      catch (e) { return Promise.resolve(String(e && e.message || e)); }
    },
    allVariables: function () { return getAllVariables(); },
    setFeatures: function () {}, getFeatures: function () { return {}; }, resetFeatures: function () {},
    refreshWorldInfo: function () { return Promise.resolve(); }
  };
  W.EjsTemplate = EjsTemplate;

  // ---- lazy libraries ----------------------------------------------------------------------------------------------
  // TavernHelper gives every frame its libraries as globals (card-runtime.md §4.1: predefine.js copies `_`, `YAML`,
  // `showdown`, `toastr`, `z`… from the chat page; jQuery and Vue come as scripts), so bars use them without any
  // visible call (`const B=z`, `window["Vue"]`, `parent._`). The host inlines the libraries a card visibly uses and
  // puts the others (init.lazyLibs) into the frame as inert text; each of their globals is a getter here that runs
  // the library (a new inline <script>, synchronous) the first time anything reads it, then becomes the plain value
  // the library assigned. Writing the global first (a card's own `$ = …`) just replaces it.
  var LAZY_GLOBALS = { z: ["zod"], Zod: ["zod"], YAML: ["yaml"], _: ["lodash"], $: ["jquery"], jQuery: ["jquery"],
                       Vue: ["vue"], VueRouter: ["vue", "vuerouter"], showdown: ["showdown"] };
  var lazyText = {};
  (Array.isArray(init.lazyLibs) ? init.lazyLibs : []).forEach(function (k) {
    var el = document.querySelector('script[data-liyuan-lib="' + k + '"]');
    if (el) lazyText[k] = el;
  });
  function runLazy(key) {
    var el = lazyText[key];
    if (!el) return;
    delete lazyText[key];
    var s = document.createElement("script");
    s.textContent = el.textContent;
    el.textContent = "";
    (document.head || document.documentElement).appendChild(s);  // runs now, in the global scope
    s.textContent = "";
  }
  function plain(name, value) {
    Object.defineProperty(W, name, { configurable: true, enumerable: true, writable: true, value: value });
  }
  Object.keys(LAZY_GLOBALS).forEach(function (name) {
    var keys = LAZY_GLOBALS[name];
    if (!lazyText[keys[keys.length - 1]] || Object.prototype.hasOwnProperty.call(W, name)) return;
    Object.defineProperty(W, name, {
      configurable: true, enumerable: false,
      get: function () {
        plain(name, undefined);
        keys.forEach(runLazy);
        return W[name];
      },
      set: function (v) { plain(name, v); }
    });
  });
  Object.defineProperty(W, "SillyTavern", { configurable: true, get: context });

  // ---- host messages ---------------------------------------------------------------------------------------------
  W.addEventListener("message", function (ev) {
    if (ev.source !== host) return;
    var d = ev.data;
    if (!d || typeof d !== "object" || !d.__th) return;
    if (d.__th === "ping") {
      post({ __th: "pong", seq: d.seq });
    } else if (d.__th === "storage-sync") {
      var area = storages[d.area === "session" ? "session" : "local"];
      area.__apply(String(d.op), d.key, d.value);
    } else if (d.__th === "sync") {
      var m = ensureMessage(d.message_id);
      var old = clone(m.data || {});
      m.data = clone(d.variables || {});
      var fresh = clone(m.data);
      emitLocal(Mvu.events.VARIABLE_UPDATE_STARTED, [fresh]);
      emitLocal(Mvu.events.VARIABLE_UPDATE_ENDED, [fresh, old]);
      emitLocal(tavern_events.MESSAGE_UPDATED, [m.message_id]);
    } else if (d.__th === "cache") {
      var t = ensureMessage(d.message_id);
      t.data = clone(d.variables || {});
    } else if (d.__th === "viewport") {
      document.documentElement.style.setProperty("--TH-viewport-height", d.h + "px");
    } else if (d.__th === "event") {
      emitLocal(String(d.type), d.args || []);
    } else if (d.__th === "button" && isScript) {
      emitLocal("button_" + String(d.name), []);
    } else if (d.__th === "mvu-update" && isScript) {
      playMvuUpdate(d);
    } else if (d.__th === "probe") {
      var el = null;
      try { el = document.querySelector(d.selector); } catch (e) { el = null; }
      post({ __th: "probe-result", id: d.id, text: el ? el.textContent : null });
    }
  });

  // ---- what the frame's policy refused (reported, so the host can list it) ----------------------------------
  document.addEventListener("securitypolicyviolation", function (ev) {
    post({ __th: "blocked", url: String(ev.blockedURI || ""), directive: String(ev.effectiveDirective || ev.violatedDirective || "") });
  });

  // ---- errors and height -----------------------------------------------------------------------------------------
  W.addEventListener("error", function (ev) {
    logToHost("error", ["[card] " + (ev.message || "error") + (ev.lineno ? " (line " + ev.lineno + ")" : "")]);
  });
  // a card's own console.error() calls reach the host too (listed in the frame's notice, card preview's errors)
  try {
    var consoleError = W.console && W.console.error;
    if (typeof consoleError === "function") {
      W.console.error = function () {
        logToHost("console-error", arguments);
        return consoleError.apply(this, arguments);
      };
    }
  } catch (e) { /* a read-only console */ }
  W.addEventListener("unhandledrejection", function (ev) {
    logToHost("error", ["[card] unhandled rejection: " + (ev.reason && ev.reason.stack || ev.reason)]);
  });
  document.documentElement.style.setProperty("--TH-viewport-height", (init.viewportHeight || 600) + "px");
  var lastH = -1, scheduled = false;
  function reportHeight() {
    scheduled = false;
    if (!document.body) return;
    var h = Math.ceil(document.body.scrollHeight);
    if (h !== lastH) { lastH = h; post({ __th: "height", h: h }); }
  }
  function scheduleHeight() {
    if (scheduled) return;
    scheduled = true;
    (W.requestAnimationFrame || setTimeout)(reportHeight);
    setTimeout(reportHeight, 50);  // rAF may not run in a hidden page
  }
  function watch() {
    scheduleHeight();
    if (W.ResizeObserver && document.body) new W.ResizeObserver(scheduleHeight).observe(document.body);
  }
  document.addEventListener("DOMContentLoaded", function () {
    watch();
    emitLocal(iframe_events.MESSAGE_IFRAME_RENDER_STARTED, [cache.name]);
  });
  W.addEventListener("load", function () {
    scheduleHeight();
    emitLocal(iframe_events.MESSAGE_IFRAME_RENDER_ENDED, [cache.name]);
  });
})();
