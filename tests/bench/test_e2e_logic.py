"""The pure parts of bench/e2e.py: ROUGE-L, expected strings, the question sequence, the design
list and the acceptance check."""

from __future__ import annotations

import json

import pytest

from assistant.config import Settings
from bench.e2e_designs import DESIGNS, Design, rotated, select, skip_reason
from bench.e2e_questions import (
    Question,
    QuestionFileError,
    build_sequence,
    load_questions,
    load_repeats,
    spread,
)
from bench.e2e_report import acceptance, summarise
from bench.quality import has_expected, lcs_length, rouge_l
from tests.conftest import DATA


def test_lcs_and_rouge_l_on_known_cases():
    assert lcs_length(list("abcbdab"), list("bdcaba")) == 4
    assert lcs_length([], ["a"]) == 0
    # LCS "the cat on the mat" = 5 of 6 tokens on both sides: P = R = F = 5/6
    assert rouge_l("The cat sat on the mat.", "the cat is on the mat") == pytest.approx(5 / 6)
    assert rouge_l("Paid 4,275.00 on 5 June", "paid 4,275.00 on 5 June") == 1.0
    assert rouge_l("", "anything") == 0.0
    assert rouge_l("mat the on", "on the mat") == pytest.approx(1 / 3)  # order matters


def test_expected_strings_ignore_case_and_spacing():
    assert has_expected("It moved to Tuesday 23  June.", ["23 june"]) is True
    assert has_expected("It moved to Tuesday 23 June.", ["23 June", "9 June"]) is False
    assert has_expected("anything", []) is None


def _qs(n: int) -> list[Question]:
    return [Question(f"q{i}", f"question {i}?", f"answer {i}") for i in range(n)]


def test_spread_takes_every_nth_and_keeps_short_lists_whole():
    assert [q.id for q in spread(_qs(10), 3)] == ["q0", "q3", "q6"]
    assert len(spread(_qs(5), 24)) == 5


def test_repeats_come_gap_questions_after_their_original_or_last(tmp_path):
    base = _qs(8)
    path = tmp_path / "repeats.jsonl"
    rows = [
        {"of": "q1", "question": "q one again?", "kind": "repeat"},
        {"of": "q6", "question": "?"},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows))
    repeats = load_repeats(path, base)
    assert repeats[0].answer == "answer 1" and repeats[0].repeat_of == "q1"
    order = [q.id for q in build_sequence(base, repeats, gap=3)]
    assert order == ["q0", "q1", "q2", "q3", "q4", "q1~1", "q5", "q6", "q7", "q6~2"]
    assert [q.id for q in build_sequence(base[:2], repeats, gap=3)] == ["q0", "q1", "q1~1"]


def test_the_demo_repeats_name_demo_questions():
    pool = [
        q for name in ("mail_qa", "notes_qa") for q in load_questions(DATA / "qa" / f"{name}.jsonl")
    ]
    repeats = load_repeats(DATA / "qa" / "repeats.jsonl", pool)
    sequence = build_sequence(spread(pool, 24), repeats)
    assert len(sequence) == 24 + len(repeats)  # every repeat's original is in the default subsample


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "not JSON"),
        ('{"question": "q?"}', "`answer` must be a non-empty string"),
        ('{"question": "q?", "answer": "a", "must_contain": "x"}', "list of strings"),
        ("[1, 2]", "expected a JSON object"),
    ],
)
def test_a_bad_question_file_names_the_file_and_line(tmp_path, line, message):
    path = tmp_path / "qs.jsonl"
    path.write_text('{"question": "fine?", "answer": "yes"}\n' + line + "\n")
    with pytest.raises(QuestionFileError, match=rf"qs\.jsonl:2: .*{message}"):
        load_questions(path)


def test_design_selection_skips_and_rotation():
    assert [d.name for d in select("full, naive")] == ["naive", "full"]
    with pytest.raises(ValueError, match="unknown design"):
        select("naive,bogus")
    pruned = next(d for d in DESIGNS if d.rerank)
    assert "not on main" in skip_reason(pruned, object())  # a Settings without the rerank switch
    assert "retired to bench/ql" in skip_reason(pruned, Settings())
    assert skip_reason(Design("plain", "x"), object()) is None
    assert rotated([1, 2, 3], 4) == [2, 3, 1] and rotated([], 2) == []


def _row(total: float, qa_hit: bool = False, reused: int = 0, **extra) -> dict:
    return {
        "total": total,
        "ttft": total / 2,
        "qa_hit": qa_hit,
        "kv_chunks": 0 if qa_hit else 3,
        "kv_chunks_reused": reused,
        "kv_reused_tokens": 100 * reused,
        "prompt_tokens": 0 if qa_hit else 400,
        "rouge_l": extra.get("rouge", 0.5),
        "expected": extra.get("expected", True),
    }


def test_summary_counts_kv_hits_over_model_answers_only():
    s = summarise([_row(1.0, reused=3), _row(3.0, reused=0), _row(0.1, qa_hit=True)])
    assert s["qa_hit_rate"] == pytest.approx(1 / 3)
    assert s["kv_hit_rate"] == pytest.approx(3 / 6)
    assert s["mean_s"] == pytest.approx(4.1 / 3) and s["p50_s"] == 1.0


def test_acceptance_needs_speed_against_both_references_and_quality():
    def design(mean: float, rouge: float = 0.5, expected: float = 0.5) -> dict:
        return {"mean_s": mean, "quality": {"rouge_l": rouge, "expected_present": expected}}

    designs = {"naive": design(10), "ragcache": design(6), "meancache": design(9)}
    singles = ("ragcache", "meancache", "sleeptime")
    ok = acceptance(designs | {"full": design(4.4, rouge=0.49)}, "full", singles)
    assert ok["holds"] and ok["best_single"] == "ragcache"
    slow = acceptance(designs | {"full": design(4.6)}, "full", singles)  # 0.77× ragcache
    assert not slow["holds"] and not slow["checks"]["latency_vs_best_single"]
    worse = acceptance(designs | {"full": design(3, expected=0.48)}, "full", singles)
    assert not worse["checks"]["quality"] and worse["checks"]["latency_vs_naive"]
    assert acceptance(designs, "full", singles)["holds"] is None
    alone = acceptance({"naive": design(10), "full": design(4)}, "full", singles)
    assert alone["checks"]["latency_vs_best_single"] is None  # not run: not checked, not failed
    assert alone["holds"] and alone["unchecked"] == ["latency_vs_best_single"]
