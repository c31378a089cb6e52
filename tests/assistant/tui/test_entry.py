"""Bare `assistant` opens the app, on the home that --home names."""

from __future__ import annotations

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
    assert main(["--home", str(home), "stats", "--json"]) == 0
    assert '"documents": 0' in capsys.readouterr().out
