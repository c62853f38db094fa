"""Loading the versioned rubric and prompt files from assets/core/."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from string import Template
from typing import Any, Mapping, Optional

from evaluators.core.factors import FACTOR_KEYS, ROLE_KEYS

ASSETS = Path(__file__).resolve().parents[2] / "assets" / "core"
DEFAULT_VERSION = "v1"


@dataclass(frozen=True)
class FactorRubric:
    key: str
    name: str
    dimension: str
    definition: str
    standard: tuple[str, ...]
    steps: tuple[str, ...]
    reference_with_targets: str = ""
    reference_without_targets: str = ""

    @property
    def uses_targets(self) -> bool:
        return bool(self.reference_with_targets)

    def reference(self, has_targets: bool) -> str:
        if not self.uses_targets:
            return "Not applicable for this factor."
        return self.reference_with_targets if has_targets else self.reference_without_targets


@dataclass(frozen=True)
class RoleText:
    key: str
    name: str
    description: str


@dataclass(frozen=True)
class CoreAssets:
    """Rubric + prompts of one version, immutable and shared between threads."""

    rubric_version: str
    prompts_version: str
    factors: Mapping[str, FactorRubric]
    roles: Mapping[str, RoleText]
    templates: Mapping[str, str]
    sha: str  # short digest of both files, to spot edits made without a version bump

    @property
    def version(self) -> str:
        return f"rubric-{self.rubric_version}/prompts-{self.prompts_version}"

    def render(self, template: str, **values: Any) -> str:
        return Template(self.templates[template]).substitute(**{k: str(v) for k, v in values.items()})


def _text(entry: Mapping[str, Any], field: str, where: str) -> str:
    value = entry.get(field)
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{where}: '{field}' must be non-empty text")
    return " ".join(value.split()) if field != "description" else value.strip()


def _lines(entry: Mapping[str, Any], field: str, where: str) -> tuple[str, ...]:
    value = entry.get(field)
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v.strip() for v in value):
        raise ValueError(f"{where}: '{field}' must be a non-empty list of text lines")
    return tuple(value)


def parse_assets(rubric: Mapping[str, Any], prompts: Mapping[str, Any], sha: str = "") -> CoreAssets:
    factors_raw = rubric.get("factors") or {}
    missing = [k for k in FACTOR_KEYS if k not in factors_raw]
    extra = [k for k in factors_raw if k not in FACTOR_KEYS]
    if missing or extra:
        raise ValueError(f"rubric factors: missing {missing}, unknown {extra}")
    factors = {}
    for key in FACTOR_KEYS:
        entry, where = factors_raw[key], f"rubric factor {key}"
        factors[key] = FactorRubric(
            key=key,
            name=_text(entry, "name", where),
            dimension=_text(entry, "dimension", where),
            definition=_text(entry, "definition", where),
            standard=_lines(entry, "standard", where),
            steps=_lines(entry, "steps", where),
            reference_with_targets=" ".join(str(entry.get("reference_with_targets") or "").split()),
            reference_without_targets=" ".join(str(entry.get("reference_without_targets") or "").split()),
        )
        if bool(factors[key].reference_with_targets) != bool(factors[key].reference_without_targets):
            raise ValueError(f"{where}: give both reference_with_targets and reference_without_targets")
    roles_raw = prompts.get("roles") or {}
    if sorted(roles_raw) != sorted(ROLE_KEYS):
        raise ValueError(f"prompt roles must be exactly {list(ROLE_KEYS)}, got {sorted(roles_raw)}")
    roles = {
        key: RoleText(key, _text(roles_raw[key], "name", f"role {key}"),
                      _text(roles_raw[key], "description", f"role {key}"))
        for key in ROLE_KEYS
    }
    names = ("judge_system", "judge_user", "judge_repair", "debate_system",
             "debate_user_first", "debate_user_later", "debate_repair")
    templates = {}
    for name in names:
        value = prompts.get(name)
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"prompt template '{name}' is missing")
        templates[name] = value
    return CoreAssets(
        rubric_version=str(rubric.get("version") or "?"),
        prompts_version=str(prompts.get("version") or "?"),
        factors=factors,
        roles=roles,
        templates=templates,
        sha=sha,
    )


def _read_yaml(path: Path) -> dict[str, Any]:
    import yaml

    with open(path, encoding="utf-8") as fh:
        data = yaml.safe_load(fh)
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a mapping at the top level")
    return data


@lru_cache(maxsize=8)
def load_assets(version: str = DEFAULT_VERSION, directory: Optional[str] = None) -> CoreAssets:
    """assets/core/rubric_<version>.yaml + prompts_<version>.yaml, parsed once per process."""
    base = Path(directory) if directory else ASSETS
    rubric_path = base / f"rubric_{version}.yaml"
    prompts_path = base / f"prompts_{version}.yaml"
    for path in (rubric_path, prompts_path):
        if not path.exists():
            raise FileNotFoundError(f"CoRE asset {path} not found (version {version!r})")
    digest = hashlib.sha256(rubric_path.read_bytes() + b"\0" + prompts_path.read_bytes()).hexdigest()
    return parse_assets(_read_yaml(rubric_path), _read_yaml(prompts_path), sha=digest[:12])
