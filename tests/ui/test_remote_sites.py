"""Issue 26 §3: "allow this site for this card". A status bar that embeds its author's remote page is refused and
the refusal listed; the user may allow that one https host for that card only (asked, default No; revocable; kept in
the card's ``liyuan.json``). Allowed or not, no frame reaches a loopback listener (the attacks of
test_frame_attacks.py run with a site allowed), and nothing is allowed by default."""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import QUrl
from PySide6.QtWebEngineCore import QWebEngineUrlRequestInfo
from PySide6.QtWidgets import QMessageBox
from test_frame_attacks import (  # noqa: F401  (the same listeners and attacks)
    Net,
    assert_attempted,
    net,  # noqa: F401  fixture
    run_attacks,
)
from uihelpers import view_js as js

from liyuan_desktop.core.cards.meta import card_allowed_sites, normalize_site, set_card_site_allowed
from liyuan_desktop.ui.frames.conversation import FrameRequestInterceptor, with_sites
from liyuan_desktop.ui.frames.remote_sites import SitesDialog, refused_sites

T = QWebEngineUrlRequestInfo.ResourceType
REMOTE_BAR = ("```html\n<html><body><p>战斗界面</p>\n<iframe src=\"https://battle.example.com/ui/\"></iframe>\n"
              "<img src=\"https://battle.example.com/a.png\"></body></html>\n```")


def test_site_names_are_normalised_and_only_https_hosts_pass():
    assert normalize_site("https://Battle.Example.com:443/ui/?x=1#y") == "battle.example.com"
    assert normalize_site(" battle.example.com. ") == "battle.example.com"
    assert normalize_site("https://例子.测试/") == "xn--fsqu00a.xn--0zwm56d"
    for bad in ("http://battle.example.com", "file:///etc/passwd", "javascript:alert(1)", "https://127.0.0.1/",
                "localhost", "https://[::1]/", "", "https://a b.com", "https://x.com\" ; script-src *"):
        with pytest.raises(ValueError):
            normalize_site(bad)


def test_allowed_sites_are_kept_beside_the_card(tmp_path):
    assert card_allowed_sites(tmp_path) == []  # nothing by default
    (tmp_path / "liyuan.json").write_text(json.dumps({"frames_trusted": False}), "utf-8")
    assert set_card_site_allowed(tmp_path, "https://b.example.com/x", True) == ["b.example.com"]
    assert set_card_site_allowed(tmp_path, "a.example.org", True) == ["a.example.org", "b.example.com"]
    meta = json.loads((tmp_path / "liyuan.json").read_text("utf-8"))
    assert meta["frames_trusted"] is False and meta["allowed_sites"] == ["a.example.org", "b.example.com"]
    assert set_card_site_allowed(tmp_path, "b.example.com", False) == ["a.example.org"]
    (tmp_path / "liyuan.json").write_text(json.dumps({"allowed_sites": ["ok.example.com", 3, "http://x.com", "127.0.0.1"]}),
                                          "utf-8")
    assert card_allowed_sites(tmp_path) == ["ok.example.com"]  # a hand-edited file cannot open more


def test_the_policy_names_exactly_the_allowed_hosts():
    base = "default-src 'none'; script-src 'unsafe-inline'; img-src data:; connect-src 'none'; frame-src 'none'"
    out = with_sites(base, ("battle.example.com",))
    parts = dict(p.strip().split(" ", 1) for p in out.split(";"))
    assert parts["frame-src"] == "https://battle.example.com"
    assert parts["img-src"] == "data: https://battle.example.com"
    assert parts["default-src"] == "'none'" and "https://battle.example.com" in parts["media-src"]
    assert with_sites(base, ("x.com; script-src *",)) == base  # only validated host names enter a policy


def test_the_interceptor_lets_only_allowed_hosts_through(tmp_path):
    blocked: list = []
    ic = FrameRequestInterceptor([tmp_path], lambda url, why: blocked.append(url))
    page = QUrl("https://battle.example.com/ui/")
    assert not ic.allowed(page, T.ResourceTypeSubFrame)[0]
    ic.sites = frozenset({"battle.example.com"})
    assert ic.allowed(page, T.ResourceTypeSubFrame) == (True, "")
    assert ic.allowed(QUrl("https://battle.example.com/api"), T.ResourceTypeXhr) == (True, "")
    assert not ic.allowed(QUrl("https://other.example.com/ui/"), T.ResourceTypeSubFrame)[0]
    assert not ic.allowed(QUrl("http://battle.example.com/ui/"), T.ResourceTypeSubFrame)[0]  # https only


