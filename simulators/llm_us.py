"""LLM-US: a zero-shot LLM user with a target-free goal (RDL paper).

Each turn after the first, the user first decides, with one LLM call,
whether the conversation still moves towards its goal or whether to give up;
if it goes on, a second call writes the next message. Whether a shown movie
satisfies the goal is checked against the catalog, so acceptance never
depends on the LLM's reading of titles: the first shown movie that meets
every constraint is accepted (no give-up decision is asked for then), the
user asks its requests one by one and leaves satisfied. A generation that
is empty, repeats an earlier message or leaves out what the turn must say
(the wish being revealed, the accepted title) is replaced by a template.
"""

from __future__ import annotations

from typing import Any, Optional

from arena.dialogue import Dialogue
from arena.llm import LLMClient
from arena.conversation.simulator_interface import SimulatorAction, StopDialogue, UserTurn
from simulators.base import SimulatedUser, last_reply, shown_items, transcript
from simulators.catalog_access import CatalogView, ItemFacts
from simulators.grounding import ProfileFacts
from simulators.goals import REQUEST_PHRASES, Goal, phrase, sample_goal

PERSONA = (
    "Role-play a person who is chatting with a movie recommender in order to find a film to watch. "
    "You are the person, not an assistant: never recommend movies yourself and never describe what "
    "the recommender says.\n"
    "What you are after: {wishes}.\n"
    "Once a movie fits, you want to learn {asks} about it.\n"
    "Style: casual, one to three short sentences. Share your wishes bit by bit rather than all at once, "
    "and do not make up wishes that are not listed."
)

DECIDE = (
    "Below is a chat between a person and a movie recommender. The person wants {wishes}.\n\n"
    "{transcript}\n\n"
    "Is the recommender still helping the person get closer to such a movie? Reply with the single word "
    "CONTINUE if it is (or if the chat has barely started), or QUIT if it keeps failing: it repeats "
    "itself, ignores the person's wishes, or replies with nonsense."
)

# Words a message asking for each request must contain (any of them).
REQUEST_WORDS = {
    "plot": ("about", "plot", "story"),
    "director": ("direct",),
    "rating": ("rat", "review", "good", "score"),
}

WRITE = "The chat so far:\n{transcript}\n\nWhat to do now: {guidance}\nWrite only your next message."


