"""Query-likelihood reranking of the fused candidates (UPR): score = mean log p(question | passage).

prompt (QL prompts, token segments) · scorer + doc_kv (llama.cpp, passage KV reused per question)
· arch + forward + weights + pruned + torch_kv (torch layer-wise forward with pruning, GRATING)
· policy (which candidates to stop computing) · reranker (the off | full | pruned stage) · loader
(builds it from settings) · models (where the GGUF comes from). The benches' planning and
calibration (resident layers, WRX; the pruning threshold) live in bench/elastic.py and
bench/pruning.py.
"""
