"""The answer pipeline with the real SmolLM2: a cache hit must not change a single token."""

from __future__ import annotations

import pytest

from assistant import events as p
from assistant.answer.answerer import NO_CACHE, Answerer
from assistant.config import Settings
from assistant.llm import make_llm
from assistant.llm.prompt import evidence_text
from tests.assistant.wiring import answerer_over
from tests.conftest import BATTERY, KITCHEN, TILES, WEDDING, empty_store, import_mails

pytestmark = pytest.mark.slow

MAILS = [KITCHEN, BATTERY, WEDDING, TILES]
SYSTEM = "Answer from the context in one sentence.\n\nContext:\n"


@pytest.fixture(scope="module")
def llm():
    return make_llm(Settings().llm)


def build(tmp_path, llm, embedder, threshold: float = 0.9) -> Answerer:
    store = empty_store()
    import_mails(store, embedder, tmp_path / "box.mbox", MAILS)
    settings = Settings()
    settings.answer.context_chunks = 2
    settings.answer.max_tokens = 24
    kv_dir = tmp_path / "kv"
    return answerer_over(store, embedder, llm, kv_dir, settings, SYSTEM, threshold=threshold)


def run(events) -> tuple[str, p.AnswerDone]:
    events = list(events)
    text = "".join(e.text for e in events if isinstance(e, p.TokenStreamed))
    return text, events[-1]


def test_full_prefix_hit_gives_identical_tokens(tmp_path, llm, fake_embedder):
    pipe = build(tmp_path, llm, fake_embedder, threshold=2.0)  # τ > 1: never a QA hit
    question = "When does the kitchen demolition start?"
    naive, naive_done = run(pipe.answer(question, NO_CACHE))
    first, first_done = run(pipe.answer(question))
    again, again_done = run(pipe.answer(question))
    assert naive.strip() and naive == first == again
    assert first_done.kv_reused_tokens == 0
    assert again_done.evidence and again_done.evidence == naive_done.evidence
    evidence = evidence_text([e.sentence for e in again_done.evidence])
    fresh = pipe.cache.llm.tokenize(evidence) + pipe.cache.llm.tokenize(
        f"{pipe.cache.frame.middle}{question}{pipe.cache.frame.tail}"
    )
    assert again_done.kv_reused_tokens == again_done.prompt_tokens - len(fresh) > 0


def test_evidence_after_the_question_keeps_cached_answers_identical(tmp_path, llm, fake_embedder):
    pipe = build(tmp_path, llm, fake_embedder, threshold=2.0)
    pipe.settings.answer.evidence_place = "question"
    question = "When does the kitchen demolition start?"
    naive, naive_done = run(pipe.answer(question, NO_CACHE))
    run(pipe.answer(question))  # fills the KV tree
    again, again_done = run(pipe.answer(question))
    assert naive.strip() and naive == again and again_done.kv_reused_tokens > 0
    lines = [e.sentence for e in naive_done.evidence]
    segments = pipe.cache.segments([MAILS[0][1]], question, lines)
    assert lines and segments.evidence == []
    asked = pipe.cache.llm.detokenize(segments.question).decode()
    assert asked.index(question) < asked.index(lines[0])


def test_partial_prefix_hit_gives_identical_tokens(tmp_path, llm, fake_embedder):
    pipe = build(tmp_path, llm, fake_embedder, threshold=2.0)
    found = pipe.select.retriever.search("kitchen tiles wedding battery", k=4)
    hits = {h.record.title: h for h in found}
    first = [hits["Kitchen start"], hits["Tiles"]]
    second = [hits["Kitchen start"], hits["Wedding"]]
    vec = fake_embedder.embed_batch(["q"])[0]
    q = "What did we choose for the kitchen?"
    run(pipe.generate(q, vec, first))
    cached, done = run(pipe.generate(q, vec, second))
    naive, _ = run(pipe.generate(q, vec, second, NO_CACHE))
    shared = len(pipe.cache.llm.tokenize(pipe.cache.frame.head + SYSTEM, first=True)) + len(
        pipe.cache.llm.tokenize(hits["Kitchen start"].record.text.strip() + "\n\n")
    )
    assert done.kv_reused_tokens == shared
    assert cached == naive


def test_truncated_blob_is_recomputed_not_used(tmp_path, llm, fake_embedder):
    pipe = build(tmp_path, llm, fake_embedder, threshold=2.0)
    question = "Who found the battery bug?"
    reference, _ = run(pipe.answer(question, NO_CACHE))
    run(pipe.answer(question))
    for blob in (tmp_path / "kv").rglob("*.bin"):
        blob.write_bytes(blob.read_bytes()[:1000])
    text, done = run(pipe.answer(question))
    assert done.kv_reused_tokens == 0 and text == reference
    text, done = run(pipe.answer(question))  # rebuilt by the run above
    assert done.kv_reused_tokens > 0 and text == reference


