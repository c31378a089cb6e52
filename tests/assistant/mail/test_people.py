"""People as the user names them (issue 48): the address book built from a mailbox's headers and
lines, who a name stands for, and what a question naming them filters or ranks."""

from __future__ import annotations

from datetime import date

import pytest

from assistant.cli.commands_mail import people_lines
from assistant.mail.address_book import MailRows, build
from assistant.mail.mentions import FROM, TO, WITH, mentions
from assistant.mail.questions import QuestionReader

OWNER = "jeff.skilling@enron.com"
SENDERS = [
    (OWNER, "Jeff Skilling", 40),
    ("elizabeth.tilney@enron.com", "Elizabeth Tilney", 5),
    ("etilney@hotmail.com", "Elizabeth Tilney", 2),  # the same person's webmail
    ("steve.kean@enron.com", "", 3),  # an address, no display name
    ("steven.kean@enron.com", "Steven J Kean", 4),  # his other address
    ("linda.gardner@enron.com", "Linda Gardner", 2),
    ("linda.hawkins@enron.com", "Linda Hawkins", 1),
    ("robert.jones@enron.com", "Robert Jones", 2),
    ("no.address@enron.com", "Enron Announcements", 6),  # a list's address under many names
    ("no.address@enron.com", "Office of the Chairman", 3),
    ("no.address@enron.com", "Jim Derrick", 1),
    ("boethia@hotmail.com", "", 4),  # opaque: signs its mail "Woody"
]
RECIPIENTS = [
    (OWNER, "Jeff Skilling", 60),
    ("dave.delainey@enron.com", "David W Delainey", 2),
    ("rlfossum@mato.com", "", 2),  # a couple's address, no display name
    ("debra.reed@enron.com", "Debra Reed", 1),
    ("sherri.sera@enron.com", "Sherri Sera", 1),
]
LINES = [
    (OWNER, "dave.delainey@enron.com", "Dave, please disregard my previous note", "Jeff"),
    (OWNER, "dave.delainey@enron.com", "Dave - do you have a date?", "Jeff"),
    ("boethia@hotmail.com", OWNER, "Brothers,", "Go Betas!\n\nWoody"),
    ("boethia@hotmail.com", OWNER, "All,", "see you there\nWoody"),
    ("steven.kean@enron.com", OWNER, "Jeff,", "Thanks,\nSteve"),
    (OWNER, "rlfossum@mato.com", "Reed and Lana, thanks again for a great stay", "DF"),
    (OWNER, "sherri.sera@enron.com", "Hi Sher, can you move my 3:00?", "Jeff"),
]


@pytest.fixture(scope="module")
def book():
    return build(MailRows(SENDERS, RECIPIENTS, LINES))


def names(resolved) -> list[str]:
    return sorted(p.name or min(p.addresses) for p in resolved.people)


def test_a_nickname_finds_the_full_name_on_every_address(book):
    liz = book.resolve("Liz")
    assert names(liz) == ["Elizabeth Tilney"] and "Liz goes by or stands for" in liz.matches[0].why
    assert liz.one.addresses == {"elizabeth.tilney@enron.com", "etilney@hotmail.com"}
    assert names(book.resolve("Rob")) == ["Robert Jones"]
    assert names(book.resolve("Bob Jones")) == ["Robert Jones"]


def test_one_person_has_several_addresses(book):
    steve = book.resolve("Steve Kean").one
    assert steve is not None
    assert steve.addresses == {"steve.kean@enron.com", "steven.kean@enron.com"}
    assert book.resolve("Steve").one is steve and book.resolve("Steven").one is steve
    assert book.resolve("Kean").one is steve


def test_an_address_only_sender_is_named_by_its_local_part(book):
    steve = book.resolve("Steve").one
    assert any("address steve.kean@enron.com (no display name)" in w for w in steve.why)
    woody = book.resolve("Woody").one  # an opaque address: the name it signs with
    assert woody is not None and woody.addresses == {"boethia@hotmail.com"}
    assert "their mail is signed 'Woody' on 2 mails" in woody.why


