"""The empty state on first run: load the demo corpus, or import your own mail."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Static

WELCOME = (
    "Your knowledge bank is empty.\n\n"
    "Try the demo corpus — 214 mails and 30 notes from one person's work and life "
    "(a firmware release, a kitchen renovation, a trip to Lisbon) — or import your own "
    "mbox, Maildir, folder of .eml files or notes folder. Nothing leaves this computer."
)


class Welcome(Vertical):
    def compose(self) -> ComposeResult:
        yield Static(WELCOME, classes="welcome-text")
        with Horizontal(classes="welcome-buttons"):
            yield Button("Load the demo", id="demo", variant="primary")
            yield Button("Import my mail…", id="import")
