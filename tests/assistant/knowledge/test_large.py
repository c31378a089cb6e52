"""The large-home path: FTS5 BM25 kept in step with imports, the IVF index (exact when every
cluster is probed, rebuilt when damaged), the hot/cold plan, and homes below the switch point
keeping today's exact in-memory results."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from assistant.config_sections import RetrievalSettings
from assistant.importing.importer import Importer
from assistant.knowledge import ivf
from assistant.knowledge.bm25 import BM25Index
from assistant.knowledge.db import MIGRATIONS, open_db
from assistant.knowledge.fts import ChunkFts, query_terms
from assistant.knowledge.hotcold import AccessCounts, plan_hot
from assistant.knowledge.retrieval import DenseIndex, Retriever, top_n, zscore_fusion
from bench.hotcold_baseline import plan_uniform
from cache.db import apply_migrations, connect
from tests.assistant.knowledge.test_retrieval import MAILS
from tests.conftest import make_email, write_mbox

LARGE = RetrievalSettings(large_min_chunks=1, candidates=10)


def import_mails(store, embedder, tmp_path, mails=MAILS, prefix="m"):
    msgs = [
        make_email(subject=s, body=b, msgid=f"<{prefix}{i}@x>") for i, (s, b) in enumerate(mails)
    ]
    Importer(store, embedder).run([write_mbox(tmp_path / f"{prefix}.mbox", msgs)])


@pytest.fixture
def large(tmp_path, store, fake_embedder):
    import_mails(store, fake_embedder, tmp_path)
    return Retriever(store, fake_embedder, tmp_path / "index", LARGE)


def clustered(n: int = 3000, dim: int = 16, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((12, dim))
    x = centres[rng.integers(0, 12, n)] + 0.3 * rng.standard_normal((n, dim))
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


# -- FTS5 -------------------------------------------------------------------------------------


def test_fts_follows_imports_and_deletes(tmp_path, store, fake_embedder):
    fts = ChunkFts(store.db)
    import_mails(store, fake_embedder, tmp_path)
    ids, scores = fts.search("demolition kitchen", 5)
    assert store.chunk_records(ids[:1].tolist())[0].title == "Kitchen start" and scores[0] > 0
    import_mails(store, fake_embedder, tmp_path, [("Offsite", "The offsite is in Utrecht.")], "n")
    assert len(fts.search("Utrecht", 5)[0]) == 1
    store.db.execute("DELETE FROM documents")  # chunks go by cascade; the trigger follows
    assert len(fts.search("Utrecht kitchen", 5)[0]) == 0


def test_migration_indexes_the_chunks_of_an_existing_home(tmp_path, fake_embedder):
    from sqlite_utils import Database

    from assistant.knowledge.store import KnowledgeStore

    path = tmp_path / "knowledge.db"
    db = Database(connect(path))
    db.execute("PRAGMA foreign_keys = ON")
    # a home from before FTS (with the documents columns today's import writes: 0003)
    apply_migrations(db, [m for m in MIGRATIONS if m[0] != "0002_chunks_fts"])
    import_mails(KnowledgeStore(db), fake_embedder, tmp_path)
    db.conn.close()
    store = KnowledgeStore(open_db(path))
    assert len(ChunkFts(store.db).search("LoRa battery", 5)[0]) == 1


def test_fts_ranks_like_bm25_and_pruning_keeps_full_scores(tmp_path, store, fake_embedder):
    mails = [
        (f"Note {i}", f"common words here {'rare' if i == 3 else 'plain'} {i}") for i in range(30)
    ]
    import_mails(store, fake_embedder, tmp_path, mails)
    full = ChunkFts(store.db, max_matches=10**6)
    pruned = ChunkFts(store.db, max_matches=5)  # "common" (30 chunks) is left out of the probe
    assert pruned.selective(query_terms("rare common")) == (["rare"], 1)
    ids, scores = pruned.search("rare common", 5)
    assert ids[0] == full.search("rare common", 5)[0][0]
    assert scores[0] == pytest.approx(full.scores(query_terms("rare common"), ids[:1])[0])
    texts = store.chunk_texts()
    okapi = BM25Index.build(*texts).scores("rare common")
    assert texts[0][np.argmax(okapi)] == ids[0]


def test_scores_of_given_chunks_are_fts5s_own_bm25(tmp_path, store, fake_embedder):
    """Scoring listed chunks by hand (FTS5 cannot restrict a MATCH to a rowid list without
    merging every match first) gives what FTS5's bm25() gives, over chunks of other lengths,
    repeated terms, accents and case."""
    mails = [
        (f"Note {i}", " ".join(["Café"] * (i % 3 + 1) + ["kitchen"] * (i % 2) + ["x"] * i))
        for i in range(12)
    ]
    import_mails(store, fake_embedder, tmp_path, mails)
    fts = ChunkFts(store.db, max_matches=10**6)
    terms = query_terms("cafe KITCHEN note")
    want = dict(
        store.db.execute(
            "SELECT rowid, -bm25(chunks_fts) FROM chunks_fts WHERE chunks_fts MATCH ?",
            [" OR ".join(f'"{t}"' for t in terms)],
        ).fetchall()
    )
    ids = np.array(sorted(want), dtype=np.int64)
    np.testing.assert_allclose(fts.scores(terms, ids), [want[i] for i in ids], rtol=1e-9)
    assert fts.scores(terms, np.array([10**9]))[0] == 0  # not a chunk


def test_a_search_among_chunks_is_the_full_ranking_kept_to_them(tmp_path, store, fake_embedder):
    """A filter's search keeps every chunk among it that matches, with the score the
    unfiltered search gives it, however far down the unfiltered list it stands."""
    mails = [(f"Note {i}", f"kayak {'river ' * (i % 4)}trip {i}") for i in range(30)]
    import_mails(store, fake_embedder, tmp_path, mails)
    fts = ChunkFts(store.db, max_matches=10**6)
    every = dict(zip(*fts.search("kayak river", 100), strict=True))
    among = np.array(sorted(every)[::3], dtype=np.int64)
    ids, scores = fts.search("kayak river", 100, among=among)
    assert sorted(ids) == among.tolist()
    np.testing.assert_allclose(scores, [every[i] for i in ids], rtol=1e-9)
    assert list(scores) == sorted(scores, reverse=True)
    assert fts.search("kayak river", 2, among=among)[0].tolist() == ids[:2].tolist()
    assert len(fts.search("kayak", 5, among=np.zeros(0, dtype=np.int64))[0]) == 0


def test_a_query_of_only_common_terms_ranks_the_newest_chunks(tmp_path, store, fake_embedder):
    import_mails(store, fake_embedder, tmp_path, [(f"Note {i}", f"common {i}") for i in range(40)])
    fts = ChunkFts(store.db, max_matches=10)
    ids, scores = fts.search("common", 50)
    newest = store.max_chunk_id()
    assert ids.min() == newest - 10 and len(ids) == 11
    np.testing.assert_allclose(scores, fts.scores(["common"], ids))


def test_bank_stats_estimate_the_bm25_spread(tmp_path, store, fake_embedder):
    mails = [
        (f"Mail {i}", f"about {'kayak' if i % 4 == 0 else 'bicycle'} trips") for i in range(40)
    ]
    import_mails(store, fake_embedder, tmp_path, mails)
    fts = ChunkFts(store.db)
    ids = store.chunk_texts()[0]
    exact = fts.scores(["kayak"], ids)
    mean, std = fts.bank_stats(["kayak"], len(ids))
    assert mean == pytest.approx(exact.mean(), rel=0.2) and std == pytest.approx(
        exact.std(), rel=0.2
    )


# -- IVF --------------------------------------------------------------------------------------


def test_ivf_probing_every_cluster_is_the_flat_scan(tmp_path):
    x = clustered()
    ids = np.arange(100, 100 + len(x))
    index = ivf.build(tmp_path / "ivf", ids, x, nlist=16)
    index.nprobe = index.nlist
    assert_searches_exactly(index, ids, x, x[7], tol=(1e-5, 1e-4))
    np.testing.assert_allclose(index.vectors([105])[105], x[5], atol=1e-3)


def test_ivf_reads_cold_clusters_and_counts_hot_hits(tmp_path):
    x = clustered()
    index = ivf.build(tmp_path / "ivf", np.arange(len(x)), x, nlist=16)
    index.nprobe = 2
    probed = index.nearest_clusters(x[0])[0]
    index.set_hot(probed[:1])
    assert index.resident_bytes() < index.list_bytes().sum()
    before = index.search(x[0], 5)
    index.set_hot(range(index.nlist))
    after = index.search(x[0], 5)
    assert before[0].tolist() == after[0].tolist()
    assert index.hit_rate() == pytest.approx(3 / 4)  # 1 of 2 probes, then 2 of 2


def test_an_updated_ivf_index_is_the_index_of_the_vectors_now(tmp_path):
    """Vectors gone and new put into the trained clusters: every vector now, and only those,
    searched exactly when every cluster is probed; the mean and spread those of them all."""
    x, more = clustered(), clustered(150, seed=1)
    old = ivf.build(tmp_path / "ivf-1", np.arange(len(x)), x, nlist=16)
    old.set_hot([0, 3])  # hot clusters are read from memory, cold ones from the file
    keep = np.ones(len(x), dtype=bool)
    keep[::30] = False  # 100 gone
    ids = np.concatenate([np.arange(len(x))[keep], np.arange(5000, 5150)])
    vectors = np.concatenate([x[keep], more])
    fetched = []

    def fetch(wanted):
        fetched.append(wanted.tolist())
        return more[wanted - 5000]

    index = ivf.update(old, tmp_path / "ivf-2", ids, fetch)
    assert fetched == [list(range(5000, 5150))]  # the new vectors alone are read
    np.testing.assert_array_equal(index.centroids, old.centroids)
    assert sorted(index.ids.tolist()) == ids.tolist() and index.about()["changed"] == 250
    index.nprobe = index.nlist
    for q in (x[7], more[3]):
        assert_searches_exactly(index, ids, vectors, q, tol=(1e-4, 1e-3))
    np.testing.assert_allclose(index.vectors([5003])[5003], more[3], atol=1e-3)
    assert ivf.IvfIndex.load(tmp_path / "ivf-2").search(more[3], 1)[0].tolist() == [5003]


def test_an_index_changed_past_refit_is_left_to_a_new_build(tmp_path):
    x = clustered()
    old = ivf.build(tmp_path / "ivf-1", np.arange(len(x)), x, nlist=16)
    n = int(ivf.REFIT * len(x)) + 1
    ids = np.concatenate([np.arange(len(x)), np.arange(10_000, 10_000 + n)])
    assert ivf.update(old, tmp_path / "ivf-2", ids, lambda w: clustered(len(w), seed=2)) is None
    once = ivf.update(old, tmp_path / "ivf-2", ids[: len(x) + n // 2], lambda w: x[: len(w)])
    assert once is not None  # the changes since the k-means add up: the second one is too many
    twice = ids[: len(x) + n // 2 + n // 2 + 2]
    assert ivf.update(once, tmp_path / "ivf-3", twice, lambda w: x[: len(w)]) is None


def test_an_import_puts_its_mail_into_the_index_without_a_new_build(large, tmp_path, monkeypatch):
    """After the first build, a few new mails go into the clusters there are: no k-means, and
    dense search finds them; the clusters' access counts are kept, the old index goes."""
    assert large.search("demolition kitchen Monday", k=1, mode="dense")
    (first,) = large.index_dir.glob("ivf-*")
    counts = list(large.index_dir.glob("access-*"))
    monkeypatch.setattr(ivf, "train_centroids", _no_kmeans)
    monkeypatch.setattr(ivf, "REFIT", 1.0)  # a few mails stand for a large home's few
    mails = [(f"Offsite {i}", f"The offsite number {i} is in Utrecht.") for i in range(2)]
    import_mails(large.store, large.embedder, tmp_path, mails, "n")
    for retriever in (large, Retriever(large.store, large.embedder, large.index_dir, LARGE)):
        hits = retriever.search("The offsite number 1 is in Utrecht.", k=1, mode="dense")
        assert hits[0].record.title == "Offsite 1"
    (now,) = large.index_dir.glob("ivf-*")
    assert now != first and list(large.index_dir.glob("access-*")) == counts
    assert len(ivf.IvfIndex.load(now)) == large.store.count_chunks()


