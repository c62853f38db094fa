"""Published checkpoints of the neural systems: what they look like on disk,
and fetching them (`python -m crs download NAME|all`).

Each system needs two folders in the models directory (`Settings.models_dir`):
`<family>_rec_<dataset>` and `<family>_conv_<dataset>`. CRS Arena publishes
all twelve in one archive (`DEFAULT_SOURCE`). A source can be
- an http(s) URL or a file:// URL / local path of a .tar(.gz|.bz2|.xz) archive,
- a local folder that already holds the checkpoint folders,
- `hf://owner/repo[@revision]`: a Hugging Face repository with the folders
  (or a models.tar.gz) at its top level.
Archives are checked (sha256 when known, readable to the end, expected files
present) and unpacked member by member into a staging folder: absolute
paths, `..`, links and special files are refused before anything is written.
The base models (tokenizers, DialoGPT, RoBERTa) come from the Hugging Face hub.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import socket
import tarfile
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Iterable, Optional
from urllib.parse import unquote, urlparse

from arena.runtime.imports import heavy_imports
from crs.neural.variants import VARIANTS

DEFAULT_SOURCE = "https://gustav1.ux.uis.no/crs_arena/models.tar.gz"
# sha256 of archives whose digest is published; none is for the default archive.
KNOWN_SHA256: dict[str, str] = {}
BASE_DIR_NAME = "base"
CHUNK = 1 << 20


class DownloadError(RuntimeError):
    """A download that failed; the message says why and what to do."""


def system_names() -> list[str]:
    return list(VARIANTS)


def folders_for(names: Iterable[str]) -> list[str]:
    out: list[str] = []
    for name in names:
        if name not in VARIANTS:
            raise DownloadError(f"unknown system {name!r}; known: {', '.join(VARIANTS)} (or 'all')")
        out.extend(f for f in VARIANTS[name].folders if f not in out)
    return out


def folder_problem(path: Path) -> Optional[str]:
    """Why `path` is not a usable checkpoint folder (None if it is)."""
    path = Path(path)
    if not path.is_dir():
        return "is missing"
    family, role = path.name.split("_")[:2]
    if family in ("kbrd", "unicrs") and role == "rec" or family == "unicrs":
        return None if (path / "model.pt").is_file() else "has no model.pt"
    if not (path / "config.json").is_file():
        return "has no config.json"
    if not any((path / f).is_file() for f in ("model.safetensors", "pytorch_model.bin", "model.safetensors.index.json", "pytorch_model.bin.index.json")):
        return "has no weights file (model.safetensors or pytorch_model.bin)"
    return None


def missing_folders(models_dir: Path, name: str) -> list[str]:
    return [f for f in VARIANTS[name].folders if folder_problem(Path(models_dir) / f)]


def base_dir(models_dir: Path, repo_id: str) -> Path:
    return Path(models_dir) / BASE_DIR_NAME / repo_id.replace("/", "--")


# -- sources --------------------------------------------------------------------------
@dataclass(frozen=True)
class Source:
    kind: str  # "http", "file", "dir", "hf"
    location: str
    revision: Optional[str] = None


def parse_source(text: str) -> Source:
    text = text.strip()
    if text.startswith("hf://"):
        repo, _, revision = text[len("hf://"):].partition("@")
        if repo.count("/") != 1:
            raise DownloadError(f"a Hugging Face source looks like hf://owner/repo[@revision], got {text!r}")
        return Source("hf", repo, revision or None)
    parsed = urlparse(text)
    if parsed.scheme in ("http", "https"):
        return Source("http", text)
    if parsed.scheme == "file":
        text = unquote(parsed.path)
    elif parsed.scheme and len(parsed.scheme) > 1:
        raise DownloadError(f"unsupported checkpoint source {text!r} (use http(s)://, file://, a path or hf://)")
    path = Path(text).expanduser()
    return Source("dir" if path.is_dir() else "file", str(path))


def resolve_source(explicit: Optional[str] = None, settings_source: Optional[str] = None) -> str:
    """A flag, else the setting ARENA_CHECKPOINT_SOURCE, else CRS Arena's published archive."""
    return explicit or settings_source or DEFAULT_SOURCE


# -- fetching ------------------------------------------------------------------------
def _offline_hint() -> str:
    return (
        "Download models.tar.gz on a machine with internet access and run "
        "`python -m crs download all --source /path/to/models.tar.gz`, "
        "or point ARENA_CHECKPOINT_SOURCE at a reachable copy."
    )


