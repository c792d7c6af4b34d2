"""The draft (稿纸): write/append, versions, UTF-16 reads and searches, batch edits with limited matching, seal.

Offsets the model sees are UTF-16 code units (JavaScript string offsets), end exclusive.
"""

from __future__ import annotations

import pytest

from liyuan_desktop.core.beat.draft import Draft, apply_edits, read_text, search_text
from liyuan_desktop.core.errors import ToolError
from liyuan_desktop.core.text import canon_punct, utf16_len


def _refused(fn, *args, code: str, **kw) -> ToolError:
    with pytest.raises(ToolError) as ei:
        fn(*args, **kw)
    assert ei.value.code == code, (ei.value.code, ei.value.message)
    res = ei.value.to_result()
    assert res["ok"] is False and res["error"] == code and isinstance(res["message"], str) and res["message"]
    return ei.value


def _draft(text: str) -> Draft:
    d = Draft()
    d.write(0, text)
    return d


# -- write / append -----------------------------------------------------------------------------------------


def test_write_result_counts_utf16_units():
    d = Draft()
    assert d.version == 0 and d.text == "" and not d.sealed
    res = d.write(0, "a😀记")
    assert res == {"ok": True, "version": 1, "chars": 4}  # 1 + 2 (surrogate pair) + 1
    assert d.text == "a😀记"


def test_write_replaces_whole_text_byte_for_byte():
    d = _draft("旧稿")
    content = "  第一行\r\n\t第二行\u3000“引号”  \n\n"
    d.write(1, content)
    assert d.text == content
    assert d.version == 2


def test_append_default_separator_is_blank_line():
    d = _draft("第一段")
    res = d.append(1, "第二段")
    assert d.text == "第一段\n\n第二段"
    assert res == {"ok": True, "version": 2, "chars": utf16_len("第一段\n\n第二段")}


def test_append_empty_separator():
    d = _draft("他说")
    d.append(1, "：“好。”", separator="")
    assert d.text == "他说：“好。”"


def test_append_custom_separator_kept_exactly():
    d = _draft("甲")
    d.append(1, "乙", separator="\n——\n")
    assert d.text == "甲\n——\n乙"


def test_append_to_empty_draft_has_no_separator():
    d = Draft()
    res = d.append(0, "开头")
    assert d.text == "开头"
    assert res["version"] == 1


def test_append_after_writing_empty_text_has_no_separator():
    d = Draft()
    d.write(0, "")
    d.append(1, "开头")
    assert d.text == "开头"
    assert d.version == 2


def test_append_bad_args_refused_nothing_changes():
    d = _draft("甲")
    _refused(d.append, 1, 123, code="bad_args")
    _refused(d.append, 1, "乙", None, code="bad_args")
    assert d.text == "甲" and d.version == 1


def test_write_non_string_content_refused():
    d = Draft()
    _refused(d.write, 0, None, code="bad_args")
    assert d.text == "" and d.version == 0


# -- versions -----------------------------------------------------------------------------------------------


def test_version_plus_one_per_write_append_edit():
    d = Draft()
    assert d.write(0, "甲乙")["version"] == 1
    assert d.append(1, "丙")["version"] == 2
    assert d.edit(2, [{"old": "乙", "new": "丁"}])["version"] == 3
    assert d.write(3, "重写")["version"] == 4
    assert d.version == 4
    # reads and searches do not bump the version
    d.read()
    d.read(0, 1)
    d.search("重")
    assert d.version == 4


@pytest.mark.parametrize("stale", [0, 2, -1, 5, "1", 1.0, None, True])
def test_stale_version_refused_and_nothing_changes(stale):
    d = _draft("原文")
    assert d.version == 1
    for op in (
        lambda: d.write(stale, "新"),
        lambda: d.append(stale, "新"),
        lambda: d.edit(stale, [{"old": "原", "new": "新"}]),
        lambda: d.seal(stale),
    ):
        with pytest.raises(ToolError) as ei:
            op()
        assert ei.value.code == "stale_version"
        assert ei.value.to_result()["version"] == 1  # the model is told the current version
        assert d.text == "原文" and d.version == 1 and not d.sealed


def test_stale_version_message_names_both_versions():
    d = _draft("x")
    e = _refused(d.write, 0, "y", code="stale_version")
    assert "0" in e.message and "1" in e.message


