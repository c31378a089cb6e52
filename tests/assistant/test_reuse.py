"""Any-order KV reuse in the pipeline with the real SmolLM2: every chunk with a [system, chunk]
node serves wherever retrieval puts it; a damaged, foreign-model or unshiftable blob is never
used (the chunk is computed, and the answer is the exact one); exact mode stays token-identical."""

from __future__ import annotations

from pathlib import Path

import pytest

from assistant import events as p
from assistant.answer.answerer import NO_CACHE, Answerer
from assistant.config import Settings
from assistant.llm import make_llm
from assistant.llm.prompt import EVIDENCE_HEAD, evidence_text
from assistant.llm.reuse import quoted_runs
from assistant.llm.runtime import LocalLLM
from assistant.rerank.models import gemma_file
from cache.kv_tree import KVTree, segment_hash
from tests.assistant.test_pipeline import build, run
from tests.conftest import real_1_5b

pytestmark = pytest.mark.slow
QUESTION = "When does the kitchen demolition start, and which tiles were chosen?"


@pytest.fixture(scope="module")
def llm() -> LocalLLM:
    return make_llm(Settings().llm)


def pipeline(tmp_path, llm, embedder, reuse: str, repair: str = "none") -> Answerer:
    pipe = build(tmp_path, llm, embedder, threshold=2.0)  # τ > 1: never a QA hit
    pipe.settings.cache.reuse, pipe.settings.cache.repair = reuse, repair
    return pipe


def prompt_chunks(pipe: Answerer) -> list[str]:
    """The chunk texts the question's prompt holds, in prompt order."""
    vector = pipe.embedder.embed_batch([QUESTION])[0]
    candidates = pipe.select.candidates(QUESTION, vector)
    return [h.record.text for h in pipe.select.rerank(QUESTION, candidates)]


def precompute_chunk_nodes(pipe: Answerer) -> list[str]:
    """A [system, chunk] node for every chunk of the prompt, as precompute makes them."""
    chunks = prompt_chunks(pipe)
    assert len(chunks) == 2
    for chunk in chunks:
        pipe.cache.prefill([chunk], background=False)
    return chunks


def fresh_tokens(pipe: Answerer, done: p.AnswerDone) -> int:
    """The question's tokens and the evidence's not quoted from a prompt chunk: computed."""
    evidence = pipe.cache.llm.tokenize(evidence_text([e.sentence for e in done.evidence]))
    chunks = pipe.cache.segments(prompt_chunks(pipe), "").chunks
    quoted = sum(q.length for q in quoted_runs(evidence, chunks))
    tail = f"{pipe.cache.frame.middle}{QUESTION}{pipe.cache.frame.tail}"
    return len(evidence) - quoted + len(pipe.cache.llm.tokenize(tail))


def node_key(pipe: Answerer, chunk: str) -> str:
    segments = pipe.cache.segments([chunk], "")
    nodes = pipe.kv.path([segment_hash(s) for s in segments.prefix])
    return nodes[-1][1]


def test_every_precomputed_chunk_is_reused_wherever_it_lands(tmp_path, llm, fake_embedder):
    pipe = pipeline(tmp_path, llm, fake_embedder, "any-order")
    precompute_chunk_nodes(pipe)
    answer, done = run(pipe.answer(QUESTION))
    assert answer.strip()
    assert done.kv_reuse == "any-order" and done.kv_repaired == 0
    assert done.kv_reused_tokens == done.prompt_tokens - fresh_tokens(pipe, done)
    evidence = pipe.cache.llm.tokenize(evidence_text([e.sentence for e in done.evidence]))
    chunks = pipe.cache.segments(prompt_chunks(pipe), "").chunks
    assert sum(q.length for q in quoted_runs(evidence, chunks)) > len(evidence) / 2
    # a node below a placed chunk would hold KV no uncached run computes: none is stored
    segments = pipe.cache.segments(prompt_chunks(pipe), "")
    assert not pipe.kv.has_blob([segment_hash(s) for s in segments.prefix])


def test_the_evidence_repair_computes_the_evidence_over_the_placed_chunks(
    tmp_path, llm, fake_embedder
):
    pipe = pipeline(tmp_path, llm, fake_embedder, "any-order", "evidence")
    precompute_chunk_nodes(pipe)
    pipe.cache.keep_heading(background=False)  # not even the heading is quoted
    answer, done = run(pipe.answer(QUESTION))
    assert answer.strip() and done.kv_reuse == "any-order" and done.kv_repaired == 0
    evidence = pipe.cache.llm.tokenize(evidence_text([e.sentence for e in done.evidence]))
    tail = f"{pipe.cache.frame.middle}{QUESTION}{pipe.cache.frame.tail}"
    computed = len(evidence) + len(pipe.cache.llm.tokenize(tail))
    assert done.kv_reused_tokens == done.prompt_tokens - computed


