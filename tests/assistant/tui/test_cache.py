"""The Cache & scheduler screen: counts after a question, and "precompute now" with progress."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from textual.widgets import ProgressBar, Static

from assistant import services as services_module
from assistant.services import open_services
from assistant.tui.app import AssistantApp
from assistant.tui.backend import services_for
from assistant.tui.messages import CacheStatsRead
from assistant.tui.screens.cache import CacheScreen, cache_rows
from assistant.tui.tally import Tally
from cache.jobs import JobQueue
from cache.kv_tree import KVTree, segment_hash
from cache.qa_bank import QABank
from cache.runs import RunLog
from tests.assistant.tui.conftest import SIZE, make_services, wait_for
from tests.assistant.tui.fakes import FakeScheduler
from tests.assistant.tui.test_chat import ask


def rows(screen: CacheScreen) -> dict[str, str]:
    assert screen.stats is not None
    return dict(cache_rows(screen.stats, screen.services.kv_budget_bytes, screen.tally))


async def cache_screen(pilot) -> CacheScreen:
    """The Cache screen (ctrl+b), once its counts are read."""
    await pilot.press("ctrl+b")
    screen = pilot.app.screen
    assert isinstance(screen, CacheScreen)
    await wait_for(pilot, lambda: screen.stats is not None)
    return screen


@pytest.mark.asyncio
async def test_counts_after_a_question_and_precompute_now(rig):
    rig.pipeline.reply = "The tiles arrive on 9 March."  # confirms the quote: remembered
    async with rig.app.run_test(size=SIZE) as pilot:
        turn = await ask(pilot, "when do the tiles arrive")
        await wait_for(pilot, lambda: not turn.running)
        screen = await cache_screen(pilot)
        shown = rows(screen)
        assert shown["QA bank"].startswith("1 entry: 1 answered, 0 pending")
        assert shown["KV tree"].startswith("3 nodes (3 with KV) · 3 KB of 1.0 MB")
        assert shown["Predicted"].startswith("1 question waiting")
        assert shown["Last precompute"] == "never"
        assert shown["This session"].startswith("1 question · QA hits 0 (0%)")
        assert screen.query_one("#kv-bar", ProgressBar).progress == 3000

        await pilot.press("p")
        await wait_for(pilot, lambda: not screen.running)
        status = str(screen.query_one("#precompute-status", Static).content)
        assert status == "Precompute ran 1 jobs, stopped: done"
        bar = screen.query_one("#precompute-bar", ProgressBar)
        assert bar.percentage == 1.0 and not bar.has_class("idle")
        await wait_for(pilot, lambda: rows(screen)["QA bank"].startswith("2 entries"))
        shown = rows(screen)
        assert shown["Last precompute"].endswith("1 job · 1.5 s CPU · stopped: done")
        assert shown["Job queue"] == "0 queued · 1 done · 0 failed"


@pytest.mark.asyncio
async def test_stop_key_ends_the_run(loaded_store, tmp_path):
    questions = [f"question {i}" for i in range(5)]
    services, _, _ = make_services(loaded_store, tmp_path, questions=questions)
    precompute = services.precompute()
    second_job, release = threading.Event(), threading.Event()

    def hold_the_second_job(jobs_done: int) -> None:
        if jobs_done == 1:
            second_job.set()
            assert release.wait(10)

    precompute.before_job = hold_the_second_job
    app = AssistantApp(services)
    async with app.run_test(size=SIZE) as pilot:
        screen = await cache_screen(pilot)
        status = screen.query_one("#precompute-status", Static)
        await pilot.press("p")
        await wait_for(pilot, second_job.is_set)
        await wait_for(pilot, lambda: str(status.content).startswith("Precompute: 1/5"))
        await pilot.press("s")
        assert str(status.content) == "Precompute: stopping…"
        release.set()  # the held job ends; the run checks for the stop before the next
        await wait_for(pilot, lambda: not screen.running)
        assert str(status.content) == "Precompute ran 2 jobs, stopped: cancelled"
        assert precompute.questions == questions[2:]
        await wait_for(pilot, lambda: rows(screen)["Last precompute"].endswith("cancelled"))


@pytest.mark.asyncio
async def test_precompute_key_is_off_without_a_precompute(rig):
    rig.app.services.precompute = None
    async with rig.app.run_test(size=SIZE) as pilot:
        screen = await cache_screen(pilot)
        await pilot.press("p")
        assert not screen.running
        assert rows(screen)["Precompute"] == "not available in this build"


def test_session_tally_reads_as_rates():
    qa = {"entries": 2, "answered": 2, "pending": 0, "stale": 0, "hits": 1, "bytes": 2048}
    kv = {"nodes": 4, "nodes_with_kv": 3, "bytes": 3 * 2**20}
    tally = Tally(questions=4, qa_hits=1, kv_hits=2, reused_tokens=300, prompt_tokens=1200)
    shown = dict(cache_rows(CacheStatsRead(qa, kv, None), 6 * 2**20, tally))
    assert shown["This session"] == (
        "4 questions · QA hits 1 (25%) · KV reused in 2 of 3 generated (25% of prompt tokens)"
    )
    assert shown["KV tree"] == "4 nodes (3 with KV) · 3.0 MB of 6.0 MB budget (50.0%)"
    assert shown["QA bank"] == "2 entries: 2 answered, 0 pending, 0 stale · 2 KB"


@pytest.mark.asyncio
async def test_the_idle_scheduler_runs_with_the_app_and_reports_on_the_cache_screen(rig):
    async with rig.app.run_test(size=SIZE) as pilot:
        scheduler = rig.app.scheduler
        assert scheduler.started and not scheduler.stopped
        assert rig.activity  # opening the app counts as activity
        await pilot.press("ctrl+b")
        screen = pilot.app.screen
        scheduler.play_run(jobs=3).join()
        idle = screen.query_one("#idle-status", Static)
        await wait_for(pilot, lambda: "Last idle precompute" in str(idle.content))
        assert str(idle.content) == "Last idle precompute: 3 jobs, stopped: cancelled"
    assert scheduler.stopped


@pytest.fixture
def no_model_loads(monkeypatch) -> list[str]:
    """Services' encoder, writer and answerer factories record the attempt and refuse: what
    tried to load a model is listed."""
    loads: list[str] = []

    def refuse(name: str):
        def made(*args, **kwargs):
            loads.append(name)
            raise RuntimeError(f"{name}: no model may load here")

        return made

    for name in ("make_embedder", "make_writer", "make_answerer"):
        monkeypatch.setattr(services_module, name, refuse(name))
    return loads


@pytest.mark.asyncio
async def test_the_counts_come_from_the_cache_db_and_load_no_model(tmp_path, no_model_loads):
    """The real wiring (services_for) over a home whose cache database holds entries, nodes of
    two models, jobs and a run: the screen shows them with no model loaded; `p` is what loads."""
    ctx = open_services(tmp_path / "home")
    db = ctx.cache_db
    bank = QABank(db, 0.95, 2**20)
    bank.add("when do the tiles arrive", np.array([1.0, 0.0], np.float32), "On 9 March.")
    bank.add("who lays the tiles", np.array([0.0, 1.0], np.float32), None, origin="predicted")
    path = [segment_hash([1]), segment_hash([2])]
    KVTree(db, ctx.blobs, "writer").store(path, 200, b"\0" * 3000)  # a node without KV on the way
    KVTree(db, ctx.blobs, "reader").store(path[:1], 100, b"\0" * 1000)
    queue = JobQueue(db)
    queue.enqueue("decode", "decode:1")
    queue.enqueue("decode", "decode:2")
    queue.finish(queue.claim(), 0.5)
    runs = RunLog(db)
    runs.close(runs.open(), 1, 0.5, "finished")

    services = services_for(ctx)
    services.idle = FakeScheduler  # the idle precompute is not this screen's doing
    async with AssistantApp(services).run_test(size=SIZE) as pilot:
        screen = await cache_screen(pilot)
        shown = rows(screen)
        assert shown["QA bank"].startswith("2 entries: 1 answered, 1 pending, 0 stale")
        assert shown["KV tree"].startswith("3 nodes (2 with KV) · 4 KB of")
        assert shown["Predicted"] == "1 question waiting for an answer"
        assert shown["Job queue"] == "1 queued · 1 done · 0 failed"
        assert shown["Last precompute"].endswith("1 job · 0.5 s CPU · stopped: finished")
        assert shown["Reranking"] == "auto → the fused order"
        assert no_model_loads == [] and not services.answerer.ready

        await pilot.press("p")  # a run needs the models: here they are refused
        status = screen.query_one("#precompute-status", Static)
        await wait_for(pilot, lambda: not screen.running)
        assert str(status.content).startswith("Precompute failed: make_embedder")
        assert no_model_loads == ["make_embedder"]


@pytest.mark.asyncio
async def test_a_setting_with_brackets_is_shown_as_written(rig):
    """The reranker's setting may be a folder's path: "[old]" vanished from the table (read as
    a style) and "[/]" ended the app with a markup error."""
    counts = rig.app.services.cache_counts

    def with_rerank():
        shown = counts()
        rerank = {"setting": "~/ce [old] [/]", "on": "~/ce", "summary": "no check yet"}
        shown.precompute["rerank"] = rerank
        return shown

    rig.app.services.cache_counts = with_rerank
    async with rig.app.run_test(size=SIZE) as pilot:
        await cache_screen(pilot)
        await pilot.pause()
        screen = "\n".join(s.text for s in pilot.app.screen._compositor.render_strips())
        assert "~/ce [old] [/] → ~/ce" in screen