def test_the_names_the_owners_mail_greets_people_by(book):
    dave = book.resolve("Dave")
    assert names(dave) == ["David W Delainey"]
    assert dave.matches[0].why == "your mail greets them 'Dave' on 2 mails"


def test_a_greeting_of_two_names_and_a_capitalised_salutation(book):
    couple = book.resolve("Lana").one  # "Reed and Lana, thanks …" to an address-only couple
    assert couple is not None and couple.addresses == {"rlfossum@mato.com"}
    reed = book.resolve("Reed")  # a first name the user greets with, before Debra Reed's last
    assert reed.one is couple and "greets them 'Reed'" in reed.matches[0].why
    sher = book.resolve("Sher").one  # "Hi Sher," (the salutation capitalised)
    assert sher is not None and sher.name == "Sherri Sera"


def test_a_first_name_of_several_people_is_ambiguous(book):
    linda = book.resolve("Linda")
    assert linda.one is None and names(linda) == ["Linda Gardner", "Linda Hawkins"]
    assert book.resolve("Linda Hawkins").one is not None


def test_a_shared_address_is_one_person_per_name_and_the_owner_is_no_one(book):
    assert book.resolve("Jim Derrick").one.name == "Jim Derrick"
    assert not book.resolve("Jim Derrick").one.personal
    assert book.resolve("Jeff").is_owner
    assert not book.resolve("Nobody Known").matches


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What did Linda and I agree about the budget?", [("Linda", WITH)]),
        ("Who invited Linda and me to the dinner?", [("Linda", WITH)]),
        ("What did Steve say about the board?", [("Steve", FROM)]),
        ("What was in Steve Kean's note?", [("Steve Kean", FROM)]),
        ("the mail from Liz about the offsite", [("Liz", FROM)]),
        ("What did Gresham Brebach want from me?", [("Gresham Brebach", WITH)]),
        ("What did I send David Oxley about the MS150?", [("David Oxley", TO)]),
        (
            "What did Sherri tell Thames Fulton about it?",
            [("Sherri", FROM), ("Thames Fulton", TO)],
        ),
        ("What was Mark Golden from Dow Jones asking?", [("Mark Golden", FROM)]),
        ("What was in Åsa Sjöberg's note?", [("Åsa Sjöberg", FROM)]),
        ("What did Tomás send Élodie?", [("Tomás", FROM), ("Élodie", TO)]),
        ("When is the offsite with Rob in Houston?", [("Rob", WITH), ("Houston", WITH)]),
    ],
)
def test_a_person_named_is_a_participant_unless_the_words_say_sender(question, expected):
    assert [(m.name, m.role) for m in mentions(question)] == expected


def reader(book, counts=None) -> QuestionReader:
    """A reader whose filters leave `counts[field]` mails (1 unless given)."""
    counts = counts or {}

    def count(filters) -> int:
        conditions = getattr(filters, "conditions", None) or (filters,)
        return min(counts.get(c.field, 1) for c in conditions)

    return QuestionReader(book, count, date(2001, 11, 20))


def test_one_person_filters_several_rank_and_say_so(book):
    filters = reader(book).read("What did Liz send about the offsite?")
    assert filters.narrows() and filters.describe().startswith("from: Elizabeth Tilney <")
    linda = reader(book).read("What did Linda and I agree about the budget?")
    assert not linda.narrows()
    assert linda.describe() == (
        "with: Linda (2 people: Linda Gardner, Linda Hawkins: ranks, does not filter)"
    )
    assert linda.preferred()  # their mail ranks first


def test_a_participant_filter_takes_every_role_and_the_text(book):
    clause, params = reader(book).read("the plan Rob and I made").sql()
    assert "d.sender = ?" in clause and "d.recipients" in clause and "d.body" in clause
    assert "%robert.jones@enron.com%" in params and "%robert jones%" in params


def test_a_date_no_mail_has_ranks_instead(book):
    empty_week = reader(book, {"date": 0}).read("What did I get this week about the fund?")
    assert not empty_week.narrows()
    assert empty_week.describe().endswith("(no mail then: ranks, does not filter)")


