"""The evidence line and the support check, on the demo home.

    python bench/evidence.py [--home DIR]

For every question of data/qa/mail_qa.jsonl, notes_qa.jsonl and evidence_holdout.jsonl, the
prompt's chunks are retrieved as the app retrieves them (Services.answerer().select). Then: are
all `must_contain` facts in those chunks, and in the evidence line (≤ 2 sentences) of each design:
"baseline", the plain cosine pick of the best 2 sentences over naive splits (the first version of
assistant/answer/evidence.py); "cosine" and "bm25" alone over its sentences; "mix", the
shipped score. Questions come in three groups: half A (odd ids: the mix's weights and rules were
chosen on it), half B (even ids) and the holdout (answers in lines that do not look like the
question; h33 on were written after the design was fixed and run once). A grid over the mix's
weights shows how much the choice on A moves B and the holdout.

Then unsupported_terms: on the reference answers (few should be marked) and on answers corrupted
in one term (a digit changed, a digit doubled as in 2001 → 20011, a date moved, a person's name
swapped for another sender's, a name invented): these should all be marked. Sources are the
prompt's chunks plus the chunks of the question's source document (the reference answers were
written from it); "prompt only" rows use what the app passes. Writes bench/results/evidence.json.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import tempfile
import time
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402
from _common import (  # noqa: E402
    DEMO_MBOX,
    QA_FILES,
    REPO,
    demo_context,
    file_digest,
    log,
    mean,
    percentile,
    print_table,
    require_demo,
    write_results,
)

from assistant.answer import evidence as ev  # noqa: E402
from assistant.answer.support import unsupported_terms  # noqa: E402
from assistant.knowledge.store import ChunkRecord  # noqa: E402
from cache.protocols import Embedder  # noqa: E402

HOLDOUT = REPO / "data" / "qa" / "evidence_holdout.jsonl"
LATE = 33  # holdout ids from h33 on were written after the design was fixed
GROUPS = ("A", "B", "holdout", "holdout_late")
INVENTED = ("Gerrit Hoogland", "Olaf Brink", "Svetlana Morozova", "Kwame Mensah")
GRID = {"bm25": (0.25, 0.5, 0.75, 1.0), "answer_kind": (0.0, 0.15, 0.25, 0.35)}
GRID_RANK = (0.0, 0.1, 0.2)


@dataclass(frozen=True)
class Case:
    """A question with the prompt the app builds for it."""

    row: dict[str, Any]
    vector: np.ndarray
    records: list[ChunkRecord]
    source_texts: list[str]  # the chunks of the question's source document

    @property
    def groups(self) -> list[str]:
        qid = self.row["id"]
        if qid.startswith("h"):
            return ["holdout"] + (["holdout_late"] if int(qid[1:]) >= LATE else [])
        return ["A" if int(qid[1:]) % 2 else "B"]

    def facts_in(self, texts: Sequence[str]) -> bool:
        text = " ".join(" ".join(texts).split()).lower()
        return all(fact.lower() in text for fact in self.row["must_contain"])


class CachedEmbedder:
    """The real embedder behind a text → vector cache, so the weight grid embeds once."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder, self.name, self.cache = embedder, embedder.name, {}

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self.cache]
        if missing:
            self.cache.update(zip(missing, self.embedder.embed_batch(missing), strict=True))
        return np.stack([self.cache[t] for t in texts])


# -- designs ----------------------------------------------------------------------------------

_NAIVE = re.compile(r"(?<=[.!?])\s+|\n+")


def baseline(case: Case, embedder: Embedder) -> list[str]:
    """The first version: lines and sentences split naively, the 2 most similar by cosine."""
    parts = (p.strip().lstrip(">").strip() for r in case.records for p in _NAIVE.split(r.text))
    sentences = [p for p in parts if len(p) > 3]
    if not sentences:
        return []
    order = np.argsort(-(embedder.embed_batch(sentences) @ case.vector), kind="stable")
    return [sentences[i] for i in order[:2]]


def with_mix(mix: ev.Mix) -> Callable[[Case, Embedder], list[str]]:
    def pick(case: Case, embedder: Embedder) -> list[str]:
        found = ev.select_evidence(
            case.row["question"], case.vector, case.records, embedder, 2, mix
        )
        return [e.sentence for e in found]

    return pick


