"""Target-biased seeker (iEvaLM): a user who has particular movies in mind.

Goals and openings come from iEvaLM's evaluation turns
(`*_eval/test_data_processed.jsonl`): the `rec` items are the targets and
the first seeker message of `context` opens the conversation. The LLM is told
what the targets are like (genres, people, plot) but not their titles, and
any sentence that names a target is removed before the message is sent. The
user accepts as soon as a target is shown, and Recall@k of every system
reply is recorded in `dialogue.metadata["recall"]`; the targets are in
`metadata["targets"]` (catalog ids, or titles when not in the catalog, the
form the scorers read) and `metadata["target_items"]` (ids and titles).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Optional

from arena.runtime.config import ASSETS_DIR
from arena.dialogue import Dialogue
from arena.llm import LLMClient
from arena.conversation.simulator_interface import SimulatorAction, StopDialogue, UserTurn
from simulators.base import SimulatedUser, clean_generation, last_reply, transcript
from simulators.catalog_access import CatalogView, ItemFacts
from simulators.grounding import ProfileFacts, named_facts
from simulators.metrics import is_target, per_turn_recall, target_ids, target_keys
from arena.titles.names import strip_mentions

PERSONA = (
    "Role-play a person who asks a movie recommender for a film. You have particular movies in mind but "
    "you do not know their titles, so you can only describe them:\n{targets}\n"
    "When the recommender asks about your taste, answer with features of these movies. When it suggests "
    "movies that are not like them, turn those down and say what you want instead. Never guess or say a "
    "title. You are the person, not an assistant. Casual style, one to three short sentences."
)
WRITE = "The chat so far:\n{transcript}\n\nWrite only your next message."


def eval_file(dataset: str) -> Path:
    """The project's copy of the iEvaLM evaluation turns (origin and licence in assets/catalogs/README.md)."""
    path = ASSETS_DIR / "catalogs" / f"{dataset}_eval" / "test_data_processed.jsonl"
    if not path.exists():
        raise FileNotFoundError(f"iEvaLM evaluation turns for {dataset!r} not found at {path}")
    return path


@lru_cache(maxsize=4)
def load_eval_turns(path: str) -> tuple[dict[str, Any], ...]:
    with open(path, encoding="utf-8") as handle:
        return tuple(json.loads(line) for line in handle if line.strip())


def seeker_messages(context: list[str]) -> list[str]:
    """The seeker's messages in an iEvaLM context (it alternates and ends with the seeker)."""
    last = len(context) - 1
    return [text for i, text in enumerate(context) if (last - i) % 2 == 0]


@dataclass
class SeekerGoal:
    source: str  # "<dialog_id>/<turn_id>" in the evaluation file
    targets: list[dict[str, Optional[str]]]  # {"item_id", "title"}
    facts: list[ItemFacts] = field(default_factory=list)
    opening: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "targets": self.targets, "opening": self.opening}


def sample_seeker_goal(catalog: CatalogView, rng: random.Random, dataset: Optional[str] = None) -> SeekerGoal:
    turns = load_eval_turns(str(eval_file(dataset or catalog.dataset)))
    for _ in range(500):
        row = turns[rng.randrange(len(turns))]
        titles = list(dict.fromkeys(str(t) for t in row.get("rec") or []))
        facts = [catalog.resolve(t) for t in titles]
        if not any(facts):
            continue
        targets = [
            {"item_id": f.item_id if f else None, "title": f.display_title if f else t}
            for t, f in zip(titles, facts)
        ]
        messages = seeker_messages(list(row.get("context") or []))
        opening = strip_mentions(messages[0], titles + [t["title"] for t in targets]) if messages else ""
        return SeekerGoal(
            source=f"{row.get('dialog_id')}/{row.get('turn_id')}",
            targets=targets,
            facts=[f for f in facts if f is not None],
            opening=opening,
        )
    raise ValueError(f"no evaluation turn of {dataset or catalog.dataset!r} has targets in the catalog")


class TargetBiasedSimulator(SimulatedUser):
    kind = "target_biased"
    label = "Target-biased seeker (iEvaLM)"

    def __init__(
        self,
        catalog: CatalogView,
        *,
        seed: int,
        llm: LLMClient,
        goal: Optional[SeekerGoal] = None,
        **kwargs: Any,
    ):
        kwargs.setdefault("max_tokens", 128)  # as in iEvaLM
        super().__init__(seed=seed, llm=llm, **kwargs)
        self.catalog = catalog
        self.goal = goal or sample_seeker_goal(catalog, self.rng)
        self._keys = target_keys(self.goal.targets)
        self._titles = [t["title"] for t in self.goal.targets if t["title"]]
        self.found: Optional[str] = None

    def profile(self) -> dict[str, Any]:
        return {**self.goal.to_dict(), "catalog": self.catalog.dataset}

    def profile_facts(self) -> ProfileFacts:
        """The targets' genres and years, and whatever the dataset's opening message names
        (a real seeker's words are part of the goal)."""
        targets = ProfileFacts.of(genres=[g for f in self.goal.facts for g in f.genres],
                                  years=[f.year for f in self.goal.facts])
        return targets.merged(named_facts(self.goal.opening, self.catalog))

    def observe(self, dialogue: Dialogue) -> None:
        dialogue.metadata["targets"] = target_ids(self.goal.targets)
        dialogue.metadata["target_items"] = self.goal.targets
        dialogue.metadata["recall"] = per_turn_recall(dialogue, self.goal.targets)

    def act(self, dialogue: Dialogue) -> SimulatorAction:
        if self.found is not None:
            return StopDialogue("target recommended", "satisfied", f"The recommender found {self.found}.")
        reply = last_reply(dialogue)
        if reply is None and self.goal.opening:
            return UserTurn(self.goal.opening)
        if reply is not None:
            hit = next((item for item in reply.items if is_target(item, self._keys)), None)
            if hit is not None:
                self.found = hit.title
                return UserTurn(self.rng.choice(ACCEPT))
        generated = self.ask_llm(self._persona(), WRITE.format(transcript=transcript(dialogue)))
        text = strip_mentions(clean_generation(generated), self._titles)
        return self.say(text, self._describe_target(), dialogue)

    def _persona(self) -> str:
        lines = [f"- {facts.describe(with_title=False)}" for facts in self.goal.facts]
        return PERSONA.format(targets="\n".join(lines))

    def _describe_target(self) -> str:
        facts = self.rng.choice(self.goal.facts)
        parts = []
        if facts.genres:
            parts.append(f"I'm after a {facts.genres[0].lower()} film")
        if facts.actors:
            parts.append(f"ideally with {facts.actors[0]}")
        if facts.directors and not facts.actors:
            parts.append(f"maybe one directed by {facts.directors[0]}")
        text = (", ".join(parts) + ".") if parts else "Can you suggest something else?"
        return strip_mentions(text, self._titles) or "Can you suggest something else?"

    def verdict(self, dialogue: Dialogue) -> Optional[StopDialogue]:
        if self.found is not None:
            return StopDialogue("target recommended", "satisfied", f"The recommender found {self.found}.")
        return StopDialogue("out of turns", "frustrated", "None of the movies I had in mind came up.")


ACCEPT = (
    "Yes, that's exactly the kind of movie I was hoping for. I'll watch it, thanks!",
    "That one is perfect, I'll go with it. Thank you!",
    "Great, that's just what I wanted. Thanks!",
)
