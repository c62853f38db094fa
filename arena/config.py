"""Settings from the environment (and command-line flags layered on top).

Every knob has an environment variable so that the app, the command-line
tools and CI are configured the same way. Secrets (API keys) are read where
they are used and never copied into settings that get logged or stored.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping, Optional, Union

PROJECT_ROOT = Path(__file__).resolve().parent.parent
ASSETS_DIR = PROJECT_ROOT / "assets"


def _default_cache_dir(env: Mapping[str, str]) -> Path:
    if env.get("ARENA_CACHE_DIR"):
        return Path(env["ARENA_CACHE_DIR"])
    base = env.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "crs-arena"


def _int(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name)
    if raw in (None, ""):
        return default
    try:
        return int(raw)
    except ValueError:
        raise ValueError(f"{name} must be an integer, got {raw!r}") from None


def _float(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name)
    if raw in (None, ""):
        return default
    try:
        return float(raw)
    except ValueError:
        raise ValueError(f"{name} must be a number, got {raw!r}") from None


LLM_PROVIDERS = ("openai", "local", "fake")
DEVICES = ("auto", "cpu", "cuda")  # as arena.devices.DEVICES (that module imports torch lazily)


def db_location(value: Union[str, Path]) -> Union[Path, str]:
    """ARENA_DB as the store takes it: a `postgresql://` (or any `scheme://`) URL stays text, else a file path."""
    if isinstance(value, str) and "://" in value.split("?", 1)[0][:40]:
        return value
    return Path(value)


@dataclass(frozen=True)
class Settings:
    # A SQLite file path, or a database URL such as postgresql://user:pass@host/arena (kept as text).
    db_path: Union[Path, str] = Path("data/arena.sqlite3")
    cache_dir: Path = field(default_factory=lambda: _default_cache_dir(os.environ))
    llm_provider: str = "local"
    llm_model: Optional[str] = None
    llm_base_url: Optional[str] = None
    llm_timeout_s: float = 60.0
    llm_max_retries: int = 4
    llm_concurrency: int = 8
    llm_cache: bool = True
    max_message_chars: int = 2000
    max_turns: int = 20
    turn_timeout_s: float = 120.0
    models_dir: Optional[Path] = None
    checkpoint_source: Optional[str] = None
    device: str = "auto"  # where neural systems and embedding models run: auto, cpu or cuda

    @classmethod
    def from_env(cls, env: Optional[Mapping[str, str]] = None, **overrides: Any) -> "Settings":
        env = os.environ if env is None else env
        base_url = env.get("OPENAI_BASE_URL") or None
        provider = (env.get("ARENA_LLM_PROVIDER") or "").strip().lower()
        if not provider:
            # An endpoint (or a key for the default OpenAI endpoint) means remote;
            # otherwise the offline in-process model.
            provider = "openai" if (base_url or env.get("OPENAI_API_KEY")) else "local"
        if provider not in LLM_PROVIDERS:
            raise ValueError(
                f"ARENA_LLM_PROVIDER must be one of {', '.join(LLM_PROVIDERS)}, got {provider!r}"
            )
        cache_dir = _default_cache_dir(env)
        models_dir = Path(env["ARENA_MODELS_DIR"]) if env.get("ARENA_MODELS_DIR") else cache_dir / "models"
        settings = cls(
            db_path=db_location(env.get("ARENA_DB") or "data/arena.sqlite3"),
            cache_dir=cache_dir,
            llm_provider=provider,
            llm_model=env.get("ARENA_LLM_MODEL") or None,
            llm_base_url=base_url,
            llm_timeout_s=_float(env, "ARENA_LLM_TIMEOUT", 60.0),
            llm_max_retries=_int(env, "ARENA_LLM_RETRIES", 4),
            llm_concurrency=_int(env, "ARENA_LLM_CONCURRENCY", 8),
            llm_cache=(env.get("ARENA_LLM_CACHE", "1").lower() not in ("0", "false", "no")),
            max_message_chars=_int(env, "ARENA_MAX_MESSAGE_CHARS", 2000),
            max_turns=_int(env, "ARENA_MAX_TURNS", 20),
            turn_timeout_s=_float(env, "ARENA_TURN_TIMEOUT", 120.0),
            models_dir=models_dir,
            checkpoint_source=env.get("ARENA_CHECKPOINT_SOURCE") or None,
            device=(env.get("ARENA_DEVICE") or "auto").strip().lower(),
        )
        if settings.device not in DEVICES:
            raise ValueError(f"ARENA_DEVICE must be one of {', '.join(DEVICES)}, got {settings.device!r}")
        overrides = {k: v for k, v in overrides.items() if v is not None}
        if "db_path" in overrides:
            overrides["db_path"] = db_location(overrides["db_path"])
        for key in ("cache_dir", "models_dir"):
            if key in overrides:
                overrides[key] = Path(overrides[key])
        return replace(settings, **overrides)

    @property
    def llm_model_name(self) -> str:
        if self.llm_model:
            return self.llm_model
        return {"openai": "gpt-4o-mini", "local": "SmolLM2-135M-Instruct", "fake": "fake"}[self.llm_provider]
