"""Idle-time precompute (PerCache §4): plan jobs, run them through the PromptCache, report progress.

A run first plans — queues what the current state calls for — then drains the persisted queue
until it is empty, the deadline passes, it is cancelled, or (for the idle scheduler) the user
comes back. Planning, in order of priority:
  refresh    stale QA entries (new mail ranks in their top-k) are answered again
  abstract   new chunks are read into the knowledge abstract (once imports have settled)
  chunk_kv   chunks get their [system, chunk] node while the KV budget has room, in the order
             `[precompute] plan` says: "access" first the chunks past and predicted questions
             were answered from (most used first), "newest" newest first. Whatever the
             question, its first retrieved chunk with a node is then restored (with any-order
             reuse, every one of them)
  predict    questions are written from the user's history, from single chunks (detail) and
             from the abstract (general); at most `stride` questions per run
  doc_kv     with reranking on, the reranker's document KV of each chunk, newest first, within
             its budget (what is not precomputed is filled when a question first reranks it)
  populate   each predicted question is prefilled (strategy 1) or prefilled and decoded
             (strategy 2), as cache/policy.py decides from τ; a prefill only while the KV budget
             has room, and with any-order reuse as one node per chunk, not a prefix path
  decode     KV → QA: pending entries are decoded once τ is below the cutoff
  rebuild    QA → KV: entries whose prefix was evicted are prefilled again while there is room
  rerank_check  with `rerank = "auto"`, nightly: does a reranker beat fused on the predicted
             questions whose source chunk is known (rerank/selfcheck.py)
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from assistant.precompute.handlers import PRIORITY, SELFCHECK, Handlers
from assistant.prompt_cache import Preempted
from assistant.rerank import selfcheck
from assistant.rerank.doc_kv import KIND as DOC_KV
from assistant.rerank.selfcheck import MAX_PROBES
from assistant.services import LINE_WEIGHTS, Services
from cache import policy
from cache.jobs import Job, JobQueue
from cache.meta import CacheMeta
from cache.prediction import History, KnowledgeAbstract
from cache.runs import RunLog

log = logging.getLogger(__name__)
# under plan "access", the node of a chunk no question used yet: after the predicted questions
# are populated (their chunks' nodes come first)
_UNUSED_CHUNK_KV = PRIORITY["populate"] + 1


@dataclass(frozen=True)
class PrecomputeProgressed:
    done: int
    total: int
    job: str


Notify = Callable[[PrecomputeProgressed], None]
Stop = Callable[[], bool]


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
    stopped: str = "finished"  # finished | deadline | cancelled | preempted
    by_kind: dict[str, int] = field(default_factory=dict)

    def summary(self) -> str:
        kinds = ", ".join(f"{n} {k}" for k, n in sorted(self.by_kind.items())) or "nothing to do"
        return (
            f"{self.jobs_done} jobs ({kinds}) in {self.wall_seconds:.0f}s, "
            f"{self.cpu_seconds:.0f} CPU-s; {self.jobs_left} left; stopped: {self.stopped}"
            + (f"; {self.failed} failed (see the log)" if self.failed else "")
        )


class Precompute:
    def __init__(
        self,
        ctx: Services,
        settle_seconds: float | None = None,
        *,
        kv: bool = True,
    ) -> None:
        """Precompute takes from `ctx` the PromptCache, the selection and the cache parts it
        uses (the answer path's, shared). `kv=False` fills the QA bank only: every predicted
        question is decoded and no KV is stored, whatever τ (the sleep-time-compute baseline of
        bench/e2e.py)."""
        self.ctx = ctx
        self.settings = ctx.settings.precompute
        self.cache, self.select, self.memory = ctx.prompt_cache(), ctx.selection, ctx.memory
        self.qa, self.kv_tree = ctx.qa, ctx.kv
        db = ctx.cache_db  # the QA bank's and the KV tree's too; each table below has its owner
        self.queue = JobQueue(db)
        self.abstract = KnowledgeAbstract(db)
        self.history = History(db)
        self.runs = RunLog(db)
        self.meta = CacheMeta(db)
        self.settle = self.settings.settle_seconds if settle_seconds is None else settle_seconds
        self.check = ctx.rerank_check()
        self.handlers = Handlers(
            self.cache, self.select, self.memory, ctx.store, self.queue, self.abstract,
            self.history, self.settings, kv=kv, check=self.check, lines=ctx.lines(),
            weights_path=ctx.home.cache_dir / LINE_WEIGHTS,
            recheck=lambda served: ctx.answerer().recheck(served),
        )  # fmt: skip
        self._predicted = False  # predictions are planned once per run: `stride` per run

    # -- planning ------------------------------------------------------------------------------

    def plan(self) -> int:
        """Queue the jobs the current state calls for; return how many were new."""
        return (
            self._plan_embed()
            + self._plan_refresh()
            + self._plan_abstract()
            + self._plan_predictions()
            + self._plan_doc_kv()
            + self._plan_chunk_nodes()
            + self._plan_conversions()
            + self._plan_rerank_check()
            + self._plan_fit_lines()
            + self._plan_selfcheck()
        )

    def _enqueue(self, kind: str, key: str, payload: dict | None = None) -> int:
        return int(self.queue.enqueue(kind, key, payload, PRIORITY[kind]))

    def _plan_embed(self) -> int:
        """Chunks without a vector from the encoder in use get one while the user is away, so a
        stopped import or a changed [embedding] backend needs no `assistant import` to finish;
        not while an import is embedding them itself."""
        store, name = self.ctx.store, self.ctx.embedder.name
        if store.all_embedded(name) or self.ctx.presence.embedding_running():
            return 0
        versions = f"{store.version('chunks')}:{store.version('vectors')}"
        return self._enqueue("embed", f"embed:{name}:{versions}")

    def _plan_refresh(self) -> int:
        version = self.ctx.store.version("chunks")
        if int(self.meta.get("refresh_version", "0")) != version:
            answered = self.qa.answered()
            self.qa.mark_stale([e.id for e in answered if not self.memory.is_fresh(e)])
            self.meta.set("refresh_version", str(version))
        return sum(
            self._enqueue("refresh", f"refresh:{e.id}:{version}", {"entry": e.id})
            for e in self.qa.answered(stale=True)
        )

    def _plan_abstract(self) -> int:
        newest = self.ctx.store.max_chunk_id()
        if newest <= self.abstract.read_upto() or not self._settled():
            return 0
        return self._enqueue("abstract", f"abstract:{newest}", {"upto": newest})

    def _settled(self) -> bool:
        last = self.ctx.store.last_import()
        if not last:
            return True
        age = (datetime.now(UTC) - datetime.fromisoformat(last)).total_seconds()
        return age >= self.settle

    def _plan_predictions(self) -> int:
        if self._predicted or self.queue.state_of(f"abstract:{self.ctx.store.max_chunk_id()}") in (
            "queued",
            "running",
        ):
            return 0  # predict from the abstract once it has read the new chunks
        self._predicted = True
        stride, last = self.settings.stride, self.history.last_id()
        history_n = int(stride * self.settings.history_share) if last else 0
        general_n = min(8, stride // 6) if self.abstract.count() else 0
        queued = 0
        if history_n:
            queued += self._enqueue("predict_history", f"history:{last}", {"n": history_n})
        if general_n:
            key = f"general:{self.abstract.count()}"
            queued += self._enqueue("predict_general", key, {"n": general_n})
        detail_chunks = (stride - history_n - general_n) // len(self.handlers.seeds)
        for chunk_id in self._unpredicted_chunks(detail_chunks):
            queued += self._enqueue("predict_detail", f"detail:{chunk_id}", {"chunk": chunk_id})
        return queued

    def _unpredicted_chunks(self, n: int) -> list[int]:
        """The newest chunks read into the abstract that no detail prediction has used yet."""
        done = {int(key.split(":")[1]) for key in self.queue.keys("predict_detail")}
        ids = self.ctx.store.chunk_ids(upto=self.abstract.read_upto())
        return [i for i in reversed(ids) if i not in done][:n]

    def _plan_doc_kv(self, batch: int = 64) -> int:
        """Up to `batch` chunks (newest first) without a doc_kv job for the reranker's mode,
        as many as its document-KV budget has room for."""
        reranker = self.select.reranker
        if reranker is None or not reranker.active:
            return 0
        blobs = self.kv_tree.blobs
        used, count = blobs.used(DOC_KV), blobs.count(DOC_KV)
        per_doc = used // count if count else 4 * 2**20
        fits = min(batch, policy.kv_room(used, blobs.budgets.get(DOC_KV, 0)) // per_doc)
        return self._queue_chunks("doc_kv", fits, f"doc_kv:{reranker.current}:{{}}")

    def _plan_rerank_check(self) -> int:
        """`rerank = "auto"`: the self-check, nightly, once there are enough probes."""
        reranker, s = self.select.reranker, self.ctx.settings
        if s.rerank != "auto" or reranker is None or not reranker.available:
            return 0
        if not self.check.due(s.reranker.auto_min_questions):
            return 0
        n = len(self.check.probes(MAX_PROBES))
        key = f"rerank_check:{datetime.now(UTC).date()}:{n}"
        return self._enqueue("rerank_check", key, {"probes": n})

    def _plan_fit_lines(self, least: int = 200) -> int:
        """The line scorer refitted on this mail: once a mailbox has `least` chunks, and again
        each time it has grown by half (the key is the chunk count's power of 1.5)."""
        n = self.ctx.store.count_chunks()
        if n < least:
            return 0
        step = int(math.log(n / least, 1.5))
        return self._enqueue("fit_lines", f"fit_lines:{step}", {"seed": step})

    def _plan_selfcheck(self) -> int:
        """The QA bank's served hits answered afresh, once a day while some are unchecked."""
        unchecked = len(self.memory.qa.unchecked(SELFCHECK))
        if not unchecked:
            return 0
        key = f"qa_selfcheck:{datetime.now(UTC).date()}:{self.memory.qa.stats()['hits']}"
        return self._enqueue("qa_selfcheck", key, {"n": SELFCHECK})

    def _plan_chunk_nodes(self, batch: int = 512) -> int:
        """Up to `batch` chunks (in the plan's order) whose [system, chunk] node has no KV, as
        many as the KV budget has room for. The key carries the evicted-node count, so a node
        evicted later is queued again once the budget has room."""
        if not (self.handlers.kv and self.settings.chunk_nodes):
            return 0
        stats = self.kv_tree.stats()
        room = policy.kv_room(stats["bytes"], self._kv_budget())
        fits = min(batch, room // self._bytes_per_node(stats))
        evicted = stats["nodes"] - stats["nodes_with_kv"]

        def uncached(chunk_id: int) -> bool:
            records = self.ctx.store.chunk_records([chunk_id])
            return bool(records) and not self.cache.kv_cached([records[0].text])

        key = f"chunk_kv:{{}}:{evicted}"
        order, priority = self._node_plan()
        return self._queue_chunks("chunk_kv", fits, key, uncached, order, priority)

    def _node_plan(self) -> tuple[Iterable[int], Callable[[int], int]]:
        """The chunks in the order `[precompute] plan` gives their [system, chunk] nodes, and
        each one's job priority: under "access", a chunk no question used waits behind the
        predicted questions, which may use it (and whose chunks then come first)."""
        newest = reversed(self.ctx.store.chunk_ids())
        if self.settings.plan == "newest":
            return newest, lambda _: PRIORITY["chunk_kv"]
        asked, predicted = self.history.chunk_counts(), self.qa.chunk_uses("predicted")
        weight = self.ctx.settings.retrieval.predicted_weight
        used = set(asked) | (set(predicted) if weight > 0 else set())
        order = policy.access_order(newest, asked, predicted, weight)
        return order, lambda i: PRIORITY["chunk_kv"] if i in used else _UNUSED_CHUNK_KV

    def _queue_chunks(
        self,
        kind: str,
        most: int,
        key: str,
        wanted: Callable[[int], bool] = lambda _: True,
        order: Iterable[int] | None = None,
        priority: Callable[[int], int] | None = None,
    ) -> int:
        """Queue a `kind` job for up to `most` chunks, in `order` (default newest first), that
        have no job under `key` (formatted with the chunk id) yet and are `wanted`, each at
        `priority(chunk)` (default the kind's); return how many."""
        queued = 0
        for chunk_id in reversed(self.ctx.store.chunk_ids()) if order is None else order:
            if queued >= most:
                break
            name = key.format(chunk_id)
            if self.queue.state_of(name) is None and wanted(chunk_id):
                rank = PRIORITY[kind] if priority is None else priority(chunk_id)
                queued += int(self.queue.enqueue(kind, name, {"chunk": chunk_id}, rank))
        return queued

    def _plan_conversions(self) -> int:
        qa, cutoff = self.qa, self.settings.decode_cutoff
        queued = 0
        if policy.decode_pending(qa.threshold, cutoff):
            for entry in qa.pending():
                queued += self._enqueue("decode", f"decode:{entry.id}", {"entry": entry.id})
        stats = self.kv_tree.stats()
        room = policy.kv_room(stats["bytes"], self._kv_budget())
        evicted = stats["nodes"] - stats["nodes_with_kv"]
        if room and evicted and self.handlers.kv:
            candidates = self.handlers.rebuild_candidates()
            for entry_id in policy.pick_rebuilds(candidates, room, self._bytes_per_prompt(stats)):
                key = f"rebuild:{entry_id}:{evicted}"
                queued += self._enqueue("rebuild_kv", key, {"entry": entry_id})
        return queued

    def _kv_budget(self) -> int:
        return self.ctx.settings.cache.kv_budget_bytes

    def _bytes_per_prompt(self, stats: dict[str, int]) -> int:
        return self._bytes_per_node(stats) * (self.ctx.settings.answer.context_chunks + 1)

    @staticmethod
    def _bytes_per_node(stats: dict[str, int]) -> int:
        return policy.node_bytes(stats["bytes"], stats["nodes_with_kv"])

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

        One pass runs at a time in a process (they share the cache's connection): with `wait`
        this one waits for the running pass to end (saying so through `notify`), else it raises
        PrecomputeBusy."""
        lock = self.ctx.precompute_lock
        if not lock.acquire(blocking=False):
            if not wait:
                raise PrecomputeBusy("another precompute pass is running; this one did not start")
            stopped = self._wait_turn(lock, deadline, notify, cancelled)
            if stopped:
                return PrecomputeReport(jobs_left=self.queue.pending(), stopped=stopped)
        try:
            return self._run(deadline, notify, cancelled, stop_for_user)
        finally:
            lock.release()

    def _wait_turn(
        self, lock: threading.Lock, deadline: float | None, notify: Notify | None, cancelled: Stop
    ) -> str | None:
        """Wait for `lock`; None once held, else why the wait ended (cancelled, deadline)."""
        log.info("precompute: waiting for the pass already running to end")
        if notify:
            notify(PrecomputeProgressed(0, 1, "waiting for the running precompute to stop"))
        while not lock.acquire(timeout=0.2):
            stop = self._should_stop(deadline, cancelled, stop_for_user=False)
            if stop:
                return stop
        return None

    def _run(
        self, deadline: float | None, notify: Notify | None, cancelled: Stop, stop_for_user: bool
    ) -> PrecomputeReport:
        report, start, run_id = PrecomputeReport(), time.time(), self.runs.open()
        self._predicted = False
        self.queue.recover()
        self.plan()
        while True:
            stop = self._should_stop(deadline, cancelled, stop_for_user)
            if stop:
                report.stopped = stop
                break
            job = self.queue.claim()
            if job is None and not self.plan():
                break
            if job is not None:
                self._run_job(job, report)
                if notify:
                    done = report.jobs_done + report.failed
                    notify(PrecomputeProgressed(done, done + self.queue.pending(), _label(job)))
        report.jobs_left = self.queue.pending()
        report.wall_seconds = time.time() - start
        self.runs.close(run_id, report.jobs_done, report.cpu_seconds, report.stopped)
        return report

    def _should_stop(self, deadline, cancelled, stop_for_user: bool) -> str | None:
        if cancelled():
            return "cancelled"
        if deadline is not None and time.time() >= deadline:
            return "deadline"
        while self.ctx.presence.user_waiting():
            if stop_for_user:
                return "preempted"
            time.sleep(0.2)
        return None

    def _run_job(self, job: Job, report: PrecomputeReport) -> None:
        cpu = time.process_time()
        try:
            self.handlers.run(job)
        except Preempted:
            self.queue.release(job)
            return
        except Exception as exc:  # one bad job must not end the run; it is logged and counted
            log.exception("precompute job %s failed", job.key)
            self.queue.fail(job, f"{type(exc).__name__}: {exc}")
            report.failed += 1
            return
        spent = time.process_time() - cpu
        self.queue.finish(job, spent)
        report.jobs_done += 1
        report.cpu_seconds += spent
        report.by_kind[job.kind] = report.by_kind.get(job.kind, 0) + 1

    # -- status --------------------------------------------------------------------------------

    def status(self) -> dict:
        counts = self.queue.counts()
        return {
            "jobs_queued": counts["queued"] + counts["running"],
            "jobs_done": counts["done"],
            "jobs_failed": counts["failed"],
            "predicted_pending": self.qa.stats()["pending"],
            "abstract_items": self.abstract.count(),
            "last_run": self.runs.last(),
            "rerank": self._rerank_status(),
        }

    def _rerank_status(self) -> dict:
        reranker, setting = self.select.reranker, self.ctx.settings.rerank
        current = reranker.current if reranker is not None else "off"
        return selfcheck.status(setting, current, self.check)


def _label(job: Job) -> str:
    detail = job.payload.get("question") or job.payload.get("chunk") or job.payload.get("entry")
    return f"{job.kind} {detail}" if detail is not None else job.kind
