"""Folders as mail clients write them, built with the standard library's writers: Apple Mail
(.emlx: byte count, message, plist), Thunderbird (mbox files, .sbd subfolders, .msf indexes),
Maildir++ (mailbox.Maildir) and one folder holding all of them. Each imports with exact counts and
each mail keeps its folder name."""

from __future__ import annotations

import mailbox
import plistlib
from collections import Counter
from pathlib import Path

from assistant.importing.importer import Importer
from tests.conftest import make_email


def _mails(n: int, tag: str) -> list:
    return [make_email(subject=f"{tag} {i}", body=f"Body {tag} {i}.", msgid=f"<{tag}{i}@x.nl>")
            for i in range(n)]  # fmt: skip


def _emlx(path: Path, msg, partial: bool = False) -> None:
    raw = msg.as_bytes()
    flags = plistlib.dumps({"flags": 8590195713, "date-received": 1767225600})
    name = path.with_suffix(".partial.emlx") if partial else path.with_suffix(".emlx")
    name.write_bytes(f"{len(raw)}\n".encode() + raw + flags)


def write_apple_mail(root: Path) -> dict[str, int]:
    """Mailboxes/<Name>.mbox/<uuid>/Data/Messages/*.emlx, one nested mailbox, one partial."""
    counts = {"Work": 3, "Work/Clients": 2}
    for folder, n in counts.items():
        box = root / "Mailboxes" / "/".join(f"{p}.mbox" for p in folder.split("/"))
        messages = box / "F00D-1" / "Data" / "Messages"
        messages.mkdir(parents=True)
        (box / "Info.plist").write_bytes(plistlib.dumps({"DisplayName": folder}))
        for i, msg in enumerate(_mails(n, folder.replace("/", "-"))):
            _emlx(messages / str(i + 1), msg, partial=(i == 0 and folder == "Work"))
    return counts


def write_thunderbird(root: Path) -> dict[str, int]:
    """Local Folders/Inbox, Inbox.sbd/Projects (mbox files without suffix) and .msf indexes."""
    counts = {"Inbox": 4, "Projects": 2}
    (root / "Inbox.sbd").mkdir(parents=True)
    for folder, path in (("Inbox", root / "Inbox"), ("Projects", root / "Inbox.sbd" / "Projects")):
        box = mailbox.mbox(path)
        for msg in _mails(counts[folder], f"tb-{folder}"):
            box.add(msg)
        box.close()
        path.with_name(path.name + ".msf").write_text('// <!-- <mdb:mork:z v="1.4"/> -->\n')
    return counts


def write_maildir(root: Path) -> dict[str, int]:
    """A Maildir++ tree as mbsync writes it: INBOX at the root, .Sent as a subfolder."""
    inbox = mailbox.Maildir(root, create=True)
    counts = {"INBOX": 3, "Sent": 2}
    for msg in _mails(3, "md-in"):
        inbox.add(msg)
    sent = inbox.add_folder("Sent")
    for msg in _mails(2, "md-sent"):
        sent.add(msg)
    return counts


def _folders(store) -> Counter:
    rows = store.db.execute("SELECT folder FROM documents WHERE kind = 'email'").fetchall()
    return Counter(r[0] for r in rows)


def test_apple_mail_folders_with_a_partial_message(tmp_path, store, fake_embedder):
    counts = write_apple_mail(tmp_path / "Mail" / "V10")
    report = Importer(store, fake_embedder).run([tmp_path / "Mail"])
    assert (report.added, report.errors) == (5, [])
    assert _folders(store) == Counter(counts)
    assert [w.reason for w in report.warnings if "partial" in w.reason] != []


def test_thunderbird_profile_and_maildir_plus_plus(tmp_path, store, fake_embedder):
    write_thunderbird(tmp_path / "Local Folders")
    write_maildir(tmp_path / "Maildir")
    report = Importer(store, fake_embedder).run([tmp_path / "Local Folders", tmp_path / "Maildir"])
    assert (report.added, report.errors) == (11, [])
    assert _folders(store) == Counter({"Inbox": 4, "Projects": 2, "INBOX": 3, "Sent": 2})


