"""Kept current (issue 35): mail deleted from a source read whole is removed with its chunks and
vectors, a source that could not be read removes nothing, a moved mail stays one mail in its new
folder, and the QA answers that quoted removed mail are stale."""

from __future__ import annotations

import mailbox
import os
from pathlib import Path

import numpy as np
import pytest

from assistant.importing.importer import Importer
from assistant.kv.prompt_cache import Preempted
from assistant.precompute.runner import Precompute
from assistant.services import open_services
from tests.conftest import FakeEmbedder, make_email, write_mbox


def mails(start: int, n: int, tag: str = "m"):
    return [make_email(subject=f"{tag} {i}", body=f"Mail {tag} {i} asks about the {i} tiles.",
                       msgid=f"<{tag}{i}@x.nl>") for i in range(start, start + n)]  # fmt: skip


def counts(store) -> tuple[int, int, int]:
    q = store.db.execute
    return tuple(q(f"SELECT count(*) FROM {t}").fetchone()[0]
                 for t in ("documents", "chunks", "embeddings"))  # fmt: skip


def message_ids(store) -> set[str]:
    return {r[0] for r in store.db.execute("SELECT message_id FROM documents").fetchall()}


def maildir_of(root, msgs) -> tuple[mailbox.Maildir, list[str]]:
    box = mailbox.Maildir(root, create=True)
    return box, [box.add(m) for m in msgs]


def test_two_files_deleted_from_a_maildir_remove_exactly_two_mails(tmp_path, store, fake_embedder):
    box, keys = maildir_of(tmp_path / "Mail", mails(0, 10))
    Importer(store, fake_embedder).run([tmp_path / "Mail"])
    assert counts(store) == (10, 10, 10)
    box.remove(keys[3])
    box.remove(keys[7])
    report = Importer(store, fake_embedder).run([tmp_path / "Mail"])
    assert report.removed == 2 and "2 removed" in report.summary()
    assert counts(store) == (8, 8, 8)
    assert message_ids(store) == {f"m{i}@x.nl" for i in range(10)} - {"m3@x.nl", "m7@x.nl"}


def test_an_mbox_rewritten_without_three_mails_removes_those_three(tmp_path, store, fake_embedder):
    msgs = mails(0, 8)
    box = write_mbox(tmp_path / "box.mbox", msgs)
    Importer(store, fake_embedder).run([box])
    write_mbox(box, [m for i, m in enumerate(msgs) if i not in (1, 4, 6)])
    report = Importer(store, fake_embedder).run([box])
    assert report.removed == 3 and report.added == 0
    assert counts(store) == (5, 5, 5)
    assert message_ids(store) == {f"m{i}@x.nl" for i in (0, 2, 3, 5, 7)}
    offsets = store.db.execute("SELECT source_offset FROM documents ORDER BY source_offset")
    assert [r[0] for r in offsets] == [_offset(box, i) for i in range(5)]  # moved up in the file


def _offset(box, n: int) -> int:
    """The byte offset of the n-th From_ line of `box`."""
    data, at = box.read_bytes(), 0
    for _ in range(n):
        at = data.index(b"\nFrom ", at) + 1
    return at


def test_a_folder_that_cannot_be_listed_removes_nothing(tmp_path, store, fake_embedder,
                                                          monkeypatch):  # fmt: skip
    maildir_of(tmp_path / "Mail", mails(0, 4))
    Importer(store, fake_embedder).run([tmp_path / "Mail"])
    # os.walk and glob pass over a folder they cannot list: it reads as empty, its files stay
    monkeypatch.setattr("assistant.ingest.maildir._messages", lambda root: iter(()))
    report = Importer(store, fake_embedder).run([tmp_path / "Mail"])
    assert report.seen == 0 and report.removed == 0 and counts(store) == (4, 4, 4)


def test_a_path_that_cannot_be_read_removes_nothing(tmp_path, store, fake_embedder):
    _, keys = maildir_of(tmp_path / "Mail", mails(0, 4))
    Importer(store, fake_embedder).run([tmp_path / "Mail"])
    (tmp_path / "Mail").rename(tmp_path / "Elsewhere")  # an unmounted disk, a renamed folder
    report = Importer(store, fake_embedder).run([tmp_path / "Mail"])
    assert report.errors and report.removed == 0 and counts(store) == (4, 4, 4)


