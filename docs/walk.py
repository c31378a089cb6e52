"""One question's walk through the modules (issue 36: "one question's path visits each module
once where it can"), measured: which modules of assistant/ and cache/ the answer path passes
through, in what order, how often control goes back and forth, and where a lower layer calls back
into a higher one.

    python docs/walk.py [--question Q] [--warm Q] [--home HOME] [--no-model | --hit] [--out PATH]

A demo home is imported into a temporary folder (data/mail/demo.mbox and data/notes, by the CLI,
as `assistant --home DIR import` does), unless --home names an imported one (copied, so that the
walk does not change it). The services are opened and warmed by asking a first question (--warm,
untraced: models load, lazy imports run); then the question (--question, by default the first of
data/qa/mail_qa.jsonl, the demo set of bench/funnel.py) is asked the way `assistant ask` does
(commands.cmd_ask, its output captured), traced with sys.setprofile. `--no-model`: `assistant ask`
has no mode without the model, so this traces only the model-free part the QA bank's check runs
(Answerer.quote: filters, retrieval, rerank, the quoted lines). `--hit`: the question is asked
once more untraced first, so that the traced run is served by the QA bank (the answer layer
checks the candidates the bank offers: assistant/answer/qa_memory.lookup_hit).

Prints a table; writes bench/results/walk.json (walk_hit.json with --hit). Stdlib and the project
only."""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from contextlib import redirect_stdout
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
PACKAGES = ("assistant", "cache")
LOWER = ("cache/", "assistant/llm/", "assistant/knowledge/", "assistant/ingest/")
HIGHER_DIRS = ("assistant/answer/", "assistant/mail/", "assistant/precompute/", "assistant/tui/")

DEFINITIONS = """\
stay: a maximal run of consecutive profile events (calls and returns, generator resumptions and
  yields included) in which the innermost project frame (a function of a file under assistant/ or
  cache/) is in the same module; calls into other code (stdlib, numpy, llama_cpp) stay in the
  caller's module, and time outside every project frame is skipped.
hand-off: one stay followed by the next, counted per ordered pair (from -> to); 'call' when
  control went in by a call (or a generator resumed), 'return' when it came back (or yielded).
collapsed stays: stays counted with each run that only alternates between the same two modules
  (A B A B A) counted as 2.
climb back: a call (or generator resumption) from a module of a lower layer (cache/*,
  assistant/llm/*, assistant/knowledge/*, assistant/ingest/*) into one of a higher layer
  (assistant/answer/*, assistant/*.py at top level, assistant/mail/*, precompute, tui): a callback
  against the direction of imports. assistant/rerank/* is in neither.
re-entry: a module entered by a call (or resumption) in more than one stay, with the modules it
  was entered from."""


def layer(module: str) -> str:
    """'lower', 'higher' or 'middle' (rerank), for the climb-back rule."""
    if module.startswith(LOWER):
        return "lower"
    if module.startswith(HIGHER_DIRS) or module.count("/") == 1 and module.startswith("assistant/"):
        return "higher"
    return "middle"


class Walk:
    """The profile function: the innermost project frame's (module, function) after each event,
    kept as a stack parallel to the interpreter's."""

    def __init__(self, root: Path) -> None:
        self.roots = tuple(str(root / p) + os.sep for p in PACKAGES)
        self.prefix = len(str(root)) + 1
        self.names: dict[object, str | None] = {}
        self.stack: list[tuple[str, str] | None] = []
        self.stays: list[list] = []  # [module, events, entered_by, from (module, function)]
        self.calls: Counter = Counter()  # (module, function) called
        self.climbs: Counter = Counter()  # ((from module, function), (to module, function))
        self.crossings: Counter = Counter()  # the same, for every call into another module
        self.events = 0

    def module(self, code) -> str | None:
        name = self.names.get(code, False)
        if name is False:
            path = code.co_filename
            name = path[self.prefix :] if path.startswith(self.roots) else None
            self.names[code] = name
        return name

    def __call__(self, frame, event: str, arg) -> None:
        if event == "call":
            outer = self.stack[-1] if self.stack else None
            mod = self.module(frame.f_code)
            inner = (mod, frame.f_code.co_qualname) if mod else outer
            self.stack.append(inner)
            if mod:
                self.calls[inner] += 1
                if outer and outer[0] != mod:
                    self.crossings[(outer, inner)] += 1
                if outer and layer(outer[0]) == "lower" and layer(mod) == "higher":
                    self.climbs[(outer, inner)] += 1
            self._at(inner, "call", outer)
        elif event == "return" and self.stack:
            self.stack.pop()
            self._at(self.stack[-1] if self.stack else None, "return", None)

    def _at(self, inner: tuple[str, str] | None, how: str, outer) -> None:
        if inner is None:
            return
        self.events += 1
        if self.stays and self.stays[-1][0] == inner[0]:
            self.stays[-1][1] += 1
            return
        prev = self.stays[-1][0] if self.stays else None
        self.stays.append([inner[0], 1, how, prev])


