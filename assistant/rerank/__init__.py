"""Rerankers of the fused candidates behind one interface (reranker.py: off | full | cross |
cross-pruned | auto).

prompt (QL prompts, token segments) · scorer + doc_kv (query likelihood on llama.cpp, passage KV
reused per question) · cross (a cross-encoder) · bert + weights + packed + bf16 + grating (its
layer-wise forward with pruning, GRATING) · policy (which candidates to stop computing) · probes
· selection (the one place the prompt's chunks are chosen) · selfcheck (what `auto` turns on) ·
loader (builds it from settings) · models (where the GGUF comes from). The retired torch
query-likelihood stack and the benches' planning and calibration live in bench/ (bench/ql/,
bench/studies/elastic.py, bench/studies/pruning.py).
"""
