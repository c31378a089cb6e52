"""The reader's verdicts (answer/judge.py): with the real 1.5B reader on a handful of cases, and
the decision over its margins (which line is quoted, "not found", the mark) with the real line
scorer and a reader whose margins a test sets."""

from __future__ import annotations

import pytest

from assistant.answer.evidence import LineFinder
from assistant.answer.judge import Bars, Prompts, Reader, judge, next_candidates
from assistant.config import Settings
from assistant.home import bundled
from assistant.knowledge.embeddings import make_embedder
from assistant.knowledge.retrieval import Retriever
from tests.conftest import TILES, WEDDING, empty_store, import_mails, real_1_5b

pytestmark = pytest.mark.slow

MAILS = [
    ("New hire", "Hi all,\n\nThe new engineer joins the Oslo team next month.\n\n"
     "Henrik Dahl starts on Monday 3 March in the Oslo office.\n\nBest,\nAnna"),
    WEDDING,
    TILES,
]  # fmt: skip
BARS = Bars(confirm=0.0, none=-3.0, same=0.0)


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    embedder = make_embedder(Settings().embedding)
    store = empty_store()
    import_mails(store, embedder, tmp_path_factory.mktemp("mail") / "box.mbox", MAILS, "j")
    return embedder, Retriever(store, embedder, None), LineFinder(embedder)


def found_for(world, question: str):
    embedder, retriever, lines = world
    vector = embedder.embed_batch([question])[0]
    hits = retriever.search(question, k=3, query_vector=vector)
    return lines.find(question, vector, [h.record for h in hits])


class SetReader:
    """Margins a test sets by the excerpt's words: the decision, not the model, is tested."""

    def __init__(self, says: dict[str, float], default: float = -5.0) -> None:
        self.says, self.default, self.bars, self.asked = says, default, BARS, []

    def states(self, question: str, excerpts, stop=None):
        self.asked += list(excerpts)
        return [next((m for w, m in self.says.items() if w in str(e)), self.default)
                for e in excerpts]  # fmt: skip

    def same(self, stored: str, asked: str) -> float:
        return 5.0


def answer_with(tmp_path, reader: SetReader | None, question: str):
    """The whole answer path (the real line scorer and SmolLM2 writing) with `reader` (None:
    the reader off)."""
    from assistant.answer.answerer import Answerer
    from assistant.llm import make_llm
    from tests.assistant.wiring import answerer_over

    embedder = make_embedder(Settings().embedding)
    store = empty_store()
    tmp_path.mkdir(parents=True)
    import_mails(store, embedder, tmp_path / "box.mbox", MAILS, "w")
    settings = Settings()
    settings.answer.max_tokens = 16
    llm, system = make_llm(settings.llm), "Answer in one sentence.\n\n"
    pipe: Answerer = answerer_over(
        store, embedder, llm, tmp_path / "kv", settings, system, judge=reader
    )
    return pipe, list(pipe.answer(question))


def test_a_confirmed_quote_stays_and_is_marked_confirmed(world):
    found = found_for(world, "When does Henrik Dahl start?")
    judged = judge(SetReader({"3 March": 2.0}), "When does Henrik Dahl start?", found)
    assert judged.verdict == "confirmed" and judged.found.band == "answer"
    assert "3 March" in " ".join(e.sentence for e in judged.found.lines)


def test_another_line_the_reader_finds_becomes_the_quote(world):
    question = "When does Henrik Dahl start?"
    found = found_for(world, question)
    others = next_candidates(found, question)
    assert others and found.lines
    target = others[-1]  # the reader doubts the quote, says yes to the last candidate only
    judged = judge(SetReader({target.line.text: 1.5}, default=-4.0), question, found)
    assert judged.verdict == "moved" and judged.found.judged == "confirmed"
    assert judged.found.record.chunk_id == target.record.chunk_id
    assert target.line.text[:40] in " ".join(e.sentence for e in judged.found.lines)


