"""Notes are keyed by their path: a notes folder moved (renamed, synced to another place, the home
copied to another machine) was imported again as new notes, the old ones kept because they are
not under the folder read, and search showed every note twice. A note whose old file is gone and
whose content is a stored note's is now that note, moved (note_moves.py); a copy is added."""

from __future__ import annotations

import shutil
from pathlib import Path

from assistant.importing.importer import Importer
from assistant.knowledge.retrieval import Retriever
from tests.conftest import DATA


def notes_of(store) -> dict[str, tuple[int, str]]:
    """path → (document id, body) of every stored note."""
    rows = store.db.execute("SELECT source_path, id, body FROM documents WHERE kind = 'note'")
    return {path: (doc_id, body) for path, doc_id, body in rows.fetchall()}


def chunks_and_vectors(store) -> dict[int, tuple[int, bytes]]:
    """chunk id → (its document, its vector)."""
    rows = store.db.execute(
        "SELECT c.id, c.document_id, e.vector FROM chunks c JOIN embeddings e ON e.chunk_id = c.id"
    )
    return {chunk: (doc, bytes(vector)) for chunk, doc, vector in rows.fetchall()}


def write(folder: Path, notes: dict[str, str]) -> Path:
    for name, text in notes.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder


def test_a_moved_notes_folder_is_followed_not_imported_twice(tmp_path, store, fake_embedder):
    old, new = tmp_path / "kn-a", tmp_path / "kn-b"
    shutil.copytree(DATA / "notes", old)
    importer = Importer(store, fake_embedder)
    first = importer.run([old])
    assert first.added == 30 and first.moved == 0
    before, vectors = notes_of(store), chunks_and_vectors(store)
    calls = fake_embedder.calls
    old.rename(new)
    report = importer.run([new])
    assert (report.added, report.moved, report.removed, report.updated) == (0, 30, 0, 0)
    assert (report.chunks_added, report.embedded, fake_embedder.calls) == (0, 0, calls)
    assert "30 moved" in report.summary()
    after = notes_of(store)
    # the same documents, each at its new path, with the same chunks and vectors
    assert after == {str(new / Path(p).relative_to(old)): row for p, row in before.items()}
    assert chunks_and_vectors(store) == vectors
    keys = [r[0] for r in store.db.execute("SELECT source_key FROM documents").fetchall()]
    assert sorted(keys) == sorted(f"note:{p}" for p in after)
    hits = Retriever(store, fake_embedder, None).search("kitchen", 40)
    paths = [h.record.note_path for h in hits]
    assert paths and all(p.startswith(str(new) + "/") for p in paths)
    assert len({h.record.title for h in hits}) == len(set(paths))  # each note once
    assert len({h.record.text for h in hits}) == len(hits)  # no chunk twice
    again = importer.run([new])
    assert (again.added, again.moved, again.unchanged, again.removed) == (0, 0, 30, 0)


def test_a_copied_notes_folder_is_added_as_before(tmp_path, store, fake_embedder):
    """The old files still there: the new folder is a copy, its notes are notes of their own."""
    old = write(tmp_path / "a", {"plants.md": "# Plants\nWater the ficus.", "bike.md": "Bike"})
    importer = Importer(store, fake_embedder)
    importer.run([old])
    shutil.copytree(old, tmp_path / "b")
    report = importer.run([tmp_path / "b"])
    assert (report.added, report.moved) == (2, 0)
    assert len(notes_of(store)) == 4


def test_a_note_edited_as_its_folder_moved_replaces_its_old_version(tmp_path, store, fake_embedder):
    old = write(tmp_path / "a", {"plants.md": "# Plants\nWater the ficus weekly.",
                                 "bike.md": "# Bike\nNew chain in May.",
                                 "roof.md": "# Roof\nThe roofers come on Tuesday."})  # fmt: skip
    removed_chunks: list[int] = []
    importer = Importer(store, fake_embedder, on_removed=removed_chunks.extend)
    importer.run([old])
    plants = notes_of(store)[str(old / "plants.md")][0]
    plants_chunks = [r[0] for r in store.db.execute(
        "SELECT id FROM chunks WHERE document_id = ?", [plants]).fetchall()]  # fmt: skip
    new = tmp_path / "b"
    old.rename(new)
    (new / "plants.md").write_text("# Plants\nWater the ficus every ten days.")
    report = importer.run([new])
    assert (report.added, report.updated, report.moved, report.removed) == (0, 1, 2, 0)
    after = notes_of(store)
    assert sorted(after) == [str(new / n) for n in ("bike.md", "plants.md", "roof.md")]
    assert after[str(new / "plants.md")][1] == "# Plants\nWater the ficus every ten days."
    assert removed_chunks == plants_chunks  # the QA answers that quoted the old one are stale
    assert store.stats()["embedded_chunks"] == store.stats()["chunks"]


