from __future__ import annotations

import io
import json
import subprocess
import sys
import time

import pytest

from assistant import events as p
from assistant.answer.answerer import ALL_LAYERS, CacheLayers
from assistant.answer.evidence import Evidence
from assistant.answer.shape import WEAK
from assistant.cli import main
from assistant.knowledge.encoder import INT8_SUFFIX
from assistant.knowledge.store import KnowledgeStore
from assistant.services import Services, open_services
from tests.conftest import DATA, make_email, write_mbox


def test_help_is_instant_and_imports_no_model_code():
    code = (
        "import sys; from assistant.cli.cli import build_parser; build_parser().format_help();"
        "heavy = {'torch', 'sentence_transformers', 'llama_cpp', 'textual', 'numpy'};"
        "print(sorted(heavy & set(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_command_imports_neither_scipy_nor_faiss():
    """Every command imports assistant.cli.commands: scipy.sparse (once BM25's matrix) and faiss
    (the IVF index of homes past 150k chunks) cost a fifth of a one-shot `ask` that the QA bank
    serves (bench/results/cli_start.json); they load where they are used."""
    code = (
        "import sys, assistant.cli.commands, assistant.services;"
        "print(sorted(m for m in ('scipy', 'faiss') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_bad_path_is_a_clear_error(tmp_path, capsys):
    assert main(["import", "--home", str(tmp_path / "h"), str(tmp_path / "nothing")]) == 1
    assert "no such file or folder" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv, says",
    [
        (["search", ""], "give some words"),
        (["search", "   "], "give some words"),
        (["ask", ""], "give some words"),
        (["search", "lunch", "-k", "0"], "at least 1, got '0'"),
        (["search", "lunch", "-k", "-1"], "at least 1, got '-1'"),
    ],
)
def test_an_empty_query_or_no_rows_asked_is_a_usage_error(tmp_path, capsys, argv, says):
    """`search ""` listed arbitrary mail, `-k 0` showed 10 rows and `-k -1` 35: each is now
    refused before anything is opened, with exit 2."""
    with pytest.raises(SystemExit) as stop:
        main([*argv, "--home", str(tmp_path / "h")])
    assert stop.value.code == 2 and says in capsys.readouterr().err
    assert not (tmp_path / "h").exists()


@pytest.mark.parametrize("command", ["ask", "search", "chat"])
def test_asking_an_empty_home_says_to_import_first(tmp_path, capsys, monkeypatch, command):
    """A first run, or a --home typed wrong, answered "Not found in your mail" twice (the
    quote, then the reader's verdict on no lines) as if mail had been read; it now names the
    home and the commands that fill it, and exits 1."""
    monkeypatch.setattr("sys.stdin", io.StringIO("when does demolition start\n"))
    home = str(tmp_path / "h")
    argv = [command, "--home", home] + ([] if command == "chat" else ["demolition"])
    assert main(argv) == 1
    captured = capsys.readouterr()
    assert not captured.out and "Not found" not in captured.err
    assert f"No mail or notes in {home} yet" in captured.err
    assert f"assistant --home {home} import PATH" in captured.err


def test_corrupt_database_names_the_file(tmp_path, capsys):
    home = tmp_path / "h"
    home.mkdir()
    (home / "knowledge.db").write_bytes(b"this is not sqlite" * 100)
    assert main(["stats", "--home", str(home)]) == 2
    err = capsys.readouterr().err
    assert "knowledge.db" in err and "Move it aside" in err


def test_a_damaged_cache_database_names_the_file_and_what_moving_it_costs(tmp_path, capsys):
    home = tmp_path / "h"
    (home / "cache").mkdir(parents=True)
    damaged = home / "cache" / "qa.db"
    damaged.write_bytes(b"this is not sqlite" * 100)
    assert main(["precompute", "--status", "--home", str(home)]) == 2
    err = capsys.readouterr().err
    assert f"error: {damaged}: not a usable SQLite database" in err and "move it aside" in err
    assert damaged.read_bytes() == b"this is not sqlite" * 100  # left as it was


@pytest.mark.slow
def test_import_search_stats_json_with_the_real_embedder(tmp_path, capsys):
    box = write_mbox(
        tmp_path / "box.mbox",
        [
            make_email(
                subject="Kitchen", body="Demolition starts on Monday 2 March.", msgid="<k@x>"
            ),
            make_email(subject="Race", body="My half marathon time was 1:52:10.", msgid="<r@x>"),
        ],
    )
    home = str(tmp_path / "h")
    assert main(["import", "--home", home, str(box), str(DATA / "notes" / "work")]) == 0
    capsys.readouterr()
    assert main(["search", "--home", home, "--json", "-k", "3", "when does demolition start"]) == 0
    results = json.loads(capsys.readouterr().out)
    top = results[0]
    assert top["message_id"] == "k@x" and top["subject"] == "Kitchen"
    assert {"rank", "score", "date", "sender", "text", "note_path", "title"} <= set(top)
    assert main(["stats", "--home", home, "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["emails"] == 2 and stats["notes"] >= 10
    assert stats["embedded_chunks"] == stats["chunks"] > 0
    name = "all-MiniLM-L6-v2" + INT8_SUFFIX  # a new home's encoder
    assert stats["encoder"] == f"{name} ([expert.embedding] backend auto → onnx-int8)"
    assert stats["kv_cache"].startswith("0.00 GB in 0 nodes of ")  # sized from the free disk
    assert stats["night"] == "covered: 0% of the last 6 weeks (0 of 2 chunks); no night yet"
    assert main(["stats", "--home", home]) == 0
    shown = " ".join(capsys.readouterr().out.split())
    assert "([expert.embedding]" in shown  # printed, not taken for a markup tag


TIMES = {"ttft": 0.1, "total": 0.5, "prefill": 0.05, "decode": 0.4}
SOURCES = [
    {"chunk_id": 7, "title": "Tiles", "sender": "Bram", "date": "2026-03-02", "message_id": "t@x"},
    {
        "chunk_id": 9,
        "title": "Kitchen",
        "sender": "Bram",
        "date": "2026-03-01",
        "message_id": "k@x",
    },
]
DEMOLITION = Evidence(9, "Demolition starts Monday 2 March.")


class ScriptedAnswerer:
    """Yields the Answerer's own events, as given: what `ask` prints is all there is to see."""

    def __init__(self, events: list) -> None:
        self.events = events

    def answer(self, question: str, layers: CacheLayers = ALL_LAYERS, fresh: bool = False):
        yield from self.events


def ask(monkeypatch, tmp_path, events: list, *flags: str) -> int:
    monkeypatch.setattr(Services, "answerer", lambda ctx: ScriptedAnswerer(events))
    monkeypatch.setattr(KnowledgeStore, "count_chunks", lambda store: 2)  # the answers' mail
    return main(["ask", "--home", str(tmp_path / "h"), *flags, "when does demolition start"])


MAIL = {"sender": "Bram", "date": "2026-03-01", "subject": "Kitchen", "id": "k@x", "chunk_id": 9}


def quote(band: str = "answer") -> p.QuoteFound:
    nearest = [MAIL, {**MAIL, "subject": "Tiles", "chunk_id": 7}]
    return p.QuoteFound([DEMOLITION], "Monday 2 March", MAIL, band, 0.9, nearest)


def test_ask_prints_the_quote_first_then_the_sentence_and_one_line_per_mail(
    monkeypatch, tmp_path, capsys
):
    done = p.AnswerDone("q", "…", SOURCES, False, 0, 120, TIMES, [DEMOLITION], True)
    done.sentence = "Demolition starts on Monday 2 March."
    events = [p.ChunksOrdered([7, 9]), quote(), p.TokenStreamed("Demolition starts"), done]
    assert ask(monkeypatch, tmp_path, events) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "“Demolition starts Monday 2 March.”"
    assert out[1] == "— Bram · 2026-03-01 · Kitchen"
    assert out[2] == "Demolition starts on Monday 2 March."
    assert "Demolition starts" not in out[3:]  # the draft is not streamed as the answer
    assert "[2] Bram · 2026-03-01 · Kitchen (k@x)" in out
    assert not [line for line in out if line.startswith("Evidence")]  # the quote shows once


def test_ask_prints_the_sentence_as_written_shortcodes_too(monkeypatch, tmp_path, capsys):
    done = p.AnswerDone("q", "…", SOURCES, False, 0, 120, TIMES, [DEMOLITION], True)
    done.sentence = "The build :x: failed; the deploy :rocket: went out."
    assert ask(monkeypatch, tmp_path, [quote(), done]) == 0
    assert capsys.readouterr().out.splitlines()[2] == done.sentence


def test_ask_says_not_found_with_the_nearest_mails(monkeypatch, tmp_path, capsys):
    done = p.AnswerDone("q", "Not found in your mail.", SOURCES, False, 0, 0, TIMES)
    done.not_found, done.band = True, "none"
    assert ask(monkeypatch, tmp_path, [p.ChunksOrdered([7, 9]), quote("none"), done]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[:4] == [
        "Not found in your mail.",
        "The nearest mails:",
        "- Bram · 2026-03-01 · Kitchen",
        "- Bram · 2026-03-01 · Tiles",
    ]


def test_a_quote_the_model_does_not_confirm_is_marked_after_it(monkeypatch, tmp_path, capsys):
    done = p.AnswerDone("q", "…", SOURCES, False, 0, 120, TIMES, [DEMOLITION], False)
    done.band = "weak"
    assert ask(monkeypatch, tmp_path, [quote(), done]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "“Demolition starts Monday 2 March.”"
    assert out[2] == WEAK


def test_a_remembered_answer_says_so_and_shows_its_quote(monkeypatch, tmp_path, capsys):
    done = p.AnswerDone("q", "…", SOURCES, True, 0, 0, TIMES, [DEMOLITION], True)
    made = time.mktime((2026, 11, 24, 9, 30, 0, 0, 0, -1))
    events = [quote(), p.QAHitFound("when is demolition", 0.97, 4, made), done]
    assert ask(monkeypatch, tmp_path, events) == 0
    captured = capsys.readouterr()
    assert "Remembered answer, made 2026-11-24 09:30" in captured.err
    assert "when is demolition" in captured.err
    assert captured.out.splitlines()[0] == "“Demolition starts Monday 2 March.”"


def test_ask_json_carries_the_quote_its_span_mail_and_not_found(monkeypatch, tmp_path, capsys):
    done = p.AnswerDone("q", "“Demolition starts Monday 2 March.”", SOURCES, False, 0, 120,
                        TIMES, [DEMOLITION], True)  # fmt: skip
    done.span, done.mail = "Monday 2 March", MAIL
    assert ask(monkeypatch, tmp_path, [p.ChunksOrdered([7, 9]), quote(), done], "--json") == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert events[0] == {"event": "ChunksOrdered", "chunk_ids": [7, 9]}
    assert events[1]["event"] == "QuoteFound" and events[1]["span"] == "Monday 2 March"
    last = events[-1]
    assert last["event"] == "AnswerDone"
    assert last["evidence"] == [{"chunk_id": 9, "sentence": "Demolition starts Monday 2 March."}]
    assert last["supported"] is True and last["not_found"] is False
    assert last["span"] == "Monday 2 March" and last["mail"]["subject"] == "Kitchen"
    assert last["answer"].startswith("“Demolition")


@pytest.mark.slow
def test_ask_with_the_real_models_quotes_the_line_that_answers(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ASSISTANT_ANSWER_MAX_TOKENS", "16")
    monkeypatch.setenv("ASSISTANT_ANSWER_CONTEXT_CHUNKS", "2")
    box = write_mbox(
        tmp_path / "box.mbox",
        [
            make_email(subject="Kitchen", body="Demolition starts on Monday 2 March."),
            make_email(subject="Race", body="My half marathon time was 1:52:10."),
        ],
    )
    home = str(tmp_path / "h")
    assert main(["import", "--home", home, str(box)]) == 0
    capsys.readouterr()
    assert main(["ask", "--home", home, "When does the demolition start?"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "“Demolition starts on Monday 2 March.”"
    assert out[1].startswith("— ") and out[1].endswith(" · Kitchen")


@pytest.mark.slow
def test_ask_fresh_answers_afresh_and_tightens_only_a_wrong_remembered_answer(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("ASSISTANT_ANSWER_MAX_TOKENS", "12")
    box = write_mbox(
        tmp_path / "box.mbox",
        [
            make_email(
                subject="Kitchen",
                body="Demolition starts on Monday 2 March, the tiles come on Friday 6 March.",
            )
        ],  # fmt: skip
    )
    home = str(tmp_path / "h")
    assert main(["import", "--home", home, str(box)]) == 0
    assert main(["ask", "--home", home, "When does the demolition start?"]) == 0
    capsys.readouterr()
    assert main(["ask", "--home", home, "when does the demolition start"]) == 0
    assert "Remembered answer" in capsys.readouterr().err  # its quote is the stored one's
    qa = open_services(home).qa
    entry = next(e for e in qa.entries() if e.question == "When does the demolition start?")
    # a stored sentence every term of which stands in the quote, naming the other date
    qa.set_answer(entry.id, "It starts on Friday 6 March.", entry.sources,
                  entry.knowledge_version, entry.chunk_watermark, entry.evidence)  # fmt: skip
    assert main(["ask", "--home", home, "--json", "--fresh", "when does the demolition start"]) == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    kinds = [e["event"] for e in events]
    assert "QAHitFound" not in kinds and "TokenStreamed" in kinds  # answered afresh
    done = events[-1] if kinds[-1] == "AnswerDone" else events[-2]
    refused = next(e for e in open_services(home).qa.entries() if e.id == entry.id).refused_at
    if done["band"] == "answer" and "Friday" not in done["sentence"]:  # the stored one is wrong
        assert "HitTightened" in kinds and 0.9 < refused < 1.0
    else:  # an unconfirmed fresh answer settles nothing
        assert "HitTightened" not in kinds and refused == 0


@pytest.mark.slow
def test_a_broken_attachment_is_one_warning_and_its_library_logs_go_to_the_log(tmp_path):
    from tests.attachment_files import PDF, pdf_bytes

    data = pdf_bytes([["Hello"]])
    msg = make_email(
        subject="Scan", body="Scan attached.", attachments=[("cut.pdf", PDF, data[:300])]
    )
    box = write_mbox(tmp_path / "box.mbox", [msg])
    home = tmp_path / "h"
    cmd = [sys.executable, "-m", "assistant.cli", "--home", str(home), "import", str(box)]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=DATA.parent)
    assert out.returncode == 0, out.stderr
    assert "1 warnings" in out.stderr and "'cut.pdf': unreadable" in out.stderr
    assert "EOF marker" not in out.stderr  # pypdf's own complaint: not on the terminal
    assert "EOF marker" in (home / "logs" / "assistant.log").read_text()


def test_an_import_issue_is_printed_as_written_whatever_brackets_its_path_holds(capsys):
    """A folder named "[archive]" or "[/old]" in an issue: printed whole, not read as markup
    (the one vanished, the other raised a MarkupError that ended the import's report)."""
    from types import SimpleNamespace

    from assistant.cli.commands_import import print_report
    from assistant.importing.importer import ImportReport
    from assistant.ingest import Issue

    report = ImportReport()
    report.errors = [Issue("/mail/[archive]/[/old].mbox", "", "cannot be read (Permission denied)")]
    print_report(SimpleNamespace(home=SimpleNamespace(log_dir=None)), report)
    out = capsys.readouterr()
    assert "/mail/[archive]/[/old].mbox: cannot be read" in out.out + out.err


def test_a_bad_duration_is_said_as_typed(tmp_path, capsys):
    """The error quoted the user's words through rich's markup: `--for '[bold]x'` came out as
    "not a duration: 'x'"."""
    assert main(["precompute", "--home", str(tmp_path / "h"), "--for", "[bold]x"]) == 2
    assert "not a duration: '[bold]x'" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv, says",
    [
        (["serach", "lunch"], "did you mean 'search'?"),
        (["ask", "--rerank", "ful", "q"], "did you mean 'full'?"),
        (["when does demolition start?"], 'a question goes after ask: assistant ask "…"'),
    ],
)
def test_a_command_typed_wrong_is_answered_with_the_one_meant(capsys, argv, says):
    """`assistant serach` listed the fourteen commands and left the user to find the one
    meant; a question typed without `ask` was an "invalid choice" alone."""
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2 and says in capsys.readouterr().err


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_help_page_is_drawn_on_a_terminal_and_kept_as_written_when_piped():
    """`assistant help search` printed its markdown raw: '#' headings, '|' tables, '**' bold."""
    from assistant.cli.cli import print_page
    from assistant.mail.help import page

    text = page("search")
    piped, terminal = io.StringIO(), _Terminal()
    print_page(text, piped)
    print_page(text, terminal)
    assert piped.getvalue().strip() == text.strip()
    drawn = terminal.getvalue()
    assert "from:" in drawn and "has:attachment" in drawn
    assert "**" not in drawn and not any(line.startswith("#") for line in drawn.splitlines())
    assert "|---" not in drawn