def test_filters_that_leave_nothing_together_give_way_date_first(book):
    def count(filters) -> int:
        return 0 if len(getattr(filters, "conditions", ())) > 1 else 1

    read = QuestionReader(book, count, date(2001, 11, 20))
    filters = read.read("What did Liz send last week about the offsite?")
    assert [c.field for c in filters.conditions] == ["from"]
    assert [c.field for c in filters.ranked] == ["date"]


def test_a_first_name_cut_short_is_the_same_person_under_one_last_name():
    """stan.horton@ (no display name) and Stanley Horton: one person, though the nickname list
    does not hold Stan; "Stan" then finds both addresses. Another last name, or two letters,
    joins nothing."""
    book = build(MailRows([
        ("stan.horton@enron.com", "", 1), ("stanley.horton@enron.com", "Stanley Horton", 3),
        ("stan.smith@enron.com", "", 1), ("ma.horton@enron.com", "", 1),
        ("mark.horton@enron.com", "Mark Horton", 2),
    ]))  # fmt: skip
    stan = sorted(sorted(p.addresses) for p in book.resolve("Stan").people)
    assert ["stan.horton@enron.com", "stanley.horton@enron.com"] in stan
    horton = [p for p in book.people if "stanley.horton@enron.com" in p.addresses]
    assert sorted(horton[0].addresses) == ["stan.horton@enron.com", "stanley.horton@enron.com"]
    ma = [p for p in book.people if "ma.horton@enron.com" in p.addresses]
    assert sorted(ma[0].addresses) == ["ma.horton@enron.com"]


def test_people_says_why_once(book):
    lines = people_lines(book.resolve("Sher"))  # the greeting is both the match and a name
    assert sum("greets them 'Sher'" in line for line in lines) == 1
    assert any(line.strip().startswith("because: your mail greets them 'Sher'") for line in lines)


def test_a_name_with_accents_is_found_with_them_or_without():
    """Tomás Ferreira, Åsa Sjöberg: found as written and as typed without accents (words of
    any letters, accents folded on both sides), shown as the mail writes them; a question or
    a from: term naming them filters to their mail."""
    book = build(MailRows(
        [(OWNER, "Jeff Skilling", 40), ("t.ferreira@fernwoodlabs.nl", "Tomás Ferreira", 11),
         ("asa@fernwoodlabs.nl", "Åsa Sjöberg", 2), ("tom.smith@enron.com", "Tom Smith", 1)],
        [(OWNER, "Jeff Skilling", 50)],
        [(OWNER, "asa@fernwoodlabs.nl", "Åsa, the leave plan is fine", "Jeff")],
    ))  # fmt: skip
    tomas = book.resolve("Tomás").one
    assert tomas is not None and tomas.name == "Tomás Ferreira"
    for asked in ("Tomas", "tomas", "Ferreira", "Tomás Ferreira", "Tomas Ferreira"):
        assert book.resolve(asked).one is tomas, asked
    assert book.resolve("Tomás").matches[0].why == "first name Tomás"
    assert "display name 'Tomás Ferreira' on 11 mails: Tomás Ferreira" in tomas.why
    asa = book.resolve("Åsa").one
    assert asa is not None and asa.name == "Åsa Sjöberg"
    for asked in ("Asa", "Sjöberg", "Sjoberg", "Åsa Sjöberg", "Asa Sjoberg"):
        assert book.resolve(asked).one is asa, asked
    assert "asa" in asa.called  # "Åsa, …": a name in passing ("when is Åsa …") finds her
    assert reader(book).read("When is Åsa on leave?").describe().startswith("with: Åsa Sjöberg")
    for question in ("What did Tomás send about the budget?", "What did Tomas send?"):
        assert reader(book).read(question).describe().startswith("from: Tomás Ferreira <")
    assert reader(book).read("What was in Asa's note?").describe().startswith("from: Åsa Sjöberg")
    assert [s.name for s in book.containing("tomas")] == ["Tomás Ferreira"]


