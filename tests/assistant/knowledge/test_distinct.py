"""Near-duplicate chunks take one prompt slot; the next distinct chunk takes the freed one."""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest

from assistant.answer.answerer import Answerer
from assistant.config import Settings
from assistant.importing.importer import Importer
from assistant.knowledge.distinct import COSINE_BOUNDS, SPARE, distinct, distinct_hits, shape
from assistant.knowledge.retrieval import DenseIndex, Hit, Retriever
from assistant.knowledge.store import ChunkRecord
from tests.assistant.wiring import answerer_over
from tests.conftest import make_email, write_mbox

KITCHEN = (
    "Thank you, great! The planning is confirmed: we start on Monday 15 June at 08:00. The team "
    "is me, Youssef (carpentry and tiling) and Gert (plumbing and gas). Please empty the kitchen "
    "cupboards before the weekend of 13 June."
)
NEW_LINE = "One more thing: Gert shuts off the water at the main tap at 07:45 on 15 June."


def header(sender: str, subject: str, date: str = "2026-04-03") -> str:
    return f"From: {sender} | Date: {date} | Subject: {subject}"


def hit(chunk_id: int, text: str) -> Hit:
    record = ChunkRecord(chunk_id, text, "email", "", "", "", f"m{chunk_id}", "", "", 0, 0, "")
    return Hit(chunk_id, 1.0 / chunk_id, chunk_id, chunk_id, record)


def mail(chunk_id: int, body: str, subject: str = "Kitchen", sender: str = "Bram") -> Hit:
    return hit(chunk_id, f"{header(sender, subject)}\n{body}")


OTHERS = [
    mail(10, "The tiles are Mosa Warm Grey, 15 by 15 cm, five boxes ordered for the backsplash."),
    mail(11, "The lead water pipe behind the old sink has to go; replacing it costs EUR 560."),
    mail(12, "Youssef comes back on 22 July at 10:00 to fix the snags at the cupboard doors."),
]


def ids(hits: list[Hit]) -> list[int]:
    return [h.chunk_id for h in hits]


def test_duplicates_take_one_slot_and_the_next_distinct_chunk_takes_the_freed_one():
    original = mail(1, KITCHEN)
    resent = hit(2, f"{header('Bram', 'Kitchen', '2026-04-04')}\n{KITCHEN}")
    hits = [original, resent, *OTHERS]
    assert ids(hits[:3]) == [1, 2, 10]  # what the prompt got before: one text twice
    assert ids(distinct(hits, 3)) == [1, 10, 11]


def test_of_two_copies_the_one_imported_first_takes_the_better_ranked_slot():
    """Which copy ranks higher hangs on header noise: the stable choice (the lowest chunk id,
    the original) gives every question the same chunk, whose KV the tree holds."""
    resent = hit(5, f"{header('Bram', 'Kitchen', '2026-04-04')}\n{KITCHEN}")
    original = mail(2, KITCHEN)
    assert ids(distinct([resent, OTHERS[0], original, OTHERS[1]], 3)) == [2, 10, 11]


def test_whitespace_case_and_quote_markers_do_not_make_a_text_distinct():
    quoted = "\n".join("> " + line for line in re.findall(r".{1,60}(?:\s|$)", KITCHEN.upper()))
    assert shape(mail(1, KITCHEN).record.text).words == shape(mail(2, quoted).record.text).words
    assert ids(distinct([mail(1, KITCHEN), mail(2, quoted), *OTHERS], 3)) == [1, 10, 11]


def test_a_reply_with_a_new_line_above_its_quoted_parent_takes_the_parents_slot():
    """The rule pinned: parent and reply share one slot, held by the reply (the superset), so
    the new line is in the prompt whichever of the two ranked better."""
    parent = mail(1, KITCHEN)
    outlook = "From: Bram de Vries\nSent: Friday, 3 April 2026 08:05\nSubject: RE: Kitchen\n\n"
    reply = mail(2, f"{NEW_LINE}\n\n{outlook}{KITCHEN}", subject="RE: Kitchen")
    for hits in ([parent, reply, *OTHERS], [reply, parent, *OTHERS]):
        chosen = distinct(hits, 3)
        assert ids(chosen) == [2, 10, 11]
        assert NEW_LINE in chosen[0].record.text