def test_a_message_that_fails_to_parse_now_is_not_deleted(tmp_path, store, fake_embedder):
    box = write_mbox(tmp_path / "box.mbox", mails(0, 3))
    Importer(store, fake_embedder).run([box])
    pieces = box.read_bytes().split(b"\nFrom ")
    pieces[1] = pieces[1].split(b"\n", 1)[0] + b"\nno headers here, only text\n"
    box.write_bytes(b"\nFrom ".join(pieces))  # m1 reads as no mail now: an error, not a deletion
    report = Importer(store, fake_embedder).run([box])
    assert report.errors and report.removed == 0 and counts(store)[0] == 3


def test_a_cancelled_reimport_removes_nothing(tmp_path, store, fake_embedder):
    box, keys = maildir_of(tmp_path / "Mail", mails(0, 5))
    Importer(store, fake_embedder).run([tmp_path / "Mail"])
    box.remove(keys[0])
    seen = []
    report = Importer(store, fake_embedder).run(
        [tmp_path / "Mail"], notify=seen.append, cancelled=lambda: len(seen) >= 2
    )
    assert report.cancelled and report.removed == 0 and counts(store)[0] == 5


def test_a_moved_mail_stays_one_mail_in_its_new_folder(tmp_path, store, fake_embedder):
    inbox, keys = maildir_of(tmp_path / "Mail", mails(0, 3))
    archive = inbox.add_folder("Archive")
    Importer(store, fake_embedder).run([tmp_path / "Mail"])
    archive.add(inbox.get_message(keys[1]))
    inbox.remove(keys[1])
    report = Importer(store, fake_embedder).run([tmp_path / "Mail"])
    assert (report.removed, report.moved, report.added) == (0, 1, 0)
    rows = store.db.execute("SELECT folder, source_path FROM documents WHERE message_id = ?",
                            ["m1@x.nl"]).fetchall()  # fmt: skip
    assert len(rows) == 1 and rows[0][0] == "Archive" and os.path.exists(rows[0][1])
    assert counts(store) == (3, 3, 3)


def test_a_copy_left_in_another_folder_keeps_the_mail(tmp_path, store, fake_embedder):
    inbox, keys = maildir_of(tmp_path / "Mail", mails(0, 3))
    inbox.add_folder("Archive").add(inbox.get_message(keys[2]))  # a copy: one stored mail
    Importer(store, fake_embedder).run([tmp_path / "Mail"])
    assert counts(store)[0] == 3
    inbox.remove(keys[2])
    report = Importer(store, fake_embedder).run([tmp_path / "Mail"])
    assert report.removed == 0 and counts(store)[0] == 3


def test_a_copy_in_an_unchanged_mbox_keeps_the_mail(tmp_path, store, fake_embedder):
    (tmp_path / "top").mkdir()
    inbox, keys = maildir_of(tmp_path / "top" / "Mail", mails(0, 3))
    write_mbox(tmp_path / "top" / "saved.mbox", mails(2, 1))  # a copy of m2, skipped next time
    Importer(store, fake_embedder).run([tmp_path / "top"])
    inbox.remove(keys[2])
    inbox.remove(keys[0])
    report = Importer(store, fake_embedder).run([tmp_path / "top"])
    assert report.sources_skipped == 1 and report.removed == 1
    assert message_ids(store) == {"m1@x.nl", "m2@x.nl"}
    folder = store.db.execute("SELECT folder FROM documents WHERE message_id = 'm2@x.nl'")
    assert folder.fetchone()[0] == "saved"


