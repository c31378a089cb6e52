"""What `search` and `show` print: one row per mail (sender · date · subject, the best line),
and one whole mail. Shared by the CLI's commands; the rows come from assistant/mail/rows.py."""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Console
from rich.markup import escape
from rich.text import Text

from assistant.cli.output import dump_json, nothing_imported
from assistant.knowledge.retrieval import Hit
from assistant.mail.query import MailQuery
from assistant.mail.rows import MailRow, mail_rows
from assistant.services import Services

FETCH_PER_MAIL = 4  # chunks fetched per row asked for: a mail's chunks and copies share one row
console = Console(stderr=True, soft_wrap=True)


def search(
    ctx: Services,
    text: str,
    k: int | None,
    mode: str,
    as_json: bool,
    warn: Callable[[Services], None],
) -> int:
    """`assistant search`: what was read from the query, then one row per mail."""
    if nothing_imported(ctx):
        return 1
    query = ctx.reader.read(text)
    matched = ctx.reader.count(query.filters) if query.filters else None
    if matched is not None and not as_json:
        print_filters(console, query.filters.describe(), matched)
    k = k or ctx.settings.retrieval.top_k
    rows, hits = search_rows(ctx, query, k, mode) if matched != 0 else ([], {})
    if mode != "bm25":
        warn(ctx)
    if as_json:
        shown = query.filters.as_dict()
        dump_json([row_dict(row, hits.get(row.chunk_id), shown) for row in rows])
        return 0
    if not rows and matched is None:
        console.print("No mail matches these words.")
    print_rows(Console(highlight=False), rows)
    return 0


def show(ctx: Services, ident: str, as_json: bool) -> int:
    """`assistant show ID`: one whole mail or note."""
    mail = ctx.store.mail.mail(ident.lstrip("#"))
    if mail is None:
        console.print(
            f"No mail or note {ident!r}: use the #number `search` shows, or a Message-ID."
        )
        return 1
    if as_json:
        dump_json(mail)
    else:
        # as Text: a ":x:" or ":rocket:" in the mail is printed as written, not as an emoji
        Console(highlight=False).print(Text(mail_text(mail)), soft_wrap=True)
    return 0


def search_rows(ctx: Services, query: MailQuery, k: int, mode: str) -> tuple[list[MailRow], dict]:
    """The first `k` mails for `query`, and the hits they came from by chunk id."""
    hits = search_hits(ctx, query, k * FETCH_PER_MAIL, mode)
    refs = ctx.store.mail.refs([h.chunk_id for h in hits])
    keys = list(dict.fromkeys(r.copy_key for r in refs.values() if r.kind == "email"))
    rows = mail_rows(hits, refs, query.text, k, ctx.store.mail.folders(keys))
    return rows, {h.chunk_id: h for h in hits}


def search_hits(ctx: Services, query: MailQuery, n: int, mode: str) -> list[Hit]:
    where = query.filters or None
    if ctx.settings.rerank == "off" or not ctx.reranker.active or not query.text.strip():
        return ctx.retriever.search(query.text, k=n, mode=mode, where=where)
    from assistant.rerank.selection import select  # the prompt's selection, n chunks

    duplicates = ctx.settings.answer.duplicates
    return select(
        ctx.retriever, ctx.reranker, query.text, n, duplicates, search_mode=mode, where=where
    )


def row_dict(row: MailRow, hit: Hit | None, filters: dict) -> dict:
    """A row as `search --json` writes it: the chunk's fields as before, and the mail's."""
    out = hit.record.ref() if hit is not None else {}
    out.update(
        rank=row.rank,
        score=row.score,
        bm25_rank=hit.bm25_rank if hit else None,
        dense_rank=hit.dense_rank if hit else None,
        subject=row.subject if row.kind == "email" else None,
        text=hit.record.text if hit else "",
        document_id=row.document_id,
        who=row.sender,
        line=row.line,
        folders=row.folders,
        copies=row.copies,
        filters=filters,
    )
    return out


def print_filters(console: Console, shown: str, matched: int) -> None:
    """What was read from the query, and how many mails meet it."""
    if matched:
        plural = "s" if matched != 1 else ""
        console.print(f"[cyan]Filters:[/] {escape(shown)} [dim]({matched:,} mail{plural})[/]")
    else:
        # only typed terms leave nothing (filters read from words rank instead), and
        # --no-filters keeps those: the way out is to type fewer
        console.print(
            f"[yellow]No mail meets {escape(shown)}[/]: nothing is searched outside it; "
            "leave a term out to search more of your mail."
        )


def print_rows(out: Console, rows: list[MailRow]) -> None:
    for row in rows:
        head = Text(f"{row.rank:2d}. ", style="bold")
        head.append(f"{row.sender} · {row.date or 'no date'} · ", style="bold")
        head.append(row.subject or "(no subject)", style="bold")
        head.append(f"  #{row.document_id}", style="dim")
        if len(row.folders) > 1 or row.copies > 1:
            head.append(f"  [{', '.join(row.folders)}; {row.copies} copies]", style="dim")
        out.print(head, soft_wrap=True)
        out.print(Text(f"    {row.line}"), soft_wrap=True)


def mail_text(mail: dict) -> str:
    """A stored mail as `show` prints it: headers, a blank line, the body, the quoted tail."""
    if mail["kind"] == "note":
        return f"Note: {mail['title']}\nFile: {mail['source_path']}\n\n{mail['body']}"
    heads = [
        ("From", _with_name(mail["sender"], mail["sender_name"])),
        ("To", _with_name(mail["recipients"], mail["recipient_names"])),
        ("Cc", _with_name(mail["cc"], mail["cc_names"])),
        ("Date", mail["date"]),
        ("Subject", mail["title"]),
        ("Message-ID", f"<{mail['message_id']}>" if mail["message_id"] else ""),
        ("Folders", ", ".join(mail["folders"]) or mail["folder"]),
        ("Attachments", ", ".join(a["name"] for a in mail["attachments"])),
    ]
    lines = [f"{name}: {value}" for name, value in heads if value]
    body = mail["body"] + (f"\n\n{mail['quoted']}" if mail["quoted"] else "")
    return "\n".join(lines) + "\n\n" + body.rstrip() + "\n"


def _with_name(addresses: str, names: str) -> str:
    """An address header, with the names kept beside it where the header holds none."""
    if not names or not addresses or "<" in addresses:
        return addresses
    return f"{addresses} ({names})"
