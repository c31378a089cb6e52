"""Bare `assistant` opens the app, on the home that --home names."""

from __future__ import annotations

import pytest

from assistant.cli import main
from assistant.tui.app import AssistantApp


def test_bare_assistant_opens_the_app_on_the_given_home(tmp_path, monkeypatch, capsys):
    opened: list[AssistantApp] = []
    monkeypatch.setattr(AssistantApp, "run", lambda self: opened.append(self))
    home = tmp_path / "home"
    assert main(["--home", str(home)]) == 0
    assert len(opened) == 1 and (home / "knowledge.db").exists()
    app = opened[0]
    assert app.services.knowledge.stats()["documents"] == 0
    assert [p.name for p in app.services.demo_paths] == ["demo.mbox", "notes"]
    assert not app.services.answerer.ready  # the models load on first use, in a worker
    assert app.services.notice() == ""  # nothing to embed
    assert main(["--home", str(home), "stats", "--json"]) == 0
    assert '"documents": 0' in capsys.readouterr().out


def test_the_app_says_when_chunks_lack_its_encoders_vectors(tmp_path, monkeypatch):
    """A home embedded by another encoder (the default changed): the app opens saying so."""
    from assistant.home import open_home
    from assistant.importing.importer import Importer
    from assistant.knowledge.db import open_db
    from assistant.knowledge.store import KnowledgeStore
    from tests.conftest import FakeEmbedder, make_email, write_mbox

    opened: list[AssistantApp] = []
    monkeypatch.setattr(AssistantApp, "run", lambda self: opened.append(self))
    home = open_home(tmp_path / "home")
    box = write_mbox(tmp_path / "in.mbox", [make_email(body="The tiles arrive Monday.")])
    Importer(KnowledgeStore(open_db(home.knowledge_db)), FakeEmbedder()).run([box])
    assert main(["--home", str(home.root)]) == 0
    notice = opened[0].services.notice()  # read on a worker once the app is up
    assert "1 of 1 chunks have no vector from the encoder" in notice
    assert "hold vectors of fake-hash-64" in notice and "`assistant import`" in notice


@pytest.mark.asyncio
async def test_the_app_shows_its_notice_when_it_opens(loaded_store, tmp_path):
    from tests.assistant.tui.conftest import SIZE, make_services

    services, _, _ = make_services(loaded_store, tmp_path)
    services.notice = "4 of 4 chunks have no vector from the encoder x"
    app = AssistantApp(services)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert [n.message for n in app._notifications] == [services.notice]
    quiet = AssistantApp(make_services(loaded_store, tmp_path)[0])
    async with quiet.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert not list(quiet._notifications)


@pytest.mark.asyncio
async def test_a_notice_that_cannot_be_read_is_said_not_a_crash(loaded_store, tmp_path):
    """The notice reads the knowledge bank on a worker; a database error there ended the app
    with a traceback before its first question."""
    import sqlite3

    from tests.assistant.tui.conftest import SIZE, make_services

    def locked() -> str:
        raise sqlite3.OperationalError("database is locked")

    services, _, _ = make_services(loaded_store, tmp_path)
    services.notice = locked
    app = AssistantApp(services)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(0.2)
        shown = [n.message for n in app._notifications]
        assert shown == ["Could not read the knowledge bank: database is locked"]
        assert app.is_running


@pytest.mark.asyncio
async def test_a_notice_shows_its_brackets_as_written(loaded_store, tmp_path):
    """A notice names paths and errors: "[old]" vanished from it (read as a style) and "[/]"
    was a markup error; both are shown as written."""
    from tests.assistant.tui.conftest import SIZE, make_services

    services, _, _ = make_services(loaded_store, tmp_path)
    services.notice = "Not in ~/[old] [/]"
    app = AssistantApp(services)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await pilot.pause(0.2)
        screen = "\n".join(s.text for s in app.screen._compositor.render_strips())
        assert services.notice in screen


def test_the_apps_import_without_an_encoder_stores_the_mail_as_the_clis_does():
    """Services.importer builds a reader-only Importer where the encoder cannot be had; the
    app's warm-up must not ask for the encoder again (it raised, and the import failed)."""
    from types import SimpleNamespace

    from assistant.knowledge.shipped import ModelMissing
    from assistant.tui.backend import _warm_importer

    class NoEncoder:
        @property
        def embedder(self):
            raise ModelMissing("the encoder's model is not installed")

    importer = SimpleNamespace(embedder=None)
    assert _warm_importer(NoEncoder(), importer) is importer


def test_the_app_opens_without_its_encoder_and_says_why(tmp_path, monkeypatch):
    """Mail stored, the encoder's model missing (the import stored it unembedded): the app
    opens, and its notice is the missing model's message, not an exit before the first frame."""
    from assistant.home import open_home
    from assistant.importing.importer import Importer
    from assistant.knowledge.db import open_db
    from assistant.knowledge.shipped import ModelMissing
    from assistant.knowledge.store import KnowledgeStore
    from assistant.services import Services
    from tests.conftest import FakeEmbedder, make_email, write_mbox

    opened: list[AssistantApp] = []
    monkeypatch.setattr(AssistantApp, "run", lambda self: opened.append(self))
    home = open_home(tmp_path / "home")
    box = write_mbox(tmp_path / "in.mbox", [make_email(body="The tiles arrive Monday.")])
    Importer(KnowledgeStore(open_db(home.knowledge_db)), FakeEmbedder()).run([box])

    def missing(self):
        raise ModelMissing("the encoder's model is not installed: run make setup")

    monkeypatch.setattr(Services, "embedder", property(missing))
    assert main(["--home", str(home.root)]) == 0
    assert opened[0].services.notice() == "the encoder's model is not installed: run make setup"
