"""What a precompute pass queues, in order of priority (the kinds are described in runner.py):
each `_plan_*` looks at the current state and queues the jobs it calls for, once (a job's key
names the state it was planned from)."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime

from assistant.knowledge.sources import SourceLog
from assistant.knowledge.store import KnowledgeStore
from assistant.precompute import coverage
from assistant.precompute.handlers import PRIORITY, SELFCHECK, Handlers
from assistant.precompute.parts import PrecomputeParts
from assistant.rerank.doc_kv import KIND as DOC_KV
from assistant.rerank.selfcheck import MAX_PROBES
from cache import policy
from cache.jobs import DONE, JobQueue
from cache.meta import CacheMeta

# under plan "access", the node of a chunk no question used yet: after the predicted questions
# are populated (their chunks' nodes come first)
_UNUSED_CHUNK_KV = PRIORITY["populate"] + 1


class Planner:
    def __init__(
        self,
        parts: PrecomputeParts,
        handlers: Handlers,
        queue: JobQueue,
        settle: float,
    ) -> None:
        self.parts, self.handlers, self.queue, self.settle = parts, handlers, queue, settle
        self.settings = parts.settings.precompute
        self.cache, self.select, self.memory = parts.cache, parts.selection, parts.memory
        self.qa, self.kv_tree, self.check = parts.qa, parts.kv, parts.check
        self.abstract, self.history = handlers.abstract, handlers.history
        self.meta = CacheMeta(parts.cache_db)
        self._coverage: tuple[tuple[int, int], coverage.Plan] | None = None
        self.predicted = False  # predictions are planned once per run: `stride` per run
        self.reimport_due = False  # a run sets it: its first job reads the sources again

    # -- planning ------------------------------------------------------------------------------

    def plan(self) -> int:
        """Queue the jobs the current state calls for; return how many were new. A re-read of
        the sources is planned alone: the rest is planned from what it read, once it ran."""
        # what saved the last days' questions more goes first (Handlers.priority)
        self.handlers.predictions_first = self.history.savings().predictions_first
        reimport = self._plan_reimport()
        if reimport or (self.parts.importer is not None and self._reimport_waiting()):
            return reimport
        return (
            self._plan_embed()
            + self._plan_refresh()
            + self._plan_abstract()
            + self._plan_predictions()
            + self._plan_doc_kv()
            + self._plan_chunk_nodes()
            + self._plan_reader_lines()
            + self._plan_conversions()
            + self._plan_rerank_check()
            + self._plan_fit_lines()
            + self._plan_selfcheck()
        )

    def _enqueue(self, kind: str, key: str, payload: dict | None = None) -> int:
        return int(self.queue.enqueue(kind, key, payload, self.handlers.priority(kind)))

    def _plan_reimport(self) -> int:
        """Once per run, when the home has remembered sources and an importer, unless one from
        an earlier, stopped run is still queued (that one goes first)."""
        if not self.reimport_due or self.parts.importer is None:
            return 0
        self.reimport_due = False
        if self._reimport_waiting() or not SourceLog(self.parts.store.db).paths():
            return 0
        return self._enqueue("reimport", f"reimport:{time.time_ns()}")

    def _reimport_waiting(self) -> bool:
        return bool(self.queue.keys("reimport", "queued") or self.queue.keys("reimport", "running"))

    def _plan_embed(self) -> int:
        """Chunks without a vector from the encoder in use get one while the user is away, so a
        stopped import or a changed [embedding] backend needs no `assistant import` to finish;
        not while an import is embedding them itself."""
        store, name = self.parts.store, self.parts.embedder.name
        if store.all_embedded(name) or self.parts.presence.embedding_running():
            return 0
        versions = f"{store.version('chunks')}:{store.version('vectors')}"
        return self._enqueue("embed", f"embed:{name}:{versions}")

    def _plan_refresh(self) -> int:
        version = self.parts.store.version("chunks")
        if int(self.meta.get("refresh_version", "0")) != version:
            answered = self.qa.answered()
            self.qa.mark_stale([e.id for e in answered if not self.memory.is_fresh(e)])
            self.meta.set("refresh_version", str(version))
        return sum(
            self._enqueue("refresh", f"refresh:{e.id}:{version}", {"entry": e.id})
            for e in self.qa.answered(stale=True)
        )

    def _plan_abstract(self) -> int:
        newest = self.parts.store.max_chunk_id()
        if newest <= self.abstract.read_upto() or not self._settled():
            return 0
        return self._enqueue("abstract", f"abstract:{newest}", {"upto": newest})

    def _settled(self) -> bool:
        last = self.parts.store.last_import()
        if not last:
            return True
        age = (datetime.now(UTC) - datetime.fromisoformat(last)).total_seconds()
        return age >= self.settle

    def _plan_predictions(self) -> int:
        if self.predicted or self.queue.state_of(f"abstract:{self.parts.store.max_chunk_id()}") in (
            "queued",
            "running",
        ):
            return 0  # predict from the abstract once it has read the new chunks
        self.predicted = True
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
        """The chunks read into the abstract that no detail prediction has used yet, first in
        the coverage plan (plan "recent") or newest first."""
        done = {int(key.split(":")[1]) for key in self.queue.keys("predict_detail")}
        upto = self.abstract.read_upto()
        if self.settings.plan == "recent":
            ids = [i for i in self.coverage().chunks if i <= upto]
        else:
            ids = self.parts.store.chunk_ids(upto=upto)[::-1]
        return [i for i in ids if i not in done][:n]

    def coverage(self) -> coverage.Plan:
        """The night's coverage plan, made again when the mail or the asked questions change."""
        store = self.parts.store
        key = (store.version("chunks"), self.history.last_id())
        if self._coverage is None or self._coverage[0] != key:
            made = coverage.plan(
                store.mail_headers(), store.chunk_documents(), self.history.chunk_counts(),
                self.parts.settings.mail.today, chunk_texts(store),
            )  # fmt: skip
            self._coverage = (key, made)
        return self._coverage[1]

    def covered(self) -> str:
        """How much of the last six weeks' chunks the nights gave a node (coverage.py)."""
        return coverage.statement(self.coverage(), noded_chunks(self.queue))

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
        reranker, s = self.select.reranker, self.parts.settings
        if s.rerank != "auto" or reranker is None or not reranker.available:
            return 0
        if not self.check.due(s.reranker.auto_min_questions):
            return 0
        n = len(self.check.probes(MAX_PROBES))
        key = f"rerank_check:{datetime.now(UTC).date()}:{n}"
        return self._enqueue("rerank_check", key, {"probes": n})

    def _plan_fit_lines(self, least: int = 200) -> int:
        """The line scorer refitted on this mail: once a mailbox has `least` chunks, and again
        each time it has grown by half (the key is the chunk count's power of 1.5). Not while
        chunk nodes wait: a refit has the model write FIT_LINES questions (minutes), and the
        first minutes of a night go to the nodes of the mail people ask about."""
        if self.queue.keys("chunk_kv", "queued"):
            return 0
        n = self.parts.store.count_chunks()
        if n < least:
            return 0
        step = fit_lines_step(n, least)
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
        stats, fits = self._nodes_with_room(batch)
        evicted = stats["evicted"]

        def uncached(chunk_id: int) -> bool:
            records = self.parts.store.chunk_records([chunk_id])
            return bool(records) and not self.cache.kv_cached([records[0].text])

        key = f"chunk_kv:{{}}:{evicted}"
        order, priority = self._node_plan()
        return self._queue_chunks("chunk_kv", fits, key, uncached, order, priority)

    def _plan_reader_lines(self, batch: int = 512) -> int:
        """Under reader_nodes "headers", the reader's line nodes of the chunks whose node the
        night made, in the plan's order, once no chunk node waits and as far as the KV
        budget's room goes: they save a fifth of what a chunk node saves a night second
        (bench/results/reader_nodes.json). The key carries the count of nodes evicted from the
        tree (any model's: the reader may not be the writer), so a chunk whose line nodes were
        evicted is queued again; its job makes only the nodes the tree lacks."""
        if self.settings.reader_nodes != "headers" or not self.handlers.kv:
            return 0
        if self.queue.keys("chunk_kv", "queued"):
            return 0
        fits = self._nodes_with_room(batch)[1]
        noded = noded_chunks(self.queue)
        # the reader is loaded (if it is not yet) only once there is something to plan for it
        if fits <= 0 or not noded or not (self.parts.judge and self.parts.judge()):
            return 0
        order = (c for c in self._node_plan()[0] if c in noded)
        key = f"reader_lines:{{}}:{self.kv_tree.evicted_anywhere()}"
        return self._queue_chunks("reader_lines", fits, key, order=order)

    def _nodes_with_room(self, most: int) -> tuple[dict[str, int], int]:
        """The KV tree's stats, and how many more nodes (at most `most`) the budget has room
        for at the tree's mean node size."""
        stats = self.kv_tree.stats()
        room = policy.kv_room(stats["bytes"], self._kv_budget())
        return stats, min(most, room // self._bytes_per_node(stats))

    def _node_plan(self) -> tuple[Iterable[int], Callable[[int], int]]:
        """The chunks in the order `[precompute] plan` gives their [system, chunk] nodes, and
        each one's job priority: under "access", a chunk no question used waits behind the
        predicted questions, which may use it (and whose chunks then come first)."""
        if self.settings.plan == "recent":
            return self.coverage().chunks, lambda _: PRIORITY["chunk_kv"]
        newest = reversed(self.parts.store.chunk_ids())
        if self.settings.plan == "newest":
            return newest, lambda _: PRIORITY["chunk_kv"]
        asked, predicted = self.history.chunk_counts(), self.qa.chunk_uses("predicted")
        weight = self.parts.settings.retrieval.predicted_weight
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
        for chunk_id in reversed(self.parts.store.chunk_ids()) if order is None else order:
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
        if policy.decode_pending(self.handlers.serving_floor(), cutoff):
            for entry in qa.pending():
                queued += self._enqueue("decode", f"decode:{entry.id}", {"entry": entry.id})
        stats = self.kv_tree.stats()
        room = policy.kv_room(stats["bytes"], self._kv_budget())
        evicted = stats["evicted"]
        if room and evicted and self.handlers.kv:
            candidates = self.handlers.rebuild_candidates()
            for entry_id in policy.pick_rebuilds(candidates, room, self._bytes_per_prompt(stats)):
                key = f"rebuild:{entry_id}:{evicted}"
                queued += self._enqueue("rebuild_kv", key, {"entry": entry_id})
        return queued

    def _kv_budget(self) -> int:
        return self.parts.settings.cache.kv_budget_bytes

    def _bytes_per_prompt(self, stats: dict[str, int]) -> int:
        return self._bytes_per_node(stats) * (self.parts.settings.answer.context_chunks + 1)

    @staticmethod
    def _bytes_per_node(stats: dict[str, int]) -> int:
        return policy.node_bytes(stats["bytes"], stats["nodes_with_kv"])


def fit_lines_step(chunks: int, least: int = 200) -> int:
    """The line scorer's refit a mailbox of `chunks` chunks is due (its job key and seed): one
    from `least` chunks on, another each time the mailbox has grown by half."""
    return int(math.log(chunks / least, 1.5))


def chunk_texts(store: KnowledgeStore) -> coverage.Texts:
    """The texts of documents' chunks, by chunk id (what the coverage plan finds copies in)."""
    return lambda docs: {chunk: text for chunk, _, text in store.chunks_of(docs)}


def noded_chunks(queue: JobQueue) -> set[int]:
    """The chunks whose chunk_kv job finished (a node evicted since is not told apart)."""
    return {int(k.split(":")[1]) for k in queue.keys("chunk_kv", state=DONE)}
