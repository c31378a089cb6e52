"""Idle-time precompute (PerCache §4): plan jobs, run them through the PromptCache, report progress.

A run first plans — queues what the current state calls for — then drains the persisted queue
until it is empty, the deadline passes, it is cancelled, or (for the idle scheduler) the user
comes back. Planning, in order of priority:
  reimport   the remembered sources are read again (new mail in, deleted mail out), once per
             run and alone: the rest is planned from what it read
  refresh    stale QA entries (new mail ranks in their top-k) are answered again
  abstract   new chunks are read into the knowledge abstract (once imports have settled)
  chunk_kv   chunks get their [system, chunk] node while the KV budget has room, in the order
             `[precompute] plan` says: "recent" the coverage plan (coverage.py: recent mail,
             live threads, the owner's correspondents, asked questions), "access" first the
             chunks past and predicted questions were answered from (most used first),
             "newest" newest first. Whatever the
             question, its first retrieved chunk with a node is then restored (with any-order
             reuse, every one of them); after each, the reader's node of its mail's header
             ([precompute] reader_nodes)
  predict    questions are written from the user's history, from single chunks (detail) and
             from the abstract (general); at most `stride` questions per run
  doc_kv     with reranking on, the reranker's document KV of each chunk, newest first, within
             its budget (what is not precomputed is filled when a question first reranks it)
  populate   each predicted question is prefilled (strategy 1) or prefilled and decoded
             (strategy 2), as cache/policy.py decides from τ; a prefill only while the KV budget
             has room, and with any-order reuse as one node per chunk, not a prefix path
  decode     KV → QA: pending entries are decoded once τ is below the cutoff
  reader_lines  under reader_nodes "headers", once no chunk node waits: the reader's node of
             each line of the chunks that have theirs, in the same order, while there is room
  rebuild    QA → KV: entries whose prefix was evicted are prefilled again while there is room
  rerank_check  with `rerank = "auto"`, nightly: does a reranker beat fused on the predicted
             questions whose source chunk is known (rerank/selfcheck.py)
  fit_lines  once no chunk node waits, from 200 chunks and again each time the mailbox grew by
             half: the line scorer refitted on questions the writer writes about lines of this
             mail, kept only where it beats the weights in use beyond chance (answer/fit.py)
  qa_selfcheck  served QA hits answered afresh, once a day while some are unchecked
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from assistant.kv.prompt_cache import Preempted
from assistant.precompute.handlers import Handlers
from assistant.precompute.home_lock import HomeLock
from assistant.precompute.parts import PrecomputeParts
from assistant.precompute.planner import Planner
from assistant.rerank import selfcheck
from cache.blobs import NO_ROOM, BlobStore
from cache.counts import precompute_counts
from cache.jobs import ENDED, Job, JobQueue
from cache.prediction import History, KnowledgeAbstract
from cache.room import full, no_room
from cache.runs import RunLog

log = logging.getLogger(__name__)
AWAY_SECONDS = 60.0  # without a keypress this long, background work takes every core


@dataclass(frozen=True)
class PrecomputeProgressed:
    done: int
    total: int
    job: str


Notify = Callable[[PrecomputeProgressed], None]
Stop = Callable[[], bool]


def per_hour(count: int, seconds: float) -> float:
    return count * 3600 / seconds if seconds > 0 else 0.0


class PrecomputeBusy(RuntimeError):
    """A precompute pass was asked for while another runs in this process (the idle one and the
    cache screen's `p` share the cache's connection and its job queue: one at a time)."""


@dataclass
class PrecomputeReport:
    jobs_done: int = 0
    jobs_left: int = 0
    failed: int = 0
    cpu_seconds: float = 0.0
    wall_seconds: float = 0.0
    stopped: str = "finished"  # finished | deadline | cancelled | preempted | disk full
    by_kind: dict[str, int] = field(default_factory=dict)
    # wall seconds from the start to the end of the last chunk node (0: none made): a night the
    # KV budget stopped making nodes goes on with other jobs, which its pace must not count
    node_seconds: float = 0.0
    problem: str = ""  # what the user must do before the next run can go on (a full disk)

    @property
    def nodes_per_hour(self) -> float:
        """Chunk nodes made per hour of wall time up to the last of them: the night's pace,
        what a plan's reach in nodes turns into hours (bench/coverage_plan.py)."""
        seconds = self.node_seconds or self.wall_seconds
        return per_hour(self.by_kind.get("chunk_kv", 0), seconds)

    def summary(self) -> str:
        kinds = ", ".join(f"{n} {k}" for k, n in sorted(self.by_kind.items())) or "nothing to do"
        nodes = self.by_kind.get("chunk_kv", 0)
        pace = f" ({self.nodes_per_hour:,.0f} nodes an hour)" if nodes else ""
        return (
            f"{self.jobs_done} jobs ({kinds}) in {self.wall_seconds:.0f}s{pace}, "
            f"{self.cpu_seconds:.0f} CPU-s; {self.jobs_left} left; stopped: {self.stopped}"
            + (f"; {self.failed} failed (see the log)" if self.failed else "")
            + (f"; {self.problem}" if self.problem else "")
        )

    def then(self, later: PrecomputeReport) -> PrecomputeReport:
        """This round then a later one: counts add up; the later one says why it stopped."""
        kinds = dict(self.by_kind)
        for kind, n in later.by_kind.items():
            kinds[kind] = kinds.get(kind, 0) + n
        return PrecomputeReport(
            jobs_done=self.jobs_done + later.jobs_done,
            jobs_left=later.jobs_left,
            failed=self.failed + later.failed,
            cpu_seconds=self.cpu_seconds + later.cpu_seconds,
            wall_seconds=self.wall_seconds + later.wall_seconds,
            stopped=later.stopped,
            by_kind=kinds,
            problem=later.problem,
            node_seconds=(
                self.wall_seconds + later.node_seconds if later.node_seconds else self.node_seconds
            ),
        )


