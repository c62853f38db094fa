"""A DialogueKit `Agent` that speaks the arena's HTTP contract, so UserSimCRS's simulators (or any
DialogueKit-based user) can hold conversations with any arena system.

Serve a system with `crs-arena serve-crs --crs crb_crs_redial --port 9000`, then hand
`ArenaAgent("crb_crs_redial", "http://127.0.0.1:9000")` to a DialogueKit `DialogueConnector` in
place of UserSimCRS's iEvaLM agent (docs/protocols.md). Each turn sends the whole conversation
so far to `POST /respond` and registers the reply; the items the system recommended travel in
the reply's metadata (`recommended_items`, id and title), so they are in DialogueKit's export.

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
    def __init__(self, system: str, url: str, *, timeout_s: float = 60.0,
                 welcome_text: str = "Hello! What kind of movie are you looking for?") -> None:
        super().__init__(id=system)
        self.system = system
        self.url = url.rstrip("/")
        self.timeout_s = timeout_s
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

