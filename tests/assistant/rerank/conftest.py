from __future__ import annotations

import pytest
import torch


@pytest.fixture(autouse=True)
def one_torch_thread():
    """Tiny tensors: more threads only spin against each other on a shared CPU (10x slower)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def make_tiny_cross_encoder(folder, layers: int = 4, seed: int = 0):
    """A randomly initialised BERT cross-encoder (one logit), MiniLM's tokenizer, small
    dimensions: saved the way ms-marco-MiniLM ships (config.json, model.safetensors, tokenizer).
    For mechanics (loading, layer-wise forward, pruning), where quality is not the point."""
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    from assistant.knowledge.embeddings import default_embedding_model

    tokenizer = AutoTokenizer.from_pretrained(str(default_embedding_model()))
    config = BertConfig(
        vocab_size=tokenizer.vocab_size, hidden_size=64, num_hidden_layers=layers,
        num_attention_heads=4, intermediate_size=128, num_labels=1,
    )  # fmt: skip
    torch.manual_seed(seed)
    model = BertForSequenceClassification(config).eval()
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="session")
def tiny_cross(tmp_path_factory):
    return make_tiny_cross_encoder(tmp_path_factory.mktemp("tiny-cross") / "model")
