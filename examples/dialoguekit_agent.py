"""A DialogueKit `Agent` that speaks the arena's HTTP contract, so UserSimCRS's simulators (or any
DialogueKit-based user) can hold conversations with any arena system.

Serve a system with `crs-arena serve-crs --crs crb_crs_redial --port 9000`, then name this class in
UserSimCRS's simulation config as it is (`agent_class_path: dialoguekit_agent.ArenaAgent` with
`examples/` on the Python path, `agent_id`, `agent_uri: http://127.0.0.1:9000`): its `run_simulation`
builds the agent as `ArenaAgent(id=..., uri=..., **agent_config)`, after checking that `GET uri`
answers, which the contract server does. Or build it yourself, `ArenaAgent("crb_crs_redial",
"http://127.0.0.1:9000")`, and hand it to a DialogueKit `DialogueConnector` (docs/protocols.md).
Each turn sends the whole conversation so far to `POST /respond` and registers the reply; the items
the system recommended travel in the reply's metadata (`recommended_items`, id and title), so they
are in DialogueKit's export.

Needs only DialogueKit and the standard library.
"""

from __future__ import annotations

import json
import urllib.request
from typing import Any

from dialoguekit.core.annotated_utterance import AnnotatedUtterance
from dialoguekit.core.dialogue_act import DialogueAct
from dialoguekit.core.utterance import Utterance
from dialoguekit.participant import Agent, DialogueParticipant  # after dialoguekit.core: its import order

CONTRACT_VERSION = "1"


class ArenaAgent(Agent):
    def __init__(self, id: str, uri: str, *, system: str | None = None, timeout_s: float = 60.0,
                 welcome_text: str = "Hello! What kind of movie are you looking for?") -> None:
        """`id` and `uri` are the names UserSimCRS's config passes (`agent_id`, `agent_uri`). `system`
        (from `agent_config`) is the arena system's name sent with each turn, by default `id`: UserSimCRS
        also reads its dialogue sample with `agent_id`, so the two may have to differ."""
        super().__init__(id=id)
        self.system = system or id
        self.url = uri.rstrip("/")
        self.timeout_s = float(timeout_s)
        self.welcome_text = welcome_text

    def welcome(self) -> None:
        self._say(self.welcome_text)

    def goodbye(self) -> None:
        self._say("Goodbye!", [DialogueAct(self.stop_intent)])

    def receive_utterance(self, utterance: Utterance) -> None:
        # The connector has already added the user's utterance to the history.
        answer = self._post("/respond", {"contract": CONTRACT_VERSION, "system": self.system,
                                         "dialogue": self._arena_dialogue()})
        items = [{"id": i.get("id"), "title": i.get("title")} for i in answer.get("items", [])
                 if isinstance(i, dict)]
        self._say(str(answer["text"]), metadata={"recommended_items": items} if items else None)

    def _arena_dialogue(self) -> dict[str, Any]:
        """The conversation as the contract's `dialogue` (arena.dialogue.Dialogue's JSON)."""
        history = self._dialogue_connector.dialogue_history
        return {"crs_id": self.system, "dialogue_id": history.conversation_id,
                "utterances": [{"role": u.participant.name, "text": u.text} for u in history.utterances]}

    def _post(self, path: str, payload: dict[str, Any]) -> dict[str, Any]:
        request = urllib.request.Request(self.url + path, data=json.dumps(payload).encode("utf-8"),
                                         headers={"content-type": "application/json"}, method="POST")
        with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
            return json.loads(response.read().decode("utf-8"))

    def _say(self, text: str, acts: list[DialogueAct] | None = None,
             metadata: dict[str, Any] | None = None) -> None:
        reply = AnnotatedUtterance(text, participant=DialogueParticipant.AGENT, dialogue_acts=acts or [],
                                   metadata=metadata or {})
        self._dialogue_connector.register_agent_utterance(reply)

