"""The address book kept on disk: a fresh process reads it instead of scanning every mail, and
finds the same people; an import, a damaged file or other rules build it again."""

from __future__ import annotations

import logging
from datetime import UTC, datetime

import pytest

from assistant.importing.importer import Importer
from assistant.mail import book_file
from assistant.mail.reader import QueryReader
from tests.assistant.mail.conftest import MAILS, TODAY, _mail
from tests.conftest import write_mbox


def _no_scan(store, monkeypatch) -> None:
    """Building the book reads every mail's first and last lines: fail if it is built."""

    def scanned():
        raise AssertionError("the address book was built, not read")

    monkeypatch.setattr(store.mail, "lines", scanned)


def _said(book, name: str) -> list[tuple[str, str, tuple]]:
    return [(m.person.name, m.why, tuple(sorted(m.person.addresses)))
            for m in book.resolve(name).matches]  # fmt: skip


@pytest.mark.parametrize("name", ["Vince", "Sherri Sera", "Klaus Schwab", "Greg", "Jeff"])
def test_a_fresh_reader_reads_the_book_and_finds_the_same_people(
    mailbox, tmp_path, monkeypatch, name
):
    store, _, built = mailbox
    kept = tmp_path / "index"
    first, scanned = QueryReader(store, TODAY, book_dir=kept).people(), built.people()
    assert len(list(kept.glob("people-*.json"))) == 1
    _no_scan(store, monkeypatch)
    again = QueryReader(store, TODAY, book_dir=kept).people()  # as the next command's process
    assert _said(again, name) == _said(first, name) == _said(scanned, name)
    assert [p.owner for p in again.people] == [p.owner for p in first.people]
    assert [p.names.most_common() for p in again.people] == [
        p.names.most_common() for p in first.people
    ]


def test_an_import_builds_it_again_and_the_old_file_goes(mailbox, tmp_path):
    store, _, _ = mailbox
    kept = tmp_path / "index"
    assert not QueryReader(store, TODAY, book_dir=kept).people().resolve("Dottie").matches
    msg = _mail(7, "Hello", "Hi there.", "Dottie Kerr <dottie@kerr.com>",
                "jeff.skilling@enron.com", datetime(2001, 11, 18, tzinfo=UTC))  # fmt: skip
    Importer(store, None).run([write_mbox(tmp_path / "new.mbox", [msg])], embed=False)
    found = QueryReader(store, TODAY, book_dir=kept).people().resolve("Dottie")
    assert [m.person.name for m in found.matches] == ["Dottie Kerr"]
    files = list(kept.glob("people-*.json"))
    assert len(files) == 1 and f"-{store.version('chunks')}-" in files[0].name


def test_names_filled_in_on_a_reimport_build_it_again(mailbox, tmp_path):
    """A mail stored before names were kept gets them when read again: a new book."""
    store, _, _ = mailbox
    kept = tmp_path / "index"
    store.db.execute("UPDATE documents SET sender_name = NULL WHERE message_id = 'm2@x'")
    store.db.conn.commit()
    (before,) = QueryReader(store, TODAY, book_dir=kept).people().resolve("Kaminski").people
    assert "Vince Kaminski" not in before.names
    version = store.version("chunks")
    again = _mail(2, *MAILS[1][1:6])  # the same mail, read from another file
    Importer(store, None).run([write_mbox(tmp_path / "again.mbox", [again])], embed=False)
    assert store.version("chunks") > version
    book = QueryReader(store, TODAY, book_dir=kept).people()
    (vince,) = book.resolve("Kaminski").people
    assert "Vince Kaminski" in vince.names


def test_a_damaged_file_is_built_again(mailbox, tmp_path, caplog):
    store, _, _ = mailbox
    kept = tmp_path / "index"
    QueryReader(store, TODAY, book_dir=kept).people()
    (path,) = kept.glob("people-*.json")
    path.write_text('[{"key": "x"')
    with caplog.at_level(logging.WARNING):
        book = QueryReader(store, TODAY, book_dir=kept).people()
    assert "unreadable address book" in caplog.text
    assert [m.person.name for m in book.resolve("Vince").matches] == ["Vince Kaminski"]
    assert book_file.load_or_build(kept, store.identity(), store.version("chunks"), _fail)


def test_other_rules_never_read_the_file(mailbox, tmp_path, monkeypatch):
    store, _, _ = mailbox
    kept = tmp_path / "index"
    QueryReader(store, TODAY, book_dir=kept).people()
    monkeypatch.setattr(book_file, "rules", lambda: "newer")
    built = []

    def build():
        built.append(1)
        return QueryReader(store, TODAY).people()

    book = book_file.load_or_build(kept, store.identity(), store.version("chunks"), build)
    assert built == [1] and book.resolve("Vince").matches
    assert [p.name for p in kept.glob("people-*.json")] == [
        f"people-{store.identity()}-{store.version('chunks')}-newer.json"
    ]


def test_a_home_it_cannot_write_to_still_gets_its_book(mailbox, tmp_path, caplog):
    store, _, _ = mailbox
    blocked = tmp_path / "a-file"
    blocked.write_text("")  # the folder cannot be made: a file stands there
    with caplog.at_level(logging.WARNING):
        book = QueryReader(store, TODAY, book_dir=blocked / "index").people()
    assert book.resolve("Vince").matches and "could not save the address book" in caplog.text


def _fail():
    raise AssertionError("built again though the file was just written")
