from __future__ import annotations

import numpy as np
import pytest

from assistant.importing.importer import Importer
from assistant.knowledge import retrieval
from assistant.knowledge.retrieval import Ranked, Retriever, rrf, top_n, zscore, zscore_fusion
from tests.conftest import import_mails, make_email, write_mbox

MAILS = [
    ("Kitchen start", "Bram's crew begins demolition of the kitchen on Monday 2 March."),
    ("Battery bug", "Priya found the LoRa radio driver drains the battery in sleep mode."),
    ("Wedding speech", "Elin asked me to give a speech at the wedding in Uppsala."),
    ("Tax return", "Sanne needs the annual statement from the bank before 1 May."),
    ("Half marathon", "Finished the Rotterdam half marathon in 1:52:10."),
]


@pytest.fixture
def loaded(tmp_path, store, fake_embedder):
    import_mails(store, fake_embedder, tmp_path / "box.mbox", MAILS)
    return Retriever(store, fake_embedder, tmp_path / "index")


def test_rrf_sums_reciprocal_ranks():
    a = Ranked(np.array([1, 2, 3]), np.array([3.0, 2.0, 1.0]))
    b = Ranked(np.array([3, 1]), np.array([0.9, 0.8]))
    fused = rrf([a, b], k=60)
    assert fused.ids.tolist() == [1, 3, 2]
    assert fused.scores[0] == pytest.approx(1 / 61 + 1 / 62)


def test_zscore_fusion_keeps_a_chunk_one_retriever_ranks_first():
    ids = np.arange(100)
    bm25 = np.zeros(100)
    bm25[7] = 12.0  # BM25's clear first
    bm25[[1, 2]] = 3.0
    dense = np.linspace(0.5, 0.2, 100)  # dense prefers low ids; 7 is 8th, 1 and 2 near the top
    fused_ids, fused = zscore_fusion((ids, bm25), (ids, dense))
    assert fused_ids[np.argmax(fused)] == 7
    missing = zscore_fusion((ids, bm25), (ids[:50], dense[:50]))[1]  # half not embedded yet
    assert np.argmax(missing) == 7
    assert missing[60] == pytest.approx(0.5 * zscore(bm25)[60])  # no vector: neutral dense term


def test_top_n_orders_by_score_and_drops_zero_for_bm25():
    ranked = top_n(
        np.array([10, 11, 12, 13]), np.array([0.5, 0.0, 2.0, 0.5]), 3, positive_only=True
    )
    assert ranked.ids.tolist() == [12, 10, 13]


@pytest.mark.parametrize("mode", ["hybrid", "bm25", "dense"])
def test_each_mode_finds_the_mail(loaded, mode):
    hits = loaded.search("demolition kitchen Monday", k=3, mode=mode)
    assert hits[0].record.message_id == "m0@x"
    assert hits[0].record.title == "Kitchen start"


def test_hybrid_hits_carry_both_ranks_and_metadata(loaded):
    hit = loaded.search("LoRa battery drains", k=1)[0]
    assert hit.record.message_id == "m1@x" and hit.bm25_rank == 1 and hit.dense_rank == 1
    assert hit.record.sender.startswith("Bram de Vries") and hit.record.date.startswith(
        "2026-03-02"
    )


def test_indexes_are_built_once_not_per_question(loaded, monkeypatch):
    loaded.search("kitchen")
    builds = []
    monkeypatch.setattr(retrieval.BM25Index, "build", lambda *a: builds.append(a))
    for q in ["speech", "tax", "marathon"]:
        loaded.search(q)
    fresh = Retriever(loaded.store, loaded.embedder, loaded.index_dir)
    fresh.search("speech")  # a new process loads the saved files
    assert builds == []


def test_new_import_is_searchable_and_corrupt_index_is_rebuilt(loaded, tmp_path):
    loaded.search("kitchen")
    box = write_mbox(
        tmp_path / "more.mbox",
        [
            make_email(
                subject="Offsite",
                body="The team offsite is in Utrecht on 17 September.",
                msgid="<new@x>",
            )
        ],
    )
    Importer(loaded.store, loaded.embedder).run([box])
    assert loaded.search("offsite Utrecht", k=1)[0].record.message_id == "new@x"
    for path in loaded.index_dir.glob("*.npz"):
        path.write_bytes(path.read_bytes()[:100])  # truncated index files
    fresh = Retriever(loaded.store, loaded.embedder, loaded.index_dir)
    assert fresh.search("offsite Utrecht", k=1)[0].record.message_id == "new@x"
