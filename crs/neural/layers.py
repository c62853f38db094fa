"""The graph layers KBRD and UniCRS add to the base networks.

Parameter names follow the originals exactly so that published state dicts
load strictly: `RGCNConv` mirrors torch_geometric's basis-decomposed R-GCN
(`weight`, `comp`, `root`, `bias`), `EntityAttention` the KBRD/UniCRS
`SelfAttention` (`attn.0`, `attn.2`).
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F


class RGCNConv(nn.Module):
    """Relational graph convolution with basis decomposition and mean aggregation.

    out_i = x_i @ root + bias + sum_r mean_{j -> i, type r}(x_j) @ W_r,
    with W_r = sum_b comp[r, b] * weight[b].
    """

    def __init__(self, in_channels: int, out_channels: int, num_relations: int, num_bases: int):
        super().__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.num_relations = num_relations
        self.num_bases = num_bases
        self.weight = nn.Parameter(torch.empty(num_bases, in_channels, out_channels))
        self.comp = nn.Parameter(torch.empty(num_relations, num_bases))
        self.root = nn.Parameter(torch.empty(in_channels, out_channels))
        self.bias = nn.Parameter(torch.empty(out_channels))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        for param in (self.weight, self.comp, self.root):
            bound = math.sqrt(6.0 / (param.size(-2) + param.size(-1)))
            nn.init.uniform_(param, -bound, bound)
        nn.init.zeros_(self.bias)

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor, edge_type: torch.Tensor) -> torch.Tensor:
        num_nodes = x.size(0)
        weight = (self.comp @ self.weight.view(self.num_bases, -1)).view(
            self.num_relations, self.in_channels, self.out_channels
        )
        out = x.new_zeros(num_nodes, self.out_channels)
        source, target = edge_index[0], edge_index[1]
        for relation in range(self.num_relations):
            mask = edge_type == relation
            if not bool(mask.any()):
                continue
            src, dst = source[mask], target[mask]
            summed = x.new_zeros(num_nodes, self.in_channels).index_add_(0, dst, x[src])
            count = torch.bincount(dst, minlength=num_nodes).clamp_(min=1).to(x.dtype)
            out = out + (summed / count.unsqueeze(-1)) @ weight[relation]
        return out + x @ self.root + self.bias


class EntityAttention(nn.Module):
    """KBRD's attention pooling over the mentioned entities.

    The original normalises the scores with a softmax over a singleton axis,
    so every entity gets weight 1 (masked ones too) and the result is the sum
    of the entity embeddings. The checkpoints were trained that way, so the
    computation is kept as is.
    """

    def __init__(self, hidden_size: int):
        super().__init__()
        self.attn = nn.Sequential(nn.Linear(hidden_size, hidden_size), nn.Tanh(), nn.Linear(hidden_size, 1))

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        scores = self.attn(x)  # (batch, length, 1)
        if mask is not None:
            scores = scores + (~mask).unsqueeze(-1) * -1e4
        weights = F.softmax(scores, dim=-1)
        return (weights.transpose(1, 2) @ x).squeeze(1)
