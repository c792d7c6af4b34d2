"""``liyuan models``: what the configured providers can do, and which local model servers are running (issue 18).

    liyuan models probe [PROVIDER] [--json]   probe a provider (default: the active one) with two tiny requests
                                              and its server's metadata; the result is stored with the provider
    liyuan models local [--json]              ask the usual local servers on loopback (Ollama, LM Studio,
                                              llama.cpp, KoboldCpp, vLLM, text-generation-webui, Jan)
    liyuan models list [PROVIDER] [--json]    the model names a provider's server lists (/v1/models)

Also home of :func:`resolve_provider`, the one lookup of ``--provider NAME`` for every subcommand: a provider
configured in the settings (base URL, context size, timeouts, scribe model, extra body, caps) first, else a
built-in preset. Exit codes: 0 ok; 1 the probe or listing failed; 2 bad input (unknown provider).
"""

from __future__ import annotations

import argparse
import asyncio
from typing import TYPE_CHECKING, Any

from .common import dumps, language, msg, out, say, text

if TYPE_CHECKING:  # the engine is imported by the functions that use it: building the parser needs none of it
    from ..core.llm.providers import ProviderSettings


def resolve_provider(name: str) -> ProviderSettings:
    """The provider ``--provider NAME`` means under the app settings (core/chat/build.py
    :func:`provider_settings`: the configured one, else the built-in preset). KeyError when neither exists."""
    from ..core.chat.build import provider_settings
    from ..core.settings import load_settings

    return provider_settings(load_settings(), name)


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register ``models`` with its ``probe``, ``local`` and ``list`` subcommands; returns its parser."""
    m = sub.add_parser("models", help=text("cli.help.models.0"))
    msub = m.add_subparsers(dest="models_cmd")
    pr = msub.add_parser("probe", help=text("cli.help.models.1"))
    pr.add_argument("provider", nargs="?", help=text("cli.help.models.2"))
    pr.add_argument("--json", action="store_true", help=text("cli.help.models.3"))
    lo = msub.add_parser("local", help=text("cli.help.models.4"))
    lo.add_argument("--json", action="store_true", help=text("cli.help.models.5"))
    ls = msub.add_parser("list", help=text("cli.help.models.6"))
    ls.add_argument("provider", nargs="?", help=text("cli.help.models.7"))
    ls.add_argument("--json", action="store_true", help=text("cli.help.models.8"))
    return m


def _chosen(name: str | None) -> ProviderSettings:
    from ..core.settings import load_settings

    if name:
        return resolve_provider(name)
    active = load_settings().active()
    if active is None:
        raise KeyError(msg("cli.out.models.no_active"))
    return active


async def _probe(args: argparse.Namespace) -> int:
    from ..core.llm.capabilities import summary
    from ..core.provider_caps import probe_provider

    p = _chosen(args.provider)
    caps = await probe_provider(p)
    if args.json:
        out(dumps({"provider": p.name, **caps.model_dump(mode="json")}, indent=2))
    else:
        shown = caps.served_model or caps.model  # what the server runs (a llama.cpp preset's name is only a name)
        out(f"{p.name} · {shown} @ {caps.base_url}")
        for label, value in summary(caps, language()):
            out(text("cli.out.field", label=label, value=value))
        for note in caps.notes:
            out(f"  ※ {say(note)}")
    return 0 if caps.tools != "unknown" or caps.streaming is not None else 1


async def _local(args: argparse.Namespace) -> int:
    from ..core.llm.discovery import discover

    found = await discover()
    if args.json:
        out(dumps([s.model_dump(mode="json") for s in found], indent=2))
        return 0
    if not found:
        out(text("cli.out.models.none_local"))
        return 0
    for s in found:
        key = text("cli.out.models.needs_key") if s.needs_key else ""
        out(f"{s.label} · {s.base_url}{key}")
        for name in s.models:
            out(f"  - {name}")
        if not s.models:
            out(text("cli.out.models.no_models"))
    return 0


async def _list(args: argparse.Namespace) -> int:
    from ..core.llm.capabilities import list_models
    from ..core.settings import resolve_key

    p = _chosen(args.provider)
    names = await list_models(p.base_url, resolve_key(p))
    if args.json:
        out(dumps({"provider": p.name, "models": names}))
    else:
        for name in names:
            out(name)
    return 0 if names else 1


def run(args: argparse.Namespace) -> int:
    """Run ``liyuan models …``; returns the exit code (2 with one ``liyuan: …`` line for an unknown provider)."""
    import sys

    handlers = {"probe": _probe, "local": _local, "list": _list}
    handler = handlers.get(getattr(args, "models_cmd", None) or "")
    if handler is None:
        print(text("cli.out.models.usage"), file=sys.stderr)
        return 2
    try:
        return asyncio.run(handler(args))
    except KeyError as exc:
        print(f"liyuan: {say(exc.args[0]) if exc.args else exc}", file=sys.stderr)
        return 2
