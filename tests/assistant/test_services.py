"""Services builds each part once, whichever part or thread asks first: one cache database
connection and one blob store, shared by the answer path, the KV tree and the reranker."""

from __future__ import annotations

import threading

import pytest

import assistant.llm as llm_module
import assistant.rerank.loader as loader
from assistant.services import open_services

pytestmark = pytest.mark.slow


def spy(monkeypatch, module, name: str) -> list:
    """Record each call's arguments of `module.name` (the real function still runs)."""
    calls: list = []
    real = getattr(module, name)

    def recorded(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, recorded)
    return calls


def test_the_reranker_touched_first_shares_the_answerers_blob_store(tmp_path, monkeypatch):
    made = spy(monkeypatch, loader, "make_reranker")
    ctx = open_services(tmp_path / "home")
    reranker = ctx.reranker  # before the answerer exists (`assistant search --rerank` does)
    pipe = ctx.answerer()
    assert pipe.select.reranker is reranker and len(made) == 1
    assert made[0][2] is ctx.blobs is pipe.kv.blobs
    assert pipe.qa.db is ctx.cache_db is pipe.kv.db is ctx.blobs.db


def test_threads_asking_at_once_get_one_answerer_and_one_model(tmp_path, monkeypatch):
    loads = spy(monkeypatch, llm_module, "make_llm")
    ctx = open_services(tmp_path / "home")
    start = threading.Barrier(4)
    got: list = []

    def ask() -> None:
        start.wait()
        got.append(ctx.answerer())

    threads = [threading.Thread(target=ask) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert len(got) == 4 and all(p is got[0] for p in got)
    assert len(loads) == 1


def test_the_kv_budget_is_sized_to_the_free_disk_within_bounds(tmp_path, monkeypatch):
    import shutil
    from collections import namedtuple

    from assistant.services import KV_BUDGET_MAX, KV_BUDGET_MIN, kv_budget_for

    usage = namedtuple("usage", "total used free")
    for free, want in ((1 << 30, KV_BUDGET_MIN), (60 << 30, 6 << 30), (1 << 40, KV_BUDGET_MAX)):
        monkeypatch.setattr(shutil, "disk_usage", lambda _p, f=free: usage(f * 2, f, f))
        assert kv_budget_for(tmp_path) == want


def test_a_set_budget_is_kept_and_a_smaller_one_keeps_the_qa_bank(tmp_path):
    from assistant.config import load_settings

    home = tmp_path / "h"
    ctx = open_services(home)
    assert ctx.settings.cache.kv_budget_mb >= 2048  # sized when none is set
    question = "when does the demolition start"
    ctx.qa.add(question, ctx.embedder.embed_batch([question])[0], "2 March.")
    settings = load_settings(None, env={})
    settings.cache.kv_budget_mb = 1.0
    again = open_services(home, settings)
    assert again.settings.cache.kv_budget_mb == 1.0
    assert [e.answer for e in again.qa.entries()] == ["2 March."]
