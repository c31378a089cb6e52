"""The night's coverage plan (assistant/precompute/coverage.py): recent mail, live threads, the
people the owner writes to and asked questions first, with a floor of exploration."""

from __future__ import annotations

from dataclasses import replace

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


def test_a_mail_dated_in_the_future_does_not_become_today():
    """A spam or a device with a wrong clock dated 2099: it was 'today', so the last six weeks
    held it alone; it counts as no sending day now (a mailbox read years later still plans
    around its own newest mail)."""
    box = _box() + [_mail(6, "2099-01-01T09:00:00+00:00", "You have won", "spam@lottery.biz")]
    plan = coverage.plan(box, _chunks(box), {})
    assert plan.recent_chunks >= {100, 101, 200, 201, 300, 301, 500, 501}
    assert coverage.today_of(coverage.mails_of(box)).year == 2001


def test_a_floor_of_exploration_draws_from_what_the_ranking_leaves_last():
    plan = coverage.plan(_box(), _chunks(_box()), {})
    assert sorted(plan.chunks) == sorted(c for ids in _chunks(_box()).values() for c in ids)
    ranked = sorted(plan.chunks, reverse=True)
    tail = set(ranked[len(ranked) // 2 :])
    assert list(coverage.order(ranked, explore=0.0)) == ranked
    assert sum(c in tail for c in list(coverage.order(ranked))[:10]) >= 1
    assert not set(list(coverage.order(ranked, unexplored=tail))[:10]) & tail


LETTER = (
    "I am writing to ask you to support the petition to unfreeze the employees' retirement "
    "accounts and to speak openly about the partnerships before the hearing next week. "
    "Families like mine trusted the leadership of this company; please stand with them."
)


def _flood_box(n: int = 60) -> tuple[list[MailHeaders], dict[int, list[int]], dict[int, str]]:
    """Five mails of the owner's correspondence over four weeks, a campaign of `n` letters from
    `n` senders in the newest days, a list mail and a no-reply mail of the newest day."""
    mails = [
        _mail(1, "2001-10-25T09:00:00+00:00", "Board deck", ME, "sherri@enron.com"),
        _mail(2, "2001-11-02T09:00:00+00:00", "Re: Board deck", "sherri@enron.com"),
        _mail(3, "2001-11-08T09:00:00+00:00", "Lunch", "cliff@enron.com"),
        _mail(4, "2001-11-12T09:00:00+00:00", "Re: Lunch", ME, "cliff@enron.com"),
        _mail(5, "2001-11-15T09:00:00+00:00", "Foundation meeting", "bpaddock@ghcf.org"),
        _mail(6, "2001-11-20T09:00:00+00:00", "This week", "news@list.example.org"),
        _mail(7, "2001-11-20T09:00:00+00:00", "Your statement", "no-reply@bank.example"),
    ]
    mails[5] = replace(mails[5], bulk="list")
    texts = {100 * m.doc_id: f"From: x | Date: y | Subject: {m.subject}\nText {m.doc_id} " * 12
             for m in mails}  # fmt: skip
    for i in range(n):
        doc = 10 + i
        mails.append(_mail(doc, f"2001-11-{14 + i % 6}T10:00:00+00:00", "Protect savings",
                           f"sender{i}@aol.com"))  # fmt: skip
        texts[100 * doc] = f"From: S {i} | Date: 2001-11-19 | Subject: Protect savings\n" + (
            f"Dear Mr. Skilling, {LETTER} Sincerely, Sender {i} of Town {i % 7}"
        )
    return mails, {m.doc_id: [100 * m.doc_id] for m in mails}, texts


def _texts(texts: dict[int, str]):
    return lambda docs: {100 * d: texts[100 * d] for d in docs}


def test_a_campaign_is_planned_once_after_the_correspondence_and_bulk_mail():
    mails, chunks, texts = _flood_box()
    before = coverage.plan(mails, chunks, {})  # without the texts: no campaign found
    assert sum(c >= 1000 for c in before.chunks[:5]) >= 4
    plan = coverage.plan(mails, chunks, {}, texts=_texts(texts))
    assert plan.chunks[:5] == [400, 500, 300, 200, 100]  # the correspondence
    assert set(plan.chunks[5:7]) == {600, 700}  # list and no-reply mail of the newest day
    assert plan.chunks[7] == 1000  # the campaign's first letter, in its place, once
    assert set(plan.chunks[8:]) == {100 * (10 + i) for i in range(1, 60)}  # copies, last
    assert (plan.copies, plan.bulk_chunks) == (59, 3)
    said = coverage.statement(plan, {400, 500})
    assert said == (
        "covered: 3% of the last 6 weeks (2 of 67 chunks); "
        "planned last: 3 chunks of bulk mail, 59 copies"
    )


def test_a_reworded_letter_in_a_campaign_thread_is_mass_mail_too():
    mails, chunks, texts = _flood_box()
    texts[1500] = "From: S 5 | Date: 2001-11-19 | Subject: Protect savings\nMy own words " * 9
    plan = coverage.plan(mails, chunks, {}, texts=_texts(texts))
    assert plan.chunks.index(1500) > plan.chunks.index(100)  # after the correspondence


def test_a_reply_that_adds_a_line_is_no_copy_but_a_resent_mail_is():
    mails, chunks, texts = _flood_box(n=0)
    mails += [
        _mail(8, "2001-11-16T09:00:00+00:00", "Re: Foundation meeting", "cliff@enron.com"),
        _mail(9, "2001-11-17T09:00:00+00:00", "Foundation meeting", "bpaddock@ghcf.org"),
    ]
    chunks |= {8: [800], 9: [900]}
    meeting = "The investment committee meets on Wednesday at 7:30 in Paul's office. " * 4
    texts[500] = f"From: B | Date: 2001-11-15 | Subject: Foundation meeting\n{meeting}"
    texts[800] = f"From: C | Date: 2001-11-16 | Subject: Re: Foundation meeting\nI will be " \
                 f"there, and I will bring the minutes of the last one.\n{meeting}"  # fmt: skip
    texts[900] = texts[500].replace("2001-11-15", "2001-11-17")
    plan = coverage.plan(mails, chunks, {}, texts=_texts(texts))
    assert plan.copies == 1 and plan.chunks[-1] == 900  # the resend, planned last
    assert plan.chunks[:3] == [800, 400, 500]  # the reply from a contact, its parent in the
    # resend's place (the newer of the two)


def test_a_thread_lifts_its_mail_only_where_the_owner_took_part():
    mails = [_mail(1, "2001-11-20T09:00:00+00:00", "Note", "w@y.com")]
    mails += [_mail(10 + i, "2001-11-20T08:00:00+00:00", "Chatter", f"p{i}@list.org")
              for i in range(6)]  # fmt: skip
    mails += [_mail(2, "2001-11-19T08:00:00+00:00", "Plan", ME, "x@y.com"),
              _mail(3, "2001-11-20T07:00:00+00:00", "Re: Plan", "z@y.com")]  # fmt: skip
    plan = coverage.plan(mails, _chunks(mails), {})
    assert plan.chunks[:4] == [200, 201, 300, 301]  # the owner's thread
    assert plan.chunks[4:6] == [100, 101]  # six strangers' chatter gets no thread lift


def test_the_plans_summary_is_read_from_its_file_until_the_mail_changes(tmp_path):
    """`stats` planned over every mail in each process (7.5 s on a 100k-mail home): the
    summary it says is kept, read back the same, and planned again for another chunks version,
    another day, or a file that cannot be read."""
    from assistant.precompute.plan_file import load_or_plan

    mails, chunks, texts = _flood_box()
    calls: list[int] = []

    def planned():
        calls.append(1)
        return coverage.plan(mails, chunks, {}, texts=_texts(texts))

    first = load_or_plan(tmp_path, "bank", 7, "2001-11-20", planned)
    again = load_or_plan(tmp_path, "bank", 7, "2001-11-20", planned)
    assert len(calls) == 1
    assert coverage.statement(again, {400, 500}) == coverage.statement(first, {400, 500})
    load_or_plan(tmp_path, "bank", 8, "2001-11-20", planned)  # mail imported
    load_or_plan(tmp_path, "bank", 8, "2001-11-21", planned)  # the next day
    assert len(calls) == 3 and len(list(tmp_path.glob("plan-bank-*.json"))) == 1
    next(tmp_path.glob("plan-bank-*.json")).write_text("{", encoding="utf-8")
    load_or_plan(tmp_path, "bank", 8, "2001-11-21", planned)
    assert len(calls) == 4
