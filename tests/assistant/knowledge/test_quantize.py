"""The int8 encoder's quantisation steps on a small graph: a GELU between two dense layers."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from assistant.knowledge import quantize as q  # noqa: E402

K, HIDDEN = 64, 256


def ffn(seed: int = 0):
    """x → MatMul(w1) → Gelu → MatMul(w2): the first feeds a GELU, the second reads one."""
    rng = np.random.default_rng(seed)
    w1 = rng.standard_normal((K, HIDDEN)).astype(np.float32) / 8
    w2 = rng.standard_normal((HIDDEN, K)).astype(np.float32) / 16
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h"], name="up"),
        helper.make_node("Gelu", ["h"], ["g"], name="gelu", domain="com.microsoft"),
        helper.make_node("MatMul", ["g", "w2"], ["y"], name="down"),
    ]
    graph = helper.make_graph(
        nodes,
        "ffn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["t", K])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["t", K])],
        [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(w2, "w2")],
    )
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
    return helper.make_model(graph, opset_imports=opsets)


def inputs(seed: int = 1) -> np.ndarray:
    x = np.random.default_rng(seed).standard_normal((32, K)).astype(np.float32)
    x[:, 3] *= 40  # an outlying channel, as LayerNorm outputs have
    return x


def run(model, x: np.ndarray) -> np.ndarray:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {"x": x})[0]


def test_targets_smooth_what_feeds_a_gelu_and_block_what_reads_one():
    smoothed, blockwise = q.targets(ffn())
    assert [n.name for n in smoothed] == ["up"]
    assert [n.name for n in blockwise] == ["down"]


def test_smoothing_leaves_the_float_product_unchanged():
    model, x = ffn(), inputs()
    before = run(model, x)
    maxima = {"x": np.abs(x).max(0)}
    q.smooth(model, q.targets(model)[0], maxima, q.ALPHA)
    assert [n.op_type for n in model.graph.node][:2] == ["Mul", "MatMul"]
    np.testing.assert_allclose(run(model, x), before, rtol=1e-4, atol=1e-4)


def test_blocks_of_8_bits_stay_close_to_the_float_product():
    model, x = ffn(), inputs()
    before = run(model, x)
    q.to_blocks(model, q.targets(model)[1], q.BLOCK)
    assert [n.op_type for n in model.graph.node] == ["MatMul", "Gelu", "MatMulNBits"]
    assert {i.name for i in model.graph.initializer} == {"w1", "w2_Q8", "w2_scales"}
    after = run(model, x)
    norms = np.linalg.norm(after, axis=1) * np.linalg.norm(before, axis=1)
    cosine = (after * before).sum(1) / norms
    assert cosine.min() > 0.999


def test_smoothing_makes_dynamic_int8_closer_to_float(tmp_path):
    """Per-tensor activation scales lose the small channels to the outlier; smoothing first
    keeps them."""
    x = inputs()
    before = run(ffn(), x)

    def error(smoothed: bool) -> float:
        model = ffn()
        if smoothed:
            q.smooth(model, q.targets(model)[0], {"x": np.abs(x).max(0)}, q.ALPHA)
        onnx.save(model, str(tmp_path / "staged.onnx"))
        q.dynamic_int8(tmp_path / "staged.onnx", tmp_path / "int8.onnx")
        return float(np.abs(run(onnx.load(str(tmp_path / "int8.onnx")), x) - before).mean())

    assert error(smoothed=True) < 0.7 * error(smoothed=False)


def test_the_calibration_text_ships_and_is_not_empty():
    texts = q.calibration_texts()
    assert len(texts) >= 64 and all(len(t.split()) >= 5 for t in texts)
