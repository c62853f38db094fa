"""Settings: the one place that reads the environment.

Every knob is a field of `Settings` with an environment variable (`ARENA_` plus
the field name, or the alias given below); the README's configuration table
lists them all. Entry points (the app, the command lines) build one `Settings`
with `Settings.from_env()` (flags passed as overrides) and hand it, or the
values it holds, to the code below them; library code never reads the
environment itself. A bad value stops start-up with one line naming the
variable. Secrets (the API key, the pseudonym salt) are `SecretStr`: they do
not show in `repr()` or logs.

`Settings(...)` built directly (as tests do) uses the defaults and the given
values only; `Settings.from_env(env)` reads `env` (default: `os.environ`).
"""

from __future__ import annotations

import functools
import ipaddress
import os
import sys
from contextvars import ContextVar
from pathlib import Path
from typing import Annotated, Any, Callable, Literal, Mapping, Optional, Union

from pydantic import (
    AliasChoices,
    Field,
    PrivateAttr,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

PROJECT_ROOT = Path(__file__).resolve().parents[2]
ASSETS_DIR = PROJECT_ROOT / "assets"

ENV_PREFIX = "ARENA_"
# A Hugging Face Space's persistent storage, mounted here when the Space has it (SPACE_ID is set on Spaces).
SPACE_VOLUME = Path("/data")
LLM_PROVIDERS = ("openai", "local", "fake")
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
DEVICES = ("auto", "cpu", "cuda")  # as arena.runtime.devices.DEVICES (that module imports torch lazily)

# The environment `from_env` reads while it builds one Settings (None: defaults and arguments only).
_ENVIRONMENT: ContextVar[Optional[Mapping[str, str]]] = ContextVar("arena_settings_environment", default=None)


class SettingsError(ValueError):
    """A configuration value that cannot be used; the message is one line naming the variable."""


class _MappingEnvSource(EnvSettingsSource):
    """pydantic-settings' environment source over a given mapping instead of `os.environ`."""

    def __init__(self, settings_cls: type[BaseSettings], environment: Mapping[str, str]):
        self._environment = environment
        super().__init__(settings_cls)

    def _load_env_vars(self) -> Mapping[str, Optional[str]]:
        from pydantic_settings.sources.utils import parse_env_vars

        return parse_env_vars(
            self._environment, self.case_sensitive, self.env_ignore_empty, self.env_parse_none_str
        )


def _env(name: str) -> Any:
    """A field read from a variable that is not `ARENA_<FIELD>` (the field name still works as an
    argument)."""
    return AliasChoices(name)


def default_cache_dir(environment: Optional[Mapping[str, str]] = None) -> Path:
    environment = os.environ if environment is None else environment
    base = environment.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "crs-arena"


def writable_dir(path: Path) -> bool:
    return path.is_dir() and os.access(path, os.W_OK | os.X_OK)


def db_location(value: Union[str, Path]) -> Union[Path, str]:
    """ARENA_DB as the store takes it: a `postgresql://` (or any `scheme://`) URL stays text, else a file
    path."""
    if isinstance(value, str) and "://" in value.split("?", 1)[0][:40]:
        return value
    return Path(value)


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, env_ignore_empty=True, frozen=True, extra="ignore",
        validate_by_name=True, validate_by_alias=True, case_sensitive=False,
    )

    # -- storage ---------------------------------------------------------------
    # A SQLite file path, or a database URL such as postgresql://user:pass@host/arena (kept as text).
    db_path: Union[Path, str] = Field(Path("data/arena.sqlite3"), validation_alias=_env("ARENA_DB"),
                                      description="SQLite database path or database URL")
    cache_dir: Path = Field(default_factory=lambda: default_cache_dir(_ENVIRONMENT.get()),
                            description="LLM response cache, item embeddings, MovieLens files, checkpoints")
    # A persistent volume: the database and the caches go there unless ARENA_DB / ARENA_CACHE_DIR say
    # otherwise. None: the Space's /data when it is mounted and writable, else nothing.
    data_dir: Optional[Path] = None
    # -- mirroring the store to a Hub dataset (webapp/hub_mirror.py) -----------------------
    hub_dataset: Optional[str] = None  # owner/name; None: no mirror
    hub_private: bool = True  # a dataset the mirror creates is private
    hub_token: Optional[SecretStr] = Field(None, validation_alias=_env("HF_TOKEN"))
    hub_endpoint: Optional[str] = Field(None, validation_alias=_env("HF_ENDPOINT"))  # None: huggingface.co
    hub_push_every_s: float = Field(300.0, gt=0, validation_alias=_env("ARENA_HUB_PUSH_EVERY"))
    replica_id: Optional[str] = None  # names this replica's shards; None: the host name
    space_id: Optional[str] = Field(None, validation_alias=_env("SPACE_ID"))  # set by Spaces
    # -- Prolific's researcher API (arena/crowd/prolific_api.py) ------------------------------
    # The token is read from the environment only, never from a file or a flag, and never stored.
    prolific_token: Optional[SecretStr] = Field(None, validation_alias=_env("PROLIFIC_API_TOKEN"))
    prolific_url: str = Field("https://api.prolific.com/api/v1/", description="Prolific's API address")
    # Signs Prolific's webhook deliveries (webapp/platform_webhook.py); without it the route answers 404.
    prolific_webhook_secret: Optional[SecretStr] = Field(None,
                                                         validation_alias=_env("PROLIFIC_WEBHOOK_SECRET"))
    # Seconds between two checks that push the arena's place counts to Prolific
    # (webapp/sessions/place_sync.py).
    prolific_places_every_s: float = Field(30.0, gt=0, validation_alias=_env("ARENA_PROLIFIC_PLACES_EVERY"))
    # -- LLM -------------------------------------------------------------------
    llm_provider: Literal["openai", "local", "fake"] = "local"
    llm_model: Optional[str] = None
    llm_base_url: Optional[str] = Field(None, validation_alias=_env("OPENAI_BASE_URL"))
    openai_api_key: Optional[SecretStr] = Field(None, validation_alias=_env("OPENAI_API_KEY"))
    llm_timeout_s: float = Field(60.0, gt=0, validation_alias=_env("ARENA_LLM_TIMEOUT"))
    llm_max_retries: int = Field(4, ge=0, validation_alias=_env("ARENA_LLM_RETRIES"))
    llm_concurrency: int = Field(8, ge=1)
    llm_cache: bool = True
    llm_local_backend: Literal["auto", "ctranslate2", "llama_cpp", "transformers"] = "auto"
    llm_threads: Optional[int] = Field(None, ge=1)  # None: half the cores
    fake_reply: str = "This is a scripted reply."
    # -- systems ---------------------------------------------------------------------
    # A YAML file of systems added beside the built-ins (crs/external, docs/bring-your-own-crs.md).
    systems_file: Optional[Path] = Field(None, validation_alias=_env("ARENA_SYSTEMS"))
    # -- conversations -----------------------------------------------------------
    max_message_chars: int = Field(2000, ge=1)
    max_turns: int = Field(20, ge=1)
    turn_timeout_s: float = Field(120.0, gt=0, validation_alias=_env("ARENA_TURN_TIMEOUT"))
    # A browser session idle this long is forgotten by the server (webapp.sessions.idle_sessions).
    session_idle_s: float = Field(3600.0, ge=30, validation_alias=_env("ARENA_SESSION_IDLE"))
    # ... and a closed page's session (its heartbeat ended, none open since) this long after it closed.
    closed_session_grace_s: float = Field(60.0, ge=10, validation_alias=_env("ARENA_CLOSED_SESSION_GRACE"))
    # -- neural systems ------------------------------------------------------------
    models_dir: Optional[Path] = None  # None: <cache_dir>/models
    checkpoint_source: Optional[str] = None
    neural_threads: int = Field(1, ge=0)  # 0: torch's default
    neural_max_new_tokens: int = Field(64, ge=0)  # 0: the originals' bounds
    neural_quantize: Literal["auto", "1", "0"] = "auto"
    # arena: the project's choices; reference: the inputs and outputs of the code CRS Arena ran
    neural_mode: Literal["arena", "reference"] = "arena"
    # -- retrieval and scoring ---------------------------------------------------------
    embed_threads: int = Field(1, ge=0)  # 0: torch's default
    score_metrics: Optional[str] = None  # None: the app's default for the provider
    acts_annotator: Optional[Literal["offline", "llm"]] = None  # None: chosen by the provider
    acts_runtime: Literal["onnxruntime", "torch"] = "onnxruntime"  # what runs the offline act model
    acts_threads: int = Field(1, ge=0)  # 0: one per core
    core_config: Optional[str] = None  # a JSON file path or inline JSON
    pseudonym_salt: Optional[SecretStr] = None  # None: the database's own random salt
    rating_form: Optional[Path] = None  # aspect rating form (YAML); None: assets/ratings/aspects_v1.yaml
    scorer_workers: int = Field(2, ge=1)
    # how long a scoring job's claim holds unrenewed: a killed replica's jobs are retaken after this
    scoring_lease_s: float = Field(60.0, gt=0)
    # how long an evaluation run's claim holds unrenewed (its owner renews every second), and how often
    # each app process looks for runs whose owner died, to resume them: a run is resumed within their sum
    run_lease_s: float = Field(30.0, gt=0)
    run_resume_s: float = Field(5.0, gt=0)
    show_scores: bool = True  # participants see their finished conversation's scores, in plain words
    # -- public deployment ---------------------------------------------------------------
    # Researcher app (python app.py --admin): who may log in. Passwords never appear in repr().
    admin_users: Annotated[tuple[str, ...], NoDecode] = ()
    admin_password: Optional[str] = Field(None, repr=False)
    admin_password_hash: Optional[str] = Field(None, repr=False)
    admin_port: int = Field(7861, ge=1, le=65535)
    # Failed researcher logins per client address: each failure after the first few waits longer,
    # and this many lock the address out for `login_lockout_s` (webapp/protection/login_limits.py).
    login_max_failures: int = Field(10, ge=1)
    login_lockout_s: float = Field(900.0, gt=0, validation_alias=_env("ARENA_LOGIN_LOCKOUT"))
    # How long a researcher stays logged in; logins are kept in the store, so every replica knows them.
    admin_login_ttl_s: float = Field(12 * 3600.0, gt=0, validation_alias=_env("ARENA_ADMIN_LOGIN_TTL"))
    # Honest votes: limits per user (browser session) and per IP address within a window.
    limit_window_s: float = Field(3600.0, gt=0, validation_alias=_env("ARENA_LIMIT_WINDOW"))
    max_battles_per_user: int = Field(20, ge=0)
    max_battles_per_ip: int = Field(60, ge=0)
    max_votes_per_user: int = Field(20, ge=0)
    max_votes_per_ip: int = Field(60, ge=0)
    # A vote is flagged (kept, but left out of the leaderboard by default) when its IP or user
    # cast more than `burst_votes` votes within `burst_window_s`, or when it came less than
    # `min_battle_s` after the battle started.
    burst_votes: int = Field(5, ge=1)
    burst_window_s: float = Field(120.0, gt=0, validation_alias=_env("ARENA_BURST_WINDOW"))
    min_battle_s: float = Field(10.0, ge=0, validation_alias=_env("ARENA_MIN_BATTLE_SECONDS"))
    file_cache_max_age_s: int = Field(3600, ge=1, validation_alias=_env("ARENA_FILE_CACHE_MAX_AGE"))
    # Measurements a public arena can trust (issue 26). Satisfied/frustrated labels are limited like
    # votes: rated conversations (Chat and Battle panes) per session and per address within the window;
    # a label is flagged (kept, left out of satisfaction) after a burst or a conversation shorter than
    # `min_user_turns` user turns.
    max_rated_per_user: int = Field(20, ge=0)
    max_rated_per_ip: int = Field(60, ge=0)
    burst_labels: int = Field(5, ge=1)
    # New study workers (worker ids seen for the first time) per session and per address within the
    # window (webapp/protection/study_limits.py).
    max_study_workers_per_user: int = Field(3, ge=0)
    max_study_workers_per_ip: int = Field(30, ge=0)
    min_user_turns: int = Field(2, ge=1)
    # a system's rating and rank show only after this many battles (LMArena hides models below a count)
    leaderboard_min_votes: int = Field(10, ge=0)
    # the public board is published from a snapshot of the store taken at most this often (seconds); 0: live
    leaderboard_snapshot_every_s: float = Field(
        0.0, ge=0, validation_alias=_env("ARENA_LEADERBOARD_SNAPSHOT_EVERY")
    )
    # endpoint calls scoring may make per hour (0: no bound) and judge retries per dialogue
    scoring_budget: int = Field(0, ge=0)
    judge_retries: int = Field(2, ge=0)
    # largest upload the researcher app accepts (bytes); the public app accepts none
    max_upload_bytes: int = Field(20_000_000, ge=1, validation_alias=_env("ARENA_MAX_UPLOAD_BYTES"))
    # where neural systems and embedding models run: auto (CUDA when available), cpu or cuda
    device: Literal["auto", "cpu", "cuda"] = "auto"
    # -- serving -----------------------------------------------------------------------
    # Proxies (addresses or networks, comma-separated) whose X-Forwarded-For header names the
    # client: the only way a forwarding header is believed. Unset: none, loopback included; on a Space,
    # the private networks its front proxy connects from (webapp/one_port.py, docs/security.md); `none`:
    # none even there.
    trusted_proxies: Annotated[Optional[tuple[str, ...]], NoDecode] = None
    # ARENA_HOST / ARENA_PORT win; else what a Space (or any Gradio host) sets.
    host: str = Field("127.0.0.1", validation_alias=AliasChoices("ARENA_HOST", "GRADIO_SERVER_NAME"))
    port: int = Field(7860, ge=1, le=65535, validation_alias=AliasChoices("ARENA_PORT", "GRADIO_SERVER_PORT"))
    # Load the systems a battle can draw, the act model and the recommender in the background as soon as
    # the app serves (webapp.warm_start); a turn for a system still loading waits this long for it.
    warm_start: bool = True
    warm_wait_s: float = Field(180.0, gt=0, validation_alias=_env("ARENA_WARM_WAIT"))
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"] = "INFO"
    # Where `from_env` read, for variables a file names rather than this class (the key of a
    # system in ARENA_SYSTEMS): "process" (os.environ, read when asked, so nothing is copied and
    # the object still pickles), a given mapping, or None when built directly. See `secret_variable`.
    _environment: Union[None, str, dict[str, str]] = PrivateAttr(None)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ):
        environment = _ENVIRONMENT.get()
        if environment is None:
            return (init_settings,)
        return (init_settings, _MappingEnvSource(settings_cls, environment))

    @field_validator(
        "llm_provider", "llm_local_backend", "acts_annotator", "acts_runtime", "device", mode="before"
    )
    @classmethod
    def _lower(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("admin_users", mode="before")
    @classmethod
    def _comma_list(cls, value: Any) -> Any:
        if isinstance(value, str):
            return tuple(part.strip() for part in value.split(",") if part.strip())
        return value

    @field_validator("trusted_proxies", mode="before")
    @classmethod
    def _proxy_list(cls, value: Any) -> Any:
        if value is None:
            return None
        parts = (
            [p.strip() for p in value.split(",")]
            if isinstance(value, str)
            else [str(p).strip() for p in value]
        )
        parts = [p for p in parts if p and p.lower() != "none"]  # `none`: no proxy, even on a Space
        for part in parts:  # `*` is refused: believing any peer lets a client name its own address
            try:
                ipaddress.ip_network(part, strict=False)
            except ValueError:
                raise ValueError(f"{part!r} is not an IP address or network") from None
        return tuple(parts)

    @field_validator("prolific_url", mode="before")
    @classmethod
    def _web_address(cls, value: Any) -> Any:
        if isinstance(value, str) and not value.strip().startswith(("https://", "http://")):
            raise ValueError(f"{value[:60]!r} is not an http(s) address")
        return value.strip() if isinstance(value, str) else value

    @field_validator("db_path", mode="before")
    @classmethod
    def _db_location(cls, value: Any) -> Any:
        return db_location(value)

    @field_validator("log_level", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        return value.strip().upper() if isinstance(value, str) else value

    @field_validator("neural_mode", mode="before")
    @classmethod
    def _mode_choice(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("neural_quantize", mode="before")
    @classmethod
    def _quantize_choice(cls, value: Any) -> Any:
        choices = {"auto": "auto", "1": "1", "true": "1", "yes": "1", "0": "0", "false": "0", "no": "0"}
        if isinstance(value, bool):
            return "1" if value else "0"
        return choices.get(str(value).strip().lower(), value)

    @model_validator(mode="before")
    @classmethod
    def _derived_defaults(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        provider_keys = ("llm_provider", "ARENA_LLM_PROVIDER", "arena_llm_provider")
        if not any(data.get(key) for key in provider_keys) and _ENVIRONMENT.get() is not None:
            # An endpoint (or a key for the default OpenAI endpoint) means remote; else the in-process model.
            remote = any(data.get(key) for key in ("llm_base_url", "OPENAI_BASE_URL", "openai_base_url",
                                                    "openai_api_key", "OPENAI_API_KEY"))
            data["llm_provider"] = "openai" if remote else "local"
        return data

    @model_validator(mode="after")
    def _data_dir_defaults(self) -> "Settings":
        if _ENVIRONMENT.get() is None:
            return self
        if self.data_dir is None and self.space_id and writable_dir(SPACE_VOLUME):
            object.__setattr__(self, "data_dir", SPACE_VOLUME)
        if self.data_dir is not None:
            if "db_path" not in self.model_fields_set:
                object.__setattr__(self, "db_path", self.data_dir / "arena.sqlite3")
            if "cache_dir" not in self.model_fields_set:
                object.__setattr__(self, "cache_dir", self.data_dir / "cache")
        return self

    @model_validator(mode="after")
    def _models_dir_default(self) -> "Settings":
        if self.models_dir is None and _ENVIRONMENT.get() is not None:
            object.__setattr__(self, "models_dir", self.cache_dir / "models")
        return self

    @classmethod
    def from_env(cls, env: Optional[Mapping[str, str]] = None, **overrides: Any) -> "Settings":
        """Settings from `env` (default: the process environment); `overrides` (command-line
        flags) win over it, and None means "not given". Raises SettingsError (one line)."""
        environment = os.environ if env is None else env
        given = {k: v for k, v in overrides.items() if v is not None}
        token = _ENVIRONMENT.set(environment)
        try:
            settings = cls(**given)
            settings._environment = "process" if env is None else dict(env)
            return settings
        except ValidationError as exc:
            raise SettingsError(describe(exc)) from None
        finally:
            _ENVIRONMENT.reset(token)

    def secret_variable(self, variable: str) -> Optional[SecretStr]:
        """The value of an environment variable a file names (a system's key variable in
        ARENA_SYSTEMS) as a secret; None when unset or empty, or when built without `from_env`."""
        env = self._environment  # "process" (the only text it holds), a copy of the variables, or None
        source: Mapping[str, str] = os.environ if isinstance(env, str) else (env or {})
        value = source.get(variable)
        return SecretStr(value) if value else None

    @property
    def llm_model_name(self) -> str:
        if self.llm_model:
            return self.llm_model
        return {"openai": "gpt-4o-mini", "local": "SmolLM2-135M-Instruct", "fake": "fake"}[self.llm_provider]


def reports_bad_settings(main: Callable[..., Any]) -> Callable[..., Any]:
    """For a command line's `main`: a bad setting ends it with one line on stderr and exit status 2."""

    @functools.wraps(main)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return main(*args, **kwargs)
        except SettingsError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2

    return run


def offline_model_environment() -> None:
    """What the embedding and tokenizer libraries read from the process environment, set
    once before they load: never reach the model hub at run time, no tokenizer thread pools
    (they warn and misbehave after a fork). Values someone set explicitly are kept."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


# What the server's interpreter and Arrow read when they start: Python objects and Arrow's buffers (pandas'
# strings) both from glibc's malloc, whose freed pages the idle sweep hands back (`webapp.memory_allocator`).
# MALLOC_MMAP_THRESHOLD_ fixes the size from which glibc maps a block on its own (and unmaps it when freed):
# by default that size rises to the largest block freed so far, up to 32 MiB, so once an export or a board
# run has freed one big buffer, later big buffers are carved out of the heaps and leave them fragmented.
SERVER_MMAP_THRESHOLD_BYTES = 256 * 1024
SERVER_ALLOCATORS = {"PYTHONMALLOC": "malloc", "ARROW_DEFAULT_MEMORY_POOL": "system",
                     "MALLOC_MMAP_THRESHOLD_": str(SERVER_MMAP_THRESHOLD_BYTES)}


def server_allocator_environment(environ: Optional[Mapping[str, str]] = None) -> Optional[dict[str, str]]:
    """The environment to start the server again with, on the C allocator (`SERVER_ALLOCATORS`; values
    someone set explicitly are kept), or None when PYTHONMALLOC is set already: the restarted server, or
    an allocator chosen by whoever started it (`PYTHONMALLOC=pymalloc` keeps Python's own)."""
    environ = os.environ if environ is None else environ
    if environ.get("PYTHONMALLOC"):
        return None
    return {**SERVER_ALLOCATORS, **environ}


def deterministic_cuda_environment() -> None:
    """What CUDA's matrix library reads to pick deterministic kernels; must be set before the first
    CUDA call (training the act model reproduces bit for bit on an accelerator with it)."""
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")


def worker_environment(import_paths: list[str]) -> dict[str, str]:
    """What a worker process on another machine needs from this one's environment: the import
    path (plus these `import_paths`), offline model loading and the LLM endpoint and key."""
    env = {"PYTHONPATH": os.pathsep.join(dict.fromkeys(
        import_paths + os.environ.get("PYTHONPATH", "").split(os.pathsep)))}
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "OPENAI_BASE_URL", "OPENAI_API_KEY"):
        if os.environ.get(name):
            env[name] = os.environ[name]
    return env


def env_name(field: str) -> str:
    """The environment variable of a Settings field."""
    alias = Settings.model_fields[field].validation_alias
    if isinstance(alias, AliasChoices):
        return str(alias.choices[0])
    return ENV_PREFIX + field.upper()


def environment_variables() -> dict[str, str]:
    """Every variable Settings reads, mapped to its field."""
    return {env_name(name): name for name in Settings.model_fields}


_PHRASES = {
    "int_parsing": "must be an integer",
    "int_from_float": "must be an integer",
    "float_parsing": "must be a number",
    "bool_parsing": "must be 1 or 0 (true/false, yes/no)",
}


def _phrase(item: Mapping[str, Any]) -> str:
    kind, context = item.get("type", ""), item.get("ctx") or {}
    if kind in _PHRASES:
        return _PHRASES[kind]
    if kind == "literal_error":
        return f"must be one of {context.get('expected')}"
    bounds = {"greater_than_equal": ">=", "greater_than": ">", "less_than_equal": "<=", "less_than": "<"}
    if kind in bounds:
        limit = next(iter(context.values()), "?")
        return f"must be {bounds[kind]} {limit}"
    return " ".join(str(item.get("msg", "is not valid")).split())


def describe(error: ValidationError) -> str:
    """A validation error as one line: which variable, what is wrong, what it got."""
    names = {
        **{k.lower(): v for k, v in environment_variables().items()},
        **{n: n for n in Settings.model_fields},
    }
    parts = []
    for item in error.errors():
        key = str(item["loc"][0]) if item.get("loc") else ""
        field = names.get(key.lower(), key)
        variable = env_name(field) if field in Settings.model_fields else key
        parts.append(f"{variable} {_phrase(item)}, got {item.get('input')!r}")
    return "invalid configuration: " + "; ".join(parts)
