"""Step 2 of the answer path: filters read from the question narrow the prompt's mail and are
shown first; filters read from the words never leave no mail (what would ranks instead); typed
terms no mail meets are said so instead of answered from the whole mailbox."""

from __future__ import annotations

import pytest

from assistant import events as p
from assistant.answer.answerer import NO_CACHE
from assistant.config import Settings
from assistant.llm import make_llm
from tests.assistant.wiring import answerer_over

pytestmark = pytest.mark.slow


@pytest.fixture
def answerer(mailbox, tmp_path, fake_embedder):
    store, retriever, reader = mailbox
    settings = Settings()
    settings.answer.context_chunks = 2
    settings.answer.max_tokens = 16
    system = "Answer from the context in one sentence.\n\nContext:\n"
    return answerer_over(store, fake_embedder, make_llm(settings.llm), tmp_path / "kv", settings,
                         system, threshold=0.99, retriever=retriever, reader=reader)  # fmt: skip


def test_the_filters_are_shown_and_only_their_mail_is_used(answerer):
    events = list(answerer.answer("what did Sherri send last week about the board?", NO_CACHE))
    read = next(e for e in events if isinstance(e, p.FiltersRead))
    assert read.shown == "from: Sherri Sera <sherri.sera@enron.com> · date: 2001-11-12..2001-11-18"
    assert read.matched == 1 and read.filters["from"]
    retrieved = next(e for e in events if isinstance(e, p.ChunksRetrieved))
    assert {h.record.title for h in retrieved.hits} == {"Board meeting agenda"}
    assert all(s["title"] == "Board meeting agenda" for s in events[-1].sources)


def test_filters_from_words_that_would_leave_nothing_rank_instead(answerer):
    events = list(answerer.answer("what did Vince send yesterday about the board?", NO_CACHE))
    read = next(e for e in events if isinstance(e, p.FiltersRead))
    assert read.shown == (
        "from: Vince Kaminski <vince.kaminski@enron.com> · date: 2001-11-19 "
        "(no mail with the other filters: ranks, does not filter)"
    )
    assert read.matched == 1
    retrieved = next(e for e in events if isinstance(e, p.ChunksRetrieved))
    assert retrieved.hits[0].record.title == "Dabhol power"


def test_typed_terms_no_mail_meets_answer_nothing_from_other_mail(answerer):
    events = list(answerer.answer("from:vince date:yesterday board", NO_CACHE))
    read = next(e for e in events if isinstance(e, p.FiltersRead))
    assert read.matched == 0
    assert not any(isinstance(e, p.TokenStreamed | p.ChunksRetrieved) for e in events)
    done = events[-1]
    assert isinstance(done, p.AnswerDone) and done.not_found and done.sources == []


def test_the_retriever_ranks_without_the_name_a_filter_stands_for(answerer, monkeypatch):
    """The name is the filter's; the answer (its quote, the reader, the writer) reads it whole."""
    asked: dict[str, list[str]] = {"candidates": [], "quote": []}
    candidates, find = answerer.select.candidates, answerer.lines.find

    def spy_candidates(question, vector, **kw):
        asked["candidates"].append(question)
        return candidates(question, vector, **kw)

    def spy_find(question, vector, records):
        asked["quote"].append(question)
        return find(question, vector, records)

    monkeypatch.setattr(answerer.select, "candidates", spy_candidates)
    monkeypatch.setattr(answerer.lines, "find", spy_find)
    question = "what did Sherri send last week about the board?"
    events = list(answerer.answer(question, NO_CACHE))
    read = next(e for e in events if isinstance(e, p.FiltersRead))
    assert read.text == "what did send last week about the board?"
    assert asked == {"candidates": [read.text], "quote": [question]}
