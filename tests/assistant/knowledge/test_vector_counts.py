"""Whether every chunk has a vector of the encoder in use, asked by every search and question:
counted on indexes (migration 0014), never by a join that reads each vector's page, and right
while an import embeds, after another encoder's vectors, and in a home that held orphans."""

from __future__ import annotations

import sqlite3

import numpy as np

from assistant.importing.importer import Importer
from assistant.knowledge.db import migrate, open_db
from assistant.knowledge.store import KnowledgeStore
from tests.conftest import make_email, write_mbox


def test_unembedded_chunks_are_counted_and_the_count_reads_no_vector(tmp_path, fake_embedder):
    store = KnowledgeStore(open_db(tmp_path / "knowledge.db"))
    mbox = write_mbox(tmp_path / "box.mbox", [make_email(msgid=f"<m{i}@x>") for i in range(3)])
    Importer(store, None).run([mbox])  # read and stored, not embedded
    chunks = store.count_chunks()
    model = fake_embedder.name
    assert chunks > 0 and store.count_unembedded(model) == chunks and store.has_unembedded(model)
    ids = [r[0] for r in store.db.execute("SELECT id FROM chunks ORDER BY id")]
    store.put_embeddings("other-encoder", ids[:1], np.ones((1, 4), dtype=np.float32))
    store.put_embeddings(model, ids[1:], np.ones((len(ids) - 1, 4), dtype=np.float32))
    assert store.count_unembedded(model) == 1 and store.has_unembedded(model)
    store.put_embeddings(model, ids[:1], np.ones((1, 4), dtype=np.float32))  # replaces it
    assert store.count_unembedded(model) == 0 and not store.has_unembedded(model)
    plan = " ".join(
        str(row)
        for row in store.db.execute(
            "EXPLAIN QUERY PLAN SELECT count(*) FROM embeddings WHERE model = ?", [model]
        )
    )
    assert "COVERING INDEX embeddings_model" in plan


def test_a_vector_whose_chunk_is_gone_is_removed_by_the_migration(tmp_path):
    """A home written without the foreign key (an old version, another tool) may hold vectors
    of chunks gone: they would count as embedded. The migration removes them once."""
    path = tmp_path / "knowledge.db"
    store = KnowledgeStore(open_db(path))
    store.db.conn.close()
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA foreign_keys = OFF")
    conn.execute("INSERT INTO embeddings VALUES (999, 'enc', 4, x'00')")
    conn.execute("DELETE FROM _migrations WHERE name = '0014_embeddings_model'")
    conn.execute("DROP INDEX embeddings_model")
    conn.commit()
    conn.close()
    store = KnowledgeStore(open_db(path))
    assert store.db.execute("SELECT count(*) FROM embeddings").fetchone()[0] == 0
    assert store.count_unembedded("enc") == 0 and migrate(store.db) == []
