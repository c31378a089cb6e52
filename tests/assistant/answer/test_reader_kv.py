"""The reader's excerpt nodes (answer/excerpts.py, answer/reader_kv.py): a night keeps the KV of
[instruction, "Excerpt: (header)"] and of each line after it; a verdict on such a line restores
them and gives the margin a verdict computing them gives. SmolLM2 stands in for the reader:
what is tested is where the KV comes from, which is the same code for any model."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from assistant.answer.excerpts import EXCERPT_CHARS, Excerpt, opening
from assistant.answer.judge import Prompts, Reader
from assistant.config import Settings
from assistant.config_sections import PrecomputeSettings
from assistant.home import bundled
from cache.blobs import BlobStore
from cache.db import open_cache_db
from cache.kv_tree import KIND, KVTree

pytestmark = pytest.mark.slow

WHERE = "Anna Berg · 2024-03-01 · New hire"
LINES = (
    "Henrik Dahl starts on Monday 3 March in the Oslo office.",
    "He will sit with the platform team on the third floor.",
)
QUESTION = "When does Henrik Dahl start?"


@pytest.fixture(scope="module")
def llm():
    from assistant.llm import make_llm

    return make_llm(Settings().llm)


def reader_over(llm, tmp_path, nodes: bool = True) -> Reader:
    """A reader with a short instruction (its examples cost time, not coverage) and a KV tree."""
    shipped = Prompts.read(bundled("prompts"))
    prompts = Prompts("Reply Yes or No.", shipped.states, shipped.same)
    db = open_cache_db(None)
    tree = KVTree(db, BlobStore(db, tmp_path, {KIND: 1 << 30}), llm.fingerprint)
    return Reader(llm, prompts, nodes=tree if nodes else None)


def never() -> None:
    pass


def test_the_opening_splits_header_first_line_and_the_rest():
    template = Prompts.read(bundled("prompts")).states
    o = opening(template, Excerpt(WHERE, LINES), QUESTION, "<end>")
    assert o.header == f"Excerpt: ({WHERE})"
    assert o.line == f" {LINES[0]}"
    assert o.rest.startswith(f" {LINES[1]}\nQuestion: {QUESTION}\n") and o.rest.endswith("<end>")
    assert o.header + o.line + o.rest[: -len("<end>")] == template.format(
        excerpt=f"({WHERE}) {LINES[0]} {LINES[1]}", question=QUESTION
    )
    bare = opening(template, Excerpt("", ("Just  a\nline.",)), QUESTION, "")
    assert (bare.header, bare.line) == ("Excerpt:", " Just a line.")
    long = "word " * 100  # a line over EXCERPT_CHARS is cut as the night cuts it
    cut = opening(template, Excerpt(WHERE, (long, "more")), QUESTION, "")
    assert cut.line == " " + " ".join(long.split())[:EXCERPT_CHARS]
    assert cut.rest.startswith("\nQuestion:")


def test_a_verdict_restores_the_nights_nodes_and_gives_the_computed_margin(llm, tmp_path):
    computed = reader_over(llm, tmp_path / "a", nodes=False)
    llm.reset()
    fresh = computed.states(QUESTION, [Excerpt(WHERE, LINES), Excerpt(WHERE, LINES[1:])])
    reader = reader_over(llm, tmp_path / "b")
    assert reader.keep_nodes(WHERE, LINES, never) == 3  # the header, then each line
    assert reader.keep_nodes(WHERE, LINES, never) == 0  # kept: nothing made twice
    llm.reset()
    restored = reader.states(QUESTION, [Excerpt(WHERE, LINES), Excerpt(WHERE, LINES[1:])])
    assert restored == pytest.approx(fresh, abs=1e-3)
    # the header and the first line of the first excerpt; the second excerpt's line after the
    # header still held
    assert reader.kv.restored == 3
    other = reader.states("Where does Henrik sit?", [Excerpt(WHERE, LINES[1:])])
    assert other == pytest.approx(
        computed.states("Where does Henrik sit?", [Excerpt(WHERE, LINES[1:])]), abs=1e-3
    )


def test_a_node_that_is_not_the_prompts_is_not_used(llm, tmp_path):
    reader = reader_over(llm, tmp_path)
    reader.keep_nodes(WHERE, LINES, never)
    llm.reset()
    before = reader.kv.restored
    other_mail = Excerpt("Per Lund · 2024-03-02 · New hire", LINES)
    reader.states(QUESTION, [other_mail])  # another header: another path, nothing restored
    assert reader.kv.restored == before
    for path in tmp_path.rglob("*.bin"):  # damaged blobs are found out and computed
        path.write_bytes(b"x" * 10)
    llm.reset()
    fresh = reader_over(llm, tmp_path / "c", nodes=False).states(QUESTION, [Excerpt(WHERE, LINES)])
    llm.reset()
    assert reader.states(QUESTION, [Excerpt(WHERE, LINES)]) == pytest.approx(fresh, abs=1e-3)
    assert reader.kv.restored == before


def test_the_night_steps_aside_between_nodes_and_keeps_what_it_made(llm, tmp_path):
    from assistant.kv.prompt_cache import Preempted

    reader = reader_over(llm, tmp_path)
    calls = []

    def check() -> None:
        calls.append(1)
        if len(calls) == 2:  # a question comes in after the header's node
            raise Preempted

    with pytest.raises(Preempted):
        reader.keep_nodes(WHERE, LINES, check)
    assert reader.keep_nodes(WHERE, LINES, never) == 2  # the job again: the lines only


def test_a_chunks_job_makes_the_readers_nodes_for_its_lines_of_three_words(llm, tmp_path):
    from assistant.knowledge.store import ChunkRecord
    from assistant.precompute.handlers import Handlers

    reader = reader_over(llm, tmp_path)
    cache = SimpleNamespace(embedder=None, checker=lambda background: never)
    handlers = Handlers(
        cache, None, SimpleNamespace(qa=None), None, None, None, None,
        PrecomputeSettings(reader_nodes="lines"), judge=lambda: reader,
    )  # fmt: skip
    text = "Hi all,\n\n" + "\n\n".join(LINES) + "\n\nBest,\nAnna"
    record = ChunkRecord(
        chunk_id=1, text=text, kind="mail", title="New hire", sender="Anna Berg",
        date="2024-03-01", message_id="<1@x>", note_path="", folder="", ordinal=0,
        token_count=40, content_hash="h",
    )  # fmt: skip
    assert handlers._reader_nodes(record) == 3  # the header and the two lines; not "Hi all,"
    handlers.settings = PrecomputeSettings(reader_nodes="none")
    assert handlers._reader_nodes(record) == 0
    other = ChunkRecord(**{**record.__dict__, "chunk_id": 2, "title": "Desk"})
    handlers.settings = PrecomputeSettings(reader_nodes="headers")
    assert handlers._reader_nodes(other) == 1  # its mail's header alone


def test_a_long_line_is_computed_a_piece_at_a_time_so_a_question_waits_a_piece(llm, tmp_path):
    from assistant.kv.prompt_cache import PIECE

    reader = reader_over(llm, tmp_path)
    line = " ".join(["The quarterly numbers for the western region were revised again."] * 6)
    calls: list[int] = []
    assert reader.keep_nodes(WHERE, [line], lambda: calls.append(1)) == 2
    tokens = len(llm.tokenize(" " + line))
    assert tokens > 2 * PIECE
    assert len(calls) >= 1 + tokens // PIECE  # the header's piece, then the line's each


def test_a_byte_changed_in_the_instructions_kv_file_is_computed_again_not_read(
    llm, tmp_path, caplog
):
    """The instruction's KV kept on disk for the next process (<home>/cache/reader) had no
    checksum: one bit flipped there loaded as well as the true KV, and every verdict after read
    the damaged one (the next token's logits moved by up to 14 and its choice changed), never
    rewritten. Now it is said, computed again and rewritten, as a damaged KV blob is."""
    from assistant.answer.reader_kv import ReaderKV

    prefix = llm.tokenize("Reply Yes or No. Does the line answer the question?", first=True)
    kv = ReaderKV(llm, tmp_path, None)
    llm.reset()
    kv.instruction(prefix)
    computed = llm.save_range(0, len(prefix))
    [kept] = list(tmp_path.glob("*.kv"))
    damaged = bytearray(kept.read_bytes())
    damaged[len(damaged) * 2 // 3 | 1] ^= 0x40  # one bit of one of the values (not a header)
    kept.write_bytes(damaged)
    llm.reset()  # the next process: nothing held, the file read
    kv.instruction(prefix)
    assert llm.held_tokens() == prefix
    assert llm.save_range(0, len(prefix)) == computed
    assert "recomputed" in caplog.text and kept.read_bytes() != damaged
    llm.reset()  # the file rewritten is read, and is the KV computed
    kv.instruction(prefix)
    assert llm.save_range(0, len(prefix)) == computed


def test_after_a_llama_cpp_upgrade_the_instruction_and_the_nodes_are_computed_again(
    llm, tmp_path, monkeypatch
):
    """The instruction's KV file and the night's nodes were named by the model alone: after
    llama-cpp-python was upgraded they were restored into the new build, whose kernels may
    compute other values from the same tokens (a verdict then no longer the one computing it
    gives). Named by the build too, neither is read: both are computed again under the new
    name; the old build's file is removed, its nodes go first when the budget needs room."""
    from assistant.llm import make_llm, model_file

    db = open_cache_db(None)
    blobs = BlobStore(db, tmp_path / "blobs", {KIND: 1 << 30})
    shipped = Prompts.read(bundled("prompts"))
    prompts = Prompts("Reply Yes or No.", shipped.states, shipped.same)

    def reader(model) -> Reader:
        tree = KVTree(db, blobs, model.fingerprint)
        return Reader(model, prompts, kv_dir=tmp_path / "reader", nodes=tree)

    assert reader(llm).keep_nodes(WHERE, LINES, never) == 3
    assert len(list((tmp_path / "reader").glob("*.kv"))) == 1
    monkeypatch.setattr(model_file, "llama_cpp_build", lambda: "0.3.99 rebuilt-libllama")
    upgraded = reader(make_llm(Settings().llm))
    upgraded.states(QUESTION, [Excerpt(WHERE, LINES)])
    assert upgraded.kv.restored == 0
    [kept] = list((tmp_path / "reader").glob("*.kv"))  # its own, computed; the old one gone
    assert kept.name.startswith(f"{upgraded.llm.fingerprint}-")
    assert upgraded.keep_nodes(WHERE, LINES, never) == 3
