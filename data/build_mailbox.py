#!/usr/bin/env python3
"""Build the demo e-mail corpus for the local RAG assistant.

The mailbox belongs to Maya Lindqvist <maya@lindqvist.me>, engineering lead
at Fernwood Labs (Rotterdam), and covers 2026-01-05 .. 2026-10-30.

All messages are defined below as plain Python data and rendered with
``email.message.EmailMessage`` / ``email.policy.default``.  Running

    python data/build_mailbox.py

from the repository root (re)writes, byte-for-byte deterministically:

    data/mail/demo.mbox        every message (inbox + sent), date order, mboxrd
    data/mail/Maildir/         the same messages as a Maildir++ tree:
                                 cur/ new/ tmp/          Inbox
                                 .Sent/{cur,new,tmp}     what Maya sent
                                 .Lists.Team/...         list copies (LIST_COPIES)

and finally runs a self-check (counts, threading, charsets, QA references
in data/qa/mail_qa.jsonl) that raises if anything is off.

Python 3.11 standard library only; no randomness, no wall-clock time.
"""

from __future__ import annotations

import html as htmlmod
import io
import json
import re
import shutil
import sys
import textwrap
import zipfile
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from email import message_from_bytes, policy
from email.header import Header
from email.headerregistry import Address
from email.message import EmailMessage
from email.utils import format_datetime
from html.parser import HTMLParser
from pathlib import Path

HERE = Path(__file__).resolve().parent
MAIL_DIR = HERE / "mail"
MBOX_PATH = MAIL_DIR / "demo.mbox"
MAILDIR_PATH = MAIL_DIR / "Maildir"
QA_PATH = HERE / "qa" / "mail_qa.jsonl"

# refold_source="none": headers we store raw (pre-encoded iso-8859-1 subjects)
# are written exactly as given; normal headers are still folded by the policy.
POLICY = policy.default.clone(refold_source="none", linesep="\n")

OWNER = "maya"

# --------------------------------------------------------------------------
# People
# --------------------------------------------------------------------------


@dataclass
class Person:
    name: str
    addr: str
    zone: str = "eu"  # eu (Rotterdam/Uppsala), pt (Lisbon), cn (Shenzhen), utc
    sig: str | None = None  # signature block (without the "-- " line)
    alt: bool = False  # mail client sends multipart/alternative by default
    lang: str = "en"  # attribution-line language for quoting: en, sv, nl
    headers: dict = field(default_factory=dict)

    @property
    def domain(self) -> str:
        return self.addr.split("@", 1)[1]


MAYA_WORK_SIG = """Maya Lindqvist
Engineering Lead | Fernwood Labs B.V.
Rootline soil sensing | fernwoodlabs.nl
+31 6 4182 7730"""

MAYA_HOME_SIG = """Maya Lindqvist
+31 6 4182 7730"""

P: dict[str, Person] = {
    "maya": Person("Maya Lindqvist", "maya@lindqvist.me", sig=MAYA_WORK_SIG,
                   headers={"User-Agent": "Mozilla Thunderbird 140.2"}),
    # Fernwood Labs
    "tomas": Person("Tomás Ferreira", "tomas@fernwoodlabs.nl", alt=True,
                    sig="Tomás Ferreira\nCEO & co-founder, Fernwood Labs B.V.\n"
                        "Marconistraat 16, 3029 AK Rotterdam"),
    "priya": Person("Priya Nair", "priya@fernwoodlabs.nl",
                    sig="Priya Nair\nTest & Validation Engineer | Fernwood Labs\n"
                        "Lab: +31 10 890 4412"),
    "daan": Person("Daan Verhoeven", "daan@fernwoodlabs.nl",
                   sig="Daan Verhoeven\nSenior Firmware Engineer, Fernwood Labs"),
    "lotte": Person("Lotte Jansen", "lotte@fernwoodlabs.nl", alt=True,
                    sig="Lotte Jansen\nProduct Manager Rootline | Fernwood Labs\n"
                        "+31 6 2290 1834"),
    "femke": Person("Femke de Graaf", "femke@fernwoodlabs.nl", alt=True,
                    sig="Femke de Graaf\nPeople & Operations | Fernwood Labs\n"
                        "Working days: Mon, Tue, Thu"),
    "ruben": Person("Ruben Kowalski", "ruben@fernwoodlabs.nl",
                    sig="Ruben Kowalski\nHardware Engineer | Fernwood Labs\n"
                        "+31 6 5511 0928"),
    "noor": Person("Noor El Amrani", "noor@fernwoodlabs.nl", alt=True,
                   sig="Noor El Amrani\nCustomer Success Lead | Fernwood Labs\n"
                       "support@fernwoodlabs.nl | +31 10 890 4400"),
    # customer & vendor
    "hendrik": Person("Hendrik Groenveld", "h.groenveld@groenveldkwekerij.nl",
                      alt=True,
                      sig="Hendrik Groenveld\nHead grower | Groenveld Kwekerij B.V.\n"
                          "Naaldwijkseweg 210, 2691 RG 's-Gravenzande\n"
                          "+31 174 41 2267"),
    "wei": Person("Wei Zhang", "wei.zhang@kaidacircuits.com", zone="cn",
                  alt=True,
                  sig="Wei Zhang (Vivian)\nOverseas Sales Manager\n"
                      "Shenzhen Kaida Circuits Co., Ltd.\n"
                      "Bao'an District, Shenzhen 518103, China\n"
                      "Tel: +86 755 2371 8846 | WeChat: kaida_vivian"),
    # renovation, building, tax, health
    "bram": Person("Bram de Vries", "bram@devriesrenovatie.nl", lang="nl",
                   sig="Bram de Vries\nDe Vries Renovatie & Onderhoud\n"
                       "Schiedamseweg 188, 3025 AJ Rotterdam\n"
                       "06 1733 5290 | KvK 61822943",
                   headers={"X-Mailer": "Microsoft Outlook 16.0"}),
    "kees": Person("Kees Brouwer", "secretaris@vve-heemraadssingel.nl", lang="nl",
                   sig="Kees Brouwer\nSecretaris VvE Heemraadssingel 210-224\n"
                       "(flat 218-A)"),
    "sanne": Person("Sanne Bakker", "sanne@bakkerbelastingadvies.nl",
                    sig="Sanne Bakker RB\nBakker Belastingadvies\n"
                        "Mathenesserlaan 301, 3021 HD Rotterdam\n"
                        "010 477 3019",
                    headers={"X-Mailer": "Microsoft Outlook 16.0"}),
    # family
    "elin": Person("Elin Lindqvist", "elin.lindqvist@gmail.com", alt=True),
    "karin": Person("Karin Lindqvist", "karin.lindqvist@telia.com", lang="sv"),
    "oskar": Person("Oskar Berg", "oskar.berg@outlook.com", alt=True,
                    sig="Oskar"),
    # friends, clubs
    "sofie": Person("Sofie Dekker", "sofie.dekker@proton.me"),
    "anouk": Person("Anouk Visser", "anouk.visser@gmail.com", alt=True),
    "jeroen": Person("Jeroen Smit", "jeroen@kralingenrunners.nl",
                     sig="Jeroen Smit\nHead coach, AV Kralingen Runners\n"
                         "Training: Tue & Thu 19:00, Sun 09:00 - Kralingse Plas"),
    # automated senders
    "tap": Person("TAP Air Portugal", "booking@info.flytap.com", zone="pt"),
    "taplist": Person("TAP Air Portugal", "no-reply@checkin.flytap.com", zone="pt"),
    "hotel": Person("Casa do Arco Alfama", "reservas@casadoarco-alfama.pt",
                    zone="pt", alt=True),
    "bank": Person("Havenbank", "notificaties@havenbank.nl"),
    "dentist": Person("Tandartspraktijk Kralingen",
                      "afspraken@tandartskralingen.nl"),
    "calendar": Person("Fernwood Calendar", "calendar@fernwoodlabs.nl"),
    "github": Person("Daan Verhoeven", "notifications@github.com", zone="utc"),
    "embedded": Person("Embedded Weekly", "editor@embeddedweekly.io",
                       zone="utc"),
    "soilsignal": Person("The Soil Signal", "hello@soilsignal.news",
                         zone="utc"),
    "clubnews": Person("AV Kralingen Runners", "nieuwsbrief@kralingenrunners.nl"),
    "sas": Person("SAS", "no-reply@flysas.com"),
}

# --------------------------------------------------------------------------
# Message DSL
# --------------------------------------------------------------------------


@dataclass
class Att:
    filename: str
    maintype: str
    subtype: str
    data: bytes | str
    params: dict = field(default_factory=dict)


@dataclass
class M:
    frm: str
    to: list
    date: str  # "YYYY-MM-DD HH:MM" local time of the sender
    body: str = ""  # authored plain text (no signature, no quote)
    cc: list = field(default_factory=list)
    html: str | None = None  # explicit HTML part
    html_only: bool = False  # send html as the only body part
    alt: bool | None = None  # auto-generate an HTML alternative from body
    att: list = field(default_factory=list)
    charset: str | None = None
    cte: str | None = None
    quote: bool = True
    reply_to: int | None = None  # 1-based index in thread; default previous
    subject: str | None = None  # override subject
    sig: str | bool | None = None  # None: person default, False: none
    headers: dict = field(default_factory=dict)
    long: bool = False  # deliberately long (800+ words)
    forward: bool = False  # forward the parent instead of replying
    # Outlook style: the signature without a "-- " line, then the whole parent below a
    # From/Sent/To/Subject block, no "> " markers (so an importer keeps it as the reply's text)
    outlook: bool = False
    flagged: bool = False  # Maildir "F" flag (inbox only)
    from_name: str | None = None  # override display name (e.g. GitHub)


@dataclass
class Thread:
    slug: str
    subject: str
    msgs: tuple
    ctx: str = "work"  # work | home (selects Maya's signature)


THREADS: list[Thread] = []
_SECTION = ["work"]


def section(ctx: str) -> None:
    """Threads defined after this call default to ctx ('work' or 'home')."""
    _SECTION[0] = ctx


def thread(slug, subject, *msgs, ctx=None):
    THREADS.append(Thread(slug, subject, msgs, ctx or _SECTION[0]))


def single(slug, subject, msg, ctx=None):
    THREADS.append(Thread(slug, subject, (msg,), ctx or _SECTION[0]))


# --------------------------------------------------------------------------
# Deterministic fake attachments (small, but structurally real)
# --------------------------------------------------------------------------


def pdf_bytes(title: str, lines: list[str]) -> bytes:
    """A tiny but valid single-page PDF with the given text lines."""

    def esc(s: str) -> str:
        s = s.encode("latin-1", "replace").decode("latin-1")
        return s.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")

    ops = ["BT", "/F1 15 Tf", "56 780 Td", f"({esc(title)}) Tj", "/F1 10 Tf"]
    for ln in lines:
        ops += ["0 -16 Td", f"({esc(ln)}) Tj"]
    ops.append("ET")
    stream = "\n".join(ops).encode("latin-1")
    objs = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] "
        b"/Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length " + str(len(stream)).encode() + b" >>\nstream\n"
        + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for i, body in enumerate(objs, 1):
        offsets.append(len(out))
        out += f"{i} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objs) + 1}\n0000000000 65535 f \n".encode()
    for off in offsets:
        out += f"{off:010d} 00000 n \n".encode()
    out += (f"trailer\n<< /Size {len(objs) + 1} /Root 1 0 R "
            f"/Info << /Title ({esc(title)}) >> >>\n"
            f"startxref\n{xref}\n%%EOF\n").encode()
    return bytes(out)


def jpeg_bytes(label: str) -> bytes:
    """A JFIF header with a comment segment; placeholder image bytes."""
    comment = label.encode("utf-8")
    seg = b"\xff\xfe" + (len(comment) + 2).to_bytes(2, "big") + comment
    app0 = (b"\xff\xe0\x00\x10JFIF\x00\x01\x01\x01\x00\x48\x00\x48\x00\x00")
    filler = bytes((i * 37 + len(label)) % 251 for i in range(240))
    return b"\xff\xd8" + app0 + seg + b"\xff\xda\x00\x08\x01\x01\x00\x00?\x00" \
        + filler + b"\xff\xd9"


