"""The background conversion of the local model says why when it fails, instead of warming up forever."""

from __future__ import annotations

import pytest

from arena.llm import LocalProvider
from arena.llm.local import ctranslate2_available
from arena.llm.local_conversion import WARMING_LINE, LocalModelWarming, conversion_problem
from arena.llm.types import LLMError


@pytest.mark.skipif(not ctranslate2_available(), reason="ctranslate2 is not installed")
def test_a_failed_conversion_is_reported_with_its_reason(tmp_path):
    broken = tmp_path / "package" / "model.gguf"
    broken.parent.mkdir()
    broken.write_bytes(b"not a model file")
    provider = LocalProvider(path=broken, backend="ctranslate2", models_dir=tmp_path / "models")
    with pytest.raises(LocalModelWarming):  # the child has just started: a reply is told at once
        provider.engine
    with pytest.raises(LLMError, match="conversion failed .*GGUF") as failed:
        provider.load(timeout_s=300)  # the warm-up's wait ends with the child's own reason
    assert not isinstance(failed.value, LocalModelWarming)
    problem = conversion_problem(broken, tmp_path / "models")
    assert problem != WARMING_LINE and "GGUF" in problem  # replies now get the reason, not a warming line
    with pytest.raises(LLMError, match="GGUF"):
        provider.engine
