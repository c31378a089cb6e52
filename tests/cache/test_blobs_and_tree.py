from __future__ import annotations

from pathlib import Path

import pytest

from cache.blobs import BlobStore
from cache.db import open_cache_db
from cache.kv_tree import EVICTION_ORDER, FORGET_BLOB, KIND, RETIRED_S, KVTree, segment_hash


@pytest.fixture
def blobs(tmp_path):
    return BlobStore(open_cache_db(None), tmp_path / "kv", {KIND: 1000})


def test_roundtrip_and_checksum_detects_truncation_and_flips(blobs):
    assert blobs.put(KIND, "a", b"x" * 100)
    assert blobs.get("a") == b"x" * 100
    path = blobs._path("a")
    path.write_bytes(b"x" * 50)
    assert blobs.get("a") is None and not path.exists()
    blobs.put(KIND, "b", b"y" * 100)
    data = bytearray(blobs._path("b").read_bytes())
    data[10] ^= 0xFF
    blobs._path("b").write_bytes(bytes(data))
    assert blobs.get("b") is None
    assert blobs.count(KIND) == 0


def test_two_writers_of_one_key_never_share_a_temporary_file(blobs, monkeypatch):
    """A night and a question computing the same node at once: the second put runs while the
    first is writing. Each writes a file of its own; the stored blob is whole and matches its
    row, and no temporary file is left behind."""
    real_write, calls = Path.write_bytes, []

    def write_bytes(self, data):
        calls.append(self)
        if len(calls) == 1:  # the first writer has its file made: the second writes meanwhile
            assert blobs.put(KIND, "k", b"b" * 200)
        return real_write(self, data)

    monkeypatch.setattr(Path, "write_bytes", write_bytes)
    assert blobs.put(KIND, "k", b"a" * 100)
    assert len(calls) == 2
    assert blobs.get("k") == b"a" * 100  # the last writer's blob, whole, as its row says
    assert [p.name for p in blobs._path("k").parent.iterdir()] == ["k.bin"]


def test_what_a_killed_writer_left_is_swept_once_old_and_nothing_stored_is(blobs):
    """A writer killed before its rename leaves a temporary file; one killed between its rename
    and its row leaves a blob file nobody counts. Both go once they are old; a stored blob, and
    a file young enough to be a write in progress elsewhere, stay."""
    import os
    import time

    assert blobs.put(KIND, "kept", b"k" * 100)
    folder = blobs._path("kept").parent
    tmp, unrowed = folder / ".stopped.x1.tmp", blobs._path("norow")
    unrowed.parent.mkdir(parents=True, exist_ok=True)
    young = folder / ".writing.x2.tmp"
    for path in (tmp, unrowed, young):
        path.write_bytes(b"z" * 64)
    old = time.time() - 3600
    os.utime(tmp, (old, old))
    os.utime(unrowed, (old, old))
    assert blobs.sweep_orphans(older_than=600) == (2, 128)
    assert not tmp.exists() and not unrowed.exists() and young.exists()
    assert blobs.get("kept") == b"k" * 100


def test_lfu_eviction_keeps_the_budget(blobs):
    for key in "abcd":
        blobs.put(KIND, key, b"." * 300)  # 4 x 300 > 1000: one must go
    assert blobs.used(KIND) <= 1000 and blobs.get("a") is None
    for _ in range(3):
        blobs.get("b")
    blobs.get("c")
    blobs.put(KIND, "e", b"." * 300)
    assert {k for k in "bcde" if blobs.get(k) is not None} == {"b", "c", "e"}  # d: fewest hits
    assert not blobs.put(KIND, "huge", b"." * 2000)
    assert blobs.used(KIND) <= 1000


def test_tree_restores_the_run_of_intact_segments_from_the_root(blobs):
    tree = KVTree(blobs.db, blobs, model="m1")
    h = [segment_hash([1, 2]), segment_hash([3]), segment_hash([4, 5])]
    tree.store(h[:1], 2, b"s1")
    tree.store(h[:2], 3, b"s2")
    tree.store(h[:3], 5, b"s3")
    assert tree.longest_prefix(h).blobs == [b"s1", b"s2", b"s3"]
    assert tree.longest_prefix([h[0], h[1], segment_hash([9])]).depth == 2
    blobs._path(tree.path(h)[2][1]).unlink()  # the deepest blob is gone
    restore = tree.longest_prefix(h)
    assert (restore.depth, restore.n_tokens, restore.blobs) == (2, 3, [b"s1", b"s2"])
    assert tree.path(h)[2][1] is None  # forgotten, to be rebuilt
    blobs._path(tree.path(h)[1][1]).write_bytes(b"xx")  # a damaged middle segment ends the run
    assert tree.longest_prefix(h).blobs == [b"s1"]
    other = KVTree(blobs.db, blobs, model="m2")
    assert other.longest_prefix(h).depth == 0  # another model never sees this KV


