"""What the caches hold, read from the cache database alone: the QA bank's entries, the KV
tree's nodes and bytes, the precompute's queue, abstract and last run. No model, no encoder and
no write is needed for them, so the cache screen shows them without loading the models."""

from __future__ import annotations

from dataclasses import dataclass

from sqlite_utils import Database

from cache.blobs import BlobStore
from cache.jobs import JobQueue
from cache.kv_tree import KIND, node_counts
from cache.prediction import KnowledgeAbstract
from cache.qa_bank import bank_stats
from cache.runs import RunLog


@dataclass(frozen=True)
class CacheCounts:
    qa: dict[str, int]  # QABank.stats()'s keys
    kv: dict[str, int]  # KVTree.stats()'s keys, over every model's nodes
    precompute: dict  # precompute_counts()


def cache_counts(db: Database, blobs: BlobStore) -> CacheCounts:
    """The counts of the caches in `db` (`blobs`: its blob store). The KV tree's nodes are
    every model's: the one KV budget holds them all, and naming this writer's tree would mean
    finding its model file (llm/models.py), which may join or convert one."""
    qa = bank_stats(db)
    kv = {**node_counts(db), "bytes": blobs.used(KIND)}
    return CacheCounts(qa, kv, precompute_counts(db, qa["pending"]))


def precompute_counts(db: Database, pending: int | None = None) -> dict:
    """The job queue by state, the predicted questions waiting for an answer (`pending`: the QA
    bank's, where already read), the abstract's items and the last run that ended."""
    jobs = JobQueue(db).counts()
    return {
        "jobs_queued": jobs["queued"] + jobs["running"],
        "jobs_done": jobs["done"],
        "jobs_failed": jobs["failed"],
        "predicted_pending": bank_stats(db)["pending"] if pending is None else pending,
        "abstract_items": KnowledgeAbstract(db).count(),
        "last_run": RunLog(db).last(),
    }
