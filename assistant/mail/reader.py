"""What a search or a question asks of the mail: query terms when it has them (mail/query.py),
else filters read from its words (mail/questions.py), against the mailbox's address book
(mail/address_book.py) and a `today` that defaults to the real one and can be pinned
(`--today`, config `[mail] today`)."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Literal

from assistant.knowledge.store import KnowledgeStore
from assistant.mail import book_file
from assistant.mail.address_book import MailRows, build
from assistant.mail.filters import Condition, Filters
from assistant.mail.people import People
from assistant.mail.query import MailQuery, has_terms, parse
from assistant.mail.questions import QuestionReader

# "words": query terms, and filters read from a question's words; "terms": typed terms only;
# "off": nothing is read (a `from:` is searched as a word)
FilterMode = Literal["words", "terms", "off"]
FILTER_MODES: tuple[str, ...] = ("words", "terms", "off")
COUNTS_KEPT = 64  # filters' mail counts kept (the app asks many questions of one version)


class QueryReader:
    def __init__(
        self,
        store: KnowledgeStore,
        today: date | None = None,
        mode: FilterMode = "words",
        book_dir: Path | None = None,
    ) -> None:
        """`book_dir`: where the address book is kept between processes (mail/book_file.py;
        None: built in each process)."""
        self.store = store
        self.pinned = today
        self.mode = mode
        self.book_dir = book_dir
        self._people: tuple[int, People] | None = None
        self._counts: dict[tuple, int] = {}

    @property
    def today(self) -> date:
        return self.pinned or date.today()

    def people(self) -> People:
        """The address book, built once per change of the knowledge bank (and kept in
        `book_dir` for the next process)."""
        version = self.store.version("chunks")
        if self._people is None or self._people[0] != version:
            if self.book_dir is None:
                book = self._build()
            else:
                bank = self.store.identity()
                book = book_file.load_or_build(self.book_dir, bank, version, self._build)
            self._people = (version, book)
        return self._people[1]

    def _build(self) -> People:
        mail = self.store.mail
        return build(MailRows(mail.senders(), mail.recipients(), mail.lines()))

    def read(self, text: str) -> MailQuery:
        if self.mode == "off":
            return MailQuery(text)
        if has_terms(text):
            return parse(text, self.today, self.people())
        if self.mode == "terms":
            return MailQuery(text)
        filters = QuestionReader(self.people(), self.count, self.today).read(text)
        return MailQuery(filters.unsaid(text), filters)

    def count(self, condition: Condition | Filters) -> int:
        """Mails a condition (or filters) leaves; kept for the knowledge bank's version, as a
        question counts its filters when it reads them and again when it shows them (a name
        in the mail's text reads every mail)."""
        sql, params = condition.sql()
        key = (self.store.version("chunks"), sql, tuple(params))
        if key not in self._counts:
            if len(self._counts) >= COUNTS_KEPT or any(k[0] != key[0] for k in self._counts):
                self._counts.clear()
            self._counts[key] = self.store.mail.count(sql, params)
        return self._counts[key]
