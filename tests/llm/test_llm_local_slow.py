"""The local provider with the real SmolLM2-135M-Instruct model (every engine installed)."""

import os
import threading

import pytest

from arena.runtime.config import Settings
from arena.llm import LLMClient, LocalProvider, build_client
from arena.llm.local import converted_ctranslate2, ctranslate2_available, llama_cpp_available, load_engine, smollm_path

pytestmark = pytest.mark.slow

needs_llama_cpp = pytest.mark.skipif(
    not llama_cpp_available(), reason="llama-cpp-python is not installed (pip install llama-cpp-python)"
)
needs_ctranslate2 = pytest.mark.skipif(not ctranslate2_available(), reason="ctranslate2 is not installed")
BACKENDS = [pytest.param("ctranslate2", marks=needs_ctranslate2), pytest.param("llama_cpp", marks=needs_llama_cpp),
            "transformers"]
QUESTION = [
    {"role": "system", "content": "You are a helpful movie recommender. Answer in one sentence."},
    {"role": "user", "content": "Name one famous science fiction movie."},
]


@pytest.mark.parametrize("backend", BACKENDS)
def test_generates_a_short_reply(backend):
    client = LLMClient(LocalProvider(backend=backend))
    response = client.complete(QUESTION, max_tokens=16)
    assert response.text.strip()
    assert 0 < response.completion_tokens <= 16
    assert response.prompt_tokens > 10
    assert client.describe().startswith("local:SmolLM2-135M-Instruct")


@pytest.mark.parametrize("backend", BACKENDS)
def test_greedy_decoding_is_repeatable_and_stop_strings_apply(backend):
    client = LLMClient(LocalProvider(backend=backend))
    first = client.complete(QUESTION, max_tokens=12).text
    assert client.complete(QUESTION, max_tokens=12).text == first
    stopped = client.complete(QUESTION, max_tokens=12, stop=[" "]).text
    assert stopped and " " not in stopped


@pytest.mark.parametrize("backend", BACKENDS)
def test_model_is_loaded_once_per_process(backend):
    one, two = LocalProvider(backend=backend), LocalProvider(backend=backend)
    assert one.engine is two.engine
    assert load_engine(one.path, backend) is one.engine


@pytest.mark.parametrize("backend", BACKENDS)
def test_concurrent_calls_are_serialised(backend, monkeypatch):
    provider = LocalProvider(backend=backend)
    engine = provider.engine
    real_generate = engine.generate
    lock = threading.Lock()
    state = {"now": 0, "max": 0, "calls": 0}

    def counting_generate(request):
        with lock:
            state["now"] += 1
            state["calls"] += 1
            state["max"] = max(state["max"], state["now"])
        try:
            return real_generate(request)
        finally:
            with lock:
                state["now"] -= 1

    monkeypatch.setattr(engine, "generate", counting_generate)
    # Two clients (as two arena components would have) over the same shared model.
    clients = [LLMClient(LocalProvider(backend=backend), concurrency=4) for _ in range(2)]
    answers: list[str] = []

    def ask(i: int) -> None:
        prompt = [{"role": "user", "content": f"Say the number {i}."}]
        answers.append(clients[i % 2].complete(prompt, max_tokens=4).text)

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(300)
    assert state == {"now": 0, "max": 1, "calls": 4}
    assert len(answers) == 4


@pytest.mark.parametrize("backend", [pytest.param("ctranslate2", marks=needs_ctranslate2),
                                     pytest.param("llama_cpp", marks=needs_llama_cpp)])
def test_long_history_is_trimmed_to_the_window(backend):
    provider = LocalProvider(backend=backend, n_ctx=512)
    turns = []
    for i in range(40):
        turns.append({"role": "user", "content": f"Message {i}: I liked many old movies, tell me more. " * 3})
        reply = f"Reply {i}: here is another classic film for you. " * 3
        turns.append({"role": "assistant", "content": reply})
    turns.append({"role": "user", "content": "So which one should I watch tonight?"})
    response = LLMClient(provider).complete([QUESTION[0], *turns], max_tokens=400)
    assert response.text
    assert response.prompt_tokens + response.completion_tokens <= 512
    assert response.completion_tokens <= 256  # the reply is held to half the window


def test_offline_default_builds_the_local_client(monkeypatch, tmp_path):
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "ARENA_LLM_PROVIDER"):
        monkeypatch.delenv(name, raising=False)
    client = build_client(Settings.from_env({"ARENA_CACHE_DIR": str(tmp_path)}))
    assert isinstance(client.provider, LocalProvider)
    first = client.complete(QUESTION, max_tokens=8)
    again = client.complete(QUESTION, max_tokens=8)
    assert again.cached and again.text == first.text


@needs_ctranslate2
def test_the_ctranslate2_copy_is_made_once_and_never_left_half_written(tmp_path):
    gguf = tmp_path / "package" / smollm_path().name  # a model file in a folder of its own
    gguf.parent.mkdir()
    gguf.symlink_to(smollm_path())
    folder = converted_ctranslate2(gguf, tmp_path / "models")
    assert (folder / "model.bin").exists() and folder.parent == gguf.parent  # beside the file it comes from
    made = (folder / "model.bin").stat().st_mtime_ns
    assert converted_ctranslate2(gguf, tmp_path / "other") == folder  # kept: not converted again
    assert (folder / "model.bin").stat().st_mtime_ns == made
    assert sorted(p.name for p in gguf.parent.iterdir()) == sorted([gguf.name, folder.name])  # no work left
    gguf.parent.chmod(0o555)  # a read-only install: the copy goes to the models folder
    try:
        if not os.access(gguf.parent, os.W_OK):  # (root may write anyway)
            elsewhere = converted_ctranslate2(gguf, tmp_path / "models")
            assert elsewhere == folder or elsewhere.parent == tmp_path / "models" / "local"
    finally:
        gguf.parent.chmod(0o755)


@needs_ctranslate2
def test_a_reply_never_waits_for_the_conversion(tmp_path):
    """Without a converted copy the first call does not convert in the reply (a first reply once waited
    254 to 1,367 s on a busy machine): it gets the warming-up line at once while a child process converts;
    the warm-up's `load` waits for that child, and replies follow."""
    from arena.llm.local_conversion import WARMING_LINE, LocalModelWarming, converted_copy

    gguf = tmp_path / "package" / smollm_path().name  # a model file never converted
    gguf.parent.mkdir()
    gguf.symlink_to(smollm_path())
    provider = LocalProvider(path=gguf, backend="ctranslate2", models_dir=tmp_path / "models")
    client = LLMClient(provider)
    with pytest.raises(LocalModelWarming) as warming:
        client.complete(QUESTION, max_tokens=8)
    assert str(warming.value) == WARMING_LINE
    assert converted_copy(gguf, tmp_path / "models") is None  # the call returned before any copy existed
    with pytest.raises(LocalModelWarming):  # asked again meanwhile: the same line, no second conversion
        provider.engine
    provider.load(timeout_s=1800)
    assert converted_copy(gguf, tmp_path / "models") is not None
    assert client.complete(QUESTION, max_tokens=8).text.strip()
