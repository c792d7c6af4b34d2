"""The one macro engine (core/prompt/macros/): the parser, SillyTavern's macro table, determinism of
{{pick}}/{{random}}/{{roll}}, and the cases the former preset engine covered (now answered the SillyTavern way)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from liyuan_desktop.core.macros import VOLATILE_MACROS, MacroContext, apply_macros, format_moment, volatile_macros

CLOCK = datetime(2024, 10, 18, 15, 7, 9)


def ctx(**kw) -> MacroContext:
    kw.setdefault("char", "Alice")
    kw.setdefault("user", "Bob")
    kw.setdefault("chat_id", "chat-1")
    kw.setdefault("clock", lambda: CLOCK)
    return MacroContext(**kw)


# -- names, legacy tags, case ---------------------------------------------------------------------------------------

def test_existing_callers_still_work():
    c = MacroContext(char="青梧", user="你")
    assert apply_macros("{{char}}对{{user}}说。{{newline}}<USER>与<BOT>", c) == "青梧对你说。\n你与青梧"
    assert apply_macros("", c) == ""
    assert apply_macros("plain text", c) == "plain text"


def test_names_are_case_insensitive_and_whitespace_tolerant():
    assert apply_macros("{{CHAR}} {{Char}} {{ user }} {{User}}", ctx()) == "Alice Alice Bob Bob"


def test_legacy_tags_any_case():
    assert apply_macros("<USER> <user> <BOT> <char> <Char> <GROUP> <CHARIFNOTGROUP>", ctx()) == \
        "Bob Bob Alice Alice Alice Alice Alice"
    assert apply_macros("<b>bold</b> <username>", ctx()) == "<b>bold</b> <username>"


def test_card_fields_expand_and_resolve_inner_macros():
    c = ctx(description="{{char}} guards {{user}}.", personality="calm", scenario="A <user> scene",
            persona="{{user}} is a traveller", mes_examples="<START>{{char}}: hi", char_prompt="SP",
            char_instruction="PHI", char_version="1.2")
    text = ("{{description}}|{{personality}}|{{scenario}}|{{persona}}|{{mesExamples}}|{{charPrompt}}|"
            "{{charJailbreak}}|{{charInstruction}}|{{charVersion}}|{{char_version}}")
    assert apply_macros(text, c) == ("Alice guards Bob.|calm|A Bob scene|Bob is a traveller|<START>Alice: hi|SP|"
                                     "PHI|PHI|1.2|1.2")


def test_self_referencing_field_terminates():
    c = ctx(description="x{{description}}")
    out = apply_macros("{{description}}", c)
    assert out.startswith("xxxx") and out.count("{{description}}") == 1


def test_last_messages_and_ids():
    c = ctx(last_message="m", last_user_message="u", last_char_message="c", last_message_id=7)
    assert apply_macros("{{lastMessage}}/{{lastUserMessage}}/{{lastCharMessage}}/{{lastMessageId}}", c) == \
        "m/u/c/7"
    assert apply_macros("[{{lastMessageId}}]", ctx()) == "[]"


def test_original_expands_once_and_only_when_given():
    assert apply_macros("{{original}}", ctx()) == "{{original}}"
    assert apply_macros("{{original}}+{{original}}", ctx(original="O")) == "O+"


# -- parser: nesting, unknown macros, stray braces ------------------------------------------------------------------

def test_nested_random_never_leaves_braces():
    text = "<{{random::{{random::a::b}}::{{random:c,d}}::{{user}}}}>"
    seen = set()
    for seed in range(60):
        out = apply_macros(text, ctx(rng_seed=seed))
        assert "{" not in out and "}" not in out
        seen.add(out)
    assert seen <= {"<a>", "<b>", "<c>", "<d>", "<Bob>"}
    assert len(seen) >= 3


def test_unknown_macros_are_kept_exactly():
    for text in ["{{unknown}}", "{{ Foo :: bar }}", "{{get_message_variable::stat_data.理.好感度[0]}}",
                 "{{format_message_variable::stat_data}}", "{{random}}", "{{getvar}}", "{{roll}}",
                 "{{setvar::x}}", "{{ }}", "{{}}", "{{#if x}}y{{/if}}"]:
        assert apply_macros(text, ctx()) == text, text


def test_unknown_outer_macro_keeps_braces_but_inner_known_expands():
    assert apply_macros("{{get_message_variable::stat_data.{{char}}.hp}}", ctx()) == \
        "{{get_message_variable::stat_data.Alice.hp}}"


def test_unknown_inner_macro_inside_random_is_balanced():
    for seed in range(20):
        out = apply_macros("{{random::x::{{mystery::1}}}}", ctx(rng_seed=seed))
        assert out in ("x", "{{mystery::1}}")


def test_stray_and_unclosed_braces_are_plain_text():
    assert apply_macros("}} a {{char}} b }}", ctx()) == "}} a Alice b }}"
    assert apply_macros("unclosed {{char", ctx()) == "unclosed {{char"
    assert apply_macros("{{random::a::{{char}}", ctx()) == "{{random::a::Alice"
    assert apply_macros('{"a": {"b": 1}}', ctx()) == '{"a": {"b": 1}}'
    assert apply_macros("function f(){ if (a) { return {x: 1}}}", ctx()) == "function f(){ if (a) { return {x: 1}}}"


def test_three_braces_bind_the_inner_pair():
    assert apply_macros("{{{char}}}", ctx()) == "{Alice}"


def test_inner_values_are_not_split_by_the_outer_macro():
    c = ctx(user="A::B, C")
    for seed in range(10):
        assert apply_macros("{{random::{{user}}}}", ctx(user="A::B, C", rng_seed=seed)) == "A::B, C"
    assert apply_macros("{{random:{{user}}}}", c) == "A::B, C"


# -- random / pick / roll -------------------------------------------------------------------------------------------

def test_random_double_colon_items_kept_as_written():
    outs = {apply_macros("{{random:: a :: b }}", ctx(rng_seed=s)) for s in range(40)}
    assert outs == {" a ", " b "}


def test_random_comma_form_trims_and_escapes():
    outs = {apply_macros("{{random: a , b\\, c ,d}}", ctx(rng_seed=s)) for s in range(80)}
    assert outs == {"a", "b, c", "d"}


def test_random_double_colon_without_second_separator_splits_on_commas():
    outs = {apply_macros("{{random::x,y}}", ctx(rng_seed=s)) for s in range(40)}
    assert outs == {"x", "y"}


def test_random_with_seed_is_deterministic_and_without_is_fresh():
    text = "{{random::1::2::3::4::5::6::7::8::9::10}}"
    c = ctx()
    first = apply_macros(text, c)
    assert all(apply_macros(text, c) == first for _ in range(10))
    # position matters: two identical macros in one text are independent draws
    pairs = [apply_macros(text + "|" + text, ctx(rng_seed=s)).split("|") for s in range(30)]
    assert any(a != b for a, b in pairs)
    fresh = ctx(rng_seed=None)
    assert len({apply_macros(text, fresh) for _ in range(60)}) > 1


def test_pick_is_stable_per_chat_and_varies_across_chats():
    text = "{{pick::a::b::c::d::e::f}} and {{pick::a::b::c::d::e::f}}"
    base = apply_macros(text, ctx(chat_id="chat-42"))
    for _ in range(5):
        assert apply_macros(text, ctx(chat_id="chat-42")) == base
    # rng_seed (re-rolls of {{random}}) does not move {{pick}}
    assert apply_macros(text, ctx(chat_id="chat-42", rng_seed=None)) == base
    assert apply_macros(text, ctx(chat_id="chat-42", rng_seed=99)) == base
    others = {apply_macros(text, ctx(chat_id=f"chat-{i}")) for i in range(30)}
    assert len(others) > 3


def test_roll_ranges_and_forms():
    c = ctx(rng_seed=None)
    for _ in range(200):
        assert 1 <= int(apply_macros("{{roll:d20}}", c)) <= 20
        assert 3 <= int(apply_macros("{{roll 2d6+1}}", c)) <= 13
        assert 1 <= int(apply_macros("{{roll 20}}", c)) <= 20
        assert -2 <= int(apply_macros("{{roll:1d3-3}}", c)) <= 0
    assert len({apply_macros("{{roll:d20}}", c) for _ in range(100)}) > 5
    assert apply_macros("[{{roll:abc}}]", c) == "[]"
    assert apply_macros("[{{roll:99999999d6}}]", c) == "[]"
    seeded = ctx(rng_seed=3)
    assert apply_macros("{{roll:d100}}", seeded) == apply_macros("{{roll:d100}}", seeded)


# -- variables ------------------------------------------------------------------------------------------------------

def test_local_variables_and_in_place_store():
    store: dict = {}
    c = ctx(variables=store)
    assert apply_macros("{{setvar::hp::10}}{{addvar::hp::5}}HP={{getvar::hp}}", c) == "HP=15"
    assert apply_macros("{{incvar::hp}} {{decvar::hp}} {{decvar::hp}}", c) == "16 15 14"
    assert store == {"hp": 14}
    assert apply_macros("[{{getvar::missing}}]", c) == "[]"
    assert apply_macros("{{incvar::count}}", c) == "1"


def test_variable_value_rules():
    c = ctx(variables={"code": "007", "name": "Ann", "list": '["a"]', "f": 1.5, "x": 0})
    assert apply_macros("{{getvar::code}}", c) == "7"           # numeric-looking → number
    assert apply_macros("{{addvar::name:: Lee}}{{getvar::name}}", c) == "Ann Lee"
    assert apply_macros("{{addvar::list::b}}{{getvar::list}}", c) == '["a","b"]'
    assert apply_macros("{{addvar::f::1}}{{getvar::f}}", c) == "2.5"
    assert apply_macros("{{setvar::msg::a::b}}{{getvar::msg}}", c) == "a::b"   # the value keeps later '::'
    assert apply_macros("{{getvar:: code }}", c) == "7"        # names are trimmed


def test_global_variables_are_separate():
    c = ctx(variables={}, global_variables={})
    out = apply_macros("{{setglobalvar::g::1}}{{setvar::g::local}}{{incglobalvar::g}}|{{getglobalvar::g}}|{{getvar::g}}",
                       c)
    assert out == "2|2|local"
    assert c.global_variables == {"g": 2} and c.variables == {"g": "local"}
    assert apply_macros("{{addglobalvar::g::3}}{{decglobalvar::g}}", c) == "4"


def test_setvar_inside_a_comment_does_not_run():
    c = ctx(variables={})
    assert apply_macros("{{// {{setvar::x::1}} }}ok", c) == "ok"
    assert c.variables == {}


# -- time -----------------------------------------------------------------------------------------------------------

def test_clock_macros_use_the_injected_clock():
    assert apply_macros("{{time}}|{{date}}|{{weekday}}|{{isotime}}|{{isodate}}", ctx()) == \
        "3:07 PM|October 18, 2024|Friday|15:07|2024-10-18"
    assert apply_macros("{{datetimeformat Do MMMM YYYY [at] HH:mm:ss}}", ctx()) == "18th October 2024 at 15:07:09"
    utc_clock = lambda: datetime(2024, 1, 1, 23, 30, tzinfo=timezone.utc)  # noqa: E731
    assert apply_macros("{{time_UTC+2}}", ctx(clock=utc_clock)) == "1:30 AM"
    assert apply_macros("{{time_UTC-5}}", ctx(clock=utc_clock)) == "6:30 PM"


def test_format_moment_tokens():
    dt = datetime(2024, 3, 2, 9, 5, 1, tzinfo=timezone(timedelta(hours=8)))
    assert format_moment(dt, "L LT LTS") == "03/02/2024 9:05 AM 9:05:01 AM"
    assert format_moment(dt, "LLLL") == "Saturday, March 2, 2024 9:05 AM"
    assert format_moment(dt, "ddd dd d Do MMM M D YY hh h a Z ZZ") == "Sat Sa 6 2nd Mar 3 2 24 09 9 am +08:00 +0800"


# -- text macros ----------------------------------------------------------------------------------------------------

def test_trim_removes_itself_and_surrounding_newlines_only():
    assert apply_macros("a\n\n{{trim}}\n\nb", ctx()) == "ab"
    assert apply_macros("a\r\n{{trim}}\r\nb", ctx()) == "ab"
    assert apply_macros("a  {{trim}}  b", ctx()) == "a    b"
    assert apply_macros("{{TRIM}}\nx", ctx()) == "x"


def test_comments_noop_newline_reverse_banned():
    assert apply_macros("a{{// a comment\nover lines }}b", ctx()) == "ab"
    assert apply_macros("a{{//x {{char}} {{y}} }}b", ctx()) == "ab"
    assert apply_macros("a{{noop}}b{{newline}}c", ctx()) == "ab\nc"
    assert apply_macros("{{reverse:abc}}", ctx()) == "cba"
    assert apply_macros('x{{banned "foo"}}y', ctx()) == "xy"
    assert apply_macros("x{{// unclosed", ctx()) == "x{{// unclosed"


def test_escape_applies_to_top_level_values_only():
    c = ctx(char="A.c")
    esc = lambda v: v.replace(".", "\\.")  # noqa: E731
    assert apply_macros("/{{char}}.x/", c, escape=esc) == "/A\\.c.x/"
    assert apply_macros("{{random::{{char}}}}", c, escape=esc) == "A\\.c"


def test_volatile_macros_scan():
    assert volatile_macros("{{char}} {{time}} {{Random::a::b}} {{time_UTC+3}} {{pick::a}}") == \
        {"time", "random", "time_utc"}
    assert volatile_macros("{{char}} {{description}}") == set()
    assert {"random", "roll", "time", "getvar", "setvar", "lastmessage"} <= VOLATILE_MACROS
    assert "pick" not in VOLATILE_MACROS


def test_large_html_without_macros_is_untouched():
    html = "<style>.a{color:red}} .b{{x}}</style>" * 200 + "<script>if(a){b({c:1}})}</script>"
    # Only balanced {{x}} (unknown) appears; everything is kept byte for byte.
    assert apply_macros(html, ctx()) == html


@pytest.mark.parametrize("text", ["{{", "}}", "{{{{", "}}}}", "{{}}}}{{", "{{a{{b}}c", "{{::}}", "{{random::}}"])
def test_degenerate_inputs_do_not_crash(text):
    out = apply_macros(text, ctx())
    assert isinstance(out, str)
    assert out == text  # nothing known to expand: kept as written


# -- what the former preset engine (presets.expand_macros, deleted) covered, answered by the one engine -------------

def test_former_preset_engine_cases():
    c = ctx(char="青梧", user="旅人", description="{{char}}的描述 {{user}} <USER>", persona="外乡人")
    x = lambda t, **kw: apply_macros(t, c.model_copy(update=kw))  # noqa: E731 (shallow copy: variables shared)
    # card fields are expanded in turn, legacy tags included (SillyTavern's card fields have them replaced too;
    # the preset engine left <USER> inside a field)
    assert x("{{description}}|{{persona}}|<BOT>|{{User}}") == "青梧的描述 旅人 旅人|外乡人|青梧|旅人"
    assert x("{{charDescription}}|{{charPersonality}}", personality="沉静") == "青梧的描述 旅人 旅人|沉静"
    assert x("a{{original}}b{{original}}", original="O") == "aOb"
    assert x("一\n\n{{trim}}\n二{{newline}}三{{noop}}") == "一二\n三"
    assert x("x{{// 注释\n跨行 }}y") == "xy"
    assert x("{{unknown}} {{getvar::nope}}|") == "{{unknown}} |"
    assert x("{{setvar::n::3}}{{addvar::n::2}}{{getvar::n}} {{incvar::n}} {{decvar::m}}") == "5 6 -1"
    assert x("{{setvar::s::甲}}{{addvar::s::乙}}{{getvar::s}}") == "甲乙"
    assert x("{{setglobalvar::g::1}}{{getglobalvar::g}}{{getvar::g}}") == "1"
    pick = x("{{pick::a::b::c}}")
    assert pick in "abc" and all(x("{{pick::a::b::c}}") == pick for _ in range(5))
    assert x("{{random:a\\,b,c}}") in ("a,b", "c")
    assert x("{{roll:1d1}}+{{roll 1}}") == "1+1"
    assert x("[{{roll:abc}}]") == "[]"  # invalid formula: '' as SillyTavern (the preset engine kept it verbatim)
    now = datetime(2024, 1, 5, 9, 3, 7)
    assert x("{{time}}|{{date}}|{{weekday}}|{{isotime}}|{{isodate}}|{{datetimeformat YYYY/MM/DD HH:mm [at] dddd}}"
             "|{{lastMessage}}", clock=lambda: now, last_message="最后一句") == \
        "9:03 AM|January 5, 2024|Friday|09:03|2024-01-05|2024/01/05 09:03 at Friday|最后一句"


def test_random_and_roll_draw_from_a_given_generator():
    import random

    rng = random.Random(3)
    assert {apply_macros("{{random::x::y}}", ctx(rng=rng)) for _ in range(40)} == {"x", "y"}
    assert apply_macros("{{roll:2d6+100}}", ctx(rng=rng)).isdigit()
    a, b = random.Random(7), random.Random(7)
    assert [apply_macros("{{roll:d1000}}", ctx(rng=a)) for _ in range(5)] == \
        [apply_macros("{{roll:d1000}}", ctx(rng=b)) for _ in range(5)]