def test_answers_that_quoted_removed_mail_are_stale(tmp_path):
    box, keys = maildir_of(tmp_path / "Mail", mails(0, 3))
    ctx = open_services(tmp_path / "home")
    ctx._embedder = FakeEmbedder()
    ctx.importer().run([tmp_path / "Mail"])
    ids = dict(ctx.store.db.execute(
        "SELECT d.message_id, c.id FROM chunks c JOIN documents d ON d.id = c.document_id"
    ).fetchall())  # fmt: skip
    vector = np.ones(64, dtype=np.float32) / 8
    quoting = ctx.qa.add("which tiles?", vector, "1 tile", [str(ids["m0@x.nl"])],
                         evidence=[(ids["m1@x.nl"], "Mail m 1 asks")])  # fmt: skip
    other = ctx.qa.add("and two?", vector, "2", [str(ids["m2@x.nl"])])
    box.remove(keys[1])
    report = ctx.importer().run([tmp_path / "Mail"])
    assert report.removed == 1
    stale = {e.id for e in ctx.qa.answered(stale=True)}
    assert stale == {quoting} and other not in stale


def changed_since_import(tmp_path):
    """A home that imported a three-mail Maildir, which then gained a mail and lost one; and a
    precompute runner on it."""
    box, keys = maildir_of(tmp_path / "Mail", mails(0, 3))
    ctx = open_services(tmp_path / "home")
    ctx._embedder = FakeEmbedder()
    ctx.importer().run([tmp_path / "Mail"])
    box.add(mails(3, 1)[0])
    box.remove(keys[0])
    return ctx, Precompute(ctx.precompute_parts(), settle_seconds=0)


def test_a_nights_first_job_imports_the_mail_a_maildir_gained(tmp_path):
    ctx, runner = changed_since_import(tmp_path)
    runner.plan()  # other jobs queued; a plan outside a run reads nothing
    assert runner.queue.pending() > 0 and runner.queue.keys("reimport") == []
    jobs: list[str] = []
    report = runner.run(notify=lambda e: jobs.append(e.job), cancelled=lambda: bool(jobs))
    assert jobs == ["reimport"] and report.by_kind == {"reimport": 1}
    assert message_ids(ctx.store) == {"m1@x.nl", "m2@x.nl", "m3@x.nl"}
    assert ctx.store.all_embedded(ctx.embedder.name)


def test_the_re_read_steps_aside_for_a_user_question_and_removes_nothing(tmp_path):
    ctx, runner = changed_since_import(tmp_path)
    runner.planner.reimport_due = True
    runner.plan()
    job = runner.queue.claim()
    with ctx.presence.busy(), pytest.raises(Preempted):
        runner.handlers.run(job)
    assert message_ids(ctx.store) == {"m0@x.nl", "m1@x.nl", "m2@x.nl"}  # as it was
    runner.handlers.run(job)  # the user is gone: it runs again, whole
    assert message_ids(ctx.store) == {"m1@x.nl", "m2@x.nl", "m3@x.nl"}


def test_a_relative_path_names_the_same_mail_from_anywhere(tmp_path, store, fake_embedder,
                                                           monkeypatch):  # fmt: skip
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    maildir_of(tmp_path / "a" / "Mail", mails(0, 2))
    maildir_of(tmp_path / "b" / "Mail", mails(5, 1, "other"))
    monkeypatch.chdir(tmp_path / "a")
    Importer(store, fake_embedder).run([Path("Mail")])
    monkeypatch.chdir(tmp_path / "b")  # another folder of the same name, elsewhere
    report = Importer(store, fake_embedder).run([Path("Mail")])
    assert (report.added, report.removed) == (1, 0) and counts(store)[0] == 3


def test_a_remembered_mbox_since_deleted_holds_no_copies(tmp_path, store, fake_embedder):
    inbox, keys = maildir_of(tmp_path / "Mail", mails(0, 3))
    old = write_mbox(tmp_path / "old.mbox", mails(0, 1, "o"))
    Importer(store, fake_embedder).run([tmp_path / "Mail", old])
    old.unlink()
    inbox.remove(keys[1])
    report = Importer(store, fake_embedder).run([tmp_path / "Mail"])
    assert report.removed == 1 and "m1@x.nl" not in message_ids(store)


