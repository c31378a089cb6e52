"""The app's wiring (tui/backend.py's services_for over one Services) with the real models: a
manual precompute (the cache screen's `p`) and an idle one never run at once on the shared
cache connection, and a user question is answered while either runs."""

from __future__ import annotations

import logging
import threading

import pytest

from assistant import events as p
from assistant.precompute.runner import PrecomputeReport
from assistant.tui.backend import services_for
from cache.jobs import JobQueue
from tests.assistant.test_precompute import make_ctx
from tests.conftest import make_email, write_mbox

pytestmark = pytest.mark.slow

QUESTION = "When does the kitchen demolition start?"
WAITING = "waiting for the running precompute to stop"


class Pass:
    """A precompute pass on a thread of its own that holds still after its first job (inside
    `notify`, with the pass's lock held and the model free) until `go` is set."""

    def __init__(self) -> None:
        self.jobs: list[str] = []
        self.first_job = threading.Event()
        self.go = threading.Event()
        self.stop = threading.Event()
        self.report: PrecomputeReport | None = None

    def notify(self, event) -> None:
        self.jobs.append(event.job)
        if event.job != WAITING and not self.first_job.is_set():
            self.first_job.set()
            assert self.go.wait(240)

    def start(self, run) -> threading.Thread:
        def target() -> None:
            self.report = run(self)

        thread = threading.Thread(target=target)
        thread.start()
        return thread


def wired(tmp_path):
    ctx = make_ctx(tmp_path)
    ctx.settings.precompute.idle_minutes = 0  # the user counts as away at once
    ctx.settings.precompute.ac_only = False
    services = services_for(ctx)
    pipeline = services.answerer.get()
    queue = JobQueue(pipeline.qa.db)
    for q in ("Which tiles did we choose?", "Who is the electrician?", "What does it cost?"):
        queue.enqueue("populate", f"populate:{q}", {"question": q, "origin": "test"}, 40)
    return services, pipeline


def answered(pipeline) -> p.AnswerDone:
    events = list(pipeline.answer(QUESTION))
    assert isinstance(events[-1], p.AnswerDone) and events[-1].answer.strip()
    return events[-1]


def manual_run(services):
    return lambda run: services.precompute().run(None, run.notify, run.stop.is_set)


def test_an_idle_pass_does_not_start_while_a_manual_one_runs(tmp_path, caplog):
    services, pipeline = wired(tmp_path)
    manual = Pass()
    thread = manual.start(manual_run(services))
    assert manual.first_job.wait(240)
    idle = services.idle(lambda e: None, lambda r: None)
    with caplog.at_level(logging.INFO, logger="assistant.precompute.idle"):
        assert idle.tick() is None
    assert "idle precompute skipped" in caplog.text
    assert not answered(pipeline).qa_hit  # a user question while the manual pass runs
    manual.go.set()
    manual.stop.set()
    thread.join(240)
    assert manual.report is not None and manual.report.stopped == "cancelled"
    assert manual.report.jobs_done >= 1 and WAITING not in manual.jobs


def test_a_manual_pass_waits_for_the_idle_one_then_runs(tmp_path):
    services, pipeline = wired(tmp_path)
    idle_pass, manual = Pass(), Pass()
    reports: list[PrecomputeReport] = []
    idle = services.idle(idle_pass.notify, reports.append)
    idle_thread = idle_pass.start(lambda run: idle.tick())
    assert idle_pass.first_job.wait(240)
    manual_thread = manual.start(manual_run(services))
    assert answered(pipeline)  # a user question while the idle pass runs and the manual waits
    assert manual.jobs == [WAITING] and not manual.first_job.is_set()
    idle.shutdown()  # the idle pass stops after its job: the manual one's turn
    idle_pass.go.set()
    idle_thread.join(240)
    assert idle_pass.report is not None and idle_pass.report.stopped == "cancelled"
    assert reports == [idle_pass.report]
    assert manual.first_job.wait(240)  # it ran a job of its own
    manual.go.set()
    manual.stop.set()
    manual_thread.join(240)
    assert manual.report is not None and manual.report.stopped == "cancelled"
    assert manual.report.jobs_done >= 1


def test_a_waiting_manual_pass_can_be_stopped_before_its_turn(tmp_path):
    services, _ = wired(tmp_path)
    idle_pass, manual = Pass(), Pass()
    idle = services.idle(idle_pass.notify, lambda r: None)
    idle_thread = idle_pass.start(lambda run: idle.tick())
    assert idle_pass.first_job.wait(240)
    manual.stop.set()  # the user pressed `s` while it waited
    report = services.precompute().run(None, manual.notify, manual.stop.is_set)
    assert report.stopped == "cancelled" and report.jobs_done == 0 and manual.jobs == [WAITING]
    idle.shutdown()
    idle_pass.go.set()
    idle_thread.join(240)
    assert idle_pass.report is not None and idle_pass.report.jobs_done >= 1


def test_an_import_a_precompute_and_questions_write_at_once_on_the_shared_connections(tmp_path):
    """The app's threads share one connection per database: an import (its own transaction on
    knowledge.db), a manual precompute (claiming jobs in cache.db) and user questions (writing
    the QA bank and the KV tree) all at once lose nothing and corrupt nothing."""
    services, pipeline = wired(tmp_path)
    store = services.knowledge
    before = store.stats()["emails"]
    mails = [
        make_email(subject=f"Order {i}", body=f"Parcel {i} ships on day {i}.", msgid=f"<o{i}@x>")
        for i in range(30)
    ]
    box = write_mbox(tmp_path / "more.mbox", mails)
    imported: list = []
    importer = threading.Thread(target=lambda: imported.append(services.importer.get().run([box])))
    manual = Pass()
    manual.go.set()  # no holding still: it runs while the others write
    precompute = manual.start(manual_run(services))
    importer.start()
    asked = [answered(pipeline).question for _ in range(2)]
    importer.join(240)
    manual.stop.set()
    precompute.join(240)
    assert imported and imported[0].errors == [] and imported[0].added == 30
    stats = store.stats()
    assert stats["emails"] == before + 30 and stats["embedded_chunks"] == stats["chunks"]
    assert manual.report is not None and manual.report.failed == 0
    assert QUESTION in {e.question for e in pipeline.qa.entries()} and asked == [QUESTION] * 2
    for db in (store.db, pipeline.qa.db):
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
