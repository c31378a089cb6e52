"""The run-time chunk-KV layer: PromptCache (prompt_cache.py) prefills restoring KV-tree nodes,
saves new ones and decodes; the reuse modes and repair policy are plain values (reuse_policy.py)
that the settings validate without importing the runtime, so this file imports nothing."""
