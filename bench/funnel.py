"""Where an answer's facts are lost, stage by stage, side by side for two answer paths.

For each question: the answering mail among the distinct top 3, its facts in the top-3 chunks'
text, in the evidence lines, in the model's draft, and in what the user is shown; then answers
shown wrong without a mark, right answers marked, "not found" (on unanswerable and answerable
questions, and its precision) and the time to the quote (today's path: its first token).

Designs: "quote" is this checkout's answer path; "today" is the path of an earlier commit
(--today, a git worktree made here), run by the same worker on a copy of the same home; the
other designs are this checkout's path with a setting changed (VARIANTS) or answering with
another shipped model ("gemma": gemma-3-270m, MODELS). Each answers without the caches (the
answer path's quality, not the caches'), 1 LLM thread each, the two designs of a set at once.

    python bench/funnel.py [--sets demo,holdout,real] [--today ace8a82] [--out funnel]
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (  # noqa: E402
    QA_DIR,
    REPO,
    cli_import,
    default_eval_dir,
    log,
    percentile,
    print_table,
    write_results,
)

SETS = {
    "demo": [QA_DIR / "mail_qa.jsonl", QA_DIR / "notes_qa.jsonl"],
    "holdout": [QA_DIR / "evidence_holdout.jsonl"],
    "real": [QA_DIR / "skilling_qa.jsonl"],
    "new": [QA_DIR / "skilling_new.jsonl"],  # the dev mailbox's new questions (issue 46)
    "fossum": [QA_DIR / "fossum_qa.jsonl"],  # the second mailbox (--fossum-home)
}
MAILBOX = {"real": "real", "new": "real", "fossum": "fossum"}  # else the demo home
STAGES = ("source_top3", "facts_top3", "facts_evidence", "facts_shown")
# designs that are this checkout's path (or --quote's) with settings changed
VARIANTS = {
    "blind": {"ASSISTANT_ANSWER_EVIDENCE_PLACE": "none"},
    "q8": {"ASSISTANT_LLM_KV_TYPE": "q8_0"},  # KV cached as q8_0 (issue 33: smaller nodes)
    # the model reads only the chunks of the lines shown ([answer] prompt_chunks)
    "shown": {"ASSISTANT_ANSWER_PROMPT_CHUNKS": "shown"},
    # the shipped Q4_1 weights' f16 copy (llm/weights.py), and the file as given
    "f16": {"ASSISTANT_LLM_WEIGHTS": "auto"},
    "asis": {"ASSISTANT_LLM_WEIGHTS": "as-is"},
    # without the reader model (answer/judge.py): the marks come from the writer's sentence
    "noreader": {"ASSISTANT_MODELS_READER": "none"},
    # the one sentence written by a bigger shipped model ([models] writer; issue 46 asks the
    # writer's default be chosen by quality and time side by side)
    "writer-smollm2": {"ASSISTANT_MODELS_WRITER": "smollm2-135m"},
    "writer-0.5b": {"ASSISTANT_MODELS_WRITER": "qwen2.5-coder-0.5b"},
    "writer-1.5b": {"ASSISTANT_MODELS_WRITER": "qwen2.5-coder-1.5b"},
}
# designs that answer with another shipped model ([llm] model_path): the model's sentence and
# the confirmation it gives are the model's, the quote is the same
MODELS = {"gemma": "gemma-3-270m"}


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default="demo,holdout,real")
    parser.add_argument("--designs", default="today,quote")
    parser.add_argument("--today", default="ace8a82", help="the commit of today's path")
    parser.add_argument("--quote", default="", help="a commit for the quote path (default: here)")
    parser.add_argument("--demo-home", type=Path, help="an imported demo home to copy")
    parser.add_argument("--real-home", type=Path, help="an imported real-mail home to copy")
    parser.add_argument("--fossum-home", type=Path, help="an imported second-mailbox home")
    parser.add_argument("--eval-dir", type=Path, default=default_eval_dir())
    parser.add_argument("--work", type=Path, help="where homes and raw rows go (default: tmp)")
    parser.add_argument("--summarize", action="store_true",
                        help="read the rows a run left in --work (SET-DESIGN.jsonl; a set "
                        "without rows is left out) and run nothing")  # fmt: skip
    parser.add_argument("--out", default="funnel")
    return parser.parse_args()


def code_of(design: str, args: argparse.Namespace, work: Path) -> Path:
    commit = args.today if design == "today" else args.quote
    if not commit:
        return REPO
    tree = work / f"code-{commit}"
    if not tree.exists():
        subprocess.run(
            ["git", "-C", str(REPO), "worktree", "add", "--detach", str(tree), commit],
            check=True, capture_output=True,
        )  # fmt: skip
    return tree


def base_home(name: str, args: argparse.Namespace, work: Path) -> Path:
    kind = MAILBOX.get(name, "demo")
    given = {"real": args.real_home, "fossum": args.fossum_home}.get(kind, args.demo_home)
    if given:
        return given
    home = work / f"base-{kind}"
    if home.exists():
        return home
    return cli_import(home, name, work, args.eval_dir)


def run_set(name: str, designs: list[str], args, work: Path) -> dict[str, list[dict]]:
    base = base_home(name, args, work)
    procs = {}
    for design in designs:
        home = work / f"{name}-{design}"
        shutil.rmtree(home, ignore_errors=True)
        shutil.copytree(base, home, ignore=shutil.ignore_patterns("cache", "run"))
        out = work / f"{name}-{design}.jsonl"
        cmd = [
            sys.executable, str(REPO / "bench" / "_funnel_worker.py"),
            "--code", str(code_of(design, args, work)), "--home", str(home),
            "--questions", *map(str, SETS[name]), "--data", str(REPO / "data"), "--out", str(out),
        ]  # fmt: skip
        env = {**_env(), "ASSISTANT_LLM_N_THREADS": "1", **VARIANTS.get(design, {})}
        if design in MODELS:
            env["ASSISTANT_LLM_MODEL_PATH"] = str(model_path(MODELS[design]))
        procs[design] = (subprocess.Popen(cmd, env=env, cwd=work), out)
    rows = {}
    for design, (proc, out) in procs.items():
        if proc.wait() != 0:
            raise SystemExit(f"{name}/{design} failed (exit {proc.returncode})")
        rows[design] = [json.loads(x) for x in out.read_text().splitlines() if x.strip()]
    return rows


def saved_rows(name: str, designs: list[str], work: Path) -> dict[str, list[dict]]:
    """The rows of `name` a run wrote to `work`, for the questions every design answered."""
    rows = {}
    for d in designs:
        path = work / f"{name}-{d}.jsonl"
        text = path.read_text() if path.exists() else ""
        rows[d] = [json.loads(line) for line in text.splitlines() if line.strip()]
    both = set.intersection(*({r["id"] for r in rs} for rs in rows.values()))
    return {d: [r for r in rs if r["id"] in both] for d, rs in rows.items()}


def model_path(name: str) -> Path:
    from assistant.rerank.models import resolve_model

    return resolve_model(name, Path.home() / ".cache" / "assistant" / "models")


def _env() -> dict[str, str]:
    import os

    return {**os.environ, "HF_HUB_OFFLINE": "1"}


def wilson(k: int, n: int) -> tuple[float, float]:
    if not n:
        return (math.nan, math.nan)
    z, p = 1.96, k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (round(centre - half, 3), round(centre + half, 3))


def rate(rows: list[dict], test) -> dict:
    k = sum(1 for r in rows if test(r))
    return {"rate": k / len(rows) if rows else math.nan, "k": k, "n": len(rows),
            "ci95": wilson(k, len(rows))}  # fmt: skip


def summary(rows: list[dict]) -> dict:
    factual = [r for r in rows if r["answerable"] and r["facts_top3"] is not None]
    answerable = [r for r in rows if r["answerable"]]
    unanswerable = [r for r in rows if not r["answerable"]]
    shown_right = [r for r in factual if r["facts_shown"]]
    out = {stage: rate(factual, lambda r, s=stage: bool(r[s])) for stage in STAGES}
    out["facts_draft"] = rate(factual, lambda r: bool(r["facts_draft"]))
    top3 = out["facts_top3"]["k"] or math.nan
    out["evidence_vs_top3"] = out["facts_evidence"]["k"] / top3
    out["shown_vs_top3"] = out["facts_shown"]["k"] / top3
    out["wrong_unmarked"] = rate(rows, _wrong_unmarked)
    out["right_marked"] = rate(shown_right, lambda r: r["marked"])
    out["not_found_unanswerable"] = rate(unanswerable, lambda r: r["not_found"])
    out["not_found_answerable"] = rate(answerable, lambda r: r["not_found"])
    said = [r for r in rows if r["not_found"]]
    out["not_found_precision"] = rate(said, lambda r: not r["answerable"])
    out["not_found_precision_lenient"] = rate(
        said, lambda r: not r["answerable"] or not r["facts_top3"]
    )
    out["lost_at"] = _lost_at(factual)
    out["quote_p50_s"] = percentile([r["quote_s"] for r in rows], 50)
    out["ttft_p50_s"] = percentile([r["ttft_s"] for r in rows], 50)
    out["total_p50_s"] = percentile([r["total_s"] for r in rows], 50)
    return out


def _wrong_unmarked(r: dict) -> bool:
    """Shown as an answer, unmarked, and not holding the facts (any answer but "not found" to
    an unanswerable question is wrong)."""
    if r["not_found"] or r["marked"]:
        return False
    return not r["answerable"] or r["facts_shown"] is False


def _lost_at(rows: list[dict]) -> dict[str, int]:
    lost = {stage: 0 for stage in (*STAGES, "kept")}
    for r in rows:
        stage = next((s for s in STAGES if not r[s]), "kept")
        lost[stage] += 1
    return lost


def main() -> None:
    args = parse_args()
    designs = args.designs.split(",")
    work_dir = args.work or Path(tempfile.mkdtemp(prefix="funnel-"))
    work_dir.mkdir(parents=True, exist_ok=True)
    results, table = {}, []
    for name in args.sets.split(","):
        log(f"set {name}: {', '.join(designs)}")
        rows = (
            saved_rows(name, designs, work_dir)
            if args.summarize
            else run_set(name, designs, args, work_dir)
        )
        if not all(rows.values()):
            continue
        results[name] = {d: {"summary": summary(rows[d]), "rows": rows[d]} for d in designs}
        for d in designs:
            s = results[name][d]["summary"]
            table.append([
                f"{name}/{d}", s["source_top3"]["rate"], s["facts_top3"]["rate"],
                s["facts_evidence"]["rate"], s["facts_draft"]["rate"], s["facts_shown"]["rate"],
                s["evidence_vs_top3"], s["shown_vs_top3"], s["wrong_unmarked"]["rate"],
                s["right_marked"]["rate"], s["not_found_unanswerable"]["rate"],
                s["not_found_answerable"]["rate"], s["quote_p50_s"], s["ttft_p50_s"],
            ])  # fmt: skip
    print_table(
        "the funnel: share of questions whose facts each stage holds",
        ["set/design", "mail top3", "top3 text", "evidence", "draft", "shown", "ev/top3",
         "shown/top3", "wrong unmarked", "right marked", "NF unans.", "NF ans.",
         "quote p50 s", "TTFT p50 s"],
        table,
    )  # fmt: skip
    path = write_results(args.out, {"sets": results, "today": args.today}, vars(args))
    log(f"wrote {path}")


if __name__ == "__main__":
    main()
