"""The hierarchical cache library (PerCache): QA bank, chunk KV tree, blob store.

It never imports `assistant`; it sees the LLM and the embedder through small Protocols.
"""
