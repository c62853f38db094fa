"""ABUS: an agenda-based user simulator (Schatzmann et al. 2007, as used in the RDL paper).

The user holds a stack of acts to perform: greet with an initial query,
inform each constraint of its goal, ask each request about the movie it
accepts, say goodbye. Each turn the system's dialogue acts (IARD intents,
from the acts annotator) are read and the agenda is updated through the
interaction model: recommendations are accepted or turned down depending on
whether the movie meets the goal (checked on the catalog), questions about
preferences are answered from the goal, answers to the user's inquiries let
it move on. Messages come from templates, or from the LLM paraphrasing the
acts when a client is given.
"""

from __future__ import annotations

from typing import Any, Optional

from arena.dialogue import Dialogue, Utterance
from arena.llm import LLMClient
from arena.conversation.simulator_interface import IntentReader, SimulatorAction, StopDialogue, UserTurn
from simulators.abus_nlg import UserAct, describe_acts, realize
from simulators.base import SimulatedUser, last_reply
from simulators.catalog_access import CatalogView, ItemFacts
from simulators.grounding import ProfileFacts
from simulators.goals import Goal, sample_goal
from simulators.interaction_model import ELICIT, RECOMMEND, InteractionModel

SLOT_NAMES = {"GENRE": "genre", "YEAR": "year", "ACTOR": "actor", "DIRECTOR": "director"}

PARAPHRASE = (
    "You write messages for a person chatting with a movie recommender. Given what the person wants to "
    "do and a plain draft, write the person's next message: natural, casual, at most two sentences, "
    "keeping every title and value from the draft. Write only the message."
)


