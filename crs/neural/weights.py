"""Reading checkpoint files and loading them as tolerantly as CRS Arena did.

Each checkpoint is loaded with the tolerance the code CRS Arena ran gave it
(`Tolerance`): `STRICT` where it called `load_state_dict` strictly (KBRD's
recommender), `LENIENT` where it used `from_pretrained` (Hugging Face folders:
missing parameters keep their initial values, unexpected ones are dropped) or
`load_state_dict(strict=False)` (UniCRS's prompt encoders). A shape difference
is fatal everywhere, as it was there. Whatever was missing, unexpected or
ignored is returned as a `LoadReport` and logged, so a real checkpoint that
differs from the fabricated ones is visible at load instead of refused.

Always tolerated, as transformers tolerates them: tied parameters (one of their
names suffices), a few optional buffers (`optional_keys`), and known
non-parameter or unused-head entries (`ignored_keys`, regexes; reported).
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Iterable, Mapping, Optional

import torch
from torch import nn

log = logging.getLogger(__name__)

WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin", "model.pt")


class Tolerance(Enum):
    STRICT = "strict"  # any missing or unexpected key is fatal (torch's load_state_dict)
    LENIENT = "lenient"  # missing and unexpected keys are reported, not fatal (from_pretrained, strict=False)


@dataclass
class LoadReport:
    """What loading one checkpoint left out: keys the module kept at their initial
    values (`missing`), keys of the file the module has no place for (`unexpected`),
    and keys dropped on purpose because they carry nothing the module uses (`ignored`)."""

    source: str
    tolerance: Tolerance
    missing: list[str] = field(default_factory=list)
    unexpected: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)

    @property
    def exact(self) -> bool:
        return not (self.missing or self.unexpected)

    def summary(self) -> str:
        parts = []
        if self.missing:
            parts.append(f"{len(self.missing)} missing (kept their initial values): {_names(self.missing)}")
        if self.unexpected:
            parts.append(f"{len(self.unexpected)} unexpected (dropped): {_names(self.unexpected)}")
        if self.ignored:
            parts.append(f"{len(self.ignored)} ignored (unused by the module): {_names(self.ignored)}")
        return f"checkpoint {self.source}: " + ("; ".join(parts) if parts else "every key matched")
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


def load_checkpoint(
    module: nn.Module,
    state: Mapping[str, torch.Tensor],
    source: str,
    tolerance: Tolerance = Tolerance.STRICT,
    *,
    optional_keys: Iterable[str] = (),
    ignored_keys: Iterable[str] = (),
    skip_keys: Iterable[str] = (),
) -> LoadReport:
    """Load `state` into `module` with `tolerance`; a misshapen key is always fatal.

    Tied parameters (one storage under several names) need only one of their
    names in the file. `skip_keys`: module entries filled elsewhere (never read
    from the file). Raises `CheckpointMismatch`; returns what was left out.
    """
    optional = set(optional_keys) | set(getattr(module, "optional_keys", ()))
    patterns = [re.compile(p) for p in (*ignored_keys, *getattr(module, "ignored_keys", ()))]
    skip = set(skip_keys)
    expected = {k: v for k, v in module.state_dict().items() if k not in skip}
    tied = _tied_keys(module)

    resolved = {key: tensor for key, tensor in state.items() if key in expected}
    extra = [key for key in state if key not in expected]
    ignored = sorted(key for key in extra if any(p.search(key) for p in patterns))
    unexpected = sorted(key for key in extra if not any(p.search(key) for p in patterns))
    missing = sorted(k for k in expected
                     if k not in resolved and k not in optional and not (tied.get(k, set()) & resolved.keys()))
    shapes = [
        (k, tuple(resolved[k].shape), tuple(v.shape))
        for k, v in expected.items()
        if k in resolved and tuple(resolved[k].shape) != tuple(v.shape)
    ]
    if shapes or (tolerance is Tolerance.STRICT and (missing or unexpected)):
        raise CheckpointMismatch(source, missing, unexpected, shapes)
    with torch.no_grad():
        for key, tensor in resolved.items():
            expected[key].copy_(tensor.to(expected[key].dtype))
    report = LoadReport(source, tolerance, missing, unexpected, ignored)
    (log.info if report.exact else log.warning)(report.summary())
    return report


def load_strict(module: nn.Module, state: Mapping[str, torch.Tensor], source: str, **keys) -> LoadReport:
    """`load_checkpoint` refusing any missing or unexpected key."""
    return load_checkpoint(module, state, source, Tolerance.STRICT, **keys)


def load_lenient(module: nn.Module, state: Mapping[str, torch.Tensor], source: str, **keys) -> LoadReport:
    """`load_checkpoint` reporting missing and unexpected keys instead of refusing them."""
    return load_checkpoint(module, state, source, Tolerance.LENIENT, **keys)


def read_json(path: Path) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))