def test_refused_sites_come_from_the_blocked_list():
    blocked = ["frame-src https://battle.example.com/ui/ (TH-message--1--0)", "https://127.0.0.1/x (file)",
               "https://battle.example.com/a.png (not a script)", "img-src https://cdn.example.net/i.png (f)",
               "https://printer/x (f)"]
    assert refused_sites(blocked, []) == ["battle.example.com", "cdn.example.net"]
    assert refused_sites(blocked, ["cdn.example.net"]) == ["battle.example.com"]


class _Chat:
    """The two Chat members the dialog uses, over a real card folder (the facade's own test is in test_change_notices
    and below in test_the_chat_command_records_it)."""

    def __init__(self, folder):
        from types import SimpleNamespace

        from liyuan_desktop.core.chat.changes import Changes

        self.card = SimpleNamespace(name="战斗卡", path=str(folder / "card.json"))
        self.folder = folder
        self.last_changes = Changes.of("settings")

    @property
    def allowed_sites(self):
        return card_allowed_sites(self.folder)

    def set_site_allowed(self, site, on):
        return set_card_site_allowed(self.folder, site, on)


def test_a_refused_remote_page_can_be_allowed_for_this_card_only(qtbot, view, tmp_path, monkeypatch, net):  # noqa: F811
    card = tmp_path / "card"
    card.mkdir()
    other = tmp_path / "other"
    other.mkdir()
    qtbot.waitUntil(lambda: js(qtbot, view, "document.readyState") == "complete", timeout=20000)
    view.set_card(card)
    view.set_transcript([{"id": "1", "role": "assistant", "text": REMOTE_BAR, "beat": 1}], False)
    qtbot.waitUntil(lambda: any("battle.example.com" in b for b in view.blocked_requests()), timeout=20000)

    answers = [QMessageBox.StandardButton.No, QMessageBox.StandardButton.Yes]
    asked: list = []
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: (asked.append(a[2]), answers.pop(0))[1])
    dlg = SitesDialog(_Chat(card), view)
    qtbot.addWidget(dlg)
    refused = [dlg.refused.item(i).text() for i in range(dlg.refused.count())]
    assert refused == ["battle.example.com"]
    dlg.refused.item(0).setSelected(True)
    dlg._allow_selected()  # answered No: nothing changes
    assert card_allowed_sites(card) == [] and "battle.example.com" in asked[0]
    dlg._allow_selected()  # answered Yes
    assert card_allowed_sites(card) == ["battle.example.com"] and card_allowed_sites(other) == []
    assert [dlg.allowed.item(i).text() for i in range(dlg.allowed.count())] == ["battle.example.com"]
    dlg.grab().save(str(tmp_path / "sites.png"))

    qtbot.waitUntil(view.is_ready, timeout=20000)
    html = (view._dir / "conversation.html").read_text("utf-8")
    assert "frame-src https://battle.example.com" in html
    view.set_transcript([{"id": "2", "role": "assistant", "text": REMOTE_BAR, "beat": 1}], False)
    srcdoc = "(document.querySelector('iframe[name^=\"TH-message--2\"]') || {}).srcdoc || ''"
    qtbot.waitUntil(lambda: bool(js(qtbot, view, srcdoc)), timeout=20000)
    csp = js(qtbot, view, srcdoc)
    assert "frame-src https://battle.example.com" in csp

    # with the site allowed, every other channel is still shut: the attack bars reach no loopback listener
    rep = run_attacks(qtbot, view, net, 21)
    assert_attempted(rep)
    assert net.received() == {}

    view.set_card(other)  # another card's frames: its own policy, the site not in it
    qtbot.waitUntil(view.is_ready, timeout=20000)
    assert "battle.example.com" not in (view._dir / "conversation.html").read_text("utf-8")
    view.set_card(card)
    dlg.allowed.item(0).setSelected(True)
    dlg._revoke_selected()
    assert card_allowed_sites(card) == []


async def test_the_chat_command_records_it(tmp_path):
    import shutil

    from helpers import DEMO_CARD

    from liyuan_desktop.core.cards import load_card
    from liyuan_desktop.core.chat.facade import Chat
    from liyuan_desktop.core.llm.replay import ReplayModel

    folder = tmp_path / "card"
    folder.mkdir()
    shutil.copy(DEMO_CARD, folder / "card.json")  # a card of its own: the repository's demo card is never written
    chat = Chat.create(tmp_path / "chat", load_card(folder / "card.json"), ReplayModel(actor=[], scribe=[]))
    try:
        assert chat.allowed_sites == []
        assert chat.set_site_allowed("https://battle.example.com/", True) == ["battle.example.com"]
        assert chat.last_changes.settings and chat.allowed_sites == ["battle.example.com"]
        assert card_allowed_sites(folder) == ["battle.example.com"]
        with pytest.raises(ValueError):
            chat.set_site_allowed("http://x.example.com", True)
        chat.set_site_allowed("battle.example.com", False)
        assert card_allowed_sites(folder) == []
    finally:
        chat.close()