def probe(host: str, port: int, timeout: float) -> None:
    """Fail within `timeout` seconds when `host:port` cannot be reached (name lookup included)."""
    result: dict = {}

    def connect():
        try:
            with socket.create_connection((host, port), timeout=timeout):
                result["ok"] = True
        except OSError as exc:
            result["error"] = exc

    worker = threading.Thread(target=connect, daemon=True)
    worker.start()
    worker.join(timeout + 0.5)
    if not result.get("ok"):
        why = result.get("error") or f"no answer within {timeout:g} s"
        raise DownloadError(f"cannot reach {host}:{port} ({why}); this machine seems to be offline. {_offline_hint()}")


def fetch_http(url: str, target: Path, *, connect_timeout: float = 5.0, progress: bool = True) -> str:
    """Stream `url` into `target`; returns the sha256 of what was written."""
    import httpx
    from tqdm import tqdm

    parsed = urlparse(url)
    probe(parsed.hostname or "", parsed.port or (443 if parsed.scheme == "https" else 80), connect_timeout)
    digest = hashlib.sha256()
    timeout = httpx.Timeout(60.0, connect=connect_timeout)
    try:
        with httpx.stream("GET", url, timeout=timeout, follow_redirects=True) as response:
            if response.status_code != 200:
                raise DownloadError(f"{url} answered HTTP {response.status_code}")
            total = int(response.headers.get("content-length") or 0) or None
            with open(target, "wb") as out, tqdm(
                total=total, unit="B", unit_scale=True, desc=Path(parsed.path).name or "download", disable=not progress
            ) as bar:
                for chunk in response.iter_bytes(CHUNK):
                    out.write(chunk)
                    digest.update(chunk)
                    bar.update(len(chunk))
            if total is not None and target.stat().st_size != total:
                raise DownloadError(f"{url}: got {target.stat().st_size} of {total} bytes (connection dropped?)")
    except httpx.TimeoutException as exc:
        raise DownloadError(f"{url} timed out ({exc}). {_offline_hint()}") from None
    except httpx.HTTPError as exc:
        raise DownloadError(f"downloading {url} failed: {exc}. {_offline_hint()}") from None
    return digest.hexdigest()


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


# -- unpacking -----------------------------------------------------------------------
def _member_parts(name: str) -> tuple[str, ...]:
    if name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":"):
        raise DownloadError(f"unsafe archive member {name!r}: absolute path")
    parts = tuple(p for p in PurePosixPath(name.replace("\\", "/")).parts if p not in ("", "."))
    if ".." in parts:
        raise DownloadError(f"unsafe archive member {name!r}: leaves the target folder ('..')")
    return parts


def _wanted_root(parts: tuple[str, ...], wanted: set[str]) -> Optional[int]:
    """Index of the checkpoint folder name in a member path (top level or one folder down)."""
    for index, part in enumerate(parts[:2]):
        if part in wanted:
            return index
    return None


def unpack_archive(archive: Path, staging: Path, wanted: Iterable[str]) -> None:
    """Extract the members under the `wanted` folders of a tar archive into `staging`."""
    wanted = set(wanted)
    try:
        with tarfile.open(archive, "r:*") as tar:
            for member in tar:
                parts = _member_parts(member.name)
                if member.issym() or member.islnk():
                    raise DownloadError(f"unsafe archive member {member.name!r}: links are not accepted")
                if not (member.isfile() or member.isdir()):
                    raise DownloadError(f"unsafe archive member {member.name!r}: not a regular file or folder")
                root = _wanted_root(parts, wanted)
                if root is None:
                    continue
                target = staging.joinpath(*parts[root:])
                if not target.resolve().is_relative_to(staging.resolve()):
                    raise DownloadError(f"unsafe archive member {member.name!r}: leaves the target folder")
                if member.isdir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                source = tar.extractfile(member)
                with source, open(target, "wb") as out:
                    shutil.copyfileobj(source, out, CHUNK)
    except (tarfile.TarError, EOFError, OSError) as exc:
        if isinstance(exc, DownloadError):
            raise
        raise DownloadError(f"{archive} is not a readable tar archive or is incomplete: {exc}") from None


def _install(staging: Path, models_dir: Path, folders: list[str], origin: str) -> list[Path]:
    problems = [f"{f} {folder_problem(staging / f)}" for f in folders if folder_problem(staging / f)]
    if problems:
        raise DownloadError(f"{origin} does not hold the expected checkpoints: " + "; ".join(problems))
    installed = []
    for folder in folders:
        destination = models_dir / folder
        if destination.exists():
            shutil.rmtree(destination)
        os.replace(staging / folder, destination)
        installed.append(destination)
    return installed