class LLMUserSimulator(SimulatedUser):
    kind = "llm_us"
    label = "LLM-US (target-free goal, RDL paper)"

    def __init__(
        self,
        catalog: CatalogView,
        *,
        seed: int,
        llm: LLMClient,
        goal: Optional[Goal] = None,
        min_turns_before_quit: int = 1,
        **kwargs: Any,
    ):
        super().__init__(seed=seed, llm=llm, **kwargs)
        self.catalog = catalog
        self.goal = goal or sample_goal(catalog, self.rng)
        self.min_turns_before_quit = min_turns_before_quit
        self.revealed: list[str] = []
        self.accepted: Optional[ItemFacts] = None
        self.asked: list[str] = []
        self.decisions: list[str] = []

    def profile(self) -> dict[str, Any]:
        return {"goal": self.goal.to_dict(), "catalog": self.catalog.dataset}

    def profile_facts(self) -> ProfileFacts:
        return self.goal.profile_facts()

    # -- helpers --------------------------------------------------------------
    def _wishes(self) -> str:
        return "; ".join(phrase(s, v) for s, v in self.goal.constraints.items())

    def _persona(self) -> str:
        asks = ", ".join(REQUEST_PHRASES[r] for r in self.goal.requests) or "nothing more"
        return PERSONA.format(wishes=self._wishes(), asks=asks)

    def rating_persona(self) -> str:
        return self._persona()

    def _reveal_next(self) -> Optional[tuple[str, str]]:
        for slot, value in self.goal.constraints.items():
            if slot not in self.revealed:
                self.revealed.append(slot)
                return slot, value
        return None

    def _fitting(self, dialogue: Dialogue) -> tuple[Optional[ItemFacts], list[tuple[ItemFacts, list[str]]]]:
        """The first shown movie meeting the goal, and the non-fitting ones with what they miss."""
        misses = []
        for item in shown_items(dialogue, k=5):
            facts = self.catalog.lookup(item)
            if self.goal.satisfied_by(facts):
                return facts, misses
            if facts is not None:
                misses.append((facts, self.goal.unmet(facts)))
        return None, misses

    # -- one turn ------------------------------------------------------------------
    def act(self, dialogue: Dialogue) -> SimulatorAction:
        if self.accepted is not None and len(self.asked) >= len(self.goal.requests):
            return StopDialogue(
                "goal reached", "satisfied", f"Found {self.accepted.display_title}, which fits what I wanted."
            )
        if last_reply(dialogue) is None:
            return self._write(dialogue, *self._opening())
        if self.accepted is None:
            fitting, misses = self._fitting(dialogue)
            if fitting is not None:
                self.accepted = fitting
                return self._write(dialogue, *self._accept())
            if dialogue.num_turns >= self.min_turns_before_quit and self._wants_to_quit(dialogue):
                return StopDialogue("gave up: no progress towards the goal", "frustrated",
                                    "The recommender did not find a movie that fits what I asked for.")
            return self._write(dialogue, *self._steer(dialogue, misses))
        return self._write(dialogue, *self._ask_next())

    def _wants_to_quit(self, dialogue: Dialogue) -> bool:
        answer = self.ask_llm(
            "You judge conversations between people and movie recommenders.",
            DECIDE.format(wishes=self._wishes(), transcript=transcript(dialogue)),
            max_tokens=5,
        )
        words = answer.strip().upper()
        decision = "quit" if "QUIT" in words and "CONTINUE" not in words else "continue"
        self.decisions.append(decision)
        return decision == "quit"

    def _write(self, dialogue: Dialogue, guidance: str, fallback: str, must_mention: tuple = ()) -> UserTurn:
        generated = self.ask_llm(self._persona(), WRITE.format(transcript=transcript(dialogue), guidance=guidance))
        return self.say(generated, fallback, dialogue, must_mention)

    def verdict(self, dialogue: Dialogue) -> Optional[StopDialogue]:
        if self.accepted is not None:
            return StopDialogue("goal reached", "satisfied", f"Found {self.accepted.display_title}.")
        return StopDialogue("out of turns", "frustrated", "No fitting movie was recommended in time.")

    # -- guidance: (LLM instruction, template if the generation is unusable, values it must name) ----
    def _opening(self) -> tuple[str, str, tuple]:
        slot_value = self._reveal_next()
        wish = phrase(*slot_value) if slot_value else "a good movie"
        return (
            f"Start the conversation: greet the recommender and say you are looking for {wish}.",
            f"Hi! I'm looking for {wish}. Any ideas?",
            (slot_value[1],) if slot_value else (),
        )

    def _accept(self) -> tuple[str, str, tuple]:
        title = self.accepted.display_title
        if self.goal.requests:
            request = self.goal.requests[0]
            self.asked.append(request)
            ask = REQUEST_PHRASES[request]
            return (
                f'The recommender suggested "{title}", which is the kind of movie you want. Say you like '
                f"this suggestion and ask {ask}.",
                f"{title} sounds great! Can you tell me {ask}?",
                (self.accepted.title, REQUEST_WORDS[request]),
            )
        return (
            f'The recommender suggested "{title}", which fits. Say you will watch it and thank them.',
            f"{title} sounds great, I'll watch it. Thanks!",
            (self.accepted.title,),
        )

    def _ask_next(self) -> tuple[str, str, tuple]:
        request = next(r for r in self.goal.requests if r not in self.asked)
        self.asked.append(request)
        ask = REQUEST_PHRASES[request]
        title = self.accepted.display_title
        return (f'Ask {ask} for "{title}".', f"And can you tell me {ask}?", (REQUEST_WORDS[request],))

    def _steer(self, dialogue: Dialogue, misses: list[tuple[ItemFacts, list[str]]]) -> tuple[str, str, tuple]:
        if misses:
            facts, unmet = misses[0]
            slot = unmet[0] if unmet else next(iter(self.goal.constraints))
            value = self.goal.constraints[slot]
            if slot not in self.revealed:
                self.revealed.append(slot)
            return (
                f'The recommender suggested "{facts.display_title}", but you want {phrase(slot, value)}. '
                "Politely turn it down and say what you want instead.",
                f"Thanks, but that's not quite it. I'd like {phrase(slot, value)}.",
                (value,),
            )
        reveal = self._reveal_next()
        reply = last_reply(dialogue)
        if reply is not None and "?" in reply.text:
            extra = f" If it helps, add that you want {phrase(*reveal)}." if reveal else ""
            return (
                "Answer the recommender's question using only your wishes; say you have no preference "
                f"about anything they ask that is not among your wishes.{extra}",
                f"I'd like {phrase(*reveal)}." if reveal else "I don't really mind, surprise me.",
                (reveal[1],) if reveal else (),
            )
        if reveal:
            return (
                f"No movie was suggested yet. Say you are looking for {phrase(*reveal)} and ask for a suggestion.",
                f"I'm looking for {phrase(*reveal)}. What would you suggest?",
                (reveal[1],),
            )
        return (
            "No suitable movie was suggested yet. Remind the recommender of what you want and ask for a title.",
            f"Could you suggest a title? I want {self._wishes()}.",
            (),
        )