# -- read (UTF-16) ------------------------------------------------------------------------------------------


def test_read_without_range():
    d = _draft("a😀b")
    assert d.read() == {"version": 1, "content": "a😀b"}


def test_read_range_in_utf16_units_after_emoji():
    text = "a😀bc记得"
    # UTF-16: a=0, 😀=1..2, b=3, c=4, 记=5, 得=6; total 7
    d = _draft(text)
    r = d.read(3, 5)
    assert r == {"version": 1, "content": "bc", "start": 3, "end": 5, "total": 7}
    assert d.read(1, 3)["content"] == "😀"
    assert d.read(0, 1)["content"] == "a"
    assert d.read(5)["content"] == "记得"
    assert d.read(end=3)["content"] == "a😀"
    assert d.read(start=0)["content"] == text


def test_read_two_emoji_in_a_row():
    d = _draft("😀😀x")
    assert d.read(2, 4)["content"] == "😀"
    assert d.read(4, 5)["content"] == "x"
    assert d.read(0, 5)["total"] == 5


def test_read_end_past_total_is_clamped():
    d = _draft("a😀b")
    r = d.read(1, 100)
    assert r["content"] == "😀b" and r["end"] == 4 and r["total"] == 4


def test_read_start_at_total_is_empty():
    d = _draft("a😀b")
    r = d.read(4)
    assert r["content"] == "" and r["start"] == 4 and r["end"] == 4


def test_read_offsets_splitting_a_surrogate_pair_never_yield_half_characters():
    text = "a😀bc"
    d = _draft(text)
    for s, e in [(2, 4), (1, 2), (2, 3), (0, 2), (2, 5)]:
        content = d.read(s, e)["content"]
        content.encode("utf-8")  # a lone surrogate would raise UnicodeEncodeError
        assert content in text
        assert "\ud83d" not in content and "\ude00" not in content


def test_read_split_pair_reports_offsets_of_the_returned_content():
    """When a cut inside a surrogate pair moves outward, the reported start/end must describe the text actually
    returned (the model uses them for the next read or to compute positions)."""
    d = _draft("a😀bc")
    r = d.read(2, 4)  # start falls on the low surrogate of 😀
    assert r["content"] == "😀b"
    assert utf16_len(r["content"]) == r["end"] - r["start"]
    assert (r["start"], r["end"]) == (1, 4)
    r = d.read(0, 2)  # end falls on the low surrogate of 😀
    assert r["content"] == "a😀"
    assert (r["start"], r["end"]) == (0, 3)


@pytest.mark.parametrize("start,end", [(-1, None), (None, -2), (3, 1), ("1", 2), (1.5, None), (True, 2), (10, None)])
def test_read_bad_range(start, end):
    d = _draft("a😀b")
    e = _refused(d.read, start, end, code="bad_range")
    assert e.extra.get("total") == 4


def test_read_text_shared_function():
    assert read_text("上一拍😀", 3, 3, 5) == {"version": 3, "content": "😀", "start": 3, "end": 5, "total": 5}


# -- search -------------------------------------------------------------------------------------------------


SEARCH_TEXT = "她说：“记得。”  然后\n他也答：“记得。”\n\t记得吗？"


def test_search_keeps_exact_whitespace_and_punctuation():
    d = _draft(SEARCH_TEXT)
    r = d.search("：“记得。”")
    assert r["version"] == 1
    assert r["total"] == 2
    assert [h["text"] for h in r["hits"]] == ["：“记得。”", "：“记得。”"]
    assert all("level" not in h for h in r["hits"])
    r = d.search("。”  然后\n他")
    assert r["total"] == 1
    assert r["hits"][0]["text"] == "。”  然后\n他"
    r = d.search("\n\t记得")
    assert r["hits"][0]["text"] == "\n\t记得"


def test_search_hit_offsets_and_text_usable_for_read_and_edit():
    d = _draft(SEARCH_TEXT)
    r = d.search("记得")
    assert r["total"] == 3
    for h in r["hits"]:
        assert d.read(h["start"], h["end"])["content"] == h["text"] == "记得"
    # context stays on the hit's line
    assert "\n" not in r["hits"][0]["context"]
    assert "记得" in r["hits"][0]["context"]


