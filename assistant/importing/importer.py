"""Import: read sources → chunk → store (a transaction per batch of mail) → embed (per batch).

Used by the CLI and the TUI's import worker. A bad message becomes an Issue in the report and the
log, never an exception; a killed import rerun skips what is stored and embeds what is missing.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from assistant.config_sections import ChunkingSettings
from assistant.importing.import_sweep import Reads, sweep
from assistant.importing.note_moves import NoteMoves
from assistant.ingest import Document, Issue, Source, SourceError, detect_sources
from assistant.ingest.chunking import Chunk, chunk_document
from assistant.ingest.notes import note_key
from assistant.knowledge.embeddings import embed_missing
from assistant.knowledge.sources import SourceLog
from assistant.knowledge.store import KnowledgeStore
from assistant.mail import thread_update
from assistant.mail.thread_update import ThreadReport
from cache.protocols import Embedder

if TYPE_CHECKING:  # handed in; precompute imports this module, not the reverse
    from assistant.precompute.activity import Activity

log = logging.getLogger(__name__)
# how long one write transaction of an import gathers mail (and so, with the one mail being read
# when it is due, how long another writer of the knowledge bank may wait for it)
BATCH_SECONDS = 0.25


@dataclass(frozen=True)
class ImportProgressed:
    phase: Literal["read", "embed"]
    done: int
    total: int
    path: str = ""
    errors: int = 0  # messages skipped with an error so far


@dataclass
class ImportReport:
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    duplicates: int = 0
    removed: int = 0  # mail gone from its source, notes gone from their folder
    moved: int = 0  # mail or notes now read from another file or folder than the one stored
    chunks_added: int = 0
    embedded: int = 0
    replaced_chars: int = 0
    undeclared_qp: int = 0  # bodies quoted-printable though no header said so (decoded)
    read_seconds: float = 0.0
    embed_seconds: float = 0.0
    cancelled: bool = False
    threads: ThreadReport | None = None  # the threads computed after reading
    sources_skipped: int = 0  # remembered sources unchanged since they were read: not parsed
    sources_appended: int = 0  # mboxes read from where the last import ended
    errors: list[Issue] = field(default_factory=list)
    warnings: list[Issue] = field(default_factory=list)
    # folder name → {"added": n, "already": n}: what this import did in each mail folder
    folders: dict[str, dict[str, int]] = field(default_factory=dict)

    @property
    def seen(self) -> int:
        return self.added + self.updated + self.unchanged + self.duplicates

    def summary(self) -> str:
        parts = [
            f"{self.added} added",
            f"{self.updated} updated",
            f"{self.unchanged + self.duplicates} already stored",
            f"{self.removed} removed",
            f"{self.chunks_added} new chunks",
            f"{self.embedded} embedded",
            f"{len(self.errors)} skipped with errors",
            f"{len(self.warnings)} warnings",
        ]
        if self.threads is not None and self.threads.chunks_dropped:
            parts.append(
                f"{self.threads.chunks_dropped} chunks left out (they repeat an earlier mail of "
                "their thread)"
            )
        if self.moved:
            parts.append(f"{self.moved} moved to another folder or file")
        if self.replaced_chars:
            parts.append(f"{self.replaced_chars} undecodable bytes replaced")
        if self.undeclared_qp:
            parts.append(f"{self.undeclared_qp} bodies decoded from quoted-printable (undeclared)")
        if self.sources_skipped or self.sources_appended:
            parts.append(f"{self.sources_skipped} unchanged sources skipped, "
                         f"{self.sources_appended} read from where they ended")  # fmt: skip
        return ", ".join(parts) + (" (cancelled)" if self.cancelled else "")


Notify = Callable[[ImportProgressed], None]


class Importer:
    def __init__(
        self,
        store: KnowledgeStore,
        embedder: Embedder | None,
        chunking: ChunkingSettings | None = None,
        embed_batch: int = 64,
        activity: Activity | None = None,
        no_encoder: str = "",
        on_removed: Callable[[list[int]], None] | None = None,
    ) -> None:
        """`embedder` None: the encoder could not be had (`no_encoder` says why and what to do);
        the import still reads and stores every message, and says so. `on_removed` is told the
        ids of the chunks of mail removed because it vanished from its source (the QA entries
        that quoted them are stale)."""
        self.store = store
        self.embedder = embedder
        self.no_encoder = no_encoder
        self.chunking = chunking or ChunkingSettings()
        self.embed_batch = embed_batch
        self.activity = activity  # marks the embedding phase for searches in other processes
        self.sources = SourceLog(store.db)
        self.on_removed = on_removed
        self.batch_seconds = BATCH_SECONDS
        self._notes = NoteMoves(store)  # the notes moved this run (note_moves.py)

    def run(
        self,
        paths: Iterable[Path],
        notify: Notify | None = None,
        cancelled: Callable[[], bool] = lambda: False,
        embed: bool = True,
    ) -> ImportReport:
        """Read, chunk and store every path; then (unless `embed` is False) embed every chunk
        that has no vector from this embedder."""
        report = ImportReport()
        started = datetime.now(UTC).isoformat()
        t0 = time.perf_counter()
        reads = Reads()
        self._notes = NoteMoves(self.store)
        for path in paths:
            self._import_path(Path(path), report, notify, cancelled, reads)
        if not cancelled():
            self._sweep(reads, report)
        # before embedding: a repeated chunk is not embedded
        report.threads = thread_update.update(self.store)
        report.read_seconds = time.perf_counter() - t0
        report.cancelled = cancelled()
        self.store.record_issues(started, report.errors + report.warnings)
        t1 = time.perf_counter()
        if embed and not report.cancelled and self.embedder is None:
            stored = self.store.count_chunks()
            issue = Issue("[embedding]", "", f"{self.no_encoder}. Every message read is "
                          f"stored ({stored:,} chunks, no vectors yet): once the encoder is "
                          "fixed, `assistant import` embeds them")  # fmt: skip
            _note(report, issue)
            report.errors.insert(0, report.errors.pop())  # first: the app shows three issues
        elif embed and not report.cancelled:
            report.embedded = self.embed(notify, cancelled)
            report.cancelled = cancelled()
        report.embed_seconds = time.perf_counter() - t1
        return report

    def embed(self, notify: Notify | None = None, cancelled: Callable[[], bool] = lambda: False):
        """Embed the chunks without a vector from this embedder, committing per batch: search
        and ask work on every stored chunk meanwhile, and dense search sees each batch as it
        lands (knowledge/retrieval.py)."""
        with self.activity.embedding() if self.activity else nullcontext():
            return self._embed(notify, cancelled)

    def _embed(self, notify: Notify | None, cancelled: Callable[[], bool]) -> int:
        total = self.store.count_unembedded(self.embedder.name)
        done = 0

        def progressed(n: int) -> None:
            nonlocal done
            done += n
            if notify:
                notify(ImportProgressed("embed", done, total))

        return embed_missing(self.store, self.embedder, self.embed_batch, progressed, cancelled)

    def _sweep(self, reads: Reads, report: ImportReport) -> None:
        """Remove the mail that vanished from the paths read to their end; note moved mail. The
        old version of a note edited as it moved goes (its new one was added: updated); then
        the notes no longer in the notes folders read. Only once every path is read: a note
        moved from one folder read to another read after it is followed there, not removed
        from the first and embedded again in the second."""
        swept = sweep(self.store, reads, self.sources.mboxes(), self.sources.maildirs())
        edited = self._notes.edited()
        removed_chunks = swept.removed_chunks + self.store.remove_mail(edited)
        for root in reads.note_roots:  # (reads.failed: resolved, as the notes' paths are)
            removed, chunks = self.store.remove_notes_missing(root, reads.notes, reads.failed)
            report.removed, removed_chunks = report.removed + removed, removed_chunks + chunks
        report.removed += swept.removed
        report.moved += swept.moved
        report.added, report.updated = report.added - len(edited), report.updated + len(edited)
        if removed_chunks and self.on_removed is not None:
            self.on_removed(removed_chunks)

    def _import_path(
        self, path: Path, report: ImportReport, notify, cancelled, reads: Reads
    ) -> None:
        path = path.absolute()  # mail is stored with a path that means the same from anywhere
        skipped: list[Issue] = []  # folders and files under `path` it cannot look at
        try:
            sources = detect_sources(path, skipped)
        except SourceError as exc:
            _note(report, Issue(str(path), "", exc.reason))
            return
        for issue in skipped:
            reads.failed_on(issue)  # not read this time is not deleted
            _note(report, issue)
        plans = [(s, self.sources.plan(s.path, s.kind)) for s in sources]
        total = sum(s.count(plan.offset) for s, plan in plans if plan.action != "skip")
        done = 0
        max_part_bytes = int(self.chunking.max_part_mb * 1_000_000)
        for source, plan in plans:
            if plan.action == "skip":
                report.sources_skipped += 1
                continue
            report.sources_appended += plan.action == "append"
            resume = None  # where the source's last message starts (an mbox's)
            unread = False  # the source itself could not be read (a folder gone since found)
            with _Batches(self.store, self.batch_seconds) as batches:
                for item in source.read(max_part_bytes, plan.offset):
                    if cancelled():
                        return
                    resume = _offset_of(item, resume)
                    unread = unread or _unread(item, source)
                    self._store_item(source, item, report, reads)
                    batches.stored()
                    done += 1
                    if notify:
                        name, errors = str(source.path), len(report.errors)
                        notify(ImportProgressed("read", done, total, name, errors))
            if unread:
                continue  # not read to its end: not remembered as read
            self.sources.remember(source.path, source.kind, resume)
            if source.kind == "mbox" and plan.action == "full":
                reads.whole.add(reads.where(str(source.path)))
        if path.exists():  # (gone while it was read: nothing to remember)
            self.sources.remember(path, "path")
        reads.roots.append(path)
        if any(s.kind == "notes" for s in sources) and path.is_dir():
            reads.note_roots.append(path)  # its notes not read now go after the run's reads

    def _store_item(self, source: Source, item, report: ImportReport, reads: Reads) -> None:
        if isinstance(item, Issue):
            reads.failed_on(item)  # not read this time is not deleted
            if source.kind == "notes":
                reads.notes.add(note_key(Path(item.path)))  # unreadable now is not deleted
            _note(report, item)
            return
        doc: Document = item
        if doc.kind == "note" and self._notes.take(doc):  # its file moved: kept, re-keyed
            reads.notes.add(doc.source_key)
            report.unchanged, report.moved = report.unchanged + 1, report.moved + 1
            return
        chunks = self._chunks(doc)
        outcome, key = self.store.upsert(doc, chunks)
        if doc.kind == "note":
            reads.notes.add(key)
            self._notes.stored(doc, outcome)
        setattr(report, _COUNTER[outcome], getattr(report, _COUNTER[outcome]) + 1)
        if doc.kind == "email":
            reads.saw(key, doc)
            _count_folder(report, doc.folder, outcome)
        if outcome in ("added", "updated"):
            report.chunks_added += len(chunks)
            report.replaced_chars += doc.replaced_chars
            report.undeclared_qp += doc.undeclared_qp
            self._warn(doc, key, report)

    def _chunks(self, doc: Document) -> list[Chunk]:
        """The document's chunks, at most `max_chunks` of them (a warning says so)."""
        chunks = chunk_document(doc, self.chunking.target_tokens, self.chunking.max_tokens)
        cap = self.chunking.max_chunks
        if len(chunks) > cap:
            doc.warnings.append(
                f"{len(chunks)} chunks; only the first {cap} are indexed (chunking.max_chunks), "
                "the whole text is stored"
            )
        return chunks[:cap]

    def _warn(self, doc: Document, key: str, report: ImportReport) -> None:
        where = f"offset {doc.source_offset}" if doc.source_offset is not None else key
        reasons = list(doc.warnings)
        if doc.replaced_chars:
            reasons.append(f"{doc.replaced_chars} undecodable bytes replaced with U+FFFD")
        if key != doc.source_key:
            reasons.append(f"another message has the same Message-ID; both kept (as {key})")
        for reason in reasons:
            _note(report, Issue(doc.source_path, where, reason, "warning"))


