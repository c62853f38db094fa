"""Where models run: ARENA_DEVICE = auto (CUDA when available), cpu or cuda.

On CPU nothing changes (fp32, the code paths measured in benchmarks/). On a
GPU, weights are moved there and forwards run under autocast in bf16 (fp16 on
GPUs without bf16), so the models' own code needs no dtype changes.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator, Optional

from arena.runtime.config import DEVICES
from arena.runtime.imports import heavy_imports


def cuda_available() -> bool:
    try:
        with heavy_imports():
            import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def resolve_device(choice: str) -> str:
    """'cpu' or 'cuda' for a setting of auto, cpu or cuda; asking for CUDA without one is an error."""
    choice = (choice or "auto").strip().lower()
    if choice not in DEVICES:
        raise ValueError(f"ARENA_DEVICE must be one of {', '.join(DEVICES)}, got {choice!r}")
    if choice == "auto":
        return "cuda" if cuda_available() else "cpu"
    if choice == "cuda" and not cuda_available():
        raise ValueError("ARENA_DEVICE=cuda, but torch finds no CUDA device here (use auto or cpu)")
    return choice


def half_dtype() -> Any:
    """The 16-bit float type for this GPU: bf16 where supported (same range as fp32), else fp16."""
    with heavy_imports():
        import torch

    return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16


@contextmanager
def running_on(device: Optional[str], half: bool = True) -> Iterator[None]:
    """New tensors on `device` and, on a GPU, 16-bit autocast unless `half` is False;
    on CPU (or None) nothing at all."""
    if device in (None, "cpu"):
        yield
        return
    with heavy_imports():
        import torch

    with torch.device(device), torch.autocast(device_type="cuda", dtype=half_dtype(), enabled=half):
        yield


def move_tensors(obj: Any, device: str) -> None:
    """Move every module and tensor attribute of `obj` (a model wrapper) to `device`, in place."""
    with heavy_imports():
        import torch

    for name, value in list(vars(obj).items()):
        if isinstance(value, torch.nn.Module):
            value.to(device)
        elif isinstance(value, torch.Tensor):
            setattr(obj, name, value.to(device))
