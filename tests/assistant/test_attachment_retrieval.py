"""Acceptance for attachment text (issue 35, item 2), with the real importer, encoder and
retrieval in a temporary home: mails whose answer stands only in an attached PDF, Word file,
invitation, sheet, CSV or text file are found for their questions among mails on the same topics
that do not hold the answer; and each hostile attachment in the same mailbox is one warning
naming its mail and file while every mail imports."""

from __future__ import annotations

import os
from datetime import datetime

import pytest

from assistant.importing.importer import Importer
from assistant.services import open_services
from tests import attachment_files as af
from tests.conftest import make_email, write_mbox

pytestmark = pytest.mark.slow

# (message id, subject, body, attached file, question): the answer stands only in the file; the
# subject and body say nothing of it
ANSWERED = [
    ("roof", "Scan", "See the attached file.", "quote-2026-114.pdf",
     "How much will the roof repair cost?"),
    ("lease", "As promised", "Here it is.", "lease-agreement.pdf",
     "What is the notice period for ending the apartment lease?"),
    ("flight", "Attached", "Sending this on.", "e-ticket.pdf",
     "Which seat do I have on the flight to Stockholm?"),
    ("warranty", "For your files", "Keep this one.", "receipt-dishwasher.pdf",
     "Until when is the dishwasher under warranty?"),
    ("trip", "Fwd: document", "Forwarding this.", "minutes-parents-evening.docx",
     "Where does the school trip of group 7 go?"),
    ("buns", "Here you go", "Typed it out for you.", "recipe.docx",
     "At what temperature do the cardamom buns bake?"),
    ("dentist", "FYI", "See attachment.", "invite.ics",
     "Where is the dentist appointment with Dr. Okafor?"),
    ("board", "Please accept", "Thanks!", "meeting.ics",
     "When is the quarterly board meeting?"),
    ("scaffold", "Updated", "New version attached.", "renovation-costs.xlsx",
     "Which supplier delivers the scaffolding?"),
    ("shifts", "Final version", "This is the final one.", "festival-shifts.csv",
     "Which festival shift does Jonas work?"),
    ("wifi", "Print this", "Could you print this?", "guest-wifi.txt",
     "What is the guest wifi password?"),
]  # fmt: skip

# Mails on the same topics, two a topic, whose own text does not hold the answer
DISTRACTORS = [
    ("Roof", "Did the roofer send his quote yet? The roof leaks again near the chimney."),
    ("Roof repair", "How much did your roof repair cost last year? Ours needs one too."),
    ("Lease", "The landlord wants to talk about the lease and the rent next month."),
    ("Moving out", "When does your apartment lease end? Notice must be given in writing."),
    ("Stockholm", "So excited about Stockholm in July! Which flight did you book?"),
    ("Seats", "Can we sit together on the flight? I will ask for a window seat."),
    ("Dishwasher", "The dishwasher makes a strange noise again, can you have a look?"),
    ("Warranty", "Is the washing machine still under warranty? It leaks water."),
    ("School trip", "Is the school trip still on? Group 7 parents meet on Tuesday."),
    ("Trip money", "The school trip costs 85 euro a child, to be paid before April."),
    ("Fika", "We should bake buns for the fika on Sunday, cardamom or cinnamon?"),
    ("Oven", "The oven temperature is off by twenty degrees, bake longer than it says."),
    ("Dentist", "The dentist called: Dr. Okafor is ill this week, they will reschedule."),
    ("Appointments", "Where do I make an appointment for the car check-up?"),
    ("Board", "The board meeting minutes of last quarter are on the shared drive."),
    ("Quarterly report", "When is the quarterly report due? The board wants it early."),
    ("Scaffolding", "The scaffolding goes up on Monday, park the car somewhere else."),
    ("Suppliers", "Which supplier delivers the roof tiles? They were late last time."),
    ("Festival", "Thanks to all festival volunteers! Shifts will follow."),
    ("Jonas", "Jonas works late on Saturday, so he will skip dinner."),
    ("Wifi", "The wifi in the attic is slow, maybe we need a repeater."),
    ("Password", "I changed the password of the shared calendar, ask me for it."),
]


def _at(day: int, hour: int, minute: int = 0) -> datetime:
    return datetime(2026, 4, day, hour, minute, tzinfo=af.AMSTERDAM)


