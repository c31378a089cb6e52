"""The reranker stage in the answer pipeline (real SmolLM2 as both chat and reranker model)."""

from __future__ import annotations

import pytest

from assistant import events as p
from assistant.answer.answerer import NO_CACHE
from assistant.config import Settings
from assistant.llm import make_llm
from assistant.rerank.loader import make_reranker
from cache.blobs import BlobStore
from cache.db import open_cache_db
from tests.assistant.test_pipeline import build

pytestmark = pytest.mark.slow


def test_the_reranker_orders_a_wider_candidate_set(tmp_path, fake_embedder):
    pipe = build(tmp_path, make_llm(Settings().llm), fake_embedder, threshold=2.0)
    settings = Settings()
    settings.rerank, settings.reranker.model = "full", "smollm2-135m"
    settings.reranker.candidates, settings.reranker.n_threads = 4, 1
    blobs = BlobStore(open_cache_db(None), tmp_path / "doc", {"doc_kv": 1 << 30})
    pipe.select.reranker = make_reranker(settings, tmp_path / "models", blobs)
    question = "What tiles did we choose for the kitchen?"
    events = list(pipe.answer(question, NO_CACHE))
    retrieved = next(e for e in events if isinstance(e, p.ChunksRetrieved)).hits
    ordered = next(e for e in events if isinstance(e, p.ChunksOrdered)).chunk_ids
    assert len(retrieved) == 4 and len(ordered) == 2  # 4 candidates, 2 context chunks
    expected = pipe.select.reranker.rerank(question, retrieved, 2)  # now from the document KV
    assert ordered == [h.chunk_id for h in expected]
    done = events[-1]
    assert [s["chunk_id"] for s in done.sources] == ordered
    assert done.timings["rerank"] > 0


def test_search_returns_the_reranked_order(tmp_path, capsys, monkeypatch):
    import json

    from assistant.cli import main
    from tests.conftest import make_email, write_mbox

    monkeypatch.setenv("ASSISTANT_RERANKER_MODEL", "smollm2-135m")
    monkeypatch.setenv("ASSISTANT_RERANKER_N_THREADS", "1")
    mails = [
        make_email(subject="Tiles", body="We chose Mosa tiles in Warm Grey.", msgid="<t@x>"),
        make_email(subject="Kitchen", body="Demolition starts on Monday 2 March.", msgid="<k@x>"),
        make_email(subject="Race", body="My half marathon time was 1:52:10.", msgid="<r@x>"),
    ]
    home = str(tmp_path / "h")
    assert main(["import", "--home", home, str(write_mbox(tmp_path / "b.mbox", mails))]) == 0
    question = "which tiles did we choose"
    capsys.readouterr()
    assert main(["search", "--home", home, "--json", "-k", "3", question]) == 0
    fused = [r["message_id"] for r in json.loads(capsys.readouterr().out)]
    assert main(["search", "--home", home, "--json", "-k", "3", "--rerank", "full", question]) == 0
    reranked = [r["message_id"] for r in json.loads(capsys.readouterr().out)]
    assert sorted(reranked) == sorted(fused) and reranked[0] == "t@x"
    monkeypatch.setenv("ASSISTANT_RERANK", "full")  # the env switch does the same
    assert main(["search", "--home", home, "--json", "-k", "3", question]) == 0
    assert [r["message_id"] for r in json.loads(capsys.readouterr().out)] == reranked