def download_checkpoints(
    names: Iterable[str],
    models_dir: Path,
    source: Optional[str] = None,
    *,
    sha256: Optional[str] = None,
    force: bool = False,
    connect_timeout: float = 5.0,
    progress: bool = True,
) -> list[Path]:
    """Fetch the checkpoint folders of `names` into `models_dir`; returns the folders installed."""
    models_dir = Path(models_dir)
    wanted = folders_for(names)
    if not force:
        wanted = [f for f in wanted if folder_problem(models_dir / f)]
    if not wanted:
        return []
    source_text = resolve_source(source)
    parsed = parse_source(source_text)
    models_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".staging-", dir=models_dir) as tmp:
        staging = Path(tmp) / "unpacked"
        staging.mkdir()
        if parsed.kind == "dir":
            for folder in wanted:
                if (Path(parsed.location) / folder).is_dir():
                    shutil.copytree(Path(parsed.location) / folder, staging / folder)
            return _install(staging, models_dir, wanted, parsed.location)
        if parsed.kind == "hf":
            archive = _fetch_hf(parsed, staging, wanted)
            if archive is None:
                return _install(staging, models_dir, wanted, source_text)
        elif parsed.kind == "http":
            archive = Path(tmp) / "archive"
            digest = fetch_http(parsed.location, archive, connect_timeout=connect_timeout, progress=progress)
            _check_digest(digest, sha256 or KNOWN_SHA256.get(parsed.location), source_text)
        else:
            archive = Path(parsed.location)
            if not archive.is_file():
                raise DownloadError(f"checkpoint archive {archive} does not exist")
            if sha256 or KNOWN_SHA256.get(str(archive)):
                _check_digest(sha256_of(archive), sha256 or KNOWN_SHA256[str(archive)], source_text)
        unpack_archive(archive, staging, wanted)
        return _install(staging, models_dir, wanted, source_text)


def _check_digest(actual: str, expected: Optional[str], origin: str) -> None:
    if expected and actual.lower() != expected.strip().lower():
        raise DownloadError(f"{origin}: sha256 {actual} does not match the expected {expected}")


def _hub_offline_error(what: str, exc: Exception) -> DownloadError:
    with heavy_imports():
        from huggingface_hub import is_offline_mode

    offline = is_offline_mode()
    why = "HF_HUB_OFFLINE is set" if offline else f"{type(exc).__name__}: {exc}"
    return DownloadError(f"cannot fetch {what} from the Hugging Face hub ({why}). {_offline_hint()}")


def _fetch_hf(source: Source, staging: Path, folders: list[str]) -> Optional[Path]:
    """Folders straight from the repository, or its models.tar.gz (returned) if it has no folders."""
    with heavy_imports():
        from huggingface_hub import hf_hub_download, snapshot_download

    try:
        snapshot_download(
            source.location, revision=source.revision, local_dir=staging,
            allow_patterns=[f"{f}/*" for f in folders], etag_timeout=5,
        )
        if all((staging / f).is_dir() for f in folders):
            return None
        return Path(hf_hub_download(source.location, "models.tar.gz", revision=source.revision, local_dir=staging.parent))
    except Exception as exc:  # the hub client raises many kinds; all mean "not fetched"
        raise _hub_offline_error(f"hf://{source.location}", exc) from None


# Files each base model needs: the tokenizer always, the weights for UniCRS's models.
TOKENIZER_PATTERNS = ["config.json", "tokenizer.json", "tokenizer_config.json", "vocab.json", "merges.txt",
                      "special_tokens_map.json", "generation_config.json"]


def base_model_problem(path: Path, weights: bool) -> Optional[str]:
    if not path.is_dir():
        return "is missing"
    if not ((path / "tokenizer.json").is_file() or ((path / "vocab.json").is_file() and (path / "merges.txt").is_file())):
        return "has no tokenizer files (tokenizer.json or vocab.json + merges.txt)"
    if weights:
        if not (path / "config.json").is_file():
            return "has no config.json"
        if not any((path / f).is_file() for f in ("model.safetensors", "pytorch_model.bin")):
            return "has no weights (model.safetensors or pytorch_model.bin)"
    return None


def download_base_model(repo_id: str, models_dir: Path, *, weights: bool) -> Path:
    """Fetch a base model's tokenizer (and weights) from the hub into models_dir/base/."""
    with heavy_imports():
        from huggingface_hub import HfApi, snapshot_download

    target = base_dir(models_dir, repo_id)
    if base_model_problem(target, weights) is None:
        return target
    patterns = list(TOKENIZER_PATTERNS)
    try:
        if weights:
            files = set(HfApi().list_repo_files(repo_id))
            patterns.append("model.safetensors" if "model.safetensors" in files else "pytorch_model.bin")
        snapshot_download(repo_id, local_dir=target, allow_patterns=patterns, etag_timeout=5)
    except Exception as exc:
        raise _hub_offline_error(f"base model {repo_id}", exc) from None
    problem = base_model_problem(target, weights)
    if problem:
        raise DownloadError(f"base model {repo_id} downloaded to {target} but it {problem}")
    return target
