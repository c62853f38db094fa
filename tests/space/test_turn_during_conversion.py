"""No reply waits for the local model's one-time conversion, and none is stored as failed because of it:
without the warm-up (`ARENA_WARM_START=0`, no `crs-arena prepare`), a turn sent while the conversion runs
in its child process is refused in one line, nothing is stored, and the same message sent once the copy
is there goes through. The child is the project's own; it waits on the conversion's lock file, which the
test holds, so "still converting" lasts exactly as long as the test needs."""

from __future__ import annotations

import fcntl
import hashlib
import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "battle"))

from battle_support import FakeCatalogCRS, make_services  # noqa: E402

from arena.llm import LocalProvider  # noqa: E402
from arena.llm.client import LLMClient  # noqa: E402
from arena.llm.local import ctranslate2_available  # noqa: E402
from arena.llm.local_conversion import LocalModelWarming, _places, start_conversion  # noqa: E402
from webapp.sessions import chat  # noqa: E402
from webapp.sessions.refusal import Refusal  # noqa: E402
from webapp.sessions.warming import converting  # noqa: E402

WORDS = "is warming up (its model's one-time set-up is still running), so your message was not sent"


class AskingCRS(FakeCatalogCRS):
    """Replies with the LLM the services hold, as the built-in systems do."""

    def __init__(self, name: str, llm: LLMClient):
        super().__init__(name)
        self.llm = llm

    def respond(self, dialogue):
        answer = self.llm.complete([{"role": "user", "content": dialogue.user_turns()[-1].text}], max_tokens=8)
        return answer.text, []


class WarmingCRS(FakeCatalogCRS):
    """A system whose model call met the conversion as it began (the turn raced the first check)."""

    def respond(self, dialogue):
        raise LocalModelWarming("The local model is warming up.")


def _lock_path(copy: Path) -> Path:  # the conversion's own lock file (arena.llm.local_conversion)
    digest = hashlib.sha256(str(copy.resolve()).encode()).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"arena-ct2-{digest}.lock"


@pytest.mark.skipif(not ctranslate2_available(), reason="ctranslate2 is not installed")
def test_a_turn_sent_while_the_local_model_converts_is_refused_and_nothing_is_stored(tmp_path):
    gguf = tmp_path / "package" / "model.gguf"
    gguf.parent.mkdir()
    gguf.write_bytes(b"a model file the child never reads while the test holds the lock")
    models = tmp_path / "models"
    copy = _places(gguf, models)[0]
    provider = LocalProvider(path=gguf, backend="ctranslate2", models_dir=models)
    services = make_services(tmp_path, [])
    services.settings = services.settings.model_copy(update={"llm_provider": "local"})
    services.llm = LLMClient(provider)
    services.registry = make_services(tmp_path / "r", [AskingCRS("alpha", services.llm)]).registry
    assert services.warming is None  # ARENA_WARM_START=0: nothing loads in the background
    with open(_lock_path(copy), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the child converting waits here
        dialogue, _ = chat.start_conversation(services, "alpha", "user-1")
        with pytest.raises(Refusal) as refused:  # the old code stored a failed turn here
            chat.send_message(services, dialogue, "a space movie please", session_key="user-1")
        assert WORDS in refused.value.text and "\n" not in refused.value.text
        assert dialogue.num_turns == 0 and services.store.list_dialogues() == []
        conversion = start_conversion(gguf, models)
        assert conversion is not None and not conversion.done.is_set()  # still running: nothing waited
        copy.mkdir(parents=True)
        (copy / "model.bin").write_bytes(b"")  # the copy is there: the child finds it once the lock is free
        assert not converting(services, "alpha")
    assert conversion.done.wait(120) and not conversion.error
    services.store.close()


def test_a_turn_that_met_the_conversion_as_it_began_is_taken_back(tmp_path):
    services = make_services(tmp_path, [WarmingCRS("alpha")])
    dialogue, _ = chat.start_conversation(services, "alpha", "user-1")
    with pytest.raises(Refusal) as refused:
        chat.send_message(services, dialogue, "a space movie please", session_key="user-1")
    assert WORDS in refused.value.text
    assert dialogue.num_turns == 0 and not dialogue.utterances and services.store.list_dialogues() == []
    services.store.close()
