"""Tests of the app settings file, key lookup (env → keyring → session) and the connection test (no Qt)."""

from __future__ import annotations

import json

import keyring
import pytest
from keyring.backends import fail, null

try:
    from sse_server import ScriptedServer, chunk, json_reply, sse_reply
except ImportError:  # tests/ collected as a package
    from tests.sse_server import ScriptedServer, chunk, json_reply, sse_reply

from keyring_memory import MemoryKeyring  # noqa: E402

from liyuan_desktop.core import settings as S
from liyuan_desktop.core.llm.providers import ProviderSettings, preset
from liyuan_desktop.core.paths import home

KEY = "sk-test-SECRET-settings-0123456789"




@pytest.fixture(autouse=True)
def _clean_keys(monkeypatch):
    """Each test starts without session keys, without provider env vars, and with the fail keyring backend
    restored afterwards (never the user's real keyring)."""
    old = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    S.clear_session_keys()
    for var in ("DEEPSEEK_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY", "LIYUAN_TEST_KEY"):
        monkeypatch.delenv(var, raising=False)
    yield
    S.clear_session_keys()
    keyring.set_keyring(old)


@pytest.fixture
def mem_keyring():
    kr = MemoryKeyring()
    keyring.set_keyring(kr)
    return kr


@pytest.fixture
def server():
    with ScriptedServer() as srv:
        yield srv


def _sample() -> S.AppSettings:
    ds = preset("deepseek")
    ds.scribe_model = "deepseek-lite"
    return S.AppSettings(
        providers=[ds, preset("ollama")],
        active_provider="deepseek",
        scribe_provider="ollama",
        ui_language="en",
        theme="dark",
        persona_name="阿梨",
        persona_description="一个爱听戏的旅人",
        compaction_share=0.5,
        window={"geometry": "AAAA", "splitter": [200, 600], "last_card": "青梧"},
        demo_done=True,
    )


# ---------------------------------------------------------------------------------------------------------------
# the file


def test_defaults_when_missing():
    s = S.load_settings()
    assert s == S.AppSettings()
    assert s.providers == [] and s.active_provider is None and s.active() is None
    assert s.ui_language == "zh" and s.theme == "system" and s.compaction_share == 0.6
    assert s.load_warning is None


def test_round_trip():
    s = _sample()
    path = S.save_settings(s)
    assert path == home() / "settings.json" == S.settings_path()
    back = S.load_settings()
    assert back == s
    assert back.load_warning is None
    assert back.active().name == "deepseek"
    assert back.scribe().name == "ollama"
    # no temp files left behind
    assert sorted(p.name for p in home().iterdir()) == ["settings.json"]


def test_scribe_defaults_to_active_and_dangling_names_cleared():
    s = S.AppSettings(providers=[preset("deepseek")], active_provider="deepseek", scribe_provider=None)
    assert s.scribe().name == "deepseek"
    s2 = S.AppSettings.model_validate({"providers": [preset("openai").model_dump()], "active_provider": "gone",
                                       "scribe_provider": "gone too"})
    assert s2.active_provider is None and s2.scribe_provider is None and s2.scribe() is None


def test_duplicate_provider_names_rejected():
    with pytest.raises(ValueError):
        S.AppSettings(providers=[preset("ollama"), preset("ollama")])


def test_save_is_atomic_and_keeps_old_file_on_failure(monkeypatch):
    S.save_settings(_sample())
    before = S.settings_path().read_text("utf-8")

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(S.os, "replace", boom)
    with pytest.raises(OSError):
        S.save_settings(S.AppSettings(persona_name="changed"))
    assert S.settings_path().read_text("utf-8") == before
    assert sorted(p.name for p in home().iterdir()) == ["settings.json"]  # temp file removed


@pytest.mark.parametrize("content", [b"{not json", b"\xff\xfe\x00garbage", b"[1, 2, 3]", b""])
def test_corrupt_file_kept_aside_with_warning(content):
    S.settings_path().write_bytes(content)
    s = S.load_settings()
    assert s.providers == [] and s.active_provider is None
    assert s.load_warning and "settings.json" in s.load_warning
    broken = [p for p in home().iterdir() if p.name.startswith("settings.json.broken-")]
    assert len(broken) == 1
    assert broken[0].read_bytes() == content
    assert broken[0].name in s.load_warning
    assert not S.settings_path().exists()
    # the warning is not saved
    S.save_settings(s)
    assert "load_warning" not in json.loads(S.settings_path().read_text("utf-8"))
    # a second broken file does not overwrite the first one kept aside
    S.settings_path().write_bytes(b"{{{")
    S.load_settings()
    assert len([p for p in home().iterdir() if p.name.startswith("settings.json.broken-")]) == 2


