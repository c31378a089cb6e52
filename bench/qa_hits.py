"""QA-bank hits decided by evidence (issue 32): paraphrase hits, near-miss false hits, hits after
the evidence mail changed, and the hit's latency, side by side with the question guard.

Per set, the stored questions are answered through the app's own answer path (the model writes
each stored answer's sentence, as a user's question would; `--no-model` stores the sentence ""
instead: the hit decision never reads it) into an empty QA bank of a copy of the home; then each
asked question takes the app's decision (Answerer.quote, Answerer.lookup). Designs:
"evidence" (the default, answer/qa_verify.py) and "guard" (the question guard over cosine ≥
qa_candidate_threshold, the earlier default), on the same bank.

Sets: "real" (data/qa/skilling_pairs.jsonl on the real mailbox in ../shared/eval/mail/), "demo"
(data/qa/paraphrases.jsonl and near_miss.jsonl on the demo mailbox) and "qqp" (Quora pairs in
../shared/eval/qqp_dev.jsonl against the demo mailbox, without the model).

    python bench/qa_hits.py [--sets real,demo,qqp] [--real-home H] [--demo-home H]
                            [--qqp-limit 1000] [--no-model] [--out qa_hits]
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (  # noqa: E402
    QA_DIR,
    _jsonl,
    cli_import,
    default_eval_dir,
    log,
    percentile,
    print_table,
    write_results,
)
from _funnel_worker import has  # noqa: E402
from _qa_replay import reader_design  # noqa: E402

from assistant.answer.answerer import ALL_LAYERS, Answerer  # noqa: E402
from assistant.answer.evidence import holds  # noqa: E402
from assistant.answer.qa_memory import find_hit  # noqa: E402
from assistant.answer.qa_verify import HitVerifier, same_kind, slot_mismatch  # noqa: E402
from assistant.answer.quoted import clipped, line_key  # noqa: E402
from assistant.events import AnswerDone  # noqa: E402
from assistant.services import Services, open_services  # noqa: E402
from cache.qa_bank import QABank  # noqa: E402

CHANGED = "This line was changed after the answer was stored."


@dataclass(frozen=True)
class Pair:
    stored: str
    asked: str
    paraphrase: bool
    kind: str
    # the facts an answer to `asked` holds (a paraphrase's are the stored question's): whether
    # the stored answer is right, so a served paraphrase can be told right from wrong
    must: tuple[str, ...] = ()


@dataclass
class Outcome:
    """What each design did with one asked question."""

    pair: Pair
    cosine: float
    served: dict[str, str] = field(default_factory=dict)  # design → the served stored question
    reason: str = ""  # the evidence check's verdict on the pair's own stored entry
    seconds: float = 0.0  # the evidence design's decision (embed, quote, lookup)
    # the asked question's best line, its probability and band, and the stored answer's best
    # line: its probability and place among the asked question's scored lines (-1: not among them)
    detail: dict = field(default_factory=dict)
    # the stored answer's lines hold the pair's facts (None: no facts known, or nothing stored)
    stored_right: bool | None = None


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default="real,demo,qqp")
    parser.add_argument("--real-home", type=Path, help="an imported real-mail home to copy")
    parser.add_argument("--demo-home", type=Path, help="an imported demo home to copy")
    parser.add_argument("--eval-dir", type=Path, default=default_eval_dir())
    parser.add_argument("--qqp-limit", type=int, default=1000, help="QQP pairs, half of them "
                        "duplicates (0: all)")  # fmt: skip
    parser.add_argument("--no-model", action="store_true", help="stored sentences left empty")
    parser.add_argument("--changed", type=int, default=20, help="served hits whose mail changes")
    parser.add_argument("--out", default="qa_hits")
    parser.add_argument("--replay", type=Path, help="a results file whose rows hold the reader's "
                        "margins: its reader design replayed, nothing run")  # fmt: skip
    return parser.parse_args()


def load_pairs(name: str, eval_dir: Path, limit: int) -> list[Pair]:
    if name == "real":
        rows = _jsonl(QA_DIR / "skilling_pairs.jsonl")
        return [Pair(r["stored"], r["asked"], r["relation"] == "paraphrase", r["kind"],
                     tuple(r.get("asked_must_contain") or ()))
                for r in rows]  # fmt: skip
    if name == "demo":
        facts = written_facts()
        para = [Pair(r["stored"], r["asked"], True, "paraphrase", facts.get(r["stored"], ()))
                for r in _jsonl(QA_DIR / "paraphrases.jsonl")]  # fmt: skip
        near = [Pair(r["stored"], r["asked"], False, r.get("kind", "near_miss"))
                for r in _jsonl(QA_DIR / "near_miss.jsonl")]  # fmt: skip
        return para + near
    rows = _jsonl(eval_dir / "qqp_dev.jsonl")
    pairs = [Pair(r["a"], r["b"], bool(r["duplicate"]), "qqp") for r in rows]
    half = (limit or len(pairs)) // 2  # as many duplicates as non-duplicates: the file is sorted
    return [p for p in pairs if p.paraphrase][:half] + [p for p in pairs if not p.paraphrase][:half]


def written_facts() -> dict[str, tuple[str, ...]]:
    """Each written question of data/qa with its must_contain (the demo paraphrases' stored
    questions are the demo set's)."""
    out: dict[str, tuple[str, ...]] = {}
    for path in sorted(QA_DIR.glob("*.jsonl")):
        for row in _jsonl(path):
            if row.get("question") and row.get("must_contain"):
                out.setdefault(row["question"], tuple(row["must_contain"]))
    return out


def holds_facts(entry, must: tuple[str, ...]) -> bool | None:
    """The stored answer's lines (its quote and the other mail's line) hold every fact."""
    if entry is None:
        return None
    return has(" ".join(line for _, line in entry.evidence), list(must))


def home_copy(name: str, given: Path | None, work: Path, eval_dir: Path) -> Path:
    """A copy of an imported home (its QA bank emptied), or a fresh import."""
    home = work / name
    if given is not None:
        shutil.copytree(given, home, ignore=shutil.ignore_patterns("cache"))
        return home
    return cli_import(home, name, work, eval_dir)


def store_answers(ctx: Services, questions: list[str], model: bool) -> None:
    """Each stored question answered as the app answers it, so its entry is what the app
    keeps (with the model), or with the sentence "" (the decision never reads it)."""
    answerer = ctx.answerer()
    for i, question in enumerate(questions):
        if model:
            for _ in answerer.answer(question, ALL_LAYERS):
                pass
        else:
            vector = ctx.embedder.embed_batch([question])[0]
            hits, found = answerer.quote(question, vector)
            if not found.not_found:
                ctx.memory.keep(question, vector, "", hits, "bench", found)
        if i % 25 == 24:
            log(f"  stored {i + 1}/{len(questions)}")


def guard_design(ctx: Services) -> tuple[QABank, HitVerifier]:
    """The earlier default over the same entries: the guard, cosine ≥ qa_candidate_threshold."""
    cache = ctx.settings.cache
    bank = QABank(ctx.cache_db, cache.qa_threshold, 1 << 40, cache.qa_candidate_threshold,
                  embedder=ctx.embedder)  # fmt: skip
    verifier = HitVerifier(ctx.retriever, replace(cache, qa_verify="guard"))
    return bank, verifier


def decide(ctx: Services, pairs: list[Pair]) -> list[Outcome]:
    answerer: Answerer = ctx.answerer()
    guard_bank, guard = guard_design(ctx)
    # the evidence check's cuts; the reader's "same" is replayed from its margins, and the
    # design without a reader adds the word guard (_qa_replay.no_reader)
    today = HitVerifier(ctx.retriever, ctx.settings.cache, same=lambda stored, asked: True)
    entries = {e.question: e for e in ctx.qa.entries()}
    out = []
    for pair in pairs:
        start = time.perf_counter()
        vector = ctx.embedder.embed_batch([pair.asked])[0]
        _, found = answerer.quote(pair.asked, vector)
        hit = answerer.lookup(pair.asked, vector, found)
        seconds = time.perf_counter() - start
        other = find_hit(guard_bank, vector, guard.check(pair.asked, vector))
        stored = entries.get(pair.stored)
        cosine = float(ctx.qa.vector(stored.id) @ vector) if stored else float("nan")
        outcome = Outcome(pair, cosine, seconds=seconds)
        outcome.stored_right = holds_facts(stored, pair.must)
        outcome.served = {"evidence": hit.entry.question if hit else "",
                          "guard": other.entry.question if other else ""}  # fmt: skip
        if stored is not None:
            verdict = answerer.verifier.verdict(pair.asked, vector, stored, found)
            outcome.reason = f"{verdict.reason} ({found.band})"
            outcome.detail = line_detail(found, stored)
            outcome.detail["today_served"] = today.verdict(pair.asked, vector, stored, found).served
            outcome.detail |= cuts(ctx, pair.asked, stored, found)
            if ctx.judge is not None and not found.not_found:
                # every pair's (not only those the cuts pass), kept by the reader
                # (answer/judge.py), so any design and bar replays without the model
                outcome.detail["same_margin"] = ctx.judge.same(stored.question, pair.asked)
        else:
            outcome.reason = "not stored"
        out.append(outcome)
    return out


def cuts(ctx: Services, asked: str, stored, found) -> dict:
    """The evidence check's cheap cuts taken one by one (answer/qa_verify.py), so a design that
    keeps some of them replays without the model: both questions ask for the same kind of
    answer, and what they name agrees (Guard.slots, "" when it does)."""
    guard = ctx.answerer().verifier.guard
    return {"kind_ok": same_kind(asked, stored.question),
            "slots": slot_mismatch(guard, asked, stored, found)}  # fmt: skip


def line_detail(found, stored) -> dict:
    """Where the stored answer's best line stands among the asked question's scored lines."""
    theirs = line_key(stored.evidence[0][1]) if stored.evidence else ""
    place = next((i for i, (c, _) in enumerate(found.ranked)
                  if line_key(clipped(c.line.text)) == theirs), -1)  # fmt: skip
    return {
        "best": found.best_line,
        "score": round(found.score, 4),
        "band": found.band,
        "stored_line": stored.evidence[0][1] if stored.evidence else "",
        "stored_place": place,
        "stored_score": round(found.ranked[place][1], 4) if place >= 0 else None,
    }


def rates(outcomes: list[Outcome], design: str) -> dict:
    para = [o for o in outcomes if o.pair.paraphrase]
    near = [o for o in outcomes if not o.pair.paraphrase]
    own = [o for o in para if o.served[design] == o.pair.stored]
    false = [o for o in near if o.served[design] == o.pair.stored]
    right = [o for o in para if o.stored_right]
    return {
        "paraphrases": len(para),
        "paraphrase_hits": len(own),
        "paraphrase_hit_rate": len(own) / len(para) if para else None,
        # the ceiling a hit can honestly reach: paraphrases whose stored answer holds the facts,
        # how many of those are served, and how many served hits hand over a wrong answer
        "stored_right": len(right),
        "stored_known": sum(o.stored_right is not None for o in para),
        "right_hits": sum(o.served[design] == o.pair.stored for o in right),
        "right_hit_rate": (
            sum(o.served[design] == o.pair.stored for o in right) / len(right) if right else None
        ),
        "wrong_served": sum(o.stored_right is False for o in own),
        "near_misses": len(near),
        "near_miss_false_hits": len(false),
        "near_miss_false_rate": len(false) / len(near) if near else None,
        "near_miss_served_any": sum(bool(o.served[design]) for o in near),
        "false_hit_kinds": dict(Counter(o.pair.kind for o in false)),
        "false_hits": [{"stored": o.pair.stored, "asked": o.pair.asked} for o in false][:40],
    }


def changed_mail(ctx: Services, outcomes: list[Outcome], n: int) -> dict:
    """Served paraphrase hits whose evidence line is then changed in its mail (the chunk's text
    rewritten, its vectors redone, as a re-import of the edited mail leaves it): asked again,
    how many are still served."""
    entries = {e.question: e for e in ctx.qa.entries()}
    served = [o for o in outcomes if o.pair.paraphrase and o.served["evidence"] == o.pair.stored]
    changed = []
    for o in served[:n]:
        chunk_id, line = entries[o.pair.stored].evidence[0]
        record = ctx.store.chunk_records([chunk_id])[0]
        # the line as the chunk has it: wrapped lines were joined, quote marks dropped
        pattern = r"[\s>]+".join(re.escape(word) for word in line.rstrip("…").split())
        text = re.sub(pattern, CHANGED, record.text)
        with ctx.store.transaction():
            ctx.store.db.execute("UPDATE chunks SET text = ? WHERE id = ?", [text, chunk_id])
        ctx.store.put_embeddings(ctx.embedder.name, [chunk_id], ctx.embedder.embed_batch([text]))
        if not holds(ctx.store.chunk_records([chunk_id])[0], line):
            changed.append(o)
    again = decide(ctx, [o.pair for o in changed])
    still = sum(o.served["evidence"] == o.pair.stored for o in again)
    return {"tried": len(served[:n]), "changed": len(changed), "served_after": still}


def latency(ctx: Services, home: Path, outcomes: list[Outcome]) -> dict:
    """A served hit, warm (the whole answer, events to AnswerDone) and as a one-shot `ask`."""
    answerer = ctx.answerer()
    hits = [o.pair.asked for o in outcomes if o.pair.paraphrase and o.served["evidence"]][:20]
    warm = []
    for question in hits:
        start = time.perf_counter()
        done = [e for e in answerer.answer(question) if isinstance(e, AnswerDone)][-1]
        if done.qa_hit:
            warm.append(time.perf_counter() - start)
    cold = []
    for question in hits[:3]:
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "assistant.cli", "--home", str(home), "ask",
                        question], check=True, capture_output=True)  # fmt: skip
        cold.append(time.perf_counter() - start)
    return {
        "warm_hits": len(warm),
        "warm_p50_ms": percentile(warm, 50) * 1000 if warm else None,
        "decision_p50_ms": percentile([o.seconds for o in outcomes], 50) * 1000,
        "one_shot_ask_p50_s": percentile(cold, 50) if cold else None,
    }


