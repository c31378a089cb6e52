"""Cache & scheduler: what the QA bank and the KV tree hold, what the precompute has queued and
done, this session's hit rates (read from the cache database, no model loaded); `p` runs the
precompute now, in a worker with a progress bar (loading the models first if not yet)."""

from __future__ import annotations

import logging

from rich.table import Table
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, Header, ProgressBar, Static
from textual.worker import get_current_worker

from assistant.clock import local_time
from assistant.tui.backend import AppServices
from assistant.tui.messages import (
    CacheStatsRead,
    PrecomputeFinished,
    PrecomputeReported,
    WorkFailed,
)
from assistant.tui.tally import Tally, plural
from assistant.tui.throttle import Throttle

log = logging.getLogger(__name__)


def size(n: float) -> str:
    return f"{n / 2**20:.1f} MB" if n >= 2**20 else f"{n / 2**10:.0f} KB"


def cache_rows(m: CacheStatsRead, budget: int, tally: Tally) -> list[tuple[str, str]]:
    qa, kv, pc = m.qa, m.kv, m.precompute
    rows = [
        (
            "QA bank",
            f"{plural(qa['entries'], 'entry', 'entries')}: {qa['answered']} answered, "
            f"{qa['pending']} pending, {qa['stale']} stale · {size(qa['bytes'])}",
        ),
        ("QA hits", f"{plural(qa['hits'], 'answer', 'answers')} served from the bank (all time)"),
        (
            "KV tree",
            f"{plural(kv['nodes'], 'node', 'nodes')} ({kv['nodes_with_kv']} with KV) · "
            f"{size(kv['bytes'])} of {size(budget)} budget ({kv['bytes'] / budget:.1%})",
        ),
        ("This session", tally.summary()),
    ]
    return rows + precompute_rows(pc)


def precompute_rows(pc: dict | None) -> list[tuple[str, str]]:
    if pc is None:
        return [("Precompute", "not available in this build")]
    last = pc["last_run"]
    ran = (
        f"{local_time(last['finished'])} · {plural(last['jobs'], 'job', 'jobs')} · "
        f"{last['cpu_s']:.1f} s CPU · stopped: {last['stopped']}"
        if last
        else "never"
    )
    return [
        (
            "Predicted",
            f"{plural(pc['predicted_pending'], 'question', 'questions')} waiting for an answer",
        ),
        (
            "Job queue",
            f"{pc['jobs_queued']} queued · {pc['jobs_done']} done · {pc['jobs_failed']} failed",
        ),
        ("Abstract", f"{plural(pc['abstract_items'], 'item', 'items')} (people, topics, dates)"),
        ("Last precompute", ran),
    ] + rerank_rows(pc.get("rerank"))


def rerank_rows(rerank: dict | None) -> list[tuple[str, str]]:
    """The reranker that is on and the nightly self-check's figures (rerank/selfcheck.py)."""
    if rerank is None:
        return []
    on = "the fused order" if rerank["on"] == "off" else rerank["on"]
    return [("Reranking", f"{rerank['setting']} → {on}"), ("Rerank check", rerank["summary"])]


def render_rows(rows: list[tuple[str, str]]) -> Table:
    """The rows as written: a value may hold a path or an error, whose brackets are not markup."""
    table = Table(show_header=False, box=None, expand=True, padding=(0, 1))
    table.add_column(style="bold", no_wrap=True)
    table.add_column(ratio=1)
    for name, value in rows:
        table.add_row(Text(name), Text(value))
    return table