def _zip(files: dict[str, str]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, text in files.items():
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            z.writestr(info, text.encode("utf-8"))
    return buf.getvalue()


def docx_bytes(paragraphs: list[str]) -> bytes:
    """Minimal valid .docx (WordprocessingML) containing the paragraphs."""
    body = "".join(
        f'<w:p><w:r><w:t xml:space="preserve">{htmlmod.escape(p)}</w:t></w:r></w:p>'
        for p in paragraphs)
    return _zip({
        "[Content_Types].xml":
            '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
            '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
            '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
            '<Default Extension="xml" ContentType="application/xml"/>'
            '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>'
            '</Types>',
        "_rels/.rels":
            '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
            '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
            '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/>'
            '</Relationships>',
        "word/document.xml":
            '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
            '<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
            f"<w:body>{body}</w:body></w:document>",
    })


def xlsx_bytes(rows: list[list]) -> bytes:
    """Minimal valid .xlsx with one sheet (inline strings, numbers)."""

    def col(i: int) -> str:
        return chr(ord("A") + i)

    xml_rows = []
    for r, row in enumerate(rows, 1):
        cells = []
        for c, v in enumerate(row):
            ref = f"{col(c)}{r}"
            if isinstance(v, (int, float)):
                cells.append(f'<c r="{ref}"><v>{v}</v></c>')
            else:
                cells.append(f'<c r="{ref}" t="inlineStr"><is><t>'
                             f"{htmlmod.escape(str(v))}</t></is></c>")
        xml_rows.append(f'<row r="{r}">{"".join(cells)}</row>')
    ns = "http://schemas.openxmlformats.org"
    return _zip({
        "[Content_Types].xml":
            '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
            f'<Types xmlns="{ns}/package/2006/content-types">'
            f'<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
            '<Default Extension="xml" ContentType="application/xml"/>'
            '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
            '<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>'
            "</Types>",
        "_rels/.rels":
            '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
            f'<Relationships xmlns="{ns}/package/2006/relationships">'
            f'<Relationship Id="rId1" Type="{ns}/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/>'
            "</Relationships>",
        "xl/workbook.xml":
            '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
            f'<workbook xmlns="{ns}/spreadsheetml/2006/main" '
            f'xmlns:r="{ns}/officeDocument/2006/relationships">'
            '<sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>',
        "xl/_rels/workbook.xml.rels":
            '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
            f'<Relationships xmlns="{ns}/package/2006/relationships">'
            f'<Relationship Id="rId1" Type="{ns}/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/>'
            "</Relationships>",
        "xl/worksheets/sheet1.xml":
            '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
            f'<worksheet xmlns="{ns}/spreadsheetml/2006/main"><sheetData>'
            + "".join(xml_rows) + "</sheetData></worksheet>",
    })


def ics_text(uid, summary, start, end, location, description, organizer,
             attendees, tz="Europe/Amsterdam", method="REQUEST"):
    """start/end as 'YYYYMMDDTHHMMSS' local times in tz."""
    lines = [
        "BEGIN:VCALENDAR",
        "PRODID:-//Fernwood Labs//Calendar 2.4//EN",
        "VERSION:2.0",
        "CALSCALE:GREGORIAN",
        f"METHOD:{method}",
        "BEGIN:VTIMEZONE",
        "TZID:Europe/Amsterdam",
        "BEGIN:DAYLIGHT",
        "TZOFFSETFROM:+0100",
        "TZOFFSETTO:+0200",
        "TZNAME:CEST",
        "DTSTART:19700329T020000",
        "RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU",
        "END:DAYLIGHT",
        "BEGIN:STANDARD",
        "TZOFFSETFROM:+0200",
        "TZOFFSETTO:+0100",
        "TZNAME:CET",
        "DTSTART:19701025T030000",
        "RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU",
        "END:STANDARD",
        "END:VTIMEZONE",
        "BEGIN:VEVENT",
        f"UID:{uid}",
        "DTSTAMP:20260101T000000Z",
        f"DTSTART;TZID={tz}:{start}",
        f"DTEND;TZID={tz}:{end}",
        f"SUMMARY:{summary}",
        f"LOCATION:{location}",
        f"DESCRIPTION:{description}",
        f"ORGANIZER;CN={organizer[0]}:mailto:{organizer[1]}",
    ]
    for name, addr in attendees:
        lines.append(f"ATTENDEE;CN={name};ROLE=REQ-PARTICIPANT;"
                     f"PARTSTAT=NEEDS-ACTION;RSVP=TRUE:mailto:{addr}")
    lines += ["STATUS:CONFIRMED", "SEQUENCE:0", "END:VEVENT", "END:VCALENDAR"]
    folded = []
    for ln in lines:  # RFC 5545 line folding at 75 octets
        while len(ln) > 74:
            folded.append(ln[:74])
            ln = " " + ln[74:]
        folded.append(ln)
    return "\r\n".join(folded) + "\r\n"


def PDF(name, title, lines):
    return Att(name, "application", "pdf", pdf_bytes(title, lines))


def JPG(name, label):
    return Att(name, "image", "jpeg", jpeg_bytes(label))


def DOCX(name, paragraphs):
    return Att(name, "application",
               "vnd.openxmlformats-officedocument.wordprocessingml.document",
               docx_bytes(paragraphs))


def XLSX(name, rows):
    return Att(name, "application",
               "vnd.openxmlformats-officedocument.spreadsheetml.sheet",
               xlsx_bytes(rows))


def CSV(name, text):
    return Att(name, "text", "csv", text)


def ICS(name, **kw):
    return Att(name, "text", "calendar", ics_text(**kw),
               params={"method": kw.get("method", "REQUEST")})


# --------------------------------------------------------------------------
# Text helpers
# --------------------------------------------------------------------------

WRAP = 72
_LIST_RE = re.compile(r"^(\s*(?:[-*\u2022]|\d+[.)]|[a-z][.)])\s+)")


def clean(text: str) -> str:
    return textwrap.dedent(text).strip("\n")


def wrap_text(text: str) -> str:
    """Wrap prose lines at 72 columns; keep tables/indented blocks."""
    out = []
    for line in text.split("\n"):
        if len(line) <= WRAP or "  " in line.strip() or line.startswith((">", "|")):
            out.append(line.rstrip())
            continue
        m = _LIST_RE.match(line)
        indent = " " * len(m.group(1)) if m else re.match(r"\s*", line).group(0)
        out.extend(textwrap.wrap(line, WRAP, subsequent_indent=indent,
                                 break_long_words=False, break_on_hyphens=False))
    return "\n".join(out)


def quote_lines(text: str) -> str:
    return "\n".join("> " + ln if ln else ">" for ln in text.split("\n"))


SV_DAYS = ["mån", "tis", "ons", "tors", "fre", "lör", "sön"]
SV_MONTHS = ["jan.", "feb.", "mars", "apr.", "maj", "juni", "juli", "aug.",
             "sep.", "okt.", "nov.", "dec."]
NL_DAYS = ["ma", "di", "wo", "do", "vr", "za", "zo"]
NL_MONTHS = ["jan", "feb", "mrt", "apr", "mei", "jun", "jul", "aug", "sep",
             "okt", "nov", "dec"]


def attribution(lang: str, dt: datetime, who: Person) -> str:
    if lang == "sv":
        return (f"Den {SV_DAYS[dt.weekday()]} {dt.day} {SV_MONTHS[dt.month - 1]} "
                f"{dt.year} kl. {dt:%H:%M} skrev {who.name} <{who.addr}>:")
    if lang == "nl":
        return (f"Op {NL_DAYS[dt.weekday()]} {dt.day} {NL_MONTHS[dt.month - 1]} "
                f"{dt.year} om {dt:%H:%M} schreef {who.name} <{who.addr}>:")
    return f"On {dt:%a}, {dt.day} {dt:%b %Y} at {dt:%H:%M}, {who.name} <{who.addr}> wrote:"


def to_html(body: str, sig: str | None, attrib: str | None,
            quoted: str | None) -> str:
    """Render an authored plain-text mail as simple client-style HTML."""
    def esc(t: str) -> str:
        return htmlmod.escape(t, quote=False)

    def para(block: str) -> str:
        lines = [ln for ln in block.split("\n") if ln.strip()]
        items = [ln for ln in lines if _LIST_RE.match(ln)]
        if items and len(items) == len(lines):
            tag = "ol" if all(re.match(r"\s*\d", ln) for ln in lines) else "ul"
            lis = "".join(f"<li>{esc(_LIST_RE.sub('', ln))}</li>" for ln in lines)
            return f"<{tag}>{lis}</{tag}>"
        if items and not _LIST_RE.match(lines[0]) and all(
                _LIST_RE.match(ln) for ln in lines[1:]):
            # "Intro line:" followed by list items
            tag = "ol" if all(re.match(r"\s*\d", ln) for ln in lines[1:]) else "ul"
            lis = "".join(f"<li>{esc(_LIST_RE.sub('', ln))}</li>" for ln in lines[1:])
            return f"<p>{esc(lines[0])}</p><{tag}>{lis}</{tag}>"
        return "<p>" + "<br>\n".join(esc(ln) for ln in lines) + "</p>"

    blocks = [b for b in re.split(r"\n\s*\n", body) if b.strip()]
    parts = ['<html><head><meta http-equiv="Content-Type" '
             'content="text/html; charset=utf-8"></head>',
             '<body style="font-family: Arial, sans-serif; font-size: 14px;">',
             '<div dir="ltr">']
    parts += [para(b) for b in blocks]
    parts.append("</div>")
    if sig:
        parts.append('<div class="signature" style="color:#666666">-- <br>'
                     + "<br>\n".join(esc(s) for s in sig.split("\n"))
                     + "</div>")
    if quoted is not None:
        qblocks = [b for b in re.split(r"\n\s*\n", quoted) if b.strip()]
        parts.append('<div class="quote"><p>' + esc(attrib) + "</p>")
        parts.append('<blockquote type="cite" style="margin:0 0 0 .8ex;'
                     'border-left:1px solid #ccc;padding-left:1ex">'
                     + "".join(para(b) for b in qblocks) + "</blockquote></div>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


class _TextExtractor(HTMLParser):
    SKIP = {"style", "script", "head", "title"}
    BLOCK = {"p", "br", "div", "tr", "li", "h1", "h2", "h3", "h4", "table",
             "blockquote", "td", "th"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.out = []
        self.skip = 0

    def handle_starttag(self, tag, attrs):
        if tag in self.SKIP:
            self.skip += 1
        elif tag in self.BLOCK:
            self.out.append("\n")

    def handle_endtag(self, tag):
        if tag in self.SKIP:
            self.skip = max(0, self.skip - 1)
        elif tag in self.BLOCK:
            self.out.append("\n")

    def handle_data(self, data):
        if not self.skip:
            self.out.append(data)


def html_to_text(s: str) -> str:
    p = _TextExtractor()
    p.feed(s)
    p.close()
    return re.sub(r"\n\s*\n+", "\n\n", "".join(p.out)).strip()


# --------------------------------------------------------------------------
# Time zones (fixed rules for 2026; Europe switches 29 Mar and 25 Oct)
# --------------------------------------------------------------------------

EU_SUMMER = (date(2026, 3, 29), date(2026, 10, 25))


def tz_offset(zone: str, naive: datetime) -> int:
    summer = EU_SUMMER[0] <= naive.date() < EU_SUMMER[1]
    return {"eu": 2 if summer else 1, "pt": 1 if summer else 0,
            "cn": 8, "utc": 0}[zone]


def parse_local(s: str, zone: str) -> datetime:
    naive = datetime.strptime(s, "%Y-%m-%d %H:%M")
    return naive.replace(tzinfo=timezone(timedelta(hours=tz_offset(zone, naive))))


# ==========================================================================
# MESSAGES
# ==========================================================================

# ---------------------------------------------------------------- WORK ----

thread(
    "rootline-v3-plan", "Rootline v3 release plan: milestones for H1",
    M("lotte", ["maya", "tomas"], "2026-01-07 10:12", cc=["daan", "priya"], body="""
        Hi all,

        Following Monday's planning session, here is the milestone plan for the Rootline v3 firmware (v3.0.0) that I'd like us to commit to. v3 is the release that brings the LoRaWAN 1.0.4 stack, adaptive sampling (every 15 minutes by default, down to every 5 minutes for two hours after an irrigation event) and over-the-air delta updates, which shrink a typical update from about 210 kB to about 35 kB.

        Milestones:
        - Fri 6 Feb: adaptive sampling feature complete
        - Fri 13 Mar: OTA delta updates merged; internal dogfood on the 12 sensors in our test greenhouse in Bleiswijk
        - Fri 15 May: code freeze, RC1 handed to Priya for validation
        - Tue 26 May: RC2 into the 72-hour soak test
        - Fri 29 May: release-candidate sign-off
        - Tue 9 Jun: public release, staged rollout to the fleet (about 3,800 sensors by then)

        Marketing wants the 9 June date because GreenTech Amsterdam runs 9-11 June and they want to demo v3 on the stand. I'd rather not promise features to customers until we are past code freeze, so please keep customer conversations at "coming in June".

        Risks I see: the LoRa radio driver rework (Daan estimates three weeks) and Priya's validation capacity in May, because she is also covering the validation of the Rev D main board for batch 2.

        Can you each confirm by Friday, or tell me what is unrealistic?

        Cheers,
        Lotte
        """),
    M("maya", ["lotte", "tomas"], "2026-01-07 16:48", cc=["daan", "priya"], body="""
        Hi Lotte,

        Thanks, this matches what we discussed. Engineering can commit to the plan with one caveat: validation needs a full 72-hour soak test on the 12 units in Priya's soak rack before we can sign off a release candidate, so RC2 really has to go into the rack on 26 May and not a day later. If RC2 slips, the release slips.

        Daan, please start the LoRa driver rework on Monday 2 February so we keep two weeks of slack before the OTA milestone. Priya, can you tell me by next Wednesday whether the Rev D validation and the v3 validation clash in May? If they do, I'd rather borrow Ruben for the board measurements than compress the soak test.

        I would have liked a two-week buffer between RC2 and the release, but I understand GreenTech makes 9 June attractive. Let's treat 29 May as the real deadline internally.

        Best,
        Maya
        """),
    M("tomas", ["maya", "lotte"], "2026-01-08 09:05", cc=["daan", "priya"], body="""
        Approved from my side. GreenTech matters commercially, we have three big growers visiting the stand, but I want to be very clear about priorities: quality first. If we ever have to choose between the date and a known problem in the field, we demo a release candidate on the stand and ship the real thing later. Nobody will remember a two-week slip; 3,800 sensors with a bug would be remembered for years.

        Lotte, please put the milestones in the roadmap deck for the board meeting on 29 January.

        Tomás
        """),
    M("daan", ["maya", "lotte", "tomas"], "2026-01-08 11:30", cc=["priya"], body="""
        Works for me. I'll start the LoRa driver rework on 2 February as Maya suggested; three weeks is my estimate for the driver itself, plus a week of integration with the new MAC layer.

        One thing I need: four more SX1262 development kits so Priya and I can both run join/rejoin tests in parallel without fighting over the two we have. They are EUR 95 each at Farnell, so EUR 380 in total. Maya, OK to order them on the engineering budget?

        Daan
        """),
    M("maya", ["daan"], "2026-01-08 12:02", cc=["priya"], body="""
        Yes, go ahead and order the four SX1262 kits (EUR 380) on the engineering budget, cost centre 4100. Ask Femke for the purchase order number, she keeps the PO list.

        And please put a reminder in your calendar to write down your test setup for join/rejoin while you build it. If Priya has to reverse-engineer it in May we lose days.

        Thanks,
        Maya
        """),
)

thread(
    "embedded-world-2026", "Embedded World Nuremberg (10-12 March): budget request",
    M("ruben", ["maya"], "2026-01-20 14:22", body="""
        Hi Maya,

        I'd like to go to Embedded World in Nuremberg this year, 10-12 March. Three things I want out of it:

        1. The low-power measurement track on Wednesday 11 March, including a Semtech talk on SX126x sleep modes and retention RAM.
        2. A face-to-face meeting with Kaida at their booth in Hall 1. Rev D batch 1 came in at 97.2% first-pass yield, under our 98% target, and I want to discuss that before we order batch 2.
        3. A first conversation with Brabant PCB from Eindhoven, as a possible European second source.

        Estimated costs:
        - conference pass (incl. the workshop day): EUR 690
        - hotel, two nights at the NH Nürnberg City Center: EUR 298
        - ICE train Rotterdam-Nuremberg return: EUR 189
        Total: EUR 1,177

        That stays inside my EUR 1,500 yearly training budget. I'd be back in the office on Friday 13 March.

        Ruben
        """),
    M("maya", ["ruben"], "2026-01-20 17:05", body="""
        Hi Ruben,

        Approved, EUR 1,177 out of your training budget. Two requests in return:

        1. Write a one-page trip report by Friday 20 March, focused on what we should actually change (not a list of booths).
        2. In the Kaida meeting, ask for a quote for Rev D batch 2 (3,000 boards) and a concrete plan to get above 98% first-pass yield. I'd like the quote in hand before the end of March.

        Book the train early, the ICE prices go up quickly.

        Maya
        """),
    M("ruben", ["maya"], "2026-03-16 09:40", body="""
        Short version before the full report on Friday:

        - Kaida: I met Wei Zhang, their overseas sales manager. She admitted the 97.2% on batch 1 was mostly an AOI setting issue on their side, and promised an extra AOI step for batch 2. The formal quote for 3,000 boards comes this week.
        - Brabant PCB: nice people, fast (10 working days), but roughly 25-30% more expensive per board. Interesting as a second source later, not as a replacement.
        - The Semtech talk confirmed that our warm-start sleep configuration for the SX1262 is right; retention RAM costs only about 0.5 uA.

        In the end I spent EUR 1,094; the hotel was cheaper than expected.

        Ruben
        """),
    M("maya", ["ruben"], "2026-03-16 10:15", body="""
        Great summary, thanks Ruben. Good that Kaida owned the yield problem; let's hold them to the extra AOI step in writing when the quote comes in.

        For Brabant PCB: please keep the contact warm. I want to discuss a European second source with Tomás in April, purely for supply risk, and your numbers will help.

        Nice that you came in under budget, EUR 1,094 it is.

        Maya
        """),
)

thread(
    "q3-hiring-budget", "Q3 hiring: two embedded engineers (budget request)",
    M("maya", ["tomas"], "2026-02-16 09:20", cc=["femke"], att=[XLSX(
        "Q3_hiring_budget_embedded_engineers.xlsx", [
            ["Item", "Per role (EUR)", "Roles", "Total (EUR)"],
            ["Gross annual base salary (average, band 68,000-82,000)", 78000, 2, 156000],
            ["Holiday allowance 8%", 6240, 2, 12480],
            ["Employer costs (approx. 26%)", 21900, 2, 43800],
            ["Equipment (laptop, scope, kits)", 3200, 2, 6400],
            ["Recruitment (job boards, referral bonus)", 1950, 2, 3900],
            ["2026 impact, starts September", "", "", 72500],
        ])], body="""
        Hi Tomás,

        As discussed in our 1:1, here is the formal request for two embedded engineers (Embedded Engineer II) starting in Q3. The spreadsheet has the numbers; the short version:

        - Two roles at medior level: 3+ years of embedded C, low-power design, ideally LoRaWAN.
        - Salary band EUR 68,000 to 82,000 gross per year, plus 8% holiday allowance.
        - Budget: EUR 78,000 per role on average, so EUR 156,000 in base salary for the two together. With holiday allowance and employer costs that is roughly EUR 106,000 per role all-in.
        - Impact on 2026 if both start in September: about EUR 72,500.
        - Recruitment without agencies: job boards and our referral bonus, about EUR 3,900 in total.

        Why now: today the firmware team is Daan, half of me, and the contractor (Erik) whose contract ends on 30 June. The 3.x releases, the v4 hardware generation that starts in Q4 and a proper on-call rotation cannot be carried by one and a half people.

        I'd like a decision before the end of February so Femke can publish the vacancies in the first half of March; hiring embedded people in the Randstad currently takes 10 to 14 weeks.

        Thanks,
        Maya
        """),
    M("tomas", ["maya"], "2026-02-18 19:40", cc=["femke"], body="""
        Maya,

        I'm mostly convinced. Two questions before I take this to the board on 26 February:

        1. Could one of the two roles be a junior (say EUR 55,000)? It would save us around EUR 30,000 a year including employer costs.
        2. What happens to the v4 timeline if we only manage to hire one person by September?

        Let's discuss Thursday after the standup, 15 minutes is enough.

        Tomás
        """),
    M("maya", ["tomas"], "2026-02-19 08:10", cc=["femke"], body="""
        Hi Tomás,

        Short answers so you can think about them before Thursday:

        1. I'd rather not hire a junior now. A junior needs roughly half of Daan's time for the first six months, and Daan is exactly the bottleneck we're trying to relieve. Next year, once the team is four people, a junior or a graduate intern makes a lot of sense.
        2. With one hire by September, the v4 hardware design moves from Q4 to Q1 2027, and the 3.1 release would take most of the summer. I'd also keep Erik on a 3-month extension (about EUR 27,000) as a bridge.

        Maya
        """),
    M("tomas", ["maya"], "2026-03-02 11:45", cc=["femke"], body="""
        Good news: the board approved it on Thursday 26 February. Two embedded engineers, budget EUR 78,000 per role on average, start in Q3. Within the band of 68,000 to 82,000 you can distribute it as you see fit, as long as the two salaries together stay under EUR 156,000. You convinced me on the junior question too.

        One condition from the board: at least one of the two should bring real low-power product experience, shipped and in the field, not only from university.

        Femke, can you set up the intake with Maya this week and get the vacancies online?

        Tomás
        """),
    M("femke", ["tomas", "maya"], "2026-03-02 13:20", body="""
        Great! I have blocked Wednesday 4 March at 14:00 for the intake with Maya (meeting room Kas).

        My plan: vacancy text drafted by Wednesday evening, live on Monday 9 March on LinkedIn, our website and the Embedded Jobs NL board (EUR 450 for 60 days). I'll also announce the referral bonus internally: EUR 1,500 per hire, paid after the probation period.

        Femke
        """),
)

thread(
    "vacancy-embedded", "Vacancy text: Embedded Engineer II (2x), draft 1",
    M("femke", ["maya"], "2026-03-04 17:05", body="""
        Hi Maya,

        Thanks for the intake this afternoon. Below is my first draft of the vacancy text, please shoot at it:

        "Fernwood Labs builds Rootline, a soil moisture sensor that helps growers water smarter. We are looking for two Embedded Engineers with at least 10 years of experience in C/C++, RTOS development and wireless protocols. You will work on the firmware of our sensors. Salary: competitive. Location: Rotterdam."

        I kept it short because the Embedded Jobs board cuts off after 1,200 characters. Do you want to mention specific technologies? And are we allowed to publish the salary band this time? Candidates keep asking.

        Femke
        """),
    M("maya", ["femke"], "2026-03-05 08:50", body="""
        Morning Femke,

        Thanks for the quick draft. Changes I'd like:

        - Title: "Embedded Engineer II", and drop "10 years". We want 3+ years; ten years scares away exactly the people we want.
        - Be specific: embedded C on bare metal (Zephyr experience is a plus), low-power design (we count microamps), LoRaWAN or other low-power radios, and comfortable with a logic analyser and a current probe.
        - Yes, publish the band: EUR 68,000 to 82,000 gross per year plus 8% holiday allowance, depending on experience.
        - Hybrid: three days a week in the Rotterdam office, two from home.
        - Add one honest line: "You will debug real sensors in real greenhouses, sometimes with mud on your shoes."

        Happy with the rest. Can you send me the final text before it goes live?

        Maya
        """),
    M("femke", ["maya"], "2026-03-05 10:30", body="""
        Done, all five changes are in, and I love the mud line. The final text is 1,160 characters, so it fits the Embedded Jobs limit.

        It goes live on Monday 9 March at 09:00 on LinkedIn, the website and Embedded Jobs NL. Applications come into the recruitment inbox; I'll do the first screening and send you a shortlist every Friday. First interviews realistically from the second week of May, after the usual four to six weeks of applications.

        Femke
        """),
)

P["asa"] = Person("Åsa Sjöberg", "asa@fernwoodlabs.nl",
                  sig="Åsa Sjöberg\nData & Cloud Engineer | Fernwood Labs")

thread(
    "groenveld-drift", "Rootline readings creeping upward in bays 3 and 4",
    M("hendrik", ["lotte"], "2026-05-26 07:45", cc=["maya"], att=[CSV(
        "groenveld_vwc_vs_gutter_mrt-mei.csv",
        "week;bay;rootline_vwc_pct;gutter_scale_vwc_pct;difference\n"
        "2026-10;3;61.2;60.9;0.3\n2026-14;3;62.8;60.7;2.1\n2026-18;3;64.9;61.0;3.9\n"
        "2026-21;3;65.6;61.2;4.4\n2026-21;4;64.8;60.8;4.0\n2026-21;1;61.9;60.6;1.3\n")], body="""
        Dear Lotte, dear Maya,

        I have to raise a problem with the Rootline sensors in our greenhouse. Over the last two months the readings have been creeping upward, slowly but steadily, especially in bays 3 and 4. Compared with our weighing gutter, the sensors in bay 3 now read about 4 percentage points too wet.

        Our growers trusted the sensors and irrigated less. In May some plants in bay 3 showed stress: wilting at midday and smaller trusses. We caught it in time, but I don't want to find out what happens in a hot week in July.

        All 140 sensors are Rootline v2 in stone wool slabs, across our 4 bays. Bays 1 and 2 seem less affected, but not zero. The comparison per week is attached.

        For now my growers steer bays 3 and 4 on the gutter scale again. I'd like an explanation, and someone from Fernwood to look at this soon.

        Regards,
        Hendrik
        """),
    M("lotte", ["hendrik"], "2026-05-26 10:30", cc=["maya"], body="""
        Dear Hendrik,

        Thank you for reporting this so clearly, and I'm sorry about the stress in bay 3. I've opened ticket CS-2291 and asked Maya, our engineering lead (in cc), to take the technical investigation on personally.

        Steering bays 3 and 4 on the gutter scale for now is the right call. You'll hear from Maya with a plan this week, and from me at least once a week until this is solved.

        Kind regards,
        Lotte
        """),
    M("maya", ["hendrik"], "2026-05-27 09:10", cc=["lotte", "asa"], body="""
        Dear Hendrik,

        Here's how we'll investigate:

        1. Åsa Sjöberg, our data engineer (in cc), pulls the last 90 days of readings from all 140 sensors and compares bays, sensor ages and temperatures.
        2. Could you send us an export of the EC values per bay from your climate computer for the same period? If the drift follows the feed, we'll see it.
        3. Ruben Kowalski, our hardware engineer, would like to take two sensors from bay 3 back to our lab to inspect the probes. We'll replace them immediately.

        Until we understand the cause, please keep bays 3 and 4 on the gutter scale. I'll send you our findings by Friday 5 June at the latest.

        Best regards,
        Maya
        """),
    M("hendrik", ["maya"], "2026-05-27 14:05", cc=["lotte", "asa"], body="""
        Maya,

        The EC export is on its way to Åsa through our Priva climate computer, every 15 minutes per bay since 1 March. You'll see that bays 3 and 4 run a higher EC, between 4.6 and 5.2 mS/cm, because we steer those tomatoes more generatively. Bays 1 and 2 are around 3.5.

        Ruben can collect the two sensors on Friday. He should use gate 3 on the Naaldwijkseweg and ask for Wendy, who does our crop registration. Safety shoes please, it's a hygiene zone.

        Hendrik
        """),
    M("maya", ["hendrik"], "2026-06-05 16:30", cc=["lotte", "asa", "ruben"], body="""
        Dear Hendrik,

        As promised, our findings and our plan.

        Findings from Åsa's analysis of 90 days of data:
        - Average drift: +3.1% VWC over 8 weeks, but very uneven.
        - Bays 3 and 4, where the EC is above 4.5 mS/cm, drift about three times more than bays 1 and 2.
        - Sensor age makes no difference: 2023 and 2025 units drift the same in the same bay.
        - Temperature has a small effect above 28 degrees C, but not enough to explain the drift.

        Our most likely explanation: salt builds up around the probe and changes the dielectric reading of the capacitive sensor. Our firmware has no EC compensation at all. To be clear, your feed is normal for generative tomato steering; handling high EC is our job, and we didn't.

        Plan:
        1. We replace the 20 worst probes free of charge this month; Ruben brings them on Friday 12 June.
        2. Firmware 3.1 gets an EC compensation coefficient per sensor, using the EC values your climate computer already logs. I'll give you the release date as soon as Daan, our firmware lead, has confirmed it.
        3. Maya, Ruben and Lotte visit you on Thursday 2 July at 09:00 with reference probes and a handheld EC meter.
        4. You get a short written update from us every Friday until this is solved.

        Best regards,
        Maya
        """),
    M("hendrik", ["maya"], "2026-06-05 17:45", cc=["lotte", "asa", "ruben"], body="""
        Maya,

        Thank you, this is the first clear explanation I've had from a sensor supplier in years. The EC story fits what my growers see: the drift got worse when we raised the EC in bays 3 and 4 in early April.

        Thursday 2 July at 09:00 is fine; Wendy will meet you at gate 3. The 20 new probes on 12 June are welcome.

        One request: I'd like an alarm when a sensor starts to drift, so we don't depend on my growers noticing wilting plants.

        Hendrik
        """),
    # forwarded from the phone: no signature, so the forwarded mail stays in the text
    M("maya", ["daan"], "2026-05-26 11:05", reply_to=1, forward=True, sig=False, body="""
        Daan,

        Forwarding Hendrik's mail below because I want your eyes on it before we reply with a plan. His sensors in bays 3 and 4 read about 4 points too wet against the weighing gutter, and it has been growing since March.

        Two questions: did any 2.x firmware update since January touch the dielectric calibration table or the temperature correction? And can you pull the firmware version per sensor for all 140 units at Groenveld? Please keep this internal for now; Lotte is the only one talking to Hendrik.

        Maya
        """),
)

thread(
    "drift-analysis-internal", "Groenveld drift: first results from the 90-day data",
    M("asa", ["maya"], "2026-06-03 11:40", cc=["lotte"], body="""
        Hej Maya,

        First results on Groenveld, before our 1:1 this afternoon. I pulled 90 days of readings for all 140 sensors and joined them with the EC export from their climate computer.

        - Average drift is +3.1% VWC over 8 weeks, but the spread is large.
        - Drift correlates clearly with slab EC: bays 3 and 4 (EC above 4.5 mS/cm) drift about 3x more than bays 1 and 2. Correlation per sensor between EC and drift rate: 0.78.
        - No relation with sensor age: 2023 and 2025 units drift the same in the same bay.
        - Temperature: a small extra effect above 28 degrees C, afternoon readings only.

        Proposal: a drift-detection alert that flags any sensor whose 7-day median drifts more than 1.5% VWC per 30 days against its neighbours in the same bay. With that rule, bay 3 would have been flagged in the second week of April. I can build it for the 3.1 backend release.

        Åsa
        """),
    M("maya", ["asa"], "2026-06-03 13:05", cc=["lotte"], body="""
        Hej Åsa,

        This is a really strong result, thank you. The EC correlation of 0.78 is exactly what we needed before talking to Hendrik.

        Yes to the drift alert with your rule (1.5% VWC per 30 days against the neighbours in the same bay); please build it for the 3.1 backend release. And please prepare two charts for Friday's mail to Hendrik: drift per bay, and drift against EC. No customer names in anything that leaves the company without his permission.

        Let's talk about the rest at 15:00.

        Maya
        """),
)

thread(
    "groenveld-weekly-update", "Rootline drift: weekly update (Friday 19 June)",
    M("maya", ["hendrik"], "2026-06-19 14:30", cc=["lotte", "asa", "ruben"], body="""
        Dear Hendrik,

        This week's update on CS-2291:

        1. Probes: Ruben replaced the 20 worst probes on 12 June. He also cut open the two probes from bay 3 in our lab: the coating is intact, so damaged coating is ruled out as a cause. That leaves salt build-up as the main explanation.
        2. EC compensation: Daan has confirmed the date. Firmware 3.1 with EC compensation will be released on Wednesday 12 August. In our lab test with your bay 3 data, the error drops from +3.4 to +0.6 percentage points.
        3. Drift alarm: Åsa's drift alert (it flags a sensor that drifts more than 1.5% VWC per 30 days against its neighbours in the same bay) ships with the 3.1 backend release, on the same day.
        4. Your v3 pilot: we propose to skip v3 and give you 3.1 directly, bays 3 and 4 first.

        See you on 2 July at 09:00.

        Best regards,
        Maya
        """),
    M("hendrik", ["maya"], "2026-06-19 16:10", cc=["lotte", "asa", "ruben"], body="""
        Maya,

        Thanks for the update. The 20 new probes read in line with the gutter scale this week, within 1 percentage point, which confirms your story: they haven't had time to collect salt yet.

        Skipping v3 and going straight to 3.1 in August is fine with us. Bays 3 and 4 first, then 1 and 2 after two weeks if all is well.

        Hendrik
        """),
)

thread(
    "groenveld-visit-report", "Visit report 2 July and plan for the calibration drift (CS-2291)",
    M("maya", ["hendrik"], "2026-07-03 16:10", cc=["lotte", "asa", "ruben", "tomas"], long=True,
      att=[PDF("Groenveld_drift_analysis_CS-2291_2026-07.pdf",
               "Calibration drift at Groenveld Kwekerij - analysis and plan (CS-2291)",
               ["Fernwood Labs B.V. - 3 July 2026 - author: Maya Lindqvist",
                "140 Rootline v2 sensors, 4 bays, stone wool. Drift +3.1% VWC over 8 weeks",
                "Root cause: salt build-up, no EC compensation in firmware",
                "Fix: firmware 3.1 with EC compensation, release 12 August 2026",
                "Target: drift under 2% VWC over 90 days. Review: 19 November 2026"])],
      body="""
        Dear Hendrik,

        Thank you for your time and for the coffee yesterday. Below is our written summary of the visit on Thursday 2 July and of the whole investigation, with the plan for the coming months. The attached PDF contains the same content with Åsa's charts; you're welcome to share it with your growers.

        1. Summary

        Since about March 2026, the Rootline v2 sensors in your greenhouse have shown an upward drift in their readings: on average +3.1% VWC over 8 weeks, and up to +4.4 percentage points in bay 3 in week 21. As a result your growers irrigated less than needed, and some plants in bay 3 showed stress in May. The cause is salt building up around the probes in the high-EC bays, combined with the fact that our firmware has no EC compensation. We will fix this with firmware 3.1, which will be released on Wednesday 12 August.

        2. What we measured before the visit

        Åsa analysed 90 days of readings of all 140 sensors together with the EC export from your climate computer:
        - Bays 3 and 4, which run an EC between 4.6 and 5.2 mS/cm, drift about three times faster than bays 1 and 2 at about 3.5 mS/cm.
        - The correlation between slab EC and drift rate per sensor is 0.78.
        - Sensor age does not matter: units from 2023 and 2025 drift the same in the same bay.
        - Temperature adds a small effect above 28 degrees C, only in the afternoon.

        3. What we saw on site

        Together with Wendy, Ruben measured 12 sensors in bays 3 and 4 against our reference probe kit and took slab EC readings with the handheld meter. The slab EC in bay 4 was 5.1 mS/cm at the probe positions. The 12 sensors overestimated the water content by 2.8 to 4.0 percentage points. Ruben found a thin white salt film on the probes he pulled out, and none on the 20 probes we replaced on 12 June. Those 20 still read within 1 percentage point of your gutter scale.

        4. Root cause

        Rootline sensors measure the dielectric permittivity of the slab with a capacitive probe and convert it into water content. Dissolved salts also influence that measurement, and a salt film directly on the probe influences it most. Our calibration curves were made on substrates with an EC between 2.0 and 3.5 mS/cm, and the firmware does not correct for EC at all. At the EC levels in your bays 3 and 4, which are entirely normal for generative tomato steering, the error grows week by week as the salt accumulates.

        What we ruled out:
        - Damaged probe coating: Ruben cut open two probes from bay 3, and the coating was intact.
        - Sensor age or production batch: no relation in the data.
        - The temperature compensation table: it contributes a little above 28 degrees C, and we'll correct it in the same release, but it's not the main cause.

        5. Why we didn't catch this earlier

        Our calibration lab tests only covered the EC range of typical substrates, not the high end. And we had no monitoring that compares a sensor with its neighbours over time; we relied on growers noticing that something was off. That's not good enough, and it's the part we're changing first.

        6. What we are changing

        a. Firmware 3.1, release Wednesday 12 August: an EC compensation coefficient per sensor. The sensor gets the EC of its bay from your climate computer through our cloud every 15 minutes and corrects its reading. In the lab, with your bay 3 data, the error drops from +3.4 to +0.6 percentage points.

        b. Drift alert, live with the 3.1 backend release on the same day: the platform flags any sensor whose 7-day median drifts more than 1.5% VWC per 30 days against its neighbours in the same bay. The alert goes to your grower on duty by text message and to our support team. With this rule, bay 3 would have been flagged in the second week of April.

        c. Calibration tests: from now on our lab also tests every firmware release on slabs with an EC of 5 and 6 mS/cm.

        d. Our target, which is also one of our company goals for this quarter: drift under 2% VWC over 90 days at Groenveld with firmware 3.1.

        7. Rollout at Groenveld

        As agreed, you skip v3 and get 3.1 directly: bays 3 and 4 on Monday 17 August, and bays 1 and 2 two weeks later, on Monday 31 August, if the first two weeks look good. Ruben will be on site on 17 August to check 10 sensors against the reference probes after the update.

        8. Compensation

        The 20 replacement probes (EUR 760) are on us, as promised. In addition, we waive the subscription for the 72 sensors in bays 3 and 4 for the third quarter, EUR 2,580 in total. Tomás (in cc) has approved this.

        9. Next steps

        - We continue the Friday updates until the 90-day target is met.
        - Lotte remains your contact for everything commercial; Åsa and I for the data.
        - We'd like to hold the 90-day review at your site on Thursday 19 November at 10:00, when 3.1 has been running for three months in bays 3 and 4.

        Once again my apologies for the trouble this caused your growers, and thank you for your patience and for the precise data. It helped us find a problem that other high-EC growers would have run into as well.

        Best regards,
        Maya
        """),
    M("hendrik", ["maya"], "2026-07-06 08:40", cc=["lotte", "asa", "ruben", "tomas"], body="""
        Maya,

        Thank you for the thorough report. This is what I needed, and I appreciate that you wrote honestly about why your tests missed it. I've forwarded the PDF to my growers and to our crop advisor.

        The plan is clear: bays 3 and 4 on 17 August, bays 1 and 2 on 31 August, and the review on Thursday 19 November at 10:00. The waived subscription is appreciated.

        One practical question: the EC data from our Priva computer goes to your cloud through which connection? Our IT contractor, Mark van Rijn, wants to know which port and which account, because he's strict about the firewall.

        Hendrik
        """),
    M("maya", ["hendrik"], "2026-07-06 10:15", cc=["lotte", "asa", "ruben", "tomas"], body="""
        Hendrik,

        Good question. The EC values won't come through your firewall at all: Priva offers a cloud API, and Åsa will read the EC per bay from there with a read-only account that your IT contractor creates for us. Nothing needs to be opened on your side.

        Åsa will send Mark a one-page description this week, including which data we read (only EC per bay, every 15 minutes) and how long we keep it.

        Best regards,
        Maya
        """),
)

thread(
    "kaida-quote-revd", "Quotation KD-Q-26-0317: Rootline main board Rev D, batch 2",
    M("wei", ["ruben"], "2026-03-17 10:25", cc=["maya"], att=[PDF(
        "KD-Q-26-0317_Fernwood_Rootline_Rev_D.pdf",
        "Shenzhen Kaida Circuits - Quotation KD-Q-26-0317",
        ["Customer: Fernwood Labs B.V., Rotterdam", "Part: Rootline main board Rev D, 4L FR-4 TG150, 1.0 mm, ENIG, 6-up panel",
         "PCBA turnkey excl. SX1262 radio module (consigned)", "3,000 pcs: USD 2.84 / pc", "5,000 pcs: USD 2.61 / pc",
         "MOQ 2,000 pcs. No NRE (stencil and test files from batch 1).",
         "Lead time 19 working days. Valid until 30 April 2026."])], body="""
        Dear Ruben,
        Dear Maya,

        It was a pleasure to meet Ruben at Embedded World last week. As promised, please find attached our quotation KD-Q-26-0317 for batch 2 of the Rootline main board Rev D: PCB fabrication and turnkey SMT assembly, excluding the SX1262 radio modules, which you consign as before.

        Board: 4 layers, FR-4 TG150, 1.0 mm, ENIG, 6 boards per panel.

        Unit price (PCBA, turnkey):
        - 3,000 pcs: USD 2.84 per board
        - 5,000 pcs: USD 2.61 per board
        Minimum order quantity: 2,000 pcs.
        No NRE: the stencil and your flying-probe file from batch 1 are reused.
        Lead time: 19 working days after deposit, plus 6-8 days by air, DDP Rotterdam at USD 0.09 per board.
        Payment: 30% deposit with order, 70% before shipment.
        Quotation valid until 30 April 2026.

        For batch 2 we add a second AOI step after reflow at no cost, to bring first-pass yield above your 98% target.

        Best regards,
        Wei Zhang
        """),
    M("ruben", ["maya"], "2026-03-18 09:40", quote=False, att=[XLSX(
        "PCB_quote_comparison_RevD_batch2.xlsx", [
            ["Supplier", "Unit price 3k", "Currency", "MOQ", "Lead time (days)", "Landed EUR/pc"],
            ["Shenzhen Kaida Circuits", 2.84, "USD", 2000, 19, 2.93],
            ["Brabant PCB (Eindhoven)", 3.70, "EUR", 500, 10, 3.70],
            ["Liantong Electronics (rev B supplier)", 3.05, "USD", 5000, 25, 3.12],
        ])], body="""
        Hi Maya,

        I compared the Kaida quote for batch 2 with the two alternatives; spreadsheet attached. For 3,000 boards:

        - Shenzhen Kaida Circuits: USD 2.84 per board, landed cost about EUR 2.93 including air freight and duties (0% for PCBAs).
        - Brabant PCB in Eindhoven: EUR 3.70 per board, about 26% more, MOQ only 500, lead time 10 working days.
        - Liantong, our old rev B supplier: USD 3.05, landed about EUR 3.12, but their MOQ is now 5,000 and the lead time 25 days.

        My recommendation: stay with Kaida for batch 2. Their batch 1 yield (97.2%) was below target, but they owned it and the extra AOI step is in the quote. Brabant PCB is the best candidate for a European second source later.

        I think there's some room on the price; the quote is valid until 30 April, so they want the order.

        Ruben
        """),
    M("maya", ["wei"], "2026-03-19 14:10", cc=["ruben"], body="""
        Dear Wei,

        Thank you for the quotation, and for meeting Ruben in Nuremberg. We'd like to order batch 2 with Kaida.

        Our forecast is 3,000 boards now and around 5,000 more in the second half of the year. With that in mind, we'd like to propose:

        - USD 2.70 per board at 3,000 pcs
        - a written commitment to a first-pass yield of at least 98%, reported with every shipment
        - a lower MOQ for follow-up orders, so we can order smaller batches in the quiet months

        If we can agree on this, Ruben will send a purchase order next week.

        Kind regards,
        Maya Lindqvist
        """),
    M("wei", ["maya"], "2026-03-20 16:30", cc=["ruben"], body="""
        Dear Maya,

        Thank you for the clear proposal. I discussed it with our general manager this morning. Our best offer:

        - USD 2.76 per board at 3,000 pcs (USD 2.58 at 5,000 pcs)
        - MOQ reduced from 2,000 to 1,500 pcs for follow-up orders
        - first-pass yield target of 98% in writing, with the yield report in every shipment
        - price valid until 30 June 2026

        USD 2.70 is below our cost for this board with ENIG and the extra AOI step, so I hope you understand we cannot go lower.

        Best regards,
        Wei
        """),
    M("maya", ["wei"], "2026-03-23 09:05", cc=["ruben"], body="""
        Dear Wei,

        Thank you, we accept: USD 2.76 per board at 3,000 pcs, MOQ 1,500 pcs for follow-up orders, the 98% first-pass yield target with a yield report in every shipment, valid until 30 June 2026.

        Ruben will send purchase order FL-PO-2026-044 today. We'll consign the 3,000 SX1262 modules from our stock; they can ship to you this week.

        Kind regards,
        Maya
        """),
    M("wei", ["maya"], "2026-03-24 11:15", cc=["ruben"], body="""
        Dear Maya, dear Ruben,

        We received PO FL-PO-2026-044, thank you! Our proforma invoice KD-PI-26-0412 for the deposit (30% of USD 8,280, so USD 2,484) will follow from our finance department today.

        Planning: production starts as soon as the consigned SX1262 modules arrive, and the 3,000 boards ship around 28 April by air, DDP Rotterdam.

        Best regards,
        Wei
        """),
)

thread(
    "kaida-batch2-shipped", "Rev D batch 2 shipped: 3,000 pcs, DHL 4820 1937 55",
    M("wei", ["ruben"], "2026-04-28 15:20", cc=["maya"], att=[
        JPG("RevD_batch2_panel_top.jpg", "Rootline main board Rev D batch 2, panel top side"),
        JPG("RevD_batch2_packing.jpg", "Rev D batch 2, 3,000 pcs packed in ESD trays")], body="""
        Dear Ruben,

        Batch 2 of the Rootline main board Rev D (PO FL-PO-2026-044, 3,000 pcs) was shipped today by DHL, DDP Rotterdam, tracking number 4820 1937 55. Expected delivery at your office: Tuesday 5 May.

        Yield report: first-pass yield 98.1% (batch 1: 97.2%). The second AOI step caught 41 boards with solder bridges on the QFN, all reworked and retested. All 3,000 boards passed the flying-probe test with your file. X-ray voiding on the QFN packages is below 15% on all sampled boards.

        Production took 19 working days. Photos of a panel and of the packing are attached.

        Best regards,
        Wei
        """),
    M("ruben", ["wei"], "2026-05-06 10:05", cc=["maya"], body="""
        Dear Wei,

        The boards arrived yesterday, Tuesday 5 May, exactly as planned. Thank you for the detailed yield report.

        We've run our own functional test fixture on the first 600 boards: 600 out of 600 pass (sleep current, radio interface, moisture front end). The C14 pad change we made for Rev D is holding too: no tombstoning at all, where the Rev C pilot had it on several boards.

        We'll finish the remaining 2,400 boards this week and send you a short report.

        Best regards,
        Ruben
        """),
    M("maya", ["wei"], "2026-05-06 14:45", cc=["ruben"], body="""
        Dear Wei,

        Thank you; 98.1% first-pass yield meets the target we agreed, and our own test results are excellent. Please pass our thanks on to your production team.

        In the spirit of being transparent with you: for supply-risk reasons, we decided in April to qualify a European second source for the next board revision (Rev E) in 2027. This is not a comment on Kaida's quality; we intend to keep Kaida as our main supplier.

        Kind regards,
        Maya
        """),
    M("wei", ["maya"], "2026-05-07 09:30", cc=["ruben"], body="""
        Dear Maya,

        Thank you for the kind words and for telling us openly about the second source; we understand, many of our European customers do the same.

        One reminder for planning: our factory closes for about three weeks around Chinese New Year. For deliveries in February or March 2027, please place orders before 10 January 2027.

        Best regards,
        Wei
        """),
)

thread(
    "fw-1184-battery-drain", "RC2 soak: 3 of 12 units lost 9% battery in 3 days (FW-1184)",
    M("priya", ["maya", "daan"], "2026-05-29 17:40", att=[CSV(
        "rc2_soak_battery_trend.csv",
        "unit,rack_position,rssi_dbm,battery_pct_26may,battery_pct_29may\n"
        "S01,front,-87,100,100\nS04,middle,-96,100,100\nS08,middle,-101,100,99\n"
        "S10,far end,-117,100,91\nS11,far end,-118,100,91\nS12,far end,-119,100,91\n")], body="""
        Hi Maya, hi Daan,

        Something is wrong with RC2. The 72-hour soak on the 12 units in the rack finished this afternoon, and all functional checks passed, but when I plotted the battery trend per unit three of them stand out: S10, S11 and S12 dropped from 100% to 91% in three days. The other nine are flat, as they should be.

        A healthy sensor loses less than 1% per week. At this rate those three would be empty in about five weeks.

        What the three have in common: they sit at the far end of the rack, with the weakest signal to the gateway (RSSI around -118 dBm). So my guess is something in the retry or rejoin logic when uplinks are not acknowledged.

        CSV with the trend attached. I filed it as FW-1184. I don't think we can sign off RC2 like this.

        Priya
        """),
    M("daan", ["priya", "maya"], "2026-05-30 13:15", body="""
        I came in this morning to look at it, and I can reproduce it on the bench. With the board behind two metal cabinets (RSSI about -118 dBm), the Nordic PPK2 shows 4.6 mA average current instead of the expected 18 uA sleep current. After an uplink that gets no ACK, the radio never goes back to sleep.

        It's almost certainly the new rejoin path from PR #431, my feature. When the third retry fails, we call lora_rejoin() from the timeout callback and open an RX window for the Join Accept, and I suspect nothing puts the radio back to sleep if that window times out. I'll confirm on Monday with a debug build.

        Sorry. I tested the rejoin feature a lot, but always next to the gateway.

        Daan
        """),
    M("maya", ["daan", "priya"], "2026-05-30 15:40", body="""
        Thank you both for jumping on this on a Saturday. Priya, the trend graph is exactly why we do soak tests; nobody would have spotted three units out of twelve with only pass/fail results.

        Daan, no need to apologise; we'll look at how this got through in a postmortem, not at who wrote it.

        Plan: Daan confirms the root cause on Monday morning. I've booked a go/no-go call with Tomás for Monday 1 June at 16:00. I also have to correct something myself: on Thursday I told Noor that v3 was "on track" without checking the soak data. I'll tell her today that the date is at risk.

        Maya
        """),
    M("daan", ["maya", "priya"], "2026-06-01 11:20", body="""
        Root cause confirmed with a debug build. The state machine only returns the radio to sleep on the success path and on the normal RX-timeout path. The rejoin path never registers its own timeout handler, so after a failed Join Accept window the SX1262 stays in continuous receive at about 4.5 mA until the next uplink. With weak signal that uplink often fails too and we re-enter the same path. Units with good signal almost never miss an ACK, which is why only 3 of 12 showed it.

        Fix proposal:
        - every exit from an RX state goes through one function, radio_enter_sleep(), and debug builds assert that the radio is asleep when the MCU enters STOP2;
        - rejoin backs off exponentially: 1 minute, 5 minutes, 30 minutes, then every 6 hours;
        - unit tests for the radio state machine covering every exit path.

        I can have the PR ready on Wednesday 3 June.

        Daan
        """),
)

thread(
    "v3-release-date", "Rootline v3: release moves from 9 June to 23 June",
    M("maya", ["tomas", "lotte", "noor"], "2026-06-01 17:30", cc=["daan", "priya"], body="""
        Hi all,

        Outcome of today's go/no-go call with Tomás: the public release of Rootline v3 moves from Tuesday 9 June to Tuesday 23 June.

        Reason: during the RC2 soak test Priya found a battery-drain bug in the new LoRa rejoin path (FW-1184). With weak signal, the radio stays in receive mode after a failed rejoin and the sensor draws 4.6 mA instead of 18 uA; the affected units would have been empty in about five weeks. Daan confirmed the root cause this morning. No units in the field are affected, because v2 uses the old driver.

        New timeline:
        - Wed 3 June: fix merged
        - Thu 4 June: RC3 built; a 7-day soak starts on 24 units, 8 of them in a Faraday bag to force weak signal
        - Thu 11 June: soak result
        - Fri 19 June: release readiness check
        - Tue 23 June: release, staged rollout 5% / 25% / 100% over seven days

        For GreenTech (9-11 June) we demo RC3 on the stand and say "available to all customers end of June". Noor, please prepare a short customer message; about 14 accounts were told "June", and 23 June is still June.

        Maya
        """),
    M("tomas", ["maya", "lotte", "noor"], "2026-06-01 18:05", cc=["daan", "priya"], body="""
        Confirmed from my side. As I said on the call, the only question that matters is what it would have cost us if a customer had found this: a recall of every v3 unit, basically. Two weeks is cheap.

        Please say clearly at the all-hands that Priya found the bug. And one question: the three pilot customers asked for adaptive sampling. Can they get v3 a week early?

        I'll inform the board on Thursday.

        Tomás
        """),
    M("maya", ["tomas", "lotte", "noor"], "2026-06-02 08:40", cc=["daan", "priya"], body="""
        I'd rather not, Tomás. An early release to the pilots means a separate rollout and a week less of soak data before they get it. If something is still wrong, we find it at our most enthusiastic customers.

        What I can offer: Van Dijk Boomkwekerij and Agro Lansingerland go into the first 5% wave on 23 June, so they get v3 on release day. The third pilot, Groenveld Kwekerij, is a different story: with the calibration drift investigation running there, I want to reschedule their v3 pilot until we have EC compensation in 3.1. I'll propose a new date to Hendrik by 26 June.

        Maya
        """),
    M("lotte", ["maya", "tomas"], "2026-06-02 10:15", cc=["noor", "daan", "priya"], body="""
        Fine with 23 June, and with the pilots in the first wave.

        I'll update the roadmap page and the GreenTech booth texts today: the stand will show RC3 with "Rootline v3: available end of June". Marketing had already printed the flyers with 9 June, so they'll reprint; I'll tell them this is the last time we print a date before the soak test is done.

        Noor, can you have the customer message draft ready by Thursday? I'd like to review it.

        Lotte
        """),
    M("noor", ["lotte", "maya", "tomas"], "2026-06-03 09:30", cc=["daan", "priya"], body="""
        Draft customer message below, feedback welcome:

        "Dear customer, the Rootline v3 firmware update will be released on Tuesday 23 June instead of 9 June. During our final testing we found an issue that would have reduced battery life for sensors with weak signal, and we chose to fix it before release. You don't need to do anything: your sensors update automatically within seven days after 23 June. v3 brings adaptive sampling after irrigation and much smaller updates."

        It goes to all 41 accounts, not only the ones who were told June, so nobody hears it second-hand. Planned send date: Friday 5 June, 09:00.

        Noor
        """),
)

GH_HEADERS = {
    "List-ID": "fernwood/rootline-fw <rootline-fw.fernwood.github.com>",
    "List-Unsubscribe": "<mailto:unsub+rootline-fw@reply.github.com>",
    "X-GitHub-Sender": "daanv",
}
GH_TO = ["fernwood/rootline-fw <rootline-fw@noreply.github.com>"]

thread(
    "rootline-fw-pr482", "[fernwood/rootline-fw] Return radio to sleep on every RX exit, back off rejoin (PR #482)",
    M("github", GH_TO, "2026-06-02 16:05", cc=["maya", "Review requested <review_requested@noreply.github.com>"],
      sig=False, alt=True, headers={**GH_HEADERS, "X-GitHub-Reason": "review_requested"}, body="""
        @daanv requested your review on: fernwood/rootline-fw#482 Return radio to sleep on every RX exit, back off rejoin.

        Fixes FW-1184 (battery drain with weak signal, introduced in #431).

        When an uplink got no ACK after the third retry, lora_rejoin() opened an RX window for the Join Accept from the timeout callback, but the rejoin path never registered its own timeout handler. The SX1262 stayed in continuous RX (about 4.5 mA) until the next uplink.

        Changes:
        - all RX exits now go through radio_enter_sleep(); debug builds assert that the radio sleeps when the MCU enters STOP2
        - rejoin backs off exponentially: 1 min, 5 min, 30 min, then every 6 hours
        - new unit tests for the radio state machine, one per exit path

        Bench (PPK2, board at -118 dBm): 17 uA average over 10 minutes after a forced failed rejoin (was 4.6 mA).

        View, comment on, or merge this pull request online at:
        https://github.com/fernwood/rootline-fw/pull/482

        Commit summary: 4 files changed (src/radio/sx1262_drv.c, src/mac/mac_fsm.c, src/mac/rejoin.c, test/test_radio_fsm.c), 142 additions, 37 deletions.
        """),
    M("github", GH_TO, "2026-06-03 08:12", cc=["maya"], from_name="Priya Nair", quote=False,
      sig=False, alt=True, headers={**GH_HEADERS, "X-GitHub-Reason": "review_requested"}, body="""
        @priyanair approved this pull request.

        Verified on 4 bench units inside a Faraday bag (RSSI between -116 and -121 dBm) with the PPK2: 16-19 uA average over 10 minutes after forced failed rejoins, and the back-off intervals are exactly 1, 5 and 30 minutes. Also ran the join/rejoin regression suite overnight: 300 forced rejoins, zero cases of the radio staying in RX.

        One nit: the STOP2 assertion message doesn't print the radio state, which would save time next time. Not blocking.

        Reply to this email directly or view it on GitHub:
        https://github.com/fernwood/rootline-fw/pull/482#pullrequestreview-2184471
        """),
    M("github", GH_TO, "2026-06-03 14:40", cc=["maya"], quote=False,
      sig=False, alt=True, headers={**GH_HEADERS, "X-GitHub-Reason": "subscribed"}, body="""
        Merged #482 into release/3.0.

        @daanv merged commit 9b2f6d1 into release/3.0. The assertion now prints the radio state, as suggested by @priyanair.

        CI passed on the merge commit: 1,206 unit tests including the 14 new radio state-machine tests, and the image is 201,336 bytes (limit 229,376). RC3 (v3.0.0-rc3) will be built from this commit tomorrow morning.

        Reply to this email directly or view it on GitHub:
        https://github.com/fernwood/rootline-fw/pull/482#event-17733019
        """),
)

thread(
    "rc3-soak-results", "RC3 7-day soak passed: worst unit 0.4% in 7 days",
    M("priya", ["maya", "daan"], "2026-06-11 16:20", cc=["lotte"], att=[CSV(
        "rc3_soak_summary.csv",
        "group,units,rssi_dbm_range,battery_drop_pct_7d_median,battery_drop_pct_7d_max,rejoins_ok\n"
        "open rack,16,-85 to -104,0.2,0.3,all\n"
        "faraday bag,8,-115 to -121,0.3,0.4,all\nALL,24,,0.2,0.4,all\n")], body="""
        Hi both,

        RC3 passed the 7-day soak (4-11 June), summary below and per group in the CSV:

        - 24 units, 8 of them inside the Faraday bag at -115 to -121 dBm to force weak signal.
        - Battery drop over 7 days: median 0.2%, worst unit 0.4% (one of the Faraday-bag units). Before the fix the weak-signal units lost 9% in three days.
        - Every forced rejoin succeeded, and the back-off intervals behave as designed.
        - HIL current test (PPK2, 10-minute average) on the release build: 18 uA, well under the 40 uA threshold.

        One cosmetic finding: FW-1191, the low-battery LED blink pattern is inverted (long-short instead of short-long). Not a blocker in my opinion.

        The second soak rack you approved in May made this possible; with only 12 slots we couldn't have run the Faraday-bag group next to the normal units.

        Priya
        """),
    M("maya", ["priya", "daan"], "2026-06-11 17:05", cc=["lotte"], body="""
        Excellent work, Priya, thank you. This is the result we needed, and the Faraday-bag group should become a permanent part of every soak from now on.

        Agree that FW-1191 is not a blocker. Daan, if the fix is a one-liner, put it in the release build; if it touches anything in the power management code, leave it for 3.1.

        I'll present these numbers at the readiness check on Friday 19 June.

        Maya
        """),
)

thread(
    "v3-go-no-go", "Release readiness Rootline v3.0.0: GO for Tuesday 23 June",
    M("maya", ["tomas", "lotte", "daan", "priya", "noor"], "2026-06-19 15:30",
      cc=["Fernwood Team <team@fernwoodlabs.nl>"], body="""
        Hi all,

        Outcome of today's readiness check: GO. Rootline v3.0.0 will be released on Tuesday 23 June.

        Checklist:
        - 7-day soak on 24 units including 8 weak-signal units: passed, worst unit 0.4% battery drop.
        - HIL current test on the final build: 18 uA average (threshold 40 uA).
        - Calibration tables checked against Ruben's reference probes: all within plus or minus 1% VWC.
        - Rollback: v2.8.4 still installs cleanly over v3; verified on three test units.
        - Signing: Daan and I sign the release build on the offline laptop in the lab on Tuesday at 08:30.

        Rollout plan:
        - Day 1, Tue 23 June: 5% of the fleet (internal units and friendly customers first)
        - Day 3, Thu 25 June: 25%, if the OTA failure rate stays below 0.5%
        - Day 7, Mon 29 June: 100%

        Stop criteria, pause immediately if: OTA failure rate above 0.5% in any stage, more than 3 connectivity tickets in 24 hours, or any unit losing more than 1% battery per day.

        Thanks everyone, especially Priya and Daan for the last three weeks.

        Maya
        """),
    M("tomas", ["maya"], "2026-06-19 16:02", cc=["lotte", "daan", "priya", "noor"], body="""
        Great news, congratulations all. Drinks on me on Tuesday 23 June at 17:30 on the roof terrace, once the first wave looks healthy.

        One request: please keep Groenveld Kwekerij out of the v3 rollout entirely for now. With the drift investigation still open and the site visit on 2 July, the last thing Hendrik needs is a firmware change he didn't ask for.

        Tomás
        """),
    M("noor", ["maya", "tomas"], "2026-06-19 16:40", cc=["lotte", "daan", "priya"], body="""
        Groenveld's 140 sensors are excluded in the rollout tool; I did that this afternoon, and Lotte has told Hendrik.

        The release announcement goes out to all other accounts on Monday 22 June at 09:00. My team covers the support inbox with two people on Tuesday and Wednesday, and we'll tag every ticket about connectivity so you can check the stop criterion.

        Noor
        """),
    M("maya", ["noor", "tomas"], "2026-06-19 17:05", cc=["lotte", "daan", "priya"], body="""
        Thanks Noor, perfect. One addition: two customers, Kwekerij Van Leeuwen and Bloemenhof Zuid, still run gateways on old Kerlink firmware that sometimes drops large downlinks. Please put them in the 100% wave, and ask them this week whether they're willing to update their gateways first. Daan can help them; it takes about ten minutes remotely.

        Maya
        """),
)

thread(
    "v3-rollout-status", "v3.0.0 rollout: status of the 5% stage",
    M("daan", ["maya"], "2026-06-23 16:10", cc=["priya", "lotte"], body="""
        Status of the 5% stage (opened at 10:00 after the signing):

        - 184 sensors selected, all 184 updated successfully; 2 at Van Dijk Boomkwekerij needed a second attempt (edge of gateway coverage) and finished at 14:20.
        - OTA failure rate: 0.0%.
        - Average delta update size: 34.8 kB (v2.8 full images were 210 kB). Median update time: 11 minutes.
        - No battery outliers at the 10:00, 14:00 and 17:00 dashboard checks.

        Unless something changes overnight I see no reason to hold the 25% stage on Thursday.

        Daan
        """),
    M("maya", ["daan"], "2026-06-23 17:00", cc=["priya", "lotte"], body="""
        That's a beautiful first day, thank you Daan. Go for the 25% stage on Thursday 25 June at 10:00 as planned.

        Please add one line to your daily update: the number of sensors that lose more than 1% battery per day since the update. That's our stop criterion for anything like FW-1184, and I want to see the number every day until the 100% stage is done.

        Now go up to the roof, Tomás is buying.

        Maya
        """),
    M("daan", ["maya"], "2026-06-26 09:30", cc=["priya", "lotte"], body="""
        25% stage (Thursday 25 June):

        - 917 sensors selected, 914 updated.
        - 3 failed and fell back to v2.8.4 automatically, as designed: an OTA failure rate of 0.33%, under the 0.5% stop criterion. All three are behind a Kerlink gateway with old firmware at a customer we hadn't identified yet (Tuinderij Westerlee); I'm helping them update the gateway today.
        - Connectivity tickets in 24 hours: 1. Sensors losing more than 1% battery per day: 0.

        Daan
        """),
    M("maya", ["daan"], "2026-06-28 20:15", cc=["priya", "lotte", "noor"], body="""
        Hi Daan,

        I've looked at the weekend numbers with Priya: no new failures, no battery outliers, and the Westerlee gateway is updated. Go for the 100% stage tomorrow, Monday 29 June, at 10:00.

        Noor, please send the heads-up to Kwekerij Van Leeuwen and Bloemenhof Zuid tonight; both updated their gateways last week.

        Maya
        """),
    M("daan", ["maya"], "2026-06-30 18:05", cc=["priya", "lotte", "noor", "tomas"], body="""
        Rollout complete.

        - 3,666 sensors were eligible (the whole fleet of 3,806 minus Groenveld's 140).
        - 3,512 run v3.0.0 tonight. The other 154 are sleeping in storage or have flat batteries; they update automatically when they reconnect.
        - OTA failure rate over all stages: 0.09% (3 fallbacks, all fixed after the Kerlink update at Westerlee).
        - Battery outliers: none. Connectivity tickets: 2 in total, both unrelated.

        v3 is out. I'm going home to sleep.

        Daan
        """),
)

def invite_html(title, when, where, organizer, guests, description, link):
    rows = "".join(f"<tr><td style=\"padding:2px 8px\">{htmlmod.escape(g)}</td></tr>"
                   for g in guests)
    return f"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>{htmlmod.escape(title)}</title></head>
<body style="font-family:Arial,Helvetica,sans-serif;font-size:14px;color:#222">
<p style="font-size:12px;color:#777">You have been invited to the following event.</p>
<h2 style="margin:4px 0">{htmlmod.escape(title)}</h2>
<table cellpadding="4" cellspacing="0" style="border-collapse:collapse">
<tr><th align="left">When</th><td>{htmlmod.escape(when)}</td></tr>
<tr><th align="left">Where</th><td>{htmlmod.escape(where)}</td></tr>
<tr><th align="left">Organizer</th><td>{htmlmod.escape(organizer)}</td></tr>
</table>
<p>{description}</p>
<p><b>Guests</b></p>
<table cellpadding="0" cellspacing="0">{rows}</table>
<p><a href="{link}">Yes</a> | <a href="{link}&amp;rsvp=maybe">Maybe</a> |
<a href="{link}&amp;rsvp=no">No</a> | <a href="{link}&amp;view=1">More options</a></p>
<p style="font-size:11px;color:#999">Invitation from Fernwood Calendar.<br>
You are receiving this email at maya@lindqvist.me because you are a guest on this event.</p>
</body></html>
"""


single(
    "cal-q1-okr-review", "Invitation: Q1 OKR review @ Tue 7 Apr 2026 14:00 - 16:00 (CEST)",
    M("calendar", ["maya"], "2026-03-31 09:02", sig=False, html_only=True,
      headers={"Reply-To": "Lotte Jansen <lotte@fernwoodlabs.nl>"},
      html=invite_html(
          "Q1 OKR review", "Tuesday 7 April 2026, 14:00 - 16:00 (CEST)",
          "Meeting room Kas, Fernwood Labs, Marconistraat 16, Rotterdam",
          "Lotte Jansen <lotte@fernwoodlabs.nl>",
          ["Tomás Ferreira", "Maya Lindqvist", "Noor El Amrani", "Femke de Graaf",
           "Ruben Kowalski", "Lotte Jansen"],
          "Quarterly review of the Q1 2026 OKRs. Every lead presents the score "
          "(0.0-1.0) for their key results in max. 10 minutes, followed by a "
          "first look at the Q2 objectives. Please fill in your scores in the "
          "OKR sheet before Monday 6 April, 17:00.",
          "https://calendar.fernwoodlabs.nl/event?eid=q1okr2026"),
      att=[ICS("invite.ics", uid="q1okr2026@fernwoodlabs.nl", summary="Q1 OKR review",
               start="20260407T140000", end="20260407T160000",
               location="Meeting room Kas, Marconistraat 16, Rotterdam",
               description="Quarterly review of the Q1 2026 OKRs.",
               organizer=("Lotte Jansen", "lotte@fernwoodlabs.nl"),
               attendees=[("Maya Lindqvist", "maya@lindqvist.me"),
                          ("Tomás Ferreira", "tomas@fernwoodlabs.nl")])]),
)

thread(
    "q1-okr-scores", "Q1 OKR scores: engineering input needed",
    M("lotte", ["maya"], "2026-04-01 11:20", body="""
        Hi Maya,

        Ahead of the Q1 review on Tuesday, I need the engineering scores in the OKR sheet by Monday 17:00. From my side I already see:

        - KR "Adaptive sampling feature complete by 6 Feb": done on 4 Feb, so 1.0.
        - KR "OTA delta updates merged by 13 Mar": merged on 18 Mar, five days late. 0.8?
        - KR "Field failure rate below 1.5%": I don't have the Q1 number yet.

        Can you fill in the rest, plus the two hiring KRs? Also, Tomás asked whether we can present the January frost returns as a learning rather than hiding them in the numbers. I agree; do you want to take five minutes for it?

        Lotte
        """),
    M("maya", ["lotte"], "2026-04-01 15:45", body="""
        Hi Lotte,

        Filled in. The numbers that were still missing:

        - Field failure rate Q1: 1.7% (target below 1.5%, start of the year 2.1%). Score 0.6. Most returns are still cracked housings from frost; the new H2 housing should fix that.
        - OTA delta updates: agree with 0.8.
        - Hiring KR "vacancies published by end of March": published 9 March, 1.0.
        - Customer escalations resolved within 5 working days: 9 of 12, so I scored it 0.7. The three slow ones were all waiting for replacement sensors from stock.

        And yes, I'll take five minutes for the frost returns: 38 sensors came back after the cold snap in the second week of January, almost all with a cracked housing seam. I'll show the teardown photos, because they make the case for the new housing better than any number.

        Maya
        """),
    M("lotte", ["maya"], "2026-04-08 09:10", cc=["tomas"], body="""
        Thanks for yesterday. For the record, the Q1 outcome: overall score 0.74 for the company, engineering 0.78. Tomás liked the frost-return story a lot and wants to use it at the all-hands on Friday 10 April.

        Agreed for Q2: the main engineering objective is "Ship Rootline v3 reliably", with KRs on the release date (9 June), an OTA failure rate below 0.5% and no battery anomalies after the update. The Q2 review is planned for Thursday 9 July.

        Lotte
        """),
)

single(
    "cal-q2-okr-review", "Invitation: Q2 OKR review @ Thu 9 Jul 2026 10:00 - 12:30 (CEST)",
    M("calendar", ["maya"], "2026-07-01 08:45", sig=False, html_only=True,
      headers={"Reply-To": "Lotte Jansen <lotte@fernwoodlabs.nl>"},
      html=invite_html(
          "Q2 OKR review + Q3 planning", "Thursday 9 July 2026, 10:00 - 12:30 (CEST)",
          "Meeting room Kas, Fernwood Labs, Marconistraat 16, Rotterdam (and Teams)",
          "Lotte Jansen <lotte@fernwoodlabs.nl>",
          ["Tomás Ferreira", "Maya Lindqvist", "Noor El Amrani", "Femke de Graaf",
           "Ruben Kowalski", "Daan Verhoeven", "Lotte Jansen"],
          "Scores for Q2, lessons learned from the v3 release and a first draft of "
          "the Q3 OKRs. Maya takes the notes this time. Lunch is ordered for "
          "12:30 (Broodzaak, vegetarian options included).",
          "https://calendar.fernwoodlabs.nl/event?eid=q2okr2026"),
      att=[ICS("invite.ics", uid="q2okr2026@fernwoodlabs.nl",
               summary="Q2 OKR review + Q3 planning",
               start="20260709T100000", end="20260709T123000",
               location="Meeting room Kas, Marconistraat 16, Rotterdam",
               description="Q2 OKR scores, v3 lessons learned, Q3 draft.",
               organizer=("Lotte Jansen", "lotte@fernwoodlabs.nl"),
               attendees=[("Maya Lindqvist", "maya@lindqvist.me"),
                          ("Daan Verhoeven", "daan@fernwoodlabs.nl")])]),
)

thread(
    "q2-okr-notes", "Notes: Q2 OKR review (9 July)",
    M("maya", ["tomas", "lotte", "noor", "femke", "ruben", "daan"], "2026-07-09 17:25", long=True, body="""
        Hi all,

        Here are my notes from this morning's Q2 OKR review. Corrections welcome until Monday; after that Lotte copies the final scores into the OKR sheet.

        Present: Tomás, Lotte, Noor, Femke, Ruben, Daan, Maya (notes). Priya and Åsa joined for their parts.

        1. Company score

        Overall Q2 score: 0.71 (Q1: 0.74). The drop is almost entirely the release date; everything else is at or above the Q1 level. As Tomás put it, Q2 was a firefighting quarter, and people felt it.

        2. Objective: Ship Rootline v3 reliably (owner: Maya)

        - KR1: Release v3 to all customers by 9 June. Result: released on 23 June, 100% stage opened on 29 June. Score 0.6. We agreed not to score this lower: the slip was a deliberate decision to fix FW-1184, taken the same day the root cause was confirmed.
        - KR2: OTA update failure rate below 0.5%. Result: 0.09% (3 fallbacks to v2.8.4 out of 3,515 attempts, all caused by old gateway firmware). Score 1.0.
        - KR3: No sensor loses more than 1% battery per day after the update. Result: met in every stage; not a single outlier. Score 1.0.
        - Objective score: 0.87.

        Lessons from the v3 release (discussion led by Priya and Daan; the full postmortem was written on 15 June):
        - FW-1184 was caught by the soak test, but only because Priya looked at battery trends and not just at pass/fail. The 72-hour soak only just showed it: the drain becomes obvious after about 48 hours.
        - All our bench power measurements ran next to the gateway. Weak-signal units in a Faraday bag are now part of every soak.
        - The rejoin feature (PR #431) had no written power budget, and its review focused on protocol correctness. Daan has added a power-state item to the PR template for radio code.
        - I told customer success "on track" on 28 May without checking the soak data. I won't do that again.

        3. Objective: Customers trust Rootline data (owners: Noor and Lotte)

        - KR1: Field failure rate below 1.5%. Result: 1.5% in Q2 (Q1: 1.7%). Score 0.7. The new H2 housing with the overmoulded seal is planned for the autumn.
        - KR2: NPS from 31 to 40. Result: 38 in the June survey (112 responses). Score 0.8.
        - KR3: Customer escalations resolved within 5 working days. Result: 0.4. The Groenveld drift (CS-2291) has been open since 26 May. We have the cause (salt build-up, no EC compensation) and a plan, sent to Hendrik on 3 July, but it is not solved until 3.1 is in his greenhouse.
        - Support tickets tagged "wrong reading" in Q2: 57. That's the baseline for the Q3 goal.
        - Objective score: 0.63.

        4. Objective: Build the team for 2027 (owner: Femke)

        - KR1: Two embedded engineers signed by the end of Q2. Result: the offers to Henrik Dahl and Fatima Bennani go out this week, so nothing signed yet. Score 0.5.
        - KR2: Everybody has a personal development plan. Result: 21 of 25. Score 0.8.
        - Team health: the "I can focus" score dropped from 3.9 to 3.4.
        - Objective score: 0.65.

        5. Supply chain (Ruben, no OKR this quarter)

        Kaida's Rev D batch 2 (3,000 boards) arrived on 5 May with a first-pass yield of 98.1%, above our 98% target; batch 1 was 97.2%. Our functional test found 0 failures on all 3,000 boards. Landed cost came out at EUR 2.89 per board. As decided with Tomás in April, Ruben will start qualifying a European second source for Rev E in 2027.

        6. Q3 OKRs (agreed between Tomás and me on 22 June, recap)

        - O1: Rootline v3 is running reliably across the fleet: 80% of active sensors on 3.x by 30 September, OTA failure rate below 0.5%, median projected battery life of at least 3.0 years (v2: 2.6), fewer than 1% of sensors silent for more than 24 hours.
        - O2: Customers trust our readings again: drift at Groenveld under 2% VWC over 90 days, EC compensation shipped in 3.1 by 15 August, drift alerts that detect a drifting probe within 14 days, and 40% fewer "wrong reading" tickets than in Q2.
        - O3: The team grows without slowing down: both hires signed by 15 September, first merged PR within 10 working days of starting, a written onboarding guide by 1 September, and an "I can focus" score of at least 4.0.
        - O4: Fewer surprises in releases: a 7-day soak with weak-signal units for every major release, the HIL current test in CI on every merge by 31 July, and no release slipping more than 5 days.
        - Not this quarter: the v4 hardware design (starts in Q4; Daan does a Zephyr spike in August only).

        7. Decisions

        - Release-date KRs will from now on be written as "release candidate ready by X" plus a separate quality KR, so we stop punishing good decisions to slip.
        - Wednesday mornings are no-meeting time for the whole engineering team, starting next week.
        - Daan's Zephyr spike runs from 10 to 21 August; the result is a written recommendation, not code in main.

        8. Action items

        - Lotte: final scores into the OKR sheet by Tuesday 14 July.
        - Priya: the HIL current test (10-minute PPK2 average, fail above 40 uA) in CI by 31 July.
        - Ruben: quotes from two moulders for the H2 housing by 31 July.
        - Femke: offers to Henrik and Fatima by Friday 10 July, signed by Tomás.
        - Daan: bootloader README and walkthrough video before 1 September.
        - Maya: onboarding guide for firmware engineers by 1 September; weekly Friday updates to Groenveld.
        - Noor: rerun the NPS survey in the first week of October.

        Next OKR review: Thursday 8 October, 10:00, same room.

        Maya
        """),
    M("tomas", ["maya"], "2026-07-09 19:02", cc=["lotte", "noor", "femke", "ruben", "daan"], body="""
        Thanks Maya, excellent notes as always.

        One correction under 4: the offers go out this week, yes, but I sign them on Thursday 9 July, tonight in fact, so Femke can send them tomorrow morning. Small thing, but I'd like the record to be right.

        And I fully support the change in how we write release-date KRs. We did the right thing in June, and the score shouldn't tell a different story.

        Tomás
        """),
    M("ruben", ["maya"], "2026-07-10 08:40", cc=["tomas", "lotte", "noor", "femke", "daan"], body="""
        Small correction under 5: the functional test covered all 3,000 boards of batch 2, correct, but it took us until 12 May, because we had to share the fixture with the soak-rack build. Still 0 failures.

        For the H2 housing I'll ask quotes from two injection moulders: Kunststoffen Brabant in Helmond and our current supplier in Poland. I'll have both before 31 July.

        Ruben
        """),
)

thread(
    "henrik-fatima-offers", "Henrik Dahl signed: starts 1 September",
    M("femke", ["maya"], "2026-07-13 15:10", cc=["tomas"], body="""
        Hi Maya,

        Henrik Dahl signed his contract this afternoon! Details:

        - Start date: Tuesday 1 September 2026.
        - Salary: EUR 79,000 gross per year plus holiday allowance.
        - Relocation: he and his partner move from Göteborg to Rotterdam in August; we pay the moving company up to EUR 2,500 as agreed.
        - Laptop and a PPK2 are ordered; buddy is Daan.

        Fatima Bennani has the offer since Friday and asked for a week; her references were excellent, as you know. I'll chase her on Monday if I haven't heard anything.

        Femke
        """),
    M("maya", ["femke"], "2026-07-13 15:45", cc=["tomas"], body="""
        Fantastic news, thank you Femke!

        For Henrik's first week I'd like a day in Bleiswijk at the test greenhouse, and I'll do a 1:1 with him on his first afternoon. Daan has Fridays off from September, so on his first Friday Henrik pairs with Ruben on the HIL rig.

        If Fatima comes back with a question about salary: we have EUR 500 of room within the approved total, not more. Her start date of 15 September is fine; it's just before the offsite in Utrecht, which is a nice way to meet everyone.

        Maya
        """),
    M("femke", ["maya"], "2026-07-21 10:05", cc=["tomas"], body="""
        Fatima Bennani accepted! She signed this morning at EUR 76,500 gross per year, no further negotiation.

        Her start date is Tuesday 15 September, after her two-month notice period at the smart-meter company. Priya is her onboarding buddy, as planned; they already had a coffee together after the bench session and got along well.

        I've also called Mei Tanaka to tell her, kindly. She asked us to keep her in mind for a senior role in 2027.

        Femke
        """),
    M("tomas", ["femke", "maya"], "2026-07-21 10:30", body="""
        Well done, both of you. Two strong hires, EUR 155,500 together, so within the EUR 78,000 per role the board approved. That was the one hiring goal I was worried about this year.

        Femke, please make sure both get the welcome pack and a Fernwood hoodie in their size before the offsite.

        Tomás
        """),
)

thread(
    "embedded-shortlist", "Shortlist Embedded Engineer II: candidates for first interviews",
    M("femke", ["maya"], "2026-05-06 11:00", cc=["daan"], body="""
        Hi Maya, hi Daan,

        The vacancy closed on Sunday with 61 applications. After screening, I propose these six for a first interview:

        1. Henrik Dahl (Göteborg), firmware for e-bike motor controllers; wants to move to Rotterdam because his partner got a job at Erasmus MC.
        2. Fatima Bennani (Eindhoven), six years at a smart-meter company, shipped two battery-powered products.
        3. Mei Tanaka (Amsterdam), very strong C, radio experience mostly BLE.
        4. Thijs Kok (Rotterdam), three years, consumer electronics.
        5. Joost van Dijk (Breda), LoRaWAN on his CV.
        6. Jasper Wouters (Tilburg), three years, industrial sensors.

        First interviews from 12 to 15 May, 45 minutes with you two and 30 minutes with me. I've blocked slots in your calendars.

        Femke
        """),
    M("maya", ["femke"], "2026-05-06 14:20", cc=["daan", "ruben", "tomas"], body="""
        Thanks Femke, good shortlist. Proposal for the process after the first round:

        - Take-home exercise (Daan): a 3-hour debugging task on a small I2C sensor driver with a planted bug.
        - Bench session (Ruben): 60 minutes with a real board that doesn't respond, a logic analyser and a current probe.
        - Values interview (Tomás): 30 minutes.
        - I do the overall interview and the final call.

        Everybody scores on the same five dimensions, 1 to 5: C, debugging, low-power, communication and collaboration. Please write your scores down before the debrief, so we don't influence each other.

        Maya
        """),
    M("femke", ["maya"], "2026-05-18 16:30", cc=["daan", "ruben"], body="""
        First round done. Five candidates continue to the take-home and the bench session; Jasper withdrew because he accepted another offer.

        Schedule for the bench sessions with Ruben and the values interviews with Tomás:
        - Henrik Dahl: Monday 8 June
        - Fatima Bennani: Tuesday 9 June
        - Mei Tanaka: Wednesday 10 June
        - Thijs Kok and Joost van Dijk: Thursday 11 June

        The take-homes go out this Friday; candidates get a week. I know early June is busy with the release, so I kept every session to one afternoon.

        Femke
        """),
    M("maya", ["femke"], "2026-06-19 09:15", cc=["daan", "ruben", "tomas"], body="""
        Hi Femke,

        Debrief done, all scores are in. Our recommendation:

        - Henrik Dahl, average 3.6: strong hire. Found the planted I2C bug (repeated-start handling) in 40 minutes and also spotted that our sample code never checked the NACK. Offer EUR 79,000; he proposed to start on 1 September.
        - Fatima Bennani, average 3.4: hire. Best answer of anyone on where the microamps go, and an excellent explainer. Offer EUR 76,500; notice period of two months, so earliest start 15 September.
        - Mei Tanaka, average 3.2: hire, but as backup. Her salary expectation is EUR 92,000, well above our band maximum of EUR 82,000, and Tomás doesn't want an exception this round.
        - Thijs Kok, 2.6: no hire, but send kind, specific feedback; Ruben offered to write the bench part.
        - Joost van Dijk, 2.0: strong no hire.

        The two offers together are EUR 155,500, under the EUR 156,000 the board approved. Offers out by Friday 10 July at the latest, signed by Tomás. I'll call Fatima's references, Daan calls Henrik's.

        Maya
        """),
)

thread(
    "utrecht-offsite-plan", "Team offsite in Utrecht, Thursday 17 September",
    M("maya", ["tomas", "femke"], "2026-07-14 10:00", body="""
        Hi Tomás, hi Femke,

        Proposal for this year's offsite: Thursday 17 September in Utrecht, the whole company, including Henrik and Fatima, who will both have started by then.

        As agreed, your office handles the venue and catering, Femke, and I own the content. Draft agenda:

        - 09:30 Coffee, welcome from Tomás
        - 09:45 "Where we are": Rootline v3 in numbers (me, 20 minutes)
        - 10:15 Customer story: the Groenveld drift, what went wrong and what we learned (Åsa and Lotte)
        - 11:15 Workshop 1: "What slows us down?", groups of five
        - 12:30 Lunch
        - 13:30 Welcome the new people: short intros, two truths and a lie
        - 14:00 Workshop 2: Rootline v4, Daan presents the result of his Zephyr spike
        - 15:30 Walk or canal boat on the Oudegracht (optional, weather permitting)
        - 17:00 Wrap-up: three commitments for Q4, each with an owner
        - 18:30 Dinner

        Rules for the day: laptops closed except for presenters, no customer calls; Noor's team covers support.

        Budget estimate: about EUR 3,400 including venue, dinner and train tickets.

        Maya
        """),
    M("tomas", ["maya", "femke"], "2026-07-14 13:20", body="""
        Yes to all of it. Budget: go up to EUR 3,800 if needed; I'd rather have a good dinner than save EUR 400.

        The canal boat is fine too if the weather plays along, at about EUR 18 per person. And I like that the Groenveld story is on the agenda before lunch, when everybody is still fresh. We should be proud of how we handled it, and honest about how we got there.

        Tomás
        """),
    M("femke", ["maya", "tomas"], "2026-07-15 09:40", body="""
        Het Zandhuis is booked for Thursday 17 September, 09:00 to 17:30: main room "De Kas" (nice coincidence) plus two break-out rooms for the workshops. Day package EUR 62 per person including coffee, lunch and afternoon snacks: EUR 1,674 for 27 people.

        Dinner: Restaurant De Kromme Rijn, 18:30, a set three-course menu at EUR 48 per person, so EUR 1,296. They do vegetarian, vegan and gluten-free.

        Canal boat: a private boat for 27 people for one hour costs EUR 486, which is exactly the EUR 18 per person.

        Train: NS group tickets, roughly EUR 380.

        Total estimate: EUR 3,836 with the boat; I'll ask De Kromme Rijn for a small discount to stay under EUR 3,800.

        Femke
        """),
    M("maya", ["femke", "tomas"], "2026-07-15 11:05", body="""
        Thanks Femke, great work. Two additions:

        1. Priya has a family event that afternoon; she'll leave after lunch and join us again for dinner. Please keep her seat at De Kromme Rijn.
        2. For workshop 1, could you print A1 posters of the v3 numbers (fleet share, OTA failures, battery telemetry, tickets)? I'll send you the figures in the first week of September.

        Could you collect dietary requirements in August?

        Maya
        """),
    M("femke", ["maya"], "2026-08-25 14:00", cc=["tomas"], body="""
        Update for the offsite: final headcount is 27, including Henrik and Fatima.

        Dietary requirements so far: 3 vegetarian, 1 vegan, 1 gluten-free. I've passed them to Het Zandhuis and De Kromme Rijn. The posters are ordered at the print shop on the Witte de With, ready on 14 September.

        De Kromme Rijn gave us 5% off the dinner, so we're at about EUR 3,770 in total.

        The calendar invite goes out this week; travel details follow in the week before.

        Femke
        """),
)

single(
    "cal-utrecht-offsite", "Invitation: Fernwood offsite Utrecht @ Thu 17 Sep 2026 09:30 - 21:30 (CEST)",
    M("calendar", ["maya"], "2026-08-27 10:15", sig=False, html_only=True,
      headers={"Reply-To": "Femke de Graaf <femke@fernwoodlabs.nl>"},
      html=invite_html(
          "Fernwood offsite Utrecht 2026", "Thursday 17 September 2026, 09:30 - 21:30 (CEST)",
          "Het Zandhuis, Utrecht (15 minutes' walk from Utrecht Centraal along the Oudegracht); "
          "dinner at Restaurant De Kromme Rijn",
          "Femke de Graaf <femke@fernwoodlabs.nl>",
          ["All Fernwood Labs staff (27)", "including Henrik Dahl and Fatima Bennani"],
          "Full-day company offsite: Rootline v3 in numbers, the Groenveld customer story, "
          "workshops on what slows us down and on Rootline v4, canal boat if the weather is good. "
          "Dinner from 18:30. Travel details follow in a separate mail. The office in Rotterdam "
          "is closed that day; Noor's team covers support.",
          "https://calendar.fernwoodlabs.nl/event?eid=offsite2026"),
      att=[ICS("invite.ics", uid="offsite2026@fernwoodlabs.nl", summary="Fernwood offsite Utrecht 2026",
               start="20260917T093000", end="20260917T213000",
               location="Het Zandhuis, Utrecht",
               description="Company offsite. Dinner at De Kromme Rijn from 18:30.",
               organizer=("Femke de Graaf", "femke@fernwoodlabs.nl"),
               attendees=[("Maya Lindqvist", "maya@lindqvist.me")])]),
)

OFFSITE_TRAVEL_TEXT = """
    Hi all,

    One week to go until our offsite in Utrecht on Thursday 17 September! Practical details:

    Travel (NS group ticket, you'll get a QR code from me on Wednesday):
    - Meet at Rotterdam Centraal, platform 12, at 08:00.
    - Train: Intercity direct to Utrecht Centraal, departs 08:13, arrives 08:50.
    - From Utrecht Centraal it's a 20-minute walk or bus 2 (direction Museumkwartier) to Het Zandhuis.
    - Coming from elsewhere? Buy your own ticket and declare it, and tell me so I don't wait for you.

    Programme:
    - 09:00 coffee, 09:30 start with Tomás
    - 12:30 lunch in the garden
    - 16:30 wrap-up
    - 18:30 dinner at Restaurant De Kromme Rijn
    - last direct train back to Rotterdam around 23:10

    Bring: laptop and charger, a warm jacket for the garden, and one photo from your first year at Fernwood (for the quiz).

    Questions? Ask me or Maya.

    Femke
    """

OFFSITE_TRAVEL_HTML = """<html><head><meta charset="utf-8"></head>
<body style="font-family:Calibri,Arial,sans-serif;font-size:14px">
<p>Hi all,</p>
<p>One week to go until our offsite in Utrecht on <b>Thursday 17 September</b>! Practical details:</p>
<h3>Travel</h3>
<table border="1" cellpadding="6" cellspacing="0" style="border-collapse:collapse">
<tr style="background:#e8f3e8"><th>What</th><th>When</th><th>Where</th></tr>
<tr><td>Meet</td><td>08:00</td><td>Rotterdam Centraal, platform 12</td></tr>
<tr><td>Intercity direct</td><td>08:13 &rarr; 08:50</td><td>Rotterdam Centraal &rarr; Utrecht Centraal</td></tr>
<tr><td>Walk / bus 2</td><td>08:55</td><td>Utrecht Centraal &rarr; Het Zandhuis (20 min)</td></tr>
</table>
<p>You'll get the NS group ticket QR code from me on Wednesday. Coming from elsewhere?
Buy your own ticket and declare it, and tell me so I don't wait for you.</p>
<h3>Programme</h3>
<ul><li>09:00 coffee, 09:30 start with Tom&aacute;s</li><li>12:30 lunch in the garden</li>
<li>16:30 wrap-up</li><li>18:30 dinner at Restaurant De Kromme Rijn</li>
<li>last direct train back to Rotterdam around 23:10</li></ul>
<p><b>Bring:</b> laptop and charger, a warm jacket for the garden, and one photo from your
first year at Fernwood (for the quiz).</p>
<p>Questions? Ask me or Maya.</p>
<p>Femke</p>
<div style="color:#666">-- <br>Femke de Graaf<br>People &amp; Operations | Fernwood Labs<br>Working days: Mon, Tue, Thu</div>
</body></html>
"""

OFFSITE_TRAVEL_TEXT = """
    Hi all,

    One week to go until our offsite in Utrecht on Thursday 17 September! Practical details:

    Travel (NS group ticket, you'll get a QR code from me on Wednesday):
    - Meet at Rotterdam Centraal, platform 12, at 08:10.
    - Train: the 08:25 intercity to Utrecht Centraal, arriving at 09:02.
    - From Utrecht Centraal it's about a 15-minute walk to Het Zandhuis, along the Oudegracht.
    - Coming from Delft, Amsterdam or elsewhere? Travel directly, declare your ticket, and tell me so I don't wait for you.

    Programme:
    - 09:30 coffee and welcome from Tomás
    - 12:30 lunch
    - 15:30 canal boat on the Oudegracht, if the weather is good
    - 17:00 wrap-up
    - 18:30 dinner at Restaurant De Kromme Rijn
    - last direct train back to Rotterdam around 23:10

    Bring: a warm jacket for the boat, and one photo from your first year at Fernwood (for the quiz). Laptops stay closed, except for the presenters.

    Questions? Ask me or Maya.

    Femke
    """

OFFSITE_TRAVEL_HTML = """<html><head><meta charset="utf-8"></head>
<body style="font-family:Calibri,Arial,sans-serif;font-size:14px">
<p>Hi all,</p>
<p>One week to go until our offsite in Utrecht on <b>Thursday 17 September</b>! Practical details:</p>
<h3>Travel</h3>
<table border="1" cellpadding="6" cellspacing="0" style="border-collapse:collapse">
<tr style="background:#e8f3e8"><th>What</th><th>When</th><th>Where</th></tr>
<tr><td>Meet</td><td>08:10</td><td>Rotterdam Centraal, platform 12</td></tr>
<tr><td>Intercity</td><td>08:25 &rarr; 09:02</td><td>Rotterdam Centraal &rarr; Utrecht Centraal</td></tr>
<tr><td>Walk</td><td>09:05</td><td>Utrecht Centraal &rarr; Het Zandhuis, along the Oudegracht (15 min)</td></tr>
</table>
<p>You'll get the NS group ticket QR code from me on Wednesday. Coming from Delft, Amsterdam or
elsewhere? Travel directly, declare your ticket, and tell me so I don't wait for you.</p>
<h3>Programme</h3>
<ul><li>09:30 coffee and welcome from Tom&aacute;s</li><li>12:30 lunch</li>
<li>15:30 canal boat on the Oudegracht, if the weather is good</li><li>17:00 wrap-up</li>
<li>18:30 dinner at Restaurant De Kromme Rijn</li>
<li>last direct train back to Rotterdam around 23:10</li></ul>
<p><b>Bring:</b> a warm jacket for the boat, and one photo from your first year at Fernwood (for the quiz).
Laptops stay closed, except for the presenters.</p>
<p>Questions? Ask me or Maya.</p>
<p>Femke</p>
<div style="color:#666">-- <br>Femke de Graaf<br>People &amp; Operations | Fernwood Labs<br>Working days: Mon, Tue, Thu</div>
</body></html>
"""

thread(
    "offsite-travel", "Offsite 17 September: travel and programme",
    M("femke", ["Fernwood Team <team@fernwoodlabs.nl>"], "2026-09-10 11:30", cc=["maya"],
      body=OFFSITE_TRAVEL_TEXT, html=OFFSITE_TRAVEL_HTML),
    M("maya", ["femke"], "2026-09-10 12:05", body="""
        Thanks Femke, very clear. Three small things:

        1. Fatima still lives in Eindhoven until her move in October, so she'll come directly to Utrecht by train and be at Het Zandhuis around 09:15.
        2. Priya leaves after lunch for her family event and joins us again at De Kromme Rijn at 18:30.
        3. Noor's team covers support that day, so nobody else needs to keep an eye on the inbox. Could you add that line to the reminder on Wednesday? Otherwise half the team will have Slack open under the table.

        Maya
        """),
    M("femke", ["maya"], "2026-09-10 14:40", body="""
        All three sorted. Fatima is on my list as "arriving directly", and I'll keep lunch for her; Priya's seat at dinner is reserved.

        I'll add the support line to Wednesday's reminder, in bold. The weather forecast for Thursday looks good so far, 19 degrees and dry, so the canal boat is on.

        Femke
        """),
)

thread(
    "offsite-notes", "Offsite notes: Utrecht, 17 September",
    M("maya", ["Fernwood Team <team@fernwoodlabs.nl>"], "2026-09-18 16:40", long=True, body="""
        Hi everyone,

        Thank you for a great day in Utrecht yesterday. Here are the notes, so that the people who were in the other workshop group, and everybody's future self, know what we decided. Slides and photos of the posters are in the shared drive under Offsite 2026.

        1. Welcome (Tomás)

        Revenue for the first eight months is EUR 1.62 million, 11% above plan, mostly thanks to the pilot customers expanding after v3. We have 4,290 sensors in the field now (3,806 in June). Cash runway is 22 months without new funding. Tomás repeated that the Series A conversations start in the spring of 2027.

        2. Rootline v3 in numbers (me)

        - Fleet share on firmware 3.x: 94% of active sensors (our Q3 goal was 80% by 30 September).
        - OTA update failure rate: 0.3% across the v3 and 3.1 rollouts (v2.8 had 1.2%).
        - Battery telemetry: the median projected battery life is now 3.3 years, against 2.6 years on v2.
        - Support tickets tagged "wrong reading": 29 so far this quarter, against 57 in the whole of Q2.
        The posters are hanging in the kitchen at the office for anyone who wants to look again. The number I'm proudest of is the battery one: it comes from real field telemetry of more than 3,000 sensors, not from a lab projection, and it is the first time we can show customers a measured improvement instead of a promise.

        3. Customer story: Groenveld (Åsa and Lotte)

        Lotte told the story from the customer side: three months of slowly creeping readings, growers who trusted our numbers and irrigated less, and stressed plants in bay 3 in May. Åsa showed the analysis: drift three times faster in the high-EC bays, a correlation of 0.78 with slab EC, and no effect of sensor age. Since firmware 3.1 (12 August) the drift in bays 3 and 4 is 0.5% VWC in the first month, well on the way to the 2% over 90 days we promised. The sentence from Hendrik Groenveld that Lotte quoted, and that most of us wrote down: "A sensor that is wrong is worse than no sensor, because I stop looking."

        What we learned: our lab calibration only covered normal EC levels, and we had no monitoring that compares a sensor with its neighbours. Both are fixed now, with the EC test slabs in the lab and Åsa's drift alert, which has since caught four drifting probes at two other customers.

        4. Workshop 1: "What slows us down?"

        Five groups, each brought back their top three. The three that came up in almost every group:
        - Waiting for code review: pull requests wait 2.3 working days on average before the first review.
        - Meetings everywhere: the no-meeting Wednesday mornings we started in July are respected by engineering, but not by the rest of the company.
        - The HIL rig: only one rig, so test runs queue up, especially before releases.

        5. Welcome Henrik and Fatima

        Henrik Dahl (started 1 September) and Fatima Bennani (started 15 September) introduced themselves with two truths and a lie. Nobody guessed that Henrik really has a certificate as a moose-hunting guide, and almost everybody believed Fatima's lie about once having met Ada Lovelace's great-great-granddaughter. Henrik merged his first change on his seventh working day; Fatima already has a pull request open after three days, for the power budget spreadsheet of the HIL rig.

        6. Workshop 2: Rootline v4

        Daan presented the result of his Zephyr spike (10-21 August) on the current Rev D board. The port of the LoRa driver took six days; sleep current with Zephyr was 17 uA against 18 uA on our bare-metal scheduler; the image grew by 38 kB. His written recommendation: build the v4 firmware on Zephyr, and keep the bare-metal scheduler for the 3.x line until v4 replaces it.

        Decision: GO for Zephyr on v4. The v4 hardware design starts in October, as planned in the Q3 goals. Ruben and Daan own the v4 kick-off on Monday 5 October; Henrik joins the Zephyr work, Fatima the power budget.

        7. Canal boat

        The boat went out at 15:30 with 24 of us on board, in full sunshine. Tomás steered for five minutes; we survived.

        8. Wrap-up: three commitments for Q4

        a. A first code review within one working day for every pull request. Owner: Daan.
        b. No-meeting Wednesday mornings for the whole company, not only engineering. Owner: Tomás, with Femke.
        c. A second HIL rig and a booking calendar for it by 30 November. Owner: Priya, with Ruben.

        9. Costs

        The final bill for the whole day came to EUR 3,740, under the EUR 3,800 budget, including the boat.

        Next offsite: Lotte proposed Ghent for spring 2027; Femke will check venues for Thursday 18 March 2027.

        Thanks again, everyone. Questions or corrections, reply to me directly.

        Maya
        """),
    M("tomas", ["maya"], "2026-09-18 18:20", cc=["Fernwood Team <team@fernwoodlabs.nl>"], body="""
        Thank you Maya, and thank you all for a great day.

        One correction: the revenue figure for January to August is EUR 1.62 million, correct, but it's 11% above the original plan, not above last year. Compared with the same period in 2025, we grew 46%. I'd like that in the notes too, because it's the number the investors will ask about.

        And for the record: Hendrik's sentence about the sensor that is wrong is now on the whiteboard in the kitchen.

        Tomás
        """),
    M("lotte", ["maya"], "2026-09-21 09:05", cc=["Fernwood Team <team@fernwoodlabs.nl>"], body="""
        Thanks for the notes, Maya.

        About Ghent for the next offsite: I checked, and 18 March 2027 is a Thursday, so that works. There's a nice venue in an old textile mill near the Portus Ganda marina, about 15 minutes from Gent-Sint-Pieters station.

        And about commitment (b): I'll be the first to move my Wednesday-morning customer calls. Product has been the worst offender.

        Lotte
        """),
)

P["henrik"] = Person("Henrik Dahl", "henrik@fernwoodlabs.nl",
                     sig="Henrik Dahl\nEmbedded Engineer | Fernwood Labs")

thread(
    "henrik-first-week", "Your first week at Fernwood (1-4 September)",
    M("maya", ["henrik"], "2026-08-27 16:30", cc=["femke", "daan"], body="""
        Hi Henrik,

        Welcome to Fernwood Labs! We're looking forward to Tuesday. Here's what your first week looks like:

        - Tue 1 Sep, 09:30: Femke welcomes you at the office (laptop, badge, accounts). 13:30: 1:1 with me. 15:00: Daan walks you through the firmware repository; watch his 45-minute bootloader walkthrough video before that if you can.
        - Wed 2 Sep: the whole day in Bleiswijk at our test greenhouse with Priya. You'll install four sensors yourself; bring shoes that can get dirty.
        - Thu 3 Sep: your first ticket, a small one: FW-1207, the sensor reports the wrong firmware version string in the join request after an OTA update. Daan pairs with you.
        - Fri 4 Sep: Daan works four days a week from September and is off on Fridays, so you'll spend the day with Ruben on the HIL rig. 16:00: Friday drinks.

        Your buddy is Daan; ask him anything, including the things you think you should already know.

        Maya
        """),
    M("henrik", ["maya"], "2026-08-28 08:50", cc=["femke", "daan"], body="""
        Hej Maya,

        Thank you, this looks great, especially the greenhouse day. I'll be there at 09:30 on Tuesday.

        We moved into our flat in Kralingen last weekend; my partner started at Erasmus MC on Monday. Two practical questions: is there bicycle parking at the office? And should I bring my own logic analyser, or is there a spare one in the lab? I have a Saleae at home that I'm very attached to.

        Looking forward to it,
        Henrik
        """),
    M("maya", ["henrik"], "2026-08-28 10:10", cc=["femke", "daan"], body="""
        Hi Henrik,

        Welcome to Rotterdam! Yes, there's a covered bike shed in the courtyard. From Kralingen it's about 20 minutes by bike, along the Maas if you take the scenic route.

        Bring the Saleae if you like it, but there's no need: Ruben ordered a new one for you, plus a PPK2 current probe, and both will be on your desk on Tuesday.

        See you then!

        Maya
        """),
)

thread(
    "groenveld-new-greenhouse", "Order: 40 Rootline sensors for our new greenhouse",
    M("hendrik", ["noor"], "2026-09-29 08:15", cc=["maya"], body="""
        Dear Noor,

        As I told Lotte during your visit in July: we are finishing a new greenhouse on the Hoogweg (1.4 hectare, cucumbers on stone wool), and I want Rootline in it from day one. Since 3.1 the drift in bays 3 and 4 is under control, so my growers trust the sensors again.

        Our order:
        - 40 Rootline sensors, preferably with the new frost-resistant H2 housing you mentioned,
        - installation by your people, because the planting date is 19 October and our own team is busy,
        - the drift alert with text messages to our grower on duty, as in the other greenhouses.

        The sensors must be installed and tested before Thursday 15 October. Please send a quotation.

        Regards,
        Hendrik
        """),
    M("noor", ["hendrik"], "2026-09-29 13:40", cc=["maya"], body="""
        Dear Hendrik,

        Wonderful to hear, thank you for your trust. Our quotation:

        - 40 Rootline sensors (H2 housing) at EUR 149 each, minus 10% volume discount: EUR 5,364 excl. VAT.
        - Subscription: EUR 11.95 per sensor per month, as for your existing sensors.
        - Installation and test: free of charge this time.
        - Drift alert with text messages: included.

        Ruben and our new colleague Henrik can install on Tuesday 13 October from 08:00, so two days before your deadline. Could you confirm the order and the date?

        Kind regards,
        Noor
        """),
    M("maya", ["noor", "hendrik"], "2026-09-29 15:10", body="""
        Dear Hendrik, dear Noor,

        One addition from engineering: the first production batch with the H2 housing comes from the moulder on Monday 12 October, so your new greenhouse will have some of the very first H2 units in the field. They ship with firmware 3.1, so EC compensation is on from day one. Ruben will do the incoming inspection on the 12th and take the 40 best units to you on the 13th.

        Because the H2 housing is new, I'd like to check the data of the new greenhouse myself during the first two weeks. Hendrik, is it OK if I join Ruben for the first hour on the 13th?

        Best regards,
        Maya
        """),
    M("hendrik", ["maya"], "2026-09-30 07:55", cc=["noor"], body="""
        Maya, Noor,

        Order confirmed: 40 sensors, EUR 5,364 excl. VAT, installation on Tuesday 13 October from 08:00. Our purchase order number is GK-2026-0917; please put it on the invoice.

        Maya, you're welcome on the 13th. Same procedure as last time: gate 3, safety shoes, and Wendy will meet you. Coffee is at 10:00 in the canteen, join us.

        Hendrik
        """),
)

thread(
    "q3-okr-review", "Q3 OKR review on Thursday: pre-read",
    M("lotte", ["maya", "tomas", "noor", "femke"], "2026-10-05 14:30", body="""
        Hi all,

        The Q3 OKR review is on Thursday 8 October at 10:00 in Kas. Please fill in your scores in the sheet by Wednesday noon.

        Reminder of the engineering objectives Maya agreed with Tomás in June:
        - O1: Rootline v3 is running reliably across the fleet
        - O2: Customers trust our readings again
        - O3: The team grows without slowing down
        - O4: Fewer surprises in releases

        New this time: each owner brings one slide with the single most important lesson of the quarter. No slide decks, one slide.

        Lotte
        """),
    M("maya", ["lotte"], "2026-10-06 17:50", cc=["tomas", "noor", "femke"], body="""
        Hi Lotte,

        Engineering scores are in the sheet. Summary:

        - O1: 94% of active sensors on 3.x (target 80%), OTA failure rate 0.3% (target below 0.5%), median projected battery life 3.3 years (target 3.0), sensors silent for more than 24 hours 0.8% (target below 1%). Score 1.0.
        - O2: EC compensation shipped in 3.1 on 12 August (target 15 August); drift alerts caught four drifting probes within 9 to 12 days; "wrong reading" tickets down 49% (29 against 57 in Q2). Groenveld drift is 0.9% VWC after 50 days, so on track, but the 90-day result only comes in November. Score 0.9.
        - O3: Henrik and Fatima both signed in July and started on 1 and 15 September; first merged PR on their day 7 and day 4; onboarding guide published on 28 August. The "I can focus" score went from 3.4 to 3.8, short of 4.0. Score 0.8.
        - O4: 7-day soak with weak-signal units for every major release; HIL current test live in CI since 28 July; no release slipped more than 5 days. Score 1.0.

        My one lesson for the slide: the HIL current test in CI caught a 9 uA regression after a flash write (FW-1233) in September, before it was merged. That's exactly the bug class that cost us two weeks in June.

        Maya
        """),
    M("lotte", ["maya"], "2026-10-08 15:15", cc=["tomas", "noor", "femke"], body="""
        Thanks all for this morning. Outcome of the Q3 review:

        - Overall company score: 0.84, the best quarter so far (Q1 0.74, Q2 0.71).
        - Engineering: O1 1.0, O2 0.9, O3 0.8, O4 1.0.

        Q4 focus, agreed: the v4 hardware design (kick-off was on 5 October), cover for Åsa's parental leave from 1 November with a contractor for the ingest pipeline, the Groenveld 90-day review on 19 November, and the first meeting of the customer advisory board on 21 January 2027.

        Lotte
        """),
)

# ------------------------------------------------------------ PERSONAL ----

section("home")

KITCHEN_QUOTE_PDF = PDF(
    "Offerte_2026-014_Lindqvist.pdf", "Offerte 2026-014 - Keukenrenovatie Heemraadssingel 214-C",
    ["De Vries Renovatie & Onderhoud - 9 maart 2026 - klant: M. Lindqvist",
     "Sloop en afvoer oude keuken en oude tegels: EUR 1.150",
     "Keukenkasten (corpussen) L-opstelling + hoge kast, leveren en plaatsen: EUR 4.600",
     "Loodgieterswerk (spoelbak blijft onder het raam), gasleiding afdoppen: EUR 1.450",
     "Elektra: groep inductie, groep oven, 8 dubbele wcd, LED-circuit: EUR 1.780",
     "Arbeid: fronten, werkblad-onderbouw, tegelwerk achterwand, plafond afzuigkap: EUR 3.900",
     "Stucwerk en schilderwerk: EUR 1.370", "Totaal incl. 21% btw: EUR 14.250",
     "Geldig tot 30 april 2026"])

KITCHEN_QUOTE = """
        Hi Maya,

        As promised after my visit last Thursday, here is the quote for your kitchen. I wrote the mail in English; the PDF is in Dutch, but the numbers are the same.

        Quote 2026-014, all amounts including 21% VAT:
        - Removing the old kitchen and the old tiles, and disposal: EUR 1,150
        - Cabinet carcasses for the L-shape plus the tall cabinet, supplied and fitted: EUR 4,600
        - Plumbing (sink stays under the window), capping the old gas pipe: EUR 1,450
        - Electrical: induction group, oven group, 8 double sockets, LED circuit under the wall cabinets: EUR 1,780
        - Labour: fitting your fronts, the worktop supports, tiling the backsplash, the ceiling for the extractor: EUR 3,900
        - Plastering and painting walls and ceiling: EUR 1,370
        Total: EUR 14,250

        Not included, as you asked: fronts, worktop, tiles, appliances, sink and tap. You buy those yourself and we fit them.

        Planning: my earliest free slot is from Monday 15 June; the work takes about three and a half weeks. The quote is valid until 30 April.

        Payment: 30% before the start, 60% after the tiling is done, 10% at delivery.

        Met vriendelijke groet,
        Bram
        """

thread(
    "kitchen-quote", "Offerte keukenrenovatie Heemraadssingel 214-C",
    M("bram", ["maya"], "2026-03-09 16:40", att=[KITCHEN_QUOTE_PDF], body=KITCHEN_QUOTE),
    M("maya", ["bram"], "2026-03-10 08:55", body="""
        Hi Bram,

        Thanks for the clear quote, and for writing in English. A few questions before I decide; I'm comparing three quotes, as I promised myself:

        1. What would it cost to move the sink to the party wall after all?
        2. Can the old radiator under the window be moved 40 cm to the left?
        3. Line 1 says "old tiles": do you remove them, or do I?
        4. The Wi-Fi repeater in the hallway is cabled through the kitchen wall. Can you put an Ethernet point in the new kitchen wall while it's open?
        5. The VvE has rules about noise. Which days and hours would your team work?

        Best,
        Maya
        """),
    M("bram", ["maya"], "2026-03-11 19:20", body="""
        Hi Maya,

        Answers:

        1. Moving the sink means a new drain through the floor of your neighbour below. Possible, but at least EUR 1,800 extra, and more if the VvE wants its own plumber. My advice: keep it under the window.
        2. Yes, the radiator can move 40 cm to the left; I'll do it for free as part of the plumbing.
        3. We remove the old tiles; that's included in line 1.
        4. Yes, an Ethernet point in the kitchen wall is EUR 85 extra, and we pull the cable to the meter cupboard.
        5. Monday to Friday, 08:00 to 17:00. Drilling and demolition only between 09:00 and 16:00, that's what most VvE's in Rotterdam ask.

        Groet,
        Bram
        """),
    M("maya", ["bram"], "2026-04-02 21:10", att=[PDF(
        "Offerte_2026-014_Lindqvist_getekend.pdf", "Offerte 2026-014 - getekend",
        ["Akkoord: M. Lindqvist, Rotterdam, 2 april 2026",
         "Spoelbak blijft onder het raam; radiator 40 cm naar links; UTP-punt keuken + EUR 85"])], body="""
        Hi Bram,

        I'm happy to go ahead with you. The other two quotes were EUR 13,600 and EUR 16,900, and yours was the only one with a clear plan for the ceiling extractor. The signed quote is attached, including the radiator and the Ethernet point (EUR 85). The sink stays under the window.

        I'll transfer the 30% deposit (EUR 4,275) in the first week of June, before the start on 15 June, and I'll inform the VvE about the works.

        Best,
        Maya
        """),
    M("bram", ["maya"], "2026-04-03 08:05", body="""
        Hi Maya,

        Thank you, great! The planning is confirmed: we start on Monday 15 June at 08:00. The team is me, Youssef (carpentry and tiling) and Gert (plumbing and gas).

        For the demolition waste we need a container on the street from 15 to 19 June; I arrange the permit with the municipality, the EUR 95 fee is included. I need the model of the ceiling extractor before we close the ceiling, and your tile choice by mid-May so there's time to order.

        Please empty the kitchen cupboards before the weekend of 13 June, and keep in mind that you won't have a working kitchen for a few weeks.

        Groet,
        Bram
        """),
    M("bram", ["maya"], "2026-04-03 08:40", reply_to=5, outlook=True, body="""
        Hi Maya,

        One more thing I forgot in my mail below: Gert has to shut off the water at the main tap in the basement at 07:45 on Monday 15 June, before the rest of the team arrives. Could you leave the key of your storage room with the caretaker on Friday 12 June?

        Groet,
        Bram
        """),
)

# Outlook's "Resend this message": a new Message-ID and Date, the same subject, body and PDF
single(
    "kitchen-quote-resend", "Offerte keukenrenovatie Heemraadssingel 214-C",
    M("bram", ["maya"], "2026-03-10 07:50", att=[KITCHEN_QUOTE_PDF], body=KITCHEN_QUOTE),
)

thread(
    "kitchen-tiles", "Tile choice for the kitchen",
    M("maya", ["bram"], "2026-05-10 20:30", att=[
        JPG("tegel_optie_A_mosa_warm_grey_15x15.jpg", "Option A: Mosa 15x15 Warm Grey gloss"),
        JPG("tegel_optie_B_zellige_groen.jpg", "Option B: handmade zellige-look green 10x10")], body="""
        Hi Bram,

        I've narrowed the backsplash tiles down to two options, photos attached (taken at Tegelhuis Delfshaven on Saturday):

        A. Mosa, 15 x 15 cm, colour "Warm Grey", gloss. Made in Maastricht.
        B. Handmade zellige-look tiles in green, 10 x 10 cm.

        The lower cabinets will be painted Farrow & Ball "Green Smoke" and the wall cabinets white, with a dark Dekton worktop, so I'm worried that option B is one green too many.

        Two questions: is a straight stack bond more work than the usual offset pattern, and what grout colour would you recommend?

        Best,
        Maya
        """),
    M("bram", ["maya"], "2026-05-11 07:50", body="""
        Hi Maya,

        With the Green Smoke fronts I would go for A; the zellige would fight with the cabinets. Zellige is also more work: the tiles are not all the same thickness, so it's about EUR 400 extra labour.

        Stack bond is the same price for me, no problem. For the grout I recommend light grey, not white: white goes yellow behind the hob within a year.

        Measure again, but I count about 3.8 m2 of backsplash. Order 10% extra for breakage and cuts.

        Groet,
        Bram
        """),
    M("maya", ["bram"], "2026-05-12 22:15", body="""
        Hi Bram,

        Decision made: option A, Mosa 15 x 15 "Warm Grey" gloss, in a straight stack bond with light grey grout. With 10% extra it's 4.2 m2, so I ordered 5 boxes at Tegelhuis Delfshaven today, together with grout and adhesive, for EUR 598 in total. They promised delivery in week 25, so before your tiling.

        The ceiling extractor is a Novy Pure'line, 30 cm; the installation sheet is attached to the order confirmation I forwarded last week.

        Best,
        Maya
        """),
    M("bram", ["maya"], "2026-05-13 08:30", body="""
        Hi Maya,

        Good choice, that will look calm and clean. The price stays EUR 14,250 plus the EUR 85 Ethernet point; stack bond costs nothing extra.

        Tiling is planned for the second week, after the plumbing, the electrics and the worktop. The Dekton supplier measures the worktop once the cabinets are in; they need 10 working days to make it, so that's the part of the planning I watch most closely.

        Groet,
        Bram
        """),
)

thread(
    "vve-kitchen-notice", "Kitchen renovation at 214-C, from 15 June",
    M("maya", ["kees"], "2026-05-20 19:45", body="""
        Dear Kees,

        I'd like to inform the VvE that my kitchen at Heemraadssingel 214-C will be renovated from Monday 15 June until about Wednesday 8 July. The contractor is De Vries Renovatie & Onderhoud (Bram de Vries, 06 1733 5290).

        Some practical points:
        - There will be a container on the street from 15 to 19 June; Bram arranges the permit.
        - The water has to be shut off for about two hours once, for the new connections. Is the main valve for the building in the basement?
        - The team works weekdays 08:00-17:00, with drilling only between 09:00 and 16:00.

        I know the roof scaffolding goes up in June as well. Are there other rules I should pass on to the contractor?

        Kind regards,
        Maya Lindqvist
        """),
    M("kees", ["maya"], "2026-05-21 10:20", body="""
        Dear Maya,

        Thanks for letting us know in good time. From the house rules (huishoudelijk reglement):

        - Noisy work only Monday to Friday between 08:30 and 17:30, never on weekends or public holidays. Bram's hours are fine.
        - Protect the stairs and the landing with floor protection; the stairwell was repainted last year.
        - A water shut-off must be announced at least 48 hours in advance with a notice in the hall. I'll put it up if you give me the date and time.
        - The main valve is in the basement storage room behind the bicycle shed. I have the key (flat 218-A); the contractor can pick it up from me.

        About the roof: the scaffolding goes up on 8 June on the courtyard side, so the container can stand on the street side without problems. Please ask Bram to keep the pavement free for the roofers' deliveries.

        Kees
        """),
    M("maya", ["kees"], "2026-05-21 21:30", body="""
        Dear Kees,

        Thank you, I'll forward all of this to Bram. The water shut-off will be on Wednesday 17 June, from 10:00 to 12:00. Could you put up the notice in the hall by Sunday 14 June at the latest?

        Gert, the plumber, will come to your door on 17 June at about 09:45 to pick up the key to the storage room, and bring it back the same day. And I'll ask Bram to keep the pavement free for the roofers.

        Kind regards,
        Maya
        """),
)

BRAM_DELAY_1252 = """
    Hi Maya,

    Here is the written update you asked for.

    New total for your kitchen: € 14,810 including VAT. That is the original quote of € 14,250, plus € 85 for the Ethernet point and € 475 for replacing the lead water pipe (I rounded the pipe down from € 560, because the Ethernet cable went through the same opening).

    Payments:
    - deposit (30% of the original quote): € 4,275 – received on 5 June, thank you
    - second payment after the tiling: € 9,054
    - last payment at delivery: € 1,481 (10% of the new total)

    The “old” planning is gone, so here is the new one: temporary board on the base cabinets so your sink works from Friday 26 June; Dekton worktop fitted on Wednesday 8 July; tiling 9–10 July; wall cabinets, extractor and finishing 13–16 July; delivery on Friday 17 July.

    Groet,
    Bram
    """

thread(
    "kitchen-delay", "Vertraging: tegels en loden leiding",
    M("bram", ["maya"], "2026-06-19 17:10", body="""
        Hi Maya,

        Two pieces of news from this week, one not so nice and one annoying.

        1. During the demolition on Tuesday we found an old lead water pipe in the wall behind the old sink. Lead pipes are not allowed any more for drinking water, and it would be unwise to tile over it. Gert can replace it with PEX (about 4 metres, up to the riser). Extra cost EUR 560 including VAT, and it takes one day.

        2. Tegelhuis Delfshaven called me: your Mosa "Warm Grey" tiles are backordered at the factory in Maastricht. The new delivery date is Monday 6 July instead of week 25. On top of that, the Dekton supplier can only measure the worktop after the base cabinets are in (24 June) and then needs 10 working days. So the worktop comes on 8 July, and the tiling can only start after that.

        That means delivery of the kitchen moves from Wednesday 8 July to Friday 17 July. I'm sorry; the tiles and the worktop are not in my hands, but I wanted to tell you right away.

        Groet,
        Bram
        """),
    M("maya", ["bram"], "2026-06-19 19:45", body="""
        Hi Bram,

        Thanks for telling me straight away.

        1. Please replace the lead pipe, of course. I'm actually glad you found it. EUR 560 is fine.
        2. The delay is disappointing but not your fault. Is there any way to get a working sink before the worktop arrives? Four weeks of washing dishes in the bathroom is the part I'm dreading most. I'm hosting my book club on 14 July, too.

        Best,
        Maya
        """),
    M("bram", ["maya"], "2026-06-20 09:30", body="""
        Hi Maya,

        Yes. We place the base cabinets on 22 to 24 June as planned, and then we put a temporary board on top with a cut-out for the sink, and connect the sink and the dishwasher. From Friday 26 June you'll have a working sink and dishwasher again, even if it doesn't look like a kitchen yet.

        Gert replaces the lead pipe on Monday 22 June. For your book club on 14 July: the worktop and the tiles will be in, only the wall cabinets and the extractor will still be missing.

        Groet,
        Bram
        """),
    M("maya", ["bram"], "2026-06-21 07:40", body="""
        Hi Bram,

        That's a good plan; a sink from 26 June makes a big difference. Could you send me a short written update with the new total amount and the new payment schedule? I want to keep my own overview straight, and my bank will ask for it when I pay the second instalment.

        Best,
        Maya
        """),
    M("bram", ["maya"], "2026-06-22 12:15", charset="windows-1252", cte="quoted-printable",
      body=BRAM_DELAY_1252),
    M("maya", ["kees"], "2026-06-19 20:10", reply_to=1, forward=True, sig=False, body="""
        Dear Kees,

        Forwarding Bram's mail below for the VvE board: his plumber found an old lead water pipe in my kitchen wall, and it runs up to the shared riser. If the riser or the other apartments' connections are lead as well, the board may want a plumber to check all 16 apartments. I'm happy to pass on Gert's number.

        Kind regards,
        Maya
        """),
)

thread(
    "kitchen-delivery", "Oplevering keuken + eindfactuur 2026-031",
    M("bram", ["maya"], "2026-07-17 16:30", att=[PDF(
        "Factuur_2026-031_Lindqvist.pdf", "Factuur 2026-031 - De Vries Renovatie & Onderhoud",
        ["Klant: M. Lindqvist, Heemraadssingel 214-C, Rotterdam",
         "Restbetaling oplevering (10%): EUR 1.481,00 incl. btw",
         "Betalen binnen 14 dagen op NL42 HAVN 0123 4567 89"])], body="""
        Hi Maya,

        Today we finished your kitchen; I hope you're as happy with it as we are. The final invoice 2026-031 is attached: EUR 1,481, the last 10%. Payment within 14 days.

        During the walk-through we found two small things (the "snag list"):
        1. The door of the tall cabinet next to the fridge hangs 2 mm lower than the others; the hinge needs adjusting.
        2. The silicone seam along the worktop at the window has an air bubble.

        Youssef will come back on Wednesday 22 July at 10:00 to fix both. You have 12 months of warranty on all our work, until 17 July 2027.

        Enjoy your new kitchen!

        Groet,
        Bram
        """),
    M("maya", ["bram"], "2026-07-17 20:05", body="""
        Hi Bram,

        Thank you so much, the kitchen is gorgeous. The Green Smoke cabinets with the dark worktop and the grey tiles are exactly what I hoped for, and I cooked the first real dinner on the induction hob tonight.

        Wednesday 22 July at 10:00 for the snags is fine; I'll work from home that day. I'll pay the final invoice as soon as the two points are fixed, I hope that's OK.

        Best,
        Maya
        """),
    M("bram", ["maya"], "2026-07-22 14:10", body="""
        Hi Maya,

        Youssef was there this morning: the hinge is adjusted and the silicone seam is redone. And thanks, I saw the payment of EUR 1,481 come in this afternoon, so everything is settled.

        If you're happy with our work, we'd really appreciate a review on Werkspot. And if anybody in your building needs a contractor, you know where to find us.

        Groet,
        Bram
        """),
)

VVE_LIST = {"List-ID": "Bewoners VvE Heemraadssingel 210-224 <bewoners.vve-heemraadssingel.nl>"}
VVE_TO = ["Bewoners Heemraadssingel 210-224 <bewoners@vve-heemraadssingel.nl>"]

thread(
    "vve-alv-maart", "Uitnodiging ALV VvE Heemraadssingel 210-224: dinsdag 24 maart 19:30",
    M("kees", VVE_TO, "2026-03-06 20:10", headers=VVE_LIST, att=[PDF(
        "Agenda_ALV_24-03-2026.pdf", "Agenda ALV VvE Heemraadssingel 210-224 - 24 maart 2026",
        ["1. Opening en vaststellen notulen 2025", "2. Dakrenovatie: offerte Dakwerken Rijnmond EUR 86.400",
         "3. Verhoging servicekosten van EUR 185 naar EUR 212 per maand per 1 juli",
         "4. Fietsenstalling", "5. Verkiezing penningmeester", "6. Rondvraag"])], body="""
        Beste bewoners,

        Hierbij nodig ik u uit voor de algemene ledenvergadering (ALV) op dinsdag 24 maart om 19:30 in de gemeenschappelijke ruimte in de kelder van nummer 210. De agenda zit als PDF in de bijlage.

        English summary for our international neighbours:

        The annual members' meeting is on Tuesday 24 March at 19:30 in the community room in the basement of number 210. The main points:

        - Roof renovation: we have a quote from Dakwerken Rijnmond for EUR 86,400 to replace the roofing and insulation. We propose to pay it from the reserve fund, which currently holds EUR 132,000.
        - Service costs: the board proposes to raise the monthly contribution from EUR 185 to EUR 212 per apartment from 1 July, to rebuild the reserve fund after the roof work.
        - Bicycle storage: proposal for 12 extra racks in the courtyard.
        - Election of a new treasurer, because Henk van Dam (222) is moving.

        If you cannot attend, you can give a proxy (volmacht) to another owner; the form is on the notice board in the hall. We need 9 of the 16 apartments present or represented for valid decisions.

        Met vriendelijke groet,
        Kees
        """),
    M("maya", ["kees"], "2026-03-07 10:25", body="""
        Dear Kees,

        Thank you for the invitation and the English summary. I'll be there on 24 March.

        One question about the roof renovation: is the board also considering solar panels while the roof is being redone anyway? With scaffolding already in place, adding panels would be much cheaper than doing it later, and with 16 apartments the shared electricity (lift, stairwell lights, pump) could probably be covered for a large part.

        If nobody has looked into it yet, I'm happy to help with a quick estimate before the meeting.

        Kind regards,
        Maya Lindqvist (214-C)
        """),
    M("kees", VVE_TO, "2026-03-27 21:40", reply_to=1, quote=False, headers=VVE_LIST, body="""
        Beste bewoners, dear neighbours,

        Here are the short minutes of the ALV of Tuesday 24 March. 13 of the 16 apartments were present, 2 were represented by proxy.

        Decisions:
        1. Roof renovation by Dakwerken Rijnmond for EUR 86,400, paid from the reserve fund: approved with 14 votes in favour and 1 against. The work starts with scaffolding in June.
        2. Service costs go from EUR 185 to EUR 212 per month per apartment, starting 1 July: approved. Please change your standing order before then.
        3. Bicycle storage: 12 extra racks in the courtyard, EUR 2,300: approved.
        4. New treasurer: Fatima Ouali (210-B), elected unanimously. Thank you Henk for eleven years!
        5. Solar panels (question from Maya Lindqvist, 214-C): a working group of Maya, Fatima and Ruud (216) will get two quotes for solar panels on the new roof and present them at an extra meeting before the summer.

        The full minutes will be on the notice board and in the shared folder.

        Met vriendelijke groet,
        Kees
        """),
)

thread(
    "vve-roof-scaffolding", "Dakrenovatie: steigers vanaf maandag 8 juni",
    M("kees", VVE_TO, "2026-05-26 19:05", headers=VVE_LIST, body="""
        Beste bewoners, dear neighbours,

        The roof renovation by Dakwerken Rijnmond starts soon. The scaffolding goes up on Monday 8 June and will stay until about Friday 17 July. The roofers work Monday to Friday from 07:30 to 16:30.

        What this means for you:
        - Balconies on the 3rd floor (apartments 214-C, 218-C, 222-C) will be partly behind netting; please remove plants and furniture from the outer edge by Sunday 7 June.
        - Windows on the top floor may not be opened during the tar work in week 26.
        - The solar panels the working group proposed (18 panels, EUR 11,900, approved at the extra meeting of 12 May) will be installed in the last week, 13-17 July.

        Questions: call me or Dakwerken Rijnmond (project leader Ahmed Bouzid, 010 233 8710).

        Kees
        """),
    M("maya", ["kees"], "2026-05-26 21:30", body="""
        Dear Kees,

        Thanks for the update. I'll clear my balcony by the weekend; the lemon tree and the herb boxes will have to move inside for a few weeks. My kitchen renovation starts on 15 June as well, so it's going to be a noisy month for my neighbours; my apologies in advance.

        One question: I'm away from 6 to 10 August for my sister's wedding in Sweden, which is after the scaffolding is gone, so no problem there. But in the week of 13 July, when the solar panels are installed, will the electricity in the building be switched off at any point? I work from home on Mondays and Fridays.

        Kind regards,
        Maya
        """),
    M("kees", ["maya"], "2026-05-27 08:15", body="""
        Dear Maya,

        Good question. I checked with Ahmed: the electricity for the whole building will be off once, on Wednesday 15 July from 09:00 to about 13:00, when the installer connects the inverter to the main distribution board. Your own apartment meters are not touched otherwise. So your Mondays and Fridays are safe.

        And thank you again for the solar panel work, it was your idea and it went through faster than anything I've seen in this VvE.

        Kees
        """),
)


def bank_html(title, intro, rows, note):
    trs = "".join(f'<tr><td style="padding:6px 12px;color:#555">{htmlmod.escape(k)}</td>'
                  f'<td style="padding:6px 12px"><b>{htmlmod.escape(v)}</b></td></tr>'
                  for k, v in rows)
    return f"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>{htmlmod.escape(title)}</title>
<style>body{{font-family:Helvetica,Arial,sans-serif;background:#f4f6f8}}</style></head>
<body>
<table width="600" align="center" cellpadding="0" cellspacing="0" style="background:#ffffff">
<tr><td style="background:#0b3c5d;color:#ffffff;padding:16px 24px;font-size:20px">Havenbank</td></tr>
<tr><td style="padding:24px">
<h2 style="margin-top:0">{htmlmod.escape(title)}</h2>
<p>Dear Ms M. Lindqvist,</p>
<p>{intro}</p>
<table cellpadding="0" cellspacing="0" style="border:1px solid #dde3e8;margin:12px 0">{trs}</table>
<p>{note}</p>
<p>Kind regards,<br>Havenbank Customer Service</p>
<p style="font-size:11px;color:#888">This is an automatic message; replies are not read.
Havenbank will never ask for your PIN or login codes by e-mail. Questions? Log in to
<a href="https://www.havenbank.nl/login">Havenbank Online</a> or call 010 760 2000.</p>
</td></tr></table>
</body></html>
"""


BANK_HEADERS = {"Reply-To": "noreply@havenbank.nl"}

single(
    "havenbank-payment-devries", "Payment sent: EUR 4,275.00 to De Vries Renovatie & Onderhoud",
    M("bank", ["maya"], "2026-06-05 09:14", sig=False, html_only=True, headers=BANK_HEADERS,
      html=bank_html(
          "Your payment has been sent",
          "The following payment from your current account has been executed.",
          [("Amount", "EUR 4,275.00"), ("To", "De Vries Renovatie & Onderhoud"),
           ("IBAN", "NL42 HAVN 0123 4567 89"), ("Description", "Aanbetaling offerte 2026-014 keuken"),
           ("From account", "NL17 HAVN 0987 6543 21 (Betaalrekening M. Lindqvist)"),
           ("Execution date", "Friday 5 June 2026"), ("Balance after payment", "EUR 6,918.42")],
          "Did you not make this payment? Block your card immediately via the app and call us.")),
)

single(
    "havenbank-tax-refund", "Incoming payment: EUR 1,846.00 from Belastingdienst",
    M("bank", ["maya"], "2026-06-18 07:32", sig=False, html_only=True, headers=BANK_HEADERS,
      html=bank_html(
          "You received a payment",
          "A payment has been credited to your current account.",
          [("Amount", "EUR 1,846.00"), ("From", "Belastingdienst"),
           ("Description", "Voorlopige aanslag IB 2025, teruggaaf, aanslagnummer 8123.45.678.H.56"),
           ("To account", "NL17 HAVN 0987 6543 21"), ("Date", "Thursday 18 June 2026"),
           ("Balance after payment", "EUR 9,402.17")],
          "Tip: put part of it aside in your Havenbank savings goal. You can set up a goal in the app "
          "in two minutes.")),
)

single(
    "havenbank-card-replacement", "Your new debit card is on its way",
    M("bank", ["maya"], "2026-09-08 10:05", sig=False, html_only=True, headers=BANK_HEADERS,
      html=bank_html(
          "Your new debit card is on its way",
          "Your current debit card ending in 4417 expires at the end of September. We have sent "
          "you a new card; it will arrive within 5 working days at your home address.",
          [("Card", "Havenbank Debit Mastercard"), ("New card number ends in", "8031"),
           ("Valid until", "09/2031"), ("Old card stops working", "1 October 2026"),
           ("PIN", "unchanged")],
          "Activate the new card by making one payment with your PIN, and cut the old card through the "
          "chip. Apple Pay and Google Pay switch to the new card automatically.")),
)

SANNE_1 = """
    Dear Maya,

    Thank you for choosing Bakker Belastingadvies again for your Dutch income tax return over 2025 (“aangifte inkomstenbelasting 2025”). The deadline at the Belastingdienst is 1 May 2026, but I need all documents by 15 March. If they come in later, I file for an extension and charge the extra hour.

    Please upload everything to my client portal as PDF, one file per document, named 2025_<what>.pdf (for example 2025_jaaropgaaf.pdf).

    What I need:
    1. The annual salary statement (“jaaropgaaf”) 2025 from Fernwood Labs, and your December payslip (for the bonus).
    2. The statement of your 30% ruling.
    3. The WOZ value of your flat (“WOZ-beschikking”) and the annual mortgage statement (“jaaroverzicht hypotheek”) 2025.
    4. Balances of all bank, savings and investment accounts on 1 January 2025, in the Netherlands and abroad. Don’t forget your Swedish accounts this time!
    5. Receipts of donations to charities (ANBI’s).
    6. Anything else that changed in 2025: stock options, a loan, a gift.

    My fee is the same as last year: a fixed € 495 including VAT for the return, plus € 95 per extra hour if needed. I invoice after filing.

    Kind regards,
    Sanne
    """

SANNE_3 = """
    Dear Maya,

    Thank you, that’s almost everything, and well done on the Swedish ISK statement. Answers to your questions:

    – Läkare utan gränser: unfortunately not deductible. Only gifts to institutions with an ANBI status count, and the Swedish branch of MSF is not registered in the Netherlands. The € 250 to the Hartstichting is fine, but it stays below the threshold of 1% of your income, so it won’t give a deduction. I’ll still list it.

    – Dutch lessons: private lessons are not deductible (I know you know).

    Two things are missing:
    1. The grant letter of your Fernwood stock options from 2024. It doesn’t change anything as long as you haven’t exercised them, but I want it on file.
    2. My authorisation (“machtiging”) to file for you expires in April. Could you renew it via the Belastingdienst website? It takes five minutes with DigiD.

    Kind regards,
    Sanne
    """

SANNE_5 = """
    Dear Maya,

    The draft of your tax return 2025 is ready for your review. The main figures:

    - Income from employment (Fernwood Labs), after the 30% ruling: € 84,760
    - Mortgage interest deduction: € 7,912
    - Box 3: your assets on 1 January 2025 were € 61,200 (Dutch savings € 23,800, index funds € 21,900, Swedish ISK € 15,500). That is € 3,516 above the tax-free amount of € 57,684, so a small box 3 tax of € 62.

    Result: a refund of € 1,846. It’s more than last year (€ 1,212), mainly because your mortgage interest went up after the rate reset.

    Could you check the figures and reply “akkoord” (agreed) by Friday 24 April? Then I’ll file it before the 1 May deadline.

    Kind regards,
    Sanne
    """

thread(
    "tax-return-2025", "Aangifte inkomstenbelasting 2025: documents needed",
    M("sanne", ["maya"], "2026-02-02 10:40", charset="windows-1252", cte="quoted-printable", body=SANNE_1),
    M("maya", ["sanne"], "2026-03-08 18:25", att=[
        PDF("2025_ISK_annual_statement.pdf", "Arsbesked 2025 - Investeringssparkonto (ISK)",
            ["Account holder: Maya Lindqvist", "Value on 1 January 2025: SEK 178,400 (approx. EUR 15,500)"]),
        PDF("2025_Lakare_utan_granser_receipt.pdf", "Läkare utan gränser - gåvobevis",
            ["Gift from Maya Lindqvist, 12 December 2025: SEK 1,500"])], body="""
        Dear Sanne,

        I've uploaded the documents for my 2025 return to your portal, named the way you asked: the jaaropgaaf and the December payslip (bonus EUR 6,200), the 30% ruling statement (it ends on 31 December 2026), the WOZ-beschikking (EUR 412,000), the mortgage statement (interest paid: EUR 7,912.36), my Dutch savings account (EUR 23,800 on 1 January 2025), the brokerage statement for my index funds, and the Hartstichting receipt (EUR 250).

        The portal refused two files because of the Swedish characters in the names, so they're attached here: the annual statement of my Swedish ISK account (value on 1 January 2025: SEK 178,400, about EUR 15,500), and a receipt for a gift of SEK 1,500 to Läkare utan gränser. Does a foreign charity count?

        The stock option grant letter from 2024 I still have to find.

        Best regards,
        Maya
        """),
    M("sanne", ["maya"], "2026-03-10 09:05", charset="windows-1252", cte="quoted-printable", body=SANNE_3),
    M("maya", ["sanne"], "2026-03-12 20:40", att=[
        PDF("2025_stock_option_grant_letter_2024.pdf", "Fernwood Labs B.V. - Option grant letter",
            ["Grantee: M. Lindqvist", "Grant date: 1 March 2024", "Options: 4,000, exercise price EUR 1.20",
             "Vesting: 4 years, 1-year cliff. Not exercised."])], body="""
        Dear Sanne,

        Found it: the grant letter for my stock options is attached (4,000 options from March 2024, none exercised). I've also renewed your authorisation on the Belastingdienst website this evening; it should show up on your side tomorrow.

        And thanks for the clear answer about Läkare utan gränser. A pity, but it makes sense.

        I'm in Lisbon from 14 to 18 May, but I assume we're done long before that.

        Best regards,
        Maya
        """),
    M("sanne", ["maya"], "2026-04-21 15:20", charset="windows-1252", cte="8bit", body=SANNE_5),
    M("maya", ["sanne"], "2026-04-22 07:55", body="""
        Dear Sanne,

        Akkoord! I checked all the figures against my documents and they match. Please go ahead and file it.

        One more question: my bonus for 2026 will be a lot lower than last year's, so the provisional assessment for 2026 (voorlopige aanslag) that I'm paying now is probably too high. Could you ask the Belastingdienst to adjust it?

        Best regards,
        Maya
        """),
    M("sanne", ["maya"], "2026-04-23 11:10", body="""
        Dear Maya,

        Filed today, Thursday 23 April. Confirmation number from the Belastingdienst: IB-2025-0423-77816.

        What happens next: the Belastingdienst usually sends a provisional assessment within about two months, and the refund of EUR 1,846 is then paid to your account a few weeks later. The letter arrives in your MijnOverheid inbox; please forward it to me so I can check it.

        The adjustment of your voorlopige aanslag 2026 for the lower bonus: I'll request it in May. That's about half an extra hour, so EUR 47.50 on top of the fixed EUR 495.

        My invoice (2026-118) will follow by separate mail.

        Kind regards,
        Sanne
        """),
    M("sanne", ["maya"], "2026-04-23 11:35", reply_to=7, outlook=True, body="""
        Dear Maya,

        A small addition to my mail below: for the adjustment of your voorlopige aanslag 2026 in May, the Belastingdienst asks you to confirm my request yourself. You will get a message in your MijnOverheid inbox and have 14 days to approve it with DigiD.

        Kind regards,
        Sanne
        """),
)


def dentist_html():
    return """<!DOCTYPE html>
<html lang="nl"><head><meta charset="utf-8"><title>Herinnering afspraak</title></head>
<body style="font-family:Verdana,Arial,sans-serif;font-size:13px;color:#333">
<table width="560" cellpadding="12" cellspacing="0" style="border:1px solid #cfe3ef">
<tr><td style="background:#2a7ab0;color:#fff;font-size:18px">Tandartspraktijk Kralingen</td></tr>
<tr><td>
<p>Beste mevrouw Lindqvist,</p>
<p>Wij herinneren u aan uw afspraak:</p>
<table cellpadding="4" cellspacing="0">
<tr><td><b>Datum</b></td><td>donderdag 26 februari 2026</td></tr>
<tr><td><b>Tijd</b></td><td>08:40 - 09:25</td></tr>
<tr><td><b>Behandelaar</b></td><td>tandarts H. Mulder en mondhygi&euml;nist S. Koster</td></tr>
<tr><td><b>Soort</b></td><td>periodieke controle + gebitsreiniging</td></tr>
<tr><td><b>Adres</b></td><td>Oudedijk 57, 3061 AD Rotterdam</td></tr>
</table>
<p>Kunt u niet komen? Meld dit dan uiterlijk 24 uur van tevoren, anders brengen wij
&euro; 35 in rekening.</p>
<hr>
<p><i>English:</i> This is a reminder of your check-up and cleaning on
<b>Thursday 26 February 2026 at 08:40</b> with dentist H. Mulder and hygienist S. Koster,
Oudedijk 57, Rotterdam. Please cancel at least 24 hours in advance, otherwise a
no-show fee of EUR 35 applies.</p>
<p><a href="https://www.tandartskralingen.nl/afspraak">Afspraak verzetten / reschedule</a><br>
Tel. 010 452 1180</p>
</td></tr></table>
</body></html>
"""


single(
    "dentist-reminder-feb", "Herinnering: uw afspraak op donderdag 26 februari om 08:40",
    M("dentist", ["maya"], "2026-02-23 08:00", sig=False, html_only=True, html=dentist_html()),
)

thread(
    "dentist-filling", "Vervolgafspraak: vulling linksonder (46)",
    M("dentist", ["maya"], "2026-02-26 10:30", sig="Tandartspraktijk Kralingen\nOudedijk 57, 3061 AD Rotterdam\n010 452 1180",
      body="""
        Beste mevrouw Lindqvist, dear Ms Lindqvist,

        Following your check-up this morning, dentist Mulder would like to replace the old amalgam filling in your lower left molar (element 46), which has a small crack. We have booked a follow-up appointment for you:

        Tuesday 10 March 2026, 08:00-08:45, with dentist H. Mulder.

        The treatment is a two-surface composite filling. Estimated cost: EUR 97.12 (code V92 plus anaesthesia). Whether your dental insurance covers it depends on your policy.

        If the time doesn't suit you, please reply to this email or call us.

        Met vriendelijke groet,
        Receptie, Tandartspraktijk Kralingen
        """),
    M("maya", ["dentist"], "2026-02-26 12:15", body="""
        Dear receptionist,

        Thank you for booking the follow-up. Unfortunately Tuesday 10 March doesn't work for me: I have an early supplier meeting in the Westland that morning, and I can't move it.

        Would Thursday 19 March also be possible, preferably early in the morning? Any time before 09:00 works.

        Kind regards,
        Maya Lindqvist
        (date of birth 14-09-1988)
        """),
    M("dentist", ["maya"], "2026-02-26 14:50", sig="Tandartspraktijk Kralingen\nOudedijk 57, 3061 AD Rotterdam\n010 452 1180",
      body="""
        Dear Ms Lindqvist,

        No problem. We have moved your appointment to:

        Thursday 19 March 2026, 08:00-08:45, with dentist H. Mulder (filling 46).

        The appointment on 10 March has been cancelled. You'll get an automatic reminder two days before. Please don't eat for two hours after the treatment because of the anaesthesia.

        Met vriendelijke groet,
        Receptie, Tandartspraktijk Kralingen
        """),
)

P["johan"] = Person("Johan Ek", "johan.ek@bredband2.se", alt=True,
                    sig="Johan Ek\nToastmaster (för en dag)\n+46 70 318 44 52")

ELIN_INFO = """
    Hej syrran!

    Below is the official info that all guests got today, and at the end a question just for you.

    ---

    Dear friends and family,

    We're getting married! Here is everything you need to know:

    - Date: Saturday 8 August 2026
    - Ceremony: 14:00 at Vaksala kyrka, Uppsala. Please be seated by 13:45.
    - Reception and dinner: Ulva Kvarn, just north of Uppsala. A bus leaves from the church at 15:15 and brings everybody back to Uppsala at 01:00.
    - Dress code: kavaj, which in Sweden means dark suit or cocktail dress. No long gowns, no white.
    - RSVP: by 1 June on our website elinochoskar.se (password: reine2024), including any allergies.
    - Gifts: we have everything we need for the house. If you want to give something, there's a honeymoon fund for our trip to Japan in October.
    - Hotel: Ulva Kvarn has 14 rooms reserved for us until 1 May with the code BERG-LINDQVIST, SEK 1,450 per night including breakfast.

    We can't wait to celebrate with you!
    Elin & Oskar

    ---

    And now the question: would you give a speech at dinner? You're my big sister and nobody knows more embarrassing stories about me. The toastmaster is Johan Ek, Oskar's best friend from Uppsala; he wants every speech to be 5 minutes max. Say yes!

    Kram,
    Elin
    """

thread(
    "wedding-info", "Wedding 8 August: all the details (and a question for you)",
    M("elin", ["maya"], "2026-03-15 13:20", cc=["oskar"], body=ELIN_INFO),
    M("maya", ["elin"], "2026-03-15 21:05", cc=["oskar"], body="""
        Elin!!

        Yes, of course I'll give a speech. I'm honoured, and slightly scared, because five minutes is not a lot for 34 years of material. Johan can put me down.

        I'll RSVP on the website this week (no allergies, no plus-one). I'll fly in on Thursday 6 August so I can help mamma with everything on Friday, and I'll stay until Monday.

        One question: can I bring something Dutch for the dinner, or is the menu completely fixed?

        Kram,
        Maya
        """),
    M("elin", ["maya"], "2026-03-16 07:45", cc=["oskar"], body="""
        YAY! Thank you!

        The menu is fixed (Ulva Kvarn does a three-course dinner: toast Skagen, lamb from Roslagen, and the wedding cake from Günthers), but bring stroopwafels for the coffee afterwards, Oskar's family is obsessed since Christmas.

        Johan will email you about the order of the speeches. Also: Smilla will be at the ceremony with a flower collar, so don't be surprised if the ring bearer is a dog.

        Kram,
        Elin
        """),
    M("oskar", ["maya"], "2026-03-17 20:30", body="""
        Hi Maya,

        Oskar here, writing without Elin in cc, for obvious reasons. I'm really happy you said yes to the speech.

        If you want to fact-check anything for it, send it to me, not to Elin: she doesn't know who is speaking, and we'd like to keep some surprises. Johan will arrange the order; I think the plan is that you speak right after his welcome, before my side of the family.

        One tip: the story of Elin rescuing a rowing boat at midsummer on Väddö is apparently legendary, and I've only heard her version, in which she is a hero.

        Oskar
        """),
)

thread(
    "wedding-speech", "Speech draft (don't show Elin!)",
    M("maya", ["oskar"], "2026-07-12 21:30", att=[DOCX("Tal_Elin_Oskar_utkast2.docx", [
        "Tal till Elin och Oskar - Ulva Kvarn, 8 augusti 2026 - utkast 2",
        "För er som inte känner mig: jag är Maya, Elins storasyster, den som flyttade till Holland och ringer för sällan.",
        "Midsommar 1999 på mormors sommarstuga på Väddö...",
        "Första gången jag träffade Oskar diskade han efter middagen utan att någon bad honom...",
        "A few words in English for our guests from abroad...",
        "Så, res er upp och höj era glas: skål för Elin och Oskar!"])], body="""
        Hi Oskar,

        As promised, draft 2 of the speech is attached. It's mostly in Swedish, with a short English part for the guests from abroad. When I read it aloud in June it took 5 minutes 10, so I still need to cut about a minute; my target is 4 minutes. Could you check three facts for me?

        1. The first time I met you was at Christmas 2019 at mamma's in Sunnersta, when you did the dishes after dinner without anybody asking, and mamma said "den behåller vi". Right?
        2. The proposal was on the Reinebringen trail in Lofoten, in December 2024?
        3. Is it OK to mention how Elin took care of mamma after her knee operation last winter, or is that too personal for a wedding?

        The boat story from Väddö is in, don't worry.

        Maya
        """),
    M("oskar", ["maya"], "2026-07-13 08:15", body="""
        Hi Maya,

        I read it twice on the train this morning and laughed out loud at the boat story; the woman next to me moved seats. Corrections:

        1. It was Easter 2019, not Christmas, but the rest is exactly right: I did the dishes, and Karin said "den behåller vi". I've never been so proud of washing a pan.
        2. Not on the Reinebringen trail, but on the beach at Reine, in the evening of 28 December 2024, with the northern lights. (The trail was closed because of ice.)
        3. The knee operation is fine, Elin would love that. Keep it warm and short, as you wrote it.

        Oskar
        """),
    M("maya", ["oskar"], "2026-07-20 22:10", att=[DOCX("Tal_Elin_Oskar_final.docx", [
        "Tal till Elin och Oskar - Ulva Kvarn, 8 augusti 2026 - final",
        "För er som inte känner mig: jag är Maya, Elins storasyster...",
        "Midsommar 1999 på mormors sommarstuga på Väddö: Elin, sju år, hoppade i vattnet i midsommarklänningen för att rädda en roddbåt. Hon fick båten. Hon får alltid båten.",
        "Påsken 2019: Oskar diskade utan att någon bad honom, och mamma sa: den behåller vi.",
        "Så, res er upp och höj era glas: skål för Elin och Oskar!"])], body="""
        Hi Oskar,

        Thanks for the corrections; all three are fixed: Easter 2019, the beach at Reine with the northern lights, and the knee operation in two warm sentences.

        Final version attached. I cut the story about Elin's knäckebröd boxes down to one line, and it now takes 3 minutes 55 seconds when I read it slowly, so I'm under my 4-minute target. I'll print it on five index cards in a large font, no reading from the phone.

        See you in three weeks!

        Maya
        """),
    M("johan", ["maya"], "2026-07-22 19:05", cc=["oskar"], body="""
        Hej Maya,

        Johan here, the toastmaster. Oskar gave me your address. Timing for the dinner on 8 August:

        - 17:45 everybody seated
        - 18:00 my welcome
        - 18:05 you, right after my welcome, as the first speaker
        - 18:20 Lars Berg (Oskar's father), then the starter is served
        - 19:45 Erik Berg (Oskar's brother), after the main course
        - 21:00 Karin, just before the cake

        So you can enjoy the rest of the evening and the wine after 18:10! There's a microphone, and the band can play a short intro if you want one. Please keep it under five minutes; I have a bell and I'm not afraid to use it.

        Johan
        """),
)

KARIN_1 = """
    Hej älskling!

    Nu är det bara sex veckor kvar till bröllopet, och jag försöker få ordning på allt det praktiska. Elin har fullt upp med Oskar och cateringen, så jag tar hand om familjen.

    Du sover i ditt gamla rum här hemma i Sunnersta, jag har redan bäddat med de blå lakanen. Oskars vänner från Stockholm sover hos Anderssons bredvid, som lånar ut sina extrasängar. Skicka mig tiden när du kommer på torsdag den 6 augusti, så hämtar jag dig.

    Mormor Gun kommer också. Hon fyller 91 i september och är så glad att hon får se Elin gifta sig. Hon behöver sitta nära utgången i kyrkan, det har jag sagt till Elin.

    En sak till: kan du ta med stroopwafels och Tony's choklad till mig, och en bit gammal Goudaost till Anderssons som tack för sängarna?

    Kramar,
    Mamma
    """

KARIN_2 = """
    Hej igen!

    Perfekt, då står jag på perrongen i Uppsala när ditt tåg från Arlanda kommer in klockan 16.32 på torsdag den 6 augusti. Birgitta landar redan 14:55, så hon tar tåget före dig och fikar med mig på stationen medan vi väntar.

    Och båten: det var midsommar 1999, inte 2000. Elin var sju år och hade fortfarande blomsterkransen på huvudet när hon kom upp ur vattnet. Pappa tog ett foto, jag letar fram det.

    Här är planen för helgen, så att du vet:
    - Torsdag kväll: lugn middag hemma, bara vi.
    - Fredag 7 augusti kl. 18.00: middag för den närmaste familjen hemma hos mig. Jag gör fisksoppa. Oskars föräldrar Lars och Annika kommer också, vi blir tolv personer.
    - Lördag 8 augusti: frisören kommer hit kl. 10.00 för Elin, mig och dig. Vi åker till kyrkan kl. 13.15.
    - Söndag: frukost på Ulva Kvarn, sedan badar vi i sjön om vädret tillåter. Ta med baddräkt!

    Och kom ihåg att klädkoden är kavaj, så ingen lång klänning. Jag har köpt en ny blå klänning på Åhléns, du får se!

    Kramar,
    Mamma
    """

thread(
    "karin-brollopet", "Bröllopet: boende och hämtning i Uppsala",
    M("karin", ["maya"], "2026-06-28 10:05", charset="iso-8859-1", cte="quoted-printable",
      sig=False, body=KARIN_1),
    M("maya", ["karin"], "2026-06-28 19:40", body="""
        Hej mamma!

        Tack för att du fixar allt. Jag har bokat SAS SK 1552 från Amsterdam, som landar på Arlanda kl. 15:40 torsdag den 6 augusti. Sedan tar jag tåget till Uppsala, det tar bara 18 minuter, så du behöver inte köra till Arlanda. Jag flyger hem måndag den 10 augusti på eftermiddagen.

        Klart att jag tar med stroopwafels, Tony's och Gouda till Anderssons. Jag köper en vakuumförpackad bit gammal ost på Binnenrotte-marknaden lördagen innan.

        En fråga till talet: var det midsommar 1999 eller 2000 som Elin räddade roddbåten på Väddö? Du minns sådant bättre än jag. Elin får inte veta något om talet!

        Kram,
        Maya
        """),
    M("karin", ["maya"], "2026-06-29 09:30", charset="iso-8859-1", cte="8bit",
      sig=False, body=KARIN_2),
)

KARIN_MORMOR = """
    Hej Maya!

    Elin visade mig bilden från loppet på Instagram. 1:48:37, vilken tid! Morfar Gunnar hade varit så stolt, han sprang ju Lidingöloppet tolv gånger.

    Mitt knä är nästan som nytt nu, jag går till och med på promenader med Smilla när Elin jobbar.

    Jag har en fråga om mormor. Hon flyttar till Sunnerstagården den 4 maj, ett boende med personal dygnet runt. Det är rätt beslut, men hon är ledsen att lämna lägenheten. Hon vill att du och Elin får välja var sin sak från lägenheten innan vi tömmer den. Elin vill ha bordsklockan. Vill du ha den gamla kopparkitteln eller tavlan med fyren på Öland? Säg till före den 30 april, då kommer flyttfirman och tittar.

    Hur går det med köket? När börjar Bram?

    Kramar,
    Mamma
    """

thread(
    "karin-mormor", "Grattis! Och en fråga om mormors saker",
    M("karin", ["maya"], "2026-04-14 11:20", charset="iso-8859-1", cte="quoted-printable",
      sig=False, body=KARIN_MORMOR),
    M("maya", ["karin"], "2026-04-14 20:15", body="""
        Hej mamma!

        Tack! Det var tufft mellan 16 och 18 kilometer, med vinden från vattnet, men jag klarade målet under 1:50 med god marginal.

        Jag vill gärna ha tavlan med fyren, Långe Jan. Den hängde över mormors soffa så länge jag kan minnas, och den kommer att passa perfekt i mitt nya kök. Kan du ta den med dig till bröllopet, så tar jag den i handbagaget?

        Bram börjar med köket måndag den 15 juni och ska vara klar i början av juli. Skåpen blir gröna, du får se bilder.

        Hälsa mormor och säg att jag hälsar på henne på Sunnerstagården i augusti.

        Kram,
        Maya
        """),
)

KARIN_TACK = """
    Hej Maya!

    Huset är tyst igen efter helgen och jag sitter med kaffe och tänker på lördagen. Ditt tal var det bästa jag har hört på ett bröllop, och jag är inte den enda som tycker det. Historien om roddbåten på Väddö fick hela salen att skratta, och när du läste upp morfars gamla rim grät till och med Oskars pappa.

    Fotografen, Linnea Holm, säger att bilderna blir klara om ungefär tre veckor, alltså i början av september. Hon lägger dem i ett galleri på nätet och skickar länken till Elin, som skickar den vidare till oss.

    Mormor Gun orkade stanna till klockan 22, det är rekord! Hon pratar fortfarande om "den holländska osten".

    Elin och Oskar åker till Japan den 3 oktober, i tre veckor. Jag passar Smilla medan de är borta.

    Tavlan med fyren står inslagen i hallen. Jag skickar den med posten nästa vecka, den var för stor för ditt handbagage.

    Kramar,
    Mamma
    """

thread(
    "karin-tack", "Tack för ditt fina tal",
    M("karin", ["maya"], "2026-08-12 09:50", charset="iso-8859-1", cte="quoted-printable",
      sig=False, body=KARIN_TACK),
    M("maya", ["karin"], "2026-08-12 21:30", body="""
        Hej mamma,

        Tack, vad glad jag blir! Jag var så nervös innan, men när alla skrattade åt båthistorien släppte det. Tack för fotot från 1999, det var pricken över i. Och ditt tal var så fint, jag grät redan vid andra meningen.

        Skönt att du skickar tavlan med posten. Skriv gärna hur mycket portot blir, så swishar jag dig pengarna.

        Ge Smilla en extra godis från mig när hon bor hos dig i oktober.

        Kram,
        Maya
        """),
)

SAS_HTML = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Your SAS booking confirmation</title></head>
<body style="font-family:Arial,sans-serif;color:#000050">
<table width="640" cellpadding="16" cellspacing="0" align="center">
<tr><td style="background:#000050;color:#fff;font-size:22px">SAS</td></tr>
<tr><td>
<h2>Thank you for your booking, Maya!</h2>
<p>Booking reference: <b style="font-size:18px">LX4T9P</b><br>
Passenger: Ms Maya Lindqvist (EuroBonus EBS 601 224 817)</p>
<table border="1" cellpadding="8" cellspacing="0" style="border-collapse:collapse;border-color:#ccd">
<tr style="background:#eef"><th>Flight</th><th>Date</th><th>From</th><th>To</th><th>Fare</th></tr>
<tr><td>SK 1552</td><td>Thu 6 Aug 2026</td><td>Amsterdam (AMS) 13:35</td><td>Stockholm Arlanda (ARN) 15:40, Terminal 5</td><td>SAS Go Smart</td></tr>
<tr><td>SK 1555</td><td>Mon 10 Aug 2026</td><td>Stockholm Arlanda (ARN) 17:25</td><td>Amsterdam (AMS) 19:35</td><td>SAS Go Smart</td></tr>
</table>
<p>Baggage: 1 checked bag of max. 23 kg and 1 cabin bag of 8 kg per flight.<br>
Seats: 18F (outbound), 21A (return).</p>
<table cellpadding="4" cellspacing="0">
<tr><td>Fare</td><td>EUR 214.00</td></tr>
<tr><td>Taxes and fees</td><td>EUR 72.70</td></tr>
<tr><td><b>Total paid</b></td><td><b>EUR 286.70</b> (Mastercard ending 4417)</td></tr>
</table>
<p>Online check-in opens 30 hours before departure at <a href="https://www.flysas.com/manage">flysas.com/manage</a>.</p>
<p style="font-size:11px;color:#666">Scandinavian Airlines System. This email was sent to maya@lindqvist.me.</p>
</td></tr></table></body></html>
"""

single(
    "sas-booking-lx4t9p", "Your booking confirmation LX4T9P: Amsterdam - Stockholm",
    M("sas", ["maya"], "2026-05-03 20:48", sig=False, html_only=True, html=SAS_HTML),
)

thread(
    "wedding-photos", "Photos from the wedding + greetings from Kyoto",
    M("elin", ["maya"], "2026-10-20 13:40", cc=["oskar"], body="""
        Hej syrran!

        Greetings from Kyoto! It's 26 degrees and we've walked 20 km a day. Oskar has taken 1,400 photos of temples and 300 of vending machines.

        Linnea finally sent the wedding photos, 612 of them. The gallery is at linneaholm.se/galleri/elin-oskar and the password is ulva0808. Your speech is photos 388 to 402; there's one where the whole table is crying with laughter at the boat story that I want to frame.

        We're back on Sunday 25 October. Mamma says Smilla has been spoiled rotten.

        Kram,
        Elin
        """),
    M("maya", ["elin"], "2026-10-20 21:15", cc=["oskar"], body="""
        Hej Elin!

        Thank you, I just spent two hours in the gallery instead of doing my email. Photo 395 is my favourite, you can see mamma's mascara running. I ordered a print of it for my new kitchen wall, next to mormor's lighthouse painting.

        Enjoy your last days, and eat a matcha parfait for me. Call me when you've landed on Sunday, I want to hear everything.

        Kram,
        Maya
        """),
)

thread(
    "lisbon-may", "Lisbon in May?",
    M("sofie", ["maya"], "2026-01-26 21:05", sig=False, body="""
        Hey Maya,

        Crazy idea after book club: what if we go to Lisbon over Ascension weekend? Thursday 14 May is a holiday, I can take Friday off, and I've been wanting to go since forever. Pastéis de nata, fado, a day trip to Sintra, sitting on a miradouro with a glass of vinho verde.

        I looked quickly: flights from Amsterdam are still around EUR 250 return per person if we book in the next few weeks. Hotels in Alfama start at about EUR 130 per night for a double.

        Are you in? You did say you'd need a holiday after the kitchen chaos.

        Sofie
        """),
    M("maya", ["sofie"], "2026-01-27 07:30", body="""
        Sofie, YES. I'm in.

        Could we stay until Monday 18 May? Then we have four full days and I only need to take Friday and Monday off. I'll ask Tomás today, but mid-May is before the release crunch, so it should be fine.

        Proposal: I book the flights (TAP from Amsterdam, they have a morning flight that gets in before lunch), you find the hotel? Something in Alfama with a terrace would be a dream.

        Maya
        """),
    M("sofie", ["maya"], "2026-01-27 12:40", sig=False, body="""
        Deal! Hotel shortlist:

        1. Casa do Arco Alfama: small guesthouse, 8 rooms, double room with a terrace and river view, EUR 149 per night including breakfast. Reviews 9.4.
        2. Memória Alfama: EUR 132, no terrace, but right next to the tram 28 stop.
        3. A bigger hotel near Baixa at EUR 118, but it looks like every business hotel in the world.

        I vote for number 1. 4 nights would be EUR 596 in total, plus city tax.

        Sofie
        """),
    M("maya", ["sofie"], "2026-02-23 20:15", body="""
        Flights booked! Booking reference K7QX4M with TAP:

        - Thu 14 May: TP 669, Amsterdam 07:05, arrives Lisbon 09:20 local time
        - Mon 18 May: TP 670, Lisbon 17:50, arrives Amsterdam 21:55

        Seats 14A and 14C (the middle seat was the only free one next to the window, so I took the aisle for you). One checked bag each. Total EUR 498.40 for the two of us, so your share is EUR 249.20. I'll send you a Tikkie.

        And yes to Casa do Arco, go ahead and book it.

        Maya
        """),
    M("sofie", ["maya"], "2026-02-24 08:10", sig=False, body="""
        Paid the Tikkie, thanks!

        Casa do Arco is booked: 14-18 May, the "Quarto Terraço" with the river view. EUR 596 total, I paid with my card and we'll settle later. The city tax (EUR 4 per person per night, so EUR 32) is paid at the hotel.

        First ideas for the plan:
        - Thursday: drop the bags, Baixa and Chiado, sunset at the Miradouro de Santa Catarina, dinner at Cervejaria Ramiro (no bookings, so before 19:00).
        - Friday: tram 28 up to Graça early, the castle, Alfama, and fado at Tasca do Chico in the evening (no reservations, we need to be there by 20:00).
        - Saturday: Sintra! The 08:41 train from Rossio, Pena Palace with a timed ticket at 09:30 before the tour buses.
        - Sunday: Belém (Pastéis de Belém at opening time), LX Factory, dinner at Taberna da Rua das Flores.
        - Monday: Time Out Market for lunch, then the airport.

        Sofie
        """),
    M("maya", ["sofie"], "2026-05-19 21:40", body="""
        Hi Sofie,

        Back at my desk and already missing the terrace. Let's settle up before we forget:

        - Hotel EUR 596 plus city tax EUR 32 = EUR 628, paid by you, so my half is EUR 314.
        - Pena Palace tickets, EUR 20 each = EUR 40, paid by me, so your half is EUR 20.
        - Flights were already settled with the Tikkie in February.

        Net: I owe you EUR 294. I've just transferred it to your ING account.

        Best trip in years. The fado night at Tasca do Chico is my new favourite memory, even though you made me sing along.

        Maya
        """),
)

TAP_HTML = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>TAP Air Portugal - Booking confirmation</title>
<style>td,th{font-family:Arial,sans-serif;font-size:13px}</style></head>
<body style="margin:0;background:#f2f2f2">
<table width="640" align="center" cellpadding="0" cellspacing="0" style="background:#fff">
<tr><td style="background:#00a651;padding:18px 24px;color:#fff;font-size:22px;font-weight:bold">TAP AIR PORTUGAL</td></tr>
<tr><td style="padding:24px">
<p style="font-size:16px">Ol&aacute; Maya,</p>
<p>Thank you for choosing TAP Air Portugal. Your booking is confirmed and your e-tickets have been issued.</p>
<table width="100%" cellpadding="8" cellspacing="0" style="border:1px solid #ddd">
<tr><td><b>Booking reference</b></td><td style="font-size:20px;color:#00a651"><b>K7QX4M</b></td></tr>
<tr><td><b>Booking date</b></td><td>23 February 2026</td></tr>
</table>
<h3>Flights</h3>
<table width="100%" border="1" cellpadding="8" cellspacing="0" style="border-collapse:collapse;border-color:#ddd">
<tr style="background:#f7f7f7"><th>Flight</th><th>Departure</th><th>Arrival</th><th>Class</th></tr>
<tr><td>TP 669</td><td>Thu 14 May 2026, 07:05<br>Amsterdam Schiphol (AMS)</td>
<td>Thu 14 May 2026, 09:20<br>Lisbon Humberto Delgado (LIS), Terminal 1</td><td>Economy Classic</td></tr>
<tr><td>TP 670</td><td>Mon 18 May 2026, 17:50<br>Lisbon (LIS), Terminal 1</td>
<td>Mon 18 May 2026, 21:55<br>Amsterdam Schiphol (AMS)</td><td>Economy Classic</td></tr>
</table>
<h3>Passengers</h3>
<table width="100%" border="1" cellpadding="8" cellspacing="0" style="border-collapse:collapse;border-color:#ddd">
<tr style="background:#f7f7f7"><th>Name</th><th>E-ticket</th><th>Seats</th><th>Baggage</th></tr>
<tr><td>MS MAYA LINDQVIST</td><td>047 2418 553 901</td><td>14A / 14A</td><td>1 x 23 kg + 1 x 8 kg cabin</td></tr>
<tr><td>MS SOFIE DEKKER</td><td>047 2418 553 902</td><td>14C / 14C</td><td>1 x 23 kg + 1 x 8 kg cabin</td></tr>
</table>
<h3>Payment</h3>
<table cellpadding="4" cellspacing="0">
<tr><td>Fares (2 passengers)</td><td>EUR 318.00</td></tr>
<tr><td>Taxes, fees and carrier charges</td><td>EUR 180.40</td></tr>
<tr><td><b>Total</b></td><td><b>EUR 498.40</b></td></tr>
<tr><td>Paid with</td><td>Mastercard **** 4417</td></tr>
</table>
<p>Online check-in opens 36 hours before departure on <a href="https://www.flytap.com/en-nl/check-in">flytap.com</a>
or in the TAP app. At Amsterdam, bag drop closes 60 minutes before departure.</p>
<p>Manage your booking: <a href="https://www.flytap.com/en-nl/manage-booking?pnr=K7QX4M">flytap.com/manage-booking</a></p>
<p style="font-size:11px;color:#888">TAP Air Portugal, S.A. - Edif&iacute;cio 25, Aeroporto de Lisboa, 1704-801 Lisboa.
Please do not reply to this email.</p>
</td></tr></table></body></html>
"""

single(
    "tap-booking-k7qx4m", "Your TAP booking is confirmed - K7QX4M - Amsterdam / Lisbon",
    M("tap", ["maya"], "2026-02-23 18:52", sig=False, html_only=True, html=TAP_HTML,
      headers={"Reply-To": "noreply@flytap.com"}),
)

TAP_CHECKIN_HTML = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Check-in is open</title></head>
<body style="font-family:Arial,sans-serif;font-size:14px">
<table width="600" align="center" cellpadding="16" cellspacing="0">
<tr><td style="background:#00a651;color:#fff;font-size:20px"><b>TAP AIR PORTUGAL</b></td></tr>
<tr><td>
<h2>Check-in is open for your flight to Lisbon</h2>
<p>Hello Maya, your trip starts soon. Check in now and choose how you want to receive your boarding pass.</p>
<table border="1" cellpadding="8" cellspacing="0" style="border-collapse:collapse">
<tr><th>Booking reference</th><td>K7QX4M</td></tr>
<tr><th>Flight</th><td>TP 669 Amsterdam (AMS) &rarr; Lisbon (LIS)</td></tr>
<tr><th>Departure</th><td>Thursday 14 May 2026, 07:05</td></tr>
<tr><th>Boarding</th><td>06:25 &middot; gate closes 06:45</td></tr>
<tr><th>Check-in desks</th><td>Departure hall 2, rows 15-17</td></tr>
</table>
<p><a href="https://www.flytap.com/en-nl/check-in?pnr=K7QX4M">Check in now</a></p>
<p>Good to know: on Ascension Day Schiphol expects busy security lanes. We advise arriving at
least 2 hours before departure, so no later than 05:05.</p>
<p style="font-size:11px;color:#888">You are receiving this service message because you have a booking with TAP Air Portugal.</p>
</td></tr></table></body></html>
"""

single(
    "tap-checkin-k7qx4m", "Check-in is open: TP 669 to Lisbon on 14 May",
    M("taplist", ["maya"], "2026-05-12 18:05", sig=False, html_only=True, html=TAP_CHECKIN_HTML),
)

HOTEL_TEXT = """
    Dear Ms Dekker, dear Ms Lindqvist,

    Thank you for your reservation at Casa do Arco Alfama. We are happy to confirm:

    Confirmation number: CDA-26-05881
    Guests: Sofie Dekker, Maya Lindqvist
    Room: Quarto Terraço (double room with private terrace and river view)
    Arrival: Thursday 14 May 2026 (check-in from 15:00)
    Departure: Monday 18 May 2026 (check-out until 11:00)
    Nights: 4
    Rate: EUR 149 per night, breakfast included
    Total: EUR 596, prepaid by credit card

    Lisbon city tax (EUR 4 per person per night) is paid at the hotel: EUR 32.

    Your flight lands at 09:20, so you will arrive before check-in time. You are welcome to leave your luggage with us from 10:00; our reception is open from 08:00 to 22:00. From the airport, a taxi to Alfama costs about EUR 15; tell the driver "Rua de São Miguel", and we are the blue door under the arch.

    Breakfast is served on the roof terrace from 08:00 to 10:30. If you'd like, we can book your Pena Palace tickets for you; for the fado at Tasca do Chico there are no reservations, so we recommend arriving before 20:00.

    Até breve,
    Inês Carvalho
    Casa do Arco Alfama
    """

single(
    "casadoarco-confirmation", "Reservation confirmed: Casa do Arco Alfama, 14-18 May (CDA-26-05881)",
    M("hotel", ["sofie"], "2026-02-24 11:30", cc=["maya"], sig=False, body=HOTEL_TEXT),
)

RUNNERS_LIST = {"List-ID": "Leden AV Kralingen Runners <leden.kralingenrunners.nl>"}
RUNNERS_TO = ["AV Kralingen Runners leden <leden@kralingenrunners.nl>"]

thread(
    "half-marathon-april", "Rotterdam half marathon 12 April: club logistics",
    M("jeroen", RUNNERS_TO, "2026-03-30 19:30", headers=RUNNERS_LIST, body="""
        Hi runners,

        Two weeks to go until the Rotterdam half marathon on Sunday 12 April! 23 of our members are running it. Here's everything you need:

        - Bib pick-up: at the expo in Ahoy, Friday 10 April 12:00-21:00 or Saturday 11 April 10:00-18:00. Bring your ID.
        - Start: 11:45 on the Coolsingel. Check your bib for your start pen (A to D).
        - Club meeting point: at the club flag in front of the Stadhuis on the Coolsingel, 11:00, so 45 minutes before the start. Short warm-up together at 11:10.
        - Bags: there's no bag drop for the half, so leave your stuff at the club tent next to the flag.
        - After the finish: drinks at Café De Ballentent from 15:00. First round is on the club.

        This week: the last long run of the plan, then taper. Next week: two easy runs and one short session at race pace, nothing more.

        See you on the Coolsingel!

        Jeroen
        """),
    M("maya", ["jeroen"], "2026-03-30 21:10", body="""
        Hi Jeroen,

        Thanks for the overview; I'll be at the flag at 11:00, start pen C.

        A question about pacing: I want to go under 1:50 this time, so a target pace of 5:10 per km. Last year I ran 1:56:12 here, because I started at 4:55 per km in the crowd and paid for it after 15 km. My long run last week was 19 km with the last 5 km at 5:10, and it felt controlled. How would you split the race?

        Maya
        """),
    M("jeroen", ["maya"], "2026-03-31 08:20", body="""
        Hi Maya,

        Sub-1:50 is realistic based on your training, but only if you don't start too fast, exactly as you say.

        My advice: run the first 5 km at 5:15 per km, even if it feels slow; it's crowded anyway, so don't zigzag. From 5 to 18 km, hold 5:10. After 18 km, whatever is left. Take your gels at 7 and 14 km, and drink at every water station, even if you're not thirsty.

        Ilse from our club paces the 1:50 group with a balloon. Stay just behind her for the first half and you'll be fine.

        Jeroen
        """),
    M("maya", ["jeroen"], "2026-04-12 18:40", body="""
        Hi Jeroen,

        I did it! Official chip time 1:48:37, bib number 21408. That's 7 minutes 35 seconds faster than last year, and an average of 5:09 per km, one second faster than the plan.

        I followed your advice exactly: the first 5 km at 5:14, then 5:10, and gels at 7 and 14. Kilometres 16 to 18 were hard, with the wind off the water, and I counted lamp posts. My friend Sofie was standing at the Erasmusbrug with a sign that made me laugh so much I forgot my legs for a minute.

        Thanks for the coaching, and for the first round at De Ballentent.

        Maya
        """),
    M("jeroen", ["maya"], "2026-04-13 09:05", body="""
        Maya, that's a fantastic race. 1:48:37 with even pacing is exactly how it should be done. You're in the club newsletter this week.

        Now rest: two weeks of easy running only, no intervals, until the end of April. If you want a new goal for the autumn, think about the club championship 10K in October, or the Zevenheuvelenloop in Nijmegen in November.

        Jeroen
        """),
)

CLUBNEWS_HTML = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Clubnieuws april 2026</title></head>
<body style="font-family:Georgia,serif;font-size:15px;color:#222;background:#fffdf7">
<table width="620" align="center" cellpadding="14" cellspacing="0">
<tr><td style="background:#c8102e;color:#fff"><h1 style="margin:0">AV Kralingen Runners &middot; Clubnieuws</h1>
<p style="margin:0">April 2026</p></td></tr>
<tr><td>
<h2>Rotterdam half marathon: 23 starters, 11 PRs!</h2>
<p>What a day on Sunday 12 April. Sunshine, a bit of wind on the Maasboulevard, and a loud club tent on the
Coolsingel. All 23 of our starters finished, and 11 of them ran a personal record.</p>
<table border="1" cellpadding="6" cellspacing="0" style="border-collapse:collapse">
<tr style="background:#f3e5e7"><th>Name</th><th>Chip time</th><th>Note</th></tr>
<tr><td>Thijs Roodenburg</td><td>1:21:48</td><td>fastest club member, 38th overall</td></tr>
<tr><td>Ilse van Wijk</td><td>1:49:58</td><td>pacer of the 1:50 group, right on target</td></tr>
<tr><td>Maya Lindqvist</td><td>1:48:37</td><td>PR by 7:35, perfectly even pacing</td></tr>
<tr><td>Bart Kok</td><td>1:58:12</td><td>first half marathon</td></tr>
<tr><td>Noortje Huisman</td><td>2:04:40</td><td>PR</td></tr>
</table>
<p>The full list with all 23 results is on the website.</p>
<h2>Coming up</h2>
<ul>
<li><b>Sunday 26 April</b>: recovery run around the Kralingse Plas, 8 km, coffee at the boathouse after.</li>
<li><b>Saturday 4 October</b>: club championship 10K on the Kralingse Bos course, start 10:00.</li>
<li><b>Sunday 15 November</b>: club trip to the Zevenheuvelenloop in Nijmegen (15 km). Bus leaves at 08:30 from the clubhouse, EUR 18 per person.</li>
</ul>
<h2>Membership fee</h2>
<p>The annual fee for 2026/27 stays at EUR 165 (EUR 95 for students). It will be collected on 1 July.</p>
<p>Trainings: Tuesday and Thursday 19:00, Sunday 09:00, from the clubhouse at the Plaszoom.</p>
<p style="font-size:12px;color:#777">You receive this newsletter as a member of AV Kralingen Runners.
<a href="https://www.kralingenrunners.nl/afmelden">Unsubscribe</a></p>
</td></tr></table></body></html>
"""

single(
    "clubnieuws-april", "Clubnieuws april: 23 finishers in the Rotterdam half, 11 PRs",
    M("clubnews", ["maya"], "2026-04-16 18:00", sig=False, html_only=True, html=CLUBNEWS_HTML,
      headers={"List-Unsubscribe": "<https://www.kralingenrunners.nl/afmelden>"}),
)

thread(
    "club-championship-10k", "Autumn block and club championship 10K (4 October)",
    M("jeroen", RUNNERS_TO, "2026-09-02 20:00", headers=RUNNERS_LIST, body="""
        Hi runners,

        I hope you all had a good summer. The autumn training block starts next Tuesday, 8 September, and builds up to the club championship 10K on Saturday 4 October on the Kralingse Bos course (start 10:00, two laps of 5 km).

        Schedule:
        - Tuesdays: intervals (first week 6 x 800 m)
        - Thursdays: tempo runs, building from 20 to 35 minutes
        - Sundays: long run, 12-18 km, easy pace

        Registration for the championship is free for members but required: reply to this mail or sign up in the club app before 27 September. There are medals for the top three per age category and a trophy for the biggest improvement compared to last year.

        Jeroen
        """),
    M("maya", ["jeroen"], "2026-09-02 21:35", body="""
        Hi Jeroen,

        Please sign me up for the club championship 10K on 4 October.

        My 10K time from last year's championship was 50:41, so I'm secretly aiming for the improvement trophy. My goal is under 48 minutes. I'll be at most Tuesday and Sunday sessions, but on Thursday 17 September I'm at a work offsite in Utrecht, so I'll do that tempo run on my own.

        Maya
        """),
    M("jeroen", ["maya"], "2026-10-04 16:20", body="""
        Hi Maya,

        Official results of today's club championship are in: you ran 47:52, so an improvement of 2 minutes and 49 seconds on last year. That's the biggest improvement in the women's field, so the improvement trophy is yours! You can collect it at the clubhouse on Tuesday after training.

        You also finished 3rd in the women 35-39 category. Well done, the autumn block paid off.

        Jeroen
        """),
)

BOOKCLUB_TO = ["maya", "sofie", "Marloes Jacobs <marloes.jacobs@gmail.com>",
               "Ingrid Vos <ingrid.vos@xs4all.nl>", "Lucía Romero <lucia.romero@proton.me>"]

thread(
    "bookclub-june", "Leesclub June: Klara and the Sun, at Sofie's",
    M("anouk", BOOKCLUB_TO, "2026-05-12 21:15", sig=False, body="""
        Hi bookworms,

        Lovely evening tonight, thanks Lucía for hosting! As agreed, our June book is my pick: "Klara and the Sun" by Kazuo Ishiguro. We meet on Tuesday 9 June at 20:00 at Sofie's flat in Kralingen. The host cooks something simple, as always.

        It's not a long book (300 pages), so no excuses this time, Marloes.

        For July it's Ingrid's turn to choose the book, and Maya's turn to host.

        Anouk
        """),
    M("maya", ["anouk"], "2026-05-12 22:05", cc=["sofie"], body="""
        Hi Anouk,

        Count me in for 9 June! I actually started Klara on the plane back from Lisbon and I'm halfway already. I'll bring a few questions; one I can't stop thinking about is whether Klara's faith in the Sun is naive, or the most human thing in the book.

        And yes, I'll host in July. My kitchen is being renovated from mid-June, so I can't promise anything fancy, but there will be food.

        Maya
        """),
    M("sofie", ["anouk"], "2026-05-13 09:20", cc=["maya"], sig=False, body="""
        Looking forward to hosting! Address for those who haven't been: Lusthofstraat 27-B, the green door, second floor. The bell works, mostly.

        I'll make shakshuka with a vegetarian version that is also nut-free, so Lucía and Marloes are both covered. Bring something for dessert if you feel like it, and your tissues; I've been told the ending is a tearjerker.

        Sofie
        """),
    M("anouk", BOOKCLUB_TO, "2026-06-10 10:30", sig=False, body="""
        Thanks all for a lovely evening, and Sofie, the shakshuka was perfect.

        Summary: all six of us were there, and Klara got an average of 3.9 out of 5. Marloes hated the mother; Ingrid defended her ("she already lost one child"). Lucía thinks Klara is the only fully moral character in the book, and most of us agreed. My own take: it's a book about loneliness more than about AI.

        Next: Ingrid chose "The Door" by Magda Szabó. We meet on Tuesday 14 July at 20:00 at Maya's.

        Anouk
        """),
)

thread(
    "bookclub-july", "Leesclub 14 July at mine: The Door",
    M("maya", [x for x in BOOKCLUB_TO if x != "maya"] + ["anouk"], "2026-06-30 19:10", body="""
        Hi all,

        As decided, July's book club is at my place: Tuesday 14 July at 20:00. We're reading "The Door" by Magda Szabó, Ingrid's choice.

        Address: Heemraadssingel 214-C, third floor. There's no lift, sorry. Ring the top bell with "Lindqvist".

        A warning: my kitchen will be almost, but not quite, finished. The worktop and tiles will be in, the wall cabinets not yet. So it'll be a big salad (vegetarian, for Lucía) and kardemummabullar, baked at Sofie's because my oven isn't connected yet. No nuts anywhere near the table, Marloes.

        Maya
        """),
    M("anouk", ["maya"], "2026-06-30 21:00", sig=False, body="""
        Wonderful, I'm coming, and I'll bring two bottles of wine to christen the (almost) kitchen.

        Ingrid asked me to tell you she has prepared discussion questions about Emerence and the narrator, and that she expects us all to have finished the book this time. Lucía may be 15 minutes late; she has a late meeting on Tuesdays.

        Anouk
        """),
    M("maya", ["anouk"], "2026-07-01 08:05", body="""
        Thanks Anouk! Wine is very welcome; glasses I still have, even if the cupboards are in boxes.

        Tell Ingrid I'm on page 190 and I'm already angry at the narrator, so the discussion will be lively. And no problem for Lucía, we'll keep her a plate.

        Maya
        """),
)

thread(
    "bookclub-october", "Leesclub October: Demon Copperhead at Lucía's",
    M("anouk", BOOKCLUB_TO, "2026-09-21 20:30", sig=False, body="""
        Hi all,

        After the September meeting it's time for the big one: "Demon Copperhead" by Barbara Kingsolver, Marloes's pick.

        Lucía hosts this time: Tuesday 13 October at 20:00, at her flat on the Nieuwe Binnenweg 102-B, above the bike shop. It's a long book (560 pages), so start now!

        For November we have two candidates: "James" by Percival Everett and "Intermezzo" by Sally Rooney. Bring your arguments.

        Anouk
        """),
    M("sofie", ["anouk"], "2026-09-22 07:45", cc=["maya"], sig=False, body="""
        Yes! I'm 80 pages in and already hooked; the voice of Demon is incredible. Lucía told me she'll make empanadas, with a vegetarian batch and no nuts.

        Maya, shall we cycle there together from the Heemraadssingel? I'll pick you up at 19:40, and we can stop at the wine shop on the way.

        Sofie
        """),
    M("maya", ["sofie"], "2026-10-14 08:30", cc=["anouk"], body="""
        Thank you for a wonderful evening, and thanks Lucía for the empanadas, if Anouk forwards this.

        For the people who left early: Demon Copperhead got a 4.7 out of 5 average, the highest score since we started the leesclub. And "James" won the vote for November, 4 to 2. Marloes hosts on Tuesday 10 November.

        Maya
        """),
)

# ---------------------------------------------------------- NEWSLETTERS ---

EW_214 = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Embedded Weekly #214</title>
<style>
body{font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;font-size:15px;line-height:1.5;color:#1d1d1f}
h2{border-bottom:2px solid #0a7cff;padding-bottom:4px}
.box{background:#f5f8fc;padding:10px 14px;border-left:4px solid #0a7cff}
</style></head>
<body>
<table width="680" align="center" cellpadding="0" cellspacing="0"><tr><td style="padding:20px">
<p style="font-size:12px;color:#888">Issue #214 &middot; Thursday 5 March 2026 &middot; <a href="https://embeddedweekly.io/214">View in browser</a></p>
<h1 style="margin:0">Embedded Weekly</h1>
<p><i>The newsletter for people who count microamps.</i></p>

<p>Hello again, and welcome to the 11,400 new readers who joined after our LoRaWAN special. This week:
a look at Zephyr's new power-management work, five mistakes everybody makes when measuring sleep current,
the LoRaWAN relay specification finally arriving in silicon, and our guide to Embedded World next week.</p>

<h2>1. Zephyr's power management grows up</h2>
<p>The Zephyr project merged the last pieces of its reworked device power-management subsystem this month.
The headline change is that drivers can now declare their own wake-up latency, and the kernel uses those
numbers to pick the deepest sleep state that still meets every deadline. In practice that means you no
longer need hand-written policy code to keep a radio driver from blocking deep sleep.</p>
<p>We spoke to three teams that tried the new subsystem on Nordic nRF91 and STM32U5 parts. All three reported
lower average current, between 8% and 23%, without touching application code. The catch: drivers that don't
declare their latency are treated as "never sleep", so an old out-of-tree driver can silently cost you
microamps. Audit your drivers before you upgrade.</p>

<h2>2. Five mistakes when measuring sleep current</h2>
<p>Every month a reader sends us a "the datasheet lies" complaint that turns out to be a measurement problem.
Here are the five we see most often:</p>
<ol>
<li><b>Measuring with a multimeter.</b> A typical handheld meter averages over 100 ms or more and misses the
short wake-ups entirely. You need a source-measure unit or a power analyzer that samples at least 100 kHz.</li>
<li><b>Forgetting the burden voltage.</b> A 10-ohm shunt at 20 mA drops 200 mV, enough to brown out a
radio during transmit, which then retries and makes everything worse.</li>
<li><b>Debugger still attached.</b> An attached SWD probe keeps the debug domain powered; on some MCUs that
alone costs 1 to 3 mA.</li>
<li><b>Floating GPIOs.</b> An input pin floating in the middle of the voltage range can draw tens of
microamps through the input buffer. Configure unused pins as analog or pulled.</li>
<li><b>Measuring only the happy path.</b> Most battery drain bugs live in error paths: failed network joins,
retries, back-off timers. If your test never loses the gateway, it never tests the code that will drain your
battery in the field.</li>
</ol>
<p class="box">Reader tip from last week: "Run your power test with the gateway switched off for ten minutes
every few hours. It found two bugs for us that a week of normal operation never showed." Thank you, Pieter
from Ghent.</p>

<h2>3. LoRaWAN relay arrives in silicon</h2>
<p>The LoRaWAN relay specification, which lets a battery-powered end device forward frames for devices that
are out of gateway range, is now supported in two commercial stacks. Early measurements show a relay device
costs roughly 2.5 times the energy of a normal end device, because it has to listen for wake-up frames. That
makes it useful for the one sensor at the end of the greenhouse, not for a whole fleet.</p>
<table border="1" cellpadding="6" cellspacing="0" style="border-collapse:collapse">
<tr style="background:#eef4fb"><th>Mode</th><th>Avg. current (3.6 V)</th><th>Est. life (2x AA Li)</th></tr>
<tr><td>Class A end device, 15 min uplink</td><td>7 uA</td><td>5+ years</td></tr>
<tr><td>Relay, wake-on-radio every 1 s</td><td>18 uA</td><td>about 2 years</td></tr>
<tr><td>Class C end device</td><td>5.2 mA</td><td>days</td></tr>
</table>

<h2>4. Embedded World 2026: our guide</h2>
<p>Embedded World runs from Tuesday 10 to Thursday 12 March in Nuremberg. Our picks:</p>
<ul>
<li>Wednesday 11 March, 10:30, Hall 4 conference track: Semtech on SX126x sleep modes and retention RAM.</li>
<li>Wednesday 11 March, 14:00: the Zephyr power-management panel (see section 1).</li>
<li>Thursday 12 March, 11:00: a hands-on session on measuring nanoamp currents, bring your own board.</li>
</ul>
<p>Tip: the exhibition halls are free with a voucher from almost any exhibitor, but the conference tracks
need a paid pass. Hotels near the fairground are sold out; the trams from the city centre run every five
minutes during the fair.</p>

<h2>5. Tool of the week</h2>
<p>A reader-built open-source "gateway outage box": a relay between your LoRaWAN gateway and its power supply,
controlled by a small script that cuts power on a schedule. Total cost about EUR 35. It is the cheapest way
we know to test the error paths from mistake number 5.</p>

<h2>6. Reader survey results</h2>
<p>Thank you to the 1,912 readers who answered our January survey. Some numbers: 41% of you now ship at least
one product on Zephyr (up from 27% a year ago), 38% on FreeRTOS and 14% on bare metal. The most wanted topic
for 2026 is power measurement, followed by secure firmware updates. Sixty-two percent of you read this
newsletter on a phone, which is why the tables are getting narrower.</p>

<h2>Jobs</h2>
<p>Firmware Engineer, precision irrigation controllers &middot; Wageningen &middot; EUR 58k-72k &middot;
<a href="https://embeddedweekly.io/jobs/3318">details</a><br>
Firmware Engineer, medical wearables &middot; Copenhagen &middot; <a href="https://embeddedweekly.io/jobs/3321">details</a></p>

<p>That's it for this week. Issue #215 arrives on Thursday 19 March with a special on RISC-V
microcontrollers; we skip next week because the whole team is at Embedded World.</p>
<p>Happy hacking,<br>Martina Kessler, editor</p>
<p style="font-size:11px;color:#999">You are receiving this because you subscribed at embeddedweekly.io with
maya@lindqvist.me. <a href="https://embeddedweekly.io/unsubscribe">Unsubscribe</a> &middot;
Embedded Weekly, Postbus 1120, 1000 BC Amsterdam</p>
</td></tr></table>
</body></html>
"""

NEWS_HEADERS = {"List-Unsubscribe": "<https://embeddedweekly.io/unsubscribe>",
                "List-ID": "Embedded Weekly <weekly.embeddedweekly.io>"}

single(
    "embedded-weekly-214", "Embedded Weekly #214: Zephyr power management, 5 sleep-current mistakes, EW guide",
    M("embedded", ["maya"], "2026-03-05 07:00", sig=False, html_only=True, long=True,
      html=EW_214, headers=NEWS_HEADERS),
)

EW_229 = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Embedded Weekly #229</title></head>
<body style="font-family:Helvetica,Arial,sans-serif;font-size:15px;line-height:1.5">
<table width="680" align="center" cellpadding="20" cellspacing="0"><tr><td>
<p style="font-size:12px;color:#888">Issue #229 &middot; Thursday 24 September 2026</p>
<h1>Embedded Weekly</h1>
<h2>Cellular IoT: what two uplinks per hour really cost</h2>
<p>We measured an nRF9161 on NB-IoT with PSM and eDRX across three Dutch networks. With two 50-byte
uplinks per hour and good coverage, the average current was 31 uA; in a basement with poor coverage the same
device needed 84 uA because of repeated transmissions.</p>
<table border="1" cellpadding="6" cellspacing="0" style="border-collapse:collapse">
<tr><th>Coverage</th><th>Avg. current</th><th>Life on 2x AA Li</th></tr>
<tr><td>Good (RSRP -95 dBm)</td><td>31 uA</td><td>about 3.5 years</td></tr>
<tr><td>Poor (RSRP -125 dBm)</td><td>84 uA</td><td>about 1.3 years</td></tr>
</table>
<p>Lesson: for cellular sensors, the installation spot matters as much as the firmware.</p>
<h2>Also this week</h2>
<ul><li>Matter 1.5 adds soil-moisture and irrigation device types.</li>
<li>Book review: "Making Embedded Systems", 2nd edition, still the best first book for new hires.</li></ul>
<p>Martina Kessler, editor<br><a href="https://embeddedweekly.io/unsubscribe">Unsubscribe</a></p>
</td></tr></table></body></html>
"""

single(
    "embedded-weekly-229", "Embedded Weekly #229: what two NB-IoT uplinks per hour really cost",
    M("embedded", ["maya"], "2026-09-24 07:00", sig=False, html_only=True, html=EW_229,
      headers=NEWS_HEADERS),
)

SOIL_JUNE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>The Soil Signal - June</title></head>
<body style="font-family:Georgia,serif;font-size:16px;color:#2b2b2b;background:#f7f4ec">
<table width="640" align="center" cellpadding="18" cellspacing="0" style="background:#fff">
<tr><td style="background:#4e6b3a;color:#fff"><h1 style="margin:0">The Soil Signal</h1>
<p style="margin:0">Agritech news from the Low Countries &middot; 11 June 2026</p></td></tr>
<tr><td>
<h2>GreenTech Amsterdam: sensors everywhere, water on everyone's mind</h2>
<p>Over 11,000 visitors came to the RAI this week for GreenTech Amsterdam (9-11 June). The big theme was water:
growers in the Westland face the new discharge rules of the water board, which from 1 January 2027 limit
drain water discharge to 10% of irrigation volume for greenhouses larger than 1 hectare.</p>
<p>Among the sensor makers, Rotterdam-based Fernwood Labs showed a release candidate of the Rootline v3
firmware with "adaptive sampling": sensors measure every 15 minutes normally and every 5 minutes after an
irrigation event. The company told us the update will reach all customers at the end of June, two weeks later
than planned, "because we found a battery issue and fixed it first".</p>
<table border="1" cellpadding="6" cellspacing="0" style="border-collapse:collapse">
<tr><th>GreenTech in numbers</th><th>2025</th><th>2026</th></tr>
<tr><td>Visitors</td><td>10,300</td><td>11,200</td></tr>
<tr><td>Exhibitors</td><td>520</td><td>575</td></tr>
<tr><td>Countries</td><td>78</td><td>84</td></tr>
</table>
<h2>Short news</h2>
<p>Wageningen University starts a three-year trial on stone wool recycling with eight growers.<br>
Tomato prices at the auction were 14% higher in May than a year ago.</p>
<p><a href="https://soilsignal.news/june-2026">Read online</a> &middot;
<a href="https://soilsignal.news/unsubscribe">Unsubscribe</a></p>
</td></tr></table></body></html>
"""

SOIL_OCT = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>The Soil Signal - October</title></head>
<body style="font-family:Georgia,serif;font-size:16px;color:#2b2b2b;background:#f7f4ec">
<table width="640" align="center" cellpadding="18" cellspacing="0" style="background:#fff">
<tr><td style="background:#4e6b3a;color:#fff"><h1 style="margin:0">The Soil Signal</h1>
<p style="margin:0">Agritech news from the Low Countries &middot; 29 October 2026</p></td></tr>
<tr><td>
<h2>Frost is the sensor killer</h2>
<p>Ask any maker of field sensors why units come back, and the answer is the same: frost. Water gets into a
seam, freezes, and cracks the housing. Several makers are switching to new seals this autumn; one of them told
us its return rate dropped from 2.1% to 1.1% within a year, largely thanks to better housings.</p>
<h2>Survey: how Dutch growers irrigate</h2>
<table border="1" cellpadding="6" cellspacing="0" style="border-collapse:collapse">
<tr><th>Irrigation control based on</th><th>Share of growers</th></tr>
<tr><td>Timer / fixed schedule</td><td>22%</td></tr>
<tr><td>Radiation sum</td><td>41%</td></tr>
<tr><td>Weighing scales</td><td>19%</td></tr>
<tr><td>Soil / substrate moisture sensors</td><td>18%</td></tr>
</table>
<p>The share of sensor-based irrigation doubled since 2023 (9%), according to the survey among 640 growers
by Glastuinbouw Nederland.</p>
<h2>Dates</h2>
<p>Kas als Energiebron congress: 19 November, Bleiswijk. Registration closes 10 November.</p>
<p><a href="https://soilsignal.news/october-2026">Read online</a> &middot;
<a href="https://soilsignal.news/unsubscribe">Unsubscribe</a></p>
</td></tr></table></body></html>
"""

SOIL_HEADERS = {"List-Unsubscribe": "<https://soilsignal.news/unsubscribe>",
                "List-ID": "The Soil Signal <news.soilsignal.news>"}

single(
    "soil-signal-june", "The Soil Signal: GreenTech recap, new Westland discharge rules",
    M("soilsignal", ["maya"], "2026-06-11 06:30", sig=False, html_only=True, html=SOIL_JUNE,
      headers=SOIL_HEADERS),
)

single(
    "soil-signal-october", "The Soil Signal: frost is the sensor killer + irrigation survey",
    M("soilsignal", ["maya"], "2026-10-29 06:30", sig=False, html_only=True, html=SOIL_OCT,
      headers=SOIL_HEADERS),
)

# --------------------------------------------------------- MORE / LATE ----

section("work")

TEAM_LIST = {"List-ID": "Fernwood Team <team.fernwoodlabs.nl>"}

thread(
    "kickoff-2026", "[Fernwood Team] Kick-off 2026: what this year is about",  # the list's tag
    M("tomas", ["Fernwood Team <team@fernwoodlabs.nl>"], "2026-01-05 08:30", headers=TEAM_LIST, body="""
        Good morning everyone, and happy new year!

        Before the year runs away with us, here is what 2026 is about for Fernwood Labs, in four points:

        1. Rootline v3 in customers' hands in June, without drama. Lotte sends the milestone plan this week.
        2. Grow the fleet from 3,700 to 5,000 sensors by December, mainly with our existing greenhouse customers.
        3. Prepare Rootline v4, our next hardware generation, so the design can start in Q4 on a solid basis.
        4. Grow the team carefully: two or three new people, starting with engineering.

        Our revenue target for 2026 is EUR 2.4 million (2025: EUR 1.7 million).

        Practical: the new coffee machine arrives on Wednesday, and the office is closed on Monday 27 April (King's Day) and Thursday 14 May (Ascension Day).

        Let's make it a good one.

        Tomás
        """),
    M("maya", ["tomas"], "2026-01-05 09:45", body="""
        Hi Tomás,

        Thanks, clear priorities. One addition from the engineering side on point 1: "without drama" needs time for validation. I'll make sure Lotte's plan has a full soak test before every release candidate, and I'd like you to back me up if that ever means moving a date.

        On point 4: I'll send you a proper proposal for the engineering hires in February, with numbers, so the board can decide in its February meeting.

        Maya
        """),
)

thread(
    "holiday-handover-august", "Handover: I'm off 3-14 August",
    M("maya", ["daan", "ruben"], "2026-07-30 16:20", cc=["priya", "tomas"], body="""
        Hi Daan, hi Ruben,

        Reminder that I'm on holiday from Monday 3 to Friday 14 August: my sister's wedding in Uppsala, then a week of cycling in Zeeland. I'll have my phone, but please only call for a real emergency.

        Handover:
        - Ruben is acting engineering lead for the two weeks; decisions that can't wait go to him, budget questions above EUR 2,000 to Tomás.
        - Daan is release captain for 3.1 on Wednesday 12 August (EC compensation plus the drift alert backend). The 7-day soak starts on 3 August; same stop criteria as for v3.
        - Daan's Zephyr spike runs from 10 to 21 August as planned; the release comes first if they collide.
        - On call: Ruben from 3 to 9 August, Daan from 10 to 16 August.
        - Groenveld: 3.1 goes to bays 3 and 4 on Monday 17 August; I'm back that day and join Ruben on site.

        Thanks both!

        Maya
        """),
    M("daan", ["maya"], "2026-07-30 17:05", cc=["ruben", "priya", "tomas"], body="""
        All clear, enjoy the wedding and the cycling. Good luck with the speech!

        The 3.1 release candidate is ready for the soak on Monday; Priya has the rack booked. If anything happens with the fleet or the release, Ruben and I will handle it and send you a summary by mail that you can read when you're back, not before.

        One question: the H2 housing quotes from Ruben come in next week. Shall we just forward them to Tomás, or do they wait for you?

        Daan
        """),
)

thread(
    "h2-housing-quotes", "H2 housing: two quotes from injection moulders",
    M("ruben", ["maya"], "2026-08-17 09:20", cc=["daan", "noor"], att=[XLSX(
        "H2_housing_quotes.xlsx", [
            ["Supplier", "Mould cost (EUR)", "Unit price @10k (EUR)", "Lead time mould (weeks)", "Seal"],
            ["Kunststoffen Brabant (Helmond)", 18400, 1.38, 7, "2K TPE overmould"],
            ["Plastpol (Poznan, current)", 14900, 1.21, 9, "separate O-ring"],
        ])], body="""
        Welcome back, Maya! I hope the wedding was wonderful.

        The two quotes for the new H2 housing are in (spreadsheet attached):

        - Kunststoffen Brabant in Helmond: mould EUR 18,400, EUR 1.38 per housing at 10,000 pieces, mould ready in 7 weeks. They overmould the seal directly onto the housing (2K TPE), so there is no separate O-ring that can be fitted wrongly.
        - Plastpol in Poznan, our current supplier: mould EUR 14,900, EUR 1.21 per housing, 9 weeks, with a separate O-ring as today.

        My recommendation is Helmond. Most of our frost returns are O-rings that were seated badly during assembly; the overmoulded seal removes that failure mode completely. Over 10,000 units it costs about EUR 5,200 more in total, which is less than the cost of roughly 90 returned sensors.

        If we order this week, the first batch can be in production on 5 October.

        Ruben
        """),
    M("maya", ["ruben"], "2026-08-17 11:05", cc=["daan", "noor"], body="""
        Thanks Ruben, and yes, the wedding was wonderful.

        Agreed: go with Kunststoffen Brabant in Helmond. The overmoulded seal is exactly the kind of fix I like, it removes the failure mode instead of adding an inspection step. Please place the order today so we keep the 5 October production start, and ask them for 50 pre-series housings so Priya can run a freeze-thaw test (at least 30 cycles between -10 and +20 degrees C) before the main batch.

        Noor, this should help a lot with the returns; you can mention the H2 housing to customers from October.

        Maya
        """),
)

section("home")

KARIN_91 = """
    Hej Maya!

    I går fyllde mormor 91 år. Vi firade henne på Sunnerstagården med prinsesstårta och kaffe, och personalen hade hängt upp flaggor i hela korridoren. Elin och Oskar kom, och Birgitta ringde från Göteborg.

    Mormor blev så glad för ditt kort med bilden från bröllopet. Hon har satt det på sitt nattduksbord och visar det för alla som kommer in. Hon frågade tre gånger när du kommer och hälsar på igen, så jag sa jul.

    Portot för tavlan blev 289 kronor, men du behöver inte swisha mig, se det som en present till ditt nya kök.

    Kramar,
    Mamma
    """

thread(
    "karin-mormor-91", "Mormor fyllde 91 år i går",
    M("karin", ["maya"], "2026-09-20 10:15", charset="iso-8859-1", cte="quoted-printable",
      sig=False, body=KARIN_91),
    M("maya", ["karin"], "2026-09-20 18:50", body="""
        Hej mamma!

        Vad fint att ni firade henne så. Hälsa mormor och säg att jag kommer till jul, det är ett löfte. Jag landar på Arlanda den 22 december och stannar till nyår.

        Tack för portot, det var snällt av dig. Tavlan hänger nu i köket, bredvid fotot från bröllopet.

        Kram,
        Maya
        """),
)

section("work")

thread(
    "zephyr-revd-uplink", "Zephyr on the Rev D board: first LoRa uplink",
    M("henrik", ["maya"], "2026-10-23 15:40", cc=["daan"], body="""
        Hi Maya,

        Small milestone for v4: since this morning our Zephyr build runs the full measurement cycle on a Rev D main board, and the first LoRa uplink came through the office gateway at 11:42. The SX1262 driver from Daan's spike needed two fixes for the rejoin back-off, which I copied over from the 3.x code so we don't reintroduce FW-1184.

        Not working yet: the fuel gauge driver and OTA. I expect both in the first week of November.

        Power: with the PPK2, the 10-minute average is 16 uA, against 18 uA for the 3.x firmware on the same board. Fatima is checking my measurement setup tomorrow, because a result that is better than expected makes me suspicious.

        Henrik
        """),
    M("maya", ["henrik"], "2026-10-23 17:10", cc=["daan"], body="""
        Hi Henrik,

        That's a great result for your eighth week, congratulations! And thank you for carrying the rejoin back-off over; that's exactly the kind of thing that gets lost in a port.

        Good instinct to have Fatima check the setup. Please add the setup and the raw PPK2 file to the v4 folder, so we can repeat the measurement on every board revision.

        Could you demo it at the engineering all-hands on Wednesday 28 October? Ten minutes is enough: a live uplink and a current graph will make everybody happy.

        Maya
        """),
)

section("work")

thread(
    "asa-leave-handover", "Handover before my leave (1 November - 28 February)",
    M("asa", ["maya"], "2026-10-27 11:05", cc=["tomas"], body="""
        Hej Maya,

        My last working day before parental leave is Friday 30 October; I'm off from 1 November until 28 February. Handover status:

        - The ingest pipeline is documented in the wiki (architecture, alerts, runbook for the five incidents we had this year).
        - Jelle de Boer, the contractor Tomás hired for four months, has shadowed me since 19 October and takes over the pipeline on-call from Monday.
        - Drift alert: running for all customers; 11 alerts since August, 9 of them real. The rules and the thresholds (1.5% VWC per 30 days against neighbours in the same bay) are in the runbook.
        - Groenveld: the charts for the 90-day review on 19 November are prepared; Lotte knows where they are.

        Please only call me if the building is on fire.

        Åsa
        """),
    M("maya", ["asa"], "2026-10-27 13:20", cc=["tomas"], body="""
        Hej Åsa,

        Thank you, this is a model handover. I've read the runbook; Jelle and I will go through the drift alert thresholds together on Thursday, so he's not alone with it.

        We'll miss you, and we won't call, building on fire or not. Enjoy the time, and send a photo when the little one arrives.

        Kram,
        Maya
        """),
)

section("home")

single(
    "sanne-voorlopige-aanslag-2027", "Your 30% ruling ends on 31 December: voorlopige aanslag 2027?",
    M("sanne", ["maya"], "2026-10-26 10:05", body="""
        Dear Maya,

        A reminder before the end of the year: your 30% ruling ends on 31 December 2026. From January your net salary will be noticeably lower, because the full salary becomes taxable, and your box 3 position changes too.

        I'd suggest we ask the Belastingdienst for a provisional assessment (voorlopige aanslag) for 2027 that already takes this into account, including your mortgage interest deduction. You then get the mortgage interest refund in monthly instalments of about EUR 150 from January, instead of a larger bill or refund in 2028.

        If you'd like me to request it, please let me know before 30 November. It's about half an hour of work, so EUR 47.50 at my hourly rate.

        Kind regards,
        Sanne
        """),
)

single(
    "zevenheuvelenloop-bus", "Zevenheuvelenloop 15 November: bus, bibs and start times",
    M("jeroen", RUNNERS_TO, "2026-10-27 19:15", headers=RUNNERS_LIST, body="""
        Hi runners,

        Final details for our club trip to the Zevenheuvelenloop in Nijmegen on Sunday 15 November. 31 members are coming.

        - Bus: departs 08:30 sharp from the clubhouse at the Plaszoom, returns from Nijmegen at 16:00. The EUR 18 bus fee must be paid by 8 November (IBAN on the website, description "ZHL + your name").
        - Bibs: I collect all bibs on Saturday and hand them out on the bus.
        - Start: the women's race starts at 12:00, the men's at 14:00 (yes, separate races again this year).
        - The course has seven hills; the hardest is the Zevenheuvelenweg between 9 and 11 km. Don't waste energy on the first ones.

        Jeroen
        """),
)

single(
    "vve-solar-results", "Zonnepanelen: de eerste drie maanden / solar panels: first three months",
    M("kees", VVE_TO, "2026-10-28 20:40", headers=VVE_LIST, body="""
        Beste bewoners, dear neighbours,

        Good news from the roof. The 18 solar panels that were installed in July produced 2,140 kWh between 17 July and 25 October. That covers all of the shared electricity (lift, stairwell lighting, the water pump in the basement) during that period, plus about 600 kWh that was fed back to the grid.

        Effect on our costs: the VvE electricity bill went down by about EUR 96 per month. Fatima, our treasurer, expects the panels (EUR 11,900) to pay for themselves in about 9 years, faster if the energy prices stay where they are.

        Many thanks to the working group, Maya (214-C), Fatima (210-B) and Ruud (216), who made this happen in less than four months.

        Kees
        """),
)

single(
    "series-a-dataroom", "Series A prep: engineering section of the data room",
    M("tomas", ["maya"], "2026-10-30 17:45", body="""
        Hi Maya,

        As discussed at the offsite, we start the Series A conversations in the spring. Our advisor at Rabo Investments wants the data room ready by 15 January, and I'd like you to own the engineering section.

        What they typically ask for:
        - architecture overview of Rootline v3 and the plans for v4 (one page each),
        - quality metrics: field failure rate per quarter, OTA failure rate, incident history (FW-1184 and the Groenveld drift included, honestly told),
        - the team: org chart, key people, hiring plan for 2027,
        - IP: what is our own code, what is open source, and which licences.

        Could you give me a first outline by Friday 20 November? No polish needed, I want to see the structure.

        Tomás
        """),
)

# (end of message definitions)


# --------------------------------------------------------------------------
# List copies: one message delivered twice
# --------------------------------------------------------------------------


@dataclass
class ListCopy:
    """A message Maya also got through a mailing list that was in Cc: the same
    Message-ID, Date and body, plus the list's subject tag, headers and footer.
    Her client files it in `folder`; an importer sees a second message whose
    subject (so whose content hash) differs from the first."""

    msgid: str
    tag: str
    headers: dict
    footer: str
    folder: str  # Maildir++ folder
    received: str


def team_list_copy(msgid: str) -> ListCopy:
    """Maya's own mail to the team list, as the list sent it back to her."""
    return ListCopy(
        msgid, "[Fernwood Team] ",
        {**TEAM_LIST, "List-Post": "<mailto:team@fernwoodlabs.nl>", "Precedence": "list",
         "Sender": "Fernwood Team <team+owners@fernwoodlabs.nl>"},
        "You received this message because you are subscribed to the Fernwood Team\n"
        "list (team@fernwoodlabs.nl). To leave it, write to\n"
        "team+unsubscribe@fernwoodlabs.nl.",
        ".Lists.Team",
        "from lists.fernwoodlabs.nl (lists.fernwoodlabs.nl [185.21.40.7])\n"
        "\tby mx.lindqvist.me (Postfix) with ESMTPS; {date}")


LIST_COPIES = [
    team_list_copy("<v3-go-no-go.1@lindqvist.me>"),
    team_list_copy("<offsite-notes.1@lindqvist.me>"),
]


# ==========================================================================
# Rendering
# ==========================================================================


@dataclass
class Built:
    msgid: str
    thread: Thread
    index: int
    spec: M
    sender: Person
    dt: datetime
    body: str  # authored text, wrapped (or HTML for html-only mails)
    source: str = ""  # authored text before wrapping (for HTML rendering)
    raw: bytes = b""
    parent: "Built | None" = None
    refs: list = field(default_factory=list)

    @property
    def folder(self) -> str:
        return "sent" if self.spec.frm == OWNER else "inbox"


def address(x) -> Address:
    if isinstance(x, Address):
        return x
    if x in P:
        return Address(P[x].name, addr_spec=P[x].addr)
    m = re.fullmatch(r"\s*(.*?)\s*<([^>]+)>\s*", x)
    if m:
        return Address(m.group(1), addr_spec=m.group(2))
    return Address("", addr_spec=x)


def reply_prefix(sender_key: str) -> str:
    if sender_key == "karin":
        return "SV: "
    if sender_key in ("bram", "sanne"):
        return "RE: "
    return "Re: "


def signature_for(th: Thread, spec: M, sender_key: str) -> str | None:
    if spec.sig is False:
        return None
    if isinstance(spec.sig, str):
        return spec.sig
    if sender_key == OWNER:
        return MAYA_HOME_SIG if th.ctx == "home" else MAYA_WORK_SIG
    return P[sender_key].sig


def set_subject(msg: EmailMessage, subject: str) -> None:
    if subject.isascii() and len(subject) > 78 - len("Subject: "):
        # fold long ASCII subjects at whitespace ourselves (the policy would
        # otherwise move the whole value onto a continuation line)
        lines = textwrap.wrap("Subject: " + subject, 78, break_long_words=False,
                              break_on_hyphens=False)
        msg.set_raw("Subject", "\n ".join(lines)[len("Subject: "):])
    else:
        msg["Subject"] = subject


def outlook_header(p: Built) -> str:
    """The block Outlook writes above a quoted message (no underscore rule above it)."""
    to = "; ".join(str(address(x)) for x in p.spec.to)
    subject = " ".join(str(message_from_bytes(p.raw, policy=policy.default)["Subject"]).split())
    return (f"From: {p.sender.name} <{p.sender.addr}>\n"
            f"Sent: {p.dt:%A}, {p.dt.day} {p.dt:%B %Y} {p.dt:%H:%M}\n"
            f"To: {to}\nSubject: {subject}")


def render(th: Thread, idx: int, spec: M, parent: Built | None) -> Built:
    sender = P[spec.frm]
    dt = parse_local(spec.date, sender.zone)
    msgid = f"<{th.slug}.{idx}@{sender.domain}>"
    body = spec.html if spec.html_only else wrap_text(clean(spec.body))
    b = Built(msgid, th, idx, spec, sender, dt, body, source=clean(spec.body),
              parent=parent)

    if parent is None:
        subject = spec.subject or th.subject
    elif spec.subject:
        subject = spec.subject
    elif spec.forward:
        subject = "Fwd: " + th.subject
    else:
        subject = reply_prefix(spec.frm) + th.subject

    msg = EmailMessage(policy=POLICY)
    msg["From"] = Address(spec.from_name or sender.name, addr_spec=sender.addr)
    msg["To"] = [address(x) for x in spec.to]
    if spec.cc:
        msg["Cc"] = [address(x) for x in spec.cc]
    legacy = spec.charset if spec.charset not in (None, "utf-8") else None
    if legacy and not subject.isascii():
        # legacy clients encode the subject in the body's charset and keep
        # the reply prefix as plain text: "SV: =?iso-8859-1?q?Br=F6llopet...?="
        m = re.match(r"((?:Re|RE|SV|Fwd): )?(.*)", subject)
        enc = Header(m.group(2), legacy).encode(maxlinelen=76, linesep="\n")
        msg.set_raw("Subject", (m.group(1) or "") + enc)
    else:
        set_subject(msg, subject)
    msg["Date"] = dt
    msg["Message-ID"] = msgid
    if parent is not None:
        b.refs = parent.refs + [parent.msgid]
        msg["In-Reply-To"] = parent.msgid
        msg["References"] = " ".join(b.refs)
    for k, v in {**sender.headers, **spec.headers}.items():
        msg[k] = v

    if spec.html_only:
        msg.set_content(spec.html, subtype="html")
    else:
        sig = signature_for(th, spec, spec.frm)
        text = body
        if sig:
            text += ("\n\n" if spec.outlook else "\n\n-- \n") + sig
        attrib = quoted = None
        if parent is not None and spec.forward:
            p = parent
            fwd_to = ", ".join(str(address(x)) for x in p.spec.to)
            text += ("\n\n---------- Forwarded message ---------\n"
                     f"From: {p.sender.name} <{p.sender.addr}>\n"
                     f"Date: {p.dt:%a}, {p.dt.day} {p.dt:%b %Y} at {p.dt:%H:%M}\n"
                     f"Subject: {p.thread.subject}\n"
                     f"To: {fwd_to}\n\n{p.body}")
        elif parent is not None and spec.outlook:
            text += "\n\n" + outlook_header(parent) + "\n\n" + parent.body
        elif parent is not None and spec.quote:
            attrib = attribution(sender.lang, parent.dt, parent.sender)
            quoted = parent.source
            text += "\n\n" + attrib + "\n" + quote_lines(parent.body)
        text += "\n"
        kw = {"charset": spec.charset or "utf-8"}
        if spec.cte:
            kw["cte"] = spec.cte
        msg.set_content(text, **kw)
        want_alt = spec.alt if spec.alt is not None else sender.alt
        if spec.html is not None:
            msg.add_alternative(spec.html, subtype="html")
        elif want_alt:
            msg.add_alternative(to_html(clean(spec.body), sig, attrib, quoted),
                                subtype="html")

    for a in spec.att:
        if isinstance(a.data, str):
            msg.add_attachment(a.data, subtype=a.subtype, filename=a.filename,
                               params=a.params or None)
        else:
            msg.add_attachment(a.data, maintype=a.maintype, subtype=a.subtype,
                               filename=a.filename)

    # deterministic boundaries, no MIME-Version on sub-parts
    k = 0
    for part in msg.walk():
        if part is not msg and "MIME-Version" in part:
            del part["MIME-Version"]
        if part.is_multipart():
            k += 1
            part.set_boundary(f"=_{th.slug}.{idx}_{k}_=")
    b.raw = msg.as_bytes(policy=POLICY)
    return b


def build_all() -> list[Built]:
    out: list[Built] = []
    slugs = set()
    for th in THREADS:
        if th.slug in slugs:
            raise ValueError(f"duplicate thread slug {th.slug}")
        slugs.add(th.slug)
        built: list[Built] = []
        for i, spec in enumerate(th.msgs, 1):
            parent = None
            if i > 1:
                parent = built[(spec.reply_to or i - 1) - 1]
            b = render(th, i, spec, parent)
            if parent is not None and not b.dt > parent.dt:
                raise ValueError(f"{b.msgid} is not later than its parent")
            built.append(b)
        out.extend(built)
    out.sort(key=lambda b: (b.dt.astimezone(timezone.utc), b.msgid))
    return out


@dataclass
class Copy:
    of: Built
    raw: bytes
    dt: datetime  # when the list delivered it (the mbox From line)
    folder: str


def render_copy(b: Built, c: ListCopy) -> Copy:
    msg = message_from_bytes(b.raw, policy=POLICY)
    if msg.get_content_type() != "text/plain":
        raise ValueError(f"{b.msgid}: list copies of text/plain mails only")
    subject = c.tag + " ".join(str(msg["Subject"]).split())
    del msg["Subject"]
    set_subject(msg, subject)
    for k, v in c.headers.items():
        msg[k] = v
    msg.set_content(msg.get_content().rstrip("\n") + "\n\n-- \n" + c.footer + "\n")
    dt = b.dt + timedelta(minutes=2)
    received = f"Received: {c.received.format(date=format_datetime(dt))}\n"
    return Copy(b, received.encode("ascii") + msg.as_bytes(policy=POLICY), dt, c.folder)


def build_copies(msgs: list[Built]) -> list[Copy]:
    by_id = {b.msgid: b for b in msgs}
    return [render_copy(by_id[c.msgid], c) for c in LIST_COPIES]


# ==========================================================================
# Writing mbox + Maildir
# ==========================================================================

_FROM_RE = re.compile(rb"(?m)^(>*From )")


def mbox_from_line(sender: str, dt: datetime) -> bytes:
    u = dt.astimezone(timezone.utc)
    return (f"From {sender} {u:%a %b} {u.day:2d} {u:%H:%M:%S} {u.year}\n"
            ).encode("ascii")


def write_outputs(msgs: list[Built], copies: list[Copy]) -> dict:
    if MAIL_DIR.exists():
        shutil.rmtree(MAIL_DIR)
    MAIL_DIR.mkdir(parents=True)

    # mbox (mboxrd quoting: any line matching ^>*From  gets one more '>')
    entries = [(b.dt, b.sender.addr, b.raw) for b in msgs]
    entries += [(c.dt, c.of.sender.addr, c.raw) for c in copies]
    entries.sort(key=lambda e: e[0].astimezone(timezone.utc))  # stable: a copy after its original
    with open(MBOX_PATH, "wb") as f:
        for dt, sender, raw in entries:
            raw = raw if raw.endswith(b"\n") else raw + b"\n"
            f.write(mbox_from_line(sender, dt))
            f.write(_FROM_RE.sub(rb">\1", raw))
            f.write(b"\n")

    # Maildir++
    folders = {"inbox": MAILDIR_PATH, "sent": MAILDIR_PATH / ".Sent"}
    for root in folders.values():
        for sub in ("cur", "new", "tmp"):
            (root / sub).mkdir(parents=True, exist_ok=True)
        (root / "tmp" / ".gitkeep").write_bytes(b"")
    (folders["sent"] / "maildirfolder").write_bytes(b"")

    replied = {b.parent.msgid for b in msgs
               if b.spec.frm == OWNER and b.parent is not None}
    inbox = [b for b in msgs if b.folder == "inbox"]
    sent = [b for b in msgs if b.folder == "sent"]
    unread = {b.msgid for b in inbox[-6:]}  # the last few arrivals: unread
    unsynced = {b.msgid for b in sent[-1:]}  # sent from the phone, not yet seen
    names = {}
    for n, b in enumerate(msgs, 1):
        epoch = int(b.dt.timestamp())
        base = f"{epoch}.M{n}P100Q{n}.demo"
        root = folders[b.folder]
        if b.msgid in unread or b.msgid in unsynced:
            path = root / "new" / base
        else:
            flags = "S"
            if b.msgid in replied:
                flags += "R"
            if b.spec.flagged:
                flags += "F"
            path = root / "cur" / f"{base}:2,{''.join(sorted(flags))}"
        path.write_bytes(b.raw)
        names[b.msgid] = path
    for n, c in enumerate(copies, len(msgs) + 1):
        root = MAILDIR_PATH / c.folder
        for sub in ("cur", "new", "tmp"):
            (root / sub).mkdir(parents=True, exist_ok=True)
        (root / "tmp" / ".gitkeep").write_bytes(b"")
        (root / "new" / ".gitkeep").write_bytes(b"")
        (root / "maildirfolder").write_bytes(b"")
        base = f"{int(c.dt.timestamp())}.M{n}P100Q{n}.demo"
        (root / "cur" / f"{base}:2,S").write_bytes(c.raw)
    for root in folders.values():
        for sub in ("cur", "new"):
            if not any((root / sub).iterdir()):
                raise AssertionError(f"{root / sub} would be empty in git")
    return names


# ==========================================================================
# Self-check
# ==========================================================================

DATE_MIN = datetime(2026, 1, 5, tzinfo=timezone.utc) - timedelta(hours=2)
DATE_MAX = datetime(2026, 10, 31, tzinfo=timezone.utc)
MSGID_RE = re.compile(r"^<[a-z0-9-]+\.\d+@[a-z0-9.-]+\.[a-z]+>$")
ATTRIB_RE = re.compile(r"^(On .+ wrote:|Den .+ skrev .+:|Op .+ schreef .+:)$")


def norm(s: str) -> str:
    return " ".join(s.split()).lower()


def body_parts(msg):
    """(content_type, charset, text) for the non-attachment text parts."""
    for part in msg.walk():
        if part.is_multipart() or part.get_content_disposition() == "attachment":
            continue
        if part.get_content_maintype() == "text":
            yield part.get_content_type(), part.get_content_charset(), part.get_content()


def authored_text(msg) -> str:
    """Decoded body text without quoted reply lines and attribution lines."""
    chunks = []
    plain = [t for ct, _, t in body_parts(msg) if ct == "text/plain"]
    if plain:
        for t in plain:
            keep = [ln for ln in t.split("\n")
                    if not ln.startswith(">") and not ATTRIB_RE.match(ln)]
            chunks.append("\n".join(keep))
    else:
        chunks += [html_to_text(t) for ct, _, t in body_parts(msg)
                   if ct == "text/html"]
    return "\n".join(chunks)


def word_count(b: Built) -> int:
    text = html_to_text(b.body) if b.spec.html_only else b.body
    return len(re.findall(r"\w+", text))


def check_copies(copies: list[Copy], parsed: dict) -> list[str]:
    """A list copy keeps the original's Message-ID, Date and authored text; its subject differs."""
    problems = []
    for c in copies:
        m, orig = message_from_bytes(c.raw, policy=policy.default), parsed[c.of.msgid]
        text, orig_text = (x.get_content().split("\n-- \n")[0] for x in (m, orig))
        same = [m["Message-ID"] == orig["Message-ID"], m["Date"] == orig["Date"],
                text == orig_text, m["Subject"] != orig["Subject"], m["List-ID"] is not None]
        if not all(same):
            problems.append(f"list copy of {c.of.msgid}: {same}")
    return problems


def self_check(msgs: list[Built], names: dict, copies: list[Copy]) -> dict:
    problems: list[str] = []

    def need(cond, what):
        if not cond:
            problems.append(what)

    ids = [b.msgid for b in msgs]
    need(len(ids) == len(set(ids)), "duplicate Message-IDs")
    need(len(msgs) >= 160, f"only {len(msgs)} messages (< 160)")
    idset = set(ids)

    parsed = {}
    for b in msgs:
        m = message_from_bytes(b.raw, policy=policy.default)
        parsed[b.msgid] = m
        need(MSGID_RE.match(b.msgid) is not None, f"bad Message-ID {b.msgid}")
        need(m["Message-ID"] == b.msgid, f"{b.msgid}: Message-ID round trip")
        for h in ("From", "To", "Date", "Subject", "Message-ID"):
            need(m[h] is not None, f"{b.msgid}: missing {h}")
        need(DATE_MIN <= m["Date"].datetime <= DATE_MAX, f"{b.msgid}: date out of range")
        if b.sender.zone == "eu":
            need(m["Date"].datetime.utcoffset() ==
                 timedelta(hours=tz_offset("eu", b.dt.replace(tzinfo=None))),
                 f"{b.msgid}: wrong Rotterdam offset")
        if b.parent is not None:
            need(m["In-Reply-To"] == b.parent.msgid, f"{b.msgid}: In-Reply-To")
            refs = str(m["References"]).split()
            need(refs and refs[-1] == b.parent.msgid and all(r in idset for r in refs),
                 f"{b.msgid}: References")
            need(re.match(r"^(Re|RE|SV|Fwd): ", str(m["Subject"])) is not None,
                 f"{b.msgid}: reply subject")
        if b.spec.frm != OWNER and m["List-ID"] is None:
            rcpt = " ".join(str(m[h] or "") for h in ("To", "Cc"))
            need(P[OWNER].addr in rcpt, f"{b.msgid}: Maya is not a recipient")
        wc = word_count(b)
        if b.spec.long:
            need(wc >= 800, f"{b.msgid}: marked long but {wc} words")
        else:
            need(40 <= wc <= 400, f"{b.msgid}: {wc} words (want 40-400)")

    # threads (union-find over Message-ID / In-Reply-To / References)
    parent_of = {i: i for i in ids}

    def find(x):
        while parent_of[x] != x:
            parent_of[x] = parent_of[parent_of[x]]
            x = parent_of[x]
        return x

    for mid, m in parsed.items():
        links = str(m["References"] or "").split() + str(m["In-Reply-To"] or "").split()
        for r in links:
            need(r in idset, f"{mid}: dangling reference {r}")
            if r in idset:
                parent_of[find(mid)] = find(r)
    groups: dict[str, int] = {}
    for i in ids:
        groups[find(i)] = groups.get(find(i), 0) + 1
    threads = [n for n in groups.values() if n >= 2]
    need(len(threads) >= 32, f"only {len(threads)} threads")
    need(sum(3 <= n <= 8 for n in threads) >= 20, "too few 3-8 message threads")

    html_only = multipart_alt = with_att = 0
    charsets: dict[str, int] = {}
    encoded_subjects = quoted_replies = signed = 0
    for b in msgs:
        m = parsed[b.msgid]
        raw_headers = b.raw.split(b"\n\n", 1)[0]
        if re.search(rb"^Subject:.*=\?", raw_headers, re.M):
            encoded_subjects += 1
        types = [p.get_content_type() for p in m.walk()]
        if m.get_content_type() == "text/html":
            html_only += 1
            need("<p" in b.body.lower() and "<table" in b.body.lower(),
                 f"{b.msgid}: html-only mail without real markup")
        if "multipart/alternative" in types:
            multipart_alt += 1
        if any(p.get_content_disposition() == "attachment" for p in m.walk()):
            with_att += 1
        for ct, cs, _ in body_parts(m):
            if ct == "text/plain":
                charsets[cs] = charsets.get(cs, 0) + 1
            if cs in ("iso-8859-1", "windows-1252"):
                payload = next(p for p in m.walk() if p.get_content_charset() == cs
                               and p.get_content_type() == ct).get_payload(decode=True)
                try:
                    payload.decode("utf-8")
                    problems.append(f"{b.msgid}: {cs} payload is valid UTF-8")
                except UnicodeDecodeError:
                    pass
        text = next((t for ct, _, t in body_parts(m) if ct == "text/plain"), "")
        if "\n-- \n" in text:
            signed += 1
        if b.parent is not None and re.search(r"(wrote|skrev|schreef).*:\n> ", text):
            quoted_replies += 1
    legacy = charsets.get("iso-8859-1", 0) + charsets.get("windows-1252", 0)
    need(html_only >= 8, f"only {html_only} HTML-only mails")
    need(multipart_alt >= 10, f"only {multipart_alt} multipart/alternative mails")
    need(with_att >= 8, f"only {with_att} mails with attachments")
    need(legacy >= 3 and charsets.get("iso-8859-1") and charsets.get("windows-1252"),
         f"legacy charsets: {charsets}")
    need(encoded_subjects >= 3, "too few non-ASCII (encoded-word) subjects")
    need(sum(b.spec.long for b in msgs) >= 3, "need at least 3 long mails")
    need(signed * 2 > len(msgs), "fewer than half the mails carry a signature")
    need(quoted_replies >= 40, f"only {quoted_replies} quoting replies")
    need(len({b.sender.addr for b in msgs}) >= 20, "too few distinct senders")

    # QA file
    qa = []
    if QA_PATH.exists():
        for n, line in enumerate(QA_PATH.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip():
                qa.append(json.loads(line))
    need(len(qa) >= 30, f"only {len(qa)} QA items")
    need(len({q.get("id") for q in qa}) == len(qa), "duplicate QA ids")
    by_id = {b.msgid.strip("<>"): b for b in msgs}
    qa_html = qa_legacy = qa_late_chunk = 0
    for q in qa:
        for k in ("id", "question", "answer", "must_contain", "source", "kind"):
            need(k in q, f"QA {q.get('id')}: missing {k}")
        need(q.get("kind") == "email", f"QA {q.get('id')}: kind")
        b = by_id.get(q.get("source"))
        if b is None:
            problems.append(f"QA {q.get('id')}: unknown source {q.get('source')}")
            continue
        m = parsed[b.msgid]
        text = norm(authored_text(m))
        for s in q["must_contain"]:
            pos = text.find(norm(s))
            need(pos >= 0, f"QA {q['id']}: {s!r} not in {b.msgid}")
            if b.spec.long and pos > 2500:
                qa_late_chunk += 1
        if m.get_content_type() == "text/html":
            qa_html += 1
        if any(cs in ("iso-8859-1", "windows-1252") for _, cs, _ in body_parts(m)):
            qa_legacy += 1
    need(qa_html >= 2, "need QA items answered by HTML-only mails")
    need(qa_legacy >= 2, "need QA items answered by legacy-charset mails")
    need(qa_late_chunk >= 1, "need a QA item from a later chunk of a long mail")
    need(len({by_id[q['source']].thread.slug for q in qa
              if q.get('source') in by_id}) >= 20, "QA covers too few threads")

    problems += check_copies(copies, parsed)

    size = sum(p.stat().st_size for p in MAIL_DIR.rglob("*") if p.is_file())
    need(size < 3 * 1024 * 1024, f"data/mail is {size} bytes")

    if problems:
        raise AssertionError("self-check failed:\n  " + "\n  ".join(problems))
    return {
        "emails": len(msgs),
        "list_copies": len(copies),
        "inbox": sum(b.folder == "inbox" for b in msgs),
        "sent": sum(b.folder == "sent" for b in msgs),
        "threads(>=2 msgs)": len(threads),
        "threads 3-8 msgs": sum(3 <= n <= 8 for n in threads),
        "largest thread": max(threads),
        "html_only": html_only,
        "multipart_alternative": multipart_alt,
        "with_attachments": with_att,
        "text/plain charsets": charsets,
        "encoded_subjects": encoded_subjects,
        "long_mails": sum(b.spec.long for b in msgs),
        "distinct_senders": len({b.sender.addr for b in msgs}),
        "qa_items": len(qa),
        "qa_html_only": qa_html,
        "qa_legacy_charset": qa_legacy,
        "qa_late_chunk": qa_late_chunk,
        "bytes_data_mail": size,
    }


def main() -> int:
    msgs = build_all()
    copies = build_copies(msgs)
    names = write_outputs(msgs, copies)
    stats = self_check(msgs, names, copies)
    for k, v in stats.items():
        print(f"{k:24} {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
