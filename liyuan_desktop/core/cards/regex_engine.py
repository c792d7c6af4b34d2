"""The JavaScript side of regex scripts: one QuickJS-ng context per thread (a context is not thread-safe) with the
replace function loaded, a memory limit, compiled regexes cached per engine, and a time limit per run. A run returns
the pieces of the text and the replacements (macros are applied afterwards by :mod:`.regex_scripts`).
"""

from __future__ import annotations

import json
import logging
from typing import Optional

from ..jsruntime import PerThread, new_context
from ..jsruntime import time_limit as js_time_limit
from ..text import fix_surrogates

log = logging.getLogger(__name__)

#: Bytes of memory a thread's JavaScript engine may use (pathological replacements fail instead of swapping).
MEMORY_LIMIT = 256 * 1024 * 1024
#: Compiled regexes kept per engine.
REGEX_CACHE_SIZE = 1000

# run(pattern, flags, text, template, trims) → "" (no match) | JSON {"e": message} (bad regex) |
# JSON [pieces, replacements]: text = pieces[0] + rep[0] + pieces[1] + … + pieces[n]; replacements still need macros.
_JS = r"""
var __liyuanRegexRun = (function () {
  var cache = new Map();
  var LIMIT = %d;
  function compile(pattern, flags) {
    var key = flags + '/' + pattern;
    if (cache.has(key)) {
      var hit = cache.get(key);
      cache.delete(key);
      cache.set(key, hit);
      return hit;
    }
    var re = new RegExp(pattern, flags);
    if (cache.size >= LIMIT) cache.delete(cache.keys().next().value);
    cache.set(key, re);
    return re;
  }
  function groupText(value, trims) {
    if (!value) return '';
    var out = String(value);
    for (var t = 0; t < trims.length; t++) {
      if (trims[t]) out = out.split(trims[t]).join('');
    }
    return out;
  }
  // The replacement template split once into literal text and references: [text, kind, key, text, kind, key, …]
  // with kind 1 = numbered group, 2 = named group, 3 = whole match ($&).
  function parseTemplate(template) {
    var parts = [];
    var ref = /\$(\d+)|\$<([^>]+)>|\$&/g;
    var last = 0;
    var m;
    while ((m = ref.exec(template)) !== null) {
      parts.push(template.slice(last, m.index));
      if (m[1] !== undefined) parts.push(1, Number(m[1]));
      else if (m[2] !== undefined) parts.push(2, m[2]);
      else parts.push(3, 0);
      last = ref.lastIndex;
    }
    parts.push(template.slice(last));
    return parts;
  }
  return function (pattern, flags, text, template, trimsJson) {
    var re;
    try {
      re = compile(pattern, flags);
    } catch (err) {
      return JSON.stringify({ e: String(err) });
    }
    var trims = JSON.parse(trimsJson);
    var parts = parseTemplate(template);
    re.lastIndex = 0;
    var pieces = [];
    var reps = [];
    var last = 0;
    text.replace(re, function () {
      var n = arguments.length;
      var named = (typeof arguments[n - 1] === 'object') ? arguments[n - 1] : undefined;
      var ngroups = named === undefined ? n - 2 : n - 3;
      var offset = arguments[ngroups];
      pieces.push(text.slice(last, offset));
      last = offset + arguments[0].length;
      var out = parts[0];
      for (var i = 1; i < parts.length; i += 3) {
        var kind = parts[i];
        var key = parts[i + 1];
        var value;
        if (kind === 1) value = key < ngroups ? arguments[key] : undefined;
        else if (kind === 2) value = named ? named[key] : undefined;
        else value = arguments[0];
        out += groupText(value, trims) + parts[i + 2];
      }
      reps.push(out);
      return '';
    });
    if (!reps.length) return '';
    pieces.push(text.slice(last));
    return JSON.stringify([pieces, reps]);
  };
})();
""" % REGEX_CACHE_SIZE


class ScriptTimeout(Exception):
    """A regex script ran past its time limit (the QuickJS interrupt fired); the thread's engine must be dropped."""


class ScriptFailed(Exception):
    """A regex script's pattern or replacement failed in JavaScript (bad pattern, out of memory); the message is
    the engine's first line."""


class _Engine:
    """One QuickJS context (per thread) with the replace function loaded."""

    def __init__(self) -> None:
        self._quickjs, self.ctx = new_context(MEMORY_LIMIT)
        self.ctx.eval(_JS)
        self.fn = self.ctx.get("__liyuanRegexRun")

    def run(self, pattern: str, flags: str, text: str, template: str, trims: list[str],
            time_limit: float) -> Optional[tuple[list[str], list[str]]]:
        """Pieces and replacements, or None when nothing matched. Raises ScriptTimeout / ScriptFailed."""
        try:
            with js_time_limit(self.ctx, time_limit):
                out = self.fn(pattern, flags, text, template, json.dumps(trims))
        except self._quickjs.JSException as exc:
            if "interrupted" in str(exc):
                raise ScriptTimeout(str(exc)) from None
            raise ScriptFailed(str(exc).splitlines()[0] if str(exc) else "out of memory") from None
        if not out:
            return None
        data = json.loads(out)
        if isinstance(data, dict):
            raise ScriptFailed(f"invalid regex: {data.get('e')}")
        return data[0], data[1]


_engines: PerThread[_Engine] = PerThread(_Engine)
_engine_error: Optional[str] = None


def thread_engine() -> Optional[_Engine]:
    """This thread's QuickJS engine with the replace function loaded, made on first use; None when QuickJS cannot be
    loaded in this process (then :func:`engine_error` says why, logged once, and regex scripts are skipped)."""
    global _engine_error
    eng = _engines.get()
    if eng is None and _engine_error is None and _engines.failure is not None:
        # missing/broken package: scripts are skipped, the app keeps working
        _engine_error = f"JavaScript regex engine unavailable ({_engines.failure}); regex scripts are not applied"
        log.error(_engine_error)
    return eng


def drop_thread_engine() -> None:
    """Forget this thread's engine (after an interrupt or out-of-memory); the next run makes a fresh one."""
    _engines.drop()


def engine_error() -> Optional[str]:
    """Why the JavaScript engine could not be made in this process (None while it could, or before the first try)."""
    return _engine_error


def pair_surrogates(text: str) -> str:
    """Re-pair UTF-16 halves split by a non-unicode regex; a half left alone becomes U+FFFD
    (:func:`liyuan_desktop.core.text.fix_surrogates` without the count)."""
    return fix_surrogates(text)[0]