def test_search_offsets_are_utf16_after_an_emoji():
    text = "😀😀记得，😀记得"
    d = _draft(text)
    r = d.search("记得")
    assert r["total"] == 2
    assert [(h["start"], h["end"]) for h in r["hits"]] == [(4, 6), (9, 11)]
    for h in r["hits"]:
        assert d.read(h["start"], h["end"])["content"] == "记得"


def test_search_no_hit():
    d = _draft("甲乙丙")
    assert d.search("丁") == {"version": 1, "total": 0, "hits": []}


def test_search_total_counts_all_hits_but_limit_clamps_to_50():
    text = "哈，" * 60
    d = _draft(text)
    r = d.search("哈", limit=100)
    assert r["total"] == 60
    assert len(r["hits"]) == 50
    r = d.search("哈", limit=50)
    assert len(r["hits"]) == 50
    r = d.search("哈", limit=7)
    assert r["total"] == 60 and len(r["hits"]) == 7
    assert [h["start"] for h in r["hits"]] == [0, 2, 4, 6, 8, 10, 12]


@pytest.mark.parametrize("limit,expected", [(0, 1), (-3, 1), (1, 1), ("5", 20), (None, 20), (True, 20)])
def test_search_limit_clamped_low_and_non_int_default(limit, expected):
    d = _draft("哈" * 30)
    r = d.search("哈", limit=limit)
    assert r["total"] == 30
    assert len(r["hits"]) == expected


def test_search_default_limit_is_20():
    d = _draft("哈" * 30)
    assert len(d.search("哈")["hits"]) == 20


def test_search_punct_variant_hit_returns_original_text():
    d = _draft("好，“记得。”她笑了。")
    r = d.search('"记得."')
    assert r["total"] == 1
    h = r["hits"][0]
    assert h["level"] == "punct"
    assert h["text"] == "“记得。”"  # the exact original, usable as draft_edit old
    assert (h["start"], h["end"]) == (2, 7)
    # the hit text works as an exact reference
    res = d.edit(1, [{"old": h["text"], "new": "“忘了。”"}])
    assert "matches" not in res
    assert d.text == "好，“忘了。”她笑了。"


@pytest.mark.parametrize("q", ["", None, 3])
def test_search_bad_query(q):
    d = _draft("甲")
    _refused(d.search, q, code="bad_args")


def test_search_text_shared_function_uses_given_version():
    assert search_text("甲乙", 7, "乙")["version"] == 7


# -- edit batches -------------------------------------------------------------------------------------------


def test_edit_batch_located_against_one_version():
    d = _draft("甲乙丙丁")
    # the first edit's new text contains the second edit's old: the second is still located in the original
    res = d.edit(1, [{"old": "甲", "new": "丁丁"}, {"old": "丁", "new": "戊"}])
    assert d.text == "丁丁乙丙戊"
    assert res == {"ok": True, "version": 2, "chars": 5}


def test_edit_batch_order_independent_of_position():
    d = _draft("一二三四五")
    d.edit(1, [{"old": "四", "new": "肆"}, {"old": "二", "new": "贰"}])
    assert d.text == "一贰三肆五"


def test_edit_adjacent_spans_are_not_overlap():
    d = _draft("甲乙丙")
    d.edit(1, [{"old": "甲", "new": "A"}, {"old": "乙", "new": "B"}])
    assert d.text == "AB丙"


def test_edit_with_emoji_around():
    d = _draft("😀记得😀")
    d.edit(1, [{"old": "记得", "new": "忘了"}])
    assert d.text == "😀忘了😀"


def test_edit_deletion_with_empty_new():
    d = _draft("甲，乙，丙")
    d.edit(1, [{"old": "，乙", "new": ""}])
    assert d.text == "甲，丙"


def _assert_edit_refused(text: str, edits, code: str) -> ToolError:
    d = _draft(text)
    e = _refused(d.edit, 1, edits, code=code)
    assert d.text == text and d.version == 1 and not d.sealed
    with pytest.raises(ToolError) as ei:
        apply_edits(text, edits)
    assert ei.value.code == code
    return e


def test_edit_missing_reference():
    e = _assert_edit_refused("甲乙丙", [{"old": "丁", "new": "戊"}], "not_found")
    assert e.extra.get("edit") == 0


def test_edit_reference_found_twice_is_not_unique():
    e = _assert_edit_refused("记得，记得。", [{"old": "记得", "new": "忘了"}], "not_unique")
    assert e.extra.get("count") == 2


