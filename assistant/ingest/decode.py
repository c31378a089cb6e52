"""Bytes → text for any declared (or undeclared, or bogus) charset, counting what was replaced;
and quoted-printable that no header declared."""

from __future__ import annotations

import codecs
import quopri
import re

REPLACEMENT = "\ufffd"
FALLBACK = "cp1252"
_HEADER_END = re.compile(rb"\r?\n\r?\n")
# quoted-printable's marks: a soft line break ('=' ending a line; not a '====' rule's last '=',
# not an encoded word's '?='), and the escapes only its encoder writes: '=3D' (an '=' itself), an
# 8-bit byte (=E9, =92, =A0), a space or tab kept at a line's end or before a word (=20, =09).
# '=12' or '=20' before a digit is counted nowhere: 'n=12', 'price=20.5', 'ID=20727' are text.
_SOFT_BREAK = re.compile(rb"(?<![=?])=\r?$", re.MULTILINE)
_ESCAPE = re.compile(rb"=(?:3D|[89A-F][0-9A-F]|(?:20|09)(?=\r?$|[A-Za-z]))", re.MULTILINE)
# a long line without a lowercase letter is data (uuencoded, say), which holds both by chance
_DATA_LINE = re.compile(rb"^[^a-z\n]{40,}$", re.MULTILINE)
# nor is an '=XX' in a URL (a query string) or in an RFC 2047 encoded word an escape
_NOT_ESCAPES = re.compile(rb"(?<!\S)\S*(?:://|www\.)\S*|=\?[^?\s]+\?[QqBb]\?[^?\s]*\?=")
# byte order marks, longest first (UTF-32 LE's starts with UTF-16 LE's): the codec that reads
# past each. Windows writes them: Notepad's "Unicode" notes, Excel's "Unicode text" and "CSV
# UTF-8".
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


# labels mailers write that Python's codecs do not know: the "-i"/"-e" variants of the Hebrew
# and Arabic ISO sets (Outlook's usual label on Hebrew mail) are the same bytes as the base set;
# "unknown-8bit" is almost always Windows-1252. Registered for the whole process, so that the
# email package reads encoded words (=?iso-8859-8-i?Q?…?=) in headers with them too.
_KNOWN_AS = {
    "iso_8859_8_i": "iso8859_8", "iso_8859_8_e": "iso8859_8",
    "iso_8859_6_i": "iso8859_6", "iso_8859_6_e": "iso8859_6",
    "unknown_8bit": "cp1252", "x_unknown": "cp1252",
}  # fmt: skip


def _search(name: str) -> codecs.CodecInfo | None:
    known = _KNOWN_AS.get(name.replace("-", "_"))
    return codecs.lookup(known) if known else None


codecs.register(_search)


def decode_bytes(data: bytes, charset: str | None) -> tuple[str, int, str | None]:
    """Decode `data`; return (text, replaced_count, warning).

    A byte order mark is trusted first, and left out of the text; then a declared charset; an
    unknown one, or none, falls back to UTF-8 if the bytes are valid UTF-8, else to Windows-1252
    (the usual mislabelled Latin-1) with replacement.
    """
    bom = next((codec for mark, codec in _BOMS if data.startswith(mark)), None)
    if bom:
        text = data.decode(bom, errors="replace")
        return text, _replaced(text, data), None
    warning = None
    if charset:
        try:
            info = codecs.lookup(_alias(charset))
        except LookupError:
            info, warning = None, f"unknown charset {charset!r}; decoded as UTF-8/Windows-1252"
        if info is not None and not info._is_text_encoding:
            # a transfer encoding or a codec Python keeps for bytes ("quoted-printable",
            # "base64", "hex"): a mix-up with Content-Transfer-Encoding, no text's charset
            info = None
            warning = f"charset {charset!r} is no text encoding; decoded as UTF-8/Windows-1252"
        codec = info.name if info is not None else None
        if codec == "ascii":
            codec = None  # 8-bit bytes under a us-ascii label are nearly always UTF-8
        if codec:
            try:
                text = data.decode(codec, errors="replace")
            except (LookupError, UnicodeError) as exc:  # "idna", "undefined": no replacing
                warning = (
                    f"charset {charset!r} cannot decode ({exc}); decoded as UTF-8/Windows-1252"
                )
            else:
                return text, _replaced(text, data), warning
    try:
        return data.decode("utf-8"), 0, warning
    except UnicodeDecodeError:
        text = data.decode(FALLBACK, errors="replace")
        return text, _replaced(text, data), warning


def _alias(charset: str) -> str:
    cs = charset.strip().strip('"').lower()
    return {"ansi_x3.4-1968": "ascii"}.get(cs, cs)  # unknown-8bit and the like: _KNOWN_AS


def _replaced(text: str, data: bytes) -> int:
    # U+FFFD present as valid UTF-8 in the source is not a replacement.
    return max(0, text.count(REPLACEMENT) - data.count(b"\xef\xbf\xbd"))


def utf8_headers(raw: bytes) -> bytes:
    """`raw` with each header line in raw 8-bit bytes that are not UTF-8 read as Windows-1252 and
    re-encoded as UTF-8. The parser keeps raw UTF-8 in headers but turns every other 8-bit byte
    into U+FFFD; a mailer that wrote them unencoded almost always wrote Latin-1."""
    end = _HEADER_END.search(raw)
    cut = end.start() if end else len(raw)
    if raw[:cut].isascii():
        return raw
    return b"\n".join(_as_utf8(line) for line in raw[:cut].split(b"\n")) + raw[cut:]


def _as_utf8(line: bytes) -> bytes:
    try:
        line.decode("utf-8")
    except UnicodeDecodeError:
        return line.decode(FALLBACK, errors="replace").encode("utf-8")
    return line


def undeclared_qp(data: bytes) -> bytes | None:
    """`data` decoded from quoted-printable where it evidently is quoted-printable though no
    header says so (many public mail bodies lost that header, and their soft breaks and escapes
    split words for search and show in quotes); None where it is not. Evident: soft line breaks
    and escapes together, or soft breaks ending a third of its lines, or three escapes. Text
    that merely holds '=' (code, 'a=b', query strings, '====' rules, base64 padding) is none."""
    if b"=" not in data or not (_SOFT_BREAK.search(data) or _ESCAPE.search(data)):
        return None  # most mail: no mark of it at all
    text = _DATA_LINE.sub(b"", data)
    soft = len(_SOFT_BREAK.findall(text))
    escapes = len(_ESCAPE.findall(_NOT_ESCAPES.sub(b" ", text)))
    lines = sum(1 for line in text.splitlines() if line.strip())
    evident = (soft and escapes) or (soft >= 3 and 3 * soft >= lines) or escapes >= 3
    return quopri.decodestring(data) if evident else None
