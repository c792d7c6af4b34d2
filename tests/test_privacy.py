"""Issue 15 item 13: credentials inside a base URL are masked wherever keys are (errors, the log file, the session
file), and a session header stores the card's path relative to the data folder, not the absolute path with the OS
user name. Real loopback HTTP server (tests/sse_server.py); the real log set-up of ``runtime``."""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import pytest
from helpers import DEMO_CARD
from sse_server import ScriptedServer, json_reply

from liyuan_desktop.core.cards import load_card
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.chat.folder import chat_info
from liyuan_desktop.core.llm import OpenAIChatModel
from liyuan_desktop.core.llm.errors import mask_secrets, url_secrets
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.core.llm.types import ChatMessage, ChatRequest, ModelError
from liyuan_desktop.core.paths import home
from liyuan_desktop.core.session.tree import SessionTree

PASSWORD = "s3cr3t-Pa55"
USER = "alice"


@pytest.fixture
def server():
    with ScriptedServer() as srv:
        yield srv


def _with_creds(base_url: str) -> str:
    return base_url.replace("http://", f"http://{USER}:{PASSWORD}@")


def _echo(status: int = 401) -> object:
    # a server that repeats what it was sent, credentials included (some gateways do)
    return json_reply({"error": {"message": f"user {USER}:{PASSWORD} rejected at http://{USER}:{PASSWORD}@gw/v1, "
                                            f"pw%2B={PASSWORD}"}}, status=status)


def test_masking_helpers():
    assert url_secrets("https://host/v1") == []
    assert PASSWORD in url_secrets(f"https://{USER}:{PASSWORD}@host/v1")
    assert "p@ss w" in url_secrets("https://bob:p%40ss%20w@host")  # percent-decoded too
    text = mask_secrets(f"GET https://{USER}:{PASSWORD}@host/x and {PASSWORD}", url_secrets(f"https://{USER}:{PASSWORD}@h"))
    assert PASSWORD not in text and "https://***@host/x" in text
    assert mask_secrets("mail me at a@b.c") == "mail me at a@b.c"


async def test_server_echo_of_url_credentials_is_masked_in_the_error(server):
    server.script(_echo())
    model = OpenAIChatModel(_with_creds(server.base_url), "m", None, retry_base_wait=0.0, read_timeout=5.0)
    try:
        with pytest.raises(ModelError) as info:
            await model.complete(ChatRequest(messages=[ChatMessage(role="user", content="hi")]))
    finally:
        await model.aclose()
    assert PASSWORD not in info.value.message and "***" in info.value.message
    assert PASSWORD not in repr(model) and PASSWORD not in model.name
    assert server.requests[0].headers["authorization"].startswith("Basic ")  # the credentials were still used


async def test_server_echo_does_not_reach_the_session_file(tmp_path, server):
    server.script(_echo())
    model = OpenAIChatModel(_with_creds(server.base_url), "test-model", "sk-test-key", retry_base_wait=0.0,
                            read_timeout=5.0)
    try:
        chat = Chat.create(tmp_path / "c", load_card(DEMO_CARD), model)
        res = await chat.send("你好")
    finally:
        await model.aclose()
    assert res.outcome == "error"
    text = chat.tree.path.read_text("utf-8")
    assert "***" in text and PASSWORD not in text and "sk-test-key" not in text


async def test_log_file_masks_url_credentials(server):
    from liyuan_desktop.runtime import setup_logging

    root = logging.getLogger()
    before, level = list(root.handlers), root.level
    path = setup_logging()
    try:
        server.script(_echo(404))
        model = OpenAIChatModel(_with_creds(server.base_url), "m", None, retry_base_wait=0.0, read_timeout=5.0)
        try:
            with pytest.raises(ModelError):
                await model.complete(ChatRequest(messages=[ChatMessage(role="user", content="hi")]))
        finally:
            await model.aclose()
        logging.getLogger("test").warning("configured base url %s", _with_creds(server.base_url))
    finally:
        for h in root.handlers[:]:
            if h not in before:
                h.close()
                root.removeHandler(h)
        root.setLevel(level)
    log = path.read_text("utf-8")
    assert "configured base url http://***@127.0.0.1" in log
    assert "HTTP Request" in log  # httpx's own request line is there, masked
    assert PASSWORD not in log


