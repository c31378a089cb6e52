"""The night's coverage plan (assistant/precompute/coverage.py): recent mail, live threads, the
people the owner writes to and asked questions first, with a floor of exploration."""

from __future__ import annotations

from assistant.knowledge.thread_rows import MailHeaders
from assistant.precompute import coverage

ME = "jeff@enron.com"


def _mail(doc: int, date: str, subject: str, sender: str, to: str = ME) -> MailHeaders:
    return MailHeaders(doc, f"<{doc}@x>", "", (), subject, sender, to, "", date)


def _box() -> list[MailHeaders]:
    mails = [
        _mail(1, "2001-11-01T09:00:00+00:00", "Board deck", ME, "sherri@enron.com"),
        _mail(2, "2001-11-20T09:00:00+00:00", "Weekly newsletter", "news@list.com"),
        _mail(3, "2001-11-20T09:00:00+00:00", "Re: Board deck", "sherri@enron.com"),
        _mail(4, "2001-06-01T09:00:00+00:00", "Old memo", "someone@enron.com"),
        _mail(5, "2001-11-19T09:00:00+00:00", "Re: Board deck", ME, "sherri@enron.com"),
    ]
    return mails + [_mail(10 + i, "2000-01-01", f"Filler {i}", "x@y.com") for i in range(20)]


def _chunks(headers: list[MailHeaders]) -> dict[int, list[int]]:
    return {h.doc_id: [100 * h.doc_id, 100 * h.doc_id + 1] for h in headers}


def test_the_owner_is_the_address_on_most_mails():
    assert coverage.owner(coverage.mails_of(_box())) == ME


def test_a_live_thread_with_a_contact_comes_before_a_newsletter_of_the_same_day():
    plan = coverage.plan(_box(), _chunks(_box()), {})
    first = plan.chunks[:4]
    assert first[:2] == [300, 301]  # Re: Board deck from the person the owner writes to
    assert plan.chunks.index(200) > plan.chunks.index(300)
    assert plan.chunks.index(400) > plan.chunks.index(200)  # months old: after recent mail


def test_asked_questions_lift_an_old_mail():
    plan = coverage.plan(_box(), _chunks(_box()), {400: 3})
    assert plan.chunks[0] == 400


def test_the_last_six_weeks_count_from_the_newest_mail_or_a_pinned_today():
    plan = coverage.plan(_box(), _chunks(_box()), {})
    assert plan.recent_chunks == {100, 101, 200, 201, 300, 301, 500, 501}
    later = coverage.plan(_box(), _chunks(_box()), {}, pinned_today="2001-12-15")
    assert later.recent_chunks == {200, 201, 300, 301, 500, 501}  # 1 Nov is 44 days back
    assert coverage.covered(plan, {100, 300, 999}) == 2 / 8


def test_a_floor_of_exploration_draws_from_what_the_ranking_leaves_last():
    plan = coverage.plan(_box(), _chunks(_box()), {})
    assert sorted(plan.chunks) == sorted(c for ids in _chunks(_box()).values() for c in ids)
    ranked = list(coverage.order(_chunks(_box()), {1: 1.0}, explore=0.0))
    tail = set(ranked[len(ranked) // 2 :])
    assert sum(c in tail for c in plan.chunks[:10]) >= 1
