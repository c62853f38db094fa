"""Which models judge which factor and play which role, and the debate knobs.

A `CoreConfig` comes from code, from a JSON or YAML file, or from the
setting `core_config` (ARENA_CORE_CONFIG: a file path, or inline JSON). Example
(assets/core/config.example.yaml):

    judge_models: [gpt-4o-mini, llama3-8b]   # default: the client's model
    factor_models: {groundness: [gpt-4o]}     # per-factor override
    debate_model: gpt-4o-mini                 # default: first judge model
    role_models: {linguist: glm-4-air}        # per-role override
    max_rounds: 4
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, field_validator

from evaluators.core.factors import factor_key, role_key

class CoreConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    judge_models: list[str] = Field(default_factory=list)
    factor_models: dict[str, list[str]] = Field(default_factory=dict)
    debate_model: Optional[str] = None
    role_models: dict[str, str] = Field(default_factory=dict)
    max_rounds: int = Field(default=4, ge=1, le=10)
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    seed: Optional[int] = None
    judge_max_tokens: int = Field(default=700, ge=16)
    debate_max_tokens: int = Field(default=500, ge=16)
    max_workers: Optional[int] = Field(default=None, ge=1)  # None: the client's concurrency
    assets_version: str = "v1"

    @field_validator("judge_models")
    @classmethod
    def _judges(cls, value: list[str]) -> list[str]:
        return [m.strip() for m in value if m and m.strip()]

    @field_validator("factor_models", mode="before")
    @classmethod
    def _factors(cls, value: Any) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for name, models in dict(value or {}).items():
            models = [models] if isinstance(models, str) else list(models)
            if not models:
                raise ValueError(f"factor_models[{name!r}] lists no model")
            out[factor_key(name)] = [str(m) for m in models]
        return out

    @field_validator("role_models", mode="before")
    @classmethod
    def _roles(cls, value: Any) -> dict[str, str]:
        return {role_key(name): str(model) for name, model in dict(value or {}).items()}

    # -- who does what ------------------------------------------------------
    def judges_for(self, factor: str, default_model: str) -> list[str]:
        return list(self.factor_models.get(factor) or self.judge_models or [default_model])

    def model_for_role(self, role: str, default_model: str) -> str:
        return (
            self.role_models.get(role)
            or self.debate_model
            or (self.judge_models[0] if self.judge_models else default_model)
        )

    # -- loading ------------------------------------------------------------
    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> "CoreConfig":
        return cls.model_validate(dict(data))

    @classmethod
    def from_file(cls, path: Union[str, Path]) -> "CoreConfig":
        path = Path(path)
        text = path.read_text(encoding="utf-8")
        if path.suffix.lower() in (".yaml", ".yml"):
            import yaml

            data = yaml.safe_load(text) or {}
        else:
            data = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError(f"{path}: a CoRE config must be a mapping")
        return cls.from_mapping(data)

    @classmethod
    def from_setting(cls, value: Optional[str]) -> "CoreConfig":
        """From the `core_config` setting: inline JSON, a file path, or nothing (the defaults)."""
        raw = (value or "").strip()
        if not raw:
            return cls()
        if raw.startswith("{"):
            return cls.from_mapping(json.loads(raw))
        return cls.from_file(raw)