DESIGNS = {
    "baseline": baseline,
    "cosine": with_mix(ev.COSINE),
    "bm25": with_mix(ev.BM25),
    "mix": with_mix(ev.DEFAULT),
}


# -- the prompt of each question --------------------------------------------------------------


def load_rows(paths: Sequence[Path]) -> list[dict[str, Any]]:
    rows = []
    for path in paths:
        lines = path.read_text(encoding="utf-8").split("\n")
        rows += [json.loads(line) for line in lines if line.strip()]
    return rows


def build_cases(ctx, rows: list[dict[str, Any]]) -> list[Case]:
    pipe = ctx.answerer()
    every = ctx.store.chunk_records(ctx.store.chunk_texts()[0].tolist())
    cases = []
    for row in rows:
        vector = ctx.embedder.embed_batch([row["question"]])[0]
        records = [h.record for h in pipe.select(row["question"], vector)]
        source = [r.text for r in every if is_source(r, row)]
        cases.append(Case(row, vector, records, source))
    return cases


def is_source(record: ChunkRecord, row: dict[str, Any]) -> bool:
    if row["kind"] == "email":
        return record.message_id == row["source"]
    return bool(record.note_path) and Path(record.note_path) == (REPO / "data" / row["source"])


# -- evidence ---------------------------------------------------------------------------------


def evaluate(cases: list[Case], designs: dict, embedder: Embedder) -> dict[str, Any]:
    """Per design and group: share of questions whose facts are all in the evidence line, of
    all questions and of those whose facts are in the prompt."""
    picks = {name: [pick(c, embedder) for c in cases] for name, pick in designs.items()}
    out: dict[str, Any] = {}
    for group in GROUPS:
        chosen = [i for i, c in enumerate(cases) if group in c.groups]
        in_prompt = [i for i in chosen if cases[i].facts_in([r.text for r in cases[i].records])]
        out[group] = {"questions": len(chosen), "facts_in_prompt": _share(in_prompt, chosen)}
        for name, found in picks.items():
            hits = [i for i in chosen if cases[i].facts_in(found[i])]
            out[group][name] = _share(hits, chosen)
            out[group][f"{name}_of_in_prompt"] = _share(
                [i for i in hits if i in in_prompt], in_prompt
            )
    return {"groups": out, "picks": picks}


def _share(part: Sequence[int], whole: Sequence[int]) -> float:
    return len(part) / len(whole) if whole else float("nan")


def grid(cases: list[Case], embedder: Embedder) -> list[dict[str, Any]]:
    """The mix's hit rate per group for each weight setting (cosine weight 1)."""
    rows = []
    for bm25, kind, rank in itertools.product(GRID["bm25"], GRID["answer_kind"], GRID_RANK):
        mix = ev.Mix(1.0, bm25, kind, rank)
        result = evaluate(cases, {"mix": with_mix(mix)}, embedder)["groups"]
        rows.append(
            {"bm25": bm25, "answer_kind": kind, "rank": rank}
            | {g: result[g]["mix"] for g in GROUPS}
        )
    return rows


def latency(cases: list[Case], embedder: Embedder) -> dict[str, Any]:
    """select_evidence with the real embedder (no cache), once per question after a warm-up:
    with the embedder's own torch threads, then with one thread (a batch this small gains
    little from a second thread and loses much when the other core is busy)."""
    import torch

    ev.select_evidence("warm up", cases[0].vector, cases[0].records, embedder)
    before = torch.get_num_threads()
    own = _select_times(cases, embedder)
    torch.set_num_threads(1)
    try:
        single = _select_times(cases, embedder)
    finally:
        torch.set_num_threads(before)
    support = []
    for case in cases:
        t0 = time.perf_counter()
        texts = [r.text for r in case.records]
        unsupported_terms(case.row["answer"], texts, case.row["question"])
        support.append((time.perf_counter() - t0) * 1000)
    counts = [sum(len(ev.split_sentences(r.text)) for r in c.records) for c in cases]
    return {
        **_summary("select", own),
        **_summary("select_1_thread", single),
        "torch_threads": before,
        "sentences_mean": mean(counts),
        "sentences_max": max(counts),
        "support_mean_ms": mean(support),
        "support_max_ms": max(support),
        "cpus_usable": len(os.sched_getaffinity(0)),
        "loadavg_after": list(os.getloadavg()),
    }