def _card_in_data_folder() -> Path:
    dst = home() / "cards" / "青梧" / DEMO_CARD.name
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(DEMO_CARD, dst)
    return dst


def _header(path: Path) -> dict:
    return json.loads(path.read_text("utf-8").splitlines()[0])


def test_session_header_stores_the_card_path_relative_to_the_data_folder(tmp_path):
    card_file = _card_in_data_folder()
    folder = home() / "cards" / "青梧" / "对话" / "局1"
    chat = Chat.create(folder, load_card(card_file), ReplayModel(actor=[], scribe=[]))
    stored = _header(chat.tree.path)["card"]
    assert stored == f"cards/青梧/{DEMO_CARD.name}"
    assert str(home()) not in chat.tree.path.read_text("utf-8")
    # read back: the absolute path, which exists
    assert chat_info(folder).card == str(card_file)
    assert SessionTree.open(chat.tree.path).header.card == str(card_file)


def test_old_absolute_card_paths_still_read(tmp_path):
    card_file = _card_in_data_folder()
    session = tmp_path / "old" / "session.jsonl"
    session.parent.mkdir()
    session.write_text(json.dumps({"id": "h1", "parent_id": None, "type": "header", "format": "liyuan-session",
                                   "version": 1, "mode": "roleplay", "card": str(card_file),
                                   "card_name": "青梧"}, ensure_ascii=False) + "\n", "utf-8")
    assert chat_info(session.parent).card == str(card_file)
    tree = SessionTree.open(session)
    assert tree.header.card == str(card_file)


def test_a_card_under_the_user_home_is_stored_with_a_tilde(tmp_path, monkeypatch):
    user_home = tmp_path / "users" / "someone"
    card_file = user_home / "Downloads" / DEMO_CARD.name
    card_file.parent.mkdir(parents=True)
    shutil.copy(DEMO_CARD, card_file)
    monkeypatch.setenv("HOME", str(user_home))
    chat = Chat.create(tmp_path / "chat", load_card(card_file), ReplayModel(actor=[], scribe=[]))
    assert _header(chat.tree.path)["card"] == f"~/Downloads/{DEMO_CARD.name}"
    assert "someone" not in chat.tree.path.read_text("utf-8")
    assert chat_info(tmp_path / "chat").card == str(card_file)


async def test_a_key_from_the_key_file_reaches_only_the_server(tmp_path, server, monkeypatch):
    """Issue 16 §2: a key kept in the user-only key file (no keyring) is sent to the server and appears nowhere
    else — not in the log, the session file, the chat folder, an export, or settings.json — even when the server
    echoes it back in an error."""
    import keyring
    from keyring.backends import fail

    from liyuan_desktop.core import secrets
    from liyuan_desktop.core.llm import ProviderSettings, build_model
    from liyuan_desktop.core.settings import AppSettings, save_settings, store_key
    from liyuan_desktop.runtime import setup_logging

    key = "sk-filekey-PRIVACY-0123456789"
    old = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    root = logging.getLogger()
    before, level = list(root.handlers), root.level
    logpath = setup_logging()
    try:
        assert store_key("gw", key) == "file"
        prov = ProviderSettings(name="gw", base_url=server.base_url, model="test-model", read_timeout=5.0)
        save_settings(AppSettings(providers=[prov], active_provider="gw"))
        server.script(json_reply({"error": {"message": f"invalid api key {key} (Bearer {key})"}}, status=401))
        model = build_model(prov, max_retries=0)
        try:
            chat = Chat.create(tmp_path / "c", load_card(DEMO_CARD), model)
            res = await chat.send("你好")
        finally:
            await model.aclose()
        from liyuan_desktop.core.cards.st_chat_export import export_st_chat

        out = export_st_chat(chat.tree, tmp_path / "export.jsonl")
    finally:
        for h in root.handlers[:]:
            if h not in before:
                h.close()
                root.removeHandler(h)
        root.setLevel(level)
        keyring.set_keyring(old)
        secrets.session_clear()
    assert res.outcome == "error"
    assert server.requests and server.requests[0].headers.get("authorization") == f"Bearer {key}"
    places = [logpath, home() / "settings.json", out] + [p for p in (tmp_path / "c").rglob("*") if p.is_file()]
    for p in places:
        assert key not in p.read_text("utf-8", errors="replace"), p
    assert key in secrets.keys_file_path().read_text("utf-8")  # only there
