"""The six neural systems as `CRSSpec`s: cheap availability checks that name
what is missing and the command that fixes it, and thread-safe loaders that
share tokenizers, graphs and base models between systems.

Base models are looked up locally only: `<models_dir>/base/<owner>--<name>/`
first, then the Hugging Face cache (never the network).
"""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Optional

from arena.runtime.config import Settings
from arena.conversation.crs_interface import CRSSpec, CRSUnavailable
from arena.runtime.imports import heavy_imports
from crs.checkpoints import base_dir, base_model_problem, missing_folders
from crs.neural.kg import default_kg_dir, missing_kg_files
from crs.neural.variants import BART_BASE, VARIANTS, RuntimeOptions, Variant

# Older names of the same hub repositories.
REPO_ALIASES = {"FacebookAI/roberta-base": ("roberta-base",), "facebook/bart-base": (), "microsoft/DialoGPT-small": ()}

_shared: dict[tuple, Any] = {}
_shared_locks: dict[tuple, threading.Lock] = {}
_shared_guard = threading.Lock()


def shared(key: tuple, factory: Callable[[], Any]) -> Any:
    """One instance per key for the whole process, built once even under concurrent calls."""
    with _shared_guard:
        if key in _shared:
            return _shared[key]
        lock = _shared_locks.setdefault(key, threading.Lock())
    with lock:
        if key not in _shared:
            value = factory()
            with _shared_guard:
                _shared[key] = value
        return _shared[key]


def kg_folder(variant: Variant, kg_root: Optional[Path]) -> Path:
    """`<kg_root>/<dataset>/` when given, else the project's catalog copy."""
    return Path(kg_root) / variant.dataset if kg_root else default_kg_dir(variant.dataset)


def needs_weights(variant: Variant, repo_id: str) -> bool:
    return variant.family == "unicrs" and repo_id != BART_BASE


def find_base_model(repo_id: str, models_dir: Optional[Path], *, weights: bool,
                    hf_cache_dir: Optional[Path] = None) -> Optional[Path]:
    """A local folder with the base model's tokenizer (and weights), or None."""
    names = (repo_id, *REPO_ALIASES.get(repo_id, ()))
    if models_dir is not None:
        for name in names:
            candidate = base_dir(models_dir, name)
            if base_model_problem(candidate, weights) is None:
                return candidate
    try:
        with heavy_imports():
            from huggingface_hub import snapshot_download
    except ImportError:
        return None
    for name in names:
        try:
            candidate = Path(snapshot_download(name, local_files_only=True, cache_dir=hf_cache_dir))
        except Exception:  # not cached (the hub client raises several kinds)
            continue
        if base_model_problem(candidate, weights) is None:
            return candidate
    return None


def check_variant(variant: Variant, settings: Settings, *, kg_root: Optional[Path] = None,
                  hf_cache_dir: Optional[Path] = None) -> Optional[CRSUnavailable]:
    fix = f"python -m crs download {variant.name}"
    models_dir = settings.models_dir
    if models_dir is None:
        return CRSUnavailable(variant.name, "no models folder configured (ARENA_MODELS_DIR)", fix)
    from crs.checkpoints import folder_problem

    for folder in missing_folders(models_dir, variant.name):
        return CRSUnavailable(
            variant.name, f"checkpoint folder {folder} {folder_problem(Path(models_dir) / folder)} in {models_dir}", fix
        )
    for repo_id in variant.base_models:
        weights = needs_weights(variant, repo_id)
        if find_base_model(repo_id, models_dir, weights=weights, hf_cache_dir=hf_cache_dir) is None:
            what = "tokenizer and weights" if weights else "tokenizer"
            return CRSUnavailable(
                variant.name,
                f"base model {repo_id} ({what}) not found in {base_dir(models_dir, repo_id)} or the Hugging Face cache",
                fix,
            )
    kg_dir = kg_folder(variant, kg_root)
    missing = missing_kg_files(kg_dir)
    if missing:
        return CRSUnavailable(
            variant.name, f"knowledge-graph files missing in {kg_dir}: {', '.join(missing)}",
            f"restore assets/catalogs/{variant.dataset}/ from the repository",
        )
    return None


def _default_catalog(dataset: str):
    from arena.catalogs.catalog import load_catalog

    return load_catalog(dataset)


def load_variant(variant: Variant, settings: Settings, *, kg_root: Optional[Path] = None,
                 catalog_loader: Callable[[str], Any] = _default_catalog,
                 options: Optional[RuntimeOptions] = None, hf_cache_dir: Optional[Path] = None):
    """Build one system (slow: reads the checkpoints). Raises CRSUnavailable when files are missing."""
    problem = check_variant(variant, settings, kg_root=kg_root, hf_cache_dir=hf_cache_dir)
    if problem is not None:
        raise problem
    with heavy_imports():
        from crs.neural import loading

    options = options or RuntimeOptions.from_settings(settings)
    if options.device is None:
        from arena.runtime.devices import resolve_device

        options = replace(options, device=resolve_device(settings.device))
    models_dir = Path(settings.models_dir)
    kg_dir = kg_folder(variant, kg_root)
    kg = shared(("kg", str(kg_dir.resolve())), lambda: loading.load_kg(kg_dir))
    catalog = shared(("catalog", variant.dataset, catalog_loader), lambda: catalog_loader(variant.dataset))
    base = {
        repo: find_base_model(repo, models_dir, weights=needs_weights(variant, repo), hf_cache_dir=hf_cache_dir)
        for repo in variant.base_models
    }
    return loading.build(variant, models_dir, base, kg, catalog, options, shared)


def neural_specs(settings: Settings, *, kg_root: Optional[Path] = None,
                 catalog_loader: Callable[[str], Any] = _default_catalog,
                 options: Optional[RuntimeOptions] = None,
                 hf_cache_dir: Optional[Path] = None) -> list[CRSSpec]:
    """The six systems of the CRS Arena study (KBRD, BARCOR, UniCRS x ReDial, OpenDialKG)."""
    specs = []
    for variant in VARIANTS.values():
        specs.append(
            CRSSpec(
                name=variant.name,
                family=variant.family,
                dataset=variant.dataset,
                description=variant.description,
                display_name=variant.display_name,
                summary=variant.summary,
                load=lambda v=variant: load_variant(
                    v, settings, kg_root=kg_root, catalog_loader=catalog_loader, options=options,
                    hf_cache_dir=hf_cache_dir,
                ),
                check=lambda v=variant: check_variant(v, settings, kg_root=kg_root, hf_cache_dir=hf_cache_dir),
            )
        )
    return specs