def _select_times(cases: list[Case], embedder: Embedder) -> list[float]:
    times = []
    for case in cases:
        t0 = time.perf_counter()
        ev.select_evidence(case.row["question"], case.vector, case.records, embedder)
        times.append((time.perf_counter() - t0) * 1000)
    return times


def _summary(name: str, times: list[float]) -> dict[str, float]:
    return {
        f"{name}_mean_ms": mean(times),
        f"{name}_p50_ms": percentile(times, 50),
        f"{name}_p90_ms": percentile(times, 90),
        f"{name}_max_ms": max(times),
    }


# -- the support check ------------------------------------------------------------------------

_NUMBER = re.compile(r"(?<![\w.,])\d+(?:[.,:]\d+)*")
_MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
_DATE = re.compile(rf"\b(\d{{1,2}})(\s+(?:{_MONTHS}))\b")


def _numbers(answer: str) -> list[re.Match]:
    dates = [m.span(1) for m in _DATE.finditer(answer)]
    return [m for m in _NUMBER.finditer(answer) if m.span() not in dates]


def change_digit(answer: str, names: Sequence[str]) -> str | None:
    """The first number (not a date's day) with its last digit one up: 4.6 → 4.7."""
    for m in _numbers(answer):
        new = m.group()[:-1] + str((int(m.group()[-1]) + 1) % 10)
        return answer[: m.start()] + new + answer[m.end() :]
    return None


def double_digit(answer: str, names: Sequence[str]) -> str | None:
    """The first number of two digits or more with its last digit doubled: 2001 → 20011."""
    for m in _numbers(answer):
        if sum(c.isdigit() for c in m.group()) >= 2:
            return answer[: m.end()] + m.group()[-1] + answer[m.end() :]
    return None


def move_date(answer: str, names: Sequence[str]) -> str | None:
    """The first "9 June" two days later (or earlier at the month's end)."""
    m = _DATE.search(answer)
    if m is None:
        return None
    day = int(m.group(1))
    return answer[: m.start()] + str(day + 2 if day < 27 else day - 2) + answer[m.end(1) :]


def swap_name(answer: str, names: Sequence[str]) -> str | None:
    """The first sender's first name in the answer swapped for the next sender's."""
    for m in re.finditer(r"\b[^\W\d_]+\b", answer):
        if m.group() in names:
            other = names[(names.index(m.group()) + 1) % len(names)]
            return answer[: m.start()] + other + answer[m.end() :]
    return None


def invent_name(answer: str, names: Sequence[str]) -> str | None:
    """The first sender's first name in the answer replaced by a name in no mail."""
    for m in re.finditer(r"\b[^\W\d_]+\b", answer):
        if m.group() in names:
            invented = INVENTED[len(answer) % len(INVENTED)]
            return answer[: m.start()] + invented + answer[m.end() :]
    return None


CORRUPTIONS = {
    "digit changed": change_digit,
    "digit doubled": double_digit,
    "date moved": move_date,
    "name swapped": swap_name,
    "name invented": invent_name,
}


def support(cases: list[Case], names: Sequence[str]) -> dict[str, Any]:
    """The share of answers marked, per kind of answer and per source set."""
    out: dict[str, Any] = {}
    for label, with_source in (("prompt + source", True), ("prompt only", False)):
        kept = [c for c in cases if with_source or c.facts_in([r.text for r in c.records])]
        out[label] = {"reference": _marked(kept, lambda a, _: a, names, with_source)}
        for kind, corrupt in CORRUPTIONS.items():
            out[label][kind] = _marked(kept, corrupt, names, with_source)
    refusal = "I could not find that in your mail."
    out["refusal_terms"] = unsupported_terms(refusal, [cases[0].records[0].text], "When?")
    return out


def _marked(cases: list[Case], corrupt, names: Sequence[str], with_source: bool) -> dict:
    marked, missed = [], []
    for case in cases:
        answer = corrupt(case.row["answer"], names)
        if answer is None:
            continue
        sources = [r.text for r in case.records] + (case.source_texts if with_source else [])
        terms = unsupported_terms(answer, sources, case.row["question"])
        (marked if terms else missed).append(
            {"id": case.row["id"], "answer": answer, "terms": terms}
        )
    total = len(marked) + len(missed)
    return {
        "answers": total,
        "marked": len(marked) / total if total else float("nan"),
        "marked_examples": marked[:5],
        "missed": missed,
    }