def test_segment_hash_is_of_tokens():
    assert segment_hash([1, 2, 3]) == segment_hash((1, 2, 3))
    assert segment_hash([1, 2, 3]) != segment_hash([1, 2, 4])


def _with_kv(tree: KVTree) -> set[tuple[str, ...]]:
    """The paths (as segment-hash tuples) whose last node has KV."""
    rows = tree.db.execute("SELECT id, parent_id, segment_hash, blob_key FROM kv_nodes").fetchall()
    by_id = {r[0]: r for r in rows}

    def path(node_id):
        node = by_id[node_id]
        return (*path(node[1]), node[2]) if node[1] else (node[2],)

    return {path(r[0]) for r in rows if r[3] is not None}


def test_eviction_keeps_chunk_nodes_and_parents_over_the_leaves_of_user_paths(blobs):
    """At the budget, a question's new path evicts the deepest unused leaves, not the
    precomputed [system, chunk] nodes (plain LFU took those first: unused and older)."""
    tree = KVTree(blobs.db, blobs, model="m")
    seg = {name: segment_hash([ord(c) for c in name]) for name in "sabcdefghij"}
    s = seg["s"]
    for chunk in "ab":  # precompute: a node per chunk
        tree.store([s], 1, b"." * 100)
        tree.store([s, seg[chunk]], 2, b"." * 100)
    for path in ("cde", "fgh"):  # two questions' chunk orders: 300 bytes each
        for depth in range(1, 4):
            tree.store([s, *(seg[c] for c in path[:depth])], depth + 1, b"." * 100)
    assert blobs.used(KIND) == 900
    tree.longest_prefix([s, seg["c"], seg["d"], seg["e"]])  # the first question asked again
    for depth in range(1, 4):  # a third question: two blobs must go
        tree.store([s, *(seg[c] for c in "ijb"[:depth])], depth + 1, b"." * 100)
    kept = _with_kv(tree)
    assert blobs.used(KIND) <= 1000
    assert (s, seg["a"]) in kept and (s, seg["b"]) in kept  # the chunk nodes survive
    assert (s, seg["c"], seg["d"], seg["e"]) in kept  # used again: kept
    assert (s, seg["f"], seg["g"], seg["h"]) not in kept  # an unused leaf of a deep path went
    assert (s, seg["i"], seg["j"], seg["b"]) in kept  # the one just stored
    assert all(p[:-1] in kept for p in kept if len(p) > 1)  # no node outlives its parent


def test_eviction_never_strands_a_node_without_its_parent(blobs):
    """Random stores and restores over a small budget: every node with KV keeps its parent's
    KV, so each stored blob stays restorable."""
    import random

    rng = random.Random(7)
    tree = KVTree(blobs.db, blobs, model="m")
    chunks = [segment_hash([i]) for i in range(12)]
    for _ in range(200):
        path = [chunks[0], *rng.sample(chunks[1:], rng.randint(1, 3))]
        if rng.random() < 0.4:
            tree.longest_prefix(path)
            continue
        for depth in range(1, len(path) + 1):
            if not tree.has_blob(path[:depth]):
                tree.store(path[:depth], depth, b"." * rng.randint(60, 140))
        kept = _with_kv(tree)
        assert blobs.used(KIND) <= 1000
        assert all(p[:-1] in kept for p in kept if len(p) > 1)
        assert tree.longest_prefix(path).depth >= 1  # what was just stored is restorable


@pytest.mark.parametrize(("sql", "params"), [(EVICTION_ORDER, ["kv", RETIRED_S, "b"]),
                                            (FORGET_BLOB, ["kv"])])  # fmt: skip
def test_eviction_finds_a_blobs_node_by_index_not_by_scanning_the_tree(blobs, sql, params):
    """Each eviction orders every KV blob by its node: a scan of kv_nodes per blob made that
    quadratic in the tree's size. (Each model's last use is read once, in one pass.)"""
    rows = blobs.db.execute(f"EXPLAIN QUERY PLAN {sql}", params).fetchall()
    once = {row[0] for row in rows if row[3].startswith("MATERIALIZE")}
    plan = [row[3] for row in rows if row[1] not in once]
    assert not any(step.startswith("SCAN") for step in plan), plan
    assert any("USING INDEX kv_nodes_blob" in step for step in plan), plan