class AgendaBasedSimulator(SimulatedUser):
    kind = "abus"
    label = "ABUS (agenda-based, RDL paper)"

    def __init__(
        self,
        catalog: CatalogView,
        *,
        seed: int,
        nlu: IntentReader,
        llm: Optional[LLMClient] = None,
        goal: Optional[Goal] = None,
        model: Optional[InteractionModel] = None,
        patience: int = 5,
        **kwargs: Any,
    ):
        super().__init__(seed=seed, llm=llm, **kwargs)
        self.catalog = catalog
        self.nlu = nlu
        self.goal = goal or sample_goal(catalog, self.rng)
        self.model = model or InteractionModel.from_iard()
        self.patience = patience
        self.agenda: list[UserAct] = self._initial_agenda()
        self.accepted: Optional[ItemFacts] = None
        self.turned_down: set[str] = set()
        self.failures = 0  # turns that did not bring the user closer to its goal
        self._subject: Optional[ItemFacts] = None  # the movie the current reaction is about
        self.trace: list[dict[str, Any]] = []

    def profile(self) -> dict[str, Any]:
        return {"goal": self.goal.to_dict(), "catalog": self.catalog.dataset, "patience": self.patience,
                "nlu": getattr(self.nlu, "label", "custom"), "nlg": "llm" if self.llm is not None else "template"}

    def _initial_agenda(self) -> list[UserAct]:
        # A stack: the last element is done first.
        acts = [UserAct("END")]
        acts += [UserAct("INQ", slot=r) for r in reversed(self.goal.requests)]
        acts += [UserAct("PRO", slot=s, value=v) for s, v in reversed(list(self.goal.constraints.items()))]
        acts.append(UserAct("IQU"))
        return acts

    def profile_facts(self) -> ProfileFacts:
        return self.goal.profile_facts()

    # -- agenda helpers -------------------------------------------------------
    def _pop_preference(self, slot: Optional[str] = None) -> Optional[UserAct]:
        for index in range(len(self.agenda) - 1, -1, -1):
            act = self.agenda[index]
            if act.intent == "PRO" and (slot is None or act.slot == slot):
                return self.agenda.pop(index)
        return None

    def _top(self) -> Optional[UserAct]:
        return self.agenda[-1] if self.agenda else None

    def system_intents(self, dialogue: Dialogue, reply: Utterance) -> list[str]:
        if reply.dialogue_acts is not None:  # the system annotated its own reply
            intents = [act.intent for act in reply.dialogue_acts]
        else:
            intents = [str(i) for i in self.nlu(dialogue)]
        if reply.items and not RECOMMEND & set(intents):
            intents.append("REC-S")  # the item list itself is a recommendation
        return intents

    def _asked_slot(self, reply: Utterance) -> Optional[str]:
        for act in reply.dialogue_acts or []:
            for slot in act.slot_values:
                name = SLOT_NAMES.get(str(slot[0]).upper()) if slot else None
                if name in self.goal.constraints:
                    return name
        return None

    # -- one turn -------------------------------------------------------------
    def act(self, dialogue: Dialogue) -> SimulatorAction:
        reply = last_reply(dialogue)
        if reply is None:
            acts = [self.agenda.pop()]  # IQU
            first = self._pop_preference()
            acts += [first] if first else []
            return self._speak(dialogue, acts, [])
        intents = self.system_intents(dialogue, reply)
        acts = self._react(reply, intents)
        if acts is None:  # only the goodbye is left: the goal is reached
            return StopDialogue("goal reached", "satisfied",
                                f"Found {self.accepted.display_title}, which fits what I wanted.")
        if self.failures >= self.patience:
            return StopDialogue("gave up: patience exhausted", "frustrated",
                                "The recommender did not find a movie that fits what I asked for.")
        return self._speak(dialogue, acts or [UserAct("CON")], intents)

    def _react(self, reply: Utterance, intents: list[str]) -> Optional[list[UserAct]]:
        if self.accepted is not None:
            top = self._top()
            if top is None or top.intent == "END":
                return None
            return [self.agenda.pop()]
        if RECOMMEND & set(intents) and reply.items:
            return self._react_to_items(reply, intents)
        if ELICIT & set(intents):
            answer = self._pop_preference(self._asked_slot(reply)) or self._pop_preference()
            if answer is None:
                # Everything was said already: asked again, the user repeats one of its wishes.
                self.failures += 1
                slot = self.rng.choice(list(self.goal.constraints))
                return [UserAct("ANS", slot=slot, value=self.goal.constraints[slot]), UserAct("CON")]
            return [UserAct("ANS", slot=answer.slot, value=answer.value)]
        next_preference = self._pop_preference()
        if next_preference is not None:
            return [next_preference]
        self.failures += 1
        return [UserAct("CON")]

    def _react_to_items(self, reply: Utterance, intents: list[str]) -> list[UserAct]:
        candidates = [self.catalog.lookup(item) for item in reply.items[:5]]
        known = [c for c in candidates if c is not None]
        fitting = next((c for c in known if self.goal.satisfied_by(c) and c.item_id not in self.turned_down), None)
        subject = fitting or (known[0] if known else None)
        reaction = self.model.react_to_recommendation(intents, fitting is not None, self.rng)
        self._subject = subject
        if reaction == "ACC" and fitting is not None:
            self.accepted = fitting
            acts = [UserAct("ACC")]
            if self._top() is not None and self._top().intent == "INQ":
                acts.append(self.agenda.pop())
            return acts
        if subject is not None:
            self.turned_down.add(subject.item_id)
        self.failures += 0 if reaction == "SEE" else 1
        acts = [UserAct(reaction)]
        if reaction in ("CRI-F", "REJ") and subject is not None:
            unmet = self.goal.unmet(subject)
            if unmet:
                slot = unmet[0]
                self._pop_preference(slot)
                acts.append(UserAct("PRO", slot=slot, value=self.goal.constraints[slot]))
                return acts
        extra = self._pop_preference()
        acts.append(extra if extra is not None else UserAct("CON"))
        return acts

    # -- NLG ------------------------------------------------------------------
    def _speak(self, dialogue: Dialogue, acts: list[UserAct], system_intents: list[str]) -> UserTurn:
        subject = self.accepted or self._subject
        title = subject.display_title if subject is not None else "it"
        draft = realize(acts, self.rng, title=title)
        self.trace.append({"system": system_intents, "user": [a.intent for a in acts]})
        if self.llm is None:
            return UserTurn(draft)
        generated = self.ask_llm(PARAPHRASE, f"What to do: {describe_acts(acts, title)}\nDraft: {draft}")
        values = [str(a.value) for a in acts if a.value]
        if subject is not None and any(a.intent in ("ACC", "REJ", "SEE", "INQ") for a in acts):
            values.append(subject.title)
        return self.say(generated, draft, dialogue, values)

    def finalize(self, dialogue: Dialogue) -> Dialogue:
        dialogue.metadata["user_acts"] = list(self.trace)
        return super().finalize(dialogue)

    def verdict(self, dialogue: Dialogue) -> Optional[StopDialogue]:
        if self.accepted is not None:
            return StopDialogue("goal reached", "satisfied", f"Found {self.accepted.display_title}.")
        return StopDialogue("out of turns", "frustrated", "No fitting movie was recommended in time.")