def test_an_address_sending_as_two_different_people_joins_neither_to_the_other():
    """notifications@github.com sends as Daan Verhoeven and as Priya Nair: two names, fewer than
    SHARED_NAMES, but no one person's (another first and last name), so a shared address:
    Priya is not Daan; each name's mail from it is its person's, the address no one's. An
    address whose local part names one of the two stays theirs (vmcarthur@ sends as Vicki
    McArthur and as her boss; the owner's as the owner and as their assistant), and the names
    of one person on one address (Jeff Skilling, Jeffrey K Skilling, Skilling, Jeff: as many as
    SHARED_NAMES) stay one person's."""
    github, vicki = "notifications@github.com", "vmcarthur@plains.com"
    book = build(MailRows([
        (OWNER, "Jeff Skilling", 40), (OWNER, "Sherri Sera", 1),
        ("jeff@skilling.org", "Jeff Skilling", 1), ("jeff@skilling.org", "Jeffrey K Skilling", 3),
        ("jeff@skilling.org", "Skilling, Jeff", 2),
        ("daan@fernwoodlabs.nl", "Daan Verhoeven", 7), ("priya@fernwoodlabs.nl", "Priya Nair", 2),
        (github, "Daan Verhoeven", 2), (github, "Priya Nair", 1),
        (vicki, "Vicki McArthur", 2), (vicki, "Mark Duffey", 1), ("mark.duffey@x.com", "", 4),
    ], [(OWNER, "Jeff Skilling", 50), (github, "", 1), (vicki, "", 3)]))  # fmt: skip
    priya, daan = book.resolve("Priya").one, book.resolve("Daan").one
    assert priya is not None and priya.name == "Priya Nair"
    assert priya.addresses == {"priya@fernwoodlabs.nl"}
    assert daan.addresses == {"daan@fernwoodlabs.nl"}
    assert (github, "Priya Nair") in priya.froms and priya.sent == 3
    assert f"sends as 'Priya Nair' from {github} too, an address not theirs alone" in priya.why
    assert book.resolve("Priya Nair").one is priya and book.resolve("Daan Verhoeven").one is daan
    clause, params = reader(book).read("What did Priya send about the RC2 soak?").sql()
    assert "Daan Verhoeven" not in params and f"%{github}%" not in params
    mcarthur, duffey = book.resolve("Vicki").one, book.resolve("Mark Duffey").one
    assert mcarthur.addresses == {vicki} and mcarthur.received == 3 and mcarthur.personal
    assert duffey.addresses == {"mark.duffey@x.com"} and (vicki, "Mark Duffey") in duffey.froms
    jeff = book.resolve("Jeffrey Skilling")
    assert jeff.is_owner and jeff.one.addresses == {OWNER, "jeff@skilling.org"}
    assert not book.resolve("Sherri Sera").is_owner


def test_a_last_name_with_its_particle_is_the_person_of_that_last_name():
    """'de Vries', 'van der Berg': the user names a Dutch (German, Italian ...) surname with its
    particle, and 'people de Vries' found no one, so a question naming 'De Vries' only ranked.
    The particle is no first name; another 'Vries' by display name comes second."""
    book = build(MailRows(
        [(OWNER, "Jeff Skilling", 40), ("bram@devriesrenovatie.nl", "Bram de Vries", 12),
         ("piet@berg.nl", "Pieter van der Berg", 3), ("dev@enron.com", "Dev Patel", 2)],
        [(OWNER, "Jeff Skilling", 50)],
    ))  # fmt: skip
    for asked in ("de Vries", "De Vries", "Bram de Vries"):
        one = book.resolve(asked).one
        assert one is not None and one.name == "Bram de Vries", asked
    assert book.resolve("de Vries").matches[0].why == "last name De Vries"
    for asked in ("van der Berg", "Van der Berg", "Pieter van der Berg"):
        one = book.resolve(asked).one
        assert one is not None and one.name == "Pieter van der Berg", asked
    # in a question, the particle joins the name's words ("Bram", "Vries" apart found no one)
    said = {
        "What did De Vries quote for the kitchen?": "with: Bram de Vries <",
        "What did Bram de Vries send?": "from: Bram de Vries <",
        "What did Pieter van der Berg say about the roof?": "from: Pieter van der Berg <",
    }
    for question, described in said.items():
        assert reader(book).read(question).describe().startswith(described), question