def test_edit_reference_with_overlapping_occurrences_is_not_unique():
    """'哈哈' occurs twice in '哈哈哈' (at 0 and at 1): the reference does not say which one is meant."""
    _assert_edit_refused("他笑：哈哈哈", [{"old": "哈哈", "new": "呵呵"}], "not_unique")


def test_edit_duplicate_references_in_one_batch():
    e = _assert_edit_refused("甲乙丙", [{"old": "乙", "new": "丁"}, {"old": "乙", "new": "戊"}], "overlap")
    assert sorted(e.extra.get("edits")) == [0, 1]


def test_edit_overlapping_references():
    e = _assert_edit_refused("甲乙丙丁", [{"old": "甲乙丙", "new": "x"}, {"old": "丙丁", "new": "y"}], "overlap")
    assert sorted(e.extra.get("edits")) == [0, 1]


def test_edit_contained_reference_overlaps():
    _assert_edit_refused("甲乙丙丁", [{"old": "乙", "new": "x"}, {"old": "甲乙丙", "new": "y"}], "overlap")


def test_edit_empty_old():
    e = _assert_edit_refused("甲乙丙", [{"old": "", "new": "丁"}], "empty_old")
    assert e.extra.get("edit") == 0


def test_edit_no_change():
    _assert_edit_refused("甲乙丙", [{"old": "乙", "new": "乙"}], "no_change")


def test_edit_no_change_over_whole_batch():
    _assert_edit_refused("甲乙丙", [{"old": "甲", "new": "甲"}, {"old": "丙", "new": "丙"}], "no_change")


@pytest.mark.parametrize("edits", [[], None, "甲", [{"old": "甲"}], [{"old": 1, "new": "x"}], ["甲"]])
def test_edit_bad_args(edits):
    _assert_edit_refused("甲乙丙", edits, "bad_args")


@pytest.mark.parametrize(
    "second,code",
    [
        ({"old": "不存在", "new": "x"}, "not_found"),
        ({"old": "", "new": "x"}, "empty_old"),
        ({"old": "乙", "new": "x"}, "not_unique"),
        ({"old": "甲乙", "new": "x"}, "overlap"),
    ],
)
def test_batch_whose_second_edit_fails_leaves_first_unapplied(second, code):
    text = "甲乙，乙丙"
    _assert_edit_refused(text, [{"old": "甲", "new": "一"}, second], code)
    assert "甲" in text


def test_apply_edits_returns_levels_per_edit():
    text, levels = apply_edits("甲乙丙", [{"old": "丙", "new": "3"}, {"old": "甲", "new": "1"}])
    assert text == "1乙3"
    assert levels == ["exact", "exact"]


def test_exact_edit_result_has_no_matches_key():
    d = _draft("甲乙丙")
    res = d.edit(1, [{"old": "乙", "new": "丁"}])
    assert "matches" not in res


# -- limited matching ---------------------------------------------------------------------------------------


def test_trimmed_match_when_old_has_extra_whitespace():
    text = "他说记得。然后走了"
    d = _draft(text)
    res = d.edit(1, [{"old": "  记得。\n", "new": "忘了。"}])
    assert res["matches"] == ["trimmed"]
    assert d.text == "他说忘了。然后走了"


def test_trimmed_match_drops_repeated_whitespace_from_new():
    d = _draft("他说记得。然后走了")
    d.edit(1, [{"old": " 记得。\n", "new": " 忘了。\n"}])
    assert d.text == "他说忘了。然后走了"


def test_exact_whitespace_in_text_is_preferred_over_trimming():
    d = _draft("甲\n\n乙")
    res = d.edit(1, [{"old": "\n\n乙", "new": "\n丙"}])
    assert "matches" not in res
    assert d.text == "甲\n丙"


def test_punct_match_half_width_old_full_width_text():
    text = "好，“记得。”她笑了。"
    d = _draft(text)
    res = d.edit(1, [{"old": ',"记得。"', "new": "，“忘了。”"}])
    assert res["matches"] == ["punct"]
    assert d.text == "好，“忘了。”她笑了。"
    # punctuation outside the replaced span survives byte for byte
    assert d.text.encode("utf-8") == "好，“忘了。”她笑了。".encode("utf-8")
    assert d.text.endswith("她笑了。")


