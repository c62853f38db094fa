"""Optional int8 dynamic quantization of the linear layers (tied LM heads included).

Token-by-token decoding on a CPU is limited by reading the weights from
memory for every token; int8 weights are a quarter of the bytes. Outputs
move slightly away from the fp32 checkpoints, so this is a setting
(`ARENA_NEURAL_QUANTIZE`), applied after loading and after the constant
entity embeddings have been computed in fp32. A tied head becomes an int8
copy; the embedding table it was tied to stays fp32.
"""

from __future__ import annotations

import warnings

import torch
from torch import nn
from transformers.pytorch_utils import Conv1D


def _linear_from_conv1d(conv: Conv1D) -> nn.Linear:
    inner, outer = conv.weight.shape  # GPT-2 stores [in, out]
    linear = nn.Linear(inner, outer)
    with torch.no_grad():
        linear.weight.copy_(conv.weight.T)
        linear.bias.copy_(conv.bias)
    return linear


def _replace_conv1d(module: nn.Module) -> None:
    for name, child in module.named_children():
        if isinstance(child, Conv1D):
            setattr(module, name, _linear_from_conv1d(child))
        else:
            _replace_conv1d(child)


def quantize_model(model: nn.Module) -> nn.Module:
    """Linear (and GPT-2 Conv1D) layers of `model` as int8 dynamic layers, in place."""
    _replace_conv1d(model)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the eager-mode quantization API announces its successor
        return torch.ao.quantization.quantize_dynamic(model, {nn.Linear}, dtype=torch.qint8, inplace=True)
