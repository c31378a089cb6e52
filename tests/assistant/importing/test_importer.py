"""The importer against hostile input: each case names the problem and loses no valid message."""

from __future__ import annotations

import os
import shutil
import sqlite3
from contextlib import closing
from dataclasses import replace
from pathlib import Path

import pytest

from assistant.importing.importer import Importer
from assistant.ingest import Source, SourceError, detect_sources
from assistant.ingest.mbox import count_mbox
from assistant.knowledge.db import open_db
from assistant.knowledge.store import KnowledgeStore
from tests.conftest import make_email, write_mbox


def _messages(n: int, prefix: str = "m") -> list:
    return [
        make_email(
            subject=f"Mail {i}",
            body=f"Body number {i} about topic {prefix}{i}.",
            msgid=f"<{prefix}{i}@example.nl>",
        )
        for i in range(n)
    ]


def _ids(store) -> set[str]:
    return {r[0] for r in store.db.execute("SELECT message_id FROM documents").fetchall()}


def test_import_is_idempotent_and_embeds_every_chunk(tmp_path, store, fake_embedder):
    box = write_mbox(tmp_path / "inbox.mbox", _messages(5))
    importer = Importer(store, fake_embedder)
    first = importer.run([box])
    second = importer.run([box])
    assert (first.added, first.embedded, first.errors) == (5, 5, [])
    assert (second.added, second.sources_skipped, second.embedded) == (0, 1, 0)  # unchanged
    os.utime(box, (1, 1))  # touched: read again, every mail found stored
    third = importer.run([box])
    assert (third.added, third.duplicates, third.embedded) == (0, 5, 0)
    assert store.stats()["documents"] == 5 and store.stats()["embedded_chunks"] == 5


def test_truncated_mbox_keeps_every_message_before_the_cut(tmp_path, store, fake_embedder):
    box = write_mbox(tmp_path / "cut.mbox", _messages(3))
    data = box.read_bytes()
    last = data.rfind(b"\nFrom ")
    box.write_bytes(data[: last + 60])  # the third message ends inside its headers
    report = Importer(store, fake_embedder).run([box])
    assert {"m0@example.nl", "m1@example.nl"} <= _ids(store)
    messages = [str(i) for i in report.errors + report.warnings]
    assert any("cut.mbox" in m and ("truncated" in m or "not an email" in m) for m in messages)


def test_mixed_and_unknown_charsets(tmp_path, store, fake_embedder):
    texts = {
        "utf-8": "Smörgåsbord och café",
        "iso-8859-1": "Bröllopet i Uppsala, hälsningar",
        "windows-1252": "Prijs €14.250 “inclusief” btw",
        "koi8-r": "Привет из Москвы",
    }
    msgs = [
        make_email(subject=cs, body=t, charset=cs, msgid=f"<{cs}@x>") for cs, t in texts.items()
    ]
    bogus = (
        b"From: a@example.nl\nSubject: bogus\nMessage-ID: <bogus@x>\n"
        b"Content-Type: text/plain; charset=x-unknown-9\n\nna\xefve text\n"
    )
    box = write_mbox(tmp_path / "charsets.mbox", msgs)
    box.write_bytes(box.read_bytes() + b"From x Thu Jan  1 00:00:00 2026\n" + bogus + b"\n")
    report = Importer(store, fake_embedder).run([box])
    bodies = dict(store.db.execute("SELECT message_id, body FROM documents").fetchall())
    for cs, text in texts.items():
        assert bodies[f"{cs}@x"] == text
    assert bodies["bogus@x"] == "naïve text"
    assert any("unknown charset" in i.reason for i in report.warnings)


def test_binary_garbage_in_maildir_is_reported_and_skipped(tmp_path, store, fake_embedder):
    root = tmp_path / "Maildir"
    for sub in ("cur", "new", "tmp"):
        (root / sub).mkdir(parents=True)
    for i, msg in enumerate(_messages(3)):
        (root / "cur" / f"17000000{i}.M1P1.host:2,S").write_bytes(msg.as_bytes())
    (root / "new" / "garbage").write_bytes(os.urandom(4096).replace(b":", b"."))
    report = Importer(store, fake_embedder).run([root])
    assert _ids(store) == {"m0@example.nl", "m1@example.nl", "m2@example.nl"}
    assert len(report.errors) == 1
    assert "garbage" in report.errors[0].path and "not an email" in report.errors[0].reason


