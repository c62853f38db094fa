"""The server's memory comes from the C library's allocator, so what forgotten sessions freed goes back.

Measured with a soak (BENCHMARKS.md, Security and memory: 1,000 one-turn
sessions, then idle), the Python objects the sessions left alive come to under
1 MB, yet the process kept +47% over its start. What held the rest was free
memory that two allocators would not hand back:

- Python's own small-object allocator (pymalloc) takes memory in 1 MiB arenas
  and returns an arena only once every object in it is gone; sessions fill
  arenas with short-lived objects and leave a few long-lived ones scattered
  among them (Gradio's bookkeeping, caches, database rows), which pin them.
- pandas' strings live in Arrow buffers, and Arrow's default pool (mimalloc)
  keeps what the leaderboard's job freed in its own reserved region.

With `PYTHONMALLOC=malloc` and `ARROW_DEFAULT_MEMORY_POOL=system` both come
from glibc's malloc, and `malloc_trim`, which the idle sweep calls
(`release_free_memory`, from `webapp.sessions.idle_sessions`; the Download
tab calls it after each export), returns each free page wherever it lies.
`MALLOC_MMAP_THRESHOLD_` (256 KiB, `arena.runtime.config.SERVER_MMAP_THRESHOLD_BYTES`)
keeps glibc from raising the size from which a block gets its own mapping:
by default the first big buffer freed raises it (up to 32 MiB), and the big
transient buffers of exports and board runs then come from the heaps, where
freeing them leaves holes among live blocks until the next trim.

Both are read only when the interpreter (or Arrow) starts, so the server's
start (`python app.py`, `crs-arena serve`) replaces its own process with a fresh
interpreter that has them set (`restart_on_system_allocator`): `os.execve`, with
the same command line and the same process id, so a supervisor (a Space,
systemd, Docker) sees one process throughout. A value already in the
environment is kept: `PYTHONMALLOC=pymalloc` keeps Python's allocator (the
variables are `arena.runtime.config.SERVER_ALLOCATORS`). Only on Linux with glibc,
which has `malloc_trim`.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os
import platform
import sys
from typing import Sequence

from arena.runtime.config import server_allocator_environment

log = logging.getLogger(__name__)


def has_malloc_trim(system: str, libc: str) -> bool:
    """Whether a platform (`platform.system()`, `platform.libc_ver()[0]`) has glibc's `malloc_trim`,
    without which the C allocator would give nothing back either."""
    return system == "Linux" and libc == "glibc"


def restart_command(orig_argv: Sequence[str], executable: str) -> list[str]:
    """The command line that started this interpreter (`sys.orig_argv`: its options, then `-m module`,
    `-c code` or the script, then the arguments), run by `executable`."""
    return [executable, *list(orig_argv)[1:]]


def restart_on_system_allocator() -> None:
    """Start this program again on the C allocator (`arena.runtime.config.server_allocator_environment`), unless
    PYTHONMALLOC is set already or the platform has no `malloc_trim`; returns only when it does not restart.
    Call it first thing, before the app's imports."""
    if not has_malloc_trim(platform.system(), platform.libc_ver()[0]):
        return
    environment = server_allocator_environment()
    if environment is None:
        return
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, restart_command(sys.orig_argv, sys.executable), environment)


def _malloc_trim() -> bool:
    """Return freed heap pages to the system (glibc); False where there is no `malloc_trim`."""
    name = ctypes.util.find_library("c")
    try:
        trim = getattr(ctypes.CDLL(name), "malloc_trim", None) if name else None
    except OSError:
        trim = None
    if trim is None:
        return False
    trim(0)
    return True


def release_free_memory() -> None:
    """Hand memory freed by the process back to the system: Arrow's pool lets go of what it keeps unused
    (when pandas loaded it), then glibc's `malloc_trim` returns every free page of its heaps."""
    arrow = sys.modules.get("pyarrow")
    if arrow is not None:
        try:
            arrow.default_memory_pool().release_unused()
        except Exception as exc:  # an older Arrow without it: malloc_trim still runs
            log.debug("Arrow's pool kept its unused memory: %s", exc)
    _malloc_trim()
