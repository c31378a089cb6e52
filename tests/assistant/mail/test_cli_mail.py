"""`assistant search` (one row per mail, filters shown and in --json), `show`, `help search`."""

from __future__ import annotations

import json

import pytest

from assistant.cli import main
from assistant.importing.importer import Importer
from assistant.services import open_services
from tests.conftest import FakeEmbedder, make_email, write_mbox

from .conftest import REPO_DOCS


@pytest.fixture
def home(tmp_path):
    msgs = [
        make_email(
            "Kitchen",
            "Demolition of the kitchen starts on Monday.",
            "Bram <bram@x.nl>",
            msgid="<k@x>",
        ),
        make_email("Race", "My half marathon time was 1:52:10.", "Elin <elin@x.se>", msgid="<r@x>"),
    ]
    msgs += [
        make_email(f"Note {i}", f"Filler text {i}.", "Noor <noor@x.nl>", msgid=f"<f{i}@x>")
        for i in range(6)
    ]
    ctx = open_services(tmp_path / "h")
    Importer(ctx.store, FakeEmbedder()).run([write_mbox(tmp_path / "inbox.mbox", msgs)])
    copy = make_email(
        "Kitchen", "Demolition of the kitchen starts on Monday.", "Bram <bram@x.nl>", msgid="<k2@x>"
    )
    Importer(ctx.store, FakeEmbedder()).run([write_mbox(tmp_path / "archive.mbox", [copy])])
    return str(tmp_path / "h")


def test_help_search_prints_the_terms_page(capsys):
    assert main(["help", "search"]) == 0
    out = capsys.readouterr().out
    for term in (
        "from:",
        "to:",
        "cc:",
        "subject:",
        "date:",
        "thread:",
        "folder:",
        "has:attachment",
    ):
        assert term in out
    assert out.strip() == REPO_DOCS.joinpath("search.md").read_text(encoding="utf-8").strip()


def test_help_without_a_topic_lists_the_commands(capsys):
    """`assistant help`, what a user types first, was an argparse error ("the following
    arguments are required: topic"); it lists the commands and names the terms' page."""
    assert main(["help"]) == 0
    out = capsys.readouterr().out
    assert "ask" in out and "import" in out and "`assistant help search`" in out


def test_search_json_has_one_row_per_mail_with_its_folders(home, capsys):
    assert main(["search", "--home", home, "--mode", "bm25", "--json", "kitchen demolition"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["subject"] for r in rows] == ["Kitchen"]  # its copy is no second row
    assert rows[0]["folders"] == ["inbox", "archive"] and rows[0]["copies"] == 2
    assert {"rank", "score", "date", "sender", "text", "message_id", "line", "filters"} <= set(
        rows[0]
    )


def test_search_shows_what_it_read_and_says_when_nothing_meets_it(home, capsys):
    args = ["search", "--home", home, "--mode", "bm25", "--today", "2026-03-10"]
    assert main([*args, "--json", "from:elin marathon"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["subject"] for r in rows] == ["Race"] and rows[0]["filters"] == {"from": ["elin"]}
    assert main([*args, "what did Bram send last week"]) == 0
    out, err = capsys.readouterr()
    assert "from: Bram <bram@x.nl> · date: 2026-03-02..2026-03-08" in err and "Kitchen" in out
    assert main([*args, "what did Bram send yesterday"]) == 0  # Bram sent nothing yesterday
    out, err = capsys.readouterr()
    assert "(no mail then: ranks, does not filter)" in err and "Kitchen" in out
    assert main([*args, "from:bram date:yesterday"]) == 0  # typed terms: as typed
    out, err = capsys.readouterr()
    assert "No mail meets" in err and out.strip() == ""
    assert main([*args, "--no-filters", "what did Bram send yesterday"]) == 0
    assert "Kitchen" in capsys.readouterr().out


def test_show_prints_the_mail(home, capsys):
    assert main(["show", "--home", home, "<r@x>"]) == 0
    out = capsys.readouterr().out
    assert "From: Elin <elin@x.se>" in out and "Subject: Race" in out and "1:52:10" in out
    assert main(["show", "--home", home, "#999"]) == 1


def test_show_prints_a_shortcode_as_the_mail_writes_it(tmp_path, capsys):
    """A CI or chat digest's ":x:" and ":rocket:" are the mail's text, not emoji to draw."""
    body = "Build 142 :x: failed on arm64, :white_check_mark: passed.\nDeploy :rocket: at 10:00."
    ctx = open_services(tmp_path / "h")
    msgs = [make_email("CI digest", body, "CI Bot <ci@x.nl>", msgid="<ci@x>")]
    Importer(ctx.store, FakeEmbedder()).run([write_mbox(tmp_path / "ci.mbox", msgs)])
    assert main(["show", "--home", str(tmp_path / "h"), "<ci@x>"]) == 0
    assert body in capsys.readouterr().out


def test_thread_takes_the_number_a_search_row_shows(home, capsys):
    assert main(["search", "--home", home, "--mode", "bm25", "marathon"]) == 0
    number = capsys.readouterr().out.splitlines()[0].split()[-1]  # " 1. Elin · … · Race  #2"
    assert number.startswith("#")
    assert main(["thread", "--home", home, number]) == 0  # as `show #2` takes it
    assert "Race" in capsys.readouterr().out


def test_a_bad_date_term_is_a_clear_error(home, capsys):
    assert main(["search", "--home", home, "--mode", "bm25", "date:2001-02-30 x"]) == 2
    assert "date:2001-02-30" in capsys.readouterr().err


def test_people_prints_who_a_name_stands_for_and_why(home, capsys):
    assert main(["people", "--home", home, "Bram"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Bram: one person; a question naming them filters to their mail")
    assert "Bram <bram@x.nl>" in out and "because: " in out
    assert main(["people", "--home", home, "--json", "Nobody"]) == 0
    assert json.loads(capsys.readouterr().out) == {"name": "Nobody", "owner": False, "people": []}


def test_people_finds_a_name_with_accents_as_written_and_without(tmp_path, capsys):
    tomas = "Tomás Ferreira <t.ferreira@x.pt>"
    msgs = [make_email(f"Plan {i}", f"Text {i}.", tomas) for i in (1, 2)]
    msgs += [make_email(f"Note {i}", f"Filler {i}.", "Noor <noor@x.nl>") for i in range(6)]  # owner
    ctx = open_services(tmp_path / "h")
    Importer(ctx.store, FakeEmbedder()).run([write_mbox(tmp_path / "inbox.mbox", msgs)])
    for asked in ("Tomás", "Tomas", "Ferreira"):
        assert main(["people", "--home", str(tmp_path / "h"), asked]) == 0
        out = capsys.readouterr().out
        assert out.startswith(f"{asked}: one person") and "Tomás Ferreira <t.ferreira@x.pt>" in out


def test_a_term_no_mail_meets_says_to_leave_a_term_out(home, capsys):
    """`search to:greg` (no such recipient) pointed at --no-filters, which keeps typed terms:
    run again with it, the same nothing. The way out it names now is leaving a term out."""
    assert main(["search", "--home", home, "--mode", "bm25", "to:greg kitchen"]) == 0
    err = " ".join(capsys.readouterr().err.split())
    assert "No mail meets to: greg: nothing is searched outside it" in err
    assert "leave a term out" in err and "--no-filters" not in err
