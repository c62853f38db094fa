"""The server's start runs it on the C allocator, in the same process, and the idle sweep's release hands
freed memory back (`webapp.memory_allocator`; the soak in benchmarks/soak_sessions.py measures the whole)."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from arena.runtime.config import SERVER_ALLOCATORS, server_allocator_environment
from webapp.memory_allocator import has_malloc_trim, restart_command

ROOT = Path(__file__).resolve().parents[2]
GLIBC = platform.system() == "Linux" and platform.libc_ver()[0] == "glibc"

# Run by every interpreter that starts (found through PYTHONPATH): which allocator it got, in which process.
REPORT_AT_START = textwrap.dedent("""
    import os, sys, tempfile
    with tempfile.TemporaryFile() as caught:  # the statistics go to file descriptor 2 itself
        saved = os.dup(2)
        os.dup2(caught.fileno(), 2)
        try:
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        caught.seek(0)
        stats = caught.read().decode(errors="replace")
    # only Python's own allocator reports its small-block classes
    allocator = "pymalloc" if "Small block threshold" in stats else "malloc"
    print("started:", os.getpid(), allocator, os.environ.get("ARROW_DEFAULT_MEMORY_POOL"), flush=True)
""")


def _starts(tmp_path: Path, command: list[str], **env: str) -> tuple[list[list[str]], str]:
    """Run `command` from the repository with REPORT_AT_START on every interpreter start; returns the
    reports (pid, allocator, Arrow pool) and the rest of the output."""
    (tmp_path / "sitecustomize.py").write_text(REPORT_AT_START)
    environ = {k: v for k, v in os.environ.items() if k not in SERVER_ALLOCATORS}
    environ.update({"PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)]), "HF_HUB_OFFLINE": "1", **env})
    done = subprocess.run(command, cwd=ROOT, env=environ, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    return [line.split()[1:] for line in lines if line.startswith("started:")], "\n".join(lines)


@pytest.mark.skipif(not GLIBC, reason="the restart is made only on Linux with glibc")
def test_python_app_py_starts_again_on_the_c_allocator_in_the_same_process(tmp_path):
    reports, output = _starts(tmp_path, [sys.executable, "app.py", "--help"])
    (pid, first, _), (same_pid, second, arrow) = reports
    assert (first, second) == ("pymalloc", "malloc")
    assert same_pid == pid  # os.execve: a supervisor still sees its one process
    assert arrow == "system"  # Arrow's buffers (pandas' strings) also from malloc, which the sweep trims
    assert "usage:" in output and output.count("usage:") == 1  # the command itself ran once, after the restart


@pytest.mark.skipif(not GLIBC, reason="the restart is made only on Linux with glibc")
def test_crs_arena_serve_restarts_too_and_other_commands_do_not(tmp_path):
    cli = "import sys; from webapp.cli import main; sys.exit(main())"
    reports, _ = _starts(tmp_path, [sys.executable, "-c", cli, "serve", "--help"])
    assert [r[1] for r in reports] == ["pymalloc", "malloc"] and reports[0][0] == reports[1][0]
    reports, _ = _starts(tmp_path, [sys.executable, "-c", cli, "export", "--help"])
    assert [r[1] for r in reports] == ["pymalloc"]


def test_an_allocator_named_in_the_environment_is_kept(tmp_path):
    reports, output = _starts(tmp_path, [sys.executable, "app.py", "--help"], PYTHONMALLOC="pymalloc")
    assert [r[1] for r in reports] == ["pymalloc"] and "usage:" in output


def test_the_restart_keeps_the_command_line_and_happens_once():
    assert restart_command(["python3", "-X", "dev", "-m", "webapp.serve", "--port", "7"], "/usr/bin/python3") == [
        "/usr/bin/python3", "-X", "dev", "-m", "webapp.serve", "--port", "7"]
    assert server_allocator_environment({"PATH": "/bin"}) == {"PATH": "/bin", **SERVER_ALLOCATORS}
    assert server_allocator_environment({"PYTHONMALLOC": "malloc"}) is None  # the restarted process
    kept = server_allocator_environment({"ARROW_DEFAULT_MEMORY_POOL": "jemalloc"})
    assert kept["ARROW_DEFAULT_MEMORY_POOL"] == "jemalloc" and kept["PYTHONMALLOC"] == "malloc"
    assert has_malloc_trim("Linux", "glibc")
    assert not has_malloc_trim("Darwin", "") and not has_malloc_trim("Linux", "")  # musl: no malloc_trim


RELEASE = textwrap.dedent("""
    import gc
    from webapp.memory_allocator import release_free_memory

    def rss_mb():
        for line in open("/proc/self/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024

    # What a burst of sessions leaves: many short-lived objects, a few long-lived ones scattered among them.
    objects = [{"turn": i, "text": str(i) * 40} for i in range(400_000)]
    survivors = objects[::64]
    del objects
    gc.collect()
    before = rss_mb()
    release_free_memory()
    print(round(before), round(rss_mb()), len(survivors))
""")


@pytest.mark.skipif(not GLIBC, reason="malloc_trim is glibc's")
def test_the_sweeps_release_hands_back_memory_freed_between_survivors():
    env = {**{k: v for k, v in os.environ.items() if k not in SERVER_ALLOCATORS}, **SERVER_ALLOCATORS,
           "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", RELEASE], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    before, after, _ = (int(x) for x in done.stdout.split())
    # ~200 MB of dicts and strings were freed around 6,250 survivors; most of it goes back.
    assert before - after > 100, (before, after)


# Big blocks freed among live small ones: what an export or a board run leaves behind it.
BIG_BLOCKS = textwrap.dedent("""
    import ctypes

    def rss_mb():
        for line in open("/proc/self/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024

    libc = ctypes.CDLL(None)
    libc.malloc.restype = ctypes.c_void_p
    libc.malloc.argtypes = [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    libc.free(libc.malloc(8 << 20))  # one big buffer freed: glibc's own threshold would rise to 8 MiB
    before = rss_mb()
    blocks, pins = [], []
    for _ in range(150):
        block = libc.malloc(1 << 20)
        ctypes.memset(block, 1, 1 << 20)
        blocks.append(block)
        pins.append(libc.malloc(64))  # a small block that stays, as Python's bookkeeping does
    for block in blocks:
        libc.free(block)
    print(round(rss_mb() - before))
""")


def _kept_after_big_blocks(**env: str) -> int:
    environ = {**{k: v for k, v in os.environ.items() if k not in SERVER_ALLOCATORS}, **env}
    done = subprocess.run([sys.executable, "-c", BIG_BLOCKS], env=environ, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return int(done.stdout.split()[-1])


@pytest.mark.skipif(not GLIBC, reason="MALLOC_MMAP_THRESHOLD_ is glibc's")
def test_the_servers_fixed_mmap_threshold_returns_big_freed_blocks_at_once():
    threshold = SERVER_ALLOCATORS["MALLOC_MMAP_THRESHOLD_"]
    assert 64 * 1024 <= int(threshold) <= 1024 * 1024
    # glibc's default: the 1 MiB blocks came from the heap, between the pins, and stay resident when freed
    assert _kept_after_big_blocks() > 100
    # the server's setting: each was mapped on its own and unmapped when freed
    assert _kept_after_big_blocks(MALLOC_MMAP_THRESHOLD_=threshold) < 20