def test_a_chunk_contained_in_a_better_ranked_one_is_dropped():
    whole = mail(1, f"{KITCHEN} The container stands on the street from 15 to 19 June.")
    part = mail(2, KITCHEN, subject="RE: Kitchen")
    assert ids(distinct([whole, part, *OTHERS], 3)) == [1, 10, 11]


def test_two_replies_of_one_thread_that_add_different_facts_are_kept_apart():
    first = mail(1, "We start on Monday 15 June at 08:00 with the demolition of the old kitchen.")
    second = mail(
        2, "We start on Monday 15 June at 08:00, and the tiles arrive on Wednesday 17 June."
    )
    assert ids(distinct([first, second, *OTHERS], 3)) == [1, 2, 10]


def test_the_same_boilerplate_under_different_subjects_is_kept_apart():
    tail = (
        "Invitation from Fernwood Calendar. You are receiving this email because you are a guest."
    )
    offsite = mail(1, tail, subject="Invitation: offsite Utrecht @ Thu 17 Sep 2026 09:30")
    okr = mail(2, f"Q2 OKR review in room Kas, lunch at 12:30.\n\n{tail}", subject="Q2 OKR review")
    assert ids(distinct([offsite, okr, *OTHERS], 3)) == [1, 2, 10]


def test_short_bodies_compare_with_their_header():
    thanks = [mail(1, "Thanks, see you then!"), mail(2, "Thanks, see you then!", sender="Elin")]
    assert ids(distinct([*thanks, *OTHERS], 3)) == [1, 2, 10]
    assert ids(distinct([thanks[0], thanks[0], *OTHERS], 3)) == [1, 10, 11]


def test_the_cosine_bound_merges_what_the_text_rules_miss():
    a, b = mail(1, KITCHEN), mail(2, "Demolition starts 15 June, 08:00; Youssef and Gert join.")
    vectors = {1: np.array([1.0, 0.0]), 2: np.array([0.96, 0.28]), 10: np.array([0.0, 1.0])}
    assert ids(distinct([a, b, *OTHERS], 3, vectors, 0.95)) == [1, 10, 11]
    assert ids(distinct([a, b, *OTHERS], 3, vectors, 0.97)) == [1, 2, 10]
    assert ids(distinct([a, b, *OTHERS], 3, {}, 0.95)) == [1, 2, 10]  # no vectors: text only


def test_the_dense_index_gives_the_vectors_it_has():
    index = DenseIndex(np.array([3, 5, 9]), np.eye(3, dtype=np.float32))
    got = index.vectors([9, 4, 3])
    assert sorted(got) == [3, 9] and got[9].tolist() == [0.0, 0.0, 1.0]
    assert DenseIndex(np.zeros(0, np.int64), np.zeros((0, 0), np.float32)).vectors([1]) == {}


def list_copy(msg, tag: str = "[Bewoners] "):
    """The copy a mailing list delivers: same Message-ID and body, other headers and subject."""
    copy = make_email(subject=tag + msg["Subject"], body=msg.get_content(), msgid=msg["Message-ID"])
    copy["X-Folder"] = "Lists/Bewoners"
    copy["List-ID"] = "Bewoners <bewoners.example.nl>"
    return copy


FACTS = [
    ("Roof work", "Scaffolding goes up on Monday 8 June and stays until Friday 17 July."),
    ("Solar panels", "The 18 solar panels are installed in the week of 13 July."),
    ("Power cut", "The electricity is off on Wednesday 15 July from 09:00 to 13:00."),
    ("Bicycles", "Twelve extra bicycle racks come in the courtyard for EUR 2,300."),
]


QUESTION = "Roof work: when does the scaffolding go up?"


def import_mails(store, embedder, tmp_path, with_copy: bool = True) -> None:
    msgs = [make_email(subject=s, body=b, msgid=f"<f{i}@x>") for i, (s, b) in enumerate(FACTS)]
    box = write_mbox(tmp_path / "box.mbox", msgs + ([list_copy(msgs[0])] if with_copy else []))
    report = Importer(store, embedder).run([box])
    assert report.errors == []


def test_a_folder_copy_with_other_headers_takes_one_slot(store, fake_embedder, tmp_path):
    import_mails(store, fake_embedder, tmp_path)
    assert store.stats()["emails"] == 5  # the list's subject tag: stored twice
    retriever = Retriever(store, fake_embedder, None)
    hits = retriever.search(QUESTION, k=8)
    assert [h.record.message_id for h in hits[:3]].count("f0@x") == 2  # two of three slots
    chosen = [h.record.message_id for h in distinct_hits(hits, 3, retriever)]
    assert len(chosen) == 3 and chosen[0] == "f0@x" and len(set(chosen)) == 3


