"""Which chunks precompute gives KV nodes ([precompute] plan), within the KV budget's headroom,
and as nodes per chunk under any-order reuse; the plan setting through file, env and CLI."""

from __future__ import annotations

import pytest

from assistant.answer.answerer import NO_CACHE
from assistant.cli.cli import build_parser
from assistant.cli.commands import apply_switches
from assistant.config import ConfigError, load_settings
from assistant.kv.prompt_cache import Preempted
from assistant.precompute.handlers import PREDICTION_KINDS, PRIORITY
from assistant.precompute.runner import Precompute
from cache.jobs import Job
from tests.assistant.test_precompute import QUESTIONS, chunk_texts, make_ctx, queue_questions

KITCHEN = "When does the kitchen demolition start?"  # its first chunk is the oldest mail's


def test_recent_is_the_default_plan():
    assert load_settings(None, env={}).precompute.plan == "recent"


def test_the_plan_round_trips_through_file_env_and_command_line(tmp_path):
    cfg = tmp_path / "config.toml"
    cfg.write_text('[expert.precompute]\nplan = "newest"\n')
    settings = load_settings(cfg, env={})
    assert settings.precompute.plan == "newest"
    settings = load_settings(cfg, env={"ASSISTANT_PRECOMPUTE_PLAN": "access"})
    assert settings.precompute.plan == "access"
    apply_switches(settings, build_parser().parse_args(["precompute", "--plan", "newest"]))
    assert settings.precompute.plan == "newest"
    apply_switches(settings, build_parser().parse_args(["precompute"]))  # unchanged
    assert settings.precompute.plan == "newest"


def test_a_bad_plan_is_a_clear_error_naming_the_file(tmp_path):
    cfg = tmp_path / "config.toml"
    cfg.write_text('[expert.precompute]\nplan = "oldest"\n')
    expected = r"precompute.plan: expected one of recent, access, newest.*"
    with pytest.raises(ConfigError, match=expected):
        load_settings(cfg, env={})
    with pytest.raises(ConfigError, match=str(cfg)):
        load_settings(cfg, env={})


def _planned(runner: Precompute) -> list[tuple[int, int]]:
    """Plan; (chunk, priority) of the queued chunk_kv jobs, in the order they will run."""
    runner.plan()
    out = []
    while (job := runner.queue.claim(("chunk_kv",))) is not None:
        out.append((job.payload["chunk"], job.priority))
    return out


@pytest.mark.slow
def test_the_access_plan_gives_the_chunks_past_questions_used_their_nodes_first(tmp_path):
    ctx = make_ctx(tmp_path)
    pipe = ctx.answerer()
    list(pipe.answer(KITCHEN, NO_CACHE))  # the answer path records the prompt's chunks
    used = list(pipe.history.chunk_counts())
    assert len(used) == ctx.settings.answer.context_chunks
    newest = ctx.store.chunk_ids()[::-1]
    assert used[0] == newest[-1]  # the kitchen mail is the oldest
    ctx.settings.cache.kv_budget_mb = 12  # room for two nodes at the first guess (5 MiB each)

    ctx.settings.precompute.plan = "newest"
    planned = _planned(Precompute(ctx.precompute_parts(), settle_seconds=0))
    assert [c for c, _ in planned] == newest[:2]

    ctx.settings.precompute.plan = "access"
    runner = Precompute(ctx.precompute_parts(), settle_seconds=0)
    for job in runner.queue.keys("chunk_kv"):  # forget the newest plan's jobs
        runner.queue.db.execute("DELETE FROM jobs WHERE key = ?", [job])
    planned = _planned(runner)
    assert sorted(c for c, _ in planned) == sorted(used)
    assert all(priority == 22 for _, priority in planned)


@pytest.mark.slow
def test_a_chunk_no_question_used_waits_behind_the_predicted_questions(tmp_path):
    ctx = make_ctx(tmp_path)
    ctx.settings.precompute.plan = "access"
    list(ctx.answerer().answer(KITCHEN, NO_CACHE))
    planned = _planned(Precompute(ctx.precompute_parts(), settle_seconds=0))
    used = set(ctx.answerer().history.chunk_counts())
    assert len(planned) == len(ctx.store.chunk_ids())
    for chunk, priority in planned:
        assert priority == (22 if chunk in used else 41)


