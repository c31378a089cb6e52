"""The llama-cpp-python runtime: the only package that imports llama_cpp."""

from assistant.llm.runtime import LLMError, LocalLLM, default_llm_model, make_llm

__all__ = ["LLMError", "LocalLLM", "default_llm_model", "make_llm"]
