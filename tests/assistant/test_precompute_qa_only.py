"""Precompute(kv=False), the sleep-time-compute baseline of bench/e2e.py: with the real models,
every predicted question is answered into the QA bank and nothing is stored in the KV tree, even
at a τ where the population policy alone would only prefill."""

from __future__ import annotations

import pytest

from assistant import events as p
from assistant.answer.answerer import NO_CACHE
from assistant.precompute.runner import Precompute
from assistant.services import open_services
from tests.conftest import KITCHEN, TILES, import_mails

pytestmark = pytest.mark.slow

MAILS = [KITCHEN, TILES]


def test_qa_only_precompute_answers_predictions_and_stores_no_kv(tmp_path):
    ctx = open_services(tmp_path / "home")
    ctx.settings.answer.context_chunks = 2
    ctx.settings.answer.max_tokens = 16
    ctx.settings.precompute.stride = 3  # one chunk's detail questions
    import_mails(ctx.store, ctx.embedder, tmp_path / "box.mbox", MAILS)
    ctx.settings.cache.qa_verify = "off"  # served by τ alone: the policy would only prefill
    pipe = ctx.answerer()
    assert pipe.qa.threshold >= ctx.settings.precompute.decode_cutoff

    runner = Precompute(ctx.precompute_parts(), settle_seconds=0, kv=False)
    question = "Which tiles did we choose?"
    runner.queue.enqueue("populate", "populate:tiles", {"question": question, "origin": "test"})
    report = runner.run()

    assert report.by_kind.get("predict_detail") == 1 and report.by_kind.get("populate", 0) >= 1
    assert report.failed == 0
    entries = pipe.qa.entries()
    assert entries and all(e.answer is not None for e in entries)  # decoded, none pending
    assert pipe.kv.stats()["nodes"] == 0  # neither detail prediction nor populate saved KV
    (entry,) = [e for e in entries if e.question == question]
    vector = pipe.qa.vector(entry.id)
    events = pipe.generate(question, vector, pipe.select(question, vector), NO_CACHE)
    naive = "".join(e.text for e in events if isinstance(e, p.TokenStreamed))
    assert entry.answer == naive.strip()