def sender_names(ctx) -> list[str]:
    """The first names of the demo mailbox's people: senders whose address starts with their
    first name ("priya@…") or reads initial.surname ("h.groenveld@…"), not "The Soil Signal"."""
    records = ctx.store.chunk_records(ctx.store.chunk_texts()[0].tolist())
    names = set()
    for sender in {r.sender for r in records if r.kind == "email"}:
        display, _, address = sender.partition("<")
        words = display.split()
        if len(words) >= 2 and _is_own_address(words, address.lower()):
            names.add(words[0])
    return sorted(names)


def _is_own_address(words: list[str], address: str) -> bool:
    first, last = (_ascii(w) for w in (words[0], words[-1]))
    return address.startswith(first) or address.startswith(f"{first[0]}.{last}")


def _ascii(word: str) -> str:
    return unicodedata.normalize("NFKD", word.lower()).encode("ascii", "ignore").decode()


# -- report -----------------------------------------------------------------------------------


def report(result: dict[str, Any], cases: list[Case]) -> None:
    groups = result["evidence"]["groups"]
    rows = []
    for g in GROUPS:
        d = groups[g]
        rows.append(
            (
                g,
                d["questions"],
                d["facts_in_prompt"],
                *(d[n] for n in DESIGNS),
                *(d[f"{n}_of_in_prompt"] for n in ("baseline", "mix")),
            )
        )
    lat = result["latency"]
    print_table(
        "Evidence line (≤ 2 sentences) holds all must_contain facts: share of questions",
        [
            "group",
            "questions",
            "facts in prompt",
            *DESIGNS,
            "baseline | in prompt",
            "mix | in prompt",
        ],
        rows,
        note=f"mix = {ev.DEFAULT}; select_evidence over {lat['sentences_mean']:.0f} sentences "
        f"(max {lat['sentences_max']}) on {lat['cpus_usable']} CPU cores: "
        f"{lat['select_mean_ms']:.0f} ms mean, {lat['select_p90_ms']:.0f} ms p90 "
        f"({lat['torch_threads']} torch threads), {lat['select_1_thread_mean_ms']:.0f} ms mean, "
        f"{lat['select_1_thread_p90_ms']:.0f} ms p90 (1 thread); load average after "
        f"{lat['loadavg_after'][0]:.1f}; unsupported_terms {lat['support_mean_ms']:.2f} ms mean",
    )
    sup = result["support"]
    kinds = ["reference", *CORRUPTIONS]
    print_table(
        "unsupported_terms: share of answers marked unsupported",
        ["sources", *kinds],
        [
            (label, *(sup[label][k]["marked"] for k in kinds))
            for label in ("prompt + source", "prompt only")
        ],
        note="reference answers should be ~0, corrupted ones ~1; answers per column: "
        + ", ".join(f"{k} {sup['prompt + source'][k]['answers']}" for k in kinds),
    )


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, help="an imported demo home to copy")
    parser.add_argument("--out", type=Path, help="default bench/results/evidence.json")
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    require_demo()
    rows = load_rows([*QA_FILES, HOLDOUT])
    with tempfile.TemporaryDirectory() as tmp:
        ctx = demo_context(Path(tmp), args.home)
        log(f"retrieving the prompts of {len(rows)} questions")
        cases = build_cases(ctx, rows)
        cached = CachedEmbedder(ctx.embedder)
        log("evidence per design, then the weight grid")
        evidence = evaluate(cases, DESIGNS, cached)
        result = {
            "evidence": {"groups": evidence["groups"], "mix": vars(ev.DEFAULT)},
            "grid": grid(cases, cached),
            "corpus": {"demo.mbox": file_digest(DEMO_MBOX), "holdout": file_digest(HOLDOUT)},
            "latency": latency(cases, ctx.embedder),
            "support": support(cases, sender_names(ctx)),
            "questions": [
                {
                    "id": c.row["id"],
                    "groups": c.groups,
                    "question": c.row["question"],
                    "must_contain": c.row["must_contain"],
                    "in_prompt": c.facts_in([r.text for r in c.records]),
                    "chunk_ids": [r.chunk_id for r in c.records],
                    **{name: evidence["picks"][name][i] for name in DESIGNS},
                }
                for i, c in enumerate(cases)
            ],
        }
    report(result, cases)
    path = write_results("evidence", result, vars(args), path=args.out)
    log(f"wrote {path}")


if __name__ == "__main__":
    main()
