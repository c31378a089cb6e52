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


def test_a_follow_up_reads_its_filters_as_any_question_does(tmp_path):
    """The follow-up's answerer (its last turn's thread first) reads from:/date: filters from
    the rewritten question's words too ("what did she send last week?" → "… Sherri …")."""
    ctx = open_services(tmp_path / "home")
    focused = ctx.focused_answerer(("thread-1",))
    assert focused.reader is not None and focused.reader is ctx.answerer().reader
    assert focused.select is not ctx.answerer().select  # its own, the thread first
