"""Esc or quitting while the model computes the prompt (its prefill: seconds on a large prompt)
stops the answer within a piece of it: the stop reached the model only between the answer's
events, so the app waited for the whole prefill, and after Ctrl+Q the process stayed until it
ended."""

from __future__ import annotations

import time

import pytest

from tests.assistant.tui.conftest import SIZE, asked, wait_for
from tests.assistant.tui.test_chat import DEMOLITION, QUOTE, SENTENCE, badge, line

pytestmark = pytest.mark.asyncio

PREFILL = 5.0  # seconds the fake model's prefill takes, unless stopped


async def test_escape_during_the_prefill_stops_the_answer_at_once(rig):
    rig.pipeline.prefill, rig.pipeline.reply = PREFILL, SENTENCE
    async with rig.app.run_test(size=SIZE) as pilot:
        turn = await asked(pilot, DEMOLITION)
        await wait_for_prefill(pilot, rig)
        pressed = time.perf_counter()
        await pilot.press("escape")
        await wait_for(pilot, lambda: not turn.running, timeout=2.0)
        assert time.perf_counter() - pressed < 1.0
        assert rig.pipeline.model.stopped == 1
        assert turn.has_class("stopped") and "stopped after" in badge(turn)
        assert rig.pipeline.qa.stats()["entries"] == 0  # nothing kept of it
        assert rig.pipeline.kv.stats()["nodes"] == 0

        rig.pipeline.prefill = 0.0  # the next question is answered as ever
        again = await asked(pilot, DEMOLITION)
        await wait_for(pilot, lambda: not again.running)
        assert line(again, "quote") == QUOTE and line(again, "sentence") == SENTENCE


async def test_quitting_during_the_prefill_ends_the_answer_with_the_app(rig):
    rig.pipeline.prefill = PREFILL
    async with rig.app.run_test(size=SIZE) as pilot:
        await asked(pilot, DEMOLITION)
        await wait_for_prefill(pilot, rig)
        quit_at = time.perf_counter()
        await pilot.press("ctrl+q")
    while rig.pipeline.model.stopped == 0 and time.perf_counter() - quit_at < 2.0:
        time.sleep(0.01)  # the answer's thread, which the process would wait for
    assert rig.pipeline.model.stopped == 1
    assert time.perf_counter() - quit_at < 1.0


async def wait_for_prefill(pilot, rig) -> None:
    """Until the fake model's first prefill has been under way a while."""
    await wait_for(pilot, lambda: rig.pipeline.model.prefills == 1)
    await pilot.pause(0.1)