@pytest.mark.slow
def test_populate_prefills_only_within_the_kv_headroom(tmp_path):
    ctx = make_ctx(tmp_path)
    ctx.settings.precompute.chunk_nodes = False
    ctx.settings.cache.qa_verify = "off"  # served by τ alone: strategy 1, prefill only
    pipe = ctx.answerer()
    runner = Precompute(ctx.precompute_parts(), settle_seconds=0)
    queue_questions(runner, QUESTIONS[:1])
    runner.run()
    stats = pipe.kv.stats()
    node = stats["bytes"] // stats["nodes_with_kv"]
    # the headroom (90% of the budget) now has room for half a node; the blob store's own
    # budget (set when it opened) would still take the prefix without evicting anything
    ctx.settings.cache.kv_budget_mb = (stats["bytes"] + node / 2) / 0.9 / 2**20
    queue_questions(runner, QUESTIONS[1:])
    runner.run()
    assert pipe.kv.stats() == stats  # nothing stored, nothing evicted
    assert not pipe.cache.kv_cached(chunk_texts(pipe, QUESTIONS[1]))
    assert [e.question for e in pipe.qa.pending()] == QUESTIONS  # the entry is kept all the same


@pytest.mark.slow
def test_a_prediction_answered_without_headroom_stores_no_node_and_evicts_none(tmp_path):
    """Verified hits (the default): the night answers its predicted questions; where the
    budget has no headroom left it still answers, reading the KV there, but adds no node, so
    the nodes the night planned are not evicted for a predicted question's prompt."""
    ctx = make_ctx(tmp_path)
    ctx.settings.precompute.chunk_nodes = False
    pipe = ctx.answerer()
    runner = Precompute(ctx.precompute_parts(), settle_seconds=0)
    queue_questions(runner, QUESTIONS[:1])
    runner.run()
    stats = pipe.kv.stats()
    assert stats["nodes_with_kv"] and pipe.qa.entries()[0].answer is not None  # answered
    node = stats["bytes"] // stats["nodes_with_kv"]
    ctx.settings.cache.kv_budget_mb = (stats["bytes"] + node / 2) / 0.9 / 2**20
    queue_questions(runner, QUESTIONS[1:])
    runner.run()
    assert pipe.kv.stats() == stats  # nothing stored, nothing evicted
    assert not pipe.qa.pending()
    answered = {e.question: e.answer for e in pipe.qa.entries()}
    assert answered[QUESTIONS[1]] is not None


@pytest.mark.slow
def test_with_any_order_reuse_populate_stores_a_node_per_chunk_not_a_prefix_path(tmp_path):
    ctx = make_ctx(tmp_path)
    ctx.settings.precompute.chunk_nodes = False
    ctx.settings.cache.reuse = "any-order"
    ctx.settings.cache.qa_verify = "off"  # served by τ alone: strategy 1, prefill only
    pipe = ctx.answerer()
    runner = Precompute(ctx.precompute_parts(), settle_seconds=0)
    queue_questions(runner, QUESTIONS)
    assert runner.run().by_kind.get("populate") == 2
    for question in QUESTIONS:
        texts = chunk_texts(pipe, question)
        assert len(texts) == 2
        assert all(pipe.cache.kv_cached([t]) for t in texts)
        assert not pipe.cache.kv_cached(texts)  # no [system, chunk, chunk] path


@pytest.mark.slow
def test_a_detail_prediction_keeps_its_chunk_node_only_within_the_headroom(tmp_path):
    ctx = make_ctx(tmp_path)
    pipe = ctx.answerer()
    first, second = ctx.store.chunk_ids()[:2]
    handlers = Precompute(ctx.precompute_parts(), settle_seconds=0).handlers
    handlers.run(Job(0, "predict_detail", "a", {"chunk": first}, 30, 0))
    stats = pipe.kv.stats()
    assert stats["nodes_with_kv"] == 2  # [system] and [system, chunk]: there was room
    node = stats["bytes"] // stats["nodes_with_kv"]
    ctx.settings.cache.kv_budget_mb = (stats["bytes"] + node / 2) / 0.9 / 2**20
    handlers.run(Job(0, "predict_detail", "b", {"chunk": second}, 30, 0))
    assert pipe.kv.stats() == stats  # no room: the node was computed, not kept
    assert handlers.queue.keys("populate")  # the questions were written all the same


