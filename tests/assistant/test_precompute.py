"""Idle-time precompute with the real models on a small mailbox: the population policy and the
conversions between layers, refresh of answers that new mail made stale, resuming after a kill,
and a user question pre-empting a running job."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time

import pytest

from assistant import events as p
from assistant.answer.answerer import NO_CACHE
from assistant.importing.importer import Importer
from assistant.precompute.runner import Precompute
from assistant.services import open_services
from cache.kv_tree import KIND
from tests.assistant.test_pipeline import MAILS
from tests.conftest import REPO, make_email, write_mbox

pytestmark = pytest.mark.slow

QUESTIONS = ["When does the kitchen demolition start?", "Which tiles did we choose?"]


def make_ctx(tmp_path, mails=MAILS, stride: int = 0):
    ctx = open_services(tmp_path / "home")
    ctx.settings.answer.context_chunks = 2
    ctx.settings.answer.max_tokens = 24
    ctx.settings.precompute.stride = stride
    msgs = [make_email(subject=s, body=b, msgid=f"<m{i}@x>") for i, (s, b) in enumerate(mails)]
    Importer(ctx.store, ctx.embedder).run([write_mbox(tmp_path / "box.mbox", msgs)])
    return ctx


def queue_questions(runner: Precompute, questions) -> None:
    for q in questions:
        runner.queue.enqueue("populate", f"populate:{q}", {"question": q, "origin": "test"}, 40)


def chunk_texts(pipe, question):
    vector = pipe.embedder.embed_batch([question])[0]
    return [h.record.text for h in pipe.select(question, vector)]


def test_verified_hits_have_the_night_answer_its_predicted_questions(tmp_path):
    """By default a stored answer is served from the evidence check's floor, far below τ: a
    predicted question answered at night can serve a morning question worded otherwise, so the
    night decodes its predictions (strategy 2) instead of leaving them pending."""
    ctx = make_ctx(tmp_path)
    assert ctx.settings.cache.qa_verify == "evidence"
    pipe = ctx.answerer()
    assert pipe.qa.threshold >= ctx.settings.precompute.decode_cutoff  # τ alone: strategy 1
    runner = Precompute(ctx.precompute_parts(), settle_seconds=0)
    assert runner.handlers.serving_floor() == ctx.settings.cache.qa_evidence_threshold
    queue_questions(runner, QUESTIONS)
    report = runner.run()
    assert report.by_kind.get("populate") == 2 and report.failed == 0
    entries = {e.question: e for e in pipe.qa.entries()}
    for question in QUESTIONS:  # answered, with the quote's lines the evidence check compares
        assert entries[question].answer is not None and entries[question].evidence


def answer_text(events) -> str:
    return "".join(e.text for e in events if isinstance(e, p.TokenStreamed))


def test_strategy_1_leaves_pending_entries_then_kv_to_qa_when_tau_falls(tmp_path):
    ctx = make_ctx(tmp_path)
    ctx.settings.cache.reuse = "exact"  # prefix paths; any-order: test_precompute_plan
    ctx.settings.cache.qa_verify = "off"  # a stored answer is served by cosine ≥ τ alone
    pipe = ctx.answerer()
    assert pipe.qa.threshold >= ctx.settings.precompute.decode_cutoff
    runner = Precompute(ctx.precompute_parts(), settle_seconds=0)
    queue_questions(runner, QUESTIONS)
    report = runner.run()
    assert report.by_kind.get("populate") == 2
    entries = pipe.qa.entries()
    assert [e.answer for e in entries] == [None, None]  # strategy 1: prefilled, not decoded
    assert all(pipe.cache.kv_cached(chunk_texts(pipe, q)) for q in QUESTIONS)

    pipe.qa.threshold = 0.85  # τ now below the cutoff: pending entries are decoded
    report = Precompute(ctx.precompute_parts(), settle_seconds=0).run()
    assert report.by_kind.get("decode") == 2
    for entry in pipe.qa.entries():
        vector = pipe.qa.vector(entry.id)
        hits = pipe.select(entry.question, vector)
        naive = answer_text(pipe.generate(entry.question, vector, hits, NO_CACHE))
        assert entry.answer == naive.strip() and entry.answer


def test_qa_to_kv_rebuilds_an_evicted_prefix_when_there_is_room(tmp_path):
    ctx = make_ctx(tmp_path)
    pipe = ctx.answerer()
    list(pipe.answer(QUESTIONS[0]))
    texts = chunk_texts(pipe, QUESTIONS[0])
    assert pipe.cache.kv_cached(texts)
    budget = pipe.kv.blobs.budgets[KIND]
    pipe.kv.blobs.budgets[KIND] = 0
    pipe.kv.blobs.evict(KIND)
    pipe.kv.blobs.budgets[KIND] = budget
    assert not pipe.cache.kv_cached(texts)

    report = Precompute(ctx.precompute_parts(), settle_seconds=0).run()
    assert report.by_kind.get("rebuild_kv") == 1
    assert pipe.cache.kv_cached(texts)


def test_chunk_nodes_let_an_unpredicted_question_restore_its_first_chunk(tmp_path):
    ctx = make_ctx(tmp_path)
    ctx.settings.cache.reuse = "exact"  # the first chunk restored, the answer token-identical
    pipe = ctx.answerer()
    texts = [r.text for r in ctx.store.chunk_records(ctx.store.chunk_ids())]
    ctx.settings.cache.kv_budget_mb = 0.001  # no room: no chunk node is queued
    assert (
        Precompute(ctx.precompute_parts(), settle_seconds=0).run().by_kind.get("chunk_kv") is None
    )
    ctx.settings.cache.kv_budget_mb = 2048

    report = Precompute(ctx.precompute_parts(), settle_seconds=0).run()
    assert report.by_kind.get("chunk_kv") == len(texts)
    assert all(pipe.cache.kv_cached([t]) for t in texts)
    assert pipe.lines.stored.count() == len(texts)  # the lines' vectors, kept too
    assert (
        Precompute(ctx.precompute_parts(), settle_seconds=0).run().by_kind.get("chunk_kv") is None
    )  # all done

    question = "Who is bringing the skip for the rubble?"  # never predicted, never asked
    segments = pipe.cache.segments(chunk_texts(pipe, question), question)
    embedded = record_embeds(pipe.embedder)
    events = list(pipe.answer(question))
    assert embedded == [[question]]  # the question only: its evidence's sentences were kept
    (reused,) = [e for e in events if isinstance(e, p.KVReused)]
    assert reused.reused_tokens == len(segments.prefix[0]) + len(segments.prefix[1])
    vector = pipe.embedder.embed_batch([question])[0]
    naive = pipe.generate(question, vector, pipe.select(question, vector), NO_CACHE)
    assert answer_text(events) == answer_text(naive)


def record_embeds(embedder) -> list[list[str]]:
    """From now on, the texts of each embed_batch call of the real `embedder`."""
    calls: list[list[str]] = []
    real = embedder.embed_batch

    def embed_batch(texts):
        calls.append(list(texts))
        return real(texts)

    embedder.embed_batch = embed_batch
    return calls


def test_with_reranking_on_precompute_fills_the_rerankers_document_kv(tmp_path):
    from assistant.rerank.doc_kv import KIND as DOC_KV

    ctx = make_ctx(tmp_path)
    ctx.settings.rerank, ctx.settings.precompute.chunk_nodes = "full", False
    ctx.settings.reranker.candidates, ctx.settings.reranker.n_threads = 4, 1
    pipe = ctx.answerer()
    texts = [r.text for r in ctx.store.chunk_records(ctx.store.chunk_ids())]

    report = Precompute(ctx.precompute_parts(), settle_seconds=0).run()
    assert report.by_kind.get("doc_kv") == len(texts)
    scorer = pipe.select.reranker._model("full")
    assert all(scorer.doc_kv.has(scorer.tokens.prefix(t)) for t in texts)
    stored = pipe.kv.blobs.count(DOC_KV)
    question = "Which tiles did we choose?"
    vector = pipe.embedder.embed_batch([question])[0]
    ordered = pipe.select(question, vector)  # reranked from the stored document KV
    assert pipe.kv.blobs.count(DOC_KV) == stored
    fresh = scorer.scores(question, [h.record.text for h in ordered], use_doc_kv=False)
    assert list(fresh) == sorted(fresh, reverse=True)  # the same order as computed afresh
    assert Precompute(ctx.precompute_parts(), settle_seconds=0).run().by_kind.get("doc_kv") is None


def test_new_mail_that_answers_an_old_question_makes_it_stale_and_it_is_refreshed(tmp_path):
    ctx = make_ctx(tmp_path)
    pipe = ctx.answerer()
    question = "When will the roofers repair the roof?"
    list(pipe.answer(question))
    (entry,) = pipe.qa.entries()
    assert entry.answer is not None and not entry.stale
    pipe.qa.mark_judged(entry.id)  # as a reader's confirmed answer is

    news = make_email(
        subject="Roof repair",
        body="The roofers repair the roof on Thursday 14 May, starting at 7:30.",
        msgid="<roof@x>",
    )
    Importer(ctx.store, ctx.embedder).run([write_mbox(tmp_path / "new.mbox", [news])])
    new_chunk = ctx.store.max_chunk_id()
    vector = pipe.qa.vector(entry.id)
    assert pipe.memory.lookup(vector) is None  # not served any more
    assert pipe.qa.get(entry.id).stale

    report = Precompute(ctx.precompute_parts(), settle_seconds=0).run()
    assert report.by_kind.get("refresh") == 1
    refreshed = pipe.qa.get(entry.id)
    assert not refreshed.stale and str(new_chunk) in refreshed.sources
    # the night's answer, not judged by the reader: judged when first served, not "confirmed"
    assert entry.origin == "user" and refreshed.origin == "refreshed" and not refreshed.judged
    hit = pipe.memory.lookup(vector)
    assert hit is not None and hit.entry.id == entry.id


def test_a_killed_precompute_resumes_without_redoing_finished_jobs(tmp_path):
    ctx = make_ctx(tmp_path)
    runner = Precompute(ctx.precompute_parts(), settle_seconds=0)
    questions = [f"What happens with the {w}?" for w in ("kitchen", "tiles", "wedding", "radio")]
    queue_questions(runner, questions)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "ASSISTANT_PRECOMPUTE_STRIDE": "0"}
    cmd = [sys.executable, "-m", "assistant.cli", "precompute", "--home", str(ctx.home.root)]
    db = ctx.home.cache_dir / "qa.db"
    proc = subprocess.Popen(cmd, env=env, cwd=REPO, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 300
        while _done(db) < 2 and time.time() < deadline and proc.poll() is None:
            time.sleep(0.2)
        assert _done(db) >= 2, "the first run never finished two jobs"
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait()
    before = _jobs(db)
    subprocess.run(cmd, env=env, cwd=REPO, check=True, capture_output=True, timeout=600)
    after = _jobs(db)
    for key, (state, attempts) in before.items():
        if state == "done":
            assert after[key] == ("done", attempts)  # not run again
    assert all(state == "done" for state, _ in after.values())
    rows = sqlite3.connect(db).execute("SELECT question FROM qa_entries").fetchall()
    assert sorted(r[0] for r in rows) == sorted(questions)  # each once
    assert sqlite3.connect(db).execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def _done(db) -> int:
    try:
        con = sqlite3.connect(db, timeout=5)
        return con.execute("SELECT count(*) FROM jobs WHERE state = 'done'").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


def _jobs(db) -> dict[str, tuple[str, int]]:
    rows = sqlite3.connect(db).execute("SELECT key, state, attempts FROM jobs").fetchall()
    return {k: (s, a) for k, s, a in rows}


def test_a_user_question_preempts_a_running_job(tmp_path):
    ctx = make_ctx(tmp_path)
    pipe = ctx.answerer()
    question = "Who found the battery bug?"
    vector = pipe.embedder.embed_batch([question])[0]
    hits = pipe.select(question, vector)
    reference = answer_text(pipe.generate(question, vector, hits, NO_CACHE))

    pipe.qa.threshold = 0.5  # below the cutoff: strategy 2, the background job decodes
    ctx.settings.precompute.chunk_nodes = False  # the one job is the decoding one
    runner = Precompute(ctx.precompute_parts(), settle_seconds=0)
    # several long jobs: one is running whenever the user asks, however soon the model ends one
    topics = ("the kitchen", "the tiles", "the wedding", "the roof", "the battery", "the boards")
    queue_questions(runner, [f"Tell me everything about {t} and what comes next?" for t in topics])
    released = []
    release = runner.queue.release
    runner.queue.release = lambda job: (released.append(job.key), release(job))
    answer = ctx.settings.answer
    shipped = (answer.max_sentences, answer.repeat_guard)
    # a background decode far longer than the user's: no sentence limit (the job asks for one
    # sentence; here it is told none), no repeat stop
    answer.max_tokens, answer.max_sentences, answer.repeat_guard = 2000, 0, "off"
    draft = runner.cache.draft
    runner.cache.draft = lambda *a, **k: draft(*a, **{**k, "sentences": 0})
    worker = threading.Thread(target=runner.run)
    worker.start()
    db = ctx.home.cache_dir / "qa.db"
    while not _running(db):
        time.sleep(0.05)
    time.sleep(3.0)  # the job is decoding now (its token budget was read when it began)
    answer.max_tokens = 24  # for the user, and for the job when it runs again
    answer.max_sentences, answer.repeat_guard = shipped
    pipe.qa.threshold = pipe.qa.candidate_threshold = 2.0  # the model answers: no bank hit
    events = list(pipe.answer(question, NO_CACHE))  # the jobs' KV nodes would be reused
    assert released, "the background job did not step aside"
    assert answer_text(events) == reference
    worker.join(timeout=600)
    assert not worker.is_alive()
    assert runner.queue.state_of(released[0]) == "done"


def _one_endless_decode(tmp_path) -> tuple[Precompute, list[str]]:
    """A run whose one job decodes far longer than any test waits (no limit, no stop), and the
    keys of the jobs it puts back in the queue."""
    ctx = make_ctx(tmp_path)
    ctx.answerer().qa.threshold = 0.5  # below the cutoff: strategy 2, the job decodes
    ctx.settings.precompute.chunk_nodes = False  # the one job is the decoding one
    runner = Precompute(ctx.precompute_parts(), settle_seconds=0)
    queue_questions(runner, ["Tell me everything about the kitchen and what comes next?"])
    released: list[str] = []
    release = runner.queue.release
    runner.queue.release = lambda job: (released.append(job.key), release(job))
    answer = ctx.settings.answer
    answer.max_tokens, answer.max_sentences, answer.repeat_guard = 2000, 0, "off"
    draft = runner.cache.draft
    runner.cache.draft = lambda *a, **k: draft(*a, **{**k, "sentences": 0})
    return runner, released


def test_the_deadline_stops_a_running_job_within_a_piece(tmp_path):
    """A night's end comes inside a job (one long at the 1.5B pace): the job steps aside as for a
    user question, goes back in the queue for the next run, and the run stops there."""
    runner, released = _one_endless_decode(tmp_path)
    report = runner.run(deadline=time.time() + 3.0)
    assert report.stopped == "deadline"
    assert released and runner.queue.state_of(released[0]) == "queued"
    assert runner.cache.stop_at is None  # the user's questions know no deadline


def test_a_stopped_run_stops_a_running_job_within_a_piece(tmp_path):
    """The app quits or the user presses stop (`cancelled`) inside a job: the job steps aside
    within a piece and goes back in the queue, as at a deadline, instead of decoding on (at the
    1.5B pace, minutes) with the app's window already gone."""
    runner, released = _one_endless_decode(tmp_path)
    stop_at = time.time() + 3.0
    report = runner.run(cancelled=lambda: time.time() >= stop_at)
    assert report.stopped == "cancelled" and time.time() - stop_at < 30
    assert released and runner.queue.state_of(released[0]) == "queued"
    assert runner.cache.cancelled is None  # the user's questions are not stopped by it