class CacheScreen(Screen[None]):
    BINDINGS = [
        Binding("p", "precompute", "Precompute now"),
        Binding("s", "stop", "Stop precompute"),
        Binding("r", "refresh", "Refresh"),
        Binding("escape", "app.pop_screen", "Back"),
    ]

    def __init__(self, services: AppServices, tally: Tally) -> None:
        super().__init__()
        self.services = services
        self.tally = tally
        self.running = False
        self.stats: CacheStatsRead | None = None
        self.idle_line = ""  # what the idle scheduler last reported (the app passes it on)

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("Reading the caches…", id="cache-stats", markup=False)
        yield Static("KV tree size vs budget", classes="label")
        yield ProgressBar(id="kv-bar", show_eta=False)
        yield Static("", id="idle-status", markup=False)
        yield Static("", id="precompute-status", markup=False)
        yield ProgressBar(id="precompute-bar", show_eta=False, classes="idle")
        yield Footer(show_command_palette=False)

    def on_screen_resume(self) -> None:
        self.show_idle(self.idle_line)
        self.action_refresh()

    def show_idle(self, line: str) -> None:
        """Kept while the screen is not up, shown when it is."""
        self.idle_line = line
        if self.is_current:
            self.query_one("#idle-status", Static).update(line)

    def action_refresh(self) -> None:
        self.read_stats()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "precompute":
            return self.services.precompute is not None and not self.running
        if action == "stop":
            return self.running
        return True

    @work(thread=True, exclusive=True, group="cache-stats")
    def read_stats(self) -> None:
        """The counts, read from the cache database: no model loads for them."""
        try:
            counts = self.services.cache_counts()
            pc = counts.precompute if self.services.precompute else None
            self.post_message(CacheStatsRead(counts.qa, counts.kv, pc))
        except Exception as exc:  # the worker's boundary: report it, keep the app running
            log.exception("reading the cache stats failed")
            self.post_message(WorkFailed("stats", str(exc) or type(exc).__name__))

    @on(CacheStatsRead)
    def _stats_read(self, m: CacheStatsRead) -> None:
        self.stats = m
        budget = self.services.kv_budget_bytes
        self.query_one("#cache-stats", Static).update(
            render_rows(cache_rows(m, budget, self.tally))
        )
        self.query_one("#kv-bar", ProgressBar).update(total=budget, progress=m.kv["bytes"])

    def action_precompute(self) -> None:
        self.running = True
        self.refresh_bindings()
        # a run needs the models: the first one loads them (the counts did not)
        starting = "starting…" if self.services.answerer.ready else "loading the models…"
        self.query_one("#precompute-status", Static).update(f"Precompute: {starting}")
        self.precompute()

    def action_stop(self) -> None:
        self.workers.cancel_group(self, "precompute")
        self.query_one("#precompute-status", Static).update("Precompute: stopping…")

    @work(thread=True, exclusive=True, group="precompute")
    def precompute(self) -> None:
        make = self.services.precompute
        if make is None:  # the binding is off without one
            return
        worker = get_current_worker()
        throttle = Throttle(0.2)

        def notify(e) -> None:
            if throttle.ready(always=e.done == e.total):
                self.post_message(PrecomputeReported(e))

        try:
            report = make().run(None, notify, lambda: worker.is_cancelled)
        except Exception as exc:  # the worker's boundary: report it, keep the app running
            log.exception("precompute failed")
            self.post_message(WorkFailed("precompute", str(exc) or type(exc).__name__))
            return
        self.post_message(PrecomputeFinished(report.summary()))

    @on(PrecomputeReported)
    def _precompute_progressed(self, reported: PrecomputeReported) -> None:
        m = reported.event
        self.query_one("#precompute-status", Static).update(
            f"Precompute: {m.done}/{m.total} · {m.job}"
        )
        bar = self.query_one("#precompute-bar", ProgressBar)
        bar.remove_class("idle")
        bar.update(total=m.total, progress=m.done)

    @on(PrecomputeFinished)
    def _precompute_finished(self, m: PrecomputeFinished) -> None:
        self._precompute_ended(f"Precompute ran {m.summary}")

    @on(WorkFailed)
    def _failed(self, m: WorkFailed) -> None:
        if m.job == "precompute":
            self._precompute_ended(f"Precompute failed: {m.error}")
        else:
            self.query_one("#cache-stats", Static).update(f"Could not read the caches: {m.error}")

    def _precompute_ended(self, line: str) -> None:
        self.running = False
        self.refresh_bindings()
        self.query_one("#precompute-status", Static).update(line)
        self.action_refresh()
