"""The cross-encoder's ONNX graph, built node by node from the trained torch weights.

Same inputs and output as `model.CrossEncoder` (`input_ids`, `attention_mask` -> `probability`)
and the same arithmetic, with e5's graph builder (`training/e5_graph.py`):

* word embeddings: frozen during training at e5's 4-bit values dequantized, so they are stored
  as e5's own 4-bit blocks and unpacked in the graph (`word_vectors`), exactly, at a quarter
  of float16's size; `build` checks that the torch rows are those values;
* the layers' matrix products in one of `WEIGHTS`:
  - `float`: float32 weights (the reference);
  - `fp16`: float16 weights cast to float32 once, when onnxruntime folds the constants at load
    (half the file, float32 arithmetic);
  - `int8`, `int8-acc4`: `MatMulNBits` with 8-bit weights per block of 32 (symmetric), float32
    activations (accuracy level 1) or int8 ones (level 4);
* the head (mean over real tokens, tanh layer, logit, sigmoid) in float32: it is small.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Literal

import numpy as np
import numpy.typing as npt
import onnx
import torch
from onnx import TensorProto, helper

from training.e5_file import BLOCK, E5File
from training.e5_graph import OPSET, GraphBuilder, word_vectors

Weights = Literal["float", "fp16", "int8", "int8-acc4"]
WEIGHTS: tuple[Weights, ...] = ("float", "fp16", "int8", "int8-acc4")
State = Mapping[str, torch.Tensor]


def _np(tensor: torch.Tensor) -> npt.NDArray[np.float32]:
    return np.ascontiguousarray(tensor.detach().cpu().numpy(), dtype=np.float32)


def _i64(*values: int) -> npt.NDArray[np.int64]:
    return np.array(values, dtype=np.int64)


def _int8_blocks(weight: npt.NDArray[np.float32]) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.float32]]:
    """[out, in] -> MatMulNBits' 8-bit codes [out, in/32, 32] (zero point 128) and scales."""
    rows, cols = weight.shape
    blocks = weight.reshape(rows, cols // BLOCK, BLOCK)
    scales = np.abs(blocks).max(axis=2) / 127.0
    safe = np.where(scales == 0, 1.0, scales)
    codes = np.clip(np.rint(blocks / safe[:, :, None]), -127, 127) + 128
    return codes.astype(np.uint8), scales.astype(np.float32).reshape(-1)


class _Layers(GraphBuilder):
    def __init__(self, weights: Weights) -> None:
        super().__init__("float")
        self.weights = weights

    def dense(self, x: str, state: State, prefix: str, weights: Weights | None = None) -> str:
        """x @ W.T + b for the torch Linear `prefix`."""
        weight, bias = _np(state[prefix + ".weight"]), _np(state[prefix + ".bias"])
        kind = weights or self.weights
        if kind in ("int8", "int8-acc4"):
            rows, cols = weight.shape
            codes, scales = _int8_blocks(weight)
            product = self.op(
                "MatMulNBits",
                [x, self.const(prefix + "_q8", codes), self.const(prefix + "_scales", scales)],
                domain="com.microsoft",
                K=cols,
                N=rows,
                bits=8,
                block_size=BLOCK,
                accuracy_level=4 if kind == "int8-acc4" else 1,
            )
        elif kind == "fp16":
            half = self.const(prefix + "_w16", weight.T.astype(np.float16))
            product = self.op("MatMul", [x, self.op("Cast", [half], to=TensorProto.FLOAT)])
        else:
            product = self.op("MatMul", [x, self.const(prefix + "_w", weight.T)])
        return self.op("Add", [product, self.const(prefix + "_b", bias)])

    def norm(self, x: str, state: State, prefix: str, eps: float) -> str:
        return self.layer_norm(x, _np(state[prefix + ".weight"]), _np(state[prefix + ".bias"]), eps)


def _layer(b: _Layers, state: State, p: str, x: str, mask: str, heads: int, eps: float) -> str:
    hidden = state[p + "q.weight"].shape[0]
    size = hidden // heads
    split = b.const("split", _i64(0, 0, heads, size))

    def project(kind: str, perm: list[int]) -> str:
        return b.op("Transpose", [b.op("Reshape", [b.dense(x, state, p + kind), split])], perm=perm)

    query, key, value = project("q", [0, 2, 1, 3]), project("k", [0, 2, 3, 1]), project("v", [0, 2, 1, 3])
    scores = b.op(
        "Mul", [b.op("MatMul", [query, key]), b.const("scale", np.array(1 / math.sqrt(size), np.float32))]
    )
    probs = b.op("Softmax", [b.op("Add", [scores, mask])], axis=-1)
    context = b.op("Transpose", [b.op("MatMul", [probs, value])], perm=[0, 2, 1, 3])
    merged = b.op("Reshape", [context, b.const("merge", _i64(0, 0, hidden))])
    x = b.norm(b.op("Add", [x, b.dense(merged, state, p + "ao")]), state, p + "aln", eps)
    inner = b.dense(x, state, p + "fi")
    erf = b.op("Erf", [b.op("Div", [inner, b.const("sqrt2", np.array(math.sqrt(2.0), np.float32))])])
    gelu = b.op(
        "Mul",
        [
            b.op("Mul", [inner, b.op("Add", [erf, b.const("one_g", np.array(1.0, np.float32))])]),
            b.const("half", np.array(0.5, np.float32)),
        ],
    )
    return b.norm(b.op("Add", [x, b.dense(gelu, state, p + "fo")]), state, p + "oln", eps)


def build(state: State, e5: E5File, rows: npt.NDArray[np.int64], weights: Weights) -> onnx.ModelProto:
    """The graph of the trained cross-encoder `state` (a `model.CrossEncoder` state_dict) whose
    word rows are e5's rows `rows` (the pruned tokenizer's order)."""
    word = e5.matrices["emb.word"].take(rows)
    if not np.array_equal(word.dequantize(), _np(state["words.weight"])):
        raise ValueError("the word embeddings are not e5's 4-bit values: were they trained?")
    b = _Layers(weights)
    hidden = word.shape[1]
    words = word_vectors(b, word, hidden)
    length = b.op("Gather", [b.op("Shape", ["input_ids"]), b.const("one", _i64(1))], axis=0)
    position = b.op(
        "Slice",
        [
            b.const("positions", _np(state["positions"])),
            b.const("zero", _i64(0)),
            length,
            b.const("axis", _i64(0)),
        ],
    )
    x = b.norm(b.op("Add", [words, position]), state, "emb_ln", e5.eps)
    mask_f = b.op("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    blocked = b.op("Sub", [b.const("one_f", np.array(1.0, dtype=np.float32)), mask_f])
    additive = b.op("Mul", [blocked, b.const("minus", np.array(-10000.0, dtype=np.float32))])
    mask = b.op("Unsqueeze", [additive, b.const("axes", _i64(1, 2))])
    layers = 1 + max(int(k.split(".")[1]) for k in state if k.startswith("layers."))
    for index in range(layers):
        x = _layer(b, state, f"layers.{index}.", x, mask, e5.heads, e5.eps)
    # Mean over the real tokens (padding never moves a pair's score), tanh layer, logit.
    weights3 = b.op("Unsqueeze", [mask_f, b.const("last", _i64(2))])
    summed = b.op("ReduceSum", [b.op("Mul", [x, weights3]), b.const("tokens", _i64(1))], keepdims=0)
    count = b.op("ReduceSum", [mask_f, b.const("tokens", _i64(1))], keepdims=1)
    count = b.op("Max", [count, b.const("one_c", np.array(1.0, dtype=np.float32))])
    pooled = b.op("Tanh", [b.dense(b.op("Div", [summed, count]), state, "pool", "float")])
    logit = b.dense(pooled, state, "out", "float")
    flat = b.op("Reshape", [logit, b.const("flat", _i64(-1))])
    b.nodes.append(helper.make_node("Sigmoid", [flat], ["probability"]))
    dims = ["batch", "tokens"]
    graph = helper.make_graph(
        b.nodes,
        "memory-guard cross-encoder",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, dims),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, dims),
        ],
        [helper.make_tensor_value_info("probability", TensorProto.FLOAT, ["batch"])],
        b.inits,
    )
    opsets = [helper.make_opsetid("", OPSET), helper.make_opsetid("com.microsoft", 1)]
    proto = helper.make_model(graph, opset_imports=opsets, producer_name="memory-guard cross-encoder")
    proto.ir_version = 8
    return proto