def test_a_note_edited_as_it_moved_alone_is_added_and_its_old_one_kept_till_read_again(
    tmp_path, store, fake_embedder
):
    """Nothing else of its folder moved with it: the edited note is added, and its old version
    (its file gone) stays until its folder is read again; nothing is lost meanwhile."""
    old = write(tmp_path / "a", {"plants.md": "# Plants\nWater the ficus weekly.",
                                 "bike.md": "# Bike\nNew chain in May."})  # fmt: skip
    importer = Importer(store, fake_embedder)
    importer.run([old])
    new = write(tmp_path / "b", {"plants.md": "# Plants\nWater the ficus every ten days."})
    (old / "plants.md").unlink()
    report = importer.run([new])
    assert (report.added, report.moved, report.removed) == (1, 0, 0)
    assert len(notes_of(store)) == 3
    report = importer.run([old])
    assert (report.removed, report.unchanged) == (1, 1)
    assert sorted(notes_of(store)) == [str(old / "bike.md"), str(new / "plants.md")]


def test_a_note_renamed_or_moved_between_folders_keeps_its_document(tmp_path, store, fake_embedder):
    root = write(tmp_path / "notes", {"todo.md": "# Todo\nPaint the shed.",
                                      "work/plan.md": "# Plan\nRoofers on Tuesday."})  # fmt: skip
    importer = Importer(store, fake_embedder)
    importer.run([root])
    ids = {Path(p).name: row[0] for p, row in notes_of(store).items()}
    (root / "todo.md").rename(root / "shed.md")
    (root / "home").mkdir()
    (root / "work" / "plan.md").rename(root / "home" / "plan.md")
    report = importer.run([root])
    assert (report.added, report.moved, report.removed, report.embedded) == (0, 2, 0, 0)
    after = notes_of(store)
    assert after[str(root / "shed.md")][0] == ids["todo.md"]
    assert after[str(root / "home" / "plan.md")][0] == ids["plan.md"]
    folder = store.db.execute("SELECT folder FROM documents WHERE title = 'Plan'").fetchone()[0]
    assert folder == "home"


def test_two_alike_notes_moved_each_keep_their_own_document(tmp_path, store, fake_embedder):
    """Two files of one content, both moved: each stored note is taken once, by its name."""
    old = write(tmp_path / "a", {"x.md": "# Same\nOne text.", "y.md": "# Same\nOne text."})
    importer = Importer(store, fake_embedder)
    importer.run([old])
    ids = {Path(p).name: row[0] for p, row in notes_of(store).items()}
    new = tmp_path / "b"
    old.rename(new)
    report = importer.run([new])
    assert (report.added, report.moved) == (0, 2)
    assert {Path(p).name: row[0] for p, row in notes_of(store).items()} == ids


def test_a_deleted_note_tells_the_answers_that_quoted_it(tmp_path, store, fake_embedder):
    """A note file deleted: its document went, but the QA entries that quoted its chunks were
    not told (mail removed was), so an answer from it could still be served as fresh."""
    old = write(tmp_path / "a", {"plants.md": "# Plants\nWater the ficus.", "bike.md": "Bike"})
    removed_chunks: list[int] = []
    importer = Importer(store, fake_embedder, on_removed=removed_chunks.extend)
    importer.run([old])
    plants = notes_of(store)[str(old / "plants.md")][0]
    chunks = [r[0] for r in store.db.execute("SELECT id FROM chunks WHERE document_id = ?",
                                             [plants]).fetchall()]  # fmt: skip
    (old / "plants.md").unlink()
    report = importer.run([old])
    assert report.removed == 1 and removed_chunks == chunks and chunks


def test_a_note_moved_between_two_folders_read_in_one_run_keeps_its_document(
    tmp_path, store, fake_embedder
):
    """`assistant import A B` with a note moved from A to B: A was read first and its note,
    not seen there, was removed at once, so B found nothing to follow and embedded it again."""
    a = write(tmp_path / "a", {"plants.md": "# Plants\nWater the ficus weekly.", "bike.md": "Bike"})
    b = write(tmp_path / "b", {"roof.md": "# Roof\nThe roofers come on Tuesday."})
    removed_chunks: list[int] = []
    importer = Importer(store, fake_embedder, on_removed=removed_chunks.extend)
    importer.run([a, b])
    plants = notes_of(store)[str(a / "plants.md")][0]
    vectors = chunks_and_vectors(store)
    calls = fake_embedder.calls
    (a / "plants.md").rename(b / "plants.md")
    report = importer.run([a, b])
    assert (report.added, report.moved, report.removed, report.updated) == (0, 1, 0, 0)
    assert (report.chunks_added, report.embedded, fake_embedder.calls) == (0, 0, calls)
    after = notes_of(store)
    assert after[str(b / "plants.md")][0] == plants and str(a / "plants.md") not in after
    assert chunks_and_vectors(store) == vectors and removed_chunks == []
    hits = Retriever(store, fake_embedder, None).search("ficus", 5)
    assert hits[0].record.note_path == str(b / "plants.md")
    (b / "plants.md").unlink()  # a note deleted from one of them still goes
    assert importer.run([a, b]).removed == 1 and len(notes_of(store)) == 2
