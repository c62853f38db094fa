"""Reading checkpoint files and loading them with strict parameter matching.

A published checkpoint must match our module exactly: a key the module needs
but the file lacks, a key in the file the module does not have, or a shape
difference is an error that names the keys. The only leeway is what Hugging
Face itself tolerates and what carries no weights: tied copies of the word
embedding (`tied_aliases`), a few optional buffers (`optional_keys`), and
known non-parameter or unused-head entries (`ignored_keys`, regexes).
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


def load_strict(
    module: nn.Module,
    state: Mapping[str, torch.Tensor],
    source: str,
    *,
    tied_aliases: Optional[Mapping[str, str]] = None,
    optional_keys: Iterable[str] = (),
    ignored_keys: Iterable[str] = (),
    skip_keys: Iterable[str] = (),
) -> None:
    """Load `state` into `module`, failing on any missing, unexpected or misshapen key.

    `skip_keys`: module entries filled elsewhere (never read from the file).
    """
    aliases = dict(tied_aliases if tied_aliases is not None else getattr(module, "tied_aliases", {}))
    optional = set(optional_keys) | set(getattr(module, "optional_keys", ()))
    patterns = [re.compile(p) for p in (*ignored_keys, *getattr(module, "ignored_keys", ()))]
    skip = set(skip_keys)
    expected = {k: v for k, v in module.state_dict().items() if k not in skip}

    resolved: dict[str, torch.Tensor] = {}
    unexpected: list[str] = []
    for key, tensor in state.items():
        if key in expected:
            resolved[key] = tensor
        elif key in aliases and aliases[key] in expected:
            resolved.setdefault(aliases[key], tensor)
        elif not any(p.search(key) for p in patterns):
            unexpected.append(key)
    # An explicit canonical entry wins over its tied copies.
    for key in expected:
        if key in state:
            resolved[key] = state[key]
    missing = [k for k in expected if k not in resolved and k not in optional]
    shapes = [
        (k, tuple(resolved[k].shape), tuple(v.shape))
        for k, v in expected.items()
        if k in resolved and tuple(resolved[k].shape) != tuple(v.shape)
    ]
    if missing or unexpected or shapes:
        raise CheckpointMismatch(source, sorted(missing), sorted(unexpected), shapes)
    with torch.no_grad():
        for key, target in expected.items():
            if key in resolved:
                target.copy_(resolved[key].to(target.dtype))


def read_json(path: Path) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))