def test_mbox_that_lost_its_first_from_line_keeps_every_message(tmp_path, store, fake_embedder):
    box = write_mbox(tmp_path / "inbox", _messages(3))
    data = box.read_bytes()
    box.write_bytes(data[data.index(b"\n") + 1 :])  # it now starts with the first mail's headers
    assert [s.kind for s in detect_sources(box)] == ["mbox"] and count_mbox(box) == 3
    report = Importer(store, fake_embedder).run([box])
    assert _ids(store) == {"m0@example.nl", "m1@example.nl", "m2@example.nl"}
    assert [(w.where, "no 'From ' line" in w.reason) for w in report.warnings] == [
        ("offset 0", True)
    ]
    (tmp_path / "list.md").write_text("Subject: groceries\n\nmilk, eggs")
    (tmp_path / "one.eml").write_bytes(_messages(1, "e")[0].as_bytes())
    kinds = sorted((s.kind, Path(s.path).name) for s in detect_sources(tmp_path))
    assert kinds == [("eml", tmp_path.name), ("mbox", "inbox"), ("notes", tmp_path.name)]


def test_twenty_megabyte_attachment(tmp_path, store, fake_embedder):
    big = make_email(
        subject="Site photos",
        body="Photos of the kitchen attached.",
        msgid="<big@x>",
        attachments=[("site.tar", "application/x-tar", os.urandom(20 * 1024 * 1024))],
    )
    box = write_mbox(tmp_path / "big.mbox", [_messages(1, "a")[0], big, _messages(1, "b")[0]])
    assert box.stat().st_size > 20_000_000
    report = Importer(store, fake_embedder).run([box])
    assert _ids(store) == {"a0@example.nl", "big@x", "b0@example.nl"}
    body, attachments = store.db.execute(
        "SELECT body, attachments FROM documents WHERE message_id = 'big@x'"
    ).fetchone()
    assert body == "Photos of the kitchen attached." and "site.tar" in attachments
    assert report.chunks_added == 3


def test_duplicate_message_ids(tmp_path, store, fake_embedder):
    same = _messages(2)
    clash = make_email(subject="Different", body="Another mail, same id.", msgid="<m0@example.nl>")
    box = write_mbox(tmp_path / "dups.mbox", [*same, same[0], clash])
    report = Importer(store, fake_embedder).run([box])
    assert (report.added, report.duplicates) == (3, 1)
    bodies = {r[0] for r in store.db.execute("SELECT body FROM documents").fetchall()}
    assert "Another mail, same id." in bodies and "Body number 0 about topic m0." in bodies
    assert any("same Message-ID" in i.reason for i in report.warnings)


def test_empty_folder_is_a_clear_error_and_keeps_what_is_stored(tmp_path, store, fake_embedder):
    importer = Importer(store, fake_embedder)
    importer.run([write_mbox(tmp_path / "ok.mbox", _messages(2))])
    (tmp_path / "empty").mkdir()
    with pytest.raises(SourceError, match="nothing to import"):
        detect_sources(tmp_path / "empty")
    report = importer.run([tmp_path / "empty", tmp_path / "missing"])
    assert [("nothing to import" in e.reason or "no such" in e.reason) for e in report.errors] == [
        True,
        True,
    ]
    assert store.stats()["documents"] == 2


def test_killed_import_resumes_without_duplicates(tmp_path, store, fake_embedder):
    box = write_mbox(tmp_path / "inbox.mbox", _messages(10))
    importer = Importer(store, fake_embedder)
    seen = []
    partial = importer.run([box], notify=seen.append, cancelled=lambda: len(seen) >= 4)
    assert partial.cancelled and 0 < store.stats()["documents"] < 10
    assert store.stats()["embedded_chunks"] == 0
    final = importer.run([box])
    assert store.stats()["documents"] == 10 and store.stats()["embedded_chunks"] == 10
    assert final.added == 10 - partial.added


def _committed(db: Path) -> tuple[int, int]:
    """(documents, chunks) as another connection sees them: what is committed."""
    with closing(sqlite3.connect(db)) as conn:
        docs = conn.execute("SELECT count(*) FROM documents").fetchone()[0]
        return docs, conn.execute("SELECT count(*) FROM chunks").fetchone()[0]