def test_a_night_ends_at_its_deadline_while_a_question_waits_and_a_stale_marker_holds_nothing(
    tmp_path,
):
    """A busy marker the app left when the power went, whose pid is another process's after the
    reboot, held every night still (waiting for that "question" past its end, for ever). Now the
    stale marker holds nothing back, and even a question that stays in progress lets the night
    end at its deadline."""
    ctx = make_ctx(tmp_path)
    runner = Precompute(ctx.precompute_parts(), settle_seconds=0)
    done: list = []

    def night(seconds: float) -> threading.Thread:
        thread = threading.Thread(target=lambda: done.append(runner.run(time.time() + seconds)))
        thread.start()
        return thread

    other = subprocess.Popen(["sleep", "600"])  # the dead app's pid, someone else's now
    try:
        (ctx.presence.run_dir / f"busy-{other.pid}-0").touch()
        night(120).join(60)
        assert done and done[0].stopped == "finished" and done[0].jobs_done > 0
    finally:
        other.kill()  # (before the fix: lets the stuck night go)
        other.wait()
    runner.queue.enqueue("populate", "populate:late", {"question": QUESTIONS[0], "origin": "t"})
    with ctx.presence.busy():  # a question in progress the whole time
        night(1.0).join(30)
        assert len(done) == 2 and done[1].stopped == "deadline"
    assert runner.queue.state_of("populate:late") == "queued"


