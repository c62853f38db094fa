"""The very first start never converts the local model before its first page, nor inside a reply.

The warm-up's plan asked the local provider `hasattr(provider, "engine")`, and `engine` is a property that
loads the model: on a first start the one-time CTranslate2 conversion ran there, before the server
answered (516 s to the first page on a busy machine). Now the plan only names the step; the conversion
starts when the warm-up runs it, in a child process, behind the page.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "battle"))

from battle_support import FakeCatalogCRS, make_services  # noqa: E402

from arena.llm import LLMClient, LocalProvider  # noqa: E402
from arena.llm.local import ctranslate2_available, smollm_path  # noqa: E402
from arena.llm.local_conversion import converted_copy  # noqa: E402
from webapp.warm_start import plan  # noqa: E402


@pytest.mark.skipif(not ctranslate2_available(), reason="ctranslate2 is not installed")
def test_planning_the_warm_up_neither_loads_nor_converts_the_local_model(tmp_path):
    gguf = tmp_path / "package" / smollm_path().name  # a model file never converted
    gguf.parent.mkdir()
    gguf.symlink_to(smollm_path())
    services = make_services(tmp_path, [FakeCatalogCRS("alpha"), FakeCatalogCRS("beta")])
    services.settings = services.settings.model_copy(update={"llm_provider": "local"})
    provider = LocalProvider(path=gguf, backend="ctranslate2", models_dir=tmp_path / "models")
    services.llm = LLMClient(provider)
    try:
        steps = plan(services)
    finally:
        services.store.close()
    assert any(step.label.startswith("local LLM") for step in steps)  # loaded later, by the warm-up
    assert converted_copy(gguf, tmp_path / "models") is None
    assert sorted(p.name for p in gguf.parent.iterdir()) == [gguf.name]  # no conversion under way either
