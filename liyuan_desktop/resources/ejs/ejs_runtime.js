// Liyuan's EJS prompt-template runtime (ST-Prompt-Template's template API over Liyuan's variables and books).
// Loaded once per thread into a QuickJS context after lodash; no network, no files, no host callables (the
// time limit forbids them): the books' entries and the preset's prompts are handed over as data (setBook).
// The compiler turns a template into the body of an async function; compiled functions are cached by source.
var __ejs = (function () {
  'use strict';
  var AsyncFunction = Object.getPrototypeOf(async function () {}).constructor;
  var cache = new Map();
  var CACHE_LIMIT = 500;
  var MAX_DEPTH = 8;
  var book = { wi: [], presets: [], card: {} };  // the chat's entries, preset prompts and card (setBook)
  var env = null;      // the data of the current beat (setEnv)
  var scope = null;    // the names a template sees (API + data + define()d names)
  var activated = [];  // activewi requests of this environment
  var state = null;    // the result of the last start(): {o: text} | {e: message}

  function compiled(body) {
    var fn = cache.get(body);
    if (fn) return fn;
    fn = new AsyncFunction('__scope', '__data', '__esc', body);
    if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value);
    cache.set(body, fn);
    return fn;
  }

  function escapeXml(v) {
    if (v === undefined || v === null) return '';
    return String(v).replace(/[&<>"']/g, function (c) {
      return c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : c === '"' ? '&#34;' : '&#39;';
    });
  }

  // ---- the compiler (ejs syntax, see ejs.py's module doc) ----
  var TAG = /(<%%|%%>|<%[_=#-]?|[_-]?%>)/;
  var OPENERS = { '<%': 1, '<%_': 1, '<%=': 1, '<%-': 1, '<%#': 1 };
  var CLOSERS = { '%>': 1, '-%>': 1, '_%>': 1 };
  function stripSemi(code) { return code.replace(/;\s*$/, ''); }
  function source(text) {
    var toks = text.split(TAG);
    var out = ["var __out = '';\nfunction __append(s) { if (s !== undefined && s !== null) __out += s; }\n" +
      'function print() { for (var i = 0; i < arguments.length; i++) __append(arguments[i]); }\n' +
      'with (__scope) { with (__data) {\n'];
    var mode = null, code = '', lit = '', after = '', openedAt = 0, pos = 0;
    function flush() { if (lit) out.push('__append(' + JSON.stringify(lit) + ');\n'); lit = ''; }
    for (var i = 0; i < toks.length; i++) {
      var tok = toks[i];
      // split() puts the separators at odd indices
      var isTag = i % 2 === 1;
      if (mode === null) {
        if (!isTag) {
          if (after === '_') tok = tok.replace(/^[ \t]+/, '');
          if (after) tok = tok.replace(/^(?:\r\n|\n|\r)/, '');
          after = '';
          lit += tok;
        } else if (tok === '<%%') lit += '<%';
        else if (tok === '%%>') lit += '%>';
        else if (OPENERS[tok]) {
          if (tok === '<%_') lit = lit.replace(/[ \t]+$/, '');
          flush();
          mode = tok; code = ''; openedAt = pos;
        } else lit += tok;
      } else if (isTag && CLOSERS[tok]) {
        if (mode === '<%' || mode === '<%_') out.push(code + '\n');
        else if (mode === '<%=') out.push('__append(__esc(' + stripSemi(code) + '\n));\n');
        else if (mode === '<%-') out.push('__append(' + stripSemi(code) + '\n);\n');
        after = tok === '%>' ? '' : tok.charAt(0);
        mode = null;
      } else code += tok === '<%%' ? '<%' : tok;
      pos += tok.length;
    }
    if (mode !== null) {
      var line = text.slice(0, openedAt).split('\n').length;
      throw new SyntaxError('第 ' + line + ' 行的 ' + mode + ' 没有闭合（缺少 %>）');
    }
    flush();
    out.push('}}\nreturn __out;\n');
    return out.join('');
  }

  async function evalTemplate(text, data, depth) {
    if (text === undefined || text === null) return '';
    text = String(text);
    if (text.indexOf('<%') < 0) return text;
    if ((depth || 0) > MAX_DEPTH) throw new Error('templates nested more than ' + MAX_DEPTH + ' deep');
    var fn = compiled(source(text));
    return await fn(scope, data || {}, escapeXml);
  }

  function tableOf(name) {
    if (name === 'global') return env.global;
    if (name === 'local' || name === 'chat') return env.chat;
    if (name === 'message') return env.message;
    return env.variables;
  }

  function read(key, scopeName) {
    var table = tableOf(scopeName || 'cache');
    if (key === undefined || key === null || key === '') return table;
    return _.get(table, key);
  }

  function getvar(key, options) {
    options = options || {};
    var v = read(key, options.scope);
    if (v !== undefined && options.index !== undefined && options.index !== null && v !== null) v = v[options.index];
    return v === undefined ? options.defaults : v;
  }

  function write(key, value, options, scopeName) {
    options = options || {};
    var flags = options.flags || 'n';
    var target = tableOf(scopeName);
    var old = _.get(env.variables, key);
    var oldScoped = _.get(target, key);
    if (flags === 'nx' && old !== undefined) return undefined;
    if (flags === 'xx' && old === undefined) return undefined;
    if (flags === 'nxs' && oldScoped !== undefined) return undefined;
    if (flags === 'xxs' && oldScoped === undefined) return undefined;
    var put = function (table) {
      if (options.index !== undefined && options.index !== null) {
        var holder = _.get(table, key);
        if (holder === undefined || holder === null || typeof holder !== 'object') { holder = {}; _.set(table, key, holder); }
        holder[options.index] = value;
      } else if (options.merge) {
        _.set(table, key, _.merge(_.get(table, key), value));
      } else {
        _.set(table, key, value);
      }
    };
    put(target);
    if (target !== env.variables) put(env.variables);
    var results = options.results || 'new';
    return results === 'old' ? old : results === 'fullcache' ? env.variables : value;
  }

  function setvar(key, value, options) {
    options = options || {};
    return write(key, value, options, options.scope || 'message');
  }

  function step(sign) {
    return function (key, value, options) {
      options = options || {};
      if (value === undefined) value = 1;
      var cur = getvar(key, { scope: options.inscope, index: options.index, defaults: options.defaults === undefined ? 0 : options.defaults });
      var next = Number(cur) + sign * Number(value);
      if (options.min !== undefined && options.min !== null) next = Math.max(options.min, next);
      if (options.max !== undefined && options.max !== null) next = Math.min(options.max, next);
      return write(key, next, options, options.outscope || 'message');
    };
  }

  function findEntry(bookName, title) {
    var list = book.wi;
    for (var i = 0; i < list.length; i++) {
      var e = list[i];
      if (bookName && e.world && bookName !== e.world) continue;
      if (typeof title === 'number' ? e.uid === title
          : title instanceof RegExp ? title.test(e.comment)
          : e.comment === String(title) || String(e.uid) === String(title)) return i;
    }
    return -1;
  }

  // getwi(worldinfo, title, data) | getwi(title, data): a second argument that is a string, number or RegExp is a title
  async function getwi(a, b, c) {
    var args = (typeof b === 'string' || typeof b === 'number' || b instanceof RegExp) ? [a, b, c] : ['', a, b];
    var i = findEntry(args[0], args[1]);
    if (i < 0) return '';
    env.depth = (env.depth || 0) + 1;
    try {
      return await evalTemplate(book.wi[i].content, args[2], env.depth);
    } finally {
      env.depth -= 1;
    }
  }

  function activewi(a, b) {
    var title = b === undefined ? a : b;
    var i = findEntry(b === undefined ? '' : a, title);
    if (i < 0) return null;
    if (activated.indexOf(i) < 0) activated.push(i);
    return _.clone(book.wi[i]);
  }

  async function getchar(name, template, data) {
    var c = book.card;
    var vars = _.assign({}, c, data || {});
    if (template) return await evalTemplate(template, vars, 1);
    if (!c.name) return '';
    var out = '<' + c.name + '>\n';
    if (c.system_prompt) out += 'System: ' + c.system_prompt + '\n';
    out += 'name: ' + c.name + '\n';
    if (c.personality) out += 'personality: ' + c.personality + '\n';
    if (c.description) out += 'description: ' + c.description + '\n';
    if (c.message_example) out += 'example:\n' + c.message_example + '\n';
    if (c.depth_prompt) out += 'System: ' + c.depth_prompt + '\n';
    return out + '</' + c.name + '>';
  }

  async function getpreset(name, data) {
    var found = _.find(book.presets, function (p) { return name instanceof RegExp ? name.test(p.name) : p.name === String(name); });
    return found ? await evalTemplate(found.content, data, 1) : '';
  }

  function makeScope() {
    var s = {
      _: _, variables: env.variables, stat_data: env.stat_data, runType: 'generate',
      char: env.char, user: env.user, charName: env.char, userName: env.user,
      lastMessage: env.lastMessage, lastUserMessage: env.lastUserMessage, lastCharMessage: env.lastCharMessage,
      lastMessageId: env.lastMessageId, lastUserMessageId: env.lastUserMessageId,
      lastCharMessageId: env.lastCharMessageId, chat_index: env.chatIndex,
      getvar: getvar, setvar: setvar,
      getLocalVar: function (k, o) { return getvar(k, _.assign({}, o, { scope: 'local' })); },
      getGlobalVar: function (k, o) { return getvar(k, _.assign({}, o, { scope: 'global' })); },
      getMessageVar: function (k, o) { return getvar(k, _.assign({}, o, { scope: 'message' })); },
      setLocalVar: function (k, v, o) { return setvar(k, v, _.assign({}, o, { scope: 'local' })); },
      setGlobalVar: function (k, v, o) { return setvar(k, v, _.assign({}, o, { scope: 'global' })); },
      setMessageVar: function (k, v, o) { return setvar(k, v, _.assign({}, o, { scope: 'message' })); },
      incvar: step(1), decvar: step(-1),
      getwi: getwi, getWorldInfo: getwi,
      activewi: activewi, activateWorldInfo: activewi,
      getchar: getchar, getchr: getchar, getChara: getchar,
      getpreset: getpreset, getprp: getpreset, getPresetPrompt: getpreset,
      evalTemplate: function (text, data) { return evalTemplate(text, data, 1); },
      define: function (name, value, merge) {
        s[name] = merge && s[name] && typeof s[name] === 'object' ? _.merge(s[name], value) : value;
      }
    };
    return s;
  }

  return {
    setBook: function (json) { book = JSON.parse(json); },
    setEnv: function (json) {
      env = JSON.parse(json);
      env.depth = 0;
      activated = [];
      scope = makeScope();
    },
    start: function (text) {
      state = null;
      evalTemplate(text, {}, 0).then(function (out) { state = { o: out }; },
        function (err) {
          var msg = err && err.name && err.message !== undefined ? err.name + ': ' + err.message : String(err);
          state = { e: msg };
        });
    },
    take: function () {
      var s = state;
      state = null;
      return s === null ? '' : JSON.stringify(s);
    },
    activated: function () { return JSON.stringify(activated); },
    check: function (text) {
      try { new AsyncFunction('__scope', '__data', '__esc', source(text)); return ''; } catch (err) { return String(err); }
    }
  };
})();
