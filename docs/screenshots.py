"""Regenerate docs/chat.svg and docs/cache.svg: the app at 80x24 on a demo home, real models.

    assistant demo --home /tmp/demo-home          # once: import the demo corpus
    HF_HUB_OFFLINE=1 python3 docs/screenshots.py --home /tmp/demo-home

It asks two questions (generated; the second reuses the system prompt's KV), then a paraphrase of
the first (a QA-bank hit), and saves the chat screen; then it opens the cache screen, presses `p`
(precompute now), stops the run with `s` after --jobs jobs and saves that. Use a home whose cache
is empty (delete <home>/cache), so the first answers are generated, not served from the bank.
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from textual.widgets import Static

from assistant.services import open_services
from assistant.tui.app import make_app
from assistant.tui.screens.cache import CacheScreen
from assistant.tui.screens.chat import ChatScreen

DOCS = Path(__file__).resolve().parent
QUESTIONS = [
    "When does the kitchen work start?",
    "What did Priya notice in the RC2 soak test?",
    "when does the kitchen work start",
]


async def wait_for(pilot, condition, timeout: float = 300.0) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not condition():
        if loop.time() > end:
            raise TimeoutError("the app did not get there in time")
        await pilot.pause(0.1)


async def shoot(home: Path, theme: str, jobs: int) -> None:
    ctx = open_services(home)
    if not ctx.store.stats()["documents"]:
        raise SystemExit(f"{home} is empty: run `assistant demo --home {home}` first")
    app = make_app(ctx, theme)
    async with app.run_test(size=(80, 24)) as pilot:
        chat = app.screen
        assert isinstance(chat, ChatScreen)
        for question in QUESTIONS:
            await pilot.press(*question, "enter")
            await pilot.pause(0.2)
            await wait_for(pilot, lambda: not chat.answering)
        app.save_screenshot("chat.svg", str(DOCS))
        await pilot.press("ctrl+b")
        cache = app.screen
        assert isinstance(cache, CacheScreen)
        await wait_for(pilot, lambda: cache.stats is not None)
        await pilot.press("p")
        status = cache.query_one("#precompute-status", Static)
        await wait_for(pilot, lambda: str(status.content).startswith(f"Precompute: {jobs}/"), 900)
        await pilot.press("s")
        await wait_for(pilot, lambda: not cache.running, 900)
        await wait_for(pilot, lambda: cache.stats and cache.stats.precompute["last_run"])
        await pilot.pause(0.5)
        app.save_screenshot("cache.svg", str(DOCS))
    print(f"wrote {DOCS / 'chat.svg'} and {DOCS / 'cache.svg'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument(
        "--theme", default="textual-dark", choices=["textual-dark", "textual-light"]
    )
    parser.add_argument("--jobs", type=int, default=3, help="precompute jobs before the stop")
    args = parser.parse_args()
    asyncio.run(shoot(args.home, args.theme, args.jobs))


if __name__ == "__main__":
    main()