def test_partly_invalid_file_keeps_the_valid_parts_and_never_echoes_values():
    good = preset("deepseek").model_dump()
    bad_url = {**preset("openai").model_dump(), "base_url": "ftp://nope"}
    with_key = {**preset("ollama").model_dump(), "api_key": KEY}  # a hand-edited key: extra field
    data = {"providers": [good, bad_url, with_key], "active_provider": "deepseek", "theme": "purple",
            "persona_name": "阿梨", "unknown_future_field": 1}
    S.settings_path().write_text(json.dumps(data), "utf-8")
    s = S.load_settings()
    assert [p.name for p in s.providers] == ["deepseek"]
    assert s.active_provider == "deepseek" and s.persona_name == "阿梨" and s.theme == "system"
    assert s.load_warning and "providers.1" in s.load_warning and "theme" in s.load_warning
    assert KEY not in s.load_warning and "ftp://nope" not in s.load_warning
    kept = [p for p in home().iterdir() if p.name.startswith("settings.json.broken-")]
    assert len(kept) == 1 and KEY in kept[0].read_text("utf-8")  # the user's file is kept as it was
    S.save_settings(s)
    assert KEY not in S.settings_path().read_text("utf-8")


def test_unknown_top_level_fields_are_ignored_without_warning():
    S.settings_path().write_text(json.dumps({"theme": "dark", "from_a_newer_version": True}), "utf-8")
    s = S.load_settings()
    assert s.theme == "dark" and s.load_warning is None


def test_no_key_ever_lands_in_the_file(mem_keyring, monkeypatch):
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-env-" + KEY)
    S.store_key("openai", KEY)
    S.remember_key_for_session("ollama", "sk-session-" + KEY)
    s = _sample()
    s.providers.append(preset("openai"))
    with pytest.raises(ValueError):
        ProviderSettings(**preset("openai").model_dump(), api_key=KEY)  # there is no field for it
    S.save_settings(s)
    text = S.settings_path().read_text("utf-8")
    assert KEY not in text and "sk-" not in text
    assert "api_key\"" not in text  # only api_key_env exists
    assert mem_keyring.store[("liyuan-desktop", "openai")] == KEY


# ---------------------------------------------------------------------------------------------------------------
# keys


def test_key_storage_status_fail_and_null_backends():
    ok, msg = S.key_storage_status()
    assert ok is False and "钥匙串" in msg and "环境变量" in msg
    keyring.set_keyring(null.Keyring())
    assert S.key_storage_status()[0] is False


def test_key_storage_status_usable_backend(mem_keyring):
    ok, msg = S.key_storage_status()
    assert ok is True and "钥匙串" in msg


def test_key_storage_status_error(monkeypatch):
    def broken():
        raise RuntimeError("backend exploded")

    monkeypatch.setattr(keyring, "get_keyring", broken)
    ok, msg = S.key_storage_status()
    assert ok is False and "RuntimeError" in msg


def test_resolve_key_order_env_keyring_session(mem_keyring, monkeypatch):
    p = preset("deepseek")
    assert S.resolve_key(p) is None and S.key_source(p) == "none"

    S.remember_key_for_session("deepseek", "sk-session")
    assert S.resolve_key(p) == "sk-session" and S.key_source(p) == "session"

    mem_keyring.set_password("liyuan-desktop", "deepseek", "sk-keyring")
    assert S.resolve_key(p) == "sk-keyring" and S.key_source(p) == "keyring"

    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-env")
    assert S.lookup_key(p) == ("env", "sk-env")

    monkeypatch.setenv("DEEPSEEK_API_KEY", "   ")  # blank env var does not count
    assert S.resolve_key(p) == "sk-keyring"


def test_resolve_key_uses_the_provider_keyring_service(mem_keyring):
    p = preset("openai")
    p.keyring_service = "other-service"
    mem_keyring.set_password("liyuan-desktop", "openai", "wrong")
    mem_keyring.set_password("other-service", "openai", "right")
    assert S.resolve_key(p) == "right"


def test_file_fallback_without_keyring():
    """Issue 16: without a keyring the key goes to the user-only key file (tests/test_secrets.py: mode, restart)."""
    p = preset("openai")
    assert S.store_key("openai", "  sk-typed  ") == "file"
    assert S.resolve_key(p) == "sk-typed" and S.key_source(p) == "file"
    S.forget_key("openai")
    assert S.resolve_key(p) is None
    with pytest.raises(ValueError):
        S.store_key("openai", "  ")


