"""The llama-cpp-python runtime: the only package that imports llama_cpp."""

from assistant.llm.model_file import LLMError, default_llm_model
from assistant.llm.runtime import LocalLLM, make_llm

__all__ = ["LLMError", "LocalLLM", "default_llm_model", "make_llm"]