def test_a_remembered_mbox_that_cannot_be_read_keeps_every_mail(tmp_path, store, fake_embedder,
                                                                monkeypatch):  # fmt: skip
    inbox, keys = maildir_of(tmp_path / "Mail", mails(0, 3))
    old = write_mbox(tmp_path / "old.mbox", mails(0, 1, "o"))
    Importer(store, fake_embedder).run([tmp_path / "Mail", old])
    inbox.remove(keys[1])
    monkeypatch.setattr("assistant.importing.import_sweep._message_ids_in", lambda path, ids: None)
    report = Importer(store, fake_embedder).run([tmp_path / "Mail"])
    assert report.removed == 0 and counts(store)[0] == 4


def two_maildirs(tmp_path, store, fake_embedder) -> tuple[Path, Path, list[str]]:
    """~/Mail/INBOX (m0..m2) and ~/Mail/Archive (a0), two Maildirs of their own (as mbsync lays
    them out), imported once through ~/Mail: both are remembered."""
    (tmp_path / "Mail").mkdir()
    _, keys = maildir_of(tmp_path / "Mail" / "INBOX", mails(0, 3))
    maildir_of(tmp_path / "Mail" / "Archive", mails(0, 1, "a"))
    Importer(store, fake_embedder).run([tmp_path / "Mail"])
    assert counts(store) == (4, 4, 4)
    return tmp_path / "Mail" / "INBOX", tmp_path / "Mail" / "Archive", keys


def test_a_mail_moved_to_another_remembered_maildir_is_kept_until_that_is_read(
    tmp_path, store, fake_embedder
):
    inbox, archive, keys = two_maildirs(tmp_path, store, fake_embedder)
    doc_id = store.db.execute("SELECT id FROM documents WHERE message_id = 'm1@x.nl'").fetchone()
    moved = archive / "cur" / f"{keys[1]}:2,S"
    os.rename(inbox / "new" / keys[1], moved)  # the mail client archived it, and marked it read
    report = Importer(store, fake_embedder).run([inbox])  # Archive is not read this time
    assert (report.removed, report.moved, report.added) == (0, 1, 0)
    row = store.db.execute("SELECT id, source_path FROM documents WHERE message_id = 'm1@x.nl'")
    assert row.fetchone() == (doc_id[0], str(moved.resolve()))  # the same mail, its vectors kept
    assert counts(store) == (4, 4, 4)
    report = Importer(store, fake_embedder).run([archive])  # read later: found where it is
    assert (report.removed, report.added, report.moved) == (0, 0, 0)
    assert counts(store) == (4, 4, 4)
    moved.unlink()  # deleted for real from where it went: removed when that is read
    report = Importer(store, fake_embedder).run([archive])
    assert report.removed == 1 and "m1@x.nl" not in message_ids(store)


def test_a_mail_deleted_while_another_maildir_is_remembered_is_removed(
    tmp_path, store, fake_embedder
):
    inbox, _archive, keys = two_maildirs(tmp_path, store, fake_embedder)
    (inbox / "new" / keys[2]).unlink()
    report = Importer(store, fake_embedder).run([inbox])
    assert (report.removed, report.moved) == (1, 0) and counts(store) == (3, 3, 3)
    assert "m2@x.nl" not in message_ids(store)


def test_another_mail_under_the_same_file_name_does_not_keep_a_deleted_one(
    tmp_path, store, fake_embedder
):
    inbox, archive, keys = two_maildirs(tmp_path, store, fake_embedder)
    (inbox / "new" / keys[0]).unlink()
    (archive / "cur" / f"{keys[0]},S=99:2,S").write_bytes(mails(7, 1, "z")[0].as_bytes())
    report = Importer(store, fake_embedder).run([inbox])
    assert report.removed == 1 and "m0@x.nl" not in message_ids(store)


def test_a_remembered_maildir_that_cannot_be_listed_keeps_the_mail(
    tmp_path, store, fake_embedder, monkeypatch
):
    inbox, _archive, keys = two_maildirs(tmp_path, store, fake_embedder)
    (inbox / "new" / keys[1]).unlink()

    def unlistable(folder):
        raise PermissionError(13, "Permission denied", folder)

    monkeypatch.setattr("assistant.importing.maildir_moves._names", unlistable)
    report = Importer(store, fake_embedder).run([inbox])
    assert report.removed == 0 and counts(store) == (4, 4, 4)