@pytest.mark.parametrize(("seconds", "kept"), [(0.0, 3), (3600.0, 0)])
def test_mail_is_committed_batch_by_batch(tmp_path, seconds, kept):
    """A transaction gathers mail for `batch_seconds`: an import that fails keeps the batches
    committed before, loses the one in progress, and never half a mail."""
    box = write_mbox(tmp_path / "inbox.mbox", _messages(6))
    db = tmp_path / "knowledge.db"
    importer = Importer(KnowledgeStore(open_db(db)), None)
    importer.batch_seconds = seconds
    seen = []

    def notify(event) -> None:
        seen.append(_committed(db)[0])
        if event.done == 3:
            raise RuntimeError("the machine went down")

    with pytest.raises(RuntimeError):
        importer.run([box], notify=notify, embed=False)
    assert seen == ([1, 2, 3] if seconds == 0 else [0, 0, 0])
    assert _committed(db) == (kept, kept)  # one chunk a mail


def test_a_cancelled_import_commits_its_batch(tmp_path):
    box = write_mbox(tmp_path / "inbox.mbox", _messages(6))
    db = tmp_path / "knowledge.db"
    importer = Importer(KnowledgeStore(open_db(db)), None)
    importer.batch_seconds = 3600.0
    seen = []
    report = importer.run([box], notify=seen.append, cancelled=lambda: len(seen) >= 4, embed=False)
    assert report.cancelled and _committed(db) == (4, 4)


def test_notes_are_updated_and_deleted_but_unreadable_ones_kept(tmp_path, store, fake_embedder):
    notes = tmp_path / "notes"
    (notes / "sub").mkdir(parents=True)
    (notes / "plants.md").write_text("# Plants\nWater the ficus weekly.")
    (notes / "sub" / "bike.txt").write_text("Bike log\nNew chain in May.")
    (notes / "old.md").write_text("# Old\nTo be deleted.")
    importer = Importer(store, fake_embedder)
    assert importer.run([notes]).added == 3
    (notes / "plants.md").write_text("# Plants\nWater the ficus every ten days.")
    (notes / "old.md").unlink()
    (notes / "sub" / "bike.txt").write_bytes(b"\x00\x01binary now")
    report = importer.run([notes])
    assert (report.updated, report.removed, len(report.errors)) == (1, 1, 1)
    titles = dict(store.db.execute("SELECT title, body FROM documents").fetchall())
    assert titles == {
        "Plants": "# Plants\nWater the ficus every ten days.",
        "Bike log": "Bike log\nNew chain in May.",
    }


def test_notes_in_a_folder_it_cannot_read_now_are_kept(tmp_path, monkeypatch, store, fake_embedder):
    """A notes subfolder that cannot be listed this time (its permissions changed, a synced
    folder not there yet) is an error naming it: the notes stored from it were deleted as if
    their files were gone."""
    notes = tmp_path / "notes"
    work = notes / "work"
    work.mkdir(parents=True)
    (notes / "plants.md").write_text("# Plants\nWater the ficus weekly.")
    (work / "plan.md").write_text("# Plan\nThe roofers come on Tuesday.")
    importer = Importer(store, fake_embedder)
    assert importer.run([notes]).added == 2
    real_iterdir = Path.iterdir

    def iterdir(self):
        if self == work:
            raise PermissionError(13, "Permission denied", str(self))
        return real_iterdir(self)

    monkeypatch.setattr(Path, "iterdir", iterdir)
    report = importer.run([notes])
    assert [e.path for e in report.errors] == [str(work)] and report.removed == 0
    assert {r[0] for r in store.db.execute("SELECT title FROM documents")} == {"Plants", "Plan"}
    monkeypatch.setattr(Path, "iterdir", real_iterdir)
    (work / "plan.md").unlink()  # readable again, the note gone: now it goes
    assert importer.run([notes]).removed == 1


