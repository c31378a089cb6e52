"""The int8 encoder, made once and offline from the float export (encoder.py).

Dynamic int8 quantises each product's activations with one scale per tensor, so a few outlying
input channels cost the rest their resolution. The recipe (bench/studies/int8_recipes.py chose it
by the cosine of its vectors to float's on a neutral sample; figures in
bench/results/int8_recipes.json):

- smoothing (SmoothQuant): the inputs of the attention projections and of the FFN's first dense
  layer are divided per channel by s = max|x|^ALPHA / max|w|^(1-ALPHA), the weight rows times s
  (the product is unchanged in float); max|x| comes from the model run on CALIBRATION, text that
  ships with the package, never the user's mail nor an eval set;
- the FFN's output dense layer (its input is the GELU's, the most sensitive) in 8-bit blocks of
  BLOCK inputs (MatMulNBits): its activations are quantised per block of each token;
- the rest, attention included, dynamic int8 with int8 weights per output channel.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

CALIBRATION = Path(__file__).with_name("calibration.txt")
ALPHA = 0.8
BLOCK = 128
_GELU = ("BiasGelu", "Gelu", "FastGelu")


def quantize(fp32: Path, out: Path, tokenizer_file: Path, max_length: int) -> None:
    """Write the int8 encoder of the float export `fp32` to `out`."""
    import onnx

    model = onnx.load(str(fp32))
    smoothed, blockwise = targets(model)
    inputs = [node.input[0] for node in smoothed]
    maxima = activation_maxima(fp32, inputs, calibration_texts(), tokenizer_file, max_length)
    smooth(model, smoothed, maxima, ALPHA)
    to_blocks(model, blockwise, BLOCK)
    staged = out.with_suffix(".staged.onnx")
    try:
        onnx.save(model, str(staged))
        dynamic_int8(staged, out)
    finally:
        staged.unlink(missing_ok=True)


def calibration_texts() -> list[str]:
    lines = CALIBRATION.read_text(encoding="utf-8").splitlines()
    return [line for line in lines if line.strip() and not line.startswith("#")]


def targets(model) -> tuple[list, list]:
    """(the nodes to smooth: Attention and the MatMuls that feed a GELU; the MatMuls that read
    a GELU's output), each with a constant weight as its second input."""
    constant = {init.name for init in model.graph.initializer}
    producer = {out: node for node in model.graph.node for out in node.output}
    consumers: dict[str, list] = {}
    for node in model.graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    smoothed, blockwise = [], []
    for node in model.graph.node:
        if len(node.input) < 2 or node.input[1] not in constant:
            continue
        source = producer.get(node.input[0])
        feeds = [c.op_type for c in consumers.get(node.output[0], [])]
        if node.op_type == "Attention" or (
            node.op_type == "MatMul" and any(f in _GELU for f in feeds)
        ):
            smoothed.append(node)
        elif node.op_type == "MatMul" and source is not None and source.op_type in _GELU:
            blockwise.append(node)
    return smoothed, blockwise


def activation_maxima(
    fp32: Path, names: list[str], texts: list[str], tokenizer_file: Path, max_length: int
) -> dict[str, np.ndarray]:
    """Per channel, the largest |value| each named tensor takes over `texts`, one at a time."""
    import onnx
    import onnxruntime as ort
    from tokenizers import Tokenizer

    model = onnx.load(str(fp32))
    model.graph.output.extend(
        onnx.helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, None) for n in names
    )
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    tokenizer = Tokenizer.from_file(str(tokenizer_file))
    tokenizer.enable_truncation(max_length)
    maxima = {n: np.zeros(0, dtype=np.float32) for n in names}
    for text in texts:
        ids = np.array([tokenizer.encode(text).ids], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
        feed["token_type_ids"] = np.zeros_like(ids)
        for name, value in zip(names, session.run(names, feed), strict=True):
            top = np.abs(value.reshape(-1, value.shape[-1])).max(0)
            maxima[name] = top if not maxima[name].size else np.maximum(maxima[name], top)
    return maxima


def smooth(model, nodes: list, maxima: dict[str, np.ndarray], alpha: float) -> None:
    """Divide each node's input by s per channel (a Mul before it), its weight rows times s."""
    from onnx import helper, numpy_helper

    weights = {init.name: init for init in model.graph.initializer}
    for node in nodes:
        weight = weights[node.input[1]]
        w = numpy_helper.to_array(weight)
        x = np.maximum(maxima[node.input[0]], 1e-5)
        s = (x**alpha / np.maximum(np.abs(w).max(1), 1e-5) ** (1 - alpha)).astype(np.float32)
        weight.CopyFrom(numpy_helper.from_array((w * s[:, None]).astype(np.float32), weight.name))
        inverse = numpy_helper.from_array((1 / s).astype(np.float32), f"{node.name}_smooth")
        model.graph.initializer.append(inverse)
        mul = helper.make_node(
            "Mul", [node.input[0], inverse.name], [f"{node.name}_smoothed"], name=inverse.name
        )
        node.input[0] = mul.output[0]
        _insert_before(model, node, mul)


def to_blocks(model, nodes: list, block: int) -> None:
    """Each MatMul to MatMulNBits: weights in 8 bits, one scale per `block` inputs of each
    output; accuracy level 4 takes the product in int8, activations quantised per block."""
    from onnx import helper, numpy_helper
    from onnxruntime.capi._pybind_state import quantize_matmul_8bits

    weights = {init.name: init for init in model.graph.initializer}
    for node in nodes:
        w = np.ascontiguousarray(numpy_helper.to_array(weights[node.input[1]]), dtype=np.float32)
        rows, cols = w.shape
        k_blocks = (rows + block - 1) // block
        w = np.pad(w, ((0, k_blocks * block - rows), (0, 0)))
        packed = np.zeros((cols, k_blocks, block), dtype=np.uint8)
        scales = np.zeros((cols, k_blocks), dtype=np.float32)
        zero = np.zeros((cols, k_blocks), dtype=np.uint8)
        quantize_matmul_8bits(packed, w, scales, zero, block, cols, rows, True)
        q = numpy_helper.from_array(packed, f"{node.input[1]}_Q8")
        scale = numpy_helper.from_array(scales, f"{node.input[1]}_scales")
        model.graph.initializer.extend([q, scale])
        blocks = helper.make_node(
            "MatMulNBits",
            [node.input[0], q.name, scale.name],
            list(node.output),
            name=f"{node.name}_Q8",
            domain="com.microsoft",
            K=rows,
            N=cols,
            bits=8,
            block_size=block,
            accuracy_level=4,
        )
        _insert_before(model, node, blocks)
        model.graph.node.remove(node)
    _drop_unused(model)
    if not any(o.domain == "com.microsoft" for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))


def dynamic_int8(src: Path, out: Path) -> None:
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(
        str(src),
        str(out),
        weight_type=QuantType.QInt8,
        per_channel=True,
        op_types_to_quantize=["MatMul", "Attention"],
        extra_options={"MatMulConstBOnly": True, "DefaultTensorType": onnx.TensorProto.FLOAT},
    )


def _insert_before(model, node, new) -> None:
    nodes = model.graph.node
    index = next(i for i, n in enumerate(nodes) if n.name == node.name)
    nodes.insert(index, new)


def _drop_unused(model) -> None:
    used = {name for node in model.graph.node for name in node.input}
    keep = [init for init in model.graph.initializer if init.name in used]
    del model.graph.initializer[:]
    model.graph.initializer.extend(keep)
