"""A mail folder or mbox moved as a whole (`mv ~/Mail ~/Archive`, then `assistant import
~/Archive`) is followed: its mail is the same stored mail (ids, chunks, vectors), now read from
the new place, and the old remembered path, holding nothing, is forgotten once. Where the old
place is not there because the drive or share it was on is not mounted, the mail seen elsewhere
is a copy and nothing is re-pointed."""

from __future__ import annotations

import json
import mailbox
import os
import shutil
from pathlib import Path

from assistant.cli import main
from assistant.knowledge.db import open_db
from tests.assistant.importing.test_remembered_sources import (
    FORGOTTEN,
    NOT_THERE,
    maildir,
    reimport,
    remembered,
)
from tests.conftest import make_email, write_mbox


def imported(home: str, path: Path, capsys) -> dict:
    """The report of `assistant import PATH`."""
    capsys.readouterr()
    assert main(["import", "--home", home, "--json", str(path)]) == 0
    return json.loads(capsys.readouterr().out)


def stored(home: str) -> dict[str, tuple[int, str, int | None, tuple[int, ...]]]:
    """Message-ID → (document id, source path, offset, its chunks with a vector)."""
    db = open_db(Path(home) / "knowledge.db")
    rows = db.execute("SELECT id, message_id, source_path, source_offset FROM documents")
    found = {}
    for doc_id, message_id, path, offset in rows.fetchall():
        chunks = db.execute(
            "SELECT c.id FROM chunks c JOIN embeddings e ON e.chunk_id = c.id "
            "WHERE c.document_id = ? ORDER BY c.id",
            [doc_id],
        ).fetchall()
        found[message_id] = (doc_id, path, offset, tuple(c[0] for c in chunks))
    return found


def letters(folder: Path, tag: str = "l", n: int = 3) -> Path:
    """A plain folder of .eml files."""
    folder.mkdir(parents=True)
    for i in range(n):
        mail = make_email(subject=f"Letter {tag}{i}", body=f"Letter {tag}{i} on the roof.",
                          msgid=f"<{tag}{i}@x>")  # fmt: skip
        (folder / f"{tag}{i}.eml").write_bytes(mail.as_bytes())
    return folder


def moved_whole(home: str, old: Path, new: Path, capsys) -> None:
    """`old` moved to `new` and imported there: followed, and `old` forgotten once."""
    before = stored(home)
    report = imported(home, new, capsys)
    assert (report["moved"], report["added"], report["removed"]) == (len(before), 0, 0)
    after = stored(home)
    assert after.keys() == before.keys()
    for message_id, (doc_id, path, _offset, chunks) in after.items():
        assert (doc_id, chunks) == (before[message_id][0], before[message_id][3])
        assert chunks and path.startswith(str(new)) and os.path.exists(path)
    said = reimport(home, capsys)
    assert NOT_THERE not in said and f"{FORGOTTEN}: {old}" in said
    assert remembered(home) == [new]
    assert str(old) not in reimport(home, capsys)  # said once, not at every import


def test_a_maildir_moved_whole_is_followed(tmp_path, capsys):
    home, old, new = str(tmp_path / "h"), maildir(tmp_path / "Mail"), tmp_path / "Archive"
    mailbox.Maildir(old).add_folder("Sent").add(make_email(subject="Sent", msgid="<s@x>"))
    imported(home, old, capsys)
    old.rename(new)
    moved_whole(home, old, new, capsys)
    folders = open_db(Path(home) / "knowledge.db").execute("SELECT DISTINCT folder FROM documents")
    assert {f[0] for f in folders.fetchall()} == {"INBOX", "Sent"}


def test_a_folder_of_eml_moved_whole_is_followed_and_a_new_one_there_is_its_own(tmp_path, capsys):
    home, old, new = str(tmp_path / "h"), letters(tmp_path / "letters"), tmp_path / "old" / "l"
    imported(home, old, capsys)
    new.parent.mkdir()
    old.rename(new)
    moved_whole(home, old, new, capsys)
    letters(old, "n", 1)  # another folder of that name, other mail: the moved mail stays
    report = imported(home, old, capsys)
    assert (report["added"], report["removed"], report["moved"]) == (1, 0, 0)
    assert len(stored(home)) == 4


def test_an_mbox_moved_is_followed(tmp_path, capsys):
    mails = [make_email(subject=f"Box {i}", body=f"Box mail {i}.", msgid=f"<b{i}@x>")
             for i in range(3)]  # fmt: skip
    home, old = str(tmp_path / "h"), write_mbox(tmp_path / "mail.mbox", mails)
    imported(home, old, capsys)
    offsets = {m: row[2] for m, row in stored(home).items()}
    (tmp_path / "old").mkdir()
    new = old.rename(tmp_path / "old" / "mail.mbox")
    moved_whole(home, old, new, capsys)
    assert {m: (row[1], row[2]) for m, row in stored(home).items()} == {
        m: (str(new), offset) for m, offset in offsets.items()
    }


def test_mail_on_a_drive_not_mounted_is_not_moved_to_a_copy_seen(tmp_path, capsys):
    """The drive's mount point is left empty: the copy in ~/Archive is a copy, the stored mail
    keeps the drive's paths, and the drive stays remembered (said, not forgotten)."""
    home, drive = str(tmp_path / "h"), maildir(tmp_path / "usb" / "Mail")
    copy = shutil.copytree(drive, tmp_path / "Archive")
    imported(home, drive, capsys)
    before = stored(home)
    drive.rename(tmp_path / "unplugged")  # /mnt/usb: there, empty
    report = imported(home, copy, capsys)
    assert (report["moved"], report["added"], report["removed"]) == (0, 0, 0)
    assert stored(home) == before
    for _ in range(2):
        said = reimport(home, capsys)
        assert f"{NOT_THERE}: {drive}" in said and FORGOTTEN not in said
    assert remembered(home) == [drive, copy] and stored(home) == before


def test_mail_read_through_a_link_to_a_drive_not_mounted_is_not_moved(tmp_path, capsys):
    """~/Mail links to the drive, whose mount point is gone with it: the link leads nowhere."""
    home, drive = str(tmp_path / "h"), maildir(tmp_path / "media" / "usb" / "Mail")
    link = tmp_path / "Mail"
    link.symlink_to(drive)
    copy = shutil.copytree(drive, tmp_path / "Archive")
    imported(home, link, capsys)
    before = stored(home)
    shutil.move(tmp_path / "media", tmp_path / "unplugged")
    report = imported(home, copy, capsys)
    assert (report["moved"], report["added"]) == (0, 0) and stored(home) == before
    assert f"{NOT_THERE}: {drive}" in reimport(home, capsys)
