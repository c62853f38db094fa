"""Serving the act network on CPU with ONNX Runtime.

Training, calibration and accelerators use the PyTorch network (`network.py`).
On a CPU the same network runs faster under ONNX Runtime: a single utterance's
pass takes about 12 ms of one core instead of about 21 ms in eager PyTorch,
because ONNX Runtime runs the whole graph without Python between the operators
(BENCHMARKS.md, "Learnt act annotator", CPU latency). The graph is exported from
the loaded PyTorch network when the model loads (under a second), so there is no
second artifact to keep in step with the weights; its outputs match PyTorch's to
about 1e-5, so the thresholds chosen on PyTorch's outputs hold unchanged.
"""

from __future__ import annotations

import io
import warnings
from typing import Optional, Sequence

import numpy as np

from arena.runtime.imports import heavy_imports
from evaluators.acts.network import batch_tensors, in_length_batches

INPUTS = ("input_ids", "token_type_ids", "attention_mask")
OPSET = 17


def export_graph(network) -> bytes:
    """The ONNX graph of `network` (a BertForSequenceClassification) giving sigmoid outputs,
    with the batch size and the sequence length left free."""
    with heavy_imports():
        import torch

    class Probabilities(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, token_type_ids, attention_mask):
            logits = self.inner(input_ids=input_ids, token_type_ids=token_type_ids,
                                attention_mask=attention_mask).logits
            return torch.sigmoid(logits)

    example = batch_tensors([([101, 2023, 102, 2023, 102], [0, 0, 0, 1, 1])] * 2)
    free = {name: {0: "batch", 1: "length"} for name in INPUTS}
    buffer = io.BytesIO()
    network.eval()
    with torch.no_grad(), warnings.catch_warnings():
        # The TorchScript-based exporter: it needs only the `onnx` package, and BERT is the
        # architecture it has been used on most. Its tracer warns where a Python branch is fixed
        # at export: padding the mask to the key length and the causal flag, which never change
        # for an encoder (tests/acts/test_acts_serving.py compares the outputs with PyTorch's
        # over batches of mixed lengths), and that this exporter is the older of two.
        warnings.simplefilter("ignore")
        torch.onnx.export(
            Probabilities(network),
            example,
            # torch annotates `f` as a path only; the TorchScript exporter writes to a file object too
            buffer,  # type: ignore[arg-type]
            dynamo=False,
            input_names=list(INPUTS),
            output_names=["probabilities"],
            dynamic_axes={**free, "probabilities": {0: "batch"}},
            opset_version=OPSET,
        )
    return buffer.getvalue()


class OnnxNetwork:
    """An ONNX Runtime session over an exported act network; `predict` as `network.predict`."""

    def __init__(self, graph: bytes, threads: Optional[int] = 1):
        """`threads`: intra-operator threads (None or 0: ONNX Runtime's default, one per core)."""
        with heavy_imports():
            import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = int(threads or 0)
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        self._session = ort.InferenceSession(graph, options, providers=["CPUExecutionProvider"])

    @classmethod
    def from_network(cls, network, threads: Optional[int] = 1) -> "OnnxNetwork":
        return cls(export_graph(network), threads)

    def predict(self, rows: Sequence[tuple[list[int], list[int]]], batch_size: int = 64) -> np.ndarray:
        """Sigmoid outputs, one row per input, in input order."""
        def run(*tensors) -> np.ndarray:
            return self._session.run(None, {name: t.numpy() for name, t in zip(INPUTS, tensors)})[0]

        return in_length_batches(rows, run, batch_size)