class _Batches:
    """The documents of a source stored in transactions of about `seconds` each, not one each:
    a commit writes again every page its rows touched (the documents and chunks tables, their
    indexes, the full-text index), and since mail gained its indexes for filters and threads a
    commit per mail cost a large part of reading (bench/results/import_vs_ace8a82.json). Each
    document is still stored whole or not at all (a savepoint of its own); a killed import
    loses at most the batch in progress, which the rerun reads again."""

    def __init__(self, store: KnowledgeStore, seconds: float) -> None:
        self.store, self.seconds = store, seconds

    def __enter__(self) -> _Batches:
        self._begin()
        return self

    def __exit__(self, *exc) -> None:
        if self._open is not None:  # (None: a commit failed, its error on its way out)
            self._open.__exit__(*exc)

    def stored(self) -> None:
        """One more document stored: commit the batch once it is old enough."""
        if time.monotonic() - self._began >= self.seconds:
            done, self._open = self._open, None
            done.__exit__(None, None, None)
            self._begin()

    def _begin(self) -> None:
        self._open = self.store.transaction()
        self._open.__enter__()
        self._began = time.monotonic()


_COUNTER = {
    "added": "added",
    "updated": "updated",
    "unchanged": "unchanged",
    "duplicate": "duplicates",
}


def _count_folder(report: ImportReport, folder: str, outcome: str) -> None:
    counts = report.folders.setdefault(folder or "(none)", {"added": 0, "already": 0})
    counts["added" if outcome in ("added", "updated") else "already"] += 1


def _offset_of(item: Document | Issue, last: int | None) -> int | None:
    """Where in its mbox `item` starts; `last` where it says none."""
    offset = item.source_offset if isinstance(item, Document) else item.offset
    return offset if offset is not None else last


def _unread(item: Document | Issue, source: Source) -> bool:
    """`item` is the error of a source that could not be read at all (not one of its mails)."""
    return (
        isinstance(item, Issue)
        and item.severity == "error"
        and not item.where
        and item.path == str(source.path)
    )


def _note(report: ImportReport, issue: Issue) -> None:
    (report.errors if issue.severity == "error" else report.warnings).append(issue)
    log.log(logging.ERROR if issue.severity == "error" else logging.WARNING, "%s", issue)
