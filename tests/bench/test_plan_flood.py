"""Bulk mail last (issue 47) on real mail: the dev mailbox's last weeks beside a write-in
campaign of 1,000 nearly alike mails from 1,000 senders in its newest week (bench/flood.py).
The plan's first 500 chunks hold at most 5% of the campaign, and the recent questions' source
mails are covered no less with the campaign than without. bench/coverage_plan.py --flood
measures the whole mailbox and the prompts' chunks (bench/results/plan_flood.json)."""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta

import pytest

from assistant.ingest.chunking import chunk_document
from assistant.ingest.emails import parse_email
from assistant.knowledge.db import open_db
from assistant.knowledge.store import KnowledgeStore
from assistant.precompute import coverage
from assistant.precompute.planner import chunk_texts
from bench.flood import flood, is_flood
from tests.conftest import DATA, REPO

MBOX = REPO.parent / "shared" / "eval" / "mail" / "skilling-j.mbox.gz"
NEWEST = datetime(2001, 11, 19, 20, 52, tzinfo=UTC)  # the dev mailbox's newest mail
WEEKS = 8
BUDGETS = (100, 250, 500, 1000)

pytestmark = pytest.mark.skipif(not MBOX.exists(), reason="../shared/eval is absent")


def _last_weeks() -> Iterable[bytes]:
    """The raw mails of the dev mailbox's last WEEKS weeks, picked by their From_ line's date
    (parsing the whole mailbox takes most of a minute)."""
    since = NEWEST - timedelta(weeks=WEEKS)
    with gzip.open(MBOX) as fh:
        raw = fh.read()
    for piece in re.split(rb"\n(?=From \S+ \w{3} \w{3} )", raw):
        envelope, _, message = piece.partition(b"\n")
        when = datetime.strptime(" ".join(envelope.decode().split()[-5:]), "%a %b %d %H:%M:%S %Y")
        if when.replace(tzinfo=UTC) >= since:
            yield message


def _documents(raws: Iterable[bytes]) -> list:
    return [(doc, chunk_document(doc)) for doc in (parse_email(r, "skilling-j.mbox") for r in raws)]


def _home(*parts: list) -> KnowledgeStore:
    store = KnowledgeStore(open_db(None))
    for part in parts:
        for doc, chunks in part:
            store.upsert(doc, chunks)
    return store


def _measure(store: KnowledgeStore) -> tuple[list[int], set[int], list[set[int]]]:
    chunks_of = store.chunk_documents()
    plan = coverage.plan(store.mail_headers(), chunks_of, {}, "", chunk_texts(store))
    headers = store.mail_headers()
    flood_chunks = {c for h in headers if is_flood(h.message_id) for c in chunks_of[h.doc_id]}
    by_id = {h.message_id: h.doc_id for h in headers}
    recent = (json.loads(line)["source"] for line in (DATA / "qa" / "skilling_recent.jsonl").open())
    sources = [set(chunks_of[by_id[s]]) for s in recent if s in by_id]
    return plan.chunks, flood_chunks, sources


def test_a_campaign_in_the_newest_week_is_planned_after_the_correspondence():
    mail = _documents(_last_weeks())
    campaign = _documents(m.as_bytes() for m in flood(1_000, NEWEST))
    plain, _, sources = _measure(_home(mail))
    flooded, flood_chunks, flood_sources = _measure(_home(mail, campaign))
    assert len(flood_chunks) >= 1_000 and len(sources) >= 30
    assert len(set(flooded[:500]) & flood_chunks) <= 0.05 * 500
    for n in BUDGETS:
        with_flood = sum(bool(s & set(flooded[:n])) for s in flood_sources)
        without = sum(bool(s & set(plain[:n])) for s in sources)
        assert with_flood >= without, n
