"""Quoted-printable that no header declared (issue 48): a body evidently so is decoded and counted
in the import report; text that merely holds '=' is left as it is. The dev mailbox, real mail
with many '=' signs, keeps no soft-break remains in any chunk."""

from __future__ import annotations

import gzip
import os
import quopri
import re

import pytest

from assistant.config import ChunkingSettings
from assistant.importing.importer import Importer
from assistant.ingest import emails
from assistant.ingest.chunking import chunk_document
from assistant.ingest.decode import undeclared_qp
from assistant.ingest.emails import parse_email
from assistant.ingest.mbox import read_mbox
from assistant.ingest.quotes import split_reply
from assistant.ingest.types import Document
from tests.conftest import REPO

DEV_MAILBOX = REPO.parent / "shared" / "eval" / "mail" / "skilling-j.mbox.gz"
# what quoted-printable leaves in a chunk: a soft break before an escape or inside a word, an
# escaped space or tab at a line's end ("basketball=\n=20\narena", "is=20\nrecognized")
REMAINS = re.compile(r"=\r?\n(?:=[0-9A-F]{2}|[a-z])|=(?:20|09)\r?\n")

MEMO = (  # as the Enron copies keep it: soft breaks mid-word, spaces kept at line ends
    b"FYI:  Attached is a memo from Rick Shapiro outlining organizational changes=\n=20\n"
    b"in the Government Affairs group, most significantly the appointment of a ne=\nw=20\n"
    b"head of the Washington office.  This presents enormous=\n=20\nchallenges for us.\n"
)
PROSE = (
    "Hej Maya! We meet at the caf\u00e9 on S\u00f6dermalm at 8; the price is 1+1=2 tickets "
    "for \u20ac14, so please bring cash.   \nThe second line is long enough to be broken by "
    "the encoder somewhere in the middle of a word, as every long line of such mail is.\n"
)
HTML = (
    b'<html><body><p class=3D"intro">Dear all,</p><p>The basketball arena opens at 7 =\n'
    b"p.m.; tickets at the door.</p></body></html>\n"
)


@pytest.mark.parametrize(
    ("data", "text"),
    [
        (
            MEMO,
            b"FYI:  Attached is a memo from Rick Shapiro outlining organizational changes \nin "
            b"the Government Affairs group, most significantly the appointment of a new \nhead "
            b"of the Washington office.  This presents enormous \nchallenges for us.\n",
        ),
        (quopri.encodestring(PROSE.encode("latin-1", "replace")), None),
        (quopri.encodestring(PROSE.encode()), None),
        (quopri.encodestring(b"A plain paragraph, long enough to be broken. " * 12), None),
        (
            b"Caf=E9 cr=E8me br=FBl=E9e, =E0 bient=F4t\n",
            b"Caf\xe9 cr\xe8me br\xfbl\xe9e, \xe0 bient\xf4t\n",
        ),
        (HTML, None),
    ],
    ids=["enron-memo", "latin-1", "utf-8", "soft-breaks-only", "escapes-only", "html"],
)
def test_evident_quoted_printable_is_decoded(data, text):
    assert undeclared_qp(data) == (text if text is not None else quopri.decodestring(data))


@pytest.mark.parametrize(
    "data",
    [
        b"if (a == b) {\n    x = y;\n    total =\n        a + b;\n}\n",
        b"Set a=b and c=d, then n=12, p=0.05 and price=20.5 for ID=3DES.\n",
        b"http://www.crn.com/Components/Search/Article.asp?ArticleID=20727\n"
        b"http://maps.yahoo.com/py/maps.py?BFCat=&Pyt=Tmap&addr=\n3311+Sul+Ross&Get%A0Map=Go\n",
        b"In this issue...\n\n=====================\nRemarks by speakers\n=====================\n",
        b"The MTS-ID of the original message is: c=US;a=\n;p=USChamber;l=WDCEXC0100110614\n",
        b"Key:\nTWFuIGlzIGRpc3Rpbmd1aXNoZWQsIG5vdCBvbmx5IGJ5IGhpcyByZWFzb24sIGJ1dCBieSB0aGlz\n"
        b"IHNpbmd1bGFyIHBhc3Npb24gZnJvbSBvdGhlciBhbmltYWxzLCB3aGljaCBpcyBhIGx1c3Qgb2Yg=\n",
        b"-- \nBram de Vries | De Vries Bouw | KvK=12345678\nTel. +31 20 555 0199\n",
        b"> From: =?utf-8?Q?Ma=C3=AFa_Lindqvist?=\n> Subject: =?iso-8859-1?Q?caf=E9?=\n",
        b'M($=O=F5R;FUE;G0@;V8@=&AE(%5N:71E9"!3=&%T97,@871T96UP=&EN9R!T\n'
        b'M=F5N="!T:&ES(#Q"4CYL96=I<VQA=&EO;B!F<F]M(&)E8V]M:6YG(&QA=RX@\n',
        b"No equals sign at all.\n",
    ],
    ids=[
        "code",
        "assignments",
        "urls",
        "rules",
        "mts-id",
        "base64",
        "signature",
        "encoded-words",
        "uuencoded",
        "plain",
    ],  # fmt: skip
)
def test_text_that_holds_equals_signs_is_left_as_it_is(data):
    assert undeclared_qp(data) is None


