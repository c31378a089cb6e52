"""Finding and highlighting an evidence sentence in a source's passage (no app needed)."""

from __future__ import annotations

from rich.text import Text

from assistant.tui.widgets.sources import HIGHLIGHT, PASSAGE, excerpt, find


def marked(text: Text) -> list[str]:
    return [text.plain[s.start : s.end] for s in text.spans if s.style == HIGHLIGHT]


def test_find_ignores_how_whitespace_runs_and_case():
    passage = "Hi Maya, the demolition starts Monday 2 March. Bram"
    start, end = find("Demolition  starts\nMonday 2 March.", passage)
    assert passage[start:end] == "demolition starts Monday 2 March."


def test_find_is_none_for_a_sentence_not_in_the_passage_or_an_empty_one():
    assert find("The tiles arrive on 9 March.", "Demolition starts Monday.") is None
    assert find("  ", "Demolition starts Monday.") is None


def test_characters_special_to_patterns_are_matched_as_text():
    text = excerpt("Size (30x60) [grey] * 2 + tax?", ["(30x60) [grey] * 2 + tax?"])
    assert marked(text) == ["(30x60) [grey] * 2 + tax?"]


def test_evidence_beyond_the_cut_starts_the_excerpt_near_it():
    filler = "Some words before the point. " * 10
    passage = f"{filler}The plumber comes on 20 March. More after it."
    text = excerpt(passage, ["The plumber comes on 20 March."])
    assert text.plain.startswith("…") and len(filler) > PASSAGE
    assert marked(text) == ["The plumber comes on 20 March."]


def test_no_evidence_found_means_no_highlight_and_the_usual_cut():
    passage = "word " * 60
    text = excerpt(passage, ["Not in there at all."])
    assert marked(text) == [] and text.plain == passage.strip()[:PASSAGE] + "…"


def test_evidence_early_and_beyond_the_cut_are_both_shown_highlighted():
    filler = "Some words before the point. " * 10
    passage = f"The deposit is EUR 4,275. {filler}The plumber comes on 20 March. The end."
    sentences = ["The plumber comes on 20 March.", "The deposit is EUR 4,275."]
    text = excerpt(passage, sentences)
    assert marked(text) == ["The deposit is EUR 4,275.", "The plumber comes on 20 March."]
    assert text.plain.startswith("The deposit is EUR 4,275. … Some words before the point. The")
    assert text.plain.endswith("20 March. …")


def test_the_excerpt_before_late_evidence_starts_at_a_word():
    passage = "x" * 200 + " Tail words then The plumber comes on 20 March."
    text = excerpt(passage, ["The plumber comes on 20 March."])
    assert text.plain == "…Tail words then The plumber comes on 20 March."
