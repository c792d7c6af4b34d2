"""English catalog texts read as English (issue 32): no doubled article, in a text itself or made when a parameter
that brings its own article (``filekind.*``: "an ICO icon", "a PDF file") fills a slot after "a" — the ICO icon
read "This is a an ICO icon image"."""

from __future__ import annotations

import re
import string

import pytest

from liyuan_desktop.cli import help_catalog, out_catalog  # noqa: F401  registers the CLI's texts
from liyuan_desktop.core.cards import CardError, load_card
from liyuan_desktop.core.cards.png import replace_card_chunks
from liyuan_desktop.core.messages import CATALOG, render
from liyuan_desktop.ui.infra import i18n

DOUBLED = re.compile(r"\b(a|an|the)\s+(a|an|the)\b", re.I)
ICO = b"\x00\x00\x01\x00\x01\x00\x10\x10" + b"\x00" * 64


def _english() -> list[tuple[str, str]]:
    out = [(k, v["en"]) for k, v in CATALOG.items() if isinstance(v, dict) and isinstance(v.get("en"), str)]
    out += [(k, v["en"]) for k, v in i18n.STRINGS.items() if isinstance(v, dict) and isinstance(v.get("en"), str)]
    return out


def test_no_english_text_has_a_doubled_article():
    bad = [(k, t) for k, t in _english() if DOUBLED.search(t)]
    assert not bad, bad


def test_no_article_stands_before_a_file_kind():
    """A ``{kind}`` slot may get a ``filekind.*`` text, which has its article: no "a"/"an" right before it."""
    kinds = [k for k, t in _english() if "{kind}" in t and re.search(r"\b(a|an)\s+\{kind\}", t)]
    assert not kinds, kinds


@pytest.mark.parametrize("head", [ICO, b"\x00\x00\x00\x1cftypavif" + b"\x00" * 32], ids=["ico", "avif"])
def test_an_icon_or_avif_file_is_named_in_good_english(tmp_path, head):
    f = tmp_path / "thing.png"
    f.write_bytes(head)
    with pytest.raises(CardError) as e:
        load_card(f)
    said = render(e.value, "en")
    assert "This is an image (" in said and not DOUBLED.search(said), said
    assert "不是 PNG 角色卡" in render(e.value, "zh")


def test_exporting_onto_an_icon_says_so_in_good_english():
    with pytest.raises(CardError) as e:
        replace_card_chunks(ICO, [])
    said = render(e.value, "en")
    assert "This image is not a PNG (an ICO icon)" in said, said
    assert "ICO 图标" in render(e.value, "zh")


def test_the_texts_are_format_strings():
    for _k, t in _english():
        list(string.Formatter().parse(t))
