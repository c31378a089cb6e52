"""Reads chunks into knowledge-abstract items: the people, topics, dates and events of the mail.

The items come from the headers (sender, subject, date, note title) and from names and dates in
the text. An LLM pass was tried first and dropped: SmolLM2-135M, asked to list the people, dates
and events of a chunk, repeats one date or invents ones that are not in it, so the abstract is
built from what the mail says verbatim. The LLM's part in prediction is writing the questions.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from assistant.knowledge.store import ChunkRecord
from cache.prediction import AbstractItem

_REPLY = re.compile(r"^\s*((re|fwd?|aw|sv|vs)\s*:\s*)+", re.I)
# Two or three capitalised words in a row: "Bram de Vries" style names keep a lowercase particle.
_NAME = re.compile(r"\b([A-Z][a-zà-ÿ]+(?: (?:de |van |van der |da )?[A-Z][a-zà-ÿ]+){1,2})\b")
_DATE = re.compile(
    r"\b(\d{1,2} (?:January|February|March|April|May|June|July|August|September|October|"
    r"November|December)(?: \d{4})?|\d{4}-\d{2}-\d{2})\b"
)
_NOT_NAMES = {"Good Morning", "Best Regards", "Kind Regards", "Happy New"}


def extract_items(record: ChunkRecord, max_names: int = 4) -> Iterator[AbstractItem]:
    cid = record.chunk_id
    topic = _REPLY.sub("", record.title).strip()
    if topic:
        yield AbstractItem(cid, "topic", topic)
    if record.sender:
        yield AbstractItem(cid, "person", record.sender.split("<")[0].strip().strip('"'))
    if record.date and topic and record.kind == "email":
        yield AbstractItem(cid, "event", f"{topic} ({record.date[:10]})")
    names = [n for n in dict.fromkeys(_NAME.findall(record.text)) if n not in _NOT_NAMES]
    for name in names[:max_names]:
        yield AbstractItem(cid, "person", name)
    for date in dict.fromkeys(_DATE.findall(record.text)):
        yield AbstractItem(cid, "date", f"{date}: {topic}" if topic else date)
