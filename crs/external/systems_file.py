"""The systems file (ARENA_SYSTEMS): systems added beside the built-ins, checked at start.

    systems:
      - name: my_crs                      # unique, also against the built-ins
        display_name: My CRS
        dataset: redial                   # its catalog: redial or opendialkg
        kind: http                        # a server speaking crs.external.contract
        url: http://127.0.0.1:9000
        timeout_s: 30                     # optional
        api_key_env: MY_CRS_KEY           # optional: sent as "Authorization: Bearer ..."
        ranking: true                     # optional: it serves POST /recommend (for recall)
      - name: kbrd_ievalm
        display_name: KBRD (iEvaLM server)
        dataset: redial
        kind: ievalm                      # an iEvaLM-CRS model server (POST / with context and message)
        url: http://127.0.0.1:5005
        timeout_s: 60                     # optional
      - name: chatcrs_qwen
        display_name: ChatCRS on Qwen2.5-7B
        dataset: redial
        kind: chatcrs                     # ChatCRS on an OpenAI-compatible endpoint of its own
        base_url: http://127.0.0.1:8000/v1
        model: Qwen/Qwen2.5-7B-Instruct
        api_key_env: VLLM_KEY             # optional: the variable holding its key, never the key
        prompt_file: prompts/mine.txt     # optional, relative to this file
        temperature: 0.2                  # optional

A file that cannot be used stops start-up with one line naming the entry and the field
(`SystemsFileError`, a `SettingsError`, so every command line reports it the same way).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal, Optional, Union

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from arena.catalogs.catalog import DATASETS
from arena.runtime.config import SettingsError

NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"


class SystemsFileError(SettingsError):
    """The systems file cannot be used; the message is one line naming the entry and the field."""


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=NAME_PATTERN)
    display_name: str = Field(min_length=1, max_length=80)
    dataset: str
    description: str = ""
    api_key_env: Optional[str] = Field(None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")

    @field_validator("dataset")
    @classmethod
    def _known_dataset(cls, value: str) -> str:
        if value not in DATASETS:
            raise ValueError(f"must be one of {', '.join(DATASETS)}")
        return value


class HttpEntry(_Entry):
    kind: Literal["http"]
    url: str = Field(pattern=r"^https?://\S+$")
    timeout_s: float = Field(30.0, gt=0, le=600)
    ranking: bool = False


class IEvaLMEntry(_Entry):
    """An iEvaLM-CRS model server (crs.external.ievalm_crs)."""

    kind: Literal["ievalm"]
    url: str = Field(pattern=r"^https?://\S+$")
    timeout_s: float = Field(30.0, gt=0, le=600)


class ChatCRSEntry(_Entry):
    kind: Literal["chatcrs"]
    base_url: str = Field(pattern=r"^https?://\S+$")
    model: str = Field(min_length=1)
    prompt_file: Optional[Path] = None
    temperature: float = Field(0.0, ge=0, le=2)
    timeout_s: float = Field(60.0, gt=0, le=600)


AnyEntry = Union[HttpEntry, IEvaLMEntry, ChatCRSEntry]
SystemEntry = Annotated[AnyEntry, Field(discriminator="kind")]
KINDS = ("http", "ievalm", "chatcrs")


class _SystemsFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    systems: list[SystemEntry] = Field(default_factory=list)


def read_systems_file(path: Path,
                      builtin_names: frozenset[str] = frozenset()) -> list[AnyEntry]:
    """The entries of `path`, checked; prompt files resolved against the file's folder."""
    where = f"ARENA_SYSTEMS {path}"
    try:
        document = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise SystemsFileError(f"{where}: cannot read the file ({exc.strerror or exc})") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" at line {mark.line + 1}" if mark is not None else ""
        raise SystemsFileError(f"{where}: not valid YAML{line}") from None
    if isinstance(document, list):
        document = {"systems": document}
    if not isinstance(document, dict):
        raise SystemsFileError(f"{where}: expected a list of systems under `systems:`")
    raw_entries = document.get("systems") if isinstance(document.get("systems"), list) else []
    try:
        entries = _SystemsFile.model_validate(document).systems
    except ValidationError as exc:
        raise SystemsFileError(f"{where}: {_describe(exc, raw_entries)}") from None
    seen: set[str] = set()
    for index, entry in enumerate(entries, 1):
        label = f"entry {index} ({entry.name})"
        if entry.name in builtin_names:
            raise SystemsFileError(f"{where}: {label}: field name: {entry.name!r} is already a built-in "
                                   "system")
        if entry.name in seen:
            raise SystemsFileError(f"{where}: {label}: field name: {entry.name!r} is used by an earlier "
                                   "entry")
        seen.add(entry.name)
        if isinstance(entry, ChatCRSEntry) and entry.prompt_file is not None:
            prompt = entry.prompt_file
            if not prompt.is_absolute():
                prompt = Path(path).parent / prompt
            if not prompt.is_file():
                raise SystemsFileError(f"{where}: {label}: field prompt_file: no file at {prompt}")
            entry.prompt_file = prompt
    return entries


def _describe(exc: ValidationError, raw_entries: list) -> str:
    """The first problem as `entry N (name): field F: what is wrong`."""
    error = exc.errors()[0]
    loc = list(error.get("loc", ()))
    if len(loc) >= 2 and loc[0] == "systems" and isinstance(loc[1], int):
        index = loc[1]
        raw = raw_entries[index] if index < len(raw_entries) else None
        name = raw.get("name") if isinstance(raw, dict) else None
        label = f"entry {index + 1}" + (f" ({name})" if name else "")
        # The discriminator's own level ("http", "ievalm", "chatcrs") is not a field.
        fields = [str(p) for p in loc[2:] if p not in KINDS]
        field = ".".join(fields) or "kind"
        message = error.get("msg", "is not valid")
        if error.get("type") == "union_tag_invalid" or (error.get("type") == "union_tag_not_found"):
            field, message = "kind", f"must be {', '.join(KINDS[:-1])} or {KINDS[-1]}"
        if error.get("type") == "extra_forbidden":
            message = "is not a known field"
        return f"{label}: field {field}: {message}"
    return f"field {'.'.join(str(p) for p in loc) or 'systems'}: {error.get('msg', 'is not valid')}"
