"""The app on the demo corpus with the real models: the quote before the model's sentence,
sources, a QA hit for a paraphrase, and the cache screen's counts afterwards."""

from __future__ import annotations

import copy
import re

import pytest
from textual.widgets import Static

from assistant.home import open_home
from assistant.services import Services
from assistant.tui.app import make_app
from assistant.tui.messages import AnswerFinished, QuoteShown
from assistant.tui.screens.cache import CacheScreen
from assistant.tui.widgets.sources import SourceItem
from tests.assistant.tui.conftest import SIZE, wait_for
from tests.assistant.tui.test_cache import rows
from tests.assistant.tui.test_chat import ask, badge, line

pytestmark = [pytest.mark.slow, pytest.mark.asyncio]


@pytest.fixture
def fresh_cache_context(demo_context, tmp_path) -> Services:
    """The session's demo knowledge bank with an empty cache of its own."""
    settings = copy.deepcopy(demo_context.settings)
    settings.answer.max_tokens = 40
    return Services(
        home=open_home(tmp_path / "home"),
        settings=settings,
        store=demo_context.store,
        _embedder=demo_context.embedder,
        _retriever=demo_context.retriever,
    )


async def test_real_answer_then_paraphrase_hits_the_qa_bank(fresh_cache_context):
    app = make_app(fresh_cache_context)
    seen: dict[int, str] = {}  # a message is seen again as it bubbles up: keyed by id

    def hook(message) -> None:
        if isinstance(message, (QuoteShown, AnswerFinished)):
            seen.setdefault(id(message), type(message).__name__)

    async with app.run_test(size=SIZE, message_hook=hook) as pilot:
        first = await ask(pilot, "When does the kitchen work start?")
        await wait_for(pilot, lambda: not first.running, timeout=180)
        assert list(seen.values()) == ["QuoteShown", "AnswerFinished"]  # the quote came first
        assert badge(first).startswith("QA-bank miss · KV 0/")
        quote = line(first, "quote")
        assert quote and quote.startswith("“") and line(first, "mail").startswith("— ")
        assert "kitchen" in (quote + line(first, "mail")).lower()
        sources = [item.source for item in app.screen.query(SourceItem)]
        assert 1 <= len(sources) <= 3 and all(s.title for s in sources)
        assert sum(item.has_class("quoted") for item in app.screen.query(SourceItem)) == 1

        second = await ask(pilot, "when does the kitchen work start")
        await wait_for(pilot, lambda: not second.running, timeout=60)
        assert badge(second).startswith("QA-bank hit · KV 0/0")
        assert second.text == first.text
        assert [item.source for item in app.screen.query(SourceItem)] == sources

        await pilot.press("ctrl+b")
        screen = app.screen
        assert isinstance(screen, CacheScreen)
        await wait_for(pilot, lambda: screen.stats is not None, timeout=60)
        shown = rows(screen)
        assert shown["QA bank"].startswith("1 entry: 1 answered")
        assert shown["QA hits"].startswith("1 answer")
        assert screen.stats.kv["nodes_with_kv"] == 4  # system prompt + 3 chunks
        assert shown["This session"].startswith("2 questions · QA hits 1 (50%)")
        assert "KB of" in shown["KV tree"] or "MB of" in shown["KV tree"]
        assert shown["Last precompute"] == "never"
        assert shown["Job queue"].endswith("0 done · 0 failed")

        await pilot.press("p")  # precompute now, with the real runner; stopped after a job
        status = screen.query_one("#precompute-status", Static)
        # any job's report: one poll of the screen can outlast a short job's "1/" line
        await wait_for(pilot, lambda: bool(re.match(r"Precompute: \d+/", str(status.content))), 180)
        await pilot.press("s")
        await wait_for(pilot, lambda: str(status.content).startswith("Precompute ran"), 180)
        assert str(status.content).endswith("stopped: cancelled")
        await wait_for(pilot, lambda: rows(screen)["Last precompute"] != "never", 60)
        assert rows(screen)["Last precompute"].endswith("stopped: cancelled")
        assert not rows(screen)["Job queue"].endswith("0 done · 0 failed")