def collapsed(modules: list[str]) -> int:
    """Stays, with each run that alternates between the same two modules counted as 2."""
    count, i = 0, 0
    while i < len(modules):
        j = i + 2
        while j < len(modules) and modules[j] == modules[j - 2] and modules[i] != modules[i + 1]:
            j += 1
        span = min(j, len(modules)) - i
        count += min(span, 2)
        i += span
    return count


def summary(walk: Walk) -> dict:
    modules = [s[0] for s in walk.stays]
    pairs: dict[tuple[str, str], Counter] = defaultdict(Counter)
    entries: dict[str, Counter] = defaultdict(Counter)
    for stay in walk.stays[1:]:
        pairs[(stay[3], stay[0])][stay[2]] += 1
        if stay[2] == "call":
            entries[stay[0]][stay[3]] += 1
    top = sorted(pairs.items(), key=lambda kv: -sum(kv[1].values()))[:10]
    via: dict[tuple[str, str], Counter] = defaultdict(Counter)
    for (a, b), n in walk.crossings.items():
        via[(a[0], b[0])][f"{a[1]} -> {b[1]}"] += n
    per_module = Counter()
    for (mod, _), n in walk.calls.items():
        per_module[mod] += n
    return {
        "modules": sorted(set(modules), key=modules.index),
        "module_count": len(set(modules)),
        "calls_per_module": dict(per_module.most_common()),
        "stays": len(modules),
        "stays_collapsed": collapsed(modules),
        "handoffs_distinct": len(pairs),
        "handoffs_total": len(modules) - 1,
        "handoffs_top": [
            {
                "from": a,
                "to": b,
                "count": sum(c.values()),
                "calls": c["call"],
                "returns": c["return"],
                "via": dict(via[(a, b)].most_common(4)),
            }
            for (a, b), c in top
        ],  # fmt: skip
        "climbs": [
            {"from": f"{a[0]}:{a[1]}", "to": f"{b[0]}:{b[1]}", "count": n}
            for (a, b), n in walk.climbs.most_common()
        ],
        "reentries": {
            mod: {"entered": sum(c.values()), "from": dict(c.most_common())}
            for mod, c in sorted(entries.items(), key=lambda kv: -sum(kv[1].values()))
            if sum(c.values()) > 1
        },
        "first_stays": [f"{s[0]} ({s[2]})" for s in walk.stays[:40]],
    }