def answering_files() -> dict[str, tuple[str, bytes]]:
    """File name → (content type, bytes), each written by its format's library."""
    roof = [
        "Dakwerken Jansen - Quote 2026-114",
        "Repair of the flat roof at Kerkstraat 12",
        "Replace bitumen roofing, 38 m2, and two gutters.",
        "Total price for the roof repair: EUR 12,400 including VAT.",
    ]
    lease = [
        ["Lease agreement - apartment Vondelstraat 88-II"],
        ["Article 7. Termination", "The tenant may end the lease with a notice period of "
         "three months, by registered letter."],
    ]  # fmt: skip
    ticket = [
        "KLM e-ticket, booking code QX7P2M",
        "Flight KL1113 Amsterdam - Stockholm Arlanda",
        "Departure 3 July 2026 07:05, seat 14C, one checked bag",
    ]
    receipt = [
        "Coolblue receipt - Bosch dishwasher SMV4HVX31E",
        "The dishwasher is under warranty until 3 March 2028.",
    ]
    minutes = [
        "Minutes of the parents' evening, group 7.",
        "The school trip of group 7 goes to the island of Texel, from 12 to 14 May.",
        "Parents who can drive: sign up with the teacher.",
    ]
    recipe = [
        "Grandma Britt's cardamom buns",
        "500 g flour, 75 g butter, 3 dl milk, 2 tsp ground cardamom.",
        "Bake the cardamom buns in the oven at 225 degrees for 8 minutes.",
    ]
    dentist = af.ics_bytes(
        "Dentist check-up with Dr. Okafor", _at(9, 14, 15), _at(9, 14, 45),
        location="Tandartspraktijk Centrum, Oudegracht 112, Utrecht",
    )  # fmt: skip
    board = af.ics_bytes(
        "Quarterly board meeting", _at(14, 10), _at(14, 11, 30), location="Room 4.12",
        organizer=("Anna Berg", "anna@example.nl"), attendees=[("Bram", "bram@example.nl")],
    )  # fmt: skip
    costs = [
        ["Item", "Supplier", "Cost"],
        ["Scaffolding", "Bouwmaat Zuid", 2300],
        ["Windows", "Kozijnhuis", 8900],
        ["Paint", "Gamma", 640],
    ]
    shifts = [
        ["volunteer", "festival shift", "post"],
        ["Jonas", "Saturday 07:00-11:00", "bar"],
        ["Elin", "Saturday 11:00-15:00", "entrance"],
        ["Priya", "Sunday 09:00-13:00", "tickets"],
    ]
    wifi = b"Guest wifi network: Lindqvist-Gast\nGuest wifi password: blue-heron-42\n"
    return {
        "quote-2026-114.pdf": (af.PDF, af.pdf_bytes([roof])),
        "lease-agreement.pdf": (af.PDF, af.pdf_bytes(lease)),
        "e-ticket.pdf": (af.PDF, af.pdf_bytes([ticket])),
        "receipt-dishwasher.pdf": (af.PDF, af.pdf_bytes([receipt])),
        "minutes-parents-evening.docx": (af.DOCX, af.docx_bytes(minutes)),
        "recipe.docx": (af.DOCX, af.docx_bytes(recipe)),
        "invite.ics": (af.ICS, dentist),
        "meeting.ics": (af.ICS, board),
        "renovation-costs.xlsx": (af.XLSX, af.xlsx_bytes({"Costs": costs})),
        "festival-shifts.csv": (af.CSV, af.csv_bytes(shifts)),
        "guest-wifi.txt": ("text/plain", wifi),
    }


def hostile_files() -> list[tuple[str, str, str, bytes, str]]:
    """(message id, file name, content type, bytes, what its one warning says)."""
    return [
        (
            "locked",
            "salary.pdf",
            af.PDF,
            af.encrypted_pdf([["Salary slip"]], "secret"),
            "encrypted",
        ),
        ("cut", "scan.pdf", af.PDF, af.pdf_bytes([["A scanned letter"]])[:300], "unreadable"),
        ("bomb", "report.docx", af.DOCX, af.zip_bomb_docx(120), "zip bomb"),
        ("binary", "dump.txt", "text/plain", os.urandom(50_000), "binary"),
        ("huge", "archive.pdf", af.PDF, os.urandom(26_000_000), "cap"),
    ]


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    root = tmp_path_factory.mktemp("attachments")
    files = answering_files()
    msgs = [
        make_email(subject=s, body=b, msgid=f"<{key}@att>", attachments=[(f, *files[f])])
        for key, s, b, f, _ in ANSWERED
    ]
    msgs += [make_email(subject=s, body=b) for s, b in DISTRACTORS]
    hostile = hostile_files()
    for key, name, ctype, data, _ in hostile:
        attached = [(name, ctype, data)]
        msgs.append(make_email(subject=key, body=f"The {key} file.", msgid=f"<{key}@att>",
                               attachments=attached))  # fmt: skip
    box = write_mbox(root / "box.mbox", msgs)
    ctx = open_services(root / "home")
    report = Importer(ctx.store, ctx.embedder).run([box])
    return ctx, report, len(msgs), hostile


def test_the_answering_attachment_is_retrieved_in_the_top_3(imported):
    ctx = imported[0]
    missed = []
    for key, *_, question in ANSWERED:
        top = [h.record.message_id for h in ctx.retriever.search(question, 3)]
        if f"{key}@att" not in top:
            missed.append((question, top))
    assert len(missed) <= len(ANSWERED) - 8, missed


def test_each_hostile_attachment_is_one_warning_and_every_mail_imports(imported):
    ctx, report, total, hostile = imported
    assert report.errors == [] and report.added == total
    assert len(report.warnings) == len(hostile)
    for key, name, _, _, reason in hostile:
        named = [w for w in report.warnings if repr(name) in w.reason]
        assert len(named) == 1 and reason in named[0].reason, (name, named)
        assert named[0].where.startswith("offset ")
        body = ctx.store.db.execute(
            "SELECT body FROM documents WHERE message_id = ?", [f"{key}@att"]
        ).fetchone()[0]
        assert body == f"The {key} file."