def test_punct_match_corner_brackets_vs_curly_quotes():
    text = "他说“记得。”，又说了一遍。"
    d = _draft(text)
    res = d.edit(1, [{"old": "「记得。」", "new": "「忘了。」"}])
    assert res["matches"] == ["punct"]
    assert d.text == "他说「忘了。」，又说了一遍。"
    assert d.text[7] == "，" and d.text[-1] == "。"


def test_punct_match_replaces_only_the_span_new_text_taken_verbatim():
    text = "他说“记得。”"
    d = _draft(text)
    d.edit(1, [{"old": '"记得."', "new": '"忘了."'}])
    # the new text is inserted as given (no normalisation of new either)
    assert d.text == '他说"忘了."'


def test_trimmed_and_punct_match():
    d = _draft("好，“记得。”她笑了。")
    res = d.edit(1, [{"old": '  "记得。" ', "new": "“忘了。”"}])
    assert res["matches"] == ["trimmed+punct"]
    assert d.text == "好，“忘了。”她笑了。"


def test_mixed_levels_reported_in_edit_order():
    d = _draft("甲“乙。”丙丁")
    res = d.edit(1, [{"old": "丁", "new": "4"}, {"old": '"乙."', "new": "2"}, {"old": " 丙 ", "new": "3"}])
    assert res["matches"] == ["exact", "punct", "trimmed"]
    assert d.text == "甲234"


def test_splice_never_normalises_the_rest_of_the_text():
    text = "\u3000\u3000第一段：“甲。”——\n\t第二段『乙。』\u00a0（注）\n第三段【丙】《丁》！"
    d = _draft(text)
    d.edit(1, [{"old": '"乙."', "new": "『乙乙。』"}])
    assert d.text == text.replace("『乙。』", "『乙乙。』")
    assert d.text.encode("utf-8") == text.replace("『乙。』", "『乙乙。』").encode("utf-8")
    # several limited matches in one batch: still only the spans change
    d.edit(2, [{"old": "[丙]", "new": "【丙丙】"}, {"old": ':"甲."', "new": "：“甲甲。”"}])
    assert d.text == "\u3000\u3000第一段：“甲甲。”——\n\t第二段『乙乙。』\u00a0（注）\n第三段【丙丙】《丁》！"


def test_punct_variant_ambiguous_is_not_unique():
    text = "他说“记得。”她说「记得。」"
    _assert_edit_refused(text, [{"old": '"记得."', "new": "x"}], "not_unique")


def test_canon_punct_keeps_length():
    s = "“记得。”「」『』，：！？（）　\t—"
    assert len(canon_punct(s)) == len(s)


# -- seal ---------------------------------------------------------------------------------------------------


def test_seal_success():
    d = _draft("正文")
    res = d.seal(1)
    assert res == {"ok": True, "sealed": True, "version": 1}
    assert d.sealed and d.text == "正文" and d.version == 1


def test_seal_stale_version_refused():
    d = _draft("正文")
    d.append(1, "续")
    _refused(d.seal, 1, code="stale_version")
    assert not d.sealed
    d.seal(2)
    assert d.sealed


@pytest.mark.parametrize("text", ["", "   ", "\n\n\t\u3000"])
def test_seal_empty_draft_refused(text):
    d = Draft()
    if text:
        d.write(0, text)
    e = _refused(d.seal, d.version, code="empty_draft")
    assert not d.sealed
    assert e.extra.get("version") == d.version


def test_seal_empty_fresh_draft_at_version_zero():
    d = Draft()
    _refused(d.seal, 0, code="empty_draft")
    assert d.version == 0 and not d.sealed


def test_after_seal_every_write_refused_with_sealed():
    d = _draft("正文，记得。")
    d.seal(1)
    for op in (
        lambda: d.write(1, "改"),
        lambda: d.append(1, "续"),
        lambda: d.edit(1, [{"old": "记得", "new": "忘了"}]),
        lambda: d.seal(1),
        lambda: d.write(0, "改"),  # sealed wins over a stale version
        lambda: d.edit(5, [{"old": "", "new": ""}]),
    ):
        with pytest.raises(ToolError) as ei:
            op()
        assert ei.value.code == "sealed"
    assert d.text == "正文，记得。" and d.version == 1 and d.sealed
    # reading still works
    assert d.read()["content"] == "正文，记得。"
    assert d.search("记得")["total"] == 1