class Precompute:
    def __init__(
        self,
        parts: PrecomputeParts,
        settle_seconds: float | None = None,
        *,
        kv: bool = True,
    ) -> None:
        """Precompute runs its jobs through the answer path's parts (`parts`, from services.py).
        `kv=False` fills the QA bank only: every predicted question is decoded and no KV is
        stored, whatever τ (the sleep-time-compute baseline of bench/e2e.py)."""
        self.parts = parts
        self.settings = parts.settings.precompute
        self.cache, self.select, self.qa = parts.cache, parts.selection, parts.qa
        db = parts.cache_db
        self.queue = JobQueue(db)
        self.abstract = KnowledgeAbstract(db)
        self.runs = RunLog(db)
        self.check = parts.check
        settle = self.settings.settle_seconds if settle_seconds is None else settle_seconds
        self.handlers = Handlers(
            self.cache, self.select, parts.memory, parts.store, self.queue, self.abstract,
            History(db), self.settings, kv=kv, check=self.check, lines=parts.lines,
            weights_path=parts.weights_path, recheck=parts.recheck, importer=parts.importer,
            judge=parts.judge,
        )  # fmt: skip
        self.planner = Planner(parts, self.handlers, self.queue, settle)

    def plan(self) -> int:
        """Queue the jobs the current state calls for; return how many were new."""
        return self.planner.plan()

    # -- running -------------------------------------------------------------------------------

    def run(
        self,
        deadline: float | None = None,
        notify: Callable[[PrecomputeProgressed], None] | None = None,
        cancelled: Callable[[], bool] = lambda: False,
        stop_for_user: bool = False,
        wait: bool = True,
    ) -> PrecomputeReport:
        """Plan, then run jobs until done, `deadline` (epoch seconds), `cancelled()`, or — with
        `stop_for_user` — a user question. Otherwise a user question only pauses the run.

        One pass runs at a time in a process (they share the cache's connection), and one on
        the home (home_lock.py: the night's process and the app's share its job queue): with
        `wait` this one waits for the running pass to end (saying so through `notify`), else it
        raises PrecomputeBusy."""
        lock, home = self.parts.lock, HomeLock(self.parts.presence.run_dir)
        # the jobs left running are this pass's once it swept those of the pass before
        self._home, self._swept = home, False
        turns = (  # (take the turn, waiting up to t seconds; give it back; who has it)
            (lambda t: lock.acquire(timeout=t), lock.release, lambda: ""),
            (
                home.acquire,
                lambda: home.release(ended=self._swept or home.last_ended),
                lambda: f" in {home.holder()}",
            ),
        )
        taken: list[Callable[[], None]] = []
        try:
            for take, release, held_where in turns:
                if not take(0):
                    where = held_where()
                    if not wait:
                        raise PrecomputeBusy(
                            f"another precompute pass is running{where}; this one did not start"
                        )
                    stopped = self._wait_turn(take, where, deadline, notify, cancelled)
                    if stopped:
                        return PrecomputeReport(jobs_left=self.queue.pending(), stopped=stopped)
                taken.append(release)
            return self._run(deadline, notify, cancelled, stop_for_user)
        finally:
            for release in reversed(taken):
                release()

    def _wait_turn(
        self,
        take: Callable[[float], bool],
        where: str,
        deadline: float | None,
        notify: Notify | None,
        cancelled: Stop,
    ) -> str | None:
        """Wait until `take` gets the turn; None once it has, else why the wait ended
        (cancelled, deadline)."""
        log.info("precompute: waiting for the pass already running%s to end", where)
        if notify:
            notify(PrecomputeProgressed(0, 1, f"waiting for the running precompute{where} to stop"))
        while not take(0.2):
            stop = self._should_stop(deadline, cancelled, stop_for_user=False)
            if stop:
                return stop
        return None

    def _run(
        self, deadline: float | None, notify: Notify | None, cancelled: Stop, stop_for_user: bool
    ) -> PrecomputeReport:
        report, start = PrecomputeReport(), time.time()
        self.blobs.no_room = None  # space may have been freed since: tried again
        try:
            run_id = self.runs.open()
            self._jobs(report, start, deadline, notify, cancelled, stop_for_user)
            report.jobs_left = self.queue.pending()
            self.runs.close(
                run_id, report.jobs_done, report.cpu_seconds, report.stopped, report.by_kind
            )
        except (sqlite3.OperationalError, OSError) as exc:  # the queue's, the run log's, a sweep's
            if not _no_room(exc):
                raise
            self._out_of_room(exc)
            report.stopped = "disk full"
            report.jobs_left = self.queue.pending()
        if report.stopped == "disk full":
            report.problem = self.blobs.no_room or ""
            log.warning("precompute stopped: %s", report.problem)
        report.wall_seconds = time.time() - start
        return report

    def _jobs(
        self, report: PrecomputeReport, start: float, deadline: float | None,
        notify: Notify | None, cancelled: Stop, stop_for_user: bool,
    ) -> None:  # fmt: skip
        """Plan, then run jobs until done or a stop (`_should_stop`), counted in `report`."""
        self.planner.predicted, self.planner.reimport_due = False, True
        for key in self.queue.recover(ended=self._home.last_ended):
            log.warning("precompute job %s not tried again: %s", key, ENDED)
        self._swept = True
        self.blobs.sweep_orphans()  # what a killed writer left on disk
        self.plan()
        # a job stops within a piece at the deadline, as for a user question, and goes back in
        # the queue: at the 1.5B pace a job running at the deadline outran a 20-minute night by
        # 4.5 minutes when the deadline was only checked between jobs
        self.cache.stop_at, self.cache.cancelled = deadline, cancelled  # within a piece too
        try:
            while True:
                stop = self._should_stop(deadline, cancelled, stop_for_user)
                if stop:
                    report.stopped = stop
                    break
                job = self.queue.claim()
                if job is None and not self.plan():
                    break
                if job is not None:
                    self._pick_threads()
                    if self._run_job(job, report) and job.kind == "chunk_kv":
                        report.node_seconds = time.time() - start
                    if notify:
                        done = report.jobs_done + report.failed
                        left = done + self.queue.pending()
                        notify(PrecomputeProgressed(done, left, _label(job)))
        finally:
            self.cache.stop_at, self.cache.cancelled = None, None
            self.cache.llm.use_threads(None)

    def _pick_threads(self) -> None:
        """Every physical core that other processes leave free while the user is away (no
        question waiting, no keypress for AWAY_SECONDS), else the default threads
        (llm/cores.py: ggml's threads spin, so a core busy elsewhere slows them all, and two
        threads made far fewer nodes than one on a busy machine, night_rate.json). Checked
        before each job."""
        presence = self.parts.presence
        away = not presence.user_waiting() and presence.idle_seconds() >= AWAY_SECONDS
        self.cache.llm.for_background(away)

    @property
    def blobs(self) -> BlobStore:
        """The KV tree's and the reranker's blob store (one per home)."""
        return self.parts.kv.blobs

    def _should_stop(self, deadline, cancelled, stop_for_user: bool) -> str | None:
        """Why the run stops now, if it does; while a user question runs, it waits for it (or,
        with `stop_for_user`, stops), and its end or a stop still ends the wait."""
        while True:
            if cancelled():
                return "cancelled"
            if self.blobs.no_room:  # the KV computed next could not be kept either
                return "disk full"
            if deadline is not None and time.time() >= deadline:
                return "deadline"
            if not self.parts.presence.user_waiting():
                return None
            if stop_for_user:
                return "preempted"
            time.sleep(0.2)

    def _run_job(self, job: Job, report: PrecomputeReport) -> bool:
        """Run `job` and count it in `report`; whether it was done."""
        cpu = time.process_time()
        try:
            self.handlers.run(job)
        except Preempted:
            self.queue.release(job)
            return False
        except Exception as exc:  # one bad job must not end the run; it is logged and counted
            if _no_room(exc):  # not the job's fault: it runs again once there is room
                self._out_of_room(exc, job)
                return False
            log.exception("precompute job %s failed", job.key)
            self.queue.fail(job, f"{type(exc).__name__}: {exc}")
            report.failed += 1
            return False
        except BaseException:  # Ctrl-C, exit: not the job's doing, and no death of its process
            self.queue.release(job)
            raise
        if self.blobs.no_room:  # its KV was computed and not kept: run again once there is room
            self.queue.release(job)
            return False
        spent = time.process_time() - cpu
        self.queue.finish(job, spent)
        report.jobs_done += 1
        report.cpu_seconds += spent
        report.by_kind[job.kind] = report.by_kind.get(job.kind, 0) + 1
        return True

    def _out_of_room(self, exc: Exception, job: Job | None = None) -> None:
        """The disk is full (`exc`): the run stops, and `job` goes back in the queue, uncounted.
        When the cache database cannot even say so, the job stays 'running', which the next
        run's `recover` puts back in the queue, uncounted too (this pass ends: home_lock.py)."""
        problem = no_room(self.parts.cache_db, exc) if full(exc) else _no_space(exc)
        self.blobs.no_room = self.blobs.no_room or problem
        if job is None:
            return
        try:
            self.queue.release(job)
        except sqlite3.OperationalError as again:
            if not full(again):
                raise
            log.warning("precompute job %s is put back by the next run: %s", job.key, again)

    # -- status --------------------------------------------------------------------------------

    def status(self) -> dict:
        return {
            **precompute_counts(self.parts.cache_db),
            "coverage": self.planner.covered(),
            "rerank": self._rerank_status(),
        }

    def _rerank_status(self) -> dict:
        reranker, setting = self.select.reranker, self.parts.settings.rerank
        current = reranker.current if reranker is not None else "off"
        return selfcheck.status(setting, current, self.check)


def _no_room(exc: Exception) -> bool:
    """`exc` says the disk (or the user's quota) is full: a file of the job's own, written
    elsewhere than the blob store (which says so in `no_room` instead of raising), or the cache
    database."""
    return isinstance(exc, OSError) and exc.errno in NO_ROOM or full(exc)


def _no_space(exc: OSError) -> str:
    """A file of the job's own found no room on its disk: where, and what to do."""
    where = Path(exc.filename).parent if isinstance(exc.filename, str) else "the home"
    return f"no space left on the disk for {where} ({exc.strerror or exc}): free some space there"


def _label(job: Job) -> str:
    detail = job.payload.get("question") or job.payload.get("chunk") or job.payload.get("entry")
    return f"{job.kind} {detail}" if detail is not None else job.kind