def test_a_quote_between_the_bars_is_left_to_the_sentence_without_asking_the_candidates(world):
    """Between the bars the candidates could only move the quote (bench/results/
    lazy_candidates.json: 1 of 382 questions): they are not judged, even one that would have
    reached the confirm bar."""
    question = "When does Henrik Dahl start?"
    found = found_for(world, question)
    others = next_candidates(found, question)
    assert others
    reader = SetReader({others[-1].line.text: 1.5}, default=-1.0)
    judged = judge(reader, question, found)
    assert judged.verdict == "unsure" and judged.found == found and judged.margin == -1.0
    assert len(reader.asked) == 1  # the quote's verdict alone


def test_no_line_near_the_bar_is_not_found_and_a_middling_one_is_left_to_the_sentence(world):
    question = "How much did the tiles cost?"
    found = found_for(world, question)
    assert judge(SetReader({}, default=-4.0), question, found).verdict == "not found"
    middling = judge(SetReader({}, default=-1.0), question, found)  # the sentence decides
    assert middling.verdict == "unsure" and middling.found == found and not found.judged


@pytest.fixture(scope="module")
def reader():
    from assistant.llm.runtime import LocalLLM

    return Reader(LocalLLM(real_1_5b(), 2048, 1), Prompts.read(bundled("prompts")))


def test_the_real_reader_tells_a_line_that_answers_from_one_that_does_not(reader):
    yes, no = reader.states(
        "When does Henrik Dahl start?",
        ["Henrik Dahl starts on Monday 3 March in the Oslo office.",
         "The new engineer joins the Oslo team; his desk is by the window."],
    )  # fmt: skip
    assert yes > no + 1.0
    wedding = reader.states(
        "Who gives the speech at Elin's wedding?",
        ["Elin's wedding is in Uppsala on 8 August; Maya gives the speech.",
         "Elin's wedding is in Uppsala on 8 August."],
    )  # fmt: skip
    assert wedding[0] > wedding[1] + 1.0


def test_the_real_reader_tells_a_paraphrase_from_a_near_miss(reader):
    same = reader.same("When does Henrik start?", "What is Henrik Dahl's first day at work?")
    other = reader.same("When does Henrik start?", "How much does Henrik earn?")
    assert same > other + 1.0


def short(reader: Reader, kv_dir=None) -> Reader:
    """The reader with a short instruction: what is tested is where its KV comes from, and
    computing the shipped one's examples again and again only costs time."""
    prompts = Prompts("Reply Yes or No.", reader.prompts.states, reader.prompts.same)
    return Reader(reader.llm, prompts, kv_dir=kv_dir)


def test_the_instructions_kv_kept_gives_the_margins_a_fresh_model_gives(reader):
    reader = short(reader)
    question, line = "Where is the wedding?", "Elin's wedding is in Uppsala on 8 August."
    kept = reader.states(question, [line])[0]  # the instruction's KV kept from earlier calls
    assert reader.llm.held_tokens()[: len(reader._prefix)] == reader._prefix
    reader.llm.reset()
    fresh = reader.states(question, [line])[0]
    assert kept == pytest.approx(fresh, abs=0.05)
    reader.kv.hold(reader._prefix, [])  # a state holding more is cut back to the instruction
    assert reader.llm.held_tokens() == reader._prefix


def test_the_instruction_kv_is_kept_on_disk_for_the_next_process(reader, tmp_path, caplog):
    question, line = "Where is the wedding?", "Elin's wedding is in Uppsala on 8 August."
    first = short(reader, tmp_path)
    reader.llm.reset()
    computed = first.states(question, [line])[0]
    [kept] = list(tmp_path.glob("*.kv"))
    reader.llm.reset()  # a new process: nothing held, the file read instead of computing
    again = short(reader, tmp_path)
    assert again.states(question, [line])[0] == pytest.approx(computed, abs=1e-4)
    kept.write_bytes(kept.read_bytes()[:100])  # truncated: said, computed again, rewritten
    reader.llm.reset()
    third = short(reader, tmp_path)
    assert third.states(question, [line])[0] == pytest.approx(computed, abs=1e-4)
    assert "recomputed" in caplog.text and kept.stat().st_size > 100


