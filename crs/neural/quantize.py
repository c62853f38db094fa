"""Optional int8 dynamic quantization of the linear layers (and tied LM heads).

Token-by-token decoding on a CPU is limited by reading the weights from
memory for every token; int8 weights are a quarter of the bytes. Outputs
move slightly away from the fp32 checkpoints, so this is a setting
(`ARENA_NEURAL_QUANTIZE`), applied after loading and after the constant
entity embeddings have been computed in fp32.
"""

from __future__ import annotations

import warnings

import torch
from torch import nn

from crs.neural.layers import Conv1D


def _linear_from_conv1d(conv: Conv1D) -> nn.Linear:
    inner, outer = conv.weight.shape
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


def quantize_linears(module: nn.Module) -> nn.Module:
    """Linear (and GPT-2 Conv1D) layers of `module` as int8 dynamic layers, in place."""
    _replace_conv1d(module)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the eager-mode quantization API announces its successor
        return torch.ao.quantization.quantize_dynamic(module, {nn.Linear}, dtype=torch.qint8, inplace=True)


def quantized_head(weight: torch.Tensor) -> nn.Module:
    """An int8 copy of a tied output projection (vocabulary x width)."""
    head = nn.Linear(weight.size(1), weight.size(0), bias=False)
    with torch.no_grad():
        head.weight.copy_(weight)
    return quantize_linears(nn.Sequential(head))[0]


def quantize_model(model: nn.Module) -> nn.Module:
    """Quantize one of our networks in place; tied heads get an int8 copy."""
    from crs.neural.bart import BartForGeneration
    from crs.neural.gpt2 import PromptGPT2

    if isinstance(model, BartForGeneration):
        model.head = quantized_head(model.model.shared.weight)
    elif isinstance(model, PromptGPT2):
        model.head = quantized_head(model.transformer.wte.weight)
    quantize_linears(model)
    return model
