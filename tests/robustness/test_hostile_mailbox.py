"""One generated hostile mailbox (tests/hostile.py), mbox and Maildir: every valid message is
stored, with its text, exactly once; every bad item is reported with its file and place."""

from __future__ import annotations

import os

import pytest

from assistant.importing.importer import Importer
from tests.conftest import FakeEmbedder
from tests.hostile import Expected, HostileMailbox, write_hostile_mailbox


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    """The hostile mailbox imported twice into one store: (mailbox, store, first, second)."""
    from assistant.knowledge.db import open_db
    from assistant.knowledge.store import KnowledgeStore

    box = write_hostile_mailbox(tmp_path_factory.mktemp("hostile"), n_valid=30, huge_mb=20)
    store = KnowledgeStore(open_db(None))
    importer = Importer(store, FakeEmbedder())
    first = importer.run(box.paths)
    version = store.version("chunks")
    for path in box.paths:  # touched, not changed: an unchanged mbox would be skipped unread
        os.utime(path, (1, 1))
    second = importer.run(box.paths)
    assert store.version("chunks") == version  # the rerun changed nothing
    return box, store, first, second


def stored_bodies(store) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for msg_id, body in store.db.execute("SELECT message_id, body FROM documents").fetchall():
        out.setdefault(msg_id, set()).add(body)
    return out


def test_every_valid_message_is_stored_once_with_its_text(imported):
    box, store, first, _ = imported
    bodies = stored_bodies(store)
    lost = {m: b - bodies.get(m, set()) for m, b in box.bodies.items() if b - bodies.get(m, set())}
    assert lost == {}
    assert bodies == box.bodies  # nothing more either: no garbage stored as mail, no copies
    assert first.added == store.stats()["documents"] == box.stored_count
    assert not box.ignored & set(bodies)  # Maildir tmp/ is left alone
    assert store.stats()["embedded_chunks"] == store.stats()["chunks"]


def test_huge_attachment_is_listed_not_stored(imported):
    _, store, _, _ = imported
    attachments, chunks = store.db.execute(
        "SELECT attachments, (SELECT count(*) FROM chunks WHERE document_id = d.id) "
        "FROM documents d WHERE message_id = 'huge@hostile.test'"
    ).fetchone()
    assert "photos.tar" in attachments and chunks == 1
    largest = store.db.execute("SELECT max(length(body) + length(quoted)) FROM documents")
    assert largest.fetchone()[0] < 10_000


def reported(issues, expected: Expected) -> bool:
    return any(
        i.path == str(expected.path)
        and expected.reason in i.reason
        and (not expected.where or i.where == expected.where)
        for i in issues
    )


def unreported(box: HostileMailbox, report) -> list[Expected]:
    """The expected errors and warnings that `report` does not name with their file and place."""
    missing = [e for e in box.errors if not reported(report.errors, e)]
    return missing + [w for w in box.warnings if not reported(report.warnings, w)]


def test_every_bad_item_is_reported_with_its_file_and_place(imported):
    box, store, first, _ = imported
    assert len(first.errors) == len(box.errors) and unreported(box, first) == []
    logged = store.db.execute(
        "SELECT path, location, reason FROM import_issues WHERE severity = 'error'"
    ).fetchall()
    for e in box.errors:
        assert any(p == str(e.path) and loc == e.where and e.reason in r for p, loc, r in logged)


def test_reimport_adds_nothing_and_reports_the_same(imported):
    box, store, first, second = imported
    assert (second.added, second.updated, second.chunks_added, second.embedded) == (0, 0, 0, 0)
    assert second.seen == first.seen
    assert sorted(map(str, second.errors)) == sorted(map(str, first.errors))
    assert store.stats()["documents"] == box.stored_count


@pytest.mark.parametrize("seed", range(1, 6))
def test_any_order_of_the_hostile_items_loses_nothing(tmp_path, store, seed):
    box = write_hostile_mailbox(tmp_path, n_valid=10, huge_mb=1, seed=seed)
    report = Importer(store, FakeEmbedder()).run(box.paths)
    assert stored_bodies(store) == box.bodies
    assert len(report.errors) == len(box.errors) and unreported(box, report) == []