@pytest.mark.slow
def test_chunks_an_import_left_without_vectors_are_embedded_first_while_idle(tmp_path):
    """A stopped import leaves chunks with no vector; precompute embeds them before anything
    else (retrieval searches only embedded chunks), steps aside for a user question between
    batches, and leaves them to an import that is embedding them itself."""
    from assistant.importing.importer import Importer
    from assistant.precompute.handlers import PRIORITY
    from tests.conftest import make_email, write_mbox

    ctx = make_ctx(tmp_path)
    name = ctx.embedder.name
    mails = [make_email(subject=f"tiles {i}", body=f"Batch {i} arrives.") for i in range(3)]
    box = write_mbox(tmp_path / "later.mbox", mails)
    Importer(ctx.store, ctx.embedder).run([box], embed=False)  # stopped before embedding
    missing = ctx.store.count_unembedded(name)
    assert missing == 3 and not ctx.store.all_embedded(name)

    runner = Precompute(ctx.precompute_parts(), settle_seconds=0)
    with ctx.presence.embedding():  # an import is embedding them: not precompute's job
        assert runner.planner._plan_embed() == 0
    runner.plan()
    job = runner.queue.claim()
    # first of the jobs but a run's re-read of the sources, which embeds what it reads itself
    first = min(p for kind, p in PRIORITY.items() if kind != "reimport")
    assert job.kind == "embed" and job.priority == PRIORITY["embed"] == first
    assert PRIORITY["reimport"] < first

    # a user question is waiting: it steps aside, nothing lost
    with ctx.presence.busy(), pytest.raises(Preempted):
        runner.handlers.run(job)
    assert ctx.store.count_unembedded(name) == missing
    runner.handlers.run(job)
    assert ctx.store.all_embedded(name)
    hits = ctx.retriever.search("When does batch 2 arrive?", 3, "dense")
    assert any("Batch 2 arrives" in h.record.text for h in hits)  # dense search sees them


@pytest.mark.slow
def test_the_line_scorer_is_refitted_only_once_no_chunk_node_waits(tmp_path):
    """A refit has the model write questions for minutes: a night's first minutes go to the
    nodes of the mail people ask about, the refit after them."""
    ctx = make_ctx(tmp_path)
    runner = Precompute(ctx.precompute_parts(), settle_seconds=0)
    runner.planner._plan_fit_lines = lambda least=1: type(runner.planner)._plan_fit_lines(
        runner.planner, least
    )  # the demo mailbox is under the 200 chunks a refit waits for
    runner.plan()
    assert runner.queue.keys("chunk_kv", "queued")
    assert not runner.queue.keys("fit_lines")
    while (job := runner.queue.claim(("chunk_kv",))) is not None:
        runner.queue.finish(job, 0.0)
    ctx.kv.blobs.budgets["kv"] = 0  # no room for more nodes: none is planned again
    runner.plan()
    assert not runner.queue.keys("chunk_kv", "queued")
    assert runner.queue.keys("fit_lines", "queued")


@pytest.mark.slow
def test_the_night_puts_first_what_saved_the_last_days_questions_more(tmp_path):
    """KV nodes go first (as before) until the answered predictions saved more prompt tokens
    than the nodes over the last days' questions (cache/prediction.py Savings); then the
    prediction work runs before the chunk nodes, still after the abstract it reads."""
    ctx = make_ctx(tmp_path)
    runner = Precompute(ctx.precompute_parts(), settle_seconds=0)
    runner.plan()
    handlers, history = runner.handlers, runner.handlers.history
    assert runner.queue.keys("chunk_kv", "queued")  # the nodes the prediction work may pass
    assert not handlers.predictions_first
    assert handlers.priority("populate") == PRIORITY["populate"] > PRIORITY["chunk_kv"]
    history.saved(history.add(KITCHEN), 60, 500)  # the model answered, 60 tokens restored
    runner.plan()
    assert not handlers.predictions_first
    for question in QUESTIONS[:2]:  # two questions a predicted answer served
        history.saved(history.add(question), 0, 0, "predicted:detail")
    runner.plan()
    assert handlers.predictions_first
    for kind in PREDICTION_KINDS:
        assert PRIORITY["abstract"] < handlers.priority(kind) < PRIORITY["chunk_kv"]
    handlers._queue_questions(["What colour are the new tiles?"], "predicted:detail")
    assert runner.queue.claim(("populate", "chunk_kv")).kind == "populate"