def test_the_evidence_heading_is_placed_from_its_own_node(tmp_path, llm, fake_embedder):
    pipe = pipeline(tmp_path, llm, fake_embedder, "any-order")
    precompute_chunk_nodes(pipe)
    _, before = run(pipe.answer(QUESTION))
    pipe.cache.keep_heading(background=False)
    _, after = run(pipe.answer(QUESTION))
    evidence = pipe.cache.llm.tokenize(evidence_text([e.sentence for e in after.evidence]))
    heading = pipe.cache.segments([EVIDENCE_HEAD], "").chunks[0]
    runs = quoted_runs(evidence, [heading])
    assert runs and runs[0].start == 0  # the heading opens the evidence segment
    assert after.kv_reused_tokens == before.kv_reused_tokens + runs[0].length


def test_sink_repair_re_decodes_the_first_tokens_of_each_placed_chunk(tmp_path, llm, fake_embedder):
    pipe = pipeline(tmp_path, llm, fake_embedder, "any-order", "sink-4")
    precompute_chunk_nodes(pipe)
    events = list(pipe.answer(QUESTION))
    reused = next(e for e in events if isinstance(e, p.KVReused))
    evidence = pipe.cache.llm.tokenize(evidence_text([e.sentence for e in events[-1].evidence]))
    quotes = quoted_runs(evidence, pipe.cache.segments(prompt_chunks(pipe), "").chunks)
    assert quotes and all(q.length >= 4 for q in quotes)
    # the second chunk and each run of the evidence quoted from a chunk's KV
    assert (reused.mode, reused.repaired) == ("any-order", 4 * (1 + len(quotes)))
    assert reused.segments == 3  # the system prompt and both chunks
    assert events[-1].kv_repaired == reused.repaired


def test_exact_mode_is_token_identical_with_chunk_nodes_present(tmp_path, llm, fake_embedder):
    pipe = pipeline(tmp_path, llm, fake_embedder, "exact")
    precompute_chunk_nodes(pipe)
    naive, _ = run(pipe.answer(QUESTION, NO_CACHE))
    cached, done = run(pipe.answer(QUESTION))
    assert cached == naive and done.kv_reuse == "exact"
    first_chunk = len(pipe.cache.segments(prompt_chunks(pipe)[:1], "").prefix[1])
    system = len(pipe.cache.segments([], "").system)
    assert done.kv_reused_tokens == system + first_chunk  # the second chunk was computed


def test_a_damaged_blob_is_computed_not_placed(tmp_path, llm, fake_embedder):
    pipe = pipeline(tmp_path, llm, fake_embedder, "any-order")
    chunks = precompute_chunk_nodes(pipe)
    naive, _ = run(pipe.answer(QUESTION, NO_CACHE))
    path = pipe.kv.blobs._path(node_key(pipe, chunks[1]))
    path.write_bytes(path.read_bytes()[:-16] + bytes(16))  # same size, other bytes
    cached, done = run(pipe.answer(QUESTION))
    assert cached == naive and done.kv_reuse == "exact"


def test_a_foreign_model_blob_is_never_placed(tmp_path, llm, fake_embedder):
    """Nodes of another model are not found (the tree is keyed by model); a blob of another
    model under this model's key (with a valid checksum) does not load, and is computed."""
    pipe = pipeline(tmp_path, llm, fake_embedder, "any-order")
    chunks = prompt_chunks(pipe)
    naive, _ = run(pipe.answer(QUESTION, NO_CACHE))
    gemma = LocalLLM(gemma_file(Path(tmp_path / "models")), n_ctx=1024, n_threads=1)
    foreign = KVTree(pipe.kv.db, pipe.kv.blobs, gemma.fingerprint)
    for chunk in chunks:  # gemma's own [system, chunk] nodes, as its precompute makes them
        system, tokens = gemma.tokenize("x", first=True), gemma.tokenize(chunk)
        gemma.reset()
        gemma.eval(system + tokens)
        blob = gemma.save_range(len(system), gemma.n_past)
        hashes = [segment_hash(s) for s in pipe.cache.segments([chunk], "").prefix]
        assert foreign.store(hashes, gemma.n_past, blob)
    cached, done = run(pipe.answer(QUESTION))
    assert cached == naive and done.kv_reused_tokens == 0  # nothing of gemma's was found
    pipe.cache.prefill([chunks[1]], background=False)  # this model's node for the second chunk …
    pipe.kv.blobs.put("kv", node_key(pipe, chunks[1]), blob)  # … holding gemma's KV
    cached, done = run(pipe.answer(QUESTION))
    assert cached == naive and done.kv_reuse == "exact"