def test_a_folder_gone_before_its_turn_is_an_error_and_the_import_goes_on(
    tmp_path, store, fake_embedder
):
    """A notes or .eml folder moved or deleted while the import read the sources found before
    it (a synced folder, a cleanup): its listing raised, and the traceback stopped the whole
    import, the mail read so far uncounted and the rest of the sources unread."""
    for name in ("a", "b", "c"):
        (tmp_path / name).mkdir()
    write_mbox(tmp_path / "a" / "inbox.mbox", _messages(2))
    (tmp_path / "b" / "n.md").write_text("# N\ntext")
    (tmp_path / "b" / "m.eml").write_bytes(_messages(1, "e")[0].as_bytes())
    (tmp_path / "c" / "later.md").write_text("# Later\nStill read.")

    def notify(_event) -> None:  # once the first mail is stored, b goes
        shutil.rmtree(tmp_path / "b", ignore_errors=True)

    report = Importer(store, fake_embedder).run([tmp_path], notify=notify)
    assert report.added == 3  # the two mails, and c's note after the folder that went
    assert [e.path for e in report.errors] == [str(tmp_path / "b")] * 2  # its .eml and notes
    assert all("cannot be read now (No such file or directory)" in e.reason for e in report.errors)
    assert Source("notes", tmp_path / "b").count() == 0


def test_an_mbox_gone_before_its_turn_is_an_error_and_the_import_goes_on(
    tmp_path, store, fake_embedder
):
    """An mbox deleted or moved while the import read the sources found before it: its open
    raised, and the traceback stopped the whole import. It is one error naming it; the rest
    is read, and it is not remembered as read (its mail stays stored)."""
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
    write_mbox(tmp_path / "a" / "inbox.mbox", _messages(2))
    write_mbox(tmp_path / "b" / "old.mbox", _messages(1, "o"))

    def notify(_event) -> None:  # once the first mail is stored, b's mbox goes
        (tmp_path / "b" / "old.mbox").unlink(missing_ok=True)

    report = Importer(store, fake_embedder).run([tmp_path], notify=notify)
    assert report.added == 2
    assert [e.path for e in report.errors] == [str(tmp_path / "b" / "old.mbox")]
    assert "cannot be read now (No such file or directory)" in report.errors[0].reason
    assert Source("mbox", tmp_path / "b" / "old.mbox").count() == 0


def test_folder_of_mixed_sources_is_detected(tmp_path):
    write_mbox(tmp_path / "archive", _messages(1))
    (tmp_path / "a.eml").write_bytes(_messages(1, "e")[0].as_bytes())
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "n.md").write_text("# N\ntext")
    kinds = sorted((s.kind, Path(s.path).name) for s in detect_sources(tmp_path))
    assert kinds == [("eml", tmp_path.name), ("mbox", "archive"), ("notes", "notes")]


def test_a_folder_reached_again_through_a_link_is_read_once(tmp_path):
    """A notes folder holding a link to its parent (or to itself): each was followed forty deep
    (each level a source of its own), and two such links doubled the folders at every level, an
    import that never ended. A Maildir linked from a second place is one source too."""
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "n.md").write_text("# N\ntext")
    (notes / "up").symlink_to("..")
    write_mbox(tmp_path / "archive", _messages(1))
    (tmp_path / "Maildir" / "cur").mkdir(parents=True)
    (tmp_path / "mail-link").symlink_to("Maildir")
    skipped: list = []
    kinds = sorted(
        (s.kind, s.path.relative_to(tmp_path)) for s in detect_sources(tmp_path, skipped)
    )
    assert kinds == [
        ("maildir", Path("Maildir")),
        ("mbox", Path("archive")),
        ("notes", Path("notes")),
    ]
    assert sorted(Path(i.path).relative_to(tmp_path) for i in skipped) == [
        Path("mail-link"),
        Path("notes/up"),
    ]
    assert all(i.severity == "warning" and "the same folder as" in i.reason for i in skipped)