def test_a_retired_models_nodes_are_evicted_first_whatever_their_hits(blobs):
    """After the user chose another writer, the old model's nodes (never served again: its
    fingerprint keeps them apart) outlived the new model's by their hits: the new tree could
    not grow within the budget. A model unused for RETIRED_S while another is used goes first."""
    old, new = KVTree(blobs.db, blobs, model="old"), KVTree(blobs.db, blobs, model="new")
    s = segment_hash([0])
    for i in range(4):
        old.store([s, segment_hash([i + 1])], 2, b"." * 100)
        assert old.node_blob([s, segment_hash([i + 1])])  # each of them served once
    blobs.db.execute("UPDATE blobs SET last_used = last_used - ?", [RETIRED_S + 3600])
    for i in range(8):  # the new model's nodes: 800 bytes more than the 1000 less 400 held
        assert new.store([s, segment_hash([100 + i])], 2, b"." * 100)

    def with_kv(model: str) -> int:
        sql = "SELECT count(*) FROM kv_nodes WHERE model = ? AND blob_key IS NOT NULL"
        return blobs.db.execute(sql, [model]).fetchone()[0]

    assert (with_kv("new"), with_kv("old")) == (8, 2)  # the old model's gave way, not the new
    assert blobs.used(KIND) <= 1000


def test_another_builds_nodes_are_never_served_and_go_first_from_the_new_builds_start(blobs):
    """llama-cpp-python upgraded: KV the old build computed, restored into the new one, would
    change answers without a word. Named by its build (llm/model_file.py kv_name), it is never
    served; and, often used until yesterday, it outlived the new build's fresh nodes by its hits
    for RETIRED_S. Now it goes first at once, as does KV named before builds were."""
    s = segment_hash([0])
    for i, model in enumerate(["m@old1", "m@old1", "m", "m"]):
        tree = KVTree(blobs.db, blobs, model)
        assert tree.store([s, segment_hash([i + 1])], 2, b"." * 100)
        assert tree.node_blob([s, segment_hash([i + 1])])  # each of them served once
    new = KVTree(blobs.db, blobs, "m@new2")
    assert new.longest_prefix([s, segment_hash([1])]).depth == 0
    assert not new.has_blob([s, segment_hash([3])])
    for i in range(8):  # 800 bytes more than the 1000 less 400 held
        assert new.store([s, segment_hash([100 + i])], 2, b"." * 100)

    def with_kv(model: str) -> int:
        sql = "SELECT count(*) FROM kv_nodes WHERE model = ? AND blob_key IS NOT NULL"
        return blobs.db.execute(sql, [model]).fetchone()[0]

    assert with_kv("m@new2") == 8 and with_kv("m@old1") + with_kv("m") == 2
    assert blobs.used(KIND) <= 1000


def test_a_node_made_on_the_way_to_a_deeper_one_is_not_counted_as_evicted(blobs):
    """The reader's instruction (kept in its own file) is a node of the tree only as the parent
    of its header nodes, and never has KV: the planner re-plans nodes and rebuilds prompts when
    KV was evicted, so such a node must not count. A node that loses its KV does, here and in
    the count over every model's tree."""
    tree = KVTree(blobs.db, blobs, "m")
    other = KVTree(blobs.db, blobs, "reader")
    path = [segment_hash([1, 2]), segment_hash([3])]
    assert other.store(path, 3, b"h" * 10)  # its parent made on the way, without KV
    assert tree.store([segment_hash([9])], 1, b"s" * 10)
    assert other.stats()["nodes"] == 2 and other.stats()["evicted"] == 0
    assert tree.evicted_anywhere() == 0
    leaf = "SELECT blob_key FROM kv_nodes WHERE model = 'reader' AND depth = 2"
    blobs.delete(blobs.db.execute(leaf).fetchone()[0])
    stats = other.stats()
    assert (stats["nodes"], stats["nodes_with_kv"], stats["evicted"]) == (2, 0, 1)
    assert tree.stats()["evicted"] == 0 and tree.evicted_anywhere() == 1


def test_a_full_disk_stores_nothing_keeps_what_is_stored_and_says_where(blobs, monkeypatch):
    """The disk fills while a node is written: the put stores nothing and says so (naming the
    folder and what to do) instead of raising into the question or the night that computed the
    KV; every blob stored before is there, whole, and a later put with room clears the flag."""
    import errno

    import cache.blobs

    tree = KVTree(blobs.db, blobs, model="m1")
    kept = [segment_hash([1])]
    assert tree.store(kept, 1, b"s1")

    def full(target, write, suffix=".tmp"):
        raise OSError(errno.ENOSPC, "No space left on device", str(target))

    real = cache.blobs.replace_atomically
    monkeypatch.setattr(cache.blobs, "replace_atomically", full)
    new = [segment_hash([1]), segment_hash([2])]
    assert tree.store(new, 2, b"s2") is False
    assert blobs.no_room and str(blobs.root) in blobs.no_room and "kv_budget_mb" in blobs.no_room
    assert tree.longest_prefix(new).blobs == [b"s1"] and not tree.has_blob(new)
    assert blobs.count(KIND) == 1
    monkeypatch.setattr(cache.blobs, "replace_atomically", real)
    assert tree.store(new, 2, b"s2") and blobs.no_room is None
    assert tree.longest_prefix(new).blobs == [b"s1", b"s2"]
