"""A remembered source not there now: kept and said while stored mail or notes are still from it
(a drive not mounted), forgotten once everything it held moved away and was followed, the
sources' paths (resolved) and the stored ones (mail's as given, through a link) compared alike."""

from __future__ import annotations

import mailbox
import os
import shutil
from pathlib import Path

import pytest

from assistant.cli import main
from assistant.knowledge.db import open_db
from assistant.knowledge.sources import SourceLog
from tests.conftest import make_email, write_mbox

NOT_THERE = "not there now, skipped (what it held is kept)"
FORGOTTEN = "no longer read again: not there, and nothing stored is from it now"
UNREADABLE = "cannot be read now, skipped (what it held is kept)"


def notes(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "plants.md").write_text("# Plants\nWater the ficus weekly.")
    (folder / "bike.md").write_text("# Bike\nNew chain in May.")
    return folder


def maildir(folder: Path) -> Path:
    folder.parent.mkdir(parents=True, exist_ok=True)
    box = mailbox.Maildir(folder, create=True)
    for i in range(3):
        box.add(make_email(subject=f"Tiles {i}", body=f"Mail {i} about tiles.", msgid=f"<t{i}@x>"))
    return folder


def remembered(home: str) -> list[Path]:
    return SourceLog(open_db(Path(home) / "knowledge.db")).paths()


def documents(home: str, capsys) -> int:
    capsys.readouterr()
    assert main(["stats", "--home", home, "--json"]) == 0
    out = capsys.readouterr().out
    return int(out.split('"documents": ')[1].split(",")[0])


def reimport(home: str, capsys) -> str:
    """What `assistant import` with no path says (its console lines go to stderr)."""
    capsys.readouterr()
    assert main(["import", "--home", home, "--json"]) == 0
    return capsys.readouterr().err


def test_a_notes_folder_moved_and_followed_is_forgotten_not_reported_at_every_import(
    tmp_path, capsys
):
    old, new = notes(tmp_path / "notes"), tmp_path / "Documents" / "notes"
    home = str(tmp_path / "h")
    assert main(["import", "--home", home, str(old)]) == 0
    new.parent.mkdir()
    old.rename(new)
    assert main(["import", "--home", home, str(new)]) == 0  # followed: 2 moved
    said = reimport(home, capsys)
    assert NOT_THERE not in said and f"{FORGOTTEN}: {old}" in said
    assert remembered(home) == [new] and documents(home, capsys) == 2
    assert str(old) not in reimport(home, capsys)  # not said again


def test_a_source_not_there_with_mail_and_notes_still_from_it_is_kept_and_said(tmp_path, capsys):
    """A drive not mounted: nothing stored is removed, the path stays remembered and is said at
    every import."""
    usb, home = tmp_path / "usb", str(tmp_path / "h")
    box, kept = maildir(usb / "Mail"), notes(usb / "notes")
    assert main(["import", "--home", home, str(box), str(kept)]) == 0
    usb.rename(tmp_path / "unplugged")
    for _ in range(2):
        said = reimport(home, capsys)
        assert f"{NOT_THERE}: {box}" in said and f"{NOT_THERE}: {kept}" in said
        assert FORGOTTEN not in said
    assert remembered(home) == [box, kept] and documents(home, capsys) == 5


def test_paths_through_a_linked_home_are_compared_resolved(tmp_path, capsys):
    """The home is a link (/home/me → /data/me): the sources are remembered resolved, mail keeps
    the path it was read by, through the link. The mail's folder not there now is kept and said;
    the notes folder moved and followed is forgotten."""
    real = tmp_path / "data" / "me"
    linked = tmp_path / "home-me"
    real.mkdir(parents=True)
    linked.symlink_to(real)
    maildir(linked / "Mail")
    notes(linked / "notes")
    home = str(tmp_path / "h")
    assert main(["import", "--home", home, str(linked / "Mail"), str(linked / "notes")]) == 0
    (real / "Documents").mkdir()
    (real / "notes").rename(real / "Documents" / "notes")
    assert main(["import", "--home", home, str(linked / "Documents" / "notes")]) == 0
    (real / "Mail").rename(tmp_path / "unplugged")
    said = reimport(home, capsys)
    assert f"{NOT_THERE}: {real / 'Mail'}" in said and f"{FORGOTTEN}: {real / 'notes'}" in said
    assert remembered(home) == [real / "Mail", real / "Documents" / "notes"]
    assert documents(home, capsys) == 5


@pytest.mark.parametrize("kind", ["maildir", "mbox"])
def test_a_linked_source_whose_target_is_not_there_is_kept(tmp_path, capsys, kind):
    """~/Mail (or ~/mail.mbox) links to a drive not mounted now: the mail keeps the link's
    path, the source is remembered as the drive's; the mail found through the (dangling) link
    keeps it."""
    if kind == "maildir":
        drive, link, stored = maildir(tmp_path / "usb" / "Mail"), tmp_path / "Mail", 3
    else:
        (tmp_path / "usb").mkdir()
        drive = write_mbox(tmp_path / "usb" / "old.mbox", [make_email(msgid="<o@x>")])
        link, stored = tmp_path / "mail.mbox", 1
    link.symlink_to(drive)
    home = str(tmp_path / "h")
    assert main(["import", "--home", home, str(link)]) == 0
    shutil.move(tmp_path / "usb", tmp_path / "unplugged")
    said = reimport(home, capsys)
    assert f"{NOT_THERE}: {drive}" in said and FORGOTTEN not in said
    assert remembered(home) == [drive] and documents(home, capsys) == stored


def test_a_source_that_cannot_be_looked_at_is_kept_and_said(tmp_path, capsys, monkeypatch):
    """A folder on the way that cannot be searched (another user's, a share's permissions):
    Path.exists() raises PermissionError there. The import goes on with the other sources; the
    path stays remembered, said, and what it held is kept."""
    home, locked = str(tmp_path / "h"), tmp_path / "locked"
    box, kept = maildir(locked / "Mail"), notes(tmp_path / "notes")
    assert main(["import", "--home", home, str(box), str(kept)]) == 0
    stat = os.stat

    def refused(path, *args, **kwargs):
        if str(path).startswith(str(locked)):
            raise PermissionError(13, "Permission denied", str(path))
        return stat(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", refused)
    for _ in range(2):
        said = reimport(home, capsys)
        assert f"{UNREADABLE}: {box}" in said and NOT_THERE not in said and FORGOTTEN not in said
    monkeypatch.undo()
    assert remembered(home) == [box, kept] and documents(home, capsys) == 5
