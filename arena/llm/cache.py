"""On-disk cache of LLM responses, one small JSON file per request.

Files are written to a temporary name and renamed into place, so a reader
never sees half a file and concurrent writers of the same key are harmless
(both write the same answer). Keys never include credentials.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Optional

from arena.runtime.files import atomic_open


class ResponseCache:
    def __init__(self, directory: Path | str):
        self.directory = Path(directory)

    @staticmethod
    def key(provider: str, parts: dict[str, Any]) -> str:
        blob = json.dumps({"provider": provider, **parts}, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> Optional[dict[str, Any]]:
        path = self._path(key)
        try:
            with open(path, encoding="utf-8") as fh:
                data = json.load(fh)
        except (FileNotFoundError, json.JSONDecodeError, OSError):
            return None
        return data if isinstance(data, dict) and isinstance(data.get("text"), str) else None

    def put(self, key: str, value: dict[str, Any]) -> None:
        path = self._path(key)
        with atomic_open(path) as fh:
            json.dump(value, fh, ensure_ascii=False)

    def clear(self) -> None:
        for path in self.directory.glob("*/*.json"):
            path.unlink(missing_ok=True)
