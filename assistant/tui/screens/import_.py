"""Import: pick a path, watch the progress bar (rate, errors), read the summary at the end.

The import runs in a worker on this screen, which the app keeps installed: leaving the screen
does not stop it, and its progress is here on return."""

from __future__ import annotations

import logging
import time
from pathlib import Path

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Button, DirectoryTree, Footer, Header, Input, ProgressBar, Static
from textual.worker import get_current_worker

from assistant.tui.backend import AppServices
from assistant.tui.messages import ImportFinished, ImportReported, JobStatusChanged, WorkFailed
from assistant.tui.throttle import Throttle

log = logging.getLogger(__name__)
PHASES = {"read": "Reading", "embed": "Embedding chunks (search and ask work meanwhile)"}


class ImportScreen(Screen[None]):
    BINDINGS = [Binding("escape", "app.pop_screen", "Back")]

    def __init__(self, services: AppServices) -> None:
        super().__init__()
        self.services = services
        self.running = False
        self.phase: tuple[str, str] = ("", "")
        self.phase_started = 0.0

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="import-row"):
            yield Input(placeholder="mbox, Maildir, .eml folder or notes folder", id="path")
            yield Button("Import", id="start", variant="primary")
            yield Button("Demo", id="demo")
            yield Button("Stop", id="stop", variant="error", disabled=True)
        yield DirectoryTree(self.services.browse_root, id="browser")
        yield Static(
            "Pick a file or folder (or type its path) and press Enter.", id="phase", markup=False
        )
        yield ProgressBar(id="bar", show_eta=False)
        yield Static("", id="summary", markup=False)
        yield Footer(show_command_palette=False)

    def on_mount(self) -> None:
        self.query_one("#path", Input).focus()

    @on(DirectoryTree.FileSelected)
    @on(DirectoryTree.DirectorySelected)
    def _picked(self, event: DirectoryTree.FileSelected | DirectoryTree.DirectorySelected) -> None:
        """The picked path into the field, and the field focused: the next Enter imports it,
        as the line under the tree says (in the tree, Enter would only pick again)."""
        path = self.query_one("#path", Input)
        path.value = str(event.path)
        path.focus()

    @on(Input.Submitted, "#path")
    @on(Button.Pressed, "#start")
    def _start_typed(self) -> None:
        value = self.query_one("#path", Input).value.strip()
        if value:
            self.start([Path(value).expanduser()])

    @on(Button.Pressed, "#demo")
    def _start_demo(self) -> None:
        self.start(self.services.demo_paths)

    @on(Button.Pressed, "#stop")
    def _stop(self) -> None:
        self.workers.cancel_group(self, "import")
        self.query_one("#phase", Static).update("Stopping; everything stored so far is kept…")

    def start(self, paths: list[Path]) -> None:
        if self.running:
            self.notify("An import is running; stop it first.", severity="warning")
            return
        self._set_running(True)
        self.query_one("#summary", Static).update(", ".join(str(p) for p in paths))
        self.query_one("#bar", ProgressBar).update(total=None, progress=0)
        self.import_paths(paths)

    def _set_running(self, running: bool) -> None:
        self.running = running
        self.query_one("#stop", Button).disabled = not running
        for button in self.query("#start, #demo").results(Button):
            button.disabled = running

    @work(thread=True, exclusive=True, group="import")
    def import_paths(self, paths: list[Path]) -> None:
        worker = get_current_worker()
        throttle = Throttle()

        def notify(e) -> None:
            if throttle.ready(always=e.done in (1, e.total)):
                self.post_message(ImportReported(e))

        try:
            if not self.services.importer.ready:
                self.post_message(JobStatusChanged("import", "Loading the embedding model…"))
            importer = self.services.importer.get()
            report = importer.run(paths, notify, lambda: worker.is_cancelled)
        except Exception as exc:  # the worker's boundary: report it, keep the app running
            log.exception("import of %s failed", paths)
            self.post_message(WorkFailed("import", str(exc) or type(exc).__name__))
            return
        self.post_message(ImportFinished(report))

    @on(JobStatusChanged)
    def _status(self, m: JobStatusChanged) -> None:
        self.query_one("#phase", Static).update(m.status)

    @on(ImportReported)
    def _progressed(self, reported: ImportReported) -> None:
        m = reported.event
        if (m.phase, m.path) != self.phase:
            self.phase, self.phase_started = (m.phase, m.path), time.monotonic()
        rate = m.done / max(time.monotonic() - self.phase_started, 1e-3)
        what = f"{PHASES[m.phase]} {Path(m.path).name}" if m.path else PHASES[m.phase]
        self.query_one("#phase", Static).update(
            f"{what}: {m.done}/{m.total} · {rate:.0f}/s · {m.errors} errors"
        )
        self.query_one("#bar", ProgressBar).update(total=max(m.total, m.done), progress=m.done)

    @on(ImportFinished)
    def _finished(self, m: ImportFinished) -> None:
        self._set_running(False)
        report = m.report
        rate = report.seen / report.read_seconds if report.read_seconds else 0.0
        lines = [
            ("Stopped: " if report.cancelled else "Done: ") + report.summary(),
            f"read {report.seen} items in {report.read_seconds:.1f} s ({rate:.0f}/s); "
            f"embedded {report.embedded} chunks in {report.embed_seconds:.1f} s",
        ]
        issues = report.errors + report.warnings
        lines += [str(issue) for issue in issues[:3]]
        if len(issues) > 3:
            lines.append(f"… and {len(issues) - 3} more in the log")
        if report.cancelled:
            self.query_one("#phase", Static).update("Import stopped; what was stored is kept.")
        self.query_one("#summary", Static).update("\n".join(lines))
        self.app.notify(report.summary(), title="Import finished", markup=False)

    @on(WorkFailed)
    def _failed(self, m: WorkFailed) -> None:
        self._set_running(False)
        self.query_one("#phase", Static).update(f"Import failed: {m.error}")
