from __future__ import annotations

import pytest

from cache.blobs import BlobStore
from cache.db import open_cache_db
from cache.kv_tree import KIND, KVTree, segment_hash


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