@pytest.mark.slow
def test_each_answer_records_what_it_was_saved(tmp_path):
    """The answer path writes to the history what each answer was saved: the prompt tokens
    the KV tree restored of its prompt, or the origin of the QA-bank entry that served it."""
    ctx = make_ctx(tmp_path)
    pipe = ctx.answerer()
    rows = "SELECT kv_tokens, prompt_tokens, served FROM history ORDER BY id"
    list(pipe.answer(KITCHEN, NO_CACHE))
    list(pipe.answer(KITCHEN))  # fills the KV tree and the QA bank
    (naive_kv, naive_prompt, naive_served), (_, prompt, served) = pipe.history.db.execute(
        rows
    ).fetchall()
    assert naive_kv == 0 and naive_prompt == prompt > 0 and naive_served == served == ""
    pipe.qa.db.execute("UPDATE qa_entries SET origin = 'predicted:detail'")
    list(pipe.answer(KITCHEN))  # served by the stored answer
    kv, prompt, served = pipe.history.db.execute(rows).fetchall()[-1]
    assert (kv, prompt, served) == (0, 0, "predicted:detail")


def reader_nodes(ctx) -> tuple[int, int]:
    """(header nodes, line nodes) with KV under the reader's instruction."""
    from cache.kv_tree import segment_hash

    reader = ctx.judge
    root = segment_hash(reader._prefix)
    count = (
        "SELECT count(*) FROM kv_nodes n JOIN kv_nodes r ON r.id = n.parent_id {} "
        "WHERE {}.segment_hash = ? AND n.blob_key IS NOT NULL"
    )
    headers = ctx.cache_db.execute(count.format("", "r"), [root]).fetchone()[0]
    below = "JOIN kv_nodes g ON g.id = r.parent_id"
    return headers, ctx.cache_db.execute(count.format(below, "g"), [root]).fetchone()[0]


@pytest.mark.slow
def test_the_readers_line_nodes_come_once_every_chunk_has_its_node(tmp_path):
    """reader_nodes "headers": a chunk's job makes its node and its mail header's reader node;
    the line nodes are planned only when no chunk node waits, one job per noded chunk."""
    ctx = make_ctx(tmp_path)
    ctx.settings.models.reader = "smollm2-135m"  # the reader's nodes, from a small model
    runner = Precompute(ctx.precompute_parts(), settle_seconds=0)
    assert runner.planner._plan_reader_lines() == 0  # nothing has its node yet
    runner.planner._plan_chunk_nodes()
    assert runner.planner._plan_reader_lines() == 0  # chunk nodes wait
    while (job := runner.queue.claim(("chunk_kv",))) is not None:
        runner.handlers.run(job)
        runner.queue.finish(job, 0.0)
    chunks = len(ctx.store.chunk_ids())
    headers, lines = reader_nodes(ctx)
    assert 0 < headers <= chunks and lines == 0  # a header's node per mail, no line's yet
    assert runner.planner._plan_reader_lines() == chunks
    while (job := runner.queue.claim(("reader_lines",))) is not None:
        assert job.priority == PRIORITY["reader_lines"] > PRIORITY["chunk_kv"]
        runner.handlers.run(job)
        runner.queue.finish(job, 0.0)
    made = reader_nodes(ctx)[1]
    assert made > 0  # the lines' nodes, after their header's
    assert runner.planner._plan_reader_lines() == 0  # each chunk's lines once
    # a line node evicted (the budget's doing) is planned and made again, and only it
    (key,) = ctx.cache_db.execute(
        "SELECT blob_key FROM kv_nodes WHERE blob_key IS NOT NULL ORDER BY depth DESC LIMIT 1"
    ).fetchone()
    runner.planner.kv_tree.blobs.delete(key)
    assert reader_nodes(ctx)[1] == made - 1
    assert runner.planner._plan_reader_lines() == chunks
    while (job := runner.queue.claim(("reader_lines",))) is not None:
        runner.handlers.run(job)
        runner.queue.finish(job, 0.0)
    assert reader_nodes(ctx)[1] == made
