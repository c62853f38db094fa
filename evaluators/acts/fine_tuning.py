"""Fitting the act network: the top layers, pooler and classifier of MiniLM, on masked labels.

The network keeps the base's lowest `layers` layers and trains the top `top_layers` of them.
Batches are drawn from pools of `length_pool` batches' worth of shuffled rows, each pool sorted
by length, so that a batch pads little (about 2.4x faster on a CPU than random batches); the
order of the batches is shuffled again. `length_pool` 0 (the shipped model's setting) gives plain
random batches.

The loss is binary cross-entropy per label, counted only where the label is known
(weak ReDial labels cover Recommend/Accept/Reject, the arena-style sets only their
last utterance) and weighted per source. Runs on a CPU or an accelerator; with
the same inputs, hyperparameters, seed and machine type it gives the same bytes
(deterministic algorithms, a seeded generator for the order and dropout).
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from arena.runtime.config import deterministic_cuda_environment
from arena.runtime.imports import heavy_imports
from evaluators.acts.network import bert_config, build_network, batch_tensors, trained_names

HYPER = {
    "layers": 6,
    "top_layers": 3,
    "epochs": 16,
    "batch_size": 32,
    "lr": 1e-4,
    "warmup": 0.06,
    "weight_decay": 0.01,
    "redial_user_weight": 0.1,  # the seekers' answers are a noisy reference for Accept/Reject
    "redial_agent_weight": 1.0,
    "length_pool": 0,
}


def row_weights(sources: np.ndarray, roles: np.ndarray, hyper: dict) -> np.ndarray:
    w = np.ones(len(sources), dtype=np.float32)
    redial = sources == "redial"
    w[redial & (roles == "USER")] = hyper["redial_user_weight"]
    w[redial & (roles == "AGENT")] = hyper["redial_agent_weight"]
    return w


def epoch_batches(lengths: list[int], batch_size: int, pool: int, gen) -> list[list[int]]:
    """One epoch's batches of row indices, drawn with the torch generator `gen` (see the module doc)."""
    with heavy_imports():
        import torch

    perm = torch.randperm(len(lengths), generator=gen).tolist()
    if pool <= 0:
        return [perm[s:s + batch_size] for s in range(0, len(perm), batch_size)]
    batches = []
    for start in range(0, len(perm), pool * batch_size):
        # sorted() is stable: ties keep their order
        chunk = sorted(perm[start:start + pool * batch_size], key=lambda i: lengths[i])
        batches += [chunk[s:s + batch_size] for s in range(0, len(chunk), batch_size)]
    return [batches[k] for k in torch.randperm(len(batches), generator=gen).tolist()]


def deterministic(seed: int) -> None:
    with heavy_imports():
        import torch

    deterministic_cuda_environment()
    torch.manual_seed(seed)
    torch.use_deterministic_algorithms(True)
    torch.backends.cudnn.benchmark = False


def fit(rows: list[tuple[list[int], list[int]]], y: np.ndarray, known: np.ndarray, weight: np.ndarray,
        base: dict[str, np.ndarray], hyper: Optional[dict] = None, seed: int = 0, device: str = "cpu",
        config_dir=None, log=print) -> dict[str, np.ndarray]:
    """Trained weights (full parameter names, half precision) for the network over `base`."""
    with heavy_imports():
        import torch
        from transformers import get_linear_schedule_with_warmup

    hyper = {**HYPER, **(hyper or {})}
    deterministic(seed)
    model = build_network(bert_config(config_dir, layers=int(hyper["layers"])), base, seed=seed).to(device)
    names = set(trained_names(model, int(hyper["top_layers"])))
    params = []
    for name, p in model.named_parameters():
        p.requires_grad_(name in names)
        if name in names:
            params.append(p)
    optimizer = torch.optim.AdamW(params, lr=hyper["lr"], weight_decay=hyper["weight_decay"])
    n, bs = len(rows), int(hyper["batch_size"])
    steps = int(hyper["epochs"]) * ((n + bs - 1) // bs)
    schedule = get_linear_schedule_with_warmup(optimizer, int(hyper["warmup"] * steps), steps)
    Y = torch.from_numpy(np.asarray(y, dtype=np.float32))
    M = torch.from_numpy(np.asarray(known, dtype=np.float32) * np.asarray(weight, dtype=np.float32)[:, None])
    order_gen = torch.Generator().manual_seed(seed)
    lengths = [len(ids) for ids, _ in rows]
    model.train()
    for epoch in range(int(hyper["epochs"])):
        total, count = 0.0, 0
        for idx in epoch_batches(lengths, bs, int(hyper["length_pool"]), order_gen):
            ids, types, mask = (t.to(device) for t in batch_tensors(rows[i] for i in idx))
            logits = model(input_ids=ids, token_type_ids=types, attention_mask=mask).logits.float()
            target, m = Y[idx].to(device), M[idx].to(device)
            loss_each = torch.nn.functional.binary_cross_entropy_with_logits(logits, target, reduction="none")
            loss = (loss_each * m).sum() / m.sum().clamp(min=1e-6)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            optimizer.step()
            schedule.step()
            total, count = total + float(loss.detach()) * len(idx), count + len(idx)
        log(f"epoch {epoch + 1}/{hyper['epochs']}: loss {total / max(count, 1):.4f}")
    return {name: p.detach().float().cpu().numpy().astype(np.float16)
            for name, p in model.named_parameters() if name in names}