def run_set(name: str, args: argparse.Namespace, work: Path) -> dict:
    pairs = load_pairs(name, args.eval_dir, args.qqp_limit)
    given = args.real_home if name == "real" else args.demo_home
    home = home_copy(name, given, work, args.eval_dir)
    ctx = open_services(home)
    stored = list(dict.fromkeys(p.stored for p in pairs))
    model = not args.no_model and name != "qqp"
    log(f"{name}: {len(pairs)} pairs, {len(stored)} stored questions (model: {model})")
    store_answers(ctx, stored, model)
    outcomes = decide(ctx, pairs)
    result = {
        "pairs": len(pairs),
        "stored": len(stored),
        "entries": len(ctx.qa.entries()),
        "model": model,
        "designs": {d: rates(outcomes, d) for d in ("evidence", "guard")},
        "reasons": {
            kind: dict(Counter(o.reason for o in outcomes if o.pair.paraphrase == kind))
            for kind in (True, False)
        },
        "paraphrase_cosines": sorted(round(o.cosine, 3) for o in outcomes if o.pair.paraphrase),
        "rows": [
            {
                "stored": o.pair.stored,
                "asked": o.pair.asked,
                "paraphrase": o.pair.paraphrase,
                "kind": o.pair.kind,
                "cosine": round(o.cosine, 3),
                "reason": o.reason,
                "served": o.served["evidence"] == o.pair.stored,
                "stored_right": o.stored_right,
                **o.detail,
            }
            for o in outcomes
        ],
    }
    reasons = result["reasons"]
    result["reasons"] = {"paraphrase": reasons[True], "near_miss": reasons[False]}
    if name != "qqp":
        result["latency"] = latency(ctx, home, outcomes)
        result["after_change"] = changed_mail(ctx, outcomes, args.changed)
    return result