class NoModel:
    """Stands in for the LLM: choosing the prompt's chunks never reaches the model."""

    chat_template = ""
    fingerprint = "no-model"


def build_pipeline(store, embedder, tmp_path, reranker=None) -> Answerer:
    settings = Settings()
    settings.answer.context_chunks = 3
    return answerer_over(store, embedder, NoModel(), tmp_path / "kv", settings, reranker=reranker)


def test_pipeline_retrieve_returns_distinct_chunks(store, fake_embedder, tmp_path):
    import_mails(store, fake_embedder, tmp_path)
    pipe = build_pipeline(store, fake_embedder, tmp_path)
    chosen = pipe.select(QUESTION, fake_embedder.embed_batch([QUESTION])[0])
    message_ids = [h.record.message_id for h in chosen]
    assert len(message_ids) == 3 and message_ids[0] == "f0@x" and len(set(message_ids)) == 3


class ReversingReranker:
    """Orders the candidates it is given backwards, and remembers them."""

    active, candidates = True, 4

    def __init__(self) -> None:
        self.given: list[Hit] = []

    def rerank(self, question, hits, k, check=None) -> list[Hit]:
        self.given = list(hits)
        return list(reversed(hits))[:k]


def test_the_reranker_orders_distinct_candidates(store, fake_embedder, tmp_path):
    import_mails(store, fake_embedder, tmp_path)
    reranker = ReversingReranker()
    pipe = build_pipeline(store, fake_embedder, tmp_path, reranker)
    chosen = pipe.select(QUESTION, fake_embedder.embed_batch([QUESTION])[0])
    given = [h.record.message_id for h in reranker.given]
    assert sorted(given) == ["f0@x", "f1@x", "f2@x", "f3@x"]  # 4 candidates, the copy merged
    assert len(chosen) == 3 and len({h.record.message_id for h in chosen}) == 3


def thread_of(title: str) -> str:
    return re.sub(r"^((re|fwd|fw|sv|aw)\s*:\s*|\[[^\]]*\]\s*)+", "", title, flags=re.I).lower()


@pytest.mark.slow
def test_the_cosine_bound_keeps_distinct_mails_of_one_thread_apart(demo_context):
    """Every pair of chunks from two different mails of one demo thread that the text rules do
    not call duplicates stays below the bound: the cosine rule merges none of them."""
    ctx = demo_context
    bound = COSINE_BOUNDS[ctx.embedder.name]
    records = ctx.store.chunk_records(ctx.store.chunk_texts()[0].tolist())
    vectors = ctx.retriever.vectors([r.chunk_id for r in records])
    mails = [r for r in records if r.kind == "email"]
    pairs = [
        (a, b)
        for a, b in itertools.combinations(mails, 2)
        if a.message_id != b.message_id and thread_of(a.title) == thread_of(b.title)
    ]
    assert len(pairs) > 300
    apart = [(a, b) for a, b in pairs if len(distinct([as_hit(a), as_hit(b)], 2)) == 2]
    assert len(pairs) - len(apart) >= 4  # the demo's forward and quoting replies: merged
    highest = max(float(vectors[a.chunk_id] @ vectors[b.chunk_id]) for a, b in apart)
    assert highest < bound
    kept = [distinct([as_hit(a), as_hit(b)], 2, vectors, bound) for a, b in apart]
    assert all(len(k) == 2 for k in kept)


def as_hit(record: ChunkRecord) -> Hit:
    return Hit(record.chunk_id, 0.0, None, None, record)


@pytest.mark.slow
def test_the_demo_list_copy_takes_one_slot(demo_context):
    retriever = demo_context.retriever
    hits = retriever.search("What are the stop criteria for the v3 rollout?", k=3 + SPARE)
    bodies = [h.record.text.split("\n", 1)[1] for h in hits]
    assert len(set(bodies[:3])) < 3  # the mail and its list copy: two of the three slots
    chosen = [h.record.text.split("\n", 1)[1] for h in distinct_hits(hits, 3, retriever)]
    assert len(chosen) == 3 and len(set(chosen)) == 3
