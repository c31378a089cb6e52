"""A local, private RAG assistant for your mail and notes."""

__version__ = "0.1.0"
