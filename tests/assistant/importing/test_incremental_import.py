"""Imported sources are remembered: `import` with no path reads them again, an unchanged mbox
is skipped without parsing, an appended one is read from where the last import ended, and one
changed in the middle is read whole without adding anything twice (what it no longer holds is
removed)."""

from __future__ import annotations

import os

import pytest

from assistant.cli import main
from assistant.importing.importer import Importer
from assistant.knowledge.db import open_db
from assistant.knowledge.sources import SourceLog
from assistant.knowledge.store import KnowledgeStore
from tests.conftest import make_email, write_mbox


def mails(start: int, n: int):
    return [make_email(subject=f"Note {i}", body=f"Mail number {i} says hello to {i} people.",
                       msgid=f"<n{i}@x>") for i in range(start, start + n)]  # fmt: skip


def fresh(tmp_path):
    return KnowledgeStore(open_db(tmp_path / "k.db"))


def test_an_unchanged_mbox_is_skipped_and_an_appended_one_read_from_its_end(tmp_path):
    box = write_mbox(tmp_path / "box.mbox", mails(0, 5))
    store = fresh(tmp_path)
    first = Importer(store, None).run([box], embed=False)
    assert first.added == 5
    again = Importer(store, None).run([box], embed=False)
    assert again.seen == 0 and again.sources_skipped == 1  # not parsed
    size = box.stat().st_size
    more = write_mbox(tmp_path / "more.mbox", mails(5, 3))
    with box.open("ab") as fh:
        fh.write(more.read_bytes())
    appended = Importer(store, None).run([box], embed=False)
    # read from the last message read before (it may have been cut): found stored, and the 3
    assert (appended.added, appended.seen, appended.sources_appended) == (3, 4, 1)
    assert appended.duplicates == 1
    assert SourceLog(store.db).plan(box, "mbox").action == "skip"
    assert size < box.stat().st_size


def test_an_mbox_changed_in_the_middle_is_read_whole_and_adds_nothing_twice(tmp_path):
    box = write_mbox(tmp_path / "box.mbox", mails(0, 4))
    store = fresh(tmp_path)
    Importer(store, None).run([box], embed=False)
    text = box.read_bytes().replace(b"Mail number 1 says", b"Mail number 1 SAYS")
    box.write_bytes(text + write_mbox(tmp_path / "m.mbox", mails(4, 1)).read_bytes())
    report = Importer(store, None).run([box], embed=False)
    assert report.sources_appended == 0 and report.seen == 5  # read whole
    assert report.added == 1  # the new mail
    assert report.updated == 1 and report.removed == 0  # the changed one, in its place
    assert store.count_chunks() == 5


def test_import_with_no_path_reads_the_remembered_sources_again(tmp_path, capsys):
    box = write_mbox(tmp_path / "box.mbox", mails(0, 3))
    home = str(tmp_path / "h")
    assert main(["import", "--home", home, str(box)]) == 0
    with box.open("ab") as fh:
        fh.write(write_mbox(tmp_path / "m.mbox", mails(3, 2)).read_bytes())
    os.utime(box)
    capsys.readouterr()
    assert main(["import", "--home", home, "--json"]) == 0
    out = capsys.readouterr().out
    assert '"added": 2' in out and '"sources_appended": 1' in out


def test_import_with_no_path_says_which_remembered_source_is_not_there(tmp_path, capsys):
    """A remembered mbox on a drive not mounted now: said, skipped, its mail kept."""
    (tmp_path / "usb").mkdir()
    away = write_mbox(tmp_path / "usb" / "old.mbox", mails(0, 2))
    here = write_mbox(tmp_path / "box.mbox", mails(2, 1))
    home = str(tmp_path / "h")
    assert main(["import", "--home", home, str(away), str(here)]) == 0
    away.rename(tmp_path / "elsewhere.mbox")
    capsys.readouterr()
    assert main(["import", "--home", home, "--json"]) == 0
    out = capsys.readouterr()
    assert f"not there now, skipped (what it held is kept): {away}" in out.err
    assert main(["stats", "--home", home, "--json"]) == 0
    assert '"documents": 3' in capsys.readouterr().out


def test_a_message_being_written_as_the_import_read_it_is_read_whole_after_the_append(tmp_path):
    """The night's re-import read the mbox while the mail client was writing its last message:
    that message was stored cut, and the append was read from the old end, so its rest became
    'not an email'. The append is read from where the last message starts: read again whole,
    it replaces the cut one."""
    last = make_email(subject="Contract", body="Here is the contract.\nThe price is 42000 euros.",
                      msgid="<c@x>")  # fmt: skip
    whole = write_mbox(tmp_path / "whole.mbox", [*mails(0, 2), last]).read_bytes()
    box = tmp_path / "box.mbox"
    box.write_bytes(whole[: whole.index(b"Here is the contract.\n") + 22])  # a line end, cut
    store = fresh(tmp_path)
    assert Importer(store, None).run([box], embed=False).added == 3
    box.write_bytes(whole + write_mbox(tmp_path / "m.mbox", mails(3, 1)).read_bytes())
    again = Importer(store, None).run([box], embed=False)
    assert again.sources_appended == 1 and again.errors == []
    assert again.added == 1 and again.updated == 1  # mail 3, and the contract read whole
    assert store.stats()["documents"] == 4
    texts = " ".join(r[0] for r in store.db.execute("SELECT text FROM chunks"))
    assert "42000 euros" in texts and texts.count("Here is the contract.") == 1


@pytest.mark.parametrize("prefix", [b"\xef\xbb\xbf", b"\n\n", b"\xef\xbb\xbf\n"], ids=repr)
def test_an_mbox_with_a_bom_or_blank_lines_first_is_imported_and_resumed(tmp_path, prefix):
    """A byte order mark or blank lines before the first From_ line: the file is still an mbox,
    and the append is read from where its last message starts (the offset counts those bytes)."""
    box = tmp_path / "box.mbox"
    box.write_bytes(prefix + write_mbox(tmp_path / "a.mbox", mails(0, 1)).read_bytes())
    store = fresh(tmp_path)
    first = Importer(store, None).run([box], embed=False)
    assert (first.added, first.errors, first.warnings) == (1, [], [])
    with box.open("ab") as fh:
        fh.write(write_mbox(tmp_path / "m.mbox", mails(1, 2)).read_bytes())
    appended = Importer(store, None).run([box], embed=False)
    assert appended.sources_appended == 1 and appended.errors == []
    assert (appended.added, appended.seen, appended.duplicates) == (2, 3, 1)
    assert store.stats()["documents"] == 3


def test_an_append_resumes_at_a_last_message_that_could_not_be_read_yet(tmp_path):
    """The mail client had written only the From_ line of the last message when the import read
    it: an error ("empty message"), not a mail. The append is read from where that message
    starts (the Issue carries its offset), so it is read whole once it is written."""
    first = write_mbox(tmp_path / "a.mbox", mails(0, 2)).read_bytes()
    tail = write_mbox(tmp_path / "b.mbox", mails(2, 1)).read_bytes()
    box = tmp_path / "box.mbox"
    box.write_bytes(first + tail[: tail.index(b"\n") + 1])
    store = fresh(tmp_path)
    cut = Importer(store, None).run([box], embed=False)
    assert cut.added == 2 and [e.offset for e in cut.errors] == [len(first)]
    box.write_bytes(first + tail)
    again = Importer(store, None).run([box], embed=False)
    assert again.sources_appended == 1 and again.errors == []
    assert again.added == 1 and store.stats()["documents"] == 3
