"""The nightly self-check behind `rerank = "auto"`: on the user's own mail, does a reranker put
the answering chunk in the prompt more often than the fused order does?

Probes are the precompute's predicted questions whose source chunk is known (a detail question
is written from one chunk). For each probe and each mode (fused = "off", and every reranking
mode the configuration can run) the check records whether the source is among the top 3 chosen
chunks (source@3). A mode turns on only when it beats fused by a margin that is not chance: in
the paired comparison, its wins (source@3 where fused misses) against its losses (the reverse)
pass a one-sided exact sign test at 5% (McNemar's test for paired hits). A reranker costs every
question time and loses on mail it does not suit; a difference the sign test cannot tell from a
coin stays off. Of the modes that pass, the one with the most net wins is on.

A win is also priced: a reranker runs before every answer, so a mode whose CPU seconds per
question exceed `max_seconds` (measured on its first SPEED_PROBES probes, on this machine) is
"too slow" and is neither run further nor turned on, however well it ranks; it is stopped as
soon as those probes have cost SPEED_PROBES × `max_seconds`, so measuring costs no more. Query
likelihood with SmolLM2 is far over that bar on a laptop, so `auto` keeps fused unless a fast
reranker wins, and the check costs a few probes, not a full QL pass over every probe
(bench/results/rerank_auto.json, rerank_auto_priced.json).

One JSON file in the home's cache dir holds the probes and the last result; this class is its
only reader and writer.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path

TOP = 3  # the prompt's chunks (answer.context_chunks' default)
# compared by the check: pruned QL is not (its ranking forms only in the last layers, so it
# saves nothing over full QL: bench/results/rerank_quality.json, layer_agreement)
AUTO_MODES = ("full", "cross", "cross-pruned")
ALPHA = 0.05
MAX_PROBES = 1000
SPEED_PROBES = 3  # probes a mode's cost is measured on before it runs on the rest
# (question, k, mode, check) → chunk ids, best first; `check` is called between candidates (or
# layers) and may raise to stop the selection
Selector = Callable[[str, int, str, Callable[[], None]], list[int]]


class TooSlow(Exception):
    """A mode spent its measuring budget before its first SPEED_PROBES probes were done."""


@dataclass
class ModeResult:
    source_at_3: float
    wins: int  # source@3 where fused missed it
    losses: int  # fused had it, this mode did not
    p_value: float
    cpu_seconds: float
    too_slow: bool = False  # over max_seconds a question: stopped after SPEED_PROBES


@dataclass
class CheckResult:
    checked_at: str
    questions: int
    fused: float  # source@3 of the fused order
    fused_cpu_seconds: float
    modes: dict[str, ModeResult] = field(default_factory=dict)
    chosen: str = "off"
    max_seconds: float = math.inf  # the CPU seconds a question a mode may cost

    def summary(self) -> str:
        parts = [f"fused {self.fused:.2f}"] + [
            f"{m} too slow (> {self.max_seconds:g} CPU-s a question)"
            if r.too_slow
            else f"{m} {r.source_at_3:.2f} (+{r.wins}/−{r.losses}, p={r.p_value:.2f})"
            for m, r in self.modes.items()
        ]
        cpu = self.fused_cpu_seconds + sum(r.cpu_seconds for r in self.modes.values())
        return (
            f"{self.checked_at[:16]}: source@3 on {self.questions} predicted questions: "
            f"{', '.join(parts)}; on: {self.chosen}; {cpu:.0f} CPU-s"
        )


def sign_test(wins: int, losses: int) -> float:
    """One-sided exact p-value of at least `wins` of wins + losses under a fair coin."""
    n = wins + losses
    if n == 0:
        return 1.0
    return sum(math.comb(n, i) for i in range(wins, n + 1)) / 2**n


def run_check(
    select: Selector,
    probes: Sequence[tuple[str, int]],
    modes: Sequence[str],
    max_seconds: float = math.inf,
    clock: Callable[[], float] = time.process_time,
) -> CheckResult:
    """source@3 of fused and of each mode on `probes` (question, source chunk id), and the mode
    the rules above turn on ("off" when none). `clock` counts the CPU seconds."""
    start = clock()
    fused = _hits(select, probes, "off", _no_check, [])
    fused_cpu = clock() - start
    result = CheckResult(_now(), len(probes), _mean(fused), fused_cpu, max_seconds=max_seconds)
    for mode in modes:
        result.modes[mode] = _run_mode(select, probes, fused, mode, max_seconds, clock)
    passing = {
        m: r.wins - r.losses
        for m, r in result.modes.items()
        if r.p_value < ALPHA and not r.too_slow
    }
    if passing:
        result.chosen = max(passing, key=lambda m: (passing[m], -list(modes).index(m)))
    return result


def _run_mode(
    select: Selector, probes, fused: list[bool], mode: str, max_seconds: float, clock
) -> ModeResult:
    """One mode on the first SPEED_PROBES probes, then, if it is fast enough, on the rest."""
    budget = max_seconds * min(SPEED_PROBES, len(probes))
    start = clock()

    def within_budget() -> None:
        if clock() - start > budget:
            raise TooSlow

    hits: list[bool] = []
    try:
        _hits(select, probes[:SPEED_PROBES], mode, within_budget, hits)
        too_slow = clock() - start > budget
    except TooSlow:
        too_slow = True
    if not too_slow:
        _hits(select, probes[SPEED_PROBES:], mode, _no_check, hits)
    pairs = list(zip(hits, fused, strict=False))
    wins = sum(h and not f for h, f in pairs)
    losses = sum(f and not h for h, f in pairs)
    p_value = 1.0 if too_slow else sign_test(wins, losses)
    return ModeResult(_mean(hits), wins, losses, p_value, clock() - start, too_slow)


def _hits(select: Selector, probes, mode: str, check, hits: list[bool]) -> list[bool]:
    """source@3 of each probe, appended to `hits` as it is known."""
    for question, source in probes:
        hits.append(source in select(question, TOP, mode, check)[:TOP])
    return hits


def _no_check() -> None:
    return None


def _mean(values: Sequence[bool]) -> float:
    return sum(values) / len(values) if values else 0.0


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class RerankCheck:
    """The probes and the last result, in <home>/cache/rerank_check.json."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._cached: tuple[float, dict] | None = None

    def _read(self) -> dict:
        try:
            mtime = self.path.stat().st_mtime
        except FileNotFoundError:
            return {"probes": [], "result": None}
        if self._cached is None or self._cached[0] != mtime:
            try:
                data = json.loads(self.path.read_text(encoding="utf-8"))
            except (json.JSONDecodeError, UnicodeDecodeError):
                data = {"probes": [], "result": None}  # rewritten whole on the next save
            self._cached = (mtime, data)
        return self._cached[1]

    def _write(self, data: dict) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
        tmp.replace(self.path)
        self._cached = None

    def add_probes(self, questions: Sequence[str], chunk_id: int) -> None:
        """Predicted questions written from chunk `chunk_id` (the newest MAX_PROBES are kept)."""
        if not questions:
            return
        data = self._read()
        probes = data.get("probes", []) + [[q, int(chunk_id)] for q in questions]
        self._write(data | {"probes": probes[-MAX_PROBES:]})

    def probes(self, most: int) -> list[tuple[str, int]]:
        return [(q, int(c)) for q, c in self._read().get("probes", [])[-most:]]

    def result(self) -> CheckResult | None:
        raw = dict(self._read().get("result") or {})
        if not raw:
            return None
        modes = {m: ModeResult(**r) for m, r in raw.pop("modes", {}).items()}
        return CheckResult(**raw, modes=modes)

    def save(self, result: CheckResult, probes_seen: int) -> None:
        data = self._read()
        self._write(data | {"result": asdict(result), "probes_seen": probes_seen})

    def due(self, min_questions: int, hours: float = 20.0) -> bool:
        """Enough probes, and no check in `hours` (nightly) unless the probes grew by half."""
        data = self._read()
        n = len(data.get("probes", []))
        if n < min_questions:
            return False
        result = self.result()
        if result is None:
            return True
        age = (datetime.now(UTC) - datetime.fromisoformat(result.checked_at)).total_seconds()
        return age >= hours * 3600 or n >= 1.5 * data.get("probes_seen", n)

    def chosen(self, available: Sequence[str]) -> str:
        """What the last check turned on, if this configuration can still run it."""
        result = self.result()
        return result.chosen if result is not None and result.chosen in available else "off"


def status(setting: str, current: str, check: RerankCheck) -> dict:
    """What `stats` and the cache screen show: the setting, what is on, the last check."""
    result = check.result()
    return {
        "setting": setting,
        "on": current,
        "probes": len(check.probes(MAX_PROBES)),
        "check": asdict(result) if result else None,
        "summary": result.summary() if result else "no check yet",
    }