def _mail(body: bytes, transfer_encoding: str = "") -> bytes:
    head = (
        "Message-ID: <10215983.1075842510378.JavaMail.evans@thyme>\n"
        "Date: Thu, 12 Oct 2000 08:17:00 -0700 (PDT)\n"
        "From: drew.fossum@enron.com\nTo: mschroeder@enron.com\n"
        "Subject: Government Affairs Organizational Changes\n"
        "Mime-Version: 1.0\nContent-Type: text/plain; charset=us-ascii\n"
    )
    if transfer_encoding:
        head += f"Content-Transfer-Encoding: {transfer_encoding}\n"
    return head.encode() + b"\n" + body


def test_a_mail_without_the_header_reads_as_one_with_it_and_keeps_its_hash():
    declared = parse_email(_mail(MEMO, "quoted-printable"), "box")
    # the hash of the body as sent: a home that stored the mail undecoded finds it unchanged
    as_sent = split_reply(MEMO.decode())[0]
    for transfer_encoding in ("", "7bit"):
        undeclared = parse_email(_mail(MEMO, transfer_encoding), "box")
        assert undeclared.text == declared.text and "=20" not in undeclared.text
        assert undeclared.undeclared_qp and not declared.undeclared_qp
        key = (undeclared.title, undeclared.sender, undeclared.date, as_sent)
        assert undeclared.content_hash == emails._hash(*key)
    base64 = parse_email(_mail(b"Y2hhbmdlcz0KPTIwCmlu\n", "base64"), "box")
    assert base64.text == "changes=\n=20\nin" and not base64.undeclared_qp  # decoded once only


def test_the_import_report_counts_them(tmp_path, store):
    box = tmp_path / "box.mbox"
    stamp = b"From drew.fossum@enron.com Thu Oct 12 15:17:00 2000\n"
    plain = _mail(b"Nothing encoded here; a=b.\n").replace(b"10215983", b"1")
    box.write_bytes(stamp + _mail(MEMO) + b"\n" + stamp + plain + b"\n")
    importer = Importer(store, None)
    report = importer.run([box], embed=False)
    assert (report.added, report.undeclared_qp) == (2, 1)
    assert "1 bodies decoded from quoted-printable" in report.summary()
    os.utime(box, (1, 1))  # read again: stored already, not counted again
    again = importer.run([box], embed=False)
    assert (again.duplicates, again.undeclared_qp) == (2, 0)


@pytest.mark.skipif(not DEV_MAILBOX.exists(), reason=f"the dev mailbox is not here: {DEV_MAILBOX}")
def test_the_dev_mailbox_keeps_no_quoted_printable_remains(tmp_path):
    mbox = tmp_path / "skilling-j.mbox"
    with gzip.open(DEV_MAILBOX) as src:
        mbox.write_bytes(src.read())
    settings = ChunkingSettings()
    docs = [d for d in read_mbox(mbox) if isinstance(d, Document)]
    chunks = [
        c for d in docs for c in chunk_document(d, settings.target_tokens, settings.max_tokens)
    ]
    assert len(docs) > 2000 and len(chunks) > 6000
    assert [c.text for c in chunks if REMAINS.search(c.text)] == []
    assert [d.message_id for d in docs if d.undeclared_qp] == []  # real text, '=' and all


def test_the_remains_pattern_finds_what_it_is_for():
    assert REMAINS.search(MEMO.decode())
    assert not REMAINS.search(parse_email(_mail(MEMO), "box").text)