def _running(db) -> bool:
    con = sqlite3.connect(db, timeout=5)
    return con.execute("SELECT count(*) FROM jobs WHERE state = 'running'").fetchone()[0] > 0


def test_the_idle_scheduler_runs_a_pass_once_the_user_is_away(tmp_path):
    from assistant.precompute.idle import IdleScheduler

    ctx = make_ctx(tmp_path)
    ctx.settings.precompute.idle_minutes = 0.0
    ctx.settings.precompute.settle_seconds = 0.0
    runner = Precompute(ctx.precompute_parts(), settle_seconds=0)
    queue_questions(runner, QUESTIONS[:1])
    report = IdleScheduler(ctx.settings.precompute, ctx.presence, ctx.precompute_parts).tick()
    assert report is not None and report.by_kind.get("populate") == 1
    stats = ctx.answerer().qa.stats()  # verified hits (the default): the prediction is answered
    assert stats["answered"] == 1 and stats["pending"] == 0


def test_history_based_prediction_writes_questions_in_the_users_style(tmp_path):
    from assistant.precompute.prediction_jobs import openers

    assert openers(["when is x?", "When is y?", "who is z?"]) == ["When", "Who"]
    ctx = make_ctx(tmp_path, stride=8)
    ctx.settings.precompute.history_share = 0.5
    pipe = ctx.answerer()
    for question in ("When does the kitchen demolition start?", "When is Elin's wedding?"):
        list(pipe.answer(question))
    report = Precompute(ctx.precompute_parts(), settle_seconds=0).run()
    assert report.by_kind.get("predict_history") == 1
    predicted = [e for e in pipe.qa.entries() if e.origin == "predicted:history"]
    assert predicted, "no usable question from the user's history"
    assert all(e.question.startswith("When ") for e in predicted)
    asked = {e.question for e in pipe.qa.entries() if e.origin == "user"}
    assert not asked & {e.question for e in predicted}


