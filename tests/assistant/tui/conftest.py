from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from textual.widgets import Input

from assistant.importing.importer import Importer
from assistant.tui.app import AssistantApp
from assistant.tui.backend import AppServices, Lazy
from assistant.tui.widgets.turn import Turn
from cache.counts import CacheCounts
from tests.assistant.tui.fakes import FakeAnswerer, FakePrecompute, FakeScheduler
from tests.conftest import DATA, FakeEmbedder, make_email, write_mbox

SIZE = (80, 24)


@pytest.fixture
def loaded_store(store, tmp_path):
    box = write_mbox(
        tmp_path / "box.mbox",
        [
            make_email(
                subject="Kitchen planning", body="Demolition starts Monday 2 March.", msgid="<k1@x>"
            ),
            make_email(
                subject="Tiles", body="The tiles arrive on 9 March, grey 30x60.", msgid="<k2@x>"
            ),
            make_email(
                subject="Electrician", body="Wiring is checked on 11 March.", msgid="<k3@x>"
            ),
            make_email(subject="Plumber", body="The plumber comes on 20 March.", msgid="<k4@x>"),
        ],
    )
    Importer(store, FakeEmbedder()).run([box])
    return store


def make_services(store, tmp_path, delay: float = 0.01, questions=("what about the tiles",)):
    pipeline = FakeAnswerer(store, tmp_path / "kv", delay)
    activity: list[int] = []
    precompute = FakePrecompute(pipeline, list(questions))
    services = AppServices(
        knowledge=store,
        answerer=Lazy(lambda: pipeline),
        importer=Lazy(lambda: Importer(store, FakeEmbedder())),
        precompute=lambda: precompute,
        demo_paths=[DATA / "mail" / "demo.mbox", DATA / "notes"],
        kv_budget_bytes=2**20,
        # the fakes' counts: their in-memory QA bank and KV tree, the fake precompute's queue
        cache_counts=lambda: CacheCounts(
            pipeline.qa.stats(), pipeline.kv.stats(), precompute.status()
        ),
        activity=lambda: activity.append(1),
        idle=FakeScheduler,
        browse_root=tmp_path,
    )
    return services, pipeline, activity


@dataclass
class Rig:
    app: AssistantApp
    pipeline: FakeAnswerer
    activity: list[int]


@pytest.fixture
def rig(loaded_store, tmp_path) -> Rig:
    services, pipeline, activity = make_services(loaded_store, tmp_path)
    return Rig(AssistantApp(services), pipeline, activity)


async def wait_for(pilot, condition: Callable[[], bool], timeout: float = 10.0) -> None:
    """Let the app run until `condition()` holds (workers post from threads)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not condition():
        if loop.time() > end:
            raise AssertionError(f"timed out waiting for {condition}")
        await pilot.pause(0.02)


async def asked(pilot, question: str) -> Turn:
    """The question put in the field whole (typed key by key it takes seconds) and sent."""
    pilot.app.screen.query_one("#question", Input).value = question
    await pilot.press("enter")
    return pilot.app.screen.query_one(f"#turn-{pilot.app.screen.turn}", Turn)