def test_session_fallback_when_the_key_file_cannot_be_written(tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    monkeypatch.setenv("LIYUAN_HOME", str(blocker / "home"))  # cannot be created: a file is in the way
    p = preset("openai")
    assert S.store_key("openai", "  sk-typed  ") == "session"
    assert S.resolve_key(p) == "sk-typed" and S.key_source(p) == "session"
    S.forget_session_key("openai")
    assert S.resolve_key(p) is None


def test_store_key_prefers_keyring_and_drops_session_copy(mem_keyring):
    S.remember_key_for_session("openai", "old-session")
    assert S.store_key("openai", "sk-new") == "keyring"
    assert S.session_key("openai") is None
    assert S.resolve_key(preset("openai")) == "sk-new"


def test_store_key_falls_back_when_keyring_refuses(monkeypatch):
    class Refusing(MemoryKeyring):
        def set_password(self, service, username, password):
            raise RuntimeError("locked")

    keyring.set_keyring(Refusing())
    assert S.store_key("openai", "sk-x") == "file"
    assert S.resolve_key(preset("openai")) == "sk-x"


def test_rename_and_forget_key(mem_keyring):
    S.store_key("deepseek", "sk-a")
    S.remember_key_for_session("deepseek", "sk-s")
    S.rename_key("deepseek", "ds-work")
    assert mem_keyring.get_password("liyuan-desktop", "ds-work") == "sk-a"
    assert mem_keyring.get_password("liyuan-desktop", "deepseek") is None
    assert S.session_key("ds-work") == "sk-s" and S.session_key("deepseek") is None
    S.forget_key("ds-work")
    assert S.resolve_key(S.KeyProbe("ds-work", None)) is None


# ---------------------------------------------------------------------------------------------------------------
# connection test


def _provider(srv: ScriptedServer) -> ProviderSettings:
    return ProviderSettings(name="local", base_url=srv.base_url, model="test-model", api_key_env="LIYUAN_TEST_KEY")


async def test_connection_success_reports_latency_and_model(server):
    server.script(sse_reply(chunk(role="assistant", content="p", model="served-model-1"),
                            chunk(finish="length", model="served-model-1")))
    report = await S.test_connection(_provider(server), KEY)
    assert report.ok is True and report.kind is None
    assert report.model == "served-model-1"
    assert isinstance(report.latency_ms, int) and 0 <= report.latency_ms < 10_000
    assert report.message == f"连接成功 · {report.latency_ms} ms · served-model-1"
    (req,) = server.requests
    body = req.json
    assert body["messages"] == [{"role": "user", "content": "ping"}]
    assert body["max_tokens"] == 1 and "tools" not in body and body["model"] == "test-model"
    assert req.headers["authorization"] == f"Bearer {KEY}"


async def test_connection_401_reports_auth_message_without_key(server):
    server.script(json_reply({"error": {"message": f"Incorrect API key provided: {KEY}", "code": "invalid_api_key"}},
                             status=401))
    report = await S.test_connection(_provider(server), KEY)
    assert report.ok is False and report.kind == "auth" and report.latency_ms is None
    assert "API key 无效或无权限 (401)" in report.message
    assert KEY not in report.message and "***" in report.message
    assert len(server.requests) == 1  # no retries


async def test_connection_404_and_no_retry_on_503(server):
    server.script(json_reply({"error": {"message": "model not found"}}, status=404))
    report = await S.test_connection(_provider(server), "")
    assert report.kind == "not_found" and "404" in report.message
    assert "authorization" not in server.requests[0].headers  # "" sends no key

    server.script(json_reply({"error": {"message": "overloaded"}}, status=503))
    report = await S.test_connection(_provider(server), None)
    assert report.kind == "server" and len(server.requests) == 2


async def test_connection_none_key_uses_resolve_key(server, monkeypatch):
    monkeypatch.setenv("LIYUAN_TEST_KEY", "sk-from-env")
    server.script(sse_reply(chunk(content="p", finish="stop")))
    report = await S.test_connection(_provider(server), None)
    assert report.ok
    assert server.requests[0].headers["authorization"] == "Bearer sk-from-env"


async def test_connection_network_error_and_client_closed(monkeypatch):
    closed = []
    original = S.build_model

    def spy(*a, **k):
        m = original(*a, **k)
        orig_close = m.aclose

        async def aclose():
            closed.append(True)
            await orig_close()

        m.aclose = aclose
        return m

    monkeypatch.setattr(S, "build_model", spy)
    import socket

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there now
    p = ProviderSettings(name="x", base_url=f"http://127.0.0.1:{port}/v1", model="m", connect_timeout=2)
    report = await S.test_connection(p, KEY)
    assert report.ok is False and report.kind == "network"
    assert "无法连接模型服务器" in report.message and KEY not in report.message
    assert closed == [True]


def test_test_connection_is_not_collected_as_a_test():
    assert S.test_connection.__test__ is False