def test_paraphrase_above_tau_is_served_from_the_qa_bank(tmp_path, llm):
    from assistant.knowledge.embeddings import make_embedder

    embedder = make_embedder(Settings().embedding)
    pipe = build(tmp_path, llm, embedder, threshold=0.8)
    pipe.verifier.same = lambda stored, asked: True  # the reader's "same question", stood in
    _, first = run(pipe.answer("When does the kitchen demolition start?"))
    events = list(pipe.answer("When will the kitchen demolition begin?"))
    found = [e for e in events if isinstance(e, p.QAHitFound)]
    assert len(found) == 1 and found[0].similarity >= 0.8 and found[0].made > 0
    # the quote comes first (no model), then the hit its evidence decided
    assert events.index(found[0]) > events.index(
        next(e for e in events if isinstance(e, p.QuoteFound))
    )
    assert not any(isinstance(e, p.TokenStreamed | p.KVReused) for e in events)
    done = events[-1]
    assert done.qa_hit and done.answer == first.answer
    assert [s["message_id"] for s in done.sources] == [s["message_id"] for s in first.sources]
    below = list(pipe.answer("Who is giving the speech at the wedding?"))
    assert not below[-1].qa_hit and any(isinstance(e, p.TokenStreamed) for e in below)


def test_continuation_logprobs_agree_with_greedy_choice(llm):
    prompt = llm.tokenize("The capital of France is", first=True)
    llm.reset()
    llm.eval(prompt)
    best = next(llm.greedy(1))  # the generator is not resumed: the state stays at the prompt
    llm.reset()
    llm.eval(prompt)
    other = (best + 1) % 1000
    lp_best = llm.continuation_logprobs([best])[0]
    llm.reset()
    llm.eval(prompt)
    lp_other = llm.continuation_logprobs([other])[0]
    assert lp_best <= 0 and lp_other < lp_best
    llm.reset()
    llm.eval(prompt)
    two = llm.continuation_logprobs([best, best])
    assert two[0] == pytest.approx(lp_best) and llm.n_past == len(prompt) + 2


def test_the_self_check_answers_a_served_hit_afresh_and_tightens_a_wrong_one(tmp_path, llm):
    from assistant.answer.qa_verify import disagree
    from assistant.clock import Clock
    from assistant.knowledge.embeddings import make_embedder

    embedder = make_embedder(Settings().embedding)
    pipe = build(tmp_path, llm, embedder, threshold=0.8)
    stored = "When does the kitchen demolition start?"
    asked = "When will the kitchen demolition begin?"
    run(pipe.answer(stored))
    entry = next(e for e in pipe.qa.entries() if e.question == stored)
    pipe.qa.set_answer(entry.id, "It begins at 8:00.", entry.sources, entry.knowledge_version,
                       entry.chunk_watermark, entry.evidence)  # fmt: skip
    events = list(pipe.answer(asked))
    assert events[-1].qa_hit and events[-1].sentence == "It begins at 8:00."
    [served] = pipe.qa.unchecked(5)
    assert served.entry_id == entry.id and served.question == asked
    tightened = pipe.recheck(served)
    assert pipe.qa.unchecked(5) == []  # seen by the self-check
    vector = embedder.embed_batch([asked])[0]
    hits, found = pipe.quote(asked, vector)
    was = pipe._served(asked, found, hits, entry, Clock())
    fresh = [e for e in pipe.answer(asked, NO_CACHE)][-1]  # greedy: the self-check's reading
    assert tightened == disagree(was, fresh)
    assert (pipe.qa.get(entry.id).refused_at > 0.8) == tightened


def test_a_shown_prompt_reads_only_the_quoted_chunks_and_caches_identically(
    tmp_path, llm, fake_embedder
):
    """[answer] prompt_chunks = "shown": the prompt holds only the chunks of the lines shown,
    so it is shorter than the "top" prompt of the same question, and a cached run of it gives
    the naive run's tokens."""
    pipe = build(tmp_path, llm, fake_embedder, threshold=2.0)
    question = "When does the kitchen demolition start?"
    _, top = run(pipe.answer(question, NO_CACHE))
    pipe.settings.answer.prompt_chunks = "shown"
    naive, shown_done = run(pipe.answer(question, NO_CACHE))
    run(pipe.answer(question))  # fills the KV tree
    again, again_done = run(pipe.answer(question))
    assert shown_done.prompt_tokens < top.prompt_tokens
    assert naive.strip() and naive == again and again_done.kv_reused_tokens > 0
