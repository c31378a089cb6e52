"""Usable while embedding (issue 17, item 5), with the app's real wiring: the TUI's importer (its
own connection, the real ONNX encoder) is held mid-embedding while `assistant search` runs in a
second process and the real pipeline answers in this one."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import pytest

from assistant.events import AnswerDone
from assistant.services import open_services
from assistant.tui.backend import services_for
from tests.conftest import DATA, REPO

pytestmark = pytest.mark.slow

QUESTION = "When does the kitchen work start?"


class HeldImport:
    """The import in a thread of its own, held after its first committed embedding batch."""

    def __init__(self, importer, paths) -> None:
        self.held, self.go = threading.Event(), threading.Event()
        self.reports: list = []
        self.thread = threading.Thread(
            target=lambda: self.reports.append(importer.run(paths, self.notify, lambda: False))
        )

    def notify(self, event) -> None:
        if event.phase == "embed" and event.done > 0 and not self.held.is_set():
            self.held.set()
            self.go.wait(600)


def cli_search(home) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(REPO)}
    cmd = [sys.executable, "-m", "assistant.cli", "--home", str(home), "search", QUESTION]
    return subprocess.run(cmd, env=env, cwd=REPO, capture_output=True, text=True, timeout=300)


def test_search_and_ask_answer_from_every_chunk_while_an_import_embeds(tmp_path):
    ctx = open_services(tmp_path / "home")
    ctx.settings.answer.max_tokens = 24
    importer = services_for(ctx).importer.get()
    assert importer.store is not ctx.store  # the import writes on a connection of its own
    held = HeldImport(importer, [DATA / "mail" / "demo.mbox", DATA / "notes"])
    held.thread.start()
    try:
        assert held.held.wait(600), "the import never reached its embedding phase"
        name = ctx.embedder.name
        embedded, total = ctx.store.embedding_counts(name)
        assert 0 < embedded < total

        shell = cli_search(ctx.home.root)
        assert shell.returncode == 0, shell.stderr
        assert f"{embedded:,} of {total:,} chunks embedded so far" in shell.stderr
        assert "an import is embedding the rest" in shell.stderr
        assert "kitchen" in shell.stdout.lower()

        hits = ctx.retriever.search(QUESTION, k=10)
        with_vectors = ctx.retriever.vectors([h.chunk_id for h in hits])
        assert any(h.chunk_id not in with_vectors for h in hits)  # found by its words alone
        assert any("kitchen" in h.record.text.lower() for h in hits[:3])

        pipeline = ctx.answerer()
        done = list(pipeline.answer(QUESTION))[-1]
        assert isinstance(done, AnswerDone) and done.answer and done.sources
        assert pipeline.qa.stats()["entries"] == 0  # half-embedded retrieval: not remembered
        assert pipeline.qa.encoder == name  # its vectors name the encoder that made them
    finally:
        held.go.set()
        held.thread.join(600)
    assert held.reports and held.reports[0].embedded == total
    assert ctx.store.all_embedded(name)
    hits = ctx.retriever.search(QUESTION, k=10)
    assert len(ctx.retriever.vectors([h.chunk_id for h in hits])) == len(hits)
    assert "chunks embedded so far" not in cli_search(ctx.home.root).stderr
    list(pipeline.answer(QUESTION))
    assert pipeline.qa.stats()["entries"] == 1
