"""The one atomic-write helper: all of a file or none of it."""

import os
import stat

import pytest

from arena.runtime.files import atomic_open, atomic_path


def test_the_file_appears_whole_and_readable(tmp_path):
    target = tmp_path / "sub" / "out.txt"
    with atomic_open(target) as fh:
        fh.write("first part ")
        assert not target.exists()  # nothing is visible while writing
        fh.write("second part")
    assert target.read_text(encoding="utf-8") == "first part second part"
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o644
    assert [p.name for p in target.parent.iterdir()] == ["out.txt"]


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary_file(tmp_path):
    target = tmp_path / "out.bin"
    target.write_bytes(b"old")
    with pytest.raises(RuntimeError):
        with atomic_open(target, "wb") as fh:
            fh.write(b"new and half")
            raise RuntimeError("disk full")
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.bin"]


def test_a_path_for_libraries_that_write_by_file_name(tmp_path):
    target = tmp_path / "table.csv"
    with atomic_path(target) as tmp:
        assert tmp.parent == tmp_path and tmp != target
        tmp.write_text("a,b\n", encoding="utf-8")
    assert target.read_text(encoding="utf-8") == "a,b\n"


def test_only_whole_file_modes(tmp_path):
    with pytest.raises(ValueError):
        with atomic_open(tmp_path / "x", "a"):
            pass
