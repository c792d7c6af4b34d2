"""Issue 32: the chat's command refusals (regenerate with nothing to regenerate, seal with no draft, …) and the replay
file's errors carry their catalog key, so an English reader sees English; the Chinese text is unchanged."""

from __future__ import annotations

import asyncio
import json
import re

import pytest
from helpers import DEMO_CARD

from liyuan_desktop.core.cards import load_card
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.core.messages import Msg, render

CJK = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")


def _english(exc: BaseException) -> str:
    assert isinstance(exc.args[0], Msg), exc
    text = render(exc, "en")
    assert not CJK.search(text), text
    return text


def test_refusals_on_a_fresh_chat_are_keyed(tmp_path):
    chat = Chat.create(tmp_path / "c", load_card(DEMO_CARD), ReplayModel([]))
    with pytest.raises(ValueError) as got:
        asyncio.run(chat.regenerate())
    assert _english(got.value) == "There is no beat to regenerate yet"
    assert str(got.value) == "还没有可以重来的一拍"  # the Chinese text as before
    with pytest.raises(ValueError) as got:
        asyncio.run(chat.seal_as_is())
    assert _english(got.value) == "There is no unsealed draft"


@pytest.mark.parametrize("content, start", [
    (b"\xff\xfe not utf-8", "Cannot read the replay file "),
    (b"{oops", "The replay file "),
    (json.dumps({"replies": []}).encode(), "The replay file "),
    (json.dumps({"format": "liyuan-replay", "replies": 7}).encode(), "The replay file "),
])
def test_replay_file_errors_in_english(tmp_path, content, start):
    f = tmp_path / "r.json"
    f.write_bytes(content)
    with pytest.raises(ValueError) as got:
        ReplayModel.from_file(f)
    assert _english(got.value).startswith(start)


def test_more_plain_errors_are_keyed():
    from liyuan_desktop.core.chat.prose_import import ProseImportError, decode_text
    from liyuan_desktop.core.llm.providers import preset
    from liyuan_desktop.core.llm.sampling import Sampling

    with pytest.raises(ValueError) as got:
        Sampling.from_pairs(["nonsense"])
    assert _english(got.value).startswith("Write sampling settings as KEY=VALUE")
    with pytest.raises(ValueError) as got:
        Sampling.from_pairs(["temperature=hot"])
    assert _english(got.value).startswith("Bad sampling settings: ")
    with pytest.raises(KeyError) as got:
        preset("no-such-provider")
    assert _english(got.value).startswith("There is no built-in provider 'no-such-provider'")
    with pytest.raises(ProseImportError) as got:
        decode_text(b"\x00\xff\x00\xfe" * 50, "a.txt")
    assert _english(got.value).startswith("“a.txt” is not readable text")
    assert str(got.value).startswith("「a.txt」不是可读的文本")  # the Chinese text as before
