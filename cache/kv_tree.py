"""The chunk KV tree: one node per prompt segment, one path per retrieved chunk order.

A node is (model, parent, hash of the segment's tokens); its blob holds the KV of that segment's
positions alone (valid on this path only: positions are absolute). Since segments are tokenized
on their own, a path is an exact token prefix, and the longest run of stored nodes from the root
can be restored instead of prefilled.

Eviction (over the blob budget) keeps prefixes whole: a node whose child still has KV goes last,
since without it the child cannot be restored. Among the rest the least frequently used go
first and, at equal use, the deepest: a [system, chunk] node serves every question whose first
chunk it is, a deeper node only one chunk order. Plain LFU with LRU ties evicted a precomputed
chunk node (no hits yet, older) before the leaves of the paths a user's questions had just added.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from sqlite_utils import Database

from cache.blobs import BlobStore
from cache.db import transaction, write
from cache.room import unless_full

KIND = "kv"


def segment_hash(tokens: Sequence[int]) -> str:
    return hashlib.sha256(np.asarray(tokens, dtype=np.int32).tobytes()).hexdigest()[:32]


@dataclass(frozen=True)
class Restore:
    depth: int  # segments restored (0: nothing)
    n_tokens: int
    blobs: list[bytes]  # one per segment, from the root


# a model whose KV no one has read or written for this long, while another's was: one the user
# has left (another writer chosen); its nodes, kept apart by its fingerprint, are never served
RETIRED_S = 7 * 86400
# a model's name may end in BUILD and the runtime build that computes its KV (llm/model_file.py
# kv_name): KV of another build (or named before builds were) is never served, and is retired
# from the first start of a new build, not RETIRED_S later
BUILD = "@"
# both find a blob's node through the partial indexes on kv_nodes (cache/db.py); the nodes of a
# retired model go first, whatever their hits (else they outlived the new model's fresh nodes)
EVICTION_ORDER = (
    "WITH used AS (SELECT n.model, max(b.last_used) AS last FROM kv_nodes n "
    "JOIN blobs b ON b.key = n.blob_key GROUP BY n.model) "
    "SELECT b.key, b.size FROM blobs b LEFT JOIN kv_nodes n ON n.blob_key = b.key "
    "LEFT JOIN used u ON u.model = n.model WHERE b.kind = ?1 ORDER BY "
    "coalesce(u.last, 0) >= (SELECT max(last) FROM used) - ?2 "
    f"AND (?3 = '' OR substr(n.model, instr(n.model, '{BUILD}') + 1) = ?3), "
    "EXISTS (SELECT 1 FROM kv_nodes c WHERE c.parent_id = n.id "
    "AND c.blob_key IS NOT NULL), b.hits, coalesce(n.depth, 0) DESC, b.last_used"
)
FORGET_BLOB = "UPDATE kv_nodes SET blob_key = NULL WHERE blob_key = ?"
# a node that had KV and lost it: a node made only on the way to a deeper one keeps n_tokens -1
# until KV of its own is stored (_ensure_path)
EVICTED = "blob_key IS NULL AND n_tokens >= 0"


class KVTree:
    def __init__(self, db: Database, blobs: BlobStore, model: str) -> None:
        self.db = db
        self.blobs = blobs
        self.model = model
        self.build = model.partition(BUILD)[2]  # "": no build named, none retired for it
        blobs.on_evict.append(self._forget_blob)
        blobs.evict_order[KIND] = self._eviction_order

    def _child(self, parent: int | None, seg: str) -> tuple[int, str | None, int] | None:
        row = self.db.execute(
            "SELECT id, blob_key, n_tokens FROM kv_nodes WHERE model = ? "
            "AND coalesce(parent_id, 0) = ? AND segment_hash = ?",
            [self.model, parent or 0, seg],
        ).fetchone()
        return tuple(row) if row else None

    def path(self, hashes: Sequence[str]) -> list[tuple[int, str | None, int]]:
        """The stored nodes along `hashes`, from the root, as far as the tree goes."""
        nodes: list[tuple[int, str | None, int]] = []
        parent = None
        for seg in hashes:
            node = self._child(parent, seg)
            if node is None:
                break
            nodes.append(node)
            parent = node[0]
        return nodes

    def longest_prefix(self, hashes: Sequence[str]) -> Restore:
        """The blobs of the nodes from the root, as far as each is present and intact."""
        blobs: list[bytes] = []
        n_tokens = 0
        for node_id, blob_key, tokens in self.path(hashes):
            blob = self.blobs.get(blob_key) if blob_key else None  # checksum verified
            if blob is None:
                break
            self._touch(node_id)
            blobs.append(blob)
            n_tokens = tokens
        return Restore(len(blobs), n_tokens, blobs)

    def node_blob(self, hashes: Sequence[str]) -> tuple[bytes, int] | None:
        """The blob of the node at the end of `hashes` and the position after its segment,
        when the node exists and its blob is intact (any-order reuse reads [system, chunk]
        nodes this way, whatever came before the chunk in the prompt)."""
        nodes = self.path(hashes)
        if len(nodes) != len(hashes) or not nodes or nodes[-1][1] is None:
            return None
        node_id, blob_key, n_tokens = nodes[-1]
        blob = self.blobs.get(blob_key)  # checksum verified
        if blob is None:
            return None
        self._touch(node_id)
        return blob, n_tokens

    @unless_full("a KV node", False)
    def store(self, hashes: Sequence[str], n_tokens: int, blob: bytes) -> bool:
        """Record the path `hashes` and keep `blob` as the KV of its last segment."""
        with transaction(self.db):
            node_id = self._ensure_path(hashes, n_tokens)
            key = f"{self.model}-{node_id}"
            # named first, so the eviction this put may cause sees that the parent has a child
            self.db.execute("UPDATE kv_nodes SET blob_key = ? WHERE id = ?", [key, node_id])
            if not self.blobs.put(KIND, key, blob):
                self.db.execute("UPDATE kv_nodes SET blob_key = NULL WHERE id = ?", [node_id])
                return False
            return True

    def has_blob(self, hashes: Sequence[str]) -> bool:
        nodes = self.path(hashes)
        return len(nodes) == len(hashes) and nodes[-1][1] is not None

    def _ensure_path(self, hashes: Sequence[str], n_tokens: int) -> int:
        parent = None
        for depth, seg in enumerate(hashes, 1):
            node = self._child(parent, seg)
            if node is None:
                tokens = n_tokens if depth == len(hashes) else -1
                parent = self.db.execute(
                    "INSERT INTO kv_nodes (model, parent_id, segment_hash, depth, n_tokens, "
                    "last_used) VALUES (?, ?, ?, ?, ?, ?)",
                    [self.model, parent, seg, depth, tokens, time.time()],
                ).lastrowid
            else:
                parent = node[0]
        self.db.execute("UPDATE kv_nodes SET n_tokens = ? WHERE id = ?", [n_tokens, parent])
        return parent

    @unless_full("a KV node's use")
    def _touch(self, node_id: int) -> None:
        write(
            self.db,
            "UPDATE kv_nodes SET hits = hits + 1, last_used = ? WHERE id = ?",
            [time.time(), node_id],
        )

    def _eviction_order(self) -> list[tuple[str, int]]:
        """Every KV blob (all models), first to evict first: a retired model's (RETIRED_S, or
        of another build than this tree's), then leaves before parents, then fewest hits, then
        deepest, then least recently used."""
        return self.db.execute(EVICTION_ORDER, [KIND, RETIRED_S, self.build]).fetchall()

    def _forget_blob(self, key: str) -> None:
        write(self.db, FORGET_BLOB, [key])

    def evicted_anywhere(self) -> int:
        """Nodes of every model's tree whose KV was evicted (the node stays, without a blob)."""
        return self.db.execute(f"SELECT count(*) FROM kv_nodes WHERE {EVICTED}").fetchone()[0]

    def stats(self) -> dict[str, int]:
        """This model's nodes (node_counts) and the bytes of all KV blobs."""
        return {**node_counts(self.db, self.model), "bytes": self.blobs.used(KIND)}


def node_counts(db: Database, model: str | None = None) -> dict[str, int]:
    """Nodes, those with KV, those whose KV was evicted (a node that only leads to a deeper one,
    such as the reader's instruction kept in its own file, never had any): of `model`'s tree,
    or (None) of every model's, as the one KV budget holds them. Reads `db` alone: no model."""
    where, params = ("WHERE model = ?", [model]) if model is not None else ("", [])
    nodes = db.execute(
        f"SELECT count(*), count(blob_key), count(*) FILTER (WHERE {EVICTED}) "
        f"FROM kv_nodes {where}",
        params,
    ).fetchone()
    return {"nodes": nodes[0], "nodes_with_kv": nodes[1], "evicted": nodes[2]}