def test_a_folder_or_mbox_it_cannot_read_is_said_and_the_rest_imported(
    tmp_path, monkeypatch, store, fake_embedder
):
    """~/Mail with a subfolder another user owns (lost+found, a guarded mail store) and an mbox
    the user may not read: each is an error naming it and what to do, the rest is imported,
    and mail stored from them earlier is kept. (Root reads any file: the refusals are made.)"""
    mail = tmp_path / "Mail"
    guarded = mail / "guarded"
    guarded.mkdir(parents=True)
    good = write_mbox(mail / "inbox.mbox", _messages(2, "g"))
    locked = write_mbox(mail / "locked.mbox", _messages(1, "l"))
    write_mbox(guarded / "old.mbox", _messages(1, "o"))
    importer = Importer(store, fake_embedder)
    assert importer.run([mail]).added == 4
    real_iterdir, real_open = Path.iterdir, Path.open

    def iterdir(self):
        if self == guarded:
            raise PermissionError(13, "Permission denied", str(self))
        return real_iterdir(self)

    def open_(self, *args, **kwargs):
        if self == locked:
            raise PermissionError(13, "Permission denied", str(self))
        return real_open(self, *args, **kwargs)

    monkeypatch.setattr(Path, "iterdir", iterdir)
    monkeypatch.setattr(Path, "open", open_)
    os.utime(good, (1, 1))  # touched: read again
    report = importer.run([mail])
    said = {e.path: e.reason for e in report.errors}
    assert set(said) == {str(guarded), str(locked)}
    assert all(
        "cannot be read (Permission denied)" in r and "permissions" in r for r in said.values()
    )
    assert report.duplicates == 2 and store.stats()["documents"] == 4  # nothing stored is lost
    with pytest.raises(SourceError, match="cannot be read"):
        detect_sources(guarded)


def test_a_chunk_id_is_never_given_twice(tmp_path, store, fake_embedder):
    """A note edited (its chunks deleted, new ones stored) while it is the newest document:
    SQLite would give the new chunks the removed ones' ids, and the QA bank, which finds mail
    newer than an answer by id (max_chunk_id), would not see them as new."""
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "plan.md").write_text("# Plan\nThe roofers come on Tuesday.", encoding="utf-8")
    importer = Importer(store, fake_embedder)
    importer.run([notes])
    before = {r[0] for r in store.db.execute("SELECT id FROM chunks")}
    high = store.max_chunk_id()
    (notes / "plan.md").write_text("# Plan\nThe roofers come on Friday now.", encoding="utf-8")
    os.utime(notes / "plan.md", (1, 1))
    importer.run([notes])
    after = {r[0] for r in store.db.execute("SELECT id FROM chunks")}
    assert after and not before & after and min(after) > high
    assert store.max_chunk_id() == max(after)


def test_a_mail_file_read_otherwise_now_is_kept_once(tmp_path, store, fake_embedder, monkeypatch):
    """A Maildir mail read again by a newer version that reads it otherwise (its charset, its
    date, its parts: another content hash for the same Message-ID at the same file) replaces
    its row; it was added again under <id>#<hash>, the mail twice in search and the plan."""
    from assistant.ingest import emails

    root = tmp_path / "Maildir"
    for sub in ("cur", "new", "tmp"):
        (root / sub).mkdir(parents=True)
    mail = make_email(subject="Roof", body="The roofers come on Tuesday.", msgid="<roof@x>")
    (root / "cur" / "1.host:2,S").write_bytes(mail.as_bytes())
    importer = Importer(store, fake_embedder)
    assert importer.run([root]).added == 1
    real = emails.parse_email
    monkeypatch.setattr(
        emails,
        "parse_email",
        lambda *a, **k: replace(
            real(*a, **k), text="The roofers come on Tuesday, read better.", content_hash="other"
        ),
    )
    importer.run([root])
    assert store.stats()["documents"] == 1
    keys = [r[0] for r in store.db.execute("SELECT source_key FROM documents")]
    assert keys == ["roof@x"]
    chunks = [r[0] for r in store.db.execute("SELECT text FROM chunks")]
    assert any("read better" in c for c in chunks)


def test_a_mail_number_is_never_given_twice(tmp_path, store, fake_embedder):
    """The newest mail removed (a note edited, mail gone from its folder): SQLite would give the
    next mail its number, and a `#N` the user was shown (search, the app's sources, `show N`)
    would open another mail."""
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "keep.md").write_text("# Keep\nThe boiler was serviced.", encoding="utf-8")
    importer = Importer(store, fake_embedder)
    importer.run([notes])
    (notes / "plan.md").write_text("# Plan\nThe roofers come on Tuesday.", encoding="utf-8")
    importer.run([notes])
    (newest,) = store.db.execute("SELECT max(id) FROM documents").fetchone()
    (notes / "plan.md").unlink()
    importer.run([notes])
    assert store.stats()["documents"] == 1
    (notes / "other.md").write_text("# Other\nThe painter comes in May.", encoding="utf-8")
    importer.run([notes])
    (added,) = store.db.execute("SELECT max(id) FROM documents").fetchone()
    assert added > newest
