"""Reading checkpoint files and loading them with strict parameter matching.

A published checkpoint must match our module exactly: a key the module needs
but the file lacks, a key in the file the module does not have, or a shape
difference is an error that names the keys. The only leeway is what transformers
itself tolerates and what carries no weights: tied parameters (one of their
names suffices), a few optional buffers (`optional_keys`), and known
non-parameter or unused-head entries (`ignored_keys`, regexes).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Iterable, Mapping, Optional

import torch
from torch import nn

WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin", "model.pt")
INDEX_FILES = ("model.safetensors.index.json", "pytorch_model.bin.index.json")


class CheckpointMismatch(ValueError):
    """A checkpoint whose parameters do not match the architecture."""

    def __init__(self, source: str, missing=(), unexpected=(), shapes=()):
        self.source = source
        self.missing = list(missing)
        self.unexpected = list(unexpected)
        self.shapes = list(shapes)
        parts = []
        if self.missing:
            parts.append("missing keys: " + _names(self.missing))
        if self.unexpected:
            parts.append("unexpected keys: " + _names(self.unexpected))
        if self.shapes:
            parts.append(
                "shape mismatch: "
                + "; ".join(f"{k} (checkpoint {tuple(a)}, model {tuple(b)})" for k, a, b in self.shapes[:10])
            )
        super().__init__(f"checkpoint {source} does not match the architecture: " + " | ".join(parts))


def _names(keys: list[str], limit: int = 12) -> str:
    shown = ", ".join(keys[:limit])
    return shown + (f" (+{len(keys) - limit} more)" if len(keys) > limit else "")


def weight_file(folder: Path) -> Optional[Path]:
    """The weights file (or shard index) in a checkpoint folder, or None."""
    for name in WEIGHT_FILES + INDEX_FILES:
        if (folder / name).is_file():
            return folder / name
    return None


def read_state_dict(path: Path) -> dict[str, torch.Tensor]:
    """Tensors from a .safetensors / .bin / .pt file, a shard index, or a folder holding one."""
    path = Path(path)
    if path.is_dir():
        found = weight_file(path)
        if found is None:
            raise FileNotFoundError(f"no weights file ({', '.join(WEIGHT_FILES)}) in {path}")
        path = found
    if path.name.endswith(".index.json"):
        index = json.loads(path.read_text(encoding="utf-8"))
        state: dict[str, torch.Tensor] = {}
        for shard in sorted(set(index["weight_map"].values())):
            state.update(read_state_dict(path.parent / shard))
        return state
    if path.suffix == ".safetensors":
        from safetensors.torch import load_file

        return load_file(str(path))
    state = torch.load(path, map_location="cpu", weights_only=True)
    if isinstance(state, dict) and "state_dict" in state and isinstance(state["state_dict"], dict):
        state = state["state_dict"]
    if not isinstance(state, dict):
        raise ValueError(f"{path} does not hold a state dict")
    return state


def strip_prefix(state: Mapping[str, torch.Tensor], prefix: str) -> dict[str, torch.Tensor]:
    """Drop `prefix` from keys that have it (base checkpoints saved with a task head)."""
    return {(k[len(prefix):] if k.startswith(prefix) else k): v for k, v in state.items()}


def _tied_keys(module: nn.Module) -> dict[str, set[str]]:
    """State-dict keys that share storage with other keys (tied embeddings and heads)."""
    groups: dict[tuple, set[str]] = {}
    for key, tensor in module.state_dict(keep_vars=True).items():
        if tensor.numel():
            groups.setdefault((tensor.data_ptr(), tuple(tensor.shape)), set()).add(key)
    return {key: group for group in groups.values() if len(group) > 1 for key in group}


def load_strict(
    module: nn.Module,
    state: Mapping[str, torch.Tensor],
    source: str,
    *,
    optional_keys: Iterable[str] = (),
    ignored_keys: Iterable[str] = (),
    skip_keys: Iterable[str] = (),
) -> None:
    """Load `state` into `module`, failing on any missing, unexpected or misshapen key.

    Tied parameters (one storage under several names) need only one of their
    names in the file. `skip_keys`: module entries filled elsewhere (never read
    from the file).
    """
    optional = set(optional_keys) | set(getattr(module, "optional_keys", ()))
    patterns = [re.compile(p) for p in (*ignored_keys, *getattr(module, "ignored_keys", ()))]
    skip = set(skip_keys)
    expected = {k: v for k, v in module.state_dict().items() if k not in skip}
    tied = _tied_keys(module)

    resolved = {key: tensor for key, tensor in state.items() if key in expected}
    unexpected = [key for key in state if key not in expected and not any(p.search(key) for p in patterns)]
    missing = [k for k in expected
               if k not in resolved and k not in optional and not (tied.get(k, set()) & resolved.keys())]
    shapes = [
        (k, tuple(resolved[k].shape), tuple(v.shape))
        for k, v in expected.items()
        if k in resolved and tuple(resolved[k].shape) != tuple(v.shape)
    ]
    if missing or unexpected or shapes:
        raise CheckpointMismatch(source, sorted(missing), sorted(unexpected), shapes)
    with torch.no_grad():
        for key, tensor in resolved.items():
            expected[key].copy_(tensor.to(expected[key].dtype))


def read_json(path: Path) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))
