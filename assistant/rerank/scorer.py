"""Query likelihood on the llama-cpp runtime: score(passage, question) = mean log p(question
tokens | passage prompt). With a DocKV the passage prefix is restored instead of prefilled, so
each candidate costs only the instruction and the question tokens."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from assistant.llm.runtime import LocalLLM
from assistant.rerank.doc_kv import DocKV
from assistant.rerank.prompt import QLPrompt, QLTokens


class QLScorer:
    def __init__(
        self,
        llm: LocalLLM,
        prompt: QLPrompt,
        doc_kv: DocKV | None = None,
        max_passage_tokens: int = 256,
    ) -> None:
        self.llm = llm
        self.doc_kv = doc_kv
        self.tokens = QLTokens(llm.tokenize, prompt, max_passage_tokens)

    def query_logprobs(
        self, passage: str, query: str, instruction: str | None = None, use_doc_kv: bool = True
    ) -> np.ndarray:
        """log p of each question token given the passage prompt."""
        prefix = self.tokens.prefix(passage)
        suffix, n_question = self.tokens.suffix(query, instruction)
        with self.llm.lock:
            if self.doc_kv is not None and use_doc_kv:
                self.doc_kv.load(self.llm, prefix)
            else:
                self.llm.reset()
                self.llm.eval(prefix)
            return self.llm.eval_logprobs(suffix, len(suffix) - n_question)

    def scores(
        self,
        query: str,
        passages: Sequence[str],
        use_doc_kv: bool = True,
        check: Callable[[], None] | None = None,
    ) -> np.ndarray:
        """Mean question log-prob per passage; `check()` runs before each (it may raise)."""
        out = []
        for passage in passages:
            if check is not None:
                check()
            out.append(self.query_logprobs(passage, query, use_doc_kv=use_doc_kv).mean())
        return np.array(out)

    def precompute(
        self, passages: Sequence[str], should_stop: Callable[[], bool] = lambda: False
    ) -> int:
        """Compute the document KV of passages not cached yet (idle time); returns how many."""
        if self.doc_kv is None:
            return 0
        done = 0
        for passage in passages:
            if should_stop():
                break
            prefix = self.tokens.prefix(passage)
            if not self.doc_kv.has(prefix):
                with self.llm.lock:
                    self.doc_kv.compute(self.llm, prefix)
                done += 1
        return done