def test_one_folder_mixing_every_shape(tmp_path, store, fake_embedder):
    apple = write_apple_mail(tmp_path / "all" / "Apple")
    thunder = write_thunderbird(tmp_path / "all" / "Thunderbird")
    maildir = write_maildir(tmp_path / "all" / "Maildir")
    (tmp_path / "all" / "saved.eml").write_bytes(_mails(1, "eml")[0].as_bytes())
    first = Importer(store, fake_embedder).run([tmp_path / "all"])
    again = Importer(store, fake_embedder).run([tmp_path / "all"])
    assert (first.added, first.errors) == (17, [])
    thunderbird_mails = sum(thunder.values())  # its mbox files, unchanged: skipped unread
    assert (again.added, again.duplicates) == (0, 17 - thunderbird_mails)
    assert again.sources_skipped >= 2
    assert _folders(store) == Counter({**apple, **thunder, **maildir, "all": 1})


def test_a_broken_emlx_is_an_issue_and_the_rest_imports(tmp_path, store, fake_embedder):
    write_apple_mail(tmp_path / "Mail")
    messages = next((tmp_path / "Mail").rglob("Messages"))
    (messages / "99.emlx").write_bytes(b"not a count\nFrom: x\n\nhi")
    (messages / "98.emlx").write_bytes(b"5000\nFrom: x@y.nl\nSubject: cut\n\nhi")
    report = Importer(store, fake_embedder).run([tmp_path / "Mail"])
    assert report.added == 5
    assert sorted(Path(e.path).name for e in report.errors) == ["98.emlx", "99.emlx"]


def test_import_and_stats_report_each_folder(tmp_path, store, fake_embedder):
    write_thunderbird(tmp_path / "tb")
    first = Importer(store, fake_embedder).run([tmp_path / "tb"])
    again = Importer(store, fake_embedder).run([tmp_path / "tb"])
    assert first.folders == {
        "Inbox": {"added": 4, "already": 0},
        "Projects": {"added": 2, "already": 0},
    }
    assert again.folders == {} and again.sources_skipped == 2  # unchanged: not read again
    (tmp_path / "tb" / "Inbox").touch()  # touched: read again, each mail found stored
    third = Importer(store, fake_embedder).run([tmp_path / "tb"])
    assert third.folders == {"Inbox": {"added": 0, "already": 4}}
    assert store.stats()["folders"] == {"Inbox": 4, "Projects": 2}


def test_attachments_are_rows_of_their_own(tmp_path, store, fake_embedder):
    pdf = ("offer.pdf", "application/pdf", b"%PDF-1.4 x")
    with_pdf = make_email(subject="Contract", msgid="<att1@x.nl>", attachments=[pdf])
    path = tmp_path / "box"
    box = mailbox.mbox(path)
    for msg in [with_pdf, *_mails(2, "plain")]:
        box.add(msg)
    box.close()
    Importer(store, fake_embedder).run([path])
    rows = store.db.execute(
        "SELECT d.message_id, a.name, a.content_type FROM attachments a "
        "JOIN documents d ON d.id = a.document_id"
    ).fetchall()
    assert rows == [("att1@x.nl", "offer.pdf", "application/pdf")]
    store.db.execute("DELETE FROM documents WHERE message_id = 'att1@x.nl'")
    assert store.db.execute("SELECT count(*) FROM attachments").fetchone()[0] == 0


def test_an_older_home_gets_its_attachments_rows_from_the_json():
    from sqlite_utils import Database

    from assistant.knowledge.db import MIGRATIONS, migrate
    from cache.db import apply_migrations, connect

    db = Database(connect(None))
    apply_migrations(db, MIGRATIONS[:3])
    db.execute(
        "INSERT INTO documents (kind, source_key, content_hash, imported_at, attachments) "
        "VALUES ('email', 'k', 'h', 'now', ?)",
        ['[{"name": "a.ics", "content_type": "text/calendar", "size": 12}]'],
    )
    migrate(db)
    rows = db.execute("SELECT name, content_type, size FROM attachments").fetchall()
    assert rows == [("a.ics", "text/calendar", 12)]
