"""``liyuan --self-test``: drive the real window through the demo and check what the seed run says must happen.

Plays the demo's three beats through the UI (input box, Send, the ask dialog answered with the recorded option),
then checks: status-bar frames get the persona's and the card's names; beats 1 and 2 sealed; beat 3 revised beat 2 in place, leaving exactly the seed's ``previous_after``;
the ledger pane holds the seed's state after beat 2; the window has its icon and the About text shows the build
(so a packaged app is checked for its icons and build info too). The demo is the window's language's
(``core.paths.demo_set``: 青梧 in Chinese, Qingwu in English). The expected texts below are each demo's values (the
Chinese ones the seed run's golden values), kept here as the check — the engine never reads them.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Optional

from ...core.ledger.state import format_state
from ...core.llm.replay import ReplayModel
from ...core.paths import demo_set
from ..infra.i18n import language

EXPECTED_STATE_AFTER_BEAT2 = (
    "时间：傍晚（雨中）\n地点：青梧的客栈（檐外下雨）\n"
    "青梧：好感 8；状态：客栈掌柜；在：青梧的客栈；备注：对怀瑾公子一事知情，态度谨慎回避，似乎怀有旧情；取下墙上断骨的旧油纸伞仔细拂拭后挂回；"
    "听闻怀瑾十年未归、生死不明后平静应答，转而反问旅人来历与寻人缘由\n旅人：好感 2；在：青梧的客栈\n旅人入住天数：三天\n"
    "旅人打听对象：怀瑾公子（十年前从镇北渡口离开）\n青梧对怀瑾的态度：知情但不轻易吐露\n"
    "剧情线：「旅人查访十年前从镇北渡口离开的怀瑾公子」 「墙上断骨带焦痕的旧油纸伞与怀瑾疑似有关，青梧对其有难言旧情」 「青梧反问旅人来历与寻访怀瑾的缘由，旅人尚未作答」"
)
EXPECTED_PREVIOUS_AFTER = (
    "*你放下茶盏，问得直：「沈怀瑾——他还活着吗？这十年，有没有回来过？」*\n\n"
    "*青梧正擦着一只茶杯，指腹沿着杯口转了一圈，动作没停，只是慢了下来。檐外的雨声忽然就近了，一滴滴敲在青石板上，像在替她把那句问话往下按了按。*\n\n"
    "「没有。」*她说，声音很平，听不出起伏。*「十年了，一封口信、半张纸，都没有回来过。是死是活，我也答不上来。镇子上的人，早就当他不在了。」\n\n"
    "*她把擦干的杯子放进托盘，这才抬起眼，正正地看着你。*\n\n"
    "「客官要寻的若是他，怕是寻不到什么了。」*她顿了顿，语气依旧和缓，却比方才多了几分认真。*「这些年，他过得好吗？」\n"
)
#: The English demo (cards/Qingwu): the same checks on its script's values.
EXPECTED_STATE_AFTER_BEAT2_EN = (
    "Time: Dusk (raining)\nPlace: Rainsong Inn (raining)\n"
    "Qingwu: affinity 8; status: innkeeper; at: Rainsong Inn; notes: knows about Master Huaijin but is guarded and "
    "evasive, seems to have old feelings for him; took down the old umbrella with the broken rib, wiped it and hung "
    "it back; answered calmly that Huaijin has been gone ten years, fate unknown, then asked the Traveller where they "
    "come from and why they are looking\nTraveller: affinity 2; at: Rainsong Inn\n"
    "Traveller's nights booked: three\nTraveller is asking about: Master Huaijin (left from the North Ferry ten years "
    "ago)\nQingwu on Huaijin: knows, but won't say much\n"
    "Plot threads: \"The Traveller is looking for Master Huaijin, who left from the North Ferry ten years ago\" "
    "\"The old umbrella on the wall, broken rib and scorch mark, seems tied to Huaijin; Qingwu has feelings for him she "
    "won't speak of\" \"Qingwu asked the Traveller where they come from and why they are looking for Huaijin; the "
    "Traveller has not answered yet\""
)
EXPECTED_PREVIOUS_AFTER_EN = (
    "*You set down your cup and ask it straight: \"Shen Huaijin — is he still alive? In ten years, has he ever come "
    "back?\"*\n\n"
    "*Qingwu is drying a teacup. Her thumb goes once around the rim; her hands don't stop, only slow. The rain outside "
    "suddenly sounds closer, drop by drop on the flagstones, as if pressing your question down for her.*\n\n"
    "\"No.\" *Her voice is level; nothing rises or falls in it.* \"Ten years, and not a message, not half a page. "
    "Alive or dead, I couldn't tell you. The town stopped counting him long ago.\"\n\n"
    "*She sets the dry cup on the tray, and only then looks up and meets your eyes.*\n\n"
    "\"If it's him you've come for, I'm afraid there's little left to find.\" *She pauses; her tone is as mild as "
    "before, but more serious now.* \"All these years — has he been well?\"\n"
)
#: What each demo must leave (``paths.demo_set(...).language`` → (ledger after beat 2, beat 2 after beat 3)).
EXPECTED = {"zh": (EXPECTED_STATE_AFTER_BEAT2, EXPECTED_PREVIOUS_AFTER),
            "en": (EXPECTED_STATE_AFTER_BEAT2_EN, EXPECTED_PREVIOUS_AFTER_EN)}


async def _wait(pred, timeout: float) -> bool:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not pred():
        if loop.time() > end:
            return False
        await asyncio.sleep(0.03)
    return True


async def run_self_test(win, screenshot: Optional[str] = None, timeout: float = 90.0) -> tuple[bool, dict]:
    """Play the demo in ``win`` (a shown MainWindow). Returns (passed, report dict)."""
    report: dict = {"beats": [], "errors": []}
    if not await _wait(lambda: win.view.is_ready(), 30):
        report["errors"].append("conversation view did not load")
    win.start_demo()
    if win.chat is None:
        report["errors"].append("demo chat did not open")
        return False, report
    # status bars get the same names as in any chat of the window (issue 13 §2): the persona's and the card's
    names = win.view.frame_context().get("names", {})
    report["frame_names"] = names
    if names != {"user": win.chat.persona, "char": win.chat.card.name}:
        report["errors"].append(f"status-bar frames got the names {names!r}, not the persona's and the card's")
    demo = demo_set(language())  # the demo start_demo played: the window's language's
    want_state, want_previous = EXPECTED[demo.language]
    report["demo"] = demo.library_name
    answers = [a for b in ReplayModel.from_file(demo.replay).beats for a in b.ask_answers]  # as recorded
    for i in range(3):
        text = win.input.toPlainText().strip()
        if not text:
            report["errors"].append(f"beat {i + 1}: input box was not pre-filled")
            break
        n = len(win.results)
        win.send_clicked()
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while len(win.results) == n and loop.time() < end:
            if win.ask_dialog.isVisible() and win.ask_dialog.option_buttons:
                want = answers.pop(0) if answers else None
                opts = [b.property("answer") for b in win.ask_dialog.option_buttons]
                if screenshot:
                    base = Path(screenshot)
                    win.grab().save(str(base.with_name(base.stem + "-ask.png")))
                    win.ask_dialog.grab().save(str(base.with_name(base.stem + "-askdialog.png")))
                win.ask_dialog.choose(opts.index(want) if want in opts else 0)
            await asyncio.sleep(0.03)
        if len(win.results) == n:
            report["errors"].append(f"beat {i + 1}: timed out")
            break
        r = win.results[-1]
        report["beats"].append({"outcome": r.outcome, "sealed": r.sealed, "revised_previous": r.revised_previous})
    res = win.results
    ok = len(res) == 3 and res[0].sealed and res[1].sealed and res[2].revised_previous
    if len(res) == 3 and res[2].revised_text != want_previous:
        ok = False
        report["errors"].append("beat 3 did not leave the seed's previous_after")
    shown = format_state(win.state_pane.state, demo.language)  # the ledger in the demo chat's language
    report["ledger_matches_seed"] = shown == want_state
    ok = ok and report["ledger_matches_seed"]
    # packaging: the icon and the About facts come from files a build must carry (resources/icons, _build_info)
    from ..dialogs.about import about_html, build_label

    report["build"] = build_label()
    if win.windowIcon().isNull():
        report["errors"].append("the window has no icon (resources/icons missing?)")
    if report["build"] not in about_html():
        report["errors"].append("the About text does not show the build")
    await asyncio.sleep(0.3)
    if screenshot:
        win.grab().save(screenshot)
        report["screenshot"] = screenshot
    report["passed"] = bool(ok) and not report["errors"]
    return report["passed"], report


def report_json(report: dict) -> str:
    """The report as one JSON line (what ``liyuan --self-test`` prints)."""
    return json.dumps(report, ensure_ascii=False)