def _no_kmeans(*args, **kwargs):
    raise AssertionError("the centroids were trained again")


@pytest.mark.parametrize("damage", ["flip", "truncate", "missing", "head", "head-cut", "head-flip"])
def test_a_damaged_ivf_file_is_rebuilt_never_used(large, damage, caplog):
    assert large.search("demolition kitchen Monday", k=1, mode="dense")[0].record.title == (
        "Kitchen start"
    )
    (directory,) = large.index_dir.glob("ivf-*")
    codes = directory / ivf.CODES
    data = bytearray(codes.read_bytes())
    if damage == "flip":
        data[len(data) // 2] ^= 0xFF
        codes.write_bytes(bytes(data))
    elif damage == "truncate":
        codes.write_bytes(bytes(data[:-10]))
    elif damage == "missing":
        codes.unlink()
    elif damage == "head":
        (directory / ivf.HEAD).write_bytes(b"not an npz file")
    else:  # written half (a crash, a full disk), or a byte changed inside: a zip's own errors
        head = bytearray((directory / ivf.HEAD).read_bytes())
        if damage == "head-cut":
            del head[len(head) // 2 :]
        else:
            head[len(head) // 2] ^= 0xFF
        (directory / ivf.HEAD).write_bytes(bytes(head))
    fresh = Retriever(large.store, large.embedder, large.index_dir, LARGE)
    with caplog.at_level(logging.WARNING):
        hits = fresh.search("demolition kitchen Monday", k=1, mode="dense")
    assert hits[0].record.title == "Kitchen start"
    assert "rebuilding" in caplog.text
    (rebuilt,) = large.index_dir.glob("ivf-*")
    assert ivf.IvfIndex.load(rebuilt).search(fresh.embedder.embed_batch(["x"])[0], 1)


# -- the switch point ---------------------------------------------------------------------------


def test_below_the_switch_point_results_are_todays_exact_ones(tmp_path, store, fake_embedder):
    import_mails(store, fake_embedder, tmp_path)
    small = Retriever(store, fake_embedder, tmp_path / "index")  # default switch point
    assert small.large() is None
    query = "battery drains in sleep"
    q = fake_embedder.embed_batch([query])[0]
    bm25 = BM25Index.build(*store.chunk_texts())
    dense = DenseIndex(*store.embedding_matrix(fake_embedder.name))
    fused = zscore_fusion((bm25.ids, bm25.scores(query)), (dense.ids, dense.scores(q)))
    want = top_n(*fused, small.settings.candidates)
    got = small.rank(query, "hybrid")[0]
    assert got.ids.tolist() == want.ids.tolist()
    np.testing.assert_array_equal(got.scores, want.scores)
    assert not list((tmp_path / "index").glob("ivf-*"))


@pytest.mark.parametrize("mode", ["hybrid", "bm25", "dense"])
def test_above_the_switch_point_each_mode_finds_the_mail(large, mode):
    assert large.large() is not None
    hits = large.search("LoRa radio battery", k=2, mode=mode)
    assert hits[0].record.message_id == "m1@x"
    assert large.vectors([hits[0].chunk_id])


# -- hot/cold ---------------------------------------------------------------------------------


def test_the_plan_keeps_the_most_probed_clusters_per_byte_within_budget():
    sizes = np.array([100, 100, 400, 100])
    counts = np.array([5.0, 0.0, 8.0, 3.0])
    plan = plan_hot(counts, sizes, 250)
    assert plan.hot.tolist() == [0, 3] and plan.hot_bytes == 200
    assert plan.share_of_probes == pytest.approx(8 / 16)
    assert plan_uniform(sizes, 250).hot_bytes <= 250
    assert plan_hot(counts, sizes, 650).hot.tolist() == [0, 2, 3]  # 1 (never probed) left out
    assert plan_hot(np.zeros(4), sizes, 450).hot_bytes == 300  # cold start: filled all the same


def test_access_counts_weigh_predictions_and_survive_a_restart(tmp_path):
    counts = AccessCounts(4, tmp_path / "access.npy", half_life=1e9)
    counts.record(np.array([1, 2]), 1.0)
    counts.record(np.array([2]), 0.5)
    counts.save()
    again = AccessCounts(4, tmp_path / "access.npy")
    np.testing.assert_allclose(again.counts, [0, 1, 1.5, 0], rtol=1e-6)
    assert AccessCounts(5, tmp_path / "access.npy").counts.tolist() == [0] * 5  # other index


@pytest.mark.parametrize("damage", ["empty", "cut"])
def test_unreadable_access_counts_start_afresh(large, damage, caplog):
    large.search("demolition kitchen Monday", k=1, mode="dense")
    (counts,) = large.index_dir.glob("access-*.npy")
    data = counts.read_bytes()
    counts.write_bytes(b"" if damage == "empty" else data[: len(data) - 3])
    fresh = Retriever(large.store, large.embedder, large.index_dir, LARGE)
    with caplog.at_level(logging.WARNING):
        hits = fresh.search("demolition kitchen Monday", k=1, mode="dense")
    assert hits[0].record.title == "Kitchen start"
    assert "starting afresh" in caplog.text
    assert len(np.load(counts)) == fresh.large().index().nlist  # saved whole again


def test_searches_replan_the_hot_set_toward_what_is_asked(tmp_path, store, fake_embedder):
    mails = [
        (f"Topic {i}", f"{'kitchen tiles grout' if i < 40 else f'misc {i} words'}")
        for i in range(120)
    ]
    import_mails(store, fake_embedder, tmp_path, mails)
    settings = RetrievalSettings(large_min_chunks=1, replan_every=5, hot_memory_mb=1)
    retriever = Retriever(store, fake_embedder, tmp_path / "index", settings)
    large = retriever.large()
    index = large.index()
    budget = int(index.list_bytes()[:2].sum())
    large.settings = RetrievalSettings(
        large_min_chunks=1, replan_every=5, hot_memory_mb=budget / 2**20
    )
    for _ in range(10):
        retriever.search("kitchen tiles grout", mode="dense")
    asked = set(index.nearest_clusters(fake_embedder.embed_batch(["kitchen tiles grout"])[0])[0])
    assert asked & set(large.plan.hot.tolist())
    assert large.plan.hot_bytes <= budget and large.hit_rate() > 0


def test_the_index_plan_says_which_path_and_the_hot_set(large, tmp_path, store):
    assert large.index_plan()["built"] is False  # stats never builds an index
    large.search("LoRa radio battery", mode="dense")
    plan = large.index_plan()
    assert plan["built"] and plan["hot_clusters"] == plan["clusters"] >= 1
    assert plan["hot_mb"] <= plan["budget_mb"] and plan["hit_rate_this_process"] == 1.0
    small = Retriever(store, large.embedder, tmp_path / "small")
    assert small.index_plan()["kind"].startswith("in-memory")


def test_large_fusion_scores_every_candidate_with_both_retrievers(large):
    query = "battery speech kitchen marathon"
    q = large.embedder.embed_batch([query])[0]
    search = large.large()
    bm25, dense = search.fts.search(query, 2), search.dense(q, 2, 1.0)
    assert set(bm25[0]) != set(dense[0])  # some candidates come from one list only
    ids, fused = search.fuse(query, q, bm25, dense)
    terms = query_terms(query)
    b = search.fts.scores(terms, ids)
    vectors = search.index().vectors(ids.tolist())
    d = np.array([vectors[i] @ q for i in ids.tolist()])
    b_mean, b_std = search.fts.bank_stats(terms, 5)
    d_mean, d_std = search.index().score_stats(q)
    want = 0.5 * (b - b_mean) / b_std + 0.5 * (d - d_mean) / d_std
    np.testing.assert_allclose(fused, want, rtol=1e-5)
    assert fused.tolist() == sorted(fused.tolist(), reverse=True)


def assert_searches_exactly(index, ids, vectors, q, tol: tuple[float, float]) -> None:
    """Every cluster probed, `index` finds the exact top 10 of `vectors` for `q`, with their
    scores, and the mean and spread of its scores over all of them (`tol`: abs, rel)."""
    got_ids, got = index.search(q, 10)
    exact = top_n(ids, DenseIndex(ids, vectors).scores(q), 10)
    assert got_ids.tolist() == exact.ids.tolist()
    np.testing.assert_allclose(got, exact.scores, atol=2e-3)
    mean, std = index.score_stats(q)
    assert mean == pytest.approx(float((vectors @ q).mean()), abs=tol[0])
    assert std == pytest.approx(float((vectors @ q).std()), rel=tol[1])
