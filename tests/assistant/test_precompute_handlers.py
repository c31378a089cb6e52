"""Precompute's handlers without a model: a predicted question is embedded once, when it is
queued; its populate job reads the vector from its payload."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from assistant.config import Settings
from assistant.config_sections import PrecomputeSettings
from assistant.precompute.handlers import FIT_LINES, Handlers
from cache.db import open_cache_db
from cache.jobs import Job, JobQueue
from cache.qa_bank import QABank
from tests.conftest import FakeEmbedder

QUESTIONS = ["When does the kitchen demolition start?", "Who gives the speech at the wedding?"]


def handlers(embedder: FakeEmbedder) -> tuple[Handlers, QABank, JobQueue]:
    db = open_cache_db(None)
    qa, queue = QABank(db, 0.9, 1 << 20), JobQueue(db)
    cache, memory = SimpleNamespace(embedder=embedder), SimpleNamespace(qa=qa)
    parts = Handlers(cache, None, memory, None, queue, None, None, PrecomputeSettings())
    return parts, qa, queue


def test_a_queued_question_is_not_embedded_again_by_its_populate_job():
    embedder = FakeEmbedder()
    parts, qa, queue = handlers(embedder)
    parts._queue_questions(QUESTIONS, "predicted:detail")
    assert embedder.calls == 1  # drop_known, one batch
    job = queue.claim()
    vector = embedder.embed_batch([job.payload["question"]])[0]
    qa.add(job.payload["question"], vector, "Monday.", ["1"], 1)  # stored since: nothing to do
    calls = embedder.calls
    parts.run(job)
    assert embedder.calls == calls
    assert np.array_equal(parts._unpacked(job.payload), vector)


def test_a_job_without_a_vector_or_from_another_encoder_embeds_its_question():
    embedder = FakeEmbedder()
    parts, qa, _ = handlers(embedder)
    vector = embedder.embed_batch([QUESTIONS[0]])[0]
    qa.add(QUESTIONS[0], vector, "Monday.", ["1"], 1)
    calls = embedder.calls
    parts._populate({"question": QUESTIONS[0], "origin": "test"})  # queued by an older version
    foreign = {"question": QUESTIONS[0], **parts._packed(vector), "encoder": "another"}
    assert np.array_equal(parts._unpacked(foreign), vector)
    assert embedder.calls == calls + 2


@pytest.mark.slow
def test_a_chunk_is_tokenised_once_for_the_plan_and_its_jobs(tmp_path, fake_embedder, monkeypatch):
    from assistant.llm import make_llm
    from tests.assistant.test_pipeline import build

    pipe = build(tmp_path, make_llm(Settings().llm), fake_embedder)
    db = pipe.qa.db
    parts = Handlers(
        pipe.cache, pipe.select, pipe.memory, pipe.store, JobQueue(db), None, None,
        PrecomputeSettings(),
    )  # fmt: skip
    chunk = pipe.store.chunk_records([1])[0]
    seen: list[str] = []
    tokenize = pipe.cache.llm.tokenize

    def counted(text: str, first: bool = False) -> list[int]:
        seen.append(text)
        return tokenize(text, first)

    monkeypatch.setattr(pipe.cache.llm, "tokenize", counted)
    assert not pipe.cache.kv_cached([chunk.text])  # the planner's check
    for _ in range(2):  # the second finds the node in the tree
        parts.run(Job(1, "chunk_kv", "chunk_kv:1:0", {"chunk": 1}, 22, 0))
    assert pipe.cache.kv_cached([chunk.text])
    assert [t for t in seen if chunk.text.strip() in t] == [f"{chunk.text.strip()}\n\n"]


def test_a_night_fit_of_the_line_scorer_is_kept_and_used_at_once(monkeypatch, tmp_path):
    """The fit_lines job: weights refitted on this mail go to the home's file and into the
    scorer the answer path holds; a fit with too few usable questions changes nothing."""
    from assistant.answer import fit
    from assistant.answer.evidence import DEFAULT_WEIGHTS, LineFinder, LineWeights

    embedder = FakeEmbedder()
    finder = LineFinder(embedder)
    cache = SimpleNamespace(embedder=embedder)
    memory = SimpleNamespace(qa=None)
    path = tmp_path / "line_weights.json"
    parts = Handlers(
        cache, None, memory, None, None, None, None, PrecomputeSettings(), lines=finder,
        weights_path=path,
    )  # fmt: skip
    fitted = LineWeights(DEFAULT_WEIGHTS.coef, 0.5, 0.7, 0.3, "self")
    asked = []
    # the refit is checked against the weights in use (fit.trial), so it is handed them
    monkeypatch.setattr(fit, "refit", lambda mailbox, n, rng, current: asked.append((n, current)))
    parts.run(Job(1, "fit_lines", "fit_lines:0", {"seed": 0}, 0, 0))
    assert not path.exists() and finder.weights == DEFAULT_WEIGHTS
    monkeypatch.setattr(fit, "refit", lambda mailbox, n, rng, current: fitted)
    parts.run(Job(2, "fit_lines", "fit_lines:0", {"seed": 0}, 0, 0))
    assert LineWeights.load(path) == fitted and finder.weights == fitted
    assert asked == [(FIT_LINES, DEFAULT_WEIGHTS)]
