"""`assistant chat`: one question a line on stdin; a follow-up is rewritten against the last turn,
looked for first in its thread, and `--json` writes one object a question."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime, timedelta

import pytest

from assistant import events as p
from assistant.cli import main
from assistant.knowledge.store import KnowledgeStore
from assistant.services import Services
from tests.conftest import make_email, write_mbox

SOURCE = {
    "chunk_id": 4, "kind": "email", "message_id": "k@x", "note_path": None, "title": "Kitchen",
    "sender": "Bram de Vries <bram@x.nl>", "date": "2026-03-01", "thread": "k@x",
}  # fmt: skip


class Recording:
    """Answers every question with the same mail; keeps what it was asked (and in which threads
    its retrieval looked first)."""

    def __init__(self, asked: list, focus: tuple = ()) -> None:
        self.asked, self.focus = asked, focus

    def answer(self, question: str, *args, stop=None):
        self.asked.append((question, self.focus))
        yield p.AnswerDone(question, "“Demolition starts Monday.”", [SOURCE], False, 0, 0,
                           mail={"chunk_id": 4, "id": "k@x"})  # fmt: skip


def chat(monkeypatch, tmp_path, lines: str, *flags: str) -> list:
    asked: list = []
    monkeypatch.setattr(Services, "answerer", lambda ctx: Recording(asked))
    monkeypatch.setattr(Services, "focused_answerer", lambda ctx, t: Recording(asked, tuple(t)))
    monkeypatch.setattr("sys.stdin", io.StringIO(lines))
    monkeypatch.setattr(KnowledgeStore, "count_chunks", lambda store: 1)  # the answers' mail
    assert main(["chat", "--home", str(tmp_path / "h"), *flags]) == 0
    return asked


def test_chat_json_writes_one_object_a_question_with_the_rewrite(monkeypatch, tmp_path, capsys):
    questions = "When does Bram start the demolition?\n\nand who pays him?\n"
    asked = chat(monkeypatch, tmp_path, questions, "--json")
    first, second = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert first["standalone"] == first["question"] == "When does Bram start the demolition?"
    assert second["question"] == "and who pays him?"
    assert second["standalone"] == "and who pays Bram? (about: start demolition)"
    assert second["sources"][0]["thread"] == "k@x" and second["answer"].startswith("“Demol")
    assert asked == [
        ("When does Bram start the demolition?", ()),
        ("and who pays Bram? (about: start demolition)", ("k@x",)),
    ]


def test_chat_shows_what_a_follow_up_was_turned_into(monkeypatch, tmp_path, capsys):
    chat(monkeypatch, tmp_path, "When does Bram start the demolition?\nAnd why?\n")
    out = capsys.readouterr().out
    assert out.count("→ asked as:") == 1
    assert "→ asked as: And why? (about: Bram start demolition)" in out
    assert "thread k@x" in out


@pytest.mark.slow
def test_chat_json_with_the_real_models_answers_the_follow_up_from_the_thread(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("ASSISTANT_ANSWER_MAX_TOKENS", "16")
    monkeypatch.setenv("ASSISTANT_ANSWER_CONTEXT_CHUNKS", "2")
    day = datetime(2026, 3, 2, 9, tzinfo=UTC)
    box = write_mbox(tmp_path / "box.mbox", [
        make_email("Kitchen", "Demolition of the kitchen starts on Monday 2 March.",
                   msgid="<k1@x>", when=day),
        make_email("Re: Kitchen", "The contractor Jansen Bouw pays for the skip.",
                   "Maya <maya@lindqvist.me>", "Bram de Vries <bram@example.nl>",
                   msgid="<k2@x>", when=day + timedelta(days=1), in_reply_to="<k1@x>"),
        make_email("Race", "My half marathon time was 1:52:10.", msgid="<r@x>"),
    ])  # fmt: skip
    home = str(tmp_path / "h")
    assert main(["import", "--home", home, str(box)]) == 0
    capsys.readouterr()
    monkeypatch.setattr("sys.stdin", io.StringIO("When does the kitchen demolition start?\n"
                                                 "Who pays for it?\n"))  # fmt: skip
    assert main(["chat", "--home", home, "--json"]) == 0
    first, second = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert first["mail"]["id"] == "k1@x"
    assert second["standalone"].startswith("Who pays for it? (about: kitchen demolition")
    assert {s["message_id"] for s in second["sources"]} == {"k1@x", "k2@x"}  # the thread first
    assert {s["thread"] for s in second["sources"]} == {"k1@x"}


class Interrupted:
    """Ctrl-C while the model computes: the first answer's prefill checks `stop` between its
    pieces (raising Stopped, as PromptCache does); the next answers are whole."""

    def __init__(self, asked: list) -> None:
        self.asked = asked

    def answer(self, question: str, *args, stop=None):
        import os
        import signal

        self.asked.append(question)
        if len(self.asked) == 1:
            os.kill(os.getpid(), signal.SIGINT)  # the user presses Ctrl-C
            assert stop is not None and stop()
            raise p.Stopped
        yield p.AnswerDone(question, "“Demolition starts Monday.”", [SOURCE], False, 0, 0,
                           mail={"chunk_id": 4, "id": "k@x"})  # fmt: skip


def test_ctrl_c_stops_the_answer_not_the_chat(monkeypatch, tmp_path, capsys):
    """Ctrl-C during an answer ended `assistant chat` (exit 130) and its conversation; it now
    stops that answer and the next question is asked, as at a shell's prompt."""
    asked: list = []
    monkeypatch.setattr(Services, "answerer", lambda ctx: Interrupted(asked))
    monkeypatch.setattr(Services, "focused_answerer", lambda ctx, t: Interrupted(asked))
    monkeypatch.setattr("sys.stdin", io.StringIO("When is the demolition?\nWho pays Bram?\n"))
    monkeypatch.setattr(KnowledgeStore, "count_chunks", lambda store: 1)
    assert main(["chat", "--home", str(tmp_path / "h")]) == 0
    out = capsys.readouterr().out
    assert asked == ["When is the demolition?", "Who pays Bram?"]
    assert "(stopped;" in out and out.count("Demolition starts Monday.") == 1
