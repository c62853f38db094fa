"""Writing files so that readers never see half of one: the one atomic-write helper.

The content goes to a temporary file in the destination's folder, which then
replaces the destination in one rename; if writing fails the temporary file is
removed and the destination is left as it was.
"""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Iterator, Union

# mkstemp creates owner-only files; what we write (corpora, caches) is meant to be readable.
FILE_MODE = 0o644


@contextmanager
def atomic_path(path: Union[str, Path]) -> Iterator[Path]:
    """A temporary path to write (by any means, e.g. a library that takes a file name);
    it replaces `path` when the block ends without an error."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        os.chmod(tmp, FILE_MODE)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@contextmanager
def atomic_open(path: Union[str, Path], mode: str = "w", encoding: str = "utf-8",
                newline: Union[str, None] = None) -> Iterator[IO]:
    """`open(path, mode)` whose content appears at `path` all at once, when the block ends."""
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_open writes whole files: mode 'w' or 'wb', not {mode!r}")
    with atomic_path(path) as tmp:
        if mode == "wb":
            with open(tmp, "wb") as fh:
                yield fh
        else:
            with open(tmp, "w", encoding=encoding, newline=newline) as fh:
                yield fh
