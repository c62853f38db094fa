"""examples/dialoguekit_agent.py: a DialogueKit user holds a conversation with an arena system
served by `serve-crs`, through DialogueKit's own connector, as UserSimCRS's simulators would."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from dialoguekit_support import require_dialoguekit  # noqa: E402

from arena.dialogue import RecommendedItem, Role  # noqa: E402
from crs.external.server import ContractServer, build_app  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "dialoguekit_agent.py"


@pytest.fixture(autouse=True)
def _dialoguekit():
    require_dialoguekit()


def _example_module():
    spec = importlib.util.spec_from_file_location("dialoguekit_agent_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class CountingCRS:
    """A system that recommends one film and says how much of the conversation it was given."""

    name = "counting"

    def __init__(self):
        self.seen = []
        self.crs_ids = []

    def respond(self, dialogue):
        self.seen.append([(u.role, u.text) for u in dialogue.utterances])
        self.crs_ids.append(dialogue.crs_id)
        return (f"After {len(dialogue.utterances)} utterances: try Alien (1979).",
                [RecommendedItem(item_id="79062", title="Alien (1979)")])


class Recorder:
    """Where the connector shows the conversation (DialogueKit's platforms need Flask-SocketIO;
    the connector only calls these two methods)."""

    def __init__(self):
        self.shown = []

    def start(self):
        pass

    def display_agent_utterance(self, utterance, agent_id, user_id):
        self.shown.append(("AGENT", utterance.text))

    def display_user_utterance(self, utterance, user_id):
        self.shown.append(("USER", utterance.text))


def test_a_dialoguekit_user_talks_to_an_arena_system():
    from dialoguekit.connector.dialogue_connector import DialogueConnector
    from dialoguekit.participant.user import User

    crs = CountingCRS()
    with ContractServer(build_app(crs, "counting", "redial")) as server:
        agent = _example_module().ArenaAgent("counting", server.url)
        user = User("simulated-user")
        platform = Recorder()
        connector = DialogueConnector(agent, user, platform, conversation_id="dk-run-1",
                                      save_dialogue_history=False)
        connector.start()
        for text in ("I like scary space films", "Something older?"):
            assert user.ready_for_input
            user.handle_input(text)
        agent.goodbye()
    history = connector.dialogue_history
    assert [u.text for u in history.utterances] == [
        "Hello! What kind of movie are you looking for?", "I like scary space films",
        "After 2 utterances: try Alien (1979).", "Something older?", "After 4 utterances: try Alien (1979).",
        "Goodbye!"]
    assert history.utterances[2].metadata["recommended_items"] == [{"id": "79062", "title": "Alien (1979)"}]
    assert crs.seen[1] == [(Role.AGENT, "Hello! What kind of movie are you looking for?"),
                           (Role.USER, "I like scary space films"),
                           (Role.AGENT, "After 2 utterances: try Alien (1979)."),
                           (Role.USER, "Something older?")]
    assert platform.shown[-1] == ("AGENT", "Goodbye!")
    # DialogueKit's own export of the conversation reads back into the arena.
    from arena.corpus.dialoguekit import from_record
    imported = from_record(history.to_dict())
    assert imported.dialogue_id == "dk-run-1" and imported.crs_id == "counting"
    # The recommended items the agent kept in the reply's metadata are the arena reply's items again.
    assert imported.utterances[2].items == [RecommendedItem(item_id="79062", title="Alien (1979)")]
    assert [u.role for u in imported.utterances[:2]] == [Role.AGENT, Role.USER]


def _class_from_config_path(path: str):
    """The class a dotted path in a config names, imported as UserSimCRS's run_simulation does."""
    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module), name)


@pytest.mark.parametrize("agent_config", [{}, {"system": "counting", "timeout_s": "30"}],
                         ids=["id and uri only", "with agent_config"])
def test_usersimcrs_run_simulation_config_names_the_agent_as_it_is(monkeypatch, agent_config):
    """UserSimCRS's config names the agent class by its path and its run_simulation builds it with
    `id=` and `uri=` (plus `agent_config`), after checking that `GET uri` answers 200."""
    import urllib.request

    from dialoguekit.connector.dialogue_connector import DialogueConnector
    from dialoguekit.participant import Agent
    from dialoguekit.participant.user import User

    monkeypatch.syspath_prepend(str(EXAMPLE.parent))
    monkeypatch.delitem(sys.modules, "dialoguekit_agent", raising=False)
    agent_class = _class_from_config_path("dialoguekit_agent.ArenaAgent")
    assert issubclass(agent_class, Agent)
    crs = CountingCRS()
    with ContractServer(build_app(crs, "counting", "redial")) as server:
        with urllib.request.urlopen(server.url, timeout=30) as answer:
            assert answer.status == 200
        agent_id = "counting" if not agent_config else "IAI MovieBot"  # the dialogue sample's agent id
        agent = agent_class(**{"id": agent_id, "uri": server.url, **agent_config})
        assert agent.id == agent_id
        user = User("simulated-user")
        connector = DialogueConnector(agent, user, Recorder(), conversation_id="usersimcrs-1",
                                      save_dialogue_history=False)
        connector.start()
        user.handle_input("I like scary space films")
    assert connector.dialogue_history.utterances[-1].text == "After 2 utterances: try Alien (1979)."
    assert crs.crs_ids == ["counting"]  # the arena system's name, whatever the agent id


def test_the_documented_usersimcrs_config_builds_the_agent(monkeypatch):
    """The run_simulation config docs/protocols.md shows, read as UserSimCRS reads it (its agent_* keys),
    builds the agent and holds a turn with the system it names."""
    import re

    import yaml
    from dialoguekit.connector.dialogue_connector import DialogueConnector
    from dialoguekit.participant.user import User

    text = (EXAMPLE.parents[1] / "docs" / "protocols.md").read_text(encoding="utf-8")
    [block] = [b for b in re.findall(r"```yaml\n(.*?)```", text, re.S) if "agent_class_path" in b]
    config = yaml.safe_load(block)
    monkeypatch.syspath_prepend(str(EXAMPLE.parent))
    monkeypatch.delitem(sys.modules, "dialoguekit_agent", raising=False)
    agent_class = _class_from_config_path(config["agent_class_path"])
    crs = CountingCRS()
    with ContractServer(build_app(crs, "crb_crs_redial", "redial")) as server:
        assert config["agent_uri"].startswith("http://127.0.0.1:")
        agent = agent_class(**{"id": config["agent_id"], "uri": server.url, **config.get("agent_config", {})})
        user = User("simulated-user")
        connector = DialogueConnector(agent, user, Recorder(), conversation_id="docs-1",
                                      save_dialogue_history=False)
        connector.start()
        user.handle_input("I like scary space films")
    assert crs.crs_ids == [config["agent_config"]["system"]]
    assert connector.dialogue_history.utterances[-1].text.endswith("try Alien (1979).")
