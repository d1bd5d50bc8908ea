"""Export the trained cross-encoder to ONNX, quantize it to int8, and check both against torch.

The graph takes `input_ids` and `attention_mask` ([batch, tokens], int64, as `pair_ids` and
`batch_tensors` build them) and returns `probability` ([batch], float32). The int8 file comes
from `quantize_dynamic`: int8 weights per output channel for the matrix products and per row
for the word embeddings (the bulk of the file), activations quantized per run.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import onnxruntime as ort
import torch

from training.cross_encoder.model import CrossEncoder

OPSET = 18  # as the shipped e5 model; onnxruntime >= 1.17 runs it


def export_onnx(model: CrossEncoder, target: Path) -> None:
    model.eval()
    ids = torch.tensor([[0, 5, 6, 2, 2, 7, 2], [0, 5, 2, 2, 7, 2, 1]], dtype=torch.long)
    mask = (ids != 1).long()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the legacy exporter's deprecation notice
        torch.onnx.export(
            model,
            (ids, mask),
            str(target),
            input_names=["input_ids", "attention_mask"],
            output_names=["probability"],
            dynamic_axes={
                "input_ids": {0: "batch", 1: "tokens"},
                "attention_mask": {0: "batch", 1: "tokens"},
                "probability": {0: "batch"},
            },
            opset_version=OPSET,
            dynamo=False,
        )


def quantize(source: Path, target: Path) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(
        source,
        target,
        weight_type=QuantType.QInt8,
        per_channel=True,
        op_types_to_quantize=["MatMul", "Gather"],
        extra_options={"MatMulConstBOnly": True},
    )


def onnx_probabilities(path: Path, batches: list[tuple[torch.Tensor, torch.Tensor]]) -> np.ndarray:
    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    out = [
        session.run(["probability"], {"input_ids": ids.numpy(), "attention_mask": mask.numpy()})[0]
        for ids, mask in batches
    ]
    return np.concatenate(out)


def torch_probabilities(model: CrossEncoder, batches: list[tuple[torch.Tensor, torch.Tensor]]) -> np.ndarray:
    model.eval()
    with torch.no_grad():
        return np.concatenate([model(ids, mask).numpy() for ids, mask in batches])