def main() -> None:
    args = parse_args()
    work = Path(tempfile.mkdtemp(prefix="qa-hits-"))
    results = {}
    if args.replay:
        import json

        results = json.loads(args.replay.read_text())["sets"]
        for r in results.values():
            r["designs"] = {k: v for k, v in r["designs"].items() if k in ("evidence", "guard")}
    for name in args.sets.split(",") if not args.replay else []:
        results[name] = run_set(name, args, work)
    if any("same_margin" in r for res in results.values() for r in res["rows"]):
        reader_design(results)
    rows = []
    for name, r in results.items():
        for design, d in r["designs"].items():
            rows.append([name, design, f"{d['paraphrase_hits']}/{d['paraphrases']}",
                         f"{d['right_hits']}/{d['stored_right']} · {d['wrong_served']}",
                         f"{d['near_miss_false_hits']}/{d['near_misses']}",
                         r.get("after_change", {}).get("served_after", "—") if design == "evidence"
                         else "—",
                         (r.get("latency") or {}).get("warm_p50_ms") if design == "evidence"
                         else None])  # fmt: skip
    print_table("QA-bank hits by evidence", ["set", "design", "paraphrase hits",
                "of right stored · wrong served", "near-miss / non-dup false hits",
                "served after change", "warm hit p50 ms"],
                rows, left=2)  # fmt: skip
    params = {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()}
    write_results(args.out, {"sets": results}, params | {"work": str(work)})


if __name__ == "__main__":
    main()
