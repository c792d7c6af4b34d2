"""Breaking the English window's scribe lines (z99break): what the scribe's output lacked is said in the chosen
language — the warnings are catalog messages (their Chinese text unchanged in the session file)."""

from __future__ import annotations

import json

from liyuan_desktop.core.ledger.scribe import parse_scribe_output
from liyuan_desktop.core.messages import render


def test_scribe_output_problems_render_in_english_and_keep_their_chinese_text():
    cases = {'{"mood": 1}': "no patch", "[1, 2]": "no JSON object", '{"time": "night"}': "no patch wrapper",
             "{'patch': {}}": "repaired"}
    for raw, words in cases.items():
        _, problems = parse_scribe_output(raw)
        assert problems, raw
        english = render(problems[0], "en")
        assert words in english and not any("\u4e00" <= c <= "\u9fff" for c in english), english
        assert "场记" in json.loads(json.dumps(problems))[0]  # stored as before: the Chinese text