def import_demo(home: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    cmd = [sys.executable, "-m", "assistant.cli", "--home", str(home), "import",
           str(ROOT / "data/mail/demo.mbox"), str(ROOT / "data/notes")]  # fmt: skip
    subprocess.run(cmd, check=True, capture_output=True, cwd=ROOT, env=env)


def open_ctx(home: Path):
    """The services, as run_command opens them for `assistant ask`."""
    from assistant.cli.commands import _settings_noting_old_keys, apply_switches
    from assistant.home import open_home
    from assistant.services import open_services

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    h = open_home(home)
    settings = _settings_noting_old_keys(h.config_file)
    apply_switches(settings, build_ask_args(""))
    return open_services(h, settings)


def ask(ctx, question: str, no_model: bool, walk: Walk | None = None) -> dict:
    """One question as `assistant ask` asks it (or its model-free part), traced when `walk`."""
    from assistant.answer.shape import quote_found
    from assistant.cli.commands import cmd_ask
    from assistant.events import AnswerDone

    answerer = ctx.answerer()
    done: dict = {}
    original = answerer.answer

    def answer(*a, **k):  # the AnswerDone of the run, seen on its way to cmd_ask
        for event in original(*a, **k):
            if isinstance(event, AnswerDone):
                done.update(band=event.band, sentence=event.sentence, quote=event.span)
                done.update(drafted=event.drafted, unsupported=event.unsupported)
                done.update(qa_hit=event.qa_hit)
            yield event

    def run() -> None:
        if no_model:
            vector = answerer.embedder.embed_batch([question])[0]
            found = answerer.quote(question, vector)[1]
            q = quote_found(found)
            done.update(band=q.band, quote=q.span)
        else:
            with redirect_stdout(io.StringIO()):
                cmd_ask(ctx, args)

    args = build_ask_args(question)
    answerer.answer = answer
    try:
        started = time.perf_counter()
        if walk is not None:
            sys.setprofile(walk)
        try:
            run()
        finally:
            sys.setprofile(None)
        done["seconds"] = round(time.perf_counter() - started, 2)
    finally:
        del answerer.answer
    return done


def build_ask_args(question: str):
    from assistant.cli.cli import build_parser

    return build_parser().parse_args(["ask", question])


def first_question(path: Path, index: int) -> str:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    return rows[index]["question"]


def print_table(result: dict) -> None:
    w = result["walk"]
    print(DEFINITIONS)
    print()
    print(f"question: {result['question']}  (model: {result['model']}, commit {result['commit']})")
    print(f"warm-up (untraced): {result['warm']}")
    if result["hit"]:
        print("the question was asked once untraced before: the traced run is a QA-bank hit")
    a = result["answer"]
    print(f"answer: band={a.get('band')} quote={a.get('quote')!r} qa_hit={a.get('qa_hit')}")
    print(f"traced events: {w['events']}  modules visited: {w['module_count']}  stays: "
          f"{w['stays']} raw, {w['stays_collapsed']} collapsed  hand-offs: {w['handoffs_total']} "
          f"({w['handoffs_distinct']} distinct ordered pairs)  climbs back: "
          f"{sum(c['count'] for c in w['climbs'])} ({len(w['climbs'])} distinct)")  # fmt: skip
    print("\nmodules (in order of first visit)             project calls")
    for mod in w["modules"]:
        print(f"  {mod:<45} {w['calls_per_module'].get(mod, 0):>8}")
    print(f"\n{'top hand-offs':<72} count call/ret")
    for h in w["handoffs_top"]:
        pair = f"{h['from']} -> {h['to']}"
        print(f"  {pair:<70} {h['count']:>5} {h['calls']}/{h['returns']}")
        for calls, n in h["via"].items():
            print(f"      {calls}  x{n}")
    print("\nclimbs back (lower layer calls into a higher one)")
    for c in w["climbs"]:
        print(f"  {c['from']} -> {c['to']}  x{c['count']}")
    if not w["climbs"]:
        print("  none")
    print("\nre-entered modules (entered by call in more than one stay): from where")
    for mod, r in w["reentries"].items():
        froms = ", ".join(f"{m} x{n}" for m, n in r["from"].items())
        print(f"  {mod} x{r['entered']}: {froms}")


def parse_args() -> argparse.Namespace:
    qa = ROOT / "data/qa/mail_qa.jsonl"
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--question", default=first_question(qa, 0))
    parser.add_argument("--warm", default=first_question(qa, 1), help="the untraced question")
    parser.add_argument("--home", type=Path, help="an imported home to copy (default: the demo)")
    modes = parser.add_mutually_exclusive_group()
    modes.add_argument("--no-model", action="store_true", help="only the model-free part")
    modes.add_argument("--hit", action="store_true", help="trace the question asked again")
    parser.add_argument("--out", type=Path, help="default bench/results/walk[_hit].json")
    args = parser.parse_args()
    name = "walk_hit.json" if args.hit else "walk.json"
    args.out = args.out or ROOT / "bench/results" / name
    return args


def main() -> int:
    args = parse_args()
    with tempfile.TemporaryDirectory(prefix="walk-") as tmp:
        home = Path(tmp) / "home"
        if args.home:
            shutil.copytree(args.home, home)
        else:
            import_demo(home)
        ctx = open_ctx(home)
        warm = ask(ctx, args.warm, args.no_model)
        first = ask(ctx, args.question, args.no_model) if args.hit else None  # the QA bank keeps it
        walk = Walk(ROOT)
        answer = ask(ctx, args.question, args.no_model, walk)
    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                            cwd=ROOT).stdout.strip()  # fmt: skip
    result = {
        "question": args.question,
        "warm": args.warm,
        "model": not args.no_model,
        "hit": args.hit,
        "commit": commit,
        "answer": answer,
        "warm_answer": warm,
        "first_answer": first,
        "definitions": DEFINITIONS,
        "walk": {"events": walk.events, **summary(walk)},
    }
    print_table(result)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