def test_the_verdict_replaces_the_checking_mark_and_only_confirmed_answers_are_kept(tmp_path):
    from assistant import events as p

    question = "When does Henrik Dahl start?"
    pipe, events = answer_with(tmp_path / "a", SetReader({}, default=-1.0), question)
    kinds = [type(e).__name__ for e in events]
    assert kinds.index("QuoteFound") < kinds.index("QuoteJudged") < kinds.index("AnswerDone")
    assert next(e for e in events if isinstance(e, p.QuoteFound)).checking
    judged = next(e for e in events if isinstance(e, p.QuoteJudged))
    done = events[-1]
    assert judged.verdict == "unsure"  # the writer's sentence decides, as without a reader
    assert bool(pipe.qa.entries()) == (done.band == "answer")  # a doubted one is not kept
    pipe, events = answer_with(tmp_path / "b", SetReader({"3 March": 2.0}), question)
    assert [e.verdict for e in events if isinstance(e, p.QuoteJudged)] == ["confirmed"]
    assert events[-1].band == "answer" and len(pipe.qa.entries()) == 1
    pipe, events = answer_with(tmp_path / "c", SetReader({}, default=-6.0), question)
    assert events[-1].not_found and not pipe.qa.entries()


def test_a_same_question_verdict_is_kept_for_the_next_process():
    """A verdict kept in the cache database is read, not asked of the model again: the second
    reader's model would fail if it were asked anything."""
    from cache.db import open_cache_db
    from cache.verdicts import Verdicts

    class Asked(Exception):
        pass

    class Model:  # what a reader reads of its model before it asks it anything
        fingerprint = "model-a"

        def for_the_user(self):
            raise Asked

    prompts = Prompts.read(bundled("prompts"))
    kept = Verdicts(open_cache_db(None))
    first = Reader(Model(), prompts, kept=kept)
    first._margins = lambda items: [1.25]  # the model's answer, once
    assert first.same("When does Henrik start?", "Henrik's first day?") == 1.25
    again = Reader(Model(), prompts, kept=kept)
    assert again.same("When does Henrik start?", "Henrik's  first day?") == 1.25  # spacing
    with pytest.raises(Asked):
        again.same("When does Henrik start?", "How much does Henrik earn?")
    other = Model()
    other.fingerprint = "model-b"  # another model's verdicts are its own
    with pytest.raises(Asked):
        Reader(other, prompts, kept=kept).same("When does Henrik start?", "Henrik's first day?")


def test_ask_fresh_tightens_a_remembered_answer_the_reader_now_finds_nothing_in(tmp_path):
    """`ask --fresh` looked the would-be hit up with the reader's judged quote: where the reader
    moved off the line the entry stands on, or found nothing, no entry was found and none
    tightened, and the next plain ask served the same answer. It is looked up with the line
    scorer's quote, as a plain ask serves it, and a reader that leaves that line tightens it."""
    from assistant import events as p

    reader = SetReader({"3 March": 2.0})
    question = "When does Henrik Dahl start?"
    pipe, events = answer_with(tmp_path / "a", reader, question)
    assert [e for e in events if isinstance(e, p.QuoteJudged)][0].verdict == "confirmed"
    assert any(isinstance(e, p.QAHitFound) for e in pipe.answer(question))  # remembered
    reader.says = {}  # now it finds nothing in any line
    fresh = list(pipe.answer(question, fresh=True))
    assert any(isinstance(e, p.HitTightened) for e in fresh)


def served_with(pipe, reader: SetReader, question: str):
    """`question` asked again once a reader is on (loaded now, or set again): the QA bank's hit,
    the reader's verdicts on its quote, and the answer shown."""
    from assistant import events as p

    pipe.judge, reader.asked = reader, []
    events = list(pipe.answer(question))
    hit = next(e for e in events if isinstance(e, p.QAHitFound))
    return hit, [e.verdict for e in events if isinstance(e, p.QuoteJudged)], events[-1]


