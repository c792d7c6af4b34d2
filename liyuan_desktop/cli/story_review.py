"""``liyuan story review CHAT --chapter FILE [--json] [--local] [--provider NAME] [--model M] [--base-url URL]``: a
review turn on one chapter (issue 19 §4) through ``Chat.review_chapter`` — the local checks, then the configured model
(``--provider``, else the app's active provider; ``--model replay:FILE`` plays a recorded answer; ``--local`` skips
the model). Prints the findings (or the result as JSON); never edits the chapter. Registered by ``cli/story.py``.
"""

from __future__ import annotations

import argparse
import asyncio
from typing import TYPE_CHECKING, Any, Optional

from .common import dumps, open_chat, out, say, text

if TYPE_CHECKING:  # the engine is imported by the functions that use it: building the parser needs none of it
    from ..core.llm.types import ChatModel


def add_arguments(sp: argparse.ArgumentParser) -> None:
    """The arguments of ``story review`` (``chat`` and ``--json`` are added by the caller)."""
    sp.add_argument("--chapter", required=True, help=text("cli.help.story_review.0"))
    sp.add_argument("--local", action="store_true", help=text("cli.help.story_review.1"))
    sp.add_argument("--provider", help=text("cli.help.story_review.2"))
    sp.add_argument("--model", help=text("cli.help.story_review.3"))
    sp.add_argument("--base-url", dest="base_url", help=text("cli.help.story_review.4"))


def review_model(args: argparse.Namespace) -> Optional[ChatModel]:
    """The model ``args`` name (None with ``--local``). Raises ValueError (no model configured, unknown provider,
    missing API key, a bad replay file)."""
    if args.local:
        return None
    from ..core.llm import ReplayModel, build_model

    if args.model and args.model.startswith("replay:"):
        return ReplayModel.from_file(args.model[len("replay:"):])
    from ..core.llm import ProviderSettings, resolve_api_key
    from ..core.messages import message
    from ..core.settings import load_settings

    if args.provider:
        from .models import resolve_provider

        try:
            settings = resolve_provider(args.provider)
        except KeyError as e:
            raise ValueError(e.args[0]) from None
    else:
        found = load_settings().active()
        if found is None:
            raise ValueError(message("cli.no_model.review"))
        settings = found
    extra = {**({"base_url": args.base_url} if args.base_url else {}), **({"model": args.model} if args.model else {})}
    if extra:
        settings = ProviderSettings.model_validate({**settings.model_dump(), **extra})
    if settings.api_key_env and not resolve_api_key(settings):
        raise ValueError(message("cli.no_key", name=settings.name, env=settings.api_key_env))
    return build_model(settings)


def report(result: Any) -> str:
    """The text of a review result: a head line, then one line per finding."""
    from ..core.story.review import finding_line

    head = text("cli.out.review.head", file=result.file, n=len(result.findings),
                chapter=text("cli.out.review.chapter", n=result.chapter) if result.chapter else "")
    if result.suppressed:
        head += text("cli.out.review.suppressed", n=result.suppressed)
    lines = [head]
    if result.model_error:
        lines.append(text("cli.out.review.model_error", error=say(result.model_error)))
    for f in result.findings:
        lines.append(f"  {f.id}  {finding_line(f)}" + ("" if f.source == "local" else text("cli.out.review.by_model")))
    for p in result.problems:
        lines.append(text("cli.out.review.note", text=say(p)))
    if not result.findings:
        lines.append(text("cli.out.review.clean"))
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Run ``story review``; returns 0 (the findings printed; a failed model call still prints the local ones).
    Raises ValueError / KeyError / OSError / ToolError for the caller's one-line error (exit 2)."""
    chat = open_chat(args.chat)
    model = review_model(args)
    result = asyncio.run(chat.review_chapter(args.chapter, use_model=model is not None, model=model))
    if args.json:
        out(dumps(result.model_dump(), indent=1))
    else:
        out(report(result))
    return 0


__all__ = ["add_arguments", "review_model", "report", "run"]
