"""Search while an import is still embedding: every stored chunk is found by its words, the
vectors join as their batches land, and a large home keeps its built IVF index until the
embedding is done instead of rebuilding it per batch."""

from __future__ import annotations

import pytest

from assistant.importing.importer import Importer
from assistant.knowledge.retrieval import Retriever
from tests.assistant.knowledge.test_large import LARGE
from tests.assistant.knowledge.test_retrieval import MAILS
from tests.conftest import make_email, write_mbox

LATER = [
    ("Boat trip", "The ferry to Vlieland leaves Harlingen at nine on Saturday."),
    ("Piano lesson", "Noor moved the piano lesson to Thursday afternoon at four."),
    ("Bike repair", "The bike shop replaced the rear derailleur and the chain."),
]


def stored(store, embedder, tmp_path, mails, prefix: str) -> Importer:
    """Read and store `mails` without embedding them (the import's first phase)."""
    msgs = [
        make_email(subject=s, body=b, msgid=f"<{prefix}{i}@x>") for i, (s, b) in enumerate(mails)
    ]
    importer = Importer(store, embedder, embed_batch=1)
    importer.run([write_mbox(tmp_path / f"{prefix}.mbox", msgs)], embed=False)
    return importer


def embed_some(importer: Importer, n: int) -> None:
    """Embed `n` chunks, one committed batch each, then stop as a killed import would."""
    done: list[int] = []
    importer.embed(lambda e: done.append(e.done), lambda: len(done) >= n)


def ivf_versions(tmp_path) -> list[str]:
    return sorted(p.name.rsplit("-", 1)[-1] for p in (tmp_path / "index").glob("ivf-*"))


@pytest.mark.parametrize("settings", [None, LARGE], ids=["small", "large"])
def test_every_stored_chunk_is_searchable_and_vectors_join_per_batch(
    tmp_path, store, fake_embedder, settings
):
    importer = stored(store, fake_embedder, tmp_path, MAILS + LATER, "m")
    retriever = Retriever(store, fake_embedder, tmp_path / "index", settings)
    embed_some(importer, 2)
    assert store.embedding_counts(fake_embedder.name) == (2, 8)
    assert not store.all_embedded(fake_embedder.name)
    hits = retriever.search("ferry to Vlieland", k=3)
    assert hits[0].record.title == "Boat trip"  # not embedded yet: found by its words
    assert hits[0].bm25_rank == 1
    assert not retriever.vectors([hits[0].chunk_id])
    embed_some(importer, 10)
    assert store.all_embedded(fake_embedder.name)
    assert retriever.search("ferry to Vlieland", k=1, mode="dense")[0].record.title == "Boat trip"
    assert retriever.vectors([hits[0].chunk_id])


def test_small_home_dense_search_sees_each_batch_as_it_lands(tmp_path, store, fake_embedder):
    importer = stored(store, fake_embedder, tmp_path, MAILS + LATER, "m")
    retriever = Retriever(store, fake_embedder, tmp_path / "index")
    seen = []
    for n in (1, 4, 8):
        embed_some(importer, n - len(seen))
        seen = retriever.dense_index().ids.tolist()
        assert len(seen) == n


def test_a_large_home_keeps_its_index_while_an_import_embeds(tmp_path, store, fake_embedder):
    importer = stored(store, fake_embedder, tmp_path, MAILS, "m")
    embed_some(importer, len(MAILS))
    retriever = Retriever(store, fake_embedder, tmp_path / "index", LARGE)
    assert retriever.search("LoRa radio battery", k=1)[0].record.message_id == "m1@x"
    built = ivf_versions(tmp_path)
    assert len(built) == 1

    later = stored(store, fake_embedder, tmp_path, LATER, "n")
    embed_some(later, 1)
    assert retriever.search("ferry to Vlieland", k=1)[0].record.title == "Boat trip"
    assert retriever.search("LoRa radio battery", k=1, mode="dense")[0].dense_rank == 1
    fresh = Retriever(store, fake_embedder, tmp_path / "index", LARGE)  # another process
    assert fresh.search("LoRa radio battery", k=1, mode="dense")[0].record.message_id == "m1@x"
    assert ivf_versions(tmp_path) == built  # no rebuild per batch

    embed_some(later, 5)
    assert retriever.search("ferry Vlieland", k=1, mode="dense")[0].record.title == "Boat trip"
    assert ivf_versions(tmp_path) != built  # rebuilt once, with every vector


def test_a_first_large_import_searches_by_words_until_embedded(tmp_path, store, fake_embedder):
    importer = stored(store, fake_embedder, tmp_path, MAILS, "m")
    embed_some(importer, 2)
    retriever = Retriever(store, fake_embedder, tmp_path / "index", LARGE)
    hits = retriever.search("Rotterdam half marathon", k=1)
    assert hits[0].record.title == "Half marathon" and hits[0].dense_rank is None
    assert retriever.search("Rotterdam half marathon", mode="dense") == []
    assert ivf_versions(tmp_path) == []  # no index of a fraction of the vectors