def test_a_night_answer_keeps_its_evidence_serves_a_paraphrase_and_rechecks_it(tmp_path):
    ctx = make_ctx(tmp_path)
    pipe = ctx.answerer()
    runner = Precompute(ctx.precompute_parts(), settle_seconds=0)
    question = "When does the kitchen demolition start?"
    entry_id = pipe.memory.remember(question, pipe.embedder.embed_batch([question])[0], None,
                                    [], "predicted")  # fmt: skip
    runner.queue.enqueue("decode", f"decode:{entry_id}", {"entry": entry_id}, 45)
    runner.run()
    entry = pipe.qa.get(entry_id)
    assert entry.answer is not None and entry.evidence  # the quote's lines, kept
    assert "2 March" in entry.evidence[0][1]
    pipe.verifier.same = lambda stored, asked: True  # the reader's "same question", stood in
    events = list(pipe.answer("When will the kitchen demolition begin?"))
    assert events[-1].qa_hit  # a paraphrase, served by its quote
    assert [s.entry_id for s in pipe.qa.unchecked(5)] == [entry_id]
    report = Precompute(ctx.precompute_parts(), settle_seconds=0).run()
    assert report.by_kind.get("qa_selfcheck") == 1
    assert pipe.qa.unchecked(5) == []  # the night answered it afresh
