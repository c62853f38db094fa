"""Fake systems and fake LLM behaviours for the simulator tests.

The systems are real (if simple) recommenders over the real catalog, so a
simulated user can reach its goal with them; the LLM is `FakeProvider`
with a responder that answers each kind of simulator prompt plausibly.
"""

from __future__ import annotations

import json
import re
import threading
import time
from typing import Callable, Optional, Sequence

from arena.dialogue import Dialogue, RecommendedItem, Role
from arena.llm import FakeProvider, LLMClient, LLMRequest, RetryPolicy
from arena.conversation.crs_interface import ConversationalRecommender, CRSSpec
from simulators.catalog_access import CatalogView, ItemFacts


def rec(facts: ItemFacts) -> RecommendedItem:
    return RecommendedItem(item_id=facts.item_id, title=facts.display_title)


class AttributeCRS(ConversationalRecommender):
    """Recommends catalog movies matching the genres, years and people the user mentioned so far."""

    name = "attribute"

    def __init__(self, catalog: CatalogView, ask_first: bool = True):
        self.catalog = catalog
        self.ask_first = ask_first
        self.genres = sorted({g for f in catalog.all() for g in f.genres}, key=len, reverse=True)
        self.people = sorted({p for f in catalog.all() for p in f.actors + f.directors if len(p) > 5})

    def respond(self, dialogue: Dialogue) -> tuple[str, list[RecommendedItem]]:
        said = " ".join(u.text for u in dialogue.utterances if u.role == Role.USER)
        low = said.lower()
        if self.ask_first and dialogue.num_turns == 1:
            return "Hello! What kind of movies do you like?", []
        genres = {g for g in self.genres if re.search(rf"\b{re.escape(g.lower())}\b", low)}
        years = {int(y) for y in re.findall(r"\b(19\d\d|20\d\d)\b", said)}
        people = {p for p in self.people if p in said}
        shown = {i.item_id for u in dialogue.agent_turns() for i in u.items}

        def score(f: ItemFacts) -> int:
            return (len(genres & set(f.genres)) + 2 * (f.year in years)
                    + 3 * len(people & set(f.actors + f.directors)))

        ranked = sorted((f for f in self.catalog.all() if f.item_id not in shown), key=score, reverse=True)
        picks = [f for f in ranked[:5] if score(f) > 0]
        if not picks:
            return "Could you tell me a genre or an actor you like?", []
        return f"You might enjoy {picks[0].display_title}.", [rec(f) for f in picks]


class ScriptedCRS(ConversationalRecommender):
    """Replies from a fixed script, one entry per turn (the last one repeats)."""

    name = "scripted"

    def __init__(self, script: Sequence[tuple[str, Sequence[RecommendedItem]]]):
        self.script = list(script)

    def respond(self, dialogue: Dialogue) -> tuple[str, list[RecommendedItem]]:
        text, items = self.script[min(dialogue.num_turns, len(self.script)) - 1]
        return text, list(items)


class SlowCRS(ConversationalRecommender):
    """Another system's replies, each after a fixed delay."""

    def __init__(self, inner: ConversationalRecommender, delay_s: float):
        self.inner, self.delay_s = inner, delay_s
        self.called = threading.Event()

    def respond(self, dialogue: Dialogue) -> tuple[str, list[RecommendedItem]]:
        self.called.set()
        time.sleep(self.delay_s)
        return self.inner.respond(dialogue)


class BrokenCRS(ConversationalRecommender):
    name = "broken"

    def respond(self, dialogue: Dialogue) -> tuple[str, list[RecommendedItem]]:
        raise RuntimeError("model crashed")


def spec(name: str, system: ConversationalRecommender, dataset: str = "redial") -> CRSSpec:
    return CRSSpec(name=name, family="test", dataset=dataset, description=f"{name} (test system)",
                   load=lambda: system)


# -- fake LLM behaviour ---------------------------------------------------------------

def simulator_responder(quit_after: Optional[int] = None, leak: Optional[str] = None,
                        opinions: str = "json") -> Callable[[LLMRequest], str]:
    """Answers the simulators' prompts: decisions, reflections (JSON) and messages.

    `quit_after`: say QUIT from that many decisions on. `leak`: a title the
    seeker's messages name (to test stripping). `opinions`: "json" or "junk".
    """
    decisions = {"n": 0}

    def respond(request: LLMRequest) -> str:
        system, user = request.messages[0][1], request.messages[-1][1]
        if "Allowed intents:" in user:  # the LLM dialogue-act annotator
            labelled = user.split("(to label):", 1)[1].split("\n")[0]
            return json.dumps({"intents": ["REQ"] if "?" in labelled else ["OTH"], "titles": []})
        if "judge conversations" in system:
            decisions["n"] += 1
            return "QUIT" if quit_after is not None and decisions["n"] > quit_after else "CONTINUE"
        if "Answer in JSON" in user:
            if opinions != "json":
                return "I am not sure about these."
            titles = re.findall(r"^- ([^.;]+?)(?: \(\d{4}\))?(?:[.;]|$)", user, re.MULTILINE)
            return json.dumps({"opinions": [{"title": t, "opinion": "like", "reason": "looks fun"}
                                            for t in titles]})
        if leak:
            return f"I loved {leak} so much. I want a funny movie with police officers."
        if "Draft:" in user:
            return "Sure thing! " + user.split("Draft:", 1)[1].strip()
        if "What to do now:" in user:  # parrot the guidance, so the wishes reach the system
            return user.split("What to do now:", 1)[1].split("\n")[0].strip()
        return "I would like a good comedy, maybe something recent. Any ideas?"

    return respond


def fake_llm(responder: Callable[[LLMRequest], str] | Sequence, max_retries: int = 2) -> LLMClient:
    return LLMClient(FakeProvider(responder), retry=RetryPolicy(max_retries=max_retries, base_delay_s=0.001),
                     concurrency=16)


def question_nlu(dialogue: Dialogue) -> list[str]:
    """A stand-in NLU for unit tests: a question is a request for information."""
    reply = dialogue.utterances[-1]
    return ["REQ"] if "?" in reply.text and not reply.items else ["OTH"]