def test_an_answer_kept_with_the_reader_off_is_judged_when_a_reader_first_serves_it(tmp_path):
    """An answer kept while no reader judged it was served "confirmed" once a reader was on,
    as a user's answer the reader had confirmed: the reader judges it when it first serves
    it, and only an entry whose line it confirmed is served confirmed without asking again."""
    question = "When does Henrik Dahl start?"
    pipe, _ = answer_with(tmp_path / "off", None, question)
    [entry] = pipe.qa.entries()
    reader = SetReader({"3 March": 2.0})
    hit, verdicts, done = served_with(pipe, reader, question)
    assert hit.entry_id == entry.id and verdicts == ["confirmed"] and done.band == "answer"
    assert reader.asked  # judged, not marked confirmed unasked
    assert entry.origin == "user" and not entry.judged and pipe.qa.get(entry.id).judged
    hit, verdicts, done = served_with(pipe, reader, question)
    assert hit.entry_id == entry.id and verdicts == ["confirmed"] and done.band == "answer"
    assert not reader.asked  # judged once: served confirmed without a second judgment
    kept, _ = answer_with(tmp_path / "on", reader, question)  # kept with the reader on
    assert kept.qa.entries()[0].judged


def test_an_unjudged_answer_the_reader_finds_nothing_in_is_not_served_confirmed(tmp_path):
    question = "When does Henrik Dahl start?"
    pipe, _ = answer_with(tmp_path / "off", None, question)
    [entry] = pipe.qa.entries()
    reader = SetReader({}, default=-6.0)  # no line states it
    for _ in range(2):  # not judged until it confirms: asked again on the next serve
        hit, verdicts, done = served_with(pipe, reader, question)
        assert hit.entry_id == entry.id and verdicts == ["not found"] and reader.asked
        assert done.band == "none" and not pipe.qa.get(entry.id).judged


def test_an_unjudged_answer_the_reader_is_unsure_of_is_left_to_its_sentence(tmp_path):
    """Between the bars the sentence decides, as for a fresh answer: the hit's quote is judged
    as the line scorer found it, not as already confirmed (the stored answer's line promoted
    with the reader's mark, which an "unsure" verdict then kept: served "answer" unconfirmed)."""
    question = "When does Henrik Dahl start?"
    pipe, _ = answer_with(tmp_path / "off", None, question)
    [entry] = pipe.qa.entries()
    pipe.qa.set_answer(entry.id, "Henrik Dahl joins the Oslo team.", entry.sources,
                       entry.knowledge_version, entry.chunk_watermark, entry.evidence)  # fmt: skip
    hit, verdicts, done = served_with(pipe, SetReader({}, default=-1.0), question)
    assert hit.entry_id == entry.id and verdicts == ["unsure"]
    assert done.band == "weak" and not pipe.qa.get(entry.id).judged  # no date: not confirmed


def test_a_stop_ends_the_verdict_before_the_next_excerpt(tmp_path):
    """Esc during the reader's verdict (seconds at 1.5B, a quote and its candidates one by one)
    waited for every verdict: the asker's stop now ends it before the next excerpt's prompt,
    raising Stopped as the writer's prefill does. With the real SmolLM2 reading."""
    from assistant import events as p
    from assistant.answer.excerpts import Excerpt
    from assistant.config import Settings
    from assistant.llm import make_llm

    reader = Reader(
        make_llm(Settings().llm), Prompts.read(bundled("prompts")), BARS, tmp_path / "kv"
    )
    calls: list[int] = []

    def stop() -> bool:
        calls.append(1)
        return len(calls) > 1  # asked once the first excerpt is read

    excerpts = [Excerpt("Anna · 2026-02-20 · New hire", (f"Line {i}.",)) for i in range(3)]
    with pytest.raises(p.Stopped):
        reader.states("When does Henrik start?", excerpts, stop)
    assert len(calls) == 2
    assert len(reader.states("When does Henrik start?", excerpts[:1])) == 1  # usable after
