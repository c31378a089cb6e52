"""How `assistant ask` writes an answer: the quote with its span in bold, the model's sentence,
the sources and timings (rich text), or one JSON object per event (`--json`)."""

from __future__ import annotations

from dataclasses import asdict

from rich.console import Console


def quote_block(quote):
    """The mail's own lines with the answer span in bold and the mail under them; or "not
    found" with the nearest mails. The model's sentence, when one is shown, follows later."""
    from rich.text import Text

    from assistant.answer import shape

    if quote.band == "none":
        lines = [shape.NOT_FOUND, *shape.nearest_lines(quote.nearest)]
        return Text("\n".join(lines), style="bold yellow")
    text = Text()
    text.append(shape.quoted(quote.lines))
    if quote.span:
        text.highlight_words([quote.span], style="bold")
    text.append(f"\n— {shape.mail_line(quote.mail)}", style="dim")
    if quote.also:
        where = shape.mail_line(quote.also_mail)
        text.append("\n" + shape.also_text(quote.also, where), style="dim")
    return text


def print_verdict(out: Console, judged) -> None:
    """The reader's verdict on the quote shown (QuoteJudged): a line under it, or the quote it
    puts in its place (another line, or "not found")."""
    from rich.text import Text

    if judged.verdict == "confirmed":
        out.print(Text("✓ The reader model finds the answer stated here.", style="green"))
    elif judged.verdict == "unsure":  # the sentence decides; a mark comes with it if need be
        return
    elif judged.verdict == "moved":
        out.print(Text("The reader model finds it stated in another line:", style="green"))
        out.print(quote_block(judged.quote), soft_wrap=True)
    else:
        out.print(Text("The reader model finds it stated in none of them:", style="yellow"))
        out.print(quote_block(judged.quote), soft_wrap=True)


def print_done(out: Console, err: Console, done) -> None:
    """After the quote: the model's sentence where it stands in the quote (marked, with its
    reason, where only other mails of the prompt hold its terms), then the sources, one line
    per mail, and the timings."""
    from rich.text import Text

    from assistant.answer.shape import WEAK, reason

    if done.sentence:
        out.print(Text(done.sentence), soft_wrap=True)  # ":x:" as written, not an emoji
    if done.sentence and not done.supported and done.unsupported:
        out.print(Text(reason(done.unsupported), style="bold yellow"))
    if done.band == "weak":
        out.print(Text(WEAK, style="bold yellow"), soft_wrap=True)
    out.print()
    for i, s in enumerate(done.sources, 1):
        where = s["message_id"] or s["note_path"]
        when = (s["date"] or "")[:10]
        source = f"[{i}] {s['sender'] or 'note'} · {when} · {s['title']} ({where})"
        out.print(Text(source, style="dim"), soft_wrap=True)
    t = done.timings
    err.print(
        f"[dim]quote {t.get('quote', 0.0):.2f}s · total {t['total']:.2f}s · prefill "
        f"{t['prefill']:.2f}s · decode {t['decode']:.2f}s · KV reused "
        f"{done.kv_reused_tokens}/{done.prompt_tokens}"
        f"{reuse_note(done.kv_reuse, done.kv_repaired)}[/]"
    )


def reuse_note(mode: str, repaired: int) -> str:
    """ ", any-order, 24 repaired" after the KV figures when chunks were placed any-order."""
    return f", {mode}, {repaired} repaired" if mode != "exact" else ""


def event_dict(event) -> dict:
    """One event of the answer as a JSON object (`ask --json`): a line each."""
    data = {"event": type(event).__name__}
    if hasattr(event, "hits"):
        data["chunk_ids"] = [h.chunk_id for h in event.hits]
    else:
        data.update(asdict(event))
    return data
