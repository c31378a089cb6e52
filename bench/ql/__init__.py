"""The retired query-likelihood pruning stack (issue 36): code only the benches use."""