def test_a_model_that_cannot_shift_falls_back_to_exact_reuse(
    tmp_path,
    llm,
    fake_embedder,
    monkeypatch,
):
    pipe = pipeline(tmp_path, llm, fake_embedder, "any-order")
    precompute_chunk_nodes(pipe)
    naive, _ = run(pipe.answer(QUESTION, NO_CACHE))
    monkeypatch.setattr(LocalLLM, "can_shift", property(lambda self: False))
    cached, done = run(pipe.answer(QUESTION))
    assert cached == naive and done.kv_reuse == "exact"


def test_placed_chunks_are_moved_beforehand_in_the_side_context(
    tmp_path, llm, fake_embedder, monkeypatch
):
    """The prompt's context then moves nothing (no re-rotation pass over its n_ctx cells), and
    on SmolLM2 the answer is the one moving them there gives."""
    pipe = pipeline(tmp_path, llm, fake_embedder, "any-order", "evidence")
    precompute_chunk_nodes(pipe)
    deltas: list[int] = []
    place_range = LocalLLM.place_range

    def spy(self, blob, tokens, saved_at, part, at):
        deltas.append(at - (saved_at + part[0]))
        return place_range(self, blob, tokens, saved_at, part, at)

    monkeypatch.setattr(LocalLLM, "place_range", spy)
    moved, done = run(pipe.answer(QUESTION))
    assert done.kv_reuse == "any-order" and deltas and set(deltas) == {0}
    assert llm._mover.state == "on"
    deltas.clear()
    monkeypatch.setattr(llm, "move_aside", False)
    in_place, again = run(pipe.answer(QUESTION))
    assert deltas and 0 not in deltas
    assert in_place == moved and again.kv_reused_tokens == done.kv_reused_tokens


@pytest.fixture(scope="module")
def qwen() -> LocalLLM:
    """The 1.5B writer (issue 47), one thread, as a test worker gets."""
    return LocalLLM(real_1_5b(), 2048, 1)


def test_at_1_5b_chunk_nodes_reuse_token_identically_and_any_order_places_them(
    tmp_path, qwen, fake_embedder
):
    """The writer at 1.5B (Qwen2) through the KV tree: exact reuse restores the system prompt
    and the first chunk and writes what naive writes; any-order places the second chunk's node
    too (Qwen2's rotary positions shift), computing only the question and evidence."""
    pipe = pipeline(tmp_path, qwen, fake_embedder, "exact")
    precompute_chunk_nodes(pipe)
    naive, _ = run(pipe.answer(QUESTION, NO_CACHE))
    cached, done = run(pipe.answer(QUESTION))
    assert naive.strip() and cached == naive and done.kv_reuse == "exact"
    first_chunk = len(pipe.cache.segments(prompt_chunks(pipe)[:1], "").prefix[1])
    assert done.kv_reused_tokens == len(pipe.cache.segments([], "").system) + first_chunk
    assert qwen.can_shift
    (tmp_path / "b").mkdir()
    pipe = pipeline(tmp_path / "b", qwen, fake_embedder, "any-order")  # no user path stored yet
    precompute_chunk_nodes(pipe)
    placed, done = run(pipe.answer(QUESTION))
    assert placed.strip() and done.kv_reuse == "any-order"
    assert done.kv_reused_tokens == done.prompt_tokens - fresh_tokens(pipe, done)


def test_auto_repair_is_the_one_measured_for_the_loaded_writer(tmp_path, llm, qwen, fake_embedder):
    """[cache] repair = "auto" reads the writer's model file: the 1.5B quotes its evidence
    lines from the moved chunks ("none"), the 135M model computes them ("evidence")."""
    small = pipeline(tmp_path, llm, fake_embedder, "any-order", "auto")
    assert small.cache.repair == "evidence"
    (tmp_path / "b").mkdir()
    assert pipeline(tmp_path / "b", qwen, fake_embedder, "any-order", "auto").cache.repair == "none"
